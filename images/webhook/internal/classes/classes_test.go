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

package classes

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func instance(namespace, name, class string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.StarrocksKind,
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec":     map[string]any{"starrocksClassName": class},
	}}
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
		u.SetFinalizers([]string{"example.com/keep"})
	}
	return u
}

func newFake(t *testing.T, objs ...*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.StarrocksGVR:      v1alpha1.StarrocksKind + "List",
		v1alpha1.StarrocksClassGVR: v1alpha1.StarrocksClassKind + "List",
	})
	// Added with their resource: the fake would guess "starrockss" from the kind.
	for _, o := range objs {
		if err := client.Tracker().Create(v1alpha1.StarrocksGVR, o, o.GetNamespace()); err != nil {
			t.Fatal(err)
		}
	}
	return client
}

func TestUsersListsTheInstancesOfTheClassSorted(t *testing.T) {
	client := newFake(t,
		instance("team-b", "warehouse", "small", false),
		instance("team-a", "dev", "small", false),
		instance("team-a", "other", "large", false),
		instance("team-c", "going", "small", true),
	)
	got, err := New(client).Users(context.Background(), "small")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[team-a/dev team-b/warehouse]" {
		t.Fatalf("Users(small) = %v, want [team-a/dev team-b/warehouse] (other classes and instances being deleted left out)", got)
	}
}

func TestCountLeavesOutInstancesBeingDeleted(t *testing.T) {
	client := newFake(t,
		instance("team-b", "warehouse", "small", false),
		instance("team-a", "other", "large", false),
		instance("team-c", "going", "small", true),
	)
	n, err := New(client).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("Count() = %d, want 2 (every class, the instance being deleted left out)", n)
	}
}

func TestGetAnswersNotFoundForANameNoObjectCanHave(t *testing.T) {
	for _, name := range []string{"", "Upper", "a/b", "-x"} {
		client := newFake(t)
		_, err := New(client).Get(context.Background(), name)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", name, err)
		}
		// client-go refuses an empty name with an error the handlers would
		// take for "cannot decide": no request may be sent.
		if n := len(client.Actions()); n != 0 {
			t.Errorf("Get(%q) sent %d requests, want none", name, n)
		}
	}
}
