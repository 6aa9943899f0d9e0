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
	"testing"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

func clusterYAML(beReplicas int) string {
	return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: olap, namespace: team, uid: uid-olap, generation: 2}
spec:
  starrocksClassName: default
  type: Cluster
  frontend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {replicas: %d, cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 20Gi}}
  configuration: {streamingLoadMaxMb: 1024}
`, beReplicas)
}

func beHostOf(i int) string {
	return fmt.Sprintf("d8ms-sr-olap-be-%d.d8ms-sr-olap-be-headless.team.svc.cluster.local", i)
}

// clusterObjectsYAML is the BE StatefulSet at beReplicas and FE pod 0, whose
// agent reports membership (nil: no membership; "garbage": unreadable).
func clusterObjectsYAML(t *testing.T, beReplicas int, membership any) string {
	t.Helper()
	ann := ""
	switch m := membership.(type) {
	case nil:
	case string:
		ann = m
	case *agentconfig.MembershipStatus:
		data, err := json.Marshal(agentconfig.Status{TLS: agentconfig.TLSStatus{Ready: true}, Membership: m, UpdatedAt: "2026-12-02T10:00:00Z"})
		require.NoError(t, err)
		ann = string(data)
	}
	annotations := ""
	if ann != "" {
		q, _ := json.Marshal(ann)
		annotations = "\n  annotations: {managed-starrocks.deckhouse.io/agent-status: " + string(q) + "}"
	}
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-olap
  namespace: team
  uid: sts-uid-olap
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
spec: {replicas: 1}
status: {readyReplicas: 1}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-olap-be
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: backend}
spec: {replicas: %d}
status: {readyReplicas: %d}
---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-olap-0
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: d8ms-sr-olap, uid: sts-uid-olap, controller: true}]%s
`, beReplicas, beReplicas, annotations)
}

func TestHookScalesBackendsInOnlyAfterTheAgentConfirms(t *testing.T) {
	listed := func(n int, draining ...agentconfig.BackendDrain) *agentconfig.MembershipStatus {
		m := &agentconfig.MembershipStatus{Leader: "fe-0", Draining: draining}
		for i := 0; i < n; i++ {
			m.Backends = append(m.Backends, beHostOf(i))
		}
		return m
	}
	for _, tt := range []struct {
		name         string
		spec, sts    int
		membership   any
		wantReplicas int
		wantStatus   string
		wantReason   string
		wantMessage  []string
	}{
		{name: "grows at once", spec: 3, sts: 2, membership: listed(2), wantReplicas: 3, wantStatus: "True", wantReason: ReasonNoScaleInPending},
		{name: "keeps replicas when no agent reported", spec: 3, sts: 4, wantReplicas: 4, wantStatus: "False", wantReason: ReasonWaitingForAgent,
			wantMessage: []string{"spec.backend.replicas is 3, but the BE StatefulSet keeps its 4 pods"}},
		{name: "keeps replicas when the agent status is unreadable", spec: 3, sts: 4, membership: "not json", wantReplicas: 4, wantStatus: "False", wantReason: ReasonWaitingForAgent},
		{name: "keeps be-3 while it drains", spec: 3, sts: 4, membership: listed(4, agentconfig.BackendDrain{Host: beHostOf(3), TabletNum: 120}), wantReplicas: 4,
			wantStatus: "False", wantReason: ReasonDecommissionInProgress,
			wantMessage: []string{beHostOf(3) + " (decommissioned, 120 tablets left)", "keeps running until StarRocks has moved its tablets"}},
		{name: "says so when StarRocks refuses the decommission", spec: 3, sts: 4,
			membership: func() *agentconfig.MembershipStatus {
				m := listed(4)
				m.DecommissionRefused = "Error 1064 (42000): Unexpected exception: It will cause insufficient BE number if these BEs are decommissioned because the table shop.orders requires 4 replicas."
				return m
			}(), wantReplicas: 4, wantStatus: "False", wantReason: ReasonDecommissionRefused,
			wantMessage: []string{"StarRocks refuses to decommission " + beHostOf(3), "the table shop.orders requires 4 replicas", "set spec.backend.replicas back to 4"}},
		{name: "lowers replicas once be-3 is gone", spec: 3, sts: 4, membership: listed(3), wantReplicas: 3, wantStatus: "True", wantReason: ReasonNoScaleInPending},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + clusterYAML(tt.spec) + "---" + clusterObjectsYAML(t, tt.sts, tt.membership))
			f.RunHook()
			require.NoError(t, f.HookError())

			entries := entriesOf(t, f)
			require.Len(t, entries, 1, "%+v", statusOf(t, f, "olap").Conditions)
			assert.EqualValues(t, tt.wantReplicas, entries[0].Get("backend.replicas").Int(), "rendered BE replicas")
			backends := entries[0].Get("agentConfig.backends").Array()
			require.Len(t, backends, tt.spec, "the agent is told exactly the spec's BEs")
			assert.Equal(t, beHostOf(tt.spec-1), backends[tt.spec-1].String())

			st := statusOf(t, f, "olap")
			s, r, m := condition(st, v1alpha1.ConditionBackendScaleIn)
			assert.Equal(t, []string{tt.wantStatus, tt.wantReason}, []string{s, r}, m)
			for _, want := range tt.wantMessage {
				assert.Contains(t, m, want)
			}
			assert.EqualValues(t, tt.wantReplicas, st.Backend.Replicas, "status shows the BE pods kept")
		})
	}
}

func TestHookPatchesBackendScaleInOnlyOnChange(t *testing.T) {
	f := newHook(t)
	draining := &agentconfig.MembershipStatus{Backends: []string{beHostOf(0), beHostOf(1), beHostOf(2), beHostOf(3)}, Draining: []agentconfig.BackendDrain{{Host: beHostOf(3), TabletNum: 120}}}
	f.KubeStateSet(classYAML + "---" + clusterYAML(3) + "---" + clusterObjectsYAML(t, 4, draining))
	f.RunHook()
	require.NoError(t, f.HookError())

	again := func(membership *agentconfig.MembershipStatus) {
		f.KubeStateSet(classYAML + "---" + clusterYAMLWithStatus(t, f, 3) + "---" + clusterObjectsYAML(t, 4, membership) + "---" + lastValidYAML(t, f, "uid-olap"))
		f.RunHook()
		require.NoError(t, f.HookError())
	}
	instancePatches := func() int { return len(statusPatches(f)) }
	again(draining)
	assert.Zero(t, instancePatches(), "the same drain progress patches nothing")

	fewer := *draining
	fewer.Draining = []agentconfig.BackendDrain{{Host: beHostOf(3), TabletNum: 40}}
	again(&fewer)
	require.Equal(t, 1, instancePatches(), "new drain progress is reported")
	_, _, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionBackendScaleIn)
	assert.Contains(t, m, "40 tablets left")
}

// clusterYAMLWithStatus is the instance carrying the status the fake
// cluster holds now, as the next reconcile would find it.
func clusterYAMLWithStatus(t *testing.T, f *framework.HookExecutionConfig, beReplicas int) string {
	t.Helper()
	st, _, _ := unstructured.NestedMap(f.KubernetesResource("Starrocks", "team", "olap").Object, "status")
	data, err := json.Marshal(st)
	require.NoError(t, err)
	return clusterYAML(beReplicas) + "status: " + string(data) + "\n"
}
