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
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// fleet is n values entries (the two examples under distinct names and
// namespaces, as JSON the way the hook reads them) and the live objects of
// a cluster where every one of them is current.
func fleet(b *testing.B, n int) (instanceobjects.Module, []string, rendered) {
	b.Helper()
	module := instanceobjects.ModuleFromValues(func(path string) gjson.Result { return gjson.Get(globals, path) })
	examples := exampleInstances(b)
	entries := make([]string, 0, n)
	live := rendered{}
	for i := range n {
		inst := cloneInstances(b, examples[i%2:i%2+1])[0]
		inst["name"] = fmt.Sprintf("%s-%d", inst["name"], i)
		inst["namespace"] = fmt.Sprintf("team-%d", i/3)
		raw, err := json.Marshal(inst)
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, string(raw))
		sum, err := module.Checksum(inst)
		if err != nil {
			b.Fatal(err)
		}
		live[instanceKey{inst["namespace"].(string), inst["name"].(string)}] = map[string]renderedSet{sum: {count: 15, claimed: 15}}
	}
	return module, entries, live
}

// BenchmarkPass measures one run of the hook over n instances: steady (every
// instance current: decode, checksum, compare, no render) and cold (nothing
// live: every instance rendered, as after a module upgrade). Floor: decoding
// the same values entries with encoding/json, which every run must do. The
// ratios are reported as x-floor.
func BenchmarkPass(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		module, entries, live := fleet(b, n)
		var floor float64
		b.Run(fmt.Sprintf("floor/instances=%d", n), func(b *testing.B) {
			for b.Loop() {
				for _, e := range entries {
					var v map[string]any
					if err := json.Unmarshal([]byte(e), &v); err != nil {
						b.Fatal(err)
					}
				}
			}
			floor = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		for _, tc := range []struct {
			name string
			live rendered
		}{{"steady", live}, {"cold", rendered{}}} {
			b.Run(fmt.Sprintf("%s/instances=%d", tc.name, n), func(b *testing.B) {
				for b.Loop() {
					for _, e := range entries {
						if _, err := stale(module, tc.live, e); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floor, "x-floor")
			})
		}
	}
}
