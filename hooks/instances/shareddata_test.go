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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// TestSharedDataStatusCountsTheCNs: a shared-data instance has no BE
// StatefulSet; its phase follows the FEs and the CNs, status.compute shows
// the CNs, and while autoscaling the desired count is the autoscaler's,
// bounded by the range (a tenant may write the StatefulSet's replicas).
func TestSharedDataStatusCountsTheCNs(t *testing.T) {
	fixed := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 1}, Compute: &desired.ComputeNodes{Replicas: 3}}
	auto := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 1}, Compute: &desired.ComputeNodes{Autoscaling: &desired.Autoscaling{MinReplicas: 2, MaxReplicas: 8}}}
	fe := &StatefulSetState{Replicas: 1, ReadyReplicas: 1}
	for _, tt := range []struct {
		name      string
		entry     *desired.Instance
		cn        *StatefulSetState
		phase     v1alpha1.Phase
		wantReady string
	}{
		{"Pending before the CN StatefulSet exists", fixed, nil, v1alpha1.PhasePending, "0/3"},
		{"Provisioning while CNs start", fixed, &StatefulSetState{Replicas: 3, ReadyReplicas: 1}, v1alpha1.PhaseProvisioning, "1/3"},
		{"Running with every CN ready", fixed, &StatefulSetState{Replicas: 3, ReadyReplicas: 3}, v1alpha1.PhaseRunning, "3/3"},
		{"the autoscaler's count", auto, &StatefulSetState{Replicas: 5, ReadyReplicas: 5}, v1alpha1.PhaseRunning, "5/5"},
		{"a count beyond the range is bounded", auto, &StatefulSetState{Replicas: 1000, ReadyReplicas: 4}, v1alpha1.PhaseProvisioning, "4/8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Generation: 1}}, Entry: tt.entry, Current: true}
			st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, Observed{Frontend: fe, Compute: tt.cn}, "cluster.local", metav1.Now())
			assert.Equal(t, tt.phase, st.Phase)
			require.NotNil(t, st.Compute)
			assert.Equal(t, tt.wantReady, st.Compute.Ready)
			assert.Empty(t, st.Backend.Ready, "no BE column for a shared-data instance")
		})
	}
}
