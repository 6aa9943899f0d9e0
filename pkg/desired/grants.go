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
	"cmp"
	"slices"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// GrantsFor is agentConfig.grants of a valid instance: spec.databases,
// spec.roles and spec.users in declaration order, privileges in the form
// SHOW GRANTS prints them (CREATE_TABLE), each user with its connection
// Secret. Never nil: empty lists tell the agent to drop the users and
// roles the module made (nil would tell it to touch nothing).
func GrantsFor(sr *v1alpha1.Starrocks) *agentconfig.Grants {
	spec := &sr.Spec
	g := &agentconfig.Grants{
		Databases: make([]string, 0, len(spec.Databases)),
		Roles:     make([]agentconfig.GrantsRole, 0, len(spec.Roles)),
		Users:     make([]agentconfig.GrantsUser, 0, len(spec.Users)),
	}
	for _, d := range spec.Databases {
		g.Databases = append(g.Databases, d.Name)
	}
	for _, r := range spec.Roles {
		role := agentconfig.GrantsRole{Name: r.Name, Roles: slices.Clone(r.Roles)}
		for _, p := range r.Privileges {
			privs := make([]string, len(p.Privileges))
			for i, x := range p.Privileges {
				privs[i] = classrules.PrivilegeName(x)
			}
			role.Privileges = append(role.Privileges, agentconfig.GrantsPrivilege{Database: p.Database, Object: string(p.Object), Privileges: privs})
		}
		g.Roles = append(g.Roles, role)
	}
	for _, u := range spec.Users {
		user := agentconfig.GrantsUser{Name: u.Name, Roles: slices.Clone(u.Roles), SecretName: UserSecretName(sr.Name, u.Name)}
		if ref := u.PasswordSecretRef; ref != nil {
			user.PasswordSecret = &agentconfig.SecretKeyRef{Name: ref.Name, Key: cmp.Or(ref.Key, classrules.DefaultPasswordKey)}
		}
		g.Users = append(g.Users, user)
	}
	return g
}
