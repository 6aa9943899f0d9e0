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

package fakefe

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// Accounts as StarRocks 3.x/4.x has them: users with a mysql_native_password
// password, granted roles and default roles, and the built-in roles of
// fe-core PrivilegeBuiltinConstants (root, db_admin, cluster_admin,
// user_admin, public). Only root exists on a fresh FE, with an empty
// password (fe-core AuthenticationMgr constructor). Docs: administration/user_privs/authorization/built_in_roles,
// privilege_item, and the account-management statements; statement forms as
// in fe-core sql/parser/StarRocks.g4 (createUserStatement with IF NOT EXISTS
// and DEFAULT ROLE roleList, dropUserStatement with IF EXISTS,
// grantRoleStatement, setDefaultRoleStatement, setPassword).

// RootUser is the only user of a fresh FE.
const RootUser = "root"

// Built-in roles.
const (
	RoleRoot         = "root"
	RoleDBAdmin      = "db_admin"
	RoleClusterAdmin = "cluster_admin"
	RoleUserAdmin    = "user_admin"
	RolePublic       = "public"
)

// System privileges the fake checks.
const (
	PrivNode    = "NODE"    // ALTER SYSTEM; only cluster_admin (and root) have it
	PrivOperate = "OPERATE" // ADMIN SET/SHOW FRONTEND CONFIG; db_admin has it
	PrivGrant   = "GRANT"   // CREATE/ALTER/DROP USER, GRANT; only user_admin (and root)
	PrivUpdate  = "UPDATE"  // UPDATE on tables, here information_schema.be_configs; db_admin
)

// rolePrivileges follows built_in_roles.md: cluster_admin has SYSTEM NODE,
// user_admin SYSTEM GRANT, db_admin OPERATE and every data privilege.
var rolePrivileges = map[string][]string{
	RoleRoot:         {PrivNode, PrivOperate, PrivGrant, PrivUpdate},
	RoleClusterAdmin: {PrivNode},
	RoleUserAdmin:    {PrivGrant},
	RoleDBAdmin:      {PrivOperate, PrivUpdate},
	RolePublic:       nil,
}

// ErrAccessDenied is StarRocks' ErrorCode.ERR_ACCESS_DENIED, raised by
// AccessDeniedException.reportAccessDenied for a missing privilege.
const ErrAccessDenied = 5203

type account struct {
	password string
	// hash is SHA1(SHA1(password)) when set with IDENTIFIED BY PASSWORD
	// (grants.go); then password is empty.
	hash  []byte
	roles map[string]bool
	// defaults are the roles activated at login (SET DEFAULT ROLE).
	defaults map[string]bool
	// sess is the session whose statement runs now, nil otherwise
	// (Server.ComQuery sets it under the server's lock).
	sess *session
}

func newAccount(password string, roles ...string) *account {
	a := &account{password: password, roles: map[string]bool{}, defaults: map[string]bool{}}
	for _, r := range roles {
		a.roles[r], a.defaults[r] = true, true
	}
	return a
}

// loginRoles are the roles a new session activates: the default roles
// still granted (fe-core qe/ConnectContext.setCurrentRoleIds from
// authentication/AuthenticationHandler at login, getDefaultRoleIdsByUser).
func (a *account) loginRoles() map[string]bool {
	out := map[string]bool{}
	for r := range a.defaults {
		if a.roles[r] {
			out[r] = true
		}
	}
	return out
}

// session is what StarRocks keeps per connection: the roles activated at
// login. A live session never gains a role granted or defaulted later:
// its current role ids are set once, at login (qe/ConnectContext
// setCurrentRoleIds, called by authentication/AuthenticationHandler), and
// a privilege check merges only those of them the user still holds
// (authorization/AuthorizationMgr.loadPrivilegeCollection: the user's
// roles retainAll the session's). So a revoke takes effect in a live
// session at once, a grant or a new default role only in a new one, and
// current_role() lists the session's roles as they were at login
// (sql/analyzer/ExpressionAnalyzer, FunctionSet.CURRENT_ROLE).
type session struct {
	roles map[string]bool
}

// active are the roles in effect: those of the statement's session (set
// while the server runs one of its statements) the user still holds, or
// without a session those a new one would activate.
func (a *account) active() []string {
	out := []string{}
	for r := range a.roles {
		if a.sess != nil && a.sess.roles[r] || a.sess == nil && a.defaults[r] {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

func (a *account) has(priv string) bool {
	for _, r := range a.active() {
		for _, p := range rolePrivileges[r] {
			if p == priv {
				return true
			}
		}
	}
	return false
}

// Password returns a user's password and whether the user exists.
func (s *Server) Password(user string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[user]
	if !ok {
		return "", false
	}
	return u.password, true
}

// Roles returns a user's granted and default roles, sorted.
func (s *Server) Roles(user string) (granted, defaults []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[user]
	if !ok {
		return nil, nil
	}
	for r := range u.roles {
		granted = append(granted, r)
	}
	for r := range u.defaults {
		defaults = append(defaults, r)
	}
	sort.Strings(granted)
	sort.Strings(defaults)
	return granted, defaults
}

// HasPrivilege reports whether user holds a system privilege (Priv*) through
// its active roles.
func (s *Server) HasPrivilege(user, priv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[user]
	return ok && u.has(priv)
}

const (
	reUser  = `(?:'([^'\\]+)'|([A-Za-z_][A-Za-z0-9_]*))(?:\s*@\s*'%')?`
	reStr   = `'((?:[^'\\]|\\.)*)'`
	reRoles = `((?:'?[A-Za-z_]+'?\s*,\s*)*'?[A-Za-z_]+'?)`
)

var (
	reCurrentRole = regexp.MustCompile(`(?i)^select\s+current_role\(\)$`)
	reSetOwnPass  = regexp.MustCompile(`(?i)^set\s+password\s*=\s*password\(\s*` + reStr + `\s*\)$`)
	reSetPassFor  = regexp.MustCompile(`(?i)^set\s+password\s+for\s+` + reUser + `\s*=\s*password\(\s*` + reStr + `\s*\)$`)
	reGrantRole   = regexp.MustCompile(`(?i)^grant\s+` + reRoles + `\s+to\s+(?:user\s+)?` + reUser + `$`)
	reRevokeRole  = regexp.MustCompile(`(?i)^revoke\s+` + reRoles + `\s+from\s+(?:user\s+)?` + reUser + `$`)
	reSetDefault  = regexp.MustCompile(`(?i)^set\s+default\s+role\s+` + reRoles + `\s+to\s+` + reUser + `$`)
	reNeedsNode   = regexp.MustCompile(`(?i)^(alter\s+system|cancel\s+decommission)\s`)
	reNeedsNodeOp = regexp.MustCompile(`(?i)^show\s+(frontends|backends)$`)
	// SHOW PROC: fe-core privilege/AuthorizerStmtVisitor.visitShowProcStmt checks OPERATE.
	reNeedsOperate = regexp.MustCompile(`(?i)^(admin\s+(show|set)\s+frontend\s+config|show\s+proc\s)`)
	reNeedsUpdate  = regexp.MustCompile(`(?i)^update\s`)
)

func userOf(m []string, i int) string {
	if m[i] != "" {
		return m[i]
	}
	return m[i+1]
}

func rolesOf(list string) []string {
	var out []string
	for _, r := range strings.Split(list, ",") {
		out = append(out, strings.ToLower(strings.Trim(strings.TrimSpace(r), "'")))
	}
	return out
}

// denied refuses a statement that needs a SYSTEM privilege a does not
// hold; a is nil for an unknown user.
func (a *account) denied(priv string) error {
	return a.deniedOn(priv, "SYSTEM", "")
}

// deniedOn is accessDenied with the account's active roles and those it
// holds but has not activated (fe-core authorization/
// AccessDeniedException.reportAccessDenied).
func (a *account) deniedOn(priv, objType, obj string) error {
	if a == nil {
		return accessDenied(priv, objType, obj, nil, nil)
	}
	active := a.active()
	var inactive []string
	for r := range a.roles {
		if !slices.Contains(active, r) {
			inactive = append(inactive, r)
		}
	}
	sort.Strings(inactive)
	return accessDenied(priv, objType, obj, active, inactive)
}

// authorize checks the privilege a non-account statement needs.
func (s *Server) authorize(user, q string) error {
	u := s.users[user]
	if u == nil {
		return (*account)(nil).denied("ANY")
	}
	switch {
	case reNeedsNode.MatchString(q):
		if !u.has(PrivNode) {
			return u.denied(PrivNode)
		}
	case reNeedsNodeOp.MatchString(q):
		if !u.has(PrivNode) && !u.has(PrivOperate) {
			return u.denied(PrivOperate + " OR " + PrivNode)
		}
	case reNeedsOperate.MatchString(q):
		if !u.has(PrivOperate) {
			return u.denied(PrivOperate)
		}
	case reNeedsUpdate.MatchString(q):
		if !u.has(PrivUpdate) {
			return u.denied(PrivUpdate)
		}
	}
	return nil
}

// execAccount runs the account statements; handled is false for others.
func (s *Server) execAccount(c *mysql.Conn, q string) (res *sqltypes.Result, handled bool, err error) {
	ok := &sqltypes.Result{}
	me := s.users[c.User]
	if me == nil {
		return nil, true, (*account)(nil).denied("ANY")
	}
	// Changing someone else's account needs GRANT (user_admin); root's
	// password can only be changed by root itself (SET_PASSWORD.md).
	mayChange := func(target string) error {
		if target == c.User {
			return nil
		}
		if target == RootUser {
			return sqlerror.NewSQLErrorf(ErrAccessDenied, "42000", "Access denied: only root can change root")
		}
		if !me.has(PrivGrant) {
			return me.denied(PrivGrant)
		}
		return nil
	}
	lookup := func(name string) (*account, error) {
		u := s.users[name]
		if u == nil {
			return nil, sqlerror.NewSQLErrorf(1064, "HY000", "user '%s'@'%%' does not exist", name)
		}
		return u, nil
	}
	switch {
	case reCurrentRole.MatchString(q):
		// current_role() returns the activated roles as one VARCHAR, NONE
		// when no role is active (fe-core sql/analyzer/ExpressionAnalyzer,
		// FunctionSet.CURRENT_ROLE).
		shown := me.active()
		if me.sess != nil {
			shown = sortedSet(me.sess.roles)
		}
		active := strings.Join(shown, ", ")
		if active == "" {
			active = "NONE"
		}
		// The column is named as the query wrote the call, as for any
		// expression StarRocks selects.
		name := q[strings.Index(strings.ToLower(q), "current_role"):]
		return &sqltypes.Result{Fields: fields(name), Rows: [][]sqltypes.Value{row(active)}}, true, nil
	case reSetOwnPass.MatchString(q):
		me.password, me.hash = unescape(reSetOwnPass.FindStringSubmatch(q)[1]), nil
		return ok, true, nil
	case reSetPassFor.MatchString(q):
		// SET PASSWORD FOR changes another user's password (ALTER USER ...
		// IDENTIFIED BY is in grants.go, with CREATE and DROP USER).
		m := reSetPassFor.FindStringSubmatch(q)
		name := userOf(m, 1)
		if err := mayChange(name); err != nil {
			return nil, true, err
		}
		u, err := lookup(name)
		if err != nil {
			return nil, true, err
		}
		u.password, u.hash = unescape(m[3]), nil
		return ok, true, nil
	case reGrantRole.MatchString(q), reRevokeRole.MatchString(q):
		grant := reGrantRole.MatchString(q)
		m := reGrantRole.FindStringSubmatch(q)
		if !grant {
			m = reRevokeRole.FindStringSubmatch(q)
		}
		name := userOf(m, 2)
		if !me.has(PrivGrant) {
			return nil, true, me.denied(PrivGrant)
		}
		u, err := lookup(name)
		if err != nil {
			return nil, true, err
		}
		for _, r := range rolesOf(m[1]) {
			if known := isBuiltinRole(r) || s.grantState().roles[r] != nil; !known || r == RoleRoot {
				return nil, true, analyzing("Can not granted/revoke role to/from user: cannot find role %s!", r)
			}
			if grant {
				u.roles[r] = true
			} else {
				delete(u.roles, r)
			}
		}
		return ok, true, nil
	case reSetDefault.MatchString(q):
		m := reSetDefault.FindStringSubmatch(q)
		name := userOf(m, 2)
		if err := mayChange(name); err != nil {
			return nil, true, err
		}
		u, err := lookup(name)
		if err != nil {
			return nil, true, err
		}
		roles := rolesOf(m[1])
		u.defaults = map[string]bool{}
		switch {
		case len(roles) == 1 && roles[0] == "none":
		case len(roles) == 1 && roles[0] == "all":
			for r := range u.roles {
				u.defaults[r] = true
			}
		default:
			for _, r := range roles {
				if !u.roles[r] {
					return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "role %s is not granted to '%s'", r, name)
				}
				u.defaults[r] = true
			}
		}
		return ok, true, nil
	}
	return nil, false, nil
}
