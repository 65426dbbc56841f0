#!/usr/bin/env bash
# helm, the Kubernetes package manager's CLI (helm.sh/helm/v4, pinned in kube/helm/go.mod), built once into the
# cache the test control plane uses: tests/it/chart_fidelity.rs compares kbp's in-process rendering of
# Karpenter's published chart with `helm template` on the values in tests/fixtures/chart-values/. Test
# infrastructure only: kbp itself has no Go in it, and does not run helm.
#
#   scripts/helm.sh install   build the binary into the cache (no-op if there); prints its path
#
# Only the path goes to stdout; the build's output goes to stderr.
#
# Environment:
#   KBP_KUBE_CACHE   the cache it shares with scripts/kube.sh (default ${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube)
#   KBP_KUBE_NICE    niceness of the Go build (default 10)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD="$REPO_ROOT/kube/helm"
log() { echo "helm: $*" >&2; }
die() { log "error: $*"; exit 1; }

VERSION="$(awk '($1 == "require" && $2 == "helm.sh/helm/v4") { print $3 }' "$MOD/go.mod")"
[ -n "$VERSION" ] || die "cannot read the pinned helm.sh/helm/v4 version from kube/helm/go.mod"
CACHE="${KBP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube}"
OUT="$CACHE/helm-$VERSION"
BIN="$OUT/bin/helm"

install() {
  if [ -x "$BIN" ]; then
    log "$VERSION in $OUT (already built)"
    echo "$BIN"
    return 0
  fi
  command -v go >/dev/null 2>&1 \
    || die "go not found: Go (1.26.6 or newer) builds helm; install it, or point KBP_KUBE_CACHE at a cache that has helm-$VERSION"
  mkdir -p "$CACHE"
  # Serialized, so parallel test processes on a fresh machine build once, not once each.
  exec 9>"$CACHE/.helm.lock"
  flock 9
  if [ -x "$BIN" ]; then exec 9>&-; log "built by another process meanwhile"; echo "$BIN"; return 0; fi
  local started tmp
  started=$(date +%s)
  log "building helm.sh/helm/v4 $VERSION into $OUT"
  # Into a temporary directory, then renamed: an interrupted build leaves nothing a later install would take for
  # a finished one. CGO_ENABLED=0, GOWORK=off and -mod=readonly as in scripts/kube.sh: a static binary, no other
  # module pulled in, and the committed go.sum must already name every module. The version is stamped with -X
  # into helm's internal/version package, as helm's Makefile does for a tagged release; without it
  # `helm version` says v4.3 (the source's placeholder) and its user agent says Helm/4.3.
  tmp="$(mktemp -d "$CACHE/.helm.XXXXXX")"
  chmod 755 "$tmp"
  mkdir -p "$tmp/bin"
  if ! (cd "$MOD" && CGO_ENABLED=0 GOWORK=off nice -n "${KBP_KUBE_NICE:-10}" \
    go build -mod=readonly -trimpath -ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$VERSION" \
    -o "$tmp/bin/helm" helm.sh/helm/v4/cmd/helm >&2); then
    rm -rf "$tmp"
    die "go build of helm.sh/helm/v4 failed (see above); the Go module proxy must be reachable for a first build"
  fi
  rm -rf "$OUT"
  mv "$tmp" "$OUT"
  exec 9>&-
  log "built in $(( $(date +%s) - started )) s: $(du -sh "$BIN" | cut -f1)"
  echo "$BIN"
}

case "${1:-}" in
  install) install ;;
  *) echo "usage: $0 install" >&2; exit 2 ;;
esac
