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
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// Tenants control every object in their namespaces. These tests play a
// tenant with edit rights in one namespace against the instances hook.

// forgedEntry is a values entry a tenant would like rendered: far beyond
// any class, with a toleration for every taint and an injected name.
func forgedEntry(namespace, name, uid string) string {
	e := map[string]any{
		"name": name, "namespace": namespace, "uid": uid, "className": "default", "type": "Cluster", "generation": 1, "topology": "Ignored",
		"frontend":   map[string]any{"replicas": 1, "javaHeapMb": 1024, "resources": map[string]any{"requests": map[string]any{"cpu": "256", "memory": "1Ti"}, "limits": map[string]any{"cpu": "256", "memory": "1Ti"}}, "storage": map[string]any{"size": "1Ti"}, "configChecksum": "x", "hosts": []string{}},
		"backend":    map[string]any{"replicas": 50, "memLimitBytes": 1, "resources": map[string]any{"requests": map[string]any{"cpu": "256", "memory": "1Ti"}, "limits": map[string]any{"cpu": "256", "memory": "1Ti"}}, "storage": map[string]any{"size": "1Ti"}, "configChecksum": "x", "hosts": []string{}},
		"scheduling": map[string]any{"tolerations": []any{map[string]any{"operator": "Exists"}}, "nodeSelector": map[string]any{"node-role.kubernetes.io/control-plane": ""}},
		"names":      map[string]any{"frontendStatefulSet": "x\nkind: ClusterRoleBinding"},
	}
	data, _ := json.Marshal(e)
	return string(data)
}

func configMapDoc(namespace, name, entry string) string {
	q, _ := json.Marshal(entry)
	return fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: last-valid}
data:
  instance.json: %s
`, name, namespace, q)
}

// invalidInstanceYAML is olap in namespace team, breaking the class (64 cores):
// only a last valid entry could be rendered for it.
func invalidInstanceYAML() string { return starrocksYAML("olap", 2, 64, 1024) }

func TestForgedMemoryChangesNothing(t *testing.T) {
	for _, tt := range []struct{ name, cm string }{
		{"the old name in the instance's namespace", configMapDoc("team", "d8ms-sr-olap-last-valid", forgedEntry("team", "olap", "uid-olap"))},
		{"the module's name in the instance's namespace", configMapDoc("team", "last-valid-uid-olap", forgedEntry("team", "olap", "uid-olap"))},
		{"the module's name in another namespace", configMapDoc("evil", "last-valid-uid-olap", forgedEntry("team", "olap", "uid-olap"))},
		{"the old name in another namespace", configMapDoc("evil", "d8ms-sr-olap-last-valid", forgedEntry("team", "olap", "uid-olap"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + invalidInstanceYAML() + "---" + tt.cm)
			f.RunHook()
			require.NoError(t, f.HookError())
			assert.Empty(t, entriesOf(t, f), "a copy outside the module namespace is never the module's memory")
			st := statusOf(t, f, "olap")
			s, r, _ := condition(st, v1alpha1.ConditionLastValidConfigurationApplied)
			assert.Equal(t, []string{"False", ReasonNeverValid}, []string{s, r})
		})
	}
}

func TestMemoryCountsOnlyForTheLiveObjectOfItsUID(t *testing.T) {
	other := strings.ReplaceAll(starrocksYAML("bi", 1, 64, 1024), "namespace: team", "namespace: other")
	for _, tt := range []struct{ name, entry string }{
		{"an entry naming another namespace", forgedEntry("other", "bi", "uid-olap")},
		{"an entry naming another instance", forgedEntry("team", "bi", "uid-olap")},
		{"an entry with another UID", forgedEntry("team", "olap", "uid-bi")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + invalidInstanceYAML() + "---" + other + "---" + configMapDoc(shared.ModuleNamespace, "last-valid-uid-olap", tt.entry))
			f.RunHook()
			require.NoError(t, f.HookError())
			assert.Empty(t, entriesOf(t, f))
			assert.Contains(t, f.LoggerOutput().String(), "is ignored")
		})
	}
}

func TestMemoryOfAGoneStarrocksIsDeleted(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" +
		configMapDoc(shared.ModuleNamespace, "last-valid-uid-gone", forgedEntry("team", "gone", "uid-gone")) + "---" +
		configMapDoc("team", "last-valid-uid-gone2", forgedEntry("team", "gone2", "uid-gone2")))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Nil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-gone"), "no Starrocks has this UID")
	assert.NotNil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-olap"))
	assert.NotNil(t, f.KubernetesResource("ConfigMap", "team", "last-valid-uid-gone2"), "the hook never deletes in tenant namespaces")
}

// podYAML is an FE pod of instance in namespace, owned by owner (a
// StatefulSet UID, "" for none), with an agent-status annotation.
func podYAML(namespace, instance, name, ownerUID, status string) string {
	q, _ := json.Marshal(status)
	owner := ""
	if ownerUID != "" {
		owner = fmt.Sprintf("\n  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: d8ms-sr-%s, uid: %s, controller: true}]", instance, ownerUID)
	}
	return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %s, app.kubernetes.io/component: frontend}%s
  annotations: {managed-starrocks.deckhouse.io/agent-status: %s}
`, name, namespace, instance, owner, q)
}

func TestAMalformedAgentStatusAffectsOnlyItsInstance(t *testing.T) {
	bi := strings.ReplaceAll(starrocksYAML("bi", 1, 2, 1024), "namespace: team", "namespace: other")
	biObjects := strings.ReplaceAll(readyObjectsYAML("bi", 1, 1), "namespace: team", "namespace: other")
	for _, bad := range []string{`{"tls":{"ready":"yes"}}`, `{"membership":{"draining":[{"host":"h","tabletNum":1.5}]}}`, `{"accounts":{"ready":1}}`, `[1]`, `"x"`, `{"tls":[]}`} {
		t.Run(bad, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 1) + "---" + bi + "---" + biObjects + "---" +
				// A look-alike in a third namespace, named like olap's pod.
				podYAML("evil", "olap", "d8ms-sr-olap-0", "sts-uid-olap", bad) + "---" +
				// olap's second FE pod, owned by its StatefulSet, malformed.
				podYAML("team", "olap", "d8ms-sr-olap-1", "sts-uid-olap", bad))
			f.RunHook()
			require.NoError(t, f.HookError(), "one malformed annotation never fails the run")

			entries := entriesOf(t, f)
			require.Len(t, entries, 2, "every instance is still reconciled")
			assert.Equal(t, "bi", entries[0].Get("name").String())
			assert.Equal(t, "olap", entries[1].Get("name").String())
			assert.Equal(t, "2", entries[1].Get("backend.resources.limits.cpu").String())

			s, r, _ := condition(statusOf(t, f, "olap"), v1alpha1.ConditionTLSReady)
			assert.Equal(t, []string{"False", ReasonAgentStatusUnreadable}, []string{s, r}, "the instance whose own pod is malformed says so")
			bist := decodeStatus(t, f.KubernetesResource("Starrocks", "other", "bi"))
			s, r, _ = condition(bist, v1alpha1.ConditionTLSReady)
			assert.Equal(t, []string{"True", ReasonCertificateReady}, []string{s, r}, "the other instance is unaffected")
		})
	}
	t.Run("the condition names the field", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 1) + "---" +
			podYAML("team", "olap", "d8ms-sr-olap-1", "sts-uid-olap", `{"tls":{"ready":"yes"}}`))
		f.RunHook()
		require.NoError(t, f.HookError())
		_, _, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionTLSReady)
		assert.Equal(t, "The agent of pod d8ms-sr-olap-1 reports TLS not working: tls.ready is of type string, want boolean", m)
	})
}

func TestOnlyTheInstancesOwnObjectsCount(t *testing.T) {
	ready := `{"tls":{"ready":true},"accounts":{"ready":true}}`
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" +
		strings.ReplaceAll(readyObjectsYAML("olap", 1, 1), "d8ms-sr-olap-0", "d8ms-sr-olap-9") + "---" +
		// Not owned by the FE StatefulSet (no owner, or an owner of another UID).
		podYAML("team", "olap", "d8ms-sr-olap-0", "", ready) + "---" +
		podYAML("team", "olap", "d8ms-sr-olap-1", "forged-uid", ready))
	// The real pod (d8ms-sr-olap-9) has not reported accounts.
	f.RunHook()
	require.NoError(t, f.HookError())
	s, r, _ := condition(statusOf(t, f, "olap"), ConditionAccountsReady)
	assert.Equal(t, []string{"False", ReasonWaitingForAgent}, []string{s, r})
	assert.False(t, entriesOf(t, f)[0].Get("network.clientPortsOpen").Bool())

	t.Run("a StatefulSet under another name is not the instance's", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" +
			strings.ReplaceAll(readyObjectsYAML("olap", 1, 1), "name: d8ms-sr-olap-be\n", "name: lookalike\n"))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Equal(t, v1alpha1.PhasePending, statusOf(t, f, "olap").Phase, "no BE StatefulSet of the module's name")
	})
}

func TestAccountsReadyOpensTheClientPortsForGood(t *testing.T) {
	withPod := func(f interface{ KubeStateSet(string) }, status string, prev string) {
		f.KubeStateSet(classYAML + "---" + prev + "---" + readyObjectsYAML("olap", 1, 1) + "---" + podYAML("team", "olap", "d8ms-sr-olap-1", "sts-uid-olap", status))
	}
	f := newHook(t)
	withPod(f, `{"tls":{"ready":true}}`, starrocksYAML("olap", 1, 2, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())
	s, r, _ := condition(statusOf(t, f, "olap"), ConditionAccountsReady)
	assert.Equal(t, []string{"False", ReasonWaitingForAgent}, []string{s, r})
	assert.False(t, entriesOf(t, f)[0].Get("network.clientPortsOpen").Bool(), "closed until the agent reports")

	steps := []struct {
		name, status, wantStatus, wantReason string
	}{
		{"the agent reports the accounts ready", `{"accounts":{"ready":true}}`, "True", ReasonAccountsReady},
		{"an agent restarting reports nothing: stays open", `{"tls":{"ready":true}}`, "True", ReasonAccountsReady},
		{"an unreadable report: stays open", `not json`, "True", ReasonAccountsReady},
		{"a refusal after that: stays open (root keeps a password)", `{"accounts":{"ready":false,"reason":"RootPasswordRefused","message":"root refuses the password"}}`, "True", ReasonAccountsReady},
		{"and while nobody reports", `{}`, "True", ReasonAccountsReady},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			withPod(f, st.status, starrocksYAMLWithStatus(t, f, "olap", 1, 2, 1024))
			f.RunHook()
			require.NoError(t, f.HookError())
			s, r, _ := condition(statusOf(t, f, "olap"), ConditionAccountsReady)
			assert.Equal(t, []string{st.wantStatus, st.wantReason}, []string{s, r})
			assert.Equal(t, st.wantStatus == "True", entriesOf(t, f)[0].Get("network.clientPortsOpen").Bool())
		})
	}
}

func TestAllowedNamespacesReachTheValues(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "  network: {allowedNamespaces: [{matchLabels: {team: bi}}]}\n")
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.JSONEq(t, `[{"matchLabels":{"team":"bi"}}]`, entriesOf(t, f)[0].Get("network.allowedNamespaces").Raw)
}

func TestMemoryOfAnUnreadableStarrocksIsKept(t *testing.T) {
	s := State{
		UnreadableUIDs: map[string]bool{"uid-olap": true},
		LastValid:      []LastValidSnap{{Namespace: shared.ModuleNamespace, Name: "last-valid-uid-olap", Entry: "{}"}, {Namespace: shared.ModuleNamespace, Name: "last-valid-uid-gone", Entry: "{}"}},
	}
	plan := Reconcile(s, classrules.NewCache(), metav1.Now(), nil)
	assert.Equal(t, []string{"last-valid-uid-gone"}, plan.StaleLastValid, "a Starrocks that exists but did not decode keeps its memory")
}

func TestAnAgentReasonThatCannotBeAConditionReasonIsUnreadable(t *testing.T) {
	// The CRD gives a condition's reason a pattern: a status patch carrying
	// a tenant's "reason" verbatim would be refused, failing the whole run.
	for _, status := range []string{
		`{"accounts":{"ready":false,"reason":"root refused!","message":"m"}}`,
		`{"tls":{"ready":false,"reason":"` + strings.Repeat("A", 1025) + `"}}`,
		`{"accounts":{"ready":false,"reason":"Ends_with,"}}`,
	} {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 1) + "---" + podYAML("team", "olap", "d8ms-sr-olap-1", "sts-uid-olap", status))
		f.RunHook()
		require.NoError(t, f.HookError())
		st := statusOf(t, f, "olap")
		s, r, m := condition(st, ConditionAccountsReady)
		assert.Equal(t, []string{"False", ReasonAgentStatusUnreadable}, []string{s, r})
		assert.Contains(t, m, "is not a CamelCase word")
		_, r, _ = condition(st, v1alpha1.ConditionTLSReady)
		assert.Equal(t, ReasonAgentStatusUnreadable, r)
	}
}
