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
	"slices"
	"testing"
)

// The chart renders the role model of the cluster's Deckhouse version
// (templates/_rbacv2_compat.tpl) and only that one, for every form
// global.deckhouseVersion takes: a release tag, a release candidate, what a
// values file gives (a float), and "dev"/"unknown" or nothing, which must
// neither fail the render nor hand out the legacy model.
func TestRolesFollowTheDeckhouseVersion(t *testing.T) {
	for _, c := range []struct {
		version any
		want    roleModel
	}{
		{"v1.68.0", model177},
		{"v1.77.5", model177},
		{"1.77.5", model177},
		{"v1.78.0-rc.1", model178},
		{"v1.78.0", model178},
		{"v1.79.3", model178},
		{"v2.0.0", model178},
		{1.78, model178},
		{1.77, model177},
		{"dev", model178},
		{"unknown", model178},
		{"", model178},
		{nil, model178},
	} {
		got := roleNames(renderRoles(t, c.version))
		if want := slices.Sorted(slices.Values(c.want.wantRoles)); !slices.Equal(got, want) {
			t.Errorf("deckhouseVersion %#v: rendered\n  %v\nwant the roles of %s\n  %v", c.version, got, c.want.name, want)
		}
	}
}

// The roles of user-authz carry the access level as a label as well as the
// annotation: the aggregated custom roles of user-authz after
// deckhouse/deckhouse#22824 select them by the label.
func TestUserAuthzRolesCarryTheAccessLevelLabel(t *testing.T) {
	n := 0
	for _, cr := range renderRoles(t, "v1.78.0") {
		level, ok := cr.Annotations[userAuthz]
		if !ok {
			continue
		}
		n++
		if cr.Labels[userAuthz] != level {
			t.Errorf("%s: annotation %s=%q, label %q", cr.Name, userAuthz, level, cr.Labels[userAuthz])
		}
	}
	if n != len(userAuthzRoleNames) {
		t.Errorf("%d roles carry the access-level annotation, want %d", n, len(userAuthzRoleNames))
	}
}
