#!/usr/bin/env bash
# actionlint, built once from kube/actionlint/go.mod into the test cache: see scripts/go-tool.sh.
#   scripts/actionlint.sh install   prints the binary's path
exec "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" "${1:-}" actionlint
