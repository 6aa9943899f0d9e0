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
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// scriptedReplicas is the CN StatefulSet as the API server answers it: a
// count, or an error (403 while the Role has not caught up).
type scriptedReplicas struct {
	mu  sync.Mutex
	n   int32
	err error
}

func (s *scriptedReplicas) Replicas(context.Context, string) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.err
}

func (s *scriptedReplicas) set(n int32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n, s.err = n, err
}

const cnFormat = "d8ms-sr-demo-cn-%d.d8ms-sr-demo-cn.ns.svc.cluster.local"

func cnHost(i int) string {
	return []string{"d8ms-sr-demo-cn-0.d8ms-sr-demo-cn.ns.svc.cluster.local", "d8ms-sr-demo-cn-1.d8ms-sr-demo-cn.ns.svc.cluster.local",
		"d8ms-sr-demo-cn-2.d8ms-sr-demo-cn.ns.svc.cluster.local"}[i]
}

// sharedDataConfig is the agent's part of a shared-data instance demo of
// namespace ns, keys in the Secret keys (a, s), one to three CNs.
func sharedDataConfig() *agentconfig.SharedData {
	return &agentconfig.SharedData{
		StorageVolume: agentconfig.StorageVolume{Name: agentconfig.StorageVolumeName("0b5e7c1d-2222-4333-8444-955566667777"),
			Location: "s3://bucket/sr/ns/demo/0b5e7c1d-2222-4333-8444-955566667777", Endpoint: "http://s3.invalid",
			Credentials: agentconfig.S3Credentials{SecretName: "keys", AccessKeyIDKey: "a", SecretAccessKeyKey: "s"}},
		ComputeNodes: agentconfig.ComputeNodes{StatefulSet: "d8ms-sr-demo-cn", HostFormat: cnFormat, HeartbeatPort: 9050, Min: 1, Max: 3},
	}
}

// newSharedDataEnv is a fake FE, leader fe0, of the shared-data instance
// of sharedDataConfig whose root has serverPassword, and the Secrets the
// agent reads: the storage keys in keys.
func newSharedDataEnv(t *testing.T, serverPassword string) (*env, *memSecrets) {
	t.Helper()
	e := newEnv(t, envOptions{serverPassword: serverPassword})
	e.cfg.SharedData = sharedDataConfig()
	e.writeConfig(t)
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	secrets := newMemSecrets()
	secrets.set("keys", map[string]string{"a": "AKIAEXAMPLE", "s": "secretexample"})
	return e, secrets
}

func cnHosts(cns []fakefe.ComputeNode) []string {
	var out []string
	for _, cn := range cns {
		out = append(out, cn.Host)
	}
	return out
}

// What needs a running CN, which the tests' real FE has not: a CN beyond
// the count that is alive (its pod still runs, it may run queries) is left
// until its process has exited, then dropped; the StatefulSet unreadable
// drops nothing. The fake FE speaks no storage volume statement, so the
// volume is reported refused here; the CNs do not depend on it (the real
// FE's answers to both: realfe_shareddata_test.go, internal/shareddata).
func TestComputeNodesFollowTheStatefulSet(t *testing.T) {
	ctx := ctxT(t)
	e, secrets := newSharedDataEnv(t, rootPass)
	sts := &scriptedReplicas{n: 3}
	opts := e.options(fe0)
	opts.Secrets, opts.StatefulSets = secrets, sts
	a := agent.New(opts)
	a.LoadCertificates()

	a.Pass(ctx)
	require.Equal(t, []string{cnHost(0), cnHost(1), cnHost(2)}, cnHosts(e.fe.ComputeNodes()))
	st := a.Status()
	require.Equal(t, agentconfig.StorageVolumeRefused, st.SharedData.StorageVolume.Reason, "the fake speaks no storage volume")
	for i := range 3 {
		e.fe.SetComputeNode(cnHost(i), true, 0, "4.1.7")
	}

	// Scaled in to one: CN 1 runs queries, CN 2 has none; both are alive,
	// their pods still run (graceful exit), neither is dropped.
	sts.set(1, nil)
	e.fe.SetComputeNode(cnHost(1), true, 4, "4.1.7")
	a.Pass(ctx)
	require.Len(t, e.fe.ComputeNodes(), 3)
	cn := a.Status().Membership.ComputeNodes
	require.Equal(t, int32(1), cn.Desired)
	require.Equal(t, int32(3), cn.Alive)
	require.Equal(t, []string{cnHost(1) + ":9050", cnHost(2) + ":9050"}, cn.Leaving)

	// CN 2 has exited: dropped; CN 1 still finishes its queries.
	e.fe.SetComputeNode(cnHost(2), false, 0, "4.1.7")
	a.Pass(ctx)
	require.Equal(t, []string{cnHost(0), cnHost(1)}, cnHosts(e.fe.ComputeNodes()))

	// The StatefulSet unreadable: Min is kept, nothing is dropped even
	// once CN 1 has exited.
	sts.set(0, errors.New(`statefulsets.apps "d8ms-sr-demo-cn" is forbidden`))
	e.fe.SetComputeNode(cnHost(1), false, 0, "4.1.7")
	a.Pass(ctx)
	require.Equal(t, []string{cnHost(0), cnHost(1)}, cnHosts(e.fe.ComputeNodes()))
	cn = a.Status().Membership.ComputeNodes
	require.Equal(t, agent.ReasonReplicasUnreadable, cn.Reason)
	require.Equal(t, int32(-1), cn.Replicas)

	sts.set(1, nil)
	a.Pass(ctx)
	require.Equal(t, []string{cnHost(0)}, cnHosts(e.fe.ComputeNodes()))
	require.Contains(t, nodesOf(a.Status()), cnHost(0), "CNs are reported with their version among the nodes")
}

func nodesOf(st agentconfig.Status) map[string]string {
	out := map[string]string{}
	for _, n := range st.Membership.Nodes {
		out[n.Host] = n.Version
	}
	return out
}

// TestRestoredRootTakenOverWithTheTeamsSecret: an FE restored from a cluster
// snapshot of an instance of another namespace has that instance's root
// password, which no pod here can mount. The agent reads it from the Secret
// the team names (spec.storage.restoreFrom.rootPasswordSecretRef) on every
// pass: until it exists root refuses, once it does the agent takes root
// over, and the password is nowhere in the agent's output.
func TestRestoredRootTakenOverWithTheTeamsSecret(t *testing.T) {
	const sourceRoot = "SOURCEROOTPASSWORD2345"
	ctx := ctxT(t)
	e, secrets := newSharedDataEnv(t, sourceRoot)
	e.cfg.SharedData.SourceRootPassword = &agentconfig.SecretKeyRef{Name: "olap-root", Key: "root-pw"}
	e.writeConfig(t)
	logs := &logBuffer{}
	opts := e.options(fe0)
	opts.Secrets, opts.StatefulSets = secrets, &scriptedReplicas{n: 1}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := agent.New(opts)
	a.LoadCertificates()

	a.Pass(ctx)
	st := a.Status()
	require.NotNil(t, st.Accounts)
	require.Equal(t, agentconfig.ReasonRootPasswordRefused, st.Accounts.Reason, "%+v", st.Accounts)
	require.Contains(t, logs.String(), "cannot read root's password of the restore source")

	secrets.set("olap-root", map[string]string{"password": "not-this-key-1234"})
	a.Pass(ctx)
	require.Equal(t, agentconfig.ReasonRootPasswordRefused, a.Status().Accounts.Reason, "another key of the Secret is not root's password")

	secrets.set("olap-root", map[string]string{"root-pw": sourceRoot + "\n"})
	a.Pass(ctx)
	st = a.Status()
	require.True(t, st.Accounts.Ready, "%+v", st.Accounts)
	require.NoError(t, e.login(t, "root", rootPass), "root has the new instance's password")
	require.Equal(t, conn.KindAuth, conn.KindOf(e.login(t, "root", sourceRoot)), "the source's root password no longer works")
	out, _ := json.Marshal(st)
	requireNoSecrets(t, logs.String(), string(out))
	require.NotContains(t, logs.String()+string(out), sourceRoot)

	// Once the instance has bootstrapped the Secret is no longer read:
	// the team may delete it.
	e.cfg.Bootstrapped = true
	e.writeConfig(t)
	delete(secrets.data, "olap-root")
	before := strings.Count(logs.String(), "cannot read root's password of the restore source")
	a.Pass(ctx)
	require.True(t, a.Status().Accounts.Ready)
	require.Equal(t, before, strings.Count(logs.String(), "cannot read root's password of the restore source"), "the Secret was read after the bootstrap")
}
