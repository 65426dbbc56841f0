#!/usr/bin/env bash
# THE test command: everything kbp's tests need, on a fresh machine too.
#   scripts/test.sh [extra nextest args, e.g. a filter]
# Installs the pinned AWS emulator (moto) and builds the test control plane (scripts/kube.sh) and Karpenter's KWOK
# provider (scripts/karpenter-kwok.sh) if needed, then checks the code's conventions (rustfmt, clippy with
# Cargo.toml's [lints], rustdoc's links, cargo-deny's licences, bans, sources and advisories), runs the emulator extension's own tests (pytest,
# emulator/tests), doctests (if any) and every test with cargo-nextest. Each integration test starts its own
# emulator; nothing needs to be running beforehand.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/kbp-target}"

scripts/emulator.sh install

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "+ cargo install cargo-nextest --locked   # the test runner, once" >&2
  cargo install cargo-nextest --locked
fi

# Debian packages some tests drive as real peers; those tests fail, not skip, without them:
#   docker-registry (the CNCF distribution registry): tests/it/oci_chart.rs pulls a Helm chart from it on loopback;
#   jq: tests/it/json_contract.rs checks that jq reads every `--json` stream.
need_apt() { # COMMAND PACKAGE WHY
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
  local apt_install="${sudo:+$sudo }env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $2"
  echo "+ $apt_install" >&2
  if ! $apt_install; then
    ${sudo:+$sudo }apt-get update && $apt_install || true
  fi
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "error: could not install $2, which $3 needs;" \
      "install it as root with 'apt-get install $2' (Debian/Ubuntu) and run this again" >&2
    exit 1
  fi
}
need_apt docker-registry docker-registry tests/it/oci_chart.rs
need_apt jq jq tests/it/json_contract.rs
need_apt openssl openssl "scripts/kube.sh (the control plane's certificates)"

# A real Kubernetes control plane (kube-apiserver, controller-manager and scheduler v1.34.4 and etcd v3.6, built
# from the Kubernetes project's Go modules, kube/go.mod): the emulator serves every EKS cluster with one, and
# the CRD corpus and render tests send their objects to one. Built once per machine into ~/.cache/kbp-kube
# (about 5 minutes on 2 cores); a no-op after that.
if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is needed to build the test control plane (scripts/kube.sh install); install Go 1.26 or newer" >&2
  exit 1
fi
scripts/kube.sh install
# Karpenter v1.14.1's core with its KWOK provider (kube/karpenter-kwok/go.mod): tests/it/simulate_kwok.rs checks
# `kbp simulate` against it. Built once per machine into the same cache (about 5-8 minutes on 2 cores).
scripts/karpenter-kwok.sh install >/dev/null
# actionlint v1.7.12 (kube/actionlint/go.mod): tests/it/workflows.rs checks .github/workflows and the workflow
# docs/ci.md recommends with it. Built once per machine into the same cache (seconds).
scripts/actionlint.sh install >/dev/null
# helm v4.3.2 (kube/helm/go.mod): tests/it/chart_fidelity.rs compares kbp's rendering of Karpenter's published
# chart with `helm template` on tests/fixtures/chart-values/. Built once per machine into the same cache (about
# 3 minutes on 2 cores).
scripts/helm.sh install >/dev/null

# The official Karpenter CRDs the manifests are validated against are the project's reference data, kept
# outside the repository (../shared/reference). Tests read KBP_KARPENTER_CRDS_DIR; point it at them when
# the checkout is not beside them. Tests that need them fail (not skip) when they are missing.
if [ -z "${KBP_KARPENTER_CRDS_DIR:-}" ]; then
  for dir in "$REPO_ROOT/../shared/reference/karpenter-v1.14.1/crds" /work/shared/reference/karpenter-v1.14.1/crds; do
    if [ -f "$dir/karpenter.sh_nodepools.yaml" ]; then export KBP_KARPENTER_CRDS_DIR="$(cd "$dir" && pwd)"; break; fi
  done
fi

profile=default
if [ -n "${CI:-}" ] && [ "${CI}" != "false" ]; then profile=ci; fi

# The code's conventions are tests too: rustfmt.toml's layout, and Cargo.toml's [lints] with every clippy warning
# an error (the release build never sees a lint, so this is where they are held).
if ! cargo clippy --version >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
  echo "+ rustup component add clippy rustfmt" >&2
  rustup component add clippy rustfmt
fi
echo "+ cargo fmt --check" >&2
cargo fmt --check
echo "+ cargo clippy --all-targets -- -D warnings" >&2
cargo clippy --all-targets --quiet -- -D warnings
# The contributors' reference (private items included): every intra-doc link resolves, rustdoc's lints as errors.
echo "+ RUSTDOCFLAGS='-D warnings' cargo doc --no-deps --document-private-items" >&2
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items --quiet
# What kbp may depend on (deny.toml): licences, banned and duplicated crates, sources, and the RustSec advisories.
# cargo-deny is built once per machine (about 8 minutes on 2 cores). The advisory database is a git clone that
# cargo-deny keeps under $CARGO_HOME/advisory-dbs: it is refreshed from the clone's origin (GitHub, for the one
# cargo-deny makes) where that answers; where it does not, the clone already there is used as it is (the date of
# the advisories checked is printed either way); with no clone at all, advisories are not checked
# and the script says so. To give an offline machine one, clone https://github.com/rustsec/advisory-db to
# $CARGO_HOME/advisory-dbs/advisory-db-3157b0e258782691 (the name cargo-deny gives its default database).
if ! cargo deny --version >/dev/null 2>&1; then
  echo "+ cargo install cargo-deny --locked   # the dependency policy checker, once" >&2
  cargo install cargo-deny --locked
fi
advisory_dbs="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs"
db_date() { git --git-dir "$(ls -d "$advisory_dbs"/advisory-db-*/.git | head -n 1)" log -1 --format=%cs; }
if cargo deny --log-level off fetch db >/dev/null 2>&1; then
  echo "+ cargo deny check   # advisories as of $(db_date), the database just refreshed" >&2
  cargo deny --log-level error check
elif ls -d "$advisory_dbs"/advisory-db-*/.git >/dev/null 2>&1; then
  echo "+ cargo deny --offline check   # the database is out of reach: advisories as of $(db_date), the clone at hand" >&2
  cargo deny --log-level error --offline check
else
  echo "+ cargo deny check licenses bans sources" >&2
  echo "  advisories NOT checked: the database is out of reach and there is no clone under $advisory_dbs" >&2
  cargo deny --log-level error check licenses bans sources
fi

# The emulator extension's tests come first: every integration test below relies on the extension, and
# nextest's summary stays the last line printed. A pytest failure stops the script (set -e).
echo "+ scripts/emulator.sh test" >&2
scripts/emulator.sh test

# Doctests are not run by nextest. Run them first, and only when there are any, so the last line printed
# is nextest's summary of the whole suite.
if grep -rqE '^\s*(///|//!).*```' src; then
  echo "+ cargo test --doc" >&2
  cargo test --doc --quiet
fi

echo "+ cargo nextest run --workspace --all-targets --profile $profile $*" >&2
exec cargo nextest run --workspace --all-targets --profile "$profile" --no-tests=fail "$@"
