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

package instances

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/plural"
)

// ConditionUsersReady says whether the declared databases, roles and users
// (agentConfig.grants of the configuration in effect) are applied, as the
// agent of the FE leader reports them (agentconfig.Status.Users).
const ConditionUsersReady = "UsersReady"

// UsersReady reasons (besides the agent's own, WaitingForAgent,
// AgentStatusUnreadable and those of an instance not deployed).
const (
	ReasonUsersApplied    = "UsersApplied"
	ReasonNothingDeclared = "NothingDeclared"
	// defaultUsersNotReadyWhy: the agent reports not ready without a reason.
	defaultUsersNotReadyWhy = "UsersNotReady"
)

// Bounds of what the users report brings into status: anyone with edit
// rights in the namespace can write the agent's annotation, and a status
// the apiserver refuses fails the whole run.
const (
	maxReportedUsers      = 64
	maxReportedDatabases  = 128
	maxUsersMessageLength = 1024
)

// usersReason is the form of a reason the agent reports for users: a
// CamelCase word of at most 64 characters.
var usersReason = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,63}$`)

// databaseName is StarRocks' own rule for a database name
// (agentconfig.DatabaseNamePattern, fe-core FeNameFormat.DB_NAME_REGEX):
// status lists databases made by hand too, so not only the CRD's pattern.
// Any other name in a report is not a database and is left out.
var databaseName = regexp.MustCompile(agentconfig.DatabaseNamePattern)

// usersFilter reads the users part of the agent status, on its own (names
// bounded as in the rest of the report: podFilter; the users list cut where
// usersReady stops reading it, the databases at twice as many as it keeps,
// since it skips names StarRocks refuses and repeats): a
// wrong type there makes only the users report unreadable, never the
// pod's TLS, accounts or membership.
const usersFilter = ` users: (try (.users | want("object"; "users") | if . == null then null else {` +
	` ready: (.ready | want("boolean"; "users.ready") // false), applied: (.applied | name("users.applied") // ""), reason: (.reason | want("string"; "users.reason") // "" | cutmsg), message: (.message | want("string"; "users.message") // "" | cutmsg),` +
	` users: [(.users | want("array"; "users.users") // [])[:64][] | want("object"; "users.users[]") |` +
	` {name: (.name | name("users.users[].name") // ""), ready: (.ready | want("boolean"; "users.users[].ready") // false),` +
	` reason: (.reason | want("string"; "users.users[].reason") // "" | cutmsg), message: (.message | want("string"; "users.users[].message") // "" | cutmsg)}],` +
	` databases: [(.databases | want("array"; "users.databases") // [])[:256][] | want("object"; "users.databases[]") |` +
	` {name: (.name | name("users.databases[].name") // ""), managed: (.managed | want("boolean"; "users.databases[].managed") // false),` +
	` exists: (.exists | want("boolean"; "users.databases[].exists") // false)}]} end)` +
	` catch {unreadable: (if type == "string" then . else "the users report is not readable" end)})`

// UsersSnap is the users part of an FE pod's agent status, or why it could
// not be read.
type UsersSnap struct {
	agentconfig.UsersStatus
	Unreadable string `json:"unreadable,omitempty"`
}

// checkUsers makes the users report unreadable when a reason could not be
// a reason here (a CamelCase word of at most 64 characters).
func (u *UsersSnap) checkUsers() {
	if u == nil || u.Unreadable != "" {
		return
	}
	if u.Reason != "" && !usersReason.MatchString(u.Reason) {
		*u = UsersSnap{Unreadable: "users.reason is not a CamelCase word of at most 64 characters"}
		return
	}
	for i, s := range u.Users {
		if s.Reason != "" && !usersReason.MatchString(s.Reason) {
			*u = UsersSnap{Unreadable: fmt.Sprintf("users.users[%d].reason is not a CamelCase word of at most 64 characters", i)}
			return
		}
	}
}

// leaderUsers is the users report of the FE leader: only a pod whose own
// membership says it leads counts, and only when exactly one pod says so
// (a former leader's report lingers until its agent republishes).
func leaderUsers(o Observed) (pod string, rep *UsersSnap) {
	if len(o.LeaderClaims) != 1 {
		return "", nil
	}
	pod = o.LeaderClaims[0]
	return pod, o.Users[pod]
}

// claimsLeadership reports whether the pod's agent says its own FE leads
// (the leader is the FE's FQDN, <pod>.<headless Service>...).
func claimsLeadership(pod, leader string) bool {
	return leader != "" && strings.HasPrefix(strings.ToLower(leader), strings.ToLower(pod)+".")
}

// usersReady is the UsersReady condition and status.users and
// status.databases of an instance with an entry. A user's Secret name
// comes from the entry, never from the report; the report counts only for
// the users the entry declares. Without a readable report the last
// reported state of each user and database is kept.
func usersReady(e *desired.Instance, o Observed, prev v1alpha1.StarrocksStatus) (Verdict, []v1alpha1.UserStatus, []v1alpha1.DatabaseStatus) {
	var declared agentconfig.Grants
	if e.AgentConfig.Grants != nil {
		declared = *e.AgentConfig.Grants
	}
	nothing := len(declared.Users) == 0 && len(declared.Roles) == 0 && len(declared.Databases) == 0
	pod, rep := leaderUsers(o)
	if rep == nil {
		// An unreadable annotation leaves no membership to claim with.
		for _, p := range sortedKeys(o.Users) {
			if u := o.Users[p]; u != nil && u.Unreadable != "" && len(o.LeaderClaims) == 0 {
				pod, rep = p, u
				break
			}
		}
	}
	readable := rep != nil && rep.Unreadable == ""

	reported := map[string]agentconfig.UserState{}
	if readable {
		for _, u := range rep.Users[:min(len(rep.Users), maxReportedUsers)] {
			if _, dup := reported[u.Name]; !dup {
				reported[u.Name] = u
			}
		}
	}
	last := map[string]v1alpha1.UserStatus{}
	for _, u := range prev.Users {
		last[u.Name] = u
	}
	users := make([]v1alpha1.UserStatus, 0, len(declared.Users))
	var pendingUsers []string
	for _, d := range declared.Users {
		s := v1alpha1.UserStatus{Name: d.Name, SecretName: d.SecretName}
		r, ok := reported[d.Name]
		switch {
		case ok:
			s.Ready, s.Reason, s.Message = r.Ready, r.Reason, truncateBytes(r.Message, maxUsersMessageLength)
		case !readable && last[d.Name].Name != "":
			l := last[d.Name]
			s.Ready, s.Reason, s.Message = l.Ready, l.Reason, l.Message
		default:
			s.Reason, s.Message = ReasonWaitingForAgent, "The agent of the FE leader has not reported this user yet."
		}
		if !s.Ready || !ok {
			pendingUsers = append(pendingUsers, d.Name)
		}
		users = append(users, s)
	}

	databases := prev.Databases
	var pendingDatabases, dropping []string
	if readable {
		databases = reportedDatabases(rep.Databases)
		exists := map[string]bool{}
		for _, d := range databases {
			exists[d.Name] = d.Exists
		}
		for _, d := range declared.Databases {
			if !exists[d] {
				pendingDatabases = append(pendingDatabases, d)
			}
		}
		isDeclared := map[string]bool{}
		for _, d := range declared.Users {
			isDeclared[d.Name] = true
		}
		for _, u := range rep.Users[:min(len(rep.Users), maxReportedUsers)] {
			if !isDeclared[u.Name] && shared.UserName.MatchString(u.Name) {
				dropping = append(dropping, u.Name)
			}
		}
	} else {
		pendingDatabases = declared.Databases
	}
	pending := pendingList(pendingUsers, pendingDatabases, dropping)

	var v Verdict
	switch {
	case rep != nil && !readable:
		v = Verdict{false, ReasonAgentStatusUnreadable, fmt.Sprintf("The agent status of pod %s is not readable: %s.%s", pod, rep.Unreadable, pending)}
	case rep == nil && nothing:
		v = Verdict{true, ReasonNothingDeclared, nothingDeclared}
	case rep == nil:
		v = Verdict{false, ReasonWaitingForAgent, "The agent of the FE leader has not reported the declared users and databases yet." + pending}
	case !rep.Ready:
		reason := rep.Reason
		if reason == "" {
			reason = defaultUsersNotReadyWhy
		}
		what := strings.TrimSuffix(truncateBytes(rep.Message, maxUsersMessageLength), ".")
		if what == "" {
			what = "the declaration is not applied yet"
		}
		v = Verdict{false, reason, fmt.Sprintf("The agent of the FE leader (pod %s) reports: %s.%s", pod, what, pending)}
	case pending != "" || (rep.Applied != "" && rep.Applied != agentconfig.GrantsToken(e.AgentConfig.Grants)):
		// Ready for the declaration it last applied, not this one yet (an
		// agent from before the token is judged by the names alone).
		v = Verdict{false, ReasonWaitingForAgent, "The agent of the FE leader has not applied the current declaration yet." + pending}
	case nothing:
		v = Verdict{true, ReasonNothingDeclared, nothingDeclared}
	default:
		v = Verdict{true, ReasonUsersApplied, fmt.Sprintf("The agent of the FE leader (pod %s) reports %s, %s and %s as declared.",
			pod, plural.Count(len(declared.Databases), "database"), plural.Count(len(declared.Roles), "role"), plural.Count(len(declared.Users), "user"))}
	}
	if len(users) == 0 {
		users = nil
	}
	return v, users, databases
}

const nothingDeclared = "spec.databases, spec.roles and spec.users are empty: the module manages no database, role or user of this instance."

// reportedDatabases are the report's databases within bounds: names
// StarRocks accepts, each once, at most maxReportedDatabases.
func reportedDatabases(in []agentconfig.DatabaseState) []v1alpha1.DatabaseStatus {
	var out []v1alpha1.DatabaseStatus
	seen := map[string]bool{}
	for _, d := range in {
		if len(out) == maxReportedDatabases {
			break
		}
		if seen[d.Name] || !databaseName.MatchString(d.Name) {
			continue
		}
		seen[d.Name] = true
		out = append(out, v1alpha1.DatabaseStatus{Name: d.Name, Managed: d.Managed, Exists: d.Exists})
	}
	return out
}

// pendingList says what is not applied yet, for the condition's message.
func pendingList(users, databases, dropping []string) string {
	var parts []string
	if len(users) > 0 {
		parts = append(parts, "users not ready: "+strings.Join(users, ", "))
	}
	if len(databases) > 0 {
		parts = append(parts, "databases not created yet: "+strings.Join(databases, ", "))
	}
	if len(dropping) > 0 {
		parts = append(parts, "users removed from the spec and not dropped yet: "+strings.Join(dropping, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " Pending: " + strings.Join(parts, "; ") + "."
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
