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

package agent

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/accounts"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/grants"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/usersecret"
)

// Reasons of agentconfig.UsersStatus and UserState.
const (
	// ReasonPasswordSecretMissing: the Secret with the user's password, or
	// its key, does not exist (yet): the user is pending.
	ReasonPasswordSecretMissing = "PasswordSecretMissing"
	// ReasonPasswordInvalid: the password breaks grants.ValidatePassword.
	ReasonPasswordInvalid = "PasswordInvalid"
	// ReasonSecretUnreadable: the Kubernetes API refused to read the
	// Secret (e.g. 403 while the agent's Role catches up).
	ReasonSecretUnreadable = "SecretUnreadable"
	// ReasonKubernetesAccessDisabled: the agent runs without access to
	// Secrets (--manage-users=false): no user is applied.
	ReasonKubernetesAccessDisabled = "KubernetesAccessDisabled"
	// ReasonUserSecretNotUpdated: the user exists in StarRocks but its
	// connection Secret could not be brought up to date.
	ReasonUserSecretNotUpdated = "UserSecretNotUpdated"
	// ReasonStatementRefused: StarRocks refused a statement (the message
	// has its error number); later statements were not run.
	ReasonStatementRefused = "StatementRefused"
	// ReasonApplyFailed: StarRocks could not be read or reached.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonGrantsInvalid: the declared model is refused before any
	// statement (the webhook normally stops this earlier).
	ReasonGrantsInvalid = "GrantsInvalid"
	// ReasonUsersPending: some users are not ready, see each one.
	ReasonUsersPending = "UsersPending"
)

// DefaultPasswordCheckEvery is how often a password the agent applied or
// verified is verified again by logging in (a change made by hand).
const DefaultPasswordCheckEvery = 10 * time.Minute

// systemDatabases are StarRocks' own, left out of the status
// (information_schema and _statistics_ on every FE, sys on recent ones).
var systemDatabases = []string{"information_schema", "_statistics_", "sys"}

// verifiedPassword is the SHA-256 of the password last applied or verified
// for a user (memory only), so the agent logs in as a user only when the
// password changed, after a restart or every PasswordCheckEvery.
type verifiedPassword struct {
	hash [32]byte
	at   time.Time
}

// usersRun is what the users reconciliation keeps between passes.
type usersRun struct {
	root     *conn.Client // root through the client Service
	verified map[string]verifiedPassword
}

func (a *Agent) setUsersStatus(st *agentconfig.UsersStatus, passwords []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.users = st
	a.userPasswords = passwords
}

func (a *Agent) usersStatus() *agentconfig.UsersStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.users
}

func (a *Agent) closeUsers() {
	if a.usersRun.root != nil {
		_ = a.usersRun.root.Close()
	}
}

// userInput is one declared user with what the agent read for it.
type userInput struct {
	decl     agentconfig.GrantsUser
	password string
	// current is the user Secret's data; nil when not read.
	current map[string][]byte
	state   agentconfig.UserState
	pending bool
}

// readUser reads the user's password: the user Secret's password key, or
// with passwordSecret the team's Secret key. A problem makes only this user
// pending; messages name the Secret and key, never the value.
func (a *Agent) readUser(ctx context.Context, u agentconfig.GrantsUser) userInput {
	in := userInput{decl: u, state: agentconfig.UserState{Name: u.Name}}
	pend := func(reason, format string, args ...any) userInput {
		in.pending, in.state.Reason, in.state.Message = true, reason, fmt.Sprintf(format, args...)
		return in
	}
	store := a.opts.Secrets
	if store == nil {
		return pend(ReasonKubernetesAccessDisabled, "the agent has no access to Secrets (--manage-users=false): the user is not applied")
	}
	src, key := u.SecretName, agentconfig.UserSecretPasswordKey
	if u.PasswordSecret != nil {
		src, key = u.PasswordSecret.Name, u.PasswordSecret.Key
	}
	data, err := store.Get(ctx, src)
	switch {
	case errors.Is(err, ErrSecretNotFound):
		return pend(ReasonPasswordSecretMissing, "Secret %s does not exist", src)
	case err != nil:
		return pend(ReasonSecretUnreadable, "read the password from Secret %s: %v", src, err)
	}
	pw, ok := data[key]
	if !ok {
		return pend(ReasonPasswordSecretMissing, "Secret %s has no key %s", src, key)
	}
	if err := grants.ValidatePassword(string(pw)); err != nil {
		return pend(ReasonPasswordInvalid, "Secret %s key %s: the password %v", src, key, err)
	}
	in.password = string(pw)
	if src == u.SecretName {
		in.current = data
	} else if cur, err := store.Get(ctx, u.SecretName); err == nil {
		in.current = cur
	}
	return in
}

// modelOf turns the contract's Grants into the planner's model.
func modelOf(g *agentconfig.Grants, s accounts.Secrets) grants.Model {
	m := grants.Model{Databases: g.Databases, Protected: []string{s.AgentUser, s.AdminUser}}
	for _, r := range g.Roles {
		role := grants.Role{Name: r.Name, Inherits: r.Roles}
		for _, p := range r.Privileges {
			// An object without a scope stays empty: Validate refuses it
			// by name instead of granting on the wrong object.
			scope := grants.ScopeOf[p.Object]
			role.Grants = append(role.Grants, grants.Grant{Scope: scope, Database: p.Database, Privileges: p.Privileges})
		}
		m.Roles = append(m.Roles, role)
	}
	return m
}

// applyUsers converges the declared databases, roles and users (FE
// leader's agent only) and publishes how far it got in Status.Users. It
// works as root: the agent's own account deliberately has no user_admin.
// The returned error is StarRocks' (unreachable, a statement refused);
// problems of single users are in their status only.
func (a *Agent) applyUsers(ctx context.Context, cfg *agentconfig.Config, s accounts.Secrets) error {
	if cfg.Grants == nil {
		a.setUsersStatus(nil, nil)
		return nil
	}
	m := modelOf(cfg.Grants, s)
	inputs := make([]userInput, len(cfg.Grants.Users))
	var passwords []string
	for i, u := range cfg.Grants.Users {
		inputs[i] = a.readUser(ctx, u)
		if inputs[i].pending {
			m.Pending = append(m.Pending, u.Name)
			continue
		}
		passwords = append(passwords, inputs[i].password)
		m.Users = append(m.Users, grants.User{Name: u.Name, Roles: u.Roles, Password: inputs[i].password})
	}
	// Every password read goes to the scrub list before anything can fail.
	a.setUsersStatus(a.usersStatus(), passwords)
	st := &agentconfig.UsersStatus{Applied: agentconfig.GrantsToken(cfg.Grants)}
	for _, in := range inputs {
		st.Users = append(st.Users, in.state)
	}
	if err := m.Validate(); err != nil {
		st.Reason, st.Message = ReasonGrantsInvalid, a.scrub(err.Error())
		a.setUsersStatus(st, passwords)
		return nil
	}

	if a.usersRun.root == nil {
		a.usersRun.root = conn.New(a.copts)
		a.usersRun.verified = map[string]verifiedPassword{}
	}
	a.mu.Lock()
	mat := a.material
	a.mu.Unlock()
	if err := a.usersRun.root.SetTarget(conn.Target{Addr: net.JoinHostPort(cfg.QueryHost, strconv.Itoa(cfg.QueryPort)),
		ServerName: cfg.QueryHost, Roots: mat.Roots, RootsID: mat.ID, User: agentconfig.RootUser, Password: s.RootPassword}); err != nil {
		return err
	}
	loggedIn := map[string]bool{}
	check := func(ctx context.Context, user, password string) (bool, error) {
		if v, ok := a.usersRun.verified[user]; ok && v.hash == sha256.Sum256([]byte(password)) && time.Since(v.at) < a.opts.PasswordCheckEvery {
			return true, nil
		}
		loggedIn[user] = true
		return a.loginAs(ctx, cfg, user, password)
	}
	var observed grants.Observed
	var stmts []grants.Statement
	done := 0
	var applyErr error
	observeErr := a.usersRun.root.Do(ctx, "read databases, roles and users", func(ctx context.Context, db *sql.DB) error {
		var err error
		observed, err = grants.Observe(ctx, db, m, check)
		return err
	})
	if observeErr != nil {
		st.Reason, st.Message = ReasonApplyFailed, a.scrub(observeErr.Error())
		if prev := a.usersStatus(); prev != nil {
			st.Databases = prev.Databases
		}
		a.setUsersStatus(st, passwords)
		return observeErr
	}
	stmts, err := grants.Plan(m, observed)
	if err != nil { // Validate passed above; kept for safety
		st.Reason, st.Message = ReasonGrantsInvalid, a.scrub(err.Error())
		a.setUsersStatus(st, passwords)
		return nil
	}
	if len(stmts) > 0 {
		applyErr = a.usersRun.root.Do(ctx, "apply databases, roles and users", func(ctx context.Context, db *sql.DB) error {
			var err error
			done, err = grants.Apply(ctx, db, stmts)
			return err
		})
		for _, stmt := range stmts[:done] {
			a.log.Info("grants applied", "statement", stmt.String())
		}
	}
	a.rememberPasswords(m, stmts, done, observed, loggedIn)

	// The users' connection Secrets, once their password is in StarRocks.
	ca, caErr := os.ReadFile(a.opts.CAFile)
	for i := range inputs {
		in := &inputs[i]
		if in.pending {
			continue
		}
		st.Users[i] = a.syncUserSecret(ctx, cfg, in, ca, caErr)
	}
	if applyErr != nil {
		reason := ReasonApplyFailed
		var myErr *mysql.MySQLError
		if errors.As(applyErr, &myErr) {
			reason = ReasonStatementRefused
		}
		st.Reason, st.Message = reason, a.scrub(applyErr.Error())
		for i := range st.Users {
			if st.Users[i].Ready || st.Users[i].Message == msgNotApplied {
				st.Users[i] = agentconfig.UserState{Name: st.Users[i].Name, Reason: reason,
					Message: "not every statement was applied: see the users status message"}
			}
		}
	}
	st.Databases = databaseStates(m.Databases, observed.Databases, applyErr == nil)
	var notReady []string
	for _, u := range st.Users {
		if !u.Ready {
			notReady = append(notReady, u.Name+" ("+u.Reason+")")
		}
	}
	switch {
	case applyErr != nil:
	case len(notReady) > 0:
		st.Reason = ReasonUsersPending
		st.Message = fmt.Sprintf("%d of %d users not ready: %s", len(notReady), len(st.Users), strings.Join(notReady, ", "))
	default:
		st.Ready = true
	}
	a.setUsersStatus(st, passwords)
	return applyErr
}

// loginAs checks a password by logging in to this pod's FE, the leader,
// where the last ALTER USER ran. A refused login is false, not an error.
// At most one failed login per changed password and FE, so a check cannot
// lock a user out: StarRocks 2.x locked a user for
// password_lock_interval_seconds after max_failed_login_attempts
// consecutive failures (fe-core mysql/privilege/UserPrivTable.
// allowLoginAttempt, StarRocks/starrocks#5694); no such lock was found in
// the 3.x/4.x authentication code, where StarRocks/starrocks#51948 (open)
// proposes one; a failed check is followed by ALTER USER at once, and a
// successful login clears the count.
func (a *Agent) loginAs(ctx context.Context, cfg *agentconfig.Config, user, password string) (bool, error) {
	a.mu.Lock()
	mat := a.material
	a.mu.Unlock()
	c := conn.New(a.copts)
	defer c.Close()
	if err := c.SetTarget(conn.Target{Addr: net.JoinHostPort(a.opts.SelfHost, strconv.Itoa(cfg.QueryPort)), ServerName: cfg.QueryHost,
		Roots: mat.Roots, RootsID: mat.ID, User: user, Password: password}); err != nil {
		return false, err
	}
	err := c.Ping(ctx)
	if conn.KindOf(err) == conn.KindAuth {
		return false, nil
	}
	return err == nil, err
}

// rememberPasswords records the passwords known to be in StarRocks after a
// pass: set by a statement that ran, or verified by a login, or still
// within the check interval. Anything else is forgotten, so the next pass
// logs in again.
func (a *Agent) rememberPasswords(m grants.Model, stmts []grants.Statement, done int, o grants.Observed, loggedIn map[string]bool) {
	now := time.Now()
	set, unset := map[string]bool{}, map[string]bool{}
	for i, s := range stmts {
		if s.User == "" {
			continue
		}
		if i < done {
			set[s.User] = true
		} else {
			unset[s.User] = true
		}
	}
	keep := map[string]bool{}
	for _, u := range m.Users {
		keep[u.Name] = true
		hash := sha256.Sum256([]byte(u.Password))
		switch {
		case unset[u.Name]:
			delete(a.usersRun.verified, u.Name)
		case set[u.Name] || (loggedIn[u.Name] && o.PasswordOK[u.Name]):
			a.usersRun.verified[u.Name] = verifiedPassword{hash: hash, at: now}
		}
	}
	for name := range a.usersRun.verified {
		if !keep[name] {
			delete(a.usersRun.verified, name)
		}
	}
}

const msgNotApplied = "the user's password is not applied yet"

// syncUserSecret brings the user's connection Secret up to date: one patch,
// only when a key differs. The password goes in only once StarRocks has it.
func (a *Agent) syncUserSecret(ctx context.Context, cfg *agentconfig.Config, in *userInput, ca []byte, caErr error) agentconfig.UserState {
	st := agentconfig.UserState{Name: in.decl.Name}
	if _, ok := a.usersRun.verified[in.decl.Name]; !ok {
		st.Reason, st.Message = ReasonApplyFailed, msgNotApplied
		return st
	}
	if caErr != nil {
		st.Reason, st.Message = ReasonUserSecretNotUpdated, fmt.Sprintf("read the CA file: %v", caErr)
		return st
	}
	want, dsnOK := userSecretData(cfg, in.decl.Name, in.password, ca)
	set := map[string][]byte{}
	for k, v := range want {
		if cur, ok := in.current[k]; !ok || string(cur) != string(v) {
			set[k] = v
		}
	}
	var remove []string
	if _, has := in.current[agentconfig.UserSecretDSNKey]; has && !dsnOK {
		remove = append(remove, agentconfig.UserSecretDSNKey)
	}
	if len(set)+len(remove) > 0 {
		err := a.opts.Secrets.Patch(ctx, in.decl.SecretName, set, remove)
		switch {
		case errors.Is(err, ErrSecretNotFound):
			st.Reason, st.Message = ReasonUserSecretNotUpdated, fmt.Sprintf("Secret %s does not exist yet (the module creates it)", in.decl.SecretName)
			return st
		case err != nil:
			st.Reason, st.Message = ReasonUserSecretNotUpdated, a.scrub(err.Error())
			return st
		}
		keys := sortedKeys(set)
		a.log.Info("user Secret updated", "secret", in.decl.SecretName, "keys", keys, "removed", remove)
	}
	st.Ready = true
	if !dsnOK {
		st.Message = fmt.Sprintf("the password cannot be written into a go-sql-driver DSN unchanged: Secret %s has no %s key, use its username and password keys", in.decl.SecretName, agentconfig.UserSecretDSNKey)
	}
	return st
}

// userSecretData is the content of a user's connection Secret (usersecret.Data).
func userSecretData(cfg *agentconfig.Config, user, password string, ca []byte) (map[string][]byte, bool) {
	return usersecret.Data(cfg.QueryHost, cfg.QueryPort, user, password, ca)
}

// databaseStates lists the declared databases, then the others StarRocks
// has (system ones left out), which the module does not manage.
func databaseStates(declared, have []string, applied bool) []agentconfig.DatabaseState {
	exists := map[string]bool{}
	for _, d := range have {
		exists[d] = true
	}
	var out []agentconfig.DatabaseState
	seen := map[string]bool{}
	for _, d := range declared {
		seen[d] = true
		out = append(out, agentconfig.DatabaseState{Name: d, Managed: true, Exists: exists[d] || applied})
	}
	others := append([]string(nil), have...)
	sort.Strings(others)
	for _, d := range others {
		if seen[d] || contains(systemDatabases, d) {
			continue
		}
		seen[d] = true
		out = append(out, agentconfig.DatabaseState{Name: d, Exists: true})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
