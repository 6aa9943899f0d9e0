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
// statistic/StatisticsMetaManager). The scaling rules leave them out (see
// CheckScaling).
const StatisticsDatabase = "_statistics_"

// CheckScaling checks a BE count against what StarRocks can do with the
// instance as it runs:
//
//   - never to 2 BEs: default_replication_num is min(3, BEs) (the module's
//     choice, rendered into fe.conf; upstream's default is 3), so tables get
//     2 replicas, and the write quorum of a table defaults to MAJORITY
//     (fe-core catalog/TableProperty.buildWriteQuorum), which for 2 replicas
//     is 2: every load would fail while one BE is down (a rolling restart,
//     a node drain the PDB allows). StarRocks has no cluster-wide default
//     for write_quorum, only the table property, which the module cannot set
//     on the team's tables. An instance that already has 2 BEs keeps them;
//   - scale-in by at most one BE from the count in effect: each removed BE
//     is decommissioned first so its tablets move to the others;
//   - no further scale-in while one is pending: the agent decommissions the
//     BEs beyond the count, so a second edit would drain two BEs at once;
//   - not below the largest replication number of the team's tables:
//     StarRocks refuses to decommission a BE while a table needs more
//     replicas than the BEs left ("It will cause insufficient BE number
//     ...", fe-core system/SystemInfoService.decommissionBackend), so such
//     a scale-in would wait forever.
//
// A scale-in below the smallest count these rules allow is refused with one
// message that names that count and why, so a user who asked for 1 BE of 3
// is not sent to try 2 next and be refused again.
//
// The internal _statistics_ tables do not count: the shipped StarRocks
// (desired.StarRocksVersion, 4.1) skips them in the decommission check
// (StarRocks PR 56114; 3.x, alter/SystemHandler.checkDecommission, counted
// them and refused 2 -> 1 BE), so an old agent's report naming one of them
// does not hold the instance at 2 BEs.
//
// Growing is never refused here.
func CheckScaling(spec v1alpha1.StarrocksSpec, f ScalingFacts) Violations {
	n := backendCount(spec)
	var vs Violations
	// From 3 BEs or more, 2 is a scale-in, answered below with the
	// smallest count allowed.
	if n == 2 && f.Backends < 2 {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: "2", Rule: "a Cluster has 1 or at least 3 BEs",
			Message: twoBackends + "; order 3 BEs or more (or 1)"})
	}
	if n >= f.Backends {
		return vs
	}
	floor, why := smallestBackends(f)
	if n < floor {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: fmt.Sprint(n), Rule: fmt.Sprintf("at least %s now (was %d)", beCount(floor), f.Backends),
			Message: fmt.Sprintf("the smallest BE count allowed now is %d: %s", floor, why)})
	}
	return vs
}

// twoBackends says why a Cluster never gets 2 BEs.
const twoBackends = "2 BEs cannot load data while one of them is down: tables get 2 replicas (the module sets default_replication_num to min(3, BEs)) and StarRocks' default write quorum (MAJORITY) of 2 replicas is both, " +
	"so every load fails during a rolling restart or a node drain"

// smallestBackends is the lowest BE count a scale-in may ask for now, and
// why it is not lower.
func smallestBackends(f ScalingFacts) (int32, string) {
	if f.ScaleInPending {
		return f.Backends, "a BE is still being removed: lower the count again once the condition BackendScaleIn is True (kubectl get starrocks -o yaml shows what it waits for)"
	}
	floor := f.Backends - 1
	why := "BEs are removed one at a time, each decommissioned first so its tablets move to the others"
	if floor == 2 {
		floor = 3
		why = "BEs are removed one at a time, and the next step, 2 BEs, is not allowed (" + twoBackends + "), so 3 BEs cannot shrink; " +
			"for fewer BEs create a new instance of 1 BE and move the data"
	}
	if table := f.MaxReplicationTable; f.MaxReplicationNum > floor && !strings.HasPrefix(table, StatisticsDatabase+".") {
		if table == "" {
			table = "a table"
		} else {
			table = "table " + table
		}
		floor = f.MaxReplicationNum
		why = fmt.Sprintf("StarRocks cannot remove a BE while a table needs more replicas than the BEs left, and %s has replication_num %d (status.replication.maxReplicationNum); "+
			"to go lower, first lower the replication_num of the tables that need that many (see the Scaling section of the user guide)", table, f.MaxReplicationNum)
	}
	return floor, why
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
