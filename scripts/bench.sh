#!/usr/bin/env bash
# kbp's speed figures (issue 15): apply and destroy of a shipped blueprint against the emulator's realistic
# latency profile, each as a ratio to the graph's critical path, and the AWS and Kubernetes calls of a no-op
# plan with 1, 20 and 100 NodePools. A benchmark, not a test: it prints figures and asserts nothing.
#
#   scripts/bench.sh [--scales 0.05,0.2] [--pools 1,20,100] [--parallelism 10] [--blueprint FILE]
#
# Builds kbp in release mode (CARGO_TARGET_DIR, default /tmp/kbp-target), starts a private emulator per time
# scale (KBP_EMULATOR_VENV as scripts/emulator.sh says) and cleans up after itself. About 3 minutes for the
# default scales after the build. The output of scales 0.05 and 0.2 is in docs/performance.md.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/kbp-target}"
VENV="${KBP_EMULATOR_VENV:-$REPO_ROOT/.venv-emulator}"

echo "bench: building kbp (release)" >&2
cargo build --quiet --release --manifest-path "$REPO_ROOT/Cargo.toml" --bin kbp
"$REPO_ROOT/scripts/emulator.sh" install >&2

CRDS=()
for dir in "${KBP_KARPENTER_CRDS_DIR:-}" "$REPO_ROOT/../shared/reference/karpenter-v1.14.1/crds"; do
  if [ -n "$dir" ] && [ -f "$dir/karpenter.sh_nodepools.yaml" ]; then
    CRDS=(--crds-dir "$(cd "$dir" && pwd)")
    break
  fi
done
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE
exec "$VENV/bin/python" "$REPO_ROOT/scripts/bench.py" --kbp "$CARGO_TARGET_DIR/release/kbp" ${CRDS[@]+"${CRDS[@]}"} "$@"
