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
	"strings"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// ReasonDecommissionRefused: StarRocks refuses to decommission a BE the
// spec removes (BackendScaleIn).
const ReasonDecommissionRefused = "DecommissionRefused"

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
