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

// Package accounts keeps the StarRocks accounts the module manages: root
// (the module's alone, its password set before anything else), the agent's
// own account and the team's admin account.
//
// StarRocks facts this relies on (docs.starrocks.io, 3.x/4.x):
//   - a fresh FE has only root@'%', with an empty password (fe-core
//     AuthenticationMgr constructor; there is no built-in "admin" user, unlike
//     Doris); only root may change root's password (SET_PASSWORD.md), so it
//     is set as root with SET PASSWORD = PASSWORD('...');
//   - built-in roles (built_in_roles.md, fe-core PrivilegeBuiltinConstants):
//     cluster_admin holds NODE (ALTER SYSTEM ADD/DROP/DECOMMISSION; NODE
//     cannot be granted directly, privilege_item.md), db_admin holds OPERATE
//     (ADMIN SET/SHOW FRONTEND CONFIG) and all data privileges (UPDATE
//     information_schema.be_configs), user_admin holds GRANT (users, roles);
//   - granted roles are active only if they are default roles, and
//     CREATE USER ... DEFAULT ROLE grants and defaults them in one statement
//     (CREATE_USER.md, native_authentication.md);
//   - current_role() returns the roles active in the session;
//   - statement forms as in fe-core sql/parser/StarRocks.g4: CREATE USER
//     [IF NOT EXISTS] user IDENTIFIED BY '…' [DEFAULT ROLE roleList],
//     DROP USER [IF EXISTS] user, SET PASSWORD = PASSWORD('…').
package accounts

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// AgentRoles are what the agent's statements need: NODE for membership,
// OPERATE and table UPDATE for runtime configuration. Not user_admin: users
// are managed as root, so the agent's account cannot touch anyone's.
var AgentRoles = []string{"cluster_admin", "db_admin"}

// AdminRoles are the team's: data and users, not nodes.
var AdminRoles = []string{"db_admin", "user_admin"}

// Reasons of a not-ready AccountsStatus.
const (
	// ReasonCredentialsInvalid: a Secret file is missing or its value is
	// refused before anything is sent.
	ReasonCredentialsInvalid = "CredentialsInvalid"
	// ReasonRootPasswordRefused: the agent's account does not work and
	// root accepts none of the passwords the agent has (the hooks read it
	// too, so it lives in agentconfig).
	ReasonRootPasswordRefused = agentconfig.ReasonRootPasswordRefused
	// ReasonEnsureFailed: a statement of the repair was refused.
	ReasonEnsureFailed = "EnsureFailed"
)

// Secrets are the mounted credentials.
type Secrets struct {
	AgentUser, AgentPassword string
	RootPassword             string
	AdminUser, AdminPassword string
	// SourceRootPassword is root's password of the instance this one was
	// restored from (a cluster snapshot brings the source's accounts, root
	// included, and only root may change root's password: fe-core
	// AuthorizerStmtVisitor "Can not set password for root user, except
	// root itself"); empty when there is none.
	SourceRootPassword string
}

var userName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Validate refuses what would need quoting in a statement, so a value is
// never sent that could change the statement's meaning, whatever the
// driver's escaping. The hooks generate base32 passwords, which always pass.
func (s Secrets) Validate() error {
	for _, u := range []struct{ field, v string }{{"agent username", s.AgentUser}, {"admin username", s.AdminUser}} {
		if !userName.MatchString(u.v) {
			return fmt.Errorf("%s: must match %s", u.field, userName)
		}
		if u.v == agentconfig.RootUser {
			return fmt.Errorf("%s: must not be %s, which is the module's alone", u.field, agentconfig.RootUser)
		}
	}
	if s.AgentUser == s.AdminUser {
		return errors.New("admin username: must differ from the agent's")
	}
	for _, p := range []struct{ field, v string }{
		{"agent password", s.AgentPassword}, {"root-password", s.RootPassword}, {"admin password", s.AdminPassword}} {
		if err := ValidatePassword(p.v); err != nil {
			return fmt.Errorf("%s: %w", p.field, err)
		}
	}
	if s.SourceRootPassword != "" {
		if err := ValidatePassword(s.SourceRootPassword); err != nil {
			return fmt.Errorf("the restore source's root-password: %w", err)
		}
	}
	return nil
}

// ValidatePassword accepts 8 to 128 printable ASCII characters other than
// quotes, backslash and backtick. The error never contains the password.
func ValidatePassword(p string) error {
	if len(p) < 8 || len(p) > 128 {
		return fmt.Errorf("must be 8 to 128 characters long, is %d", len(p))
	}
	for _, r := range p {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || r == ' ' || strings.ContainsRune(`'"\`+"`", r) {
			return errors.New("must be printable ASCII without spaces, quotes, backslash or backtick")
		}
	}
	return nil
}

// Changes says what Ensure did.
type Changes struct {
	RootPasswordSet bool
	// AdminPasswordSet: on an FE restored from a cluster snapshot, the
	// source's admin account got the new instance's password.
	AdminPasswordSet bool
	AgentRepaired    bool
	AdminEnsured     bool
}

// Login opens a client for user and password to the same FE; Ensure closes it.
type Login func(user, password string) (*conn.Client, error)

// Ensure makes the agent's client, which targets AgentUser, work with the
// roles it needs. When it does not, it repairs through root: root's
// password from the Secret, or on a fresh FE the empty one, or on an FE
// restored from a cluster snapshot the source's, which it replaces at
// once, giving the source's admin the new instance's password first. As
// root it makes sure the team's admin exists (created once; its password
// is the team's from then on) and recreates the agent's account last, so a
// working agent account means everything was done.
func Ensure(ctx context.Context, agent *conn.Client, login Login, s Secrets) (Changes, error) {
	var ch Changes
	// A fresh login: sessions opened before the team changed the password
	// would still work and hide that a new login is refused.
	agent.Recycle()
	first := checkAgent(ctx, agent)
	if first == nil {
		return ch, nil
	}
	if k := conn.KindOf(first); k == conn.KindConnection || k == conn.KindTLS {
		return ch, first
	}

	root, err := login(agentconfig.RootUser, s.RootPassword)
	if err != nil {
		return ch, err
	}
	defer root.Close()
	if err := root.Ping(ctx); err != nil {
		if conn.KindOf(err) != conn.KindAuth {
			return ch, err
		}
		fresh, restored, err := loginRootOnce(ctx, login, s)
		if err != nil {
			return ch, err
		}
		defer fresh.Close()
		if restored {
			if err := TakeRestoredRootOver(ctx, fresh, s); err != nil {
				return ch, err
			}
			ch.AdminPasswordSet = true
		} else if err := exec(ctx, fresh, "set root's password", "SET PASSWORD = PASSWORD(?)", s.RootPassword); err != nil {
			return ch, err
		}
		ch.RootPasswordSet = true
		if err := root.Ping(ctx); err != nil {
			return ch, fmt.Errorf("log in as root with the new password: %w", err)
		}
	}

	// IF NOT EXISTS: an existing admin keeps the password the team gave it.
	if err := exec(ctx, root, "ensure the admin account "+s.AdminUser,
		"CREATE USER IF NOT EXISTS ? IDENTIFIED BY ? DEFAULT ROLE "+strings.Join(AdminRoles, ", "),
		s.AdminUser, s.AdminPassword); err != nil {
		return ch, err
	}
	ch.AdminEnsured = true
	// Dropping and creating restores password, grants and default roles in
	// one way, whatever the team changed.
	if err := exec(ctx, root, "drop the agent account "+s.AgentUser, "DROP USER IF EXISTS ?", s.AgentUser); err != nil {
		return ch, err
	}
	if err := exec(ctx, root, "create the agent account "+s.AgentUser,
		"CREATE USER ? IDENTIFIED BY ? DEFAULT ROLE "+strings.Join(AgentRoles, ", "),
		s.AgentUser, s.AgentPassword); err != nil {
		return ch, err
	}
	ch.AgentRepaired = true
	// A session keeps the roles it activated at login (fe-core
	// qe/ConnectContext.setCurrentRoleIds, called once by
	// authentication/AuthenticationHandler): one opened while the account
	// was broken stays without roles after the repair. New sessions only;
	// the caller recycles its other pools of this account too.
	agent.Recycle()
	if err := checkAgent(ctx, agent); err != nil {
		return ch, fmt.Errorf("after repair: %w", err)
	}
	return ch, nil
}

// TakeRestoredRootOver gives root, logged in on an FE restored from a
// cluster snapshot, and the team's admin the new instance's passwords. The
// snapshot brought the source's admin with the source's password; the new
// instance's Secret is the one the team reads. IF EXISTS (fe-core
// StarRocks.g4 alterUserStatement): an admin the source had dropped is
// created by Ensure. Before root's password: a pass that stops between the
// two does both again, as root still has the source's.
func TakeRestoredRootOver(ctx context.Context, root *conn.Client, s Secrets) error {
	if err := exec(ctx, root, "give the restored admin account "+s.AdminUser+" the new instance's password",
		"ALTER USER IF EXISTS ? IDENTIFIED BY ?", s.AdminUser, s.AdminPassword); err != nil {
		return err
	}
	return exec(ctx, root, "set root's password", "SET PASSWORD = PASSWORD(?)", s.RootPassword)
}

// AcceptsAnyPassword says whether the FE lets root in with a password
// nobody has, which it does only with enable_auth_check = false (fe-core
// authentication/AuthenticationHandler.authenticateWithNative skips the
// provider's check then). login is closed before it returns.
func AcceptsAnyPassword(ctx context.Context, login Login) (bool, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return false, err
	}
	c, err := login(agentconfig.RootUser, base32.StdEncoding.EncodeToString(b))
	if err != nil {
		return false, err
	}
	defer c.Close()
	switch err := c.Ping(ctx); {
	case err == nil:
		return true, nil
	case conn.KindOf(err) == conn.KindAuth:
		return false, nil
	default:
		return false, err
	}
}

// loginRootOnce logs in as root with a password root has before the agent
// gave it its own: the empty one of a fresh FE, or on an FE restored from
// a cluster snapshot the source's (restored true).
func loginRootOnce(ctx context.Context, login Login, s Secrets) (c *conn.Client, restored bool, err error) {
	candidates := []string{""}
	if s.SourceRootPassword != "" {
		candidates = append(candidates, s.SourceRootPassword)
	}
	for _, p := range candidates {
		c, err := login(agentconfig.RootUser, p)
		if err != nil {
			return nil, false, err
		}
		err = c.Ping(ctx)
		if err == nil {
			return c, p != "", nil
		}
		_ = c.Close()
		if conn.KindOf(err) != conn.KindAuth {
			return nil, false, err
		}
	}
	why := "neither root's password from the agent's Secret nor the empty password of a fresh FE is accepted"
	if s.SourceRootPassword != "" {
		why = "neither root's password from the agent's Secret, the empty password of a fresh FE nor the restore source's root password is accepted"
	}
	return nil, false, &conn.Error{Kind: conn.KindAuth, Op: "log in as " + agentconfig.RootUser, Err: errors.New(why)}
}

// errMissingRoles marks an agent account that logs in but lacks roles.
var errMissingRoles = errors.New("missing roles")

// Check reports whether agent's sessions have the agent's roles active
// (current_role() lists a session's roles as activated at its login).
func Check(ctx context.Context, agent *conn.Client) error { return checkAgent(ctx, agent) }

func checkAgent(ctx context.Context, agent *conn.Client) error {
	var active string
	err := agent.Do(ctx, "check the agent account", func(ctx context.Context, db *sql.DB) error {
		return db.QueryRowContext(ctx, "SELECT CURRENT_ROLE()").Scan(&active)
	})
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, r := range strings.Split(active, ",") {
		// Tolerate `name`@`%` and quotes around names.
		r = strings.Trim(strings.TrimSpace(r), "'`\"")
		r, _, _ = strings.Cut(r, "@")
		have[strings.Trim(r, "'`\"")] = true
	}
	var missing []string
	for _, r := range AgentRoles {
		if !have[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return &conn.Error{Kind: conn.KindQuery, Op: "check the agent account",
			Err: fmt.Errorf("%w: %s not active", errMissingRoles, strings.Join(missing, ", "))}
	}
	return nil
}

func exec(ctx context.Context, c *conn.Client, op, stmt string, args ...any) error {
	return c.Do(ctx, op, func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, stmt, args...)
		return redact(err)
	})
}

// redact drops server messages: a server may quote the statement, and so
// the password.
func redact(err error) error {
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return &mysql.MySQLError{Number: myErr.Number, SQLState: myErr.SQLState,
			Message: "statement refused (message withheld: it may quote a password)"}
	}
	return err
}

// Status turns the result of Ensure into what the agent reports. known is
// false when err says nothing about the accounts (the FE unreachable, TLS
// broken, no certificates, a bad agent config): the accounts in StarRocks do
// not change because the agent cannot see them, so the caller keeps its last
// status rather than report them broken and make the hooks close the
// client ports.
func Status(err error) (st agentconfig.AccountsStatus, known bool) {
	var invalid *InvalidError
	switch k := conn.KindOf(err); {
	case err == nil:
		return agentconfig.AccountsStatus{Ready: true}, true
	case errors.As(err, &invalid):
		return agentconfig.AccountsStatus{Reason: ReasonCredentialsInvalid, Message: err.Error()}, true
	case k == conn.KindAuth:
		return agentconfig.AccountsStatus{Reason: ReasonRootPasswordRefused, Message: err.Error()}, true
	case k == conn.KindQuery:
		return agentconfig.AccountsStatus{Reason: ReasonEnsureFailed, Message: err.Error()}, true
	}
	return agentconfig.AccountsStatus{}, false
}

// InvalidError is a problem with the mounted credentials.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return "credentials: " + e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }
