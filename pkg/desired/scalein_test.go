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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

func beHost(i int) string {
	return fmt.Sprintf("d8ms-sr-olap-be-%d.d8ms-sr-olap-be-headless.team.svc.cluster.local", i)
}

func beHosts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = beHost(i)
	}
	return out
}

func report(backends []string, draining ...agentconfig.BackendDrain) *agentconfig.MembershipStatus {
	return &agentconfig.MembershipStatus{Leader: "fe-0", Backends: backends, Draining: draining}
}

func TestBackendReplicas(t *testing.T) {
	for _, tt := range []struct {
		name             string
		desired, current int32
		obs              BackendObservation
		wantState        ScaleInState
		wantRendered     int32
		wantKept         []KeptBackend
	}{
		{name: "grows at once", desired: 5, current: 3, wantRendered: 5},
		{name: "renders the spec when nothing changes", desired: 3, current: 3, obs: BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(3))}}, wantRendered: 3},
		{name: "keeps replicas when no agent reported", desired: 2, current: 3, wantState: ScaleInWaitingForAgent, wantRendered: 3},
		{name: "keeps replicas when a report is unreadable", desired: 2, current: 3,
			obs:       BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(2))}, Unreadable: true},
			wantState: ScaleInWaitingForAgent, wantRendered: 3},
		{name: "keeps be-2 while it drains", desired: 2, current: 3,
			obs:       BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(3), agentconfig.BackendDrain{Host: beHost(2), TabletNum: 120})}},
			wantState: ScaleInDraining, wantRendered: 3, wantKept: []KeptBackend{{Host: beHost(2), Decommissioned: true, TabletNum: 120}}},
		{name: "keeps be-2 while StarRocks lists it and the agent has not decommissioned it yet", desired: 2, current: 3,
			obs:       BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(3))}},
			wantState: ScaleInDraining, wantRendered: 3, wantKept: []KeptBackend{{Host: beHost(2)}}},
		{name: "keeps be-2 when only draining lists it", desired: 2, current: 3,
			obs:       BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(2), agentconfig.BackendDrain{Host: beHost(2), TabletNum: 1})}},
			wantState: ScaleInDraining, wantRendered: 3, wantKept: []KeptBackend{{Host: beHost(2), Decommissioned: true, TabletNum: 1}}},
		{name: "lowers replicas once be-2 is gone", desired: 2, current: 3,
			obs:          BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(2))}},
			wantRendered: 2},
		{name: "lowers to just above the highest ordinal still listed", desired: 1, current: 4,
			obs:       BackendObservation{Reports: []*agentconfig.MembershipStatus{report([]string{beHost(0), beHost(2)}, agentconfig.BackendDrain{Host: beHost(2), TabletNum: 7})}},
			wantState: ScaleInDraining, wantRendered: 3, wantKept: []KeptBackend{{Host: beHost(2), Decommissioned: true, TabletNum: 7}}},
		{name: "a stale report of a former leader still keeps its BE", desired: 2, current: 3,
			obs:       BackendObservation{Reports: []*agentconfig.MembershipStatus{report(beHosts(2)), report(beHosts(3))}},
			wantState: ScaleInDraining, wantRendered: 3, wantKept: []KeptBackend{{Host: beHost(2)}}},
		{name: "ignores hosts of other instances and BEs still desired", desired: 2, current: 3,
			obs:          BackendObservation{Reports: []*agentconfig.MembershipStatus{report(append(beHosts(2), "other-be-2.example"))}},
			wantRendered: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := BackendReplicas(tt.desired, tt.current, beHosts(int(tt.current)), tt.obs)
			assert.Equal(t, tt.wantState, got.State)
			assert.Equal(t, tt.wantRendered, got.Rendered)
			assert.Equal(t, tt.desired, got.Desired)
			assert.Equal(t, tt.wantKept, got.Kept)
		})
	}
}

func scaledInstance(replicas int32) *v1alpha1.Starrocks {
	sr := instance("team", "olap")
	sr.Spec.Backend.Replicas = ptr(replicas)
	return sr
}

func TestComputeScaleIn(t *testing.T) {
	four := int32(4)
	for _, tt := range []struct {
		name         string
		obs          *BackendObservation
		wantReplicas int32
		wantState    ScaleInState
	}{
		{name: "a new instance renders the spec", obs: nil, wantReplicas: 3},
		{name: "keeps replicas when no agent reported", obs: &BackendObservation{Replicas: &four}, wantReplicas: 4, wantState: ScaleInWaitingForAgent},
		{name: "keeps be-3 while it drains", obs: &BackendObservation{Replicas: &four, Reports: []*agentconfig.MembershipStatus{report(beHosts(4), agentconfig.BackendDrain{Host: beHost(3), TabletNum: 5})}}, wantReplicas: 4, wantState: ScaleInDraining},
		{name: "lowers replicas once be-3 is gone", obs: &BackendObservation{Replicas: &four, Reports: []*agentconfig.MembershipStatus{report(beHosts(3))}}, wantReplicas: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Instances: []*v1alpha1.Starrocks{scaledInstance(3)}, Classes: []*v1alpha1.StarrocksClass{class()}}
			if tt.obs != nil {
				in.Backends = map[string]BackendObservation{"team/olap": *tt.obs}
			}
			out := Compute(in)
			require.Len(t, out.Instances, 1)
			e := out.Instances[0]
			assert.Equal(t, tt.wantReplicas, e.Backend.Replicas, "rendered BE replicas")
			assert.Equal(t, beHosts(int(tt.wantReplicas)), e.Backend.Hosts, "hosts of the rendered pods")
			assert.Equal(t, beHosts(3), e.AgentConfig.Backends, "the agent is told the spec's BEs, so it decommissions the others")
			assert.EqualValues(t, 3, e.Configuration.DefaultReplicationNum, "the replication default follows the spec")
			assert.Equal(t, tt.wantState, out.Results[0].ScaleIn.State)
		})
	}
}

func TestComputeDoesNotRescaleALastValidEntry(t *testing.T) {
	four := int32(4)
	obs := map[string]BackendObservation{"team/olap": {Replicas: &four, Reports: []*agentconfig.MembershipStatus{report(beHosts(4), agentconfig.BackendDrain{Host: beHost(3), TabletNum: 5})}}}
	first := Compute(Input{Instances: []*v1alpha1.Starrocks{scaledInstance(3)}, Classes: []*v1alpha1.StarrocksClass{class()}, Backends: obs})
	last := first.Results[0].Entry
	require.EqualValues(t, 4, last.Backend.Replicas)

	broken := scaledInstance(3)
	broken.Spec.StarrocksClassName = "gone"
	obs["team/olap"] = BackendObservation{Replicas: &four, Reports: []*agentconfig.MembershipStatus{report(beHosts(3))}}
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{broken}, Classes: []*v1alpha1.StarrocksClass{class()}, Backends: obs, LastValid: map[string]*Instance{"team/olap": last}})
	require.Len(t, out.Instances, 1)
	assert.EqualValues(t, 4, out.Instances[0].Backend.Replicas, "the last valid entry is rendered as it was persisted")
	assert.Equal(t, ScaleInNone, out.Results[0].ScaleIn.State, "be-3 is gone: nothing is draining any more")
}

func TestComputeChecksScalingAgainstWhatRuns(t *testing.T) {
	five, four := int32(5), int32(4)
	compute := func(replicas int32, last *Instance, obs BackendObservation) Result {
		t.Helper()
		in := Input{Instances: []*v1alpha1.Starrocks{scaledInstance(replicas)}, Classes: []*v1alpha1.StarrocksClass{class()},
			Backends: map[string]BackendObservation{"team/olap": obs}}
		if last != nil {
			in.LastValid = map[string]*Instance{"team/olap": last}
		}
		return Compute(in).Results[0]
	}
	atFive := compute(5, nil, BackendObservation{Replicas: &five})
	require.True(t, atFive.Valid(), "%v", atFive.Violations)

	t.Run("a second scale-in while the first drains keeps the first", func(t *testing.T) {
		draining := BackendObservation{Replicas: &five, Reports: []*agentconfig.MembershipStatus{report(beHosts(5), agentconfig.BackendDrain{Host: beHost(4), TabletNum: 9})}}
		atFour := compute(4, atFive.Entry, draining)
		require.True(t, atFour.Valid(), "%v", atFour.Violations)
		require.EqualValues(t, 5, atFour.Entry.Backend.Replicas)

		again := compute(3, atFour.Entry, draining)
		require.False(t, again.Valid())
		assert.Contains(t, again.Violations.Error(), "the smallest BE count allowed now is 4: a BE is still being removed")
		require.NotNil(t, again.Entry)
		assert.Equal(t, beHosts(4), again.Entry.AgentConfig.Backends, "the agent keeps draining one BE only")
	})
	t.Run("edits that raced past the webhook still go one BE at a time", func(t *testing.T) {
		res := compute(3, atFive.Entry, BackendObservation{Replicas: &five})
		assert.Contains(t, res.Violations.Error(), "the smallest BE count allowed now is 4: BEs are removed one at a time")
		assert.Equal(t, beHosts(5), res.Entry.AgentConfig.Backends)
	})
	t.Run("not below the replication number the agent reported", func(t *testing.T) {
		atFourDone := compute(4, nil, BackendObservation{Replicas: &four})
		res := compute(3, atFourDone.Entry, BackendObservation{Replicas: &four, MaxReplicationNum: 4, MaxReplicationTable: "shop.orders"})
		assert.Contains(t, res.Violations.Error(), "table shop.orders has replication_num 4")
		assert.Equal(t, beHosts(4), res.Entry.AgentConfig.Backends)
	})
	t.Run("a scale-in above the replication number goes ahead", func(t *testing.T) {
		atFourDone := compute(4, nil, BackendObservation{Replicas: &four})
		res := compute(3, atFourDone.Entry, BackendObservation{Replicas: &four, MaxReplicationNum: 3, MaxReplicationTable: "_statistics_.column_statistics"})
		require.True(t, res.Valid(), "%v", res.Violations)
		assert.Equal(t, beHosts(3), res.Entry.AgentConfig.Backends)
	})
}

func TestComputeTwoToOneBE(t *testing.T) {
	two := int32(2)
	compute := func(replicas int32, last *Instance, obs BackendObservation) Result {
		t.Helper()
		in := Input{Instances: []*v1alpha1.Starrocks{scaledInstance(replicas)}, Classes: []*v1alpha1.StarrocksClass{class()},
			Backends: map[string]BackendObservation{"team/olap": obs}}
		if last != nil {
			in.LastValid = map[string]*Instance{"team/olap": last}
		}
		return Compute(in).Results[0]
	}
	// An instance that got its 2 BEs before they were refused keeps them.
	atTwo := compute(2, nil, BackendObservation{Replicas: &two})
	require.True(t, atTwo.Valid(), "%v", atTwo.Violations)

	refused := compute(1, atTwo.Entry, BackendObservation{Replicas: &two, MaxReplicationNum: 2, MaxReplicationTable: "shop.orders"})
	assert.Contains(t, refused.Violations.Error(), "the smallest BE count allowed now is 2: StarRocks cannot remove a BE while a table needs more replicas than the BEs left, and table shop.orders has replication_num 2")
	assert.Equal(t, beHosts(2), refused.Entry.AgentConfig.Backends, "both BEs stay")

	// StarRocks 4.1 leaves its statistics tables out of the decommission
	// check (PR 56114): an agent report naming one does not hold 2 BEs.
	statistics := compute(1, atTwo.Entry, BackendObservation{Replicas: &two, MaxReplicationNum: 2, MaxReplicationTable: "_statistics_.column_statistics"})
	require.True(t, statistics.Valid(), "%v", statistics.Violations)

	accepted := compute(1, atTwo.Entry, BackendObservation{Replicas: &two, MaxReplicationNum: 1, MaxReplicationTable: "shop.orders"})
	require.True(t, accepted.Valid(), "%v", accepted.Violations)
	assert.Equal(t, beHosts(1), accepted.Entry.AgentConfig.Backends, "the agent decommissions be-1")
	assert.EqualValues(t, 2, accepted.Entry.Backend.Replicas, "be-1's pod is kept until StarRocks lets it go")
}

// TestShippedVersionLeavesStatisticsOutOfDecommission: classrules.CheckScaling
// and the agent's replication read leave StarRocks' _statistics_ tables out
// because the shipped StarRocks skips them when it decommissions a BE (4.1,
// PR 56114); 3.x counted them, and shipping it would need them counted again.
func TestShippedVersionLeavesStatisticsOutOfDecommission(t *testing.T) {
	var major, minor int
	_, err := fmt.Sscanf(StarRocksVersion, "%d.%d", &major, &minor)
	require.NoError(t, err)
	assert.True(t, major > 4 || major == 4 && minor >= 1, "StarRocksVersion %s is older than 4.1: count the _statistics_ tables in classrules.CheckScaling and replication.QueryMax again", StarRocksVersion)
}

func TestARunningJobHoldsTheDecommission(t *testing.T) {
	four := int32(4)
	obs := map[string]BackendObservation{"team/olap": {Replicas: &four, Reports: []*agentconfig.MembershipStatus{report(beHosts(4))}}}
	held := Existing{ScaleInHold: "StarrocksBackup olap-now runs"}
	in := Input{Instances: []*v1alpha1.Starrocks{scaledInstance(3)}, Classes: []*v1alpha1.StarrocksClass{class()}, Backends: obs,
		Existing: map[string]Existing{"team/olap": held}}
	out := Compute(in)
	e := out.Results[0].Entry
	require.NotNil(t, e)
	assert.Equal(t, beHosts(4), e.AgentConfig.Backends, "the agent is not told to decommission be-3 while the job runs")
	assert.EqualValues(t, 4, e.Backend.Replicas)
	assert.Equal(t, ScaleInHeld, out.Results[0].ScaleIn.State)
	assert.Equal(t, held.ScaleInHold, out.Results[0].ScaleIn.Held)

	// The next run (the held entry persisted) still holds; once the job
	// ended the agent is told the spec's BEs.
	in.LastValid = map[string]*Instance{"team/olap": e}
	assert.Equal(t, beHosts(4), Compute(in).Instances[0].AgentConfig.Backends)
	in.Existing = nil
	assert.Equal(t, beHosts(3), Compute(in).Instances[0].AgentConfig.Backends)

	// A decommission already under way (the agent was told the spec's BEs)
	// is not undone by a job that starts afterwards.
	told := Compute(in).Instances[0]
	in.LastValid = map[string]*Instance{"team/olap": &told}
	in.Existing = map[string]Existing{"team/olap": held}
	assert.Equal(t, beHosts(3), Compute(in).Instances[0].AgentConfig.Backends)
}
