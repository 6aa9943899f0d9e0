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
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func TestInstancesWhoseObjectNamesMeetCollide(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want string // "" : no shared name
	}{
		{"foo", "foo-be", "StatefulSet d8ms-sr-foo-be"},
		{"foo", "foo-agent", "Secret d8ms-sr-foo-agent-credentials"},
		{"foo", "foo-ca", "Certificate d8ms-sr-foo-ca"},
		{"foo", "foo-fe", ""}, // d8ms-sr-foo-fe-headless is no name of foo-fe
		{"foo", "foo-fe-headless", "Service d8ms-sr-foo-fe-headless"},
		{"foo", "foo-be-headless", "Service d8ms-sr-foo-be-headless"},
		// foo-config's ConfigMap is d8ms-sr-foo-config-config; its
		// StatefulSet d8ms-sr-foo-config is no ConfigMap.
		{"foo", "foo-config", ""},
		{"foo", "foo-credentials", ""},
		{"foo", "foo-tls", ""},
		{"foo", "foo-keystore", ""},
		// The pods of foo's BE StatefulSet are those of foo-be's FE one.
		{"a-be", "a", "StatefulSet d8ms-sr-a-be"},
		// Names of other kinds never meet: a Service and a Pod may share one.
		{"db", "db-1", ""},
		{"db", "db-0", ""},
		{"foo", "bar", ""},
		{"foo", "foobar", ""},
	} {
		w, ok := Shared(tt.a, tt.b)
		if tt.want == "" {
			assert.False(t, ok, "%s and %s share %s", tt.a, tt.b, w)
			continue
		}
		if assert.True(t, ok, "%s and %s", tt.a, tt.b) {
			assert.Equal(t, tt.want, w.String(), "%s and %s", tt.a, tt.b)
		}
		w2, ok := Shared(tt.b, tt.a)
		assert.True(t, ok && w2.Kind == w.Kind, "%s and %s: symmetric", tt.b, tt.a)
	}
}

func TestPodAndClaimFamiliesMeet(t *testing.T) {
	// The FE pods of "a-be" are d8ms-sr-a-be-<n>, those of a's BE too.
	pods := func(name string) ObjectName {
		for _, n := range ObjectNames(name) {
			if n.Kind == "Pod" && n.Name == "d8ms-sr-a-be" {
				return n
			}
		}
		t.Fatalf("%s has no pod family d8ms-sr-a-be", name)
		return ObjectName{}
	}
	w, ok := overlap(pods("a"), pods("a-be"))
	require.True(t, ok)
	assert.Equal(t, "Pod d8ms-sr-a-be-<ordinal>", w.String())
	assert.True(t, Has(ObjectNames("a"), "Pod", "d8ms-sr-a-be-12"))
	assert.False(t, Has(ObjectNames("a"), "Pod", "d8ms-sr-a-be-x"))
	assert.True(t, Has(ObjectNames("a"), "PersistentVolumeClaim", "storage-d8ms-sr-a-be-2"))
	assert.True(t, Has(ObjectNames("a"), "Secret", UserSecretName("a", "analyst")))

	_, ok = overlap(ObjectName{Kind: "Pod", Name: "x-1", Form: Ordinals}, ObjectName{Kind: "Pod", Name: "x", Form: Ordinals})
	assert.False(t, ok, "x-1-<n> and x-<n> never meet")
	w, ok = overlap(ObjectName{Kind: "Pod", Name: "x", Form: Ordinals}, ObjectName{Kind: "Pod", Name: "x-1", Form: Prefixed})
	assert.True(t, ok)
	assert.Equal(t, "x-10", w.Name)
	_, ok = overlap(ObjectName{Kind: "Pod", Name: "x", Form: Ordinals}, ObjectName{Kind: "Pod", Name: "x-b", Form: Prefixed})
	assert.False(t, ok)
}

// Conflicts compares only names of which one starts with the other: every
// object name must lead with a fixed part and then d8ms-sr-<instance name>.
func TestObjectNamesLeadWithTheInstanceName(t *testing.T) {
	for _, n := range ObjectNames("x") {
		rest, ok := strings.CutPrefix(n.Name, "d8ms-sr-x")
		if !ok {
			if n.Kind == "PersistentVolumeClaim" {
				_, rest, ok = strings.Cut(n.Name, "-d8ms-sr-x")
				ok = ok && (strings.HasPrefix(n.Name, "meta-") || strings.HasPrefix(n.Name, "storage-") || strings.HasPrefix(n.Name, "cache-"))
			}
		}
		assert.True(t, ok, "%s does not lead with d8ms-sr-x", n)
		assert.True(t, rest == "" || rest[0] == '-' || rest[0] == '.', "%s: the instance name ends at a separator", n)
	}
}

func TestConflictWithNamesTheOtherInstance(t *testing.T) {
	c, ok := ConflictWith("foo-be", []string{"bar", "foo", "foo-be"})
	require.True(t, ok)
	assert.Equal(t, "foo", c.Other)
	assert.Equal(t, "StatefulSet d8ms-sr-foo-be", c.Object.String())
	_, ok = ConflictWith("foo-be", []string{"bar", "foo-be", "foox"})
	assert.False(t, ok, "the instance itself is no conflict")
}

func TestComputeGivesCollidingNamesOnlyToTheOlder(t *testing.T) {
	objs := []*v1alpha1.Starrocks{
		createdAt(instance("team", "a"), 5),
		createdAt(instance("team", "a-be"), 1), // older: it keeps its names
		createdAt(instance("team", "a-be-headless"), 9),
		createdAt(instance("other", "a"), 7), // another namespace: no conflict
	}
	out := Compute(Input{Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()},
		LastValid: map[string]*Instance{"team/a": {Name: "a", Namespace: "team", UID: "uid-a", Generation: 1}}})
	got := map[string]*Conflict{}
	for _, r := range out.Results {
		got[r.Key] = r.Conflict
		if r.Conflict != nil {
			assert.Nil(t, r.Entry, "%s: no entry, not even its last valid one", r.Key)
			assert.False(t, r.Current, r.Key)
			assert.True(t, r.Excluded(), r.Key)
		} else {
			assert.NotNil(t, r.Entry, r.Key)
		}
	}
	assert.Nil(t, got["team/a-be"])
	assert.Nil(t, got["other/a"])
	require.NotNil(t, got["team/a"])
	assert.Equal(t, Conflict{Other: "a-be", Object: ObjectName{Kind: "StatefulSet", Name: "d8ms-sr-a-be"}}, *got["team/a"])
	// a-be-headless shares d8ms-sr-a-be-headless with a, which has no
	// entry: still the older one's name (as the webhook would have said).
	require.NotNil(t, got["team/a-be-headless"])
	assert.Equal(t, "a", got["team/a-be-headless"].Other)
	assert.Len(t, out.Instances, 2)

	t.Run("ties go by name", func(t *testing.T) {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{createdAt(instance("team", "a-be"), 1), createdAt(instance("team", "a"), 1)}, Classes: []*v1alpha1.StarrocksClass{class()}})
		for _, r := range out.Results {
			assert.Equal(t, r.Object.Name == "a-be", r.Conflict != nil, r.Key)
		}
	})
}

func TestComputeRendersOnlyTheOldestPerNamespace(t *testing.T) {
	objs := []*v1alpha1.Starrocks{
		createdAt(instance("greedy", "a"), 10),
		createdAt(instance("greedy", "b"), 1),
		createdAt(instance("greedy", "c"), 2),
		createdAt(instance("modest", "z"), 30),
	}
	out := Compute(Input{Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()}, MaxPerNamespace: 2, MaxInstances: 3})
	for _, r := range out.Results {
		switch r.Key {
		case "greedy/a":
			assert.Equal(t, 2, r.NamespaceOverLimit, r.Key)
			assert.Nil(t, r.Entry, r.Key)
		default:
			assert.Zero(t, r.NamespaceOverLimit, r.Key)
			assert.Zero(t, r.OverLimit, "%s: an instance past its namespace's share takes no place under instances.maxCount", r.Key)
			assert.NotNil(t, r.Entry, r.Key)
		}
	}

	t.Run("a colliding instance takes no place in the share", func(t *testing.T) {
		objs := []*v1alpha1.Starrocks{
			createdAt(instance("team", "a"), 1),
			createdAt(instance("team", "a-be"), 2),
			createdAt(instance("team", "b"), 3),
		}
		out := Compute(Input{Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()}, MaxPerNamespace: 2})
		assert.Len(t, out.Instances, 2)
		for _, r := range out.Results {
			assert.Zero(t, r.NamespaceOverLimit, r.Key)
		}
	})

	t.Run("no share renders every instance", func(t *testing.T) {
		assert.Len(t, Compute(Input{Instances: objs, Classes: []*v1alpha1.StarrocksClass{class()}}).Instances, 4)
	})
}

// concrete are names the objects of instance name take: each exact name,
// the first ordinals of each family and a few user Secrets.
func concrete(name string) map[string]bool {
	out := map[string]bool{}
	for _, n := range ObjectNames(name) {
		switch n.Form {
		case Exact:
			out[n.Kind+" "+n.Name] = true
		case Ordinals:
			for i := range 12 {
				out[n.Kind+" "+n.Name+"-"+strconv.Itoa(i)] = true
			}
		case Prefixed:
			for _, u := range []string{"analyst", "etl-job", "a1"} {
				out[n.Kind+" "+n.Name+u] = true
			}
		}
	}
	return out
}

// The collision rule, with its shortcut of comparing only nested names,
// agrees with comparing the names themselves for every pair of instance
// names built from the module's suffixes.
func TestSharedAgreesWithEveryConcreteName(t *testing.T) {
	parts := []string{"a", "be", "fe", "ca", "agent", "headless", "config", "1", "0", "user", "credentials"}
	var names []string
	for _, x := range parts {
		names = append(names, x)
		for _, y := range parts {
			names = append(names, x+"-"+y)
			names = append(names, x+y)
			for _, z := range []string{"be", "headless", "credentials", "1"} {
				names = append(names, x+"-"+y+"-"+z)
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	owners := map[string][]int{} // concrete name -> instances taking it
	for i, n := range names {
		for s := range concrete(n) {
			owners[s] = append(owners[s], i)
		}
	}
	var objs []*v1alpha1.Starrocks
	for i, n := range names {
		objs = append(objs, createdAt(instance("team", n), i%60))
	}
	byAge := make([]*v1alpha1.Starrocks, len(objs))
	copy(byAge, objs)
	sort.SliceStable(byAge, func(i, j int) bool { return byAge[i].CreationTimestamp.Before(&byAge[j].CreationTimestamp) })
	rank := map[string]int{}
	for i, sr := range byAge {
		rank[sr.Name] = i
	}

	common := map[[2]int]string{} // pairs of instances that take one name, and the name
	collides := map[string]bool{} // the newer of each such pair
	for s, is := range owners {
		for x, i := range is {
			for _, j := range is[x+1:] {
				if i != j {
					common[[2]int{min(i, j), max(i, j)}] = s
					newer := names[i]
					if rank[names[j]] > rank[newer] {
						newer = names[j]
					}
					collides[newer] = true
				}
			}
		}
	}
	for pair, s := range common {
		a, b := names[pair[0]], names[pair[1]]
		if !mayShare(a, b) {
			t.Errorf("%s and %s both take %s, but the shortcut does not compare them", a, b, s)
		}
		if _, ok := Shared(a, b); !ok {
			t.Errorf("%s and %s both take %s; Shared says they do not collide", a, b, s)
		}
	}
	for i, a := range names {
		for j, b := range names {
			if i < j && a != b && mayShare(a, b) && common[[2]int{i, j}] == "" {
				if w, ok := Shared(a, b); ok {
					t.Errorf("%s and %s: Shared says they share %s, no name of theirs meets", a, b, w)
				}
			}
		}
	}
	placed := make([]Placed, len(byAge))
	for i, sr := range byAge {
		placed[i] = PlacedOf(sr)
	}
	got := conflicts(placed)
	for _, n := range names {
		if _, ok := got[Key("team", n)]; ok != collides[n] {
			t.Errorf("%s: conflicts says %v, the names say %v", n, ok, collides[n])
		}
	}
	if len(collides) == 0 {
		t.Fatal("no collision among the names: the test checks nothing")
	}
}
