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
	"strconv"
	"testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// BenchmarkExclusions is the cost of the collision and share rules for 1000
// instances of one namespace named db and db-1 … db-999: every name nests
// in another (db-1 starts db-10 … db-19 and db-100 … db-199), and db is
// compared with every other one.
func BenchmarkExclusions(b *testing.B) {
	objs := make([]*v1alpha1.Starrocks, 1000)
	objs[0] = createdAt(instance("team", "db"), 0)
	for i := 1; i < len(objs); i++ {
		objs[i] = createdAt(instance("team", "db-"+strconv.Itoa(i)), i%60)
	}
	b.ResetTimer()
	for b.Loop() {
		if x := exclusions(objs, 500, 1000); len(x) != 500 {
			b.Fatalf("%d excluded, want 500", len(x))
		}
	}
}

// BenchmarkAdmit is what the webhook spends, under its lock, on one CREATE
// in a cluster of 2000 instances in 200 namespaces with both limits set.
func BenchmarkAdmit(b *testing.B) {
	objs := make([]Placed, 2000)
	for i := range objs {
		objs[i] = PlacedOf(createdAt(instance("team-"+strconv.Itoa(i%200), "db-"+strconv.Itoa(i)), i%60))
	}
	c := PlacedOf(createdAt(instance("team-7", "new"), 59))
	b.ResetTimer()
	for b.Loop() {
		if a := Admit(objs, c, 20, 2500); !a.Allowed {
			b.Fatalf("refused: %+v", a)
		}
	}
}
