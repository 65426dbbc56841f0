#!/usr/bin/env bash
# actionlint, the GitHub Actions workflow checker (github.com/rhysd/actionlint, pinned in kube/actionlint/go.mod),
# built once into the cache the test control plane uses: tests/it/workflows.rs runs it on .github/workflows and
# on the workflow docs/ci.md recommends. Test infrastructure only: kbp itself has no Go in it.
#
#   scripts/actionlint.sh install   build the binary into the cache (no-op if there); prints its path
#
# Only the path goes to stdout; the build's output goes to stderr.
#
# Environment:
#   KBP_KUBE_CACHE   the cache it shares with scripts/kube.sh (default ${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube)
#   KBP_KUBE_NICE    niceness of the Go build (default 10)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD="$REPO_ROOT/kube/actionlint"
log() { echo "actionlint: $*" >&2; }
die() { log "error: $*"; exit 1; }

VERSION="$(awk '($1 == "require" && $2 == "github.com/rhysd/actionlint") { print $3 }' "$MOD/go.mod")"
[ -n "$VERSION" ] || die "cannot read the pinned github.com/rhysd/actionlint version from kube/actionlint/go.mod"
CACHE="${KBP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube}"
OUT="$CACHE/actionlint-$VERSION"
BIN="$OUT/bin/actionlint"

install() {
  if [ -x "$BIN" ]; then
    log "$VERSION in $OUT (already built)"
    echo "$BIN"
    return 0
  fi
  command -v go >/dev/null 2>&1 \
    || die "go not found: Go (1.26.6 or newer) builds actionlint; install it, or point KBP_KUBE_CACHE at a cache that has actionlint-$VERSION"
  mkdir -p "$CACHE"
  # Serialized, so parallel test processes on a fresh machine build once, not once each.
  exec 9>"$CACHE/.actionlint.lock"
  flock 9
  if [ -x "$BIN" ]; then exec 9>&-; log "built by another process meanwhile"; echo "$BIN"; return 0; fi
  local started tmp
  started=$(date +%s)
  log "building github.com/rhysd/actionlint $VERSION into $OUT"
  # Into a temporary directory, then renamed: an interrupted build leaves nothing a later install would take for
  # a finished one. CGO_ENABLED=0, GOWORK=off and -mod=readonly as in scripts/kube.sh: a static binary, no other
  # module pulled in, and the committed go.sum must already name every module. actionlint reports the version
  # stamped into it with -X (its release builds do the same); without it `actionlint -version` says (devel).
  tmp="$(mktemp -d "$CACHE/.actionlint.XXXXXX")"
  chmod 755 "$tmp"
  mkdir -p "$tmp/bin"
  if ! (cd "$MOD" && CGO_ENABLED=0 GOWORK=off nice -n "${KBP_KUBE_NICE:-10}" \
    go build -mod=readonly -trimpath -ldflags="-s -w -X github.com/rhysd/actionlint.version=$VERSION" \
    -o "$tmp/bin/actionlint" github.com/rhysd/actionlint/cmd/actionlint >&2); then
    rm -rf "$tmp"
    die "go build of github.com/rhysd/actionlint failed (see above); the Go module proxy must be reachable for a first build"
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
