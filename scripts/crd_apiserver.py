#!/usr/bin/env python3
"""What a real kube-apiserver says about custom resources: test tooling only (issue 14).

The second oracle of tests/it/crd_corpus.rs, beside scripts/crd_oracle.py (which models the server): the
objects are sent to the control plane `scripts/kube.sh start` runs, as a create with `dryRun=All` (nothing is
stored) and `fieldValidation=Strict` (an unknown field is an error there, as in kbp, instead of being pruned).
The CRDs of --crds are created first (or kept when there) and waited for until Established.

    crd_apiserver.py --crds DIR [--unknown TEXT] OBJECTS.json

The server is KBP_KUBE_SERVER, its CA KBP_KUBE_CA and the bearer token KBP_KUBE_TOKEN (`scripts/kube.sh env`).
OBJECTS.json is a list of {"id": ..., "object": {...}}; the answer (stdout, JSON) is a list in the same order
of {"id", "valid", "code", "errors": [message]}. `--unknown TEXT`: a string leaf equal to TEXT is a value kbp
knows only after apply (the cluster security group's id); it is sent as a value of the shape AWS gives it, since
the server, unlike kbp and crd_oracle.py, cannot be told to skip it.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

#: What AWS would have given for a value known after apply, by the field that holds it.
KNOWN_LATER = {"id": "sg-0123456789abcdef0"}


class Server:
    def __init__(self) -> None:
        try:
            self.base = os.environ["KBP_KUBE_SERVER"].rstrip("/")
            self.token = os.environ["KBP_KUBE_TOKEN"]
            ca = os.environ["KBP_KUBE_CA"]
        except KeyError as e:
            sys.exit(f"crd_apiserver: {e.args[0]} is not set; run `eval \"$(scripts/kube.sh start)\"` first")
        self.tls = ssl.create_default_context(cafile=ca)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, context=self.tls, timeout=30) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, {"message": text.decode(errors="replace")}


def install_crds(server: Server, crds_dir: Path) -> list[dict]:
    """Creates every CRD of the directory (kept when already there) and waits until each is Established."""
    crds = []
    for file in sorted(crds_dir.glob("*.yaml")):
        for doc in yaml.safe_load_all(file.read_text()):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                crds.append(doc)
    for crd in crds:
        code, answer = server.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        if code not in (201, 409):
            sys.exit(f"crd_apiserver: creating {crd['metadata']['name']} answered {code}: {answer}")
    deadline = time.monotonic() + 60
    for crd in crds:
        name = crd["metadata"]["name"]
        while True:
            _, got = server.call("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            # A CRD just created may answer `conditions: null` until the server has looked at its names.
            conditions = ((got or {}).get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                break
            if time.monotonic() > deadline:
                sys.exit(f"crd_apiserver: {name} is not Established after 60 s: {conditions}")
            time.sleep(0.1)
    return crds


def collection(crds: list[dict], obj: dict) -> str | None:
    """The URL path of the object's kind, from the CRD that serves its apiVersion."""
    group, _, version = obj.get("apiVersion", "").rpartition("/")
    for crd in crds:
        spec = crd["spec"]
        if spec["group"] == group and spec["names"]["kind"] == obj.get("kind"):
            if any(v["name"] == version and v.get("served") for v in spec["versions"]):
                namespace = obj.get("metadata", {}).get("namespace")
                scope = f"/namespaces/{namespace}" if spec["scope"] == "Namespaced" and namespace else ""
                return f"/apis/{group}/{version}{scope}/{spec['names']['plural']}"
    return None


def known(value: Any, unknown: str | None, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: known(v, unknown, k) for k, v in value.items()}
    if isinstance(value, list):
        return [known(v, unknown, key) for v in value]
    if unknown is not None and value == unknown:
        return KNOWN_LATER.get(key, "known-after-apply")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crds", required=True, type=Path)
    parser.add_argument("--unknown")
    parser.add_argument("objects", type=Path)
    args = parser.parse_args()
    server = Server()
    crds = install_crds(server, args.crds)
    answers = []
    for item in json.loads(args.objects.read_text()):
        obj = known(item["object"], args.unknown)
        path = collection(crds, obj)
        if path is None:
            answers.append({"id": item["id"], "valid": False, "code": 404, "errors": ["no CRD serves it"]})
            continue
        code, answer = server.call("POST", f"{path}?dryRun=All&fieldValidation=Strict", obj)
        causes = ((answer or {}).get("details") or {}).get("causes") or []
        errors = [f"{c.get('field', '')}: {c.get('message', '')}" for c in causes] or [
            (answer or {}).get("message", str(answer))
        ]
        answers.append({"id": item["id"], "valid": code in (200, 201), "code": code, "errors": [] if code < 300 else errors})
    json.dump(answers, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
