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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func TestMemoryFloorsOfInstances(t *testing.T) {
	// A class that allows less than the floors, so only the floors refuse.
	low := func() *v1alpha1.StarrocksClass {
		cl := testClass()
		cl.Spec.SizingPolicies[0].Memory = v1alpha1.MemoryRange{Min: q("512Mi"), Max: q("16Gi"), Step: qp("512Mi")}
		return cl
	}
	for _, tt := range []struct {
		name   string
		class  func() *v1alpha1.StarrocksClass
		fe, be string
		want   []string
	}{
		{name: "accepts both components at their floors", class: low, fe: "2Gi", be: "4Gi"},
		{name: "rejects an FE below 2Gi", class: low, fe: "1536Mi", be: "4Gi",
			want: []string{`spec.frontend.memory.size: an FE needs at least 2Gi of memory, whatever the class allows (value 1536Mi; FE memory floor 2Gi)`}},
		{name: "rejects a BE below 4Gi", class: low, fe: "2Gi", be: "3584Mi",
			want: []string{`spec.backend.memory.size: a BE needs at least 4Gi of memory, whatever the class allows (value 3584Mi; BE memory floor 4Gi)`}},
		{name: "rejects both below their floors", class: low, fe: "1Gi", be: "2Gi",
			want: []string{
				`spec.frontend.memory.size: an FE needs at least 2Gi of memory, whatever the class allows (value 1Gi; FE memory floor 2Gi)`,
				`spec.backend.memory.size: a BE needs at least 4Gi of memory, whatever the class allows (value 2Gi; BE memory floor 4Gi)`,
			}},
		{name: "a size the policy already refuses is not reported twice", class: testClass, fe: "2Gi", be: "1Gi",
			want: []string{`spec.backend.memory.size: memory is below the minimum of the policy for 1-4 cores (value 1Gi; class "default" sizingPolicies[0].memory.min 2Gi)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sr := testInstance()
			sr.Spec.Frontend.Memory.Size, sr.Spec.Backend.Memory.Size = q(tt.fe), q(tt.be)
			_, vs := mustCompile(t, tt.class()).Resolve(sr)
			var got []string
			for _, v := range vs {
				assertFieldOnce(t, v)
				got = append(got, v.Error())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMemoryFloorsOfClasses(t *testing.T) {
	policy := func(min, max string) v1alpha1.SizingPolicy {
		return v1alpha1.SizingPolicy{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}, Memory: v1alpha1.MemoryRange{Min: q(min), Max: q(max)}, CoreFractions: []int32{100}}
	}
	for _, tt := range []struct {
		name     string
		policies []v1alpha1.SizingPolicy
		want     []string
	}{
		{name: "accepts a policy that reaches both floors", policies: []v1alpha1.SizingPolicy{policy("1Gi", "4Gi")}},
		{name: "rejects a policy below both floors",
			policies: []v1alpha1.SizingPolicy{policy("512Mi", "1Gi"), func() v1alpha1.SizingPolicy {
				p := policy("2Gi", "16Gi")
				p.Cores = v1alpha1.CoreRange{Min: 5, Max: 8}
				return p
			}()},
			want: []string{`spec.sizingPolicies[0].memory.max: the policy allows no memory size an FE (at least 2Gi) or a BE (at least 4Gi) can run with (value 1Gi; class "default" sizingPolicies[0]: FE memory floor 2Gi, BE memory floor 4Gi)`}},
		{name: "rejects a class where no policy reaches the BE floor",
			policies: []v1alpha1.SizingPolicy{policy("1Gi", "3Gi")},
			want:     []string{`spec.sizingPolicies: no sizing policy allows enough memory, so no instance of the class can be valid: a BE needs at least 4Gi (value memory.max [3Gi]; class "default" sizingPolicies: FE memory floor 2Gi, BE memory floor 4Gi)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cl := testClass()
			cl.Spec.SizingPolicies = tt.policies
			_, vs := Compile(cl)
			var got []string
			for _, v := range vs {
				assertFieldOnce(t, v)
				got = append(got, v.Error())
			}
			require.Equal(t, tt.want, got)
		})
	}
}
