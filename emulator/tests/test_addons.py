"""Add-ons: DescribeAddonVersions' catalog and shape, add-on CRUD, and the errors AWS answers."""

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

ADDONS = ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent")
# Every Kubernetes version the emulator knows: the offered 1.32–1.37 and the unsupported 1.29–1.31, whose clusters
# may still be around.
VERSIONS = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")


@pytest.mark.parametrize("k8s", VERSIONS)
def test_every_addon_has_one_default_version_per_kubernetes_version(eks, k8s):
    infos = eks.describe_addon_versions(kubernetesVersion=k8s)["addons"]
    assert sorted(i["addonName"] for i in infos) == sorted(ADDONS)
    for info in infos:
        defaults = [
            v["addonVersion"]
            for v in info["addonVersions"]
            for c in v["compatibilities"]
            if c["clusterVersion"] == k8s and c["defaultVersion"]
        ]
        assert defaults == [info["addonVersions"][0]["addonVersion"]], info["addonName"]
        assert len(info["addonVersions"]) >= 2, info["addonName"]  # an older one to pin or update to
        assert all(c["clusterVersion"] == k8s for v in info["addonVersions"] for c in v["compatibilities"])


def test_kube_proxy_defaults_to_the_patch_version_eks_runs(eks):
    """kube-proxy has builds for one Kubernetes minor each; its default is the control plane's patch version."""
    for v in eks.describe_cluster_versions(includeAll=True)["clusterVersions"]:
        [kube_proxy] = eks.describe_addon_versions(kubernetesVersion=v["clusterVersion"], addonName="kube-proxy")["addons"]
        newest = kube_proxy["addonVersions"][0]
        assert newest["addonVersion"].startswith(f"v{v['kubernetesPatchVersion']}-eksbuild."), v["clusterVersion"]
        assert newest["compatibilities"][0]["defaultVersion"]


def test_addon_versions_filter_by_name_and_type(eks):
    assert [i["addonName"] for i in eks.describe_addon_versions(addonName="coredns")["addons"]] == ["coredns"]
    security = eks.describe_addon_versions(types=["security"])["addons"]
    assert [i["addonName"] for i in security] == ["eks-pod-identity-agent"]
    assert eks.describe_addon_versions(addonName="no-such-addon")["addons"] == []
    kube_proxy = eks.describe_addon_versions(kubernetesVersion="1.33", addonName="kube-proxy")["addons"][0]
    assert all(v["addonVersion"].startswith("v1.33.") for v in kube_proxy["addonVersions"])


def test_addon_crud(eks, cluster):
    # The cluster is at 1.33: the newest vpc-cni listed for it is its default, and an older one is listed too.
    listed = eks.describe_addon_versions(kubernetesVersion="1.33", addonName="vpc-cni")["addons"][0]["addonVersions"]
    default, older = listed[0]["addonVersion"], listed[1]["addonVersion"]
    assert [c["defaultVersion"] for c in listed[0]["compatibilities"]] == [True]
    created = eks.create_addon(
        clusterName=cluster,
        addonName="vpc-cni",
        serviceAccountRoleArn="arn:aws:iam::123456789012:role/cni",
        resolveConflicts="OVERWRITE",
        configurationValues='{"env":{"ENABLE_PREFIX_DELEGATION":"true"}}',
        tags={"team": "kbp"},
    )["addon"]
    assert created["addonArn"].startswith("arn:aws:eks:us-west-2:123456789012:addon/c1/vpc-cni/")
    assert created["addonVersion"] == default
    described = eks.describe_addon(clusterName=cluster, addonName="vpc-cni")["addon"]
    assert described["status"] == "ACTIVE"
    assert described["health"] == {"issues": []}
    assert described["serviceAccountRoleArn"] == "arn:aws:iam::123456789012:role/cni"
    assert described["configurationValues"] == '{"env":{"ENABLE_PREFIX_DELEGATION":"true"}}'
    assert described["tags"] == {"team": "kbp"}
    assert eks.list_addons(clusterName=cluster)["addons"] == ["vpc-cni"]

    update = eks.update_addon(clusterName=cluster, addonName="vpc-cni", addonVersion=older,
                              resolveConflicts="PRESERVE")["update"]
    assert update["type"] == "AddonUpdate"
    assert {"type": "AddonVersion", "value": older} in update["params"]
    assert eks.describe_update(name=cluster, updateId=update["id"], addonName="vpc-cni")["update"]["status"] == "Successful"
    assert eks.describe_addon(clusterName=cluster, addonName="vpc-cni")["addon"]["addonVersion"] == older

    assert eks.delete_addon(clusterName=cluster, addonName="vpc-cni")["addon"]["status"] == "DELETING"
    assert eks.list_addons(clusterName=cluster)["addons"] == []


def test_addon_errors(eks, cluster):
    eks.create_addon(clusterName=cluster, addonName="coredns")
    with pytest.raises(ClientError) as e:
        eks.create_addon(clusterName=cluster, addonName="coredns")
    assert error_of(e) == (409, "ResourceInUseException", "Addon already exists.")
    with pytest.raises(ClientError) as e:
        eks.describe_addon(clusterName=cluster, addonName="kube-proxy")
    assert error_of(e) == (404, "ResourceNotFoundException", "No addon: kube-proxy found in cluster: c1")
    with pytest.raises(ClientError) as e:
        eks.delete_addon(clusterName=cluster, addonName="kube-proxy")
    assert error_of(e)[:2] == (404, "ResourceNotFoundException")
    with pytest.raises(ClientError) as e:
        eks.create_addon(clusterName=cluster, addonName="kube-proxy", addonVersion="v1.35.0-eksbuild.2")  # 1.35's
    assert error_of(e) == (400, "InvalidParameterException", "Addon version specified is not supported")
    with pytest.raises(ClientError) as e:
        eks.create_addon(clusterName=cluster, addonName="aws-made-up-driver")
    assert error_of(e) == (
        400, "InvalidParameterException", "Addon aws-made-up-driver specified is not supported in 1.33 kubernetes version")


def test_addon_pod_identity_associations_go_with_the_addon(eks, cluster):
    role = "arn:aws:iam::123456789012:role/cni"
    addon = eks.create_addon(
        clusterName=cluster, addonName="vpc-cni", podIdentityAssociations=[{"serviceAccount": "aws-node", "roleArn": role}]
    )["addon"]
    [arn] = addon["podIdentityAssociations"]
    [summary] = eks.list_pod_identity_associations(clusterName=cluster)["associations"]
    assert (summary["associationArn"], summary["namespace"], summary["serviceAccount"]) == (arn, "kube-system", "aws-node")
    assert summary["ownerArn"] == addon["addonArn"]
    eks.delete_addon(clusterName=cluster, addonName="vpc-cni")
    assert eks.list_pod_identity_associations(clusterName=cluster)["associations"] == []
