"""Services, Ingresses and storage across namespaces: what a destroy releases before the cluster goes (load
balancers, volumes), and how the stand-in's volume binder, reclaimer and protection controllers treat it."""

from kube import MERGE, path


def namespace(kube, name):
    kube.apply(path("v1", "namespaces", name), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def service(kube, name, ns="default", type_="ClusterIP", **meta):
    obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns, **meta},
           "spec": {"type": type_, "selector": {"app": name}, "ports": [{"port": 80}]}}
    return kube.apply(path("v1", "services", name, ns), obj)


def ingress(kube, name, ns="default", **spec):
    spec = spec or {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
        "service": {"name": "web", "port": {"number": 80}}}}]}}]}
    obj = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": name, "namespace": ns},
           "spec": spec}
    return kube.apply(path("networking.k8s.io/v1", "ingresses", name, ns), obj)


def volume(kube, name, policy=None, claim=None, expect=(200, 201)):
    spec = {"capacity": {"storage": "8Gi"}, "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{name}"}}
    if policy:
        spec["persistentVolumeReclaimPolicy"] = policy
    if claim:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    obj = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}
    return kube.apply(path("v1", "persistentvolumes", name), obj, expect=expect)


def claim(kube, name, ns="default", volume_name=None, expect=(200, 201), **spec):
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "8192Mi"}}, **spec}
    if volume_name:
        spec["volumeName"] = volume_name
    obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
           "spec": spec}
    return kube.apply(path("v1", "persistentvolumeclaims", name, ns), obj, expect=expect)


def phase(kube, url):
    return ((kube.maybe(url) or {}).get("status") or {}).get("phase")


def names(listed):
    return sorted(f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}" for i in listed["items"])


def test_storage_kinds_and_ingresses_are_discovered(kube):
    core = {r["name"]: r for r in kube.get("/api/v1")["resources"]}
    claims = core["persistentvolumeclaims"]
    assert claims["namespaced"] is True and claims["shortNames"] == ["pvc"]
    assert core["persistentvolumes"]["namespaced"] is False and "persistentvolumes/status" in core
    assert "networking.k8s.io" in [g["name"] for g in kube.get("/apis")["groups"]]
    networking = {r["name"]: r for r in kube.get("/apis/networking.k8s.io/v1")["resources"]}
    assert networking["ingresses"]["kind"] == "Ingress" and networking["ingresses"]["namespaced"] is True


def test_services_ingresses_and_claims_list_across_namespaces(kube):
    namespace(kube, "shop")
    service(kube, "web", type_="LoadBalancer")
    service(kube, "api", "shop", type_="LoadBalancer")
    ingress(kube, "web")
    ingress(kube, "api", "shop")
    claim(kube, "data")
    claim(kube, "cache", "shop")
    services = kube.get("/api/v1/services")
    assert services["kind"] == "ServiceList"
    assert names(services) == ["default/kubernetes", "default/web", "shop/api"]
    assert {i["metadata"]["name"]: i["spec"]["type"] for i in services["items"]}["api"] == "LoadBalancer"
    ingresses = kube.get("/apis/networking.k8s.io/v1/ingresses")
    assert ingresses["kind"] == "IngressList" and names(ingresses) == ["default/web", "shop/api"]
    assert ingresses["items"][0]["status"] == {"loadBalancer": {}}
    assert names(kube.get("/api/v1/persistentvolumeclaims")) == ["default/data", "shop/cache"]


def test_a_claim_and_the_volume_it_names_bind(kube):
    pv = volume(kube, "pv-a")
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain", "the default for a volume made by hand"
    assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    assert pv["status"] == {"phase": "Pending"}
    kube.wait_for(lambda: phase(kube, path("v1", "persistentvolumes", "pv-a")) == "Available", what="pv-a Available")

    pvc = claim(kube, "data", volume_name="pv-a")
    assert pvc["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert pvc["spec"]["resources"]["requests"]["storage"] == "8Gi", "canonical quantity"
    url = path("v1", "persistentvolumeclaims", "data", "default")
    kube.wait_for(lambda: phase(kube, url) == "Bound", what="claim Bound")
    bound = kube.get(url)
    assert bound["status"]["capacity"] == {"storage": "8Gi"} and bound["status"]["accessModes"] == ["ReadWriteOnce"]
    pv = kube.get(path("v1", "persistentvolumes", "pv-a"))
    assert pv["status"]["phase"] == "Bound"
    assert pv["spec"]["claimRef"]["uid"] == bound["metadata"]["uid"]

    # A volume pre-bound to a claim by its claimRef: the claim takes the volume's name.
    volume(kube, "pv-b", claim=("default", "logs"))
    claim(kube, "logs")
    logs = path("v1", "persistentvolumeclaims", "logs", "default")
    kube.wait_for(lambda: phase(kube, logs) == "Bound", what="pre-bound claim Bound")
    assert kube.get(logs)["spec"]["volumeName"] == "pv-b"

    claim(kube, "unbound")
    assert phase(kube, path("v1", "persistentvolumeclaims", "unbound", "default")) == "Pending"


def test_deleting_a_claim_deletes_a_delete_volume_and_releases_a_retained_one(kube):
    volume(kube, "pv-delete", policy="Delete")
    volume(kube, "pv-retain", policy="Retain")
    claim(kube, "scratch", volume_name="pv-delete")
    claim(kube, "keep", volume_name="pv-retain")
    scratch = path("v1", "persistentvolumeclaims", "scratch", "default")
    keep = path("v1", "persistentvolumeclaims", "keep", "default")
    kube.wait_for(lambda: phase(kube, scratch) == phase(kube, keep) == "Bound", what="both claims Bound")

    assert kube.delete(scratch).status_code == 200
    assert kube.delete(keep).status_code == 200
    kube.wait_gone(scratch)
    kube.wait_gone(keep)
    kube.wait_gone(path("v1", "persistentvolumes", "pv-delete"))
    retained = path("v1", "persistentvolumes", "pv-retain")
    kube.wait_for(lambda: phase(kube, retained) == "Released", what="pv-retain Released")
    assert kube.get(retained)["spec"]["claimRef"]["name"] == "keep"


def test_a_claim_a_pod_mounts_is_deleted_only_after_the_pod(kube):
    volume(kube, "pv-1", policy="Delete")
    claim(kube, "data", volume_name="pv-1")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"containers": [{"name": "main", "image": "public.ecr.aws/docker/library/postgres:17"}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}
    kube.apply(path("v1", "pods", "db", "default"), pod)
    url = path("v1", "persistentvolumeclaims", "data", "default")
    kube.wait_for(lambda: phase(kube, url) == "Bound", what="claim Bound")

    held = kube.delete(url)
    assert held.status_code == 200 and held.json()["metadata"]["deletionTimestamp"]
    kube.wait_for(lambda: phase(kube, path("v1", "pods", "db", "default")) == "Pending", what="pod seen")
    assert kube.get(url)["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"], "the pod still mounts it"
    assert phase(kube, path("v1", "persistentvolumes", "pv-1")) == "Bound"

    assert kube.delete(path("v1", "pods", "db", "default")).status_code == 200
    kube.wait_gone(url)
    kube.wait_gone(path("v1", "persistentvolumes", "pv-1"))


def test_a_load_balancer_service_and_an_ingress_wait_for_their_finalizers(kube):
    service(kube, "web", type_="LoadBalancer", finalizers=["service.k8s.aws/resources"])
    ingress(kube, "web")
    kube.request("PATCH", path("networking.k8s.io/v1", "ingresses", "web", "default"),
                 {"metadata": {"finalizers": ["ingress.k8s.aws/resources"]}}, MERGE).raise_for_status()
    for url in (path("v1", "services", "web", "default"), path("networking.k8s.io/v1", "ingresses", "web", "default")):
        held = kube.delete(url)
        assert held.status_code == 200 and held.json()["metadata"]["deletionTimestamp"], held.text
        assert kube.get(url)["metadata"]["deletionTimestamp"]
        released = kube.request("PATCH", url, {"metadata": {"finalizers": None}}, MERGE)
        assert released.status_code == 200, released.text
        assert kube.maybe(url) is None


def test_invalid_claims_volumes_and_ingresses_are_422(kube):
    def causes(body):
        return {c["field"]: c["reason"] for c in body["details"]["causes"]}

    bad_claim = claim(kube, "bad", accessModes=[], resources={}, expect=422)
    assert causes(bad_claim) == {"spec.accessModes": "FieldValueRequired",
                                 "spec.resources[storage]": "FieldValueRequired"}
    obj = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "bad"},
           "spec": {"accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Recycle-ish"}}
    bad_volume = kube.apply(path("v1", "persistentvolumes", "bad"), obj, expect=422)
    assert causes(bad_volume) == {"spec.capacity": "FieldValueRequired",
                                  "spec.persistentVolumeReclaimPolicy": "FieldValueNotSupported",
                                  "spec": "FieldValueRequired"}
    obj = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "bad", "namespace": "default"},
           "spec": {"ingressClassName": "alb"}}
    bad_ingress = kube.apply(path("networking.k8s.io/v1", "ingresses", "bad", "default"), obj, expect=422)
    assert "either `defaultBackend` or `rules` must be specified" in bad_ingress["message"]
