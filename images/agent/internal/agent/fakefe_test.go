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
	"crypto/x509"
	"database/sql"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/membership"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/runtimeconfig"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// client is a TLS pool to the fake FE as the agent builds it.
func (e *env) client(t *testing.T, password string) *conn.Client {
	c := conn.New(conn.Options{DialFunc: e.dial})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetTarget(conn.Target{Addr: queryHost + ":9030", ServerName: queryHost,
		Roots: rootsOf(t, e.ca), RootsID: "1", User: "root", Password: password}))
	return c
}

func TestDialect(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	c := e.client(t, rootPass)

	t.Run("reads SHOW FRONTENDS and SHOW BACKENDS by column name", func(t *testing.T) {
		e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true},
			fakefe.Frontend{Host: fe1 + ".", EditLogPort: 9010, Role: "FOLLOWER", Alive: false})
		e.fe.AddBackendRow(fakefe.Backend{Host: be0, HeartbeatPort: 9050, Alive: true, TabletNum: 42, Decommissioned: true})
		var fes []membership.Frontend
		var bes []membership.Backend
		require.NoError(t, c.Do(ctx, "show", func(ctx context.Context, db *sql.DB) error {
			var err error
			if fes, err = membership.ShowFrontends(ctx, db); err != nil {
				return err
			}
			bes, err = membership.ShowBackends(ctx, db)
			return err
		}))
		require.Equal(t, []membership.Frontend{
			{Host: fe0, EditLogPort: 9010, Leader: true, Alive: true},
			{Host: fe1, EditLogPort: 9010, Leader: false, Alive: false},
		}, fes)
		require.Equal(t, []membership.Backend{{Host: be0, HeartbeatPort: 9050, Alive: true, Decommissioned: true, TabletNum: 42}}, bes)
	})

	t.Run("sets frontend config only where the value differs", func(t *testing.T) {
		e.fe.SetFEConfig("catalog_trash_expire_second", "86400", true)
		// "_" is a LIKE wildcard: this key matches the pattern too and must
		// not be mistaken for the one asked for.
		e.fe.SetFEConfig("catalogXtrash_expire_second", "1", true)
		e.fe.SetFEConfig("max_routine_load_task_num_per_be", "16", true)
		var res runtimeconfig.Result
		require.NoError(t, c.Do(ctx, "apply", func(ctx context.Context, db *sql.DB) error {
			var err error
			res, err = runtimeconfig.ApplyFrontend(ctx, db, map[string]string{
				"catalog_trash_expire_second": "3600", "max_routine_load_task_num_per_be": "16"})
			return err
		}))
		// fe1 is listed and not alive: StarRocks set the value here and
		// failed to forward it (5101); that is no error of this FE's.
		require.Equal(t, []string{"fe.catalog_trash_expire_second=3600"}, res.Applied)
		require.Equal(t, "3600", e.fe.FEConfigValue("catalog_trash_expire_second"))
		require.Equal(t, "1", e.fe.FEConfigValue("catalogXtrash_expire_second"))
	})

	t.Run("reports a key that needs a restart or does not exist", func(t *testing.T) {
		e.fe.SetFEConfig("ssl_force_secure_transport", "false", false)
		err := c.Do(ctx, "apply", func(ctx context.Context, db *sql.DB) error {
			_, err := runtimeconfig.ApplyFrontend(ctx, db, map[string]string{"ssl_force_secure_transport": "true", "no_such_key": "1"})
			return err
		})
		require.ErrorContains(t, err, "needs an FE restart")
		require.ErrorContains(t, err, "no_such_key: no such configuration key")
		require.Equal(t, "false", e.fe.FEConfigValue("ssl_force_secure_transport"))
	})

	t.Run("updates be_configs when any BE differs", func(t *testing.T) {
		e.fe.AddBackendRow(fakefe.Backend{Host: be1, HeartbeatPort: 9050, Alive: true})
		e.fe.SetBEConfigDefault("streaming_load_max_mb", "102400")
		apply := func() runtimeconfig.Result {
			var res runtimeconfig.Result
			require.NoError(t, c.Do(ctx, "apply", func(ctx context.Context, db *sql.DB) error {
				var err error
				res, err = runtimeconfig.ApplyBackend(ctx, db, map[string]string{"streaming_load_max_mb": "20480"})
				return err
			}))
			return res
		}
		require.Equal(t, []string{"be.streaming_load_max_mb=20480"}, apply().Applied)
		for id, v := range e.fe.BEConfigValues("streaming_load_max_mb") {
			require.Equal(t, "20480", v, "BE %d", id)
		}
		require.Empty(t, apply().Applied, "a second pass has nothing to change")
	})
}

func TestSecureTransport(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass, force: true})
	plain := func(local string) error {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", e.fe.Addr()
		cfg.Timeout = 5 * time.Second
		if local != "" {
			cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
				return d.DialContext(ctx, network, addr)
			}
		}
		connector, err := mysql.NewConnector(cfg)
		require.NoError(t, err)
		db := sql.OpenDB(connector)
		defer db.Close()
		return db.PingContext(ctx)
	}

	t.Run("plaintext from a remote address is refused with 5205, a TLS misconfiguration", func(t *testing.T) {
		err := plain("127.0.0.2")
		var myErr *mysql.MySQLError
		require.ErrorAs(t, err, &myErr)
		require.EqualValues(t, fakefe.ErrSecureTransportRequired, myErr.Number)
		require.Equal(t, conn.KindTLS, conn.Classify(err, false, conn.KindConnection))
		require.NotEmpty(t, e.fe.Refused())
	})

	t.Run("the refusal is StarRocks' own: 5205, HY000, its message", func(t *testing.T) {
		// fe-core common/ErrorCode.java ERR_SECURE_TRANSPORT_REQUIRED, sent
		// by mysql/MysqlProto.negotiate before authentication.
		var myErr *mysql.MySQLError
		require.ErrorAs(t, plain("127.0.0.2"), &myErr)
		require.Equal(t, "HY000", string(myErr.SQLState[:]))
		require.Equal(t, "Connections using insecure transport are prohibited", myErr.Message)
	})

	t.Run("plaintext from localhost is exempt, which is why the agent never dials it", func(t *testing.T) {
		require.NoError(t, plain(""))
	})

	t.Run("only 127.0.0.1 is localhost, not ::1", func(t *testing.T) {
		// fe-core mysql/MysqlProto.isRemoteIPLocalhost: the remote address
		// contains "127.0.0.1".
		ln, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback: %v", err)
		}
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		fe6 := fakefe.Start(t, fakefe.Options{ListenAddr: addr, RootPassword: rootPass, ForceSecureTransport: true})
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", fe6.Addr()
		cfg.Timeout = 5 * time.Second
		connector, err := mysql.NewConnector(cfg)
		require.NoError(t, err)
		db := sql.OpenDB(connector)
		defer db.Close()
		var myErr *mysql.MySQLError
		require.ErrorAs(t, db.PingContext(ctx), &myErr)
		require.EqualValues(t, fakefe.ErrSecureTransportRequired, myErr.Number)
	})

	t.Run("the agent uses TLS on every connection even where localhost would be exempt", func(t *testing.T) {
		before := len(e.fe.Connections())
		e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
		a := agent.New(e.options(fe0))
		a.LoadCertificates()
		a.Pass(ctx)
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, "pass: %s", st.LastApply.Error)
		conns := e.fe.Connections()[before:]
		require.NotEmpty(t, conns)
		for _, c := range conns {
			require.True(t, c.TLS, "agent connection from %s without TLS", c.Remote)
			require.True(t, strings.HasPrefix(c.Remote, "127.0.0.1:"), "the exemption would apply to %s", c.Remote)
		}
		require.True(t, st.TLS.Ready)
	})
}

func TestMembershipAsLeader(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.cfg.Frontends = []string{fe0, fe1, fe2}
	e.cfg.Backends = []string{be0, be1}
	e.writeConfig(t)
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	pub := &recordingPublisher{}
	opts := e.options(fe0)
	opts.Publisher = pub
	a := agent.New(opts)
	a.LoadCertificates()

	a.Pass(ctx)
	require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
	require.Equal(t, []string{fe0, fe1}, hosts(e.fe.Frontends()), "one follower at a time")
	require.ElementsMatch(t, []string{be0, be1}, backendHosts(e.fe.Backends()))
	helper, err := os.ReadFile(opts.HelperFile)
	require.NoError(t, err)
	require.Equal(t, fe0+":9010", string(helper))

	a.Pass(ctx)
	require.Equal(t, []string{fe0, fe1}, hosts(e.fe.Frontends()), "no new follower while one has not joined")

	e.fe.SetFrontendAlive(fe1, true)
	a.Pass(ctx)
	require.Equal(t, []string{fe0, fe1, fe2}, hosts(e.fe.Frontends()))
	require.Equal(t, fe0, pub.last().Membership.Leader)

	t.Run("scale-in decommissions and drops only an empty BE", func(t *testing.T) {
		e.fe.SetTabletNum(be1, 120)
		e.cfg.Backends = []string{be0}
		e.writeConfig(t)
		a.Pass(ctx)
		require.True(t, findBackend(t, e.fe, be1).Decommissioned)
		require.Equal(t, int64(120), pub.last().Membership.Draining[0].TabletNum)
		require.Equal(t, be1, pub.last().Membership.Draining[0].Host)

		e.fe.SetTabletNum(be1, 7)
		a.Pass(ctx)
		require.Equal(t, int64(7), pub.last().Membership.Draining[0].TabletNum, "progress is reported")
		require.Zero(t, countPrefix(e.fe.Statements(), "ALTER SYSTEM DROP BACKEND"), "never drop a BE with tablets")

		e.fe.SetTabletNum(be1, 0)
		a.Pass(ctx)
		require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
		require.Equal(t, []string{be0}, backendHosts(e.fe.Backends()))
		require.Equal(t, []string{be1}, e.fe.SelfDroppedBackends(), "the FE drops an empty decommissioned BE itself")
		require.Zero(t, countPrefix(e.fe.Statements(), "ALTER SYSTEM DROP BACKEND"))
		require.Empty(t, pub.last().Membership.Draining)
		require.NotContains(t, pub.last().Membership.Backends, be1, "gone from the report: the hooks may lower the replicas")
	})

	t.Run("with drop_backend_after_decommission off the agent drops the empty BE", func(t *testing.T) {
		e.fe.SetKeepDecommissionedBackends(true)
		defer e.fe.SetKeepDecommissionedBackends(false)
		e.fe.AddBackendRow(fakefe.Backend{Host: be1, HeartbeatPort: 9050, Alive: true, Decommissioned: true})
		a.Pass(ctx)
		require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
		require.Equal(t, []string{be0}, backendHosts(e.fe.Backends()))
		require.Equal(t, 1, countPrefix(e.fe.Statements(), "ALTER SYSTEM DROP BACKEND"))
	})

	t.Run("a BE the FE dropped itself after the agent listed it is no failure", func(t *testing.T) {
		// The FE's own drop (alter/SystemHandler) can come between SHOW
		// BACKENDS and the agent's DROP BACKEND, which then fails with
		// system/SystemInfoService.dropBackends' message.
		e.fe.SetKeepDecommissionedBackends(true)
		defer e.fe.SetKeepDecommissionedBackends(false)
		e.fe.AddBackendRow(fakefe.Backend{Host: be1, HeartbeatPort: 9050, Alive: true, Decommissioned: true})
		e.fe.Refuse("ALTER SYSTEM DROP BACKEND", 1064, "backend does not exists["+be1+":9050]")
		defer e.fe.Refuse("", 0, "")
		a.Pass(ctx)
		require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
	})

	t.Run("scale-out again cancels a running decommission", func(t *testing.T) {
		e.fe.AddBackendRow(fakefe.Backend{Host: be1, HeartbeatPort: 9050, Alive: true, Decommissioned: true, TabletNum: 50})
		e.cfg.Backends = []string{be0, be1}
		e.writeConfig(t)
		a.Pass(ctx)
		require.False(t, findBackend(t, e.fe, be1).Decommissioned)
	})
}

func TestMembershipAsFollower(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.cfg.Frontends = []string{fe0, fe1, fe2}
	e.cfg.Backends = []string{be0}
	e.cfg.FrontendConfig = map[string]string{"catalog_trash_expire_second": "600"}
	e.writeConfig(t)
	e.fe.SetFEConfig("catalog_trash_expire_second", "86400", true)
	opts := e.options(fe1)

	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	_, err := os.Stat(opts.HelperFile)
	require.ErrorIs(t, err, os.ErrNotExist, "no helper before this FE is listed")
	require.Zero(t, countPrefix(e.fe.Statements(), "ALTER SYSTEM"), "only the leader's agent changes membership")
	require.Equal(t, "86400", e.fe.FEConfigValue("catalog_trash_expire_second"), "own FE not joined yet")

	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true},
		fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "FOLLOWER", Alive: true})
	a.Pass(ctx)
	require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
	helper, err := os.ReadFile(opts.HelperFile)
	require.NoError(t, err)
	require.Equal(t, fe0+":9010", string(helper))
	require.Equal(t, "600", e.fe.FEConfigValue("catalog_trash_expire_second"))
	require.Equal(t, []string{"fe.catalog_trash_expire_second=600"}, a.Status().LastApply.Applied)
	require.Nil(t, a.Status().Membership)
}

func TestStatusReportsTLSMisconfiguration(t *testing.T) {
	ctx := ctxT(t)
	e := newEnv(t, envOptions{serverPassword: rootPass, serverHost: "someone-else.example"})
	metrics := status.NewMetrics()
	opts := e.options(fe0)
	opts.Metrics = metrics
	a := agent.New(opts)
	a.LoadCertificates()
	a.Pass(ctx)
	st := a.Status()
	require.False(t, st.LastApply.Succeeded)
	require.False(t, st.TLS.Ready)
	require.Equal(t, "TLSMisconfigured", st.TLS.Reason)
	require.Contains(t, st.TLS.Message, "TLS misconfiguration")
	require.NotContains(t, st.LastApply.Error, rootPass)
	require.Equal(t, 1.0, metricValue(t, metrics, status.MetricErrorsTotal, "kind", "tls"))
	require.Equal(t, 0.0, metricValue(t, metrics, status.MetricErrorsTotal, "kind", "auth"))
	require.Equal(t, 0.0, metricValue(t, metrics, status.MetricCertificateReady, "", ""))
	require.Equal(t, 1.0, metricValue(t, metrics, status.MetricApplyTotal, "result", "failure"))
}

func TestCertificateRotation(t *testing.T) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	peers := make(chan string, 64)
	opts := e.options(fe0)
	opts.OnHandshake = func(p *x509.Certificate) { peers <- p.SerialNumber.Text(16) }
	a := runAgent(t, opts)
	require.Eventually(t, func() bool { return a.Status().TLS.Ready }, 10*time.Second, 10*time.Millisecond)

	leaf2 := e.ca.MustIssue(t, queryHost)
	e.writeServerCert(t, leaf2)
	e.secret.Update(leaf2.SecretData(e.ca))
	want := leaf2.Cert.SerialNumber.Text(16)
	deadline := time.After(5 * time.Second)
	for seen := false; !seen; {
		select {
		case s := <-peers:
			seen = s == want
		case <-deadline:
			t.Fatal("no handshake with the rotated certificate within 5s")
		}
	}
	require.Eventually(t, func() bool { return a.Status().TLS.Serial == want }, 5*time.Second, 10*time.Millisecond)
}

func hosts(fes []fakefe.Frontend) []string {
	var out []string
	for _, f := range fes {
		out = append(out, f.Host)
	}
	return out
}

func backendHosts(bes []fakefe.Backend) []string {
	var out []string
	for _, b := range bes {
		out = append(out, b.Host)
	}
	return out
}

func findBackend(t *testing.T, fe *fakefe.Server, host string) fakefe.Backend {
	for _, b := range fe.Backends() {
		if b.Host == host {
			return b
		}
	}
	t.Fatalf("backend %s not listed", host)
	return fakefe.Backend{}
}

func countPrefix(stmts []string, prefix string) int {
	n := 0
	for _, s := range stmts {
		if strings.HasPrefix(strings.ToUpper(s), prefix) {
			n++
		}
	}
	return n
}

// metricValue reads one series from the agent's registry.
func metricValue(t *testing.T, m *status.Metrics, name, label, value string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			match := label == ""
			for _, l := range s.GetLabel() {
				match = match || (l.GetName() == label && l.GetValue() == value)
			}
			if !match {
				continue
			}
			if s.Counter != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s{%s=%q} not found", name, label, value)
	return 0
}

func TestConfigChangeTriggersPass(t *testing.T) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	runAgent(t, e.options(fe0)) // interval of an hour: only events drive passes
	require.Empty(t, e.fe.Backends())
	e.cfg.Backends = []string{be0}
	e.writeConfig(t)
	require.Eventually(t, func() bool { return len(e.fe.Backends()) == 1 }, 5*time.Second, 10*time.Millisecond,
		"a ConfigMap update must be applied without waiting for the interval")
}
