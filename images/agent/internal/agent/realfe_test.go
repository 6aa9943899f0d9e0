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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/membership"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// The agent against a real StarRocks FE (dev/realfe): a new Standalone
// instance with requireSecureTransport, its FE started by the module's start
// script, which waits for the agent. The agent lets it bootstrap, sets root's
// password, creates its own and the team's accounts and applies the FE
// configuration; a second pass changes nothing. The instance's BE is left
// out of the agent's configuration: the tests run no BE, and StarRocks
// answers anything that needs one with "Backend node not found".
func TestAgentOnARealFrontend(t *testing.T) {
	// The real-FE tests mostly wait for StarRocks (its start, the
	// checkpoint daemon's minute): side by side, the package takes the
	// longest one's time instead of their sum.
	t.Parallel()
	c := realfe.Start(t, realfe.Options{RequireSecureTransport: true})
	fe := c.StartFE(t, 0)

	cfg := realFEAgentConfig(c)
	require.NotEmpty(t, cfg.FrontendConfig, "the rendered agent configuration has runtime FE settings to apply")
	logs := &logBuffer{}
	a := realFEAgent(t, c, cfg, fe, logs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*realfe.StartTimeout)
	defer cancel()

	t.Run("lets the first FE of a new instance bootstrap", func(t *testing.T) {
		a.Pass(ctx) // the FE waits for this pass: it cannot succeed yet
		_, err := os.Stat(filepath.Join(fe.RunDir, agentconfig.BootstrapFileName))
		require.NoError(t, err, "the agent wrote no bootstrap file")
		fe.WaitReady(t, realfe.StartTimeout)
	})

	t.Run("sets root's password and the accounts, applies the FE configuration", func(t *testing.T) {
		var st agentconfig.Status
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
			a.Pass(ctx)
			st = a.Status()
			if st.LastApply.Succeeded && st.Accounts != nil && st.Accounts.Ready {
				break
			}
			if time.Now().After(deadline) {
				report, _ := json.Marshal(st)
				t.Fatalf("the agent does not converge: %s\nFE:\n%s", report, fe.Tail())
			}
		}
		require.NotNil(t, st.Membership)
		require.Equal(t, fe.Host, st.Membership.Leader)
		for key, want := range cfg.FrontendConfig {
			var name, typ, value string
			row := c.DB(t, fe, "root", c.RootPassword, false).QueryRowContext(ctx, "ADMIN SHOW FRONTEND CONFIG LIKE '"+key+"'")
			require.NoError(t, row.Scan(&name, new(string), &value, &typ, new(string), new(string)), key)
			require.Equal(t, want, value, key)
		}
	})

	t.Run("a second pass changes nothing", func(t *testing.T) {
		a.Pass(ctx)
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		require.Empty(t, st.LastApply.Applied)
		require.True(t, st.Accounts.Ready)
	})

	t.Run("logins over TLS from another address", func(t *testing.T) {
		for _, l := range []struct{ user, password string }{
			{"root", c.RootPassword}, {agentconfig.AgentUser, agentPass}, {agentconfig.AdminUser, adminPass},
		} {
			require.NoError(t, c.DB(t, fe, l.user, l.password, false).PingContext(ctx), l.user)
		}
		err := c.DB(t, fe, "root", "", false).PingContext(ctx)
		var me *mysql.MySQLError
		require.True(t, errors.As(err, &me) && me.Number == 1045, "root with the empty password: %v", err)
		err = c.DB(t, fe, "root", c.RootPassword, true).PingContext(ctx)
		require.True(t, errors.As(err, &me) && me.Number == 5205, "plaintext: %v", err)
	})

	// The accounts' roles as StarRocks enforces them (built_in_roles.md):
	// the team's admin (db_admin, user_admin) manages data and users but
	// not nodes, and not root; the agent (cluster_admin, db_admin) manages
	// nodes and configuration, not users. 5203 is fe-core ErrorCode
	// ERR_ACCESS_DENIED.
	t.Run("the team's admin is refused nodes and root's password, the agent users", func(t *testing.T) {
		var me *mysql.MySQLError
		admin := c.DB(t, fe, agentconfig.AdminUser, adminPass, false)
		_, err := admin.ExecContext(ctx, `ALTER SYSTEM ADD BACKEND "evil.example:9050"`)
		require.True(t, errors.As(err, &me) && me.Number == 5203, "ALTER SYSTEM as the team's admin: %v", err)
		_, err = admin.ExecContext(ctx, "SET PASSWORD FOR 'root' = PASSWORD('takeover1')")
		require.Error(t, err, "only root changes root's password")
		require.NoError(t, c.DB(t, fe, "root", c.RootPassword, false).PingContext(ctx), "root's password is the module's")
		_, err = admin.ExecContext(ctx, "CREATE USER 'team_probe' IDENTIFIED BY 'probe-pass-1'")
		require.NoError(t, err, "the team's admin manages users")
		_, err = admin.ExecContext(ctx, "DROP USER 'team_probe'")
		require.NoError(t, err)
		_, err = c.DB(t, fe, agentconfig.AgentUser, agentPass, false).ExecContext(ctx, "CREATE USER 'agent_probe' IDENTIFIED BY 'probe-pass-1'")
		require.True(t, errors.As(err, &me) && me.Number == 5203, "the agent does not manage users as itself: %v", err)
	})

	t.Run("no secret in the agent's or the FE's logs", func(t *testing.T) {
		for _, text := range []string{logs.String(), fe.Output()} {
			for _, secret := range []string{c.RootPassword, agentPass, adminPass, c.KeystorePassword} {
				require.NotContains(t, text, secret)
			}
		}
	})

	t.Run("what the real FE decides", func(t *testing.T) { whatTheRealFrontendDecides(t, c, fe) })
}

// A Cluster instance: the agents of FE-0 and FE-1 bring up a leader and a
// follower from two FEs that both wait in the start script — FE-0's agent
// lets it bootstrap and adds FE-1 (ALTER SYSTEM ADD FOLLOWER), FE-1's agent
// finds it listed and writes the helper it starts with.
func TestAgentsJoinAFollowerOnRealFrontends(t *testing.T) {
	t.Parallel() // beside the other real-FE tests (TestAgentOnARealFrontend)
	c := realfe.Start(t, realfe.Options{Type: v1alpha1.TypeCluster, RequireSecureTransport: true})
	cfg := realFEAgentConfig(c)
	require.Len(t, cfg.Frontends, 3)
	// Two of the three FEs: enough for a join, and two JVMs fit beside
	// the other tests.
	cfg.Frontends = cfg.Frontends[:2]
	fe0, fe1 := c.StartFE(t, 0), c.StartFE(t, 1)
	a0, a1 := realFEAgent(t, c, cfg, fe0, &logBuffer{}), realFEAgent(t, c, cfg, fe1, &logBuffer{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*realfe.StartTimeout)
	defer cancel()

	var fes []membership.Frontend
	root := c.DB(t, fe0, "root", c.RootPassword, false)
	for deadline := time.Now().Add(2 * realfe.StartTimeout); ; time.Sleep(2 * time.Second) {
		a0.Pass(ctx)
		a1.Pass(ctx)
		fes, _ = membership.ShowFrontends(ctx, root)
		if len(fes) == 2 && fes[0].Alive && fes[1].Alive {
			break
		}
		if time.Now().After(deadline) {
			report, _ := json.Marshal([]agentconfig.Status{a0.Status(), a1.Status()})
			t.Fatalf("no leader and follower: SHOW FRONTENDS %+v\nagents: %s\nFE-0:\n%s\nFE-1:\n%s", fes, report, fe0.Tail(), fe1.Tail())
		}
	}
	leader, ok := membership.Leader(fes)
	require.True(t, ok)
	require.Equal(t, fe0.Host, leader.Host)
	helper, err := os.ReadFile(filepath.Join(fe1.RunDir, agentconfig.HelperFileName))
	require.NoError(t, err)
	require.Equal(t, fe0.Host+":9010", string(helper))
	_, err = os.Stat(filepath.Join(fe1.RunDir, agentconfig.BootstrapFileName))
	require.ErrorIs(t, err, os.ErrNotExist, "a follower never bootstraps")

	a0.Pass(ctx)
	st := a0.Status()
	require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
	require.ElementsMatch(t, []string{fe0.Host, fe1.Host}, st.Membership.Frontends)
	require.NoError(t, c.DB(t, fe1, agentconfig.AdminUser, adminPass, false).PingContext(ctx), "the follower knows the team's account")
}

// realFEAgentConfig is the rendered agent configuration without BEs: the
// tests run none, and StarRocks answers anything that needs one with
// "Backend node not found".
func realFEAgentConfig(c *realfe.Cluster) agentconfig.Config {
	cfg := c.AgentConfig
	cfg.Backends, cfg.BackendConfig = nil, nil
	return cfg
}

// realFEAgent is the agent of an FE's pod: its configuration, the
// credentials Secrets, the TLS Secret and the run and meta folders it shares
// with the FE; the client Service and the FEs' names resolved as cluster
// DNS would.
func realFEAgent(t *testing.T, c *realfe.Cluster, cfg agentconfig.Config, fe *realfe.FE, logs *logBuffer) *agent.Agent {
	t.Helper()
	dir := t.TempDir()
	writeRealFEJSON(t, filepath.Join(dir, "config", agentconfig.FileName), cfg)
	writeRealFEFiles(t, filepath.Join(dir, "credentials"), map[string]string{agentconfig.UsernameKey: agentconfig.AgentUser,
		agentconfig.PasswordKey: agentPass, agentconfig.RootPasswordKey: c.RootPassword})
	writeRealFEFiles(t, filepath.Join(dir, "admin-credentials"), map[string]string{agentconfig.UsernameKey: agentconfig.AdminUser,
		agentconfig.PasswordKey: adminPass})
	a := agent.New(agent.Options{
		ConfigFile:          filepath.Join(dir, "config", agentconfig.FileName),
		CAFile:              c.CAFile,
		CertFile:            filepath.Join(c.TLSDir, "tls.crt"),
		CredentialsDir:      filepath.Join(dir, "credentials"),
		AdminCredentialsDir: filepath.Join(dir, "admin-credentials"),
		SelfHost:            fe.Host,
		HelperFile:          filepath.Join(fe.RunDir, agentconfig.HelperFileName),
		MetaDir:             filepath.Join(fe.Home, "meta"),
		Interval:            time.Hour, // passes are driven by the test
		DialFunc:            c.Dial,
		Logger:              slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	a.LoadCertificates()
	return a
}

func writeRealFEJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func writeRealFEFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, v := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600))
	}
}
