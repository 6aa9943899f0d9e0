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

package desired

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// FuzzCompute feeds objects the CRD would reject (they reach the hooks when
// validation was off or the CRD was older): the rules must reject them with
// violations, never panic, and whatever they accept must make a usable entry.
func FuzzCompute(f *testing.F) {
	f.Add(int32(2), int32(50), "8Gi", "20Gi", int32(2), true, int64(1024))
	f.Add(int32(0), int32(0), "0", "0", int32(0), true, int64(0))
	f.Add(int32(-3), int32(-1), "-1Gi", "1m", int32(-5), true, int64(-1))
	f.Add(int32(8), int32(100), "1.5Gi", "1Ti", int32(101), false, int64(1<<40))
	f.Fuzz(func(t *testing.T, cores, fraction int32, memory, storage string, replicas int32, cluster bool, streaming int64) {
		mem, err := resource.ParseQuantity(memory)
		if err != nil {
			return
		}
		vol, err := resource.ParseQuantity(storage)
		if err != nil {
			return
		}
		sr := instance("ns", "fuzz")
		sr.Spec.Frontend.CPU = v1alpha1.CPUSpec{Cores: cores, CoreFraction: fraction}
		sr.Spec.Backend.Memory.Size = mem
		sr.Spec.Backend.PersistentVolumeClaim.Size = vol
		sr.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: &streaming}
		sr.Spec.Type, sr.Spec.Backend.Replicas = v1alpha1.TypeStandalone, nil
		if cluster {
			sr.Spec.Type, sr.Spec.Backend.Replicas = v1alpha1.TypeCluster, &replicas
		}
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}})
		r := out.Results[0]
		if r.Valid() != (r.Entry != nil) {
			t.Fatalf("valid=%v but entry=%v", r.Valid(), r.Entry != nil)
		}
		if r.Entry == nil {
			return
		}
		if err := r.Entry.AgentConfig.Validate(); err != nil {
			t.Fatalf("accepted instance has an unusable agent config: %v", err)
		}
		if r.Entry.Frontend.JavaHeapMb < 256 || r.Entry.Backend.MemLimitBytes < 1 || r.Entry.Configuration.DefaultReplicationNum < 1 {
			t.Fatalf("accepted instance has impossible derived values: %+v", r.Entry)
		}
	})
}
