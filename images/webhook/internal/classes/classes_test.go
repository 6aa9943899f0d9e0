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
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

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
