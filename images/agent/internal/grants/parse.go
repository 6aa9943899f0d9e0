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
	"strings"
)

// token is a word, a quoted name (backticks, single or double quotes, with
// the quote doubled or backslash-escaped inside) or one punctuation rune.
type token struct {
	text   string
	quoted bool
}

// tokenize splits a Grants text; an unterminated quote is an error.
func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`' || c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\\' && c != '`' && j+1 < len(s) {
					j++
					b.WriteByte(s[j])
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated %c at offset %d", c, i)
			}
			out = append(out, token{text: b.String(), quoted: true})
			i = j + 1
		case isWord(c):
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			out = append(out, token{text: s[i:j]})
			i = j
		default:
			out = append(out, token{text: string(c)})
			i++
		}
	}
	return out, nil
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func (t token) kw(w string) bool { return !t.quoted && strings.EqualFold(t.text, w) }

// ParseGrant reads one Grants cell of SHOW GRANTS (SHOW_GRANTS.md):
//
//	GRANT role_g, public TO `user_g`@`%`                   -> roles
//	GRANT role_p, role_test TO ROLE role_g                 -> roles
//	GRANT ALTER, DROP, CREATE_TABLE ON DATABASE db1 TO ... -> grant
//	GRANT SELECT, INSERT ON TABLE db.* TO ...               -> grant (all tables)
//	GRANT SELECT ON ALL TABLES IN DATABASE db TO ...       -> grant (all tables)
//	GRANT SELECT ON ALL VIEWS IN DATABASE db TO ...        -> grant (all views)
//	GRANT SELECT ON ALL MATERIALIZED VIEWS IN DATABASE db  -> grant (all MVs)
//
// Current StarRocks prints privileges with spaces, objects as ALL <plural>
// IN DATABASE db and the role quoted (fe-core sql/analyzer/AstToSQLBuilder
// visitGrantRevokePrivilegeStatement, authorization/TablePEntryObject
// toStringImpl); the underscore and TABLE db.* forms of the docs' examples
// are read too.
//
// with an optional WITH GRANT OPTION at the end. Anything else (other
// objects, a single table, unknown privileges) is returned as ok=false, for the caller to report: never a panic.
func ParseGrant(text string) (roles []string, g Grant, isGrant bool, ok bool) {
	toks, err := tokenize(strings.TrimSpace(text))
	if err != nil || len(toks) < 4 || !toks[0].kw("GRANT") {
		return nil, Grant{}, false, false
	}
	if n := len(toks); toks[n-1].text == ";" && !toks[n-1].quoted {
		toks = toks[:n-1]
	}
	grantOption := false
	if n := len(toks); n > 3 && toks[n-3].kw("WITH") && toks[n-2].kw("GRANT") && toks[n-1].kw("OPTION") {
		grantOption, toks = true, toks[:n-3]
	}
	on, to := -1, -1
	for i, t := range toks {
		if on < 0 && t.kw("ON") {
			on = i
		}
		if t.kw("TO") {
			to = i
		}
	}
	if to < 0 || (on >= 0 && on > to) {
		return nil, Grant{}, false, false
	}
	if on < 0 {
		if grantOption {
			return nil, Grant{}, false, false
		}
		// Role grant: a comma-separated list of names.
		list, good := nameList(toks[1:to])
		if !good {
			return nil, Grant{}, false, false
		}
		return list, Grant{}, false, true
	}
	privs, good := privilegeList(toks[1:on])
	if !good {
		return nil, Grant{}, false, false
	}
	obj := toks[on+1 : to]
	switch {
	case len(obj) == 2 && obj[0].kw("DATABASE") && isName(obj[1]):
		g = Grant{Scope: ScopeDatabase, Database: obj[1].text}
	case len(obj) == 4 && obj[0].kw("TABLE") && isName(obj[1]) && obj[2].text == "." && obj[3].text == "*" && !obj[3].quoted:
		g = Grant{Scope: ScopeAllTables, Database: obj[1].text}
	case len(obj) == 5 && obj[0].kw("ALL") && obj[1].kw("TABLES") && obj[2].kw("IN") && obj[3].kw("DATABASE") && isName(obj[4]):
		g = Grant{Scope: ScopeAllTables, Database: obj[4].text}
	case len(obj) == 5 && obj[0].kw("ALL") && obj[1].kw("VIEWS") && obj[2].kw("IN") && obj[3].kw("DATABASE") && isName(obj[4]):
		g = Grant{Scope: ScopeAllViews, Database: obj[4].text}
	case len(obj) == 6 && obj[0].kw("ALL") && obj[1].kw("MATERIALIZED") && obj[2].kw("VIEWS") && obj[3].kw("IN") && obj[4].kw("DATABASE") && isName(obj[5]):
		g = Grant{Scope: ScopeAllMaterializedViews, Database: obj[5].text}
	default:
		return nil, Grant{}, false, false
	}
	for _, p := range privs {
		if !contains(Privileges[g.Scope], p) {
			return nil, Grant{}, false, false
		}
	}
	g.Privileges, g.GrantOption = privs, grantOption
	return nil, g, true, true
}

func isName(t token) bool { return t.quoted || (t.text != "" && isWord(t.text[0])) }

func nameList(toks []token) ([]string, bool) {
	var out []string
	for i, t := range toks {
		if i%2 == 1 {
			if t.text != "," || t.quoted {
				return nil, false
			}
			continue
		}
		if !isName(t) {
			return nil, false
		}
		out = append(out, t.text)
	}
	return out, len(out) > 0 && len(toks)%2 == 1
}

// privilegeList reads "ALTER, CREATE_TABLE, CREATE TABLE" (words up to a comma).
func privilegeList(toks []token) ([]string, bool) {
	var out, cur []string
	flush := func() bool {
		if len(cur) == 0 {
			return false
		}
		out = append(out, NormalizePrivilege(strings.Join(cur, " ")))
		cur = nil
		return true
	}
	for _, t := range toks {
		switch {
		case t.text == "," && !t.quoted:
			if !flush() {
				return nil, false
			}
		case !t.quoted && isName(t):
			cur = append(cur, t.text)
		default:
			return nil, false
		}
	}
	return out, flush()
}

// GrantRow is one row of SHOW GRANTS: the Grants cell and the Catalog
// column ("" for NULL).
type GrantRow struct {
	Grants, Catalog string
}

// DefaultCatalog is StarRocks' internal catalog (fe-core
// InternalCatalog.DEFAULT_INTERNAL_CATALOG_NAME), the only one declared.
const DefaultCatalog = "default_catalog"

// principalFromRows builds a Principal from the rows of SHOW GRANTS. The
// Grants cell never names the catalog: fe-core authorization/
// ShowGrantsExecutor prints a database or table privilege with the
// database's name alone (DbPEntryObject.toString) and puts the catalog in
// the Catalog column (getCatalogNameFromPEntry: default_catalog, an
// external catalog's name, or NULL for all catalogs and for role grants).
// So a privilege counts as declared state only in default_catalog; one in
// another catalog, even on a database of a declared name, is Other and
// never touched. Role grants (no ON) have no catalog.
func principalFromRows(rows []GrantRow) Principal {
	var p Principal
	for _, r := range rows {
		roles, g, isGrant, ok := ParseGrant(r.Grants)
		switch {
		case !ok, isGrant && r.Catalog != DefaultCatalog:
			p.Other = append(p.Other, r.Grants)
		case isGrant:
			p.Grants = append(p.Grants, g)
		default:
			p.Roles = append(p.Roles, roles...)
		}
	}
	return p
}
