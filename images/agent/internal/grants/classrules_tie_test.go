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
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The class rules (admission and the hooks) and Model.Validate (the agent,
// before any statement) hold the same rules: the reserved names and
// privileges are the same lists, and what admission accepts the agent
// accepts, so a user never gets a spec that passes kubectl and fails in
// StarRocks' hands.
func TestClassRulesAndModelValidateAgree(t *testing.T) {
	sameSet := func(what string, a, b []string) {
		t.Helper()
		a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
		if !slices.Equal(a, b) {
			t.Errorf("%s: grants %v, classrules %v", what, a, b)
		}
	}
	sameSet("built-in roles", BuiltinRoles, classrules.BuiltinRoles)
	sameSet("inheritable roles", Inheritable, classrules.InheritableRoles)
	sameSet("reserved users", ReservedUsers, classrules.ReservedUsers)
	sameSet("grammar words", grammarWords, classrules.GrammarWords)
	sameSet("system databases", SystemDatabases, classrules.SystemDatabases)
	if MarkerRole != classrules.MarkerRole {
		t.Errorf("marker role: grants %s, classrules %s", MarkerRole, classrules.MarkerRole)
	}
	if len(ScopeOf) != len(classrules.Privileges) {
		t.Errorf("ScopeOf maps %d objects, classrules.Privileges has %d", len(ScopeOf), len(classrules.Privileges))
	}
	for on := range classrules.Privileges {
		scope, ok := ScopeOf[string(on)]
		if !ok {
			t.Errorf("object %s of the class rules has no scope in ScopeOf", on)
			continue
		}
		var names []string
		for _, p := range classrules.Privileges[on] {
			names = append(names, classrules.PrivilegeName(p))
		}
		sameSet("privileges on "+string(on), Privileges[scope], names)
	}

	// Names: each kind, hostile, reserved and valid, is accepted by both
	// or refused by both (classrules may refuse more: a user name ending
	// with '_' would make an ambiguous Secret name).
	names := []string{"sales", "a", "a1_b", "x" + strings.Repeat("y", 63), "x" + strings.Repeat("y", 64), "app_",
		"on", "to", "information_schema", "sys", "_statistics_", "root", "d8_agent", "admin", "d8ms_managed", "db_admin", "public", "cluster_admin",
		"a'b", "a`b", "a;b", "Sales", "1st", "_x", "", "\u0431\u0430\u0437\u0430", strings.Repeat("a", 1000)}
	class := &v1alpha1.StarrocksClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	for _, kind := range []string{"database", "role", "user"} {
		for _, n := range names {
			sr := &v1alpha1.Starrocks{}
			m := Model{}
			switch kind {
			case "database":
				sr.Spec.Databases = []v1alpha1.Database{{Name: n}}
				m.Databases = []string{n}
			case "role":
				sr.Spec.Roles = []v1alpha1.Role{{Name: n}}
				m.Roles = []Role{{Name: n}}
			case "user":
				sr.Spec.Users = []v1alpha1.User{{Name: n}}
				m.Users = []User{{Name: n, Password: "password1"}}
			}
			admitted := len(classrules.CheckAccounts(sr, class)) == 0
			applied := m.Validate() == nil
			if admitted && !applied || !admitted && applied && !(kind == "user" && n == "app_") {
				t.Errorf("%s name %.20q: admitted by classrules %v, accepted by Model.Validate %v", kind, n, admitted, applied)
			}
		}
	}

	// A spec admission accepts, as desired hands it to the agent, is a
	// model the agent accepts.
	sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}, {Name: "archive"}}
	sr.Spec.Roles = []v1alpha1.Role{
		{Name: "writer", Roles: []string{"reader", "public"}, Privileges: []v1alpha1.Privilege{
			{Database: "sales", Object: v1alpha1.OnDatabase, Privileges: classrules.Privileges[v1alpha1.OnDatabase]},
			{Database: "archive", Object: v1alpha1.OnAllTables, Privileges: classrules.Privileges[v1alpha1.OnAllTables]},
			{Database: "archive", Object: v1alpha1.OnAllViews, Privileges: classrules.Privileges[v1alpha1.OnAllViews]},
			{Database: "archive", Object: v1alpha1.OnAllMaterializedViews, Privileges: classrules.Privileges[v1alpha1.OnAllMaterializedViews]},
		}},
		{Name: "reader"},
	}
	sr.Spec.Users = []v1alpha1.User{{Name: "etl_job", Roles: []string{"writer", "db_admin", "user_admin"}}}
	if vs := classrules.CheckAccounts(sr, class); len(vs) > 0 {
		t.Fatalf("classrules: %v", vs)
	}
	g := desired.GrantsFor(sr)
	m := Model{Databases: g.Databases}
	for _, r := range g.Roles {
		role := Role{Name: r.Name, Inherits: r.Roles}
		for _, p := range r.Privileges {
			scope, ok := ScopeOf[p.Object]
			if !ok {
				t.Errorf("object %s has no scope", p.Object)
			}
			role.Grants = append(role.Grants, Grant{Scope: scope, Database: p.Database, Privileges: p.Privileges})
		}
		m.Roles = append(m.Roles, role)
	}
	for _, u := range g.Users {
		m.Users = append(m.Users, User{Name: u.Name, Roles: u.Roles, Password: fmt.Sprint("pw-", u.Name)})
	}
	if err := m.Validate(); err != nil {
		t.Errorf("Model.Validate refuses what admission accepts: %v", err)
	}
}
