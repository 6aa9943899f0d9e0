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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// SnapRolloutPods are every pod of every instance (FE, BE and CN): the rollout
// restarts them one at a time (desired.DecideRollout).
const SnapRolloutPods = "rollout_pods"

// RolledOut reasons.
const (
	ReasonPodsUpToDate  = "PodsUpToDate"
	ReasonRollingOut    = "RollingOut"
	ReasonRolloutWaits  = "RolloutWaiting"
	revisionLabel       = "controller-revision-hash"
	rolloutPodsBindings = `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), uid: (.metadata.uid | str),` +
		` instance: (.metadata.labels["` + shared.LabelInstance + `"] | str), component: (.metadata.labels["` + shared.LabelComponent + `"] | str),` +
		` revision: (.metadata.labels["` + revisionLabel + `"] | str),` +
		` owner: ([(.metadata.ownerReferences // [])[] | select(.controller == true and .kind == "StatefulSet") | {name: (.name | str), uid: (.uid | str)}][0] // null),` +
		` ready: ([(.status.conditions // [])[] | select(.type == "Ready") | .status == "True"][0] // false),` +
		// Why the scheduler does not place the pod (PodScheduled=False:
		// reason Unschedulable, "0/3 nodes are available: 3 Insufficient
		// cpu."); both cut as every message the hook reads.
		` unschedulable: ([(.status.conditions // [])[] | select(.type == "PodScheduled" and .status == "False") | {reason: (.reason | str | cutmsg), message: (.message | str | cutmsg)}][0] // null),` +
		` terminating: (.metadata.deletionTimestamp != null),` +
		// The first container the kubelet cannot pull the image of
		// (pullfailure.go); its message is the kubelet's, cut.
		` pullFailure: ([((.status.initContainerStatuses // []) + (.status.containerStatuses // []))[] | select(.state.waiting.reason == "` + waitingImagePullBackOff + `" or .state.waiting.reason == "` + waitingErrImagePull + `") |` +
		` {container: (.name | str | cut), reason: (.state.waiting.reason | str), message: (.state.waiting.message | str | cutmsg)}][0] // null),` +
		// The agent's report of the nodes and of its FE's join; anything
		// unreadable, or beyond the bounds of a report (name, few), reads as
		// no report (the rollout then waits).
		` agent: (try ((.metadata.annotations // {})["` + agentconfig.StatusAnnotation + `"] | fromjson |` +
		` {leader: (.membership.leader | str | name("membership.leader")), imageCreated: (.membership.imageCreated | str | name("membership.imageCreated")),` +
		// Numbers outside what the agent writes read as none (images) or
		// unknown (-1, tablets), never as a decoding error.
		` image: (.imageJournalId | num | if . == floor and . >= 0 and . < 1000000000000 then . else 0 end),` +
		` imageBaseline: (.membership.imageBaseline | num | if . == floor and . >= 0 and . < 1000000000000 then . else 0 end),` +
		` imageRequestedAt: (.membership.imageRequestedAt | str | name("membership.imageRequestedAt")),` +
		` tablets: (if (.membership.tablets | type) == "object" then {unhealthy: (.membership.tablets.unhealthy | if type == "number" and . == floor and . >= -1 and . < 1000000000000 then . else -1 end), since: (.membership.tablets.since | str | name("membership.tablets.since"))} else null end),` +
		` nodes: (if (.membership.nodes | type) == "array" then [.membership.nodes | few("membership.nodes")[] | {host: (.host | str | name("membership.nodes[].host")), alive: (.alive == true), version: (.version | str | name("membership.nodes[].version"))}] else null end),` +
		` join: (if (.join | type) == "object" then {reason: (.join.reason | str | cutmsg), message: (.join.message | str | cutmsg)} else null end)}) catch null)}`
)

var revisionName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// rolloutPodsFilter is the jq filter of SnapRolloutPods.
const rolloutPodsFilter = shared.JqTypes + rolloutPodsBindings

// RolloutPodSnap is the jq-filtered pod of an instance.
type RolloutPodSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID is the precondition of the pod's deletion: a pod re-created
	// under the name meanwhile is not deleted again.
	UID         string           `json:"uid"`
	Instance    string           `json:"instance"`
	Component   string           `json:"component"`
	Revision    string           `json:"revision"`
	Owner       *OwnerSnap       `json:"owner"`
	Ready       bool             `json:"ready"`
	Terminating bool             `json:"terminating"`
	Agent       *RolloutAgentRep `json:"agent"`
	// PullFailure is a container whose image the kubelet cannot pull.
	PullFailure *PullFailure `json:"pullFailure"`
	// Unschedulable is the pod's PodScheduled condition while it is
	// False; nil once the pod is placed.
	Unschedulable *PodUnschedulable `json:"unschedulable"`
}

// PodUnschedulable is why the scheduler does not place a pod.
type PodUnschedulable struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// RolloutAgentRep is the part of an agent's status the rollout reads.
type RolloutAgentRep struct {
	Leader       string `json:"leader"`
	ImageCreated string `json:"imageCreated"`
	// Image is the newest image of the pod's own FE; ImageBaseline,
	// ImageRequestedAt and Tablets count in the leader's report only.
	Image            int64                      `json:"image"`
	ImageBaseline    int64                      `json:"imageBaseline"`
	ImageRequestedAt string                     `json:"imageRequestedAt"`
	Tablets          *agentconfig.TabletsStatus `json:"tablets"`
	Nodes            []agentconfig.NodeStatus   `json:"nodes"`
	Join             *agentconfig.JoinStatus    `json:"join"`
}

// PodRestart is a pod the rollout deletes; its StatefulSet recreates it
// from the new template.
type PodRestart struct {
	Namespace, Name string
	// UID of the pod in the snapshot ("" when it has none).
	UID string
}

// rolloutObservation is what the rollout of one instance reads.
type rolloutObservation struct {
	// computes are the CN pods of a shared-data instance.
	frontends, backends, computes map[int]RolloutPodSnap
	// reports are the agent reports of the FE pods, by pod name.
	reports map[string]*RolloutAgentRep
}

// observeRollout groups the pods of every instance: a pod counts only when
// its controller is the instance's FE, BE or CN StatefulSet, by name and UID.
func observeRollout(s State) map[string]*rolloutObservation {
	owners := map[string]string{} // namespace/StatefulSet name -> UID
	for _, st := range s.StatefulSets {
		if st.Unreadable == "" {
			owners[desired.Key(st.Namespace, st.Name)] = st.UID
		}
	}
	out := map[string]*rolloutObservation{}
	for _, p := range s.RolloutPods {
		names := desired.NamesFor(p.Instance)
		var sts string
		switch p.Component {
		case shared.ComponentFrontend:
			sts = names.FrontendStatefulSet
		case shared.ComponentBackend:
			sts = names.BackendStatefulSet
		case shared.ComponentCompute:
			sts = names.ComputeStatefulSet
		default:
			continue
		}
		if p.Owner == nil || p.Owner.Name != sts || p.Owner.UID == "" || owners[desired.Key(p.Namespace, sts)] != p.Owner.UID {
			continue
		}
		ordinal, ok := strings.CutPrefix(p.Name, sts+"-")
		n, err := strconv.Atoi(ordinal)
		if !ok || err != nil || n < 0 || strconv.Itoa(n) != ordinal {
			continue
		}
		key := desired.Key(p.Namespace, p.Instance)
		o := out[key]
		if o == nil {
			o = &rolloutObservation{frontends: map[int]RolloutPodSnap{}, backends: map[int]RolloutPodSnap{}, computes: map[int]RolloutPodSnap{}, reports: map[string]*RolloutAgentRep{}}
			out[key] = o
		}
		switch p.Component {
		case shared.ComponentBackend:
			o.backends[n] = p
			continue
		case shared.ComponentCompute:
			o.computes[n] = p
			continue
		}
		o.frontends[n] = p
		if p.Agent != nil {
			o.reports[p.Name] = p.Agent
		}
	}
	return out
}

// planRollout is the rollout of an instance that has an entry: which pod to
// restart now, and what RolledOut says. The workers are the BEs, or the CNs
// of a shared-data instance (its entry has Compute): each instance has one
// kind, and a StatefulSet of the other kind is not the module's to restart.
func planRollout(e *desired.Instance, o *rolloutObservation, fe, be, cn *StatefulSetState, domain string, now time.Time) desired.Rollout {
	if o == nil || fe == nil || (e.Compute == nil && be == nil) || (e.Compute != nil && cn == nil) {
		return desired.Rollout{}
	}
	in := desired.RolloutInput{Version: desired.StarRocksVersion, Now: now}
	in.Frontends = rolloutPods(o.frontends, fe, e.Names.FrontendStatefulSet, e.Names.FrontendHeadlessService, e.Namespace, domain)
	for i, p := range in.Frontends {
		if r := o.reports[p.Name]; r != nil && p.Name != "" {
			in.Frontends[i].Image = r.Image
		}
	}
	if e.Compute != nil {
		in.Computes = rolloutPods(o.computes, cn, e.Names.ComputeStatefulSet, e.Names.ComputeHeadlessService, e.Namespace, domain)
	} else {
		in.Backends = rolloutPods(o.backends, be, e.Names.BackendStatefulSet, e.Names.BackendHeadlessService, e.Namespace, domain)
	}
	// The leader's agent reports the nodes. Only a report whose leader is
	// the reporting pod itself counts, and only when exactly one pod says
	// it leads: a former leader's report lingers until its agent
	// republishes, and two claims leave the leader unknown (the rollout
	// then waits rather than restart the wrong FE last).
	var claims []*RolloutAgentRep
	pods := make([]string, 0, len(o.reports))
	for name := range o.reports {
		pods = append(pods, name)
	}
	sort.Strings(pods)
	for _, name := range pods {
		r := o.reports[name]
		if r.Leader != "" && strings.HasPrefix(strings.ToLower(r.Leader), strings.ToLower(name)+".") {
			claims = append(claims, r)
		}
	}
	in.ImageWanted = e.AgentConfig.CreateImage
	if len(claims) == 1 {
		in.Leader, in.ImageCreated = claims[0].Leader, claims[0].ImageCreated
		// A time that does not parse reads as none: the image wait falls
		// back to the statement alone, the tablet wait has no bound yet.
		if at, err := time.Parse(time.RFC3339, claims[0].ImageRequestedAt); err == nil {
			in.ImageBaseline, in.ImageRequestedAt = claims[0].ImageBaseline, at
		}
		if t := claims[0].Tablets; t != nil {
			since, _ := time.Parse(time.RFC3339, t.Since)
			in.Tablets = &desired.TabletHealth{Unhealthy: t.Unhealthy, Since: since, NotRead: t.NotRead}
		}
		if claims[0].Nodes != nil {
			in.Nodes = desired.NodesByHost(claims[0].Nodes)
		}
	}
	return desired.DecideRollout(in)
}

// imageToken is agentConfig.createImage: the FE StatefulSet's update
// revision while an FE pod of the instance runs an older one.
func imageToken(o *rolloutObservation, fe *StatefulSetState) string {
	// A ControllerRevision name; openapi/values.yaml has the same pattern.
	if o == nil || fe == nil || len(fe.UpdateRevision) > 253 || !revisionName.MatchString(fe.UpdateRevision) {
		return ""
	}
	for _, p := range o.frontends {
		if p.Revision != fe.UpdateRevision {
			return fe.UpdateRevision
		}
	}
	return ""
}

// backendRestartPending says whether a BE pod runs another revision than
// the BE StatefulSet's update revision: the rollout restarts it, and waits
// for healthy tablets before each BE restart (agentConfig.tabletHealth).
func backendRestartPending(o *rolloutObservation, be *StatefulSetState) bool {
	if o == nil || be == nil || be.UpdateRevision == "" {
		return false
	}
	for _, p := range o.backends {
		if p.Revision != be.UpdateRevision {
			return true
		}
	}
	return false
}

// rolloutPods lists the pods of a StatefulSet by ordinal up to its replicas
// (a missing ordinal is the zero pod: being recreated).
func rolloutPods(byOrdinal map[int]RolloutPodSnap, st *StatefulSetState, sts, headless, namespace, domain string) []desired.RolloutPod {
	out := make([]desired.RolloutPod, 0, st.Replicas)
	for i := 0; i < int(st.Replicas); i++ {
		p, ok := byOrdinal[i]
		if !ok {
			out = append(out, desired.RolloutPod{})
			continue
		}
		out = append(out, desired.RolloutPod{
			Name:        p.Name,
			Host:        fmt.Sprintf("%s.%s.%s.svc.%s", p.Name, headless, namespace, domain),
			Updated:     st.UpdateRevision == "" || p.Revision == st.UpdateRevision,
			Ready:       p.Ready,
			Terminating: p.Terminating,
		})
	}
	return out
}

// rolledOut is the RolledOut condition.
func rolledOut(r desired.Rollout) (bool, string, string) {
	switch r.State {
	case desired.RolloutRestarting:
		return false, ReasonRollingOut, r.Message
	case desired.RolloutWaiting:
		return false, ReasonRolloutWaits, r.Message
	}
	return true, ReasonPodsUpToDate, "Every pod runs the current template of its StatefulSet."
}

// frontendJoin is the join report of an FE pod whose meta is empty on a
// bootstrapped instance, if any: it explains why that FE is not Ready.
// Only the agent's two reasons are taken (a tenant can write the
// annotation, and a reason that is not a condition reason would make the
// apiserver refuse the status patch).
func frontendJoin(o *rolloutObservation) (pod string, j *agentconfig.JoinStatus) {
	if o == nil {
		return "", nil
	}
	ordinals := make([]int, 0, len(o.frontends))
	for n := range o.frontends {
		ordinals = append(ordinals, n)
	}
	sort.Ints(ordinals)
	for _, n := range ordinals {
		p := o.frontends[n]
		if p.Agent == nil || p.Agent.Join == nil {
			continue
		}
		switch p.Agent.Join.Reason {
		case agentconfig.JoinReasonRejoining, agentconfig.JoinReasonWaitingForLeader:
			return p.Name, p.Agent.Join
		}
	}
	return "", nil
}

// unschedulablePod is the first pod of the instance (FE pods, then BE pods,
// then CN pods, by ordinal) the scheduler cannot place, and why; "" when
// there is none.
func unschedulablePod(o *rolloutObservation) (string, *PodUnschedulable) {
	if o == nil {
		return "", nil
	}
	for _, pods := range []map[int]RolloutPodSnap{o.frontends, o.backends, o.computes} {
		ordinals := make([]int, 0, len(pods))
		for n := range pods {
			ordinals = append(ordinals, n)
		}
		sort.Ints(ordinals)
		for _, n := range ordinals {
			if p := pods[n]; p.Unschedulable != nil && !p.Terminating {
				return p.Name, p.Unschedulable
			}
		}
	}
	return "", nil
}
