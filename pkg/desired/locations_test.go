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
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// TestLocationConflictsAsEveryPairCompared: the conflicts found through
// the locations' "/"-ended heads are those of comparing every pair with
// classrules.LocationsOverlap in age order, the refused ones left out,
// naming the oldest kept instance: on instances whose prefixes nest in
// each other's locations (and in the same bucket and another), with
// creation times that tie.
func TestLocationConflictsAsEveryPairCompared(t *testing.T) {
	everyPair := func(objs []*v1alpha1.Starrocks) map[string]string {
		sorted := append([]*v1alpha1.Starrocks(nil), objs...)
		sort.Slice(sorted, func(i, j int) bool {
			a, b := sorted[i], sorted[j]
			if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
				return a.CreationTimestamp.Before(&b.CreationTimestamp)
			}
			return Key(a.Namespace, a.Name) < Key(b.Namespace, b.Name)
		})
		out := map[string]string{}
		for j, b := range sorted {
			for _, a := range sorted[:j] {
				if _, refused := out[Key(a.Namespace, a.Name)]; refused {
					continue
				}
				if classrules.LocationsOverlap(classrules.StorageLocation(a), classrules.StorageLocation(b)) {
					out[Key(b.Namespace, b.Name)] = Key(a.Namespace, a.Name)
					break
				}
			}
		}
		return out
	}
	rnd := rand.New(rand.NewSource(1))
	segments := []string{"ns", "db", "x", "teams"}
	conflicts := 0
	for round := range 200 {
		var objs []*v1alpha1.Starrocks
		for i := range 2 + rnd.Intn(12) {
			sr := sharedDataInstance(segments[rnd.Intn(2)], fmt.Sprintf("db-%d", i), fmt.Sprintf("%08d-4f50-6172-8394-a5b6c7d8e9f0", rnd.Intn(3)))
			sr.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1+rnd.Intn(4), 0, 0, 0, 0, time.UTC))
			var prefix []string
			if len(objs) > 0 && rnd.Intn(2) == 0 {
				// Into the location of another, or beside it.
				other := objs[rnd.Intn(len(objs))]
				prefix = append(prefix, other.Spec.Storage.ObjectStorage.Prefix, other.Namespace, other.Name)
				if rnd.Intn(3) > 0 {
					prefix = append(prefix, string(other.UID))
				}
			}
			for range rnd.Intn(3) {
				prefix = append(prefix, segments[rnd.Intn(len(segments))])
			}
			sr.Spec.Storage.ObjectStorage.Prefix = strings.Trim(strings.Join(prefix, "/"), "/")
			if rnd.Intn(6) == 0 {
				sr.Spec.Storage.ObjectStorage.Bucket = "other"
			}
			objs = append(objs, sr)
		}
		want := everyPair(objs)
		got := map[string]string{}
		for key, vs := range LocationConflicts(objs) {
			require.Len(t, vs, 1)
			_, older, ok := strings.Cut(vs[0].Message, "older instance (Starrocks ")
			require.True(t, ok, vs[0].Message)
			got[key], _, _ = strings.Cut(older, ")")
		}
		require.Equal(t, want, got, "round %d", round)
		conflicts += len(want)
	}
	assert.Greater(t, conflicts, 100, "the rounds must have conflicts to compare")
}

// BenchmarkLocationConflicts is the overlap rule over 100 and 2000
// shared-data instances (2000: the largest instances.maxCount), every
// prefix "teams" and one instance's prefix reaching into the oldest one's
// location. Reported: the time per instance, and its ratio to the same at
// 100 instances measured in the same run. Comparing every pair made it 76
// (1.5 s a run at 2000); the lookups by "/"-ended heads make it about 4
// (8 ms), the rest being the sort and the larger maps.
func BenchmarkLocationConflicts(b *testing.B) {
	perInstance := map[int]float64{}
	for _, n := range []int{100, 2000} {
		objs := make([]*v1alpha1.Starrocks, n)
		for i := range objs {
			objs[i] = sharedDataInstance(fmt.Sprintf("ns-%d", i%50), fmt.Sprintf("db-%d", i), fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
			objs[i].CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC))
		}
		objs[n-1].Spec.Storage.ObjectStorage.Prefix = "teams/ns-0/db-0/" + string(objs[0].UID)
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			start := time.Now()
			for range b.N {
				if got := LocationConflicts(objs); len(got) != 1 {
					b.Fatalf("%d conflicts, want 1", len(got))
				}
			}
			perInstance[n] = float64(time.Since(start).Nanoseconds()) / float64(b.N) / float64(n)
			b.ReportMetric(perInstance[n], "ns/instance")
			if n != 100 && perInstance[100] > 0 {
				b.ReportMetric(perInstance[n]/perInstance[100], "ratio")
			}
		})
	}
}
