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

package admission

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// diffPatch returns the JSON patch that turns before into after, rooted at
// prefix (e.g. "/spec"). Both are marshalled from the same Go type, so key
// spelling and quantity formatting agree and only real changes show up.
//
// Objects are diffed member by member; anything else that differs (scalars,
// arrays) is replaced whole with "add", which RFC 6902 defines as replace
// for an existing member and create for a missing one, so the patch applies
// to the request's raw object even where it spelled a zero value
// differently from the Go type (e.g. `coreFraction: 0` vs. absent).
func diffPatch(prefix string, before, after any) ([]PatchOp, error) {
	b, err := toGeneric(before)
	if err != nil {
		return nil, err
	}
	a, err := toGeneric(after)
	if err != nil {
		return nil, err
	}
	var ops []PatchOp
	diffValue(prefix, b, a, &ops)
	return ops, nil
}

func toGeneric(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", v, err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("unmarshal %T: %w", v, err)
	}
	return out, nil
}

func diffValue(path string, before, after any, ops *[]PatchOp) {
	bm, bok := before.(map[string]any)
	am, aok := after.(map[string]any)
	if bok && aok {
		keys := make([]string, 0, len(bm)+len(am))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys) // a stable patch is easier to read in logs and tests
		for _, k := range keys {
			p := path + "/" + escapePointer(k)
			av, inAfter := am[k]
			bv, inBefore := bm[k]
			switch {
			case !inAfter:
				*ops = append(*ops, PatchOp{Op: "remove", Path: p})
			case !inBefore:
				*ops = append(*ops, PatchOp{Op: "add", Path: p, Value: av})
			default:
				diffValue(p, bv, av, ops)
			}
		}
		return
	}
	if !reflect.DeepEqual(before, after) {
		*ops = append(*ops, PatchOp{Op: "add", Path: path, Value: after})
	}
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
