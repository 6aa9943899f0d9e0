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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func placed(namespace, name string, second int) Placed {
	return Placed{Namespace: namespace, Name: name, Created: metav1.NewTime(time.Date(2026, 12, 1, 10, 0, second, 0, time.UTC))}
}

func TestAdmitCountsAsTheHooksDo(t *testing.T) {
	tests := []struct {
		name       string
		objs       []Placed
		c          Placed
		perNS, max int
		want       Admission
	}{
		{name: "instances past their namespace's share take no place under maxCount",
			objs: []Placed{placed("a", "one", 1), placed("a", "two", 2), placed("a", "three", 3)},
			c:    placed("b", "first", 9), perNS: 1, max: 3,
			want: Admission{Allowed: true, InNamespace: 0, Managed: 1}},
		{name: "the namespace's share is full",
			objs: []Placed{placed("a", "one", 1), placed("a", "two", 2)},
			c:    placed("a", "new", 9), perNS: 2, max: 10,
			want: Admission{NamespaceFull: true, InNamespace: 2, Managed: 2}},
		{name: "the cluster is full",
			objs: []Placed{placed("a", "one", 1), placed("b", "two", 2)},
			c:    placed("c", "new", 9), perNS: 2, max: 2,
			want: Admission{InNamespace: 0, Managed: 2}},
		{name: "an instance sharing an object name with an older one takes no place",
			objs: []Placed{placed("a", "db", 1), placed("a", "db-be", 2)},
			c:    placed("a", "other", 9), perNS: 2, max: 10,
			want: Admission{Allowed: true, InNamespace: 1, Managed: 1}},
		// Creation times have whole seconds: in a burst, one made in the
		// same second as an admitted one and sorted before it would take
		// its place in the hooks' count.
		{name: "a tie that would displace an instance with a place",
			objs: []Placed{placed("a", "one", 1), placed("a", "x9", 5)},
			c:    placed("a", "x1", 5), perNS: 2, max: 10,
			want: Admission{NamespaceFull: true, InNamespace: 2, Managed: 2}},
		{name: "no limits", objs: []Placed{placed("a", "one", 1)}, c: placed("a", "two", 2),
			want: Admission{Allowed: true, InNamespace: 1, Managed: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Admit(tt.objs, tt.c, tt.perNS, tt.max))
		})
	}
}

// What Admit admits, Compute manages: however many arrive in one second,
// the instances admitted one after the other all get a place.
func TestAdmittedInstancesAreTheManagedOnes(t *testing.T) {
	var objs []Placed
	for _, n := range []string{"k", "c", "x", "a", "m", "b", "z", "d"} {
		c := placed("team", n, 7)
		if Admit(objs, c, 3, 5).Allowed {
			objs = append(objs, c)
		}
	}
	assert.Len(t, objs, 3)
	assert.Empty(t, Exclusions(objs, 3, 5))
}
