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

package instanceobjects

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// metadataDigest covers what a generation does not: the labels (selectors,
// NetworkPolicies and the module's own bindings go by them), the
// annotations (the render's among them) and the ownerReferences (garbage
// collection with the Starrocks). Written the same from a snapshot and from
// what the API server returned; empty maps and absent ones are alike.
func metadataDigest(labels, annotations map[string]string, owners []ownerRef) string {
	h := sha256.New()
	for _, m := range []map[string]string{labels, annotations} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h.Write([]byte(k))
			h.Write([]byte{0})
			h.Write([]byte(m[k]))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	for _, o := range owners {
		h.Write([]byte(strings.Join([]string{o.APIVersion, o.Kind, o.Name, o.UID, boolString(o.Controller), boolString(o.BlockOwnerDeletion)}, "\x00")))
		h.Write([]byte{1})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func boolString(b bool) string {
	if b {
		return "t"
	}
	return "f"
}
