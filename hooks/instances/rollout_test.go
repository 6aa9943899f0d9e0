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
	"time"

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// rolloutObjectsYAML: the FE StatefulSet (1 pod) and the BE StatefulSet (2
// pods), their pods Ready on the revisions given, FE pod 0 carrying ann.
func rolloutObjectsYAML(feRev, be0Rev, be1Rev, beOwnerUID, ann string) string {
	pod := func(name, component, sts, uid, rev, extra string) string {
		return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  namespace: team
  uid: pod-uid-%[1]s
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: %[2]s, controller-revision-hash: %[5]s}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: %[3]s, uid: %[4]s, controller: true}]%[6]s
status:
  conditions: [{type: Ready, status: "True"}]
`, name, component, sts, uid, rev, extra)
	}
	return olapStatefulSetsYAML(1) + "---" + pod("d8ms-sr-olap-0", "frontend", "d8ms-sr-olap", "sts-uid-olap", feRev, agentStatusAnnotation(ann)) +
		"---" + pod("d8ms-sr-olap-be-0", "backend", "d8ms-sr-olap-be", "sts-uid-olap-be", be0Rev, "") +
		"---" + pod("d8ms-sr-olap-be-1", "backend", "d8ms-sr-olap-be", beOwnerUID, be1Rev, "")
}

// olapStatefulSetsYAML is olap's FE StatefulSet (feReplicas pods, update
// revision fe-new) and BE StatefulSet (2 pods, be-new), all Ready.
func olapStatefulSetsYAML(feReplicas int) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-olap
  namespace: team
  uid: sts-uid-olap
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
spec: {replicas: %[1]d}
status: {readyReplicas: %[1]d, updateRevision: fe-new}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-olap-be
  namespace: team
  uid: sts-uid-olap-be
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: backend}
spec: {replicas: 2}
status: {readyReplicas: 2, updateRevision: be-new}
`, feReplicas)
}

// agentStatusAnnotation is the metadata line of a pod whose agent wrote
// report ("" for none).
func agentStatusAnnotation(report string) string {
	if report == "" {
		return ""
	}
	q, _ := json.Marshal(report)
	return "\n  annotations: {managed-starrocks.deckhouse.io/agent-status: " + string(q) + "}"
}

func leaderReport(t *testing.T, version string, imageCreated ...string) string {
	fe0 := "d8ms-sr-olap-0.d8ms-sr-olap-fe-headless.team.svc.cluster.local"
	m := &agentconfig.MembershipStatus{Leader: fe0, Backends: []string{beHostOf(0), beHostOf(1)}}
	if len(imageCreated) > 0 {
		m.ImageCreated = imageCreated[0]
	}
	for _, h := range []string{fe0, beHostOf(0), beHostOf(1)} {
		m.Nodes = append(m.Nodes, agentconfig.NodeStatus{Host: h, Alive: true, Version: version})
	}
	data, err := json.Marshal(agentconfig.Status{TLS: agentconfig.TLSStatus{Ready: true}, Membership: m})
	require.NoError(t, err)
	return string(data)
}

// leaderReportWith is leaderReport changed by change.
func leaderReportWith(t *testing.T, version string, change func(st *agentconfig.Status)) string {
	var st agentconfig.Status
	require.NoError(t, json.Unmarshal([]byte(leaderReport(t, version)), &st))
	change(&st)
	data, err := json.Marshal(st)
	require.NoError(t, err)
	return string(data)
}

// feDownReport is a leader report in which StarRocks lists the FE as not
// alive (a heartbeat missed), the BEs alive on version.
func feDownReport(t *testing.T, version string) string {
	fe0 := "d8ms-sr-olap-0.d8ms-sr-olap-fe-headless.team.svc.cluster.local"
	m := &agentconfig.MembershipStatus{Leader: fe0, Backends: []string{beHostOf(0), beHostOf(1)},
		Nodes: []agentconfig.NodeStatus{{Host: fe0, Alive: false, Version: version}, {Host: beHostOf(0), Alive: true, Version: version}, {Host: beHostOf(1), Alive: true, Version: version}}}
	data, err := json.Marshal(agentconfig.Status{TLS: agentconfig.TLSStatus{Ready: true}, Membership: m})
	require.NoError(t, err)
	return string(data)
}

// oldAgentReport is a leader report of an agent that predates node reports.
func oldAgentReport(t *testing.T) string {
	fe0 := "d8ms-sr-olap-0.d8ms-sr-olap-fe-headless.team.svc.cluster.local"
	data, err := json.Marshal(agentconfig.Status{TLS: agentconfig.TLSStatus{Ready: true},
		Membership: &agentconfig.MembershipStatus{Leader: fe0, Backends: []string{beHostOf(0), beHostOf(1)}}})
	require.NoError(t, err)
	return string(data)
}

func TestHookRollout(t *testing.T) {
	cur := desired.StarRocksVersion + "-abc"
	for _, tt := range []struct {
		name        string
		objects     string
		wantDeleted string
		wantReason  string
		wantMessage string
		wantImage   string
	}{
		{name: "restarts the highest BE first", objects: rolloutObjectsYAML("fe-old", "be-old", "be-old", "sts-uid-olap-be", leaderReport(t, "4.1.6-x")),
			wantDeleted: "d8ms-sr-olap-be-1", wantReason: ReasonRollingOut, wantMessage: "Restarting BE pod d8ms-sr-olap-be-1"},
		{name: "restarts the FE leader once the BEs are back on the new version and the image is created", objects: rolloutObjectsYAML("fe-old", "be-new", "be-new", "sts-uid-olap-be", leaderReport(t, cur, "fe-new")),
			wantDeleted: "d8ms-sr-olap-0", wantReason: ReasonRollingOut, wantMessage: "Restarting the FE leader d8ms-sr-olap-0"},
		{name: "waits for the metadata image before the FEs", objects: rolloutObjectsYAML("fe-old", "be-new", "be-new", "sts-uid-olap-be", leaderReport(t, cur)),
			wantReason: ReasonRolloutWaits, wantMessage: "ALTER SYSTEM CREATE IMAGE", wantImage: "fe-new"},
		{name: "waits for a BE reported on the old version", objects: rolloutObjectsYAML("fe-old", "be-old", "be-new", "sts-uid-olap-be", leaderReport(t, "4.1.6-x")),
			wantReason: ReasonRolloutWaits, wantMessage: `reports it on version "4.1.6-x"`},
		{name: "a look-alike pod of another StatefulSet is not the instance's", objects: rolloutObjectsYAML("fe-old", "be-old", "be-old", "forged-uid", leaderReport(t, "4.1.6-x")),
			wantReason: ReasonRolloutWaits, wantMessage: "BE pod 1 is being recreated"},
		{name: "an unreadable report leaves the leader unknown", objects: rolloutObjectsYAML("fe-old", "be-new", "be-new", "sts-uid-olap-be", `{"membership": 7`),
			wantReason: ReasonRolloutWaits, wantMessage: "no agent of the FE leader has reported"},
		{name: "an agent older than node reports does not stall the upgrade that replaces it", objects: rolloutObjectsYAML("fe-old", "be-old", "be-new", "sts-uid-olap-be", oldAgentReport(t)),
			wantDeleted: "d8ms-sr-olap-be-0", wantReason: ReasonRollingOut, wantMessage: "Restarting BE pod d8ms-sr-olap-be-0"},
		{name: "a BE-only change restarts a BE and names no FE, even one StarRocks does not report alive",
			objects:     rolloutObjectsYAML("fe-new", "be-old", "be-old", "sts-uid-olap-be", feDownReport(t, cur)),
			wantDeleted: "d8ms-sr-olap-be-1", wantReason: ReasonRollingOut, wantMessage: "Restarting BE pod d8ms-sr-olap-be-1"},
		{name: "waits for the leader to write the image it asked for", objects: rolloutObjectsYAML("fe-old", "be-new", "be-new", "sts-uid-olap-be", leaderReportWith(t, cur, func(st *agentconfig.Status) {
			st.ImageJournalID = 500
			st.Membership.ImageCreated, st.Membership.ImageBaseline = "fe-new", 500
			st.Membership.ImageRequestedAt = time.Now().UTC().Format(time.RFC3339)
		})), wantReason: ReasonRolloutWaits, wantMessage: "the FEs wait for the FE leader to write a new metadata image after ALTER SYSTEM CREATE IMAGE (its newest is image.500)"},
		{name: "restarts the FE once its new image is written", objects: rolloutObjectsYAML("fe-old", "be-new", "be-new", "sts-uid-olap-be", leaderReportWith(t, cur, func(st *agentconfig.Status) {
			st.ImageJournalID = 1000
			st.Membership.ImageCreated, st.Membership.ImageBaseline = "fe-new", 500
			st.Membership.ImageRequestedAt = time.Now().UTC().Format(time.RFC3339)
		})), wantDeleted: "d8ms-sr-olap-0", wantReason: ReasonRollingOut, wantMessage: "Restarting the FE leader d8ms-sr-olap-0"},
		{name: "goes on without the image past its bound and says so", objects: rolloutObjectsYAML("fe-old", "be-new", "be-new", "sts-uid-olap-be", leaderReportWith(t, cur, func(st *agentconfig.Status) {
			st.ImageJournalID = 500
			st.Membership.ImageCreated, st.Membership.ImageBaseline = "fe-new", 500
			st.Membership.ImageRequestedAt = "2020-01-01T00:00:00Z"
		})), wantDeleted: "d8ms-sr-olap-0", wantReason: ReasonRollingOut, wantMessage: "The FEs waited 10m0s for the FE leader to write a new metadata image"},
		{name: "waits for unhealthy tablets before the next BE", objects: rolloutObjectsYAML("fe-old", "be-old", "be-new", "sts-uid-olap-be", leaderReportWith(t, cur, func(st *agentconfig.Status) {
			st.Membership.Tablets = &agentconfig.TabletsStatus{Unhealthy: 4, Since: time.Now().UTC().Format(time.RFC3339)}
		})), wantReason: ReasonRolloutWaits, wantMessage: "The next BE restart waits until every tablet is healed: StarRocks counts 4 unhealthy tablets"},
		{name: "forged numbers in the report read as no image and unknown tablet health, never as a hook error",
			objects: rolloutObjectsYAML("fe-old", "be-old", "be-new", "sts-uid-olap-be", `{"imageJournalId": 1e300, "membership": {"leader": "d8ms-sr-olap-0.d8ms-sr-olap-fe-headless.team.svc.cluster.local", "imageBaseline": -5,`+
				` "nodes": [{"host": "`+beHostOf(0)+`", "alive": true, "version": "`+cur+`"}, {"host": "`+beHostOf(1)+`", "alive": true, "version": "`+cur+`"}], "tablets": {"unhealthy": "many", "since": 7}}}`),
			wantReason: ReasonRolloutWaits, wantMessage: "the leader's agent cannot read the tablet health"},
		{name: "nothing to do on the current templates", objects: rolloutObjectsYAML("fe-new", "be-new", "be-new", "sts-uid-olap-be", leaderReport(t, cur)),
			wantReason: ReasonPodsUpToDate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + clusterYAML(2) + "---" + tt.objects)
			f.RunHook()
			require.NoError(t, f.HookError())
			for _, p := range []string{"d8ms-sr-olap-0", "d8ms-sr-olap-be-0", "d8ms-sr-olap-be-1"} {
				obj := f.KubernetesResource("Pod", "team", p)
				exists := obj != nil && obj.Object != nil && obj.GetName() != ""
				assert.Equal(t, p != tt.wantDeleted, exists, "pod %s", p)
			}
			if tt.wantImage != "" {
				entries := entriesOf(t, f)
				require.Len(t, entries, 1)
				assert.Equal(t, tt.wantImage, entries[0].Get("agentConfig.createImage").String(), "the leader's agent is asked for the image")
			}
			s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionRolledOut)
			assert.Equal(t, tt.wantReason, r, m)
			assert.Equal(t, tt.wantReason == ReasonPodsUpToDate, s == "True")
			assert.Contains(t, m, tt.wantMessage)
			if strings.Contains(tt.name, "BE-only") {
				assert.NotContains(t, m, "d8ms-sr-olap-0", "a BE-only change names no FE pod")
			}
		})
	}
}

func TestHookRestartsAPodByItsUIDAndReportsARefusal(t *testing.T) {
	objects := rolloutObjectsYAML("fe-old", "be-old", "be-old", "sts-uid-olap-be", leaderReport(t, "4.1.6-x"))
	t.Run("the deletion is for the pod of the snapshot only", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + clusterYAML(2) + "---" + objects)
		f.RunHook()
		require.NoError(t, f.HookError())
		deletes := written(f, "delete", "pods")
		require.Len(t, deletes, 1)
		d := deletes[0].(k8stesting.DeleteAction)
		assert.Equal(t, "d8ms-sr-olap-be-1", d.GetName())
		require.NotNil(t, d.GetDeleteOptions().Preconditions)
		assert.EqualValues(t, "pod-uid-d8ms-sr-olap-be-1", *d.GetDeleteOptions().Preconditions.UID, "a pod re-created under the name is not deleted again")
	})
	t.Run("a refused deletion: RolledOut says it, the run succeeds", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + clusterYAML(2) + "---" + objects)
		refuse(f, "delete", "pods", "team", "d8ms-sr-olap-be-1", "admission webhook \"no-delete.example.com\" denied the request")
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.NotNil(t, f.KubernetesResource("Pod", "team", "d8ms-sr-olap-be-1"))
		s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionRolledOut)
		assert.Equal(t, []string{"False", ReasonRolloutWaits}, []string{s, r})
		assert.Contains(t, m, `The API server refused to delete pod d8ms-sr-olap-be-1`)
		assert.Contains(t, m, `no-delete.example.com`)
	})
}

// The leader's agent reads SHOW PROC '/statistic' (every tablet, under the
// databases' locks) only while a BE restart is pending.
func TestHookAsksForTabletHealthOnlyWhileBEsRestart(t *testing.T) {
	cur := desired.StarRocksVersion + "-abc"
	for _, tt := range []struct {
		be0, be1 string
		want     bool
	}{{"be-old", "be-old", true}, {"be-new", "be-old", true}, {"be-new", "be-new", false}} {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + clusterYAML(2) + "---" + rolloutObjectsYAML("fe-old", tt.be0, tt.be1, "sts-uid-olap-be", leaderReport(t, cur)))
		f.RunHook()
		require.NoError(t, f.HookError())
		entries := entriesOf(t, f)
		require.Len(t, entries, 1)
		assert.Equal(t, tt.want, entries[0].Get("agentConfig.tabletHealth").Bool(), "BE revisions %s, %s", tt.be0, tt.be1)
	}
}

// sdRolloutState is the shared-data instance olap: its FE StatefulSet (1
// pod, fe-new) and CN StatefulSet (3 pods, cn-new), the pods on the
// revisions given, as the rollout pods' filter reads them; FE pod 0 leads
// and its agent lists the CNs alive on version. cnOwner is the UID the CN
// pods name as their controller.
func sdRolloutState(t *testing.T, feRev string, cnRevs [3]string, cnOwner, version string) State {
	t.Helper()
	names := desired.NamesFor("olap")
	s := State{StatefulSets: []StatefulSetSnap{
		{Namespace: "team", Name: names.FrontendStatefulSet, UID: "uid-fe", Instance: "olap", Component: shared.ComponentFrontend,
			StatefulSetState: StatefulSetState{Replicas: 1, ReadyReplicas: 1, UpdateRevision: "fe-new"}},
		{Namespace: "team", Name: names.ComputeStatefulSet, UID: "uid-cn", Instance: "olap", Component: shared.ComponentCompute,
			StatefulSetState: StatefulSetState{Replicas: 3, ReadyReplicas: 3, UpdateRevision: "cn-new"}},
	}}
	fe0 := names.FrontendStatefulSet + "-0." + names.FrontendHeadlessService + ".team.svc.cluster.local"
	m := &agentconfig.MembershipStatus{Leader: fe0, Nodes: []agentconfig.NodeStatus{{Host: fe0, Alive: true, Version: version}}}
	for i := range 3 {
		m.Nodes = append(m.Nodes, agentconfig.NodeStatus{Host: fmt.Sprintf("%s-%d.%s.team.svc.cluster.local", names.ComputeStatefulSet, i, names.ComputeHeadlessService), Alive: true, Version: version})
	}
	report, err := json.Marshal(agentconfig.Status{Membership: m})
	require.NoError(t, err)
	ann, _ := json.Marshal(map[string]string{agentconfig.StatusAnnotation: string(report)})
	pod := func(name, component, owner, ownerUID, rev, annotations string) RolloutPodSnap {
		var got RolloutPodSnap
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapRolloutPods),
			`{"metadata":{"name":"`+name+`","namespace":"team","uid":"uid-`+name+`","labels":{"app.kubernetes.io/instance":"olap","app.kubernetes.io/component":"`+component+`","controller-revision-hash":"`+rev+`"},`+
				`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"`+owner+`","uid":"`+ownerUID+`","controller":true}],"annotations":`+annotations+`},`+
				`"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, &got))
		return got
	}
	s.RolloutPods = append(s.RolloutPods, pod(names.FrontendStatefulSet+"-0", shared.ComponentFrontend, names.FrontendStatefulSet, "uid-fe", feRev, string(ann)))
	for i, rev := range cnRevs {
		s.RolloutPods = append(s.RolloutPods, pod(fmt.Sprintf("%s-%d", names.ComputeStatefulSet, i), shared.ComponentCompute, names.ComputeStatefulSet, cnOwner, rev, "{}"))
	}
	return s
}

// TestRolloutOfTheCNs: a shared-data instance rolls its CN StatefulSet
// (OnDelete, like the FE's) CNs first, one at a time, then its FEs; a pod
// whose controller is not the CN StatefulSet is not the instance's.
func TestRolloutOfTheCNs(t *testing.T) {
	cur := desired.StarRocksVersion + "-abc"
	e := &desired.Instance{Namespace: "team", Name: "olap", Names: desired.NamesFor("olap"), Compute: &desired.ComputeNodes{Replicas: 3}}
	cn := e.Names.ComputeStatefulSet
	plan := func(s State) desired.Rollout {
		var warnings []string
		o := observe(s, &warnings)[desired.Key("team", "olap")]
		require.NotNil(t, o.Compute)
		return planRollout(e, observeRollout(s)[desired.Key("team", "olap")], o.Frontend, o.Backend, o.Compute, "cluster.local", time.Now())
	}
	for _, tt := range []struct {
		name       string
		state      State
		wantDelete string
		wantState  desired.RolloutState
		wantMsg    string
	}{
		{"the highest CN first, the FE after the CNs", sdRolloutState(t, "fe-old", [3]string{"cn-old", "cn-old", "cn-old"}, "uid-cn", "4.1.6-x"),
			cn + "-2", desired.RolloutRestarting, "Restarting CN pod " + cn + "-2 with the new template (CNs first, one at a time; 4 pods to restart, the FEs after the CNs)"},
		{"the next CN once the restarted one is back", sdRolloutState(t, "fe-old", [3]string{"cn-old", "cn-old", "cn-new"}, "uid-cn", "4.1.6-x"),
			"", desired.RolloutWaiting, "CN pod " + cn + "-2 runs the current template and is alive, but StarRocks reports it on version \"4.1.6-x\""},
		{"the FE once every CN is back on the new version", sdRolloutState(t, "fe-old", [3]string{"cn-new", "cn-new", "cn-new"}, "uid-cn", cur),
			e.Names.FrontendStatefulSet + "-0", desired.RolloutRestarting, "Restarting the FE leader"},
		{"look-alike CN pods of another StatefulSet are not the instance's", sdRolloutState(t, "fe-old", [3]string{"cn-old", "cn-old", "cn-old"}, "forged-uid", "4.1.6-x"),
			"", desired.RolloutWaiting, "CN pod 0 is being recreated"},
		{"nothing to do on the current templates", sdRolloutState(t, "fe-new", [3]string{"cn-new", "cn-new", "cn-new"}, "uid-cn", cur),
			"", desired.RolloutDone, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := plan(tt.state)
			assert.Equal(t, tt.wantState, r.State, r.Message)
			assert.Equal(t, tt.wantDelete, r.Delete)
			assert.Contains(t, r.Message, tt.wantMsg)
		})
	}

	// A BE StatefulSet a tenant made under the instance's BE name is not
	// rolled: a shared-data instance has none.
	s := sdRolloutState(t, "fe-new", [3]string{"cn-new", "cn-new", "cn-new"}, "uid-cn", cur)
	s.StatefulSets = append(s.StatefulSets, StatefulSetSnap{Namespace: "team", Name: e.Names.BackendStatefulSet, UID: "uid-be", Instance: "olap", Component: shared.ComponentBackend,
		StatefulSetState: StatefulSetState{Replicas: 1, UpdateRevision: "be-new"}})
	s.RolloutPods = append(s.RolloutPods, RolloutPodSnap{Namespace: "team", Name: e.Names.BackendStatefulSet + "-0", UID: "x", Instance: "olap", Component: shared.ComponentBackend,
		Revision: "be-old", Owner: &OwnerSnap{Name: e.Names.BackendStatefulSet, UID: "uid-be"}, Ready: true})
	assert.Equal(t, desired.Rollout{}, plan(s), "a shared-data instance restarts no BE pod")
}
