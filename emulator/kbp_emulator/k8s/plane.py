"""One EKS cluster's real control plane: started with scripts/kube.sh, watched, and stopped with the cluster."""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization

from .. import lifecycle
from . import ebs_csi, karpenter, kubelets, webhook
from .client import Client
from .tls import Authority

log = logging.getLogger("kbp_emulator.k8s")
REPO_ROOT = Path(__file__).resolve().parents[3]
KUBE_SH = Path(os.environ.get("KBP_KUBE_SCRIPT", REPO_ROOT / "scripts" / "kube.sh"))
TICK = 0.5
# While something is on its way (a pod starting or terminating, a Karpenter object being deleted), the next tick
# comes sooner: Karpenter and kubelets act on watches, within a fraction of a second.
BUSY_TICK = 0.1
START_TIMEOUT = 300


class StartFailed(Exception):
    pass


class ControlPlane:
    webhook_key: str  # set by webhook.register
    busy: bool  # set by a step that has something on its way: the next tick comes sooner

    def __init__(self, backend: Any, cluster: Any, authority: Authority):
        self.backend = backend
        self.cluster = cluster
        self.name = cluster.name
        self.region = backend.region_name
        self.account = backend.account_id
        # What node registration (nodes.py) remembers per instance: its address and instance id.
        self.node_addresses: dict[Any, str] = {}
        self.node_instances: dict[Any, str] = {}
        self.karpenter = karpenter.Memory()
        # CRD names the controller manager knows of: new ones (settled for a tick) make it restart.
        self.kinds_known: set[str] = set()
        self.kinds_seen: set[str] = set()
        self._stopped = threading.Event()
        root = Path(os.environ.get("KBP_EMULATOR_DIR") or tempfile.gettempdir()) / "kube"
        root.mkdir(parents=True, exist_ok=True)
        self.dir = root / f"{cluster.name}-{uuid.uuid4().hex[:8]}"
        self.dir.mkdir()
        self.webhook_url = webhook.register(self)
        try:
            self.server, self.ca_file, token = self._start(authority)
        except Exception:
            webhook.unregister(self)
            raise
        self.url = self.server
        self.api = Client(self.server, self.ca_file, token)
        webhook.bind_access_policies(self.api)
        self._thread = threading.Thread(target=self._run, name=f"kube-{self.name}", daemon=True)
        self._thread.start()

    @property
    def kubernetes_version(self) -> str:
        return self.cluster.version

    def ec2(self) -> Any:
        from moto.ec2.models import ec2_backends

        return ec2_backends[self.account][self.region]

    def _start(self, authority: Authority) -> tuple[str, str, str]:
        ca_cert, ca_key = self.dir / "cluster-ca.crt", self.dir / "cluster-ca.key"
        ca_cert.write_bytes(authority.pem)
        ca_key.write_bytes(authority.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        ca_key.chmod(0o600)
        env = {
            **os.environ,
            "KBP_KUBE_CA_CERT": str(ca_cert),
            "KBP_KUBE_CA_KEY": str(ca_key),
            "KBP_KUBE_TOKEN_WEBHOOK": self.webhook_url,
            # The control plane goes when the emulator does, however it ends.
            "KBP_KUBE_WATCH_PID": str(os.getpid()),
        }
        done = subprocess.run([str(KUBE_SH), "start", str(self.dir / "plane")], env=env, capture_output=True,
                              text=True, timeout=START_TIMEOUT)
        if done.returncode != 0:
            raise StartFailed(f"scripts/kube.sh start for cluster {self.name} failed: {done.stderr.strip()[-2000:]}")
        exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines()
                       if line.startswith("export "))
        log.info("cluster %s is served by a real control plane at %s", self.name, exports["KBP_KUBE_SERVER"])
        return exports["KBP_KUBE_SERVER"], exports["KBP_KUBE_CA"], exports["KBP_KUBE_TOKEN"]

    def serving(self) -> bool:
        """Whether the cluster still exists and is ACTIVE (or UPDATING): what its kubelets and Karpenter need."""
        return lifecycle.effective(self.cluster, "status") in ("ACTIVE", "UPDATING")

    def gone(self) -> bool:
        return (getattr(self.backend, "clusters", {}).get(self.name) is not self.cluster
                or lifecycle.effective(self.cluster, "status") == lifecycle.GONE)

    def _run(self) -> None:
        self.busy = False
        while not self._stopped.wait(BUSY_TICK if self.busy else TICK):
            self.busy = False
            if self.gone():
                self.stop()
                return
            if not self.serving():
                continue
            for step in (self._notice_new_kinds, kubelets.reconcile, karpenter.reconcile, ebs_csi.reconcile):
                try:
                    step(self)
                except Exception as e:  # the API may be briefly unavailable; the next tick retries
                    log.debug("cluster %s: %s: %s", self.name, step.__module__, e)

    def _notice_new_kinds(self, _: "ControlPlane | None" = None) -> None:
        """Restarts the controller manager once CRDs were added and have settled (see kube.sh for why)."""
        established = {
            crd["metadata"]["name"] for crd in self.api.items("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            if any(c.get("type") == "Established" and c.get("status") == "True"
                   for c in (crd.get("status") or {}).get("conditions") or [])
        }
        settled, self.kinds_seen = established == self.kinds_seen, established
        if settled and established - self.kinds_known:
            subprocess.run([str(KUBE_SH), "restart-controller-manager", str(self.dir / "plane")],
                           capture_output=True, timeout=START_TIMEOUT, check=True)
            log.info("cluster %s: controller manager restarted for %s", self.name, sorted(established - self.kinds_known))
        if settled:
            self.kinds_known = established

    def stop(self) -> None:
        """Stops the processes in the background; the endpoint refuses connections within seconds."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        webhook.unregister(self)
        threading.Thread(
            target=subprocess.run, args=([str(KUBE_SH), "stop", str(self.dir / "plane")],),
            kwargs={"capture_output": True, "timeout": 60}, name=f"kube-stop-{self.name}", daemon=True,
        ).start()
