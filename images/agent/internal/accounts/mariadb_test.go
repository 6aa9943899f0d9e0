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

package accounts_test

import (
	"context"
	"crypto/x509"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/mariadb"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/accounts"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
)

const dbHost = "db.starrocks.test"

var secrets = accounts.Secrets{
	AgentUser: "d8_agent", AgentPassword: "AGENTPASSWORDBASE32XYZ",
	RootPassword: "ROOTPASSWORDBASE32ABCD",
	AdminUser:    "admin", AdminPassword: "TEAMADMINPASSWORD234567",
}

// TestRootPasswordOverTLSOnMariaDB runs the root phase of Ensure against a
// real server with require_secure_transport, whose root has an empty
// password like a fresh FE. MariaDB has no StarRocks built-in roles, so the
// account statements after it fail; that failure must hold no secret.
func TestRootPasswordOverTLSOnMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	ca := testpki.MustCA(t, "ca")
	require.NoError(t, ca.MustIssue(t, dbHost).WriteFiles(dir, ca))
	srv := mariadb.Start(t, mariadb.Options{CAFile: filepath.Join(dir, "ca.crt"),
		CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")})
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(ca.CertPEM))
	opts := conn.Options{DialFunc: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr)
	}}
	login := func(user, password string) (*conn.Client, error) {
		c := conn.New(opts)
		return c, c.SetTarget(conn.Target{Addr: dbHost + ":3306", ServerName: dbHost, Roots: roots, RootsID: "1", User: user, Password: password})
	}
	agent, err := login(secrets.AgentUser, secrets.AgentPassword)
	require.NoError(t, err)
	defer agent.Close()

	ch, err := accounts.Ensure(ctx, agent, login, secrets)
	require.True(t, ch.RootPasswordSet)
	require.Error(t, err, "MariaDB does not know CREATE USER ... DEFAULT ROLE db_admin")
	for _, s := range []string{secrets.AgentPassword, secrets.RootPassword, secrets.AdminPassword} {
		require.NotContains(t, err.Error(), s)
	}
	st, known := accounts.Status(err)
	require.True(t, known)
	require.Equal(t, accounts.ReasonEnsureFailed, st.Reason)

	ping := func(user, password string) error {
		c, err := login(user, password)
		require.NoError(t, err)
		defer c.Close()
		return c.Ping(ctx)
	}
	require.Equal(t, conn.KindAuth, conn.KindOf(ping("root", "")), "the empty password is gone")
	require.NoError(t, ping("root", secrets.RootPassword))

	t.Run("a root password that is neither the Secret's nor empty is reported, without secrets", func(t *testing.T) {
		other := secrets
		other.RootPassword = "SOMETHINGELSEENTIRELY"
		_, err := accounts.Ensure(ctx, agent, login, other)
		st, known := accounts.Status(err)
		require.True(t, known)
		require.Equal(t, accounts.ReasonRootPasswordRefused, st.Reason)
		require.NotContains(t, st.Message, other.RootPassword)
		require.NotContains(t, st.Message, secrets.RootPassword)
	})
}

func TestValidate(t *testing.T) {
	require.NoError(t, secrets.Validate())
	for _, tc := range []struct {
		name   string
		change func(*accounts.Secrets)
		want   string
	}{
		{"refuses a quote in a password", func(s *accounts.Secrets) { s.AdminPassword = "abcd'efgh" }, "admin password: must be printable ASCII"},
		{"refuses a backslash in a password", func(s *accounts.Secrets) { s.RootPassword = `abcd\efgh` }, "root-password: must be printable ASCII"},
		{"refuses a short password", func(s *accounts.Secrets) { s.AgentPassword = "abc" }, "agent password: must be 8 to 128"},
		{"refuses root as the team's user", func(s *accounts.Secrets) { s.AdminUser = "root" }, "admin username: must not be root"},
		{"refuses a user name that needs quoting", func(s *accounts.Secrets) { s.AgentUser = "d8'agent" }, "agent username: must match"},
		{"refuses one user for both", func(s *accounts.Secrets) { s.AdminUser = s.AgentUser }, "must differ"},
		{"refuses a quote in the restore source's root password", func(s *accounts.Secrets) { s.SourceRootPassword = "abcd'efgh" }, "the restore source's root-password: must be printable ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := secrets
			tc.change(&s)
			err := s.Validate()
			require.ErrorContains(t, err, tc.want)
			for _, p := range []string{s.AgentPassword, s.RootPassword, s.AdminPassword, s.SourceRootPassword} {
				if p == "" {
					continue
				}
				require.NotContains(t, err.Error(), p)
			}
		})
	}
}
