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
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func ptr[T any](v T) *T { return &v }
func qp(s string) *resource.Quantity {
	v := resource.MustParse(s)
	return &v
}

func testClass() *v1alpha1.StarrocksClass {
	return &v1alpha1.StarrocksClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "uid-1", Generation: 1},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyTransZonal},
				DefaultTopology:   v1alpha1.TopologyIgnored,
			},
			SizingPolicies: []v1alpha1.SizingPolicy{
				{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}, Memory: v1alpha1.MemoryRange{Min: q("2Gi"), Max: q("16Gi"), Step: qp("1Gi")}, CoreFractions: []int32{25, 50, 100}},
				{Cores: v1alpha1.CoreRange{Min: 5, Max: 16}, Memory: v1alpha1.MemoryRange{Min: q("8Gi"), Max: q("64Gi"), Step: qp("2Gi")}, CoreFractions: []int32{50, 100}},
			},
			OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyCatalogTrashExpireSecond},
			Configuration: v1alpha1.Configuration{
				StreamingLoadMaxMb:               ptr(int64(10240)),
				LoadProcessMaxMemoryLimitPercent: ptr(int32(40)),
			},
			Validations: []v1alpha1.ValidationRule{{
				Rule:    "configuration.streamingLoadMaxMb <= 20480",
				Message: "Stream Load requests may be at most 20 GiB in this class.",
			}},
		},
	}
}

func testInstance() *v1alpha1.Starrocks {
	comp := v1alpha1.ComponentSpec{
		CPU:                   v1alpha1.CPUSpec{Cores: 2},
		Memory:                v1alpha1.MemorySpec{Size: q("4Gi")},
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: q("10Gi")},
	}
	return &v1alpha1.Starrocks{
		ObjectMeta: metav1.ObjectMeta{Name: "sr", Namespace: "ns", Generation: 1},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "default",
			Type:               v1alpha1.TypeStandalone,
			Frontend:           comp,
			Backend:            v1alpha1.BackendSpec{ComponentSpec: comp},
		},
	}
}

// assertFieldOnce: Error() prefixes the field, and kubectl prints a cause as
// "<field>: <message>", so a message that starts with its field shows it twice.
func assertFieldOnce(t *testing.T, v Violation) {
	t.Helper()
	if v.Field != "" && strings.HasPrefix(v.Message, v.Field) {
		t.Errorf("message repeats the field %s: %q", v.Field, v.Message)
	}
}

func mustCompile(t *testing.T, cl *v1alpha1.StarrocksClass) *Compiled {
	t.Helper()
	c, vs := Compile(cl)
	require.Empty(t, vs, "class problems: %v", vs)
	return c
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		class  func(*v1alpha1.StarrocksClass)
		mutate func(*v1alpha1.Starrocks)
		want   []string // exact Error() of each violation, in order
	}{
		{name: "accepts an instance inside the first policy", mutate: func(*v1alpha1.Starrocks) {}},
		{name: "accepts cores at the lower boundary of a policy", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.CPU.Cores = 1 }},
		{name: "accepts cores at the upper boundary of a policy", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.CPU.Cores = 4 }},
		{name: "accepts memory at the minimum", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.Memory.Size = q("2Gi") }},
		{name: "accepts memory at the maximum", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.Memory.Size = q("16Gi") }},
		{name: "accepts memory written in another unit that is a multiple of the step", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.Memory.Size = q("5120Mi") }},
		{
			name:   "rejects cores that fall into no policy",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.CPU.Cores = 17 },
			want:   []string{`spec.frontend.cpu.cores: 17 cores fall into no sizing policy of the class (value 17; class "default" sizingPolicies cores ranges [1-4], [5-16])`},
		},
		{
			name:   "rejects memory below the minimum of the policy",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.Memory.Size = q("1Gi") },
			want:   []string{`spec.frontend.memory.size: memory is below the minimum of the policy for 1-4 cores (value 1Gi; class "default" sizingPolicies[0].memory.min 2Gi)`},
		},
		{
			name:   "rejects memory above the maximum of the policy",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.Memory.Size = q("17Gi") },
			want:   []string{`spec.backend.memory.size: memory is above the maximum of the policy for 1-4 cores (value 17Gi; class "default" sizingPolicies[0].memory.max 16Gi)`},
		},
		{
			name: "rejects memory not a multiple of step",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Backend.CPU.Cores = 8
				s.Spec.Backend.Memory.Size = q("9Gi")
			},
			want: []string{`spec.backend.memory.size: memory must be a multiple of 2Gi (value 9Gi; class "default" sizingPolicies[1].memory.step 2Gi)`},
		},
		{
			name:   "rejects memory with a fraction of a step",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.Memory.Size = q("4100Mi") },
			want:   []string{`spec.backend.memory.size: memory must be a multiple of 1Gi (value 4100Mi; class "default" sizingPolicies[0].memory.step 1Gi)`},
		},
		{
			name:   "rejects a core fraction the policy does not list",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.CPU.CoreFraction = 30 },
			want:   []string{`spec.frontend.cpu.coreFraction: core fraction 30% is not one the policy for 1-4 cores allows (value 30; class "default" sizingPolicies[0].coreFractions [25, 50, 100])`},
		},
		{
			name: "rejects a core fraction allowed only by another policy",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Backend.CPU = v1alpha1.CPUSpec{Cores: 6, CoreFraction: 25}
				s.Spec.Backend.Memory.Size = q("8Gi")
			},
			want: []string{`spec.backend.cpu.coreFraction: core fraction 25% is not one the policy for 5-16 cores allows (value 25; class "default" sizingPolicies[1].coreFractions [50, 100])`},
		},
		{
			name:   "rejects a topology the class does not allow",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyZonal} },
			want:   []string{`spec.cluster.topology: topology Zonal is not allowed by the class (value Zonal; class "default" topology.allowedTopologies [Ignored, TransZonal])`},
		},
		{
			name:  "rejects TransZonal when the class allows a single zone",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.Topology.AllowedZones = []string{"a"} },
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
			},
			want: []string{`spec.cluster.topology: topology TransZonal spreads pods over zones, but the class allows only one zone; choose Zonal or Ignored (value TransZonal; class "default" topology.allowedZones [a])`},
		},
		{
			name:  "accepts TransZonal over two allowed zones",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.Topology.AllowedZones = []string{"a", "b"} },
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
			},
		},
		{
			name: "rejects a configuration key that is not overridable",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Configuration = &v1alpha1.Configuration{LoadProcessMaxMemoryLimitPercent: ptr(int32(50))}
			},
			want: []string{`spec.configuration.loadProcessMaxMemoryLimitPercent: loadProcessMaxMemoryLimitPercent is not overridable in this class; remove it to get the class value (value 50; class "default" overridableConfiguration [streamingLoadMaxMb, catalogTrashExpireSecond])`},
		},
		{
			name: "accepts an overridable key at the CEL boundary",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(20480))}
			},
		},
		{
			name: "rejects an override that breaks a CEL validation, naming the field, value and rule",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(20481))}
			},
			want: []string{`spec.configuration.streamingLoadMaxMb: Stream Load requests may be at most 20 GiB in this class. (value configuration.streamingLoadMaxMb=20481; class "default" validations[0]: configuration.streamingLoadMaxMb <= 20480)`},
		},
		{
			name: "evaluates CEL over sizes in bytes and the BE count",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = []v1alpha1.ValidationRule{{
					Rule:    "type != 'Cluster' || backend.replicas * backend.memory.size >= 3 * 4 * 1073741824",
					Message: "A Cluster needs at least 12 GiB of BE memory in total.",
				}}
			},
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Type = v1alpha1.TypeCluster
				s.Spec.Backend.Replicas = ptr(int32(2))
			},
			want: []string{`spec.backend.memory.size, spec.backend.replicas, spec.type: A Cluster needs at least 12 GiB of BE memory in total. (value backend.memory.size=4294967296, backend.replicas=2, type=Cluster; class "default" validations[0]: type != 'Cluster' || backend.replicas * backend.memory.size >= 3 * 4 * 1073741824)`},
		},
		{
			name: "reports a rule that fails at evaluation as a violation",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = []v1alpha1.ValidationRule{{Rule: "frontend.cpu.cores / (frontend.cpu.coreFraction - frontend.cpu.coreFraction) > 0", Message: "never shown"}}
			},
			mutate: func(*v1alpha1.Starrocks) {},
			want:   []string{`spec.frontend.cpu.coreFraction, spec.frontend.cpu.cores: the class rule could not be evaluated (division by zero), so the instance cannot be accepted; the platform admin must fix the rule (value frontend.cpu.coreFraction=100, frontend.cpu.cores=2; class "default" validations[0]: frontend.cpu.cores / (frontend.cpu.coreFraction - frontend.cpu.coreFraction) > 0)`},
		},
		{
			name: "reports a rule that exceeds the cost limit as a violation",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = []v1alpha1.ValidationRule{{Rule: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))", Message: "never shown"}}
			},
			mutate: func(*v1alpha1.Starrocks) {},
			want:   []string{`spec: the class rule could not be evaluated (operation cancelled: actual cost limit exceeded), so the instance cannot be accepted; the platform admin must fix the rule (value -; class "default" validations[0]: [1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0))))))`},
		},
		{
			name: "reports a rule that returns something else than bool at evaluation",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = []v1alpha1.ValidationRule{{Rule: "frontend.cpu.cores", Message: "never shown"}}
			},
			mutate: func(*v1alpha1.Starrocks) {},
			want:   []string{`spec.frontend.cpu.cores: the class rule returned 2 instead of true or false (value frontend.cpu.cores=2; class "default" validations[0]: frontend.cpu.cores)`},
		},
		{
			name: "rejects zero memory and a zero volume",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Frontend.Memory.Size = q("0")
				s.Spec.Frontend.PersistentVolumeClaim.Size = q("0")
			},
			want: []string{
				`spec.frontend.persistentVolumeClaim.size: the volume size must be greater than zero (value 0; persistentVolumeClaim.size > 0)`,
				`spec.frontend.memory.size: the memory size must be greater than zero (value 0; memory.size > 0)`,
			},
		},
		{
			name: "rejects a configuration value out of the StarRocks range",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(0))}
			},
			want: []string{`spec.configuration.streamingLoadMaxMb: streamingLoadMaxMb must be from 1 to 10485760 (value 0; Starrocks spec.configuration bounds: streamingLoadMaxMb in [1, 10485760])`},
		},
		{
			name:   "rejects cores that fall into two policies of a broken class",
			class:  func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[1].Cores.Min = 2 },
			mutate: func(*v1alpha1.Starrocks) {},
			want: []string{
				`spec.starrocksClassName: StarrocksClass "default" is invalid, so no instance can be checked against it; the platform admin must fix: spec.sizingPolicies: the core ranges of two sizing policies overlap, so a size would fall into both (value [1, 4] and [2, 16]; class "default" sizingPolicies[0] and sizingPolicies[1]) (value default; class "default" must be valid)`,
				`spec.frontend.cpu.cores: 2 cores fall into more than one sizing policy of the class; the class must be fixed (value 2; class "default" sizingPolicies cores ranges [1-4], [2-16])`,
				`spec.backend.cpu.cores: 2 cores fall into more than one sizing policy of the class; the class must be fixed (value 2; class "default" sizingPolicies cores ranges [1-4], [2-16])`,
			},
		},
		{
			name:   "survives a class whose policy has no core fractions",
			class:  func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[0].CoreFractions = nil },
			mutate: func(*v1alpha1.Starrocks) {},
			want:   []string{`spec.starrocksClassName: StarrocksClass "default" is invalid, so no instance can be checked against it; the platform admin must fix: spec.sizingPolicies[0].coreFractions: the policy must list at least one core fraction (value []; class "default" sizingPolicies[0].coreFractions) (value default; class "default" must be valid)`},
		},
		{
			name: "rejects a BE count below one",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Type, s.Spec.Backend.Replicas = v1alpha1.TypeCluster, ptr(int32(0))
			},
			want: []string{`spec.backend.replicas: the BE count must be from 1 to 100 (value 0; spec.backend.replicas in [1, 100])`},
		},
		{
			name:   "rejects backend.replicas on a Standalone",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.Replicas = ptr(int32(2)) },
			want:   []string{`spec.backend.replicas: a Standalone has exactly one BE; only a Cluster sets the BE count (value 2; spec.type Standalone has exactly one BE)`},
		},
		{
			name:   "rejects a Cluster without backend.replicas",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Type = v1alpha1.TypeCluster },
			want:   []string{`spec.backend.replicas: a Cluster needs the BE count (1 to 100) (value <unset>; spec.type Cluster needs spec.backend.replicas)`},
		},
		{
			name: "rejects every instance of an invalid class, naming the class problem",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = []v1alpha1.ValidationRule{{Rule: "nosuch > 1", Message: "x"}}
			},
			mutate: func(*v1alpha1.Starrocks) {},
			want:   []string{`spec.starrocksClassName: StarrocksClass "default" is invalid, so no instance can be checked against it; the platform admin must fix: spec.validations[0].rule: the CEL rule does not compile: ERROR: <input>:1:1: undeclared reference to 'nosuch' (in container '') | nosuch > 1 | ^ (value nosuch > 1; class "default" validations[0]) (value default; class "default" must be valid)`},
		},
		{
			name: "reports every violation of an instance, not only the first",
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Frontend.CPU.Cores = 100
				s.Spec.Backend.Memory.Size = q("100Gi")
			},
			want: []string{
				`spec.frontend.cpu.cores: 100 cores fall into no sizing policy of the class (value 100; class "default" sizingPolicies cores ranges [1-4], [5-16])`,
				`spec.backend.memory.size: memory is above the maximum of the policy for 1-4 cores (value 100Gi; class "default" sizingPolicies[0].memory.max 16Gi)`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := testClass()
			if tt.class != nil {
				tt.class(cl)
			}
			c, _ := Compile(cl)
			sr := testInstance()
			tt.mutate(sr)
			before := sr.DeepCopy()
			vs := c.Validate(sr)
			assert.Equal(t, before, sr, "Validate must not modify the instance")
			got := make([]string, len(vs))
			for i, v := range vs {
				got[i] = v.Error()
				assertFieldOnce(t, v)
			}
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				assert.NoError(t, vs.ErrOrNil())
				return
			}
			assert.Equal(t, tt.want, got)
			assert.Error(t, vs.ErrOrNil())
		})
	}
}

func TestCompileReportsClassProblems(t *testing.T) {
	tests := []struct {
		name  string
		class func(*v1alpha1.StarrocksClass)
		want  []string
	}{
		{name: "accepts the test class", class: func(*v1alpha1.StarrocksClass) {}},
		{
			name:  "rejects a CEL rule that does not return bool",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.Validations[0].Rule = "configuration.streamingLoadMaxMb + 1" },
			want:  []string{`spec.validations[0].rule: the CEL rule must evaluate to bool, not int (value configuration.streamingLoadMaxMb + 1; class "default" validations[0])`},
		},
		{
			name:  "rejects a class without sizing policies",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies = nil },
			want:  []string{`spec.sizingPolicies: the class has no sizing policies, so no instance size can be valid (value []; class "default" sizingPolicies)`},
		},
		{
			name:  "rejects a policy without core fractions",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[0].CoreFractions = nil },
			want:  []string{`spec.sizingPolicies[0].coreFractions: the policy must list at least one core fraction (value []; class "default" sizingPolicies[0].coreFractions)`},
		},
		{
			name:  "accepts a rule typed dyn, checked at evaluation",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.Validations[0].Rule = "frontend.cpu.cores" },
		},
		{
			name:  "rejects a CEL rule over an unknown variable",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.Validations[0].Rule = "spec.x == 1" },
			want:  []string{`spec.validations[0].rule: the CEL rule does not compile: ERROR: <input>:1:1: undeclared reference to 'spec' (in container '') | spec.x == 1 | ^ (value spec.x == 1; class "default" validations[0])`},
		},
		{
			name: "rejects overlapping core ranges",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.SizingPolicies[1].Cores.Min = 4
			},
			want: []string{`spec.sizingPolicies: the core ranges of two sizing policies overlap, so a size would fall into both (value [1, 4] and [4, 16]; class "default" sizingPolicies[0] and sizingPolicies[1])`},
		},
		{
			name: "rejects cores.min above cores.max",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.SizingPolicies[1].Cores = v1alpha1.CoreRange{Min: 20, Max: 17}
			},
			want: []string{`spec.sizingPolicies[1].cores: cores.min must not be greater than cores.max (value [20, 17]; class "default" sizingPolicies[1].cores)`},
		},
		{
			name:  "rejects memory.min above memory.max",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[0].Memory.Min = q("32Gi") },
			want:  []string{`spec.sizingPolicies[0].memory: memory.min must not be greater than memory.max (value [32Gi, 16Gi]; class "default" sizingPolicies[0].memory)`},
		},
		{
			name:  "rejects a zero memory step",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[0].Memory.Step = qp("0") },
			want:  []string{`spec.sizingPolicies[0].memory.step: the memory step must be greater than zero (value 0; class "default" sizingPolicies[0].memory.step)`},
		},
		{
			name:  "rejects a core fraction above 100",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[0].CoreFractions = []int32{101} },
			want:  []string{`spec.sizingPolicies[0].coreFractions: every core fraction must be a percentage from 1 to 100 (value 101; class "default" sizingPolicies[0].coreFractions)`},
		},
		{
			name:  "rejects a default topology that is not allowed",
			class: func(c *v1alpha1.StarrocksClass) { c.Spec.Topology.DefaultTopology = v1alpha1.TopologyZonal },
			want:  []string{`spec.topology.defaultTopology: the default topology must be one of the allowed topologies (value Zonal; class "default" topology.allowedTopologies [Ignored, TransZonal])`},
		},
		{
			name: "rejects a node selector pinning a zone that is not allowed",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Topology.AllowedZones = []string{"a", "b"}
				c.Spec.NodeSelector = map[string]string{ZoneLabel: "c"}
			},
			want: []string{`spec.nodeSelector.topology.kubernetes.io/zone: the node selector pins a zone that is not allowed, so no pod could be scheduled (value c; class "default" topology.allowedZones [a, b])`},
		},
		{
			name: "rejects an unknown overridable key",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.OverridableConfiguration = []v1alpha1.ConfigurationKey{"maxConnections"}
			},
			want: []string{`spec.overridableConfiguration[0]: the key is not a configuration key the module knows (value maxConnections; known configuration keys [streamingLoadMaxMb, loadProcessMaxMemoryLimitPercent, catalogTrashExpireSecond])`},
		},
		{
			name: "rejects a class default out of range",
			class: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Configuration.LoadProcessMaxMemoryLimitPercent = ptr(int32(0))
			},
			want: []string{`spec.configuration.loadProcessMaxMemoryLimitPercent: loadProcessMaxMemoryLimitPercent must be from 1 to 100 (value 0; class "default" configuration: loadProcessMaxMemoryLimitPercent in [1, 100])`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := testClass()
			tt.class(cl)
			c, vs := Compile(cl)
			require.NotNil(t, c)
			got := make([]string, len(vs))
			for i, v := range vs {
				got[i] = v.Error()
				assertFieldOnce(t, v)
			}
			if len(tt.want) == 0 {
				assert.Nil(t, vs)
				return
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, vs, c.Problems())
		})
	}
}

func TestDefault(t *testing.T) {
	c := mustCompile(t, testClass())
	sr := testInstance()
	sr.Spec.Type = ""
	sr.Spec.Backend.CPU = v1alpha1.CPUSpec{Cores: 8}
	sr.Spec.Backend.Memory.Size = q("8Gi")
	sr.Spec.Configuration = &v1alpha1.Configuration{CatalogTrashExpireSecond: ptr(int64(60))}
	c.Default(sr)

	assert.Equal(t, v1alpha1.TypeStandalone, sr.Spec.Type, "type defaults to Standalone")
	assert.Equal(t, v1alpha1.TopologyIgnored, sr.Spec.Cluster.Topology, "topology takes the class default")
	assert.EqualValues(t, 100, sr.Spec.Frontend.CPU.CoreFraction, "largest fraction of policy 0")
	assert.EqualValues(t, 100, sr.Spec.Backend.CPU.CoreFraction, "largest fraction of policy 1")
	assert.Nil(t, sr.Spec.Configuration.StreamingLoadMaxMb, "a key the user left out is not written: it follows the class default")
	assert.Equal(t, ptr(int64(60)), sr.Spec.Configuration.CatalogTrashExpireSecond, "the user's value stays")
	assert.Nil(t, sr.Spec.Configuration.LoadProcessMaxMemoryLimitPercent, "a key that is not overridable is never written into spec")
	assert.Empty(t, c.Validate(sr), "a defaulted instance is valid")

	t.Run("keeps what the user set", func(t *testing.T) {
		sr := testInstance()
		sr.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
		sr.Spec.Frontend.CPU.CoreFraction = 25
		c.Default(sr)
		assert.Equal(t, v1alpha1.TopologyTransZonal, sr.Spec.Cluster.Topology)
		assert.EqualValues(t, 25, sr.Spec.Frontend.CPU.CoreFraction)
	})
	t.Run("leaves coreFraction empty when no policy matches", func(t *testing.T) {
		sr := testInstance()
		sr.Spec.Frontend.CPU.Cores = 99
		c.Default(sr)
		assert.Zero(t, sr.Spec.Frontend.CPU.CoreFraction)
	})
}

func TestResolveMergesConfiguration(t *testing.T) {
	tests := []struct {
		name string
		user *v1alpha1.Configuration
		want ResolvedConfiguration
	}{
		{
			name: "class values over StarRocks defaults",
			want: ResolvedConfiguration{StreamingLoadMaxMb: 10240, LoadProcessMaxMemoryLimitPercent: 40, CatalogTrashExpireSecond: DefaultCatalogTrashExpireSecond},
		},
		{
			name: "user overrides over class values",
			user: &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(512)), CatalogTrashExpireSecond: ptr(int64(0))},
			want: ResolvedConfiguration{StreamingLoadMaxMb: 512, LoadProcessMaxMemoryLimitPercent: 40, CatalogTrashExpireSecond: 0},
		},
	}
	c := mustCompile(t, testClass())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sr := testInstance()
			sr.Spec.Configuration = tt.user
			r, vs := c.Resolve(sr)
			require.Empty(t, vs)
			assert.Equal(t, tt.want, r.Configuration)
		})
	}
	t.Run("resolves sizes, replicas, topology and the effective core fraction", func(t *testing.T) {
		sr := testInstance()
		sr.Spec.Type = v1alpha1.TypeCluster
		sr.Spec.Backend.Replicas = ptr(int32(4))
		sr.Spec.Backend.PersistentVolumeClaim.StorageClassName = "fast"
		r, vs := c.Resolve(sr)
		require.Empty(t, vs)
		assert.EqualValues(t, 3, r.Frontend.Replicas)
		assert.EqualValues(t, 4, r.Backend.Replicas)
		assert.EqualValues(t, 100, r.Frontend.CoreFraction)
		assert.Equal(t, "fast", r.Backend.StorageClass)
		assert.Equal(t, 0, r.Backend.PolicyIndex)
		assert.Equal(t, v1alpha1.TopologyIgnored, r.Topology)
	})
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*v1alpha1.Starrocks)
		mutate func(*v1alpha1.Starrocks)
		want   []string
	}{
		{name: "accepts growing the volume", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.PersistentVolumeClaim.Size = q("20Gi") }},
		{name: "accepts Standalone to Cluster with two BEs", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Type = v1alpha1.TypeCluster
			s.Spec.Backend.Replicas = ptr(int32(2))
		}},
		{
			name: "accepts scale-in by exactly one BE",
			old: func(s *v1alpha1.Starrocks) {
				s.Spec.Type, s.Spec.Backend.Replicas = v1alpha1.TypeCluster, ptr(int32(3))
			},
			mutate: func(s *v1alpha1.Starrocks) {
				s.Spec.Type, s.Spec.Backend.Replicas = v1alpha1.TypeCluster, ptr(int32(2))
			},
		},
		{
			name: "rejects Cluster to Standalone",
			old: func(s *v1alpha1.Starrocks) {
				s.Spec.Type, s.Spec.Backend.Replicas = v1alpha1.TypeCluster, ptr(int32(2))
			},
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Type, s.Spec.Backend.Replicas = v1alpha1.TypeStandalone, nil },
			want:   []string{`spec.type: a Cluster cannot become a Standalone: the data of the other BEs would be lost (value Standalone; spec.type Cluster -> Standalone is not allowed)`},
		},
		{
			name:   "rejects a class change",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.StarrocksClassName = "other" },
			want:   []string{`spec.starrocksClassName: the class of an instance cannot change; order a new instance of the other class instead (value other; immutable (was "default"))`},
		},
		{
			name:   "rejects a storage class change",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Frontend.PersistentVolumeClaim.StorageClassName = "fast" },
			want:   []string{`spec.frontend.persistentVolumeClaim.storageClassName: the storage class cannot change: a StatefulSet cannot move its volumes to another storage class (value fast; immutable (was ""))`},
		},
		{
			name:   "rejects a volume shrink",
			mutate: func(s *v1alpha1.Starrocks) { s.Spec.Backend.PersistentVolumeClaim.Size = q("9Gi") },
			want:   []string{`spec.backend.persistentVolumeClaim.size: a volume cannot shrink (value 9Gi; must not shrink (was 10Gi))`},
		},
		{
			name:   "accepts growing the CN cache",
			old:    withCompute,
			mutate: func(s *v1alpha1.Starrocks) { withCompute(s); s.Spec.Compute.Cache.Size = q("200Gi") },
		},
		{
			name:   "rejects a CN cache shrink",
			old:    withCompute,
			mutate: func(s *v1alpha1.Starrocks) { withCompute(s); s.Spec.Compute.Cache.Size = q("50Gi") },
			want:   []string{`spec.compute.cache.size: a volume cannot shrink (value 50Gi; must not shrink (was 100Gi))`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldSR := testInstance()
			if tt.old != nil {
				tt.old(oldSR)
			}
			newSR := oldSR.DeepCopy()
			tt.mutate(newSR)
			vs := ValidateUpdate(oldSR, newSR)
			got := make([]string, len(vs))
			for i, v := range vs {
				got[i] = v.Error()
				assertFieldOnce(t, v)
			}
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCache(t *testing.T) {
	t.Run("compiles a class generation once", func(t *testing.T) {
		cache := NewCache()
		cl := testClass()
		a, _ := cache.Get(cl)
		b, _ := cache.Get(cl.DeepCopy())
		assert.Same(t, a, b)
	})
	t.Run("recompiles and evicts when the generation changes", func(t *testing.T) {
		cache := NewCache()
		cl := testClass()
		a, _ := cache.Get(cl)
		cl2 := cl.DeepCopy()
		cl2.Generation = 2
		cl2.Spec.Validations[0].Rule = "bad("
		b, vs := cache.Get(cl2)
		assert.NotSame(t, a, b)
		assert.NotEmpty(t, vs)
		assert.Equal(t, 1, cache.Len(), "the old generation is evicted")
	})
	t.Run("falls back to name and resourceVersion", func(t *testing.T) {
		cache := NewCache()
		cl := testClass()
		cl.UID, cl.Generation, cl.ResourceVersion = "", 0, "7"
		a, _ := cache.Get(cl)
		b, _ := cache.Get(cl.DeepCopy())
		assert.Same(t, a, b)
		cl.ResourceVersion = "8"
		c, _ := cache.Get(cl)
		assert.NotSame(t, a, c)
	})
	t.Run("retains only live classes", func(t *testing.T) {
		cache := NewCache()
		a, b := testClass(), testClass()
		b.Name, b.UID = "other", "uid-2"
		cache.Get(a)
		cache.Get(b)
		cache.Retain([]*v1alpha1.StarrocksClass{b})
		assert.Equal(t, 1, cache.Len())
	})
	t.Run("is safe for concurrent use", func(t *testing.T) {
		cache := NewCache()
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl := testClass()
				cl.Name, cl.UID = fmt.Sprint("c", i%4), types.UID("u"+strings.Repeat("x", i%4))
				c, _ := cache.Get(cl)
				assert.Empty(t, c.Validate(testInstance()))
			}()
		}
		wg.Wait()
		assert.Equal(t, 4, cache.Len())
	})
}

func TestViolationsError(t *testing.T) {
	var none Violations
	assert.NoError(t, none.ErrOrNil())
	vs := Violations{{Field: "a", Value: "1", Rule: "r", Message: "m"}, {Field: "b", Value: "2", Rule: "s", Message: "n"}}
	assert.EqualError(t, vs, "a: m (value 1; r); b: n (value 2; s)")
	assert.Equal(t, `spec.starrocksClassName: StarrocksClass "x" does not exist; ask the platform admin which classes are available (kubectl get starrocksclasses) (value x; the referenced StarrocksClass must exist)`, MissingClass("x").Error())
}

func TestCountsReadAsEnglish(t *testing.T) {
	assert.Equal(t, "1 core falls", coreCount(1))
	assert.Equal(t, "17 cores fall", coreCount(17))
	assert.Equal(t, "1-4 cores", policyCores(v1alpha1.SizingPolicy{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}}))
	assert.Equal(t, "1 core", policyCores(v1alpha1.SizingPolicy{Cores: v1alpha1.CoreRange{Min: 1, Max: 1}}))
	assert.Equal(t, "2 cores", policyCores(v1alpha1.SizingPolicy{Cores: v1alpha1.CoreRange{Min: 2, Max: 2}}))
}

// withCompute gives an instance CNs with a 100Gi cache.
func withCompute(s *v1alpha1.Starrocks) {
	s.Spec.Compute = &v1alpha1.ComputeSpec{Cache: v1alpha1.CacheVolumeSpec{Size: q("100Gi")}}
}
