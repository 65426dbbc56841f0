#!/usr/bin/env bash
# Karpenter's core with its KWOK provider (sigs.k8s.io/karpenter/kwok, pinned in kube/karpenter-kwok/go.mod),
# built once into a cache: tests/it/simulate_kwok.rs runs it against a scripts/kube.sh control plane to check
# `kbp simulate` against the real scheduler. Test infrastructure only: kbp itself has no Go in it.
#
#   scripts/karpenter-kwok.sh install   build the binary into the cache (no-op if there); prints its directory:
#                                       DIR/bin/karpenter-kwok and DIR/crds/karpenter.kwok.sh_kwoknodeclasses.yaml
#
# Only the directory goes to stdout; the build's output goes to stderr.
#
# Environment:
#   KBP_KUBE_CACHE   the cache it shares with scripts/kube.sh (default ${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube)
#   KBP_KUBE_NICE    niceness of the Go build (default 10)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD="$REPO_ROOT/kube/karpenter-kwok"
log() { echo "karpenter-kwok: $*" >&2; }
die() { log "error: $*"; exit 1; }

VERSION="$(awk '($1 == "require" && $2 == "sigs.k8s.io/karpenter") { print $3 }' "$MOD/go.mod")"
[ -n "$VERSION" ] || die "cannot read the pinned sigs.k8s.io/karpenter version from kube/karpenter-kwok/go.mod"
CACHE="${KBP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube}"
OUT="$CACHE/karpenter-kwok-$VERSION"
CRD=karpenter.kwok.sh_kwoknodeclasses.yaml

installed() { [ -x "$OUT/bin/karpenter-kwok" ] && [ -f "$OUT/crds/$CRD" ]; }

install() {
  if installed; then
    log "$VERSION in $OUT (already built)"
    echo "$OUT"
    return 0
  fi
  command -v go >/dev/null 2>&1 \
    || die "go not found: Go (1.26.6 or newer) builds Karpenter's KWOK provider; install it, or point KBP_KUBE_CACHE at a cache that has karpenter-kwok-$VERSION"
  mkdir -p "$CACHE"
  # Serialized, so parallel test processes on a fresh machine build once, not once each.
  exec 9>"$CACHE/.karpenter-kwok.lock"
  flock 9
  if installed; then exec 9>&-; log "built by another process meanwhile"; echo "$OUT"; return 0; fi
  local started tmp moddir
  started=$(date +%s)
  log "building sigs.k8s.io/karpenter/kwok $VERSION into $OUT (about 8 minutes on 2 cores, once)"
  # Into a temporary directory, then renamed: an interrupted build leaves nothing a later install would take for
  # a finished one. CGO_ENABLED=0, GOWORK=off and -mod=readonly as in scripts/kube.sh: a static binary, no other
  # module pulled in, and the committed go.sum must already name every module.
  tmp="$(mktemp -d "$CACHE/.karpenter-kwok.XXXXXX")"
  chmod 755 "$tmp"
  mkdir -p "$tmp/bin" "$tmp/crds"
  if ! (cd "$MOD" && CGO_ENABLED=0 GOWORK=off nice -n "${KBP_KUBE_NICE:-10}" \
    go build -mod=readonly -trimpath -ldflags="-s -w" -o "$tmp/bin/karpenter-kwok" sigs.k8s.io/karpenter/kwok >&2); then
    rm -rf "$tmp"
    die "go build of sigs.k8s.io/karpenter/kwok failed (see above); the Go module proxy must be reachable for a first build"
  fi
  # The KWOKNodeClass CRD ships in the module, not in the reference CRDs; kept beside the binary so tests need
  # neither Go nor the module cache to find it.
  moddir="$(cd "$MOD" && GOWORK=off go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)"
  cp "$moddir/kwok/apis/crds/$CRD" "$tmp/crds/"
  rm -rf "$OUT"
  mv "$tmp" "$OUT"
  exec 9>&-
  log "built in $(( $(date +%s) - started )) s: $(du -sh "$OUT/bin/karpenter-kwok" | cut -f1)"
  echo "$OUT"
}

case "${1:-}" in
  install) install ;;
  *) echo "usage: $0 install" >&2; exit 2 ;;
esac
