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

	"github.com/stretchr/testify/assert"

	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

func TestFrontendHeap(t *testing.T) {
	for _, tt := range []struct {
		name   string
		memory int64
		heapMb int64
	}{
		{"at the FE floor 1 GiB stays outside the heap", 2 * gib, 1024},
		{"4 GiB: heap and headroom meet", 4 * gib, 3072},
		{"large pods give the heap three quarters", 64 * gib, 49152},
		{"never below the smallest heap an FE starts with", 512 * mib, 256},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.heapMb, JavaHeapMb(tt.memory))
		})
	}
}

func TestBackendMemory(t *testing.T) {
	for _, tt := range []struct {
		name       string
		memory     int64
		heapMb     int64
		memLimitMb int64
	}{
		{"at the BE floor: a tenth for the JVM, 512 MiB headroom", 4 * gib, 409, 4096 - 409 - 512},
		{"8 GiB", 8 * gib, 819, 8192 - 819 - 819},
		{"the heap stops at 4 GiB", 64 * gib, 4096, 65536 - 4096 - 6553},
		{"the headroom grows with the pod", 512 * gib, 4096, 524288 - 4096 - 52428},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := BackendMemoryFor(tt.memory)
			assert.Equal(t, tt.heapMb, got.JavaHeapMb)
			assert.InDelta(t, tt.memLimitMb, got.MemLimitBytes/mib, 1)
		})
	}
}

// TestBackendMemoryFitsTheLimit: for every size a class may allow, mem_limit
// plus the JVM heap leave at least 512 MiB of the pod's memory limit, and
// mem_limit keeps most of it.
func TestBackendMemoryFitsTheLimit(t *testing.T) {
	for m := classrules.BackendMemoryFloor.Value(); m <= 1<<40; m += 256 * mib {
		got := BackendMemoryFor(m)
		headroom := m - got.MemLimitBytes - got.JavaHeapMb*mib
		if headroom < 512*mib || got.JavaHeapMb < 256 || got.MemLimitBytes < m*3/4 {
			t.Fatalf("memory %d MiB: mem_limit %d MiB, heap %d MiB, headroom %d MiB", m/mib, got.MemLimitBytes/mib, got.JavaHeapMb, headroom/mib)
		}
	}
}
