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
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestRestoredRootResetWithAuthenticationOff: the first FE of an instance
// restored from a cluster snapshot whose source root password the agent
// has nowhere. The agent asks the start wrapper for a restore with
// authentication off, never reports the accounts ready while the FE lets
// any password in, gives root its password once StarRocks has finished
// the restore, and after the start with authentication on makes its
// accounts as on any instance.
func TestRestoredRootResetWithAuthenticationOff(t *testing.T) {
	const sourceRoot = "SOURCEROOTPASSWORD2345"
	ctx := ctxT(t)
	e, secrets := newSharedDataEnv(t, sourceRoot)
	logs := &logBuffer{}
	newAgent := func(self string) (*agent.Agent, agent.Options) {
		opts := e.options(self)
		// Each FE pod has its own meta volume and run directory.
		opts.MetaDir, opts.HelperFile = filepath.Join(e.dir, "meta-"+self), filepath.Join(e.dir, "run-"+self, "fe-helper")
		require.NoError(t, os.MkdirAll(opts.MetaDir, 0o755))
		require.NoError(t, os.MkdirAll(filepath.Dir(opts.HelperFile), 0o755))
		opts.Secrets, opts.StatefulSets = secrets, &scriptedReplicas{n: 1}
		opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		a := agent.New(opts)
		a.LoadCertificates()
		return a, opts
	}
	a, opts := newAgent(fe0)
	runFile := func(name string) string { return filepath.Join(filepath.Dir(opts.HelperFile), name) }
	exists := func(path string) bool { _, err := os.Stat(path); return err == nil }
	marker := filepath.Join(opts.MetaDir, agentconfig.RestoreMarkerName)
	reset, done := runFile(agentconfig.RootResetFileName), runFile(agentconfig.RootResetDoneFileName)

	// Not restored (no marker in meta): refused, nothing asked.
	a.Pass(ctx)
	require.Equal(t, agentconfig.ReasonRootPasswordRefused, a.Status().Accounts.Reason)
	require.False(t, exists(reset), "a reset asked for an FE that did not restore")

	// Restored, but the instance has bootstrapped since, or this is not
	// the first FE: nothing asked either.
	require.NoError(t, os.WriteFile(marker, []byte("restore started\n"), 0o644))
	e.cfg.Bootstrapped = true
	e.writeConfig(t)
	a.Pass(ctx)
	require.False(t, exists(reset), "a reset asked on a bootstrapped instance")
	e.cfg.Bootstrapped = false
	e.writeConfig(t)
	other, otherOpts := newAgent(fe1)
	require.NoError(t, os.WriteFile(filepath.Join(otherOpts.MetaDir, agentconfig.RestoreMarkerName), []byte("x\n"), 0o644))
	other.Pass(ctx)
	require.False(t, exists(reset), "a reset asked by an FE that does not restore")
	require.NoFileExists(t, filepath.Join(filepath.Dir(otherOpts.HelperFile), agentconfig.RootResetFileName), "a reset asked by an FE that does not restore")

	// The team named a Secret with the source's password that cannot be
	// read (not made yet, or the Role not in effect yet): the agent waits
	// for it instead of resetting.
	e.cfg.SharedData.SourceRootPassword = &agentconfig.SecretKeyRef{Name: "olap-root", Key: "password"}
	e.writeConfig(t)
	a.Pass(ctx)
	require.Equal(t, agentconfig.ReasonRootPasswordRefused, a.Status().Accounts.Reason)
	require.False(t, exists(reset), "a reset asked while the Secret the team named is unreadable")
	require.Contains(t, logs.String(), "cannot read root's password of the restore source")

	// No password anywhere: the reset is asked for.
	e.cfg.SharedData.SourceRootPassword = nil
	e.writeConfig(t)
	a.Pass(ctx)
	st := a.Status().Accounts
	require.Equal(t, agentconfig.ReasonRootPasswordRefused, st.Reason)
	require.Contains(t, st.Message, "authentication off")
	require.True(t, exists(reset), "no reset asked")

	// Until the wrapper has restarted the FE with authentication off.
	a.Pass(ctx)
	require.Contains(t, a.Status().Accounts.Message, "waiting for the FE to be restored again with authentication off")

	// Authentication off, StarRocks not done with the restore: the
	// source's FE is still listed. Nothing is changed, nothing is ready,
	// though every login passes now.
	e.fe.SetAuthCheck(false)
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true},
		fakefe.Frontend{Host: "d8ms-sr-olap-0.d8ms-sr-olap-fe.ns.svc.cluster.local", EditLogPort: 9010, Role: "FOLLOWER"})
	a.Pass(ctx)
	st = a.Status().Accounts
	require.False(t, st.Ready, "accounts ready while the FE lets any password in")
	require.Contains(t, st.Message, "has not finished the restore")
	// The agent of another FE reaches this one through the client Service,
	// where every account check passes now.
	other.Pass(ctx)
	require.False(t, other.Status().Accounts.Ready, "another FE's agent reports the accounts ready while the FE lets any password in")
	require.Contains(t, other.Status().Accounts.Message, "lets any password in")
	require.False(t, exists(done))
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	a.Pass(ctx)
	st = a.Status().Accounts
	require.False(t, st.Ready, "accounts ready while the FE lets any password in")
	require.True(t, exists(done), "the wrapper was not told that root has the agent's password")
	require.Contains(t, st.Message, "waiting for the FE to start from its meta with authentication on")
	pw, _ := e.fe.Password("root")
	require.Equal(t, rootPass, pw, "root has not the agent's password")
	pw, _ = e.fe.Password(agentconfig.AdminUser)
	require.NotEqual(t, adminPass, pw, "the admin, which the source did not have, was created before the FE runs with authentication on")

	// The wrapper starts the FE from its meta with authentication on and
	// removes the marker (here the run files stay, as after a stop between
	// the two): the agent clears them and makes its accounts.
	e.fe.SetAuthCheck(true)
	require.NoError(t, os.Remove(marker))
	a.Pass(ctx)
	st = a.Status().Accounts
	require.True(t, st.Ready, "%+v", st)
	require.False(t, exists(reset) || exists(done), "the reset's files stay")
	require.NoError(t, e.login(t, "root", rootPass))
	require.Equal(t, conn.KindAuth, conn.KindOf(e.login(t, "root", sourceRoot)), "the source's root password still works")
	require.NoError(t, e.login(t, agentconfig.AdminUser, adminPass))
	out, _ := json.Marshal(a.Status())
	requireNoSecrets(t, logs.String(), string(out))
	require.NotContains(t, logs.String()+string(out), sourceRoot)
}
