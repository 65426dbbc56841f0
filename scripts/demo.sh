#!/usr/bin/env bash
# The demo: one Karpenter-ready cluster, created and destroyed against a private local AWS emulator.
#   scripts/demo.sh [BLUEPRINT_NAME]      (default karpenter-mng, from blueprints/)
# Starts its own emulator on a free port (an emulator you already run is left alone), builds kbp, then in a
# temporary working directory runs validate, plan, apply, state list, outputs, moves the state into an S3
# bucket (as a team shares it), a plan that must show no changes, and destroy. Set KBP_DEMO_KEEP=1 to keep the working directory (state file, logs) afterwards.
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

# Karpenter's chart (its CRDs and the controller's templates) comes from public.ecr.aws. Without internet
# access, point KBP_KARPENTER_CHART_DIR at the release's unpacked chart (the project's reference data has it).
SETS=()
for dir in "${KBP_KARPENTER_CHART_DIR:-}" "${KBP_KARPENTER_CRDS_DIR:+$KBP_KARPENTER_CRDS_DIR/../chart/karpenter}" \
  "$REPO_ROOT/../shared/reference/karpenter-v1.14.1/chart/karpenter" /work/shared/reference/karpenter-v1.14.1/chart/karpenter; do
  if [ -n "$dir" ] && [ -f "$dir/Chart.yaml" ]; then
    SETS=(--set "karpenter.chart=$(cd "$dir" && pwd)")
    echo "demo: Karpenter's chart from $dir" >&2
    break
  fi
done

run kbp validate "$BP" "${SETS[@]}"
run kbp simulate "$BP" "${SETS[@]}" --workload "$REPO_ROOT/workloads/sample.yaml"   # what Karpenter would launch, and its cost
run kbp plan "$BP" "${SETS[@]}"
run kbp apply --auto-approve "$BP" "${SETS[@]}"
run kbp state list
run kbp output

# What a team does next: keep the state in S3 (a versioned bucket, made once), so CI and colleagues share it.
echo
echo "demo: a versioned bucket for shared state, as a team would create once" >&2
"${KBP_EMULATOR_VENV:-$REPO_ROOT/.venv-emulator}/bin/python" - <<'PY'
import os, boto3
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=os.environ["AWS_REGION"])
s3.create_bucket(Bucket="demo-kbp-state", CreateBucketConfiguration={"LocationConstraint": os.environ["AWS_REGION"]})
s3.put_bucket_versioning(Bucket="demo-kbp-state", VersioningConfiguration={"Status": "Enabled"})
PY
STACK="$(kbp state pull | python3 -c 'import json, sys; print(json.load(sys.stdin)["stack"])')"
run kbp state migrate --to "s3://demo-kbp-state/kbp/$STACK.state.json"
export KBP_STATE="s3://demo-kbp-state/kbp/$STACK.state.json"
echo "\$ export KBP_STATE=$KBP_STATE    # every command below reads and locks the state in S3"
run kbp kubeconfig --file "$WORK/kubeconfig"   # kubectl --kubeconfig "$WORK/kubeconfig" would now reach it
echo
echo "\$ kbp render $BP | grep '^kind:'      # what kbp deployed in the cluster"
kbp render "$BP" "${SETS[@]}" | grep '^kind:' | sort | uniq -c
run kbp plan --detailed-exitcode "$BP" "${SETS[@]}"   # 0: what was applied is what the blueprint says
run kbp destroy --auto-approve "$BP" "${SETS[@]}"
echo
echo "demo: done"
