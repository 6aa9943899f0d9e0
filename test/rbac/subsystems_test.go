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

package rbac_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// module.yaml names the subsystems the module's RBACv2 manage roles join
// (rbac.deckhouse.io/aggregate-to-<subsystem>-as), and only those: Deckhouse
// derives a module's manage roles from its subsystems (deckhouse/rbacgen).
func TestModuleSubsystemsAreTheManageRolesSubsystems(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "module.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Subsystems []string `json:"subsystems"`
	}
	if err := yaml.Unmarshal(data, &def); err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(def.Subsystems)
	slices.Sort(got)
	// The manage roles before 1.78, the system capabilities from 1.78
	// (templates/_rbacv2_compat.tpl): both join the subsystem.
	for _, m := range []roleModel{model177, model178} {
		var joined []string
		for _, r := range renderModelRoles(t, m) {
			kind := r.Labels["rbac.deckhouse.io/kind"]
			if kind != "manage" && (kind != "capability" || r.Labels["rbac.deckhouse.io/scope"] != "system") {
				continue
			}
			for k := range r.Labels {
				if s, ok := strings.CutPrefix(k, "rbac.deckhouse.io/aggregate-to-"); ok {
					joined = append(joined, strings.TrimSuffix(s, "-as"))
				}
			}
		}
		slices.Sort(joined)
		joined = slices.Compact(joined)
		if len(joined) == 0 || !slices.Equal(got, joined) {
			t.Errorf("%s: module.yaml subsystems %v, manage roles join %v", m.name, def.Subsystems, joined)
		}
	}
}
