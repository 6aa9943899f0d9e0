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
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"vitess.io/vitess/go/vt/sqlparser"
)

// hostile are names and passwords a tenant might write.
var hostile = []string{
	"a'b", "a\"b", "a`b", "a``b", "`", "x`; DROP DATABASE sales; -- ", "a;b", "a b", "a\\", "a\\'",
	"a\x00b", "-- x", "/* x */", "a\nb", "\u00e9t\u00e9", "\u540d\u524d", "\u202eevil", "Abc",
	strings.Repeat("a", 1000), strings.Repeat("`'\";", 250),
}

// tokens is what a MySQL-dialect lexer (vitess, test-only) reads: the
// StarRocks lexer agrees on backquoted identifiers and strings.
func tokens(t *testing.T, sql string) (ids []string, strs []string, n int) {
	tk := sqlparser.NewTestParser().NewStringTokenizer(sql)
	for {
		typ, val := tk.Scan()
		switch typ {
		case 0:
			return ids, strs, n
		case sqlparser.LEX_ERROR, ';':
			t.Fatalf("%q: lexer error or second statement at %q", sql, val)
		case sqlparser.ID:
			ids = append(ids, val)
		case sqlparser.STRING:
			strs = append(strs, val)
		}
		n++
	}
}

func TestQuoteIdentIsOneIdentifier(t *testing.T) {
	for _, h := range hostile {
		if strings.ContainsRune(h, 0) {
			continue // the lexer stops at NUL; ValidateName refuses it anyway
		}
		ids, _, n := tokens(t, "DROP DATABASE "+QuoteIdent(h))
		require.Equal(t, []string{h}, ids, "%q", h)
		require.Equal(t, 3, n)
	}
}

func FuzzQuoteIdent(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if h == "" || strings.ContainsRune(h, 0) {
			return
		}
		ids, _, n := tokens(t, "DROP DATABASE "+QuoteIdent(h))
		if n != 3 || len(ids) != 1 || ids[0] != h {
			t.Fatalf("%q read as %q (%d tokens)", h, ids, n)
		}
	})
}

func TestHostileNamesRefused(t *testing.T) {
	for _, h := range hostile {
		for field, edit := range map[string]func(*Model){
			"databases[0]":                  func(m *Model) { m.Databases[0] = h },
			"roles[0]":                      func(m *Model) { m.Roles[0].Name = h },
			"roles[1].inherits":             func(m *Model) { m.Roles[1].Inherits = []string{h} },
			"roles[0].grants[0].privileges": func(m *Model) { m.Roles[0].Grants[0].Privileges = []string{h} },
			"users[0]":                      func(m *Model) { m.Users[0].Name = h },
			"users[0].roles":                func(m *Model) { m.Users[0].Roles = []string{h} },
		} {
			m := model()
			edit(&m)
			_, err := Plan(m, Observed{})
			require.Error(t, err, "%s=%q", field, h)
			require.Contains(t, err.Error(), field)
			require.Less(t, len(err.Error()), 2000, "the error does not echo 1000 characters")
		}
	}
}

var passwordStmt = regexp.MustCompile(`^(CREATE|ALTER) USER ` + "`app`" + ` IDENTIFIED BY PASSWORD '\*[0-9A-F]{40}'( DEFAULT ROLE ` + "`d8ms_managed`, `writer`" + `)?$`)

func TestHostilePasswordsNeverInStatements(t *testing.T) {
	for _, h := range append(hostile, "12345678") {
		if len(h) < 8 {
			h += "--------"
		}
		changed := converged()
		changed.PasswordOK["app"] = false
		for _, o := range []Observed{{}, changed} {
			m := model()
			m.Users[0].Password = h
			stmts, err := Plan(m, o)
			require.NoError(t, err, "%q", h)
			var secret int
			for _, s := range stmts {
				require.NotContains(t, s.String(), NativeHash(h))
				if !s.Secret {
					continue
				}
				secret++
				require.Regexp(t, passwordStmt, s.SQL)
				_, strs, _ := tokens(t, s.SQL)
				require.Equal(t, []string{NativeHash(h)}, strs)
			}
			require.Equal(t, 1, secret)
		}
	}
	_, err := Plan(Model{Users: []User{{Name: "app", Password: strings.Repeat("x", 1025)}}}, Observed{})
	require.EqualError(t, err, "users[0].password: must be 8 to 1024 bytes long, is 1025")
}

func TestNativeHash(t *testing.T) {
	// CREATE_USER.md example 3 and MySQL's PASSWORD('123456').
	require.Equal(t, "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9", NativeHash("123456"))
}
