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

package grants

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const pw = "s3cret-password"

func model() Model {
	return Model{
		Databases: []string{"sales", "logs"},
		Roles: []Role{{Name: "reader", Inherits: []string{"public"}, Grants: []Grant{
			{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"SELECT"}},
		}}, {Name: "writer", Inherits: []string{"reader"}, Grants: []Grant{
			{Scope: ScopeDatabase, Database: "sales", Privileges: []string{"create table"}},
			{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"INSERT", "SELECT"}},
		}}},
		Users: []User{{Name: "app", Roles: []string{"writer"}, Password: pw}},
	}
}

func sqls(stmts []Statement) []string {
	var out []string
	for _, s := range stmts {
		out = append(out, s.String())
	}
	return out
}

// converged is what StarRocks reports once model() is applied.
func converged() Observed {
	return Observed{
		Databases: []string{"_statistics_", "information_schema", "logs", "sales"},
		Roles: map[string]Principal{
			MarkerRole: {},
			"reader":   {Roles: []string{MarkerRole}, Grants: []Grant{{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"SELECT"}}}},
			"writer": {Roles: []string{"reader", MarkerRole}, Grants: []Grant{
				{Scope: ScopeDatabase, Database: "sales", Privileges: []string{"CREATE_TABLE"}},
				{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"SELECT", "INSERT"}}}},
		},
		Users:      map[string]Principal{"app": {Roles: []string{MarkerRole, "writer", "public"}}},
		PasswordOK: map[string]bool{"app": true},
	}
}

func TestPlan(t *testing.T) {
	hash := NativeHash(pw)
	for _, tc := range []struct {
		name   string
		edit   func(*Model, *Observed)
		want   []string
		secret string // the SQL of the one Secret statement, when any
	}{{
		name: "fresh FE: everything created, in dependency order",
		edit: func(_ *Model, o *Observed) { *o = Observed{Databases: []string{"information_schema"}} },
		want: []string{
			"CREATE DATABASE IF NOT EXISTS `sales`",
			"CREATE DATABASE IF NOT EXISTS `logs`",
			"CREATE ROLE `d8ms_managed`",
			"CREATE ROLE `reader`",
			"CREATE ROLE `writer`",
			"GRANT `d8ms_managed` TO ROLE `reader`",
			"GRANT SELECT ON ALL TABLES IN DATABASE `sales` TO ROLE `reader`",
			"GRANT `d8ms_managed`, `reader` TO ROLE `writer`",
			"GRANT INSERT, SELECT ON ALL TABLES IN DATABASE `sales` TO ROLE `writer`",
			"GRANT CREATE TABLE ON DATABASE `sales` TO ROLE `writer`",
			"CREATE USER `app` IDENTIFIED BY PASSWORD '<redacted>' DEFAULT ROLE `d8ms_managed`, `writer`",
		},
		secret: "CREATE USER `app` IDENTIFIED BY PASSWORD '" + hash + "' DEFAULT ROLE `d8ms_managed`, `writer`",
	}, {
		name: "converged: nothing",
		edit: func(*Model, *Observed) {},
	}, {
		name: "hand-made grants are revoked",
		edit: func(_ *Model, o *Observed) {
			r := o.Roles["reader"]
			r.Grants = append(r.Grants, Grant{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"DELETE"}},
				Grant{Scope: ScopeDatabase, Database: "other", Privileges: []string{"DROP"}})
			r.Roles = append(r.Roles, "db_admin")
			o.Roles["reader"] = r
			u := o.Users["app"]
			u.Grants = []Grant{{Scope: ScopeAllTables, Database: "logs", Privileges: []string{"SELECT"}}}
			o.Users["app"] = u
		},
		want: []string{
			"REVOKE `db_admin` FROM ROLE `reader`",
			"REVOKE DROP ON DATABASE `other` FROM ROLE `reader`",
			"REVOKE DELETE ON ALL TABLES IN DATABASE `sales` FROM ROLE `reader`",
			"REVOKE SELECT ON ALL TABLES IN DATABASE `logs` FROM USER `app`",
		},
	}, {
		name: "a grant option added by hand is taken away",
		edit: func(_ *Model, o *Observed) {
			r := o.Roles["reader"]
			r.Grants = []Grant{{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"SELECT"}, GrantOption: true}}
			o.Roles["reader"] = r
		},
		want: []string{
			"REVOKE SELECT ON ALL TABLES IN DATABASE `sales` FROM ROLE `reader`",
			"GRANT SELECT ON ALL TABLES IN DATABASE `sales` TO ROLE `reader`",
		},
	}, {
		name: "views and materialized views are objects of their own",
		edit: func(m *Model, o *Observed) {
			m.Roles[0].Grants = append(m.Roles[0].Grants,
				Grant{Scope: ScopeAllViews, Database: "sales", Privileges: []string{"SELECT"}},
				Grant{Scope: ScopeAllMaterializedViews, Database: "sales", Privileges: []string{"SELECT", "REFRESH"}})
			r := o.Roles["reader"]
			r.Grants = append(r.Grants, Grant{Scope: ScopeAllViews, Database: "logs", Privileges: []string{"DROP"}})
			o.Roles["reader"] = r
		},
		want: []string{
			"REVOKE DROP ON ALL VIEWS IN DATABASE `logs` FROM ROLE `reader`",
			"GRANT REFRESH, SELECT ON ALL MATERIALIZED VIEWS IN DATABASE `sales` TO ROLE `reader`",
			"GRANT SELECT ON ALL VIEWS IN DATABASE `sales` TO ROLE `reader`",
		},
	}, {
		name:   "changed password",
		edit:   func(_ *Model, o *Observed) { o.PasswordOK["app"] = false },
		want:   []string{"ALTER USER `app` IDENTIFIED BY PASSWORD '<redacted>'"},
		secret: "ALTER USER `app` IDENTIFIED BY PASSWORD '" + hash + "'",
	}, {
		name: "user roles changed",
		edit: func(m *Model, _ *Observed) { m.Users[0].Roles = []string{"reader", "db_admin"} },
		want: []string{
			"REVOKE `writer` FROM USER `app`",
			"GRANT `db_admin`, `reader` TO USER `app`",
			"SET DEFAULT ROLE ALL TO `app`",
		},
	}, {
		name: "removed user and role dropped, removed database kept, foreign ones untouched",
		edit: func(m *Model, o *Observed) {
			m.Users = nil
			m.Roles = m.Roles[:1]
			m.Databases = []string{"sales"}
			o.Users["handmade"] = Principal{Roles: []string{"reader"}}
			o.Roles["team_role"] = Principal{}
		},
		want: []string{"DROP USER `app`", "DROP ROLE `writer`"},
	}, {
		name: "a pending user (password Secret missing) is declared: never dropped nor changed",
		edit: func(m *Model, o *Observed) {
			m.Users = nil
			m.Pending = []string{"app"}
			u := o.Users["app"]
			u.Roles = []string{MarkerRole, "reader"}
			o.Users["app"] = u
			delete(o.PasswordOK, "app")
		},
	}, {
		name: "nothing declared on a fresh FE: no marker role, nothing at all",
		edit: func(m *Model, o *Observed) {
			*m = Model{}
			*o = Observed{Databases: []string{"information_schema"}}
		},
	}, {
		name: "databases only: no marker role",
		edit: func(m *Model, o *Observed) {
			*m = Model{Databases: []string{"sales"}}
			*o = Observed{Databases: []string{"information_schema"}}
		},
		want: []string{"CREATE DATABASE IF NOT EXISTS `sales`"},
	}, {
		name: "an existing role of the same name is adopted",
		edit: func(_ *Model, o *Observed) {
			o.Roles["reader"] = Principal{Grants: []Grant{{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"SELECT"}}}}
		},
		want: []string{"GRANT `d8ms_managed` TO ROLE `reader`"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m, o := model(), converged()
			tc.edit(&m, &o)
			got, err := Plan(m, o)
			require.NoError(t, err)
			require.Equal(t, tc.want, sqls(got))
			var secret string
			for _, s := range got {
				require.NotContains(t, s.SQL, pw)
				require.NotContains(t, s.String(), hash)
				if s.Secret {
					secret = s.SQL
				}
			}
			require.Equal(t, tc.secret, secret)
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Model)
		want string
	}{
		{"reserved user root", func(m *Model) { m.Users[0].Name = "root" }, "users[0]: root is reserved"},
		{"reserved user agent", func(m *Model) { m.Users[0].Name = "d8_agent" }, "users[0]: d8_agent is reserved"},
		{"protected admin", func(m *Model) { m.Protected = []string{"team"}; m.Users[0].Name = "team" }, "users[0]: team is reserved"},
		{"built-in role", func(m *Model) { m.Roles[0].Name = "db_admin" }, "roles[0]: db_admin is reserved"},
		{"marker role", func(m *Model) { m.Roles[0].Name = MarkerRole }, "is reserved"},
		{"cluster_admin not inheritable", func(m *Model) { m.Users[0].Roles = []string{"cluster_admin"} }, `users[0].roles: "cluster_admin" is neither`},
		{"unknown privilege", func(m *Model) { m.Roles[0].Grants[0].Privileges = []string{"NODE"} }, `roles[0].grants[0].privileges: "NODE" is not one of`},
		{"INSERT on views", func(m *Model) {
			m.Roles[0].Grants[0] = Grant{Scope: ScopeAllViews, Database: "sales", Privileges: []string{"INSERT"}}
		}, `roles[0].grants[0].privileges: "INSERT" is not one of SELECT, ALTER, DROP`},
		{"unknown scope", func(m *Model) { m.Roles[0].Grants[0].Scope = "TABLE" }, `roles[0].grants[0].scope: must be one of DATABASE, ALL TABLES IN DATABASE, ALL VIEWS IN DATABASE, ALL MATERIALIZED VIEWS IN DATABASE`},
		{"ALL refused", func(m *Model) { m.Roles[0].Grants[0].Privileges = []string{"ALL"} }, `"ALL" is not one of`},
		{"undeclared database", func(m *Model) { m.Roles[0].Grants[0].Database = "x" }, `roles[0].grants[0].database: "x" is not a declared database`},
		{"short password", func(m *Model) { m.Users[0].Password = "short" }, "users[0].password: must be 8 to 1024 bytes long, is 5"},
		{"upper case", func(m *Model) { m.Databases[0] = "Sales" }, "databases[0] name"},
		{"system database", func(m *Model) { m.Databases = append(m.Databases, "information_schema") }, "databases[2]: information_schema is a StarRocks system database"},
		{"sys", func(m *Model) { m.Databases = append(m.Databases, "sys") }, "is a StarRocks system database"},
		{"a word of GRANT", func(m *Model) { m.Roles[0].Name = "to" }, `roles[0] name "to": must not be one of on, to`},
		{"pending and declared", func(m *Model) { m.Pending = []string{"app"} }, "pending[0]: app declared twice"},
		{"pending reserved", func(m *Model) { m.Pending = []string{"root"} }, "pending[0]: root is reserved"},
		{"inheritance cycle", func(m *Model) { m.Roles[0].Inherits = []string{"writer"} }, "roles: reader -> writer -> reader inherit each other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model()
			tc.edit(&m)
			err := m.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), pw)
			_, err = Plan(m, Observed{})
			require.Error(t, err)
		})
	}
	require.NoError(t, model().Validate())
}

func TestParseGrant(t *testing.T) {
	for _, tc := range []struct {
		in    string
		roles []string
		grant *Grant
	}{
		// SHOW_GRANTS.md examples.
		{in: "GRANT role_g, public to `user_g`@`%`;", roles: []string{"role_g", "public"}},
		{in: "GRANT 'root', 'testrole' TO 'root'@'%'", roles: []string{"root", "testrole"}},
		{in: "GRANT role_p, role_test TO ROLE role_g;", roles: []string{"role_p", "role_test"}},
		{in: "GRANT ALTER, DROP, CREATE_TABLE ON DATABASE db1 TO USER `user_g`@`%`;",
			grant: &Grant{Scope: ScopeDatabase, Database: "db1", Privileges: []string{"ALTER", "DROP", "CREATE_TABLE"}}},
		{in: "GRANT ALTER, DROP, SELECT, INGEST, EXPORT, DELETE, UPDATE ON TABLE db.* TO USER `user_g`@`%`;"}, // INGEST unknown
		{in: "GRANT SELECT, INSERT ON TABLE `db`.* TO ROLE `r`", grant: &Grant{Scope: ScopeAllTables, Database: "db", Privileges: []string{"SELECT", "INSERT"}}},
		{in: "GRANT SELECT ON ALL TABLES IN DATABASE `d``b` TO ROLE r", grant: &Grant{Scope: ScopeAllTables, Database: "d`b", Privileges: []string{"SELECT"}}},
		{in: "GRANT CREATE TABLE ON DATABASE d TO ROLE r", grant: &Grant{Scope: ScopeDatabase, Database: "d", Privileges: []string{"CREATE_TABLE"}}},
		{in: "GRANT CREATE_VIEW ON DATABASE db1 TO USER `user_g`@`%` WITH GRANT OPTION;",
			grant: &Grant{Scope: ScopeDatabase, Database: "db1", Privileges: []string{"CREATE_VIEW"}, GrantOption: true}},
		// As fe-core prints them (sql/analyzer/AstToSQLBuilder
		// visitGrantRevokePrivilegeStatement: privileges with spaces,
		// authorization/TablePEntryObject.toStringImpl: ALL <plural> IN
		// DATABASE db, the role quoted with ').
		{in: "GRANT 'reader', 'd8ms_managed' TO  ROLE writer", roles: []string{"reader", "d8ms_managed"}},
		{in: "GRANT SELECT, INSERT ON ALL TABLES IN DATABASE sales TO ROLE 'writer'",
			grant: &Grant{Scope: ScopeAllTables, Database: "sales", Privileges: []string{"SELECT", "INSERT"}}},
		{in: "GRANT SELECT, ALTER, DROP ON ALL VIEWS IN DATABASE sales TO ROLE 'reader'",
			grant: &Grant{Scope: ScopeAllViews, Database: "sales", Privileges: []string{"SELECT", "ALTER", "DROP"}}},
		{in: "GRANT ALTER, REFRESH, DROP, SELECT ON ALL MATERIALIZED VIEWS IN DATABASE sales TO ROLE 'reader' WITH GRANT OPTION",
			grant: &Grant{Scope: ScopeAllMaterializedViews, Database: "sales", Privileges: []string{"ALTER", "REFRESH", "DROP", "SELECT"}, GrantOption: true}},
		{in: "GRANT INSERT ON ALL VIEWS IN DATABASE sales TO ROLE 'reader'"},              // not a view privilege
		{in: "GRANT DELETE ON ALL MATERIALIZED VIEWS IN DATABASE sales TO ROLE 'reader'"}, // not a materialized view privilege
		{in: "GRANT SELECT ON ALL VIEWS IN ALL DATABASES TO ROLE 'reader'"},               // not modelled
		{in: "GRANT role_p TO ROLE role_g WITH GRANT OPTION"},
		{in: "GRANT ALTER, DROP, SELECT ON VIEW db2.view TO USER `user_g`@`%`;"},
		{in: "GRANT SELECT ON TABLE db.t1 TO ROLE r"},
		{in: "GRANT SELECT ON *.* TO ROLE role_g WITH GRANT OPTION;"},
		{in: "GRANT IMPERSONATE ON USER `user_a`@`%` TO USER `user_g`@`%`;"},
		{in: "GRANT USAGE ON CATALOG Hive_catalog TO USER `user_g`@`%`"},
		{in: "GRANT `unterminated TO ROLE r"},
		{in: ""},
		{in: "GRANT"},
		{in: "GRANT , TO ROLE r"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			roles, g, isGrant, ok := ParseGrant(tc.in)
			require.Equal(t, tc.roles != nil || tc.grant != nil, ok)
			require.Equal(t, tc.roles, roles)
			require.Equal(t, tc.grant != nil, isGrant)
			if tc.grant != nil {
				require.Equal(t, *tc.grant, g)
			}
		})
	}
}

func FuzzParseGrant(f *testing.F) {
	f.Add("GRANT SELECT ON TABLE db.* TO ROLE r")
	f.Add("GRANT a, b TO 'u'@'%'")
	f.Fuzz(func(t *testing.T, s string) {
		ParseGrant(s) // must not panic
		_ = strings.TrimSpace(s)
	})
}

func TestPrincipalFromRowsCountsOnlyDefaultCatalog(t *testing.T) {
	sales := "GRANT ALTER ON DATABASE sales TO ROLE 'reader'"
	for _, tc := range []struct {
		name string
		row  GrantRow
		want Principal
	}{
		{"a privilege in default_catalog is declared state", GrantRow{sales, "default_catalog"},
			Principal{Grants: []Grant{{Scope: ScopeDatabase, Database: "sales", Privileges: []string{"ALTER"}}}}},
		{"the same text in an external catalog is left alone", GrantRow{sales, "hive_ext"}, Principal{Other: []string{sales}}},
		{"a privilege on all catalogs (NULL) is left alone", GrantRow{sales, ""}, Principal{Other: []string{sales}}},
		{"a role grant has no catalog", GrantRow{"GRANT 'a', 'b' TO  ROLE r", ""}, Principal{Roles: []string{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, principalFromRows([]GrantRow{tc.row}))
		})
	}
}
