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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// guardEnv is a 3-FE instance whose FE-0 agent runs with an empty meta
// directory (its volume was lost).
func guardEnv(t *testing.T, bootstrapped bool) (*env, agent.Options, *recordingPublisher) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.cfg.Frontends = []string{fe0, fe1, fe2}
	e.cfg.Bootstrapped = bootstrapped
	e.writeConfig(t)
	opts := e.options(fe0)
	opts.MetaDir = t.TempDir()
	pub := &recordingPublisher{}
	opts.Publisher = pub
	return e, opts, pub
}

func TestFrontendWithoutMetaRejoinsTheLeader(t *testing.T) {
	ctx := ctxT(t)
	e, opts, pub := guardEnv(t, true)
	// FE-1 leads since FE-0 went away; StarRocks still lists FE-0's old entry.
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "FOLLOWER", Alive: false},
		fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "LEADER", Alive: true},
		fakefe.Frontend{Host: fe2, EditLogPort: 9010, Role: "FOLLOWER", Alive: true})
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)

	_, err := os.Stat(filepath.Join(filepath.Dir(opts.HelperFile), agentconfig.BootstrapFileName))
	require.ErrorIs(t, err, os.ErrNotExist, "an FE of a bootstrapped instance never bootstraps")
	require.Equal(t, []string{fe0}, e.fe.DroppedFollowers(), "the stale entry is dropped")
	require.ElementsMatch(t, []string{fe0, fe1, fe2}, hosts(e.fe.Frontends()), "and FE-0 added again")
	helper, err := os.ReadFile(opts.HelperFile)
	require.NoError(t, err)
	require.Equal(t, fe1+":9010", string(helper), "FE-0 joins through the leader")
	st := pub.last()
	require.NotNil(t, st.Join)
	require.Equal(t, agentconfig.JoinReasonRejoining, st.Join.Reason)
	for _, c := range e.fe.Connections() {
		require.True(t, c.TLS, "every connection uses TLS")
	}

	// The FE now starts with the helper: later passes leave it alone.
	a.Pass(ctx)
	require.Equal(t, []string{fe0}, e.fe.DroppedFollowers(), "a joining FE is never dropped again")

	// Once it has joined it has meta, and nothing is reported any more.
	require.NoError(t, os.MkdirAll(filepath.Join(opts.MetaDir, "image"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(opts.MetaDir, "image", "VERSION"), []byte("1"), 0o644))
	e.fe.SetFrontendAlive(fe0, true)
	a.Pass(ctx)
	require.Nil(t, pub.last().Join)
}

func TestNewFrontendWithoutMetaWaitsForTheLeadersAgent(t *testing.T) {
	ctx := ctxT(t)
	e, opts, pub := guardEnv(t, true)
	// A Standalone turned Cluster: FE-1 is new and not listed yet.
	opts.SelfHost = fe1
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	require.Zero(t, countPrefix(e.fe.Statements(), "ALTER SYSTEM"), "the leader's agent adds followers, one at a time")
	_, err := os.Stat(opts.HelperFile)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, agentconfig.JoinReasonRejoining, pub.last().Join.Reason)
}

func TestFrontendWithoutMetaWaitsWithoutALeader(t *testing.T) {
	ctx := ctxT(t)
	e, opts, pub := guardEnv(t, true)
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "FOLLOWER", Alive: false},
		fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "FOLLOWER", Alive: false},
		fakefe.Frontend{Host: fe2, EditLogPort: 9010, Role: "FOLLOWER", Alive: true})
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	_, err := os.Stat(opts.HelperFile)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(filepath.Join(filepath.Dir(opts.HelperFile), agentconfig.BootstrapFileName))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Zero(t, countPrefix(e.fe.Statements(), "ALTER SYSTEM"))
	st := pub.last()
	require.NotNil(t, st.Join)
	require.Equal(t, agentconfig.JoinReasonWaitingForLeader, st.Join.Reason)
	require.False(t, st.LastApply.Succeeded)
}

func TestOnlyTheFirstFrontendOfANewInstanceBootstraps(t *testing.T) {
	ctx := ctxT(t)
	e, opts, _ := guardEnv(t, false)
	bootstrap := filepath.Join(filepath.Dir(opts.HelperFile), agentconfig.BootstrapFileName)

	follower := opts
	follower.SelfHost = fe1
	a1 := agent.New(follower)
	a1.LoadCertificates()
	a1.Pass(ctx)
	_, err := os.Stat(bootstrap)
	require.ErrorIs(t, err, os.ErrNotExist, "a follower never bootstraps")

	// No FE runs yet: the pass fails, but FE-0 may start the cluster.
	a0 := agent.New(opts)
	a0.LoadCertificates()
	a0.Pass(ctx)
	_, err = os.Stat(bootstrap)
	require.NoError(t, err, "the first FE of a new instance bootstraps")

	// Once the instance has bootstrapped the permission is withdrawn.
	e.cfg.Bootstrapped = true
	e.writeConfig(t)
	a0.Pass(ctx)
	_, err = os.Stat(bootstrap)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestRestoreMarkerGetsTheInstancesVerdict: the first FE of an instance
// restored from a cluster snapshot whose meta has the wrapper's restore
// marker waits until the agent says whether the instance has bootstrapped
// since (the restore finished: start from the meta) or not (restore
// again): the bootstrap file while it has not, the restored file once it
// has. A follower answers nothing.
func TestRestoreMarkerGetsTheInstancesVerdict(t *testing.T) {
	ctx := ctxT(t)
	e, opts, _ := guardEnv(t, false)
	run := filepath.Dir(opts.HelperFile)
	bootstrap, restored := filepath.Join(run, agentconfig.BootstrapFileName), filepath.Join(run, agentconfig.RestoredFileName)
	require.NoError(t, os.MkdirAll(filepath.Join(opts.MetaDir, "image"), 0o755))
	for _, f := range []string{"image/VERSION", agentconfig.RestoreMarkerName} {
		require.NoError(t, os.WriteFile(filepath.Join(opts.MetaDir, f), []byte("x"), 0o644))
	}
	exists := func(path string) bool { _, err := os.Stat(path); return err == nil }

	follower := opts
	follower.SelfHost = fe1
	a1 := agent.New(follower)
	a1.LoadCertificates()
	a1.Pass(ctx)
	require.False(t, exists(bootstrap) || exists(restored), "a follower never restores")

	a0 := agent.New(opts)
	a0.LoadCertificates()
	a0.Pass(ctx)
	require.True(t, exists(bootstrap), "not bootstrapped: restore again")
	require.False(t, exists(restored))

	e.cfg.Bootstrapped = true
	e.writeConfig(t)
	a0.Pass(ctx)
	require.False(t, exists(bootstrap), "bootstrapped: never restore again")
	require.True(t, exists(restored), "bootstrapped: the restore finished")

	// Without the marker (an instance not restored, or the wrapper has
	// removed it) the restored file means nothing and nothing else changes.
	require.NoError(t, os.Remove(filepath.Join(opts.MetaDir, agentconfig.RestoreMarkerName)))
	require.NoError(t, os.Remove(restored))
	a0.Pass(ctx)
	require.False(t, exists(bootstrap) || exists(restored))
}

func TestLeaderReportsNodeVersions(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.cfg.Backends = []string{be0}
	e.writeConfig(t)
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true, Version: "4.1.7-8f0ab1c"})
	e.fe.AddBackendRow(fakefe.Backend{Host: be0, HeartbeatPort: 9050, Alive: true, Version: "4.1.6-0c1d2e3"})
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	require.Equal(t, []agentconfig.NodeStatus{{Host: fe0, Alive: true, Version: "4.1.7-8f0ab1c"}, {Host: be0, Alive: true, Version: "4.1.6-0c1d2e3"}},
		pub.last().Membership.Nodes)

	// The BE restarts on the new version; a BE whose volume belongs to
	// another cluster is never alive.
	e.fe.SetNodeVersion(be0, "4.1.7-8f0ab1c", true)
	e.fe.AddBackendRow(fakefe.Backend{Host: be1, HeartbeatPort: 9050, Alive: true, Version: "4.1.7-8f0ab1c", ClusterID: 42})
	e.cfg.Backends = []string{be0, be1}
	e.writeConfig(t)
	a.Pass(ctx)
	require.Equal(t, []agentconfig.NodeStatus{{Host: fe0, Alive: true, Version: "4.1.7-8f0ab1c"}, {Host: be0, Alive: true, Version: "4.1.7-8f0ab1c"},
		{Host: be1, Alive: false, Version: "4.1.7-8f0ab1c"}}, pub.last().Membership.Nodes)
}

func TestLeaderCreatesAnImageOncePerRollout(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	require.Zero(t, e.fe.ImagesCreated(), "no rollout, no image")

	e.cfg.CreateImage = "d8ms-sr-demo-7c9f"
	e.writeConfig(t)
	a.Pass(ctx)
	a.Pass(ctx)
	require.Equal(t, 1, e.fe.ImagesCreated(), "one image per rollout")
	require.Equal(t, "d8ms-sr-demo-7c9f", pub.last().Membership.ImageCreated)
	// The statement only asked for the image (fe-core GlobalStateMgr.
	// triggerNewImage): none is written until the checkpoint runs.
	require.Zero(t, e.fe.ImagesWritten())
	require.True(t, e.fe.WritePendingImage())
	require.False(t, e.fe.WritePendingImage(), "one request, one image")
	require.Equal(t, 1, e.fe.ImagesWritten())

	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true},
		fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "FOLLOWER", Alive: true})
	fpub := &recordingPublisher{}
	fopts := e.options(fe1)
	fopts.Publisher = fpub
	follower := agent.New(fopts)
	follower.LoadCertificates()
	follower.Pass(ctx)
	require.Equal(t, 1, e.fe.ImagesCreated(), "only the leader's agent creates it")
	require.Nil(t, fpub.last().Membership)

	// FE-1 is elected: its agent has not created the image yet, so it does.
	e.fe.SetLeader(fe1)
	follower.Pass(ctx)
	require.Equal(t, 2, e.fe.ImagesCreated())
	require.Equal(t, fe1, fpub.last().Membership.Leader)
	require.Equal(t, "d8ms-sr-demo-7c9f", fpub.last().Membership.ImageCreated)
}

func TestEveryAgentReportsTheNewestImageOfItsFrontend(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true},
		fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "FOLLOWER", Alive: true})
	leaderMeta, followerMeta := t.TempDir(), t.TempDir()
	// An image of format v1 the FE had already; image.ckpt is one being
	// written and names no journal id (fe-core persist/Storage.reload).
	require.NoError(t, os.MkdirAll(filepath.Join(leaderMeta, "image"), 0o755))
	for _, f := range []string{"VERSION", "image.500", "image.ckpt", "ROLE"} {
		require.NoError(t, os.WriteFile(filepath.Join(leaderMeta, "image", f), nil, 0o644))
	}
	e.fe.SetImageMetaDirs(leaderMeta)

	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher, opts.MetaDir = pub, leaderMeta
	leader := agent.New(opts)
	leader.LoadCertificates()
	fpub := &recordingPublisher{}
	fopts := e.options(fe1)
	fopts.Publisher, fopts.MetaDir = fpub, followerMeta
	follower := agent.New(fopts)
	follower.LoadCertificates()

	leader.Pass(ctx)
	follower.Pass(ctx)
	require.Equal(t, int64(500), pub.last().ImageJournalID)
	require.Zero(t, fpub.last().ImageJournalID, "no image yet")

	e.cfg.CreateImage = "d8ms-sr-demo-7c9f"
	e.writeConfig(t)
	leader.Pass(ctx)
	m := pub.last().Membership
	require.Equal(t, "d8ms-sr-demo-7c9f", m.ImageCreated)
	require.Equal(t, int64(500), m.ImageBaseline, "the newest image before the statement")
	_, err := time.Parse(time.RFC3339, m.ImageRequestedAt)
	require.NoError(t, err, "when the statement ran")

	// The checkpoint writes image.1000 on the leader (format v2), then
	// the follower downloads it.
	require.True(t, e.fe.WritePendingImage())
	leader.Pass(ctx)
	require.Equal(t, int64(1000), pub.last().ImageJournalID)
	require.Equal(t, int64(500), pub.last().Membership.ImageBaseline, "the baseline stays that of the request")
	e.fe.SetImageMetaDirs(leaderMeta, followerMeta)
	e.cfg.CreateImage = "d8ms-sr-demo-8d0a"
	e.writeConfig(t)
	leader.Pass(ctx)
	require.True(t, e.fe.WritePendingImage())
	follower.Pass(ctx)
	require.Equal(t, int64(2000), fpub.last().ImageJournalID)
}

func TestLeaderReportsUnhealthyTablets(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.fe.SetTable("sales", "orders", 3)
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	a := agent.New(opts)
	a.LoadCertificates()
	// No BE restart pending: StarRocks is not asked to walk every tablet.
	e.fe.SetUnhealthyTablets(12)
	a.Pass(ctx)
	require.Equal(t, &agentconfig.TabletsStatus{Unhealthy: -1, NotRead: true}, pub.last().Membership.Tablets)
	require.Zero(t, countPrefix(e.fe.Statements(), "SHOW PROC '/STATISTIC'"), "read while no BE restart is pending")

	e.cfg.TabletHealth = true
	e.writeConfig(t)
	e.fe.SetUnhealthyTablets(0)
	a.Pass(ctx)
	require.Equal(t, &agentconfig.TabletsStatus{}, pub.last().Membership.Tablets, "every tablet healthy")
	require.Equal(t, 1, countPrefix(e.fe.Statements(), "SHOW PROC '/STATISTIC'"))

	e.fe.SetUnhealthyTablets(12)
	a.Pass(ctx)
	tablets := pub.last().Membership.Tablets
	require.Equal(t, int64(12), tablets.Unhealthy, "UnhealthyTabletNum of the Total row")
	since := tablets.Since
	_, err := time.Parse(time.RFC3339, since)
	require.NoError(t, err)
	e.fe.SetUnhealthyTablets(3)
	a.Pass(ctx)
	require.Equal(t, since, pub.last().Membership.Tablets.Since, "unhealthy since the first pass that saw it")

	e.fe.SetUnhealthyTablets(0)
	a.Pass(ctx)
	require.Equal(t, &agentconfig.TabletsStatus{}, pub.last().Membership.Tablets)
}
