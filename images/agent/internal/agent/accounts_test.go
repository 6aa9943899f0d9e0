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
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/accounts"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// login tries user/password against the fake FE over TLS, as a client
// outside the instance would.
func (e *env) login(t *testing.T, user, password string) error {
	c := conn.New(conn.Options{DialFunc: e.dial})
	defer c.Close()
	require.NoError(t, c.SetTarget(conn.Target{Addr: queryHost + ":9030", ServerName: queryHost,
		Roots: rootsOf(t, e.ca), RootsID: "1", User: user, Password: password}))
	return c.Ping(ctxT(t))
}

// as runs one statement as user.
func (e *env) as(t *testing.T, user, password, stmt string) error {
	c := conn.New(conn.Options{DialFunc: e.dial})
	defer c.Close()
	require.NoError(t, c.SetTarget(conn.Target{Addr: queryHost + ":9030", ServerName: queryHost,
		Roots: rootsOf(t, e.ca), RootsID: "1", User: user, Password: password}))
	return c.Do(ctxT(t), "exec", func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, stmt)
		return err
	})
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// agentWithLogs is an agent whose logs (all levels) are captured.
func (e *env) agentWithLogs(t *testing.T, pub *recordingPublisher) (*agent.Agent, *logBuffer, *status.Metrics) {
	logs := &logBuffer{}
	opts := e.options(fe0)
	opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Metrics = status.NewMetrics()
	if pub != nil {
		opts.Publisher = pub
	}
	a := agent.New(opts)
	a.LoadCertificates()
	return a, logs, opts.Metrics
}

func requireNoSecrets(t *testing.T, texts ...string) {
	t.Helper()
	for _, text := range texts {
		for _, secret := range []string{rootPass, agentPass, adminPass} {
			require.NotContains(t, text, secret)
		}
	}
}

func TestAccountsOnAFreshFE(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: ""})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.cfg.Backends = []string{be0}
	e.writeConfig(t)
	pub := &recordingPublisher{}
	a, logs, metrics := e.agentWithLogs(t, pub)

	a.Pass(ctx)
	st := a.Status()
	require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
	require.NotNil(t, st.Accounts)
	require.True(t, st.Accounts.Ready, "%+v", st.Accounts)
	require.True(t, pub.last().Accounts.Ready, "the annotation carries the accounts")
	require.Equal(t, 1.0, metricValue(t, metrics, status.MetricAccountsReady, "", ""))

	t.Run("root with the empty password is refused", func(t *testing.T) {
		require.Equal(t, conn.KindAuth, conn.KindOf(e.login(t, "root", "")))
		require.NoError(t, e.login(t, "root", rootPass))
	})
	t.Run("the agent's and the team's accounts log in", func(t *testing.T) {
		require.NoError(t, e.login(t, agentconfig.AgentUser, agentPass))
		require.NoError(t, e.login(t, agentconfig.AdminUser, adminPass))
	})
	t.Run("root's password is set before any other statement", func(t *testing.T) {
		stmts := e.fe.Statements()
		first := -1
		for i, s := range stmts {
			if strings.HasPrefix(strings.ToUpper(s), "SET PASSWORD") {
				first = i
				break
			}
		}
		require.GreaterOrEqual(t, first, 0, "statements: %v", stmts)
		for _, s := range stmts[:first] {
			require.True(t, strings.EqualFold(s, "SELECT CURRENT_ROLE()"), "ran %q before root's password was set", s)
		}
	})
	t.Run("membership runs as the agent's account, which has what it needs", func(t *testing.T) {
		require.Len(t, e.fe.Backends(), 1)
		for _, c := range e.fe.Connections() {
			require.NotEqual(t, "", c.User)
		}
		require.True(t, e.fe.HasPrivilege(agentconfig.AgentUser, fakefe.PrivNode))
		require.True(t, e.fe.HasPrivilege(agentconfig.AgentUser, fakefe.PrivOperate))
		require.False(t, e.fe.HasPrivilege(agentconfig.AgentUser, fakefe.PrivGrant), "the agent does not manage users as itself")
	})
	t.Run("a restarted agent changes nothing", func(t *testing.T) {
		n := len(e.fe.Statements())
		again, _, _ := e.agentWithLogs(t, nil)
		again.Pass(ctx)
		require.True(t, again.Status().Accounts.Ready)
		for _, s := range e.fe.Statements()[n:] {
			up := strings.ToUpper(s)
			require.False(t, strings.HasPrefix(up, "SET PASSWORD") || strings.HasPrefix(up, "CREATE USER") || strings.HasPrefix(up, "DROP USER"), s)
		}
	})
	requireNoSecrets(t, logs.String())
}

func TestAccountsNotReadyDoesNothingElse(t *testing.T) {
	ctx := ctxT(t)
	// Root has a password that is neither the Secret's nor empty.
	e := newEnv(t, envOptions{serverPassword: "someone-elses-password"})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.cfg.Backends = []string{be0}
	e.writeConfig(t)
	pub := &recordingPublisher{}
	a, logs, metrics := e.agentWithLogs(t, pub)
	a.Pass(ctx)

	st := pub.last()
	require.NotNil(t, st.Accounts)
	require.False(t, st.Accounts.Ready)
	require.Equal(t, accounts.ReasonRootPasswordRefused, st.Accounts.Reason)
	require.Contains(t, st.Accounts.Message, "neither root's password")
	require.False(t, st.LastApply.Succeeded)
	require.Empty(t, e.fe.Backends(), "nothing else happens before the accounts are ready")
	for _, s := range e.fe.Statements() {
		require.True(t, strings.EqualFold(s, "SELECT CURRENT_ROLE()"), "ran %q", s)
	}
	require.Equal(t, 0.0, metricValue(t, metrics, status.MetricAccountsReady, "", ""))
	requireNoSecrets(t, logs.String(), st.Accounts.Message, st.LastApply.Error)
}

func TestAccountsSurviveTheTeam(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: ""})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	a, logs, _ := e.agentWithLogs(t, nil)
	a.Pass(ctx)
	require.True(t, a.Status().Accounts.Ready)
	const teamChoice = "the-teams-own-password"

	t.Run("the team changes admin's password: the agent leaves it", func(t *testing.T) {
		require.NoError(t, e.as(t, agentconfig.AdminUser, adminPass, "ALTER USER 'admin' IDENTIFIED BY '"+teamChoice+"'"))
		a.Pass(ctx)
		require.True(t, a.Status().Accounts.Ready)
		require.NoError(t, e.login(t, agentconfig.AdminUser, teamChoice))
		require.Error(t, e.login(t, agentconfig.AdminUser, adminPass))
	})
	for _, tc := range []struct{ name, stmt string }{
		{"the team changes the agent's password", "ALTER USER 'd8_agent' IDENTIFIED BY 'locked-out-1'"},
		{"the team drops the agent's account", "DROP USER 'd8_agent'"},
		{"the team revokes the agent's roles", "REVOKE cluster_admin FROM USER 'd8_agent'"},
		{"the team clears the agent's default roles", "SET DEFAULT ROLE NONE TO 'd8_agent'"},
	} {
		t.Run(tc.name+": the next pass recovers through root", func(t *testing.T) {
			require.NoError(t, e.as(t, agentconfig.AdminUser, teamChoice, tc.stmt))
			a.Pass(ctx)
			st := a.Status()
			require.True(t, st.Accounts.Ready, "%+v", st.Accounts)
			require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
			require.NoError(t, e.login(t, agentconfig.AgentUser, agentPass))
			require.True(t, e.fe.HasPrivilege(agentconfig.AgentUser, fakefe.PrivNode))
			require.NoError(t, e.login(t, agentconfig.AdminUser, teamChoice), "admin's password stays the team's")
		})
	}
	requireNoSecrets(t, logs.String())
}

func TestAccountsRefuseUnquotablePasswords(t *testing.T) {
	for _, bad := range []string{`abc'defgh`, `abc"defgh`, `abc\defgh`, "abc`defgh", "abc defgh", "abc\ndefgh", "short"} {
		t.Run(strings.ReplaceAll(bad, "\n", `\n`), func(t *testing.T) {
			ctx := ctxT(t)
			e := newEnv(t, envOptions{serverPassword: ""})
			e.writeSecret(t, "credentials", map[string]string{agentconfig.RootPasswordKey: bad})
			a, logs, _ := e.agentWithLogs(t, nil)
			a.Pass(ctx)
			st := a.Status()
			require.False(t, st.Accounts.Ready)
			require.Equal(t, accounts.ReasonCredentialsInvalid, st.Accounts.Reason)
			require.Contains(t, st.Accounts.Message, "root-password")
			require.Empty(t, e.fe.Statements(), "nothing is sent")
			require.Empty(t, e.fe.Connections())
			require.NotContains(t, logs.String()+st.Accounts.Message, bad)
		})
	}
}

// TestAccountsBeforeThePodIsReady is finding 4: the client Service routes
// only to Ready pods, so on a fresh instance it has no endpoints while root
// still has the empty password. The agent must set it through its own FE
// (the headless Service publishes not-ready addresses) on the first pass.
func TestAccountsBeforeThePodIsReady(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: ""})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	opts := e.options(fe0)
	opts.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); host == queryHost {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused: no endpoints")}
		}
		return e.dial(ctx, network, addr)
	}
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	require.True(t, a.Status().Accounts.Ready, "%+v", a.Status().Accounts)
	require.Equal(t, conn.KindAuth, conn.KindOf(e.login(t, "root", "")), "root's empty password must be gone after the first pass")
}

// An unreachable FE says nothing about the accounts: the last verdict stays,
// so the hooks do not close the client ports because an FE restarts.
func TestAccountsKeepTheirVerdictWhileTheFEIsUnreachable(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: ""})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	var down atomic.Bool
	opts := e.options(fe0)
	opts.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if down.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
		}
		return e.dial(ctx, network, addr)
	}
	fresh := agent.New(opts)
	down.Store(true)
	fresh.LoadCertificates()
	fresh.Pass(ctx)
	require.Nil(t, fresh.Status().Accounts, "no verdict before the agent could check")

	down.Store(false)
	fresh.Pass(ctx)
	require.True(t, fresh.Status().Accounts.Ready)
	down.Store(true)
	fresh.Pass(ctx)
	require.False(t, fresh.Status().LastApply.Succeeded)
	require.True(t, fresh.Status().Accounts.Ready, "%+v", fresh.Status().Accounts)
}
