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
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/grants"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// What the FE alone decides, on the real FE of the Standalone instance
// with requireSecureTransport and no BE that TestAgentOnARealFrontend's
// agent brought up (an FE's start costs more CPU than all of this): the
// declared databases, roles, users and grants, FE configuration by an
// alias, the agent's own account repaired through root, grants in another
// catalog, the metadata image and tablet health. A new agent of the same
// pod (its own files, a Secrets store) drives it; each subtest starts from
// the converged instance of the one before.
func whatTheRealFrontendDecides(t *testing.T, c *realfe.Cluster, fe *realfe.FE) {
	cfg := realFEAgentConfig(c)
	store := newMemSecrets()
	dir := t.TempDir()
	a := realFEAgentIn(t, dir, c, cfg, fe, &logBuffer{}, func(o *agent.Options) { o.Secrets = store })
	setConfig := func(t *testing.T, cfg agentconfig.Config) {
		writeRealFEJSON(t, filepath.Join(dir, "config", agentconfig.FileName), cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	converge := func(t *testing.T) agentconfig.Status {
		t.Helper()
		var st agentconfig.Status
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
			a.Pass(ctx)
			st = a.Status()
			if st.LastApply.Succeeded && st.Accounts != nil && st.Accounts.Ready && (st.Users == nil || st.Users.Ready) {
				return st
			}
			if time.Now().After(deadline) {
				report, _ := json.Marshal(st)
				t.Fatalf("the agent does not converge: %s\nFE:\n%s", report, fe.Tail())
			}
		}
	}
	converge(t)
	root := c.DB(t, fe, "root", c.RootPassword, false)

	t.Run("BE configuration waits while no BE is alive, the pass succeeds", func(t *testing.T) {
		withBE := cfg
		withBE.BackendConfig = c.AgentConfig.BackendConfig
		require.NotEmpty(t, withBE.BackendConfig, "the rendered agent configuration has BE settings")
		setConfig(t, withBE)
		t.Cleanup(func() { setConfig(t, cfg) })
		a.Pass(ctx)
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, "the pass fails for want of a BE: %s", st.LastApply.Error)
		require.Len(t, st.LastApply.Pending, len(withBE.BackendConfig))
		require.Contains(t, st.LastApply.PendingMessage, "no BE is alive")
	})

	t.Run("declared databases, roles and users converge and a second pass changes nothing", func(t *testing.T) {
		declared := cfg
		declared.Grants = &agentconfig.Grants{
			Databases: []string{"sales", "select"},
			Roles: []agentconfig.GrantsRole{
				{Name: "read_only", Privileges: []agentconfig.GrantsPrivilege{
					{Database: "sales", Object: "AllTables", Privileges: []string{"SELECT"}},
					{Database: "sales", Object: "AllViews", Privileges: []string{"SELECT"}},
					{Database: "sales", Object: "AllMaterializedViews", Privileges: []string{"SELECT", "REFRESH"}},
				}},
				{Name: "writer", Roles: []string{"read_only"}, Privileges: []agentconfig.GrantsPrivilege{
					{Database: "sales", Object: "Database", Privileges: []string{"CREATE_TABLE", "CREATE_VIEW", "CREATE_MATERIALIZED_VIEW"}},
					{Database: "select", Object: "AllTables", Privileges: []string{"INSERT", "DELETE"}},
				}},
			},
			Users: []agentconfig.GrantsUser{{Name: "writer_app", Roles: []string{"writer"}, SecretName: writerSecret}},
		}
		store.set(writerSecret, map[string]string{"username": "writer_app", "password": "writer-pass-1"})
		setConfig(t, declared)
		st := converge(t)
		require.True(t, st.Users.Ready, "%+v", st.Users)
		require.NoError(t, c.DB(t, fe, "writer_app", "writer-pass-1", false).PingContext(ctx))
		require.Contains(t, showGrants(t, root, "ROLE writer"),
			"default_catalog GRANT CREATE TABLE, CREATE VIEW, CREATE MATERIALIZED VIEW ON DATABASE sales TO ROLE 'writer'")

		a.Pass(ctx)
		st = a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		require.Empty(t, st.LastApply.Applied)
		require.True(t, st.Users.Ready, "%+v", st.Users)
	})

	rootClient := realFERootClient(t, c, fe)
	check := func(ctx context.Context, user, password string) (bool, error) {
		err := c.DB(t, fe, user, password, false).PingContext(ctx)
		if err != nil && conn.Classify(err, true, conn.KindQuery) == conn.KindAuth {
			return false, nil
		}
		return err == nil, err
	}
	converged := func(t *testing.T, m grants.Model) []string {
		t.Helper()
		return convergeGrants(ctx, t, rootClient, m, check)
	}

	t.Run("keyword and 64-character names, views and materialized views: nothing on the second pass", func(t *testing.T) {
		// The longest names StarRocks takes: a role matches
		// FeNameFormat.COMMON_NAME_REGEX (a letter and up to 63 word
		// characters), a user MYSQL_USER_NAME_REGEX and at most 64.
		long := "a" + strings.Repeat("b", 63)
		m := grants.Model{
			Databases: []string{"order", "table", long},
			Roles: []grants.Role{
				{Name: "select", Grants: []grants.Grant{
					{Scope: grants.ScopeDatabase, Database: "order", Privileges: []string{"ALTER", "DROP", "CREATE_TABLE", "CREATE_VIEW", "CREATE_FUNCTION", "CREATE_MATERIALIZED_VIEW"}},
					{Scope: grants.ScopeAllTables, Database: "table", Privileges: []string{"ALTER", "DROP", "SELECT", "INSERT", "EXPORT", "UPDATE", "DELETE"}},
					{Scope: grants.ScopeAllViews, Database: long, Privileges: []string{"SELECT", "ALTER", "DROP"}},
					{Scope: grants.ScopeAllMaterializedViews, Database: long, Privileges: []string{"SELECT", "ALTER", "REFRESH", "DROP"}},
				}},
				{Name: long, Inherits: []string{"select"}},
			},
			Users:     []grants.User{{Name: long, Roles: []string{long}, Password: "long-pass-1"}, {Name: "user", Roles: []string{"select"}, Password: "user-pass-1"}},
			Protected: []string{agentconfig.AgentUser, agentconfig.AdminUser, "writer_app"},
		}
		require.NotEmpty(t, converged(t, m))
		require.Empty(t, converged(t, m), "a second pass runs nothing")
		require.NoError(t, c.DB(t, fe, long, "long-pass-1", false).PingContext(ctx))
	})

	t.Run("a grant in an external catalog on a database of a declared name is not the declared one", func(t *testing.T) {
		m := grants.Model{
			Databases: []string{"sales"},
			Roles: []grants.Role{{Name: "reader", Grants: []grants.Grant{
				{Scope: grants.ScopeDatabase, Database: "sales", Privileges: []string{"DROP"}},
				{Scope: grants.ScopeAllTables, Database: "sales", Privileges: []string{"SELECT"}}}}},
			Protected: []string{agentconfig.AgentUser, agentconfig.AdminUser, "writer_app", "team_admin"},
		}
		converged(t, m)
		require.Empty(t, converged(t, m))
		// The team's admin may make a catalog (db_admin: CREATE EXTERNAL
		// CATALOG) and grant on its databases (user_admin). StarRocks
		// creates a hive catalog without reaching its metastore and grants
		// on catalog.db by name alone; ALL TABLES IN DATABASE takes no
		// catalog (StarRocks.g4 grantOnAll: IN DATABASE identifierOrString).
		mustRealFE(t, root, "CREATE USER 'team_admin' IDENTIFIED BY 'team-pass-1' DEFAULT ROLE db_admin, user_admin")
		team := c.DB(t, fe, "team_admin", "team-pass-1", false)
		mustRealFE(t, team, `CREATE EXTERNAL CATALOG ext PROPERTIES ("type" = "hive", "hive.metastore.uris" = "thrift://metastore.invalid:9083")`,
			"GRANT ALTER ON DATABASE ext.sales TO ROLE reader")
		require.Empty(t, converged(t, m), "the other catalog's grant is taken for default_catalog's")

		mustRealFE(t, team, "REVOKE DROP ON DATABASE sales FROM ROLE reader", "GRANT DROP ON DATABASE ext.sales TO ROLE reader")
		require.Equal(t, []string{"GRANT DROP ON DATABASE `sales` TO ROLE `reader`"}, converged(t, m),
			"a declared grant present only in the other catalog is restored")
		require.Empty(t, converged(t, m))
		rows := showGrants(t, root, "ROLE reader")
		require.Contains(t, rows, "default_catalog GRANT DROP ON DATABASE sales TO ROLE 'reader'")
		require.Contains(t, rows, "default_catalog GRANT SELECT ON ALL TABLES IN DATABASE sales TO ROLE 'reader'")
		var other []string
		for _, r := range rows {
			if strings.HasPrefix(r, "ext ") {
				other = append(other, r)
			}
		}
		require.NotEmpty(t, other, "the other catalog's grants are kept: %v", rows)
		t.Logf("SHOW GRANTS FOR ROLE reader: %q", rows)
	})

	t.Run("hand-made grants are revoked, passwords rolled, removals dropped, hostile names stay one name", func(t *testing.T) {
		const writerPass, readerPass = "writer-pass-1", "reader pass ' ; -- `"
		m := grants.Model{
			Databases: []string{"gc_sales", "gc_logs"},
			Roles: []grants.Role{
				{Name: "gc_reader", Grants: []grants.Grant{{Scope: grants.ScopeAllTables, Database: "gc_sales", Privileges: []string{"SELECT"}}}},
				{Name: "gc_writer", Inherits: []string{"gc_reader"}, Grants: []grants.Grant{
					{Scope: grants.ScopeDatabase, Database: "gc_sales", Privileges: []string{"CREATE TABLE"}},
					{Scope: grants.ScopeAllTables, Database: "gc_sales", Privileges: []string{"INSERT", "DELETE"}}}},
			},
			Users: []grants.User{
				{Name: "gc_writer_app", Roles: []string{"gc_writer"}, Password: writerPass},
				{Name: "gc_reader_app", Roles: []string{"gc_reader"}, Password: readerPass},
			},
			Protected: []string{agentconfig.AgentUser, agentconfig.AdminUser, "writer_app", "team_admin"},
		}
		login := func(user, password string) error { return c.DB(t, fe, user, password, false).PingContext(ctx) }
		names := func(stmt, col string) []string {
			rows, err := sqlrows.QueryMaps(ctx, root, stmt)
			require.NoError(t, err)
			var out []string
			for _, r := range rows {
				out = append(out, r[col])
			}
			sort.Strings(out)
			return out
		}
		roleGrants := func(role string) []string {
			rows, err := sqlrows.QueryMaps(ctx, root, "SHOW GRANTS FOR ROLE "+role)
			require.NoError(t, err)
			var out []string
			for _, r := range rows {
				if r["Catalog"] != "" {
					out = append(out, r["Grants"])
				}
			}
			sort.Strings(out)
			return out
		}

		first := converged(t, m)
		require.Contains(t, first, "CREATE USER `gc_reader_app` IDENTIFIED BY PASSWORD '<redacted>' DEFAULT ROLE `d8ms_managed`, `gc_reader`")
		for _, st := range first {
			require.NotContains(t, st, readerPass)
		}
		require.Subset(t, names("SHOW DATABASES", "Database"), []string{"gc_logs", "gc_sales"})
		require.Equal(t, []string{"GRANT CREATE TABLE ON DATABASE gc_sales TO ROLE 'gc_writer'",
			"GRANT DELETE, INSERT ON ALL TABLES IN DATABASE gc_sales TO ROLE 'gc_writer'"}, roleGrants("gc_writer"))
		require.NoError(t, login("gc_writer_app", writerPass))
		require.NoError(t, login("gc_reader_app", readerPass))
		require.Error(t, login("gc_reader_app", ""), "a hashed password is not the empty one")
		require.Empty(t, converged(t, m), "a second pass runs nothing")

		mustRealFE(t, root, "GRANT DROP ON DATABASE gc_logs TO ROLE gc_reader",
			"GRANT SELECT ON ALL TABLES IN DATABASE gc_logs TO USER gc_reader_app", "GRANT db_admin TO ROLE gc_reader")
		require.Equal(t, []string{
			"REVOKE `db_admin` FROM ROLE `gc_reader`",
			"REVOKE DROP ON DATABASE `gc_logs` FROM ROLE `gc_reader`",
			"REVOKE SELECT ON ALL TABLES IN DATABASE `gc_logs` FROM USER `gc_reader_app`",
		}, converged(t, m), "hand-made grants are revoked")
		require.Equal(t, []string{"GRANT SELECT ON ALL TABLES IN DATABASE gc_sales TO ROLE 'gc_reader'"}, roleGrants("gc_reader"))
		require.Empty(t, converged(t, m))

		mustRealFE(t, root, "GRANT SELECT ON ALL TABLES IN DATABASE gc_sales TO ROLE gc_reader WITH GRANT OPTION")
		require.Equal(t, []string{
			"REVOKE SELECT ON ALL TABLES IN DATABASE `gc_sales` FROM ROLE `gc_reader`",
			"GRANT SELECT ON ALL TABLES IN DATABASE `gc_sales` TO ROLE `gc_reader`",
		}, converged(t, m), "a grant option is taken back")
		require.Equal(t, []string{"GRANT SELECT ON ALL TABLES IN DATABASE gc_sales TO ROLE 'gc_reader'"}, roleGrants("gc_reader"))

		m.Users[0].Password = "writer-pass-2"
		require.Equal(t, []string{"ALTER USER `gc_writer_app` IDENTIFIED BY PASSWORD '<redacted>'"}, converged(t, m))
		require.Error(t, login("gc_writer_app", writerPass))
		require.NoError(t, login("gc_writer_app", "writer-pass-2"))

		m.Users = m.Users[:1]
		m.Databases = []string{"gc_sales"}
		require.Equal(t, []string{"DROP USER `gc_reader_app`"}, converged(t, m), "a removed user is dropped, a removed database kept")
		require.Error(t, login("gc_reader_app", readerPass))
		require.Contains(t, names("SHOW DATABASES", "Database"), "gc_logs")
		m.Roles = []grants.Role{{Name: "gc_writer", Grants: m.Roles[1].Grants}}
		require.Equal(t, []string{"REVOKE `gc_reader` FROM ROLE `gc_writer`", "DROP ROLE `gc_reader`"}, converged(t, m))
		require.NotContains(t, names("SHOW ROLES", "Name"), "gc_reader")
		require.Empty(t, converged(t, m))

		mustRealFE(t, root, "CREATE ROLE gc_handmade", "CREATE USER 'gc_someone' IDENTIFIED BY 'someone-1'")
		require.Empty(t, converged(t, m), "hand-made roles and users are left alone")
		require.Contains(t, names("SHOW ROLES", "Name"), "gc_handmade")

		// A hostile name reaches the FE as one quoted name: refused, or
		// exactly that one name; never a second statement.
		roles, dbs, users := names("SHOW ROLES", "Name"), names("SHOW DATABASES", "Database"), names("SHOW USERS", "User")
		for _, h := range []string{"x`; DROP DATABASE gc_sales; -- ", "a'b", "a\\", "a;b", "\u540d", "r` TO ROLE `gc_writer", strings.Repeat("`'\";", 250)} {
			for _, stmt := range []string{"CREATE ROLE ", "DROP ROLE ", "CREATE DATABASE IF NOT EXISTS "} {
				_, err := root.ExecContext(ctx, stmt+grants.QuoteIdent(h))
				var me *mysql.MySQLError
				require.True(t, errors.As(err, &me), "%s%q: %v", stmt, h, err)
			}
		}
		require.Equal(t, roles, names("SHOW ROLES", "Name"))
		require.Equal(t, dbs, names("SHOW DATABASES", "Database"))
		require.Equal(t, users, names("SHOW USERS", "User"))
		mustRealFE(t, root, "CREATE ROLE "+grants.QuoteIdent("Upper_Case"))
		require.Len(t, names("SHOW ROLES", "Name"), len(roles)+1)
		mustRealFE(t, root, "DROP ROLE "+grants.QuoteIdent("Upper_Case"), "DROP ROLE gc_handmade", "DROP USER 'gc_someone'")
	})

	t.Run("FE configuration named by an alias", func(t *testing.T) {
		// fe-core common/Config.java: storage_usage_soft_limit_percent has
		// the alias storage_high_watermark_usage_percent, mutable; ADMIN
		// SHOW FRONTEND CONFIG LIKE an alias lists the row under its own
		// name with the alias in AliasNames (ConfigBase.getConfigInfo),
		// ADMIN SET FRONTEND CONFIG takes the alias (allMutableConfigs).
		aliased := cfg
		aliased.FrontendConfig = map[string]string{}
		for k, v := range cfg.FrontendConfig {
			aliased.FrontendConfig[k] = v
		}
		aliased.FrontendConfig["storage_high_watermark_usage_percent"] = "91"
		setConfig(t, aliased)
		t.Cleanup(func() { setConfig(t, cfg) })
		a.Pass(ctx)
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		require.Equal(t, []string{"fe.storage_high_watermark_usage_percent=91"}, st.LastApply.Applied)
		var key, aliases, value string
		require.NoError(t, root.QueryRowContext(ctx, "ADMIN SHOW FRONTEND CONFIG LIKE 'storage_usage_soft_limit_percent'").
			Scan(&key, &aliases, &value, new(string), new(string), new(string)))
		require.Equal(t, "91", value)
		require.Equal(t, "[storage_high_watermark_usage_percent]", aliases)
		a.Pass(ctx)
		st = a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		require.Empty(t, st.LastApply.Applied)
	})

	// The agent's sessions are closed by the FE while its account is
	// broken, so the next ones open without its roles: StarRocks fixes a
	// session's roles at login (fe-core qe/ConnectContext.setCurrentRoleIds).
	for _, tc := range []struct {
		name  string
		stmts []string
	}{
		{"its roles revoked", []string{"REVOKE cluster_admin FROM USER 'd8_agent'", "REVOKE db_admin FROM USER 'd8_agent'"}},
		{"its default roles cleared", []string{"SET DEFAULT ROLE NONE TO 'd8_agent'"}},
		{"its user dropped and created again without roles", []string{"DROP USER 'd8_agent'", "CREATE USER 'd8_agent' IDENTIFIED BY '" + agentPass + "'"}},
	} {
		t.Run("after root repairs the agent's account ("+tc.name+") the next pass succeeds", func(t *testing.T) {
			mustRealFE(t, root, tc.stmts...)
			killSessions(t, root, agentconfig.AgentUser)
			a.LoadCertificates()
			a.Pass(ctx) // finds the damage, repairs through root
			require.True(t, a.Status().Accounts.Ready, "%+v", a.Status().Accounts)
			a.Pass(ctx)
			st := a.Status()
			require.True(t, st.LastApply.Succeeded, "a session opened before the repair is still in use: %s", st.LastApply.Error)
			a.Pass(ctx)
			require.True(t, a.Status().LastApply.Succeeded, a.Status().LastApply.Error)
		})
	}

	t.Run("tablet health from SHOW PROC '/statistic', only while a BE restart is pending", func(t *testing.T) {
		a.Pass(ctx)
		st := a.Status()
		require.NotNil(t, st.Membership)
		require.Equal(t, &agentconfig.TabletsStatus{Unhealthy: -1, NotRead: true}, st.Membership.Tablets)
		asked := cfg
		asked.TabletHealth = true
		setConfig(t, asked)
		t.Cleanup(func() { setConfig(t, cfg) })
		a.Pass(ctx)
		require.Equal(t, &agentconfig.TabletsStatus{}, a.Status().Membership.Tablets)
	})

	t.Run("CREATE IMAGE writes an image into the real meta folder", func(t *testing.T) {
		imaged := cfg
		imaged.CreateImage = "rollout-1"
		setConfig(t, imaged)
		t.Cleanup(func() { setConfig(t, cfg) })
		a.Pass(ctx)
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		require.Equal(t, "rollout-1", st.Membership.ImageCreated)
		baseline := st.Membership.ImageBaseline
		for deadline := time.Now().Add(2 * time.Minute); st.ImageJournalID <= baseline; time.Sleep(2 * time.Second) {
			if time.Now().After(deadline) {
				t.Fatalf("no image newer than %d in %s", baseline, filepath.Join(fe.Home, "meta", "image"))
			}
			a.Pass(ctx)
			st = a.Status()
		}
	})
}

// realFEAgentIn is realFEAgent with its files in dir and Options edited.
func realFEAgentIn(t *testing.T, dir string, c *realfe.Cluster, cfg agentconfig.Config, fe *realfe.FE, logs *logBuffer, edit func(*agent.Options)) *agent.Agent {
	t.Helper()
	writeRealFEJSON(t, filepath.Join(dir, "config", agentconfig.FileName), cfg)
	writeRealFEFiles(t, filepath.Join(dir, "credentials"), map[string]string{agentconfig.UsernameKey: agentconfig.AgentUser,
		agentconfig.PasswordKey: agentPass, agentconfig.RootPasswordKey: c.RootPassword})
	writeRealFEFiles(t, filepath.Join(dir, "admin-credentials"), map[string]string{agentconfig.UsernameKey: agentconfig.AdminUser,
		agentconfig.PasswordKey: adminPass})
	opts := agent.Options{
		ConfigFile:          filepath.Join(dir, "config", agentconfig.FileName),
		CAFile:              c.CAFile,
		CertFile:            filepath.Join(c.TLSDir, "tls.crt"),
		CredentialsDir:      filepath.Join(dir, "credentials"),
		AdminCredentialsDir: filepath.Join(dir, "admin-credentials"),
		SelfHost:            fe.Host,
		HelperFile:          filepath.Join(fe.RunDir, agentconfig.HelperFileName),
		MetaDir:             filepath.Join(fe.Home, "meta"),
		Interval:            time.Hour,
		DialFunc:            c.Dial,
		Logger:              newJSONLogger(logs),
	}
	edit(&opts)
	a := agent.New(opts)
	a.LoadCertificates()
	return a
}

// realFERootClient is the agent's client as root to the FE.
func realFERootClient(t *testing.T, c *realfe.Cluster, fe *realfe.FE) *conn.Client {
	cl := conn.New(conn.Options{DialFunc: c.Dial})
	t.Cleanup(func() { _ = cl.Close() })
	require.NoError(t, cl.SetTarget(conn.Target{Addr: fmt.Sprintf("%s:%d", fe.Host, realfe.QueryPort), ServerName: fe.Host,
		Roots: c.RootCAs(), RootsID: "1", User: "root", Password: c.RootPassword}))
	return cl
}

// convergeGrants runs one pass of the grants package (observe, plan,
// apply) through c and returns the statements it ran.
func convergeGrants(ctx context.Context, t *testing.T, c *conn.Client, m grants.Model, check grants.PasswordCheck) []string {
	t.Helper()
	var ran []string
	require.NoError(t, c.Do(ctx, "converge", func(ctx context.Context, db *sql.DB) error {
		o, err := grants.Observe(ctx, db, m, check)
		if err != nil {
			return err
		}
		stmts, err := grants.Plan(m, o)
		if err != nil {
			return err
		}
		for _, s := range stmts {
			ran = append(ran, s.String())
		}
		_, err = grants.Apply(ctx, db, stmts)
		return err
	}))
	return ran
}

func mustRealFE(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

// showGrants is "<Catalog> <Grants>" of each row of SHOW GRANTS FOR who.
func showGrants(t *testing.T, db *sql.DB, who string) []string {
	t.Helper()
	rows, err := db.Query("SHOW GRANTS FOR " + who)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ident, catalog sql.NullString
		var grant string
		require.NoError(t, rows.Scan(&ident, &catalog, &grant))
		if catalog.Valid {
			out = append(out, catalog.String+" "+grant)
		}
	}
	require.NoError(t, rows.Err())
	return out
}

// killSessions ends every session of user on the FE (SHOW PROCESSLIST,
// KILL), as an FE restart would.
func killSessions(t *testing.T, db *sql.DB, user string) {
	t.Helper()
	rows, err := sqlrows.QueryMaps(context.Background(), db, "SHOW PROCESSLIST")
	require.NoError(t, err)
	var ids []string
	for _, m := range rows {
		if m["User"] == user {
			ids = append(ids, m["Id"])
		}
	}
	require.NotEmpty(t, ids, "no session of %s", user)
	for _, id := range ids {
		mustRealFE(t, db, "KILL "+id)
	}
}
