// Package v1alpha1 holds the managed-starrocks API types: StarrocksClass
// (cluster-scoped, what may be ordered) and Starrocks (namespaced, an
// instance). These types are the single source of the schema: crds/ is
// generated from them with controller-gen (make generate) and a test fails
// when the two drift apart.
//
// +kubebuilder:object:generate=true
// +groupName=managed-services.deckhouse.io
package v1alpha1
