"""One EKS cluster's Kubernetes control plane: the store, the HTTPS server, and the controllers' loop.

A `ControlPlane` is made by CreateCluster and stopped when the cluster is gone (DeleteCluster done, or moto's
reset). Its controllers run in one background thread, every 0.2 s and right after each write, until nothing
changes: the CRD establisher, node registration from the node groups, the deployment and replicaset controllers,
the scheduler, the kubelets, Karpenter, the volume binder, reclaimer and protection controllers, the garbage
collector and namespace controller, and the service account controller. Requests and controllers share one lock,
so each sees the store consistent.

It reads AWS state (node groups, subnets, security groups, IAM roles, the cluster's status) but never changes it,
and never takes the AWS side's lock: AWS life cycles are read through `lifecycle.effective`.
"""

from __future__ import annotations

import copy
import logging
import socket
import threading
import time
from typing import Any, Callable

from .. import lifecycle
from . import api, crds, gc, karpenter, nodes, scheduling, server, storage, tls, workloads
from .errors import ApiError
from .meta import deleting, finalizers_of, name_of, namespace_of, uid_of
from .resources import CRDS, NAMESPACES, SERVICEACCOUNTS, Catalog, ResourceType, builtin
from .store import Key, Store, Stored

log = logging.getLogger("kbp_emulator.k8s")
TICK = 0.2
#: Namespaces every EKS cluster starts with.
INITIAL_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


class ControlPlane:
    def __init__(self, backend: Any, cluster: Any, authority: tls.Authority):
        self.backend = backend
        self.cluster = cluster
        self.name = cluster.name
        self.region = backend.region_name
        self.account = backend.account_id
        self.partition = getattr(backend, "partition", "aws")
        self.authority = authority
        self.lock = threading.RLock()
        self.store = Store()
        # Controllers' memory, keyed by uid or name: deadlines, pod runtimes, recorded events, node identities.
        self.deadlines: dict[Any, Any] = {}
        self.pods: dict[str, dict[str, Any]] = {}
        self.event_index: dict[Any, tuple[str, float]] = {}
        self.node_addresses: dict[Any, str] = {}
        self.node_instances: dict[Any, str] = {}
        self.node_labels: dict[str, set[str]] = {}
        self._wake = threading.Event()
        self._next_wake: float | None = None
        self._stopped = threading.Event()
        with self.lock:
            self._bootstrap()
        self._server, self._server_thread = server.start(self, tls.server_context(authority))
        self.port = self._server.port
        self.url = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._run, name=f"kube-controllers-{self.name}", daemon=True)
        self._thread.start()

    # --- what the parts ask ---------------------------------------------------------------------------------------

    @property
    def kubernetes_version(self) -> str:
        return self.cluster.version

    @property
    def kubernetes_patch_version(self) -> str:
        from ..eks import addon_catalog

        proxy = addon_catalog.default_version("kube-proxy", self.cluster.version)
        return proxy[1:].split("-")[0] if proxy else f"{self.cluster.version}.0"

    def ec2(self) -> Any:
        from moto.ec2.models import ec2_backends

        return ec2_backends[self.account][self.region]

    def catalog(self) -> Catalog:
        return Catalog.build([s.obj for s in self.store.list(CRDS.key)])

    def serving_state(self) -> str:
        """"ok" while the API answers; otherwise the cluster's state (creating, deleting, gone, stopped)."""
        if self._stopped.is_set():
            return "stopped"
        if getattr(self.backend, "clusters", {}).get(self.name) is not self.cluster:
            return "gone"
        status = lifecycle.effective(self.cluster, "status")
        if status in ("ACTIVE", "UPDATING"):
            return "ok"
        if status == lifecycle.GONE:
            return "gone"
        return str(status).lower()

    def wake(self) -> None:
        self._wake.set()

    def wake_at(self, when: float) -> None:
        if self._next_wake is None or when < self._next_wake:
            self._next_wake = when

    # --- life ---------------------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Refuses new connections at once; the serving loop and the controllers end in the background."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._wake.set()
        try:
            # Shutting the listening socket down refuses connections now and wakes the serving loop's select.
            self._server.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

        def close() -> None:
            self._server.shutdown()
            self._server.server_close()

        threading.Thread(target=close, name=f"kube-stop-{self.name}", daemon=True).start()

    def _run(self) -> None:
        while not self._stopped.is_set():
            timeout = TICK
            if self._next_wake is not None:
                timeout = max(0.0, min(TICK, self._next_wake - time.monotonic()))
            self._wake.wait(timeout)
            self._wake.clear()
            if self._stopped.is_set():
                return
            state = self.serving_state()
            if state == "gone":
                self.stop()
                return
            if state != "ok":
                continue
            self._next_wake = None
            with self.lock:
                for _ in range(20):
                    if not self.reconcile():
                        break
                self._forget_gone()

    def reconcile(self) -> bool:
        """One pass of every controller; True if any of them changed something."""
        changed = False
        for controller in CONTROLLERS:
            try:
                changed |= bool(controller(self))
            except Exception:
                log.exception("controller %s failed in cluster %s", controller.__module__, self.name)
        return changed

    def _forget_gone(self) -> None:
        for uid in [u for u in self.pods if self.store.by_uid(u) is None]:
            del self.pods[uid]
        for key in [k for k in self.event_index if self.store.by_uid(k[0]) is None]:
            del self.event_index[key]

    def _bootstrap(self) -> None:
        system = api.Options(manager="kube-apiserver")
        for name in INITIAL_NAMESPACES:
            api.create(self, NAMESPACES, "v1", "", {"metadata": {"name": name}}, system)
        services = builtin("", "services")
        assert services is not None
        api.create(self, services, "v1", "default", {
            "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.100.0.1", "ports": [{"name": "https", "port": 443, "targetPort": 443}]},
        }, system)

    # --- writes on behalf of controllers ---------------------------------------------------------------------------

    def _type(self, key: Key) -> ResourceType | None:
        return builtin(*key) or self.catalog().by_key(*key)

    def create(self, rt: ResourceType, obj: dict[str, Any], manager: str) -> Stored | None:
        try:
            return api.create(self, rt, rt.versions[0], namespace_of(obj), obj, api.Options(manager=manager))
        except ApiError as e:
            log.debug("%s could not create %s %s: %s", manager, rt.kind, name_of(obj), e.message)
            return None

    def _latest(self, rt: ResourceType, obj: dict[str, Any]) -> Stored | None:
        return self.store.get(rt.key, namespace_of(obj) if rt.namespaced else "", name_of(obj))

    def update(self, rt: ResourceType, current: dict[str, Any], new: dict[str, Any], manager: str) -> bool:
        """Writes `new` over `current` unless the object changed since `current` was read."""
        stored = self._latest(rt, current)
        if stored is None or stored.obj["metadata"].get("resourceVersion") != current["metadata"].get("resourceVersion"):
            return False
        try:
            return api.write(self, rt, rt.versions[0], stored, new, "", api.Options(manager=manager)) is not stored
        except ApiError as e:
            log.debug("%s could not update %s %s: %s", manager, rt.kind, name_of(current), e.message)
            return False

    def write_status(self, rt: ResourceType, obj: dict[str, Any], status: dict[str, Any], manager: str) -> bool:
        stored = self._latest(rt, obj)
        if stored is None or stored.obj.get("status") == status:
            return False
        new = copy.deepcopy(stored.obj)
        new["status"] = status
        sub = "status" if rt.has_status() else ""
        try:
            return api.write(self, rt, rt.versions[0], stored, new, sub, api.Options(manager=manager)) is not stored
        except ApiError as e:
            log.debug("%s could not update the status of %s %s: %s", manager, rt.kind, name_of(obj), e.message)
            return False

    def delete_object(self, key: Key, obj: dict[str, Any], policy: str) -> bool:
        rt = self._type(key)
        stored = self.store.get(key, namespace_of(obj), name_of(obj))
        if rt is None or stored is None or uid_of(stored.obj) != uid_of(obj):
            return False
        api.begin_deletion(self, rt, stored, policy)
        return True

    def _finalizers(self, key: Key, name: str, ns: str, change: Callable[[list[str]], list[str]], manager: str) -> bool:
        rt = self._type(key)
        stored = self.store.get(key, ns, name)
        if rt is None or stored is None:
            return False
        before = finalizers_of(stored.obj)
        after = change(list(before))
        if after == before:
            return False
        new = copy.deepcopy(stored.obj)
        if after:
            new["metadata"]["finalizers"] = after
        else:
            new["metadata"].pop("finalizers", None)
        try:
            api.write(self, rt, rt.versions[0], stored, new, "", api.Options(manager=manager))
        except ApiError as e:
            # A controller's finalizer change goes through even if the object no longer validates (a changed
            # schema): store it as is, and finish a deletion it unblocks.
            log.debug("%s: finalizer change on %s %s bypassed validation: %s", manager, rt.kind, name, e.message)
            if deleting(new) and not after and key != NAMESPACES.key:
                self.store.remove(key, ns, name)
            else:
                api._store_raw(self, rt, stored, new)
            self.wake()
        return True

    def remove_finalizer(self, key: Key, name: str, ns: str, finalizer: str, manager: str) -> bool:
        return self._finalizers(key, name, ns, lambda fs: [f for f in fs if f != finalizer], manager)

    def add_finalizer(self, rt: ResourceType, obj: dict[str, Any], finalizer: str, manager: str) -> bool:
        if deleting(obj):
            return False
        ns = namespace_of(obj) if rt.namespaced else ""
        return self._finalizers(rt.key, name_of(obj), ns, lambda fs: fs if finalizer in fs else fs + [finalizer], manager)


def _service_accounts(cp: ControlPlane) -> bool:
    """The service account and root CA controllers: `default` ServiceAccount and `kube-root-ca.crt` in each
    namespace."""
    changed = False
    configmaps = builtin("", "configmaps")
    assert configmaps is not None
    for ns in cp.store.list(NAMESPACES.key):
        if deleting(ns.obj):
            continue
        name = name_of(ns.obj)
        if cp.store.get(SERVICEACCOUNTS.key, name, "default") is None:
            changed |= cp.create(SERVICEACCOUNTS, {"metadata": {"name": "default", "namespace": name}},
                                 manager="kube-controller-manager") is not None
        if cp.store.get(configmaps.key, name, "kube-root-ca.crt") is None:
            changed |= cp.create(configmaps, {
                "metadata": {"name": "kube-root-ca.crt", "namespace": name,
                             "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to "
                                             "verify the kube-apiserver when using internal endpoints such as the "
                                             "internal service IP or kubernetes.default.svc. No other usage is guaranteed "
                                             "across distributions of Kubernetes clusters."}},
                "data": {"ca.crt": cp.authority.pem.decode()},
            }, manager="kube-controller-manager") is not None
    return changed


CONTROLLERS: list[Callable[[ControlPlane], bool]] = [
    crds.reconcile,
    _service_accounts,
    nodes.reconcile,
    workloads.controllers,
    scheduling.reconcile,
    workloads.kubelets,
    karpenter.reconcile,
    storage.reconcile,
    gc.reconcile,
]
