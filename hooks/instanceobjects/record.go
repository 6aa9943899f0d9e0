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
	"strconv"
	"strings"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
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

// boundMetadata is objectFilter's bounding in Go, for the metadata the API
// server returned (objectOf): the digest of the record and of the snapshot
// are then of the same thing. The module's own metadata is within the
// bounds and kept as it is; anything beyond them (a tenant's, or a
// mutating webhook's) is kept as a marker both ways.
func boundMetadata(labels, annotations map[string]string, owners []ownerRef) (map[string]string, map[string]string, []ownerRef) {
	if len(owners) > maxOwners {
		owners = []ownerRef{{Name: strconv.Itoa(len(owners)) + " ownerReferences"}}
	} else {
		cut := make([]ownerRef, 0, len(owners))
		for _, o := range owners {
			cut = append(cut, ownerRef{APIVersion: shared.Cut(o.APIVersion), Kind: shared.Cut(o.Kind), Name: shared.Cut(o.Name), UID: shared.Cut(o.UID),
				Controller: o.Controller, BlockOwnerDeletion: o.BlockOwnerDeletion})
		}
		owners = cut
	}
	return boundMap(labels), boundMap(annotations), owners
}

// boundMap is jq's boundedmap: keys in order, the later one kept when two
// cut to the same marker (from_entries).
func boundMap(m map[string]string) map[string]string {
	if len(m) > maxMetadataEntries {
		return map[string]string{"": strconv.Itoa(len(m)) + " entries"}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, len(m))
	for _, k := range keys {
		out[shared.Cut(k)] = shared.Cut(m[k])
	}
	return out
}

func boolString(b bool) string {
	if b {
		return "t"
	}
	return "f"
}
