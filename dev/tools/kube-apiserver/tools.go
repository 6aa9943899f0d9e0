//go:build tools

// Package tools pins the kube-apiserver and kube-controller-manager used by the local control plane in
// tests and `make run`. It is development tooling, never shipped.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
