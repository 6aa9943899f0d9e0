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

package fakefe_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// feBehaviour are answers of the real FE (branch-4.1) the agent depends
// on, written against nothing but a query address, root's password and a
// cluster without a live BE, so they can run against a real FE as well as
// against this package's server.
var feBehaviour = []struct {
	name string
	run  func(t *testing.T, login func(user, password string) *sql.DB)
}{
	{"be_configs needs a live BE: 1064 Backend node not found", func(t *testing.T, login func(string, string) *sql.DB) {
		root := login("root", rootPassword)
		for _, q := range []string{
			"SELECT BE_ID, NAME, VALUE FROM information_schema.be_configs WHERE NAME = 'streaming_load_max_mb'",
			"UPDATE information_schema.be_configs SET VALUE = '1' WHERE NAME = 'streaming_load_max_mb'",
		} {
			_, err := root.Exec(q)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1064 || !strings.HasPrefix(me.Message, "Backend node not found") {
				t.Errorf("%s: %v, want 1064 Backend node not found", q, err)
			}
		}
	}},
	{"a session keeps the roles of its login", func(t *testing.T, login func(string, string) *sql.DB) {
		root := login("root", rootPassword)
		mustExec(t, root, "CREATE USER 'sess_u' IDENTIFIED BY 'sess-pass-1'")
		t.Cleanup(func() { _, _ = root.Exec("DROP USER IF EXISTS 'sess_u'") })
		before := login("sess_u", "sess-pass-1")
		before.SetMaxOpenConns(1)
		if got := currentRole(t, before); got != "NONE" {
			t.Fatalf("current_role() of a user without roles: %q", got)
		}
		mustExec(t, root, "GRANT db_admin TO USER 'sess_u'", "SET DEFAULT ROLE db_admin TO 'sess_u'")
		if got := currentRole(t, before); got != "NONE" {
			t.Errorf("a live session gained a role granted after its login: %q", got)
		}
		if _, err := before.Exec("ADMIN SHOW FRONTEND CONFIG LIKE 'catalog_trash_expire_second'"); !isDenied(err) {
			t.Errorf("a live session used a role granted after its login: %v", err)
		}
		after := login("sess_u", "sess-pass-1")
		after.SetMaxOpenConns(1)
		if got := currentRole(t, after); got != "db_admin" {
			t.Errorf("current_role() of a new session: %q, want db_admin", got)
		}
		mustExec(t, root, "REVOKE db_admin FROM USER 'sess_u'")
		if _, err := after.Exec("ADMIN SHOW FRONTEND CONFIG LIKE 'catalog_trash_expire_second'"); !isDenied(err) {
			t.Errorf("a revoked role still works in a live session: %v", err)
		}
	}},
	{"current_role() names the session's roles, NONE without any", func(t *testing.T, login func(string, string) *sql.DB) {
		// fe-core sql/analyzer/ExpressionAnalyzer, FunctionSet.CURRENT_ROLE.
		if got := currentRole(t, login("root", rootPassword)); got != "root" {
			t.Errorf("current_role() of root: %q, want root", got)
		}
	}},
	{"SHOW GRANTS prints privileges and role grants as fe-core does", func(t *testing.T, login func(string, string) *sql.DB) {
		// fe-core authorization/ShowGrantsExecutor and
		// sql/analyzer/AstToSQLBuilder: default_catalog for a privilege,
		// NULL for a role grant; privileges with spaces; ALL TABLES IN
		// DATABASE; the role quoted after TO ROLE, the granted roles
		// quoted in a role grant, and two spaces before its ROLE.
		root := login("root", rootPassword)
		mustExec(t, root, "CREATE DATABASE IF NOT EXISTS pg_db", "CREATE ROLE pg_base", "CREATE ROLE pg_r",
			"GRANT pg_base TO ROLE pg_r", "GRANT CREATE TABLE ON DATABASE pg_db TO ROLE pg_r",
			"GRANT INSERT ON ALL TABLES IN DATABASE pg_db TO ROLE pg_r",
			"CREATE USER 'pg_u' IDENTIFIED BY 'pg-pass-1'", "GRANT pg_r TO USER 'pg_u'")
		t.Cleanup(func() {
			_, _ = root.Exec("DROP USER IF EXISTS 'pg_u'")
			_, _ = root.Exec("DROP ROLE pg_r")
			_, _ = root.Exec("DROP ROLE pg_base")
		})
		for stmt, want := range map[string][][3]string{
			"SHOW GRANTS FOR ROLE pg_r": {
				{"pg_r", "", "GRANT 'pg_base' TO ROLE pg_r"},
				{"pg_r", "default_catalog", "GRANT CREATE TABLE ON DATABASE pg_db TO ROLE 'pg_r'"},
				{"pg_r", "default_catalog", "GRANT INSERT ON ALL TABLES IN DATABASE pg_db TO ROLE 'pg_r'"},
			},
			"SHOW GRANTS FOR 'pg_u'": {{"'pg_u'@'%'", "", "GRANT 'pg_r' TO 'pg_u'@'%'"}},
		} {
			rows, err := sqlrows.QueryMaps(context.Background(), root, stmt)
			if err != nil {
				t.Fatal(err)
			}
			var got [][3]string
			for _, m := range rows {
				got = append(got, [3]string{m["UserIdentity"], m["Catalog"], m["Grants"]})
			}
			sort.Slice(got, func(i, j int) bool { return got[i][2] < got[j][2] })
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s:\n got  %q\n want %q", stmt, got, want)
			}
		}
	}},
}

// catalogGrants is what the fake no longer emulates (it has no external
// catalogs), checked on the real FE only: the agent's handling of grants in
// another catalog is tested there (images/agent realfe_decides_test.go).
func catalogGrants(t *testing.T, login func(string, string) *sql.DB) {
	root := login("root", rootPassword)
	mustExec(t, root, "CREATE DATABASE IF NOT EXISTS cat_db", "CREATE ROLE cat_r",
		`CREATE EXTERNAL CATALOG cat_ext PROPERTIES ("type" = "hive", "hive.metastore.uris" = "thrift://127.0.0.1:1")`,
		"GRANT ALTER ON DATABASE cat_ext.cat_db TO ROLE cat_r", "GRANT DROP ON DATABASE cat_db TO ROLE cat_r")
	t.Cleanup(func() { _, _ = root.Exec("DROP ROLE cat_r") })
	rows, err := sqlrows.QueryMaps(context.Background(), root, "SHOW GRANTS FOR ROLE cat_r")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range rows {
		got[m["Grants"]] = m["Catalog"]
	}
	for grant, catalog := range map[string]string{
		"GRANT ALTER ON DATABASE cat_db TO ROLE 'cat_r'": "cat_ext",
		"GRANT DROP ON DATABASE cat_db TO ROLE 'cat_r'":  "default_catalog",
	} {
		if c, ok := got[grant]; !ok || c != catalog {
			t.Errorf("%s: catalog %q (listed: %v), want %q; all rows: %v", grant, c, ok, catalog, got)
		}
	}
}

const rootPassword = "root-pass-1"

func TestAnswersAsTheFEDoes(t *testing.T) {
	for _, tc := range feBehaviour {
		t.Run(tc.name, func(t *testing.T) {
			s := fakefe.Start(t, fakefe.Options{RootPassword: rootPassword})
			s.AddBackendRow(fakefe.Backend{Host: "be-0", HeartbeatPort: 9050, Alive: false})
			tc.run(t, func(user, password string) *sql.DB {
				db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", user, password, s.Addr()))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			})
		})
	}
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func currentRole(t *testing.T, db *sql.DB) string {
	t.Helper()
	var r string
	if err := db.QueryRow("SELECT CURRENT_ROLE()").Scan(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

func isDenied(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == fakefe.ErrAccessDenied
}
