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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// recordedWrites records the writes Reconcile makes.
type recordedWrites struct{ releases []PVCRelease }

func (r *recordedWrites) ExpandVolume(VolumeExpansion) error { return nil }
func (r *recordedWrites) RestartPod(PodRestart) error        { return nil }
func (r *recordedWrites) ReleasePVC(p PVCRelease) error {
	r.releases = append(r.releases, p)
	return nil
}

func releaseState(instanceExists bool, beReplicas int32, pvcs ...PVCSnap) State {
	names := desired.NamesFor("olap")
	s := State{
		StatefulSets: []StatefulSetSnap{
			{Namespace: "team", Name: names.FrontendStatefulSet, Instance: "olap", Component: shared.ComponentFrontend, StatefulSetState: StatefulSetState{Replicas: 1}},
			{Namespace: "team", Name: names.BackendStatefulSet, Instance: "olap", Component: shared.ComponentBackend, StatefulSetState: StatefulSetState{Replicas: beReplicas}},
		},
		PVCs: pvcs,
	}
	if instanceExists {
		s.Instances = []*v1alpha1.Starrocks{{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "olap", UID: "u1"}}}
	} else {
		s.StatefulSets = nil // their owner is gone, the garbage collector deleted them
	}
	return s
}

func fePVC(ordinal, bypass string) PVCSnap {
	return PVCSnap{Namespace: "team", Name: "meta-" + desired.NamesFor("olap").FrontendStatefulSet + "-" + ordinal, Instance: "olap", Component: shared.ComponentFrontend, Bypass: bypass}
}

func bePVC(ordinal, bypass string) PVCSnap {
	return PVCSnap{Namespace: "team", Name: "storage-" + desired.NamesFor("olap").BackendStatefulSet + "-" + ordinal, Instance: "olap", Component: shared.ComponentBackend, Bypass: bypass}
}

// Released PVCs (their instance deleted with Retain, a BE scaled in) get
// Deckhouse's delete bypass, so an admin can delete them; those a live
// StatefulSet mounts never do, and lose it when they are in use again.
func TestReleasedPVCsGetTheDeleteBypassAndOnlyThey(t *testing.T) {
	for _, tt := range []struct {
		name  string
		state State
		want  []PVCRelease
	}{
		{"a running instance's PVCs stay protected",
			releaseState(true, 3, fePVC("0", ""), bePVC("0", ""), bePVC("1", ""), bePVC("2", "")), nil},
		{"a scaled-in BE's PVC is released",
			releaseState(true, 2, fePVC("0", ""), bePVC("0", ""), bePVC("1", ""), bePVC("2", "")),
			[]PVCRelease{{Namespace: "team", Name: bePVC("2", "").Name, Release: true}}},
		{"a released PVC is written once",
			releaseState(true, 2, bePVC("1", ""), bePVC("2", BypassDelete)), nil},
		{"a PVC in use again (scaled out) is protected again",
			releaseState(true, 3, bePVC("2", BypassDelete)),
			[]PVCRelease{{Namespace: "team", Name: bePVC("2", "").Name, Release: false}}},
		{"a deleted instance's PVCs are all released",
			releaseState(false, 0, fePVC("0", ""), bePVC("0", "")),
			[]PVCRelease{{Namespace: "team", Name: fePVC("0", "").Name, Release: true}, {Namespace: "team", Name: bePVC("0", "").Name, Release: true}}},
		{"another value of the label is no bypass (the policy checks for delete): left alone",
			releaseState(true, 3, bePVC("0", "update")), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &recordedWrites{}
			plan := Reconcile(tt.state, classrules.NewCache(), metav1.Now(), w)
			assert.Equal(t, tt.want, plan.PVCReleases)
			assert.Equal(t, tt.want, w.releases, "what is planned is written")
		})
	}
}

// A Starrocks that did not decode may own any PVC: none of a missing
// instance is released while one exists.
func TestNoPVCIsReleasedBesideAnUnreadableStarrocks(t *testing.T) {
	s := releaseState(false, 0, fePVC("0", ""))
	s.UnreadableUIDs = map[string]bool{"u2": true}
	assert.Empty(t, Reconcile(s, classrules.NewCache(), metav1.Now(), nil).PVCReleases)
}

// A PVC whose StatefulSet is not observed (being created) is left alone.
func TestAPVCWithoutItsStatefulSetIsLeftAlone(t *testing.T) {
	s := releaseState(true, 3, bePVC("4", ""))
	s.StatefulSets = s.StatefulSets[:1]
	assert.Empty(t, Reconcile(s, classrules.NewCache(), metav1.Now(), nil).PVCReleases)
}

func cnPVC(ordinal, bypass string) PVCSnap {
	return PVCSnap{Namespace: "team", Name: "cache-" + desired.NamesFor("olap").ComputeStatefulSet + "-" + ordinal, Instance: "olap", Component: shared.ComponentCompute, Bypass: bypass}
}

// The CN cache PVCs count by the CN StatefulSet: those of a deleted
// shared-data instance are released, those a live CN mounts are not.
func TestReleasedCNCachePVCs(t *testing.T) {
	state := func(exists bool, cnReplicas int32, pvcs ...PVCSnap) State {
		s := releaseState(exists, 0, pvcs...)
		if exists {
			s.StatefulSets = []StatefulSetSnap{s.StatefulSets[0], {Namespace: "team", Name: desired.NamesFor("olap").ComputeStatefulSet, Instance: "olap",
				Component: shared.ComponentCompute, StatefulSetState: StatefulSetState{Replicas: cnReplicas}}}
		}
		return s
	}
	for _, tt := range []struct {
		name  string
		state State
		want  []PVCRelease
	}{
		{"a running instance's caches stay protected", state(true, 2, cnPVC("0", ""), cnPVC("1", "")), nil},
		{"a cache beyond the CN count is released", state(true, 1, cnPVC("0", ""), cnPVC("1", "")),
			[]PVCRelease{{Namespace: "team", Name: cnPVC("1", "").Name, Release: true}}},
		{"a deleted instance's caches are released", state(false, 0, cnPVC("0", "")),
			[]PVCRelease{{Namespace: "team", Name: cnPVC("0", "").Name, Release: true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Reconcile(tt.state, classrules.NewCache(), metav1.Now(), nil).PVCReleases)
		})
	}
}
