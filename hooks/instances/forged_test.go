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

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// A tenant writes its own FE pods' annotations, the agent-status annotation
// included: anything the agent can report, the tenant can forge. These tests
// play that tenant against what the module remembers from the reports (the
// bootstrap guard, the client-port gate) and against the rollout order.

// gates are agentConfig.bootstrapped and network.clientPortsOpen of the
// values entry of olap, and its AccountsReady condition.
func gates(t *testing.T, f *framework.HookExecutionConfig) (bootstrapped, portsOpen bool, status, reason, message string) {
	t.Helper()
	for _, e := range entriesOf(t, f) {
		if e.Get("name").String() == "olap" {
			bootstrapped, portsOpen = e.Get("agentConfig.bootstrapped").Bool(), e.Get("network.clientPortsOpen").Bool()
		}
	}
	status, reason, message = condition(statusOf(t, f, "olap"), ConditionAccountsReady)
	return bootstrapped, portsOpen, status, reason, message
}

// withoutAgentStatus is an FE pod of olap whose agent-status annotation was
// removed.
func withoutAgentStatus() string {
	return strings.Replace(podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", ""),
		"\n  annotations: {managed-starrocks.deckhouse.io/agent-status: \"\"}", "", 1)
}

func TestAForgedReportNeverUndoesTheBootstrap(t *testing.T) {
	f := newHook(t)
	pod := func(status string) string { return podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", status) }
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 1) + "---" + pod(`{"accounts":{"ready":true}}`))
	f.RunHook()
	require.NoError(t, f.HookError())
	b, open, s, _, _ := gates(t, f)
	require.Equal(t, []any{true, true, "True"}, []any{b, open, s}, "the agent set root's password")
	bootstrapped := starrocksYAMLWithStatus(t, f, "olap", 1, 2, 1024)
	memory := lastValidYAML(t, f, "uid-olap")

	// after runs the hook once over the bootstrapped instance with the FE pod given.
	after := func(t *testing.T, pod string) *framework.HookExecutionConfig {
		g := newHook(t)
		docs := []string{classYAML, bootstrapped, readyObjectsYAML("olap", 1, 1), memory}
		if pod != "" {
			docs = append(docs, pod)
		}
		g.KubeStateSet(strings.Join(docs, "---"))
		g.RunHook()
		require.NoError(t, g.HookError())
		return g
	}
	for _, tt := range []struct{ name, pod string }{
		{"a forged refusal", pod(`{"accounts":{"ready":false,"reason":"RootPasswordRefused","message":"root refuses both passwords"}}`)},
		{"a forged ready:false without a reason", pod(`{"accounts":{"ready":false}}`)},
		{"a removed annotation", withoutAgentStatus()},
		{"an empty report", pod(`{}`)},
		{"text that is not JSON", pod(`not json`)},
		{"a field of the wrong type", pod(`{"accounts":{"ready":"no"}}`)},
		{"a reason that cannot be a condition's", pod(`{"accounts":{"ready":false,"reason":"root refused!"}}`)},
		{"no FE pod at all", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, open, s, r, m := gates(t, after(t, tt.pod))
			assert.True(t, b, "an FE with an empty meta directory must never start a second cluster")
			assert.True(t, open, "root has had a password since the agent reported it: the clients keep their ports")
			assert.Equal(t, []string{"True", ReasonAccountsReady}, []string{s, r}, m)
		})
	}
	t.Run("the agent's later refusal is in the message", func(t *testing.T) {
		_, _, _, _, m := gates(t, after(t, pod(`{"accounts":{"ready":false,"reason":"EnsureFailed","message":"CREATE USER failed"}}`)))
		assert.Contains(t, m, "EnsureFailed: CREATE USER failed")
	})
}

func TestTheModulesMemoryKeepsTheBootstrapWithoutTheStatus(t *testing.T) {
	// The status is one memory of the bootstrap; the last valid entry in the
	// module namespace is the other (a status patch that never landed, a
	// status an admin cleared).
	f := newHook(t)
	objects := "---" + readyObjectsYAML("olap", 1, 1) + "---"
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + objects + podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", `{"accounts":{"ready":true}}`))
	f.RunHook()
	require.NoError(t, f.HookError())
	memory := lastValidYAML(t, f, "uid-olap")
	require.Contains(t, memory, `\"bootstrapped\":true`)
	forged := `{"accounts":{"ready":false,"reason":"RootPasswordRefused","message":"forged"}}`

	for _, tt := range []struct{ name, objects string }{
		{"a forged refusal", objects + podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", forged)},
		{"a removed annotation", objects + withoutAgentStatus()},
		{"text that is not JSON", objects + podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", "not json")},
		{"every object of the instance deleted", ""},
	} {
		t.Run("the module's memory holds it against "+tt.name, func(t *testing.T) {
			g := newHook(t)
			g.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + tt.objects + "---" + memory)
			g.RunHook()
			require.NoError(t, g.HookError())
			b, open, s, r, _ := gates(t, g)
			assert.Equal(t, []any{true, true, "True", ReasonAccountsReady}, []any{b, open, s, r})
		})
	}
	t.Run("a copy of it in the tenant's namespace does not", func(t *testing.T) {
		copied := strings.ReplaceAll(memory, `"namespace":"`+shared.ModuleNamespace+`"`, `"namespace":"team"`)
		require.NotEqual(t, memory, copied)
		g := newHook(t)
		g.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + objects + podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", forged) + "---" + copied)
		g.RunHook()
		require.NoError(t, g.HookError())
		b, open, s, _, _ := gates(t, g)
		assert.Equal(t, []any{false, false, "False"}, []any{b, open, s})
	})
}

func TestAForgedReadyBeforeTheAgentOpensOnlyItsOwnInstance(t *testing.T) {
	// Nothing the module reads tells the agent's report from the tenant's,
	// so a forged ready:true on a pod of the instance's FE StatefulSet counts
	// as the agent's (docs/ADMIN_GUIDE.md, "What a tenant can do"); on any
	// other pod it counts for nothing.
	ready := `{"accounts":{"ready":true}}`
	bi := strings.ReplaceAll(starrocksYAML("bi", 1, 2, 1024), "namespace: team", "namespace: other")
	biObjects := strings.ReplaceAll(readyObjectsYAML("bi", 1, 1), "namespace: team", "namespace: other")
	for _, tt := range []struct {
		name string
		pods string
		want bool
	}{
		{"a pod owned by another StatefulSet UID", podYAML("team", "olap", "d8ms-sr-olap-0", "forged-uid", ready), false},
		{"a pod without an owner", podYAML("team", "olap", "d8ms-sr-olap-0", "", ready), false},
		{"a pod in another namespace naming the instance", podYAML("other", "olap", "d8ms-sr-olap-0", "sts-uid-olap", ready), false},
		{"a pod of the instance's FE StatefulSet", podYAML("team", "olap", "d8ms-sr-olap-0", "sts-uid-olap", ready), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 1) + "---" + bi + "---" + biObjects + "---" + tt.pods)
			f.RunHook()
			require.NoError(t, f.HookError())
			b, open, _, _, _ := gates(t, f)
			assert.Equal(t, []bool{tt.want, tt.want}, []bool{b, open})
			for _, e := range entriesOf(t, f) {
				if e.Get("name").String() == "bi" {
					assert.False(t, e.Get("network.clientPortsOpen").Bool(), "the other tenant's ports open only on its own agent's report")
				}
			}
		})
	}
}

// rolloutPod is one pod of olap (Cluster: 3 FEs, 2 BEs) for the rollout.
type rolloutPod struct {
	name, rev string
	ready     bool
	report    string
}

func feHostOf(i int) string {
	return fmt.Sprintf("d8ms-sr-olap-%d.d8ms-sr-olap-fe-headless.team.svc.cluster.local", i)
}

// rolloutClusterYAML is olap's StatefulSets (FE updateRevision fe-new, BE
// be-new) and the pods given.
func rolloutClusterYAML(pods ...rolloutPod) string {
	out := olapStatefulSetsYAML(3)
	for _, p := range pods {
		component, sts := "frontend", "d8ms-sr-olap"
		if strings.HasPrefix(p.name, "d8ms-sr-olap-be-") {
			component, sts = "backend", "d8ms-sr-olap-be"
		}
		annotations := agentStatusAnnotation(p.report)
		ready := "False"
		if p.ready {
			ready = "True"
		}
		out += fmt.Sprintf(`---
apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: %s, controller-revision-hash: %s}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: %s, uid: sts-uid-%s, controller: true}]%s
status:
  conditions: [{type: Ready, status: "%s"}]
`, p.name, component, p.rev, sts, strings.TrimPrefix(sts, "d8ms-sr-"), annotations, ready)
	}
	return out
}

// claim is a leader report of FE self: every node alive on the shipped
// version, the metadata image created.
func claim(t *testing.T, self int) string {
	m := &agentconfig.MembershipStatus{Leader: feHostOf(self), Backends: []string{beHostOf(0), beHostOf(1)}, ImageCreated: "fe-new"}
	for _, h := range []string{feHostOf(0), feHostOf(1), feHostOf(2), beHostOf(0), beHostOf(1)} {
		m.Nodes = append(m.Nodes, agentconfig.NodeStatus{Host: h, Alive: true, Version: desired.StarRocksVersion})
	}
	data, err := json.Marshal(agentconfig.Status{TLS: agentconfig.TLSStatus{Ready: true}, Membership: m})
	require.NoError(t, err)
	return string(data)
}

func TestForgedLeaderClaimsAndNodesInTheRollout(t *testing.T) {
	follower := `{"tls":{"ready":true}}`
	bes := func(rev string) []rolloutPod {
		return []rolloutPod{{"d8ms-sr-olap-be-0", "be-new", true, ""}, {"d8ms-sr-olap-be-1", rev, true, ""}}
	}
	for _, tt := range []struct {
		name        string
		pods        []rolloutPod
		wantDeleted string
		wantMessage string
	}{
		{
			// fe-1 leads; the tenant makes fe-0 claim it too.
			name:        "a second claim leaves the leader unknown: the FEs wait",
			pods:        append(bes("be-new"), rolloutPod{"d8ms-sr-olap-0", "fe-old", true, claim(t, 0)}, rolloutPod{"d8ms-sr-olap-1", "fe-old", true, claim(t, 1)}, rolloutPod{"d8ms-sr-olap-2", "fe-old", true, follower}),
			wantMessage: "no agent of the FE leader has reported",
		},
		{
			// fe-1 leads; the tenant rewrites its report and makes fe-0
			// claim. Nothing the hook reads tells them apart: the real
			// leader is restarted as a follower (one more election, on the
			// tenant's own instance), still one pod at a time.
			name:        "a claim moved to a follower restarts the real leader before it",
			pods:        append(bes("be-new"), rolloutPod{"d8ms-sr-olap-0", "fe-old", true, claim(t, 0)}, rolloutPod{"d8ms-sr-olap-1", "fe-old", true, follower}, rolloutPod{"d8ms-sr-olap-2", "fe-new", true, follower}),
			wantDeleted: "d8ms-sr-olap-1", wantMessage: "Restarting FE follower d8ms-sr-olap-1",
		},
		{
			name:        "no claim or node report puts an FE before an outdated BE",
			pods:        append(bes("be-old"), rolloutPod{"d8ms-sr-olap-0", "fe-old", true, claim(t, 0)}, rolloutPod{"d8ms-sr-olap-1", "fe-old", true, follower}, rolloutPod{"d8ms-sr-olap-2", "fe-old", true, follower}),
			wantDeleted: "d8ms-sr-olap-be-1", wantMessage: "Restarting BE pod d8ms-sr-olap-be-1",
		},
		{
			// The claim lists fe-2 alive on the new version; the kubelet
			// says it is not Ready, and the tenant cannot write pod status.
			name:        "a node reported alive does not count before its pod is Ready",
			pods:        append(bes("be-new"), rolloutPod{"d8ms-sr-olap-0", "fe-old", true, claim(t, 0)}, rolloutPod{"d8ms-sr-olap-1", "fe-old", true, follower}, rolloutPod{"d8ms-sr-olap-2", "fe-new", false, follower}),
			wantMessage: "FE pod d8ms-sr-olap-2 runs the current template and is not Ready yet",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + clusterYAML(2) + "---" + rolloutClusterYAML(tt.pods...))
			f.RunHook()
			require.NoError(t, f.HookError())
			var deleted []string
			for _, p := range tt.pods {
				obj := f.KubernetesResource("Pod", "team", p.name)
				if obj == nil || obj.Object == nil || obj.GetName() == "" {
					deleted = append(deleted, p.name)
				}
			}
			want := []string(nil)
			if tt.wantDeleted != "" {
				want = []string{tt.wantDeleted}
			}
			assert.Equal(t, want, deleted, "at most one pod per run")
			_, _, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionRolledOut)
			assert.Contains(t, m, tt.wantMessage)
		})
	}
}

func TestAccountsReadyOnlyMovesForward(t *testing.T) {
	wasTrue := v1alpha1.StarrocksStatus{Conditions: []metav1.Condition{{Type: ConditionAccountsReady, Status: metav1.ConditionTrue, Reason: ReasonAccountsReady, Message: "before"}}}
	refusal := &AgentAccounts{Reason: "RootPasswordRefused", Message: "m"}
	unreadable := &AgentAccounts{Reason: ReasonAgentStatusUnreadable, Message: "not JSON"}
	for _, tt := range []struct {
		name       string
		reports    map[string]*AgentAccounts
		prev       v1alpha1.StarrocksStatus
		remembered bool
		want       bool
		wantReason string
	}{
		{"no report", nil, v1alpha1.StarrocksStatus{}, false, false, ReasonWaitingForAgent},
		{"a refusal before the first ready", map[string]*AgentAccounts{"p-0": refusal}, v1alpha1.StarrocksStatus{}, false, false, "RootPasswordRefused"},
		{"an unreadable report before the first ready", map[string]*AgentAccounts{"p-0": unreadable}, v1alpha1.StarrocksStatus{}, false, false, ReasonAgentStatusUnreadable},
		{"one pod ready, another refused", map[string]*AgentAccounts{"p-0": refusal, "p-1": {Ready: true}}, v1alpha1.StarrocksStatus{}, false, true, ReasonAccountsReady},
		{"a refusal after the status said True", map[string]*AgentAccounts{"p-0": refusal}, wasTrue, false, true, ReasonAccountsReady},
		{"a refusal with only the memory", map[string]*AgentAccounts{"p-0": refusal}, v1alpha1.StarrocksStatus{}, true, true, ReasonAccountsReady},
		{"an unreadable report with only the memory", map[string]*AgentAccounts{"p-0": unreadable}, v1alpha1.StarrocksStatus{}, true, true, ReasonAccountsReady},
		{"nothing but the memory", nil, v1alpha1.StarrocksStatus{}, true, true, ReasonAccountsReady},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := accountsReady(Observed{Accounts: tt.reports, Bootstrapped: tt.remembered}, tt.prev)
			assert.Equal(t, tt.want, v.OK, v.Message)
			assert.Equal(t, tt.wantReason, v.Reason, v.Message)
		})
	}
}
