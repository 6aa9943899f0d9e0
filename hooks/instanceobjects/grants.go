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

package instanceobjects

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// errNoMemory: the entry names its grants by token and the module's memory
// of that instance does not hold them (yet). Not an error of the run: the
// memory's write triggers another one.
var errNoMemory = errors.New("no memory with the grants of this token yet")

// memory is what the hook reads of a last-valid ConfigMap.
type memory struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Entry     string `json:"entry"`
}

// withGrants returns the entry to render: as it is when it carries
// agentConfig.grants (the values of module versions that keep the
// declarations in the release), else with agentConfig.grantsToken replaced
// by the grants of the instance's memory (ConfigMap
// d8-managed-starrocks/last-valid-<uid>) that have that token. The memory
// counts only under the Starrocks' own UID, namespace and name (as the
// instances hook trusts it), and its grants pass the class rules of
// declarations again before they reach a template: the memory is the
// module's, but what it holds came from a tenant.
func withGrants(instance map[string]any, memories map[string]memory) (map[string]any, error) {
	ac, _ := instance["agentConfig"].(map[string]any)
	token, _ := ac["grantsToken"].(string)
	if ac == nil || token == "" {
		return instance, nil
	}
	if _, ok := ac["grants"]; ok {
		return nil, fmt.Errorf("agentConfig has both grants and grantsToken")
	}
	uid, _ := instance["uid"].(string)
	namespace, _ := instance["namespace"].(string)
	name, _ := instance["name"].(string)
	m, ok := memories[uid]
	if !ok || m.Namespace != shared.ModuleNamespace {
		return nil, errNoMemory
	}
	var e desired.Instance
	if err := json.Unmarshal([]byte(m.Entry), &e); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s%s: not readable: %w", shared.ModuleNamespace, shared.LastValidPrefix, uid, err)
	}
	if e.UID != uid || e.Namespace != namespace || e.Name != name {
		return nil, fmt.Errorf("ConfigMap %s/%s%s names %s/%s (uid %s), not this instance", shared.ModuleNamespace, shared.LastValidPrefix, uid, e.Namespace, e.Name, e.UID)
	}
	g := e.AgentConfig.Grants
	if g == nil || agentconfig.GrantsToken(g) != token {
		return nil, errNoMemory
	}
	if err := checkGrants(name, g); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s%s: agentConfig.grants: %w", shared.ModuleNamespace, shared.LastValidPrefix, uid, err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	var grants any
	if err := json.Unmarshal(data, &grants); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(instance))
	for k, v := range instance {
		out[k] = v
	}
	acOut := make(map[string]any, len(ac))
	for k, v := range ac {
		if k != "grantsToken" {
			acOut[k] = v
		}
	}
	acOut["grants"] = grants
	out["agentConfig"] = acOut
	return out, nil
}

// checkGrants holds grants to the rules of spec.databases, spec.roles and
// spec.users (classrules.CheckAccounts, with the CRD's caps: the class's
// own limits were checked when the memory was written) and to the name the
// module gives each user's Secret (desired.UserSecretName): the one place
// of those rules stays the class rules, this only turns the grants back
// into the declaration they were made from.
func checkGrants(instance string, g *agentconfig.Grants) error {
	sr := &v1alpha1.Starrocks{}
	for _, d := range g.Databases {
		sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: d})
	}
	for _, r := range g.Roles {
		role := v1alpha1.Role{Name: r.Name, Roles: r.Roles}
		for _, p := range r.Privileges {
			privs := make([]string, len(p.Privileges))
			for i, x := range p.Privileges {
				// SHOW GRANTS' form back to GRANT's (classrules.PrivilegeName).
				privs[i] = strings.ReplaceAll(x, "_", " ")
			}
			role.Privileges = append(role.Privileges, v1alpha1.Privilege{Database: p.Database, Object: v1alpha1.PrivilegeObject(p.Object), Privileges: privs})
		}
		sr.Spec.Roles = append(sr.Spec.Roles, role)
	}
	var errs []string
	for i, u := range g.Users {
		user := v1alpha1.User{Name: u.Name, Roles: u.Roles}
		if u.PasswordSecret != nil {
			user.PasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: u.PasswordSecret.Name, Key: u.PasswordSecret.Key}
		}
		sr.Spec.Users = append(sr.Spec.Users, user)
		if want := desired.UserSecretName(instance, u.Name); u.SecretName != want {
			errs = append(errs, fmt.Sprintf("users[%d].secretName: %q is not the Secret the module names for user %q (%q)", i, u.SecretName, u.Name, want))
		}
	}
	for _, v := range classrules.CheckAccounts(sr, &v1alpha1.StarrocksClass{}) {
		errs = append(errs, v.Field+": "+v.Message)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
