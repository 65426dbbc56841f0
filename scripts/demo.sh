#!/usr/bin/env bash
# The demo: one Karpenter-ready cluster, created and destroyed against a private local AWS emulator.
#   scripts/demo.sh [BLUEPRINT_NAME]      (default karpenter-mng, from blueprints/)
# Starts its own emulator on a free port (an emulator you already run is left alone), builds kbp, then in a
# temporary working directory runs validate, plan, apply, state list, a plan that must show no changes,
# and destroy. Set KBP_DEMO_KEEP=1 to keep the working directory (state file, logs) afterwards.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME="${1:-karpenter-mng}"
BLUEPRINT_SRC="$REPO_ROOT/blueprints/$NAME.toml"
[ -f "$BLUEPRINT_SRC" ] || { echo "demo: no blueprint at $BLUEPRINT_SRC" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/kbp-target}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kbp-demo.XXXXXX")"
export KBP_EMULATOR_DIR="$WORK/.emulator"
export KBP_EMULATOR_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

cleanup() {
  "$REPO_ROOT/scripts/emulator.sh" stop || true
  if [ "${KBP_DEMO_KEEP:-}" = 1 ]; then
    echo "demo: kept $WORK" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

run() {
  echo
  echo "\$ $*"
  "$@"
}

echo "demo: starting a private AWS emulator" >&2
# Only this script's environment points at the emulator; no inherited AWS profile can redirect the demo
# to a real account.
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE
eval "$("$REPO_ROOT/scripts/emulator.sh" start)"
export AWS_EC2_METADATA_DISABLED=true
export AWS_CONFIG_FILE="$WORK/no-aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/no-aws-credentials"

echo "demo: building kbp" >&2
cargo build --quiet --manifest-path "$REPO_ROOT/Cargo.toml" --bin kbp
KBP="$CARGO_TARGET_DIR/debug/kbp"

cp "$BLUEPRINT_SRC" "$WORK/"
cd "$WORK"
kbp() { "$KBP" "$@"; }
BP="$NAME.toml"

run kbp validate "$BP"
run kbp plan "$BP"
run kbp apply --auto-approve "$BP"
run kbp state list
run kbp output
run kbp plan --detailed-exitcode "$BP"   # 0: what was applied is what the blueprint says
run kbp destroy --auto-approve "$BP"
echo
echo "demo: done"
