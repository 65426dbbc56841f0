"""What every EKS handler shares: request parsing, AWS-shaped errors, pagination, and the walk that settles life
cycles before each request.

The walk settles each cluster's node groups, add-ons and updates (kept beside moto's state, `cluster_extras.py`)
and drops the clusters that finished deleting, releasing what they take with them (`cluster_extras.release`).
"""

from __future__ import annotations

import json
import secrets
import string
import uuid
from typing import Any
from urllib.parse import parse_qs

from moto.core.utils import utcnow
from moto.eks.exceptions import (
    EKSError,
    InvalidParameterException,
    InvalidRequestException,
    ResourceInUseException,
    ResourceNotFoundException,
)
from moto.eks.models import CLUSTER_NOT_FOUND_MSG, Cluster, EKSBackend
from moto.eks.responses import EKSResponse

from .. import lifecycle
from .cluster_extras import extras, release

ACTIVE = "ACTIVE"


class NotFoundException(EKSError):
    """What the tagging operations answer for an unknown ARN (their model has no ResourceNotFoundException)."""

    TYPE = "NotFoundException"
    STATUS = 404


def _error(cls: type[EKSError], message: str, **ids: str | None) -> EKSError:
    """An EKS error whose JSON body carries `message` and the given identifiers, leaving out unset ones."""
    return cls(message=message, **{k: v for k, v in ids.items() if v is not None})


def in_use(message: str, **ids: str | None) -> EKSError:
    return _error(ResourceInUseException, message, **ids)


def not_found(message: str, **ids: str | None) -> EKSError:
    return _error(ResourceNotFoundException, message, **ids)


def invalid_parameter(message: str, **ids: str | None) -> EKSError:
    return _error(InvalidParameterException, message, **ids)


def invalid_request(message: str, **ids: str | None) -> EKSError:
    return _error(InvalidRequestException, message, **ids)


def new_uuid() -> str:
    return str(uuid.uuid4())


def random_id(length: int, alphabet: str = string.ascii_lowercase + string.digits) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def now() -> Any:
    return utcnow()


def settle(backend: EKSBackend) -> list[Cluster]:
    """Moves every due phase in `backend` on; drops what finished deleting. Returns the clusters that went."""
    for cluster in list(backend.clusters.values()):
        x = extras(cluster)
        cluster.nodegroup_count -= len(lifecycle.settle_all(cluster.nodegroups))
        for addon in lifecycle.settle_all(x.addons):
            if not getattr(addon, "preserve", False):
                for arn in addon.pod_identity_associations:
                    x.pod_identity_associations.pop(arn.rsplit("/", 1)[-1], None)
        for update in x.updates.values():
            lifecycle.settle(update)
    gone = lifecycle.settle_all(backend.clusters)
    for cluster in gone:
        backend.cluster_count -= 1
        release(backend, cluster)
    return gone


def paginate(items: list[Any], max_results: int, token: str | None) -> tuple[list[Any], str | None]:
    """One page of `items` of at most `max_results` (1–100) from `token`; the token is the index of the next item."""
    if isinstance(max_results, bool) or not isinstance(max_results, int) or not 1 <= max_results <= 100:
        raise invalid_parameter("maxResults must be between 1 and 100")
    start = 0
    if token:
        if not isinstance(token, str) or not token.isdigit() or int(token) > len(items):
            raise invalid_parameter("The nextToken is invalid")
        start = int(token)
    end = start + max_results
    return items[start:end], (str(end) if end < len(items) else None)


class EKSHandlers(EKSResponse):
    """moto's EKS handlers plus the helpers the extension's handlers use. Each resource kind adds a mixin."""

    def body_json(self) -> dict[str, Any]:
        if not self.body:
            return {}
        try:
            body = json.loads(self.body)
        except ValueError:
            raise invalid_parameter("The request body is not valid JSON") from None
        return body if isinstance(body, dict) else {}

    def path_param(self, name: str) -> str:
        """A URI label, percent-decoded (a principal ARN arrives with its '/' and ':' encoded)."""
        return self.uri_match[name]

    def query(self, name: str) -> list[str]:
        return parse_qs(self.parsed_url.query, keep_blank_values=True).get(name, [])

    def query_one(self, name: str, default: str | None = None) -> str | None:
        values = self.query(name)
        return values[0] if values else default

    def cluster(self) -> Cluster:
        name = self.path_param("name")
        try:
            return self.eks_backend.clusters[name]
        except KeyError:
            raise not_found(CLUSTER_NOT_FOUND_MSG.format(clusterName=name), clusterName=name) from None

    def page(self, items: list[Any]) -> tuple[list[Any], str | None]:
        """One page of `items` per the maxResults/nextToken query parameters."""
        limit = self.query_one("maxResults", "100")
        return paginate(items, int(limit) if limit.isdigit() else 0, self.query_one("nextToken"))

    def call_action(self) -> Any:
        # One lock for all EKS requests: the settle walk and the change a request makes must not interleave with
        # another request (moto's server is threaded).
        with lifecycle.lock:
            settle(self.eks_backend)
            self._get_action()  # fills uri_match
            if self.path.startswith("/clusters/") and "name" in self.uri_match:
                name = self.uri_match["name"]
                if name not in self.eks_backend.clusters:
                    # moto answers 500 for some of these (ListNodegroups); AWS answers 404 for every one.
                    error = not_found(CLUSTER_NOT_FOUND_MSG.format(clusterName=name), clusterName=name)
                    headers = {**self.response_headers, **error.headers}
                    return error.STATUS, headers, error.description
            return super().call_action()
