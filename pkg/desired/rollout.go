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
	"fmt"
	"strings"
	"time"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/plural"
)

// StarRocksVersion is the StarRocks version of the images the module ships
// (oss.yaml, checked by TestStarRocksVersionMatchesOSS): a restarted pod
// counts as back only once StarRocks reports it on this version.
const StarRocksVersion = "4.1.7"

// Components of a rollout, as the pods' component label names them.
const (
	ComponentFrontend = "frontend"
	ComponentBackend  = "backend"
	ComponentCompute  = "compute"
)

// RolloutPod is one pod of an instance's StatefulSets.
type RolloutPod struct {
	Name string
	// Host is the pod's FQDN, as StarRocks lists the node.
	Host string
	// Updated is true when the pod runs the StatefulSet's update revision
	// (its controller-revision-hash label is status.updateRevision).
	Updated bool
	// Ready is the pod's Ready condition (the kubelet's probes).
	Ready bool
	// Terminating is true once the pod has a deletionTimestamp.
	Terminating bool
	// Image is the journal id of the newest metadata image in the FE's
	// meta directory as the pod's agent reports it (FE pods; 0 none or
	// not reported).
	Image int64
}

// RolloutNode is a node as the FE leader's agent reports it.
type RolloutNode struct {
	Alive   bool
	Version string
}

// RolloutInput is what the rollout decision of one instance reads.
type RolloutInput struct {
	// Frontends, Backends and Computes (the CNs of a shared-data
	// instance) are the StatefulSets' pods by ordinal; a missing pod
	// (deleted, not yet recreated) is the zero value with an empty Name.
	// Nil when the StatefulSet does not exist.
	Frontends, Backends, Computes []RolloutPod
	// Leader is the FE leader's host as its agent reports it; "" unknown.
	Leader string
	// Nodes are the FEs, BEs and CNs the leader's agent reports, by host; nil
	// when it reports none: with Leader set, an agent older than node
	// reports (the first upgrade to this module version), whose leader
	// report is all there is.
	Nodes map[string]RolloutNode
	// Version the restarted nodes must report (StarRocksVersion).
	Version string
	// ImageWanted is agentConfig.createImage, ImageCreated what the
	// leader's agent reports it ran ALTER SYSTEM CREATE IMAGE for: no FE
	// restarts before they match.
	ImageWanted, ImageCreated string
	// ImageBaseline is the newest image of the leader's FE when its agent
	// ran ALTER SYSTEM CREATE IMAGE, ImageRequestedAt when (zero: an agent
	// that does not report it, the rollout then only waits for the
	// statement).
	ImageBaseline    int64
	ImageRequestedAt time.Time
	// Tablets is the leader agent's report of SHOW PROC '/statistic'; nil
	// when it sends none (an agent older than tablet reports: the FE
	// agents of the first upgrade to this module version, replaced only
	// after every BE).
	Tablets *TabletHealth
	// Now is when the decision is made, for the bounded waits.
	Now time.Time
}

// TabletHealth is the number of unhealthy tablets StarRocks counts.
type TabletHealth struct {
	// Unhealthy is column UnhealthyTabletNum of the Total row; -1 when
	// the agent could not read it.
	Unhealthy int64
	// Since is when the agent first saw it non-zero without a zero in
	// between (zero time while it is 0).
	Since time.Time
	// NotRead: the agent has not read it yet (it reads it only while a BE
	// restart is pending, agentconfig.Config.TabletHealth): not healthy.
	NotRead bool
}

// The bounded waits of a rollout. Past either bound the rollout goes on
// and says so: waiting forever would hold every later change of the
// instance (certificate renewals included) on something the module
// cannot repair, while both waits only narrow a risk. A FE restarted
// without a fresh image replays the BDB journal from its older image, and
// a tablet that stays unhealthy (a replica on a BE that cannot take it, a
// table with more replicas than BEs) does not heal by waiting longer.
const (
	// ImageWaitLimit bounds the wait for the metadata image: writing and
	// pushing an image takes seconds to minutes even for large catalogs.
	ImageWaitLimit = 10 * time.Minute
	// TabletWaitLimit bounds the wait for healthy tablets before the next
	// BE restart: clones of the replicas a restarted BE missed finish in
	// minutes unless the tablets are large.
	TabletWaitLimit = 30 * time.Minute
)

// RolloutState says where a rollout stands.
type RolloutState string

const (
	// RolloutDone: every pod runs its StatefulSet's current template.
	RolloutDone RolloutState = ""
	// RolloutRestarting: Delete names the pod restarted now.
	RolloutRestarting RolloutState = "Restarting"
	// RolloutWaiting: a restarted pod is not back yet, or the leader is
	// not known; nothing is restarted until it is.
	RolloutWaiting RolloutState = "Waiting"
)

// Rollout is the decision for one instance.
type Rollout struct {
	State RolloutState
	// Delete is the pod to delete now (the StatefulSet controller
	// recreates it from the new template), "" for none.
	Delete string
	// Message says what waits for what, for a person.
	Message string
}

// DecideRollout restarts the pods of an instance whose template changed
// one at a time, in the order StarRocks asks for an upgrade: every BE or
// CN first, then the FE followers, the FE leader last ("Upgrade
// StarRocks", https://docs.starrocks.io/docs/deployment/upgrade/: BEs and
// CNs are backward compatible with FEs, a wrong order can leave the FEs
// incompatible with the BEs and CNs; followers before the leader). The
// StarRocks operator orders an upgrade the same way (starrocks-kubernetes-
// operator pkg/controllers/starrockscluster_controller.go
// getControllersInOrder: be, cn, fe). The StatefulSets use updateStrategy
// OnDelete, so a pod changes only when this deletes it, and the next one
// goes only after the previous one is back: Ready by its probes and
// reported alive on Version by the leader's agent (SHOW BACKENDS/COMPUTE
// NODES/FRONTENDS, columns Alive and Version). A change of the FE pod
// template alone (the agent's image, a certificate revision) restarts FEs
// only, in the same order.
//
// It is a pure function of the cluster as observed: pods that are
// terminating or missing count as a restart in flight, whoever caused it.
func DecideRollout(in RolloutInput) Rollout {
	workers := in.workers()
	outdated := 0
	for _, g := range append(workers, rolloutGroup{what: "FE", pods: in.Frontends}) {
		outdated += g.outdated()
	}
	if outdated == 0 {
		return Rollout{}
	}
	// One disruption at a time: a pod on its way out or not back yet
	// blocks the next restart. While a BE or CN is outdated the FEs are
	// not part of the rollout yet (they go after them), so an FE that is
	// down for its own reasons neither holds them back nor is named as if
	// the rollout had restarted it: a BE-only change (BE memory, be.conf)
	// says what it does to the BEs.
	groups := append([]rolloutGroup(nil), workers...)
	groups = append(groups, rolloutGroup{what: "FE", pods: in.Frontends})
	for _, group := range groups {
		for i, p := range group.pods {
			switch {
			case p.Name == "":
				return waiting(fmt.Sprintf("%s pod %d is being recreated by its StatefulSet; %s of the instance wait for it.", group.what, i, plural.Count(outdated, "pod")))
			case p.Terminating:
				return waiting(fmt.Sprintf("%s pod %s is stopping; %s of the instance wait for it.", group.what, p.Name, plural.Count(outdated, "pod")))
			case p.Updated:
				// "runs", not "restarted": a pod of a component this change
				// leaves alone runs the current template without a restart.
				if why := in.notBack(p); why != "" {
					return waiting(fmt.Sprintf("%s pod %s runs the current template and %s; %s still to restart wait for it.", group.what, p.Name, why, plural.Count(outdated, "pod")))
				}
			}
		}
		if group.outdated() > 0 {
			break
		}
	}
	for _, group := range workers {
		// A pod that is not Ready is down already: restarting it first
		// costs nothing, while restarting a Ready one next to it would
		// take two BEs (a write quorum) or two CNs (the query capacity)
		// down at once.
		for i := len(group.pods) - 1; i >= 0; i-- {
			if p := group.pods[i]; !p.Updated && !p.Ready {
				return Rollout{State: RolloutRestarting, Delete: p.Name, Message: fmt.Sprintf(
					"Restarting %s pod %s with the new template first: it is not Ready anyway (%ss first, one at a time; %s to restart, the FEs after the %ss).", group.what, p.Name, group.what, plural.Count(outdated, "pod"), group.what)}
			}
		}
		// From the highest ordinal down like a StatefulSet rolls.
		for i := len(group.pods) - 1; i >= 0; i-- {
			p := group.pods[i]
			if p.Updated {
				continue
			}
			note := ""
			if group.what == "BE" {
				// A BE back on the new version can still hold replicas
				// that missed loads while it was down; restarting the next
				// one before they are cloned can leave a tablet one healthy
				// replica short of its write quorum. A CN holds no tablet
				// (the data is in the object storage, its disk a cache):
				// nothing to heal between two CNs.
				var wait string
				if note, wait = in.tabletWait(outdated); wait != "" {
					return waiting(wait)
				}
			} else {
				// The CN's preStop runs stop_cn.sh -g: it stops taking
				// fragments and exits once the running ones finish
				// ("Upgrade CN": stop it gracefully, it waits for the
				// running tasks), within the pod's grace period.
				note = " The CN finishes its running queries before it stops (its preStop runs stop_cn.sh -g)."
			}
			return Rollout{State: RolloutRestarting, Delete: p.Name, Message: fmt.Sprintf(
				"Restarting %s pod %s with the new template (%ss first, one at a time; %s to restart, the FEs after the %ss).%s", group.what, p.Name, group.what, plural.Count(outdated, "pod"), group.what, note)}
		}
	}
	every := "Every BE runs the new template"
	done := "every BE is done"
	if len(in.Backends) == 0 && len(in.Computes) > 0 {
		every, done = "Every CN runs the new template", "every CN is done"
	}
	if in.Leader == "" {
		return waiting(fmt.Sprintf("%s; the FEs restart followers first and the leader last, and no agent has reported which FE leads yet (%s to restart).", every, plural.Count(outdated, "pod")))
	}
	// StarRocks asks for a fresh metadata image before FEs move to a new
	// version ("Upgrade StarRocks": ALTER SYSTEM CREATE IMAGE, then wait
	// until it is pushed to the followers); an agent older than node
	// reports (Nodes nil) cannot run it and is replaced by this rollout.
	if in.ImageWanted != "" && in.ImageCreated != in.ImageWanted && in.Nodes != nil {
		return waiting(fmt.Sprintf("%s; the FEs wait for the leader's agent to create a metadata image (ALTER SYSTEM CREATE IMAGE) before they restart (%s to restart).", every, plural.Count(outdated, "pod")))
	}
	imageNote := ""
	if in.ImageWanted != "" && in.ImageCreated == in.ImageWanted && !in.ImageRequestedAt.IsZero() {
		var wait string
		imageNote, wait = in.imageWait(outdated, every)
		if wait != "" {
			return waiting(wait)
		}
	}
	var leader, ready, down *RolloutPod
	for i := len(in.Frontends) - 1; i >= 0; i-- {
		p := &in.Frontends[i]
		switch {
		case p.Updated:
		case sameHost(p.Host, in.Leader):
			leader = p
		case !p.Ready && down == nil:
			down = p
		case p.Ready && ready == nil:
			ready = p
		}
	}
	switch {
	case down != nil:
		return Rollout{State: RolloutRestarting, Delete: down.Name, Message: fmt.Sprintf(
			"Restarting FE follower %s with the new template first: it is not Ready anyway (%s; followers one at a time, the leader last; %s to restart).%s", down.Name, done, plural.Count(outdated, "pod"), imageNote)}
	case ready != nil && leader != nil && !leader.Ready:
		return waiting(fmt.Sprintf("The FE leader %s is not Ready: no follower restarts until it is, or the FEs could lose their majority (%s to restart).", leader.Name, plural.Count(outdated, "pod")))
	case ready != nil:
		return Rollout{State: RolloutRestarting, Delete: ready.Name, Message: fmt.Sprintf(
			"Restarting FE follower %s with the new template (%s; followers one at a time, the leader last; %s to restart).%s", ready.Name, done, plural.Count(outdated, "pod"), imageNote)}
	case leader != nil:
		return Rollout{State: RolloutRestarting, Delete: leader.Name, Message: fmt.Sprintf(
			"Restarting the FE leader %s with the new template, the last pod of the rollout: the followers elect a new leader meanwhile.%s", leader.Name, imageNote)}
	}
	return waiting(fmt.Sprintf("No FE pod to restart matches the leader %s the agent reports (%s to restart).", in.Leader, plural.Count(outdated, "pod")))
}

func waiting(msg string) Rollout { return Rollout{State: RolloutWaiting, Message: msg} }

// rolloutGroup is the pods of one component, named as messages name it.
type rolloutGroup struct {
	what string
	pods []RolloutPod
}

func (g rolloutGroup) outdated() int {
	n := 0
	for _, p := range g.pods {
		if p.Name != "" && !p.Updated {
			n++
		}
	}
	return n
}

// workers are the BEs, then the CNs: the pods that restart before the FEs.
func (in RolloutInput) workers() []rolloutGroup {
	return []rolloutGroup{{what: "BE", pods: in.Backends}, {what: "CN", pods: in.Computes}}
}

// tabletWait says why the next BE restart waits for tablets (wait), or
// what a restart past the bound leaves behind (note, for the message).
func (in RolloutInput) tabletWait(outdated int) (note, wait string) {
	t := in.Tablets
	if t == nil || t.Unhealthy == 0 && !t.NotRead || in.Nodes == nil {
		return "", ""
	}
	what := fmt.Sprintf("StarRocks counts %s (SHOW PROC '/statistic', UnhealthyTabletNum)", plural.Count(int(t.Unhealthy), "unhealthy tablet"))
	switch {
	case t.NotRead:
		// Asked in the agent's configuration with the rollout; it is
		// read on the agent's next pass.
		return "", fmt.Sprintf("The next BE restart waits until the leader's agent has read the tablet health (SHOW PROC '/statistic', read only while BEs restart) (%s to restart).", plural.Count(outdated, "pod"))
	case t.Unhealthy < 0:
		what = "the leader's agent cannot read the tablet health (SHOW PROC '/statistic')"
	}
	if !t.Since.IsZero() && in.Now.Sub(t.Since) >= TabletWaitLimit {
		return fmt.Sprintf(" %s since %s, longer than the %s the rollout waits for them to heal: it goes on.", capitalize(what), t.Since.UTC().Format(time.RFC3339), TabletWaitLimit), ""
	}
	return "", fmt.Sprintf("The next BE restart waits until %s is healed: %s, at most %s from %s (%s to restart).",
		"every tablet", what, TabletWaitLimit, sinceText(t.Since), plural.Count(outdated, "pod"))
}

// imageWait says why the FE restarts wait for the metadata image (wait),
// or what a restart past the bound goes on without (note). The leader's
// FE writes the image asynchronously after ALTER SYSTEM CREATE IMAGE
// (fe-core GlobalStateMgr.triggerNewImage only sets
// JournalWriter.setForceRollJournal; leader/CheckpointController then has
// image.<journal id> written, by a follower it picks or by itself,
// downloads it into the leader's image directory and pushes it to every
// other FE), so the statement returning says nothing yet: the leader's
// newest image must be past the one it had when its agent ran the
// statement, and every other FE that is Ready must have an image at least
// as new. The journal rolls only after its next write (persist/
// JournalWriter.rollJournalAfterBatch), and an idle leader writes one
// every 10 s of its own (the OP_TIMESTAMP_V2 entry of GlobalStateMgr
// .createTimePrinter, a leader daemon), while CheckpointController runs
// every 60 s (FeConstants.checkpoint_interval_second): an idle instance
// has its image within about a minute plus the checkpoint's own time.
// Reaching ImageWaitLimit means the checkpoint or the push failed (fe.log:
// "checkpoint", "push image"). A follower that is not Ready (down, crash
// looping) cannot take the push (CheckpointController.pushImage retries it
// every cycle), so it is not waited for: the leader's new image is what it
// replays from once it is back, and the rollout restarts it first anyway.
func (in RolloutInput) imageWait(outdated int, every string) (note, wait string) {
	var leaderImage int64
	for _, p := range in.Frontends {
		if p.Name != "" && sameHost(p.Host, in.Leader) {
			leaderImage = p.Image
		}
	}
	why := ""
	if leaderImage <= in.ImageBaseline {
		why = fmt.Sprintf("the FE leader to write a new metadata image after ALTER SYSTEM CREATE IMAGE (its newest is image.%d)", leaderImage)
	} else {
		var behind []string
		for _, p := range in.Frontends {
			if p.Name != "" && p.Ready && !sameHost(p.Host, in.Leader) && p.Image < leaderImage {
				behind = append(behind, p.Name)
			}
		}
		if len(behind) > 0 {
			why = fmt.Sprintf("FE %s to receive the leader's new metadata image image.%d", strings.Join(behind, ", "), leaderImage)
		}
	}
	if why == "" {
		return "", ""
	}
	if in.Now.Sub(in.ImageRequestedAt) >= ImageWaitLimit {
		return fmt.Sprintf(" The FEs waited %s for %s: it goes on without it.", ImageWaitLimit, why), ""
	}
	return "", fmt.Sprintf("%s; the FEs wait for %s, at most %s from %s (%s to restart).",
		every, why, ImageWaitLimit, in.ImageRequestedAt.UTC().Format(time.RFC3339), plural.Count(outdated, "pod"))
}

func sinceText(t time.Time) string {
	if t.IsZero() {
		return "now"
	}
	return t.UTC().Format(time.RFC3339)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// notBack says why a restarted pod does not count as back yet ("" when it does).
func (in RolloutInput) notBack(p RolloutPod) string {
	if !p.Ready {
		return "is not Ready yet"
	}
	n, listed := in.Nodes[normalizeHost(p.Host)]
	switch {
	case in.Nodes == nil && in.Leader != "":
		// The running agents predate node reports: they are replaced by
		// this very rollout (FE pods), so Ready is all that can be checked.
		return ""
	case in.Nodes == nil:
		return "is Ready, but no agent of the FE leader has reported the nodes StarRocks lists yet"
	case !listed:
		return "is Ready, but StarRocks does not list it"
	case !n.Alive:
		return "is Ready, but StarRocks does not report it alive yet"
	case !OnVersion(n.Version, in.Version):
		return fmt.Sprintf("is alive, but StarRocks reports it on version %q, not %s", n.Version, in.Version)
	}
	return ""
}

// OnVersion reports whether a Version column ("4.1.7-8f0ab1c", or "4.1.7")
// is the release want.
func OnVersion(reported, want string) bool {
	return reported == want || strings.HasPrefix(reported, want+"-")
}

func sameHost(a, b string) bool { return normalizeHost(a) == normalizeHost(b) }

// normalizeHost makes "A.b." and "a.b" the same host, as the agent does.
func normalizeHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
}

// NodesByHost indexes the nodes an agent reported by their host.
func NodesByHost(nodes []agentconfig.NodeStatus) map[string]RolloutNode {
	out := make(map[string]RolloutNode, len(nodes))
	for _, n := range nodes {
		out[normalizeHost(n.Host)] = RolloutNode{Alive: n.Alive, Version: n.Version}
	}
	return out
}
