"""A tiny Kubernetes client for the stand-in's tests: what kbp does with kube-rs, by hand.

The URL and CA come from DescribeCluster; the token is made as `aws eks get-token` makes it: a presigned STS
GetCallerIdentity URL with the signed header `x-k8s-aws-id: <cluster>`, 60 s expiry, base64url without padding,
prefixed `k8s-aws-v1.`.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import boto3
import requests
import yaml

REPO = Path(__file__).resolve().parents[2]
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


@functools.lru_cache(maxsize=None)
def _sts(region: str, signed_header: bool) -> Any:
    sts = boto3.client("sts", region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing")
    if signed_header:
        def add_cluster_header(request: Any, context: dict[str, Any] | None = None, **_: Any) -> None:
            request.headers["x-k8s-aws-id"] = _cluster_for_signing[0]

        sts.meta.events.register("before-sign.sts.GetCallerIdentity", add_cluster_header)
    return sts


_cluster_for_signing = [""]


def eks_token(cluster: str, region: str = "us-west-2", expires: int = 60, signed_header: bool = True) -> str:
    _cluster_for_signing[0] = cluster
    url = _sts(region, signed_header).generate_presigned_url("get_caller_identity", Params={}, ExpiresIn=expires,
                                                             HttpMethod="GET")
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


def path(api_version: str, plural: str, name: str | None = None, namespace: str | None = None, sub: str | None = None) -> str:
    root = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    out = root + (f"/namespaces/{namespace}" if namespace else "") + f"/{plural}"
    if name:
        out += f"/{name}"
    if sub:
        out += f"/{sub}"
    return out


class Kube:
    def __init__(self, endpoint: str, ca_data: str, cluster: str):
        self.endpoint = endpoint
        self.cluster = cluster
        handle = tempfile.NamedTemporaryFile(prefix="kube-ca-", suffix=".pem", delete=False)
        handle.write(base64.b64decode(ca_data))
        handle.close()
        self.ca = handle.name
        self.token = eks_token(cluster)
        self.session = requests.Session()
        self.session.trust_env = False  # REQUESTS_CA_BUNDLE would replace our CA

    def close(self) -> None:
        self.session.close()
        os.unlink(self.ca)

    def request(self, method: str, url_path: str, body: Any = None, content_type: str = "application/json",
                token: str | None = "default", **params: Any) -> requests.Response:
        headers = {"Accept": "application/json"}
        if token == "default":
            token = self.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers["Content-Type"] = content_type
        return self.session.request(method, self.endpoint + url_path, data=data, headers=headers,
                                    params={k: v for k, v in params.items() if v is not None},
                                    verify=self.ca, timeout=10)

    def get(self, url_path: str, **params: Any) -> dict[str, Any]:
        r = self.request("GET", url_path, **params)
        assert r.status_code == 200, (r.status_code, r.text)
        return r.json()

    def maybe(self, url_path: str) -> dict[str, Any] | None:
        r = self.request("GET", url_path)
        if r.status_code == 404:
            return None
        assert r.status_code == 200, (r.status_code, r.text)
        return r.json()

    def apply(self, url_path: str, obj: dict[str, Any], manager: str = "kbp", force: bool = False,
              expect: int | tuple[int, ...] = (200, 201), **params: Any) -> dict[str, Any]:
        r = self.request("PATCH", url_path, obj, APPLY, fieldManager=manager, force="true" if force else None, **params)
        expected = (expect,) if isinstance(expect, int) else expect
        assert r.status_code in expected, (r.status_code, r.text)
        return r.json()

    def apply_object(self, obj: dict[str, Any], plural: str, **kwargs: Any) -> dict[str, Any]:
        meta = obj["metadata"]
        return self.apply(path(obj["apiVersion"], plural, meta["name"], meta.get("namespace")), obj, **kwargs)

    def delete(self, url_path: str, body: Any = None, **params: Any) -> requests.Response:
        return self.request("DELETE", url_path, body, **params)

    def wait_for(self, check: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = check()
            if last:
                return last
            time.sleep(0.05)
        raise AssertionError(f"{what} not reached after {timeout}s (last: {last!r})")

    def wait_gone(self, url_path: str, timeout: float = 10.0) -> None:
        self.wait_for(lambda: self.maybe(url_path) is None, timeout, f"{url_path} gone")


def condition(obj: dict[str, Any] | None, type_: str) -> dict[str, Any] | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None


def is_true(obj: dict[str, Any] | None, type_: str) -> bool:
    cond = condition(obj, type_)
    return bool(cond and cond["status"] == "True")


@functools.lru_cache(maxsize=None)
def _load_crds(where: Path) -> str:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    crds = {}
    for f in sorted(where.glob("*.yaml")) if where.is_dir() else []:
        for doc in yaml.load_all(f.read_text(), Loader=loader):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                crds[doc["metadata"]["name"]] = doc
    return json.dumps(crds)


def karpenter_crds() -> dict[str, dict[str, Any]]:
    """The real Karpenter CRDs, by name, from KBP_KARPENTER_CRDS_DIR (default ../shared/reference/...)."""
    import pytest

    where = Path(os.environ.get("KBP_KARPENTER_CRDS_DIR") or REPO.parent / "shared/reference/karpenter-v1.14.1/crds")
    crds = json.loads(_load_crds(where))
    wanted = {"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"}
    if not wanted <= set(crds):
        pytest.fail(
            f"the Karpenter v1.14.1 CRDs ({', '.join(sorted(wanted))}) are not in {where}: put the files "
            "karpenter.sh_nodepools.yaml, karpenter.sh_nodeclaims.yaml and karpenter.k8s.aws_ec2nodeclasses.yaml "
            "from the Karpenter v1.14.1 release there, or point KBP_KARPENTER_CRDS_DIR at them "
            "(they must not be copied into the repository)"
        )
    return crds
