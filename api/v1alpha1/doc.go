/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package v1alpha1 holds the managed-starrocks API types: StarrocksClass
// (cluster-scoped, what may be ordered) and Starrocks (namespaced, an
// instance). These types are the single source of the schema: crds/ is
// generated from them with controller-gen (make generate) and a test fails
// when the two drift apart.
//
// +kubebuilder:object:generate=true
// +groupName=managed-services.deckhouse.io
package v1alpha1
