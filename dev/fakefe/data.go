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
	"sort"
	"strconv"
	"strings"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// A little data, enough to show that a user does exactly what its roles
// allow: CREATE TABLE db.t (...) needs CREATE TABLE on the database, INSERT
// INTO db.t VALUES (...) INSERT on the table, SELECT * / SELECT COUNT(*)
// FROM db.t SELECT on it (docs administration/user_privs/privilege_item.md,
// "Database" and "Table"). Privileges come from the user's active roles:
// its default roles that are still granted, the roles those inherit, and
// public (SET_DEFAULT_ROLE.md, built_in_roles.md); root and db_admin have
// them all. Rows are kept as the literal texts of INSERT; column types and
// the CREATE TABLE properties are ignored.

// ErrBadTable is MySQL's ER_BAD_TABLE_ERROR, which StarRocks answers for
// an unknown table (fe-core ErrorCode.ERR_BAD_TABLE_ERROR).
const ErrBadTable = 1051

type fakeTable struct {
	columns []string
	rows    [][]string
	// refresh is an asynchronous materialized view's refresh type
	// (MANUAL, ASYNC); "" for a table.
	refresh string
}

// TableRows returns the rows of db.t (nil when it does not exist).
func (s *Server) TableRows(db, table string) [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.grantState().tables[db+"."+table]
	if t == nil {
		return nil
	}
	return append([][]string{}, t.rows...)
}

// accessDenied is ErrorCode.ERR_ACCESS_DENIED (5203, 42000) as
// AccessDeniedException.reportAccessDenied fills it: privilege, object
// type, " " + object, then the hint with the active and inactive roles
// (fe-core common/ErrorCode.java ERR_ACCESS_DENIED and
// ERR_ACCESS_DENIED_HINT_MSG_FORMAT; authz/authorization/
// AccessDeniedException.java).
func accessDenied(priv, objType, obj string, active, inactive []string) error {
	if obj != "" {
		obj = " " + obj
	}
	// The role lists are Java's List.toString, NONE for an empty one.
	list := func(roles []string) string {
		if len(roles) == 0 {
			return "NONE"
		}
		return "[" + strings.Join(roles, ", ") + "]"
	}
	return sqlerror.NewSQLErrorf(ErrAccessDenied, "42000",
		"Access denied; you need (at least one of) the %s privilege(s) on %s%s for this operation. "+
			"Please ask the admin to grant permission(s) or try activating existing roles using <set [default] role>. "+
			"Current role(s): %s. Inactivated role(s): %s.",
		priv, objType, obj, list(active), list(inactive))
}

// effectiveRoles are the active roles and every role they inherit, public
// included.
func (g *grantState) effectiveRoles(u *account) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(r string) {
		if seen[r] {
			return
		}
		seen[r] = true
		if fr := g.roles[r]; fr != nil {
			for in := range fr.inherits {
				visit(in)
			}
		}
	}
	visit(RolePublic)
	for _, r := range u.active() {
		visit(r)
	}
	return sortedSet(seen)
}

// allowed reports whether user holds priv on obj through its roles or a
// direct grant.
func (s *Server) allowed(user string, obj privObject, priv string) (bool, []string, []string) {
	g := s.grantState()
	u := s.users[user]
	if u == nil {
		return false, nil, nil
	}
	roles := g.effectiveRoles(u)
	var inactive []string
	for r := range u.roles {
		if !u.defaults[r] {
			inactive = append(inactive, r)
		}
	}
	sort.Strings(inactive)
	ok := g.userPrivs[user][obj][priv]
	for _, r := range roles {
		switch {
		case r == RoleRoot || r == RoleDBAdmin:
			ok = true
		case g.roles[r] != nil:
			ok = ok || g.roles[r].privs[obj][priv]
		}
	}
	return ok, u.active(), inactive
}

// tableName reads db . table.
func (p *parser) tableName() (db, table string, err error) {
	db, ok := p.name()
	if !ok {
		return "", "", syntaxErr("a table name")
	}
	if !p.punct(".") {
		return "", "", sqlerror.NewSQLErrorf(sqlerror.ERNoDb, sqlerror.SSNoDB, "No database selected")
	}
	table, ok = p.name()
	if !ok {
		return "", "", syntaxErr("a table name")
	}
	return db, table, nil
}

// group reads ( ... ) and returns the comma-separated items at its top
// level, each as the texts of its tokens.
func (p *parser) group() ([][]string, bool) {
	if !p.punct("(") {
		return nil, false
	}
	var items [][]string
	var cur []string
	depth := 1
	for !p.done() {
		t := p.toks[p.i]
		p.i++
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
			if depth == 0 {
				return append(items, cur), true
			}
		case t.kind == 'p' && t.text == "," && depth == 1:
			items, cur = append(items, cur), nil
			continue
		}
		cur = append(cur, t.text)
	}
	return nil, false
}

// execData runs CREATE TABLE, INSERT and SELECT on tables; handled is
// false for other statements.
func (s *Server) execData(c *mysql.Conn, q string) (*sqltypes.Result, bool, error) {
	first, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	switch strings.ToUpper(first) {
	case "CREATE", "INSERT", "SELECT", "SHOW":
	default:
		return nil, false, nil
	}
	toks, err := lex(q)
	if err != nil {
		return nil, false, nil
	}
	p := &parser{toks: toks}
	g := s.grantState()
	lookup := func(db, table string) (*fakeTable, error) {
		if !g.databases[db] {
			return nil, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
		}
		t := g.tables[db+"."+table]
		if t == nil {
			return nil, sqlerror.NewSQLErrorf(ErrBadTable, sqlerror.SSUnknownTable, "Unknown table '%s.%s'", db, table)
		}
		return t, nil
	}
	need := func(db, table, priv string) error {
		obj, objType, name := privObject{kind: objTables, db: db}, "TABLE", table
		if table == "" {
			obj, objType, name = privObject{kind: objDatabase, db: db}, "DATABASE", db
		}
		ok, active, inactive := s.allowed(c.User, obj, priv)
		if !ok {
			return accessDenied(strings.ReplaceAll(priv, "_", " "), objType, name, active, inactive)
		}
		return nil
	}
	switch {
	case p.kw("CREATE", "MATERIALIZED", "VIEW"):
		// An asynchronous materialized view, kept by name only: CREATE
		// MATERIALIZED VIEW db.mv [REFRESH MANUAL|ASYNC ...] AS <query>.
		db, name, err := p.tableName()
		if err != nil {
			return nil, true, err
		}
		refresh := "MANUAL"
		if p.kw("REFRESH") && p.kw("ASYNC") {
			refresh = "ASYNC"
		}
		if !g.databases[db] {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
		}
		if err := need(db, "", "CREATE_MATERIALIZED_VIEW"); err != nil {
			return nil, true, err
		}
		if g.tables[db+"."+name] != nil {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERTableExists, "42S01", "Table '%s' already exists", name)
		}
		g.tables[db+"."+name] = &fakeTable{refresh: refresh}
		return &sqltypes.Result{}, true, nil
	case p.kw("SHOW", "MATERIALIZED", "VIEWS", "FROM"):
		// ShowResultMetaFactory.visitShowMaterializedViewStatement: id,
		// database_name, name, refresh_type, is_active, ... (a subset).
		db, ok := p.name()
		if !ok || !p.done() {
			return nil, true, syntaxErr("a database name")
		}
		if !g.databases[db] {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
		}
		res := &sqltypes.Result{Fields: fields("name", "is_active", "database_name", "refresh_type")}
		for _, t := range s.tablesOf(db) {
			if mv := g.tables[db+"."+t]; mv.refresh != "" {
				res.Rows = append(res.Rows, row(t, "true", db, mv.refresh))
			}
		}
		return res, true, nil
	case p.kw("CREATE", "TABLE"):
		ifNot := p.kw("IF", "NOT", "EXISTS")
		db, table, err := p.tableName()
		if err != nil {
			return nil, true, err
		}
		cols, ok := p.group()
		if !ok || len(cols) == 0 {
			return nil, true, syntaxErr("a column list")
		}
		if !g.databases[db] {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
		}
		if err := need(db, "", "CREATE_TABLE"); err != nil {
			return nil, true, err
		}
		if !reDBName.MatchString(table) {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERWrongTableName, sqlerror.SSUnknownSQLState, "Incorrect table name '%s'", table)
		}
		if g.tables[db+"."+table] != nil {
			if ifNot {
				return &sqltypes.Result{}, true, nil
			}
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERTableExists, "42S01", "Table '%s' already exists", table)
		}
		t := &fakeTable{}
		for _, col := range cols {
			if len(col) > 0 {
				t.columns = append(t.columns, col[0])
			}
		}
		g.tables[db+"."+table] = t
		return &sqltypes.Result{}, true, nil
	case p.kw("INSERT", "INTO"):
		db, table, err := p.tableName()
		if err != nil {
			return nil, true, err
		}
		if !p.kw("VALUES") {
			return nil, true, syntaxErr("VALUES")
		}
		var rows [][]string
		for {
			vals, ok := p.group()
			if !ok {
				return nil, true, syntaxErr("a row of values")
			}
			var r []string
			for _, v := range vals {
				r = append(r, strings.Join(v, " "))
			}
			rows = append(rows, r)
			if !p.punct(",") {
				break
			}
		}
		if !p.done() {
			return nil, true, syntaxErr("end of statement")
		}
		t, err := lookup(db, table)
		if err != nil {
			return nil, true, err
		}
		if err := need(db, table, "INSERT"); err != nil {
			return nil, true, err
		}
		for _, r := range rows {
			if len(r) != len(t.columns) {
				return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERWrongValueCountOnRow, sqlerror.SSWrongValueCountOnRow, "Column count doesn't match value count")
			}
		}
		t.rows = append(t.rows, rows...)
		return &sqltypes.Result{RowsAffected: uint64(len(rows))}, true, nil
	case p.kw("SELECT"):
		count := false
		switch {
		case p.punct("*"):
		case p.kw("COUNT") && p.punct("(") && p.punct("*") && p.punct(")"):
			count = true
		default:
			return nil, false, nil // other SELECTs are answered elsewhere
		}
		if !p.kw("FROM") {
			return nil, false, nil
		}
		db, table, err := p.tableName()
		if err != nil {
			return nil, true, err
		}
		if !p.done() {
			return nil, true, syntaxErr("end of statement")
		}
		t, err := lookup(db, table)
		if err != nil {
			return nil, true, err
		}
		if err := need(db, table, "SELECT"); err != nil {
			return nil, true, err
		}
		if count {
			return &sqltypes.Result{Fields: fields("count(*)"), Rows: [][]sqltypes.Value{row(strconv.Itoa(len(t.rows)))}}, true, nil
		}
		res := &sqltypes.Result{Fields: fields(t.columns...)}
		for _, r := range t.rows {
			res.Rows = append(res.Rows, row(r...))
		}
		return res, true, nil
	}
	return nil, false, nil
}

// refusal is a statement prefix the server refuses (Refuse).
type refusal struct {
	prefix string
	err    error
}

// Refuse makes every later statement that starts with prefix fail with
// the given error number and message, as StarRocks refuses a statement
// it cannot run; an empty prefix clears all refusals.
func (s *Server) Refuse(prefix string, number int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prefix == "" {
		s.refuse = nil
		return
	}
	s.refuse = append(s.refuse, refusal{prefix: prefix, err: sqlerror.NewSQLError(sqlerror.ErrorCode(number), "HY000", message)})
}

func (s *Server) refusal(q string) error {
	for _, r := range s.refuse {
		if strings.HasPrefix(q, r.prefix) {
			return r.err
		}
	}
	return nil
}
