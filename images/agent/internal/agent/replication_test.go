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

package agent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const (
	be2 = "d8ms-sr-demo-be-2.d8ms-sr-demo-be.ns.svc.cluster.local"
	be3 = "d8ms-sr-demo-be-3.d8ms-sr-demo-be.ns.svc.cluster.local"
)

// TestReplicationAndRefusedDecommission: the leader's agent reports the
// largest and smallest replication number of the team's tables (StarRocks
// 4.1 leaves its statistics tables out of the decommission check), and a
// scale-in below a table's replication stalls with StarRocks' own words in
// the report, never with a dropped BE.
func TestReplicationAndRefusedDecommission(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.cfg.Backends = []string{be0, be1, be2, be3}
	e.writeConfig(t)
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.fe.SetTable("_statistics_", "column_statistics", 3)
	e.fe.SetTable("shop", "orders", 4)
	e.fe.SetTable("shop", "tmp", 1)
	// Not yet raised by the FE after a scale-out: never the smallest, the
	// team is not asked to alter StarRocks' own tables.
	e.fe.SetTable("_statistics_", "table_statistic_v1", 1)
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	opts.ReadReplicationEveryPass = true
	a := agent.New(opts)
	a.LoadCertificates()

	a.Pass(ctx) // adds the BEs; they are alive from the next SHOW BACKENDS on
	a.Pass(ctx)
	require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
	require.Len(t, e.fe.Backends(), 4)
	require.Equal(t, &agentconfig.ReplicationReport{MaxReplicationNum: 4, MaxReplicationTable: "shop.orders", MinReplicationNum: 1, MinReplicationTable: "shop.tmp"},
		pub.last().Membership.Replication)

	t.Run("a scale-in below a table's replication is refused and reported", func(t *testing.T) {
		e.fe.SetTabletNum(be3, 30)
		e.cfg.Backends = []string{be0, be1, be2}
		e.writeConfig(t)
		a.Pass(ctx)
		m := pub.last().Membership
		require.Contains(t, m.DecommissionRefused, "It will cause insufficient BE number if these BEs are decommissioned because the table shop.orders requires 4 replicas")
		require.False(t, findBackend(t, e.fe, be3).Decommissioned)
		require.Zero(t, countPrefix(e.fe.Statements(), "ALTER SYSTEM DROP BACKEND"))
		require.Equal(t, []agentconfig.BackendDrain{{Host: be3, TabletNum: 30}}, m.Draining, "the BE stays listed, so the hooks keep its pod")
		require.NotNil(t, m.Replication, "the replication numbers are read even when a statement failed")
	})

	t.Run("once the table's replication is lowered the decommission goes through", func(t *testing.T) {
		e.fe.SetTable("shop", "orders", 3)
		a.Pass(ctx)
		m := pub.last().Membership
		require.Empty(t, m.DecommissionRefused)
		require.True(t, findBackend(t, e.fe, be3).Decommissioned)
		require.EqualValues(t, 3, m.Replication.MaxReplicationNum)
		require.Equal(t, "shop.orders", m.Replication.MaxReplicationTable, "the statistics tables' 3 replicas are not reported")
	})

	t.Run("the statistics tables' 3 replicas do not hold the cluster at 3 BEs", func(t *testing.T) {
		e.fe.SetTabletNum(be3, 0)
		a.Pass(ctx)
		require.Equal(t, []string{be0, be1, be2}, backendHosts(e.fe.Backends()))
		e.fe.SetTable("shop", "orders", 1)
		e.fe.SetTabletNum(be2, 12)
		e.cfg.Backends = []string{be0, be1}
		e.writeConfig(t)
		a.Pass(ctx)
		m := pub.last().Membership
		require.Empty(t, m.DecommissionRefused)
		require.True(t, findBackend(t, e.fe, be2).Decommissioned)
		require.Equal(t, &agentconfig.ReplicationReport{MaxReplicationNum: 1, MaxReplicationTable: "shop.orders", MinReplicationNum: 1, MinReplicationTable: "shop.orders"}, m.Replication)
	})
}

func TestReplicationIsReadAtMostOnceAMinute(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.fe.SetTable("shop", "orders", 3)
	e.cfg.Backends = []string{be0}
	e.writeConfig(t)
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx) // adds be0
	a.Pass(ctx)
	e.fe.SetTable("shop", "orders", 5)
	a.Pass(ctx)
	require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
	require.EqualValues(t, 3, pub.last().Membership.Replication.MaxReplicationNum, "the last read is reported again")
	require.Equal(t, 2, countPrefix(e.fe.Statements(), "SELECT DB_NAME, TABLE_NAME, REPLICATION_NUM"), "one read (two queries) in two passes")
}

// TestReplicationIsNotReadWithoutAliveBackend: StarRocks has a BE scan
// information_schema, so with every BE down the read can only fail; the
// pass must not fail with it every time, and the last numbers stay.
func TestReplicationIsNotReadWithoutAliveBackend(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.fe.SetTable("shop", "orders", 3)
	e.cfg.Backends = []string{be0}
	e.writeConfig(t)
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	opts.ReadReplicationEveryPass = true
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	a.Pass(ctx)
	require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
	require.EqualValues(t, 3, pub.last().Membership.Replication.MaxReplicationNum)

	e.fe.SetNodeVersion(be0, "", false)
	reads := countPrefix(e.fe.Statements(), "SELECT DB_NAME, TABLE_NAME, REPLICATION_NUM")
	for range 3 {
		a.Pass(ctx)
		require.True(t, a.Status().LastApply.Succeeded, "a pass with every BE down: %s", a.Status().LastApply.Error)
		require.EqualValues(t, 3, pub.last().Membership.Replication.MaxReplicationNum, "the last read is reported again")
	}
	require.Equal(t, reads, countPrefix(e.fe.Statements(), "SELECT DB_NAME, TABLE_NAME, REPLICATION_NUM"), "no read while no BE is alive")
}
