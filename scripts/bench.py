"""kbp's speed against its critical path, and the cost of a no-op plan (run through scripts/bench.sh).

For each time scale: a private emulator with the realistic latency profile (emulator/profiles/realistic.toml)
scaled by it; the critical path of apply and of destroy computed from `kbp graph --format json` and the
profile's durations (the longest chain of waits through the graph); `kbp apply` and `kbp destroy` timed against
them; and in between, no-op plans with 1, 20 and 100 NodePools whose calls are counted where they land: AWS calls
by a fault proxy with no faults (its per-operation counters), Kubernetes calls in the control plane's audit log
(scripts/kube.sh logs every request of a user outside system:masters, which is kbp through its EKS token).

Prints a report per scale and a summary table; exits 1 if a command kbp should pass fails. Not a test: the
figures depend on the machine, so nothing here asserts a bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "emulator"))
from kbp_emulator import profile as profiles  # noqa: E402

# Which profile operation each kind's create and delete wait on; every other kind is one call (counted as 0).
WAITS = {
    "aws_eks_cluster": ("eks.create_cluster", "eks.delete_cluster"),
    "aws_eks_node_group": ("eks.create_nodegroup", "eks.delete_nodegroup"),
    "aws_eks_addon": ("eks.create_addon", "eks.delete_addon"),
    "aws_nat_gateway": ("ec2.create_nat_gateway", "ec2.delete_nat_gateway"),
    "k8s_karpenter_controller": ("k8s.deployment_ready", None),
}


class Failed(Exception):
    pass


def timeline(stdout: str, wall: float, chain: list[str]) -> str:
    """Where a run's time went, from its --json events: before the first operation (refresh, preflight), each
    operation of the critical chain (start and end), and after the last operation (final scan, exit)."""
    from datetime import datetime

    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    times = [(e, datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()) for e in events]
    ops = [(e, t) for e, t in times if e["type"] in ("started", "finished")]
    if not ops:
        return "no operations"
    zero = times[0][1]
    first, last = ops[0][1] - zero, ops[-1][1] - zero
    parts = [f"first operation at {first:.1f}s"]
    for address in (c.rsplit(" ", 1)[0] for c in chain):
        at = {e["type"]: t - zero for e, t in ops if e.get("address") == address}
        if "started" in at and "finished" in at:
            parts.append(f"{address} {at['started']:.1f}-{at['finished']:.1f}s")
    parts.append(f"last operation ends at {last:.1f}s of {wall:.1f}s")
    return ", ".join(parts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def critical_path(resources: list[dict], profile: profiles.Profile, destroy: bool) -> tuple[float, list[str]]:
    """The longest chain of waits: apply follows depends_on, destroy the reverse edges."""
    cost = {}
    for r in resources:
        ops = WAITS.get(r["kind"], (None, None))
        op = ops[1] if destroy else ops[0]
        cost[r["address"]] = profile.delay(op) if op else 0.0
    # What must wait for each resource: its dependents on apply, its dependencies on destroy.
    after: dict[str, list[str]] = {r["address"]: [] for r in resources}
    for r in resources:
        for dep in (d for d in r["depends_on"] if d in after):
            if destroy:
                after[r["address"]].append(dep)
            else:
                after[dep].append(r["address"])
    memo: dict[str, tuple[float, list[str]]] = {}

    def longest(a: str) -> tuple[float, list[str]]:
        if a not in memo:
            best = max((longest(n) for n in after[a]), default=(0.0, []), key=lambda t: t[0])
            memo[a] = (cost[a] + best[0], [a, *best[1]])
        return memo[a]

    total, chain = max((longest(a) for a in after), key=lambda t: t[0])
    return total, [f"{a} {cost[a]:g}s" for a in chain if cost[a] > 0]


class Bench:
    def __init__(self, kbp: str, blueprint: Path, scale: float, parallelism: int, crds_dir: str | None):
        self.kbp, self.scale, self.parallelism = kbp, scale, parallelism
        self.work = Path(tempfile.mkdtemp(prefix=f"kbp-bench-{scale}-"))
        self.blueprint = self.work / blueprint.name
        self.base_text = blueprint.read_text()
        self.blueprint.write_text(self.base_text)
        # A local chart beside the CRDs (the reference data's layout): its CRDs and the controller's templates.
        chart = Path(crds_dir).parent / "chart" / "karpenter" if crds_dir else None
        self.sets = ["--set", f"karpenter.chart={chart}"] if chart and (chart / "Chart.yaml").is_file() else []
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.env.update({
            "KBP_EMULATOR_DIR": str(self.work / "emulator"),
            "KBP_EMULATOR_PORT": str(free_port()),
            "KBP_EMULATOR_PROFILE": "realistic",
            "KBP_EMULATOR_TIME_SCALE": str(scale),
            "KBP_EMULATOR_WATCH_PID": str(os.getpid()),
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": str(self.work / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.work / "no-aws-credentials"),
        })
        self.proxy: subprocess.Popen | None = None
        self.proxy_url = ""

    def log(self, text: str) -> None:
        print(f"bench[{self.scale}]: {text}", file=sys.stderr, flush=True)

    def start(self) -> None:
        out = subprocess.run(["bash", str(REPO / "scripts/emulator.sh"), "start"], env=self.env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise Failed(f"the emulator did not start: {out.stderr.strip()[-1500:]}")
        for line in out.stdout.splitlines():
            key, _, value = line.removeprefix("export ").partition("=")
            self.env[key] = value
        python = Path(os.environ.get("KBP_EMULATOR_VENV", REPO / ".venv-emulator")) / "bin/python"
        self.proxy = subprocess.Popen(
            [str(python), "-m", "kbp_emulator.fault_proxy", "--listen", "127.0.0.1:0",
             "--upstream", self.env["AWS_ENDPOINT_URL"]],
            env={**self.env, "PYTHONPATH": str(REPO / "emulator")}, stdout=subprocess.PIPE,
            stderr=open(self.work / "proxy.err", "w"), text=True)
        first = self.proxy.stdout.readline()
        if not first.startswith("fault_proxy: listening on "):
            raise Failed(f"the counting proxy did not start: {first!r}")
        self.proxy_url = first.removeprefix("fault_proxy: listening on ").split()[0].rstrip(",")

    def stop(self) -> None:
        if self.proxy:
            self.proxy.terminate()
            self.proxy.wait()
        subprocess.run(["bash", str(REPO / "scripts/emulator.sh"), "stop"], env=self.env, capture_output=True)
        shutil.rmtree(self.work, ignore_errors=True)

    def kbp_run(self, *args: str, via_proxy: bool = False, ok=(0,)) -> tuple[float, str]:
        env = dict(self.env)
        if via_proxy:
            env["AWS_ENDPOINT_URL"] = self.proxy_url
        start = time.monotonic()
        out = subprocess.run([self.kbp, *args], env=env, cwd=self.work, capture_output=True, text=True)
        took = time.monotonic() - start
        if out.returncode not in ok:
            raise Failed(f"kbp {' '.join(args)} exited {out.returncode}:\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
        return took, out.stdout

    def proxy_admin(self, method: str, path: str) -> dict:
        import urllib.request

        req = urllib.request.Request(f"{self.proxy_url}/__fault_proxy/{path}", method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def audit_lines(self) -> list[dict]:
        logs = list((self.work / "emulator/kube").glob("*/plane/audit.log"))
        return [json.loads(line) for log in logs for line in log.read_text().splitlines() if line.strip()]

    def with_pools(self, n: int) -> None:
        extra = "".join(
            f'\n[node_pools.extra{i:03}]\nnode_class = "default"\nweight = {i % 100 + 1}\n'
            f'[node_pools.extra{i:03}.limits]\ncpu = {100 + i}\n'
            for i in range(1, n))
        self.blueprint.write_text(self.base_text + extra)

    def noop_plan_calls(self) -> tuple[Counter, Counter]:
        self.proxy_admin("POST", "reset")
        before = len(self.audit_lines())
        self.kbp_run("plan", "--detailed-exitcode", "--parallelism", str(self.parallelism), self.blueprint.name,
                     *self.sets, via_proxy=True)
        aws = Counter(self.proxy_admin("GET", "stats")["operations"])
        k8s = Counter()
        for e in self.audit_lines()[before:]:
            ref = e.get("objectRef") or {}
            what = ref.get("resource") or e.get("requestURI", "?").split("?")[0]
            k8s[f"{e['verb']} {what}"] += 1
        return aws, k8s

    def run(self, pools: list[int]) -> dict:
        prof = profiles.load("realistic", self.scale)
        _, graph = self.kbp_run("graph", "--format", "json", self.blueprint.name, *self.sets)
        resources = json.loads(graph)["resources"]
        cp_apply, chain_apply = critical_path(resources, prof, destroy=False)
        cp_destroy, chain_destroy = critical_path(resources, prof, destroy=True)
        self.log(f"critical path: apply {cp_apply:.1f}s ({' -> '.join(chain_apply)}), "
                 f"destroy {cp_destroy:.1f}s ({' -> '.join(chain_destroy)})")
        self.start()
        try:
            # moto loads each service on its first request (1-2 s, which AWS never costs): a plan touches them all
            # before anything is timed.
            self.kbp_run("plan", self.blueprint.name, *self.sets)
            apply_s, out = self.kbp_run("apply", "--auto-approve", "--json", "--parallelism",
                                        str(self.parallelism), self.blueprint.name, *self.sets)
            self.log(f"apply {apply_s:.1f}s ({apply_s / cp_apply:.3f} x critical path): "
                     f"{timeline(out, apply_s, chain_apply)}")
            noop = {}
            for n in pools:
                self.with_pools(n)
                if n > 1:
                    self.kbp_run("apply", "--auto-approve", self.blueprint.name, *self.sets)
                noop[n] = self.noop_plan_calls()
                self.log(f"no-op plan with {n} NodePools: {sum(noop[n][0].values())} AWS calls, "
                         f"{sum(noop[n][1].values())} Kubernetes calls")
            self.blueprint.write_text(self.base_text)
            if pools != [1]:
                self.kbp_run("apply", "--auto-approve", self.blueprint.name, *self.sets)
            destroy_s, out = self.kbp_run("destroy", "--auto-approve", "--json", "--parallelism",
                                          str(self.parallelism), self.blueprint.name, *self.sets)
            self.log(f"destroy {destroy_s:.1f}s ({destroy_s / cp_destroy:.3f} x critical path): "
                     f"{timeline(out, destroy_s, chain_destroy)}")
        finally:
            self.stop()
        return {"scale": self.scale, "apply": (apply_s, cp_apply, chain_apply),
                "destroy": (destroy_s, cp_destroy, chain_destroy), "noop": noop,
                "resources": len(resources), "kinds": len({r["kind"] for r in resources})}


def report(r: dict) -> None:
    print(f"\n## time scale {r['scale']} ({r['resources']} resources, {r['kinds']} kinds)\n")
    for what in ("apply", "destroy"):
        wall, cp, chain = r[what]
        print(f"{what:8} {wall:7.1f} s   critical path {cp:6.1f} s   ratio {wall / cp:.3f}   ({' -> '.join(chain)})")
    for n, (aws, k8s) in r["noop"].items():
        print(f"\nno-op plan, {n} NodePool(s): {sum(aws.values())} AWS calls, {sum(k8s.values())} Kubernetes calls")
        for op, count in sorted(aws.items()):
            print(f"  {count:4}  {op}")
        for call, count in sorted(k8s.items()):
            print(f"  {count:4}  kubernetes {call}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kbp", required=True, help="the kbp binary (a release build)")
    ap.add_argument("--scales", default="0.05,0.2", help="time scales of the realistic profile (default 0.05,0.2)")
    ap.add_argument("--blueprint", default=str(REPO / "blueprints/karpenter-mng.toml"))
    ap.add_argument("--pools", default="1,20,100", help="NodePool counts of the no-op plans (default 1,20,100)")
    ap.add_argument("--parallelism", type=int, default=10)
    ap.add_argument("--crds-dir", default=os.environ.get("KBP_KARPENTER_CRDS_DIR"))
    args = ap.parse_args()
    results = []
    try:
        for scale in (float(s) for s in args.scales.split(",")):
            bench = Bench(args.kbp, Path(args.blueprint), scale, args.parallelism, args.crds_dir)
            results.append(bench.run([int(n) for n in args.pools.split(",")]))
            report(results[-1])
    except Failed as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    print("\n| time scale | apply | critical path | ratio | destroy | critical path | ratio | no-op plan AWS calls "
          "(max per operation) | Kubernetes calls by NodePools |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in results:
        (a, acp, _), (d, dcp, _) = r["apply"], r["destroy"]
        aws = r["noop"][min(r["noop"])][0]
        k8s = ", ".join(f"{n}: {sum(c.values())}" for n, (_, c) in r["noop"].items())
        print(f"| {r['scale']} | {a:.1f} s | {acp:.1f} s | {a / acp:.3f} | {d:.1f} s | {dcp:.1f} s | {d / dcp:.3f} | "
              f"{sum(aws.values())} ({max(aws.values(), default=0)}) | {k8s} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
