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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

const feHost = ".d8ms-sr-olap-fe-headless.team.svc.cluster.local"

// observeAnnotations runs FE pods of olap with these agent-status
// annotations (by pod name; "" for none) through the real jq filter and
// observe, as the hook does.
func observeAnnotations(t *testing.T, annotations map[string]string) Observed {
	t.Helper()
	s := State{StatefulSets: []StatefulSetSnap{{Namespace: "team", Name: "d8ms-sr-olap", UID: "sts-uid", Instance: "olap", Component: "frontend"}}}
	for _, name := range sortedKeys(annotations) {
		ann := ""
		if a := annotations[name]; a != "" {
			q, _ := json.Marshal(a)
			ann = `,"annotations":{"` + agentconfig.StatusAnnotation + `":` + string(q) + `}`
		}
		var p PodSnap
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods),
			`{"metadata":{"name":"`+name+`","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"},`+
				`"ownerReferences":[{"kind":"StatefulSet","name":"d8ms-sr-olap","uid":"sts-uid","controller":true}]`+ann+`}}`, &p))
		p.checkReasons()
		s.Pods = append(s.Pods, p)
	}
	var warnings []string
	return observe(s, &warnings)["team/olap"]
}

// leaderStatus is the annotation of the FE leader's agent (pod pod) with
// this users report.
func leaderStatus(t *testing.T, pod string, users any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"tls": map[string]any{"ready": true}, "membership": map[string]any{"leader": pod + feHost}, "users": users, "updatedAt": "x"})
	require.NoError(t, err)
	return string(data)
}

func grantsEntry(databases []string, users ...string) *desired.Instance {
	e := &desired.Instance{Name: "olap", Namespace: "team", Generation: 1}
	g := &agentconfig.Grants{Databases: databases, Roles: []agentconfig.GrantsRole{{Name: "reader"}}, Users: []agentconfig.GrantsUser{}}
	for _, u := range users {
		g.Users = append(g.Users, agentconfig.GrantsUser{Name: u, SecretName: desired.UserSecretName("olap", u)})
	}
	if len(databases) == 0 && len(users) == 0 {
		g.Roles = []agentconfig.GrantsRole{}
	}
	e.AgentConfig.Grants = g
	return e
}

func TestUsersFilterReadsTheReportOnItsOwn(t *testing.T) {
	run := func(status string) PodSnap {
		q, _ := json.Marshal(status)
		var p PodSnap
		require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods),
			`{"metadata":{"name":"p-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"},"annotations":{"`+agentconfig.StatusAnnotation+`":`+string(q)+`}}}`, &p))
		p.checkReasons()
		return p
	}
	t.Run("a report", func(t *testing.T) {
		p := run(`{"tls":{"ready":true},"users":{"ready":false,"reason":"PasswordSecretMissing","message":"m","users":[{"name":"app","ready":false,"reason":"PasswordSecretMissing","message":"no Secret pw"}],"databases":[{"name":"sales","managed":true,"exists":true}]}}`)
		assert.Equal(t, &UsersSnap{UsersStatus: agentconfig.UsersStatus{Reason: "PasswordSecretMissing", Message: "m",
			Users:     []agentconfig.UserState{{Name: "app", Reason: "PasswordSecretMissing", Message: "no Secret pw"}},
			Databases: []agentconfig.DatabaseState{{Name: "sales", Managed: true, Exists: true}}}}, p.Users)
	})
	t.Run("no report", func(t *testing.T) {
		assert.Nil(t, run(`{"tls":{"ready":true}}`).Users)
	})
	for _, tt := range []struct{ status, why string }{
		{`{"tls":{"ready":true},"users":{"ready":"yes"}}`, "users.ready is of type string, want boolean"},
		{`{"tls":{"ready":true},"users":[]}`, "users is of type array, want object"},
		{`{"tls":{"ready":true},"users":{"users":{"name":"app"}}}`, "users.users is of type object, want array"},
		{`{"tls":{"ready":true},"users":{"users":[{"name":["app"]}]}}`, "users.users[].name is of type array, want string"},
		{`{"tls":{"ready":true},"users":{"databases":["sales"]}}`, "users.databases[] is of type string, want object"},
		{`{"tls":{"ready":true},"users":{"databases":[{"name":"sales","exists":"yes"}]}}`, "users.databases[].exists is of type string, want boolean"},
		{`{"tls":{"ready":true},"users":{"ready":false,"reason":"no; DROP"}}`, "users.reason is not a CamelCase word of at most 64 characters"},
		{`{"tls":{"ready":true},"users":{"ready":false,"reason":"` + strings.Repeat("A", 65) + `"}}`, "users.reason is not a CamelCase word of at most 64 characters"},
		{`{"tls":{"ready":true},"users":{"users":[{"name":"a","reason":"Ok"},{"name":"b","reason":"not_camel"}]}}`, "users.users[1].reason is not a CamelCase word of at most 64 characters"},
	} {
		t.Run(tt.status, func(t *testing.T) {
			p := run(tt.status)
			assert.Equal(t, &UsersSnap{Unreadable: tt.why}, p.Users)
			assert.Equal(t, &AgentTLS{Ready: true}, p.AgentTLS, "a bad users report leaves the pod's other reports readable")
		})
	}
	t.Run("an unreadable annotation makes the users report unreadable too", func(t *testing.T) {
		assert.Equal(t, &UsersSnap{Unreadable: "the agent-status annotation is not valid JSON"}, run(`not json`).Users)
	})
}

func TestUsersReady(t *testing.T) {
	user := func(name string, ready bool, reason, msg string) map[string]any {
		return map[string]any{"name": name, "ready": ready, "reason": reason, "message": msg}
	}
	applied := map[string]any{"ready": true, "users": []any{user("app", true, "", ""), user("reader", true, "", "")},
		"databases": []any{map[string]any{"name": "sales", "managed": true, "exists": true}, map[string]any{"name": "old", "managed": false, "exists": true}}}
	twoUsers := grantsEntry([]string{"sales"}, "app", "reader")
	for _, tt := range []struct {
		name        string
		entry       *desired.Instance
		annotations map[string]string
		prev        v1alpha1.StarrocksStatus
		wantStatus  bool
		wantReason  string
		wantMsg     string
		wantUsers   []v1alpha1.UserStatus
		wantDBs     []v1alpha1.DatabaseStatus
	}{
		{
			name: "nothing declared, no report: True", entry: grantsEntry(nil), annotations: map[string]string{"d8ms-sr-olap-0": `{"tls":{"ready":true}}`},
			wantStatus: true, wantReason: ReasonNothingDeclared, wantMsg: nothingDeclared,
		},
		{
			name: "a configuration from before grants: nothing declared", entry: &desired.Instance{Name: "olap"},
			wantStatus: true, wantReason: ReasonNothingDeclared, wantMsg: nothingDeclared,
		},
		{
			name: "declared, no leader has reported: waiting, naming what is pending", entry: twoUsers, annotations: map[string]string{"d8ms-sr-olap-0": `{"tls":{"ready":true}}`},
			wantReason: ReasonWaitingForAgent,
			wantMsg:    "The agent of the FE leader has not reported the declared users and databases yet. Pending: users not ready: app, reader; databases not created yet: sales.",
			wantUsers: []v1alpha1.UserStatus{
				{Name: "app", SecretName: "d8ms-sr-olap-user.app", Reason: ReasonWaitingForAgent, Message: "The agent of the FE leader has not reported this user yet."},
				{Name: "reader", SecretName: "d8ms-sr-olap-user.reader", Reason: ReasonWaitingForAgent, Message: "The agent of the FE leader has not reported this user yet."},
			},
		},
		{
			name: "the leader reports everything applied", entry: twoUsers, annotations: map[string]string{"d8ms-sr-olap-0": `{}`, "d8ms-sr-olap-1": leaderStatus(t, "d8ms-sr-olap-1", applied)},
			wantStatus: true, wantReason: ReasonUsersApplied, wantMsg: "The agent of the FE leader (pod d8ms-sr-olap-1) reports 1 database, 1 role and 2 users as declared.",
			wantUsers: []v1alpha1.UserStatus{{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true}, {Name: "reader", SecretName: "d8ms-sr-olap-user.reader", Ready: true}},
			wantDBs:   []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}, {Name: "old", Exists: true}},
		},
		{
			name: "a report of this declaration (its token) counts", entry: twoUsers,
			annotations: map[string]string{"d8ms-sr-olap-1": leaderStatus(t, "d8ms-sr-olap-1", withToken(applied, agentconfig.GrantsToken(twoUsers.AgentConfig.Grants)))},
			wantStatus:  true, wantReason: ReasonUsersApplied, wantMsg: "The agent of the FE leader (pod d8ms-sr-olap-1) reports 1 database, 1 role and 2 users as declared.",
			wantUsers: []v1alpha1.UserStatus{{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true}, {Name: "reader", SecretName: "d8ms-sr-olap-user.reader", Ready: true}},
			wantDBs:   []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}, {Name: "old", Exists: true}},
		},
		{
			// Same names, other privileges: only the token tells the report
			// is about the declaration before.
			name: "a ready report of an older declaration: waiting", entry: twoUsers,
			annotations: map[string]string{"d8ms-sr-olap-1": leaderStatus(t, "d8ms-sr-olap-1", withToken(applied, "0123456789abcdef"))},
			wantReason:  ReasonWaitingForAgent, wantMsg: "The agent of the FE leader has not applied the current declaration yet.",
			wantUsers: []v1alpha1.UserStatus{{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true}, {Name: "reader", SecretName: "d8ms-sr-olap-user.reader", Ready: true}},
			wantDBs:   []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}, {Name: "old", Exists: true}},
		},
		{
			name: "a follower's report does not count", entry: twoUsers, annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-1", applied)},
			wantReason: ReasonWaitingForAgent,
		},
		{
			name: "two pods claim to lead: nobody counts", entry: twoUsers,
			annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", applied), "d8ms-sr-olap-1": leaderStatus(t, "d8ms-sr-olap-1", applied)},
			wantReason:  ReasonWaitingForAgent,
		},
		{
			name: "the agent's reason and message, and each user's", entry: twoUsers,
			annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", map[string]any{"ready": false, "reason": "PasswordSecretMissing", "message": "Secret app-pw of user app does not exist.",
				"users": []any{user("app", false, "PasswordSecretMissing", "Secret app-pw does not exist"), user("reader", true, "", "")}, "databases": []any{map[string]any{"name": "sales", "managed": true, "exists": true}}})},
			wantReason: "PasswordSecretMissing",
			wantMsg:    "The agent of the FE leader (pod d8ms-sr-olap-0) reports: Secret app-pw of user app does not exist. Pending: users not ready: app.",
			wantUsers: []v1alpha1.UserStatus{
				{Name: "app", SecretName: "d8ms-sr-olap-user.app", Reason: "PasswordSecretMissing", Message: "Secret app-pw does not exist"},
				{Name: "reader", SecretName: "d8ms-sr-olap-user.reader", Ready: true},
			},
			wantDBs: []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}},
		},
		{
			name: "not ready without a reason or message", entry: twoUsers,
			annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", map[string]any{"ready": false, "users": []any{user("app", true, "", ""), user("reader", true, "", "")},
				"databases": []any{map[string]any{"name": "sales", "managed": true, "exists": true}}})},
			wantReason: defaultUsersNotReadyWhy,
			wantMsg:    "The agent of the FE leader (pod d8ms-sr-olap-0) reports: the declaration is not applied yet.",
		},
		{
			name: "ready for an older declaration: a user added since is pending", entry: grantsEntry([]string{"sales", "web"}, "app", "reader", "loader"),
			annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", applied)},
			wantReason:  ReasonWaitingForAgent,
			wantMsg:     "The agent of the FE leader has not applied the current declaration yet. Pending: users not ready: loader; databases not created yet: web.",
		},
		{
			name: "a user removed from the spec is not in status and is named until dropped", entry: grantsEntry([]string{"sales"}, "app"),
			annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", applied)},
			wantReason:  ReasonWaitingForAgent,
			wantMsg:     "The agent of the FE leader has not applied the current declaration yet. Pending: users removed from the spec and not dropped yet: reader.",
			wantUsers:   []v1alpha1.UserStatus{{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true}},
			wantDBs:     []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}, {Name: "old", Exists: true}},
		},
		{
			name: "an unreadable report of the leader", entry: twoUsers,
			annotations: map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", map[string]any{"ready": "yes"})},
			wantReason:  ReasonAgentStatusUnreadable,
			wantMsg:     "The agent status of pod d8ms-sr-olap-0 is not readable: users.ready is of type string, want boolean. Pending: users not ready: app, reader; databases not created yet: sales.",
		},
		{
			name: "an unreadable annotation and no leader", entry: twoUsers, annotations: map[string]string{"d8ms-sr-olap-0": `not json`},
			wantReason: ReasonAgentStatusUnreadable,
		},
		{
			name: "without a report the last reported state is kept", entry: twoUsers, annotations: map[string]string{"d8ms-sr-olap-0": `{}`},
			prev: v1alpha1.StarrocksStatus{
				Users:     []v1alpha1.UserStatus{{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true}, {Name: "gone", SecretName: "d8ms-sr-olap-user.gone", Ready: true}},
				Databases: []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}},
			},
			wantReason: ReasonWaitingForAgent,
			wantUsers: []v1alpha1.UserStatus{
				{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true},
				{Name: "reader", SecretName: "d8ms-sr-olap-user.reader", Reason: ReasonWaitingForAgent, Message: "The agent of the FE leader has not reported this user yet."},
			},
			wantDBs: []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, users, dbs := usersReady(tt.entry, observeAnnotations(t, tt.annotations), tt.prev)
			assert.Equal(t, tt.wantStatus, v.OK)
			assert.Equal(t, tt.wantReason, v.Reason)
			if tt.wantMsg != "" {
				assert.Equal(t, tt.wantMsg, v.Message)
			}
			if tt.wantUsers != nil || tt.wantStatus {
				assert.Equal(t, tt.wantUsers, users)
			}
			if tt.wantDBs != nil || tt.wantStatus {
				assert.Equal(t, tt.wantDBs, dbs)
			}
		})
	}
}

// The annotation is the tenant's to write: whatever it says, status stays
// within what the CRD and a person can take.
func TestAForgedUsersReportIsClamped(t *testing.T) {
	var users, dbs []any
	// The apiserver caps a pod's annotations at 256 KiB; this is past that.
	for i := range 1000 {
		users = append(users, map[string]any{"name": "app", "ready": true, "message": strings.Repeat("x", 2000)})
		dbs = append(dbs, map[string]any{"name": fmt.Sprintf("db_%d", i), "managed": true, "exists": true})
	}
	dbs = append([]any{
		map[string]any{"name": "sales`; DROP DATABASE x; --", "exists": true},
		map[string]any{"name": strings.Repeat("a", 300), "exists": true},
		map[string]any{"name": "", "exists": true},
		map[string]any{"name": "db_0", "exists": false},
	}, dbs...)
	obs := observeAnnotations(t, map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", map[string]any{"ready": false, "reason": "GrantRefused", "message": strings.Repeat("m", 100000), "users": users, "databases": dbs})})
	v, st, gotDBs := usersReady(grantsEntry(nil, "app"), obs, v1alpha1.StarrocksStatus{})
	assert.Equal(t, "GrantRefused", v.Reason)
	assert.LessOrEqual(t, len(v.Message), 1200)
	require.Len(t, st, 1, "only the declared user, once")
	assert.LessOrEqual(t, len(st[0].Message), maxUsersMessageLength)
	assert.Len(t, gotDBs, maxReportedDatabases)
	for _, d := range gotDBs {
		assert.Regexp(t, `^[a-z][a-z0-9_]*$`, d.Name)
	}
	assert.Equal(t, v1alpha1.DatabaseStatus{Name: "db_0"}, gotDBs[0], "the first report of a name counts")
}

func TestComputeStatusReportsUsersReady(t *testing.T) {
	sts := &StatefulSetState{Replicas: 1, ReadyReplicas: 1}
	res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "olap", Namespace: "team", Generation: 1}}, Entry: grantsEntry([]string{"sales"}, "app"), Current: true}
	obs := observeAnnotations(t, map[string]string{"d8ms-sr-olap-0": leaderStatus(t, "d8ms-sr-olap-0", map[string]any{"ready": true,
		"users": []any{map[string]any{"name": "app", "ready": true}}, "databases": []any{map[string]any{"name": "sales", "managed": true, "exists": true}}})})
	obs.Frontend, obs.Backend = sts, sts
	st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, obs, "cluster.local", metav1.Now())
	s, r, _ := condition(st, ConditionUsersReady)
	assert.Equal(t, []string{"True", ReasonUsersApplied}, []string{s, r})
	assert.Equal(t, []v1alpha1.UserStatus{{Name: "app", SecretName: "d8ms-sr-olap-user.app", Ready: true}}, st.Users)
	assert.Equal(t, []v1alpha1.DatabaseStatus{{Name: "sales", Managed: true, Exists: true}}, st.Databases)

	t.Run("nothing deployed", func(t *testing.T) {
		res := res
		res.Entry, res.Current = nil, false
		st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, Observed{}, "cluster.local", metav1.Now())
		s, r, _ := condition(st, ConditionUsersReady)
		assert.Equal(t, []string{"False", ReasonNotRendered}, []string{s, r})
	})
}

func TestAMalformedUsersReportAffectsOnlyItsInstance(t *testing.T) {
	bi := strings.ReplaceAll(starrocksYAML("bi", 1, 2, 1024), "namespace: team", "namespace: other")
	biObjects := strings.ReplaceAll(readyObjectsYAML("bi", 1, 1), "namespace: team", "namespace: other")
	for _, bad := range []string{
		`{"tls":{"ready":true},"membership":{"leader":"d8ms-sr-olap-1.x"},"users":{"ready":"yes"}}`,
		`{"tls":{"ready":true},"membership":{"leader":"d8ms-sr-olap-1.x"},"users":{"ready":false,"reason":"` + strings.Repeat("B", 5000) + `"}}`,
		`{"tls":{"ready":true},"membership":{"leader":"d8ms-sr-olap-1.x"},"users":{"ready":false,"reason":"Bad reason"}}`,
		`{"tls":{"ready":true},"membership":{"leader":"d8ms-sr-olap-1.x"},"users":{"ready":true,"databases":[{"name":"` + strings.Repeat("d", 5000) + `","exists":true}]}}`,
	} {
		t.Run(bad[:min(len(bad), 80)], func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 1) + "---" + bi + "---" + biObjects + "---" +
				podYAML("evil", "olap", "d8ms-sr-olap-1", "sts-uid-olap", bad) + "---" +
				podYAML("team", "olap", "d8ms-sr-olap-1", "sts-uid-olap", bad))
			f.RunHook()
			require.NoError(t, f.HookError(), "one malformed annotation never fails the run")
			st := statusOf(t, f, "olap")
			s, r, _ := condition(st, ConditionUsersReady)
			assert.Contains(t, []string{"True/" + ReasonNothingDeclared, "False/" + ReasonAgentStatusUnreadable}, s+"/"+r)
			for _, d := range st.Databases {
				assert.LessOrEqual(t, len(d.Name), 256)
			}
			_, r, _ = condition(st, v1alpha1.ConditionTLSReady)
			assert.Equal(t, ReasonCertificateReady, r, "TLS is read from the same annotation and stays readable")
			s, r, _ = condition(decodeStatus(t, f.KubernetesResource("Starrocks", "other", "bi")), ConditionUsersReady)
			assert.Equal(t, []string{"True", ReasonNothingDeclared}, []string{s, r}, "the other instance is unaffected")
		})
	}
}

func TestUsersReadyEvents(t *testing.T) {
	applied := cond(ConditionUsersReady, true, ReasonUsersApplied, "applied")
	waiting := cond(ConditionUsersReady, false, ReasonWaitingForAgent, "Pending: users not ready: app.")
	refused := cond(ConditionUsersReady, false, "PasswordSecretMissing", "The agent of the FE leader (pod p-0) reports: Secret app-pw of user app does not exist.")
	unreadable := cond(ConditionUsersReady, false, ReasonAgentStatusUnreadable, "The agent status of pod p-0 is not readable: users.ready is of type string, want boolean.")
	notRendered := cond(ConditionUsersReady, false, ReasonNotRendered, "Nothing is deployed.")
	type ev struct{ Type, Reason string }
	for _, tt := range []struct {
		name       string
		prev, next metav1.Condition
		want       []ev
	}{
		{"waiting for the agent is how a change goes", applied, waiting, nil},
		{"applied after waiting is no news", waiting, applied, nil},
		{"the agent refuses: a Warning with its reason", waiting, refused, []ev{{"Warning", "PasswordSecretMissing"}}},
		{"the same refusal again is no news", refused, refused, nil},
		{"an unreadable report: a Warning", applied, unreadable, []ev{{"Warning", ReasonAgentStatusUnreadable}}},
		{"applied after the refusal", refused, applied, []ev{{"Normal", ReasonUsersApplied}}},
		{"an instance not deployed", applied, notRendered, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "team", UID: "uid-a", Generation: 2}}
			got := []ev{}
			for _, e := range instanceEvents(sr, v1alpha1.StarrocksStatus{Conditions: []metav1.Condition{tt.prev}}, v1alpha1.StarrocksStatus{Conditions: []metav1.Condition{tt.next}}) {
				got = append(got, ev{e.Type, e.Reason})
				assert.Equal(t, tt.next.Message, e.Message)
			}
			if tt.want == nil {
				tt.want = []ev{}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// withToken is a users report with its applied token.
func withToken(report map[string]any, token string) map[string]any {
	out := map[string]any{"applied": token}
	for k, v := range report {
		out[k] = v
	}
	return out
}
