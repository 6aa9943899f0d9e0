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
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// memSecrets is an in-memory agent.SecretStore; names in forbidden answer
// like an API server whose RBAC does not allow them yet.
type memSecrets struct {
	mu        sync.Mutex
	data      map[string]map[string][]byte
	forbidden map[string]bool
	patches   int
}

func newMemSecrets() *memSecrets {
	return &memSecrets{data: map[string]map[string][]byte{}, forbidden: map[string]bool{}}
}

func (m *memSecrets) Get(_ context.Context, name string) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.forbidden[name] {
		return nil, fmt.Errorf("get Secret %s: secrets %q is forbidden: User \"system:serviceaccount:ns:agent\" cannot get resource \"secrets\"", name, name)
	}
	d, ok := m.data[name]
	if !ok {
		return nil, agent.ErrSecretNotFound
	}
	out := map[string][]byte{}
	for k, v := range d {
		out[k] = append([]byte(nil), v...)
	}
	return out, nil
}

func (m *memSecrets) Patch(_ context.Context, name string, set map[string][]byte, remove []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.data[name]
	if !ok {
		return agent.ErrSecretNotFound
	}
	for k, v := range set {
		d[k] = append([]byte(nil), v...)
	}
	for _, k := range remove {
		delete(d, k)
	}
	m.patches++
	return nil
}

func (m *memSecrets) set(name string, data map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := map[string][]byte{}
	for k, v := range data {
		d[k] = []byte(v)
	}
	m.data[name] = d
}

func (m *memSecrets) get(name string) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, v := range m.data[name] {
		out[k] = string(v)
	}
	return out
}

func (m *memSecrets) patchCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.patches
}

const (
	writerSecret = "d8ms-sr-demo-user.writer-app"
	readerSecret = "d8ms-sr-demo-user.reader-app"
	ghostSecret  = "d8ms-sr-demo-user.ghost"
	teamSecret   = "team-passwords"
)

// usersGrants: two databases, a read-only role on both, a writer role on
// sales; a writer with a generated password, a reader with the team's
// password Secret and a user whose Secret does not exist.
func usersGrants() *agentconfig.Grants {
	return &agentconfig.Grants{
		Databases: []string{"sales", "logs"},
		Roles: []agentconfig.GrantsRole{
			{Name: "read_only", Privileges: []agentconfig.GrantsPrivilege{
				{Database: "sales", Object: "AllTables", Privileges: []string{"SELECT"}},
				{Database: "logs", Object: "AllTables", Privileges: []string{"SELECT"}},
			}},
			{Name: "writer", Roles: []string{"read_only"}, Privileges: []agentconfig.GrantsPrivilege{
				{Database: "sales", Object: "Database", Privileges: []string{"CREATE_TABLE"}},
				{Database: "sales", Object: "AllTables", Privileges: []string{"INSERT"}},
			}},
		},
		Users: []agentconfig.GrantsUser{
			{Name: "writer_app", Roles: []string{"writer"}, SecretName: writerSecret},
			{Name: "reader_app", Roles: []string{"read_only"}, SecretName: readerSecret,
				PasswordSecret: &agentconfig.SecretKeyRef{Name: teamSecret, Key: "reader"}},
			{Name: "ghost", Roles: []string{"read_only"}, SecretName: ghostSecret},
		},
	}
}

// usersEnv is a leader's agent with grants, an in-memory Secret store and
// captured logs and statuses.
type usersEnv struct {
	*env
	store *memSecrets
	pub   *recordingPublisher
	logs  *logBuffer
	a     *agent.Agent
}

func newUsersEnv(t *testing.T, writerPass, readerPass string) *usersEnv {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	e.cfg.Grants = usersGrants()
	e.writeConfig(t)
	u := &usersEnv{env: e, store: newMemSecrets(), pub: &recordingPublisher{}}
	u.store.set(writerSecret, map[string]string{"username": "writer_app", "password": writerPass})
	u.store.set(readerSecret, map[string]string{"username": "reader_app"})
	u.store.set(teamSecret, map[string]string{"reader": readerPass})
	u.a, u.logs = u.newAgent(t)
	return u
}

func (u *usersEnv) newAgent(t *testing.T) (*agent.Agent, *logBuffer) {
	return u.newAgentWith(t, func(*agent.Options) {})
}

func (u *usersEnv) newAgentWith(t *testing.T, edit func(*agent.Options)) (*agent.Agent, *logBuffer) {
	opts := u.options(fe0)
	edit(&opts)
	logs := &logBuffer{}
	opts.Logger = newJSONLogger(logs)
	opts.Publisher = u.pub
	opts.Secrets = u.store
	a := agent.New(opts)
	a.LoadCertificates()
	return a, logs
}

func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// requireAbsent fails when text holds secret as is or JSON-escaped.
func requireAbsent(t *testing.T, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		escaped, _ := json.Marshal(s)
		require.NotContains(t, text, s)
		require.NotContains(t, text, string(escaped[1:len(escaped)-1]))
	}
}

func (u *usersEnv) pass(t *testing.T) agentconfig.Status {
	t.Helper()
	u.a.Pass(ctxT(t))
	st := u.a.Status()
	require.True(t, st.LastApply.Succeeded, "pass: %s", st.LastApply.Error)
	return st
}

// session opens a connection the way an application would: from the
// user's Secret alone (dsn, ca.crt), over verified TLS.
func (u *usersEnv) session(t *testing.T, secret string) *sql.DB {
	t.Helper()
	data := u.store.get(secret)
	require.NotEmpty(t, data["dsn"], "Secret %s has no dsn", secret)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM([]byte(data["ca.crt"])))
	require.NoError(t, mysql.RegisterTLSConfig("starrocks", &tls.Config{RootCAs: pool, ServerName: data["host"], MinVersion: tls.VersionTLS12}))
	cfg, err := mysql.ParseDSN(data["dsn"])
	require.NoError(t, err)
	cfg.DialFunc = u.dial
	connector, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.PingContext(ctxT(t)), "log in with Secret %s", secret)
	return db
}

// denied asserts StarRocks' access-denied error (5203).
func denied(t *testing.T, err error, priv string) {
	t.Helper()
	var myErr *mysql.MySQLError
	require.ErrorAs(t, err, &myErr)
	require.EqualValues(t, fakefe.ErrAccessDenied, myErr.Number)
	require.Contains(t, myErr.Message, "the "+priv+" privilege(s)")
}

func exec(t *testing.T, db *sql.DB, q string) error {
	_, err := db.ExecContext(ctxT(t), q)
	return err
}

func count(t *testing.T, db *sql.DB, table string) (int, error) {
	var n int
	err := db.QueryRowContext(ctxT(t), "SELECT COUNT(*) FROM "+table).Scan(&n)
	return n, err
}

func userState(t *testing.T, st agentconfig.Status, name string) agentconfig.UserState {
	t.Helper()
	require.NotNil(t, st.Users)
	for _, u := range st.Users.Users {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("no status for user %s in %+v", name, st.Users.Users)
	return agentconfig.UserState{}
}

func countUserLogins(fe *fakefe.Server, user string) int {
	n := 0
	for _, c := range fe.Connections() {
		if c.User == user {
			n++
		}
	}
	return n
}

func TestUsersAppliedAsDeclared(t *testing.T) {
	const writerPass, readerPass = "GENERATEDWRITERPASSWORD2345", "team reader pass 1"
	u := newUsersEnv(t, writerPass, readerPass)
	// A database made by hand before: listed, not managed.
	require.NoError(t, u.as(t, "root", rootPass, "CREATE DATABASE handmade"))
	passwords := []string{writerPass, readerPass}

	st := u.pass(t)
	require.False(t, st.Users.Ready)
	require.Equal(t, agent.ReasonUsersPending, st.Users.Reason)
	require.Equal(t, "1 of 3 users not ready: ghost (PasswordSecretMissing)", st.Users.Message)
	require.Equal(t, agentconfig.UserState{Name: "writer_app", Ready: true}, userState(t, st, "writer_app"))
	require.Equal(t, agentconfig.UserState{Name: "reader_app", Ready: true}, userState(t, st, "reader_app"))
	require.Equal(t, agentconfig.UserState{Name: "ghost", Reason: agent.ReasonPasswordSecretMissing,
		Message: "Secret " + ghostSecret + " does not exist"}, userState(t, st, "ghost"))
	require.Equal(t, []agentconfig.DatabaseState{
		{Name: "sales", Managed: true, Exists: true}, {Name: "logs", Managed: true, Exists: true},
		{Name: "handmade", Managed: false, Exists: true},
	}, st.Users.Databases)
	require.Equal(t, st.Users, u.pub.last().Users, "the status is published")
	require.NotContains(t, u.fe.UserNames(), "ghost")

	t.Run("the user Secrets hold everything a client needs", func(t *testing.T) {
		for _, tc := range []struct{ secret, user, password string }{
			{writerSecret, "writer_app", writerPass}, {readerSecret, "reader_app", readerPass},
		} {
			data := u.store.get(tc.secret)
			require.Equal(t, map[string]string{
				"username": tc.user, "password": tc.password, "host": queryHost, "port": "9030",
				"ca.crt":   string(u.ca.CertPEM),
				"dsn":      tc.user + ":" + tc.password + "@tcp(" + queryHost + ":9030)/?tls=starrocks",
				"jdbc-url": "jdbc:mysql://" + queryHost + ":9030/?sslMode=VERIFY_IDENTITY",
			}, data)
		}
		require.Equal(t, map[string]string{"reader": readerPass}, u.store.get(teamSecret), "the team's Secret is only read")
	})

	writer := u.session(t, writerSecret)
	reader := u.session(t, readerSecret)
	t.Run("each user does what its roles allow and nothing else", func(t *testing.T) {
		require.NoError(t, exec(t, writer, "CREATE TABLE sales.orders (id INT, amount INT)"))
		require.NoError(t, exec(t, writer, "INSERT INTO sales.orders VALUES (1, 10), (2, 20)"))
		n, err := count(t, writer, "sales.orders")
		require.NoError(t, err)
		require.Equal(t, 2, n, "writer reads through the inherited read_only role")
		denied(t, exec(t, writer, "CREATE TABLE logs.x (id INT)"), "CREATE TABLE")

		require.NoError(t, u.as(t, "root", rootPass, "CREATE TABLE logs.events (id INT)"))
		require.NoError(t, u.as(t, "root", rootPass, "INSERT INTO logs.events VALUES (7)"))
		denied(t, exec(t, writer, "INSERT INTO logs.events VALUES (8)"), "INSERT")

		n, err = count(t, reader, "sales.orders")
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = count(t, reader, "logs.events")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		denied(t, exec(t, reader, "INSERT INTO sales.orders VALUES (3, 30)"), "INSERT")
		denied(t, exec(t, reader, "CREATE TABLE sales.y (id INT)"), "CREATE TABLE")
		_, err = count(t, reader, "handmade.t")
		require.Error(t, err)
	})

	t.Run("a second pass changes nothing and logs in as no user", func(t *testing.T) {
		before, patches := len(u.fe.Statements()), u.store.patchCount()
		logins := countUserLogins(u.fe, "writer_app") + countUserLogins(u.fe, "reader_app")
		u.pass(t)
		for _, s := range u.fe.Statements()[before:] {
			require.Regexp(t, `^(SHOW|SELECT) `, s, "only reads")
		}
		require.Equal(t, patches, u.store.patchCount(), "no Secret patched")
		require.Equal(t, logins, countUserLogins(u.fe, "writer_app")+countUserLogins(u.fe, "reader_app"))
	})

	t.Run("a grant added by hand is revoked on the next pass", func(t *testing.T) {
		require.NoError(t, u.as(t, "root", rootPass, "GRANT INSERT ON ALL TABLES IN DATABASE logs TO ROLE read_only"))
		require.NoError(t, exec(t, reader, "INSERT INTO logs.events VALUES (9)"), "the hand-made grant works")
		u.pass(t)
		denied(t, exec(t, reader, "INSERT INTO logs.events VALUES (10)"), "INSERT")
	})

	t.Run("a password changed in the referenced Secret is rolled out", func(t *testing.T) {
		const newPass = "team reader pass 2"
		passwords = append(passwords, newPass)
		u.store.set(teamSecret, map[string]string{"reader": newPass})
		st := u.pass(t)
		require.True(t, userState(t, st, "reader_app").Ready)
		require.Error(t, u.login(t, "reader_app", readerPass), "the old password no longer logs in")
		require.NoError(t, u.login(t, "reader_app", newPass))
		require.Equal(t, newPass, u.store.get(readerSecret)["password"])
		require.Contains(t, u.store.get(readerSecret)["dsn"], ":"+newPass+"@")
		reader = u.session(t, readerSecret)
		_, err := count(t, reader, "sales.orders")
		require.NoError(t, err)
	})

	t.Run("a password changed by hand is put back after a restart", func(t *testing.T) {
		require.NoError(t, u.as(t, "root", rootPass, "ALTER USER writer_app IDENTIFIED BY 'changed-by-hand'"))
		u.a, u.logs = u.newAgent(t) // a restarted agent remembers no password
		u.pass(t)
		require.NoError(t, u.login(t, "writer_app", writerPass))
		require.Error(t, u.login(t, "writer_app", "changed-by-hand"))
	})

	t.Run("a Secret that appears makes the pending user", func(t *testing.T) {
		const ghostPass = "GHOSTPASSWORD234567"
		passwords = append(passwords, ghostPass)
		u.store.set(ghostSecret, map[string]string{"username": "ghost", "password": ghostPass})
		st := u.pass(t)
		require.True(t, st.Users.Ready, "%+v", st.Users)
		require.Contains(t, u.fe.UserNames(), "ghost")
		require.NoError(t, u.login(t, "ghost", ghostPass))
	})

	t.Run("a user removed is dropped, a database removed stays", func(t *testing.T) {
		g := usersGrants()
		g.Users = g.Users[:1]
		g.Databases = []string{"sales"}
		g.Roles[0].Privileges = g.Roles[0].Privileges[:1]
		u.cfg.Grants = g
		u.writeConfig(t)
		st := u.pass(t)
		require.True(t, st.Users.Ready, "%+v", st.Users)
		require.Equal(t, agentconfig.GrantsToken(g), st.Users.Applied, "the report names the declaration it is about")
		require.NotContains(t, u.fe.UserNames(), "reader_app")
		require.NotContains(t, u.fe.UserNames(), "ghost")
		require.Error(t, u.login(t, "reader_app", passwords[2]))
		require.Contains(t, u.fe.Databases(), "logs")
		require.ElementsMatch(t, []string{"GRANT SELECT ON ALL TABLES IN DATABASE sales TO ROLE 'read_only'", "GRANT 'd8ms_managed' TO ROLE read_only"},
			u.fe.RoleGrants("read_only"))
		require.Equal(t, []agentconfig.DatabaseState{
			{Name: "sales", Managed: true, Exists: true},
			{Name: "handmade", Exists: true}, {Name: "logs", Exists: true},
		}, st.Users.Databases)
		n, err := count(t, writer, "sales.orders")
		require.NoError(t, err)
		require.Equal(t, 2, n)
	})

	t.Run("no password in logs, status or statements", func(t *testing.T) {
		all, err := json.Marshal(u.pub.all)
		require.NoError(t, err)
		texts := []string{u.logs.String(), string(all), strings.Join(u.fe.Statements(), "\n")}
		for _, text := range texts {
			requireAbsent(t, text, passwords...)
		}
		// The module's own accounts are set with statements of their own
		// (accounts.go), never logged or published.
		requireNoSecrets(t, texts[:2]...)
		require.Contains(t, u.logs.String(), "grants applied", "the logs were captured")
	})
}

func TestUsersPendingInIsolation(t *testing.T) {
	u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
	u.store.set(ghostSecret, map[string]string{"username": "ghost", "password": "short"})
	u.store.forbidden[teamSecret] = true
	st := u.pass(t)
	require.True(t, userState(t, st, "writer_app").Ready)
	reader := userState(t, st, "reader_app")
	require.Equal(t, agent.ReasonSecretUnreadable, reader.Reason)
	require.Contains(t, reader.Message, "Secret "+teamSecret)
	require.Contains(t, reader.Message, "forbidden")
	require.Equal(t, agentconfig.UserState{Name: "ghost", Reason: agent.ReasonPasswordInvalid,
		Message: "Secret " + ghostSecret + " key password: the password must be 8 to 1024 bytes long, is 5"}, userState(t, st, "ghost"))
	require.Equal(t, []string{"writer_app"}, managedUsers(u.fe))

	t.Run("a missing key names the Secret and the key", func(t *testing.T) {
		u.store.forbidden[teamSecret] = false
		u.store.set(teamSecret, map[string]string{"other": "x"})
		st := u.pass(t)
		require.Equal(t, agentconfig.UserState{Name: "reader_app", Reason: agent.ReasonPasswordSecretMissing,
			Message: "Secret " + teamSecret + " has no key reader"}, userState(t, st, "reader_app"))
	})

	t.Run("a pending user that exists is kept, not dropped", func(t *testing.T) {
		u.store.set(teamSecret, map[string]string{"reader": "reader-password-1"})
		st := u.pass(t)
		require.True(t, userState(t, st, "reader_app").Ready)
		u.store.set(teamSecret, map[string]string{})
		u.pass(t)
		require.Equal(t, []string{"reader_app", "writer_app"}, managedUsers(u.fe))
		require.NoError(t, u.login(t, "reader_app", "reader-password-1"), "its password is left as it was")
	})

	t.Run("without access to Secrets no user is applied, databases and roles are", func(t *testing.T) {
		e := newEnv(t, envOptions{serverPassword: rootPass})
		e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
		e.cfg.Grants = usersGrants()
		e.writeConfig(t)
		a := agent.New(e.options(fe0))
		a.LoadCertificates()
		a.Pass(ctxT(t))
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		for _, us := range st.Users.Users {
			require.Equal(t, agent.ReasonKubernetesAccessDisabled, us.Reason)
		}
		require.Contains(t, e.fe.Databases(), "sales")
		require.Contains(t, e.fe.RoleNames(), "writer")
		require.Empty(t, managedUsers(e.fe))
	})
}

func TestUsersRefusedStatementReported(t *testing.T) {
	u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
	u.fe.Refuse("GRANT INSERT", 5203, "Access denied; refused by the test")
	u.a.Pass(ctxT(t))
	st := u.a.Status()
	require.False(t, st.LastApply.Succeeded)
	require.False(t, st.Users.Ready)
	require.Equal(t, agent.ReasonStatementRefused, st.Users.Reason)
	require.Contains(t, st.Users.Message, "GRANT INSERT ON ALL TABLES IN DATABASE `sales` TO ROLE `writer`: Error 5203 (HY000): Access denied; refused by the test")
	for _, us := range st.Users.Users {
		require.False(t, us.Ready, "%s", us.Name)
	}
	require.Equal(t, st.Users, u.pub.last().Users)

	u.fe.Refuse("", 0, "")
	st = u.pass(t)
	require.Equal(t, agent.ReasonUsersPending, st.Users.Reason, "only the user without a Secret is left: %+v", st.Users)
	require.True(t, userState(t, st, "writer_app").Ready)
}

func TestUsersPasswordDriftCheckedAgain(t *testing.T) {
	const writerPass = "WRITERPASSWORD234567"
	u := newUsersEnv(t, writerPass, "reader-password-1")
	u.a, u.logs = u.newAgentWith(t, func(o *agent.Options) { o.PasswordCheckEvery = time.Millisecond })
	u.pass(t)
	require.NoError(t, u.as(t, "root", rootPass, "ALTER USER writer_app IDENTIFIED BY 'changed-by-hand'"))
	time.Sleep(2 * time.Millisecond)
	u.pass(t)
	require.NoError(t, u.login(t, "writer_app", writerPass), "put back once the check interval passed")
	require.Error(t, u.login(t, "writer_app", "changed-by-hand"))
}

func managedUsers(fe *fakefe.Server) []string {
	var out []string
	for _, n := range fe.UserNames() {
		if granted, _ := fe.Roles(n); contains(granted, "d8ms_managed") {
			out = append(out, n)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUsersOnlyWhereDeclared(t *testing.T) {
	t.Run("no grants in the configuration: nothing read, no status", func(t *testing.T) {
		u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
		u.cfg.Grants = nil
		u.writeConfig(t)
		st := u.pass(t)
		require.Nil(t, st.Users)
		for _, s := range u.fe.Statements() {
			require.NotRegexp(t, `(?i)^show (users|roles|grants)`, s)
		}
	})

	t.Run("an empty declaration on a fresh FE creates nothing", func(t *testing.T) {
		u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
		u.cfg.Grants = nil
		u.writeConfig(t)
		u.pass(t) // the module's accounts
		before := len(u.fe.Statements())
		u.cfg.Grants = &agentconfig.Grants{}
		u.writeConfig(t)
		st := u.pass(t)
		require.True(t, st.Users.Ready)
		require.Empty(t, u.fe.RoleNames(), "no marker role for an empty model")
		for _, s := range u.fe.Statements()[before:] {
			require.NotRegexp(t, `(?i)^(create|grant|drop|alter user)`, s)
		}
	})

	t.Run("a follower's agent does not apply users nor report them", func(t *testing.T) {
		u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
		opts := u.options(fe1)
		opts.Secrets = u.store
		u.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true},
			fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "FOLLOWER", Alive: true})
		a := agent.New(opts)
		a.LoadCertificates()
		a.Pass(ctxT(t))
		require.Nil(t, a.Status().Users)
		require.Empty(t, u.fe.RoleNames())
	})
}

// hostilePasswords: quotes, backticks, ;, unicode, 1000 characters.
var hostilePasswords = []string{
	`x'; DROP USER root; --`,
	"x`; DROP DATABASE sales; -- `",
	`"double" \'escaped\' \\`,
	"semi;colon;;", "\u540d\u524d\u30d1\u30b9\u30ef\u30fc\u30c9\u00e9\u202e",
	"@tcp(evil:1)/?tls=false&x=", "pass word with spaces",
	strings.Repeat("`'\";\\", 200),
}

func TestUsersHostilePasswordsOnlyTravelAsHashes(t *testing.T) {
	for i, pw := range hostilePasswords {
		t.Run(fmt.Sprintf("password %d", i), func(t *testing.T) {
			u := newUsersEnv(t, pw, pw)
			st := u.pass(t)
			require.True(t, userState(t, st, "writer_app").Ready, "%+v", st.Users)
			require.True(t, userState(t, st, "reader_app").Ready, "%+v", st.Users)
			require.NoError(t, u.login(t, "writer_app", pw))
			require.NoError(t, u.login(t, "reader_app", pw))
			require.Contains(t, u.fe.UserNames(), "root")
			require.Contains(t, u.fe.Databases(), "sales")
			hashed := regexp.MustCompile("^CREATE USER `[a-z_]+` IDENTIFIED BY PASSWORD '\\*[0-9A-F]{40}' DEFAULT ROLE [`a-z0-9_, ]+$")
			created := 0
			for _, s := range u.fe.Statements() {
				require.NotContains(t, s, pw)
				if strings.HasPrefix(s, "CREATE USER `") {
					require.Regexp(t, hashed, s)
					created++
				}
			}
			require.Equal(t, 2, created)
			// The DSN keeps the password whole: a client gets in with it.
			_, err := count(t, u.session(t, readerSecret), "sales.x")
			require.Error(t, err) // no such table, but logged in
			var myErr *mysql.MySQLError
			require.True(t, errors.As(err, &myErr) && myErr.Number == fakefe.ErrBadTable, "%v", err)
			all, _ := json.Marshal(u.pub.all)
			requireAbsent(t, string(all), pw)
			requireAbsent(t, u.logs.String(), pw)
		})
	}
}

// Views and materialized views are privilege objects of their own in
// StarRocks (fe-core authorization/ObjectType.java): the contract's
// AllViews and AllMaterializedViews reach the FE as such, and once granted
// the next pass sees them converged.
func TestUsersViewPrivilegesApplied(t *testing.T) {
	u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
	u.cfg.Grants.Roles[0].Privileges = append(u.cfg.Grants.Roles[0].Privileges,
		agentconfig.GrantsPrivilege{Database: "sales", Object: "AllViews", Privileges: []string{"SELECT"}},
		agentconfig.GrantsPrivilege{Database: "sales", Object: "AllMaterializedViews", Privileges: []string{"SELECT", "REFRESH"}})
	u.writeConfig(t)
	st := u.pass(t)
	require.Equal(t, "1 of 3 users not ready: ghost (PasswordSecretMissing)", st.Users.Message, "nothing refused")
	require.Contains(t, u.fe.RoleGrants("read_only"), "GRANT SELECT ON ALL VIEWS IN DATABASE sales TO ROLE 'read_only'")
	require.Contains(t, u.fe.RoleGrants("read_only"), "GRANT REFRESH, SELECT ON ALL MATERIALIZED VIEWS IN DATABASE sales TO ROLE 'read_only'")

	before := len(u.fe.Statements())
	u.pass(t)
	for _, s := range u.fe.Statements()[before:] {
		require.NotRegexp(t, `(?i)^(grant|revoke)`, s, "converged grants are not applied again")
	}
}
