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
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func TestHookReportsReplicationAndRefusesCountsBelowIt(t *testing.T) {
	all := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, beHostOf(i))
		}
		return out
	}
	report := &agentconfig.MembershipStatus{Leader: "fe-0", Backends: all(4),
		Replication: &agentconfig.ReplicationReport{MaxReplicationNum: 4, MaxReplicationTable: "shop.orders", MinReplicationNum: 1, MinReplicationTable: "shop.tmp"}}

	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + clusterYAML(4) + "---" + clusterObjectsYAML(t, 4, report))
	f.RunHook()
	require.NoError(t, f.HookError())
	st := statusOf(t, f, "olap")
	require.Equal(t, &v1alpha1.ReplicationStatus{MaxReplicationNum: 4, MaxReplicationTable: "shop.orders", MinReplicationNum: 1, MinReplicationTable: "shop.tmp"}, st.Replication)
	s, r, m := condition(st, v1alpha1.ConditionTablesReplicated)
	assert.Equal(t, []string{"False", ReasonTablesUnderReplicated}, []string{s, r})
	assert.Contains(t, m, `Table shop.tmp keeps 1 replica, fewer than the instance's default of 3`)
	assert.Contains(t, m, `ALTER TABLE shop.tmp SET ("default.replication_num" = "3"); ALTER TABLE shop.tmp MODIFY PARTITION (*) SET ("replication_num" = "3")`)

	t.Run("a count below it keeps the configuration in effect", func(t *testing.T) {
		f.KubeStateSet(classYAML + "---" + clusterYAMLWithStatus(t, f, 3) + "---" + clusterObjectsYAML(t, 4, report) + "---" + lastValidYAML(t, f, "uid-olap"))
		f.RunHook()
		require.NoError(t, f.HookError())
		st := statusOf(t, f, "olap")
		s, r, m := condition(st, v1alpha1.ConditionConfigurationValid)
		assert.Equal(t, []string{"False", ReasonClassRuleViolated}, []string{s, r})
		assert.Contains(t, m, "table shop.orders has replication_num 4")
		entries := entriesOf(t, f)
		require.Len(t, entries, 1)
		assert.Len(t, entries[0].Get("agentConfig.backends").Array(), 4, "no BE is decommissioned")
	})

	t.Run("it stays when no agent reports", func(t *testing.T) {
		f.KubeStateSet(classYAML + "---" + clusterYAMLWithStatus(t, f, 4) + "---" + clusterObjectsYAML(t, 4, nil) + "---" + lastValidYAML(t, f, "uid-olap"))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.EqualValues(t, 4, statusOf(t, f, "olap").Replication.MaxReplicationNum)
	})
}

// A BE pod Ready by its probes that StarRocks does not count alive (its
// heartbeat unanswered: the local node's BE stand-in) is said so before
// the agent can report any replication, which needs a live BE; the count
// is all that reaches the status of the tenant-writable report.
func TestTablesReplicatedSaysNoBackendIsAlive(t *testing.T) {
	nodes := func(alive bool) []agentconfig.NodeStatus {
		out := []agentconfig.NodeStatus{{Host: "fe-0", Alive: true}}
		for i := 0; i < 3; i++ {
			out = append(out, agentconfig.NodeStatus{Host: beHostOf(i) + ".", Alive: alive && i == 2})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		report *agentconfig.MembershipStatus
		reason string
	}{
		{"none alive", &agentconfig.MembershipStatus{Leader: "fe-0", Backends: []string{beHostOf(0), beHostOf(1), beHostOf(2)}, Nodes: nodes(false)}, ReasonNoBackendAlive},
		{"one alive", &agentconfig.MembershipStatus{Leader: "fe-0", Backends: []string{beHostOf(0), beHostOf(1), beHostOf(2)}, Nodes: nodes(true)}, ReasonWaitingForAgent},
		{"none listed", &agentconfig.MembershipStatus{Leader: "fe-0", Nodes: nodes(false)[:1]}, ReasonWaitingForAgent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + clusterYAML(3) + "---" + clusterObjectsYAML(t, 3, tc.report))
			f.RunHook()
			require.NoError(t, f.HookError())
			s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionTablesReplicated)
			assert.Equal(t, []string{"Unknown", tc.reason}, []string{s, r}, m)
			if tc.reason == ReasonNoBackendAlive {
				assert.Contains(t, m, "StarRocks lists 3 BEs and reports none alive")
			}
		})
	}
}

func TestAForgedReplicationReportStaysWithinTheSchema(t *testing.T) {
	for _, tt := range []struct {
		name, annotation string
		want             *v1alpha1.ReplicationStatus
	}{
		{name: "a number of the wrong type makes the report unreadable",
			annotation: `{"membership": {"replication": {"maxReplicationNum": "9"}}}`},
		{name: "a negative number makes the report unreadable",
			annotation: `{"membership": {"replication": {"maxReplicationNum": -1}}}`},
		{name: "a long table name is cut to the schema's length",
			annotation: `{"membership": {"backends": [], "replication": {"maxReplicationNum": 3, "maxReplicationTable": "` + strings.Repeat("x", 1000) + `"}}}`,
			want:       &v1alpha1.ReplicationStatus{MaxReplicationNum: 3, MaxReplicationTable: strings.Repeat("x", maxTableNameLength-len(truncatedMessageSuffix)) + truncatedMessageSuffix}},
		{name: "a number too large for StarRocks is capped",
			annotation: `{"membership": {"backends": [], "replication": {"maxReplicationNum": 1000000}}}`,
			want:       &v1alpha1.ReplicationStatus{MaxReplicationNum: 32767}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + clusterYAML(3) + "---" + clusterObjectsYAML(t, 3, tt.annotation))
			f.RunHook()
			require.NoError(t, f.HookError(), "a forged annotation never fails the run")
			st := statusOf(t, f, "olap")
			assert.Equal(t, tt.want, st.Replication, "an unreadable report reports nothing")
		})
	}
}

func TestTablesReplicatedQuotesOnlyPlainTableNames(t *testing.T) {
	e := &desired.Instance{Configuration: desired.Configuration{DefaultReplicationNum: 3}}
	status, reason, _ := tablesReplicated(nil, e, 0)
	assert.Equal(t, []string{"Unknown", ReasonWaitingForAgent}, []string{string(status), reason})
	status, _, _ = tablesReplicated(&v1alpha1.ReplicationStatus{MinReplicationNum: 3, MinReplicationTable: "a.b"}, e, 0)
	assert.EqualValues(t, "True", status)
	status, _, _ = tablesReplicated(&v1alpha1.ReplicationStatus{}, e, 0)
	assert.EqualValues(t, "True", status, "no table at all")
	_, _, msg := tablesReplicated(&v1alpha1.ReplicationStatus{MinReplicationNum: 1, MinReplicationTable: "a.b; DROP DATABASE c"}, e, 0)
	assert.Contains(t, msg, `ALTER TABLE <database>.<table> SET ("default.replication_num" = "3")`)
	assert.NotContains(t, msg, "ALTER TABLE a.b; DROP")
}
