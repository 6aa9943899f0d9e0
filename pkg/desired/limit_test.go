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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func createdAt(sr *v1alpha1.Starrocks, minute int) *v1alpha1.Starrocks {
	sr.CreationTimestamp = metav1.NewTime(time.Date(2026, 12, 1, 10, minute, 0, 0, time.UTC))
	sr.UID = types.UID("uid-" + sr.Name)
	return sr
}

func TestComputeRendersOnlyTheOldestMaxInstances(t *testing.T) {
	// Sorted by name the newest ("a-new") comes first: the limit must go
	// by creation time, and ties by namespace/name.
	objs := []*v1alpha1.Starrocks{
		createdAt(instance("team", "a-new"), 30),
		createdAt(instance("team", "z-old"), 1),
		createdAt(instance("team", "b-tied"), 2),
		createdAt(instance("team", "c-tied"), 2),
	}
	kept := &Instance{Name: "a-new", Namespace: "team", UID: "uid-a-new", Generation: 1}
	out := Compute(Input{
		Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()}, MaxInstances: 2,
		LastValid: map[string]*Instance{"team/a-new": kept},
	})
	var names []string
	for _, e := range out.Instances {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"b-tied", "z-old"}, names, "the two oldest, in values order")
	require.Len(t, out.Results, 4)
	for _, r := range out.Results {
		switch r.Object.Name {
		case "a-new", "c-tied":
			assert.Equal(t, 2, r.OverLimit, r.Key)
			assert.Nil(t, r.Entry, "%s: beyond the limit nothing is rendered, not even its last valid entry", r.Key)
			assert.False(t, r.Current, r.Key)
		default:
			assert.Zero(t, r.OverLimit, r.Key)
			assert.NotNil(t, r.Entry, r.Key)
		}
	}

	t.Run("an instance beyond the limit is still validated", func(t *testing.T) {
		bad := createdAt(instance("team", "d-bad"), 40)
		bad.Spec.Frontend.CPU.Cores = 64
		out := Compute(Input{Instances: append(objs, bad), Classes: []*v1alpha1.StarrocksClass{class()}, MaxInstances: 2})
		for _, r := range out.Results {
			if r.Object.Name == "d-bad" {
				assert.NotEmpty(t, r.Violations)
				assert.Equal(t, 2, r.OverLimit)
			}
		}
	})

	t.Run("no limit and a limit not reached render every instance", func(t *testing.T) {
		assert.Len(t, Compute(Input{Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()}}).Instances, 4)
		assert.Len(t, Compute(Input{Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()}, MaxInstances: 4}).Instances, 4)
	})
}
