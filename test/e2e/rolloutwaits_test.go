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

package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// testUpgradeWaitsForHealthyTabletsAndTheImageOnEveryFrontend upgrades the
// module while the test plays the kubelet and the agents: the next BE goes
// only once StarRocks counts no unhealthy tablet, and the FEs only once
// the leader wrote a new metadata image after ALTER SYSTEM CREATE IMAGE
// and every other FE has it, RolledOut saying what it waits for.
func testUpgradeWaitsForHealthyTabletsAndTheImageOnEveryFrontend(t *testing.T, e *env, upgraded func()) {
	const ns, name = "team-w", "olap"
	newVersion := desired.StarRocksVersion + "-8f0ab1c"
	u := newUpgradeCluster(t, e, ns, name)
	e, fe, be, pods, host, versions := u.e, u.fe, u.be, u.pods, u.host, u.versions
	const leader = "d8ms-sr-olap-1"
	// What the agents report: each FE's newest image, the leader's image
	// request and the tablets StarRocks counts unhealthy.
	images := map[string]int64{fe + "-0": 500, fe + "-1": 500, fe + "-2": 500}
	var baseline int64
	var requestedAt string
	unhealthy := int64(0)
	report := func() {
		t.Helper()
		var nodes []agentconfig.NodeStatus
		for _, p := range pods {
			nodes = append(nodes, agentconfig.NodeStatus{Host: host(p), Alive: true, Version: versions[p]})
		}
		m := &agentconfig.MembershipStatus{Leader: host(leader), Nodes: nodes,
			ImageBaseline: baseline, ImageRequestedAt: requestedAt, Tablets: &agentconfig.TabletsStatus{Unhealthy: unhealthy}}
		// The real agent reports the image it created with its baseline
		// and request time, all three at once (images/agent agent.go,
		// imageRequest): an echo of createImage without them reads as an
		// agent that created the image long ago, and the FEs would go on.
		// Under addon-operator the hooks ask for the image before the test
		// plays the agent's answer, which the old loop's timing hid.
		if requestedAt != "" {
			m.ImageCreated = e.agentConfig(ns, name).CreateImage
		}
		if unhealthy != 0 {
			m.Tablets.Since = time.Now().UTC().Format(time.RFC3339)
		}
		for _, p := range pods {
			if strings.HasPrefix(p, be) {
				m.Backends = append(m.Backends, host(p))
			} else {
				m.Frontends = append(m.Frontends, host(p))
			}
		}
		for _, p := range []string{fe + "-0", fe + "-1", fe + "-2"} {
			st := agentconfig.Status{TLS: agentconfig.TLSStatus{Ready: true}, ImageJournalID: images[p],
				LastApply: agentconfig.ApplyStatus{Time: time.Now().UTC().Format(time.RFC3339), Succeeded: true},
				UpdatedAt: time.Now().UTC().Format(time.RFC3339)}
			if p == leader {
				st.Membership = m
			}
			e.reportAgentStatus(ns, p, st)
		}
	}
	report()
	e.waitCondition(ns, name, "RolledOut", "True")

	uids := e.podUIDs(ns, pods)
	upgraded()
	restarted := func(step, pod string) {
		t.Helper()
		e.eventually(step+": pod "+pod+" restarted", func() (bool, string) {
			now := e.podUIDs(ns, pods)
			return now[pod] != "" && now[pod] != uids[pod], fmt.Sprintf("uid %q", now[pod])
		})
		e.markPodReady(ns, pod)
		versions[pod] = newVersion
		uids = e.podUIDs(ns, pods)
	}
	// holds checks that RolledOut says why and that no pod moves meanwhile.
	holds := func(what, says string) {
		t.Helper()
		e.eventually("RolledOut waits for "+what, func() (bool, string) {
			_, reason, message := e.condition(ns, name, "RolledOut")
			return reason == "RolloutWaiting" && strings.Contains(message, says), reason + ": " + message
		})
		time.Sleep(1500 * time.Millisecond) // more passes: none may restart a pod
		if now := e.podUIDs(ns, pods); fmt.Sprint(now) != fmt.Sprint(uids) {
			t.Fatalf("a pod was restarted while the rollout waited for %s: %v, was %v", what, now, uids)
		}
	}

	restarted("BE 1", be+"-2")
	// be-2 is back on the new version, but replicas it missed are not
	// cloned yet.
	unhealthy = 5
	report()
	holds("healthy tablets", "The next BE restart waits until every tablet is healed: StarRocks counts 5 unhealthy tablets")
	unhealthy = 0
	report()
	restarted("BE 2", be+"-1")
	report()
	restarted("BE 3", be+"-0")
	report()

	// The leader's agent ran ALTER SYSTEM CREATE IMAGE: the statement
	// returned, the image is not written yet.
	e.eventually("agent.json asks for the image", func() (bool, string) {
		got := e.agentConfig(ns, name).CreateImage
		return got != "", "createImage " + got
	})
	baseline, requestedAt = 500, time.Now().UTC().Format(time.RFC3339)
	report()
	holds("the leader's new image", "the FEs wait for the FE leader to write a new metadata image after ALTER SYSTEM CREATE IMAGE (its newest is image.500)")
	images[leader] = 1000
	images[fe+"-2"] = 1000
	report()
	holds("the image on every follower", "FE "+fe+"-0 to receive the leader's new metadata image image.1000")
	images[fe+"-0"] = 1000
	report()
	restarted("FE follower", fe+"-2")
}

// reportAgentStatus plays the agent of pod: its status annotation.
func (e *env) reportAgentStatus(namespace, pod string, st agentconfig.Status) {
	e.t.Helper()
	data, _ := json.Marshal(st)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{agentconfig.StatusAnnotation: string(data)}}})
	e.patchPodAsAgent(namespace, pod, patch)
}
