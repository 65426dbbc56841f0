"""Karpenter, simulated: finalizers and statuses while its controller Deployment is up, hung deletions while it
is not."""

import time

import pytest
from kube import is_true, karpenter_crds, path

CONTROLLER = path("apps/v1", "deployments", "karpenter", "kube-system")
NODECLASS = path("karpenter.k8s.aws/v1", "ec2nodeclasses", "default")
NODEPOOL = path("karpenter.sh/v1", "nodepools", "default")
NODECLAIM = path("karpenter.sh/v1", "nodeclaims", "default-abcde")


def controller(replicas=1):
    labels = {"app.kubernetes.io/name": "karpenter"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "karpenter", "namespace": "kube-system"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{"name": "controller", "image": "public.ecr.aws/karpenter/controller:1.14.1"}]}}},
    }


def nodeclass(cluster, role="KarpenterNodeRole"):
    selector = [{"tags": {"karpenter.sh/discovery": cluster}}]
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
            "spec": {"role": role, "amiSelectorTerms": [{"alias": "al2023@latest"}],
                     "subnetSelectorTerms": selector, "securityGroupSelectorTerms": selector}}


def nodepool():
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}


def nodeclaim(pool):
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {
        "name": "default-abcde", "labels": {"karpenter.sh/nodepool": "default"},
        "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default",
                             "uid": pool["metadata"]["uid"], "blockOwnerDeletion": True}]},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                 "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}


@pytest.fixture
def karpenter_cluster(kube, cluster, node_group, ec2, iam, network):
    """A cluster with the Karpenter CRDs, a node group for the controller, discovery-tagged subnets and security
    group, and the node role in IAM. The controller itself is not deployed."""
    crds = karpenter_crds()
    node_group("system", 2)
    ec2.create_tags(Resources=network.subnets, Tags=[{"Key": "karpenter.sh/discovery", "Value": cluster}])
    group = ec2.create_security_group(GroupName="nodes", Description="nodes", VpcId=network.vpc)["GroupId"]
    ec2.create_tags(Resources=[group], Tags=[{"Key": "karpenter.sh/discovery", "Value": cluster}])
    iam.create_role(RoleName="KarpenterNodeRole", AssumeRolePolicyDocument="{}")
    for name, crd in crds.items():
        kube.apply(path("apiextensions.k8s.io/v1", "customresourcedefinitions", name), crd)
    for name in crds:
        kube.wait_for(lambda: is_true(kube.get(path("apiextensions.k8s.io/v1", "customresourcedefinitions", name)),
                                      "Established"), what=f"{name} Established")
    return kube


def start_controller(kube):
    kube.apply(CONTROLLER, controller())
    kube.wait_for(lambda: is_true(kube.get(CONTROLLER), "Available"), what="Karpenter Available")


def test_nodepool_foreground_deletion_completes_while_the_controller_runs(karpenter_cluster, cluster, k8s_delays):
    kube = karpenter_cluster
    k8s_delays(node_termination=0.5)
    start_controller(kube)
    kube.apply(NODECLASS, nodeclass(cluster))
    nc = kube.wait_for(lambda: is_true(nc := kube.get(NODECLASS), "Ready") and nc, what="EC2NodeClass Ready")
    assert nc["metadata"]["finalizers"] == ["karpenter.k8s.aws/termination"]
    assert len(nc["status"]["subnets"]) == 2 and nc["status"]["securityGroups"][0]["name"] == "nodes"
    assert {c["type"] for c in nc["status"]["conditions"]} >= {"SubnetsReady", "SecurityGroupsReady", "AMIsReady",
                                                               "InstanceProfileReady", "Ready"}
    assert nc["status"]["instanceProfile"].startswith(f"{cluster}_")

    pool = kube.apply(NODEPOOL, nodepool())
    pool = kube.wait_for(lambda: is_true(p := kube.get(NODEPOOL), "Ready") and p, what="NodePool Ready")
    assert is_true(pool, "NodeClassReady") and is_true(pool, "ValidationSucceeded")
    kube.apply(NODECLAIM, nodeclaim(pool))
    claim = kube.wait_for(lambda: "karpenter.sh/termination" in ((c := kube.get(NODECLAIM))["metadata"].get("finalizers") or [])
                          and c, what="NodeClaim finalizer")
    kube.wait_for(lambda: kube.get(NODEPOOL)["status"]["resources"]["nodes"] == "1", what="NodePool counts its claim")

    r = kube.delete(NODEPOOL, propagationPolicy="Foreground")
    assert r.status_code == 200 and r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    kube.wait_for(lambda: kube.get(NODECLAIM)["metadata"].get("deletionTimestamp"), what="NodeClaim deleting")
    assert kube.get(NODEPOOL)["metadata"]["deletionTimestamp"]  # still there: its NodeClaim's instance terminates
    kube.wait_gone(NODECLAIM, timeout=10)
    kube.wait_gone(NODEPOOL, timeout=5)
    assert claim["metadata"]["uid"]

    assert kube.delete(NODECLASS).status_code == 200
    kube.wait_gone(NODECLASS)


def test_nodeclass_deletion_hangs_once_the_controller_is_gone(karpenter_cluster, cluster):
    kube = karpenter_cluster
    start_controller(kube)
    kube.apply(NODECLASS, nodeclass(cluster))
    kube.wait_for(lambda: kube.get(NODECLASS)["metadata"].get("finalizers"), what="finalizer added")
    assert kube.delete(CONTROLLER).status_code == 200
    kube.wait_gone(CONTROLLER)

    r = kube.delete(NODECLASS)
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]
    time.sleep(0.6)  # three controller passes: nothing removes the finalizer
    stuck = kube.get(NODECLASS)
    assert stuck["metadata"]["deletionTimestamp"] and stuck["metadata"]["finalizers"] == ["karpenter.k8s.aws/termination"]

    start_controller(kube)  # reinstalling Karpenter lets the deletion finish
    kube.wait_gone(NODECLASS)


def test_nodeclass_reports_selectors_that_match_nothing(karpenter_cluster, cluster):
    kube = karpenter_cluster
    start_controller(kube)
    bad = nodeclass("some-other-cluster", role="MissingRole")
    kube.apply(NODECLASS, bad)
    nc = kube.wait_for(lambda: (nc := kube.get(NODECLASS))["status"].get("conditions") and nc, what="status")
    conditions = {c["type"]: c for c in nc["status"]["conditions"]}
    assert (conditions["SubnetsReady"]["status"], conditions["SubnetsReady"]["reason"]) == ("False", "SubnetsNotFound")
    assert conditions["InstanceProfileReady"]["status"] == "False"
    assert conditions["Ready"]["status"] == "False"
    assert "SubnetsReady=False" in conditions["Ready"]["message"]
    kube.apply(NODEPOOL, nodepool())
    pool = kube.wait_for(lambda: (p := kube.get(NODEPOOL))["status"].get("conditions") and p, what="NodePool status")
    assert not is_true(pool, "Ready") and not is_true(pool, "NodeClassReady")


def test_nothing_happens_without_the_controller(karpenter_cluster, cluster):
    kube = karpenter_cluster
    kube.apply(NODECLASS, nodeclass(cluster))
    time.sleep(0.6)
    nc = kube.get(NODECLASS)
    assert "finalizers" not in nc["metadata"] and "status" not in nc
