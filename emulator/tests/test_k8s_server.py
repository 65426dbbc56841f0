"""The Kubernetes API stand-in's serving side: TLS with the cluster's CA, EKS tokens, availability, discovery."""

import base64
import socket
import ssl

import pytest
import requests
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from kube import eks_token


def test_endpoint_is_https_on_loopback_and_verifies_with_the_cluster_ca(eks, cluster, kube):
    c = eks.describe_cluster(name=cluster)["cluster"]
    assert c["endpoint"].startswith("https://127.0.0.1:")
    assert kube.get("/version")["major"] == "1"

    ca = x509.load_pem_x509_certificate(base64.b64decode(c["certificateAuthority"]["data"]))
    assert ca.subject.rfc4514_string() == "CN=kubernetes"
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign

    port = int(c["endpoint"].rsplit(":", 1)[1])
    context = ssl.create_default_context(cafile=kube.ca)
    with socket.create_connection(("127.0.0.1", port)) as raw, context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
        leaf = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
    assert leaf.version == x509.Version.v3
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in san.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ExtendedKeyUsageOID.SERVER_AUTH in leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert leaf.issuer == ca.subject


def test_another_clusters_ca_is_not_trusted(make_cluster, kube_for):
    a, b = kube_for(make_cluster("a")), kube_for(make_cluster("b"))
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(a.endpoint + "/version", verify=b.ca, timeout=5)


def test_version_follows_the_cluster_version(kube):
    version = kube.get("/version")
    assert (version["major"], version["minor"]) == ("1", "31")
    assert version["gitVersion"].startswith("v1.31.") and "-eks-" in version["gitVersion"]
    assert version["platform"] == "linux/amd64"


UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}


BAD_TOKENS = [
    None,
    "not-a-token",
    "k8s-aws-v1.%%%",
    "k8s-aws-v1." + base64.urlsafe_b64encode(b"https://sts.us-west-2.amazonaws.com/?Action=ListRoles").decode().rstrip("="),
]


def test_unauthorized_without_a_valid_token(kube):
    for token in BAD_TOKENS:
        r = kube.request("GET", "/api/v1/namespaces", token=token)
        assert r.status_code == 401, token
        assert r.json() == UNAUTHORIZED


def test_token_must_sign_the_cluster_header_and_expire_within_15_minutes(kube):
    assert kube.request("GET", "/api", token=eks_token(kube.cluster, signed_header=False)).status_code == 401
    assert kube.request("GET", "/api", token=eks_token(kube.cluster, expires=3600)).status_code == 401
    assert kube.request("GET", "/api", token=eks_token(kube.cluster, expires=900)).status_code == 200


def test_api_answers_503_until_the_cluster_is_active(eks, make_cluster, kube_for, timed):
    timed("realistic", 0.002)  # cluster creation 1.2 s
    name = make_cluster("slow")
    kube = kube_for(name)
    r = kube.request("GET", "/version")
    assert r.status_code == 503
    assert r.json()["reason"] == "ServiceUnavailable"
    kube.wait_for(lambda: kube.request("GET", "/version").status_code == 200, timeout=10, what="API up")
    assert eks.describe_cluster(name=name)["cluster"]["status"] == "ACTIVE"


def test_core_discovery(kube):
    versions = kube.get("/api")
    assert versions["kind"] == "APIVersions" and versions["versions"] == ["v1"]
    core = kube.get("/api/v1")
    assert core["kind"] == "APIResourceList" and core["groupVersion"] == "v1"
    by_name = {r["name"]: r for r in core["resources"]}
    assert {"namespaces", "serviceaccounts", "services", "configmaps", "secrets", "pods", "events", "nodes"} <= set(by_name)
    assert by_name["pods"] == {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                               "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update"],
                               "shortNames": ["po"], "categories": ["all"]}
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["namespaces"]["namespaced"] is False and by_name["nodes"]["namespaced"] is False


def test_group_discovery(kube):
    groups = {g["name"]: g for g in kube.get("/apis")["groups"]}
    assert {"apps", "policy", "rbac.authorization.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io",
            "admissionregistration.k8s.io"} <= set(groups)
    assert groups["apps"]["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    apps = {r["name"]: r for r in kube.get("/apis/apps/v1")["resources"]}
    assert apps["deployments"]["kind"] == "Deployment" and apps["deployments"]["shortNames"] == ["deploy"]
    assert "deployments/status" in apps and "replicasets" in apps
    rbac = {r["name"]: r["namespaced"] for r in kube.get("/apis/rbac.authorization.k8s.io/v1")["resources"]}
    assert rbac == {"clusterroles": False, "clusterrolebindings": False, "roles": True, "rolebindings": True}
    assert kube.get("/apis/apps")["kind"] == "APIGroup"
    assert kube.request("GET", "/apis/example.com/v1").status_code == 404


def test_aggregated_discovery_when_asked(kube):
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    r = kube.session.get(kube.endpoint + "/apis", headers={"Authorization": f"Bearer {kube.token}", "Accept": accept},
                         verify=kube.ca, timeout=10)
    assert r.headers["Content-Type"].startswith("application/json;g=apidiscovery.k8s.io;v=v2")
    body = r.json()
    assert body["kind"] == "APIGroupDiscoveryList"
    apps = next(i for i in body["items"] if i["metadata"]["name"] == "apps")
    deployments = next(res for res in apps["versions"][0]["resources"] if res["resource"] == "deployments")
    assert deployments["scope"] == "Namespaced"
    assert deployments["responseKind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert deployments["subresources"][0]["subresource"] == "status"


def test_unknown_paths_and_watch(kube):
    assert kube.request("GET", "/api/v1/widgets").status_code == 404
    assert kube.request("GET", "/api/v1/namespaces/default/nodes").status_code == 404
    r = kube.request("GET", "/api/v1/namespaces", watch="true")
    assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"


def _refused(url: str) -> bool:
    try:
        socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_cluster_delete_stops_the_server(eks, cluster, kube):
    assert kube.request("GET", "/version").status_code == 200
    eks.delete_cluster(name=cluster)
    eks.list_clusters()  # settles the deletion
    assert _refused(kube.endpoint)


def test_server_stops_by_itself_when_the_deletion_is_due(eks, cluster, kube):
    eks.delete_cluster(name=cluster)  # no further AWS request: the stand-in notices on its own
    kube.wait_for(lambda: _refused(kube.endpoint), timeout=5, what="server stopped")


def test_moto_reset_stops_the_server(endpoint, kube):
    requests.post(f"{endpoint}/moto-api/reset", timeout=10).raise_for_status()
    assert _refused(kube.endpoint)
