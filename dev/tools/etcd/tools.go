//go:build tools

// Package tools pins the etcd used by the local control plane in tests and
// `make run`. It is development tooling, never shipped.
package tools

import _ "go.etcd.io/etcd/server/v3"
