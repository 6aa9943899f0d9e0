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
	"strings"
	"testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func TestCheckScaling(t *testing.T) {
	cluster := func(n int32) v1alpha1.StarrocksSpec {
		return v1alpha1.StarrocksSpec{Type: v1alpha1.TypeCluster, Backend: v1alpha1.BackendSpec{Replicas: ptr(n)}}
	}
	const (
		byOne    = `spec.backend.replicas: the BE count may shrink by at most one at a time: each removed BE is decommissioned first so its tablets move to the others (value 1; shrink by at most one (was 3))`
		twoBEs   = `spec.backend.replicas: 2 BEs cannot load data while one of them is down: tables get 2 replicas (default_replication_num = min(3, BEs)) and StarRocks' default write quorum (MAJORITY) of 2 replicas is both, so every load fails during a rolling restart or a node drain; order 3 BEs or more (or 1) (value 2; a Cluster has 1 or at least 3 BEs)`
		pending  = `spec.backend.replicas: a BE is still being removed: lower the count again once the condition BackendScaleIn is True (kubectl get starrocks -o yaml shows what it waits for) (value 3; one BE scale-in at a time (condition BackendScaleIn is not True))`
		userRepl = `spec.backend.replicas: StarRocks cannot remove a BE while a table needs more replicas than the BEs left: table shop.orders has replication_num 5; keep at least 5 BEs, or first lower the replication_num of the tables that need that many (see the Scaling section of the user guide) (value 4; at least the largest replication number in use (5, status.replication.maxReplicationNum))`
		statRepl = `spec.backend.replicas: StarRocks cannot remove a BE while a table needs more replicas than the BEs left: the internal statistics table _statistics_.column_statistics has replication_num 2; StarRocks 3.x does not remove a BE below the replication of its statistics tables, so keep at least 2 BEs (value 1; at least the largest replication number in use (2, status.replication.maxReplicationNum))`
	)
	for _, tc := range []struct {
		name  string
		spec  v1alpha1.StarrocksSpec
		facts ScalingFacts
		want  []string
	}{
		{name: "accepts a new Cluster of 3", spec: cluster(3)},
		{name: "accepts a new Standalone", spec: v1alpha1.StarrocksSpec{Type: v1alpha1.TypeStandalone}},
		{name: "rejects a new Cluster of 2", spec: cluster(2), want: []string{twoBEs}},
		{name: "rejects Standalone to a Cluster of 2", spec: cluster(2), facts: ScalingFacts{Backends: 1}, want: []string{twoBEs}},
		{name: "rejects 3 to 2 BEs", spec: cluster(2), facts: ScalingFacts{Backends: 3, MaxReplicationNum: 1}, want: []string{twoBEs}},
		{name: "keeps an instance that already has 2 BEs", spec: cluster(2), facts: ScalingFacts{Backends: 2, MaxReplicationNum: 2}},
		{name: "accepts 2 to 1 BE when every table has 1 replica", spec: cluster(1), facts: ScalingFacts{Backends: 2, MaxReplicationNum: 1}},
		{name: "rejects 2 to 1 BE below the statistics tables' replication", spec: cluster(1),
			facts: ScalingFacts{Backends: 2, MaxReplicationNum: 2, MaxReplicationTable: "_statistics_.column_statistics"}, want: []string{statRepl}},
		{name: "rejects scale-in by two BEs", spec: cluster(1), facts: ScalingFacts{Backends: 3}, want: []string{byOne}},
		{name: "accepts scale-in by one above the replication", spec: cluster(4), facts: ScalingFacts{Backends: 5, MaxReplicationNum: 3}},
		{name: "rejects scale-in below a table's replication", spec: cluster(4),
			facts: ScalingFacts{Backends: 5, MaxReplicationNum: 5, MaxReplicationTable: "shop.orders"}, want: []string{userRepl}},
		{name: "rejects a second scale-in while one is pending", spec: cluster(3), facts: ScalingFacts{Backends: 4, ScaleInPending: true}, want: []string{pending}},
		{name: "accepts growing while a scale-in is pending", spec: cluster(5), facts: ScalingFacts{Backends: 4, ScaleInPending: true, MaxReplicationNum: 9}},
		{name: "accepts an unchanged count below the replication", spec: cluster(3), facts: ScalingFacts{Backends: 3, MaxReplicationNum: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := CheckScaling(tc.spec, tc.facts)
			got := make([]string, len(vs))
			for i, v := range vs {
				got[i] = v.Error()
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
