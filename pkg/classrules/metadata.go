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

package classrules

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMetadataBytes bounds the labels and annotations of a Starrocks
// together (keys and values, as the apiserver counts annotations, which it
// caps at 256 KiB alone; labels it does not cap). Every watcher of
// Starrocks (the hooks' bindings, the webhook's cache) receives the whole
// object on every change, and nothing the module does reads either: a
// tenant's megabytes of labels would only slow everyone down. kubectl's
// last-applied-configuration annotation of the largest spec fits.
const MaxMetadataBytes = 256 << 10

// MetadataBytes is the size MaxMetadataBytes bounds.
func MetadataBytes(m *metav1.ObjectMeta) int {
	n := 0
	for k, v := range m.Labels {
		n += len(k) + len(v)
	}
	for k, v := range m.Annotations {
		n += len(k) + len(v)
	}
	return n
}

// CheckMetadataSize refuses labels and annotations past MaxMetadataBytes
// on a new object, or grown past it on an update (old not nil): an object
// from before the rule keeps working, and can shrink, have its spec
// changed or its finalizers removed.
func CheckMetadataSize(m, old *metav1.ObjectMeta) Violations {
	n := MetadataBytes(m)
	if n <= MaxMetadataBytes || (old != nil && n <= MetadataBytes(old)) {
		return nil
	}
	return Violations{{Field: "metadata.labels, metadata.annotations", Value: fmt.Sprintf("%d bytes", n),
		Rule: fmt.Sprintf("at most %d bytes of keys and values together", MaxMetadataBytes),
		Message: fmt.Sprintf("the labels and annotations take %d bytes, more than the %d a Starrocks may have; keep large data elsewhere (a ConfigMap)",
			n, MaxMetadataBytes)}}
}
