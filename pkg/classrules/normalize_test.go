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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func TestNormalize(t *testing.T) {
	policy := func(lo, hi int32, fractions ...int32) v1alpha1.SizingPolicy {
		return v1alpha1.SizingPolicy{
			Cores:         v1alpha1.CoreRange{Min: lo, Max: hi},
			Memory:        v1alpha1.MemoryRange{Min: resource.MustParse("1Gi"), Max: resource.MustParse("8Gi")},
			CoreFractions: fractions,
		}
	}
	tests := []struct {
		name     string
		in, want v1alpha1.StarrocksClassSpec
	}{
		{
			name: "sorts sizing policies by cores and their fractions, dropping duplicates",
			in:   v1alpha1.StarrocksClassSpec{SizingPolicies: []v1alpha1.SizingPolicy{policy(9, 16, 100, 50, 50), policy(1, 8, 25, 10)}},
			want: v1alpha1.StarrocksClassSpec{SizingPolicies: []v1alpha1.SizingPolicy{policy(1, 8, 10, 25), policy(9, 16, 50, 100)}},
		},
		{
			name: "defaults the topology when exactly one is allowed",
			in:   v1alpha1.StarrocksClassSpec{Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{"Zonal", "Zonal"}}},
			want: v1alpha1.StarrocksClassSpec{Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{"Zonal"}, DefaultTopology: "Zonal"}},
		},
		{
			name: "leaves the default topology empty when several are allowed",
			in:   v1alpha1.StarrocksClassSpec{Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{"TransZonal", "Ignored"}}},
			want: v1alpha1.StarrocksClassSpec{Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{"Ignored", "TransZonal"}}},
		},
		{
			name: "keeps an explicit default topology",
			in:   v1alpha1.StarrocksClassSpec{Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{"Zonal"}, DefaultTopology: "Ignored"}},
			want: v1alpha1.StarrocksClassSpec{Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{"Zonal"}, DefaultTopology: "Ignored"}},
		},
		{
			name: "sorts zones and overridable keys, dropping duplicates",
			in: v1alpha1.StarrocksClassSpec{
				Topology:                 v1alpha1.ClassTopology{AllowedZones: []string{"b", "a", "b"}},
				OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyCatalogTrashExpireSecond, v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyCatalogTrashExpireSecond},
			},
			want: v1alpha1.StarrocksClassSpec{
				Topology:                 v1alpha1.ClassTopology{AllowedZones: []string{"a", "b"}},
				OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyCatalogTrashExpireSecond},
			},
		},
		{
			name: "leaves absent lists absent",
			in:   v1alpha1.StarrocksClassSpec{},
			want: v1alpha1.StarrocksClassSpec{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class := &v1alpha1.StarrocksClass{Spec: tt.in}
			Normalize(class)
			if !equality.Semantic.DeepEqual(class.Spec, tt.want) {
				t.Fatalf("Normalize:\n got %+v\nwant %+v", class.Spec, tt.want)
			}
			if tt.want.OverridableConfiguration == nil && class.Spec.OverridableConfiguration != nil {
				t.Fatal("an absent overridableConfiguration became an empty list")
			}
		})
	}
}
