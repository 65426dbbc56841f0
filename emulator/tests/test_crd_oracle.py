"""scripts/crd_oracle.py, the test-only Karpenter CRD oracle: its structural-schema translation, its Kubernetes
CEL functions, and every CEL rule group of the pinned release's CRDs (NodePool, EC2NodeClass, NodeOverlay,
CapacityBuffer; NodeClaim's rules are NodePool's), each shown both failing and passing on a small change to a
valid object.

Needs the Karpenter v1.14.1 CRDs (KBP_KARPENTER_CRDS_DIR, else ../shared/reference beside the repository, else
/work/shared/reference), as the Rust tests do; fails without them.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import crd_oracle  # noqa: E402


@pytest.fixture(autouse=True)
def fresh():
    """Overrides conftest's: the oracle needs no emulator."""
    yield


def crds_dir() -> Path:
    for d in (os.environ.get("KBP_KARPENTER_CRDS_DIR"), REPO / "../shared/reference/karpenter-v1.14.1/crds",
              "/work/shared/reference/karpenter-v1.14.1/crds"):
        if d and (Path(d) / "karpenter.sh_nodepools.yaml").is_file():
            return Path(d)
    raise AssertionError("the Karpenter v1.14.1 CRDs are not found: set KBP_KARPENTER_CRDS_DIR")


CRDS = crd_oracle.load_crds([str(crds_dir())])

NODE_CLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
        "role": "KarpenterNodeRole-sbx",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "sbx"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "sbx"}}, {"id": "sg-0123abcd"}],
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeType": "gp3"}}],
        "tags": {"team": "a"},
    },
}

NODE_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default"},
    "spec": {
        "template": {
            "metadata": {"labels": {"team": "a"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c"]}],
            },
        },
        "limits": {"cpu": "1000"},
    },
}


NODE_OVERLAY = {
    "apiVersion": "karpenter.sh/v1alpha1",
    "kind": "NodeOverlay",
    "metadata": {"name": "discount"},
    "spec": {
        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}],
        "priceAdjustment": "-10%",
        "weight": 10,
    },
}

CAPACITY_BUFFER = {
    "apiVersion": "autoscaling.x-k8s.io/v1beta1",
    "kind": "CapacityBuffer",
    "metadata": {"name": "spare", "namespace": "default"},
    "spec": {"podTemplateRef": {"name": "spare-chunk"}, "replicas": 2},
}

# Every typed kubelet field of the release's EC2NodeClass, with valid values.
KUBELET = {
    "clusterDNS": ["10.100.0.10"],
    "cpuCFSQuota": True,
    "maxPods": 110,
    "podsPerCore": 10,
    "systemReserved": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi", "pid": "100"},
    "kubeReserved": {"cpu": "200m", "memory": "100Mi", "ephemeral-storage": "3Gi", "pid": "100"},
    "evictionHard": {"memory.available": "5%", "nodefs.available": "10%", "nodefs.inodesFree": "10%",
                     "imagefs.available": "500Mi", "imagefs.inodesFree": "5%", "pid.available": "10%"},
    "evictionSoft": {"memory.available": "500Mi", "nodefs.available": "15%"},
    "evictionSoftGracePeriod": {"memory.available": "1m", "nodefs.available": "1m30s"},
    "evictionMaxPodGracePeriod": 60,
    "imageGCHighThresholdPercent": 85,
    "imageGCLowThresholdPercent": 80,
}


def check(obj, unknown=None):
    return crd_oracle.check(CRDS, obj, unknown)


def changed(base, **paths):
    """A copy of `base` with dotted paths set (`spec__role="x"` sets spec.role); a value of DELETE removes."""
    obj = copy.deepcopy(base)
    for dotted, value in paths.items():
        keys = dotted.split("__")
        node = obj
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
        last = int(keys[-1]) if isinstance(node, list) else keys[-1]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return obj


DELETE = object()


def pool(**paths):
    return changed(NODE_POOL, **paths)


def node_class(**paths):
    return changed(NODE_CLASS, **paths)


def overlay(**paths):
    return changed(NODE_OVERLAY, **paths)


def buffer(**paths):
    return changed(CAPACITY_BUFFER, **paths)


def fired(result) -> set[str]:
    return {e["rule"] for e in result["errors"] if "rule" in e}


def fired_text(result) -> list[str]:
    """Each rule error as its rule and its message, for matching a fragment of either."""
    return [f'{e["rule"]} | {e["message"]}' for e in result["errors"] if "rule" in e]


# ---- the base objects and the translation -----------------------------------------------------------------

def test_the_base_objects_are_valid():
    for obj in (NODE_POOL, NODE_CLASS, NODE_OVERLAY, CAPACITY_BUFFER):
        r = check(obj)
        assert r["valid"], r


def test_defaults_are_applied_before_the_rules():
    # budgets defaults to [{nodes: 10%}], whose rule (schedule with duration) then runs and passes; the
    # defaulted disruption needs consolidateAfter, which its own default supplies.
    obj = copy.deepcopy(NODE_POOL)
    crd = CRDS[("karpenter.sh/v1", "NodePool")]
    crd_oracle.apply_defaults(crd.schema, obj)
    assert obj["spec"]["disruption"] == {"consolidateAfter": "0s", "consolidationPolicy": "WhenEmptyOrUnderutilized",
                                         "budgets": [{"nodes": "10%"}]}
    assert obj["spec"]["template"]["spec"]["expireAfter"] == "720h"
    obj = copy.deepcopy(NODE_CLASS)
    crd_oracle.apply_defaults(CRDS[("karpenter.k8s.aws/v1", "EC2NodeClass")].schema, obj)
    assert obj["spec"]["metadataOptions"]["httpTokens"] == "required"


def test_a_field_the_schema_does_not_declare_is_an_error_at_its_path():
    r = check(pool(spec__template__spec__nodeClassRef__extra="x", spec__unknownThing=1))
    paths = {e["path"] for e in r["errors"] if e["type"] == "FieldValueUnknown"}
    assert paths == {"spec.template.spec.nodeClassRef.extra", "spec.unknownThing"}
    # The release's kubelet is typed (no x-kubernetes-preserve-unknown-fields): a field it does not declare is
    # unknown at its own path, beside declared ones, and nothing below it is looked at.
    r = check(node_class(spec__kubelet={"maxPods": 110, "anything": {"goes": 1}}))
    assert not r["valid"]
    assert [(e["path"], e["type"]) for e in r["errors"] if e["type"] == "FieldValueUnknown"] == [
        ("spec.kubelet.anything", "FieldValueUnknown")]
    # metadata is the server's own.
    assert check(node_class(metadata__labels={"a": "b"}))["valid"]


def test_the_kubelet_fields_are_typed():
    assert check(node_class(spec__kubelet=KUBELET))["valid"]
    for field, value in KUBELET.items():
        alone = {field: value}
        if field.startswith("evictionSoft"):  # soft thresholds come with their grace periods (the rules below)
            alone = {k: KUBELET[k] for k in ("evictionSoft", "evictionSoftGracePeriod")}
        assert check(node_class(spec__kubelet=alone))["valid"], field
    # The CRD's spelling only: kubelet's keys are properties now, not data kept as written.
    r = check(node_class(spec__kubelet={"system_reserved": {"cpu": "100m"}}))
    assert {(e["path"], e["type"]) for e in r["errors"] if e["path"]} == {
        ("spec.kubelet.system_reserved", "FieldValueUnknown")}
    cases = [
        ({"maxPods": -1}, "spec.kubelet.maxPods", "FieldValueInvalid"),
        ({"maxPods": "110"}, "spec.kubelet.maxPods", "FieldValueTypeInvalid"),
        ({"podsPerCore": -1}, "spec.kubelet.podsPerCore", "FieldValueInvalid"),
        ({"cpuCFSQuota": "yes"}, "spec.kubelet.cpuCFSQuota", "FieldValueTypeInvalid"),
        ({"clusterDNS": "10.100.0.10"}, "spec.kubelet.clusterDNS", "FieldValueTypeInvalid"),
        ({"imageGCHighThresholdPercent": 101}, "spec.kubelet.imageGCHighThresholdPercent", "FieldValueInvalid"),
        ({"imageGCLowThresholdPercent": -1}, "spec.kubelet.imageGCLowThresholdPercent", "FieldValueInvalid"),
        ({"kubeReserved": {"cpu": "lots"}}, "spec.kubelet.kubeReserved.cpu", "FieldValueInvalid"),
        ({"systemReserved": {"memory": "1 Gi"}}, "spec.kubelet.systemReserved.memory", "FieldValueInvalid"),
        ({"kubeReserved": {"cpu": 1}}, "spec.kubelet.kubeReserved.cpu", "FieldValueTypeInvalid"),
        ({"evictionHard": {"memory.available": "101%"}}, "spec.kubelet.evictionHard[memory.available]",
         "FieldValueInvalid"),
        ({"evictionSoft": {"memory.available": "lots"}, "evictionSoftGracePeriod": {"memory.available": "1m"}},
         "spec.kubelet.evictionSoft[memory.available]", "FieldValueInvalid"),
        ({"evictionMaxPodGracePeriod": "60s"}, "spec.kubelet.evictionMaxPodGracePeriod", "FieldValueTypeInvalid"),
    ]
    for kubelet, path, kind in cases:
        r = check(node_class(spec__kubelet=kubelet))
        assert (path, kind) in {(e["path"], e["type"]) for e in r["errors"]}, (kubelet, path, kind, r)


def test_eviction_soft_and_its_grace_periods_without_the_other_map_are_evaluation_errors():
    # `e in self.evictionSoftGracePeriod` with no such map is an error in CEL, so the server refuses the kubelet
    # at its own path; the error names the missing map, not a CEL overload.
    for kubelet, missing in (({"evictionSoft": {"memory.available": "500Mi"}}, "evictionSoftGracePeriod"),
                             ({"evictionSoftGracePeriod": {"memory.available": "1m"}}, "evictionSoft")):
        r = check(node_class(spec__kubelet=kubelet))
        assert not r["valid"]
        [e] = r["errors"]
        cause = e["message"].split(" evaluating rule: ")[0]
        assert e["path"] == "spec.kubelet" and f"'{missing}'" in cause and "overload" not in cause, r
    # An empty map has no key to pair.
    assert check(node_class(spec__kubelet={"evictionSoft": {}}))["valid"]


def test_int_or_string_takes_both_and_checks_the_pattern_on_strings_only():
    assert check(pool(spec__limits={"cpu": 1000, "memory": "1000Gi", "nvidia.com/gpu": "8"}))["valid"]
    r = check(pool(spec__limits={"cpu": "lots"}))
    assert [e["path"] for e in r["errors"]] == ["spec.limits.cpu"]
    r = check(pool(spec__limits={"cpu": True}))
    assert r["errors"][0]["type"] == "FieldValueTypeInvalid"


def test_bounds_patterns_enums_and_formats():
    cases = [
        (pool(spec__weight=0), "spec.weight", "FieldValueInvalid"),
        (pool(spec__weight=101), "spec.weight", "FieldValueInvalid"),
        (pool(spec__weight="1"), "spec.weight", "FieldValueTypeInvalid"),
        (pool(spec__disruption={"consolidateAfter": "30x"}), "spec.disruption.consolidateAfter", "FieldValueInvalid"),
        (pool(spec__disruption={"consolidateAfter": "0s", "consolidationPolicy": "Sometimes"}),
         "spec.disruption.consolidationPolicy", "FieldValueNotSupported"),
        (pool(spec__template__metadata__labels={"a": "x" * 64}), "spec.template.metadata.labels.a",
         "FieldValueTooLong"),
        (pool(spec__template__spec__taints=[{"key": "k", "effect": "NoSchedule", "timeAdded": "yesterday"}]),
         "spec.template.spec.taints[0].timeAdded", "FieldValueInvalid"),
        (node_class(spec__amiSelectorTerms=[]), "spec.amiSelectorTerms", "FieldValueInvalid"),
        (node_class(spec__amiSelectorTerms=[{"alias": "bottlerocket@" + "v" * 30}]),
         "spec.amiSelectorTerms[0].alias", "FieldValueTooLong"),
        (node_class(spec__subnetSelectorTerms=[{"id": f"subnet-{i}"} for i in range(31)]),
         "spec.subnetSelectorTerms", "FieldValueTooMany"),
        (pool(spec__template__spec__nodeClassRef__name=DELETE), "spec.template.spec.nodeClassRef.name",
         "FieldValueRequired"),
        (pool(spec__disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "1", "reasons": ["Empty", "Empty"]}]}),
         "spec.disruption.budgets[0].reasons", "FieldValueDuplicate"),
    ]
    for obj, path, kind in cases:
        r = check(obj)
        assert (path, kind) in {(e["path"], e["type"]) for e in r["errors"]}, (path, kind, r)
    assert check(pool(spec__template__spec__taints=[
        {"key": "k", "effect": "NoSchedule", "timeAdded": "2026-01-02T03:04:05Z"}]))["valid"]


def test_a_blocking_schema_error_stops_the_rules_and_says_so():
    # An unsupported operator (blocking) next to a restricted key (a rule): the rule is not evaluated.
    obj = pool(spec__template__spec__requirements=[{"key": "kubernetes.io/hostname", "operator": "Near"}])
    r = check(obj)
    assert not fired(r)
    assert any(e["message"] == crd_oracle.NOT_CHECKED for e in r["errors"])
    # A pattern error does not block: both it and the rule are reported.
    obj = pool(spec__template__spec__requirements=[{"key": "kubernetes.io/hostname", "operator": "Exists"}],
               spec__weight=0)
    assert fired(check(obj)) == {'self != "kubernetes.io/hostname"'}


def test_metadata_name_is_a_dns_subdomain():
    assert not check(pool(metadata__name="Not_A_Name"))["valid"]
    assert check(pool(metadata__name="a.b-c"))["valid"]


def test_a_value_known_after_apply_skips_its_schema_checks():
    obj = node_class(spec__securityGroupSelectorTerms=[{"id": "(known after apply)"}])
    assert not check(obj)["valid"]
    assert check(obj, unknown="(known after apply)")["valid"]


def test_transition_rules_are_listed_but_never_evaluated():
    listed = crd_oracle.rules(CRDS)
    transition = [r for r in listed if r["transition"]]
    assert {r["schema_path"] for r in transition if r["kind"] == "NodePool"} == {
        "spec", "spec.template.spec.nodeClassRef"}
    assert all("oldSelf" in r["rule"] for r in transition)
    assert check(pool(spec__replicas=2, spec__limits={}))["valid"]


def test_the_command_line_answers_in_json():
    objects = [{"id": "ok", "object": NODE_POOL}, {"id": "bad", "object": pool(spec__weight=0)}]
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts/crd_oracle.py"), "--crds", str(crds_dir())],
        input=json.dumps(objects), capture_output=True, text=True, check=True)
    answer = json.loads(out.stdout)
    assert [(a["id"], a["valid"]) for a in answer] == [("ok", True), ("bad", False)]
    rules = json.loads(subprocess.run(
        [sys.executable, str(REPO / "scripts/crd_oracle.py"), "--crds", str(crds_dir()), "--rules"],
        capture_output=True, text=True, check=True).stdout)
    assert len(rules) == len(crd_oracle.rules(CRDS)) > 60


# ---- the Kubernetes CEL functions -------------------------------------------------------------------------

@pytest.mark.parametrize("rule,value,expected", [
    ("self.find('^([^/]+)') == 'karpenter.sh'", "karpenter.sh/foo", True),
    ("self.find('^([^/]+)') == 'team'", "team", True),
    ("self.find('[0-9]+') == ''", "abc", True),  # no match: the empty string, not an error
    ("self.findAll('[0-9]') == ['1', '2']", "a1b2", True),
    ("self.findAll('[0-9]', 1) == ['1']", "a1b2", True),
    ("self.split('@') == ['al2023', 'latest']", "al2023@latest", True),
    ("self.split('@') == ['']", "", True),
    ("self.split('@', 2) == ['a', 'b@c']", "a@b@c", True),
    ("self.split('') == ['a', 'b']", "ab", True),
    ("self.matches('^[a-zA-Z0-9]+@.+$')", "al2@x", True),
    ("self.matches('@')", "al2", False),
    ("self.lowerAscii() == 'abc'", "ABC", True),
    ("self.replace('a', 'b') == 'bbc'", "abc", True),
    ("self.indexOf('b') == 1 && self.lastIndexOf('c') == 2", "abc", True),
    ("self.all(k, k != '' && self[k] != '')", {"a": "1"}, True),
    ("self.all(k, k != '' && self[k] != '')", {"a": ""}, False),
    ("self.exists(k, k == 'b')", {"a": "1", "b": "2"}, True),
    ("[1, 2, 3].isSorted() && [3, 1].sum() == 4 && [3, 1].min() == 1", None, True),
])
def test_kubernetes_cel_functions(rule, value, expected):
    assert crd_oracle.evaluate(rule, value) is expected


def test_an_evaluation_error_is_an_error_not_a_verdict():
    assert isinstance(crd_oracle.evaluate("int(self) >= 0", "x"), str)
    assert isinstance(crd_oracle.evaluate("self.split('@')[1] == 'latest'", "windows2019"), str)
    assert isinstance(crd_oracle.evaluate("self.missing == 1", {}), str)


# ---- every CEL rule group, failing and passing ------------------------------------------------------------

# (group, object that breaks exactly the group's rule(s), object one change away that passes, rule fragments
# that must fire on the first and not on the second).
GROUPS = [
    # NodePool spec: static pools (replicas).
    ("nodepool-static-limits", pool(spec__replicas=2, spec__limits={"cpu": "10"}),
     pool(spec__replicas=2, spec__limits={"nodes": "10"}), ["'nodes' in self.limits"]),
    ("nodepool-static-weight", pool(spec__replicas=2, spec__weight=5, spec__limits={}),
     pool(spec__replicas=2, spec__limits={}), ["!has(self.weight)"]),
    ("nodepool-budget-schedule-duration",
     pool(spec__disruption={"consolidateAfter": "0s", "budgets": [{"nodes": "1", "schedule": "@daily"}]}),
     pool(spec__disruption={"consolidateAfter": "0s",
                            "budgets": [{"nodes": "1", "schedule": "@daily", "duration": "1h"}]}),
     ["has(x.schedule) == has(x.duration)"]),
    ("nodepool-labels-karpenter-sh", pool(spec__template__metadata__labels={"karpenter.sh/foo": "x"}),
     pool(spec__template__metadata__labels={"karpenter.sh/capacity-type": "spot"}),
     ['x.find("^([^/]+)").endsWith("karpenter.sh")']),
    ("nodepool-labels-subdomain-karpenter-sh", pool(spec__template__metadata__labels={"x.karpenter.sh/foo": "x"}),
     pool(spec__template__metadata__labels={"karpenter.sh.example.com/foo": "x"}),
     ['x.find("^([^/]+)").endsWith("karpenter.sh")']),
    ("nodepool-labels-nodepool", pool(spec__template__metadata__labels={"karpenter.sh/nodepool": "x"}),
     pool(spec__template__metadata__labels={"example.com/nodepool": "x"}),
     ['x != "karpenter.sh/nodepool"']),
    ("nodepool-labels-hostname", pool(spec__template__metadata__labels={"kubernetes.io/hostname": "x"}),
     pool(spec__template__metadata__labels={"kubernetes.io/arch": "arm64"}),
     ['x != "kubernetes.io/hostname"']),
    ("nodepool-labels-karpenter-k8s-aws", pool(spec__template__metadata__labels={"karpenter.k8s.aws/foo": "x"}),
     pool(spec__template__metadata__labels={"karpenter.k8s.aws/instance-family": "m5"}),
     ['x.find("^([^/]+)").endsWith("karpenter.k8s.aws")']),
    ("nodepool-nodeclassref-group", pool(spec__template__spec__nodeClassRef__group=""),
     pool(spec__template__spec__nodeClassRef__group="example.com"), ["group may not be empty"]),
    ("nodepool-nodeclassref-kind", pool(spec__template__spec__nodeClassRef__kind=""),
     pool(spec__template__spec__nodeClassRef__kind="Other"), ["kind may not be empty"]),
    ("nodepool-nodeclassref-name", pool(spec__template__spec__nodeClassRef__name=""),
     pool(spec__template__spec__nodeClassRef__name="x"), ["name may not be empty"]),
    ("nodepool-requirement-in-values",
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "In", "values": []}]),
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "NotIn", "values": []}]),
     ["x.values.size() != 0"]),
    ("nodepool-requirement-gt-single-int",
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "Gt", "values": ["1", "2"]}]),
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "Lte", "values": ["0"]}]),
     ["int(x.values[0]) >= 0"]),
    ("nodepool-requirement-gt-negative",
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "Lt", "values": ["-1"]}]),
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "Lt", "values": ["1"]}]),
     ["int(x.values[0]) >= 0"]),
    ("nodepool-requirement-min-values",
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "In", "values": ["x"], "minValues": 2}]),
     pool(spec__template__spec__requirements=[{"key": "a", "operator": "In", "values": ["x", "y"],
                                               "minValues": 2}]),
     ["x.values.size() >= x.minValues"]),
    ("nodepool-requirement-key-karpenter-sh",
     pool(spec__template__spec__requirements=[{"key": "karpenter.sh/foo", "operator": "Exists"}]),
     pool(spec__template__spec__requirements=[{"key": "karpenter.sh/capacity-type", "operator": "Exists"}]),
     ['self.find("^([^/]+)").endsWith("karpenter.sh")']),
    ("nodepool-requirement-key-nodepool",
     pool(spec__template__spec__requirements=[{"key": "karpenter.sh/nodepool", "operator": "Exists"}]),
     pool(spec__template__spec__requirements=[{"key": "example.com/nodepool", "operator": "Exists"}]),
     ['self != "karpenter.sh/nodepool"']),
    ("nodepool-requirement-key-hostname",
     pool(spec__template__spec__requirements=[{"key": "kubernetes.io/hostname", "operator": "Exists"}]),
     pool(spec__template__spec__requirements=[{"key": "kubernetes.io/os", "operator": "Exists"}]),
     ['self != "kubernetes.io/hostname"']),
    ("nodepool-requirement-key-karpenter-k8s-aws",
     pool(spec__template__spec__requirements=[{"key": "karpenter.k8s.aws/bogus", "operator": "Exists"}]),
     pool(spec__template__spec__requirements=[{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Exists"}]),
     ['self.find("^([^/]+)").endsWith("karpenter.k8s.aws")']),
    # EC2NodeClass spec.
    ("nodeclass-role-or-instance-profile", node_class(spec__instanceProfile="p"),
     node_class(spec__instanceProfile="p", spec__role=DELETE), ["has(self.instanceProfile)"]),
    ("nodeclass-role-nor-instance-profile", node_class(spec__role=DELETE),
     node_class(), ["has(self.instanceProfile)"]),
    ("nodeclass-ami-family-al2", node_class(spec__amiSelectorTerms=[{"alias": "al2@latest"}], spec__amiFamily="AL2023"),
     node_class(spec__amiSelectorTerms=[{"alias": "al2@latest"}], spec__amiFamily="AL2"), ["== 'al2') ?"]),
    ("nodeclass-ami-family-al2023",
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@latest"}], spec__amiFamily="AL2"),
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@latest"}], spec__amiFamily="Custom"), ["== 'al2023') ?"]),
    ("nodeclass-ami-family-bottlerocket", node_class(spec__amiFamily="AL2"),
     node_class(spec__amiFamily="Bottlerocket"), ["== 'bottlerocket') ?"]),
    ("nodeclass-ami-family-windows2019",
     node_class(spec__amiSelectorTerms=[{"alias": "windows2019@latest"}], spec__amiFamily="Windows2022"),
     node_class(spec__amiSelectorTerms=[{"alias": "windows2019@latest"}], spec__amiFamily="Windows2019"),
     ["== 'windows2019') ?"]),
    ("nodeclass-ami-family-windows2022",
     node_class(spec__amiSelectorTerms=[{"alias": "windows2022@latest"}], spec__amiFamily="Windows2019"),
     node_class(spec__amiSelectorTerms=[{"alias": "windows2022@latest"}], spec__amiFamily="Windows2022"),
     ["== 'windows2022') ?"]),
    ("nodeclass-ami-family-windows2025",
     node_class(spec__amiSelectorTerms=[{"alias": "windows2025@latest"}], spec__amiFamily="AL2"),
     node_class(spec__amiSelectorTerms=[{"alias": "windows2025@latest"}], spec__amiFamily="Windows2025"),
     ["== 'windows2025') ?"]),
    ("nodeclass-ami-family-required", node_class(spec__amiSelectorTerms=[{"id": "ami-123"}]),
     node_class(spec__amiSelectorTerms=[{"id": "ami-123"}], spec__amiFamily="AL2023"), ["has(self.amiFamily)"]),
    ("nodeclass-ami-term-empty", node_class(spec__amiSelectorTerms=[{"owner": "self"}], spec__amiFamily="AL2023"),
     node_class(spec__amiSelectorTerms=[{"name": "my-ami", "owner": "self"}], spec__amiFamily="AL2023"),
     ["has(x.ssmParameter)"]),
    ("nodeclass-ami-term-id-exclusive",
     node_class(spec__amiSelectorTerms=[{"id": "ami-1", "name": "x"}], spec__amiFamily="AL2023"),
     node_class(spec__amiSelectorTerms=[{"id": "ami-1"}, {"name": "x"}], spec__amiFamily="AL2023"),
     ["has(x.id) && (has(x.alias)"]),
    ("nodeclass-ami-term-alias-exclusive",
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@latest", "owner": "self"}]),
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@latest"}]), ["has(x.alias) && (has(x.id)"]),
    ("nodeclass-ami-term-alias-alone",
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@latest"}, {"name": "x"}]),
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@latest"}]), ["self.size() != 1"]),
    ("nodeclass-alias-format", node_class(spec__amiSelectorTerms=[{"alias": "al2023"}]),
     node_class(spec__amiSelectorTerms=[{"alias": "al2023@v20250101"}]), ["self.matches('^[a-zA-Z0-9]+@.+$')"]),
    ("nodeclass-alias-family", node_class(spec__amiSelectorTerms=[{"alias": "ubuntu@latest"}]),
     node_class(spec__amiSelectorTerms=[{"alias": "al2@latest"}]), ["self.split('@')[0] in ['al2',"]),
    ("nodeclass-alias-windows-latest", node_class(spec__amiSelectorTerms=[{"alias": "windows2022@v1"}]),
     node_class(spec__amiSelectorTerms=[{"alias": "windows2022@latest"}]), ["self.split('@')[1] == 'latest'"]),
    ("nodeclass-ami-term-tags", node_class(spec__amiSelectorTerms=[{"tags": {"a": ""}}], spec__amiFamily="AL2023"),
     node_class(spec__amiSelectorTerms=[{"tags": {"a": "b"}}], spec__amiFamily="AL2023"), ["self[k] != ''"]),
    ("nodeclass-block-device-root-once",
     node_class(spec__blockDeviceMappings=[{"deviceName": "/dev/a", "rootVolume": True, "ebs": {"volumeSize": "1Gi"}},
                                           {"deviceName": "/dev/b", "rootVolume": True, "ebs": {"volumeSize": "1Gi"}}]),
     node_class(spec__blockDeviceMappings=[{"deviceName": "/dev/a", "rootVolume": True, "ebs": {"volumeSize": "1Gi"}},
                                           {"deviceName": "/dev/b", "rootVolume": False, "ebs": {"volumeSize": "1Gi"}}]),
     ["rootVolume==true"]),
    ("nodeclass-ebs-size-or-snapshot",
     node_class(spec__blockDeviceMappings=[{"deviceName": "/dev/a", "ebs": {"volumeType": "gp3"}}]),
     node_class(spec__blockDeviceMappings=[{"deviceName": "/dev/a", "ebs": {"snapshotID": "snap-1"}}]),
     ["has(self.snapshotID) || has(self.volumeSize)"]),
    ("nodeclass-ebs-initialization-rate",
     node_class(spec__blockDeviceMappings=[{"ebs": {"volumeSize": "1Gi", "volumeInitializationRate": 100}}]),
     node_class(spec__blockDeviceMappings=[{"ebs": {"snapshotID": "snap-1", "volumeInitializationRate": 100}}]),
     ["volumeInitializationRate"]),
    ("nodeclass-capacity-reservation-empty", node_class(spec__capacityReservationSelectorTerms=[{"ownerID": "123456789012"}]),
     node_class(spec__capacityReservationSelectorTerms=[{"instanceMatchCriteria": "open"}]),
     ["has(x.instanceMatchCriteria))"]),
    ("nodeclass-capacity-reservation-id-exclusive",
     node_class(spec__capacityReservationSelectorTerms=[{"id": "cr-1", "ownerID": "123456789012"}]),
     node_class(spec__capacityReservationSelectorTerms=[{"id": "cr-1"}]), ["!self.all(x, has(x.id) && (has(x.tags)"]),
    ("nodeclass-capacity-reservation-tags", node_class(spec__capacityReservationSelectorTerms=[{"tags": {"": "b"}}]),
     node_class(spec__capacityReservationSelectorTerms=[{"tags": {"a": "b"}}]), ["self[k] != ''"]),
    ("nodeclass-connection-tracking", node_class(spec__connectionTracking={}),
     node_class(spec__connectionTracking={"udpTimeout": 30}), ["has(self.tcpEstablishedTimeout)"]),
    ("nodeclass-instance-profile-empty", node_class(spec__instanceProfile="", spec__role=DELETE),
     node_class(spec__instanceProfile="p", spec__role=DELETE), ["instanceProfile cannot be empty"]),
    ("nodeclass-network-interfaces-primary",
     node_class(spec__networkInterfaces=[{"deviceIndex": 1, "networkCardIndex": 0, "interfaceType": "interface"}]),
     node_class(spec__networkInterfaces=[{"deviceIndex": 0, "networkCardIndex": 0, "interfaceType": "interface"}]),
     ["x.interfaceType == 'interface')"]),
    ("nodeclass-network-interfaces-unique",
     node_class(spec__networkInterfaces=[{"deviceIndex": 0, "networkCardIndex": 0, "interfaceType": "interface"},
                                         {"deviceIndex": 0, "networkCardIndex": 0, "interfaceType": "efa-only"}]),
     node_class(spec__networkInterfaces=[{"deviceIndex": 0, "networkCardIndex": 0, "interfaceType": "interface"},
                                         {"deviceIndex": 1, "networkCardIndex": 0, "interfaceType": "efa-only"}]),
     ["self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex"]),
    ("nodeclass-placement-group-one", node_class(spec__placementGroupSelector={}),
     node_class(spec__placementGroupSelector={"name": "pg"}), ["has(self.name) || has(self.id)"]),
    ("nodeclass-placement-group-exclusive", node_class(spec__placementGroupSelector={"name": "pg", "id": "pg-1"}),
     node_class(spec__placementGroupSelector={"id": "pg-1"}), ["!(has(self.name) && has(self.id))"]),
    ("nodeclass-role-empty", node_class(spec__role=""), node_class(spec__role="r"), ["role cannot be empty"]),
    ("nodeclass-security-groups-empty", node_class(spec__securityGroupSelectorTerms=[]),
     node_class(spec__securityGroupSelectorTerms=[{"name": "sg"}]), ["securityGroupSelectorTerms cannot be empty"]),
    ("nodeclass-security-group-term-empty", node_class(spec__securityGroupSelectorTerms=[{}]),
     node_class(spec__securityGroupSelectorTerms=[{"name": "x"}]), ["has(x.tags) || has(x.id) || has(x.name))"]),
    ("nodeclass-security-group-id-exclusive",
     node_class(spec__securityGroupSelectorTerms=[{"id": "sg-1", "name": "x"}]),
     node_class(spec__securityGroupSelectorTerms=[{"id": "sg-1", "name": "x"}, {"name": "y"}]),
     ["has(x.id) && (has(x.tags) || has(x.name))"]),
    ("nodeclass-security-group-name-exclusive",
     node_class(spec__securityGroupSelectorTerms=[{"tags": {"a": "b"}, "name": "x"}]),
     node_class(spec__securityGroupSelectorTerms=[{"tags": {"a": "b"}}, {"name": "x"}]),
     ["has(x.name) && (has(x.tags) || has(x.id))"]),
    ("nodeclass-security-group-tags", node_class(spec__securityGroupSelectorTerms=[{"tags": {"a": ""}}]),
     node_class(spec__securityGroupSelectorTerms=[{"tags": {"a": "b"}}]), ["self[k] != ''"]),
    ("nodeclass-subnets-empty", node_class(spec__subnetSelectorTerms=[]),
     node_class(spec__subnetSelectorTerms=[{"id": "subnet-1"}]), ["subnetSelectorTerms cannot be empty"]),
    ("nodeclass-subnet-term-empty", node_class(spec__subnetSelectorTerms=[{}]),
     node_class(spec__subnetSelectorTerms=[{"tags": {"a": "b"}}]), ["has(x.tags) || has(x.id))"]),
    ("nodeclass-subnet-id-exclusive", node_class(spec__subnetSelectorTerms=[{"id": "subnet-1", "tags": {"a": "b"}}]),
     node_class(spec__subnetSelectorTerms=[{"id": "subnet-1"}]), ["has(x.id) && has(x.tags)"]),
    ("nodeclass-subnet-tags", node_class(spec__subnetSelectorTerms=[{"tags": {"": "b"}}]),
     node_class(spec__subnetSelectorTerms=[{"tags": {"a": "b"}}]), ["self[k] != ''"]),
    ("nodeclass-tags-empty-key", node_class(spec__tags={"": "x"}), node_class(spec__tags={"x": ""}),
     ["self.all(k, k != '')"]),
    ("nodeclass-tags-eks-cluster-name", node_class(spec__tags={"eks:eks-cluster-name": "x"}),
     node_class(spec__tags={"eks:other": "x"}), ["eks:eks-cluster-name"]),
    ("nodeclass-tags-kubernetes-cluster", node_class(spec__tags={"kubernetes.io/cluster/x": "owned"}),
     node_class(spec__tags={"kubernetes.io/role": "x"}), ["kubernetes.io/cluster"]),
    ("nodeclass-tags-nodepool", node_class(spec__tags={"karpenter.sh/nodepool": "x"}),
     node_class(spec__tags={"karpenter.sh/discovery": "x"}), ["k != 'karpenter.sh/nodepool'"]),
    ("nodeclass-tags-nodeclaim", node_class(spec__tags={"karpenter.sh/nodeclaim": "x"}),
     node_class(spec__tags={"karpenter.sh/nodeclaims": "x"}), ["karpenter.sh/nodeclaim'"]),
    ("nodeclass-tags-ec2nodeclass", node_class(spec__tags={"karpenter.k8s.aws/ec2nodeclass": "x"}),
     node_class(spec__tags={"karpenter.k8s.aws/other": "x"}), ["karpenter.k8s.aws/ec2nodeclass"]),
    # EC2NodeClass spec.kubelet (typed in the release).
    ("nodeclass-kubelet-image-gc-thresholds",
     node_class(spec__kubelet={"imageGCHighThresholdPercent": 80, "imageGCLowThresholdPercent": 80}),
     node_class(spec__kubelet={"imageGCHighThresholdPercent": 81, "imageGCLowThresholdPercent": 80}),
     ["self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent"]),
    ("nodeclass-kubelet-eviction-soft-has-grace-period",
     node_class(spec__kubelet={"evictionSoft": {"memory.available": "500Mi", "nodefs.available": "15%"},
                               "evictionSoftGracePeriod": {"memory.available": "1m"}}),
     node_class(spec__kubelet={"evictionSoft": {"memory.available": "500Mi", "nodefs.available": "15%"},
                               "evictionSoftGracePeriod": {"memory.available": "1m", "nodefs.available": "2m"}}),
     ["evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"]),
    ("nodeclass-kubelet-grace-period-has-eviction-soft",
     node_class(spec__kubelet={"evictionSoft": {"memory.available": "500Mi"},
                               "evictionSoftGracePeriod": {"memory.available": "1m", "pid.available": "1m"}}),
     node_class(spec__kubelet={"evictionSoft": {"memory.available": "500Mi"},
                               "evictionSoftGracePeriod": {"memory.available": "1m"}}),
     ["evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft"]),
    ("nodeclass-kubelet-eviction-hard-signals", node_class(spec__kubelet={"evictionHard": {"memory.free": "5%"}}),
     node_class(spec__kubelet={"evictionHard": {"memory.available": "5%"}}), ["valid keys for evictionHard"]),
    # Soft thresholds and their grace periods pair up, so an unknown signal is in both maps.
    ("nodeclass-kubelet-eviction-soft-signals",
     node_class(spec__kubelet={"evictionSoft": {"memory.free": "500Mi"},
                               "evictionSoftGracePeriod": {"memory.free": "1m"}}),
     node_class(spec__kubelet={"evictionSoft": {"memory.available": "500Mi"},
                               "evictionSoftGracePeriod": {"memory.available": "1m"}}),
     ["valid keys for evictionSoft are", "valid keys for evictionSoftGracePeriod are"]),
    ("nodeclass-kubelet-kube-reserved-resources", node_class(spec__kubelet={"kubeReserved": {"pods": "10"}}),
     node_class(spec__kubelet={"kubeReserved": {"pid": "10"}}), ["valid keys for kubeReserved"]),
    ("nodeclass-kubelet-kube-reserved-negative", node_class(spec__kubelet={"kubeReserved": {"cpu": "-100m"}}),
     node_class(spec__kubelet={"kubeReserved": {"cpu": "+100m"}}),
     ["kubeReserved value cannot be a negative resource quantity"]),
    ("nodeclass-kubelet-system-reserved-resources", node_class(spec__kubelet={"systemReserved": {"gpu": "1"}}),
     node_class(spec__kubelet={"systemReserved": {"ephemeral-storage": "1Gi"}}), ["valid keys for systemReserved"]),
    ("nodeclass-kubelet-system-reserved-negative",
     node_class(spec__kubelet={"systemReserved": {"memory": "-1Gi"}}),
     node_class(spec__kubelet={"systemReserved": {"memory": "1Gi"}}),
     ["systemReserved value cannot be a negative resource quantity"]),
    # NodeOverlay spec.
    ("nodeoverlay-price-or-adjustment", overlay(spec__price="0.5"), overlay(spec__price="0.5",
                                                                              spec__priceAdjustment=DELETE),
     ["!has(self.price) || !has(self.priceAdjustment)"]),
    ("nodeoverlay-capacity-extended-only", overlay(spec__capacity={"memory": "1Gi"}),
     overlay(spec__capacity={"smarter-devices/fuse": 1}), ["invalid resource restricted"]),
    ("nodeoverlay-requirement-notin-values",
     overlay(spec__requirements=[{"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": []}]),
     overlay(spec__requirements=[{"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]}]),
     ["x.operator == 'NotIn'"]),
    ("nodeoverlay-requirement-in-values", overlay(spec__requirements=[{"key": "a", "operator": "In", "values": []}]),
     overlay(spec__requirements=[{"key": "a", "operator": "Exists", "values": []}]), ["x.operator == 'In'"]),
    ("nodeoverlay-requirement-gte-single-int",
     overlay(spec__requirements=[{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4", "8"]}]),
     overlay(spec__requirements=[{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]}]),
     ["int(x.values[0]) >= 0"]),
    ("nodeoverlay-requirement-key-karpenter-sh",
     overlay(spec__requirements=[{"key": "karpenter.sh/foo", "operator": "Exists"}]),
     overlay(spec__requirements=[{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}]),
     ['self.find("^([^/]+)").endsWith("karpenter.sh")']),
    ("nodeoverlay-requirement-key-hostname",
     overlay(spec__requirements=[{"key": "kubernetes.io/hostname", "operator": "Exists"}]),
     overlay(spec__requirements=[{"key": "kubernetes.io/os", "operator": "Exists"}]),
     ['self != "kubernetes.io/hostname"']),
    ("nodeoverlay-requirement-key-karpenter-k8s-aws",
     overlay(spec__requirements=[{"key": "karpenter.k8s.aws/instance-tenancy", "operator": "Exists"}]),
     overlay(spec__requirements=[{"key": "karpenter.k8s.aws/instance-capability-flex", "operator": "Exists"}]),
     ['self in ["karpenter.k8s.aws/ec2nodeclass"']),
    # CapacityBuffer spec.
    ("capacitybuffer-pod-template-sized", buffer(spec__replicas=DELETE),
     buffer(spec__replicas=DELETE, spec__limits={"cpu": "4", "memory": "8Gi"}),
     ["has(self.replicas) || has(self.limits)"]),
    ("capacitybuffer-one-reference",
     buffer(spec__scalableRef={"apiGroup": "apps", "kind": "Deployment", "name": "web"}),
     buffer(spec__scalableRef={"apiGroup": "apps", "kind": "Deployment", "name": "web"}, spec__podTemplateRef=DELETE),
     ["!(has(self.podTemplateRef) && has(self.scalableRef))"]),
]


@pytest.mark.parametrize("group,failing,passing,fragments", GROUPS, ids=[g[0] for g in GROUPS])
def test_rule_group_fires_and_does_not_fire(group, failing, passing, fragments):
    bad, good = check(failing), check(passing)
    for fragment in fragments:
        assert any(fragment in r for r in fired_text(bad)), (group, fragment, bad)
        assert not any(fragment in r for r in fired_text(good)), (group, fragment, good)
    assert good["valid"], (group, good)
    # Only rule errors: the failing object breaks no schema constraint, so the rule is what refuses it.
    assert all("rule" in e for e in bad["errors"]), (group, bad)


def test_every_rule_is_in_a_group():
    every = {r["rule"] for r in crd_oracle.rules(CRDS) if not r["transition"]}
    covered = set()
    for _, failing, _, _ in GROUPS:
        covered |= fired(check(failing))
    assert every - covered == set()
