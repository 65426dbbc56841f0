"""EKS's documented limits at the emulator's front door (kbp_emulator/contract/limits/eks.py): node group names,
taints (50 per node group, counted after an update), label and taint keys and values (Kubernetes' syntax, EKS's
reserved prefixes), the public endpoint's CIDR blocks, and the Kubernetes names of Pod Identity associations and
access entries. All InvalidParameterException (400); a refused request changes nothing.
"""

from __future__ import annotations

import pytest
from conftest import CLUSTER_ROLE, NODE_ROLE
from limits_support import check, eks_, passes, refused, unchecked  # noqa: F401  (fixtures)

SCALING = {"minSize": 1, "maxSize": 1, "desiredSize": 1}
RESERVED_TAINT = "Taint cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]"
RESERVED_LABEL = "Label cannot contain reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]"


@pytest.fixture
def create_nodegroup(eks_, cluster, network):
    def create(name="ng", **kwargs):
        return eks_.create_nodegroup(clusterName=cluster, nodegroupName=name, nodeRole=NODE_ROLE,
                                     subnets=network.subnets, scalingConfig=SCALING, **kwargs)

    return create


def taints(n, prefix="t"):
    return [{"key": f"{prefix}{i}", "value": "v", "effect": "NO_SCHEDULE"} for i in range(n)]


def nodegroups(eks, cluster):
    return eks.list_nodegroups(clusterName=cluster)["nodegroups"]


# --- Node group names: 1–63, ^[0-9A-Za-z][A-Za-z0-9\-_]*$ (the model has none) ------------------------------


def test_nodegroup_name_of_63_passes_64_is_refused(eks_, cluster, create_nodegroup):
    passes(lambda: create_nodegroup("n" * 63))
    refused(lambda: create_nodegroup("n" * 64), "InvalidParameterException", "eks.nodegroup_name",
            contains="Member must have length between 1 and 63")
    assert nodegroups(eks_, cluster) == ["n" * 63]


@pytest.mark.parametrize("name", ["-ng", "_ng", "ng.1", "ng 1", "ng!"])
def test_nodegroup_name_shape(eks_, cluster, create_nodegroup, name):
    refused(lambda: create_nodegroup(name), "InvalidParameterException", "eks.nodegroup_name")
    passes(lambda: create_nodegroup("0ng-1_a"))


# --- Taints: at most 50 per node group ---------------------------------------------------------------------


def test_fifty_taints_pass_fifty_one_are_refused(eks_, cluster, create_nodegroup):
    passes(lambda: create_nodegroup("fifty", taints=taints(50)))
    refused(lambda: create_nodegroup("more", taints=taints(51)), "InvalidParameterException", "eks.taint_count",
            contains="at most 50 taints")
    assert nodegroups(eks_, cluster) == ["fifty"]


def test_update_counts_the_groups_taints_less_the_removed_plus_the_added(eks_, cluster, create_nodegroup):
    create_nodegroup(taints=taints(48))

    def update(add, remove=()):
        return eks_.update_nodegroup_config(clusterName=cluster, nodegroupName="ng",
                                            taints={"addOrUpdateTaints": add, "removeTaints": list(remove)})

    passes(lambda: update(taints(2, "new")))  # 50
    eks_.describe_nodegroup(clusterName=cluster, nodegroupName="ng")  # settles the update (instant profile)
    # The same key and effect again is an update, not a 51st taint.
    passes(lambda: update([{"key": "t0", "value": "other", "effect": "NO_SCHEDULE"}]))
    eks_.describe_nodegroup(clusterName=cluster, nodegroupName="ng")
    refused(lambda: update(taints(1, "more")), "InvalidParameterException", "eks.taint_count")
    # One removed makes room for one added.
    passes(lambda: update(taints(1, "more"), remove=[{"key": "t1", "value": "v", "effect": "NO_SCHEDULE"}]))
    eks_.describe_nodegroup(clusterName=cluster, nodegroupName="ng")
    assert len(eks_.describe_nodegroup(clusterName=cluster, nodegroupName="ng")["nodegroup"]["taints"]) == 50


def test_refused_taint_update_changes_nothing(eks_, cluster, create_nodegroup):
    create_nodegroup(taints=taints(50))
    refused(lambda: eks_.update_nodegroup_config(clusterName=cluster, nodegroupName="ng",
                                                 taints={"addOrUpdateTaints": taints(1, "x")}),
            "InvalidParameterException", "eks.taint_count")
    nodegroup = eks_.describe_nodegroup(clusterName=cluster, nodegroupName="ng")["nodegroup"]
    assert len(nodegroup["taints"]) == 50 and nodegroup["status"] == "ACTIVE"
    assert eks_.list_updates(name=cluster, nodegroupName="ng")["updateIds"] == []


# --- Taint and label keys and values ----------------------------------------------------------------------


@pytest.mark.parametrize("key", ["node.kubernetes.io/x", "k8s.io/x", "eks.amazonaws.com/compute-type",
                                 "node-role.kubernetes.io/worker"])
def test_reserved_prefixes_are_refused_for_taints_and_labels(eks_, cluster, create_nodegroup, key):
    refused(lambda: create_nodegroup(taints=[{"key": key, "value": "v", "effect": "NO_SCHEDULE"}]),
            "InvalidParameterException", "eks.taint_reserved_prefix", RESERVED_TAINT)
    refused(lambda: create_nodegroup(labels={key: "v"}), "InvalidParameterException", "eks.label_reserved_prefix",
            RESERVED_LABEL)
    assert nodegroups(eks_, cluster) == []


def test_reserved_prefixes_are_refused_in_an_update(eks_, cluster, create_nodegroup):
    create_nodegroup()
    refused(lambda: eks_.update_nodegroup_config(clusterName=cluster, nodegroupName="ng",
                                                 labels={"addOrUpdateLabels": {"kubernetes.io/role": "x"}}),
            "InvalidParameterException", "eks.label_reserved_prefix")


def test_keys_and_values_of_63_pass_64_is_refused(eks_, cluster, create_nodegroup):
    passes(lambda: create_nodegroup("inside", taints=[{"key": "k" * 63, "value": "v" * 63, "effect": "NO_EXECUTE"}],
                                    labels={"example.com/" + "n" * 51: "v" * 63, "team": "a"}))
    # The 63 of a whole key and of a value are the model's (model_rules); the name part after a prefix is
    # Kubernetes' (limits).
    refused(lambda: create_nodegroup("value", taints=[{"key": "k", "value": "v" * 64, "effect": "NO_EXECUTE"}]),
            "InvalidParameterException", "model.length", contains="Member must have length less than or equal to 63")
    refused(lambda: create_nodegroup("label", labels={"k": "v" * 64}),
            "InvalidParameterException", "model.length")
    assert nodegroups(eks_, cluster) == ["inside"]


@pytest.mark.parametrize("key", ["-team", "team-", "Example.com/team", "a/b/c", "team name", "/team"])
def test_label_keys_are_kubernetes_qualified_names(eks_, cluster, create_nodegroup, key):
    refused(lambda: create_nodegroup(labels={key: "v"}), "InvalidParameterException", "eks.label_syntax",
            contains="Invalid value")


@pytest.mark.parametrize("value", ["-v", "v-", "a b", "a/b"])
def test_label_and_taint_values_are_kubernetes_label_values(eks_, cluster, create_nodegroup, value):
    refused(lambda: create_nodegroup(labels={"team": value}), "InvalidParameterException", "eks.label_syntax",
            contains="regex used for validation")
    refused(lambda: create_nodegroup(taints=[{"key": "team", "value": value, "effect": "NO_SCHEDULE"}]),
            "InvalidParameterException", "eks.taint_syntax")


def test_keys_and_values_kbp_uses_pass(eks_, cluster, create_nodegroup):
    passes(lambda: create_nodegroup(
        labels={"kbp.io/pool": "system", "karpenter.sh/controller": "true", "workload-type": "gpu_v1.2"},
        taints=[{"key": "CriticalAddonsOnly", "value": "true", "effect": "NO_SCHEDULE"},
                {"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}],
    ))


# --- publicAccessCidrs: at most 40, valid, not private ------------------------------------------------------


def create_cluster(eks, network, name, cidrs):
    return eks.create_cluster(name=name, roleArn=CLUSTER_ROLE,
                              resourcesVpcConfig={"subnetIds": network.subnets, "publicAccessCidrs": cidrs})


def test_forty_public_cidrs_pass_forty_one_are_refused(eks_, network):
    passes(lambda: create_cluster(eks_, network, "forty", [f"203.0.113.{i}/32" for i in range(40)]))
    refused(lambda: create_cluster(eks_, network, "more", [f"203.0.113.{i}/32" for i in range(41)]),
            "InvalidParameterException", "eks.public_access_cidrs", contains="at most 40")
    assert eks_.list_clusters()["clusters"] == ["forty"]


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "192.168.1.0/24", "172.20.0.0/16", "127.0.0.1/32", "not-a-cidr",
                                  "300.1.1.1/32", "1.2.3.4/33"])
def test_private_or_malformed_public_cidrs_are_refused(eks_, network, cidr):
    refused(lambda: create_cluster(eks_, network, "c", ["198.51.100.0/24", cidr]),
            "InvalidParameterException", "eks.public_access_cidrs",
            f"The following CIDRs are invalid in publicAccessCidrs: [{cidr}]")
    assert eks_.list_clusters()["clusters"] == []


def test_public_cidrs_kbp_uses_pass(eks_, network, cluster):
    passes(lambda: create_cluster(eks_, network, "open", ["0.0.0.0/0"]))
    refused(lambda: eks_.update_cluster_config(name=cluster, resourcesVpcConfig={"publicAccessCidrs": ["10.1.0.0/16"]}),
            "InvalidParameterException", "eks.public_access_cidrs")


# --- Pod Identity and access entry names ------------------------------------------------------------------


@pytest.mark.parametrize("namespace, account", [("Kube-System", "sa"), ("ns_1", "sa"), ("n" * 64, "sa"),
                                                ("kube-system", "SA"), ("kube-system", "sa_1"),
                                                ("kube-system", "s" * 254)])
def test_pod_identity_names_are_kubernetes_names(eks_, cluster, namespace, account):
    refused(lambda: eks_.create_pod_identity_association(clusterName=cluster, namespace=namespace, serviceAccount=account,
                                                         roleArn=NODE_ROLE),
            "InvalidParameterException", "eks.pod_identity_names")
    assert eks_.list_pod_identity_associations(clusterName=cluster)["associations"] == []
    passes(lambda: eks_.create_pod_identity_association(clusterName=cluster, namespace="n" * 63,
                                                        serviceAccount="karpenter.controller-1", roleArn=NODE_ROLE))


def test_access_entry_groups_and_usernames_cannot_take_reserved_prefixes(eks_, iam, cluster):
    role = iam.create_role(RoleName="admin", AssumeRolePolicyDocument=(
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},'
        '"Action":"sts:AssumeRole"}]}'))["Role"]["Arn"]
    refused(lambda: eks_.create_access_entry(clusterName=cluster, principalArn=role, kubernetesGroups=["system:masters"]),
            "InvalidParameterException", "eks.access_entry_names",
            "The kubernetes group name system:masters is invalid, it cannot start with system:")
    for username in ("system:admin", "eks:admin", "aws:x", "amazon:x", "iam:x"):
        refused(lambda u=username: eks_.create_access_entry(clusterName=cluster, principalArn=role, username=u),
                "InvalidParameterException", "eks.access_entry_names")
    passes(lambda: eks_.create_access_entry(clusterName=cluster, principalArn=role, username="admin:{{SessionName}}",
                                            kubernetesGroups=["platform-admins"]))


def test_the_rules_of_each_operation():
    refusal = check("eks", "CreateNodegroup", {"nodegroupName": "ng", "taints": taints(51)})
    assert (refusal.code, refusal.rule) == ("InvalidParameterException", "eks.taint_count")
    assert check("eks", "CreateNodegroup", {"nodegroupName": "ng", "taints": taints(50)}) is None
