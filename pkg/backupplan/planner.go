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
	"regexp"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// SlotWindow is how late after its scheduled time a backup is still
// started: the hooks run every minute, so a slot is missed only when they
// could not run for this long (or a hold lasted that long). A missed slot
// is not made up later: two backups back to back would follow.
const SlotWindow = 15 * time.Minute

// Instance is what the planner needs to know of one Starrocks.
type Instance struct {
	Namespace, Name, UID string
	// Exists is false once the Starrocks is gone (or being deleted): its
	// backups' finalizers go at once and their data stays in the bucket.
	Exists bool
	// Created is the instance's creation time: no slot before it.
	Created time.Time
	// Schedule is spec.backup.schedule parsed (nil: none, or no
	// spec.backup); Suspend is spec.backup.suspend.
	Schedule *Schedule
	Suspend  bool
	// Retention is spec.backup.retention parsed.
	Retention Retention
	// Hold is agentconfig.BackupHold* while a rollout or a BE scale-in is
	// pending: no backup starts.
	Hold string
}

// Object is one StarrocksBackup of the instance (spec.instanceName names it,
// in its namespace; the caller filters).
type Object struct {
	Name, UID string
	Created   time.Time
	// Scheduled: created by the schedule (LabelScheduled), subject to
	// retention.
	Scheduled    bool
	Deleting     bool
	HasFinalizer bool
	Phase        v1alpha1.BackupPhase
	Include      []string
	Exclude      []string
}

func (o Object) finished() bool {
	switch o.Phase {
	case v1alpha1.BackupPhaseCompleted, v1alpha1.BackupPhasePartiallyFailed, v1alpha1.BackupPhaseFailed:
		return true
	}
	return false
}

// Decision is what the hooks do for one instance in one run.
type Decision struct {
	// Create is the name of the scheduled StarrocksBackup to create now
	// ("" for none); CreateSlot its scheduled time.
	Create     string
	CreateSlot time.Time
	// Sets and Deletes go into the agent's Config (bounded).
	Sets    []agentconfig.BackupSet
	Deletes []agentconfig.BackupDelete
	// AddFinalizer, RemoveFinalizer and Delete name StarrocksBackup objects.
	AddFinalizer    []string
	RemoveFinalizer []string
	Delete          []string
	// NextScheduled is the next slot (zero without a schedule).
	NextScheduled time.Time
}

// Plan decides the scheduled backup due now, the sets and deletions the agent
// is told about, the finalizers and the expired backups. The report is the
// FE leader's agent's Status.Backup (nil when there is none): only its
// Deleted list is used here, and only for UIDs this instance asked to delete.
func Plan(in Instance, objs []Object, report *agentconfig.BackupStatus, now time.Time) Decision {
	var d Decision
	sorted := append([]Object(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].Created.Equal(sorted[j].Created) {
			return sorted[i].Created.Before(sorted[j].Created)
		}
		return sorted[i].Name < sorted[j].Name
	})
	if !in.Exists {
		// Nobody can delete the data any more: let the objects go, the
		// data stays in the bucket (docs say so).
		for _, o := range sorted {
			if o.Deleting && o.HasFinalizer {
				d.RemoveFinalizer = append(d.RemoveFinalizer, o.Name)
			}
		}
		return d
	}
	deleted := map[string]bool{}
	if report != nil {
		for _, uid := range report.Deleted {
			deleted[uid] = true
		}
	}
	var unfinished int
	names := map[string]bool{}
	var retained []Backup
	for _, o := range sorted {
		names[o.Name] = true
		switch {
		case o.Deleting && o.HasFinalizer:
			// Without a UID the agent cannot name the snapshots: let it go.
			if deleted[o.UID] || o.UID == "" {
				d.RemoveFinalizer = append(d.RemoveFinalizer, o.Name)
			} else if len(d.Deletes) < agentconfig.MaxBackupDeletes {
				d.Deletes = append(d.Deletes, agentconfig.BackupDelete{Name: o.Name, UID: o.UID, LabelPrefix: agentconfig.BackupLabelPrefix(o.UID)})
			}
		case o.Deleting:
		default:
			if !o.HasFinalizer {
				d.AddFinalizer = append(d.AddFinalizer, o.Name)
			}
			if !o.finished() {
				unfinished++
				if len(d.Sets) < agentconfig.MaxBackupSets {
					d.Sets = append(d.Sets, agentconfig.BackupSet{Name: o.Name, UID: o.UID, LabelPrefix: agentconfig.BackupLabelPrefix(o.UID),
						Include: o.Include, Exclude: o.Exclude})
				}
			}
			if o.Scheduled {
				retained = append(retained, Backup{Name: o.Name, Created: o.Created, Completed: o.Phase == v1alpha1.BackupPhaseCompleted, Finished: o.finished()})
			}
		}
	}
	d.Delete = Expired(retained, in.Retention, now)

	if in.Schedule == nil {
		return d
	}
	d.NextScheduled = in.Schedule.Next(now)
	if in.Suspend || in.Hold != "" || unfinished > 0 {
		// One set at a time: a slot that comes while one runs (or while a
		// rollout or scale-in holds jobs) is started when that ends, if
		// still within SlotWindow.
		return d
	}
	slot := in.Schedule.Prev(now, SlotWindow)
	if slot.IsZero() || slot.Before(in.Created) {
		return d
	}
	if name := ScheduledName(in.Name, slot); !names[name] {
		d.Create, d.CreateSlot = name, slot
	}
	return d
}

var phases = map[string]v1alpha1.BackupPhase{
	agentconfig.BackupPhasePending: v1alpha1.BackupPhasePending, agentconfig.BackupPhaseRunning: v1alpha1.BackupPhaseRunning,
	agentconfig.BackupPhaseCompleted: v1alpha1.BackupPhaseCompleted, agentconfig.BackupPhasePartiallyFailed: v1alpha1.BackupPhasePartiallyFailed,
	agentconfig.BackupPhaseFailed: v1alpha1.BackupPhaseFailed,
}

var (
	reportDatabaseRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,255}$`)
	reportStateRE     = regexp.MustCompile(`^[A-Z_]{1,32}$`)
	reportVersionRE   = regexp.MustCompile(`^[-+._a-zA-Z0-9]{1,64}$`)
	reportTimestampRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}(-[0-9]{3})?$`)
)

// StatusFromReport is the StarrocksBackup status for what the agent
// reported about the set with this UID and label prefix. The report comes
// from a pod annotation a tenant can write: it is trusted only for this
// instance's own set (the caller matches the UID), every value is checked or
// dropped (a database, label or timestamp that does not fit is left out; a
// label not of this set's prefix is left out, so a forged report cannot make
// a later restore read another set's snapshot) and messages are bounded.
// ok is false when the report says nothing usable.
func StatusFromReport(r agentconfig.BackupSetStatus, labelPrefix, location, instanceUID string, instanceType v1alpha1.InstanceType) (v1alpha1.StarrocksBackupStatus, bool) {
	phase, ok := phases[r.Phase]
	if !ok {
		return v1alpha1.StarrocksBackupStatus{}, false
	}
	st := v1alpha1.StarrocksBackupStatus{Phase: phase, Location: location, InstanceUID: instanceUID, InstanceType: instanceType,
		Message: oneLine(agentconfig.TruncateBackupMessage(r.Message))}
	if reportVersionRE.MatchString(r.StarrocksVersion) {
		st.StarrocksVersion = r.StarrocksVersion
	}
	if t, err := time.Parse(time.RFC3339, r.StartTime); err == nil {
		st.StartTime = &metav1.Time{Time: t.UTC()}
	}
	if t, err := time.Parse(time.RFC3339, r.CompletionTime); err == nil {
		st.CompletionTime = &metav1.Time{Time: t.UTC()}
	}
	if st.StartTime != nil {
		end := time.Now()
		if st.CompletionTime != nil {
			end = st.CompletionTime.Time
		}
		if dur := end.Sub(st.StartTime.Time).Round(time.Second); dur >= 0 {
			st.Duration = dur.String()
		}
	}
	for _, db := range r.Databases {
		if len(st.Databases) >= agentconfig.MaxBackupDatabases || !reportDatabaseRE.MatchString(db.Name) || !reportStateRE.MatchString(db.State) {
			continue
		}
		e := v1alpha1.BackupDatabaseStatus{Name: db.Name, State: db.State, Message: oneLine(agentconfig.TruncateBackupMessage(db.Message))}
		if db.Label == agentconfig.BackupLabel(labelPrefix, db.Name) {
			e.Label = db.Label
		}
		if reportTimestampRE.MatchString(db.BackupTimestamp) {
			e.BackupTimestamp = db.BackupTimestamp
		}
		st.Databases = append(st.Databases, e)
	}
	st.DatabaseCount = int32(len(st.Databases))
	return st, true
}

// oneLine keeps a message on one line (it reaches kubectl and Events).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// InstanceStatus is status.backup of the Starrocks from its backups'
// statuses, and whether the newest finished one succeeded (BackupsHealthy).
func InstanceStatus(backups []v1alpha1.StarrocksBackup, next time.Time) (v1alpha1.InstanceBackupStatus, bool) {
	var st v1alpha1.InstanceBackupStatus
	var newestFinished *v1alpha1.StarrocksBackup
	for i := range backups {
		b := &backups[i]
		end := b.Status.CompletionTime
		if end == nil {
			continue
		}
		switch b.Status.Phase {
		case v1alpha1.BackupPhaseCompleted:
			if st.LastSuccessfulTime == nil || end.After(st.LastSuccessfulTime.Time) {
				st.LastSuccessfulTime = end.DeepCopy()
			}
		case v1alpha1.BackupPhaseFailed, v1alpha1.BackupPhasePartiallyFailed:
			if st.LastFailure == nil || end.After(st.LastFailure.Time.Time) {
				reason := b.Status.Message
				if reason == "" {
					reason = string(b.Status.Phase)
				}
				st.LastFailure = &v1alpha1.BackupFailure{Time: *end.DeepCopy(), Reason: "StarrocksBackup " + b.Name + ": " + reason}
			}
		default:
			continue
		}
		if newestFinished == nil || end.After(newestFinished.Status.CompletionTime.Time) {
			newestFinished = b
		}
	}
	if !next.IsZero() {
		st.NextScheduledTime = &metav1.Time{Time: next}
	}
	healthy := newestFinished == nil || newestFinished.Status.Phase == v1alpha1.BackupPhaseCompleted
	return st, healthy
}
