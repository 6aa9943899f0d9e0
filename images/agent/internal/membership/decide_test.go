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

package membership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	desired := Desired{Frontends: []string{"fe-0", "fe-1", "fe-2"}, EditLogPort: 9010,
		Backends: []string{"be-0", "be-1"}, HeartbeatPort: 9050}
	leader := Frontend{Host: "fe-0", EditLogPort: 9010, Leader: true, Alive: true}
	tests := []struct {
		name string
		fes  []Frontend
		bes  []Backend
		want Plan
	}{
		{
			name: "adds the first missing follower and every missing backend",
			fes:  []Frontend{leader},
			want: Plan{AddFollower: "fe-1:9010", AddBackends: []string{"be-0:9050", "be-1:9050"}},
		},
		{
			name: "waits while a listed follower is not alive",
			fes:  []Frontend{leader, {Host: "fe-1", Alive: false}},
			bes:  []Backend{{Host: "be-0", HeartbeatPort: 9050}, {Host: "be-1", HeartbeatPort: 9050}},
			want: Plan{},
		},
		{
			name: "matches hosts case-insensitively and without the trailing dot",
			fes:  []Frontend{leader, {Host: "fe-1", Alive: true}, {Host: "fe-2", Alive: true}},
			bes:  []Backend{{Host: normHost("BE-0."), HeartbeatPort: 9050}, {Host: "be-1", HeartbeatPort: 9050}},
			want: Plan{},
		},
		{
			name: "decommissions an unwanted backend and reports it draining",
			fes:  []Frontend{leader, {Host: "fe-1", Alive: true}, {Host: "fe-2", Alive: true}},
			bes: []Backend{{Host: "be-0", HeartbeatPort: 9050}, {Host: "be-1", HeartbeatPort: 9050},
				{Host: "be-2", HeartbeatPort: 9050, TabletNum: 10}},
			want: Plan{Decommission: []string{"be-2:9050"}, Draining: []Backend{{Host: "be-2", HeartbeatPort: 9050, TabletNum: 10}}},
		},
		{
			name: "leaves a decommissioned backend that still holds tablets",
			fes:  []Frontend{leader, {Host: "fe-1", Alive: true}, {Host: "fe-2", Alive: true}},
			bes: []Backend{{Host: "be-0", HeartbeatPort: 9050}, {Host: "be-1", HeartbeatPort: 9050},
				{Host: "be-2", HeartbeatPort: 9050, Decommissioned: true, TabletNum: 1}},
			want: Plan{Draining: []Backend{{Host: "be-2", HeartbeatPort: 9050, Decommissioned: true, TabletNum: 1}}},
		},
		{
			name: "drops a decommissioned backend without tablets",
			fes:  []Frontend{leader, {Host: "fe-1", Alive: true}, {Host: "fe-2", Alive: true}},
			bes: []Backend{{Host: "be-0", HeartbeatPort: 9050}, {Host: "be-1", HeartbeatPort: 9050},
				{Host: "be-2", HeartbeatPort: 9050, Decommissioned: true}},
			want: Plan{DropBackends: []string{"be-2:9050"}},
		},
		{
			name: "cancels the decommission of a backend that is wanted again",
			fes:  []Frontend{leader, {Host: "fe-1", Alive: true}, {Host: "fe-2", Alive: true}},
			bes:  []Backend{{Host: "be-0", HeartbeatPort: 9050}, {Host: "be-1", HeartbeatPort: 9050, Decommissioned: true, TabletNum: 5}},
			want: Plan{CancelDecommission: []string{"be-1:9050"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Decide(desired, tc.fes, tc.bes))
		})
	}
}
