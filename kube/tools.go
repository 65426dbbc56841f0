//go:build tools

// Package tools names the commands scripts/kube.sh builds, so `go mod tidy` keeps them (and everything they
// import) in go.mod and go.sum. It is never compiled: the build tag excludes it.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
