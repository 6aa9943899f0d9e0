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
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Querier is what the package needs from a pool (like membership's).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// PasswordCheck reports whether user logs in with password (a fresh login
// to the same FE); false for a refused login, an error for anything else.
type PasswordCheck func(ctx context.Context, user, password string) (bool, error)

// Observe reads databases, roles, users and their grants. Built-in roles
// and reserved or protected users are not read: they are never touched.
func Observe(ctx context.Context, q Querier, m Model, check PasswordCheck) (Observed, error) {
	o := Observed{Roles: map[string]Principal{}, Users: map[string]Principal{}, PasswordOK: map[string]bool{}}
	var err error
	if o.Databases, err = column(ctx, q, "SHOW DATABASES", "Database"); err != nil {
		return o, err
	}
	roles, err := column(ctx, q, "SHOW ROLES", "Name")
	if err != nil {
		return o, err
	}
	for _, r := range roles {
		if contains(BuiltinRoles, r) || ValidateName("role", r) != nil {
			continue // a name this package could not have made
		}
		cells, err := showGrants(ctx, q, "SHOW GRANTS FOR ROLE "+QuoteIdent(r))
		if err != nil {
			return o, err
		}
		o.Roles[r] = principalFromRows(cells)
	}
	users, err := column(ctx, q, "SHOW USERS", "User")
	if err != nil {
		return o, err
	}
	for _, ident := range users {
		name, host, ok := splitIdentity(ident)
		if !ok || host != "%" || contains(ReservedUsers, name) || contains(m.Protected, name) || ValidateName("user", name) != nil {
			continue
		}
		cells, err := showGrants(ctx, q, "SHOW GRANTS FOR "+userIdent(name))
		if err != nil {
			return o, err
		}
		o.Users[name] = principalFromRows(cells)
	}
	for _, u := range m.Users {
		if _, exists := o.Users[u.Name]; !exists || check == nil {
			continue
		}
		ok, err := check(ctx, u.Name, u.Password)
		if err != nil {
			return o, fmt.Errorf("check the password of %s: %w", u.Name, err)
		}
		o.PasswordOK[u.Name] = ok
	}
	return o, nil
}

// splitIdentity reads 'name'@'host' (SHOW USERS), tolerating backticks.
func splitIdentity(s string) (name, host string, ok bool) {
	toks, err := tokenize(s)
	if err != nil || len(toks) != 3 || toks[1].text != "@" || toks[1].quoted {
		return "", "", false
	}
	return toks[0].text, toks[2].text, true
}

// column reads one column by name from every row.
func column(ctx context.Context, q Querier, query, name string) ([]string, error) {
	rows, err := columns(ctx, q, query, name)
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r[0].String)
	}
	return out, err
}

// showGrants reads the Grants and Catalog columns of SHOW GRANTS.
func showGrants(ctx context.Context, q Querier, query string) ([]GrantRow, error) {
	rows, err := columns(ctx, q, query, "Grants", "Catalog")
	out := make([]GrantRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, GrantRow{Grants: r[0].String, Catalog: r[1].String})
	}
	return out, err
}

// columns reads the named columns, by name, from every row.
func columns(ctx context.Context, q Querier, query string, names ...string) ([][]sql.NullString, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(names))
	for j, name := range names {
		idx[j] = -1
		for i, c := range cols {
			if strings.EqualFold(c, name) {
				idx[j] = i
			}
		}
		if idx[j] < 0 {
			return nil, fmt.Errorf("%s: no column %s in %v", query, name, cols)
		}
	}
	var out [][]sql.NullString
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := make([]sql.NullString, len(names))
		for j, i := range idx {
			r[j] = vals[i]
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Apply runs the statements in order and stops at the first refusal. The
// error names the statement in its logged form; for a Secret statement the
// server's message is withheld (it may quote the hash).
func Apply(ctx context.Context, q Querier, stmts []Statement) (done int, err error) {
	for _, s := range stmts {
		if _, err := q.ExecContext(ctx, s.SQL); err != nil {
			var myErr *mysql.MySQLError
			if s.Secret && errors.As(err, &myErr) {
				err = &mysql.MySQLError{Number: myErr.Number, SQLState: myErr.SQLState, Message: "statement refused (message withheld)"}
			}
			return done, fmt.Errorf("%s: %w", s, err)
		}
		done++
	}
	return done, nil
}
