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

package chartrender_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
)

func benchValues(b *testing.B, n int) map[string]any {
	b.Helper()
	objs := make([]*v1alpha1.Starrocks, n)
	for i := range objs {
		typ := v1alpha1.TypeStandalone
		if i%2 == 1 {
			typ = v1alpha1.TypeCluster
		}
		objs[i] = starrocks(fmt.Sprintf("team-%03d", i%50), fmt.Sprintf("db-%04d", i), typ)
	}
	return moduleValues(b, nil, objs...)
}

// BenchmarkRender renders the chart for 1, 100 and 1000 instances (half
// Standalone, half Cluster), once with the Helm engine alone (what
// addon-operator does) and once with parsing into objects (what the tests
// and the end-to-end loop do). Next to ns/op it reports, against the
// one-instance floor of the same mode measured in the same run:
//   - x-floor: the render time as a multiple of the floor;
//   - ns/instance: the cost of each instance beyond the first;
//   - instance-x-floor: that per-instance cost as a share of the floor
//     (about constant across sizes means rendering grows linearly).
func BenchmarkRender(b *testing.B) {
	r, err := chartrender.Default()
	if err != nil {
		b.Fatal(err)
	}
	modes := []struct {
		name   string
		render func(b *testing.B, vals map[string]any) int
	}{
		{"engine", func(b *testing.B, vals map[string]any) int {
			files, err := r.RenderFiles(vals, chartrender.DefaultGlobals())
			if err != nil {
				b.Fatal(err)
			}
			return len(files)
		}},
		{"engine+parse", func(b *testing.B, vals map[string]any) int {
			objs, err := r.Render(vals, chartrender.DefaultGlobals())
			if err != nil {
				b.Fatal(err)
			}
			return len(objs)
		}},
	}
	sizes := []int{1, 100, 1000}
	values := map[int]map[string]any{}
	for _, n := range sizes {
		values[n] = benchValues(b, n)
	}
	for _, m := range modes {
		// The floor is the first sub-benchmark of each mode (sub-benchmarks
		// run in order; testing.Benchmark cannot nest in a running one).
		var floorNs float64
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/instances=%d", m.name, n), func(b *testing.B) {
				start := time.Now()
				for b.Loop() {
					m.render(b, values[n])
				}
				perOp := float64(time.Since(start).Nanoseconds()) / float64(b.N)
				if n == 1 {
					floorNs = perOp
				}
				b.ReportMetric(perOp/floorNs, "x-floor")
				if n > 1 {
					perInstance := (perOp - floorNs) / float64(n-1)
					b.ReportMetric(perInstance, "ns/instance")
					b.ReportMetric(perInstance/floorNs, "instance-x-floor")
				}
			})
		}
	}
}
