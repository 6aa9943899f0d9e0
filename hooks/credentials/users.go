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

package credentials

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// usersFilter reads the declared users of a memory entry
// (agentConfig.grants.users, pkg/agentconfig.GrantsUser): names only, and
// whether the password comes from the team's Secret. No grants (an entry
// from before users existed) declares none; anything of the wrong type
// makes the list unreadable, and then no user Secret is deleted.
const usersFilter = `((.agentConfig | if type == "object" then (.grants | if . == null then [] elif type == "object" then` +
	` (.users | if . == null then [] elif type == "array" then . else null end) else null end) else null end) as $u |` +
	` {usersReadable: (($u | type) == "array"), users: [($u // [] | if type == "array" then . else [] end)[] |` +
	` if type == "object" then {name: (.name | str), secretName: (.secretName | str), passwordSecret: ((.passwordSecret | type) == "object")}` +
	` else {name: "", secretName: "", passwordSecret: false} end]})`

// DeclaredUser is a user of the memory's agentConfig.grants.
type DeclaredUser struct {
	Name       string `json:"name"`
	SecretName string `json:"secretName"`
	// PasswordSecret: the team gives the password (passwordSecretRef).
	PasswordSecret bool `json:"passwordSecret"`
}

// Delete is a user Secret to delete.
type Delete struct {
	Namespace, Name string
	// UID, when known, is the only object of that name to delete.
	UID string
	// Why it goes, for the log.
	Why string
	// Instance is the instance the Secret belongs to.
	Instance Instance
}

// Why a Secret is deleted.
const (
	whyUserGone     = "its user is no longer declared"
	whyInstanceGone = "held for the FE's metadata volume, and its instance is gone before it had one"
)

// userWants are the user Secrets of an instance. The memory is the
// module's own, but a user whose name does not match the CRD's pattern or
// whose secretName is not desired.UserSecretName gets no Secret; deletable
// is false then (and when the list is unreadable): a Secret is deleted only
// when the memory says for sure that its user is gone.
func userWants(in Instance, plan *Plan) (wants []Want, deletable bool) {
	deletable = in.UsersReadable
	for i, u := range in.Users {
		if want := desired.UserSecretName(in.Name, u.Name); !shared.UserName.MatchString(u.Name) || u.SecretName != want {
			plan.Refused = append(plan.Refused, fmt.Sprintf("instance %s/%s: agentConfig.grants.users[%d] (name %.64q, secretName %.253q) must have a name matching %s and secretName %s",
				in.Namespace, in.Name, i, u.Name, u.SecretName, shared.UserName, want))
			deletable = false
			continue
		}
		wants = append(wants, Want{Instance: in, Name: u.SecretName, State: shared.StateUserCredentials, User: u.Name, PasswordSecret: u.PasswordSecret})
	}
	return wants, deletable
}

// staleUserSecrets are the user Secrets of the instance whose user is no
// longer declared. Only a Secret that is the module's counts: labelled as
// a user Secret of this instance, in its namespace, and owned by nothing
// (held for the volume), by its Starrocks (an earlier version's owner) or
// by its FE metadata volume (volume, zero while there is none). A
// look-alike elsewhere or with another owner is left alone.
func staleUserSecrets(in Instance, wants []Want, secrets []SecretSnap, volume metav1.OwnerReference) []Delete {
	declared := make(map[string]bool, len(wants))
	for _, w := range wants {
		declared[w.Name] = true
	}
	starrocks := shared.OwnerReference(in.Name, in.UID)
	var out []Delete
	for _, s := range secrets {
		if s.Namespace != in.Namespace || s.State != shared.StateUserCredentials || s.Instance != in.Name || declared[s.Name] {
			continue
		}
		if len(s.Owners) != 0 && !ownedOnlyBy(s, starrocks) && !(volume.UID != "" && ownedOnlyBy(s, volume)) {
			continue
		}
		out = append(out, Delete{Namespace: s.Namespace, Name: s.Name, UID: s.UID, Instance: in, Why: whyUserGone})
	}
	return out
}
