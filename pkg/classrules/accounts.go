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
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// The rules of spec.databases, spec.roles and spec.users. The agent's SQL
// layer (images/agent/internal/grants, Model.Validate) refuses the same
// names and references before it builds a statement; a test there ties
// its lists to these, so what passes admission is what the agent applies.
// The CRD holds the syntax once more (api/v1alpha1/access_types.go).

// DefaultMaxAccounts is the default of the class's accounts.maxDatabases,
// maxRoles and maxUsers, and the CRD's cap of each list.
const DefaultMaxAccounts = 64

// Caps of the lists inside a role or user (the CRD declares the same).
const (
	MaxInheritedRoles   = 16
	MaxRolePrivileges   = 64
	MaxPrivilegesPerOne = 7
)

// DefaultPasswordKey is the key of passwordSecretRef when it names none.
const DefaultPasswordKey = "password"

// MarkerRole is the role the agent grants to everything the module makes
// (grants.MarkerRole): never a declared role's name.
const MarkerRole = "d8ms_managed"

// BuiltinRoles are StarRocks' own roles (docs administration/user_privs/
// authorization/built_in_roles.md): never a declared role's name.
var BuiltinRoles = []string{"root", "cluster_admin", "db_admin", "user_admin", "public", "security_admin"}

// InheritableRoles are the built-in roles a declared role or user may get.
var InheritableRoles = []string{"db_admin", "user_admin", "public"}

// ReservedUsers are the accounts the module makes itself: root, its own
// account and the team's admin account.
var ReservedUsers = []string{agentconfig.RootUser, agentconfig.AgentUser, agentconfig.AdminUser}

// SystemDatabases are the databases StarRocks makes itself (fe-core
// catalog/Database.java: isSystemDatabase, information_schema and sys, each
// a catalog/system/*Db.java; isStatisticsDatabase, _statistics_ of
// statistic/StatsConstants.java): never a declared database, so no role
// gets a privilege on them (DROP on sys would reach the FE's own tables).
// StarRocks compares them ignoring case; NamePattern allows lower case
// only, and _statistics_ already breaks it: listed for the agent's check,
// which must not rely on the pattern.
var SystemDatabases = []string{"information_schema", "sys", "_statistics_"}

// GrammarWords are refused as names of every kind: SHOW GRANTS prints
// names unquoted, and a name "on" or "to" could not be told from the
// statement's own words.
var GrammarWords = []string{"on", "to"}

// Privileges are what may be granted per spec.roles[].privileges[].object,
// as GRANT writes them: the privileges fe-core allows per object type
// (authorization/DefaultAuthorizationProvider.java, the map of ObjectType to
// PrivilegeType: DATABASE, TABLE, VIEW, MATERIALIZED_VIEW), minus those the
// module does not offer on a database (CREATE PIPE ...). Views and
// materialized views are object types of their own (authorization/
// ObjectType.java): privileges on ALL TABLES do not reach them. The SHOW
// GRANTS form joins words with '_' (PrivilegeName).
var Privileges = map[v1alpha1.PrivilegeObject][]string{
	v1alpha1.OnDatabase:             {"ALTER", "DROP", "CREATE TABLE", "CREATE VIEW", "CREATE FUNCTION", "CREATE MATERIALIZED VIEW"},
	v1alpha1.OnAllTables:            {"ALTER", "DROP", "SELECT", "INSERT", "EXPORT", "UPDATE", "DELETE"},
	v1alpha1.OnAllViews:             {"SELECT", "ALTER", "DROP"},
	v1alpha1.OnAllMaterializedViews: {"SELECT", "ALTER", "REFRESH", "DROP"},
}

// PrivilegeObjects are the keys of Privileges in the order messages list
// them.
var PrivilegeObjects = []v1alpha1.PrivilegeObject{v1alpha1.OnDatabase, v1alpha1.OnAllTables, v1alpha1.OnAllViews, v1alpha1.OnAllMaterializedViews}

// PrivilegeName is a privilege as SHOW GRANTS prints it and the agent
// compares it: CREATE TABLE becomes CREATE_TABLE.
func PrivilegeName(p string) string { return strings.ReplaceAll(p, " ", "_") }

// Name syntax, the CRD's patterns (test/openapi ties them to the CRD and
// the values schema).
const (
	// NamePattern is the name of a database or role: the part of
	// StarRocks' name rules (fe-core common/FeNameFormat.java) common to
	// databases, roles and users, lower case only.
	NamePattern = `^[a-z][a-z0-9_]{0,63}$`
	// UserNamePattern also refuses a trailing '_': the user's Secret name
	// replaces '_' with '-' and must end with a letter or digit.
	UserNamePattern = `^[a-z]([a-z0-9_]{0,62}[a-z0-9])?$`
)

var (
	nameRE     = regexp.MustCompile(NamePattern)
	userNameRE = regexp.MustCompile(UserNamePattern)
)

const (
	ruleName      = "a lower-case letter, then up to 63 lower-case letters, digits or '_'"
	ruleUserName  = "a lower-case letter, then up to 63 lower-case letters, digits or '_', not ending with '_'"
	ruleSecretKey = "a Secret key: letters, digits, '-', '_' or '.', at most 253 characters"
)

// CheckAccounts checks spec.databases, spec.roles and spec.users: names,
// reserved names, duplicates, references between them, privileges, the
// password Secret references and the class's accounts limits.
func CheckAccounts(sr *v1alpha1.Starrocks, class *v1alpha1.StarrocksClass) Violations {
	var vs Violations
	spec := &sr.Spec
	limits := accountLimits(class)

	vs = append(vs, checkCount("spec.databases", "databases", len(spec.Databases), limits.maxDatabases, class.Name, "accounts.maxDatabases")...)
	vs = append(vs, checkCount("spec.roles", "roles", len(spec.Roles), limits.maxRoles, class.Name, "accounts.maxRoles")...)
	vs = append(vs, checkCount("spec.users", "users", len(spec.Users), limits.maxUsers, class.Name, "accounts.maxUsers")...)

	dbs := map[string]bool{}
	for i, d := range spec.Databases {
		f := fmt.Sprintf("spec.databases[%d].name", i)
		if v, ok := checkName(f, "database", d.Name, nameRE, ruleName); !ok {
			vs = append(vs, v)
			continue
		}
		if slices.Contains(SystemDatabases, d.Name) {
			vs = append(vs, systemDatabase(f, d.Name))
			continue
		}
		if dbs[d.Name] {
			vs = append(vs, duplicate(f, "database", d.Name))
		}
		dbs[d.Name] = true
	}

	declared := map[string]bool{}
	for _, r := range spec.Roles {
		declared[r.Name] = true
	}
	seen := map[string]bool{}
	for i, r := range spec.Roles {
		f := fmt.Sprintf("spec.roles[%d]", i)
		if v, ok := checkName(f+".name", "role", r.Name, nameRE, ruleName); !ok {
			vs = append(vs, v)
		} else {
			switch {
			case r.Name == MarkerRole || slices.Contains(BuiltinRoles, r.Name):
				vs = append(vs, Violation{Field: f + ".name", Value: quoteValue(r.Name),
					Rule:    "not a built-in role " + stringList(BuiltinRoles) + " nor the module's " + MarkerRole,
					Message: fmt.Sprintf("role %s is reserved: it is a StarRocks built-in role or the module's own; choose another name", r.Name)})
			case seen[r.Name]:
				vs = append(vs, duplicate(f+".name", "role", r.Name))
			}
			seen[r.Name] = true
		}
		vs = append(vs, checkGrantedRoles(f+".roles", r.Roles, declared, r.Name, limits.forbidden, class.Name)...)
		if len(r.Privileges) > MaxRolePrivileges {
			vs = append(vs, tooMany(f+".privileges", len(r.Privileges), MaxRolePrivileges))
		}
		pairs := map[string]bool{}
		for j, p := range r.Privileges {
			pf := fmt.Sprintf("%s.privileges[%d]", f, j)
			vs = append(vs, checkPrivilege(pf, p, dbs)...)
			key := p.Database + "/" + string(p.Object)
			if pairs[key] {
				vs = append(vs, Violation{Field: pf, Value: quoteValue(p.Database) + " " + string(p.Object),
					Rule:    "one entry per database and object",
					Message: fmt.Sprintf("privileges on %s %s are listed twice in this role; list them in one entry", p.Object, p.Database)})
			}
			pairs[key] = true
		}
	}
	if cycle := roleCycle(spec.Roles); cycle != "" {
		vs = append(vs, Violation{Field: "spec.roles", Value: cycle, Rule: "roles[].roles without cycles",
			Message: "roles inherit each other in a cycle (" + cycle + "); StarRocks refuses it"})
	}

	seen = map[string]bool{}
	for i, u := range spec.Users {
		f := fmt.Sprintf("spec.users[%d]", i)
		if v, ok := checkName(f+".name", "user", u.Name, userNameRE, ruleUserName); !ok {
			vs = append(vs, v)
		} else {
			switch {
			case slices.Contains(ReservedUsers, u.Name):
				vs = append(vs, Violation{Field: f + ".name", Value: quoteValue(u.Name),
					Rule:    "not a reserved user " + stringList(ReservedUsers),
					Message: fmt.Sprintf("user %s is reserved: root, the module's account and the team's admin account are made by the module; choose another name", u.Name)})
			case seen[u.Name]:
				vs = append(vs, duplicate(f+".name", "user", u.Name))
			}
			seen[u.Name] = true
		}
		vs = append(vs, checkGrantedRoles(f+".roles", u.Roles, declared, "", limits.forbidden, class.Name)...)
		vs = append(vs, checkPasswordSecretRef(f+".passwordSecretRef", u.PasswordSecretRef)...)
	}
	if n := declarationBytes(spec); n > maxDeclarationBytes {
		vs = append(vs, Violation{Field: "spec.databases, spec.roles, spec.users", Value: fmt.Sprintf("%d bytes", n),
			Rule: fmt.Sprintf("at most %d bytes together, as JSON", MaxDeclarationBytes),
			Message: fmt.Sprintf("the databases, roles and users declared take %d bytes, more than the %d one instance may use: "+
				"the module and the agent carry and read every instance's declaration on each pass; "+
				"grant privileges to fewer, broader roles", n, MaxDeclarationBytes)})
	}
	return vs
}

// MaxDeclarationBytes bounds spec.databases, spec.roles and spec.users
// together, as JSON. Each instance's declaration is carried
// (agentConfig.grants) in the module's ConfigMaps of the instance (its
// desired state and memory in the module namespace, its agent
// configuration), each at most 1 MiB, and is read by the hooks on every
// run and by the agent: the per-list limits alone would let one instance
// declare about 880 KB (64 roles of 64 privilege entries). It no longer
// reaches the module's values or Helm release. A large real declaration
// (64 users with three roles each, 16 roles of four entries) is about 12 KB.
const MaxDeclarationBytes = 16384

// maxDeclarationBytes is MaxDeclarationBytes; the CEL cost tests lift it to
// walk the longest lists the per-list limits allow.
var maxDeclarationBytes = MaxDeclarationBytes

func declarationBytes(spec *v1alpha1.StarrocksSpec) int {
	data, err := json.Marshal(struct {
		D []v1alpha1.Database `json:"d"`
		R []v1alpha1.Role     `json:"r"`
		U []v1alpha1.User     `json:"u"`
	}{spec.Databases, spec.Roles, spec.Users})
	if err != nil {
		return 0
	}
	return len(data)
}

type limits struct {
	maxDatabases, maxRoles, maxUsers int
	forbidden                        []string
}

func accountLimits(class *v1alpha1.StarrocksClass) limits {
	l := limits{DefaultMaxAccounts, DefaultMaxAccounts, DefaultMaxAccounts, nil}
	a := class.Spec.Accounts
	if a == nil {
		return l
	}
	for _, m := range []struct {
		src *int32
		dst *int
	}{{a.MaxDatabases, &l.maxDatabases}, {a.MaxRoles, &l.maxRoles}, {a.MaxUsers, &l.maxUsers}} {
		if m.src != nil {
			// A class outside the CRD bounds is reported by Compile; clamp
			// so an instance is never checked against more than the cap.
			*m.dst = min(max(int(*m.src), 0), DefaultMaxAccounts)
		}
	}
	l.forbidden = a.ForbiddenBuiltinRoles
	return l
}

func checkCount(field, what string, n, limit int, class, rule string) Violations {
	if n <= limit {
		return nil
	}
	if limit == DefaultMaxAccounts {
		return Violations{tooMany(field, n, limit)}
	}
	return Violations{{Field: field, Value: fmt.Sprint(n), Rule: fmt.Sprintf("class %q %s %d", class, rule, limit),
		Message: fmt.Sprintf("the class allows at most %d %s, the spec declares %d", limit, what, n)}}
}

func tooMany(field string, n, limit int) Violation {
	return Violation{Field: field, Value: fmt.Sprint(n), Rule: fmt.Sprintf("at most %d items", limit),
		Message: fmt.Sprintf("%s may list at most %d items", field, limit)}
}

// checkName checks the syntax of a name and refuses the grammar words.
func checkName(field, kind, name string, re *regexp.Regexp, rule string) (Violation, bool) {
	if !re.MatchString(name) {
		return Violation{Field: field, Value: quoteValue(name), Rule: rule,
			Message: fmt.Sprintf("a %s name must be %s (it is used as a StarRocks identifier)", kind, rule)}, false
	}
	if slices.Contains(GrammarWords, name) {
		return Violation{Field: field, Value: quoteValue(name), Rule: "not one of " + stringList(GrammarWords),
			Message: fmt.Sprintf("a %s may not be called %s: SHOW GRANTS prints names unquoted, and %s is a word of the GRANT statement", kind, name, name)}, false
	}
	return Violation{}, true
}

func systemDatabase(field, name string) Violation {
	return Violation{Field: field, Value: quoteValue(name), Rule: "not a StarRocks system database " + stringList(SystemDatabases),
		Message: fmt.Sprintf("database %s is reserved: StarRocks makes and keeps it itself, and no declared role may get privileges on it; choose another name", name)}
}

func duplicate(field, kind, name string) Violation {
	return Violation{Field: field, Value: quoteValue(name), Rule: "unique names",
		Message: fmt.Sprintf("%s %s is declared twice", kind, name)}
}

// checkGrantedRoles checks the roles a role inherits (self is its name) or
// a user gets.
func checkGrantedRoles(field string, roles []string, declared map[string]bool, self string, forbidden []string, class string) Violations {
	var vs Violations
	if len(roles) > MaxInheritedRoles {
		vs = append(vs, tooMany(field, len(roles), MaxInheritedRoles))
	}
	seen := map[string]bool{}
	for j, r := range roles {
		f := fmt.Sprintf("%s[%d]", field, j)
		switch {
		case !nameRE.MatchString(r):
			vs = append(vs, Violation{Field: f, Value: quoteValue(r), Rule: ruleName,
				Message: "a role name must be " + ruleName})
		case slices.Contains(forbidden, r):
			vs = append(vs, Violation{Field: f, Value: quoteValue(r),
				Rule:    fmt.Sprintf("class %q accounts.forbiddenBuiltinRoles %s", class, stringList(forbidden)),
				Message: fmt.Sprintf("the built-in role %s is not offered in this class", r)})
		case r == self:
			vs = append(vs, Violation{Field: f, Value: quoteValue(r), Rule: "a role does not inherit itself",
				Message: fmt.Sprintf("role %s cannot inherit itself", r)})
		case !declared[r] && !slices.Contains(InheritableRoles, r):
			vs = append(vs, Violation{Field: f, Value: quoteValue(r),
				Rule:    "a role of spec.roles or one of " + stringList(InheritableRoles),
				Message: fmt.Sprintf("role %s is neither declared in spec.roles nor one of the built-in roles %s", r, strings.Join(InheritableRoles, ", "))})
		case seen[r]:
			vs = append(vs, duplicate(f, "role", r))
		}
		seen[r] = true
	}
	return vs
}

func checkPrivilege(field string, p v1alpha1.Privilege, dbs map[string]bool) Violations {
	var vs Violations
	if !nameRE.MatchString(p.Database) {
		vs = append(vs, Violation{Field: field + ".database", Value: quoteValue(p.Database), Rule: ruleName,
			Message: "a database name must be " + ruleName})
	} else if slices.Contains(SystemDatabases, p.Database) {
		vs = append(vs, systemDatabase(field+".database", p.Database))
	} else if !dbs[p.Database] {
		vs = append(vs, Violation{Field: field + ".database", Value: quoteValue(p.Database), Rule: "a database of spec.databases",
			Message: fmt.Sprintf("database %s is not declared in spec.databases; privileges are granted on declared databases only", p.Database)})
	}
	allowed, ok := Privileges[p.Object]
	if !ok {
		objects := make([]string, len(PrivilegeObjects))
		for i, o := range PrivilegeObjects {
			objects[i] = string(o)
		}
		return append(vs, stringViolation(field+".object", string(p.Object), "one of "+strings.Join(objects, ", "), nil))
	}
	if len(p.Privileges) == 0 || len(p.Privileges) > MaxPrivilegesPerOne {
		vs = append(vs, Violation{Field: field + ".privileges", Value: fmt.Sprint(len(p.Privileges)),
			Rule: fmt.Sprintf("1 to %d items", MaxPrivilegesPerOne), Message: fmt.Sprintf("list 1 to %d privileges", MaxPrivilegesPerOne)})
	}
	seen := map[string]bool{}
	for k, priv := range p.Privileges {
		f := fmt.Sprintf("%s.privileges[%d]", field, k)
		switch {
		case !slices.Contains(allowed, priv):
			vs = append(vs, Violation{Field: f, Value: quoteValue(priv), Rule: fmt.Sprintf("on %s: one of %s", p.Object, stringList(allowed)),
				Message: fmt.Sprintf("privileges on %s are %s, upper case as GRANT writes them", p.Object, strings.Join(allowed, ", "))})
		case seen[priv]:
			vs = append(vs, Violation{Field: f, Value: quoteValue(priv), Rule: "unique privileges", Message: "the privilege is listed twice"})
		}
		seen[priv] = true
	}
	return vs
}

// roleCycle is agentconfig.RoleCycle of the declared roles.
func roleCycle(roles []v1alpha1.Role) string {
	gs := make([]agentconfig.GrantsRole, len(roles))
	for i, r := range roles {
		gs[i] = agentconfig.GrantsRole{Name: r.Name, Roles: r.Roles}
	}
	return agentconfig.RoleCycle(gs)
}

// checkClassAccounts repeats the CRD's bounds of spec.accounts for a class
// stored around the schema.
func checkClassAccounts(class *v1alpha1.StarrocksClass) Violations {
	a := class.Spec.Accounts
	if a == nil {
		return nil
	}
	var vs Violations
	for _, m := range []struct {
		field string
		v     *int32
	}{{"spec.accounts.maxDatabases", a.MaxDatabases}, {"spec.accounts.maxRoles", a.MaxRoles}, {"spec.accounts.maxUsers", a.MaxUsers}} {
		if m.v != nil && (*m.v < 0 || *m.v > DefaultMaxAccounts) {
			vs = append(vs, Violation{Field: m.field, Value: fmt.Sprint(*m.v), Rule: fmt.Sprintf("in [0, %d]", DefaultMaxAccounts),
				Message: fmt.Sprintf("the limit must be from 0 to %d", DefaultMaxAccounts)})
		}
	}
	for i, r := range a.ForbiddenBuiltinRoles {
		if !slices.Contains(InheritableRoles, r) {
			vs = append(vs, stringViolation(fmt.Sprintf("spec.accounts.forbiddenBuiltinRoles[%d]", i), r, "one of "+stringList(InheritableRoles), nil))
		}
	}
	return vs
}

// The CEL variables databases, roles and users (documented on
// v1alpha1.ValidationRule): names and references only, never a Secret.
func (r *Resolved) databasesActivation() []string {
	out := make([]string, len(r.Databases))
	for i, d := range r.Databases {
		out[i] = d.Name
	}
	return out
}

func (r *Resolved) rolesActivation() []map[string]any {
	out := make([]map[string]any, len(r.Roles))
	for i, role := range r.Roles {
		privs := make([]map[string]any, len(role.Privileges))
		for j, p := range role.Privileges {
			privs[j] = map[string]any{"database": p.Database, "object": string(p.Object), "privileges": nonNil(p.Privileges)}
		}
		out[i] = map[string]any{"name": role.Name, "roles": nonNil(role.Roles), "privileges": privs}
	}
	return out
}

func (r *Resolved) usersActivation() []map[string]any {
	out := make([]map[string]any, len(r.Users))
	for i, u := range r.Users {
		out[i] = map[string]any{"name": u.Name, "roles": nonNil(u.Roles), "hasPasswordSecret": u.PasswordSecretRef != nil}
	}
	return out
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// checkPasswordSecretRef checks a reference to a team's Secret with a
// password (nil: none): its name reaches the agent's Role and configuration,
// its key (empty: the CRD's default) the agent's configuration.
func checkPasswordSecretRef(field string, ref *v1alpha1.PasswordSecretRef) Violations {
	if ref == nil {
		return nil
	}
	var vs Violations
	if errs := validation.IsDNS1123Subdomain(ref.Name); len(errs) > 0 {
		vs = append(vs, stringViolation(field+".name", ref.Name, ruleDNS1123Sub, errs))
	}
	if ref.Key != "" {
		if errs := validation.IsConfigMapKey(ref.Key); len(errs) > 0 {
			vs = append(vs, stringViolation(field+".key", ref.Key, ruleSecretKey, errs))
		}
	}
	return vs
}
