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
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// Databases, roles and privileges on databases and on all their tables,
// views and materialized views, as the StarRocks 3.x/4.x privilege system
// has them (privileges are checked per object type; fakefe keeps no views,
// so no statement reads one) (docs
// sql-reference/sql-statements/account-management: CREATE_ROLE, DROP_ROLE,
// GRANT, REVOKE, SET_DEFAULT_ROLE, SHOW_ROLES, SHOW_USERS, SHOW_GRANTS;
// Database: CREATE_DATABASE, SHOW_DATABASES). Statements are read by a
// tokenizer that follows the StarRocks lexer (fe-core sql/parser
// StarRocksLex.g4: backquoted identifiers with `` for a backtick, strings
// in ' or " with backslash escapes and doubled quotes), so a name or string
// that breaks out of its quotes shows up as a syntax error or as another
// statement, which is refused: the listener runs without multi-statements.
// Names are checked with fe-core common/FeNameFormat's patterns. Only the
// statement forms the agent's grants package sends, and the hand-made
// drift tests make, are understood; the account forms of accounts.go keep
// their regexps and are tried first.

// Name patterns of fe-core FeNameFormat (COMMON_NAME_REGEX for roles,
// DB_NAME_REGEX, MYSQL_USER_NAME_REGEX).
var (
	reRoleName = regexp.MustCompile(`^[a-zA-Z]\w{0,63}$|^_[a-zA-Z0-9]\w{0,62}$`)
	reDBName   = regexp.MustCompile(`^[a-zA-Z]\w{0,255}$|^_[a-zA-Z0-9]\w{0,254}$`)
	reUserName = regexp.MustCompile(`^\w{1,64}/?[.\w-]{0,63}$`)
)

// objKind is the object type of a privilege: a database or all its
// tables, views or materialized views (fe-core authorization/ObjectType.java
// DATABASE, TABLE, VIEW, MATERIALIZED_VIEW; the plural is what GRANT and
// SHOW GRANTS write after ALL).
type objKind string

const (
	objDatabase objKind = "DATABASE"
	objTables   objKind = "TABLES"
	objViews    objKind = "VIEWS"
	objMVs      objKind = "MATERIALIZED VIEWS"
)

// privilegesOn are the privileges fe-core allows per object type, in its
// order, which is the order SHOW GRANTS prints them in (authorization/
// DefaultAuthorizationProvider.java TYPE_TO_ACTION_LIST, read back by
// AuthorizationMgr.analyzeActionSet); kept here with '_' for the space.
var privilegesOn = map[objKind][]string{
	objDatabase: {"CREATE_TABLE", "DROP", "ALTER", "CREATE_VIEW", "CREATE_FUNCTION", "CREATE_MATERIALIZED_VIEW"},
	objTables:   {"DELETE", "DROP", "INSERT", "SELECT", "ALTER", "EXPORT", "UPDATE"},
	objViews:    {"SELECT", "ALTER", "DROP"},
	objMVs:      {"ALTER", "REFRESH", "DROP", "SELECT"},
}

// privObject is a privilege's object, always in default_catalog: the fake
// has no external catalogs (the agent's handling of them is tested on the
// real FE).
type privObject struct {
	kind objKind
	db   string
}

// defaultCatalog is fe-core InternalCatalog.DEFAULT_INTERNAL_CATALOG_NAME.
const defaultCatalog = "default_catalog"

// String is the object as fe-core prints it (authorization/
// DbPEntryObject.toString: the name; TablePEntryObject.toStringImpl: ALL
// <plural> IN DATABASE db).
func (o privObject) String() string {
	if o.kind == objDatabase {
		return "DATABASE " + o.db
	}
	return "ALL " + string(o.kind) + " IN DATABASE " + o.db
}

type fakeRole struct {
	inherits map[string]bool
	privs    map[privObject]map[string]bool
}

type grantState struct {
	databases map[string]bool
	roles     map[string]*fakeRole
	userPrivs map[string]map[privObject]map[string]bool
	// tables by "db.table" (data.go).
	tables map[string]*fakeTable
}

func newGrantState() *grantState {
	g := &grantState{
		// The FE's own databases: information_schema, _statistics_ and
		// sys (fe-core catalog/system/sys/SysDb.DATABASE_NAME).
		databases: map[string]bool{"information_schema": true, "_statistics_": true, "sys": true},
		roles:     map[string]*fakeRole{},
		userPrivs: map[string]map[privObject]map[string]bool{},
		tables:    map[string]*fakeTable{},
	}
	return g
}

func (s *Server) grantState() *grantState {
	if s.grants == nil {
		s.grants = newGrantState()
	}
	return s.grants
}

// Databases lists the databases, sorted.
func (s *Server) Databases() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedSet(s.grantState().databases)
}

// RoleNames lists the roles that are not built in, sorted.
func (s *Server) RoleNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedSet(s.grantState().roles)
}

// RoleGrants returns a role's SHOW GRANTS cells.
func (s *Server) RoleGrants(role string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.grantState().roles[role]
	if r == nil {
		return nil
	}
	var out []string
	for _, c := range s.grantState().cells(r.inherits, r.privs, roleGrantee(role), "ROLE '"+role+"'") {
		out = append(out, c.text)
	}
	return out
}

// roleGrantee and userGrantee are the grantee of a role grant as fe-core
// prints it (sql/formatter/AST2StringVisitor.visitGrantRevokeRoleStatement:
// "TO ", then "ROLE " and the bare name; a user identity is
// UserIdentity.toString, 'name'@'host').
func roleGrantee(role string) string { return "ROLE " + role }

func userIdentity(user string) string { return "'" + user + "'@'%'" }

// UserNames lists the users, sorted.
func (s *Server) UserNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedSet(s.users)
}

func sortedSet[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tok is one lexer token: a keyword or bare identifier, a quoted
// identifier, a string literal or a punctuation character.
type tok struct {
	text string
	kind byte // 'w' word, '`' quoted identifier, '\'' string, 'p' punctuation
}

func lex(q string) ([]tok, error) {
	var out []tok
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`' || c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(q); j++ {
				if c != '`' && q[j] == '\\' && j+1 < len(q) {
					j++
					b.WriteString(unescape(`\` + string(q[j])))
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(q[j])
			}
			if j >= len(q) {
				return nil, sqlerror.NewSQLErrorf(1064, "42000", "Getting syntax error: unterminated quote at %d", i)
			}
			kind := byte('\'')
			if c == '`' {
				kind = '`'
			}
			out = append(out, tok{text: b.String(), kind: kind})
			i = j + 1
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(q) && (q[j] == '_' || q[j] >= '0' && q[j] <= '9' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z' || q[j] >= 0x80) {
				j++
			}
			out = append(out, tok{text: q[i:j], kind: 'w'})
			i = j
		default:
			out = append(out, tok{text: string(c), kind: 'p'})
			i++
		}
	}
	return out, nil
}

// grantVerbs start the statements of this file (the first word).
var grantVerbs = map[string]bool{"SHOW": true, "CREATE": true, "DROP": true, "ALTER": true, "SET": true, "GRANT": true, "REVOKE": true}

// parser walks tokens; every method reports whether it matched.
type parser struct {
	toks []tok
	i    int
}

func (p *parser) done() bool { return p.i >= len(p.toks) }

func (p *parser) kw(words ...string) bool {
	if p.i+len(words) > len(p.toks) {
		return false
	}
	for k, w := range words {
		t := p.toks[p.i+k]
		if t.kind != 'w' || !strings.EqualFold(t.text, w) {
			return false
		}
	}
	p.i += len(words)
	return true
}

func (p *parser) punct(c string) bool {
	if !p.done() && p.toks[p.i].kind == 'p' && p.toks[p.i].text == c {
		p.i++
		return true
	}
	return false
}

// name reads an identifier: bare, backquoted, or (for roles and users,
// which StarRocks also accepts as strings) quoted.
func (p *parser) name() (string, bool) {
	if p.done() {
		return "", false
	}
	t := p.toks[p.i]
	if t.kind == 'p' {
		return "", false
	}
	p.i++
	return t.text, true
}

func (p *parser) str() (string, bool) {
	if !p.done() && p.toks[p.i].kind == '\'' {
		p.i++
		return p.toks[p.i-1].text, true
	}
	return "", false
}

// user reads name [@ 'host'] where host must be '%'.
func (p *parser) user() (string, error) {
	n, ok := p.name()
	if !ok {
		return "", syntaxErr("user name")
	}
	if p.punct("@") {
		h, ok := p.name()
		if !ok || h != "%" {
			return "", sqlerror.NewSQLErrorf(1064, "42000", "fakefe: only host '%%' is supported")
		}
	}
	if !reUserName.MatchString(n) {
		return "", sqlerror.NewSQLErrorf(1064, "42000", "invalid user name: %s", n)
	}
	return n, nil
}

func (p *parser) nameList() ([]string, bool) {
	var out []string
	for {
		n, ok := p.name()
		if !ok {
			return nil, false
		}
		out = append(out, n)
		if !p.punct(",") {
			return out, true
		}
	}
}

func syntaxErr(what string) error {
	return sqlerror.NewSQLErrorf(1064, "42000", "Getting syntax error: expecting %s", what)
}

func isBuiltinRole(r string) bool {
	_, ok := rolePrivileges[r]
	return ok
}

// execGrants runs the statements of this file; handled is false for others.
func (s *Server) execGrants(c *mysql.Conn, q string) (res *sqltypes.Result, handled bool, err error) {
	first, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	if !grantVerbs[strings.ToUpper(first)] {
		return nil, false, nil
	}
	toks, err := lex(q)
	if err != nil {
		return nil, true, err
	}
	for _, t := range toks {
		if t.kind == 'p' && t.text == ";" {
			// The listener runs without multi-statements, like the agent's
			// driver: a ; that escaped its quotes is a syntax error.
			return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "Getting syntax error: more than one statement")
		}
	}
	p := &parser{toks: toks}
	me := s.users[c.User]
	if me == nil {
		return nil, true, (*account)(nil).denied("ANY")
	}
	g := s.grantState()
	ok := &sqltypes.Result{}
	needGrant := func() error {
		if !me.has(PrivGrant) {
			return me.denied(PrivGrant)
		}
		return nil
	}
	end := func() error {
		if !p.done() {
			return sqlerror.NewSQLErrorf(1064, "42000", "Getting syntax error at %q", p.toks[p.i].text)
		}
		return nil
	}
	// endGranted: the statement is complete and its user holds GRANT.
	endGranted := func() error {
		if err := end(); err != nil {
			return err
		}
		return needGrant()
	}
	roleName := func() (string, error) {
		name, good := p.name()
		if !good {
			return "", syntaxErr("role name")
		}
		return name, nil
	}
	switch {
	case p.kw("SHOW", "DATABASES"):
		// One column, Database (fe-core qe/ShowResultMetaFactory.
		// visitShowDatabasesStatement; SHOW_DATABASES.md).
		r := &sqltypes.Result{Fields: fields("Database")}
		for _, d := range sortedSet(g.databases) {
			r.Rows = append(r.Rows, row(d))
		}
		return r, true, end()
	case p.kw("CREATE", "DATABASE"):
		ifNot := p.kw("IF", "NOT", "EXISTS")
		d, good := p.name()
		if !good {
			return nil, true, syntaxErr("database name")
		}
		if err := end(); err != nil {
			return nil, true, err
		}
		if !me.has(PrivOperate) { // db_admin or root
			return nil, true, me.deniedOn("CREATE DATABASE", "CATALOG", "default_catalog")
		}
		if !reDBName.MatchString(d) {
			return nil, true, sqlerror.NewSQLErrorf(1102, "42000", "Incorrect database name '%s'", d)
		}
		if g.databases[d] && !ifNot {
			return nil, true, sqlerror.NewSQLErrorf(1007, "HY000", "Can't create database '%s'; database exists", d)
		}
		g.databases[d] = true
		return ok, true, nil
	case p.kw("SHOW", "ROLES"):
		if err := needGrant(); err != nil {
			return nil, true, err
		}
		// StarRocks order: Name, Builtin, Comment (fe-core qe/
		// ShowResultMetaFactory.visitShowRolesStatement); here shuffled.
		// The built-in roles and their comments are fe-core authorization/
		// AuthorizationMgr's (initBuiltinRoleUnlocked); a created role has
		// none, which getRoleComment prints as FeConstants.NULL_STRING, NULL
		// on the wire.
		r := &sqltypes.Result{Fields: fields("Comment", "Name", "Builtin")}
		for _, b := range [][2]string{
			{RoleRoot, "built-in root role which has all privileges on all objects"},
			{RoleDBAdmin, "built-in database administration role"},
			{RoleClusterAdmin, "built-in cluster administration role"},
			{RoleUserAdmin, "built-in user administration role"},
			{"security_admin", "built-in security administration role"},
			{RolePublic, "built-in public role which is owned by any user"},
		} {
			r.Rows = append(r.Rows, row(b[1], b[0], "true"))
		}
		for _, n := range sortedSet(g.roles) {
			r.Rows = append(r.Rows, []sqltypes.Value{sqltypes.NULL, sqltypes.NewVarChar(n), sqltypes.NewVarChar("false")})
		}
		return r, true, end()
	case p.kw("SHOW", "USERS"):
		if err := needGrant(); err != nil {
			return nil, true, err
		}
		// One column, User, 'name'@'host' (fe-core sql/ast/
		// ShowUserStmt META_DATA; SHOW_USERS.md).
		r := &sqltypes.Result{Fields: fields("User")}
		for _, n := range sortedSet(s.users) {
			r.Rows = append(r.Rows, row("'"+n+"'@'%'"))
		}
		return r, true, end()
	case p.kw("SHOW", "GRANTS", "FOR", "ROLE"):
		name, err := roleName()
		if err != nil {
			return nil, true, err
		}
		if err := endGranted(); err != nil {
			return nil, true, err
		}
		r := g.roles[name]
		if r == nil {
			return nil, true, analyzing("There is no such grant defined for role %s: cannot find role %s!", name, name)
		}
		// StarRocks order: UserIdentity, Catalog, Grants, for a role too
		// (fe-core qe/ShowResultMetaFactory.visitShowGrantsStatement has
		// one header for both forms; SHOW_GRANTS.md shows RoleName, as
		// older versions printed); the role's name is in the first
		// column. Here shuffled: only Grants is read, by name.
		res := &sqltypes.Result{Fields: fields("Grants", "Catalog", "UserIdentity")}
		for _, cell := range g.cells(r.inherits, r.privs, roleGrantee(name), "ROLE '"+name+"'") {
			res.Rows = append(res.Rows, cell.row(name))
		}
		return res, true, nil
	case p.kw("SHOW", "GRANTS", "FOR"):
		name, err := p.user()
		if err != nil {
			return nil, true, err
		}
		if err := endGranted(); err != nil {
			return nil, true, err
		}
		u := s.users[name]
		if u == nil {
			return nil, true, analyzing("cannot find user '%s'@'%%'!", name)
		}
		// StarRocks order: UserIdentity, Catalog, Grants; here shuffled.
		// The roles granted to the user, public only if granted
		// (authorization/AuthorizationMgr.getGranteeRoleForUser reads the
		// user's own collection).
		roles := map[string]bool{}
		for r := range u.roles {
			roles[r] = true
		}
		res := &sqltypes.Result{Fields: fields("Grants", "UserIdentity", "Catalog")}
		for _, cell := range g.cells(roles, g.userPrivs[name], userIdentity(name), "USER "+userIdentity(name)) {
			rw := cell.row("")
			res.Rows = append(res.Rows, []sqltypes.Value{rw[0], sqltypes.NewVarChar(userIdentity(name)), rw[1]})
		}
		return res, true, nil
	case p.kw("CREATE", "ROLE"):
		name, err := roleName()
		if err != nil {
			return nil, true, err
		}
		if err := endGranted(); err != nil {
			return nil, true, err
		}
		if !reRoleName.MatchString(name) {
			return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "invalid role format: %s", name)
		}
		if g.roles[name] != nil || isBuiltinRole(name) {
			return nil, true, analyzing("Operation CREATE ROLE failed for %s : role already exists", name)
		}
		g.roles[name] = &fakeRole{inherits: map[string]bool{}, privs: map[privObject]map[string]bool{}}
		return ok, true, nil
	case p.kw("DROP", "ROLE"):
		name, err := roleName()
		if err != nil {
			return nil, true, err
		}
		if err := endGranted(); err != nil {
			return nil, true, err
		}
		if g.roles[name] == nil {
			return nil, true, analyzing("Operation DROP ROLE failed for %s : role not exists", name)
		}
		delete(g.roles, name)
		for _, r := range g.roles {
			delete(r.inherits, name)
		}
		for _, u := range s.users {
			delete(u.roles, name)
			delete(u.defaults, name)
		}
		return ok, true, nil
	case p.kw("CREATE", "USER"):
		ifNot := p.kw("IF", "NOT", "EXISTS")
		name, err := p.user()
		if err != nil {
			return nil, true, err
		}
		a, err := s.authOption(p)
		if err != nil {
			return nil, true, err
		}
		var defaults []string
		if p.kw("DEFAULT", "ROLE") {
			var good bool
			if defaults, good = p.nameList(); !good {
				return nil, true, syntaxErr("role list")
			}
		}
		if err := endGranted(); err != nil {
			return nil, true, err
		}
		if s.users[name] != nil {
			if ifNot {
				return ok, true, nil
			}
			return nil, true, analyzing("user '%s'@'%%' already exists!", name)
		}
		for _, r := range defaults {
			if (!isBuiltinRole(r) && g.roles[r] == nil) || r == RoleRoot {
				return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "role %s does not exist", r)
			}
			a.roles[r], a.defaults[r] = true, true
		}
		s.users[name] = a
		return ok, true, nil
	case p.kw("ALTER", "USER"):
		// ALTER USER [IF EXISTS] user authOption (fe-grammar StarRocks.g4
		// alterUserStatement).
		ifExists := p.kw("IF", "EXISTS")
		name, err := p.user()
		if err != nil {
			return nil, true, err
		}
		a, err := s.authOption(p)
		if err != nil {
			return nil, true, err
		}
		if err := end(); err != nil {
			return nil, true, err
		}
		// Changing someone else's account needs GRANT (user_admin); root's
		// password can only be changed by root itself (SET_PASSWORD.md).
		if name != c.User {
			if name == RootUser {
				return nil, true, sqlerror.NewSQLErrorf(ErrAccessDenied, "42000", "Access denied: only root can change root")
			}
			if err := needGrant(); err != nil {
				return nil, true, err
			}
		}
		u := s.users[name]
		if u == nil {
			if ifExists {
				return ok, true, nil
			}
			return nil, true, analyzing("cannot find user '%s'@'%%'!", name)
		}
		u.password, u.hash = a.password, a.hash
		return ok, true, nil
	case p.kw("DROP", "USER"):
		ifExists := p.kw("IF", "EXISTS")
		name, err := p.user()
		if err != nil {
			return nil, true, err
		}
		if err := end(); err != nil {
			return nil, true, err
		}
		if name == RootUser {
			return nil, true, analyzing("Operation DROP USER failed for 'root'@'%%' : cannot drop user 'root'@'%%'")
		}
		if err := needGrant(); err != nil {
			return nil, true, err
		}
		if s.users[name] == nil {
			if ifExists {
				return ok, true, nil
			}
			return nil, true, analyzing("cannot find user '%s'@'%%'!", name)
		}
		delete(s.users, name)
		delete(g.userPrivs, name)
		return ok, true, nil
	case p.kw("SET", "DEFAULT", "ROLE"):
		var roles []string
		switch {
		case p.kw("ALL"):
			roles = []string{"ALL"}
		case p.kw("NONE"):
		default:
			var good bool
			if roles, good = p.nameList(); !good {
				return nil, true, syntaxErr("role list")
			}
		}
		if !p.kw("TO") {
			return nil, true, syntaxErr("TO")
		}
		name, err := p.user()
		if err != nil {
			return nil, true, err
		}
		if err := end(); err != nil {
			return nil, true, err
		}
		if name != c.User {
			if err := needGrant(); err != nil {
				return nil, true, err
			}
		}
		u := s.users[name]
		if u == nil {
			return nil, true, analyzing("cannot find user '%s'@'%%'!", name)
		}
		u.defaults = map[string]bool{}
		for _, r := range roles {
			if r == "ALL" {
				for granted := range u.roles {
					u.defaults[granted] = true
				}
				continue
			}
			if !u.roles[r] {
				return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "role %s is not granted to '%s'", r, name)
			}
			u.defaults[r] = true
		}
		return ok, true, nil
	case p.kw("GRANT"), p.kw("REVOKE"):
		return s.execGrantRevoke(c, p, strings.EqualFold(p.toks[0].text, "GRANT"))
	}
	return nil, false, nil
}

// authOption reads IDENTIFIED BY 'pw' or IDENTIFIED BY PASSWORD '*hex'
// (CREATE_USER.md auth_option; the hash is mysql_native_password's).
func (s *Server) authOption(p *parser) (*account, error) {
	// IDENTIFIED [WITH mysql_native_password] BY (CREATE_USER.md).
	if !p.kw("IDENTIFIED") || (p.kw("WITH") && !p.kw("MYSQL_NATIVE_PASSWORD")) || !p.kw("BY") {
		return nil, syntaxErr("IDENTIFIED [WITH mysql_native_password] BY")
	}
	hashed := p.kw("PASSWORD")
	v, good := p.str()
	if !good {
		return nil, syntaxErr("a string")
	}
	a := newAccount("")
	if !hashed {
		a.password = v
		return a, nil
	}
	if len(v) != 41 || v[0] != '*' {
		return nil, sqlerror.NewSQLErrorf(1064, "42000", "Password hash should be a 41-digit hexadecimal number")
	}
	h, err := hex.DecodeString(v[1:])
	if err != nil {
		return nil, sqlerror.NewSQLErrorf(1064, "42000", "Password hash should be a 41-digit hexadecimal number")
	}
	a.hash = h
	return a, nil
}

// execGrantRevoke: GRANT/REVOKE privileges ON object TO/FROM grantee, or
// roles TO/FROM grantee (GRANT.md, REVOKE.md).
func (s *Server) execGrantRevoke(c *mysql.Conn, p *parser, grant bool) (*sqltypes.Result, bool, error) {
	g := s.grantState()
	to := "TO"
	if !grant {
		to = "FROM"
	}
	// Collect words up to ON or TO/FROM.
	var items []string
	var cur []string
	for !p.done() {
		t := p.toks[p.i]
		if t.kind == 'w' && (strings.EqualFold(t.text, "ON") || strings.EqualFold(t.text, to)) {
			break
		}
		switch {
		case t.kind == 'p' && t.text == ",":
			if len(cur) == 0 {
				return nil, true, syntaxErr("a privilege or role")
			}
			items, cur = append(items, strings.Join(cur, " ")), nil
		case t.kind == 'p':
			return nil, true, syntaxErr("a privilege or role")
		default:
			cur = append(cur, t.text)
		}
		p.i++
	}
	if len(cur) == 0 {
		return nil, true, syntaxErr("a privilege or role")
	}
	items = append(items, strings.Join(cur, " "))
	var obj *privObject
	if p.kw("ON") {
		// GRANT.md: ON DATABASE db, ON ALL TABLES | VIEWS | MATERIALIZED
		// VIEWS IN DATABASE db (sql/parser/StarRocks.g4 privObjectType
		// and privObjectTypePlural), and the older TABLE db.* form.
		var kind objKind
		switch {
		case p.kw("DATABASE"):
			kind = objDatabase
		case p.kw("ALL", "TABLES", "IN", "DATABASE"):
			kind = objTables
		case p.kw("ALL", "VIEWS", "IN", "DATABASE"):
			kind = objViews
		case p.kw("ALL", "MATERIALIZED", "VIEWS", "IN", "DATABASE"):
			kind = objMVs
		case p.kw("TABLE"):
			d, good := p.name()
			if !good || !p.punct(".") || !p.punct("*") {
				return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "fakefe: only TABLE db.* is supported")
			}
			obj = &privObject{kind: objTables, db: d}
		default:
			return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "fakefe: unsupported object")
		}
		if obj == nil {
			d, good := p.name()
			if !good {
				return nil, true, syntaxErr("database name")
			}
			obj = &privObject{kind: kind, db: d}
			// catalog.db names a database of another catalog; a bare
			// name is the session's catalog, default_catalog here
			// (sql/analyzer/AuthorizationAnalyzer for DATABASE objects,
			// DbPEntryObject.generate). ALL ... IN DATABASE takes one
			// identifier (StarRocks.g4 grantOnAll: IN DATABASE
			// identifierOrString): a catalog there is a syntax error.
			if kind != objDatabase && p.i < len(p.toks) && p.toks[p.i].kind == 'p' && p.toks[p.i].text == "." {
				return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "Getting syntax error: unexpected input '.', expecting TO")
			}
			if p.punct(".") {
				if obj.db, good = p.name(); !good {
					return nil, true, syntaxErr("database name")
				}
				if d != defaultCatalog {
					// The fake has no external catalog:
					// DbPEntryObject.generate's PrivObjNotFoundException.
					return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "cannot find catalog: %s", d)
				}
			}
		}
		if !g.databases[obj.db] {
			return nil, true, sqlerror.NewSQLErrorf(1049, "42000", "Unknown database '%s'", obj.db)
		}
	}
	if !p.kw(to) {
		return nil, true, syntaxErr(to)
	}
	var role, user string
	if p.kw("ROLE") {
		var good bool
		if role, good = p.name(); !good {
			return nil, true, syntaxErr("role name")
		}
		if g.roles[role] == nil {
			return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "role %s does not exist", role)
		}
	} else {
		p.kw("USER")
		var err error
		if user, err = p.user(); err != nil {
			return nil, true, err
		}
		if s.users[user] == nil {
			return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "user '%s'@'%%' does not exist", user)
		}
	}
	// WITH GRANT OPTION is not taken (a syntax error here): no test on
	// the fake needs it; the agent's handling of it is tested on the real FE.
	if !p.done() {
		return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "Getting syntax error at %q", p.toks[p.i].text)
	}
	if me := s.users[c.User]; !me.has(PrivGrant) {
		return nil, true, me.denied(PrivGrant)
	}
	if obj == nil {
		for _, r := range items {
			if (!isBuiltinRole(r) && g.roles[r] == nil) || r == RoleRoot || r == role {
				return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "role %s cannot be granted here", r)
			}
		}
		for _, r := range items {
			switch {
			case role != "" && grant:
				g.roles[role].inherits[r] = true
			case role != "":
				delete(g.roles[role].inherits, r)
			case grant:
				s.users[user].roles[r] = true
			default:
				delete(s.users[user].roles, r)
				delete(s.users[user].defaults, r)
			}
		}
		return &sqltypes.Result{}, true, nil
	}
	allowed := privilegesOn[obj.kind]
	var privs []string
	for _, it := range items {
		pr := strings.ToUpper(strings.ReplaceAll(strings.Join(strings.Fields(it), "_"), " ", "_"))
		found := false
		for _, a := range allowed {
			found = found || a == pr
		}
		if !found {
			// StarRocks refuses a privilege its object type does not have
			// (AuthorizationMgr.isAvailablePrivType over
			// DefaultAuthorizationProvider's list) when it analyzes the
			// statement; the wording here is fakefe's own.
			return nil, true, sqlerror.NewSQLErrorf(1064, "42000", "fakefe: privilege %s is not valid on %s", strings.ReplaceAll(pr, "_", " "), obj.kind)
		}
		privs = append(privs, pr)
	}
	set := map[privObject]map[string]bool{}
	if role != "" {
		set = g.roles[role].privs
	} else {
		if g.userPrivs[user] == nil {
			g.userPrivs[user] = set
		}
		set = g.userPrivs[user]
	}
	for _, pr := range privs {
		if grant {
			if set[*obj] == nil {
				set[*obj] = map[string]bool{}
			}
			set[*obj][pr] = true
		} else {
			delete(set[*obj], pr)
			if len(set[*obj]) == 0 {
				delete(set, *obj)
			}
		}
	}
	return &sqltypes.Result{}, true, nil
}

// cells renders SHOW GRANTS' Grants column as fe-core does
// (authorization/ShowGrantsExecutor, AuthorizationMgr.
// getGranteeRoleDetailsForRole, sql/analyzer/AstToSQLBuilder): first the
// roles, quoted with ', then one row per object with the privileges in
// fe-core's order, spaces in their names (CREATE TABLE), the object as
// DATABASE db or ALL TABLES IN DATABASE db; roleTo and privTo are what
// follows TO in a role grant and in a privilege grant.
func (g *grantState) cells(roles map[string]bool, privs map[privObject]map[string]bool, roleTo, privTo string) []grantCell {
	var out []grantCell
	if len(roles) > 0 {
		quoted := make([]string, 0, len(roles))
		for _, r := range sortedSet(roles) {
			quoted = append(quoted, "'"+r+"'")
		}
		out = append(out, grantCell{text: fmt.Sprintf("GRANT %s TO %s", strings.Join(quoted, ", "), roleTo)})
	}
	objs := make([]privObject, 0, len(privs))
	for o := range privs {
		objs = append(objs, o)
	}
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].db != objs[j].db {
			return objs[i].db < objs[j].db
		}
		return objs[i].kind < objs[j].kind
	})
	for _, o := range objs {
		var list []string
		for _, pr := range privilegesOn[o.kind] {
			if privs[o][pr] {
				list = append(list, strings.ReplaceAll(pr, "_", " "))
			}
		}
		if len(list) > 0 {
			out = append(out, grantCell{catalog: defaultCatalog, text: fmt.Sprintf("GRANT %s ON %s TO %s", strings.Join(list, ", "), o, privTo)})
		}
	}
	return out
}

// grantCell is one row of SHOW GRANTS: the Grants text and the Catalog
// column, empty for NULL. fe-core authorization/ShowGrantsExecutor prints
// NULL for role grants, the catalog of a database or table privilege
// (getCatalogNameFromPEntry: the external catalog's name, default_catalog
// for the internal one, InternalCatalog.DEFAULT_INTERNAL_CATALOG_NAME);
// the Grants text never names the catalog (DbPEntryObject.toString is the
// database's name alone), so "ON DATABASE sales" may be the internal
// database or an external catalog's of the same name.
type grantCell struct {
	text, catalog string
}

// row is (Grants, Catalog[, role]).
func (c grantCell) row(role string) []sqltypes.Value {
	catalog := sqltypes.NULL
	if c.catalog != "" {
		catalog = sqltypes.NewVarChar(c.catalog)
	}
	rw := []sqltypes.Value{sqltypes.NewVarChar(c.text), catalog}
	if role != "" {
		rw = append(rw, sqltypes.NewVarChar(role))
	}
	return rw
}

// analyzing is how StarRocks reports what its analyzer refuses: a
// SemanticException's message, "Getting analyzing error. Detail message: "
// and the detail with a full stop (fe-core sql/analyzer/
// SemanticException.getMessage), sent with 1064 as ErrorReport does for an
// exception without an ErrorCode. The details are fe-core sql/analyzer/
// AuthenticationAnalyzer's and AuthorizationAnalyzer's.
func analyzing(format string, args ...any) error {
	return sqlerror.NewSQLErrorf(1064, "42000", "Getting analyzing error. Detail message: %s.", fmt.Sprintf(format, args...))
}
