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

package desired

import (
	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// BackendObservation is what the cluster says about the BEs of one instance:
// the input of the scale-in decision.
type BackendObservation struct {
	// Replicas is spec.replicas of the BE StatefulSet; nil when it does not
	// exist yet (nothing to protect: the desired count is rendered).
	Replicas *int32
	// Reports are the membership reports of the agents (only the FE leader's
	// agent reports one; a stale one of a former leader may linger until its
	// agent republishes). A BE counts as listed when any report lists it.
	Reports []*agentconfig.MembershipStatus
	// Unreadable is true when an FE pod's agent-status annotation could not
	// be read: that pod may be the leader, so its silence confirms nothing.
	Unreadable bool
	// MaxReplicationNum and MaxReplicationTable are the largest replication
	// number in use and a table that has it (the agent's report, else the
	// last one in status.replication); 0 when never reported.
	MaxReplicationNum   int32
	MaxReplicationTable string
}

// ScaleInState says why the rendered BE count differs from the spec, if it does.
type ScaleInState string

const (
	// ScaleInNone: the spec's BE count is rendered.
	ScaleInNone ScaleInState = ""
	// ScaleInDraining: StarRocks still lists removed BEs, their pods are kept.
	ScaleInDraining ScaleInState = "Draining"
	// ScaleInWaitingForAgent: no readable membership report yet, the current
	// count is kept.
	ScaleInWaitingForAgent ScaleInState = "WaitingForAgent"
	// ScaleInHeld: the removed BEs are not decommissioned yet because a
	// backup or restore job runs (Held says which).
	ScaleInHeld ScaleInState = "Held"
)

// ScaleIn is the outcome of the BE scale-in decision for one instance.
type ScaleIn struct {
	State ScaleInState
	// Desired is the BE count of the spec, Rendered the one in the values.
	Desired, Rendered int32
	// Kept are the removed BEs StarRocks still lists, in ordinal order.
	Kept []KeptBackend
	// Refused is StarRocks' error for the decommission of a kept BE, when
	// an agent reports one: the scale-in cannot finish as it is.
	Refused string
	// Held is why the decommission has not started (ScaleInHeld).
	Held string
}

// KeptBackend is a removed BE whose pod keeps running.
type KeptBackend struct {
	Host string
	// Decommissioned is true when the agent reports it draining; false when
	// it is still an ordinary member (the agent has not read the new list).
	Decommissioned bool
	TabletNum      int64
}

// BackendReplicas decides how many BE pods to render when the spec wants
// desired and the StatefulSet has current; hosts are the FQDNs of ordinals
// 0..current-1. Growing is immediate. Shrinking removes a pod only once the
// agent of the FE leader confirms StarRocks no longer lists its BE (listed in
// neither backends nor draining): deleting a pod that still holds tablets
// loses replicas of the data. Pods are removed from the highest ordinal, so
// the count is 1 + the highest ordinal still listed, never below desired.
func BackendReplicas(desired, current int32, hosts []string, obs BackendObservation) ScaleIn {
	if current <= desired {
		return ScaleIn{Desired: desired, Rendered: desired}
	}
	if obs.Unreadable || len(obs.Reports) == 0 {
		return ScaleIn{State: ScaleInWaitingForAgent, Desired: desired, Rendered: current}
	}
	listed := map[string]bool{}
	draining := map[string]agentconfig.BackendDrain{}
	for _, r := range obs.Reports {
		if r == nil {
			continue
		}
		for _, h := range r.Backends {
			listed[h] = true
		}
		for _, d := range r.Draining {
			listed[d.Host] = true
			draining[d.Host] = d
		}
	}
	out := ScaleIn{Desired: desired, Rendered: desired}
	for i := desired; i < current && int(i) < len(hosts); i++ {
		h := hosts[i]
		if !listed[h] {
			continue
		}
		d, dec := draining[h]
		out.Kept = append(out.Kept, KeptBackend{Host: h, Decommissioned: dec, TabletNum: d.TabletNum})
		out.Rendered = i + 1
	}
	if len(out.Kept) > 0 {
		out.State = ScaleInDraining
		for _, r := range obs.Reports {
			if r != nil && r.DecommissionRefused != "" {
				out.Refused = r.DecommissionRefused
				break
			}
		}
	}
	return out
}

// applyScaleIn holds the BE pods of a freshly built entry that StarRocks
// still needs: agentConfig.backends keeps the spec's hosts (so the agent
// decommissions the others) while backend.replicas and hosts cover the kept pods.
// With hold set (a backup or restore job runs) the agent is not told of
// BEs it was not already told to decommission: told is the last valid
// entry of this object (nil: none, so every pod of the StatefulSet stays a
// member). A decommission already under way is not undone.
func applyScaleIn(e *Instance, obs BackendObservation, domain, hold string, told *Instance) ScaleIn {
	n := e.Backend.Replicas
	if obs.Replicas == nil || *obs.Replicas <= n {
		return ScaleIn{Desired: n, Rendered: n}
	}
	hosts := podHosts(e.Names.BackendStatefulSet, e.Names.BackendHeadlessService, e.Namespace, domain, *obs.Replicas)
	if hold != "" {
		keep := *obs.Replicas
		if told != nil {
			keep = min(keep, int32(len(told.AgentConfig.Backends)))
		}
		if keep > n {
			e.Backend.Replicas = *obs.Replicas
			e.Backend.Hosts = hosts
			e.AgentConfig.Backends = hosts[:keep]
			return ScaleIn{State: ScaleInHeld, Desired: n, Rendered: *obs.Replicas, Held: hold}
		}
	}
	s := BackendReplicas(n, *obs.Replicas, hosts, obs)
	e.Backend.Replicas = s.Rendered
	e.Backend.Hosts = hosts[:s.Rendered]
	return s
}

// describeScaleIn reports the scale-in state of an entry rendered as it was
// (the last valid one): nothing is decided, the entry is only read.
func describeScaleIn(e *Instance, obs BackendObservation) ScaleIn {
	n := int32(len(e.AgentConfig.Backends))
	if e.Backend.Replicas <= n {
		return ScaleIn{Desired: e.Backend.Replicas, Rendered: e.Backend.Replicas}
	}
	s := BackendReplicas(n, e.Backend.Replicas, e.Backend.Hosts, obs)
	s.Rendered = e.Backend.Replicas
	return s
}

// checkScaling applies classrules.CheckScaling as the hooks know the facts:
// the BE count in effect is the one the trusted last valid entry told the
// agent (else the BE StatefulSet's, for an instance whose memory is lost),
// and a scale-in is pending while the StatefulSet keeps more pods than that.
// Unlike the webhook, which compares with the previous edit, this compares
// with what runs, so edits that raced past the webhook (or past an outage)
// still go one BE at a time.
func checkScaling(sr *v1alpha1.Starrocks, last *Instance, obs BackendObservation) classrules.Violations {
	f := classrules.ScalingFacts{MaxReplicationNum: obs.MaxReplicationNum, MaxReplicationTable: obs.MaxReplicationTable}
	switch {
	case last != nil && last.UID == string(sr.UID):
		f.Backends = int32(len(last.AgentConfig.Backends))
	case obs.Replicas != nil:
		f.Backends = *obs.Replicas
	}
	f.ScaleInPending = obs.Replicas != nil && *obs.Replicas > f.Backends
	return classrules.CheckScaling(sr.Spec, f)
}
