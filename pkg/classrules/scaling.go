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

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// ScalingFacts is what the cluster says about the BEs of an instance: the
// BE count rules need it besides the spec. The webhook takes it from the
// old object (spec and status), the hooks from the configuration in effect,
// the BE StatefulSet and the agent's report.
type ScalingFacts struct {
	// Backends is the BE count in effect before this change; 0 for a new
	// instance.
	Backends int32
	// ScaleInPending is true while a BE removal has not finished (the
	// BackendScaleIn condition is not True, or BE pods beyond the count in
	// effect are still kept).
	ScaleInPending bool
	// MaxReplicationNum is the largest replication number of any table
	// partition, internal tables included, as the FE leader's agent last
	// reported it (status.replication); 0 when unknown. MaxReplicationTable
	// is a table (database.table) that has it.
	MaxReplicationNum   int32
	MaxReplicationTable string
}

// StatisticsDatabase is StarRocks' internal database of optimizer statistics;
// its tables are created with up to 3 replicas (fe-core
// statistic/StatisticsMetaManager), so they count like any table.
const StatisticsDatabase = "_statistics_"

// CheckScaling checks a BE count against what StarRocks can do with the
// instance as it runs:
//
//   - scale-in by at most one BE from the count in effect: each removed BE
//     is decommissioned first so its tablets move to the others;
//   - no further scale-in while one is pending: the agent decommissions the
//     BEs beyond the count, so a second edit would drain two BEs at once;
//   - not below the largest replication number in use: StarRocks refuses to
//     decommission a BE while a table needs more replicas than the BEs left
//     ("It will cause insufficient BE number ...", fe-core
//     alter/SystemHandler.checkDecommission in 3.x,
//     system/SystemInfoService.decommissionBackend in 4.x), so such a
//     scale-in would wait forever;
//   - never to 2 BEs: default_replication_num is min(3, BEs), so tables get
//     2 replicas, and the write quorum of a table defaults to MAJORITY
//     (fe-core catalog/TableProperty.buildWriteQuorum), which for 2 replicas
//     is 2: every load would fail while one BE is down (a rolling restart,
//     a node drain the PDB allows). StarRocks has no cluster-wide default
//     for write_quorum, only the table property, which the module cannot set
//     on the team's tables. An instance that already has 2 BEs keeps them.
//
// Growing is never refused here.
func CheckScaling(spec v1alpha1.StarrocksSpec, f ScalingFacts) Violations {
	n := backendCount(spec)
	var vs Violations
	if n == 2 && f.Backends != 2 {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: "2", Rule: "a Cluster has 1 or at least 3 BEs",
			Message: "2 BEs cannot load data while one of them is down: tables get 2 replicas (default_replication_num = min(3, BEs)) and StarRocks' default write quorum (MAJORITY) of 2 replicas is both, " +
				"so every load fails during a rolling restart or a node drain; order 3 BEs or more (or 1)"})
	}
	if n >= f.Backends {
		return vs
	}
	if n < f.Backends-1 {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: fmt.Sprint(n), Rule: fmt.Sprintf("shrink by at most one (was %d)", f.Backends),
			Message: "the BE count may shrink by at most one at a time: each removed BE is decommissioned first so its tablets move to the others"})
	}
	if f.ScaleInPending {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: fmt.Sprint(n), Rule: "one BE scale-in at a time (condition BackendScaleIn is not True)",
			Message: "a BE is still being removed: lower the count again once the condition BackendScaleIn is True (kubectl get starrocks -o yaml shows what it waits for)"})
	}
	if n < f.MaxReplicationNum {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: fmt.Sprint(n),
			Rule: fmt.Sprintf("at least the largest replication number in use (%d, status.replication.maxReplicationNum)", f.MaxReplicationNum),
			Message: fmt.Sprintf("StarRocks cannot remove a BE while a table needs more replicas than the BEs left: %s has replication_num %d; %s",
				describeTable(f.MaxReplicationTable), f.MaxReplicationNum, lowerReplicationHint(f.MaxReplicationTable, f.MaxReplicationNum))})
	}
	return vs
}

// describeTable names the table and says whose it is.
func describeTable(table string) string {
	if table == "" {
		return "a table"
	}
	if strings.HasPrefix(table, StatisticsDatabase+".") {
		return fmt.Sprintf("the internal statistics table %s", table)
	}
	return fmt.Sprintf("table %s", table)
}

// lowerReplicationHint says what would let the count go lower.
func lowerReplicationHint(table string, num int32) string {
	if strings.HasPrefix(table, StatisticsDatabase+".") {
		return fmt.Sprintf("StarRocks 3.x does not remove a BE below the replication of its statistics tables, so keep at least %s", beCount(num))
	}
	return fmt.Sprintf("keep at least %s, or first lower the replication_num of the tables that need that many (see the Scaling section of the user guide)", beCount(num))
}

func beCount(n int32) string {
	if n == 1 {
		return "1 BE"
	}
	return fmt.Sprintf("%d BEs", n)
}

// ScalingFactsOf reads the facts from the stored object an update changes
// (the webhook's old object): its spec's BE count, its BackendScaleIn
// condition and its status.replication. nil (a create) has none.
func ScalingFactsOf(old *v1alpha1.Starrocks) ScalingFacts {
	if old == nil {
		return ScalingFacts{}
	}
	f := ScalingFacts{Backends: backendCount(old.Spec)}
	for _, c := range old.Status.Conditions {
		if c.Type == v1alpha1.ConditionBackendScaleIn && c.Status != "True" {
			f.ScaleInPending = true
		}
	}
	if r := old.Status.Replication; r != nil {
		f.MaxReplicationNum, f.MaxReplicationTable = r.MaxReplicationNum, r.MaxReplicationTable
	}
	return f
}
