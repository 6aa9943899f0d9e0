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
	"cmp"
	"slices"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// Normalize rewrites a class, in place, into its canonical form without
// changing what it allows: sizing policies sorted by cores.min (then
// cores.max), each policy's coreFractions sorted and deduplicated, allowed
// topologies, zones and overridable keys deduplicated and sorted, and the
// default topology filled in when exactly one topology is allowed.
//
// The admission webhook applies it before the class is stored, so the
// stored class reads the same however the admin wrote it, and policy indices
// in violation messages follow the order of the cores. The CRD declares the
// lists as sets and rejects duplicates; normalising first turns an
// accidental duplicate into a no-op instead of an error.
func Normalize(class *v1alpha1.StarrocksClass) {
	spec := &class.Spec
	slices.SortStableFunc(spec.SizingPolicies, func(a, b v1alpha1.SizingPolicy) int {
		return cmp.Or(cmp.Compare(a.Cores.Min, b.Cores.Min), cmp.Compare(a.Cores.Max, b.Cores.Max))
	})
	for i := range spec.SizingPolicies {
		spec.SizingPolicies[i].CoreFractions = sortedSet(spec.SizingPolicies[i].CoreFractions, cmp.Compare[int32])
	}

	top := &spec.Topology
	top.AllowedTopologies = sortedSet(top.AllowedTopologies, func(a, b v1alpha1.Topology) int {
		return cmp.Compare(topologyRank(a), topologyRank(b))
	})
	if top.DefaultTopology == "" && len(top.AllowedTopologies) == 1 {
		top.DefaultTopology = top.AllowedTopologies[0]
	}
	top.AllowedZones = sortedSet(top.AllowedZones, cmp.Compare[string])

	spec.OverridableConfiguration = sortedSet(spec.OverridableConfiguration, func(a, b v1alpha1.ConfigurationKey) int {
		return cmp.Compare(keyRank(a), keyRank(b))
	})
}

// topologyRank orders topologies from least to most spread, unknown values
// last (the CRD enum rejects them anyway) in name order.
func topologyRank(t v1alpha1.Topology) string {
	switch t {
	case v1alpha1.TopologyIgnored:
		return "0"
	case v1alpha1.TopologyZonal:
		return "1"
	case v1alpha1.TopologyTransZonal:
		return "2"
	}
	return "3" + string(t)
}

// keyRank orders configuration keys as v1alpha1.AllConfigurationKeys does.
func keyRank(k v1alpha1.ConfigurationKey) string {
	if i := slices.Index(v1alpha1.AllConfigurationKeys, k); i >= 0 {
		return string(rune('0' + i))
	}
	return "~" + string(k)
}

// sortedSet sorts s and drops duplicates; nil stays nil so an absent list
// does not become an empty one in the patch.
func sortedSet[T comparable](s []T, compare func(a, b T) int) []T {
	if s == nil {
		return nil
	}
	out := slices.Clone(s)
	slices.SortStableFunc(out, compare)
	return slices.Compact(out)
}
