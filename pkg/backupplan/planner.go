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
	"slices"
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

// MaxObjectWrites bounds each kind of write to an instance's
// StarrocksBackup objects that one decision asks for (finalizers added,
// finalizers removed, expired backups deleted, backups refused), oldest
// first, as agentconfig.MaxBackupSets bounds the sets: a tenant with
// thousands of objects, or stripping the finalizers in a loop, gets this
// many writes a run and the rest in the next runs.
const MaxObjectWrites = 10

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
	// Include and Exclude are spec.backup.databases: a StarrocksBackup
	// without spec.databases (every scheduled one) backs up these.
	Include, Exclude []string
	// MaxObjects is how many StarrocksBackup objects the instance may
	// have (classrules.MaxBackups; 0: no limit). The oldest MaxObjects are
	// within it; one beyond it that never started is refused, and the
	// schedule creates none while the instance has this many.
	MaxObjects int
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
	// RestoringInto names an instance that restores from this backup
	// and is not Restored yet: its RESTORE reads the snapshots from the
	// bucket while it runs (RestoreJob's DOWNLOADING), so neither
	// retention nor a deletion removes them until then.
	RestoringInto string
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
	// AddFinalizer, RemoveFinalizer, Delete and Refuse name StarrocksBackup
	// objects, at most MaxObjectWrites each. Refuse are those beyond the
	// limit that never started: they get phase Refused and no work.
	AddFinalizer    []string
	RemoveFinalizer []string
	Delete          []string
	Refuse          []string
	// HeldForRestore are backups retention or a deletion would remove
	// now, kept while an instance restores from them (Object.RestoringInto).
	HeldForRestore []string
	// NextScheduled is the next slot (zero without a schedule).
	NextScheduled time.Time
	// Objects is how many StarrocksBackups the instance has, Limit its
	// MaxObjects, and Refused how many of them are (or are being) refused.
	// AtLimit: Objects reached Limit, so the schedule creates none.
	Objects, Limit, Refused int
	AtLimit                 bool
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
	d.Objects, d.Limit = len(sorted), in.MaxObjects
	d.AtLimit = in.MaxObjects > 0 && len(sorted) >= in.MaxObjects
	if !in.Exists {
		// Nobody can delete the data any more: let the objects go, the
		// data stays in the bucket (docs say so).
		for _, o := range sorted {
			if o.Deleting && o.HasFinalizer && len(d.RemoveFinalizer) < MaxObjectWrites {
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
	restoring := map[string]bool{}
	var retained []Backup
	// Finalizers go first to the sets the agent is told to run, then to
	// the others, oldest first (a tenant may strip them from old ones).
	var unprotected []string
	for i, o := range sorted {
		names[o.Name] = true
		restoring[o.Name] = o.RestoringInto != ""
		switch {
		case o.Deleting && o.HasFinalizer && o.RestoringInto != "" && !deleted[o.UID]:
			// Its data is deleted once the restore that reads it ended.
			if len(d.HeldForRestore) < MaxObjectWrites {
				d.HeldForRestore = append(d.HeldForRestore, o.Name)
			}
		case o.Deleting && o.HasFinalizer:
			// Whatever the limit: a deleted backup's data is deleted and
			// its object let go, which only makes room. Without a UID the
			// agent cannot name the snapshots: let it go.
			if deleted[o.UID] || o.UID == "" {
				if len(d.RemoveFinalizer) < MaxObjectWrites {
					d.RemoveFinalizer = append(d.RemoveFinalizer, o.Name)
				}
			} else if len(d.Deletes) < agentconfig.MaxBackupDeletes {
				d.Deletes = append(d.Deletes, agentconfig.BackupDelete{Name: o.Name, UID: o.UID, LabelPrefix: agentconfig.BackupLabelPrefix(o.UID)})
			}
		case o.Deleting:
		case o.Phase == v1alpha1.BackupPhaseRefused:
			// Never ran, holds no data: no finalizer, no set. Retention
			// may delete a scheduled one like any finished backup.
			d.Refused++
			if o.Scheduled {
				retained = append(retained, Backup{Name: o.Name, Created: o.Created, Finished: true})
			}
		case o.Phase == "" && in.MaxObjects > 0 && i >= in.MaxObjects:
			// Beyond the limit and never started: refused, whatever its
			// finalizer (one it has stays: it may have been named to the
			// agent before the limit was lowered). One that started
			// before the limit was lowered goes on below: it is kept,
			// protected and reported like any other.
			d.Refused++
			if len(d.Refuse) < MaxObjectWrites {
				d.Refuse = append(d.Refuse, o.Name)
			}
		default:
			if !o.HasFinalizer {
				unprotected = append(unprotected, o.Name)
			}
			if !o.finished() {
				unfinished++
				// Labels derive from the UID: an object without one (not
				// stored yet) waits for the next run.
				if o.UID != "" && len(d.Sets) < agentconfig.MaxBackupSets {
					include, exclude := o.Include, o.Exclude
					if len(include) == 0 && len(exclude) == 0 {
						include, exclude = in.Include, in.Exclude
					}
					d.Sets = append(d.Sets, agentconfig.BackupSet{Name: o.Name, UID: o.UID, LabelPrefix: agentconfig.BackupLabelPrefix(o.UID),
						Include: include, Exclude: exclude})
					if !o.HasFinalizer {
						d.AddFinalizer = append(d.AddFinalizer, o.Name)
					}
				}
			}
			if o.Scheduled {
				retained = append(retained, Backup{Name: o.Name, Created: o.Created, Completed: o.Phase == v1alpha1.BackupPhaseCompleted, Finished: o.finished()})
			}
		}
	}
	for _, n := range unprotected {
		if len(d.AddFinalizer) >= MaxObjectWrites {
			break
		}
		if !slices.Contains(d.AddFinalizer, n) {
			d.AddFinalizer = append(d.AddFinalizer, n)
		}
	}
	for _, n := range Expired(retained, in.Retention, now) {
		if restoring[n] {
			if len(d.HeldForRestore) < MaxObjectWrites {
				d.HeldForRestore = append(d.HeldForRestore, n)
			}
		} else {
			d.Delete = append(d.Delete, n)
		}
	}
	d.Delete = d.Delete[:min(len(d.Delete), MaxObjectWrites)]

	if in.Schedule == nil {
		return d
	}
	d.NextScheduled = in.Schedule.Next(now)
	if in.Suspend || in.Hold != "" || unfinished > 0 || d.AtLimit {
		// One set at a time: a slot that comes while one runs (or while a
		// rollout or scale-in holds jobs) is started when that ends, if
		// still within SlotWindow. At the limit no slot is started: the
		// webhook would refuse it, and the status says why.
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
	reportDatabaseRE  = regexp.MustCompile(agentconfig.DatabaseNamePattern)
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
	// Only once it finished: a duration that grew on every run would
	// patch the status (and so run the hooks) again and again.
	if st.StartTime != nil && st.CompletionTime != nil {
		if dur := st.CompletionTime.Sub(st.StartTime.Time).Round(time.Second); dur >= 0 {
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
