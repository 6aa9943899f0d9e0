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

// Package applied is the record the instanceobjects hook keeps of what it
// wrote for one instance: a ConfigMap applied-<uid of the Starrocks> in the
// module namespace, where no tenant can write. It says which render is
// applied and what the API server stored for each object (UID and
// generation, or resourceVersion for kinds without a generation), so
// "current" is decided from the objects themselves — a tenant cannot forge a
// UID or a resourceVersion, while it can copy any annotation — and it holds
// the last refusal, which the instances hook reports in the instance's
// status (condition ObjectsApplied). It is also what the hook prunes by: an
// object the record lists that the current render no longer has was made by
// the module for this instance (the tenant namespace alone cannot say so:
// a tenant can label its own objects like the module's).
package applied

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Prefix of the record's ConfigMap name; the rest is the Starrocks' UID.
const Prefix = "applied-"

// State is the value of label managed-starrocks.deckhouse.io/state on a record.
const State = "applied"

// Key is the ConfigMap data key holding the Record as JSON.
const Key = "record.json"

// ConfigMapName is the record's ConfigMap of the Starrocks with that UID.
func ConfigMapName(uid string) string { return Prefix + uid }

// Record is what was applied for one instance.
type Record struct {
	// Namespace and Name of the instance, UID of its Starrocks.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// Checksum of the entry the objects were rendered from; empty
	// while the render has not been applied completely.
	Checksum string `json:"checksum,omitempty"`
	// Objects are what the API server returned for each written object.
	Objects []Object `json:"objects,omitempty"`
	// Refused is the write the API server refused, if the last attempt
	// had one; nil once a render is applied completely.
	Refused *Refusal `json:"refused,omitempty"`
	// Written is when the hook last wrote this record, that is when it
	// last took the instance's turn: the hook serves first what has waited
	// longest. Only the hook writes it, in the module namespace, so no
	// tenant can move its instance forward. Records of older versions have
	// none and count as waiting the longest.
	Written *metav1.Time `json:"written,omitempty"`
}

// Object is one written object as the API server stored it.
type Object struct {
	// APIVersion lets a later module version find an object of a kind it no
	// longer renders (pruning); records written before it was kept have
	// none, and the kind's apiVersion of pkg/instanceobjects.Kinds is used.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	// Version is "g<generation>" for kinds with a generation (their status
	// changes do not bump it; a metadata digest covers what it does not),
	// else "rv<resourceVersion>".
	Version string `json:"version"`
	// Metadata is a digest of the labels, annotations and ownerReferences
	// (kinds with a generation only).
	Metadata string `json:"metadata,omitempty"`
}

// Refusal is a write the API server refused: the object and its words
// (kubewrite.Refusal, at most 1 KiB; never object data).
type Refusal struct {
	Object  string      `json:"object"`
	Message string      `json:"message"`
	Time    metav1.Time `json:"time"`
}

// Parse reads a record; a record that does not parse is no record.
func Parse(data string) (*Record, error) {
	var r Record
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return nil, fmt.Errorf("applied record: %w", err)
	}
	return &r, nil
}
