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

package instances

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func instance(namespace, name, class string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.StarrocksKind,
		"metadata": map[string]any{"namespace": namespace, "name": name,
			"labels": map[string]any{"big": strings.Repeat("x", 63)}},
		"spec": map[string]any{"starrocksClassName": class, "type": "Standalone"},
	}}
	u.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, len(name), 0, time.UTC)))
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
		u.SetFinalizers([]string{"example.com/keep"})
	}
	return u
}

func namespace(name string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
	}
	return u
}

// started is a Source over a fake API server holding objs, its caches
// filled.
func started(t *testing.T, objs ...*unstructured.Unstructured) *Source {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.StarrocksGVR: v1alpha1.StarrocksKind + "List",
		namespacesGVR:         "NamespaceList",
	})
	for _, o := range objs {
		gvr := v1alpha1.StarrocksGVR
		if o.GetKind() == "Namespace" {
			gvr = namespacesGVR
		}
		if err := client.Tracker().Create(gvr, o, o.GetNamespace()); err != nil {
			t.Fatal(err)
		}
	}
	s := New(client)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for !s.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("caches not synced within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

func view(t *testing.T, s *Source, c desired.Placed, remember bool, admit bool) View {
	t.Helper()
	var got View
	if err := s.Decide(context.Background(), c, "small", remember, func(v View) bool { got = v; return admit }); err != nil {
		t.Fatal(err)
	}
	return got
}

func keys(ps []desired.Placed) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return fmt.Sprint(sortedStrings(out))
}

func sortedStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestUsersListsTheInstancesOfTheClassSorted(t *testing.T) {
	s := started(t,
		instance("team-b", "warehouse", "small", false),
		instance("team-a", "dev", "small", false),
		instance("team-a", "other", "large", false),
		instance("team-c", "going", "small", true),
	)
	got, err := s.Users(context.Background(), "small")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[team-a/dev team-b/warehouse]" {
		t.Fatalf("Users(small) = %v, want [team-a/dev team-b/warehouse] (other classes and instances being deleted left out)", got)
	}
}

// The view counts as the hooks do: an instance being deleted, or in a
// namespace being deleted, is ending and holds no place; its names still
// count in its namespace.
func TestDecideCountsWhatTheHooksCount(t *testing.T) {
	s := started(t,
		namespace("team-a", false), namespace("gone", true),
		instance("team-a", "dev", "small", false),
		instance("team-a", "going", "small", true),
		instance("gone", "left", "small", false),
		instance("team-b", "warehouse", "large", false),
	)
	v := view(t, s, desired.Placed{Namespace: "team-a", Name: "new"}, false, true)
	if got := keys(v.Live); got != "[team-a/dev team-b/warehouse]" {
		t.Errorf("Live = %s, want [team-a/dev team-b/warehouse]", got)
	}
	if fmt.Sprint(v.Names) != "[dev going]" {
		t.Errorf("Names = %v, want [dev going]", v.Names)
	}
}

// Only what the checks read is kept of a tenant's object.
func TestTheCacheKeepsNoLabels(t *testing.T) {
	s := started(t, instance("team-a", "dev", "small", false))
	for _, obj := range s.starrocks.GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		if u.GetLabels() != nil || u.Object["status"] != nil || len(u.Object["spec"].(map[string]any)) != 1 {
			t.Errorf("cached %v, want namespace, name, UID, times and the class only", u.Object)
		}
	}
}

// An admitted CREATE counts until the cache shows it, a dry run never, an
// admission the apiserver never stored no longer after PendingFor.
func TestDecideRemembersWhatItAdmitted(t *testing.T) {
	s := started(t)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	a := desired.Placed{Namespace: "team-a", Name: "a"}
	view(t, s, desired.Placed{Namespace: "team-a", Name: "dry"}, false, true)
	view(t, s, desired.Placed{Namespace: "team-a", Name: "refused"}, true, false)
	view(t, s, a, true, true)
	if got := keys(view(t, s, desired.Placed{Namespace: "team-a", Name: "b"}, false, false).Live); got != "[team-a/a]" {
		t.Fatalf("Live after admitting a = %s, want [team-a/a] (not the dry run, not the refused one)", got)
	}
	if users, _ := s.Users(context.Background(), "small"); fmt.Sprint(users) != "[team-a/a]" {
		t.Fatalf("Users(small) after admitting a = %v, want [team-a/a]: a class deleted right after its first instance's CREATE is in use", users)
	}
	clock = clock.Add(PendingFor + time.Second)
	if got := view(t, s, desired.Placed{Namespace: "team-a", Name: "b"}, false, false).Live; len(got) != 0 {
		t.Fatalf("Live after PendingFor = %v, want none", keys(got))
	}
}

// Decisions run one at a time: of CREATEs arriving together, each sees
// those admitted before it.
func TestDecideSerialises(t *testing.T) {
	s := started(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := range 50 {
		wg.Go(func() {
			_ = s.Decide(context.Background(), desired.Placed{Namespace: "team-a", Name: fmt.Sprintf("db%02d", i)}, "small", true, func(v View) bool {
				ok := len(v.Live) < 2
				if ok {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
				return ok
			})
		})
	}
	wg.Wait()
	if admitted != 2 {
		t.Fatalf("%d admitted, want 2", admitted)
	}
}
