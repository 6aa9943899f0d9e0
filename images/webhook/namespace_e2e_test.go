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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// TestEndToEndNamespaceRules runs the real webhook with
// --max-per-namespace=2 (the module setting instances.maxPerNamespace)
// against a real kube-apiserver: a Starrocks whose objects would take the
// name of another instance's objects in its namespace is refused, naming
// both, as is the third Starrocks of a namespace; other namespaces are not
// affected.
func TestEndToEndNamespaceRules(t *testing.T) {
	const team, other = "team-a", "team-b"
	ctx, dyn := limitsCluster(t, "--max-per-namespace=2", team, other)
	in := func(namespace, name string, edit func(*v1alpha1.Starrocks)) *v1alpha1.Starrocks {
		return instance(name, func(sr *v1alpha1.Starrocks) { sr.Namespace = namespace; edit(sr) })
	}
	refused := func(sr *v1alpha1.Starrocks, message string) {
		t.Helper()
		_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(sr.Namespace).Create(ctx, toUnstructured(t, sr), metav1.CreateOptions{})
		want := `admission webhook "` + validateSRName + `" denied the request: ` + message
		if err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
			t.Fatalf("%s/%s: got %v (reason %q)\nwant Forbidden: %s", sr.Namespace, sr.Name, err, apierrors.ReasonForError(err), want)
		}
	}
	// What kubectl prints is what the docs show.
	shown := func(docs []string, message string) {
		t.Helper()
		line := "Error from server (Forbidden): admission webhook \"" + validateSRName + "\" denied the request: " + message + "\n"
		for _, doc := range docs {
			text, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(text), "\n"+line) && !strings.Contains(string(text), " "+line) {
				t.Errorf("docs/%s does not show what kubectl prints:\n  %s", doc, line)
			}
		}
	}

	create(ctx, t, dyn, v1alpha1.StarrocksGVR, team, in(team, "dev", func(*v1alpha1.Starrocks) {}))
	// dev-be's FE StatefulSet (and its pods) would be dev's BE StatefulSet.
	conflict := `Starrocks "team-a/dev-be" cannot be created: Starrocks "dev" of this namespace already uses the name of StatefulSet d8ms-sr-dev-be, ` +
		`which this instance would use too (two instances of a namespace never share an object name); choose another name.`
	refused(in(team, "dev-be", func(*v1alpha1.Starrocks) {}), conflict)
	shown([]string{"USAGE.md", "USAGE.ru.md"}, conflict)
	// The same name in another namespace collides with nothing.
	create(ctx, t, dyn, v1alpha1.StarrocksGVR, other, in(other, "dev-be", func(*v1alpha1.Starrocks) {}))

	// Held by a finalizer, so it lingers with a deletionTimestamp below.
	create(ctx, t, dyn, v1alpha1.StarrocksGVR, team, in(team, "held", func(sr *v1alpha1.Starrocks) { sr.Finalizers = []string{"example.com/hold"} }))
	share := `Starrocks "team-a/third" cannot be created: namespace "team-a" already has 2 Starrocks instances, the most the module manages in one namespace ` +
		`(ModuleConfig managed-starrocks settings.instances.maxPerNamespace: 2); ask your cluster admin.`
	refused(in(team, "third", func(*v1alpha1.Starrocks) {}), share)
	// The docs show it with a share of 20.
	shown([]string{"USAGE.md", "USAGE.ru.md", "ADMIN_GUIDE.md", "ADMIN_GUIDE.ru.md"},
		strings.NewReplacer("has 2 Starrocks", "has 20 Starrocks", "maxPerNamespace: 2)", "maxPerNamespace: 20)").Replace(share))
	// Another namespace has its own share.
	create(ctx, t, dyn, v1alpha1.StarrocksGVR, other, in(other, "third", func(*v1alpha1.Starrocks) {}))

	// An instance being deleted frees its place in the share, not its
	// names: its objects stay until garbage collection removes them.
	if err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(team).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete held: %v", err)
	}
	refused(in(team, "held-be", func(*v1alpha1.Starrocks) {}), `Starrocks "team-a/held-be" cannot be created: Starrocks "held" of this namespace already uses the name of StatefulSet d8ms-sr-held-be, `+
		`which this instance would use too (two instances of a namespace never share an object name); choose another name.`)
	createOnceDeletionShown(ctx, t, dyn, team, in(team, "third", func(*v1alpha1.Starrocks) {}))
}
