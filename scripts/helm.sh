#!/usr/bin/env bash
# helm, built once from kube/helm/go.mod into the test cache: see scripts/go-tool.sh.
#   scripts/helm.sh install   prints the binary's path
exec "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" "${1:-}" helm
