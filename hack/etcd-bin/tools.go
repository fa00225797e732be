//go:build tools

// Package tools pins etcd (the root of go.etcd.io/etcd/server/v3 is its main
// package), so `go mod tidy` keeps everything it needs in go.mod and go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
