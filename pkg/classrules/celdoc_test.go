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

package classrules

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// TestDocumentedCELFieldsExist: an admin writes class rules from what
// `kubectl explain starrocksclass.spec.validations.rule` says; every field it
// names for a role's privileges and for a user must be one the rules see, or
// a rule written from the docs refuses every instance that declares roles.
func TestDocumentedCELFieldsExist(t *testing.T) {
	data, err := os.ReadFile("../../crds/starrocksclass.yaml")
	require.NoError(t, err)
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Properties map[string]struct {
								Items struct {
									Properties map[string]struct {
										Description string `json:"description"`
									} `json:"properties"`
								} `json:"items"`
							} `json:"properties"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &crd))
	desc := strings.Join(strings.Fields(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["validations"].Items.Properties["rule"].Description), " ")
	fieldsOf := func(re string) []string {
		m := regexp.MustCompile(re).FindStringSubmatch(desc)
		require.NotNil(t, m, "%s not found in the description of validations[].rule:\n%s", re, desc)
		return strings.Split(strings.ReplaceAll(m[1], " and ", ", "), ", ")
	}
	var rules []v1alpha1.ValidationRule
	for _, f := range fieldsOf("`roles` \\(name, roles and privileges: ([a-z, ]+)\\)") {
		rules = append(rules, v1alpha1.ValidationRule{Rule: "roles.all(r, r.privileges.all(p, has(p." + f + ")))", Message: "privileges have " + f})
	}
	for _, f := range fieldsOf("`users` \\(([a-zA-Z, ]+)\\)") {
		rules = append(rules, v1alpha1.ValidationRule{Rule: "users.all(u, has(u." + f + "))", Message: "users have " + f})
	}
	cl := testClass()
	cl.Spec.Validations = append(cl.Spec.Validations, rules...)
	require.Empty(t, mustCompile(t, cl).Validate(accountsInstance()), "rules %v", rules)
}
