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

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/backupplan"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

const (
	olapUID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
	setUID  = "11112222-3333-4444-5555-666677778888"
)

func backedUpInstance() *v1alpha1.Starrocks {
	return &v1alpha1.Starrocks{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "olap", UID: olapUID, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Spec: v1alpha1.StarrocksSpec{Type: v1alpha1.TypeStandalone, Backup: &v1alpha1.BackupSpec{
			Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com", Bucket: "team-backups",
				CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"}},
			Schedule:  "0 3 * * *",
			Retention: &v1alpha1.BackupRetention{KeepLast: ptr(int32(2))},
		}},
	}
}

func snapOf(t *testing.T, obj string) BackupSnap {
	t.Helper()
	var b BackupSnap
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapBackups), obj, &b))
	return b
}

// A StarrocksBackup is tenant-written: any field of any type decodes
// (coerced), never failing the snapshot.
func TestBackupFilterCoercesWhatATenantWrites(t *testing.T) {
	b := snapOf(t, `{"metadata":{"name":"x","namespace":"team","uid":"u","finalizers":[1,{"a":1},"`+v1alpha1.BackupFinalizer+`"],"labels":{"managed-services.deckhouse.io/starrocks-scheduled":["true"]}},`+
		`"spec":{"instanceName":{"x":1},"databases":{"include":"sales","exclude":[1,"ok"]}},"status":{"phase":7,"databases":[{"name":1},"x"]}}`)
	assert.True(t, b.Finalizer)
	assert.False(t, b.Scheduled, "a label that is not the string true does not count")
	assert.Equal(t, "", b.Instance)
	assert.Equal(t, "", b.Phase)
	assert.Equal(t, []string{"", "ok"}, b.Exclude)
	assert.Empty(t, b.Include)
	for _, hostile := range []string{`{"metadata":"x","spec":[],"status":"y"}`, `{"metadata":{"labels":["a"],"finalizers":{"a":1}},"spec":{"databases":"x"},"status":{"databases":{"a":1}}}`, `{}`} {
		assert.NotPanics(t, func() { snapOf(t, hostile) }, hostile)
	}
}

func TestApplyBackupsFeedsTheEntryWithItsOwnSetsOnly(t *testing.T) {
	sr := backedUpInstance()
	mine := BackupSnap{Namespace: "team", Name: "olap-now", UID: setUID, Created: "2026-12-05T02:00:00Z", Finalizer: true, Instance: "olap", Phase: "Pending"}
	// The same instance name in another namespace is another instance.
	other := mine
	other.Namespace, other.Name, other.UID = "evil", "olap-evil", "99998888-7777-6666-5555-444433332222"
	var o Observed
	ex := desired.Existing{}
	applyBackups(sr, indexBackups([]BackupSnap{mine, other}), &o, v1alpha1.StarrocksStatus{}, &ex, time.Date(2026, 12, 5, 3, 4, 0, 0, time.UTC))
	require.Len(t, ex.BackupSets, 1)
	assert.Equal(t, agentconfig.BackupSet{Name: "olap-now", UID: setUID, LabelPrefix: agentconfig.BackupLabelPrefix(setUID)}, ex.BackupSets[0])
	assert.Empty(t, ex.BackupHold)

	t.Run("without spec.backup a backup being deleted goes at once", func(t *testing.T) {
		c := sr.DeepCopy()
		c.Spec.Backup = nil
		deleting := mine
		deleting.Deleting = true
		var o Observed
		ex := desired.Existing{}
		applyBackups(c, indexBackups([]BackupSnap{deleting}), &o, v1alpha1.StarrocksStatus{}, &ex, time.Now())
		require.NotNil(t, o.BackupDecision)
		assert.Equal(t, []string{"olap-now"}, o.BackupDecision.RemoveFinalizer)
		assert.Empty(t, ex.BackupSets)
	})
	t.Run("a rollout holds jobs", func(t *testing.T) {
		ex := desired.Existing{CreateImage: "d8ms-sr-olap-abc"}
		applyBackups(sr, indexBackups(nil), &Observed{}, v1alpha1.StarrocksStatus{}, &ex, time.Now())
		assert.Equal(t, agentconfig.BackupHoldRollout, ex.BackupHold)
	})
	t.Run("a pending scale-in holds jobs", func(t *testing.T) {
		c := sr.DeepCopy()
		c.Spec.Type, c.Spec.Backend.Replicas = v1alpha1.TypeCluster, ptr(int32(3))
		ex := desired.Existing{}
		applyBackups(c, indexBackups(nil), &Observed{Backend: &StatefulSetState{Replicas: 4}}, v1alpha1.StarrocksStatus{}, &ex, time.Now())
		assert.Equal(t, agentconfig.BackupHoldScaleIn, ex.BackupHold)
	})
}

func restoreReportAnnotation(t *testing.T, pod string, restore any, backup any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"tls": map[string]any{"ready": true}, "membership": map[string]any{"leader": pod + feHost}, "restore": restore, "backup": backup, "updatedAt": "x"})
	require.NoError(t, err)
	return string(data)
}

func TestRestoreKeepsTheClientPortsClosedUntilTheLeaderReportsIt(t *testing.T) {
	sr := backedUpInstance()
	sr.Name, sr.UID = "copy", "aaaabbbb-cccc-dddd-eeee-ffff00001111"
	sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: "olap-now"}
	source := BackupSnap{Namespace: "team", Name: "olap-now", UID: setUID, Instance: "olap", Phase: "Completed", InstanceUID: olapUID,
		Location: "s3://team-backups/team/olap-0b1c2d3e", InstanceType: "Standalone"}
	source.Databases = append(source.Databases, struct {
		Name            string `json:"name"`
		Label           string `json:"label"`
		BackupTimestamp string `json:"backupTimestamp"`
		State           string `json:"state"`
	}{"sales", agentconfig.BackupLabel(agentconfig.BackupLabelPrefix(setUID), "sales"), "2026-12-05-03-00-05", "FINISHED"})

	run := func(annotation string, prev v1alpha1.StarrocksStatus) (desired.Existing, Observed) {
		o := observeAnnotations(t, map[string]string{"d8ms-sr-olap-0": annotation})
		o.LeaderClaims = []string{"d8ms-sr-olap-0"}
		ex := desired.Existing{AccountsReady: true}
		applyBackups(sr, indexBackups([]BackupSnap{source}), &o, prev, &ex, time.Now())
		return ex, o
	}
	ex, o := run(restoreReportAnnotation(t, "d8ms-sr-olap-0", nil, nil), v1alpha1.StarrocksStatus{})
	require.NotNil(t, ex.Restore, "the restore is requested from the StarrocksBackup's status")
	assert.True(t, ex.RestorePending)
	assert.Equal(t, 1, ex.Restore.ReplicationNum)
	assert.True(t, ex.Restore.Repository.ReadOnly)
	require.NoError(t, (&agentconfig.Config{QueryHost: "h", QueryPort: 1, Frontends: []string{"f"}, EditLogPort: 1, HeartbeatPort: 1, Restore: ex.Restore}).Validate())
	v, _ := restoredVerdict(sr, o, v1alpha1.StarrocksStatus{})
	assert.Equal(t, []any{false, ReasonRestoring}, []any{v.OK, v.Reason})

	token := ex.Restore.Token
	// A report about another restore (a forged or stale token) changes nothing.
	ex, _ = run(restoreReportAnnotation(t, "d8ms-sr-olap-0", map[string]any{"token": "0000000000000000", "phase": "Completed"}, nil), v1alpha1.StarrocksStatus{})
	assert.True(t, ex.RestorePending, "a report of another token opened the ports")

	running := map[string]any{"token": token, "phase": "Running", "databases": []any{map[string]any{"name": "sales", "state": "DOWNLOADING"}}}
	ex, o = run(restoreReportAnnotation(t, "d8ms-sr-olap-0", running, nil), v1alpha1.StarrocksStatus{})
	assert.True(t, ex.RestorePending)
	v, _ = restoredVerdict(sr, o, v1alpha1.StarrocksStatus{})
	assert.Contains(t, v.Message, "sales DOWNLOADING")

	done := map[string]any{"token": token, "phase": "Completed", "databases": []any{map[string]any{"name": "sales", "state": "FINISHED"}}}
	ex, o = run(restoreReportAnnotation(t, "d8ms-sr-olap-0", done, nil), v1alpha1.StarrocksStatus{})
	assert.False(t, ex.RestorePending)
	v, _ = restoredVerdict(sr, o, v1alpha1.StarrocksStatus{})
	assert.Equal(t, []any{true, ReasonRestored}, []any{v.OK, v.Reason})

	// Once Restored is True, nothing is restored again and the ports stay open.
	prev := v1alpha1.StarrocksStatus{Conditions: []metav1.Condition{{Type: v1alpha1.ConditionRestored, Status: metav1.ConditionTrue, Reason: ReasonRestored}}}
	ex, _ = run(restoreReportAnnotation(t, "d8ms-sr-olap-0", nil, nil), prev)
	assert.False(t, ex.RestorePending)
	assert.Nil(t, ex.Restore)

	t.Run("a source that is not finished requests nothing and keeps the ports closed", func(t *testing.T) {
		running := source
		running.Phase = "Running"
		o := Observed{}
		ex := desired.Existing{}
		applyBackups(sr, indexBackups([]BackupSnap{running}), &o, v1alpha1.StarrocksStatus{}, &ex, time.Now())
		assert.Nil(t, ex.Restore)
		assert.True(t, ex.RestorePending)
		v, _ := restoredVerdict(sr, o, v1alpha1.StarrocksStatus{})
		assert.Equal(t, ReasonRestoreWaiting, v.Reason)
	})
}

func TestBackupsHealthyFollowsTheRepositoryAndTheNewestBackup(t *testing.T) {
	sr := backedUpInstance()
	o := observeAnnotations(t, map[string]string{"d8ms-sr-olap-0": restoreReportAnnotation(t, "d8ms-sr-olap-0", nil,
		map[string]any{"repository": map[string]any{"name": "r", "ready": false, "reason": "RepositoryRefused", "message": "Access Denied\n(403)"}})})
	o.LeaderClaims = []string{"d8ms-sr-olap-0"}
	st, v, ok := backupsVerdict(sr, o, time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC))
	require.True(t, ok)
	assert.Equal(t, []any{false, ReasonRepositoryFailed}, []any{v.OK, v.Reason})
	assert.NotContains(t, v.Message, "\n")
	assert.Equal(t, time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC), st.NextScheduledTime.Time.UTC())

	o = Observed{Backups: []BackupSnap{
		{Name: "a", Phase: "Completed", CompletionTime: "2026-12-03T03:05:00Z"},
		{Name: "b", Phase: "Failed", CompletionTime: "2026-12-04T03:05:00Z", Message: "Access Denied"},
	}}
	st, v, _ = backupsVerdict(sr, o, time.Now())
	assert.Equal(t, []any{false, ReasonBackupFailed}, []any{v.OK, v.Reason})
	assert.Equal(t, "StarrocksBackup b: Access Denied", st.LastFailure.Reason)
	o.Backups[0].CompletionTime = "2026-12-05T03:05:00Z"
	_, v, _ = backupsVerdict(sr, o, time.Now())
	assert.True(t, v.OK)
}

// The alert on missed backups measures from the schedule's first slot after
// the newest Completed backup: a weekly schedule is not late two days after
// its last backup, a daily one is due the next day.
func TestBackupDueIsTheFirstSlotAfterTheNewestSuccess(t *testing.T) {
	last := metav1.NewTime(time.Date(2026, 12, 3, 3, 20, 0, 0, time.UTC)) // a Thursday
	status := v1alpha1.StarrocksStatus{Backup: &v1alpha1.InstanceBackupStatus{LastSuccessfulTime: &last}}
	due := func(schedule string, suspend bool, st v1alpha1.StarrocksStatus) time.Time {
		sr := backedUpInstance()
		sr.Spec.Backup.Schedule, sr.Spec.Backup.Suspend = schedule, suspend
		m, ok := backupMetric(sr, st, Observed{})
		require.True(t, ok)
		if m.Due == 0 {
			return time.Time{}
		}
		return time.Unix(int64(m.Due), 0).UTC()
	}
	assert.Equal(t, time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC), due("0 3 * * *", false, status), "daily")
	assert.Equal(t, time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC), due("0 3 * * 0", false, status), "weekly, on Sundays")
	assert.Equal(t, time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC), due("0 * * * *", false, status), "hourly")
	assert.True(t, due("0 3 * * *", true, status).IsZero(), "a suspended schedule is never due")
	assert.True(t, due("", false, status).IsZero(), "without a schedule nothing is due")
	assert.True(t, due("0 3 31 2 *", false, status).IsZero(), "a schedule that never fires")
	assert.True(t, due("0 3 * * *", false, v1alpha1.StarrocksStatus{}).IsZero(), "before the first success")
}

func ptr[T any](v T) *T { return &v }

// backupClassYAML has a UID of its own: the hook caches compiled classes by
// UID and generation across runs.
const backupClassYAML = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata: {name: default, uid: backup-class-uid, generation: 1}
spec:
  topology: {allowedTopologies: [Ignored], defaultTopology: Ignored}
  sizingPolicies:
    - cores: {min: 1, max: 4}
      memory: {min: 2Gi, max: 16Gi, step: 1Gi}
      coreFractions: [50, 100]
  backup: {allowed: true}
`

func backedUpYAML(name string) string {
	return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: %[1]s, namespace: team, uid: %[2]s, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  starrocksClassName: default
  type: Standalone
  frontend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 20Gi}}
  backup:
    storage: {endpoint: "https://s3.example.com", bucket: team-backups, credentialsSecretRef: {name: s3-keys, accessKeyIDKey: a, secretAccessKeyKey: s}}
    schedule: "0 10 * * *"
    retention: {keepLast: 3}
`, name, olapUID)
}

// The hook starts the backup of the slot due now once, as a StarrocksBackup
// of the instance's namespace, and lets a deleted backup of an instance
// that is gone go (its data stays in the bucket); an object of another
// namespace naming the instance changes nothing.
func TestHookStartsTheScheduledBackupOnce(t *testing.T) {
	f := newHook(t)
	state := backupClassYAML + "---" + backedUpYAML("olap") + "---" + readyObjectsYAML("olap", 1, 1) + `---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: olap-20261202-1000, namespace: evil, uid: 99998888-7777-6666-5555-444433332222}
spec: {instanceName: olap}
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: gone-1, namespace: team, uid: 11112222-3333-4444-5555-000000000009, deletionTimestamp: "2026-12-01T00:00:00Z", finalizers: ["` + v1alpha1.BackupFinalizer + `", "team.example.com/keep"]}
spec: {instanceName: gone}
`
	f.KubeStateSet(state)
	f.RunHook()
	require.NoError(t, f.HookError())
	b := f.KubernetesResource(v1alpha1.BackupKind, "team", "olap-20261202-1000")
	require.NotNil(t, b, "the slot's StarrocksBackup was not created")
	assert.Equal(t, "olap", b.Object["spec"].(map[string]any)["instanceName"])
	assert.Equal(t, []string{v1alpha1.BackupFinalizer}, b.GetFinalizers())
	assert.Equal(t, "true", b.GetLabels()["managed-services.deckhouse.io/starrocks-scheduled"])
	gone := f.KubernetesResource(v1alpha1.BackupKind, "team", "gone-1")
	if gone != nil {
		assert.Equal(t, []string{"team.example.com/keep"}, gone.GetFinalizers(), "only the module's finalizer goes")
	}
	labels := map[string]string{"name": "olap", "namespace": "team"}
	assertMetric(t, f, MetricBackupsHealthy, labels, 1)
	assertMetric(t, f, MetricBackupScheduled, labels, 1)
	assertMetric(t, f, MetricBackupsFailed, labels, 0)
	st := statusOf(t, f, "olap")
	s, r, _ := condition(st, v1alpha1.ConditionBackupsHealthy)
	assert.Equal(t, []string{"True", ReasonBackupsHealthy}, []string{s, r})
	require.NotNil(t, st.Backup)
	assert.Equal(t, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), st.Backup.NextScheduledTime.Time.UTC())

	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Empty(t, written(f, "create", "starrocksbackups"), "the slot's backup was created again")

	// Once stored (with the UID the API server gives it), the entry tells
	// the agent about the set, and nothing of the other namespace.
	f.KubeStateSet(state + `---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: olap-20261202-1000, namespace: team, uid: ` + setUID + `, finalizers: ["` + v1alpha1.BackupFinalizer + `"], labels: {managed-services.deckhouse.io/starrocks-scheduled: "true"}}
spec: {instanceName: olap}
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: olap-now, namespace: team, uid: 11112222-3333-4444-5555-000000000007}
spec: {instanceName: olap}
status: {phase: Completed, completionTime: "2026-12-01T10:20:00Z"}
`)
	f.RunHook()
	require.NoError(t, f.HookError())
	assertMetric(t, f, MetricBackupLastSuccess, labels, float64(time.Date(2026, 12, 1, 10, 20, 0, 0, time.UTC).Unix()))
	assertMetric(t, f, MetricBackupDue, labels, float64(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC).Unix()))
	cm := f.KubernetesResource("ConfigMap", "d8-managed-starrocks", "desired-"+olapUID)
	require.NotNil(t, cm)
	data := fmt.Sprint(cm.Object["data"])
	assert.Contains(t, data, agentconfig.BackupLabelPrefix(setUID))
	assert.NotContains(t, data, "99998888", "a backup of another namespace reached the entry")
	assert.Empty(t, written(f, "create", "starrocksbackups"), "a backup started while one is pending")
}

func TestBackupEvents(t *testing.T) {
	sr := backedUpInstance()
	st := func(conds ...metav1.Condition) v1alpha1.StarrocksStatus {
		return v1alpha1.StarrocksStatus{Conditions: conds}
	}
	healthy := metav1.Condition{Type: v1alpha1.ConditionBackupsHealthy, Status: metav1.ConditionTrue, Reason: ReasonBackupsHealthy, Message: "ok"}
	failed := metav1.Condition{Type: v1alpha1.ConditionBackupsHealthy, Status: metav1.ConditionFalse, Reason: ReasonBackupFailed, Message: "The newest backup failed: Access Denied"}
	events := instanceEvents(sr, st(healthy), st(failed))
	require.Len(t, events, 1)
	assert.Equal(t, []string{"Warning", ReasonBackupFailed}, []string{events[0].Type, events[0].Reason})
	assert.Empty(t, instanceEvents(sr, st(failed), st(failed)), "the same failure twice is one Event")
	events = instanceEvents(sr, st(failed), st(healthy))
	require.Len(t, events, 1)
	assert.Equal(t, "Normal", events[0].Type)

	restoring := metav1.Condition{Type: v1alpha1.ConditionRestored, Status: metav1.ConditionFalse, Reason: ReasonRestoring, Message: "sales DOWNLOADING"}
	restoreFailed := metav1.Condition{Type: v1alpha1.ConditionRestored, Status: metav1.ConditionFalse, Reason: ReasonRestoreFailed, Message: "failed"}
	restored := metav1.Condition{Type: v1alpha1.ConditionRestored, Status: metav1.ConditionTrue, Reason: ReasonRestored, Message: "done"}
	assert.Empty(t, instanceEvents(sr, st(), st(restoring)), "a restore in progress is no news")
	assert.Len(t, instanceEvents(sr, st(restoring), st(restoreFailed)), 1)
	assert.Len(t, instanceEvents(sr, st(restoring), st(restored)), 1)
}

// A running job holds pod restarts while it runs, for as long as
// StarRocks lets it run (the class's job timeout, a day by default), and
// no longer: not between two databases of its set, not past its timeout.
func TestARunningJobHoldsTheRolloutForABoundedTime(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	set := func(dbs ...agentconfig.BackupDatabaseStatus) Observed {
		return Observed{BackupDecision: &backupplan.Decision{Sets: []agentconfig.BackupSet{{Name: "olap-now", UID: setUID}}},
			BackupReport: &agentconfig.BackupStatus{Sets: []agentconfig.BackupSetStatus{{UID: setUID, Phase: agentconfig.BackupPhaseRunning,
				StartTime: "2026-12-05T09:00:00Z", Databases: dbs}}}}
	}
	finished := agentconfig.BackupDatabaseStatus{Name: "crm", State: agentconfig.BackupStateFinished}
	uploading := agentconfig.BackupDatabaseStatus{Name: "sales", State: "UPLOADING", JobStartTime: "2026-12-05T11:00:00Z"}
	waiting := agentconfig.BackupDatabaseStatus{Name: "web", State: agentconfig.BackupDatabaseWaiting}

	o := set(finished, uploading, waiting)
	why, until := backupJobRunning(o, now)
	assert.Contains(t, why, "The BACKUP of database \"sales\" (StarrocksBackup olap-now) is in UPLOADING since 2026-12-05T11:00:00Z")
	assert.Equal(t, "2026-12-06T11:00:00Z", until.Format(time.RFC3339), "StarRocks' day from the job's start")
	why, _ = backupJobRunning(o, now.Add(7*time.Hour))
	assert.NotEmpty(t, why, "a job uploading for 8 hours still runs: StarRocks allows it a day")
	why, _ = backupJobRunning(o, now.Add(23*time.Hour))
	assert.Empty(t, why, "past its timeout StarRocks has cancelled the job: the report is stale")

	o.BackupJobTimeout = 2 * time.Hour
	why, until = backupJobRunning(o, now)
	assert.Equal(t, "2026-12-05T13:00:00Z", until.Format(time.RFC3339), "the class's timeout")
	why, _ = backupJobRunning(o, now.Add(time.Hour))
	assert.Empty(t, why)

	why, _ = backupJobRunning(set(finished, waiting), now)
	assert.Empty(t, why, "between two databases of a set nothing runs: the rollout goes on, the next database waits for it")

	// An agent of before the job's start time: the set's start bounds it.
	old := uploading
	old.JobStartTime = ""
	why, until = backupJobRunning(set(old), now)
	assert.Contains(t, why, "since 2026-12-05T09:00:00Z")
	assert.Equal(t, "2026-12-06T09:00:00Z", until.Format(time.RFC3339))

	// A report of a set this instance did not name holds nothing.
	o = set(uploading)
	o.BackupReport.Sets[0].UID = "99998888-7777-6666-5555-444433332222"
	why, _ = backupJobRunning(o, now)
	assert.Empty(t, why)

	o = Observed{RestoreReport: &agentconfig.RestoreStatus{Phase: agentconfig.BackupPhaseRunning, StartTime: "2026-12-05T10:00:00Z",
		Databases: []agentconfig.RestoreDatabaseStatus{{Name: "crm", State: agentconfig.BackupStateFinished},
			{Name: "sales", State: "DOWNLOADING", JobStartTime: "2026-12-05T11:30:00Z"}}}}
	why, _ = backupJobRunning(o, now)
	assert.Contains(t, why, "The RESTORE of database \"sales\" is in DOWNLOADING since 2026-12-05T11:30:00Z")
	why, _ = backupJobRunning(o, now.Add(20*time.Hour))
	assert.NotEmpty(t, why, "a download of 20 hours is within StarRocks' day")
	o.RestoreReport.Databases[1].State = "DOWNLOADING: forged\nlines"
	why, _ = backupJobRunning(o, now)
	assert.Empty(t, why, "a state that is not StarRocks' reaches no message")
}

func TestABackupThatCannotRunIsFailedAndOneThatRanIsKept(t *testing.T) {
	plain := backedUpInstance()
	plain.Name, plain.Spec.Backup = "plain", nil
	shared := backedUpInstance()
	shared.Name, shared.Spec.Backup = "shared", nil
	shared.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage}
	snaps := []BackupSnap{
		{Namespace: "team", Name: "of-nobody", Instance: "nobody"},
		{Namespace: "team", Name: "of-plain", Instance: "plain"},
		{Namespace: "team", Name: "of-shared", Instance: "shared"},
		{Namespace: "team", Name: "of-olap", Instance: "olap"},
		{Namespace: "team", Name: "old", Instance: "nobody", Phase: "Completed"},
		{Namespace: "evil", Name: "elsewhere", Instance: "olap"},
	}
	writes := unrunnableBackupWrites(snaps, []*v1alpha1.Starrocks{backedUpInstance(), plain, shared})
	got := map[string]string{}
	for _, w := range writes {
		got[w.Namespace+"/"+w.Name] = string(w.Patch)
	}
	assert.Len(t, got, 4)
	assert.Contains(t, got["team/of-nobody"], `Not run: there is no Starrocks \"nobody\" in namespace team.`)
	assert.Contains(t, got["team/of-plain"], "has no spec.backup")
	assert.Contains(t, got["team/of-shared"], "StarRocks takes no cluster snapshot on demand", "a shared-data instance is told what protects it")
	assert.Contains(t, got["evil/elsewhere"], `there is no Starrocks \"olap\" in namespace evil`, "an instance of another namespace does not count")
	assert.Contains(t, got["team/of-nobody"], `"phase":"Failed"`)
}

// The whole path of a restore through the hook: the entry asks the agent
// to restore and keeps the client ports closed although the accounts are
// ready; once the leader reports that restore Completed, Restored is True
// and the ports open.
func TestHookKeepsARestoringInstanceClosedUntilItsRestoreCompleted(t *testing.T) {
	copyYAML := strings.Replace(backedUpYAML("copy"), olapUID, "aaaabbbb-cccc-4ddd-8eee-ffff00001111", 1) + "  restore: {backupName: olap-now}\n"
	source := `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: olap-now, namespace: team, uid: ` + setUID + `}
spec: {instanceName: olap}
status:
  phase: Completed
  instanceUID: ` + olapUID + `
  instanceType: Standalone
  location: s3://team-backups/team/olap-0b1c2d3e
  completionTime: "2026-12-01T03:04:00Z"
  databases: [{name: sales, label: ` + agentconfig.BackupLabel(agentconfig.BackupLabelPrefix(setUID), "sales") + `, backupTimestamp: 2026-12-01-03-00-05, state: FINISHED}]
`
	status := func(restore any) string {
		data, _ := json.Marshal(map[string]any{"tls": map[string]any{"ready": true}, "accounts": map[string]any{"ready": true},
			"membership": map[string]any{"leader": "d8ms-sr-copy-0.d8ms-sr-copy-fe-headless.team.svc.cluster.local"}, "restore": restore, "updatedAt": "x"})
		return string(data)
	}
	objects := func(restore any) string {
		o := readyObjectsYAML("copy", 1, 1)
		i := strings.Index(o, "    managed-starrocks.deckhouse.io/agent-status: '")
		j := strings.Index(o[i:], "\n")
		return o[:i] + "    managed-starrocks.deckhouse.io/agent-status: '" + status(restore) + "'" + o[i+j:]
	}
	entry := func(f interface {
		KubernetesResource(kind, ns, name string) *unstructured.Unstructured
	}) desired.Instance {
		cm := f.KubernetesResource("ConfigMap", "d8-managed-starrocks", "desired-aaaabbbb-cccc-4ddd-8eee-ffff00001111")
		require.NotNil(t, cm)
		var e desired.Instance
		require.NoError(t, json.Unmarshal([]byte(cm.Object["data"].(map[string]any)["instance.json"].(string)), &e))
		return e
	}
	f := newHook(t)
	state := backupClassYAML + "---" + copyYAML + "---" + source
	f.KubeStateSet(state + "---" + objects(nil))
	f.RunHook()
	require.NoError(t, f.HookError())
	e := entry(f)
	require.NotNil(t, e.AgentConfig.Restore, "the agent is asked to restore")
	assert.Equal(t, "s3://team-backups/team/olap-0b1c2d3e", e.AgentConfig.Restore.Repository.Location)
	assert.True(t, e.AgentConfig.Restore.Repository.ReadOnly)
	assert.False(t, e.Network.ClientPortsOpen, "the client ports opened during a restore")
	st := statusOf(t, f, "copy")
	s, r, _ := condition(st, v1alpha1.ConditionRestored)
	assert.Equal(t, []string{"False", ReasonRestoring}, []string{s, r})

	token := e.AgentConfig.Restore.Token
	f.KubeStateSet(state + "---" + objects(map[string]any{"token": token, "phase": "Completed", "databases": []any{map[string]any{"name": "sales", "state": "FINISHED"}}}))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.True(t, entry(f).Network.ClientPortsOpen, "the client ports stay closed after the restore completed")
	s, r, _ = condition(statusOf(t, f, "copy"), v1alpha1.ConditionRestored)
	assert.Equal(t, []string{"True", ReasonRestored}, []string{s, r})
}

// A BE scale-in asked for while the leader reports a restore running is
// held: the agent is not told to decommission the removed BE until the job
// ended, and BackendScaleIn says why.
func TestHookHoldsAScaleInWhileARestoreRuns(t *testing.T) {
	const copyUID = "aaaabbbb-cccc-4ddd-8eee-ffff00001111"
	copyYAML := strings.Replace(strings.Replace(strings.Replace(backedUpYAML("copy"), olapUID, copyUID, 1),
		"type: Standalone", "type: Cluster", 1), "backend: {", "backend: {replicas: 3, ", 1) + "  restore: {backupName: olap-now}\n"
	source := `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: olap-now, namespace: team, uid: ` + setUID + `}
spec: {instanceName: olap}
status:
  phase: Completed
  instanceUID: ` + olapUID + `
  instanceType: Cluster
  location: s3://team-backups/team/olap-0b1c2d3e
  completionTime: "2026-12-01T03:04:00Z"
  databases: [{name: sales, label: ` + agentconfig.BackupLabel(agentconfig.BackupLabelPrefix(setUID), "sales") + `, backupTimestamp: 2026-12-01-03-00-05, state: FINISHED}]
`
	host := func(i int) string {
		return fmt.Sprintf("d8ms-sr-copy-be-%d.d8ms-sr-copy-be-headless.team.svc.cluster.local", i)
	}
	objects := func(restore any) string {
		data, err := json.Marshal(map[string]any{"tls": map[string]any{"ready": true}, "accounts": map[string]any{"ready": true},
			"membership": map[string]any{"leader": "d8ms-sr-copy-0.d8ms-sr-copy-fe-headless.team.svc.cluster.local", "backends": []string{host(0), host(1), host(2), host(3)}},
			"restore":    restore, "updatedAt": "x"})
		require.NoError(t, err)
		o := readyObjectsYAML("copy", 1, 4)
		o = strings.Replace(o, "name: d8ms-sr-copy-be\n  namespace: team\n  uid: sts-uid-copy-be\n  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: copy, app.kubernetes.io/component: backend}\nspec: {replicas: 1}",
			"name: d8ms-sr-copy-be\n  namespace: team\n  uid: sts-uid-copy-be\n  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: copy, app.kubernetes.io/component: backend}\nspec: {replicas: 4}", 1)
		require.Contains(t, o, "spec: {replicas: 4}")
		i := strings.Index(o, "    managed-starrocks.deckhouse.io/agent-status: '")
		j := strings.Index(o[i:], "\n")
		return o[:i] + "    managed-starrocks.deckhouse.io/agent-status: '" + string(data) + "'" + o[i+j:]
	}
	entry := func(f interface {
		KubernetesResource(kind, ns, name string) *unstructured.Unstructured
	}) desired.Instance {
		cm := f.KubernetesResource("ConfigMap", "d8-managed-starrocks", "desired-"+copyUID)
		require.NotNil(t, cm)
		var e desired.Instance
		require.NoError(t, json.Unmarshal([]byte(cm.Object["data"].(map[string]any)["instance.json"].(string)), &e))
		return e
	}
	state := backupClassYAML + "---" + copyYAML + "---" + source
	f := newHook(t)
	f.KubeStateSet(state + "---" + objects(nil))
	f.RunHook()
	require.NoError(t, f.HookError())
	e := entry(f)
	require.NotNil(t, e.AgentConfig.Restore)
	token := e.AgentConfig.Restore.Token

	running := map[string]any{"token": token, "phase": "Running", "startTime": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339),
		"databases": []any{map[string]any{"name": "sales", "state": "DOWNLOADING"}}}
	f = newHook(t)
	f.KubeStateSet(state + "---" + objects(running))
	f.RunHook()
	require.NoError(t, f.HookError())
	e = entry(f)
	assert.Len(t, e.AgentConfig.Backends, 4, "the agent was told to decommission a BE while a restore runs")
	assert.EqualValues(t, 4, e.Backend.Replicas)
	s, r, m := condition(statusOf(t, f, "copy"), v1alpha1.ConditionBackendScaleIn)
	assert.Equal(t, []string{"False", ReasonBackupJobRunning}, []string{s, r}, m)
	assert.Contains(t, m, "The RESTORE of database \"sales\" is in DOWNLOADING since")

	// Once it completed the scale-in goes on.
	running["phase"] = "Completed"
	f = newHook(t)
	f.KubeStateSet(state + "---" + objects(running))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Len(t, entry(f).AgentConfig.Backends, 3)
}

// A backup a new instance restores from stays, data and object, until that
// instance is Restored: its RESTORE reads the snapshots from the bucket.
func TestABackupBeingRestoredIsKept(t *testing.T) {
	sr := backedUpInstance()
	sr.Spec.Backup.Schedule = ""
	sr.Spec.Backup.Retention = &v1alpha1.BackupRetention{KeepLast: ptr(int32(1))}
	old := BackupSnap{Namespace: "team", Name: "olap-old", UID: setUID, Created: "2026-12-01T03:00:00Z", Finalizer: true, Scheduled: true, Instance: "olap", Phase: "Completed"}
	newer := old
	newer.Name, newer.UID, newer.Created = "olap-new", "22223333-4444-5555-6666-777788889999", "2026-12-02T03:00:00Z"
	deleting := old
	deleting.Name, deleting.UID, deleting.Deleting, deleting.Scheduled = "olap-gone", "33334444-5555-6666-7777-888899990000", true, false
	copyOf := func(restore v1alpha1.RestoreSpec) *v1alpha1.Starrocks {
		return &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "copy-" + restore.BackupName},
			Spec: v1alpha1.StarrocksSpec{Restore: &restore}}
	}
	plan := func(instances []*v1alpha1.Starrocks, statuses map[string]v1alpha1.StarrocksStatus) *backupplan.Decision {
		ix := indexBackups([]BackupSnap{old, newer, deleting})
		ix.restoring = indexRestores(instances, statuses)
		var o Observed
		ex := desired.Existing{}
		applyBackups(sr, ix, &o, v1alpha1.StarrocksStatus{}, &ex, time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
		require.NotNil(t, o.BackupDecision)
		return o.BackupDecision
	}
	d := plan([]*v1alpha1.Starrocks{sr}, nil)
	require.Equal(t, []string{"olap-old"}, d.Delete, "retention keepLast 1")
	require.Len(t, d.Deletes, 1, "the deleted backup's data goes")

	byName := copyOf(v1alpha1.RestoreSpec{BackupName: "olap-old"})
	bySource := copyOf(v1alpha1.RestoreSpec{Source: &v1alpha1.RestoreSource{BackupID: deleting.UID}})
	d = plan([]*v1alpha1.Starrocks{sr, byName, bySource}, nil)
	assert.Empty(t, d.Delete, "retention deleted the backup a restore reads")
	assert.Empty(t, d.Deletes, "a deletion removed the data a restore reads")
	assert.ElementsMatch(t, []string{"olap-old", "olap-gone"}, d.HeldForRestore)

	restored := map[string]v1alpha1.StarrocksStatus{}
	for _, c := range []*v1alpha1.Starrocks{byName, bySource} {
		restored[desired.Key(c.Namespace, c.Name)] = v1alpha1.StarrocksStatus{Conditions: []metav1.Condition{{Type: v1alpha1.ConditionRestored, Status: metav1.ConditionTrue}}}
	}
	d = plan([]*v1alpha1.Starrocks{sr, byName, bySource}, restored)
	assert.Equal(t, []string{"olap-old"}, d.Delete, "once Restored, retention goes on")
	assert.Len(t, d.Deletes, 1)
}
