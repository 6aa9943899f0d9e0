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

package desired

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

func withAccounts(sr *v1alpha1.Starrocks) *v1alpha1.Starrocks {
	sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}, {Name: "archive"}}
	sr.Spec.Roles = []v1alpha1.Role{
		{Name: "writer", Roles: []string{"reader"}, Privileges: []v1alpha1.Privilege{
			{Database: "sales", Object: v1alpha1.OnDatabase, Privileges: []string{"CREATE TABLE", "CREATE MATERIALIZED VIEW"}},
			{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"INSERT", "DELETE"}},
		}},
		{Name: "reader", Privileges: []v1alpha1.Privilege{{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT"}}}},
	}
	sr.Spec.Users = []v1alpha1.User{
		{Name: "etl_job", Roles: []string{"writer", "public"}},
		{Name: "bi", Roles: []string{"reader"}, PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "bi-password"}},
		{Name: "ops", PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "ops", Key: "secret.txt"}},
	}
	return sr
}

func TestGrantsFollowTheSpec(t *testing.T) {
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{withAccounts(instance("ns", "db"))}, Classes: []*v1alpha1.StarrocksClass{class()}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	want := &agentconfig.Grants{
		Databases: []string{"sales", "archive"},
		Roles: []agentconfig.GrantsRole{
			{Name: "writer", Roles: []string{"reader"}, Privileges: []agentconfig.GrantsPrivilege{
				{Database: "sales", Object: "Database", Privileges: []string{"CREATE_TABLE", "CREATE_MATERIALIZED_VIEW"}},
				{Database: "sales", Object: "AllTables", Privileges: []string{"INSERT", "DELETE"}},
			}},
			{Name: "reader", Privileges: []agentconfig.GrantsPrivilege{{Database: "sales", Object: "AllTables", Privileges: []string{"SELECT"}}}},
		},
		Users: []agentconfig.GrantsUser{
			{Name: "etl_job", Roles: []string{"writer", "public"}, SecretName: "d8ms-sr-db-user.etl-job"},
			{Name: "bi", Roles: []string{"reader"}, SecretName: "d8ms-sr-db-user.bi", PasswordSecret: &agentconfig.SecretKeyRef{Name: "bi-password", Key: "password"}},
			{Name: "ops", SecretName: "d8ms-sr-db-user.ops", PasswordSecret: &agentconfig.SecretKeyRef{Name: "ops", Key: "secret.txt"}},
		},
	}
	assert.Equal(t, want, out.Instances[0].AgentConfig.Grants)

	requireEntriesValid(t, out.Instances)
}

// Nothing declared is empty lists, never nil: nil tells the agent to touch
// nothing, empty lists to drop what the module made before.
func TestGrantsOfAnInstanceWithoutAccountsAreEmptyLists(t *testing.T) {
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{instance("ns", "db")}, Classes: []*v1alpha1.StarrocksClass{class()}})
	require.Len(t, out.Instances, 1)
	data, err := json.Marshal(out.Instances[0].AgentConfig)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"grants":{"databases":[],"roles":[],"users":[]}`)
}

// An invalid change keeps the last valid entry, grants included: a user
// named root never reaches the agent, the users declared before stay.
func TestGrantsOfAnInvalidChangeStayTheLastValid(t *testing.T) {
	sr := withAccounts(instance("ns", "db"))
	first := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}})
	require.Len(t, first.Instances, 1)
	last := first.Instances[0]

	bad := withAccounts(instance("ns", "db"))
	bad.Generation++
	bad.Spec.Users = append(bad.Spec.Users, v1alpha1.User{Name: "root"})
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{bad}, Classes: []*v1alpha1.StarrocksClass{class()},
		LastValid: map[string]*Instance{"ns/db": &last}})
	require.Len(t, out.Instances, 1)
	require.NotEmpty(t, out.Results[0].Violations)
	assert.Contains(t, out.Results[0].Violations.Error(), "spec.users[3].name: user root is reserved")
	assert.Equal(t, last.AgentConfig.Grants, out.Instances[0].AgentConfig.Grants)
}

// The largest spec the CRD and the class rules accept passes the instance
// schema: its maxItems and patterns are not tighter than the spec's.
func TestTheLargestGrantsPassTheInstanceSchema(t *testing.T) {
	// The class rules refuse this many bytes (classrules.MaxDeclarationBytes);
	// the schema must still not be the tighter of the two.
	sr := largestAccounts(instance("s"+strings.Repeat("b", 62), "n"+strings.Repeat("a", 39)))
	plain := instance("s"+strings.Repeat("b", 62), "n"+strings.Repeat("a", 39))
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{plain}, Classes: []*v1alpha1.StarrocksClass{class()}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	out.Instances[0].AgentConfig.Grants = GrantsFor(sr)
	requireEntriesValid(t, out.Instances)
}

// largestAccounts declares 64 databases, 64 roles of 64 privilege entries
// and 64 users of 16 roles, every name 64 characters long.
func largestAccounts(sr *v1alpha1.Starrocks) *v1alpha1.Starrocks {
	name := func(prefix string, i int) string {
		s := fmt.Sprintf("%s%02d_", prefix, i)
		return s + strings.Repeat("x", 64-len(s))
	}
	for i := range 64 {
		sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: name("d", i)})
	}
	for i := range 64 {
		r := v1alpha1.Role{Name: name("r", i), Roles: []string{"public"}}
		for j := range 32 {
			r.Privileges = append(r.Privileges,
				v1alpha1.Privilege{Database: name("d", 2*j), Object: v1alpha1.OnAllTables, Privileges: []string{"ALTER", "DROP", "SELECT", "INSERT", "EXPORT", "UPDATE", "DELETE"}},
				v1alpha1.Privilege{Database: name("d", 2*j+1), Object: v1alpha1.OnDatabase, Privileges: []string{"ALTER", "DROP", "CREATE TABLE", "CREATE VIEW", "CREATE FUNCTION", "CREATE MATERIALIZED VIEW"}})
		}
		sr.Spec.Roles = append(sr.Spec.Roles, r)
	}
	for i := range 64 {
		u := v1alpha1.User{Name: name("u", i), PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: strings.Repeat("s", 253), Key: strings.Repeat("k", 253)}}
		for j := range 16 {
			u.Roles = append(u.Roles, name("r", (i+j)%64))
		}
		sr.Spec.Users = append(sr.Spec.Users, u)
	}
	return sr
}

// TestUserSecretNamesNeverNameAnotherInstancesSecret: the agent of an
// instance may patch its users' Secrets, so no user name may turn into a
// Secret of another instance of the namespace (its credentials, agent
// credentials, TLS, keystore or a user Secret of its own).
func TestUserSecretNamesNeverNameAnotherInstancesSecret(t *testing.T) {
	others := func(instance string) []string {
		n := NamesFor(instance)
		return []string{n.CredentialsSecret, n.AgentCredentialsSecret, TLSSecretName(instance), KeystoreSecretName(instance),
			UserSecretName(instance, "app")}
	}
	for _, tc := range []struct{ instance, user, other string }{
		{"foo", "bar_credentials", "foo-user-bar"},
		{"foo", "bar_agent_credentials", "foo-user-bar"},
		{"foo", "bar_tls", "foo-user-bar"},
		{"foo", "bar_keystore", "foo-user-bar"},
		{"foo", "app", "foo-user-app"},
		{"a", "b_user_app", "a-user-b"},
	} {
		mine := UserSecretName(tc.instance, tc.user)
		for _, theirs := range others(tc.other) {
			assert.NotEqual(t, theirs, mine, "user %s of instance %s names a Secret of instance %s", tc.user, tc.instance, tc.other)
		}
	}
}
