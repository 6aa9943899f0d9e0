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
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/grants"
)

// converge runs one pass of the grants package as root against the fake FE
// over TLS and returns the statements it ran.
func (e *env) converge(t *testing.T, c *conn.Client, m grants.Model) []string {
	t.Helper()
	check := func(_ context.Context, user, password string) (bool, error) {
		err := e.login(t, user, password)
		if conn.KindOf(err) == conn.KindAuth {
			return false, nil
		}
		return err == nil, err
	}
	return convergeGrants(ctxT(t), t, c, m, check)
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

func TestGrantsConverge(t *testing.T) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	c := e.client(t, rootPass)
	const writerPass, readerPass = "writer-pass-1", "reader pass ' ; -- `"
	m := grants.Model{
		Databases: []string{"sales", "logs"},
		Roles: []grants.Role{
			{Name: "reader", Grants: []grants.Grant{{Scope: grants.ScopeAllTables, Database: "sales", Privileges: []string{"SELECT"}}}},
			{Name: "writer", Inherits: []string{"reader"}, Grants: []grants.Grant{
				{Scope: grants.ScopeDatabase, Database: "sales", Privileges: []string{"CREATE TABLE"}},
				{Scope: grants.ScopeAllTables, Database: "sales", Privileges: []string{"INSERT", "DELETE"}}}},
		},
		Users: []grants.User{
			{Name: "writer_app", Roles: []string{"writer"}, Password: writerPass},
			{Name: "reader_app", Roles: []string{"reader"}, Password: readerPass},
		},
		Protected: []string{"team_admin"},
	}
	// The team's admin exists and is never touched.
	require.NoError(t, e.as(t, "root", rootPass, "CREATE USER 'team_admin' IDENTIFIED BY 'team-pass-1' DEFAULT ROLE db_admin, user_admin"))

	first := e.converge(t, c, m)
	require.Contains(t, first, "CREATE USER `reader_app` IDENTIFIED BY PASSWORD '<redacted>' DEFAULT ROLE `d8ms_managed`, `reader`")
	require.Equal(t, []string{"_statistics_", "information_schema", "logs", "sales", "sys"}, e.fe.Databases())
	require.ElementsMatch(t, []string{"GRANT 'd8ms_managed', 'reader' TO ROLE writer",
		"GRANT CREATE TABLE ON DATABASE sales TO ROLE 'writer'",
		"GRANT DELETE, INSERT ON ALL TABLES IN DATABASE sales TO ROLE 'writer'"}, e.fe.RoleGrants("writer"))
	require.NoError(t, e.login(t, "writer_app", writerPass))
	require.NoError(t, e.login(t, "reader_app", readerPass))
	require.Error(t, e.login(t, "reader_app", ""), "a hashed password is not the empty one")
	granted, defaults := e.fe.Roles("reader_app")
	require.Equal(t, []string{"d8ms_managed", "reader"}, granted)
	require.Equal(t, granted, defaults)
	for _, st := range e.fe.Statements() {
		require.NotContains(t, st, readerPass)
		require.NotContains(t, st, writerPass)
	}

	t.Run("a second pass runs nothing", func(t *testing.T) {
		require.Empty(t, e.converge(t, c, m))
	})

	t.Run("a hand-made grant is revoked", func(t *testing.T) {
		require.NoError(t, e.as(t, "root", rootPass, "GRANT DROP ON DATABASE logs TO ROLE reader"))
		require.NoError(t, e.as(t, "root", rootPass, "GRANT SELECT ON ALL TABLES IN DATABASE logs TO USER reader_app"))
		require.NoError(t, e.as(t, "root", rootPass, "GRANT db_admin TO ROLE reader"))
		require.Equal(t, []string{
			"REVOKE `db_admin` FROM ROLE `reader`",
			"REVOKE DROP ON DATABASE `logs` FROM ROLE `reader`",
			"REVOKE SELECT ON ALL TABLES IN DATABASE `logs` FROM USER `reader_app`",
		}, e.converge(t, c, m))
		require.Equal(t, []string{"GRANT 'd8ms_managed' TO ROLE reader", "GRANT SELECT ON ALL TABLES IN DATABASE sales TO ROLE 'reader'"}, e.fe.RoleGrants("reader"))
		require.Empty(t, e.converge(t, c, m))

		require.NoError(t, e.as(t, "root", rootPass, "GRANT SELECT ON ALL TABLES IN DATABASE sales TO ROLE 'reader' WITH GRANT OPTION"))
		require.Equal(t, []string{"GRANT 'd8ms_managed' TO ROLE reader", "GRANT SELECT ON ALL TABLES IN DATABASE sales TO ROLE 'reader' WITH GRANT OPTION"}, e.fe.RoleGrants("reader"))
		require.Equal(t, []string{
			"REVOKE SELECT ON ALL TABLES IN DATABASE `sales` FROM ROLE `reader`",
			"GRANT SELECT ON ALL TABLES IN DATABASE `sales` TO ROLE `reader`",
		}, e.converge(t, c, m))
		require.Equal(t, []string{"GRANT 'd8ms_managed' TO ROLE reader", "GRANT SELECT ON ALL TABLES IN DATABASE sales TO ROLE 'reader'"}, e.fe.RoleGrants("reader"))
	})

	t.Run("a changed password is rolled out", func(t *testing.T) {
		m.Users[0].Password = "writer-pass-2"
		require.Equal(t, []string{"ALTER USER `writer_app` IDENTIFIED BY PASSWORD '<redacted>'"}, e.converge(t, c, m))
		require.Error(t, e.login(t, "writer_app", writerPass))
		require.NoError(t, e.login(t, "writer_app", "writer-pass-2"))
	})

	t.Run("a removed user and role are dropped, a removed database is kept", func(t *testing.T) {
		m.Users = m.Users[:1]
		m.Users[0].Roles = []string{"writer"}
		m.Databases = []string{"sales"}
		require.Equal(t, []string{"DROP USER `reader_app`"}, e.converge(t, c, m))
		require.Error(t, e.login(t, "reader_app", readerPass))
		require.Contains(t, e.fe.Databases(), "logs")
		require.Contains(t, e.fe.UserNames(), "team_admin")

		m.Roles = []grants.Role{{Name: "writer", Grants: m.Roles[1].Grants}}
		require.Equal(t, []string{"REVOKE `reader` FROM ROLE `writer`", "DROP ROLE `reader`"}, e.converge(t, c, m))
		require.Equal(t, []string{"d8ms_managed", "writer"}, e.fe.RoleNames())
		require.Empty(t, e.converge(t, c, m))
	})

	t.Run("hand-made roles and users are left alone", func(t *testing.T) {
		require.NoError(t, e.as(t, "root", rootPass, "CREATE ROLE handmade"))
		require.NoError(t, e.as(t, "root", rootPass, "CREATE USER `someone` IDENTIFIED BY 'someone-1'"))
		require.Empty(t, e.converge(t, c, m))
		require.Contains(t, e.fe.RoleNames(), "handmade")
		require.Contains(t, e.fe.UserNames(), "someone")
	})

	t.Run("hostile names reach the FE as one quoted name", func(t *testing.T) {
		roles, dbs, users := e.fe.RoleNames(), e.fe.Databases(), e.fe.UserNames()
		for _, h := range []string{"x`; DROP DATABASE sales; -- ", "a'b", "a\\", "a;b", "\u540d", "r` TO ROLE `writer", strings.Repeat("`'\";", 250)} {
			for _, stmt := range []string{"CREATE ROLE ", "DROP ROLE ", "CREATE DATABASE IF NOT EXISTS ", "DROP USER IF EXISTS "} {
				err := e.as(t, "root", rootPass, stmt+grants.QuoteIdent(h))
				require.Error(t, err, "%s%q", stmt, h)
				require.Regexp(t, `invalid|Incorrect|not exists|cannot find`, err.Error())
			}
		}
		// A name that is valid for StarRocks but not for the module is
		// still exactly one name.
		require.NoError(t, e.as(t, "root", rootPass, "CREATE ROLE "+grants.QuoteIdent("Upper_Case")))
		require.Len(t, e.fe.RoleNames(), len(roles)+1)
		require.Contains(t, e.fe.RoleNames(), "Upper_Case")
		require.NoError(t, e.as(t, "root", rootPass, "DROP ROLE "+grants.QuoteIdent("Upper_Case")))
		require.Equal(t, roles, e.fe.RoleNames())
		require.Equal(t, dbs, e.fe.Databases())
		require.Equal(t, users, e.fe.UserNames())
		// A second statement is refused whole.
		err := e.as(t, "root", rootPass, "DROP ROLE `handmade`; DROP USER `someone`")
		require.ErrorContains(t, err, "more than one statement")
		require.Equal(t, roles, e.fe.RoleNames())
	})
}
