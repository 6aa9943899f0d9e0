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
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// createdAt gives an instance of starrocksYAML its creation time.
func createdAt(doc, ts string) string {
	return strings.Replace(doc, "generation: ", "creationTimestamp: \""+ts+"\", generation: ", 1)
}

func TestHookManagesAtMostMaxCountInstancesTheOldestFirst(t *testing.T) {
	f := newHook(t)
	f.ValuesSet(shared.MaxInstancesPath, 2)
	// By name "newest" sorts first: the limit goes by creation time.
	f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" +
		createdAt(starrocksYAML("old", 1, 2, 1024), "2026-12-01T10:00:00Z") + "---" +
		createdAt(starrocksYAML("middle", 1, 2, 1024), "2026-12-01T11:00:00Z") + "---" +
		createdAt(starrocksYAML("newest", 1, 2, 1024), "2026-12-01T12:00:00Z"))
	f.RunHook()
	require.NoError(t, f.HookError())

	var names []string
	for _, e := range entriesOf(t, f) {
		names = append(names, e.Get("name").String())
	}
	assert.Equal(t, []string{"middle", "old"}, names, "the two oldest are rendered, the newest is not")
	assert.Nil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-newest"),
		"nothing was applied for it, so nothing is remembered as applied")

	st := statusOf(t, f, "newest")
	assert.Equal(t, v1alpha1.PhasePending, st.Phase)
	s, r, m := condition(st, v1alpha1.ConditionAvailable)
	assert.Equal(t, []string{"False", ReasonInstanceLimitReached}, []string{s, r})
	assert.Contains(t, m, "at most 2 Starrocks instances")
	assert.Contains(t, m, "settings.instances.maxCount")
	s, r, _ = condition(st, v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, []string{"True", ReasonValid}, []string{s, r}, "the spec is still checked")
	var reasons []string
	for _, e := range eventsIn(t, f, "team") {
		if e.InvolvedObject.Name == "newest" {
			reasons = append(reasons, e.Type+"/"+e.Reason)
		}
	}
	assert.Contains(t, reasons, "Warning/"+ReasonInstanceLimitReached)
	_, r, _ = condition(statusOf(t, f, "old"), v1alpha1.ConditionAvailable)
	assert.NotEqual(t, ReasonInstanceLimitReached, r)
}

func TestLoweringTheLimitKeepsTheMemoryOfTheInstancesBeyondIt(t *testing.T) {
	f := newHook(t)
	docs := classYAML + "---" +
		createdAt(starrocksYAML("old", 1, 2, 1024), "2026-12-01T10:00:00Z") + "---" +
		createdAt(starrocksYAML("new", 1, 2, 1024), "2026-12-01T12:00:00Z")
	f.KubeStateSet(docs)
	f.RunHook()
	require.NoError(t, f.HookError())
	require.Len(t, entriesOf(t, f), 2)
	memory := lastValidYAML(t, f, "uid-new")

	// The admin lowers the limit; the cluster holds both memories.
	f.ValuesSet(shared.MaxInstancesPath, 1)
	f.KubeStateSet(docs + "---" + lastValidYAML(t, f, "uid-old") + "---" + memory)
	f.RunHook()
	require.NoError(t, f.HookError())

	entries := entriesOf(t, f)
	require.Len(t, entries, 1)
	assert.Equal(t, "old", entries[0].Get("name").String())
	assert.NotNil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-new"),
		"the instance beyond the limit keeps its memory (and so its credentials)")
	_, r, _ := condition(statusOf(t, f, "new"), v1alpha1.ConditionAvailable)
	assert.Equal(t, ReasonInstanceLimitReached, r)

	// Raised again, it comes back with the same entry.
	f.ValuesSet(shared.MaxInstancesPath, 2)
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Len(t, entriesOf(t, f), 2)
}

func TestHookGivesCollidingNamesOnlyToTheOlder(t *testing.T) {
	f := newHook(t)
	// "a-be" would be a StatefulSet d8ms-sr-a-be, the BE StatefulSet of
	// "a", and its FE pods d8ms-sr-a-be-<n> a's BE pods. Both exist, as
	// with the webhook down; by name "a-be" sorts after "a" but it is the
	// newer one only by creation time.
	f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" +
		createdAt(starrocksYAML("a-be", 1, 2, 1024), "2026-12-01T12:00:00Z") + "---" +
		createdAt(starrocksYAML("a", 1, 2, 1024), "2026-12-01T10:00:00Z") + "---" +
		createdAt(starrocksYAML("b", 1, 2, 1024), "2026-12-01T13:00:00Z"))
	f.RunHook()
	require.NoError(t, f.HookError())

	var names []string
	for _, e := range entriesOf(t, f) {
		names = append(names, e.Get("name").String())
	}
	assert.Equal(t, []string{"a", "b"}, names, "only the older of the two gets an entry")
	assert.Nil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-a-be"), "no memory for the newer one")
	assert.NotNil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-a"))

	st := statusOf(t, f, "a-be")
	assert.Equal(t, v1alpha1.PhasePending, st.Phase)
	for _, typ := range []string{v1alpha1.ConditionAvailable, v1alpha1.ConditionLastValidConfigurationApplied} {
		s, r, m := condition(st, typ)
		assert.Equal(t, []string{"False", ReasonNameConflict}, []string{s, r}, typ)
		assert.Contains(t, m, `Starrocks "a", older in this namespace, already uses the name of StatefulSet d8ms-sr-a-be`, typ)
	}
	var reasons []string
	for _, e := range eventsIn(t, f, "team") {
		if e.InvolvedObject.Name == "a-be" {
			reasons = append(reasons, e.Type+"/"+e.Reason)
		}
	}
	assert.Contains(t, reasons, "Warning/"+ReasonNameConflict)
	_, r, _ := condition(statusOf(t, f, "a"), v1alpha1.ConditionAvailable)
	assert.NotEqual(t, ReasonNameConflict, r)
}

func TestHookManagesAtMostMaxPerNamespaceInstancesOfANamespace(t *testing.T) {
	f := newHook(t)
	f.ValuesSet(shared.MaxPerNamespacePath, 1)
	other := strings.Replace(starrocksYAML("elsewhere", 1, 2, 1024), "namespace: team", "namespace: other", 1)
	f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" +
		createdAt(starrocksYAML("old", 1, 2, 1024), "2026-12-01T10:00:00Z") + "---" +
		createdAt(starrocksYAML("new", 1, 2, 1024), "2026-12-01T11:00:00Z") + "---" +
		createdAt(other, "2026-12-01T12:00:00Z"))
	f.RunHook()
	require.NoError(t, f.HookError())

	var keys []string
	for _, e := range entriesOf(t, f) {
		keys = append(keys, e.Get("namespace").String()+"/"+e.Get("name").String())
	}
	assert.Equal(t, []string{"other/elsewhere", "team/old"}, keys, "one instance per namespace, the oldest")
	st := statusOf(t, f, "new")
	assert.Equal(t, v1alpha1.PhasePending, st.Phase)
	s, r, m := condition(st, v1alpha1.ConditionAvailable)
	assert.Equal(t, []string{"False", ReasonNamespaceLimitReached}, []string{s, r})
	assert.Contains(t, m, "at most 1 Starrocks instance per namespace")
	assert.Contains(t, m, "settings.instances.maxPerNamespace")
}
