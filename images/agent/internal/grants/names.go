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

// Package grants converges StarRocks to a declared model of databases, roles
// and users: a pure planner (Plan: model + observed -> statements), a parser
// of SHOW GRANTS output and a small executor (Observe, Apply). The FE
// leader's agent runs it as root (images/agent/internal/agent/users.go).
//
// StarRocks facts this relies on (cited where they decide behaviour):
//   - names: fe-core common/FeNameFormat.java allows roles
//     ^[a-zA-Z]\w{0,63}$ (COMMON_NAME_REGEX), databases ^[a-zA-Z]\w{0,255}$
//     and users ^\w{1,64}...; this package accepts the stricter common part
//     ^[a-z][a-z0-9_]{0,63}$ (lower case: role names may be compared
//     case-insensitively, CaseSensibility.ROLE), so every name is valid for
//     all three and means one thing. Names are still quoted with backticks.
//   - passwords are never sent as text: CREATE USER / ALTER USER ...
//     IDENTIFIED BY PASSWORD '*<hex>' takes the mysql_native_password hash
//     (docs sql-reference/sql-statements/account-management/CREATE_USER.md
//     example 3, ALTER_USER.md example 2), so the cleartext is in no
//     statement, server log or audit log, and the literal is hex only; the
//     audit log masks CREATE/ALTER USER anyway (fe-core sql/common/
//     AuditEncryptionChecker.visitBaseCreateAlterUserStmt returns true).
//     Whether a password changed is seen by logging in with it: StarRocks
//     shows no hash (SHOW_AUTHENTICATION.md: Password is Yes/No).
//   - SHOW USERS (column User, 'name'@'%'), SHOW ROLES (column Name),
//     SHOW DATABASES (column Database), SHOW GRANTS FOR ROLE / FOR user
//     (columns UserIdentity (RoleName in the docs), Catalog, Grants; Grants is a GRANT
//     statement text): docs account-management/SHOW_USERS.md, SHOW_ROLES.md,
//     SHOW_GRANTS.md.
package grants

import (
	"crypto/sha1" //nolint:gosec // mysql_native_password is SHA1 by definition
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// MarkerRole is granted to every role and user the module creates: it holds
// no privilege and is how Observe tells the module's objects from root, the
// agent's and the team admin's accounts, built-in roles and anything the
// team made by hand, which are never touched.
const MarkerRole = "d8ms_managed"

// BuiltinRoles are StarRocks' own (docs administration/user_privs/
// authorization/built_in_roles.md); a model may inherit db_admin,
// user_admin and public, never define one.
var BuiltinRoles = []string{"root", "cluster_admin", "db_admin", "user_admin", "public", "security_admin"}

// Inheritable are the built-in roles a declared role or user may get.
var Inheritable = []string{"db_admin", "user_admin", "public"}

// ReservedUsers are never declared nor touched, whatever the caller adds
// (the agent's and the admin's account names come from their Secrets).
var ReservedUsers = []string{"root", "d8_agent", "admin"}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// SystemDatabases are StarRocks' own databases (fe-core catalog/
// Database.java isSystemDatabase and isStatisticsDatabase): never declared,
// so never granted on, whatever the caller sends.
var SystemDatabases = []string{"information_schema", "sys", "_statistics_"}

// grammarWords are refused as names: SHOW GRANTS prints names unquoted, and
// a name "on" or "to" could not be told from the statement's own words.
var grammarWords = []string{"on", "to"}

// ValidateName checks a database, role or user name. The error names the
// rule, never echoes more than a short prefix of hostile input.
func ValidateName(kind, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%s name %q: must match %s (a lower-case letter, then up to 63 lower-case letters, digits or _)", kind, short(name), namePattern)
	}
	if contains(grammarWords, name) {
		return fmt.Errorf("%s name %q: must not be one of %s (words of the GRANT statement)", kind, name, strings.Join(grammarWords, ", "))
	}
	return nil
}

func short(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// QuoteIdent quotes a name with backticks, a backtick doubled, as the
// StarRocks lexer reads BACKQUOTED_IDENTIFIER (fe-core sql/parser
// StarRocksLex.g4: '`' ( ~'`' | '“' )* '`'). Names are validated before,
// so this is the second wall, not the only one.
func QuoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// userIdent is a user identity. Without a host it is name@'%', the only
// host the module uses (CREATE_USER.md: "If host is not specified, % is
// used"; SET_DEFAULT_ROLE.md and GRANT.md examples name users so); this
// keeps the statement free of the @'host' form that lexers disagree on.
func userIdent(name string) string { return QuoteIdent(name) }

// NativeHash is MySQL's PASSWORD(): '*' and the upper-case hex of
// SHA1(SHA1(password)), what mysql_native_password stores.
func NativeHash(password string) string {
	h1 := sha1.Sum([]byte(password)) //nolint:gosec
	h2 := sha1.Sum(h1[:])            //nolint:gosec
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// ValidatePassword: any bytes are safe (only the hash is sent); the length
// is bounded so a Secret cannot make statements or logins huge. The error
// never contains the password.
func ValidatePassword(p string) error {
	if len(p) < 8 || len(p) > 1024 {
		return fmt.Errorf("must be 8 to 1024 bytes long, is %d", len(p))
	}
	return nil
}
