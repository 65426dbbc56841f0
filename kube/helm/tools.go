//go:build tools

// Package tools names the command scripts/helm.sh builds, so `go mod tidy` keeps it (and everything it imports)
// in go.mod and go.sum. It is never compiled: the build tag excludes it.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
