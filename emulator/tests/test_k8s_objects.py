"""The stand-in's REST semantics: server-side apply, patches, replace, list selectors, status, deletion."""

from kube import MERGE, path

CM = path("v1", "configmaps", "settings", "default")


def configmap(data, name="settings", namespace="default", **meta):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace, **meta},
            "data": data}


def deployment(name="web", replicas=1, image="public.ecr.aws/nginx/nginx:1.27", **pod_spec):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "main", "image": image}], **pod_spec}},
        },
    }


def test_apply_creates_with_server_set_fields(kube):
    obj = kube.apply(CM, configmap({"a": "1"}), expect=201)
    meta = obj["metadata"]
    assert obj["apiVersion"] == "v1" and obj["kind"] == "ConfigMap"
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and meta["resourceVersion"].isdigit()
    assert meta["namespace"] == "default"
    (entry,) = meta["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"], entry["fieldsType"]) == ("kbp", "Apply", "v1", "FieldsV1")
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}}}


def test_apply_removes_what_the_manager_no_longer_applies_and_keeps_others_fields(kube):
    kube.apply(CM, configmap({"a": "1", "b": "2"}, labels={"team": "x"}))
    r = kube.request("PATCH", CM, {"data": {"c": "3"}}, MERGE, fieldManager="someone-else")
    assert r.status_code == 200, r.text
    obj = kube.apply(CM, configmap({"a": "1"}), expect=200)
    assert obj["data"] == {"a": "1", "c": "3"}
    assert "labels" not in obj["metadata"]
    managers = {m["manager"]: m for m in obj["metadata"]["managedFields"]}
    assert managers["someone-else"]["operation"] == "Update"
    assert managers["someone-else"]["fieldsV1"] == {"f:data": {"f:c": {}}}


def test_a_repeated_apply_is_a_no_op(kube):
    first = kube.apply(CM, configmap({"a": "1"}))
    again = kube.apply(CM, configmap({"a": "1"}))
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_apply_conflicts_with_another_managers_field_unless_forced(kube):
    kube.apply(CM, configmap({"a": "1"}), manager="one")
    conflict = kube.apply(CM, configmap({"a": "2"}), manager="two", expect=409)
    assert conflict["reason"] == "Conflict"
    assert conflict["message"] == ('Operation cannot be fulfilled on configmaps "settings": Apply failed with 1 conflict: '
                                   'conflict with "one" using v1: .data.a')
    assert conflict["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "one" using v1',
                                              "field": ".data.a"}]
    same = kube.apply(CM, configmap({"a": "1"}), manager="two")  # the same value: shared, no conflict
    assert {m["manager"] for m in same["metadata"]["managedFields"]} == {"one", "two"}
    forced = kube.apply(CM, configmap({"a": "2"}), manager="two", force=True)
    assert forced["data"] == {"a": "2"}
    assert [m["manager"] for m in forced["metadata"]["managedFields"]] == ["two"]


def test_apply_needs_a_field_manager_and_a_matching_object(kube):
    r = kube.request("PATCH", CM, configmap({"a": "1"}), "application/apply-patch+yaml")
    assert r.status_code == 422
    assert r.json()["message"] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    assert kube.apply(CM, configmap({"a": "1"}, name="other"), expect=400)["reason"] == "BadRequest"
    assert kube.apply(CM, {**configmap({}), "kind": "Secret"}, expect=400)["reason"] == "BadRequest"
    assert kube.apply(CM, {**configmap({}), "apiVersion": "apps/v1"}, expect=400)["reason"] == "BadRequest"


def test_apply_accepts_yaml(kube):
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  a: 'yes'\n"
    r = kube.request("PATCH", CM, body, "application/apply-patch+yaml", fieldManager="kbp")
    assert r.status_code == 201, r.text
    assert r.json()["data"] == {"a": "yes"}


def test_dry_run_validates_but_does_not_persist(kube):
    obj = kube.apply(CM, configmap({"a": "1"}), dryRun="All", expect=201)
    assert obj["data"] == {"a": "1"}
    assert kube.maybe(CM) is None
    kube.apply(CM, configmap({"a": "1"}))
    assert kube.apply(CM, configmap({"a": "2"}), dryRun="All")["data"] == {"a": "2"}
    assert kube.get(CM)["data"] == {"a": "1"}
    bad = kube.apply(path("v1", "configmaps", "Bad_Name", "default"), configmap({}, name="Bad_Name"), dryRun="All", expect=422)
    assert bad["reason"] == "Invalid"


def test_writes_in_a_missing_namespace_are_404(kube):
    r = kube.request("PATCH", path("v1", "configmaps", "x", "nope"), configmap({}, name="x", namespace="nope"),
                     "application/apply-patch+yaml", fieldManager="kbp")
    assert r.status_code == 404
    assert r.json()["message"] == 'namespaces "nope" not found'
    assert r.json()["details"] == {"name": "nope", "kind": "namespaces"}
    r = kube.request("POST", path("v1", "configmaps", namespace="nope"), configmap({}, name="x", namespace="nope"))
    assert r.status_code == 404


def test_create_replace_and_their_conflicts(kube):
    collection = path("v1", "configmaps", namespace="default")
    r = kube.request("POST", collection, configmap({"a": "1"}))
    assert r.status_code == 201
    created = r.json()
    r = kube.request("POST", collection, configmap({"a": "1"}))
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (409, "AlreadyExists", 'configmaps "settings" already exists')
    replaced = kube.request("PUT", CM, {**created, "data": {"a": "2"}})
    assert replaced.status_code == 200 and replaced.json()["data"] == {"a": "2"}
    stale = kube.request("PUT", CM, {**created, "data": {"a": "3"}})
    assert stale.status_code == 409 and stale.json()["reason"] == "Conflict"
    assert "the object has been modified" in stale.json()["message"]
    assert kube.request("PUT", path("v1", "configmaps", "missing", "default"), configmap({}, name="missing")).status_code == 404


def test_patch_types(kube):
    kube.apply(CM, configmap({"a": "1", "b": "2"}))
    merged = kube.request("PATCH", CM, {"data": {"a": None, "c": "3"}}, MERGE, fieldManager="m").json()
    assert merged["data"] == {"b": "2", "c": "3"}
    strategic = kube.request("PATCH", CM, {"data": {"d": "4"}}, "application/strategic-merge-patch+json").json()
    assert strategic["data"] == {"b": "2", "c": "3", "d": "4"}
    patched = kube.request("PATCH", CM, [{"op": "replace", "path": "/data/b", "value": "20"}], "application/json-patch+json")
    assert patched.json()["data"]["b"] == "20"
    r = kube.request("PATCH", CM, "data: {}", "text/plain")
    assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"
    assert kube.request("PATCH", path("v1", "configmaps", "missing", "default"), {}, MERGE).status_code == 404


def test_list_with_selectors(kube):
    for name, tier in (("a", "web"), ("b", "db"), ("c", None)):
        kube.apply(path("v1", "configmaps", name, "default"),
                   configmap({}, name=name, **({"labels": {"tier": tier}} if tier else {})))
    def names(**params):
        listed = kube.get(path("v1", "configmaps", namespace="default"), **params)
        assert listed["kind"] == "ConfigMapList" and listed["metadata"]["resourceVersion"]
        assert all(i["apiVersion"] == "v1" and i["kind"] == "ConfigMap" for i in listed["items"])
        return [i["metadata"]["name"] for i in listed["items"] if i["metadata"]["name"] != "kube-root-ca.crt"]
    assert names() == ["a", "b", "c"]
    assert names(labelSelector="tier=web") == ["a"]
    assert names(labelSelector="tier!=web") == ["b", "c"]
    assert names(labelSelector="tier") == ["a", "b"]
    assert names(labelSelector="!tier") == ["c"]
    assert names(labelSelector="tier in (web,db)") == ["a", "b"]
    assert names(fieldSelector="metadata.name=b") == ["b"]
    assert names(fieldSelector="metadata.namespace=default,metadata.name!=b") == ["a", "c"]
    everywhere = kube.get("/api/v1/configmaps", fieldSelector="metadata.namespace=kube-system")
    assert [i["metadata"]["name"] for i in everywhere["items"]] == ["kube-root-ca.crt"]
    r = kube.request("GET", path("v1", "configmaps", namespace="default"), fieldSelector="data.a=1")
    assert r.status_code == 400 and r.json()["message"] == "field label not supported: data.a"


def test_generation_status_and_the_status_subresource(kube):
    url = path("apps/v1", "deployments", "web", "default")
    d = deployment(replicas=0)
    created = kube.apply(url, {**d, "status": {"replicas": 5}})
    assert created["metadata"]["generation"] == 1
    assert created["status"].get("replicas") is None  # status is not written through the main resource
    relabeled = kube.apply(url, {**d, "metadata": {**d["metadata"], "labels": {"x": "y"}}})
    assert relabeled["metadata"]["generation"] == 1
    d["spec"]["replicas"] = 0
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "public.ecr.aws/nginx/nginx:1.28"
    assert kube.apply(url, d)["metadata"]["generation"] == 2
    status = kube.request("PATCH", url + "/status", {"status": {"observedGeneration": 7}, "spec": {"replicas": 9}}, MERGE)
    assert status.status_code == 200
    assert status.json()["status"]["observedGeneration"] == 7
    assert status.json()["spec"]["replicas"] == 0


def test_builtin_defaults_are_applied(kube):
    obj = kube.apply(path("apps/v1", "deployments", "web", "default"), deployment(replicas=None))
    spec = obj["spec"]
    assert spec["replicas"] == 1 and spec["progressDeadlineSeconds"] == 600 and spec["revisionHistoryLimit"] == 10
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    pod = spec["template"]["spec"]
    assert (pod["restartPolicy"], pod["dnsPolicy"], pod["schedulerName"]) == ("Always", "ClusterFirst", "default-scheduler")
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    svc = kube.apply(path("v1", "services", "web", "default"), {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    assert svc["spec"]["type"] == "ClusterIP" and svc["spec"]["clusterIP"].startswith("10.100.")
    assert svc["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    ns = kube.get("/api/v1/namespaces/default")
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}
    assert ns["spec"] == {"finalizers": ["kubernetes"]} and ns["status"] == {"phase": "Active"}


def test_invalid_builtin_objects_are_422(kube):
    d = deployment()
    d["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    d["spec"]["template"]["spec"]["containers"][0].pop("image")
    r = kube.apply(path("apps/v1", "deployments", "web", "default"), d, expect=422)
    assert r["reason"] == "Invalid"
    assert r["message"].startswith('Deployment.apps "web" is invalid: [spec.template.metadata.labels: Invalid value: '
                                   'map[string]string{"app":"web"}: `selector` does not match template `labels`, ')
    fields = {c["field"]: c["reason"] for c in r["details"]["causes"]}
    assert fields == {"spec.template.metadata.labels": "FieldValueInvalid",
                      "spec.template.spec.containers[0].image": "FieldValueRequired"}
    bad_label = kube.apply(CM, configmap({}, labels={"a": "not ok!"}), expect=422)
    assert bad_label["details"]["causes"][0]["field"] == "metadata.labels"


def test_delete_without_and_with_finalizers(kube):
    kube.apply(CM, configmap({}))
    assert kube.delete(CM, dryRun="All").status_code == 200
    assert kube.delete(CM, {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}).status_code == 200
    assert kube.maybe(CM) is not None
    r = kube.delete(CM)
    assert r.status_code == 200
    assert r.json()["kind"] == "Status" and r.json()["status"] == "Success"
    assert kube.maybe(CM) is None
    assert kube.delete(CM).status_code == 404

    kube.apply(CM, configmap({}, finalizers=["example.com/hold"]))
    held = kube.delete(CM)
    assert held.status_code == 200 and held.json()["metadata"]["deletionTimestamp"]
    again = kube.delete(CM)
    assert again.status_code == 200 and again.json()["metadata"]["uid"] == held.json()["metadata"]["uid"]
    late = kube.request("PATCH", CM, {"metadata": {"finalizers": ["example.com/hold", "example.com/new"]}}, MERGE)
    assert late.status_code == 422
    assert "no new finalizers can be added if the object is being deleted" in late.json()["message"]
    assert kube.get(CM)["metadata"]["finalizers"] == ["example.com/hold"]
    released = kube.request("PATCH", CM, {"metadata": {"finalizers": None}}, MERGE)
    assert released.status_code == 200
    assert kube.maybe(CM) is None


def test_foreground_deletion_waits_for_blocking_dependents(kube):
    owner = kube.apply(CM, configmap({}))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": owner["metadata"]["uid"],
           "blockOwnerDeletion": True}
    dependent = path("v1", "configmaps", "dependent", "default")
    kube.apply(dependent, configmap({}, name="dependent", ownerReferences=[ref], finalizers=["example.com/hold"]))
    r = kube.delete(CM, {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})
    assert r.status_code == 200
    assert r.json()["metadata"]["finalizers"] == ["foregroundDeletion"] and r.json()["metadata"]["deletionTimestamp"]
    kube.wait_for(lambda: (kube.maybe(dependent) or {}).get("metadata", {}).get("deletionTimestamp"), what="dependent deleting")
    assert kube.get(CM)["metadata"]["deletionTimestamp"]
    kube.request("PATCH", dependent, {"metadata": {"finalizers": None}}, MERGE)
    kube.wait_gone(dependent)
    kube.wait_gone(CM)


def test_background_deletion_collects_dependents(kube):
    owner = kube.apply(CM, configmap({}))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": owner["metadata"]["uid"]}
    dependent = path("v1", "configmaps", "dependent", "default")
    kube.apply(dependent, configmap({}, name="dependent", ownerReferences=[ref]))
    assert kube.delete(CM).status_code == 200
    kube.wait_gone(dependent)


def test_orphan_deletion_keeps_dependents(kube):
    owner = kube.apply(CM, configmap({}))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": owner["metadata"]["uid"]}
    dependent = path("v1", "configmaps", "dependent", "default")
    kube.apply(dependent, configmap({}, name="dependent", ownerReferences=[ref]))
    assert kube.delete(CM, propagationPolicy="Orphan").status_code == 200
    assert "ownerReferences" not in kube.get(dependent)["metadata"]


def test_namespace_deletion_takes_its_content(kube):
    ns = path("v1", "namespaces", "team")
    kube.apply(ns, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    held = path("v1", "configmaps", "held", "team")
    kube.apply(held, configmap({}, name="held", namespace="team", finalizers=["example.com/hold"]))
    kube.apply(path("v1", "configmaps", "plain", "team"), configmap({}, name="plain", namespace="team"))
    r = kube.delete(ns)
    assert r.status_code == 200 and r.json()["status"]["phase"] == "Terminating"
    kube.wait_gone(path("v1", "configmaps", "plain", "team"))
    refused = kube.request("POST", path("v1", "configmaps", namespace="team"), configmap({}, name="new", namespace="team"))
    assert refused.status_code == 403
    assert refused.json()["message"].endswith("unable to create new content in namespace team because it is being terminated")
    remaining = kube.wait_for(lambda: (c := _cond(kube.get(ns), "NamespaceFinalizersRemaining")) and c["status"] == "True" and c,
                              what="finalizers reported")
    assert remaining["message"] == "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    kube.request("PATCH", held, {"metadata": {"finalizers": None}}, MERGE)
    kube.wait_gone(ns)


def _cond(obj, type_):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == type_), None)


def test_initial_namespaces_have_a_default_service_account_and_the_root_ca(kube):
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        kube.wait_for(lambda: kube.maybe(path("v1", "serviceaccounts", "default", name)), what=f"{name} service account")
        root_ca = kube.wait_for(lambda: kube.maybe(path("v1", "configmaps", "kube-root-ca.crt", name)), what="root CA")
        assert root_ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")


def test_system_namespaces_may_not_be_deleted(kube):
    for name in ("default", "kube-system", "kube-public"):
        r = kube.delete(path("v1", "namespaces", name))
        assert (r.status_code, r.json()["message"]) == (403, f'namespaces "{name}" is forbidden: this namespace may not be deleted')


def test_apply_treats_finalizers_as_a_set_and_other_lists_as_atomic(kube):
    kube.apply(CM, configmap({}, finalizers=["kbp.example.com/mine"]))
    added = kube.request("PATCH", CM, [{"op": "add", "path": "/metadata/finalizers/-", "value": "ctrl.example.com/x"}],
                         "application/json-patch+json", fieldManager="controller")
    assert added.status_code == 200, added.text
    assert kube.apply(CM, configmap({}))["metadata"]["finalizers"] == ["ctrl.example.com/x"]

    url = path("apps/v1", "deployments", "web", "default")
    d = deployment()
    d["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "public.ecr.aws/x/y:1"})
    kube.apply(url, d)
    d["spec"]["template"]["spec"]["containers"].pop()
    assert [c["name"] for c in kube.apply(url, d)["spec"]["template"]["spec"]["containers"]] == ["main"]


def test_apply_removes_nested_fields_it_no_longer_sets(kube):
    kube.apply(CM, configmap({"a": "1"}, labels={"x": "1", "y": "2"}, annotations={"note": "n"}))
    obj = kube.apply(CM, configmap({"a": "1"}, labels={"x": "1"}))
    assert obj["metadata"]["labels"] == {"x": "1"} and "annotations" not in obj["metadata"]
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}


def test_quantities_read_back_in_canonical_form(kube):
    url = path("apps/v1", "deployments", "web", "default")
    d = deployment()
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": 2, "memory": "1.5Gi"}}
    resources = kube.apply(url, d)["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1536Mi"}}
    again = kube.apply(url, d)
    assert again["metadata"]["generation"] == 1  # the same quantities, written differently: no change
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3"}, "limits": {"cpu": "2"}}
    r = kube.apply(url, d, expect=422)
    assert ('spec.template.spec.containers[0].resources.requests: Invalid value: "3": must be less than or equal to '
            'cpu limit of 2') in r["message"]
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots"}}
    assert kube.apply(url, d, expect=400)["message"].startswith(
        'Deployment in version "v1" cannot be handled as a Deployment: quantities must match the regular expression')
