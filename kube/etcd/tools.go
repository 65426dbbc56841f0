//go:build tools

// Package tools names the etcd server's main package so `go mod tidy` keeps it in go.mod and go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
