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
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestStarRocksVersionMatchesOSS(t *testing.T) {
	b, err := os.ReadFile("../../oss.yaml")
	require.NoError(t, err)
	var entries []struct {
		ID      string `json:"id"`
		Version string `json:"version"`
	}
	require.NoError(t, yaml.Unmarshal(b, &entries))
	for _, e := range entries {
		if e.ID == "starrocks" {
			require.Equal(t, e.Version, StarRocksVersion, "the version restarted nodes must report is the one oss.yaml pins")
			return
		}
	}
	t.Fatal("oss.yaml has no starrocks entry")
}

// cluster is 3 FEs (fe-1 leads) and 3 BEs, all on the current template and
// alive on the old version.
func rolloutCluster() RolloutInput {
	in := RolloutInput{Leader: "fe-1.h", Nodes: map[string]RolloutNode{}, Version: "4.1.7"}
	for _, n := range []string{"be-0", "be-1", "be-2"} {
		in.Backends = append(in.Backends, RolloutPod{Name: n, Host: n + ".h", Updated: true, Ready: true})
		in.Nodes[n+".h"] = RolloutNode{Alive: true, Version: "4.1.7-abc"}
	}
	for _, n := range []string{"fe-0", "fe-1", "fe-2"} {
		in.Frontends = append(in.Frontends, RolloutPod{Name: n, Host: n + ".h", Updated: true, Ready: true})
		in.Nodes[n+".h"] = RolloutNode{Alive: true, Version: "4.1.7-abc"}
	}
	return in
}

// outdate marks every pod as running the previous template, on the old version.
func outdate(in *RolloutInput) {
	for _, pods := range [][]RolloutPod{in.Backends, in.Computes, in.Frontends} {
		for i := range pods {
			pods[i].Updated = false
			in.Nodes[pods[i].Host] = RolloutNode{Alive: true, Version: "4.1.6-old"}
		}
	}
}

// restart plays the StatefulSet controller and the kubelet: the deleted pod
// comes back on the new template, Ready and alive on the new version.
func restart(in *RolloutInput, name string) {
	for _, pods := range [][]RolloutPod{in.Backends, in.Computes, in.Frontends} {
		for i := range pods {
			if pods[i].Name == name {
				pods[i].Updated = true
				in.Nodes[pods[i].Host] = RolloutNode{Alive: true, Version: "4.1.7-abc"}
			}
		}
	}
}

func TestRolloutOrder(t *testing.T) {
	in := rolloutCluster()
	assert.Equal(t, Rollout{}, DecideRollout(in), "nothing to do on the current template")
	outdate(&in)
	var order []string
	for range 7 {
		r := DecideRollout(in)
		if r.State == RolloutDone {
			break
		}
		require.Equal(t, RolloutRestarting, r.State, r.Message)
		order = append(order, r.Delete)
		restart(&in, r.Delete)
	}
	assert.Equal(t, []string{"be-2", "be-1", "be-0", "fe-2", "fe-0", "fe-1"}, order, "BEs first, then followers, the leader last")
	assert.Equal(t, Rollout{}, DecideRollout(in))
}

func TestRolloutWaits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(in *RolloutInput)
		says   string
	}{
		{"a pod that is stopping", func(in *RolloutInput) { in.Backends[2].Terminating = true }, "BE pod be-2 is stopping"},
		{"a pod not recreated yet", func(in *RolloutInput) { in.Backends[2] = RolloutPod{} }, "BE pod 2 is being recreated"},
		{"a restarted pod not Ready", func(in *RolloutInput) { in.Backends[2].Updated, in.Backends[2].Ready = true, false }, "be-2 runs the current template and is not Ready yet"},
		{"a restarted pod StarRocks reports dead", func(in *RolloutInput) {
			in.Backends[2].Updated, in.Backends[2].Ready = true, true
			in.Nodes["be-2.h"] = RolloutNode{Alive: false, Version: "4.1.7-abc"}
		}, "does not report it alive yet"},
		{"a restarted pod alive on the old version", func(in *RolloutInput) {
			in.Backends[2].Updated, in.Backends[2].Ready = true, true
		}, `reports it on version "4.1.6-old", not 4.1.7`},
		{"a restarted pod without any report", func(in *RolloutInput) {
			in.Backends[2].Updated, in.Backends[2].Ready = true, true
			in.Nodes, in.Leader = nil, ""
		}, "no agent of the FE leader has reported"},
		{"an unknown leader once the BEs are done", func(in *RolloutInput) {
			for _, n := range []string{"be-0", "be-1", "be-2"} {
				restart(in, n)
			}
			in.Leader = ""
		}, "no agent has reported which FE leads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rolloutCluster()
			outdate(&in)
			tc.change(&in)
			r := DecideRollout(in)
			assert.Equal(t, RolloutWaiting, r.State)
			assert.Empty(t, r.Delete, "nothing is restarted while another pod is not back")
			assert.Contains(t, r.Message, tc.says)
		})
	}
}

func TestRolloutCreatesAnImageBeforeTheFrontends(t *testing.T) {
	in := rolloutCluster()
	for i := range in.Frontends {
		in.Frontends[i].Updated = false
	}
	in.ImageWanted = "fe-rev-2"
	r := DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State)
	assert.Contains(t, r.Message, "ALTER SYSTEM CREATE IMAGE")
	in.ImageCreated = "fe-rev-1"
	assert.Equal(t, RolloutWaiting, DecideRollout(in).State, "an image of an earlier rollout does not count")
	in.ImageCreated = "fe-rev-2"
	assert.Equal(t, "fe-2", DecideRollout(in).Delete)
}

func TestRolloutWaitsForTheImageOnEveryFrontend(t *testing.T) {
	requested := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	in := rolloutCluster()
	for i := range in.Frontends {
		in.Frontends[i].Updated = false
		in.Frontends[i].Image = 100
	}
	in.ImageWanted, in.ImageCreated = "fe-rev-2", "fe-rev-2"
	in.ImageBaseline, in.ImageRequestedAt, in.Now = 100, requested, requested.Add(time.Minute)

	r := DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State, "the statement returned, the image is not written yet")
	assert.Contains(t, r.Message, "the FE leader to write a new metadata image after ALTER SYSTEM CREATE IMAGE (its newest is image.100)")
	assert.Contains(t, r.Message, "at most 10m0s from 2026-01-01T10:00:00Z")

	in.Frontends[1].Image = 250 // fe-1 leads
	in.Frontends[0].Image = 250
	r = DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State, "a follower without the new image")
	assert.Contains(t, r.Message, "FE fe-2 to receive the leader's new metadata image image.250")

	in.Frontends[2].Image = 260 // a follower may have a newer one already
	assert.Equal(t, "fe-2", DecideRollout(in).Delete)

	// A follower that is down cannot take the push: it is restarted
	// first, without the 10 minutes of waiting for it.
	in.Frontends[2].Image, in.Frontends[2].Ready = 100, false
	r = DecideRollout(in)
	assert.Equal(t, "fe-2", r.Delete, "waited for a follower that is down: %s", r.Message)
	in.Frontends[2].Ready = true

	in.Frontends[2].Image = 100
	in.Now = requested.Add(ImageWaitLimit)
	r = DecideRollout(in)
	assert.Equal(t, "fe-2", r.Delete, "bounded: past the limit the rollout goes on")
	assert.Contains(t, r.Message, "The FEs waited 10m0s for FE fe-2 to receive the leader's new metadata image image.250: it goes on without it.")
}

func TestRolloutWaitsForHealthyTabletsBeforeTheNextBackend(t *testing.T) {
	since := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	in := rolloutCluster()
	outdate(&in)
	restart(&in, "be-2")
	in.Tablets = &TabletHealth{Unhealthy: 7, Since: since}
	in.Now = since.Add(time.Minute)
	r := DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State, "be-2 is back, but replicas it missed are not cloned yet")
	assert.Contains(t, r.Message, "StarRocks counts 7 unhealthy tablets (SHOW PROC '/statistic', UnhealthyTabletNum), at most 30m0s from 2026-01-01T10:00:00Z")

	in.Tablets = &TabletHealth{Unhealthy: -1, Since: since}
	assert.Contains(t, DecideRollout(in).Message, "cannot read the tablet health", "an unreadable count is not a healthy one")

	in.Tablets = &TabletHealth{}
	assert.Equal(t, "be-1", DecideRollout(in).Delete, "healthy again")

	// The agent reads the tablets only while a BE restart is pending: a
	// report from before it was asked is not a healthy one.
	in.Tablets = &TabletHealth{Unhealthy: -1, NotRead: true}
	r = DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State, "a report of tablets not read: %s", r.Message)
	assert.Contains(t, r.Message, "has read the tablet health")
	in.Tablets = &TabletHealth{}

	in.Tablets = &TabletHealth{Unhealthy: 7, Since: since}
	in.Now = since.Add(TabletWaitLimit)
	r = DecideRollout(in)
	assert.Equal(t, "be-1", r.Delete, "bounded: past the limit the rollout goes on")
	assert.Contains(t, r.Message, "longer than the 30m0s the rollout waits for them to heal: it goes on.")

	in.Tablets, in.Now = &TabletHealth{Unhealthy: 7, Since: since}, since
	in.Backends[1].Ready = false
	assert.Equal(t, "be-1", DecideRollout(in).Delete, "a BE that is down anyway costs no replica more")

	in.Backends[1].Ready = true
	in.Tablets = nil
	assert.Equal(t, "be-1", DecideRollout(in).Delete, "an agent older than tablet reports does not stall the upgrade that replaces it")
}

func TestRolloutWithAnAgentOlderThanNodeReports(t *testing.T) {
	in := rolloutCluster()
	outdate(&in)
	in.Nodes = nil // the leader's agent reports membership without nodes
	in.ImageWanted = "fe-rev-2"
	in.Backends[2].Updated = true
	r := DecideRollout(in)
	assert.Equal(t, "be-1", r.Delete, "Ready is enough while the agents predate node reports: the upgrade that brings them must not stall")
	in.Backends[1].Updated, in.Backends[1].Ready = true, false
	assert.Equal(t, RolloutWaiting, DecideRollout(in).State, "and a pod not Ready still stops it")
	in.Backends[1].Ready, in.Backends[0].Updated = true, true
	assert.Equal(t, "fe-2", DecideRollout(in).Delete, "nor does the image it cannot create")
}

func TestRolloutRestartsAPodThatIsDownFirst(t *testing.T) {
	in := rolloutCluster()
	outdate(&in)
	in.Backends[0].Ready = false
	assert.Equal(t, "be-0", DecideRollout(in).Delete, "be-0 is down anyway; restarting be-2 next to it would take two BEs down")

	in = rolloutCluster()
	for i := range in.Frontends {
		in.Frontends[i].Updated = false
	}
	in.Frontends[0].Ready = false
	assert.Equal(t, "fe-0", DecideRollout(in).Delete, "a follower that is down goes first")

	in.Frontends[0].Ready = true
	in.Frontends[1].Ready = false // the leader
	r := DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State, "no follower restarts while the leader is down: the FEs would lose their majority")
	assert.Contains(t, r.Message, "The FE leader fe-1 is not Ready")
}

func TestRolloutOfFrontendsOnly(t *testing.T) {
	in := rolloutCluster()
	for i := range in.Frontends {
		in.Frontends[i].Updated = false
	}
	r := DecideRollout(in)
	assert.Equal(t, "fe-2", r.Delete, "an FE-only change (the agent's image) restarts followers first and leaves the BEs alone")
}

func TestRolloutOfBackendsOnlyLeavesTheFrontendsOut(t *testing.T) {
	in := rolloutCluster()
	for i := range in.Backends {
		in.Backends[i].Updated = false
	}
	// An FE down for its own reasons: the rollout did not restart it.
	in.Frontends[2].Ready = false
	r := DecideRollout(in)
	assert.Equal(t, "be-2", r.Delete, "a BE-only change restarts the BEs, whatever an FE it leaves alone does")
	assert.NotContains(t, r.Message, "fe-", "nor names an FE")

	for i := range in.Backends {
		in.Backends[i].Updated = true
	}
	assert.Equal(t, Rollout{}, DecideRollout(in), "and is done when the BEs are")
}

// sharedDataCluster is 3 FEs (fe-1 leads) and 3 CNs, no BE, all on the
// current template and alive on the new version.
func sharedDataCluster() RolloutInput {
	in := rolloutCluster()
	for _, be := range in.Backends {
		delete(in.Nodes, be.Host)
	}
	in.Backends = nil
	for _, n := range []string{"cn-0", "cn-1", "cn-2"} {
		in.Computes = append(in.Computes, RolloutPod{Name: n, Host: n + ".h", Updated: true, Ready: true})
		in.Nodes[n+".h"] = RolloutNode{Alive: true, Version: "4.1.7-abc"}
	}
	return in
}

func TestRolloutOfASharedDataInstance(t *testing.T) {
	in := sharedDataCluster()
	assert.Equal(t, Rollout{}, DecideRollout(in), "nothing to do on the current template")
	outdate(&in)
	// Tablets the leader reports unhealthy concern BEs only: a CN holds none.
	in.Tablets = &TabletHealth{Unhealthy: 5, Since: in.Now}
	var order []string
	for range 7 {
		r := DecideRollout(in)
		if r.State == RolloutDone {
			break
		}
		require.Equal(t, RolloutRestarting, r.State, r.Message)
		if r.Delete == "cn-2" {
			assert.Contains(t, r.Message, "Restarting CN pod cn-2 with the new template (CNs first, one at a time; 6 pods to restart, the FEs after the CNs)")
			assert.Contains(t, r.Message, "stop_cn.sh -g")
		}
		if r.Delete == "fe-2" {
			assert.Contains(t, r.Message, "every CN is done", "the FEs' messages name the CNs, not BEs")
		}
		order = append(order, r.Delete)
		restart(&in, r.Delete)
	}
	assert.Equal(t, []string{"cn-2", "cn-1", "cn-0", "fe-2", "fe-0", "fe-1"}, order, "CNs first, then followers, the leader last")
}

func TestRolloutOfASharedDataInstanceWaits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(in *RolloutInput)
		says   string
	}{
		{"a CN stopping (its graceful exit)", func(in *RolloutInput) { in.Computes[2].Terminating = true }, "CN pod cn-2 is stopping"},
		{"a CN not recreated yet", func(in *RolloutInput) { in.Computes[2] = RolloutPod{} }, "CN pod 2 is being recreated"},
		{"a restarted CN not Ready", func(in *RolloutInput) { in.Computes[2].Updated, in.Computes[2].Ready = true, false }, "cn-2 runs the current template and is not Ready yet"},
		{"a restarted CN the agent has not added back", func(in *RolloutInput) {
			in.Computes[2].Updated = true
			delete(in.Nodes, "cn-2.h")
		}, "cn-2 runs the current template and is Ready, but StarRocks does not list it"},
		{"a restarted CN on the old version", func(in *RolloutInput) { in.Computes[2].Updated = true }, `CN pod cn-2 runs the current template and is alive, but StarRocks reports it on version "4.1.6-old"`},
		{"an unknown leader once the CNs are done", func(in *RolloutInput) {
			for _, n := range []string{"cn-0", "cn-1", "cn-2"} {
				restart(in, n)
			}
			in.Leader = ""
		}, "Every CN runs the new template; the FEs restart followers first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sharedDataCluster()
			outdate(&in)
			tc.change(&in)
			r := DecideRollout(in)
			assert.Equal(t, RolloutWaiting, r.State, r.Message)
			assert.Empty(t, r.Delete, "nothing is restarted while another pod is not back")
			assert.Contains(t, r.Message, tc.says)
		})
	}
}

func TestRolloutOfASharedDataInstanceRestartsACNThatIsDownFirst(t *testing.T) {
	in := sharedDataCluster()
	outdate(&in)
	in.Computes[0].Ready = false
	assert.Equal(t, "cn-0", DecideRollout(in).Delete, "cn-0 is down anyway; restarting cn-2 next to it would take two CNs down")
}

func TestRolloutOfCNsOnlyLeavesTheFrontendsOut(t *testing.T) {
	in := sharedDataCluster()
	for i := range in.Computes {
		in.Computes[i].Updated = false
	}
	in.Frontends[2].Ready = false
	r := DecideRollout(in)
	assert.Equal(t, "cn-2", r.Delete, "a CN-only change (cn.conf, the CN's memory) restarts the CNs, whatever an FE it leaves alone does")
	assert.NotContains(t, r.Message, "fe-")

	in = sharedDataCluster()
	for i := range in.Frontends {
		in.Frontends[i].Updated = false
	}
	in.Computes[2].Ready = false
	r = DecideRollout(in)
	assert.Equal(t, RolloutWaiting, r.State, "an FE change waits for a CN that is down: one disruption at a time")
	assert.Contains(t, r.Message, "CN pod cn-2 runs the current template and is not Ready yet")
}

func TestOnVersion(t *testing.T) {
	assert.True(t, OnVersion("4.1.7-8f0ab1c", "4.1.7"))
	assert.True(t, OnVersion("4.1.7", "4.1.7"))
	assert.False(t, OnVersion("4.1.70-8f0ab1c", "4.1.7"))
	assert.False(t, OnVersion("", "4.1.7"))
}
