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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

func filterOf(t *testing.T, name string) string {
	t.Helper()
	for _, b := range Config.Kubernetes {
		if b.Name == name {
			return b.JqFilter
		}
	}
	t.Fatalf("no binding %s", name)
	return ""
}

func TestPodFilterKeepsOnlyTheAgentsTLSVerdict(t *testing.T) {
	pod := func(annotations string) string {
		return `{"metadata":{"name":"p-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"}` + annotations + `}}`
	}
	for _, tt := range []struct {
		name string
		in   string
		want *AgentTLS
	}{
		{"no annotation: not reported", pod(""), nil},
		{"a verdict without the timestamp", pod(`,"annotations":{"managed-starrocks.deckhouse.io/agent-status":"{\"tls\":{\"ready\":true,\"serial\":\"ab\"},\"updatedAt\":\"2026-12-02T10:00:00Z\"}"}`), &AgentTLS{Ready: true}},
		{"garbage: not ready, with a reason", pod(`,"annotations":{"managed-starrocks.deckhouse.io/agent-status":"not json"}`), &AgentTLS{Reason: "AgentStatusUnreadable", Message: "the agent-status annotation is not valid JSON"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got PodSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), tt.in, &got))
			assert.Equal(t, "olap", got.Instance)
			assert.Equal(t, tt.want, got.AgentTLS)
		})
	}
}

func TestStarrocksFilterNeverIncludesStatus(t *testing.T) {
	var got map[string]any
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapStarrocks),
		`{"metadata":{"name":"a","namespace":"n","uid":"u","generation":2,"resourceVersion":"9","creationTimestamp":"2026-12-01T10:00:00Z"},"spec":{"type":"Standalone"},"status":{"phase":"Running"}}`, &got))
	assert.Equal(t, map[string]any{"metadata": map[string]any{"name": "a", "namespace": "n", "uid": "u", "generation": float64(2), "creationTimestamp": "2026-12-01T10:00:00Z", "deletionTimestamp": nil}, "spec": map[string]any{"type": "Standalone"}}, got,
		"a status patch (or a resourceVersion bump) must not change the snapshot, or the hook would trigger itself")
}

func TestPodFilterKeepsTheLeadersMembership(t *testing.T) {
	pod := func(status string) string {
		ann := ""
		if status != "" {
			data, _ := json.Marshal(status)
			ann = `,"annotations":{"managed-starrocks.deckhouse.io/agent-status":` + string(data) + `}`
		}
		return `{"metadata":{"name":"p-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"}` + ann + `}}`
	}
	for _, tt := range []struct {
		name string
		in   string
		want *MembershipSnap
	}{
		{"no annotation: not reported", pod(""), nil},
		{"a follower's agent reports no membership", pod(`{"tls":{"ready":true},"updatedAt":"2026-12-02T10:00:00Z"}`), nil},
		{"the leader's membership with its draining BEs and whether StarRocks counts them alive", pod(`{"tls":{"ready":true},"membership":{"leader":"fe-0","frontends":["fe-0"],"backends":["be-0","be-1","be-2"],"draining":[{"host":"be-2","tabletNum":120}],"nodes":[{"host":"be-0","alive":true,"version":"4.1"},{"host":"be-1","alive":"yes"}]},"updatedAt":"x"}`),
			&MembershipSnap{MembershipStatus: agentconfig.MembershipStatus{Leader: "fe-0", Backends: []string{"be-0", "be-1", "be-2"}, Draining: []agentconfig.BackendDrain{{Host: "be-2", TabletNum: 120}},
				Nodes: []agentconfig.NodeStatus{{Host: "be-0", Alive: true}, {Host: "be-1", Alive: false}}}}},
		{"an empty membership lists nothing", pod(`{"membership":{}}`), &MembershipSnap{MembershipStatus: agentconfig.MembershipStatus{Backends: []string{}, Draining: []agentconfig.BackendDrain{}, Nodes: []agentconfig.NodeStatus{}}}},
		{"garbage: unreadable", pod(`not json`), &MembershipSnap{Unreadable: true}},
		{"wrong types: unreadable, not a failed snapshot", pod(`{"membership":{"backends":"be-0","draining":[{"host":"be-2","tabletNum":"many"}]}}`), &MembershipSnap{Unreadable: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got PodSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), tt.in, &got))
			assert.Equal(t, tt.want, got.Membership)
		})
	}
}

func TestStatefulSetFilterKeepsTheSpecReplicas(t *testing.T) {
	var got StatefulSetSnap
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapStatefulSets),
		`{"metadata":{"name":"d8ms-sr-olap-be","namespace":"team","labels":{"app.kubernetes.io/instance":"olap","app.kubernetes.io/component":"backend"}},"spec":{"replicas":3},"status":{"replicas":2,"readyReplicas":1}}`, &got))
	assert.Equal(t, StatefulSetState{Replicas: 3, ReadyReplicas: 1}, got.StatefulSetState, "the scale-in decision compares the spec with the StatefulSet's spec, not its status")
}

func TestStatefulSetFilterKeepsTheClaimTemplateSize(t *testing.T) {
	for _, tt := range []struct {
		name, spec, want string
	}{
		{"the size it was created with", `"volumeClaimTemplates":[{"metadata":{"name":"storage"},"spec":{"resources":{"requests":{"storage":"50Gi"}}}}]`, "50Gi"},
		{"no templates: empty, the spec size is used", `"replicas":1`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got StatefulSetSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapStatefulSets),
				`{"metadata":{"name":"s","namespace":"team","labels":{"app.kubernetes.io/instance":"olap","app.kubernetes.io/component":"backend"}},"spec":{`+tt.spec+`}}`, &got))
			assert.Equal(t, tt.want, got.TemplateSize)
		})
	}
}

func TestCertificateFilterKeepsTheRevision(t *testing.T) {
	for _, tt := range []struct {
		name, status string
		want         int64
	}{
		{"not issued yet: 0", `{}`, 0},
		{"renewed", `{"revision":3,"notAfter":"2027-03-01T00:00:00Z"}`, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got CertificateSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapCertificates),
				`{"metadata":{"name":"c","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"}},"status":`+tt.status+`}`, &got))
			assert.Equal(t, tt.want, got.Revision)
		})
	}
}

func TestPVCFilterKeepsWhatTheExpansionNeeds(t *testing.T) {
	var got PVCSnap
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPVCs),
		`{"metadata":{"name":"storage-d8ms-sr-olap-be-0","namespace":"team","resourceVersion":"7","labels":{"app.kubernetes.io/instance":"olap","app.kubernetes.io/component":"backend"}},`+
			`"spec":{"storageClassName":"fast","resources":{"requests":{"storage":"50Gi"}}},"status":{"phase":"Bound","capacity":{"storage":"50Gi"}}}`, &got))
	assert.Equal(t, PVCSnap{Namespace: "team", Name: "storage-d8ms-sr-olap-be-0", Instance: "olap", Component: "backend", StorageClassName: "fast", Requested: "50Gi", Capacity: "50Gi", Phase: "Bound"}, got)
}

func TestPodFilterMarksAWrongTypeUnreadableNamingTheField(t *testing.T) {
	pod := func(status string) string {
		data, _ := json.Marshal(status)
		return `{"metadata":{"name":"p-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"},` +
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"d8ms-sr-olap","uid":"u1","controller":true}],` +
			`"annotations":{"managed-starrocks.deckhouse.io/agent-status":` + string(data) + `}}}`
	}
	for _, tt := range []struct{ status, why string }{
		{`{"tls":{"ready":"yes"}}`, "tls.ready is of type string, want boolean"},
		{`{"membership":{"draining":[{"host":"h","tabletNum":1.5}]}}`, "membership.draining[].tabletNum is not a whole number"},
		{`{"accounts":{"ready":true,"reason":7}}`, "accounts.reason is of type number, want string"},
		{`[1]`, "the agent status is of type array, want object"},
	} {
		t.Run(tt.status, func(t *testing.T) {
			var got PodSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), pod(tt.status), &got))
			assert.Equal(t, &OwnerSnap{Name: "d8ms-sr-olap", UID: "u1"}, got.Owner)
			assert.Equal(t, &AgentTLS{Reason: ReasonAgentStatusUnreadable, Message: tt.why}, got.AgentTLS)
			assert.Equal(t, &AgentAccounts{Reason: ReasonAgentStatusUnreadable, Message: tt.why}, got.Accounts)
			assert.Equal(t, &MembershipSnap{Unreadable: true}, got.Membership)
		})
	}
	t.Run("accounts are kept", func(t *testing.T) {
		var got PodSnap
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), pod(`{"accounts":{"ready":false,"reason":"RootPasswordRefused","message":"m"},"updatedAt":"x"}`), &got))
		assert.Equal(t, &AgentAccounts{Reason: "RootPasswordRefused", Message: "m"}, got.Accounts)
		assert.Nil(t, got.AgentTLS, "no tls report: not reported")
	})
}

// A report beyond the bounds of what the filter keeps (a tenant's pod
// labelled like an instance's can carry 256 KiB of it) is unreadable for
// its pod alone, naming the field; the rollout reads it as no report.
func TestPodFilterMarksAReportBeyondItsBoundsUnreadable(t *testing.T) {
	pod := func(report any) string {
		status, _ := json.Marshal(report)
		data, _ := json.Marshal(string(status))
		return `{"metadata":{"name":"p-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"},` +
			`"annotations":{"managed-starrocks.deckhouse.io/agent-status":` + string(data) + `}}}`
	}
	long := strings.Repeat("n", shared.MaxNameBytes+1)
	many := make([]string, shared.MaxReportEntries+1)
	for i := range many {
		many[i] = fmt.Sprintf("be-%d", i)
	}
	backup := map[string]any{"repository": map[string]any{"message": strings.Repeat("m", shared.MaxReportBytes)}}
	restore := map[string]any{"message": strings.Repeat("m", shared.MaxReportBytes)}
	backupJSON, _ := json.Marshal(backup)
	restoreJSON, _ := json.Marshal(restore)
	for _, tt := range []struct {
		name   string
		report map[string]any
		why    string
	}{
		{"a leader's name", map[string]any{"membership": map[string]any{"leader": long}}, "membership.leader is longer than 320 bytes"},
		{"a backend's name", map[string]any{"membership": map[string]any{"backends": []string{long}}}, "membership.backends[] is longer than 320 bytes"},
		{"a drain's host", map[string]any{"membership": map[string]any{"draining": []any{map[string]any{"host": long}}}}, "membership.draining[].host is longer than 320 bytes"},
		{"the backends", map[string]any{"membership": map[string]any{"backends": many}}, "membership.backends has more than 128 entries"},
		{"the backup report", map[string]any{"backup": backup}, fmt.Sprintf("the backup report is %d bytes of JSON, more than 131072", len(backupJSON))},
		{"the restore report", map[string]any{"restore": restore}, fmt.Sprintf("the restore report is %d bytes of JSON, more than 131072", len(restoreJSON))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got PodSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), pod(tt.report), &got))
			assert.Equal(t, &AgentTLS{Reason: ReasonAgentStatusUnreadable, Message: tt.why}, got.AgentTLS)
			assert.Equal(t, &MembershipSnap{Unreadable: true}, got.Membership)
			assert.Empty(t, got.BackupRaw+got.RestoreRaw, "nothing of an unreadable report is kept")
		})
	}
	t.Run("within the bounds: kept", func(t *testing.T) {
		var got PodSnap
		atBound := strings.Repeat("n", shared.MaxNameBytes)
		report := map[string]any{"membership": map[string]any{"leader": atBound, "backends": many[:shared.MaxReportEntries]},
			"backup": map[string]any{"repository": map[string]any{"message": strings.Repeat("m", shared.MaxReportBytes-42)}}}
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), pod(report), &got))
		require.NotNil(t, got.Membership)
		assert.Equal(t, atBound, got.Membership.Leader)
		assert.Len(t, got.Membership.Backends, shared.MaxReportEntries)
		assert.Equal(t, shared.MaxReportBytes-42+len(`{"repository":{"message":""}}`), len(got.BackupRaw))
	})
	t.Run("a user's name: only the users report is unreadable", func(t *testing.T) {
		var got PodSnap
		report := map[string]any{"tls": map[string]any{"ready": true}, "users": map[string]any{"users": []any{map[string]any{"name": long}}}}
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), pod(report), &got))
		assert.Equal(t, &AgentTLS{Ready: true}, got.AgentTLS)
		require.NotNil(t, got.Users)
		assert.Equal(t, "users.users[].name is longer than 320 bytes", got.Users.Unreadable)
	})
	t.Run("the rollout reads a node's long host as no report", func(t *testing.T) {
		var got RolloutPodSnap
		report := map[string]any{"membership": map[string]any{"leader": "fe-0", "nodes": []any{map[string]any{"host": long, "alive": true}}}}
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapRolloutPods), pod(report), &got))
		assert.Nil(t, got.Agent)
	})
}

func TestTenantFiltersCoerceTypes(t *testing.T) {
	var sts StatefulSetSnap
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapStatefulSets),
		`{"metadata":{"name":"d8ms-sr-olap","namespace":"team","uid":"u","labels":{"app.kubernetes.io/instance":"olap","app.kubernetes.io/component":"frontend"}},"spec":{"replicas":"3"},"status":{"readyReplicas":"x"}}`, &sts))
	assert.Equal(t, StatefulSetState{}, sts.StatefulSetState, "a field of the wrong type reads as empty, never as a failed snapshot")
	var pvc PVCSnap
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPVCs),
		`{"metadata":{"name":"meta-d8ms-sr-olap-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"}},"spec":{"storageClassName":5,"resources":{"requests":{"storage":[]}}}}`, &pvc))
	assert.Equal(t, PVCSnap{Namespace: "team", Name: "meta-d8ms-sr-olap-0", Instance: "olap"}, pvc)
}
