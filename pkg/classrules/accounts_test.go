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

package classrules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// accountsInstance declares two databases, a reader role, a writer role
// inheriting it and two users, one with its own password Secret.
func accountsInstance() *v1alpha1.Starrocks {
	sr := testInstance()
	sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}, {Name: "staging"}}
	sr.Spec.Roles = []v1alpha1.Role{
		{Name: "reader", Privileges: []v1alpha1.Privilege{{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT"}}}},
		{Name: "writer", Roles: []string{"reader", "public"}, Privileges: []v1alpha1.Privilege{
			{Database: "sales", Object: v1alpha1.OnDatabase, Privileges: []string{"CREATE TABLE", "DROP"}},
			{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"INSERT", "DELETE"}},
		}},
	}
	sr.Spec.Users = []v1alpha1.User{
		{Name: "app_writer", Roles: []string{"writer"}},
		{Name: "bi", Roles: []string{"reader"}, PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "bi-password", Key: "pw"}},
	}
	return sr
}

// hostileNames are refused as every kind of name.
var hostileNames = []string{
	"a'b", "a\"b", "a`b", "a;b", "x; DROP DATABASE sales", "a b", "a-b", "Sales", "1st", "_x", "",
	"\u0431\u0430\u0437\u0430", "caf\u00e9", "a\u2028b", "a\nb", "a\x00b", strings.Repeat("a", 1000),
	"on", "to",
}

func TestAccountsValid(t *testing.T) {
	c := mustCompile(t, testClass())
	r, vs := c.Resolve(accountsInstance())
	require.Empty(t, vs)
	require.Len(t, r.Users, 2)

	// The longest names: 64 characters.
	sr := accountsInstance()
	long := "a" + strings.Repeat("b_", 31) + "c"
	require.Len(t, long, 64)
	sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: long})
	sr.Spec.Roles = append(sr.Spec.Roles, v1alpha1.Role{Name: long, Privileges: []v1alpha1.Privilege{{Database: long, Object: v1alpha1.OnDatabase, Privileges: []string{"CREATE MATERIALIZED VIEW"}}}})
	sr.Spec.Users = append(sr.Spec.Users, v1alpha1.User{Name: long, Roles: []string{long, "db_admin", "user_admin"}})
	assert.Empty(t, c.Validate(sr))

	// Views and materialized views are objects of their own in StarRocks'
	// GRANT: a reader gets SELECT on them apart from the tables.
	sr = accountsInstance()
	sr.Spec.Roles[0].Privileges = append(sr.Spec.Roles[0].Privileges,
		v1alpha1.Privilege{Database: "sales", Object: v1alpha1.OnAllViews, Privileges: []string{"SELECT", "ALTER", "DROP"}},
		v1alpha1.Privilege{Database: "sales", Object: v1alpha1.OnAllMaterializedViews, Privileges: []string{"SELECT", "ALTER", "REFRESH", "DROP"}})
	assert.Empty(t, c.Validate(sr))

	// Nothing declared is valid too.
	assert.Empty(t, c.Validate(testInstance()))
}

func TestAccountsViolations(t *testing.T) {
	cases := []struct {
		name       string
		edit       func(sr *v1alpha1.Starrocks)
		field      string
		inMessage  string
		classEdits func(c *v1alpha1.StarrocksClass)
	}{
		{"reserved user root", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Name = "root" }, "spec.users[0].name", "user root is reserved", nil},
		{"reserved user d8_agent", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[1].Name = "d8_agent" }, "spec.users[1].name", "user d8_agent is reserved", nil},
		{"reserved user admin", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Name = "admin" }, "spec.users[0].name", "user admin is reserved", nil},
		{"user ending with _", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Name = "app_" }, "spec.users[0].name", "not ending with '_'", nil},
		{"marker role", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Name = "d8ms_managed" }, "spec.roles[0].name", "role d8ms_managed is reserved", nil},
		{"built-in role as a name", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[1].Name = "db_admin" }, "spec.roles[1].name", "role db_admin is reserved", nil},
		{"role cluster_admin", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[1].Name = "cluster_admin" }, "spec.roles[1].name", "reserved", nil},
		{"database on", func(sr *v1alpha1.Starrocks) { sr.Spec.Databases[1].Name = "on" }, "spec.databases[1].name", "may not be called on", nil},
		{"system database information_schema", func(sr *v1alpha1.Starrocks) { sr.Spec.Databases[1].Name = "information_schema" },
			"spec.databases[1].name", "database information_schema is reserved: StarRocks makes and keeps it itself", nil},
		{"system database sys", func(sr *v1alpha1.Starrocks) { sr.Spec.Databases[1].Name = "sys" }, "spec.databases[1].name", "database sys is reserved", nil},
		{"DROP on a system database", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Roles[1].Privileges[0].Database, sr.Spec.Roles[1].Privileges[0].Privileges = "sys", []string{"DROP"}
		}, "spec.roles[1].privileges[0].database", "database sys is reserved", nil},
		{"all tables of information_schema", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Database = "information_schema" },
			"spec.roles[0].privileges[0].database", "database information_schema is reserved", nil},
		{"role to", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[1].Name = "to" }, "spec.roles[1].name", "may not be called to", nil},
		{"duplicate database", func(sr *v1alpha1.Starrocks) { sr.Spec.Databases[1].Name = "sales" }, "spec.databases[1].name", "database sales is declared twice", nil},
		{"duplicate role", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[1].Name = "reader"; sr.Spec.Roles[1].Roles = nil }, "spec.roles[1].name", "role reader is declared twice", nil},
		{"duplicate user", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[1].Name = "app_writer" }, "spec.users[1].name", "user app_writer is declared twice", nil},
		{"privilege on an undeclared database", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Database = "other" },
			"spec.roles[0].privileges[0].database", "database other is not declared in spec.databases", nil},
		{"privilege not allowed on a database", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[1].Privileges[0].Privileges = []string{"SELECT"} },
			"spec.roles[1].privileges[0].privileges[0]", "privileges on Database are ALTER, DROP, CREATE TABLE", nil},
		{"privilege not allowed on all tables", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Privileges = []string{"CREATE TABLE"} },
			"spec.roles[0].privileges[0].privileges[0]", "privileges on AllTables are ALTER, DROP, SELECT", nil},
		{"privilege in the SHOW GRANTS form", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[1].Privileges[0].Privileges = []string{"CREATE_TABLE"} },
			"spec.roles[1].privileges[0].privileges[0]", "upper case as GRANT writes them", nil},
		{"ALL", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Privileges = []string{"ALL"} },
			"spec.roles[0].privileges[0].privileges[0]", "privileges on AllTables", nil},
		{"no privileges", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Privileges = nil },
			"spec.roles[0].privileges[0].privileges", "list 1 to 7 privileges", nil},
		{"unknown object", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Object = "Table" },
			"spec.roles[0].privileges[0].object", "one of Database, AllTables, AllViews, AllMaterializedViews", nil},
		{"INSERT on all views", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Roles[0].Privileges[0].Object, sr.Spec.Roles[0].Privileges[0].Privileges = v1alpha1.OnAllViews, []string{"INSERT"}
		}, "spec.roles[0].privileges[0].privileges[0]", "privileges on AllViews are SELECT, ALTER, DROP", nil},
		{"REFRESH on all views", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Roles[0].Privileges[0].Object, sr.Spec.Roles[0].Privileges[0].Privileges = v1alpha1.OnAllViews, []string{"REFRESH"}
		}, "spec.roles[0].privileges[0].privileges[0]", "privileges on AllViews are SELECT, ALTER, DROP", nil},
		{"DELETE on all materialized views", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Roles[0].Privileges[0].Object, sr.Spec.Roles[0].Privileges[0].Privileges = v1alpha1.OnAllMaterializedViews, []string{"DELETE"}
		}, "spec.roles[0].privileges[0].privileges[0]", "privileges on AllMaterializedViews are SELECT, ALTER, REFRESH, DROP", nil},
		{"same database and on twice", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Roles[0].Privileges = append(sr.Spec.Roles[0].Privileges, sr.Spec.Roles[0].Privileges[0])
		}, "spec.roles[0].privileges[1]", "listed twice in this role", nil},
		{"user gets an undeclared role", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Roles = []string{"ghost"} },
			"spec.users[0].roles[0]", "role ghost is neither declared in spec.roles nor one of the built-in roles db_admin, user_admin, public", nil},
		{"user gets root", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Roles = []string{"root"} },
			"spec.users[0].roles[0]", "role root is neither declared", nil},
		{"user gets the marker role", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Roles = []string{"d8ms_managed"} },
			"spec.users[0].roles[0]", "role d8ms_managed is neither declared", nil},
		{"role inherits itself", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Roles = []string{"reader"} },
			"spec.roles[0].roles[0]", "role reader cannot inherit itself", nil},
		{"inheritance cycle", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Roles = []string{"writer"} },
			"spec.roles", "roles inherit each other in a cycle (reader -> writer -> reader)", nil},
		{"password Secret name", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[1].PasswordSecretRef.Name = "Bad_Name" },
			"spec.users[1].passwordSecretRef.name", "a DNS-1123 subdomain", nil},
		{"password Secret key", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[1].PasswordSecretRef.Key = "pw/../x" },
			"spec.users[1].passwordSecretRef.key", "a Secret key", nil},
		{"more databases than the class allows", func(sr *v1alpha1.Starrocks) {}, "spec.databases",
			`the class allows at most 1 databases, the spec declares 2 (value 2; class "default" accounts.maxDatabases 1)`,
			func(c *v1alpha1.StarrocksClass) {
				c.Spec.Accounts = &v1alpha1.ClassAccounts{MaxDatabases: ptr(int32(1))}
			}},
		{"roles in a class that allows none", func(sr *v1alpha1.Starrocks) {}, "spec.roles",
			`class "default" accounts.maxRoles 0`,
			func(c *v1alpha1.StarrocksClass) { c.Spec.Accounts = &v1alpha1.ClassAccounts{MaxRoles: ptr(int32(0))} }},
		{"more users than the class allows", func(sr *v1alpha1.Starrocks) {}, "spec.users",
			`class "default" accounts.maxUsers 1`,
			func(c *v1alpha1.StarrocksClass) { c.Spec.Accounts = &v1alpha1.ClassAccounts{MaxUsers: ptr(int32(1))} }},
		{"more than 64 users", func(sr *v1alpha1.Starrocks) {
			for i := range 65 {
				sr.Spec.Users = append(sr.Spec.Users, v1alpha1.User{Name: fmt.Sprintf("u%d", i)})
			}
			sr.Spec.Users = sr.Spec.Users[2:]
		}, "spec.users", "spec.users may list at most 64 items", nil},
		{"forbidden built-in role for a user", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Roles = []string{"db_admin"} },
			"spec.users[0].roles[0]", `the built-in role db_admin is not offered in this class (value "db_admin"; class "default" accounts.forbiddenBuiltinRoles [db_admin, user_admin])`,
			func(c *v1alpha1.StarrocksClass) {
				c.Spec.Accounts = &v1alpha1.ClassAccounts{ForbiddenBuiltinRoles: []string{"db_admin", "user_admin"}}
			}},
		{"forbidden built-in role for a role", func(sr *v1alpha1.Starrocks) {}, "spec.roles[1].roles[1]",
			"the built-in role public is not offered in this class",
			func(c *v1alpha1.StarrocksClass) {
				c.Spec.Accounts = &v1alpha1.ClassAccounts{ForbiddenBuiltinRoles: []string{"public"}}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := testClass()
			if tc.classEdits != nil {
				tc.classEdits(cl)
			}
			sr := accountsInstance()
			tc.edit(sr)
			vs := mustCompile(t, cl).Validate(sr)
			require.NotEmpty(t, vs, "accepted")
			found := false
			for _, v := range vs {
				if v.Field == tc.field && strings.Contains(v.Error(), tc.inMessage) {
					found = true
				}
			}
			assert.True(t, found, "want a violation of %s containing %q, got %v", tc.field, tc.inMessage, vs)
		})
	}
}

// An object stored around the CRD schema (a stopped webhook, an older CRD)
// with a hostile name anywhere is refused, with the field named and the
// value shown on one bounded line.
func TestAccountsHostileNames(t *testing.T) {
	c := mustCompile(t, testClass())
	setters := map[string]func(sr *v1alpha1.Starrocks, v string){
		"spec.databases[0].name":               func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Databases[0].Name = v },
		"spec.roles[0].name":                   func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[0].Name = v },
		"spec.roles[1].roles[0]":               func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[1].Roles[0] = v },
		"spec.roles[0].privileges[0].database": func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[0].Privileges[0].Database = v },
		"spec.roles[0].privileges[0].privileges[0]": func(sr *v1alpha1.Starrocks, v string) {
			sr.Spec.Roles[0].Privileges[0].Privileges[0] = v
		},
		"spec.users[0].name":                   func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Name = v },
		"spec.users[0].roles[0]":               func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Roles[0] = v },
		"spec.users[1].passwordSecretRef.name": func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[1].PasswordSecretRef.Name = v },
		"spec.users[1].passwordSecretRef.key":  func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[1].PasswordSecretRef.Key = v },
	}
	for field, set := range setters {
		for _, name := range hostileNames {
			secretRef := strings.Contains(field, "passwordSecretRef")
			if secretRef && (name == "" || name == "on" || name == "to" || name == "a-b" || name == "1st" ||
				strings.HasSuffix(field, ".key") && (name == "Sales" || name == "_x")) {
				continue // a valid Secret name or key ("" is the default key)
			}
			t.Run(field+"/"+quoteValue(name), func(t *testing.T) {
				sr := accountsInstance()
				set(sr, name)
				vs := c.Validate(sr)
				require.NotEmpty(t, vs, "%s = %q accepted", field, name)
				named := false
				for _, v := range vs {
					assert.NotContains(t, v.Error(), "\n")
					assert.Less(t, len(v.Error()), 600)
					if v.Field == field {
						named = true
					}
				}
				assert.True(t, named, "no violation names %s: %v", field, vs)
			})
		}
	}
}

func TestClassAccountsRepeatTheCRD(t *testing.T) {
	cl := testClass()
	cl.Spec.Accounts = &v1alpha1.ClassAccounts{MaxUsers: ptr(int32(65)), MaxRoles: ptr(int32(-1)), ForbiddenBuiltinRoles: []string{"root"}}
	_, vs := Compile(cl)
	var fields []string
	for _, v := range vs {
		fields = append(fields, v.Field)
	}
	assert.ElementsMatch(t, []string{"spec.accounts.maxRoles", "spec.accounts.maxUsers", "spec.accounts.forbiddenBuiltinRoles[0]"}, fields)
}

// The CEL variables databases, roles and users, and a rule naming them
// reports the names as the value.
func TestAccountsCEL(t *testing.T) {
	cl := testClass()
	cl.Spec.Validations = append(cl.Spec.Validations,
		v1alpha1.ValidationRule{Rule: "databases.all(d, d.startsWith('s'))", Message: "database names start with s"},
		v1alpha1.ValidationRule{Rule: "users.all(u, u.hasPasswordSecret || u.name != 'bi')", Message: "bi brings its own password"},
		v1alpha1.ValidationRule{Rule: "roles.all(r, r.privileges.all(p, p.object != 'Database' || !('DROP' in p.privileges)))", Message: "no DROP on databases"},
		v1alpha1.ValidationRule{Rule: "users.all(u, !('db_admin' in u.roles))", Message: "no db_admin"},
	)
	c := mustCompile(t, cl)
	vs := c.Validate(accountsInstance())
	require.Len(t, vs, 1, "%v", vs)
	assert.Equal(t, "spec.roles", vs[0].Field)
	assert.Equal(t, "roles=[reader, writer]", vs[0].Value)
	assert.Equal(t, "no DROP on databases", vs[0].Message)

	sr := accountsInstance()
	sr.Spec.Users[1].PasswordSecretRef = nil
	sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: "ops"})
	var msgs []string
	for _, v := range c.Validate(sr) {
		msgs = append(msgs, v.Message)
	}
	assert.ElementsMatch(t, []string{"database names start with s", "bi brings its own password", "no DROP on databases"}, msgs)
}

// Rules over the largest lists the CRD allows stay under CostLimit: 64
// users with 16 roles, 64 roles with 64 privileges each.
func TestAccountsCELCostOfTheLargestSpec(t *testing.T) {
	withoutDeclarationSize(t)
	cl := testClass()
	cl.Spec.Validations = []v1alpha1.ValidationRule{
		{Rule: "users.all(u, u.roles.all(r, roles.exists(x, x.name == r) || r == 'public'))", Message: "m1"},
		{Rule: "roles.all(r, r.privileges.all(p, p.privileges.all(x, x != 'DROP') && p.database in databases))", Message: "m2"},
		{Rule: "users.filter(u, !u.hasPasswordSecret).size() <= 64 && databases.size() <= 64", Message: "m3"},
	}
	c := mustCompile(t, cl)
	sr := testInstance()
	for i := range 64 {
		sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: fmt.Sprintf("db%02d", i)})
	}
	for i := range 64 {
		r := v1alpha1.Role{Name: fmt.Sprintf("role%02d", i)}
		if i > 0 {
			r.Roles = []string{fmt.Sprintf("role%02d", i-1)}
		}
		for j := range 32 {
			r.Privileges = append(r.Privileges,
				v1alpha1.Privilege{Database: fmt.Sprintf("db%02d", j*2), Object: v1alpha1.OnAllTables, Privileges: []string{"ALTER", "DROP", "SELECT", "INSERT", "EXPORT", "UPDATE", "DELETE"}},
				v1alpha1.Privilege{Database: fmt.Sprintf("db%02d", j*2+1), Object: v1alpha1.OnDatabase, Privileges: []string{"ALTER", "CREATE TABLE"}})
		}
		sr.Spec.Roles = append(sr.Spec.Roles, r)
	}
	for i := range 64 {
		u := v1alpha1.User{Name: fmt.Sprintf("user%02d", i)}
		for j := range 16 {
			u.Roles = append(u.Roles, fmt.Sprintf("role%02d", (i+j)%64))
		}
		sr.Spec.Users = append(sr.Spec.Users, u)
	}
	vs := c.Validate(sr)
	require.Len(t, vs, 1, "%v", vs)
	assert.Equal(t, "m2", vs[0].Message) // DROP is granted: evaluated to the end, not cut off by the cost limit

	// The same rules where none fails, so every list is walked whole.
	for i := range sr.Spec.Roles {
		for j := range sr.Spec.Roles[i].Privileges {
			sr.Spec.Roles[i].Privileges[j].Privileges = []string{"ALTER", "SELECT", "INSERT", "EXPORT", "UPDATE", "DELETE"}
			if sr.Spec.Roles[i].Privileges[j].Object == v1alpha1.OnDatabase {
				sr.Spec.Roles[i].Privileges[j].Privileges = []string{"ALTER", "CREATE TABLE"}
			}
		}
	}
	assert.Empty(t, c.Validate(sr))
}

// withoutDeclarationSize lifts MaxDeclarationBytes for the CEL cost tests:
// they walk the longest lists the per-list limits allow (the byte limit
// refuses them first, which would skip the CEL rules).
func withoutDeclarationSize(t *testing.T) {
	maxDeclarationBytes = 1 << 30
	t.Cleanup(func() { maxDeclarationBytes = MaxDeclarationBytes })
}

func TestDeclarationsAreBoundedInBytes(t *testing.T) {
	c := mustCompile(t, testClass())
	sr := testInstance()
	sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}}
	sr.Spec.Roles = nil
	for i := range 30 {
		r := v1alpha1.Role{Name: fmt.Sprintf("role%02d", i)}
		for range 8 {
			r.Privileges = append(r.Privileges, v1alpha1.Privilege{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT", "INSERT", "UPDATE", "DELETE"}})
		}
		sr.Spec.Roles = append(sr.Spec.Roles, r)
	}
	var found bool
	for _, v := range c.Validate(sr) {
		if strings.HasPrefix(v.Field, "spec.databases, spec.roles") {
			found = true
			assert.Contains(t, v.Message, "more than the 16384 one instance may use")
		}
	}
	assert.True(t, found, "a declaration of about 25 KB is refused")

	// What the docs promise fits: 64 users with three roles each, 16 roles
	// of four privilege entries (names of about a dozen characters).
	sr.Spec.Databases, sr.Spec.Roles, sr.Spec.Users = nil, nil, nil
	for i := range 16 {
		sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: fmt.Sprintf("warehouse_%02d", i)})
	}
	for i := range 16 {
		r := v1alpha1.Role{Name: fmt.Sprintf("analyst_%02d", i)}
		for j := range 4 {
			r.Privileges = append(r.Privileges, v1alpha1.Privilege{Database: fmt.Sprintf("warehouse_%02d", (i+j)%16), Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT", "INSERT"}})
		}
		sr.Spec.Roles = append(sr.Spec.Roles, r)
	}
	for i := range 64 {
		sr.Spec.Users = append(sr.Spec.Users, v1alpha1.User{Name: fmt.Sprintf("service_%02d", i),
			Roles: []string{fmt.Sprintf("analyst_%02d", i%16), fmt.Sprintf("analyst_%02d", (i+1)%16), "public"}})
	}
	assert.LessOrEqual(t, declarationBytes(&sr.Spec), MaxDeclarationBytes)
	assert.Empty(t, c.Validate(sr))
}

// Rules that each stay under CostLimit but together exceed TotalCostBudget
// stop at the budget: one instance never costs more than about
// TotalCostBudget + CostLimit, whatever the class.
func TestClassRulesStopAtTheTotalCostBudget(t *testing.T) {
	withoutDeclarationSize(t)
	cl := testClass()
	cl.Spec.Validations = nil
	heavy := "roles.all(r, r.privileges.all(p, p.privileges.all(x, x != 'DROPX') && p.database in databases))"
	for range 64 {
		cl.Spec.Validations = append(cl.Spec.Validations, v1alpha1.ValidationRule{Rule: heavy, Message: "m"})
	}
	sr := testInstance()
	for i := range 64 {
		sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: fmt.Sprintf("db%02d", i)})
	}
	for i := range 64 {
		r := v1alpha1.Role{Name: fmt.Sprintf("role%02d", i)}
		for j := range 64 {
			r.Privileges = append(r.Privileges, v1alpha1.Privilege{Database: fmt.Sprintf("db%02d", j), Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT", "INSERT"}})
		}
		sr.Spec.Roles = append(sr.Spec.Roles, r)
	}
	vs := mustCompile(t, cl).Validate(sr)
	require.Len(t, vs, 1, "%v", vs)
	assert.Contains(t, vs[0].Message, "the class rules together exceed the CEL cost budget of one instance (10000000)")
	assert.NotEqual(t, "class \"default\" validations[0]: "+heavy, vs[0].Rule, "the first rules were evaluated")
}
