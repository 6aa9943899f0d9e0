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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/backupplan"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// Backups, the instances hook's part: which StarrocksBackup sets
// and deletions the agent is told about (agentConfig.backup, bounded by
// backupplan.Plan), whether jobs wait for a rollout or a scale-in
// (backupHold), the restore of spec.restore and the client ports closed
// until it finished, and the conditions Restored and BackupsHealthy.
//
// StarrocksBackup objects and the agent's report are tenant-writable: an
// object counts only for the instance its spec names in its own namespace,
// and the report only for the sets and the restore this instance's entry
// names (a forged report can only mislead the status of its own instance).

// Conditions and reasons of backups.
const (
	ReasonRestoring        = v1alpha1.ReasonRestoring
	ReasonRestored         = "RestoreCompleted"
	ReasonRestoreFailed    = "RestoreFailed"
	ReasonRestoreWaiting   = "RestoreSourceNotReady"
	ReasonBackupsHealthy   = "BackupsSucceeding"
	ReasonBackupFailed     = "BackupFailed"
	ReasonRepositoryFailed = "RepositoryNotReady"
	// ReasonBackupLimitReached: the instance has as many StarrocksBackups
	// as its class allows and a schedule, or some were refused.
	ReasonBackupLimitReached = "BackupLimitReached"
)

// backupFilter keeps what the planner and a restore need of a
// StarrocksBackup, every field coerced: obj and arr read a value of the wrong
// type as empty, so no object a tenant writes fails the snapshot.
const backupFilter = `def obj: if type == "object" then . else {} end; def arr: if type == "array" then . else [] end;` +
	` (.metadata | obj) as $m | (.spec | obj) as $s | (.status | obj) as $st |` +
	` {namespace: ($m.namespace | str), name: ($m.name | str), uid: ($m.uid | str),` +
	` created: ($m.creationTimestamp | str), deleting: ($m.deletionTimestamp != null), resourceVersion: ($m.resourceVersion | str),` +
	` finalizers: [$m.finalizers | arr | .[:32][] | str], statusRaw: ($st | tojson),` +
	` finalizer: ([$m.finalizers | arr | .[] | str] | index("` + v1alpha1.BackupFinalizer + `") != null),` +
	` scheduled: (($m.labels | obj)["` + backupplan.LabelScheduled + `"] == "true"),` +
	` instance: ($s.instanceName | str),` +
	` include: [$s.databases | obj | .include | arr | .[] | str], exclude: [$s.databases | obj | .exclude | arr | .[] | str],` +
	` phase: ($st.phase | str), instanceUID: ($st.instanceUID | str), location: ($st.location | str), instanceType: ($st.instanceType | str),` +
	` completionTime: ($st.completionTime | str), message: ($st.message | str),` +
	` databases: [$st.databases | arr | .[:100][] | obj | {name: (.name | str), label: (.label | str), backupTimestamp: (.backupTimestamp | str), state: (.state | str)}]}`

// BackupSnap is the jq-filtered StarrocksBackup.
type BackupSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Created   string `json:"created"`
	Deleting  bool   `json:"deleting"`
	Finalizer bool   `json:"finalizer"`
	// Finalizers (at most 32) and ResourceVersion: a finalizer is added
	// or removed with the others kept, refused if the object changed.
	Finalizers      []string `json:"finalizers"`
	ResourceVersion string   `json:"resourceVersion"`
	// StatusRaw is the status as JSON text: a status is written only when
	// it changes.
	StatusRaw      string   `json:"statusRaw"`
	Scheduled      bool     `json:"scheduled"`
	Instance       string   `json:"instance"`
	Include        []string `json:"include"`
	Exclude        []string `json:"exclude"`
	Phase          string   `json:"phase"`
	InstanceUID    string   `json:"instanceUID"`
	Location       string   `json:"location"`
	InstanceType   string   `json:"instanceType"`
	CompletionTime string   `json:"completionTime"`
	Message        string   `json:"message"`
	Databases      []struct {
		Name            string `json:"name"`
		Label           string `json:"label"`
		BackupTimestamp string `json:"backupTimestamp"`
		State           string `json:"state"`
	} `json:"databases"`
	// Unreadable says why the item did not decode (it is then ignored).
	Unreadable string `json:"-"`
}

// object is the snapshot as the API type, for the functions shared with
// admission (classrules.CheckRestoreSource, desired.RestoreFromBackup).
func (b BackupSnap) object() *v1alpha1.StarrocksBackup {
	o := &v1alpha1.StarrocksBackup{
		ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: b.Name},
		Spec:       v1alpha1.StarrocksBackupSpec{InstanceName: b.Instance},
		Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhase(b.Phase), InstanceUID: b.InstanceUID, Location: b.Location,
			InstanceType: v1alpha1.InstanceType(b.InstanceType), Message: b.Message},
	}
	if t, err := time.Parse(time.RFC3339, b.CompletionTime); err == nil {
		o.Status.CompletionTime = &metav1.Time{Time: t}
	}
	for _, d := range b.Databases {
		o.Status.Databases = append(o.Status.Databases, v1alpha1.BackupDatabaseStatus{Name: d.Name, Label: d.Label, BackupTimestamp: d.BackupTimestamp, State: d.State})
	}
	return o
}

// backupIndex holds the readable StarrocksBackup objects by the instance
// their spec names in their namespace ("namespace/instance", sorted by
// name) and by their own "namespace/name": built once per run, so a run
// stays linear in the number of objects.
type backupIndex struct {
	byInstance map[string][]BackupSnap
	byName     map[string]BackupSnap
	// classes are the StarrocksClasses by name, for their limit on
	// StarrocksBackups (classrules.MaxBackups).
	classes map[string]*v1alpha1.StarrocksClass
	// restoring: the instance (namespace/name) that restores from a
	// backup and is not Restored yet, by the backup's "namespace/name"
	// (spec.restore.backupName) and by its UID (spec.restore.source
	// .backupId); see indexRestores.
	restoring map[string]string
}

// indexRestores finds the instances that restore from a StarrocksBackup
// and are not Restored yet (and not being deleted): their RESTORE reads
// the backup's snapshots from the bucket until it ended, so retention and
// a deletion leave them there until then (backupplan.Object.RestoringInto).
// A restore that failed keeps holding its backup while its instance
// exists: the team deletes the instance or restores again.
func indexRestores(instances []*v1alpha1.Starrocks, statuses map[string]v1alpha1.StarrocksStatus) map[string]string {
	out := map[string]string{}
	for _, sr := range instances {
		r := sr.Spec.Restore
		key := desired.Key(sr.Namespace, sr.Name)
		if r == nil || sr.DeletionTimestamp != nil || conditionTrue(statuses[key], v1alpha1.ConditionRestored) {
			continue
		}
		if r.BackupName != "" {
			out[desired.Key(sr.Namespace, r.BackupName)] = key
		}
		if r.Source != nil && r.Source.BackupID != "" {
			out[r.Source.BackupID] = key
		}
	}
	return out
}

func indexBackups(all []BackupSnap, classes ...*v1alpha1.StarrocksClass) backupIndex {
	ix := backupIndex{byInstance: map[string][]BackupSnap{}, byName: map[string]BackupSnap{}, classes: map[string]*v1alpha1.StarrocksClass{}}
	for _, cl := range classes {
		ix.classes[cl.Name] = cl
	}
	for _, b := range all {
		if b.Unreadable != "" {
			continue
		}
		k := desired.Key(b.Namespace, b.Instance)
		ix.byInstance[k] = append(ix.byInstance[k], b)
		ix.byName[desired.Key(b.Namespace, b.Name)] = b
	}
	for _, list := range ix.byInstance {
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	return ix
}

// leaderReports decodes the FE leader's backup and restore reports (nil
// when there is no single leader or its report does not decode).
func leaderReports(o Observed) (*agentconfig.BackupStatus, *agentconfig.RestoreStatus) {
	if len(o.LeaderClaims) != 1 {
		return nil, nil
	}
	pod := o.LeaderClaims[0]
	var b *agentconfig.BackupStatus
	var r *agentconfig.RestoreStatus
	if raw := o.BackupReports[pod]; raw != "" && raw != "null" {
		if json.Unmarshal([]byte(raw), &b) != nil {
			b = nil
		}
	}
	if raw := o.RestoreReports[pod]; raw != "" && raw != "null" {
		if json.Unmarshal([]byte(raw), &r) != nil {
			r = nil
		}
	}
	return b, r
}

// backupHold is why no backup or restore job may start: the FE pods run an
// older revision (a rollout is under way) or the BE StatefulSet keeps more
// pods than the spec asks (a scale-in is pending).
func backupHold(sr *v1alpha1.Starrocks, o Observed, createImage string) string {
	switch {
	case createImage != "":
		return agentconfig.BackupHoldRollout
	case o.Backend != nil && sr.Spec.Backend.Replicas != nil && o.Backend.Replicas > *sr.Spec.Backend.Replicas:
		return agentconfig.BackupHoldScaleIn
	}
	return ""
}

// applyBackups fills the backup part of the instance's Existing and
// records in o what its status needs.
func applyBackups(sr *v1alpha1.Starrocks, ix backupIndex, o *Observed, prev v1alpha1.StarrocksStatus, ex *desired.Existing, now time.Time) {
	o.Backups = ix.byInstance[desired.Key(sr.Namespace, sr.Name)]
	objs := planObjects(o.Backups, ix.restoring)
	o.RestoringInto = map[string]string{}
	for _, b := range objs {
		if b.RestoringInto != "" {
			o.RestoringInto[b.Name] = b.RestoringInto
		}
	}
	report, restoreReport := leaderReports(*o)
	ex.BackupHold = backupHold(sr, *o, ex.CreateImage)
	o.BackupJobTimeout = classrules.BackupJobTimeout(ix.classes[sr.Spec.StarrocksClassName])
	if b := sr.Spec.Backup; b != nil {
		in := backupplan.Instance{Namespace: sr.Namespace, Name: sr.Name, UID: string(sr.UID), Exists: sr.DeletionTimestamp == nil,
			Created: sr.CreationTimestamp.Time, Suspend: b.Suspend, Hold: ex.BackupHold,
			MaxObjects: classrules.MaxBackups(ix.classes[sr.Spec.StarrocksClassName])}
		if b.Databases != nil {
			in.Include, in.Exclude = b.Databases.Include, b.Databases.Exclude
		}
		if b.Schedule != "" {
			in.Schedule, _ = backupplan.ParseSchedule(b.Schedule)
		}
		if r := b.Retention; r != nil {
			if r.KeepLast != nil {
				in.Retention.KeepLast = int(*r.KeepLast)
			}
			in.Retention.KeepWithin, _ = backupplan.ParseDuration(r.KeepWithin)
		}
		d := backupplan.Plan(in, objs, report, now)
		ex.BackupSets, ex.BackupDeletes = d.Sets, d.Deletes
		o.BackupDecision, o.BackupReport = &d, report
	} else {
		// spec.backup was removed: the agent has no repository to delete
		// from, so a backup being deleted goes at once and its data stays
		// in the bucket, as when the instance is gone.
		d := backupplan.Plan(backupplan.Instance{Exists: false}, objs, nil, now)
		o.BackupDecision = &d
	}
	if sr.Spec.Restore == nil || conditionTrue(prev, v1alpha1.ConditionRestored) {
		return
	}
	// Until Restored is True the client ports stay closed, whatever else
	// happens: what clients wrote would mix with the restored data.
	ex.RestorePending = true
	var from *desired.RestoreFrom
	if sr.Spec.Restore.Source != nil {
		from = desired.RestoreFromSource(sr)
	} else {
		// The backup may be of another instance of the namespace (one
		// deleted since, typically).
		if b, ok := ix.byName[desired.Key(sr.Namespace, sr.Spec.Restore.BackupName)]; ok {
			bo := b.object()
			// Checked again here, as admission did: the backup may have
			// changed since (or admission was skipped).
			if len(classrules.CheckRestoreSource(sr, classrules.BackupFacts{Backup: bo})) == 0 {
				from = desired.RestoreFromBackup(sr, bo)
			}
		}
	}
	backends := int32(1)
	if sr.Spec.Backend.Replicas != nil {
		backends = *sr.Spec.Backend.Replicas
	}
	ex.Restore = desired.RestoreConfig(string(sr.UID), from, backends)
	o.Restore = ex.Restore
	if ex.Restore != nil && restoreReport != nil && restoreReport.Token == ex.Restore.Token {
		o.RestoreReport = restoreReport
		if restoreReport.Phase == agentconfig.BackupPhaseCompleted {
			ex.RestorePending = false
		}
	}
}

func planObjects(snaps []BackupSnap, restoring map[string]string) []backupplan.Object {
	out := make([]backupplan.Object, 0, len(snaps))
	for _, b := range snaps {
		created, _ := time.Parse(time.RFC3339, b.Created)
		into := restoring[desired.Key(b.Namespace, b.Name)]
		if into == "" && b.UID != "" {
			into = restoring[b.UID]
		}
		out = append(out, backupplan.Object{Name: b.Name, UID: b.UID, Created: created, Scheduled: b.Scheduled, Deleting: b.Deleting,
			HasFinalizer: b.Finalizer, Phase: v1alpha1.BackupPhase(b.Phase), Include: b.Include, Exclude: b.Exclude, RestoringInto: into})
	}
	return out
}

func conditionTrue(st v1alpha1.StarrocksStatus, typ string) bool {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// restoredVerdict is the Restored condition of an instance with
// spec.restore, and the progress for Available while it runs.
func restoredVerdict(sr *v1alpha1.Starrocks, o Observed, prev v1alpha1.StarrocksStatus) (Verdict, bool) {
	if sr.Spec.Restore == nil {
		return Verdict{}, false
	}
	if conditionTrue(prev, v1alpha1.ConditionRestored) {
		for _, c := range prev.Conditions {
			if c.Type == v1alpha1.ConditionRestored {
				return Verdict{true, c.Reason, c.Message}, true
			}
		}
	}
	r := o.RestoreReport
	switch {
	case o.Restore == nil:
		return Verdict{false, ReasonRestoreWaiting, fmt.Sprintf("The restore source %s is not usable yet (a StarrocksBackup that does not exist, is not finished, or has no database to restore); the client ports stay closed.", restoreSourceName(sr))}, true
	case r == nil:
		return Verdict{false, ReasonRestoring, "The restore is requested; the agent of the FE leader has not reported it yet. The client ports stay closed until it finished."}, true
	case r.Phase == agentconfig.BackupPhaseCompleted:
		return Verdict{true, ReasonRestored, fmt.Sprintf("%s restored from %s; the client ports are open.", restoreProgress(r), restoreSourceName(sr))}, true
	case r.Phase == agentconfig.BackupPhaseFailed:
		return Verdict{false, ReasonRestoreFailed, fmt.Sprintf("The restore failed: %s (%s). The instance stays closed to clients: delete it and create it again, or restore another backup.", oneLine(r.Message), restoreProgress(r))}, true
	}
	return Verdict{false, ReasonRestoring, fmt.Sprintf("Restoring from %s: %s. The client ports stay closed until it finished.", restoreSourceName(sr), restoreProgress(r))}, true
}

func restoreSourceName(sr *v1alpha1.Starrocks) string {
	if r := sr.Spec.Restore; r.BackupName != "" {
		return fmt.Sprintf("StarrocksBackup %q", r.BackupName)
	}
	return "the backup " + sr.Spec.Restore.Source.BackupID
}

// restoreProgress is "sales FINISHED, events DOWNLOADING", bounded.
func restoreProgress(r *agentconfig.RestoreStatus) string {
	parts := make([]string, 0, min(len(r.Databases), 10))
	for _, d := range r.Databases[:min(len(r.Databases), 10)] {
		parts = append(parts, oneLine(d.Name)+" "+oneLine(d.State))
	}
	if more := len(r.Databases) - 10; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	if len(parts) == 0 {
		return "no database reported yet"
	}
	return strings.Join(parts, ", ")
}

// backupsVerdict is status.backup and BackupsHealthy of an instance with
// spec.backup.
func backupsVerdict(sr *v1alpha1.Starrocks, o Observed, now time.Time) (*v1alpha1.InstanceBackupStatus, Verdict, bool) {
	if sr.Spec.Backup == nil {
		return nil, Verdict{}, false
	}
	objs := make([]v1alpha1.StarrocksBackup, 0, len(o.Backups))
	for _, b := range o.Backups {
		objs = append(objs, *b.object())
	}
	var next time.Time
	if s, err := backupplan.ParseSchedule(sr.Spec.Backup.Schedule); err == nil && sr.Spec.Backup.Schedule != "" && !sr.Spec.Backup.Suspend {
		next = s.Next(now)
	}
	st, healthy := backupplan.InstanceStatus(objs, next)
	if st.LastFailure != nil {
		st.LastFailure.Reason = truncate(oneLine(st.LastFailure.Reason))
	}
	report, _ := leaderReports(o)
	d := o.BackupDecision
	scheduled := !next.IsZero()
	switch {
	case report != nil && !report.Repository.Ready:
		return &st, Verdict{false, ReasonRepositoryFailed, fmt.Sprintf("The backup repository cannot be used: %s: %s", oneLine(report.Repository.Reason), oneLine(agentconfig.TruncateBackupMessage(report.Repository.Message)))}, true
	case d != nil && (d.Refused > 0 || (d.AtLimit && scheduled)):
		return &st, Verdict{false, ReasonBackupLimitReached, limitMessage(sr, *d)}, true
	case !healthy:
		return &st, Verdict{false, ReasonBackupFailed, "The newest backup failed: " + st.LastFailure.Reason}, true
	}
	return &st, Verdict{true, ReasonBackupsHealthy, "The repository is usable and the newest finished backup completed."}, true
}

// limitMessage says what the instance's limit on StarrocksBackups stops
// and what to do. It names no count that moves with every object created
// or deleted: a changed message is a status patch and an Event.
func limitMessage(sr *v1alpha1.Starrocks, d backupplan.Decision) string {
	var stops []string
	if d.AtLimit && sr.Spec.Backup != nil && sr.Spec.Backup.Schedule != "" && !sr.Spec.Backup.Suspend {
		stops = append(stops, "the schedule starts no backup")
	}
	if d.Refused > 0 {
		stops = append(stops, fmt.Sprintf("newer StarrocksBackups are not run (phase %s)", v1alpha1.BackupPhaseRefused))
	}
	return fmt.Sprintf("The instance has reached the most StarrocksBackup objects its class %q allows, %d (spec.backup.maxBackups): %s. "+
		"Delete backups no longer needed (and the refused ones: kubectl -n %s get starrocksbackups), lower spec.backup.retention, or ask the platform admin to raise the limit.",
		sr.Spec.StarrocksClassName, d.Limit, strings.Join(stops, "; "), sr.Namespace)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// BackupWrite is one write to a StarrocksBackup, made through kubewrite in
// the instance's namespace (a refusal stays its instance's).
type BackupWrite struct {
	// Instance is "namespace/name" of the Starrocks, for the log.
	Instance        string
	Namespace, Name string
	// What: create, add-finalizer, remove-finalizer, delete, status,
	// refuse (a status patch to phase Refused, or Failed for a backup that
	// cannot run) or held (status.message says a restore holds it).
	What string
	// Event goes with the write (held): created once the write is kept.
	Event *corev1.Event
	// Object is the StarrocksBackup to create; Patch the merge patch
	// (of /status for What status); UID the object to delete.
	Object *unstructured.Unstructured
	Patch  []byte
	UID    string
}

// backupWrites are the writes of one instance's backups this run: the
// scheduled backup due now, finalizers, expired backups and the status the
// agent reported for each set this instance's entry names.
func backupWrites(sr *v1alpha1.Starrocks, o Observed, e *desired.Instance, now metav1.Time) []BackupWrite {
	key := desired.Key(sr.Namespace, sr.Name)
	d := o.BackupDecision
	if d == nil {
		return nil
	}
	byName := map[string]BackupSnap{}
	for _, b := range o.Backups {
		byName[b.Name] = b
	}
	var out []BackupWrite
	if d.Create != "" {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": v1alpha1.BackupKind,
			"metadata": map[string]any{"name": d.Create, "namespace": sr.Namespace,
				"labels":     map[string]any{backupplan.LabelInstance: sr.Name, backupplan.LabelScheduled: "true"},
				"finalizers": []any{v1alpha1.BackupFinalizer}},
			"spec": map[string]any{"instanceName": sr.Name},
		}}
		out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: d.Create, What: "create", Object: u})
	}
	finalizers := func(b BackupSnap, add bool) []byte {
		list := []string{}
		for _, f := range b.Finalizers {
			if f != v1alpha1.BackupFinalizer {
				list = append(list, f)
			}
		}
		if add {
			list = append(list, v1alpha1.BackupFinalizer)
		}
		data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": list, "resourceVersion": b.ResourceVersion}})
		return data
	}
	for _, n := range d.AddFinalizer {
		out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: n, What: "add-finalizer", Patch: finalizers(byName[n], true)})
	}
	for _, n := range d.RemoveFinalizer {
		out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: n, What: "remove-finalizer", Patch: finalizers(byName[n], false)})
	}
	for _, n := range d.Delete {
		out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: n, What: "delete", UID: byName[n].UID})
	}
	if len(d.Refuse) > 0 {
		msg := truncate(fmt.Sprintf("Not run: Starrocks %q has %d StarrocksBackup objects, and its class %q allows %d (spec.backup.maxBackups). "+
			"Delete this one and backups no longer needed; create it again once there is room.", sr.Name, d.Objects, sr.Spec.StarrocksClassName, d.Limit))
		data, _ := json.Marshal(map[string]any{"status": v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseRefused, Message: msg}})
		for _, n := range d.Refuse {
			out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: n, What: "refuse", Patch: data})
		}
	}
	out = append(out, heldBackupWrites(sr, o, now)...)
	if o.BackupReport == nil || e == nil || e.AgentConfig.Backup == nil {
		return out
	}
	// Only the sets this instance's entry names, matched by UID.
	named := map[string]string{}
	for _, set := range e.AgentConfig.Backup.Sets {
		named[set.UID] = set.Name
	}
	for _, r := range o.BackupReport.Sets[:min(len(o.BackupReport.Sets), agentconfig.MaxBackupSets)] {
		name, ok := named[r.UID]
		b, exists := byName[name]
		if !ok || !exists || b.UID != r.UID {
			continue
		}
		st, ok := backupplan.StatusFromReport(r, agentconfig.BackupLabelPrefix(r.UID), e.AgentConfig.Backup.Repository.Location, string(sr.UID), v1alpha1.InstanceType(e.Type))
		if !ok {
			continue
		}
		if sameStatus(b.StatusRaw, st) {
			continue
		}
		data, _ := json.Marshal(map[string]any{"status": st})
		out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: name, What: "status", Patch: data})
	}
	return out
}

// ReasonHeldForRestore is the Event of a StarrocksBackup that retention or
// its deletion would remove while an instance restores from it.
const ReasonHeldForRestore = "HeldForRestore"

// heldNoteSuffix ends every held note: what follows it is the message the
// backup had before (kept, and given back when the hold ends).
const heldNoteSuffix = "until that instance is Restored."

// heldNote is the start of status.message of a backup an instance restores
// from, while retention or its deletion waits for that restore. An instance
// of another namespace (a restore by spec.restore.source) is not named:
// one tenant learns nothing of another's.
func heldNote(namespace, into string) string {
	who := "an instance of another namespace"
	if ns, name, _ := strings.Cut(into, "/"); ns == namespace {
		who = fmt.Sprintf("Starrocks %q", name)
	}
	return fmt.Sprintf("Held for a restore: %s restores from this backup and is not Restored yet; "+
		"its snapshots stay in the bucket, and the deletion of this StarrocksBackup (or by retention) waits %s", who, heldNoteSuffix)
}

// heldBackupWrites tell the user which of the instance's backups are held
// for a restore (backupplan.Decision.HeldForRestore), so a deleted one does
// not just hang in Terminating: a status.message in front of the message it
// had, and one Event per backup and restoring instance (named after both:
// the same hold computed again creates nothing). A note whose hold ended
// (retention no longer removes the backup) is taken away again. Writes come
// only when the message changes, bounded as the planner bounds the names.
func heldBackupWrites(sr *v1alpha1.Starrocks, o Observed, now metav1.Time) []BackupWrite {
	held := map[string]bool{}
	for _, n := range o.BackupDecision.HeldForRestore {
		held[n] = true
	}
	key := desired.Key(sr.Namespace, sr.Name)
	var out []BackupWrite
	patch := func(msg string) []byte {
		data, _ := json.Marshal(map[string]any{"status": map[string]any{"message": truncate(msg)}})
		return data
	}
	for _, b := range o.Backups {
		noted := strings.HasPrefix(b.Message, "Held for a restore: ")
		before := b.Message
		if i := strings.Index(b.Message, heldNoteSuffix); noted && i >= 0 {
			before = strings.TrimSpace(b.Message[i+len(heldNoteSuffix):])
		}
		if !held[b.Name] {
			if noted && len(out) < backupplan.MaxObjectWrites {
				out = append(out, BackupWrite{Instance: key, Namespace: sr.Namespace, Name: b.Name, What: "held", Patch: patch(before)})
			}
			continue
		}
		note := heldNote(b.Namespace, o.RestoringInto[b.Name])
		if strings.HasPrefix(b.Message, note) {
			continue
		}
		w := BackupWrite{Instance: key, Namespace: sr.Namespace, Name: b.Name, What: "held", Patch: patch(strings.TrimSpace(note + " " + before))}
		w.Event = shared.InstanceEvent(shared.InstanceRef{Namespace: b.Namespace, Name: b.Name, UID: b.UID, Kind: v1alpha1.BackupKind},
			corev1.EventTypeNormal, ReasonHeldForRestore, note, now, o.RestoringInto[b.Name])
		out = append(out, w)
	}
	return out
}

// orphanBackupWrites let the StarrocksBackups being deleted go whose
// instance no longer exists: nobody can delete their data any more, so it
// stays in the bucket (documented).
func orphanBackupWrites(all []BackupSnap, instances []*v1alpha1.Starrocks) []BackupWrite {
	live := map[string]bool{}
	for _, sr := range instances {
		live[desired.Key(sr.Namespace, sr.Name)] = true
	}
	var out []BackupWrite
	perInstance := map[string]int{}
	for _, b := range all {
		key := desired.Key(b.Namespace, b.Instance)
		if b.Unreadable != "" || !b.Deleting || !b.Finalizer || live[key] || perInstance[key] >= backupplan.MaxObjectWrites {
			continue
		}
		perInstance[key]++
		list := []string{}
		for _, f := range b.Finalizers {
			if f != v1alpha1.BackupFinalizer {
				list = append(list, f)
			}
		}
		data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": list, "resourceVersion": b.ResourceVersion}})
		out = append(out, BackupWrite{Instance: desired.Key(b.Namespace, b.Instance), Namespace: b.Namespace, Name: b.Name, What: "remove-finalizer", Patch: data})
	}
	return out
}

// unrunnableBackupWrites fail the StarrocksBackups that never started and
// cannot (classrules.BackupTargetProblem: admission refuses them; this
// catches what got past it). A backup that ran keeps its status: backups
// outlive their instance.
func unrunnableBackupWrites(all []BackupSnap, instances []*v1alpha1.Starrocks) []BackupWrite {
	byKey := map[string]*v1alpha1.Starrocks{}
	for _, sr := range instances {
		byKey[desired.Key(sr.Namespace, sr.Name)] = sr
	}
	var out []BackupWrite
	perInstance := map[string]int{}
	for _, b := range all {
		key := desired.Key(b.Namespace, b.Instance)
		if b.Unreadable != "" || b.Deleting || b.Phase != "" || perInstance[key] >= backupplan.MaxObjectWrites {
			continue
		}
		_, problem := classrules.BackupTargetProblem(b.Namespace, b.Instance, byKey[key])
		if problem == "" {
			continue
		}
		msg := "Not run: " + problem + "."
		perInstance[key]++
		data, _ := json.Marshal(map[string]any{"status": v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseFailed, Message: truncate(msg)}})
		out = append(out, BackupWrite{Instance: key, Namespace: b.Namespace, Name: b.Name, What: "refuse", Patch: data})
	}
	return out
}

func sameStatus(raw string, st v1alpha1.StarrocksBackupStatus) bool {
	var old v1alpha1.StarrocksBackupStatus
	if json.Unmarshal([]byte(raw), &old) != nil {
		return false
	}
	a, _ := json.Marshal(old)
	b, _ := json.Marshal(st)
	return string(a) == string(b)
}

// writeBackup makes one BackupWrite.
func writeBackup(ctx context.Context, w *kubewrite.Writer, b BackupWrite) error {
	ref := kubewrite.Ref{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.BackupKind, Namespace: b.Namespace, Name: b.Name}
	switch b.What {
	case "create":
		// The name is the slot's: one that exists already is this slot's.
		_, err := w.CreateIfNotExists(ctx, b.Object)
		return err
	case "delete":
		return w.Delete(ctx, ref, b.UID)
	case "status", "refuse", "held":
		return w.Patch(ctx, ref, types.MergePatchType, b.Patch, "status")
	default:
		return w.Patch(ctx, ref, types.MergePatchType, b.Patch)
	}
}

// BackupMetric is what the hook exports about one instance's backups.
type BackupMetric struct {
	Namespace, Name string
	LastSuccess     float64 // Unix seconds, 0 before the first
	// Due is when the schedule's first slot after the newest Completed
	// backup fires (Unix seconds): the alert on missed backups measures from
	// it, so a weekly schedule is not late after two days. 0 without a
	// running schedule, before the first success, or for a schedule that
	// never fires.
	Due    float64
	Failed float64
	// Healthy is BackupsHealthy; HealthKnown is false while that condition
	// is Unknown (a shared-data instance before its first snapshot), and
	// then no healthy series is published: the alert on failing backups
	// would call "failing" what is not known yet.
	Healthy, HealthKnown, Scheduled bool
}

// backupMetric is the backup metric of an instance with spec.backup, or of
// a shared-data instance (its automated cluster snapshots, snapshotMetric).
func backupMetric(sr *v1alpha1.Starrocks, st v1alpha1.StarrocksStatus, o Observed) (BackupMetric, bool) {
	if sr.Spec.Backup == nil {
		if sr.Spec.IsSharedData() {
			return snapshotMetric(sr, st), true
		}
		return BackupMetric{}, false
	}
	m := BackupMetric{Namespace: sr.Namespace, Name: sr.Name, Healthy: conditionTrue(st, v1alpha1.ConditionBackupsHealthy), HealthKnown: true,
		Scheduled: sr.Spec.Backup.Schedule != "" && !sr.Spec.Backup.Suspend}
	if st.Backup != nil && st.Backup.LastSuccessfulTime != nil {
		last := st.Backup.LastSuccessfulTime.Time
		m.LastSuccess = float64(last.Unix())
		if s, err := backupplan.ParseSchedule(sr.Spec.Backup.Schedule); err == nil && m.Scheduled {
			if due := s.Next(last); !due.IsZero() {
				m.Due = float64(due.Unix())
			}
		}
	}
	for _, b := range o.Backups {
		if b.Phase == string(v1alpha1.BackupPhaseFailed) || b.Phase == string(v1alpha1.BackupPhasePartiallyFailed) {
			m.Failed++
		}
	}
	return m, true
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// jobStateRE: StarRocks' job states (BackupJob.BackupJobState,
// RestoreJob.RestoreJobState), upper case and underscores.
var jobStateRE = regexp.MustCompile(`^[A-Z_]{1,32}$`)

// backupJobRunning says which BACKUP or RESTORE job of the leader's
// reports runs and until when it may hold the instance ("" when none
// does). A running job holds pod restarts and the start of a BE
// decommission: its BEs upload or download files. The hold is one
// database's job, not its whole set: while a rollout or a scale-in waits
// the agent starts no next database (backupHold), so the rollout goes on
// between two databases. It lasts at most the job's timeout from the job's
// start (o.BackupJobTimeout, the class's spec.backup.jobTimeout): StarRocks
// cancels a job that runs longer (fe-core backup/BackupJob.run and
// RestoreJob.run: now - createTime > timeoutMs), so a report that still
// says it runs is stale (an agent that stopped reporting).
func backupJobRunning(o Observed, now time.Time) (why string, until time.Time) {
	bound := o.BackupJobTimeout
	if bound <= 0 {
		bound = classrules.DefaultBackupJobTimeout
	}
	// The report comes from a pod of the tenant's namespace: only a
	// StarRocks job state and a bounded name reach the message (quoted).
	running := func(name, state, start string) bool {
		if !agentconfig.JobRunning(state) || !jobStateRE.MatchString(state) || len(name) > 256 {
			return false
		}
		t, err := time.Parse(time.RFC3339, start)
		if err != nil || now.Sub(t) >= bound {
			return false
		}
		until = t.Add(bound)
		return true
	}
	if r := o.RestoreReport; r != nil && r.Phase == agentconfig.BackupPhaseRunning {
		for _, d := range r.Databases[:min(len(r.Databases), agentconfig.MaxBackupDatabases)] {
			// An agent of before the job's own start time: the restore's.
			if start := cmp.Or(d.JobStartTime, r.StartTime); running(d.Name, d.State, start) {
				return fmt.Sprintf("The RESTORE of database %q is in %s since %s", d.Name, d.State, start), until
			}
		}
	}
	if b := o.BackupReport; b != nil && o.BackupDecision != nil {
		named := map[string]string{}
		for _, s := range o.BackupDecision.Sets {
			named[s.UID] = s.Name
		}
		for _, s := range b.Sets[:min(len(b.Sets), agentconfig.MaxBackupSets)] {
			name, ok := named[s.UID]
			if !ok || s.Phase != agentconfig.BackupPhaseRunning {
				continue
			}
			for _, d := range s.Databases[:min(len(s.Databases), agentconfig.MaxBackupDatabases)] {
				if start := cmp.Or(d.JobStartTime, s.StartTime); running(d.Name, d.State, start) {
					return fmt.Sprintf("The BACKUP of database %q (StarrocksBackup %s) is in %s since %s", d.Name, name, d.State, start), until
				}
			}
		}
	}
	return "", time.Time{}
}

// MaxBackupWritesPerRun bounds the writes to StarrocksBackup objects in one
// run of the hook, every instance together. Each is a round trip to the API
// server, and the hooks of every instance wait in the module's queue while
// a run lasts: 2000 finalizer patches of one tenant took seconds that
// another tenant's new instance waited for its objects. backupplan bounds
// the writes of one instance (MaxObjectWrites of each kind, as it bounds the
// sets); this bounds their sum, shared fairly (shareBackupWrites). What is
// left waits for the next run, which the writes themselves start (and the
// schedule, every minute).
const MaxBackupWritesPerRun = 100

// backupWriteTier is what a run writes first: the scheduled backups and
// the statuses the agent reported (one per set, bounded by the sets), then
// the finalizers and deletions, then the refusals (which only report).
func backupWriteTier(w BackupWrite) int {
	switch w.What {
	case "create", "status":
		return 0
	case "refuse", "held":
		return 2
	}
	return 1
}

// shareBackupWrites keeps at most budget of the writes, the rest held for
// a later run: tier by tier, the namespaces take turns, and within a
// namespace its instances, each instance's writes in their order. So a
// tenant with many objects (or many instances) gets one write in turn with
// everyone else, never the run's whole budget while another waits. Which
// namespace leads moves on by the budget every minute (from the clock, not
// from memory), so with more namespaces than the budget none waits for
// ever.
func shareBackupWrites(writes []BackupWrite, budget int, now time.Time) (kept []BackupWrite, held int) {
	if len(writes) <= budget {
		return writes, 0
	}
	type namespace struct {
		instances []string
		writes    map[string][]BackupWrite
	}
	var tiers [3]map[string]*namespace
	for _, w := range writes {
		t := backupWriteTier(w)
		if tiers[t] == nil {
			tiers[t] = map[string]*namespace{}
		}
		ns := tiers[t][w.Namespace]
		if ns == nil {
			ns = &namespace{writes: map[string][]BackupWrite{}}
			tiers[t][w.Namespace] = ns
		}
		if _, ok := ns.writes[w.Instance]; !ok {
			ns.instances = append(ns.instances, w.Instance)
		}
		ns.writes[w.Instance] = append(ns.writes[w.Instance], w)
	}
	kept = make([]BackupWrite, 0, budget)
	for _, tier := range tiers {
		names := make([]string, 0, len(tier))
		for n := range tier {
			names = append(names, n)
		}
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		// A minute later the next budget's worth of namespaces leads.
		shift := int((now.Unix()/60)%int64(len(names))) * budget % len(names)
		names = append(names[shift:], names[:shift]...)
		queues := make([][]BackupWrite, 0, len(names))
		for _, n := range names {
			ns := tier[n]
			sort.Strings(ns.instances)
			each := make([][]BackupWrite, 0, len(ns.instances))
			for _, i := range ns.instances {
				each = append(each, ns.writes[i])
			}
			queues = append(queues, takeTurns(each, -1))
		}
		kept = append(kept, takeTurns(queues, budget-len(kept))...)
		if len(kept) >= budget {
			break
		}
	}
	return kept, len(writes) - len(kept)
}

// takeTurns merges the queues one item of each in turn, at most limit
// items (all for a negative limit).
func takeTurns[T any](queues [][]T, limit int) []T {
	var out []T
	for round := 0; limit < 0 || len(out) < limit; round++ {
		took := false
		for _, q := range queues {
			if round < len(q) {
				out = append(out, q[round])
				took = true
				if limit >= 0 && len(out) >= limit {
					return out
				}
			}
		}
		if !took {
			break
		}
	}
	return out
}
