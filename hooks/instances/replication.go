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

package instances

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/plural"
)

// Reasons of BackendScaleIn and TablesReplicated.
const (
	// ReasonDecommissionRefused: StarRocks refuses to decommission a BE the
	// spec removes.
	ReasonDecommissionRefused   = "DecommissionRefused"
	ReasonReplicationAtDefault  = "ReplicationAtDefault"
	ReasonTablesUnderReplicated = "TablesUnderReplicated"
	// ReasonNoBackendAlive: StarRocks lists BEs but none of them alive, so
	// nothing that needs a BE can be read (nor queried).
	ReasonNoBackendAlive = "NoBackendAlive"
)

// maxTableNameLength is the CRD's maxLength of status.replication's table
// names: a longer one would make the apiserver refuse the status patch, and
// a refused patch fails the whole run.
const maxTableNameLength = 256

// replicationOf is status.replication: the agents' reports (the largest
// number wins when a former leader's report lingers), else the last one
// reported. It is kept when no agent reports: the webhook refuses BE counts
// below it, and a leader change must not open that gate.
func replicationOf(obs Observed, prev v1alpha1.StarrocksStatus) *v1alpha1.ReplicationStatus {
	var out *v1alpha1.ReplicationStatus
	for _, m := range obs.Membership {
		if m == nil || m.Replication == nil {
			continue
		}
		r := m.Replication
		if out != nil && r.MaxReplicationNum <= out.MaxReplicationNum {
			continue
		}
		// Anyone with edit rights in the namespace can write the agent's
		// annotation: bound what reaches the status to what the CRD takes.
		out = &v1alpha1.ReplicationStatus{
			MaxReplicationNum:   clampReplication(r.MaxReplicationNum),
			MaxReplicationTable: truncateBytes(r.MaxReplicationTable, maxTableNameLength),
			MinReplicationNum:   clampReplication(r.MinReplicationNum),
			MinReplicationTable: truncateBytes(r.MinReplicationTable, maxTableNameLength),
		}
	}
	if out == nil && prev.Replication != nil {
		out = prev.Replication.DeepCopy()
	}
	return out
}

func clampReplication(n int32) int32 { return max(0, min(n, math.MaxInt16)) }

// decommissionRefusedMessage says which BEs StarRocks will not let go, its
// own words, and the two ways out.
func decommissionRefusedMessage(s desired.ScaleIn) string {
	hosts := make([]string, len(s.Kept))
	for i, k := range s.Kept {
		hosts[i] = k.Host
	}
	return fmt.Sprintf("spec.backend.replicas is %d, but StarRocks refuses to decommission %s: %q. "+
		"The BE pods are kept and nothing is lost; the scale-in cannot finish as it is: set spec.backend.replicas back to %d, "+
		"or lower the replication_num of the table StarRocks names (see the Scaling section of the user guide), and the agent tries again.",
		s.Desired, strings.Join(hosts, ", "), s.Refused, s.Rendered)
}

// plainTableName is a name the statements in a message may quote as is;
// anything else (a tenant may name a table as they like) is shown as a
// placeholder.
var plainTableName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}\.[A-Za-z0-9_]{1,64}$`)

// tablesReplicated is the TablesReplicated condition: whether every table
// of the team keeps at least the instance's default replication number
// (the statistics tables are StarRocks' to raise). StarRocks changes no
// existing table when the default rises (a Standalone that became a
// Cluster keeps its tables at 1 replica), and neither does the module: the
// message gives the statements to run.
//
// Before the first report, deadBackends is how many BEs StarRocks lists
// none of which it reports alive: the agent reads the replication only
// while one is (it needs a BE), so the condition says why it waits.
func tablesReplicated(r *v1alpha1.ReplicationStatus, e *desired.Instance, deadBackends int) (metav1.ConditionStatus, string, string) {
	def := e.Configuration.DefaultReplicationNum
	switch {
	case r == nil && deadBackends > 0:
		return metav1.ConditionUnknown, ReasonNoBackendAlive, fmt.Sprintf("StarRocks lists %s and reports none alive (SHOW BACKENDS, column Alive: the FE's heartbeat to the BE is not answered), "+
			"so the replication of the tables cannot be read, and queries and loads that need a BE fail until one is alive.", plural.Count(deadBackends, "BE"))
	case r == nil:
		return metav1.ConditionUnknown, ReasonWaitingForAgent, "The agent of the FE leader has not reported the replication of the tables yet."
	case r.MinReplicationNum == 0 || r.MinReplicationNum >= def:
		return metav1.ConditionTrue, ReasonReplicationAtDefault, fmt.Sprintf("Every table keeps at least %s, the instance's default.", plural.Count(def, "replica"))
	}
	table := "<database>.<table>"
	if plainTableName.MatchString(r.MinReplicationTable) {
		table = r.MinReplicationTable
	}
	return metav1.ConditionFalse, ReasonTablesUnderReplicated, fmt.Sprintf("Table %s keeps %s, fewer than the instance's default of %d (tables of a Standalone keep 1 when it becomes a Cluster): "+
		"losing one BE can lose its data. Raise it as the team's admin: "+
		`ALTER TABLE %[4]s SET ("default.replication_num" = "%[3]d"); ALTER TABLE %[4]s MODIFY PARTITION (*) SET ("replication_num" = "%[3]d"); `+
		`for a table without partitions: ALTER TABLE %[4]s SET ("replication_num" = "%[3]d"). `+
		"List the others with: SELECT DISTINCT DB_NAME, TABLE_NAME FROM information_schema.partitions_meta WHERE REPLICATION_NUM < %[3]d.",
		r.MinReplicationTable, plural.Count(r.MinReplicationNum, "replica"), def, table)
}

// backendsNoneAlive is how many BEs the agents report StarRocks lists when
// it reports none of them alive, 0 when one is alive or none is listed.
// The reports are the FE pods' annotations, which the tenant can write:
// only a count reaches the status.
func backendsNoneAlive(obs Observed) int {
	listed := 0
	for _, m := range obs.Membership {
		if m == nil {
			continue
		}
		alive := map[string]bool{}
		for _, n := range m.Nodes {
			alive[strings.ToLower(strings.TrimSuffix(n.Host, "."))] = n.Alive
		}
		for _, b := range m.Backends {
			if alive[strings.ToLower(strings.TrimSuffix(b, "."))] {
				return 0
			}
		}
		listed = max(listed, min(len(m.Backends), math.MaxInt16))
	}
	return listed
}
