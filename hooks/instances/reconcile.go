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
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// State is everything the hook reads from its snapshots.
type State struct {
	Instances      []*v1alpha1.Starrocks
	InstanceStatus map[string]v1alpha1.StarrocksStatus // by namespace/name
	Classes        []*v1alpha1.StarrocksClass
	ClassStatus    map[string]v1alpha1.StarrocksClassStatus // by name
	StatefulSets   []StatefulSetSnap
	Pods           []PodSnap
	RolloutPods    []RolloutPodSnap
	Certificates   []CertificateSnap
	LastValid      []LastValidSnap
	// Desired are the desired-state ConfigMaps in the module namespace
	// (shared.DesiredPrefix): what each instance's entry was last written as.
	Desired        []LastValidSnap
	PVCs           []PVCSnap
	StorageClasses []StorageClassSnap
	// EventNamespaces are the namespaces that exist, are not terminating
	// and have no ResourceQuota counting Events: only there does the hook
	// create Events (one elsewhere would only be refused).
	EventNamespaces map[string]bool
	// TerminatingNamespaces are the namespaces being deleted: their
	// instances are ending (endingInstances).
	TerminatingNamespaces map[string]bool
	// Applied are the instanceobjects hook's records, by the UID of their
	// Starrocks (only from the module namespace).
	Applied map[string]*applied.Record
	// Backups are the StarrocksBackup objects of every namespace.
	Backups       []BackupSnap
	ClusterDomain string
	// MaxInstances is the module setting instances.maxCount (0: no limit).
	MaxInstances int
	// MaxPerNamespace is the module setting instances.maxPerNamespace (0: no limit).
	MaxPerNamespace int
	// Warnings are snapshot items that could not be read at all.
	Warnings []string
	// UnreadableUIDs are Starrocks objects skipped because they did not
	// decode: they exist, so their memory is kept.
	UnreadableUIDs map[string]bool
}

// StatefulSetSnap is the jq-filtered StatefulSet.
type StatefulSetSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Instance  string `json:"instance"`
	Component string `json:"component"`
	StatefulSetState
	// Unreadable says why the item did not decode (it is then ignored).
	Unreadable string `json:"-"`
}

// PodSnap is the jq-filtered FE pod.
type PodSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Instance  string `json:"instance"`
	// Owner is the pod's controller, when it is a StatefulSet: only pods
	// of the instance's FE StatefulSet count.
	Owner      *OwnerSnap      `json:"owner"`
	AgentTLS   *AgentTLS       `json:"agentTLS"`
	Accounts   *AgentAccounts  `json:"accounts"`
	Membership *MembershipSnap `json:"membership"`
	// BackupRaw and RestoreRaw are the agent's backup and restore reports
	// as JSON text ("null" when none), decoded in backups.go.
	BackupRaw  string `json:"backupRaw"`
	RestoreRaw string `json:"restoreRaw"`
	// Users is the users report (the FE leader's agent publishes one).
	Users *UsersSnap `json:"users"`
	// SharedData is the shared-data report (the FE leader's agent of a
	// shared-data instance publishes one), only the fields the status uses.
	SharedData *agentconfig.SharedDataStatus `json:"sharedData"`
}

// OwnerSnap is a controller ownerReference.
type OwnerSnap struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// conditionReason is the pattern and length the CRD (metav1.Condition)
// demands of a condition's reason.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

const maxReasonLength = 1024

// checkReasons makes the report unreadable when a reason the agent wrote
// (anyone with edit rights in the namespace can write the annotation) could
// not be a condition's reason: the apiserver would refuse the status patch,
// and a refused object patch fails the whole run, every instance with it.
func (p *PodSnap) checkReasons() {
	for _, r := range []struct{ field, reason string }{
		{"tls.reason", reasonOf(p.AgentTLS)},
		{"accounts.reason", reasonOfAccounts(p.Accounts)},
		{"sharedData.storageVolume.reason", sharedDataReason(p.SharedData, false)},
		{"sharedData.clusterSnapshots.reason", sharedDataReason(p.SharedData, true)},
	} {
		if r.reason != "" && (len(r.reason) > maxReasonLength || !conditionReason.MatchString(r.reason)) {
			p.markUnreadable(r.field + " is not a CamelCase word (the form of a condition reason)")
			return
		}
	}
	p.Users.checkUsers()
}

func reasonOf(t *AgentTLS) string {
	if t == nil {
		return ""
	}
	return t.Reason
}

func reasonOfAccounts(a *AgentAccounts) string {
	if a == nil {
		return ""
	}
	return a.Reason
}

func sharedDataReason(s *agentconfig.SharedDataStatus, snapshots bool) string {
	switch {
	case s == nil:
		return ""
	case !snapshots:
		return s.StorageVolume.Reason
	case s.ClusterSnapshots != nil:
		return s.ClusterSnapshots.Reason
	}
	return ""
}

// markUnreadable makes every report of the pod unreadable, saying why.
func (p *PodSnap) markUnreadable(why string) {
	p.SharedData = nil
	p.AgentTLS = &AgentTLS{Reason: ReasonAgentStatusUnreadable, Message: why}
	p.Accounts = &AgentAccounts{Reason: ReasonAgentStatusUnreadable, Message: why}
	p.Membership = &MembershipSnap{Unreadable: true}
	p.Users = &UsersSnap{Unreadable: why}
}

// MembershipSnap is the membership of the agent status (the FE leader's
// agent reports one), or Unreadable when the annotation could not be read.
type MembershipSnap struct {
	agentconfig.MembershipStatus
	Unreadable bool `json:"unreadable,omitempty"`
}

// NamespaceSnap is the jq-filtered Namespace.
type NamespaceSnap struct {
	Name        string `json:"name"`
	Terminating bool   `json:"terminating"`
}

// EventQuotaSnap is the jq-filtered ResourceQuota.
type EventQuotaSnap struct {
	Namespace    string `json:"namespace"`
	CountsEvents bool   `json:"countsEvents"`
}

// CertificateSnap is the jq-filtered Certificate.
type CertificateSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Instance  string `json:"instance"`
	CertificateState
	// Unreadable says why the item did not decode (it is then ignored).
	Unreadable string `json:"-"`
}

// AppliedSnap is the jq-filtered record of the instanceobjects hook.
type AppliedSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Record    string `json:"record"`
}

// LastValidSnap is the jq-filtered last-valid ConfigMap.
type LastValidSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Entry     string `json:"entry"`
}

// Plan is what one run writes.
type Plan struct {
	// BackupWrites are the writes to StarrocksBackup objects (backups.go),
	// made by the hook through kubewrite one at a time.
	BackupWrites []BackupWrite
	// BackupMetrics are the backup metrics of each instance with spec.backup.
	BackupMetrics []BackupMetric
	// Values are the entries of the instances that get objects, sorted by
	// namespace and name: what the instanceobjects hook renders, handed to
	// it through the desired-state ConfigMaps.
	Values []desired.Instance
	// Desired are the desired-state ConfigMaps to create or update (an
	// entry that changed), StaleDesired the names of those whose instance
	// has no entry any more (gone, ending, invalid without memory, beyond a
	// limit): its objects are then left as they are.
	Desired      []*corev1.ConfigMap
	StaleDesired []string
	// LastValid are the ConfigMaps to create or update.
	LastValid []*corev1.ConfigMap
	// StaleLastValid are the names of last-valid ConfigMaps (in the module
	// namespace) whose Starrocks is gone: no ownerReference can cross
	// namespaces, so the hook deletes them.
	StaleLastValid []string
	// StatusPatches are the instance statuses that changed.
	StatusPatches []StatusPatch
	// VolumeExpansions are the PVCs to grow to their desired size.
	VolumeExpansions []VolumeExpansion
	// PVCReleases are the PVCs whose heritage-bypass label to set or remove
	// (released.go).
	PVCReleases []PVCRelease
	// PodRestarts are the pods the rollouts delete now.
	PodRestarts []PodRestart
	// Events are the Events of the status transitions (instanceEvents), to
	// create after every other write.
	Events []*corev1.Event
	// Refusals are the tenant writes of this run the API server refused
	// (Writes), each already reported in its instance's status.
	Refusals []Refusal
	// ClassStatusPatches are the class statuses that changed.
	ClassStatusPatches []ClassStatusPatch
	// Results per instance (for metrics and logs).
	Results []desired.Result
	// Phases are the phases reported, by namespace/name.
	Phases map[string]v1alpha1.Phase
	// Warnings are problems that do not stop the run (e.g. a corrupt persisted entry).
	Warnings []string
}

// StatusPatch is a new status of a Starrocks.
type StatusPatch struct {
	Namespace, Name string
	Status          v1alpha1.StarrocksStatus
}

// ClassStatusPatch is a new status of a StarrocksClass.
type ClassStatusPatch struct {
	Name   string
	Status v1alpha1.StarrocksClassStatus
}

// Writes are the writes into tenant namespaces whose outcome the status of
// the same run reports: a refused volume expansion becomes the instance's
// VolumesResized, a refused pod deletion its RolledOut. Each write stands
// alone (kubewrite): a refusal never fails the run or another instance.
type Writes interface {
	ExpandVolume(VolumeExpansion) error
	RestartPod(PodRestart) error
	ReleasePVC(PVCRelease) error
}

// Refusal is a write the API server refused, for the log.
type Refusal struct {
	Instance, Object, Message string
}

// Reconcile decides the whole desired state from the snapshots. With w it
// also makes each instance's tenant writes, before its status is computed
// (nil: they are only planned).
func Reconcile(s State, cache *classrules.Cache, now metav1.Time, w Writes) Plan {
	plan := Plan{Phases: map[string]v1alpha1.Phase{}}
	plan.Warnings = append(plan.Warnings, s.Warnings...)
	live := make(map[string]bool, len(s.Instances))
	for _, sr := range s.Instances {
		live[desired.Key(sr.Namespace, sr.Name)] = true
	}
	s.Instances = endingInstances(s, &plan)
	lastValid, persisted := trustedLastValid(s, &plan)

	obs := observe(s, &plan.Warnings)
	plan.PVCReleases = planReleases(obs, live, len(s.UnreadableUIDs) > 0)
	if w != nil {
		releasePVCs(w, &plan)
	}
	rollouts := observeRollout(s)
	backends := make(map[string]desired.BackendObservation, len(obs))
	existing := make(map[string]desired.Existing, len(obs))
	for key, o := range obs {
		b := desired.BackendObservation{Reports: o.Membership, Unreadable: o.MembershipUnreadable}
		if r := replicationOf(o, s.InstanceStatus[key]); r != nil {
			b.MaxReplicationNum, b.MaxReplicationTable = r.MaxReplicationNum, r.MaxReplicationTable
		}
		if o.Backend != nil {
			b.Replicas = &o.Backend.Replicas
		}
		backends[key] = b
		ex := desired.Existing{}
		if o.Frontend != nil {
			ex.FrontendTemplateSize = o.Frontend.TemplateSize
		}
		if o.Backend != nil {
			ex.BackendTemplateSize = o.Backend.TemplateSize
		}
		if o.Compute != nil {
			ex.ComputeTemplateSize = o.Compute.TemplateSize
		}
		if o.Certificate != nil {
			ex.CertificateRevision = o.Certificate.Revision
		}
		ex.CreateImage = imageToken(rollouts[key], o.Frontend)
		ex.TabletHealth = backendRestartPending(rollouts[key], o.Backend)
		existing[key] = ex
	}
	backupIx := indexBackups(s.Backups, s.Classes...)
	backupIx.restoring = indexRestores(s.Instances, s.InstanceStatus)
	// Every instance, those whose objects are all gone too: what is
	// rendered for them again must not start a second FE cluster.
	for _, sr := range s.Instances {
		key := desired.Key(sr.Namespace, sr.Name)
		o := obs[key]
		o.Bootstrapped = lastValid[key] != nil && lastValid[key].AgentConfig.Bootstrapped
		obs[key] = o
		ex := existing[key]
		ex.AccountsReady = accountsReady(o, s.InstanceStatus[key]).OK
		applyBackups(sr, backupIx, &o, s.InstanceStatus[key], &ex, now.Time)
		if why, until := backupJobRunning(o, now.Time); why != "" {
			// No BE decommission starts under a running BACKUP or RESTORE;
			// bounded by the job's timeout.
			ex.ScaleInHold = fmt.Sprintf("%s: the removed BEs are decommissioned once it ends (StarRocks ends it by %s at the latest; no next database starts meanwhile).", why, until.UTC().Format(time.RFC3339))
		}
		obs[key] = o
		existing[key] = ex
	}
	out := desired.Compute(desired.Input{
		Instances:       s.Instances,
		Classes:         s.Classes,
		ClusterDomain:   s.ClusterDomain,
		LastValid:       lastValid,
		Cache:           cache,
		Backends:        backends,
		Existing:        existing,
		MaxInstances:    s.MaxInstances,
		MaxPerNamespace: s.MaxPerNamespace,
	})
	plan.Values = out.Instances
	plan.Desired, plan.StaleDesired = desiredConfigMaps(out.Instances, s.Desired, &plan.Warnings)
	expandable := make(map[string]bool, len(s.StorageClasses))
	for _, sc := range s.StorageClasses {
		expandable[sc.Name] = sc.AllowVolumeExpansion
	}
	plan.Results = out.Results
	domain := s.ClusterDomain
	if domain == "" {
		domain = desired.DefaultClusterDomain
	}
	podUIDs := make(map[string]string, len(s.RolloutPods))
	for _, p := range s.RolloutPods {
		podUIDs[desired.Key(p.Namespace, p.Name)] = p.UID
	}

	for _, res := range out.Results {
		sr := res.Object
		if res.Current {
			data, err := json.Marshal(res.Entry)
			if err == nil && !bytes.Equal(data, []byte(persisted[string(sr.UID)])) {
				plan.LastValid = append(plan.LastValid, lastValidConfigMap(res.Entry, string(data)))
			}
		}
		o := obs[res.Key]
		if res.Entry != nil {
			var expand []VolumeExpansion
			expand, o.Volumes = planVolumes(res.Entry, o.PVCs, expandable)
			plan.VolumeExpansions = append(plan.VolumeExpansions, expand...)
			if w != nil {
				o.Volumes = expandVolumes(w, res.Key, expand, o.Volumes, &plan)
			}
			o.Rollout = planRollout(res.Entry, rollouts[res.Key], o.Frontend, o.Backend, o.Compute, domain, now.Time)
			if why, until := backupJobRunning(o, now.Time); why != "" && o.Rollout.Delete != "" {
				// No pod restarts under a running BACKUP or RESTORE (its
				// BEs upload or download files); bounded by the job's timeout.
				o.Rollout.Delete, o.Rollout.Message = "", fmt.Sprintf("%s: the next pod restarts once it ends (StarRocks ends it by %s at the latest; no next database starts meanwhile). %s", why, until.UTC().Format(time.RFC3339), o.Rollout.Message)
			}
			if o.Rollout.Delete != "" {
				r := PodRestart{Namespace: sr.Namespace, Name: o.Rollout.Delete, UID: podUIDs[desired.Key(sr.Namespace, o.Rollout.Delete)]}
				plan.PodRestarts = append(plan.PodRestarts, r)
				if w != nil {
					o.Rollout = restartPod(w, res.Key, r, o.Rollout, &plan)
				}
			}
		}
		o.JoinPod, o.Join = frontendJoin(rollouts[res.Key])
		o.PullPod, o.PullFailure = pullFailure(rollouts[res.Key])
		o.UnschedulablePod, o.Unschedulable = unschedulablePod(rollouts[res.Key])
		if res.Entry != nil {
			plan.BackupWrites = append(plan.BackupWrites, backupWrites(sr, o, res.Entry, now)...)
		}
		prev := s.InstanceStatus[res.Key]
		st := ComputeStatus(res, prev, o, domain, now)
		if m, ok := backupMetric(sr, st, o); ok {
			plan.BackupMetrics = append(plan.BackupMetrics, m)
		}
		st.Conditions = setCondition(st.Conditions, objectsApplied(res, st, s.Applied[string(sr.UID)]), now)
		plan.Phases[res.Key] = st.Phase
		if !sameJSON(st, prev) {
			plan.StatusPatches = append(plan.StatusPatches, StatusPatch{Namespace: sr.Namespace, Name: sr.Name, Status: st})
			if s.EventNamespaces[sr.Namespace] {
				for _, e := range instanceEvents(sr, prev, st) {
					plan.Events = append(plan.Events, eventObject(e, now))
				}
			}
		}
	}

	for _, cl := range s.Classes {
		problems := out.ClassProblems[cl.Name]
		prev := s.ClassStatus[cl.Name]
		st := ComputeClassStatus(cl, problems, prev, now)
		if !sameJSON(st, prev) {
			plan.ClassStatusPatches = append(plan.ClassStatusPatches, ClassStatusPatch{Name: cl.Name, Status: st})
		}
	}
	plan.BackupWrites = append(plan.BackupWrites, orphanBackupWrites(s.Backups, s.Instances)...)
	plan.BackupWrites = append(plan.BackupWrites, unrunnableBackupWrites(s.Backups, s.Instances)...)
	var held int
	if plan.BackupWrites, held = shareBackupWrites(plan.BackupWrites, MaxBackupWritesPerRun, now.Time); held > 0 {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%d writes to StarrocksBackup objects wait for a later run: a run makes at most %d, shared between namespaces", held, MaxBackupWritesPerRun))
	}
	for _, b := range plan.BackupWrites {
		if b.Event != nil && s.EventNamespaces[b.Namespace] {
			plan.Events = append(plan.Events, b.Event)
		}
	}
	cache.Retain(s.Classes)
	return plan
}

// endingInstances are the Starrocks objects that are not ending. One being
// deleted (a tenant's finalizer may keep it so for good) or in a namespace
// being deleted is left out of the rest of the run, as if it were gone: no
// entry (its desired-state ConfigMap is deleted), so nothing is created or
// changed for it any more; no status
// (a write there is refused or pointless); and its memory is deleted as
// stale (trustedLastValid), which also stops the credentials hook. The
// namespace's deletion takes its objects, volumes and Secrets anyway, and a
// Starrocks that is not ending keeps everything.
func endingInstances(s State, plan *Plan) []*v1alpha1.Starrocks {
	kept := make([]*v1alpha1.Starrocks, 0, len(s.Instances))
	for _, sr := range s.Instances {
		if sr.DeletionTimestamp == nil && !s.TerminatingNamespaces[sr.Namespace] {
			kept = append(kept, sr)
			continue
		}
		// Said once, when its memory goes: a finalizer may keep it for long.
		for _, lv := range s.LastValid {
			if lv.Namespace == shared.ModuleNamespace && lv.Name == shared.LastValidConfigMapName(string(sr.UID)) {
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("Starrocks %s/%s is ending (it or its namespace is being deleted): it is no longer rendered and its memory is deleted", sr.Namespace, sr.Name))
			}
		}
	}
	return kept
}

// trustedLastValid reads the module's memory: ConfigMaps
// last-valid-<uid> in the module namespace. An entry counts only when the
// UID in its name and in its content is a live Starrocks and its namespace
// and name are that object's; memory of a Starrocks that is gone is deleted.
// It returns the trusted entries by namespace/name and the persisted JSON
// by UID (to rewrite only on change).
func trustedLastValid(s State, plan *Plan) (map[string]*desired.Instance, map[string]string) {
	live := make(map[string]*v1alpha1.Starrocks, len(s.Instances))
	for _, sr := range s.Instances {
		live[string(sr.UID)] = sr
	}
	lastValid := map[string]*desired.Instance{}
	persisted := map[string]string{}
	for _, lv := range s.LastValid {
		uid, ok := strings.CutPrefix(lv.Name, shared.LastValidPrefix)
		if lv.Namespace != shared.ModuleNamespace || !ok || uid == "" {
			continue // not the module's memory (the binding sees only the module namespace)
		}
		sr := live[uid]
		if sr == nil {
			if !s.UnreadableUIDs[uid] {
				plan.StaleLastValid = append(plan.StaleLastValid, lv.Name)
			}
			continue
		}
		persisted[uid] = lv.Entry
		var e desired.Instance
		if err := json.Unmarshal([]byte(lv.Entry), &e); err != nil {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("ConfigMap %s/%s: the persisted last valid configuration is not readable and is ignored: %v", lv.Namespace, lv.Name, err))
			continue
		}
		if e.UID != uid || e.Namespace != sr.Namespace || e.Name != sr.Name {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("ConfigMap %s/%s: the persisted last valid configuration names %s/%s (uid %s), not the Starrocks %s/%s of this UID, and is ignored", lv.Namespace, lv.Name, e.Namespace, e.Name, e.UID, sr.Namespace, sr.Name))
			continue
		}
		lastValid[desired.Key(sr.Namespace, sr.Name)] = &e
	}
	return lastValid, persisted
}

// observe groups the objects of the tenant namespaces by instance. An
// object counts only under the name the module gives it in the instance's
// namespace (desired.NamesFor), and a pod only when its controller is the
// instance's FE StatefulSet: a look-alike elsewhere changes nothing.
func observe(s State, warnings *[]string) map[string]Observed {
	obs := map[string]Observed{}
	get := func(ns, inst string) Observed { return obs[desired.Key(ns, inst)] }
	put := func(ns, inst string, o Observed) { obs[desired.Key(ns, inst)] = o }
	feUID := map[string]string{}
	for _, st := range s.StatefulSets {
		if st.Unreadable != "" {
			*warnings = append(*warnings, fmt.Sprintf("StatefulSet %s/%s is not readable and is ignored: %s", st.Namespace, st.Name, st.Unreadable))
			continue
		}
		names := desired.NamesFor(st.Instance)
		o := get(st.Namespace, st.Instance)
		state := st.StatefulSetState
		switch {
		case st.Component == shared.ComponentFrontend && st.Name == names.FrontendStatefulSet:
			o.Frontend = &state
			feUID[desired.Key(st.Namespace, st.Instance)] = st.UID
		case st.Component == shared.ComponentBackend && st.Name == names.BackendStatefulSet:
			o.Backend = &state
		case st.Component == shared.ComponentCompute && st.Name == names.ComputeStatefulSet:
			o.Compute = &state
		default:
			continue
		}
		put(st.Namespace, st.Instance, o)
	}
	for _, c := range s.Certificates {
		if c.Unreadable != "" {
			*warnings = append(*warnings, fmt.Sprintf("Certificate %s/%s is not readable and is ignored: %s", c.Namespace, c.Name, c.Unreadable))
			continue
		}
		if c.Name != desired.NamesFor(c.Instance).FrontendStatefulSet {
			continue
		}
		o := get(c.Namespace, c.Instance)
		state := c.CertificateState
		o.Certificate = &state
		put(c.Namespace, c.Instance, o)
	}
	for _, pvc := range s.PVCs {
		if pvc.Unreadable != "" {
			*warnings = append(*warnings, fmt.Sprintf("PersistentVolumeClaim %s/%s is not readable and is ignored: %s", pvc.Namespace, pvc.Name, pvc.Unreadable))
			continue
		}
		if !isInstancePVC(pvc) {
			continue
		}
		o := get(pvc.Namespace, pvc.Instance)
		o.PVCs = append(o.PVCs, pvc)
		put(pvc.Namespace, pvc.Instance, o)
	}
	for _, p := range s.Pods {
		uid := feUID[desired.Key(p.Namespace, p.Instance)]
		if p.Owner == nil || uid == "" || p.Owner.UID != uid || p.Owner.Name != desired.NamesFor(p.Instance).FrontendStatefulSet {
			continue
		}
		o := get(p.Namespace, p.Instance)
		if o.AgentTLS == nil {
			o.AgentTLS = map[string]*AgentTLS{}
			o.Accounts = map[string]*AgentAccounts{}
		}
		o.AgentTLS[p.Name] = p.AgentTLS
		o.Accounts[p.Name] = p.Accounts
		switch m := p.Membership; {
		case m == nil:
		case m.Unreadable:
			o.MembershipUnreadable = true
		default:
			o.Membership = append(o.Membership, &m.MembershipStatus)
			if claimsLeadership(p.Name, m.Leader) {
				o.LeaderClaims = append(o.LeaderClaims, p.Name)
			}
		}
		if o.BackupReports == nil {
			o.BackupReports, o.RestoreReports = map[string]string{}, map[string]string{}
		}
		o.BackupReports[p.Name], o.RestoreReports[p.Name] = p.BackupRaw, p.RestoreRaw
		if p.SharedData != nil {
			if o.SharedData == nil {
				o.SharedData = map[string]*agentconfig.SharedDataStatus{}
			}
			o.SharedData[p.Name] = p.SharedData
		}
		if o.Users == nil {
			o.Users = map[string]*UsersSnap{}
		}
		o.Users[p.Name] = p.Users
		put(p.Namespace, p.Instance, o)
	}
	return obs
}

// PVC templates of the StatefulSets (pkg/instanceobjects/templates/_statefulset-*.tpl):
// the StatefulSet controller names a claim <template>-<StatefulSet>-<ordinal>.
const (
	frontendClaimTemplate = "meta"
	backendClaimTemplate  = "storage"
	computeClaimTemplate  = "cache"
)

// FrontendMetaPVCName is the first FE's metadata volume: the credentials
// Secrets follow its lifetime.
func FrontendMetaPVCName(instance string) string {
	return frontendClaimTemplate + "-" + desired.NamesFor(instance).FrontendStatefulSet + "-0"
}

// isInstancePVC reports whether a PVC is one the instance's StatefulSets
// created, by its name, for its component.
func isInstancePVC(p PVCSnap) bool {
	names := desired.NamesFor(p.Instance)
	var prefix string
	switch p.Component {
	case shared.ComponentFrontend:
		prefix = frontendClaimTemplate + "-" + names.FrontendStatefulSet + "-"
	case shared.ComponentBackend:
		prefix = backendClaimTemplate + "-" + names.BackendStatefulSet + "-"
	case shared.ComponentCompute:
		prefix = computeClaimTemplate + "-" + names.ComputeStatefulSet + "-"
	default:
		return false
	}
	ordinal, ok := strings.CutPrefix(p.Name, prefix)
	if !ok || ordinal == "" {
		return false
	}
	for _, c := range ordinal {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func lastValidConfigMap(e *desired.Instance, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      shared.LastValidConfigMapName(e.UID),
			Namespace: shared.ModuleNamespace,
			Labels:    shared.InstanceLabels(e.Name, shared.StateLastValid),
			// No ownerReference: an owner must be in the same namespace.
			// The hook deletes the ConfigMap when its Starrocks is gone.
			Annotations: map[string]string{shared.AnnotationInstance: desired.Key(e.Namespace, e.Name)},
		},
		Data: map[string]string{shared.LastValidKey: data},
	}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// desiredConfigMaps hands each entry to the instanceobjects hook: a
// ConfigMap desired-<uid> in the module namespace, written when the entry
// changed, deleted when the instance has no entry any more. An entry that
// breaks the instance schema (the last layer between a tenant's strings and
// the templates) is not written: the instance keeps what was rendered
// before, and the warning names it; every other instance goes on.
func desiredConfigMaps(entries []desired.Instance, live []LastValidSnap, warnings *[]string) ([]*corev1.ConfigMap, []string) {
	written := make(map[string]string, len(live))
	for _, d := range live {
		if d.Namespace == shared.ModuleNamespace && strings.HasPrefix(d.Name, shared.DesiredPrefix) {
			written[d.Name] = d.Entry
		}
	}
	keep := make(map[string]bool, len(entries))
	var changed []*corev1.ConfigMap
	for i := range entries {
		e := &entries[i]
		name := shared.DesiredConfigMapName(e.UID)
		keep[name] = true
		data, err := json.Marshal(e)
		if err == nil && written[name] == string(data) {
			continue // unchanged: it passed the schema when it was written
		}
		if err == nil {
			err = desired.ValidateEntry(data)
		}
		if err != nil {
			*warnings = append(*warnings, fmt.Sprintf("instance %s/%s: its desired state is not handed on, what runs stays: %v", e.Namespace, e.Name, err))
			continue
		}
		cm := lastValidConfigMap(e, string(data))
		cm.Name = name
		cm.Labels = shared.InstanceLabels(e.Name, shared.StateDesired)
		changed = append(changed, cm)
	}
	var stale []string
	for name := range written {
		if !keep[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	return changed, stale
}
