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
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/testing/helpers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
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
			// The storage volume is ready: the pods alone decide.
			o := Observed{Frontend: fe, Compute: tt.cn, LeaderClaims: []string{"fe-0"},
				SharedData: map[string]*agentconfig.SharedDataStatus{"fe-0": {StorageVolume: agentconfig.StorageVolumeStatus{Name: "v", Ready: true}}}}
			st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, o, "cluster.local", metav1.Now())
			assert.Equal(t, tt.phase, st.Phase)
			require.NotNil(t, st.Compute)
			assert.Equal(t, tt.wantReady, st.Compute.Ready)
			assert.Empty(t, st.Backend.Ready, "no BE column for a shared-data instance")
		})
	}
}

// sdPod is an FE pod of instance inst as the pods' filter reads it, its
// agent reporting report (with the leader named when leader is set).
func sdPod(t *testing.T, inst, pod string, leader bool, report map[string]any) PodSnap {
	t.Helper()
	if leader {
		report["membership"] = map[string]any{"leader": pod + ".d8ms-sr-" + inst + "-fe.team.svc.cluster.local"}
	}
	status, err := json.Marshal(report)
	require.NoError(t, err)
	ann, _ := json.Marshal(string(status))
	sts := desired.NamesFor(inst).FrontendStatefulSet
	var got PodSnap
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods),
		`{"metadata":{"name":"`+pod+`","namespace":"team","labels":{"app.kubernetes.io/instance":"`+inst+`"},`+
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"`+sts+`","uid":"uid-`+inst+`","controller":true}],`+
			`"annotations":{"managed-starrocks.deckhouse.io/agent-status":`+string(ann)+`}}}`, &got))
	got.checkReasons()
	return got
}

// sdStatus is the status of the shared-data instance olap (every pod
// ready) over the FE pods given, as Reconcile observes them.
func sdStatus(t *testing.T, prev v1alpha1.StarrocksStatus, pods ...PodSnap) v1alpha1.StarrocksStatus {
	t.Helper()
	s := State{}
	for _, inst := range []string{"olap", "other"} {
		names := desired.NamesFor(inst)
		s.StatefulSets = append(s.StatefulSets,
			StatefulSetSnap{Namespace: "team", Name: names.FrontendStatefulSet, UID: "uid-" + inst, Instance: inst, Component: shared.ComponentFrontend, StatefulSetState: StatefulSetState{Replicas: 1, ReadyReplicas: 1}},
			StatefulSetSnap{Namespace: "team", Name: names.ComputeStatefulSet, UID: "cn-" + inst, Instance: inst, Component: shared.ComponentCompute, StatefulSetState: StatefulSetState{Replicas: 1, ReadyReplicas: 1}})
	}
	s.Pods = pods
	var warnings []string
	o := observe(s, &warnings)[desired.Key("team", "olap")]
	e := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 1}, Compute: &desired.ComputeNodes{Replicas: 1}}
	res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "olap", Namespace: "team", Generation: 1}}, Entry: e, Current: true}
	return ComputeStatus(res, prev, o, "cluster.local", metav1.Now())
}

func sdCond(st v1alpha1.StarrocksStatus, typ string) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func volume(ready bool, reason, message string) map[string]any {
	return map[string]any{"sharedData": map[string]any{"storageVolume": map[string]any{"name": "d8ms_olap", "ready": ready, "reason": reason, "message": message}}}
}

// TestSharedDataStorageVolumeGatesAvailable: every pod ready is not enough
// for a shared-data instance: without its storage volume no table can be
// created, and the agent's reason says why.
func TestSharedDataStorageVolumeGatesAvailable(t *testing.T) {
	for _, tt := range []struct {
		name              string
		report            map[string]any
		storage           metav1.ConditionStatus
		reason, available string
	}{
		{"before the agent reports", map[string]any{}, metav1.ConditionUnknown, ReasonWaitingForAgent, "False"},
		{"keys missing", volume(false, "CredentialsMissing", "Secret team/s3 has no key secretKey"), metav1.ConditionFalse, "CredentialsMissing", "False"},
		{"refused", volume(false, "StorageVolumeRefused", "CREATE STORAGE VOLUME: Access Denied"), metav1.ConditionFalse, "StorageVolumeRefused", "False"},
		{"moved", volume(false, "LocationChanged", "s3://b/x is not s3://b/y"), metav1.ConditionFalse, "LocationChanged", "False"},
		{"ready", volume(true, "", ""), metav1.ConditionTrue, ReasonStorageVolumeReady, "True"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := sdStatus(t, v1alpha1.StarrocksStatus{}, sdPod(t, "olap", "d8ms-sr-olap-0", true, tt.report))
			c := sdCond(st, ConditionStorageReady)
			assert.Equal(t, tt.storage, c.Status, c.Message)
			assert.Equal(t, tt.reason, c.Reason)
			a := sdCond(st, v1alpha1.ConditionAvailable)
			assert.Equal(t, tt.available, string(a.Status), a.Message)
			if tt.available == "False" {
				assert.Equal(t, tt.reason, a.Reason)
				assert.NotEqual(t, v1alpha1.PhaseRunning, st.Phase)
				if m, _ := tt.report["sharedData"].(map[string]any); m != nil {
					assert.Contains(t, a.Message, m["storageVolume"].(map[string]any)["message"], "the agent's words reach the user")
				}
			} else {
				assert.Equal(t, v1alpha1.PhaseRunning, st.Phase)
				conditionsAreDocumented(t, st)
			}
		})
	}
}

// A report is a tenant's annotation: only the leader's of this instance's
// FE StatefulSet counts, its message is bounded, and a reason that cannot
// be a condition's makes the pod's report unreadable.
func TestSharedDataReportIsHostileInput(t *testing.T) {
	ready := sdPod(t, "olap", "d8ms-sr-olap-0", true, volume(true, "", ""))
	refused := func(inst, pod string, leader bool) PodSnap {
		return sdPod(t, inst, pod, leader, volume(false, "StorageVolumeRefused", "forged"))
	}
	for _, tt := range []struct {
		name string
		pods []PodSnap
	}{
		{"a forged report on a pod that is not the leader", []PodSnap{ready, refused("olap", "d8ms-sr-olap-1", false)}},
		{"a forged report on another instance's leader", []PodSnap{ready, refused("other", "d8ms-sr-other-0", true)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := sdStatus(t, v1alpha1.StarrocksStatus{}, tt.pods...)
			assert.Equal(t, metav1.ConditionTrue, sdCond(st, ConditionStorageReady).Status)
			assert.Equal(t, metav1.ConditionTrue, sdCond(st, v1alpha1.ConditionAvailable).Status)
		})
	}
	t.Run("a ready volume stays ready while the leader's report is missing", func(t *testing.T) {
		was := sdStatus(t, v1alpha1.StarrocksStatus{}, ready)
		st := sdStatus(t, was, sdPod(t, "olap", "d8ms-sr-olap-0", false, map[string]any{}))
		assert.Equal(t, metav1.ConditionTrue, sdCond(st, ConditionStorageReady).Status)
		assert.Equal(t, metav1.ConditionTrue, sdCond(st, v1alpha1.ConditionAvailable).Status)
		st = sdStatus(t, was, refused("olap", "d8ms-sr-olap-0", true))
		assert.Equal(t, metav1.ConditionFalse, sdCond(st, ConditionStorageReady).Status, "the leader's report that it is not ready counts")
	})
	t.Run("another instance's forged report does not make this one's", func(t *testing.T) {
		st := sdStatus(t, v1alpha1.StarrocksStatus{}, refused("other", "d8ms-sr-other-0", true))
		assert.Equal(t, metav1.ConditionUnknown, sdCond(st, ConditionStorageReady).Status)
	})
	t.Run("an oversized message is cut", func(t *testing.T) {
		st := sdStatus(t, v1alpha1.StarrocksStatus{}, sdPod(t, "olap", "d8ms-sr-olap-0", true, volume(false, "StorageVolumeRefused", strings.Repeat("m", 200_000))))
		c := sdCond(st, ConditionStorageReady)
		assert.Equal(t, metav1.ConditionFalse, c.Status)
		assert.Less(t, len(c.Message), 1200)
		assert.Contains(t, c.Message, shared.TruncatedSuffix)
	})
	t.Run("a reason that is not a condition's", func(t *testing.T) {
		p := sdPod(t, "olap", "d8ms-sr-olap-0", true, volume(false, "bad reason!", "m"))
		assert.Nil(t, p.SharedData)
		assert.Equal(t, ReasonAgentStatusUnreadable, p.AgentTLS.Reason)
		assert.Contains(t, p.AgentTLS.Message, "sharedData.storageVolume.reason")
	})
	t.Run("a wrong type names the field", func(t *testing.T) {
		p := sdPod(t, "olap", "d8ms-sr-olap-0", false, map[string]any{"sharedData": map[string]any{"storageVolume": map[string]any{"ready": "yes"}}})
		assert.Nil(t, p.SharedData)
		assert.Equal(t, "sharedData.storageVolume.ready is of type string, want boolean", p.AgentTLS.Message)
	})
	t.Run("a long name makes the report unreadable", func(t *testing.T) {
		p := sdPod(t, "olap", "d8ms-sr-olap-0", false, map[string]any{"sharedData": map[string]any{"storageVolume": map[string]any{"name": strings.Repeat("n", shared.MaxNameBytes+1)}}})
		assert.Nil(t, p.SharedData)
	})
}

func snapshots(cs map[string]any) map[string]any {
	r := volume(true, "", "")
	r["sharedData"].(map[string]any)["clusterSnapshots"] = cs
	return r
}

// TestSharedDataSnapshotsVerdict: BackupsHealthy and status.backup of a
// shared-data instance come from StarRocks' automated cluster snapshot.
func TestSharedDataSnapshotsVerdict(t *testing.T) {
	finished := map[string]any{"snapshotName": "automated_cluster_snapshot_1", "state": "FINISHED", "succeeded": true, "finishedTime": "2026-12-05 10:00:07"}
	failed := map[string]any{"snapshotName": "automated_cluster_snapshot_2", "state": "ERROR", "finishedTime": "2026-12-05 11:00:03", "errorMessage": "upload failed: 403 Forbidden"}
	running := map[string]any{"snapshotName": "automated_cluster_snapshot_3", "state": "UPLOADING"}
	for _, tt := range []struct {
		name     string
		report   map[string]any
		status   metav1.ConditionStatus
		reason   string
		last     string
		failure  string
		contains string
	}{
		{"before the agent reports", volume(true, "", ""), metav1.ConditionUnknown, ReasonWaitingForAgent, "", "", ""},
		{"on, before the first", snapshots(map[string]any{"enabled": true}), metav1.ConditionUnknown, ReasonNoSnapshotYet, "", "", ""},
		{"on, the first running", snapshots(map[string]any{"enabled": true, "lastJob": running}), metav1.ConditionUnknown, ReasonNoSnapshotYet, "", "", ""},
		{"off", snapshots(map[string]any{"enabled": false, "reason": "Disabled", "message": "the automated cluster snapshot is off"}), metav1.ConditionFalse, "Disabled", "", "", "is off"},
		{"a finished snapshot", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00", "lastJob": finished}), metav1.ConditionTrue, ReasonSnapshotsSucceeding, "2026-12-05T02:00:00Z", "", "2026-12-05T02:00:00Z"},
		{"the next one running", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00", "lastJob": running}), metav1.ConditionTrue, ReasonSnapshotsSucceeding, "2026-12-05T02:00:00Z", "", ""},
		{"the newest failed", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00", "lastJob": failed}), metav1.ConditionFalse, ReasonSnapshotFailed, "2026-12-05T02:00:00Z", "403 Forbidden", "403 Forbidden"},
		{"jobs unreadable", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00", "reason": "ClusterSnapshotRefused", "message": "no compute node"}), metav1.ConditionUnknown, "ClusterSnapshotRefused", "2026-12-05T02:00:00Z", "", "no compute node"},
		{"a time that is not StarRocks'", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "yesterday"}), metav1.ConditionUnknown, ReasonNoSnapshotYet, "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := sdStatus(t, v1alpha1.StarrocksStatus{}, sdPod(t, "olap", "d8ms-sr-olap-0", true, tt.report))
			c := sdCond(st, v1alpha1.ConditionBackupsHealthy)
			assert.Equal(t, tt.status, c.Status, c.Message)
			assert.Equal(t, tt.reason, c.Reason)
			assert.Contains(t, c.Message, tt.contains)
			last, failure := "", ""
			if b := st.Backup; b != nil {
				if b.LastSuccessfulTime != nil {
					last = b.LastSuccessfulTime.UTC().Format("2006-01-02T15:04:05Z")
				}
				if b.LastFailure != nil {
					failure = b.LastFailure.Reason
					assert.LessOrEqual(t, len(failure), 1024)
				}
			}
			assert.Equal(t, tt.last, last)
			if tt.failure == "" {
				assert.Empty(t, failure)
			} else {
				assert.Contains(t, failure, tt.failure)
			}
		})
	}
}

// While the FE leader restarts there is no report: the newest snapshot
// and the verdict stay.
func TestSharedDataSnapshotsKeptWithoutAReport(t *testing.T) {
	was := sdStatus(t, v1alpha1.StarrocksStatus{}, sdPod(t, "olap", "d8ms-sr-olap-0", true,
		snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00"})))
	require.Equal(t, metav1.ConditionTrue, sdCond(was, v1alpha1.ConditionBackupsHealthy).Status)
	st := sdStatus(t, was, sdPod(t, "olap", "d8ms-sr-olap-0", false, map[string]any{}))
	assert.Equal(t, sdCond(was, v1alpha1.ConditionBackupsHealthy), sdCond(st, v1alpha1.ConditionBackupsHealthy))
	assert.Equal(t, was.Backup, st.Backup)
}

// TestSharedDataStorageEvents: one Warning when the storage volume becomes
// not ready for a reason, none while it stays so or while the agent has not
// reported, and one Normal when it is ready again.
func TestSharedDataStorageEvents(t *testing.T) {
	sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "olap", Namespace: "team", Generation: 1}}
	waiting := sdStatus(t, v1alpha1.StarrocksStatus{}, sdPod(t, "olap", "d8ms-sr-olap-0", true, map[string]any{}))
	refused := sdStatus(t, waiting, sdPod(t, "olap", "d8ms-sr-olap-0", true, volume(false, "CredentialsMissing", "no key")))
	again := sdStatus(t, refused, sdPod(t, "olap", "d8ms-sr-olap-0", true, volume(false, "CredentialsMissing", "no key")))
	ready := sdStatus(t, again, sdPod(t, "olap", "d8ms-sr-olap-0", true, volume(true, "", "")))
	storageEvents := func(prev, next v1alpha1.StarrocksStatus) []Event {
		var out []Event
		for _, e := range instanceEvents(sr, prev, next) {
			if e.Reason == "CredentialsMissing" || e.Reason == ReasonStorageVolumeReady || e.Reason == ReasonWaitingForAgent {
				out = append(out, e)
			}
		}
		return out
	}
	assert.Empty(t, storageEvents(v1alpha1.StarrocksStatus{}, waiting), "waiting for the agent is how every instance starts")
	ev := storageEvents(waiting, refused)
	require.Len(t, ev, 1)
	assert.Equal(t, "Warning", ev[0].Type)
	assert.Contains(t, ev[0].Message, "no key")
	assert.Empty(t, storageEvents(refused, again), "the same refusal computed again")
	ev = storageEvents(again, ready)
	require.Len(t, ev, 1)
	assert.Equal(t, "Normal", ev[0].Type)
}

// metricsRecorder keeps the gauges publishMetrics sets.
type metricsRecorder map[string]float64

func (r metricsRecorder) Inc(string, map[string]string, ...pkg.MetricCollectorOption) {}
func (r metricsRecorder) Add(string, float64, map[string]string, ...pkg.MetricCollectorOption) {
}
func (r metricsRecorder) Expire(string) {}
func (r metricsRecorder) Set(name string, v float64, labels map[string]string, _ ...pkg.MetricCollectorOption) {
	r[name+fmt.Sprint(labels)] = v
}

// TestSharedDataSnapshotsMetrics: a shared-data instance has no
// spec.backup, yet its automated cluster snapshots are its only
// protection: the backup series the alerts read cover it. Failing
// (BackupsHealthy False) publishes healthy 0; the next snapshot is due an
// interval after the newest, or after the instance's creation before the
// first; while the verdict is Unknown no healthy series says "failing".
func TestSharedDataSnapshotsMetrics(t *testing.T) {
	created := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "olap", Namespace: "team", CreationTimestamp: metav1.NewTime(created)},
		Spec: v1alpha1.StarrocksSpec{Storage: &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage}}}
	newest := time.Date(2026, 12, 5, 2, 0, 0, 0, time.UTC) // "2026-12-05 10:00:00" at +08:00
	failed := map[string]any{"snapshotName": "automated_cluster_snapshot_2", "state": "ERROR", "finishedTime": "2026-12-05 11:00:03", "errorMessage": "upload failed: 403 Forbidden"}
	labels := fmt.Sprint(map[string]string{"namespace": "team", "name": "olap"})
	for _, tt := range []struct {
		name         string
		report       map[string]any
		wantHealthy  string // "" when no series
		wantLast     time.Time
		wantDueAfter time.Time
	}{
		{"the newest failed", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00", "lastJob": failed}), "0", newest, newest},
		{"off", snapshots(map[string]any{"enabled": false, "reason": "Disabled", "message": "off"}), "0", time.Time{}, created},
		{"succeeding", snapshots(map[string]any{"enabled": true, "newestSnapshotTime": "2026-12-05 10:00:00"}), "1", newest, newest},
		{"before the first", snapshots(map[string]any{"enabled": true}), "", time.Time{}, created},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := sdStatus(t, v1alpha1.StarrocksStatus{}, sdPod(t, "olap", "d8ms-sr-olap-0", true, tt.report))
			m, ok := backupMetric(sr, st, Observed{})
			require.True(t, ok, "a shared-data instance has no backup metric")
			rec := metricsRecorder{}
			publishMetrics(rec, Plan{BackupMetrics: []BackupMetric{m}})
			healthy, published := rec[MetricBackupsHealthy+labels]
			if tt.wantHealthy == "" {
				assert.False(t, published, "healthy %v published while the verdict is Unknown", healthy)
			} else {
				require.True(t, published, "no healthy series: %v", rec)
				assert.Equal(t, tt.wantHealthy, fmt.Sprint(healthy))
			}
			last, hasLast := rec[MetricBackupLastSuccess+labels]
			if tt.wantLast.IsZero() {
				assert.False(t, hasLast)
			} else {
				assert.Equal(t, float64(tt.wantLast.Unix()), last)
			}
			assert.Equal(t, float64(tt.wantDueAfter.Add(automatedSnapshotInterval).Unix()), rec[MetricBackupDue+labels])
			assert.Equal(t, float64(1), rec[MetricBackupScheduled+labels])
		})
	}

	// A shared-nothing instance without spec.backup has none.
	_, ok := backupMetric(&v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "team"}}, v1alpha1.StarrocksStatus{}, Observed{})
	assert.False(t, ok)
}

// TestRestoredInstanceRefusedRootNamesTheField: root of an instance restored
// from a cluster snapshot keeps the source's password until the agent takes
// it over; when root refuses every password the agent has, AccountsReady
// says where the team gives the source's.
func TestRestoredInstanceRefusedRootNamesTheField(t *testing.T) {
	refused := Observed{Accounts: map[string]*AgentAccounts{"olap-fe-0": {Reason: agentconfig.ReasonRootPasswordRefused, Message: "root refuses the passwords"}}}
	e := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 1}, Compute: &desired.ComputeNodes{Replicas: 1}}
	for _, tt := range []struct {
		name     string
		restored bool
	}{{"restored", true}, {"not restored", false}} {
		t.Run(tt.name, func(t *testing.T) {
			sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "olap", Namespace: "team", Generation: 1},
				Spec: v1alpha1.StarrocksSpec{Storage: &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage}}}
			if tt.restored {
				sr.Spec.Storage.RestoreFrom = &v1alpha1.ClusterSnapshotSource{Namespace: "team-b", InstanceName: "olap", InstanceUID: "11112222-3333-4444-5555-666677778888"}
			}
			st := ComputeStatus(desired.Result{Object: sr, Entry: e, Current: true}, v1alpha1.StarrocksStatus{}, refused, "cluster.local", metav1.Now())
			c := sdCond(st, ConditionAccountsReady)
			assert.Equal(t, metav1.ConditionFalse, c.Status)
			assert.Equal(t, agentconfig.ReasonRootPasswordRefused, c.Reason)
			assert.Contains(t, c.Message, "root refuses the passwords")
			assert.Equal(t, tt.restored, strings.Contains(c.Message, "spec.storage.restoreFrom.rootPasswordSecretRef"), c.Message)
		})
	}
}
