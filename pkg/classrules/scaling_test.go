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
	"testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func TestCheckScaling(t *testing.T) {
	cluster := func(n int32) v1alpha1.StarrocksSpec {
		return v1alpha1.StarrocksSpec{Type: v1alpha1.TypeCluster, Backend: v1alpha1.BackendSpec{Replicas: ptr(n)}}
	}
	const (
		twoBEs = `spec.backend.replicas: 2 BEs cannot load data while one of them is down: tables get 2 replicas (the module sets default_replication_num to min(3, BEs)) and StarRocks' default write quorum (MAJORITY) of 2 replicas is both, so every load fails during a rolling restart or a node drain; order 3 BEs or more (or 1) (value 2; a Cluster has 1 or at least 3 BEs)`
		// 3 -> 1 and 3 -> 2 get the same answer: 3 is as low as it goes.
		threeIsFloor = `spec.backend.replicas: the smallest BE count allowed now is 3: BEs are removed one at a time, and the next step, 2 BEs, is not allowed (2 BEs cannot load data while one of them is down: tables get 2 replicas (the module sets default_replication_num to min(3, BEs)) and StarRocks' default write quorum (MAJORITY) of 2 replicas is both, so every load fails during a rolling restart or a node drain), so 3 BEs cannot shrink; for fewer BEs create a new instance of 1 BE and move the data (value %d; at least 3 BEs now (was 3))`
		byOne        = `spec.backend.replicas: the smallest BE count allowed now is 5: BEs are removed one at a time, each decommissioned first so its tablets move to the others (value 3; at least 5 BEs now (was 6))`
		pending      = `spec.backend.replicas: the smallest BE count allowed now is 4: a BE is still being removed: lower the count again once the condition BackendScaleIn is True (kubectl get starrocks -o yaml shows what it waits for) (value 3; at least 4 BEs now (was 4))`
		userRepl     = `spec.backend.replicas: the smallest BE count allowed now is 5: StarRocks cannot remove a BE while a table needs more replicas than the BEs left, and table shop.orders has replication_num 5 (status.replication.maxReplicationNum); to go lower, first lower the replication_num of the tables that need that many (see the Scaling section of the user guide) (value 4; at least 5 BEs now (was 5))`
		userReplTwo  = `spec.backend.replicas: the smallest BE count allowed now is 2: StarRocks cannot remove a BE while a table needs more replicas than the BEs left, and table shop.orders has replication_num 2 (status.replication.maxReplicationNum); to go lower, first lower the replication_num of the tables that need that many (see the Scaling section of the user guide) (value 1; at least 2 BEs now (was 2))`
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
		{name: "rejects 3 to 2 BEs naming 3 as the smallest count", spec: cluster(2), facts: ScalingFacts{Backends: 3, MaxReplicationNum: 1}, want: []string{fmt.Sprintf(threeIsFloor, 2)}},
		{name: "rejects 3 to 1 BE naming 3 as the smallest count, not 2", spec: cluster(1), facts: ScalingFacts{Backends: 3}, want: []string{fmt.Sprintf(threeIsFloor, 1)}},
		{name: "keeps an instance that already has 2 BEs", spec: cluster(2), facts: ScalingFacts{Backends: 2, MaxReplicationNum: 2}},
		{name: "accepts 2 to 1 BE when every table has 1 replica", spec: cluster(1), facts: ScalingFacts{Backends: 2, MaxReplicationNum: 1}},
		{name: "accepts 2 to 1 BE when only the statistics tables have 2 replicas (4.1 skips them)", spec: cluster(1),
			facts: ScalingFacts{Backends: 2, MaxReplicationNum: 2, MaxReplicationTable: "_statistics_.column_statistics"}},
		{name: "rejects 2 to 1 BE below a team table's replication", spec: cluster(1),
			facts: ScalingFacts{Backends: 2, MaxReplicationNum: 2, MaxReplicationTable: "shop.orders"}, want: []string{userReplTwo}},
		{name: "rejects scale-in by three BEs naming the next count", spec: cluster(3), facts: ScalingFacts{Backends: 6}, want: []string{byOne}},
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
