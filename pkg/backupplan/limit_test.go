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
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// handMade is a backup created by hand at minute i of 2026-11-01, without
// the module's finalizer (a tenant stripped it, or it is new).
func handMade(i int, phase v1alpha1.BackupPhase) Object {
	return Object{Name: fmt.Sprintf("hand-%04d", i), UID: fmt.Sprintf("22223333-4444-5555-6666-%012d", i),
		Created: utc("2026-11-01 00:00").Add(time.Duration(i) * time.Minute), Phase: phase}
}

func TestPlanBoundsTheWritesOfOneInstance(t *testing.T) {
	var objs []Object
	for i := range 2000 {
		objs = append(objs, handMade(i, v1alpha1.BackupPhaseCompleted))
	}
	// Three new ones waiting to run, the newest: their finalizers first.
	for i := 2000; i < 2003; i++ {
		objs = append(objs, handMade(i, ""))
	}
	// Deleted ones whose data the agent reported gone, and expired
	// scheduled ones.
	report := &agentconfig.BackupStatus{}
	for i := 3000; i < 3050; i++ {
		o := handMade(i, v1alpha1.BackupPhaseCompleted)
		o.Deleting, o.HasFinalizer = true, true
		objs = append(objs, o)
		report.Deleted = append(report.Deleted, o.UID)
	}
	for i := range 50 {
		objs = append(objs, obj(i, "2026-10-01 03:00", v1alpha1.BackupPhaseCompleted))
	}
	d := Plan(inst(t), objs, report, utc("2026-12-05 12:00"))
	for name, list := range map[string][]string{"AddFinalizer": d.AddFinalizer, "RemoveFinalizer": d.RemoveFinalizer, "Delete": d.Delete} {
		if len(list) != MaxObjectWrites {
			t.Errorf("%s has %d names, want the bound %d", name, len(list), MaxObjectWrites)
		}
	}
	if want := []string{"hand-2000", "hand-2001", "hand-2002"}; !slices.Equal(d.AddFinalizer[:3], want) {
		t.Errorf("the sets to run do not get their finalizers first: %v", d.AddFinalizer)
	}
	if d.AddFinalizer[3] != "hand-0000" {
		t.Errorf("then the oldest: %v", d.AddFinalizer)
	}
	if d.Delete[0] != "olap-0" {
		t.Errorf("the oldest expired backup goes first: %v", d.Delete)
	}
}

func TestPlanRefusesWhatIsBeyondTheLimitAndLosesNothing(t *testing.T) {
	in := inst(t)
	in.MaxObjects = 4
	now := utc("2026-12-05 03:04")
	objs := []Object{
		obj(1, "2026-12-01 03:00", v1alpha1.BackupPhaseCompleted),
		obj(2, "2026-12-02 03:00", v1alpha1.BackupPhaseCompleted),
		handMade(3, v1alpha1.BackupPhaseCompleted),
		handMade(4, ""),
	}
	objs[2].Created, objs[3].Created = utc("2026-12-02 04:00"), utc("2026-12-02 05:00")
	// Beyond the limit of 4: one that ran before the limit was lowered
	// (its data stays protected and reported), one being deleted (its data
	// is deleted as asked), one never started (refused, finalizer kept),
	// one never started without a finalizer (refused, none added).
	ran := handMade(5, v1alpha1.BackupPhaseCompleted)
	ran.Created = utc("2026-12-03 00:00")
	deleting := handMade(6, v1alpha1.BackupPhaseCompleted)
	deleting.Created, deleting.Deleting, deleting.HasFinalizer = utc("2026-12-03 01:00"), true, true
	queued := handMade(7, "")
	queued.Created, queued.HasFinalizer = utc("2026-12-03 02:00"), true
	fresh := handMade(8, "")
	fresh.Created = utc("2026-12-03 03:00")
	objs = append(objs, ran, deleting, queued, fresh)

	d := Plan(in, objs, nil, now)
	if !slices.Equal(d.Refuse, []string{queued.Name, fresh.Name}) {
		t.Errorf("Refuse = %v, want the two never started beyond the limit", d.Refuse)
	}
	if !d.AtLimit || d.Create != "" {
		t.Errorf("at the limit the schedule created %q (AtLimit %v)", d.Create, d.AtLimit)
	}
	if d.Objects != 8 || d.Limit != 4 || d.Refused != 2 {
		t.Errorf("Objects %d, Limit %d, Refused %d", d.Objects, d.Limit, d.Refused)
	}
	if slices.Contains(d.AddFinalizer, fresh.Name) || slices.Contains(d.AddFinalizer, queued.Name) {
		t.Errorf("a refused backup got a finalizer: %v", d.AddFinalizer)
	}
	if !slices.Contains(d.AddFinalizer, ran.Name) || !slices.Contains(d.AddFinalizer, objs[2].Name) {
		t.Errorf("a backup with data lost its protection: %v", d.AddFinalizer)
	}
	if len(d.RemoveFinalizer) != 0 || len(d.Delete) != 0 {
		t.Errorf("the limit removed %v or deleted %v", d.RemoveFinalizer, d.Delete)
	}
	if len(d.Deletes) != 1 || d.Deletes[0].Name != deleting.Name {
		t.Errorf("the deleted backup's data is not deleted: %v", d.Deletes)
	}
	if len(d.Sets) != 1 || d.Sets[0].Name != objs[3].Name {
		t.Errorf("Sets = %v, want only the one within the limit", d.Sets)
	}

	// Once refused, a backup is never run, even with room again; it stays
	// until deleted, and counts.
	queued.Phase, fresh.Phase = v1alpha1.BackupPhaseRefused, v1alpha1.BackupPhaseRefused
	d = Plan(in, []Object{objs[0], queued, fresh}, nil, now)
	if len(d.Refuse) != 0 || len(d.Sets) != 0 || len(d.AddFinalizer) != 0 || d.Refused != 2 {
		t.Errorf("a refused backup was worked on: %+v", d)
	}
	if d.Create == "" {
		t.Errorf("with room the schedule starts its slot again")
	}
	// Without a limit nothing is refused.
	in.MaxObjects = 0
	if d := Plan(in, objs, nil, now); len(d.Refuse) != 0 || d.AtLimit {
		t.Errorf("no limit refused %v", d.Refuse)
	}
}
