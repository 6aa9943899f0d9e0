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

package chartrender_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// entryWithUsers is the benign entry declaring these users.
func entryWithUsers(t *testing.T, users []agentconfig.GrantsUser) map[string]any {
	t.Helper()
	e := benignEntry(t)
	grants := map[string]any{"databases": []any{}, "roles": []any{}, "users": []any{}}
	for _, u := range users {
		m := map[string]any{"name": u.Name, "secretName": u.SecretName}
		if u.PasswordSecret != nil {
			m["passwordSecret"] = map[string]any{"name": u.PasswordSecret.Name, "key": u.PasswordSecret.Key}
		}
		grants["users"] = append(grants["users"].([]any), m)
	}
	e["agentConfig"].(map[string]any)["grants"] = grants
	return e
}

// agentRole renders the entry and returns the agent's Role, or "" and the
// layer that refused the entry.
func agentRole(t *testing.T, e map[string]any) (*rbacv1.Role, string) {
	t.Helper()
	objs, rejectedBy, err := renderEntries(t, []any{e})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if rejectedBy != "" {
		return nil, rejectedBy
	}
	var roles []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Role" {
			roles = append(roles, o)
		}
	}
	if len(roles) != 1 {
		t.Fatalf("%d Roles rendered, want the agent's one", len(roles))
	}
	var r rbacv1.Role
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(roles[0].Object, &r); err != nil {
		t.Fatal(err)
	}
	return &r, ""
}

func podsRule(e map[string]any) rbacv1.PolicyRule {
	sts := e["names"].(map[string]any)["frontendStatefulSet"].(string)
	var pods []string
	for i := 0; i < int(e["frontend"].(map[string]any)["replicas"].(float64)); i++ {
		pods = append(pods, fmt.Sprintf("%s-%d", sts, i))
	}
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "patch"}, ResourceNames: pods}
}

// noRuleForEveryName fails on a rule without resourceNames: it would grant
// its verbs on every object of its kind in the namespace.
func noRuleForEveryName(t *testing.T, r *rbacv1.Role) {
	t.Helper()
	for _, rule := range r.Rules {
		if len(rule.ResourceNames) == 0 {
			t.Errorf("rule %+v has no resourceNames: it allows every %v of the namespace", rule, rule.Resources)
		}
		for _, n := range rule.ResourceNames {
			if n == "" {
				t.Errorf("rule %+v names the empty name", rule)
			}
		}
	}
}

func TestAgentRoleNamesTheUsersSecrets(t *testing.T) {
	secret := func(u string) string { return desired.UserSecretName("hostile", u) }
	team := func(name string) *agentconfig.SecretKeyRef {
		return &agentconfig.SecretKeyRef{Name: name, Key: "password"}
	}
	for _, tt := range []struct {
		name  string
		users []agentconfig.GrantsUser
		want  []rbacv1.PolicyRule
	}{
		{"no user: no rule on Secrets at all", nil, nil},
		{
			"a user with a generated password: get and patch on its Secret",
			[]agentconfig.GrantsUser{{Name: "reader", SecretName: secret("reader")}},
			[]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "patch"}, ResourceNames: []string{secret("reader")}}},
		},
		{
			"users with the team's passwords: get on the team's Secrets, once each",
			[]agentconfig.GrantsUser{
				{Name: "reader", SecretName: secret("reader")},
				{Name: "writer", SecretName: secret("writer"), PasswordSecret: team("app-passwords")},
				{Name: "loader", SecretName: secret("loader"), PasswordSecret: team("app-passwords")},
			},
			[]rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "patch"}, ResourceNames: []string{secret("reader"), secret("writer"), secret("loader")}},
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"app-passwords"}},
			},
		},
		{
			"empty names are never listed",
			[]agentconfig.GrantsUser{{Name: "reader", SecretName: ""}, {Name: "writer", SecretName: secret("writer"), PasswordSecret: team("")}},
			[]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "patch"}, ResourceNames: []string{secret("writer")}}},
		},
		{
			"only empty names: no rule on Secrets at all",
			[]agentconfig.GrantsUser{{Name: "reader", SecretName: "", PasswordSecret: team("")}},
			nil,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := entryWithUsers(t, tt.users)
			r, rejectedBy := agentRole(t, e)
			if r == nil {
				if tt.want == nil || hasEmptyName(tt.users) {
					return // refused by the values schema: nothing is rendered
				}
				t.Fatalf("refused: %s", rejectedBy)
			}
			noRuleForEveryName(t, r)
			want := append([]rbacv1.PolicyRule{podsRule(e)}, tt.want...)
			if !reflect.DeepEqual(r.Rules, want) {
				t.Errorf("agent Role rules\n%+v\nwant\n%+v", r.Rules, want)
			}
		})
	}
}

// A name the values schema lets through reaches the Role as that one
// name: quoted, it can neither add a name, a rule or an object, nor
// become an empty list.
func TestAgentRoleSecretNamesAreQuoted(t *testing.T) {
	for i, p := range append(hostilePayloads, "", "*") {
		for _, field := range []string{"secretName", "passwordSecret"} {
			t.Run(fmt.Sprintf("%s/%d", field, i), func(t *testing.T) {
				u := agentconfig.GrantsUser{Name: "reader", SecretName: desired.UserSecretName("hostile", "reader")}
				if field == "secretName" {
					u.SecretName = p
				} else {
					u.PasswordSecret = &agentconfig.SecretKeyRef{Name: p, Key: "password"}
				}
				e := entryWithUsers(t, []agentconfig.GrantsUser{u})
				r, _ := agentRole(t, e)
				if r == nil {
					return // refused by openapi/values.yaml
				}
				noRuleForEveryName(t, r)
				var names []string
				for _, rule := range r.Rules[1:] {
					if !reflect.DeepEqual(rule.Resources, []string{"secrets"}) || !reflect.DeepEqual(rule.APIGroups, []string{""}) {
						t.Errorf("%q made a rule on %v %v", p, rule.APIGroups, rule.Resources)
					}
					names = append(names, rule.ResourceNames...)
				}
				want := []string{u.SecretName}
				switch {
				case field == "secretName" && p == "":
					want = nil
				case field == "passwordSecret" && p != "":
					want = append(want, p)
				}
				if !reflect.DeepEqual(names, want) {
					t.Errorf("%q gave the Secret names %q, want %q", p, names, want)
				}
			})
		}
	}
}

// hasEmptyName: the values schema refuses an empty Secret name, so such an
// entry renders nothing; the template must still never list one.
func hasEmptyName(users []agentconfig.GrantsUser) bool {
	for _, u := range users {
		if u.SecretName == "" || (u.PasswordSecret != nil && u.PasswordSecret.Name == "") {
			return true
		}
	}
	return false
}

// The agent reads the team's S3 keys and the endpoint's CA for backups and
// a restore: get on exactly those Secrets, by name, once each.
func TestAgentRoleNamesTheBackupSecrets(t *testing.T) {
	e := entryWithUsers(t, nil)
	repo := func(keys, ca string) map[string]any {
		r := map[string]any{
			"name": "d8ms_0b1c2d3e4f5061728394a5b6c7d8e9f0", "location": "s3://team-backups/team-a/olap-0b1c2d3e",
			"endpoint": "https://s3.example.com", "enableSSL": true,
			"credentials": map[string]any{"secretName": keys, "accessKeyIdKey": "accessKeyID", "secretAccessKeyKey": "secretAccessKey"},
		}
		if ca != "" {
			r["ca"] = map[string]any{"name": ca, "key": "ca.crt"}
		}
		var rr agentconfig.Repository
		data, _ := json.Marshal(r)
		_ = json.Unmarshal(data, &rr)
		r["token"] = agentconfig.RepositoryToken(rr)
		return r
	}
	ac := e["agentConfig"].(map[string]any)
	ac["backup"] = map[string]any{"repository": repo("s3-keys", "s3-ca")}
	src := repo("s3-keys", "")
	src["readOnly"] = true
	var rr agentconfig.Repository
	data, _ := json.Marshal(src)
	_ = json.Unmarshal(data, &rr)
	src["token"] = agentconfig.RepositoryToken(rr)
	ac["restore"] = map[string]any{"token": "0123456789abcdef", "repository": src, "replicationNum": 1,
		"databases": []any{map[string]any{"name": "sales", "label": "d8ms_1111222233334444_sales", "backupTimestamp": "2026-12-04-03-00-05"}}}
	r, rejectedBy := agentRole(t, e)
	if r == nil {
		t.Fatalf("refused: %s", rejectedBy)
	}
	noRuleForEveryName(t, r)
	want := []rbacv1.PolicyRule{podsRule(e), {APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"s3-keys", "s3-ca"}}}
	if !reflect.DeepEqual(r.Rules, want) {
		t.Errorf("agent Role rules\n%+v\nwant\n%+v", r.Rules, want)
	}
	// Without spec.backup and spec.restore the agent reads no such Secret.
	plain := entryWithUsers(t, nil)
	r, _ = agentRole(t, plain)
	if !reflect.DeepEqual(r.Rules, []rbacv1.PolicyRule{podsRule(plain)}) {
		t.Errorf("agent Role of an instance without backups: %+v", r.Rules)
	}
}
