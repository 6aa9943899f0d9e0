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
	"encoding/json"
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// fakeResources is the framework's fake cluster under the resource names
// the API server serves: the framework guesses "starrockses" for Starrocks.
type fakeResources struct{ dynamic.Interface }

func (f fakeResources) Resource(r schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	if r.Resource == "starrocks" {
		r.Resource = "starrockses"
	}
	return f.Interface.Resource(r)
}

func fakeClient(f *framework.HookExecutionConfig) *dynamicfake.FakeDynamicClient {
	return f.KubeClient().(*dynamicfake.FakeDynamicClient)
}

// refuse makes the fake API server refuse a verb on one object (every
// object of the resource for name ""), as a ResourceQuota or an admission
// policy would: 403 with its words.
func refuse(f *framework.HookExecutionConfig, verb, resource, namespace, name, words string) {
	fakeClient(f).PrependReactor(verb, resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != namespace {
			return false, nil, nil
		}
		if n := actionName(a); name != "" && n != name {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, name, errString(words))
	})
}

type errString string

func (e errString) Error() string { return string(e) }

func actionName(a k8stesting.Action) string {
	switch a := a.(type) {
	case k8stesting.PatchAction:
		return a.GetName()
	case k8stesting.DeleteAction:
		return a.GetName()
	case k8stesting.CreateAction:
		if o, ok := a.GetObject().(interface{ GetName() string }); ok {
			return o.GetName()
		}
	}
	return ""
}

// written are the fake cluster's write actions of a verb on a resource
// since the last KubeStateSet (the hook writes these itself, not through
// the patch collector).
func written(f *framework.HookExecutionConfig, verb, resource string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range fakeClient(f).Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			out = append(out, a)
		}
	}
	return out
}

// twoInstancesYAML are instances a and b in namespace team, both with
// volumes grown from 20Gi to 30Gi on an expandable class.
func twoInstancesYAML() string {
	grow := func(name string) string {
		return strings.Replace(starrocksYAML(name, 2, 2, 1024), "persistentVolumeClaim: {size: 20Gi}", "persistentVolumeClaim: {size: 30Gi}", 1)
	}
	return teamNamespaceYAML + "---" + classYAML + "---" + grow("a") + "---" + grownObjectsYAML("a", "expandable", 1) + "---" + grow("b") + "---" + grownObjectsYAML("b", "expandable", 1)
}

func TestHookKeepsARefusedWriteWithItsInstance(t *testing.T) {
	t.Run("a status refused (a Starrocks inflated near etcd's limit): logged, every other status lands", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(twoInstancesYAML())
		refuse(f, "patch", "starrockses", "team", "a", "etcdserver: request is too large")
		f.RunHook()
		require.NoError(t, f.HookError(), "one tenant's object never fails the run")
		assert.Len(t, entriesOf(t, f), 2, "both instances keep their values")
		assert.Empty(t, statusOf(t, f, "a").Phase, "a's status was refused")
		assert.NotEmpty(t, statusOf(t, f, "b").Phase, "b's status landed in the same run")
		assert.Contains(t, f.LoggerOutput().String(), "etcdserver: request is too large")
		assert.Contains(t, f.LoggerOutput().String(), "team/a")
	})
	t.Run("a PVC expansion refused (a ResourceQuota): ExpansionRefused with the API server's words and an Event, the other instance grows", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(twoInstancesYAML())
		words := `persistentvolumeclaims "storage-d8ms-sr-a-be-0" is forbidden: exceeded quota: storage, requested: requests.storage=10Gi, used: requests.storage=30Gi, limited: requests.storage=35Gi`
		refuse(f, "patch", "persistentvolumeclaims", "team", "storage-d8ms-sr-a-be-0", words)
		f.RunHook()
		require.NoError(t, f.HookError())
		s, r, m := condition(statusOf(t, f, "a"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"False", ReasonExpansionRefused}, []string{s, r})
		assert.Contains(t, m, "PVC storage-d8ms-sr-a-be-0 to 30Gi: ")
		assert.Contains(t, m, words)
		var reasons []string
		for _, e := range eventsIn(t, f, "team") {
			if e.InvolvedObject.Name == "a" {
				reasons = append(reasons, e.Reason)
			}
		}
		assert.Contains(t, reasons, ReasonExpansionRefused, "a Warning Event in the same run")
		assert.Equal(t, "20Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", "storage-d8ms-sr-a-be-0")))
		assert.Equal(t, "30Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", "storage-d8ms-sr-b-be-0")), "b's PVC grows in the same run")
		s, r, _ = condition(statusOf(t, f, "b"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"False", ReasonExpansionInProgress}, []string{s, r})
	})
	t.Run("a PVC expansion meeting a 409 Conflict: no refusal, no Warning Event, the expansion goes on", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(twoInstancesYAML())
		fakeClient(f).PrependReactor("patch", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() == "team" && actionName(a) == "storage-d8ms-sr-a-be-0" {
				return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "persistentvolumeclaims"}, "storage-d8ms-sr-a-be-0",
					errString("the object has been modified; please apply your changes to the latest version and try again"))
			}
			return false, nil, nil
		})
		f.RunHook()
		require.NoError(t, f.HookError())
		s, r, _ := condition(statusOf(t, f, "a"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, "False", s)
		assert.NotEqual(t, ReasonExpansionRefused, r, "a conflict is not recorded as a refusal")
		for _, e := range eventsIn(t, f, "team") {
			assert.NotEqual(t, ReasonExpansionRefused, e.Reason, "a conflict is announced as a refusal")
		}
	})
	t.Run("an Event refused (an admission policy): logged, the status says it", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" + starrocksYAML("bad", 1, 8, 1024) + "---" + starrocksYAML("b", 1, 2, 1024))
		refuse(f, "create", "events", "team", "", "admission webhook denied the request: no events")
		f.RunHook()
		require.NoError(t, f.HookError())
		s, r, _ := condition(statusOf(t, f, "bad"), v1alpha1.ConditionConfigurationValid)
		assert.Equal(t, []string{"False", ReasonClassRuleViolated}, []string{s, r})
		assert.NotEmpty(t, statusOf(t, f, "b").Phase)
		assert.Contains(t, f.LoggerOutput().String(), "admission webhook denied the request: no events")
	})
}

func TestHookEndsTheInstancesOfANamespaceBeingDeleted(t *testing.T) {
	namespaces := func(aTerminating bool) string {
		a := "\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n"
		if aTerminating {
			a = "\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, deletionTimestamp: \"2026-12-02T09:00:00Z\", finalizers: [kubernetes]}\nstatus: {phase: Terminating}\n"
		}
		return a + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n"
	}
	inNamespace := func(y, ns string) string { return strings.ReplaceAll(y, "namespace: team", "namespace: "+ns) }
	for _, tt := range []struct {
		name        string
		terminating bool
		a           string
	}{
		{"the namespace is terminating", true, inNamespace(starrocksYAML("a", 1, 2, 1024), "team-a")},
		{"the namespace is terminating and the Starrocks has a tenant's finalizer", true,
			strings.Replace(inNamespace(starrocksYAML("a", 1, 2, 1024), "team-a"), "generation: 1}", "generation: 1, finalizers: [tenant.example.com/hold]}", 1)},
		{"the Starrocks is being deleted and a finalizer keeps it", false,
			strings.Replace(inNamespace(starrocksYAML("a", 1, 2, 1024), "team-a"), "generation: 1}", `generation: 1, deletionTimestamp: "2026-12-02T09:00:00Z", finalizers: [tenant.example.com/hold]}`, 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			b := inNamespace(starrocksYAML("b", 1, 2, 1024), "team-b")
			live := inNamespace(starrocksYAML("a", 1, 2, 1024), "team-a")
			f.KubeStateSet(namespaces(false) + "---" + classYAML + "---" + live + "---" + b)
			f.RunHook()
			require.NoError(t, f.HookError())
			require.Len(t, entriesOf(t, f), 2)
			memory := lastValidYAML(t, f, "uid-a") + "---" + lastValidYAML(t, f, "uid-b")

			f.KubeStateSet(namespaces(tt.terminating) + "---" + classYAML + "---" + tt.a + "---" + b + "---" + memory)
			f.RunHook()
			require.NoError(t, f.HookError())
			entries := entriesOf(t, f)
			require.Len(t, entries, 1, "the ending instance gets no values entry: nothing is created for it")
			assert.Equal(t, "b", entries[0].Get("name").String())
			assert.Nil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-a"), "its memory is deleted")
			assert.NotNil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-b"), "the other instance's memory stays")
			for _, a := range fakeClient(f).Actions() {
				if v := a.GetVerb(); v == "create" || v == "patch" || v == "update" || v == "delete" {
					assert.NotEqual(t, "team-a", a.GetNamespace(), "nothing is written into the ending instance's namespace: %s %s", v, a.GetResource().Resource)
				}
			}
			assert.NotEmpty(t, decodeStatus(t, f.KubernetesResource("Starrocks", "team-b", "b")).Phase, "the other instance's status lands")
		})
	}
	t.Run("a Starrocks that is not ending keeps its memory", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(namespaces(false) + "---" + classYAML + "---" + inNamespace(starrocksYAML("a", 1, 2, 1024), "team-a"))
		f.RunHook()
		memory := lastValidYAML(t, f, "uid-a")
		f.KubeStateSet(namespaces(false) + "---" + classYAML + "---" + inNamespace(starrocksYAML("a", 1, 2, 1024), "team-a") + "---" + memory)
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.NotNil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-a"))
		assert.Len(t, entriesOf(t, f), 1)
	})
}

func appliedYAML(namespace, uid string, rec applied.Record) string {
	data, _ := json.Marshal(rec)
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": applied.ConfigMapName(uid), "namespace": namespace, "labels": map[string]string{shared.LabelState: applied.State}},
		"data":     map[string]string{applied.Key: string(data)}}
	out, _ := json.Marshal(cm)
	return "\n" + string(out) + "\n"
}

func TestHookReportsObjectsApplied(t *testing.T) {
	olap := applied.Record{Namespace: "team", Name: "olap", UID: "uid-olap"}
	refused := olap
	refused.Refused = &applied.Refusal{Object: "ConfigMap team/d8ms-sr-olap-fe-config", Message: `ConfigMap "d8ms-sr-olap-fe-config" is invalid: data: Forbidden: field is immutable when ` + "`immutable`" + ` is set`}
	done := olap
	done.Checksum = "abc"
	other := done
	other.UID = "uid-other"
	for _, tt := range []struct {
		name, record, status, reason, inMessage string
	}{
		{"no record yet: waiting", "", "False", ReasonWaitingForObjects, "has not written"},
		{"a refusal: named with the API server's words", appliedYAML(shared.ModuleNamespace, "uid-olap", refused), "False", ReasonObjectRefused,
			"The API server refused ConfigMap team/d8ms-sr-olap-fe-config: ConfigMap \"d8ms-sr-olap-fe-config\" is invalid: data: Forbidden: field is immutable"},
		{"a render applied completely", appliedYAML(shared.ModuleNamespace, "uid-olap", done), "True", ReasonObjectsApplied, "Every object"},
		{"started, no checksum yet", appliedYAML(shared.ModuleNamespace, "uid-olap", olap), "False", ReasonWaitingForObjects, "is writing"},
		{"a record in the tenant namespace is not the module's", appliedYAML("team", "uid-olap", done), "False", ReasonWaitingForObjects, "has not written"},
		{"a record naming another Starrocks counts as none", strings.Replace(appliedYAML(shared.ModuleNamespace, "uid-olap", other), `\"uid\":\"uid-other\"`, `\"uid\":\"uid-other\"`, 1), "False", ReasonWaitingForObjects, "has not written"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			state := teamNamespaceYAML + "---" + classYAML + "---" + starrocksYAML("olap", 1, 2, 1024)
			if tt.record != "" {
				state += "---" + tt.record
			}
			f.KubeStateSet(state)
			f.RunHook()
			require.NoError(t, f.HookError())
			s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionObjectsApplied)
			assert.Equal(t, []string{tt.status, tt.reason}, []string{s, r})
			assert.Contains(t, m, tt.inMessage)
			if tt.reason == ReasonObjectRefused {
				var found bool
				for _, e := range eventsIn(t, f, "team") {
					found = found || (e.Reason == ReasonObjectRefused && e.Type == "Warning" && strings.Contains(e.Message, "ConfigMap team/d8ms-sr-olap-fe-config"))
				}
				assert.True(t, found, "a Warning Event names the object")
			}
		})
	}
	t.Run("an instance without an entry says why", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" + starrocksYAML("olap", 1, 8, 1024))
		f.RunHook()
		require.NoError(t, f.HookError())
		s, r, _ := condition(statusOf(t, f, "olap"), v1alpha1.ConditionObjectsApplied)
		assert.Equal(t, []string{"False", ReasonNotRendered}, []string{s, r})
	})
}
