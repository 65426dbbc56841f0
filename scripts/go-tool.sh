#!/usr/bin/env bash
# A Go command-line tool the tests drive as a real peer, built once from its module pinned under kube/ into the
# cache the test control plane uses. Test infrastructure only: kbp itself has no Go in it.
#
#   scripts/go-tool.sh install TOOL   build TOOL into the cache (no-op if there); prints the binary's path
#
# TOOL is one of:
#   actionlint  github.com/rhysd/actionlint (kube/actionlint/go.mod): tests/it/workflows.rs checks
#               .github/workflows and the workflow docs/ci.md recommends with it
#   helm        helm.sh/helm/v4 (kube/helm/go.mod): tests/it/chart_fidelity.rs compares kbp's in-process rendering
#               of Karpenter's chart with `helm template`; kbp itself does not run helm
#
# Only the path goes to stdout; the build's output goes to stderr.
#
# Environment:
#   KBP_KUBE_CACHE   the cache it shares with scripts/kube.sh (default ${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube)
#   KBP_KUBE_NICE    niceness of the Go build (default 10)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOL="${2:-}"
# Per tool: its module, the package of its command, and the variable its own release builds stamp the version
# into with -X (without it `actionlint -version` says (devel) and `helm version` says v4.3).
case "$TOOL" in
  actionlint)
    MODULE=github.com/rhysd/actionlint
    PACKAGE=github.com/rhysd/actionlint/cmd/actionlint
    VERSION_VAR=github.com/rhysd/actionlint.version
    ;;
  helm)
    MODULE=helm.sh/helm/v4
    PACKAGE=helm.sh/helm/v4/cmd/helm
    VERSION_VAR=helm.sh/helm/v4/internal/version.version
    ;;
  *) echo "usage: $0 install actionlint|helm" >&2; exit 2 ;;
esac
MOD="$REPO_ROOT/kube/$TOOL"
log() { echo "$TOOL: $*" >&2; }
die() { log "error: $*"; exit 1; }

VERSION="$(awk -v m="$MODULE" '($1 == "require" && $2 == m) { print $3 }' "$MOD/go.mod")"
[ -n "$VERSION" ] || die "cannot read the pinned $MODULE version from kube/$TOOL/go.mod"
CACHE="${KBP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube}"
OUT="$CACHE/$TOOL-$VERSION"
BIN="$OUT/bin/$TOOL"

install() {
  if [ -x "$BIN" ]; then
    log "$VERSION in $OUT (already built)"
    echo "$BIN"
    return 0
  fi
  command -v go >/dev/null 2>&1 \
    || die "go not found: Go (1.26.6 or newer) builds $TOOL; install it, or point KBP_KUBE_CACHE at a cache that has $TOOL-$VERSION"
  mkdir -p "$CACHE"
  # Serialized, so parallel test processes on a fresh machine build once, not once each.
  exec 9>"$CACHE/.$TOOL.lock"
  flock 9
  if [ -x "$BIN" ]; then exec 9>&-; log "built by another process meanwhile"; echo "$BIN"; return 0; fi
  local started tmp
  started=$(date +%s)
  log "building $MODULE $VERSION into $OUT"
  # Into a temporary directory, then renamed: an interrupted build leaves nothing a later install would take for
  # a finished one. CGO_ENABLED=0, GOWORK=off and -mod=readonly as in scripts/kube.sh: a static binary, no other
  # module pulled in, and the committed go.sum must already name every module.
  tmp="$(mktemp -d "$CACHE/.$TOOL.XXXXXX")"
  chmod 755 "$tmp"
  mkdir -p "$tmp/bin"
  if ! (cd "$MOD" && CGO_ENABLED=0 GOWORK=off nice -n "${KBP_KUBE_NICE:-10}" \
    go build -mod=readonly -trimpath -ldflags="-s -w -X $VERSION_VAR=$VERSION" -o "$tmp/bin/$TOOL" "$PACKAGE" >&2); then
    rm -rf "$tmp"
    die "go build of $MODULE failed (see above); the Go module proxy must be reachable for a first build"
  fi
  rm -rf "$OUT"
  mv "$tmp" "$OUT"
  exec 9>&-
  log "built in $(( $(date +%s) - started )) s: $(du -sh "$BIN" | cut -f1)"
  echo "$BIN"
}

case "${1:-}" in
  install) install ;;
  *) echo "usage: $0 install actionlint|helm" >&2; exit 2 ;;
esac
