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

package conn_test

import (
	"context"
	"crypto/x509"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/mariadb"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/certwatch"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
)

const dbHost = "db.starrocks.test"

type mariaEnv struct {
	srv       *mariadb.Server
	serverDir string
	ca        *testpki.CA
	leaf      *testpki.Leaf
	secret    *testpki.SecretVolume
}

// startMariaDB runs one server per test: the server reads its own copy of the
// files (serverDir) so that the client-side volume can be swapped on its own.
func startMariaDB(t *testing.T) *mariaEnv {
	t.Helper()
	e := &mariaEnv{ca: testpki.MustCA(t, "test-ca"), serverDir: t.TempDir()}
	e.leaf = e.ca.MustIssue(t, dbHost)
	e.writeServerFiles(t, e.ca, e.leaf)
	e.secret = testpki.NewSecretVolume(t, e.leaf.SecretData(e.ca))
	e.srv = mariadb.Start(t, mariadb.Options{
		CAFile:   filepath.Join(e.serverDir, "ca.crt"),
		CertFile: filepath.Join(e.serverDir, "tls.crt"),
		KeyFile:  filepath.Join(e.serverDir, "tls.key"),
	})
	return e
}

func (e *mariaEnv) writeServerFiles(t *testing.T, ca *testpki.CA, leaf *testpki.Leaf) {
	t.Helper()
	for name, data := range map[string][]byte{"ca.crt": ca.CertPEM, "tls.crt": leaf.CertPEM, "tls.key": leaf.KeyPEM} {
		require.NoError(t, os.WriteFile(filepath.Join(e.serverDir, name), data, 0o600))
	}
}

// dialTo resolves every address to the local server, standing in for the
// cluster DNS name of the Service.
func dialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func (e *mariaEnv) target(t *testing.T, serverName string, roots *x509.CertPool) conn.Target {
	return conn.Target{Addr: net.JoinHostPort(dbHost, "3306"), ServerName: serverName, Roots: roots, RootsID: "r", User: "root"}
}

func rootsOf(t *testing.T, ca *testpki.CA) *x509.CertPool {
	p := x509.NewCertPool()
	require.True(t, p.AppendCertsFromPEM(ca.CertPEM))
	return p
}

func TestMariaDB(t *testing.T) {
	e := startMariaDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("connects with verified TLS to the DNS name", func(t *testing.T) {
		c := conn.New(conn.Options{DialFunc: dialTo(e.srv.Addr)})
		defer c.Close()
		require.NoError(t, c.SetTarget(e.target(t, dbHost, rootsOf(t, e.ca))))
		var name, cipher string
		err := c.Do(ctx, "read cipher", func(ctx context.Context, db *sql.DB) error {
			return db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
		})
		require.NoError(t, err)
		require.NotEmpty(t, cipher, "the session must be encrypted")
	})

	t.Run("plaintext is refused and classified as TLS misconfiguration", func(t *testing.T) {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "tcp", e.srv.Addr, 5*time.Second
		connector, err := mysql.NewConnector(cfg)
		require.NoError(t, err)
		db := sql.OpenDB(connector)
		defer db.Close()
		err = db.PingContext(ctx)
		require.Error(t, err, "require_secure_transport=ON must refuse a plaintext client")
		t.Logf("server answered plaintext with: %v", err)
		require.Equal(t, conn.KindTLS, conn.Classify(err, false, conn.KindConnection))
		wrapped := &conn.Error{Kind: conn.Classify(err, false, conn.KindConnection), Op: "connect", Err: err}
		require.Contains(t, wrapped.Error(), "TLS misconfiguration")
		require.False(t, wrapped.Retryable())
	})

	t.Run("refuses loopback targets", func(t *testing.T) {
		c := conn.New(conn.Options{})
		for _, addr := range []string{"127.0.0.1:3306", "localhost:3306", "[::1]:3306"} {
			tg := e.target(t, dbHost, rootsOf(t, e.ca))
			tg.Addr = addr
			require.Error(t, c.SetTarget(tg), addr)
		}
	})

	tlsFailures := []struct {
		name       string
		serverName string
		roots      *x509.CertPool
		check      func(t *testing.T, err error)
	}{
		{"refuses a server signed by another CA", dbHost, rootsOf(t, testpki.MustCA(t, "other-ca")), func(t *testing.T, err error) {
			var ua x509.UnknownAuthorityError
			require.True(t, errors.As(err, &ua), "want unknown authority, got %v", err)
		}},
		{"refuses a certificate for another server name", "other.starrocks.test", rootsOf(t, e.ca), func(t *testing.T, err error) {
			var he x509.HostnameError
			require.True(t, errors.As(err, &he), "want hostname mismatch, got %v", err)
		}},
	}
	for _, tc := range tlsFailures {
		t.Run(tc.name, func(t *testing.T) {
			c := conn.New(conn.Options{DialFunc: dialTo(e.srv.Addr)})
			defer c.Close()
			require.NoError(t, c.SetTarget(e.target(t, tc.serverName, tc.roots)))
			err := c.Ping(ctx)
			require.Error(t, err)
			require.Equal(t, conn.KindTLS, conn.KindOf(err), "error: %v", err)
			tc.check(t, err)
		})
	}

}

// TestMariaDBCertificateRotation swaps the mounted files (CA and server
// certificate both change) while queries run; after the rotation has
// completed on both sides no query may fail, and new handshakes present the
// new certificate.
func TestMariaDBCertificateRotation(t *testing.T) {
	e := startMariaDB(t)
	e.srv.Exec(t, "CREATE USER 'agent'@'%' IDENTIFIED BY 'pw'")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var lastPeer atomic.Pointer[x509.Certificate]
	c := conn.New(conn.Options{DialFunc: dialTo(e.srv.Addr), OnHandshake: func(p *x509.Certificate) { lastPeer.Store(p) }})
	defer c.Close()

	loaded := make(chan *certwatch.Material, 4)
	w := &certwatch.Watcher{CAFile: e.secret.Path("ca.crt"), CertFile: e.secret.Path("tls.crt"), OnChange: func(m *certwatch.Material, err error) {
		if err != nil {
			t.Errorf("load certificates: %v", err)
			return
		}
		require.NoError(t, c.SetTarget(conn.Target{Addr: dbHost + ":3306", ServerName: dbHost, Roots: m.Roots, RootsID: m.ID, User: "agent", Password: "pw"}))
		loaded <- m
	}}
	wctx, wcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = w.Run(wctx) }()
	defer func() { wcancel(); wg.Wait() }()
	<-loaded
	require.NoError(t, c.Ping(ctx))

	var completed atomic.Bool
	var okBefore, okAfter, failedAfter atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for i := 0; i < 4; i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := completed.Load()
				err := c.Do(ctx, "select", func(ctx context.Context, db *sql.DB) error {
					var one int
					return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
				})
				switch {
				case after && err != nil:
					failedAfter.Add(1)
					failures.Store(err.Error(), true)
				case after:
					okAfter.Add(1)
				case err == nil:
					okBefore.Add(1)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)

	ca2 := testpki.MustCA(t, "test-ca-2")
	leaf2 := ca2.MustIssue(t, dbHost)
	e.writeServerFiles(t, ca2, leaf2)
	e.srv.Exec(t, "FLUSH SSL")
	e.secret.Update(leaf2.SecretData(ca2))
	select {
	case m := <-loaded:
		require.Equal(t, leaf2.Cert.SerialNumber, m.Leaf.SerialNumber)
	case <-time.After(5 * time.Second):
		t.Fatal("certificate swap not noticed within 5s")
	}
	completed.Store(true)
	time.Sleep(time.Second)
	close(stop)
	workers.Wait()

	require.NoError(t, c.Ping(ctx))
	require.Equal(t, leaf2.Cert.SerialNumber, lastPeer.Load().SerialNumber, "new handshakes must present the rotated certificate")
	require.Positive(t, okBefore.Load())
	require.Positive(t, okAfter.Load(), "queries must keep running after the rotation")
	var msgs []string
	failures.Range(func(k, _ any) bool { msgs = append(msgs, k.(string)); return true })
	require.Zero(t, failedAfter.Load(), "queries failed after the rotation: %s", strings.Join(msgs, "; "))
	t.Logf("queries: %d before, %d after rotation", okBefore.Load(), okAfter.Load())
}
