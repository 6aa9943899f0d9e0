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
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Scope is the object a privilege is on, as GRANT writes it before the
// database name.
type Scope string

const (
	// ScopeDatabase: GRANT ... ON DATABASE db.
	ScopeDatabase Scope = "DATABASE"
	// ScopeAllTables: GRANT ... ON ALL TABLES IN DATABASE db, which SHOW
	// GRANTS prints so (fe-core authorization/TablePEntryObject.
	// toStringImpl; older versions printed TABLE db.*, still read).
	ScopeAllTables Scope = "ALL TABLES IN DATABASE"
	// ScopeAllViews: GRANT ... ON ALL VIEWS IN DATABASE db (fe-core
	// authorization/ViewPEntryObject: a VIEW object of its own, which
	// privileges on ALL TABLES do not reach).
	ScopeAllViews Scope = "ALL VIEWS IN DATABASE"
	// ScopeAllMaterializedViews: GRANT ... ON ALL MATERIALIZED VIEWS IN
	// DATABASE db (fe-core authorization/MaterializedViewPEntryObject).
	ScopeAllMaterializedViews Scope = "ALL MATERIALIZED VIEWS IN DATABASE"
)

// Scopes in the order messages list them.
var Scopes = []Scope{ScopeDatabase, ScopeAllTables, ScopeAllViews, ScopeAllMaterializedViews}

// ScopeOf maps the contract's object (agentconfig.GrantsPrivilege.Object,
// the CRD's spec.roles[].privileges[].object) to its scope.
var ScopeOf = map[string]Scope{
	"Database":             ScopeDatabase,
	"AllTables":            ScopeAllTables,
	"AllViews":             ScopeAllViews,
	"AllMaterializedViews": ScopeAllMaterializedViews,
}

// Privileges per scope in the form SHOW GRANTS compares them here (a space
// becomes _), the privileges fe-core allows per object type (authorization/
// DefaultAuthorizationProvider.java: DATABASE, TABLE, VIEW,
// MATERIALIZED_VIEW), the database's limited to what the module offers.
// ALL is not accepted: SHOW GRANTS prints the list, so ALL would never
// match.
var Privileges = map[Scope][]string{
	ScopeDatabase:             {"ALTER", "DROP", "CREATE_TABLE", "CREATE_VIEW", "CREATE_FUNCTION", "CREATE_MATERIALIZED_VIEW"},
	ScopeAllTables:            {"ALTER", "DROP", "SELECT", "INSERT", "EXPORT", "UPDATE", "DELETE"},
	ScopeAllViews:             {"SELECT", "ALTER", "DROP"},
	ScopeAllMaterializedViews: {"SELECT", "ALTER", "REFRESH", "DROP"},
}

// NormalizePrivilege turns "create table" into CREATE_TABLE.
func NormalizePrivilege(p string) string {
	return strings.ToUpper(strings.Join(strings.Fields(strings.ReplaceAll(p, "_", " ")), "_"))
}

// Grant is privileges on one object.
type Grant struct {
	Scope      Scope
	Database   string
	Privileges []string
	// GrantOption: observed WITH GRANT OPTION; never declared, so such a
	// privilege is revoked and granted again without it.
	GrantOption bool
}

// Role is a declared role.
type Role struct {
	Name     string
	Inherits []string // declared roles or Inheritable built-ins
	Grants   []Grant
}

// User is a declared user; Password is the cleartext, never sent.
type User struct {
	Name     string
	Roles    []string
	Password string
}

// Model is what the team declares.
type Model struct {
	Databases []string
	Roles     []Role
	Users     []User
	// Protected are further users never touched (the agent's and the
	// admin's account names when they differ from ReservedUsers).
	Protected []string
	// Pending are declared users whose password is not available (its
	// Secret missing or invalid): they are declared, so never dropped,
	// but neither created nor changed until the password is back.
	Pending []string
}

// Validate refuses a model the planner cannot safely turn into statements.
// Errors name the field and the rule, never a password.
func (m Model) Validate() error {
	var errs []error
	dbs := map[string]bool{}
	for i, d := range m.Databases {
		if err := ValidateName("databases["+fmt.Sprint(i)+"]", d); err != nil {
			errs = append(errs, err)
		}
		if contains(SystemDatabases, strings.ToLower(d)) {
			errs = append(errs, fmt.Errorf("databases[%d]: %s is a StarRocks system database", i, short(d)))
		}
		if dbs[d] {
			errs = append(errs, fmt.Errorf("databases[%d]: %s declared twice", i, d))
		}
		dbs[d] = true
	}
	roles := map[string]bool{}
	for _, r := range m.Roles {
		roles[r.Name] = true
	}
	seen := map[string]bool{}
	for i, r := range m.Roles {
		f := fmt.Sprintf("roles[%d]", i)
		if err := ValidateName(f, r.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case r.Name == MarkerRole || contains(BuiltinRoles, r.Name):
			errs = append(errs, fmt.Errorf("%s: %s is reserved (built-in or the module's)", f, r.Name))
		case seen[r.Name]:
			errs = append(errs, fmt.Errorf("%s: %s declared twice", f, r.Name))
		}
		seen[r.Name] = true
		for _, in := range r.Inherits {
			if in == r.Name || (!roles[in] && !contains(Inheritable, in)) {
				errs = append(errs, fmt.Errorf("%s.inherits: %q is neither another declared role nor one of %s", f, short(in), strings.Join(Inheritable, ", ")))
			}
		}
		for j, g := range r.Grants {
			gf := fmt.Sprintf("%s.grants[%d]", f, j)
			allowed, ok := Privileges[g.Scope]
			if !ok {
				scopes := make([]string, len(Scopes))
				for i, sc := range Scopes {
					scopes[i] = string(sc)
				}
				errs = append(errs, fmt.Errorf("%s.scope: must be one of %s", gf, strings.Join(scopes, ", ")))
				continue
			}
			if !dbs[g.Database] {
				errs = append(errs, fmt.Errorf("%s.database: %q is not a declared database", gf, short(g.Database)))
			}
			if len(g.Privileges) == 0 {
				errs = append(errs, fmt.Errorf("%s.privileges: must not be empty", gf))
			}
			for _, p := range g.Privileges {
				if !contains(allowed, NormalizePrivilege(p)) {
					errs = append(errs, fmt.Errorf("%s.privileges: %q is not one of %s", gf, short(p), strings.Join(allowed, ", ")))
				}
			}
		}
	}
	if cycle := inheritanceCycle(m.Roles); cycle != "" {
		errs = append(errs, fmt.Errorf("roles: %s inherit each other (StarRocks refuses a cycle)", cycle))
	}
	seen = map[string]bool{}
	for i, u := range m.Users {
		f := fmt.Sprintf("users[%d]", i)
		if err := ValidateName(f, u.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case contains(ReservedUsers, u.Name) || contains(m.Protected, u.Name):
			errs = append(errs, fmt.Errorf("%s: %s is reserved (root, the module's or the team admin's account)", f, u.Name))
		case seen[u.Name]:
			errs = append(errs, fmt.Errorf("%s: %s declared twice", f, u.Name))
		}
		seen[u.Name] = true
		for _, r := range u.Roles {
			if !roles[r] && !contains(Inheritable, r) {
				errs = append(errs, fmt.Errorf("%s.roles: %q is neither a declared role nor one of %s", f, short(r), strings.Join(Inheritable, ", ")))
			}
		}
		if err := ValidatePassword(u.Password); err != nil {
			errs = append(errs, fmt.Errorf("%s.password: %w", f, err))
		}
	}
	for i, name := range m.Pending {
		f := fmt.Sprintf("pending[%d]", i)
		if err := ValidateName(f, name); err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case contains(ReservedUsers, name) || contains(m.Protected, name):
			errs = append(errs, fmt.Errorf("%s: %s is reserved (root, the module's or the team admin's account)", f, name))
		case seen[name]:
			errs = append(errs, fmt.Errorf("%s: %s declared twice", f, name))
		}
		seen[name] = true
	}
	return errors.Join(errs...)
}

// inheritanceCycle is agentconfig.RoleCycle of the declared roles.
func inheritanceCycle(roles []Role) string {
	gs := make([]agentconfig.GrantsRole, len(roles))
	for i, r := range roles {
		gs[i] = agentconfig.GrantsRole{Name: r.Name, Roles: r.Inherits}
	}
	return agentconfig.RoleCycle(gs)
}

// Observed is what StarRocks reports.
type Observed struct {
	Databases []string
	// Roles and Users by name, every one SHOW ROLES / SHOW USERS lists
	// except built-ins and reserved users (not read, never touched).
	Roles map[string]Principal
	Users map[string]Principal
	// PasswordOK: the user logs in with the declared password.
	PasswordOK map[string]bool
}

// Principal is what SHOW GRANTS reports for a role or user.
type Principal struct {
	Roles  []string // granted roles (inherited roles for a role)
	Grants []Grant  // privileges on databases and all their tables
	// Other are rows this package does not model (other objects, WITH
	// GRANT OPTION, text it cannot parse): reported, left alone.
	Other []string
}

// Managed says whether the module created (or adopted) it.
func (p Principal) Managed() bool { return contains(p.Roles, MarkerRole) }

// Statement is one SQL statement; String() is safe to log.
type Statement struct {
	SQL string
	// Secret: SQL carries a password hash; String() hides it.
	Secret bool
	// User is the user whose password a Secret statement sets.
	User string
	log  string
}

func (s Statement) String() string {
	if s.log != "" {
		return s.log
	}
	return s.SQL
}

func stmt(format string, args ...any) Statement { return Statement{SQL: fmt.Sprintf(format, args...)} }

func secretStmt(user, prefix, hash, suffix string) Statement {
	return Statement{SQL: prefix + "'" + hash + "'" + suffix, Secret: true, User: user, log: prefix + "'<redacted>'" + suffix}
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

func spaced(privs []string) string {
	out := make([]string, len(privs))
	for i, p := range privs {
		out[i] = strings.ReplaceAll(p, "_", " ")
	}
	return strings.Join(out, ", ")
}

func object(scope Scope, db string) string {
	return string(scope) + " " + QuoteIdent(db)
}

type grantKey struct {
	scope Scope
	db    string
}

const withGrantOption = " WITH GRANT OPTION"

func grantSet(gs []Grant) map[grantKey]map[string]bool {
	out := map[grantKey]map[string]bool{}
	for _, g := range gs {
		k := grantKey{g.Scope, g.Database}
		if out[k] == nil {
			out[k] = map[string]bool{}
		}
		for _, p := range g.Privileges {
			p = NormalizePrivilege(p)
			if g.GrantOption {
				p += withGrantOption
			}
			out[k][p] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedGrantKeys(m map[grantKey]map[string]bool) []grantKey {
	out := make([]grantKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].db != out[j].db {
			return out[i].db < out[j].db
		}
		return out[i].scope < out[j].scope
	})
	return out
}

// diffGrants: GRANT what is declared and missing, REVOKE what is there and
// not declared (drift made by hand). to is "ROLE `r`" or "USER `u`@'%'".
func diffGrants(want, have []Grant, to string) []Statement {
	w, h := grantSet(want), grantSet(have)
	var out []Statement
	keys := map[grantKey]map[string]bool{}
	for k := range w {
		keys[k] = nil
	}
	for k := range h {
		keys[k] = nil
	}
	for _, k := range sortedGrantKeys(keys) {
		var add, del []string
		for _, p := range sortedKeys(w[k]) {
			if !h[k][p] || h[k][p+withGrantOption] {
				add = append(add, p)
			}
		}
		for _, p := range sortedKeys(h[k]) {
			if !w[k][p] {
				// REVOKE takes the privilege away, grant option included.
				del = append(del, strings.TrimSuffix(p, withGrantOption))
			}
		}
		if len(del) > 0 {
			out = append(out, stmt("REVOKE %s ON %s FROM %s", spaced(del), object(k.scope, k.db), to))
		}
		if len(add) > 0 {
			out = append(out, stmt("GRANT %s ON %s TO %s", spaced(add), object(k.scope, k.db), to))
		}
	}
	return out
}

// diffRoles returns the roles to grant and to revoke; public is every
// user's and never granted or revoked (built_in_roles.md).
func diffRoles(want, have []string) (add, del []string) {
	w := map[string]bool{MarkerRole: true}
	for _, r := range want {
		w[r] = true
	}
	h := map[string]bool{}
	for _, r := range have {
		h[r] = true
	}
	delete(w, "public")
	delete(h, "public")
	for _, r := range sortedKeys(w) {
		if !h[r] {
			add = append(add, r)
		}
	}
	for _, r := range sortedKeys(h) {
		if !w[r] {
			del = append(del, r)
		}
	}
	return add, del
}

// Plan returns the statements that converge StarRocks to m, in order:
// databases, the marker role, roles, their inheritance and privileges,
// users, then drops of users and roles the module made that m no longer
// declares. Databases are never dropped: removing one from m only stops
// managing it. Nothing not Managed() and not declared is touched.
func Plan(m Model, o Observed) ([]Statement, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var out []Statement
	haveDB := map[string]bool{}
	for _, d := range o.Databases {
		haveDB[d] = true
	}
	for _, d := range m.Databases {
		if !haveDB[d] {
			out = append(out, stmt("CREATE DATABASE IF NOT EXISTS %s", QuoteIdent(d)))
		}
	}
	// The marker role only once there is something to mark: an instance
	// that declares no role and no user is not touched beyond databases.
	if _, ok := o.Roles[MarkerRole]; !ok && len(m.Roles)+len(m.Users) > 0 {
		out = append(out, stmt("CREATE ROLE %s", QuoteIdent(MarkerRole)))
	}
	for _, r := range m.Roles {
		if _, ok := o.Roles[r.Name]; !ok {
			out = append(out, stmt("CREATE ROLE %s", QuoteIdent(r.Name)))
		}
	}
	for _, r := range m.Roles {
		have := o.Roles[r.Name]
		to := "ROLE " + QuoteIdent(r.Name)
		add, del := diffRoles(r.Inherits, have.Roles)
		if len(del) > 0 {
			out = append(out, stmt("REVOKE %s FROM %s", quoteList(del), to))
		}
		if len(add) > 0 {
			out = append(out, stmt("GRANT %s TO %s", quoteList(add), to))
		}
		out = append(out, diffGrants(r.Grants, have.Grants, to)...)
	}
	for _, u := range m.Users {
		id := userIdent(u.Name)
		have, exists := o.Users[u.Name]
		if !exists {
			roles := append([]string{MarkerRole}, u.Roles...)
			// DEFAULT ROLE grants the roles and activates them at login
			// (CREATE_USER.md).
			out = append(out, secretStmt(u.Name, "CREATE USER "+id+" IDENTIFIED BY PASSWORD ", NativeHash(u.Password),
				" DEFAULT ROLE "+quoteList(roles)))
			continue
		}
		if !o.PasswordOK[u.Name] {
			out = append(out, secretStmt(u.Name, "ALTER USER "+id+" IDENTIFIED BY PASSWORD ", NativeHash(u.Password), ""))
		}
		add, del := diffRoles(u.Roles, have.Roles)
		if len(del) > 0 {
			out = append(out, stmt("REVOKE %s FROM USER %s", quoteList(del), id))
		}
		if len(add) > 0 {
			out = append(out, stmt("GRANT %s TO USER %s", quoteList(add), id))
		}
		if len(add)+len(del) > 0 {
			// Granted roles are active only as default roles
			// (SET_DEFAULT_ROLE.md).
			out = append(out, stmt("SET DEFAULT ROLE ALL TO %s", id))
		}
		// Users get privileges through roles only: direct ones are drift.
		out = append(out, diffGrants(nil, have.Grants, "USER "+id)...)
	}
	declaredUser := map[string]bool{}
	for _, u := range m.Users {
		declaredUser[u.Name] = true
	}
	for _, name := range m.Pending {
		declaredUser[name] = true
	}
	for _, name := range sortedKeys(o.Users) {
		if !declaredUser[name] && o.Users[name].Managed() && !contains(ReservedUsers, name) && !contains(m.Protected, name) {
			out = append(out, stmt("DROP USER %s", userIdent(name)))
		}
	}
	declaredRole := map[string]bool{MarkerRole: true}
	for _, r := range m.Roles {
		declaredRole[r.Name] = true
	}
	for _, name := range sortedKeys(o.Roles) {
		if !declaredRole[name] && o.Roles[name].Managed() && !contains(BuiltinRoles, name) {
			out = append(out, stmt("DROP ROLE %s", QuoteIdent(name)))
		}
	}
	return out, nil
}
