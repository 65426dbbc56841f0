"""CustomResourceDefinitions in the stand-in: validation, establishment after a delay, custom objects validated,
pruned and defaulted by their schema, and the real Karpenter CRDs."""

import copy

from kube import MERGE, is_true, karpenter_crds, path

CRD_URL = path("apiextensions.k8s.io/v1", "customresourcedefinitions", "widgets.example.com")
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "string", "enum": ["small", "large"]},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 10},
                "policy": {"type": "object", "default": {}, "properties": {"mode": {"type": "string", "default": "Auto"}}},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


def widget_crd(**spec_overrides):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": SCHEMA}},
                {"name": "v1beta1", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA}},
            ],
            **spec_overrides,
        },
    }


def widget(object_name="w", **spec):
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": object_name, "namespace": "default"},
            "spec": spec}


WIDGET = path("example.com/v1", "widgets", "w", "default")


def established(kube, name="widgets.example.com"):
    url = path("apiextensions.k8s.io/v1", "customresourcedefinitions", name)
    return kube.wait_for(lambda: is_true(kube.get(url), "Established") and kube.get(url), what=f"{name} Established")


def test_crd_structure_is_validated(kube):
    crd = widget_crd()
    crd["spec"]["versions"][1]["storage"] = True
    r = kube.apply(CRD_URL, crd, expect=422)
    assert r["reason"] == "Invalid"
    assert r["message"].startswith('CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: spec.versions')
    assert "must have exactly one version marked as storage version" in r["message"]
    bad = widget_crd(group="")
    bad["spec"]["names"].pop("kind")
    fields = {c["field"] for c in kube.apply(CRD_URL, bad, expect=422)["details"]["causes"]}
    assert {"spec.group", "spec.names.kind"} <= fields
    renamed = widget_crd()
    renamed["metadata"]["name"] = "gadgets.example.com"
    r = kube.apply(path("apiextensions.k8s.io/v1", "customresourcedefinitions", "gadgets.example.com"), renamed, expect=422)
    assert r["details"]["causes"][0] == {"reason": "FieldValueInvalid", "field": "metadata.name",
                                         "message": 'Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'}


def test_crd_is_established_after_the_delay_then_served(kube, k8s_delays):
    k8s_delays(crd_established=0.5)
    crd = kube.apply(CRD_URL, widget_crd())
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert crd["status"]["storedVersions"] == ["v1"]
    assert not is_true(crd, "Established")
    assert "example.com" not in [g["name"] for g in kube.get("/apis")["groups"]]
    assert kube.request("GET", path("example.com/v1", "widgets", namespace="default")).status_code == 404

    crd = established(kube)
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert (conditions["NamesAccepted"]["reason"], conditions["NamesAccepted"]["message"]) == ("NoConflicts", "no conflicts found")
    assert (conditions["Established"]["reason"], conditions["Established"]["message"]) == (
        "InitialNamesAccepted", "the initial names have been accepted")
    assert crd["status"]["acceptedNames"] == {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"],
                                              "singular": "widget", "listKind": "WidgetList"}
    group = next(g for g in kube.get("/apis")["groups"] if g["name"] == "example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    resources = {r["name"]: r for r in kube.get("/apis/example.com/v1")["resources"]}
    assert resources["widgets"]["namespaced"] is True and resources["widgets"]["kind"] == "Widget"
    assert "widgets/status" in resources
    assert "widgets/status" not in {r["name"] for r in kube.get("/apis/example.com/v1beta1")["resources"]}
    assert kube.get(path("example.com/v1", "widgets", namespace="default"))["kind"] == "WidgetList"


def test_custom_objects_are_defaulted_pruned_and_validated(kube):
    kube.apply(CRD_URL, widget_crd())
    established(kube)
    obj = kube.apply(WIDGET, widget(size="small", unknown="dropped", extra={"anything": {"goes": 1}}), expect=201)
    assert obj["spec"] == {"size": "small", "replicas": 1, "policy": {"mode": "Auto"}, "extra": {"anything": {"goes": 1}}}
    assert obj["metadata"]["generation"] == 1
    assert kube.get(path("example.com/v1beta1", "widgets", "w", "default"))["apiVersion"] == "example.com/v1beta1"

    r = kube.apply(WIDGET, widget(size="medium"), expect=422)
    assert r["reason"] == "Invalid"
    assert r["message"] == ('Widget.example.com "w" is invalid: spec.size: Unsupported value: "medium": '
                            'supported values: "small", "large"')
    assert r["details"] == {"name": "w", "group": "example.com", "kind": "Widget", "causes": [
        {"reason": "FieldValueNotSupported", "message": 'Unsupported value: "medium": supported values: "small", "large"',
         "field": "spec.size"}]}

    r = kube.apply(WIDGET, widget(size="small", replicas=9, name="Bad1", tags=["a", "b", "c"]), expect=422)
    causes = {c["field"]: c for c in r["details"]["causes"]}
    assert causes["spec.replicas"]["message"] == "Invalid value: 9: spec.replicas in body should be less than or equal to 5"
    assert causes["spec.name"]["message"] == "Invalid value: \"Bad1\": spec.name in body should match '^[a-z]+$'"
    assert causes["spec.tags"]["reason"] == "FieldValueTooMany"
    r = kube.apply(WIDGET, widget(replicas="two"), expect=422)
    causes = {c["field"]: c for c in r["details"]["causes"]}
    assert causes["spec.size"] == {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"}
    assert causes["spec.replicas"]["reason"] == "FieldValueTypeInvalid"
    assert "spec.replicas in body must be of type integer" in causes["spec.replicas"]["message"]


def test_custom_object_status_and_generation(kube):
    kube.apply(CRD_URL, widget_crd())
    established(kube)
    kube.apply(WIDGET, {**widget(size="small"), "status": {"phase": "ignored"}})
    assert "status" not in kube.get(WIDGET)
    r = kube.request("PATCH", WIDGET + "/status", {"status": {"phase": "Ready", "bogus": 1}}, MERGE)
    assert r.status_code == 200 and r.json()["status"] == {"phase": "Ready"}
    assert r.json()["metadata"]["generation"] == 1
    assert kube.apply(WIDGET, widget(size="large"))["metadata"]["generation"] == 2
    current = kube.get(WIDGET)
    no_version = copy.deepcopy(current)
    no_version["metadata"].pop("resourceVersion")
    r = kube.request("PUT", WIDGET, no_version)
    assert r.status_code == 422 and "metadata.resourceVersion" in r.json()["message"]
    assert kube.request("PUT", WIDGET, current).status_code == 200


def test_deleting_a_crd_deletes_its_objects(kube):
    kube.apply(CRD_URL, widget_crd())
    established(kube)
    kube.apply(WIDGET, widget(size="small"))
    held = path("example.com/v1", "widgets", "held", "default")
    kube.apply(held, {**widget("held", size="small"), "metadata": {"name": "held", "namespace": "default",
                                                                       "finalizers": ["example.com/hold"]}})
    assert kube.delete(CRD_URL).status_code == 200
    kube.wait_gone(WIDGET)
    crd = kube.get(CRD_URL)
    assert crd["metadata"]["deletionTimestamp"] and is_true(crd, "Terminating")
    r = kube.apply(path("example.com/v1", "widgets", "new", "default"), widget("new", size="small"), expect=405)
    assert r["message"] == "create not allowed while custom resource definition is terminating"
    kube.request("PATCH", held, {"metadata": {"finalizers": None}}, MERGE)
    kube.wait_gone(CRD_URL)
    assert kube.request("GET", path("example.com/v1", "widgets", namespace="default")).status_code == 404


def test_real_karpenter_crds_are_served_validated_and_defaulted(kube):
    for name, crd in karpenter_crds().items():
        kube.apply(path("apiextensions.k8s.io/v1", "customresourcedefinitions", name), crd)
    for name in ("nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"):
        established(kube, name)
    resources = {r["name"]: r for r in kube.get("/apis/karpenter.sh/v1")["resources"]}
    assert resources["nodepools"]["namespaced"] is False and "nodepools/status" in resources
    pool_url = path("karpenter.sh/v1", "nodepools", "default")
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}
    applied = kube.apply(pool_url, pool, expect=201)
    assert applied["spec"]["disruption"] == {"budgets": [{"nodes": "10%"}], "consolidateAfter": "0s",
                                             "consolidationPolicy": "WhenEmptyOrUnderutilized"}
    assert applied["spec"]["template"]["spec"]["expireAfter"] == "720h"
    bad = copy.deepcopy(pool)
    bad["spec"]["disruption"] = {"consolidationPolicy": "Sometimes", "consolidateAfter": "30s"}
    r = kube.apply(pool_url, bad, expect=422)
    assert [(c["reason"], c["field"]) for c in r["details"]["causes"]] == [
        ("FieldValueNotSupported", "spec.disruption.consolidationPolicy")]
    nodeclass = kube.apply(path("karpenter.k8s.aws/v1", "ec2nodeclasses", "default"), {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"role": "node", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                 "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c1"}}],
                 "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c1"}}]}}, expect=201)
    assert nodeclass["spec"]["metadataOptions"] == {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                                    "httpPutResponseHopLimit": 1, "httpTokens": "required"}
    missing = kube.apply(path("karpenter.k8s.aws/v1", "ec2nodeclasses", "bad"), {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "bad"},
        "spec": {"role": "node"}}, expect=422)
    assert {c["field"] for c in missing["details"]["causes"]} == {
        "spec.amiSelectorTerms", "spec.subnetSelectorTerms", "spec.securityGroupSelectorTerms"}
