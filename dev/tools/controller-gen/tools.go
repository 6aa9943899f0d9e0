//go:build tools

// Package tools pins controller-gen, which generates crds/ and the deepcopy
// functions from api/, and the prometheus-operator API whose CRDs the local
// control plane installs. Development tooling, never shipped.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
