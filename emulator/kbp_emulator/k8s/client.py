"""The emulator's own calls to a real control plane: JSON over HTTPS with the admin token kube.sh made."""

from __future__ import annotations

from typing import Any

import requests


class NotFound(Exception):
    pass


class Conflict(Exception):
    pass


class Client:
    def __init__(self, server: str, ca_file: str, token: str):
        self.server = server
        self.session = requests.Session()
        # REQUESTS_CA_BUNDLE in the environment would replace `verify` (see README.md).
        self.session.trust_env = False
        self.session.verify = ca_file
        self.session.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
             params: dict[str, str] | None = None) -> Any:
        response = self.session.request(
            method, self.server + path, json=body, params=params, timeout=10,
            headers={"Content-Type": content_type} if body is not None else None,
        )
        if response.status_code == 404:
            raise NotFound(path)
        if response.status_code == 409:
            raise Conflict(path)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path} answered {response.status_code}: {response.text[:300]}")
        return response.json() if response.content else None

    def items(self, path: str, **params: str) -> list[dict[str, Any]]:
        """The items of a list, or none when the kind is not served (a CRD not installed yet)."""
        try:
            return self.call("GET", path, params=params or None).get("items") or []
        except NotFound:
            return []

    def merge_patch(self, path: str, patch: dict[str, Any]) -> Any:
        return self.call("PATCH", path, patch, "application/merge-patch+json")

    def strategic_patch(self, path: str, patch: dict[str, Any]) -> Any:
        return self.call("PATCH", path, patch, "application/strategic-merge-patch+json")
