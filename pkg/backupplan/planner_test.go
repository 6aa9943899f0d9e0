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

package backupplan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

func daily(t *testing.T) *Schedule {
	s, err := ParseSchedule("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func inst(t *testing.T) Instance {
	return Instance{Namespace: "team-a", Name: "olap", UID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", Exists: true,
		Created: utc("2026-01-01 00:00"), Schedule: daily(t), Retention: Retention{KeepLast: 2}}
}

func obj(i int, created string, phase v1alpha1.BackupPhase) Object {
	return Object{Name: fmt.Sprintf("olap-%d", i), UID: fmt.Sprintf("11112222-3333-4444-5555-%012d", i), Created: utc(created),
		Scheduled: true, HasFinalizer: true, Phase: phase}
}

func TestPlanCreatesTheDueSlotOnce(t *testing.T) {
	now := utc("2026-12-05 03:04")
	d := Plan(inst(t), nil, nil, now)
	if d.Create != "olap-20261205-0300" || !d.CreateSlot.Equal(utc("2026-12-05 03:00")) {
		t.Fatalf("Create = %q at %s", d.Create, d.CreateSlot)
	}
	if !d.NextScheduled.Equal(utc("2026-12-06 03:00")) {
		t.Errorf("NextScheduled = %s", d.NextScheduled)
	}
	// Idempotent: the object of the slot exists.
	made := Object{Name: d.Create, UID: "11112222-3333-4444-5555-000000000001", Created: now, Scheduled: true, HasFinalizer: true, Phase: v1alpha1.BackupPhaseCompleted}
	if again := Plan(inst(t), []Object{made}, nil, now.Add(time.Minute)); again.Create != "" {
		t.Errorf("the slot was created twice: %q", again.Create)
	}
	// Outside the window nothing starts.
	if late := Plan(inst(t), nil, nil, utc("2026-12-05 03:20")); late.Create != "" {
		t.Errorf("a slot missed by 20 minutes started: %q", late.Create)
	}
}

func TestPlanStartsNothingDuringAHoldARunOrASuspension(t *testing.T) {
	now := utc("2026-12-05 03:04")
	for _, tc := range []struct {
		name string
		edit func(*Instance)
		objs []Object
	}{
		{"a rollout", func(i *Instance) { i.Hold = agentconfig.BackupHoldRollout }, nil},
		{"a pending scale-in", func(i *Instance) { i.Hold = agentconfig.BackupHoldScaleIn }, nil},
		{"suspended", func(i *Instance) { i.Suspend = true }, nil},
		{"a set still running", func(*Instance) {}, []Object{obj(1, "2026-12-05 02:00", v1alpha1.BackupPhaseRunning)}},
		{"an instance created after the slot", func(i *Instance) { i.Created = utc("2026-12-05 03:02") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inst(t)
			tc.edit(&in)
			if d := Plan(in, tc.objs, nil, now); d.Create != "" {
				t.Fatalf("created %q", d.Create)
			}
		})
	}
	// The hold ends within the window: the slot starts then.
	if d := Plan(inst(t), nil, nil, now.Add(5*time.Minute)); d.Create == "" {
		t.Error("the slot did not start once the hold ended")
	}
}

func TestPlanBoundsWhatTheAgentIsTold(t *testing.T) {
	var objs []Object
	for i := range 30 {
		objs = append(objs, obj(i, fmt.Sprintf("2026-11-%02d 03:00", 1+i%28), v1alpha1.BackupPhasePending))
	}
	for i := 30; i < 60; i++ {
		o := obj(i, "2026-10-01 03:00", v1alpha1.BackupPhaseCompleted)
		o.Deleting = true
		objs = append(objs, o)
	}
	d := Plan(inst(t), objs, nil, utc("2026-12-05 12:00"))
	if len(d.Sets) != agentconfig.MaxBackupSets || len(d.Deletes) != agentconfig.MaxBackupDeletes {
		t.Fatalf("%d sets and %d deletes, want at most %d and %d", len(d.Sets), len(d.Deletes), agentconfig.MaxBackupSets, agentconfig.MaxBackupDeletes)
	}
	if d.Sets[0].Name != "olap-0" {
		t.Errorf("the oldest set goes first, got %s", d.Sets[0].Name)
	}
}

func TestPlanRetentionAndFinalizers(t *testing.T) {
	objs := []Object{
		obj(1, "2026-12-01 03:00", v1alpha1.BackupPhaseCompleted),
		obj(2, "2026-12-02 03:00", v1alpha1.BackupPhaseCompleted),
		obj(3, "2026-12-03 03:00", v1alpha1.BackupPhaseCompleted),
		obj(4, "2026-12-04 03:00", v1alpha1.BackupPhaseCompleted),
	}
	byHand := obj(5, "2026-11-01 03:00", v1alpha1.BackupPhaseCompleted)
	byHand.Scheduled, byHand.HasFinalizer = false, false
	gone := obj(6, "2026-11-02 03:00", v1alpha1.BackupPhaseCompleted)
	gone.Deleting = true
	waiting := obj(7, "2026-11-03 03:00", v1alpha1.BackupPhaseCompleted)
	waiting.Deleting = true
	objs = append(objs, byHand, gone, waiting)
	report := &agentconfig.BackupStatus{Deleted: []string{gone.UID, "ffffffff-ffff-ffff-ffff-ffffffffffff"}}
	d := Plan(inst(t), objs, report, utc("2026-12-05 12:00"))
	if want := []string{"olap-1", "olap-2"}; !slices.Equal(d.Delete, want) {
		t.Errorf("expired %v, want %v (keepLast 2; a backup made by hand is never expired)", d.Delete, want)
	}
	if !slices.Equal(d.AddFinalizer, []string{"olap-5"}) {
		t.Errorf("AddFinalizer %v", d.AddFinalizer)
	}
	if !slices.Equal(d.RemoveFinalizer, []string{"olap-6"}) {
		t.Errorf("RemoveFinalizer %v: only the one the agent reported gone", d.RemoveFinalizer)
	}
	if len(d.Deletes) != 1 || d.Deletes[0].Name != "olap-7" || d.Deletes[0].LabelPrefix != agentconfig.BackupLabelPrefix(waiting.UID) {
		t.Errorf("Deletes %+v", d.Deletes)
	}

	// A new instance restores from olap-1 and olap-7: retention keeps
	// olap-1 and the deletion of olap-7 waits, until it is Restored.
	restoring := append([]Object(nil), objs...)
	restoring[0].RestoringInto, restoring[6].RestoringInto = "olap-copy", "olap-copy"
	d = Plan(inst(t), restoring, report, utc("2026-12-05 12:00"))
	if !slices.Equal(d.Delete, []string{"olap-2"}) || len(d.Deletes) != 0 || !slices.Equal(d.HeldForRestore, []string{"olap-7", "olap-1"}) {
		t.Errorf("a backup a restore reads: expired %v, deletes %+v, held %v", d.Delete, d.Deletes, d.HeldForRestore)
	}

	// The instance is gone: every finalizer goes at once, nothing else happens.
	in := inst(t)
	in.Exists = false
	d = Plan(in, objs, nil, utc("2026-12-05 03:04"))
	if !slices.Equal(d.RemoveFinalizer, []string{"olap-6", "olap-7"}) || d.Create != "" || len(d.Delete) != 0 || len(d.Sets) != 0 {
		t.Errorf("instance gone: %+v", d)
	}
}

func TestStatusFromReportTrustsOnlyWhatFits(t *testing.T) {
	prefix := agentconfig.BackupLabelPrefix("11112222-3333-4444-5555-666677778888")
	r := agentconfig.BackupSetStatus{UID: "11112222-3333-4444-5555-666677778888", Phase: agentconfig.BackupPhasePartiallyFailed,
		StartTime: "2026-12-05T03:00:05Z", CompletionTime: "2026-12-05T03:04:15Z", StarrocksVersion: "4.1.2",
		Message: "one\ndatabase failed" + strings.Repeat("x", 2000),
		Databases: []agentconfig.BackupDatabaseStatus{
			{Name: "sales", Label: agentconfig.BackupLabel(prefix, "sales"), BackupTimestamp: "2026-12-05-03-00-06", State: "FINISHED"},
			{Name: "events", Label: "d8ms_0000000000000000_events", BackupTimestamp: "2026-12-05\"; DROP", State: "CANCELLED", Message: "is empty"},
			{Name: "bad\nname", State: "FINISHED"},
			{Name: "bad`name", State: "FINISHED"},
			// StarRocks 4.1 names a database so (FeNameFormat.DB_NAME_REGEX).
			{Name: "sales-2024", Label: agentconfig.BackupLabel(prefix, "sales-2024"), BackupTimestamp: "2026-12-05-03-01-00", State: "FINISHED"},
		}}
	st, ok := StatusFromReport(r, prefix, "s3://b/team-a/olap-0b1c2d3e", "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", v1alpha1.TypeCluster)
	if !ok || st.Phase != v1alpha1.BackupPhasePartiallyFailed || st.Duration != "4m10s" || st.StarrocksVersion != "4.1.2" {
		t.Fatalf("status %+v", st)
	}
	if strings.Contains(st.Message, "\n") || len(st.Message) > agentconfig.MaxBackupMessageLen {
		t.Errorf("message not bounded to one line: %d bytes", len(st.Message))
	}
	if len(st.Databases) != 3 || st.DatabaseCount != 3 || st.Databases[2].Name != "sales-2024" || st.Databases[2].BackupTimestamp == "" {
		t.Fatalf("databases %+v", st.Databases)
	}
	if st.Databases[1].Label != "" || st.Databases[1].BackupTimestamp != "" {
		t.Errorf("a forged label or timestamp was kept: %+v", st.Databases[1])
	}
	if _, ok := StatusFromReport(agentconfig.BackupSetStatus{Phase: "Exploded"}, prefix, "", "", ""); ok {
		t.Error("an unknown phase was accepted")
	}
}

func TestInstanceStatus(t *testing.T) {
	at := func(s string) *metav1.Time { return &metav1.Time{Time: utc(s)} }
	backups := []v1alpha1.StarrocksBackup{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseCompleted, CompletionTime: at("2026-12-03 03:05")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseFailed, CompletionTime: at("2026-12-04 03:05"), Message: "Access Denied"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseRunning}},
	}
	st, healthy := InstanceStatus(backups, utc("2026-12-05 03:00"))
	if healthy || !st.LastSuccessfulTime.Equal(at("2026-12-03 03:05")) || st.LastFailure == nil || st.LastFailure.Reason != "StarrocksBackup b: Access Denied" {
		t.Fatalf("status %+v healthy %v", st, healthy)
	}
	backups[0].Status.CompletionTime = at("2026-12-05 03:05")
	if _, healthy := InstanceStatus(backups, time.Time{}); !healthy {
		t.Error("a success after the failure is healthy")
	}
}

func TestPlanSetsTakeTheInstancesDatabasesByDefault(t *testing.T) {
	in := inst(t)
	in.Include, in.Exclude = []string{"sales", "events"}, nil
	own := obj(1, "2026-12-05 02:00", v1alpha1.BackupPhasePending)
	own.Include = []string{"sales"}
	d := Plan(in, []Object{obj(0, "2026-12-05 01:00", v1alpha1.BackupPhasePending), own}, nil, utc("2026-12-05 12:00"))
	if len(d.Sets) != 2 || !slices.Equal(d.Sets[0].Include, []string{"sales", "events"}) || !slices.Equal(d.Sets[1].Include, []string{"sales"}) {
		t.Fatalf("sets %+v: a backup without spec.databases takes the instance's, one with its own keeps them", d.Sets)
	}
}
