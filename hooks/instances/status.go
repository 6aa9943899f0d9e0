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
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/backupplan"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/plural"
)

// Condition reasons (CamelCase, stable: alerts and users match on them).
const (
	ReasonValid               = "Valid"
	ReasonClassNotFound       = "ClassNotFound"
	ReasonClassInvalid        = "ClassInvalid"
	ReasonClassRuleViolated   = "ClassRuleViolated"
	ReasonCurrentSpecApplied  = "CurrentSpecApplied"
	ReasonLastValidKept       = "LastValidConfigurationKept"
	ReasonNeverValid          = "NoValidConfiguration"
	ReasonAllReplicasReady    = "AllReplicasReady"
	ReasonReplicasNotReady    = "ReplicasNotReady"
	ReasonPodsUnschedulable   = "PodsUnschedulable"
	ReasonNotRendered         = "NotRendered"
	ReasonCertificateReady    = "CertificateReady"
	ReasonCertificateMissing  = "CertificateMissing"
	ReasonCertificateNotReady = "CertificateNotReady"
	ReasonAgentNotReported    = "AgentNotReported"
	// ReasonAgentStatusUnreadable: the agent-status annotation of an FE pod
	// is not JSON or has a field of the wrong type.
	ReasonAgentStatusUnreadable = "AgentStatusUnreadable"
	// AccountsReady reasons (besides the agent's own and WaitingForAgent).
	ReasonAccountsReady = "AccountsReady"
	// ReasonNotManaged: nothing is rendered, the objects in the cluster are
	// left as they are.
	ReasonNotManaged = "NotManaged"
	// ReasonInstanceLimitReached: the instance is beyond the module setting
	// instances.maxCount, so it is not managed (desired.Result.OverLimit).
	ReasonInstanceLimitReached = "InstanceLimitReached"
	// ReasonNamespaceLimitReached: the instance is beyond the module setting
	// instances.maxPerNamespace (desired.Result.NamespaceOverLimit).
	ReasonNamespaceLimitReached = "NamespaceLimitReached"
	// ReasonNameConflict: an older instance of the namespace uses one of the
	// object names this one would use (desired.Result.Conflict).
	ReasonNameConflict       = "NameConflict"
	ReasonClassRulesCompiled = "RulesCompiled"
	// BackendScaleIn reasons.
	ReasonDecommissionInProgress = "DecommissionInProgress"
	ReasonWaitingForAgent        = "WaitingForAgent"
	ReasonNoScaleInPending       = "NoScaleInPending"
	// ReasonBackupJobRunning: the decommission waits for a backup or
	// restore job (desired.ScaleInHeld).
	ReasonBackupJobRunning = "BackupJobRunning"
	// VolumesResized reasons.
	ReasonVolumesAtDesiredSize = "VolumesAtDesiredSize"
	ReasonExpansionInProgress  = "ExpansionInProgress"
	ReasonExpansionBlocked     = "ExpansionBlocked"
	ConditionClassValid        = "Valid"
	maxConditionMessageLength  = 32768
	truncatedMessageSuffix     = shared.TruncatedSuffix
	defaultAgentTLSNotReadyWhy = "TLSNotReady"
	defaultAccountsNotReadyWhy = "AccountsNotReady"
)

// ConditionAccountsReady says root has its password and the module's and
// the team's accounts exist; the client ports open only then.
const ConditionAccountsReady = "AccountsReady"

// Observed is what the cluster says about the objects of one instance.
type Observed struct {
	// PullPod is a pod of the instance whose image cannot be pulled, and
	// PullFailure why (set by Reconcile; pullfailure.go).
	PullPod     string
	PullFailure *PullFailure
	Frontend    *StatefulSetState
	Backend     *StatefulSetState
	// Compute is the CN StatefulSet of a shared-data instance.
	Compute     *StatefulSetState
	Certificate *CertificateState
	// AgentTLS is the TLS part of the agent status of each FE pod, by pod
	// name; nil for a pod whose agent has not reported yet.
	AgentTLS map[string]*AgentTLS
	// Membership are the membership reports of the FE pods' agents (the
	// leader's, and a former leader's until it republishes).
	Membership []*agentconfig.MembershipStatus
	// Accounts is the accounts part of the agent status of each FE pod, by
	// pod name; nil for a pod whose agent has not reported it.
	Accounts map[string]*AgentAccounts
	// MembershipUnreadable is true when an FE pod's agent status could not be read.
	MembershipUnreadable bool
	// Users is the users report of each FE pod, by pod name (nil: none);
	// LeaderClaims the pods whose agent reports its own FE as the leader.
	Users        map[string]*UsersSnap
	LeaderClaims []string
	// BackupReports and RestoreReports are each FE pod's backup and restore
	// reports as JSON text (backups.go reads the leader's).
	BackupReports, RestoreReports map[string]string
	// SharedData is each FE pod's shared-data report, by pod name
	// (shareddata.go reads the leader's).
	SharedData map[string]*agentconfig.SharedDataStatus
	// Backups are the instance's StarrocksBackup objects (set by Reconcile).
	Backups []BackupSnap
	// Restore is the restore requested of the agent (nil: none) and
	// RestoreReport the leader's report about it (set by Reconcile).
	Restore       *agentconfig.RestoreConfig
	RestoreReport *agentconfig.RestoreStatus
	// BackupDecision is backupplan.Plan's decision for the instance and
	// BackupReport the leader's backup report (set by Reconcile).
	BackupDecision *backupplan.Decision
	BackupReport   *agentconfig.BackupStatus
	// RestoringInto is, by the name of each of the instance's backups an
	// instance restores from, that instance's "namespace/name" (set by
	// Reconcile; backupplan.Object.RestoringInto).
	RestoringInto map[string]string
	// BackupJobTimeout is the class's bound of one BACKUP or RESTORE job
	// (classrules.BackupJobTimeout; set by Reconcile).
	BackupJobTimeout time.Duration
	// PVCs of the instance.
	PVCs []PVCSnap
	// Volumes is the verdict of planVolumes over PVCs (set by Reconcile).
	Volumes VolumesVerdict
	// Rollout is the rollout decision (set by Reconcile).
	Rollout desired.Rollout
	// Join is what the FE of pod JoinPod waits for, its meta being empty
	// on a bootstrapped instance (set by Reconcile).
	JoinPod string
	Join    *agentconfig.JoinStatus
	// Unschedulable is why the scheduler does not place pod
	// UnschedulablePod (set by Reconcile).
	UnschedulablePod string
	Unschedulable    *PodUnschedulable
	// Bootstrapped is true when the trusted last valid entry of the instance
	// records agentConfig.bootstrapped (set by Reconcile): the module's
	// memory of the bootstrap besides the AccountsReady condition.
	Bootstrapped bool
}

// StatefulSetState is the readiness of one StatefulSet.
type StatefulSetState struct {
	Replicas      int32 `json:"replicas"`
	ReadyReplicas int32 `json:"readyReplicas"`
	// TemplateSize is the storage request of its volumeClaimTemplates.
	TemplateSize string `json:"templateSize,omitempty"`
	// UpdateRevision is status.updateRevision: the revision of the current
	// pod template, which a pod has once it was recreated from it.
	UpdateRevision string `json:"updateRevision,omitempty"`
}

// CertificateState is a cert-manager Certificate's Ready condition.
type CertificateState struct {
	Ready    *metav1.Condition `json:"ready"`
	NotAfter *metav1.Time      `json:"notAfter"`
	// Revision is status.revision (0: none yet).
	Revision int64 `json:"revision,omitempty"`
}

// AgentTLS is the tls field of pkg/agentconfig.Status.
type AgentTLS struct {
	Ready   bool   `json:"ready"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// AgentAccounts is the accounts field of pkg/agentconfig.Status.
type AgentAccounts struct {
	Ready   bool   `json:"ready"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Verdict is a condition's status, reason and message.
type Verdict struct {
	OK              bool
	Reason, Message string
}

// accountsReady is the AccountsReady condition: True once the agent of any
// pod of the instance's FE StatefulSet reports the accounts ready, and from
// then on for as long as the Starrocks exists. It opens the client ports and
// switches the bootstrap guard on (desired.Bootstrapped), while the report is
// an annotation the tenant can write as well as the agent. So the report can
// only move it forward: once root's password was set, a later report cannot
// mean it is empty again (the agent replaces an empty root password the
// moment it logs in with it, and a bootstrapped instance never starts a
// fresh FE cluster, which is where an empty one comes from), so closing the
// ports would only cut off the clients, and switching the guard off would let
// an FE that lost its volume start a second, empty cluster. The agent's later
// refusal is still shown, in the message. Remembered by the condition itself
// (status is written by the module alone) and by the trusted last valid
// entry (obs.Bootstrapped), should the status be lost.
func accountsReady(obs Observed, prev v1alpha1.StarrocksStatus) Verdict {
	pods := make([]string, 0, len(obs.Accounts))
	for p := range obs.Accounts {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	var ready, unreadable *Verdict
	var refusedPod string
	var refused *AgentAccounts
	for _, p := range pods {
		a := obs.Accounts[p]
		switch {
		case a == nil:
		case a.Ready:
			if ready == nil {
				ready = &Verdict{true, ReasonAccountsReady, fmt.Sprintf("The agent of pod %s reports root's password set and the accounts %s and %s created; the client ports are open to the allowed namespaces.", p, agentconfig.AgentUser, agentconfig.AdminUser)}
			}
		case a.Reason == ReasonAgentStatusUnreadable:
			if unreadable == nil {
				unreadable = &Verdict{false, a.Reason, fmt.Sprintf("The agent status of pod %s is not readable: %s. The client ports stay closed to other pods until the agent reports the accounts ready.", p, a.Message)}
			}
		case a.Reason != "":
			if refused == nil {
				refusedPod, refused = p, a
			}
		}
	}
	var was *metav1.Condition
	for i, c := range prev.Conditions {
		if c.Type == ConditionAccountsReady && c.Status == metav1.ConditionTrue {
			was = &prev.Conditions[i]
		}
	}
	switch {
	case ready != nil:
		return *ready
	case (was != nil || obs.Bootstrapped) && refused != nil:
		return Verdict{true, ReasonAccountsReady, fmt.Sprintf("Root's password was set when an agent first reported the accounts ready, so the client ports stay open and no FE starts a new cluster; the agent of pod %s now reports the accounts not ready: %s: %s", refusedPod, refused.Reason, refused.Message)}
	case was != nil:
		return Verdict{true, was.Reason, was.Message}
	case obs.Bootstrapped:
		return Verdict{true, ReasonAccountsReady, "The module's last valid configuration of this instance records root's password set and the accounts created; the client ports are open to the allowed namespaces."}
	case refused != nil:
		return Verdict{false, refused.Reason, fmt.Sprintf("The agent of pod %s reports the accounts not ready: %s. The client ports are closed to other pods until it reports them ready.", refusedPod, refused.Message)}
	case unreadable != nil:
		return *unreadable
	}
	return Verdict{false, ReasonWaitingForAgent, "No agent of the instance's FE pods has reported root's password set and the accounts created yet; until then only the instance's own pods reach the client ports."}
}

// ComputeStatus is the status of one instance. prev is the status in the
// cluster: transition times of unchanged conditions are kept, so computing
// twice over the same cluster gives the same status and no patch.
func ComputeStatus(res desired.Result, prev v1alpha1.StarrocksStatus, obs Observed, domain string, now metav1.Time) v1alpha1.StarrocksStatus {
	sr := res.Object
	gen := sr.Generation
	st := v1alpha1.StarrocksStatus{ObservedGeneration: gen, Replication: replicationOf(obs, prev)}
	conds := prev.Conditions
	set := func(typ string, ok bool, reason, msg string) {
		conds = setCondition(conds, metav1.Condition{
			Type: typ, Status: condStatus(ok), Reason: reason, Message: truncate(msg), ObservedGeneration: gen,
		}, now)
	}

	switch {
	case res.Valid():
		set(v1alpha1.ConditionConfigurationValid, true, ReasonValid,
			fmt.Sprintf("The spec satisfies every rule of StarrocksClass %q.", sr.Spec.StarrocksClassName))
	default:
		set(v1alpha1.ConditionConfigurationValid, false, invalidReason(res.Violations), invalidMessage(res.Violations))
	}

	e := res.Entry
	switch {
	case e != nil && res.Current:
		set(v1alpha1.ConditionLastValidConfigurationApplied, true, ReasonCurrentSpecApplied,
			fmt.Sprintf("Generation %d is valid and is the configuration in effect.", e.Generation))
	case e != nil && e.Generation == gen:
		// The spec did not change: its class did, under it.
		set(v1alpha1.ConditionLastValidConfigurationApplied, true, ReasonLastValidKept,
			fmt.Sprintf("Generation %d was valid when it was applied and no longer is (its class changed; see ConfigurationValid); it stays in effect as it was applied until the spec or the class is fixed.", gen))
	case e != nil:
		set(v1alpha1.ConditionLastValidConfigurationApplied, true, ReasonLastValidKept,
			fmt.Sprintf("Generation %d is not valid (see ConfigurationValid); the last valid generation %d stays in effect until the spec is fixed.", gen, e.Generation))
	default:
		set(v1alpha1.ConditionLastValidConfigurationApplied, false, ReasonNeverValid,
			"No generation of this spec has been valid yet, so nothing is deployed; fix the spec as ConfigurationValid says.")
	}

	accounts := accountsReady(obs, prev)
	if !accounts.OK && accounts.Reason == agentconfig.ReasonRootPasswordRefused && sr.Spec.Storage != nil && sr.Spec.Storage.RestoreFrom != nil {
		accounts.Message += " The instance was restored from a cluster snapshot and root has the source's password: the agent takes root over with the password in the Secret of this namespace named in spec.storage.restoreFrom.rootPasswordSecretRef (and waits while that Secret cannot be read), or, with none named, resets it by restoring the first FE again with authentication off while the client ports stay closed."
	}
	set(ConditionAccountsReady, accounts.OK, accounts.Reason, accounts.Message)

	// leftAlone sets the conditions of an instance whose objects the module
	// leaves as they are (not managed for the reason given).
	leftAlone := func(reason, msg, why string) {
		set(v1alpha1.ConditionAvailable, false, reason, msg)
		set(v1alpha1.ConditionTLSReady, false, reason, msg)
		set(v1alpha1.ConditionBackendScaleIn, true, ReasonNoScaleInPending, "The instance is not managed "+why+", so no BE is being removed.")
		set(v1alpha1.ConditionVolumesResized, true, ReasonVolumesAtDesiredSize, "The instance is not managed "+why+", so no volume is being expanded.")
		set(v1alpha1.ConditionRolledOut, true, ReasonPodsUpToDate, "The instance is not managed "+why+", so no pod is being restarted.")
		set(ConditionUsersReady, false, reason, msg)
	}

	if reason, msg, why := excludedBecause(res); reason != "" {
		// The objects carry helm.sh/resource-policy: keep, the memory and
		// credentials stay: nothing of this instance is deleted.
		st.Phase = v1alpha1.PhasePending
		set(v1alpha1.ConditionLastValidConfigurationApplied, false, reason, msg)
		leftAlone(reason, msg, why)
		st.Conditions = conds
		return st
	}

	if e == nil && (obs.Frontend != nil || obs.Backend != nil || obs.Compute != nil) {
		// No trusted memory (lost, or the module was upgraded while the spec
		// was invalid) but the instance's StatefulSets exist: they carry
		// helm.sh/resource-policy: keep, so Helm leaves them and their data
		// as they are.
		st.Phase = v1alpha1.PhaseInvalid
		msg := "The spec is not valid and there is no last valid configuration to apply: the StatefulSets, volumes and Secrets of the instance are left as they are, unmanaged, until the spec is valid again."
		set(v1alpha1.ConditionLastValidConfigurationApplied, false, ReasonNeverValid, "No valid configuration is known for this object; fix the spec as ConfigurationValid says. "+msg)
		leftAlone(ReasonNotManaged, msg, "until its spec is valid")
		st.Conditions = conds
		return st
	}
	if e == nil {
		st.Phase = v1alpha1.PhaseInvalid
		set(v1alpha1.ConditionAvailable, false, ReasonNotRendered, "Nothing is deployed because the spec has never been valid.")
		set(v1alpha1.ConditionTLSReady, false, ReasonNotRendered, "Nothing is deployed because the spec has never been valid.")
		set(v1alpha1.ConditionBackendScaleIn, true, ReasonNoScaleInPending, "Nothing is deployed, so no BE is being removed.")
		set(v1alpha1.ConditionVolumesResized, true, ReasonVolumesAtDesiredSize, "Nothing is deployed, so no volume is being expanded.")
		set(v1alpha1.ConditionRolledOut, true, ReasonPodsUpToDate, "Nothing is deployed, so no pod is being restarted.")
		set(ConditionUsersReady, false, ReasonNotRendered, "Nothing is deployed because the spec has never been valid, so no database, role or user is created.")
		st.Conditions = conds
		return st
	}

	st.LastValidGeneration = e.Generation
	st.Endpoints = ptrTo(desired.Endpoints(sr.Name, sr.Namespace, domain))
	st.CredentialsSecretName = e.Names.CredentialsSecret
	st.Configuration = desired.EffectiveConfiguration(e)
	st.Frontend = v1alpha1.ComponentStatus{Replicas: e.Frontend.Replicas}
	st.Backend = v1alpha1.ComponentStatus{Replicas: e.Backend.Replicas}
	st.TLS = &v1alpha1.TLSStatus{SecretName: e.TLS.SecretName}
	if obs.Frontend != nil {
		st.Frontend.ReadyReplicas = obs.Frontend.ReadyReplicas
	}
	if obs.Backend != nil {
		st.Backend.ReadyReplicas = obs.Backend.ReadyReplicas
	}
	st.Frontend.Ready, st.Backend.Ready = readyOfDesired(st.Frontend), readyOfDesired(st.Backend)

	// The pods beside the FEs: BEs, or the CNs of a shared-data instance.
	workers, workersObs, workerWord := &st.Backend, obs.Backend, "BE"
	if e.Compute != nil {
		st.Backend = v1alpha1.ComponentStatus{}
		st.Compute = computeStatus(e, obs.Compute)
		workers, workersObs, workerWord = st.Compute, obs.Compute, "CN"
	}

	allReady := obs.Frontend != nil && workersObs != nil &&
		st.Frontend.ReadyReplicas >= st.Frontend.Replicas && workers.ReadyReplicas >= workers.Replicas
	// A shared-data instance keeps its tables in the storage volume: with
	// every pod ready but no volume, no table can be created, so it is not
	// Available (the one place of that rule).
	var storage *tristate
	if e.Compute != nil {
		storage = ptrTo(storageReady(obs, prev))
		conds = setCondition(conds, metav1.Condition{Type: ConditionStorageReady, Status: storage.Status, Reason: storage.Reason, Message: truncate(storage.Message), ObservedGeneration: gen}, now)
	}
	switch {
	case obs.Frontend == nil || workersObs == nil:
		st.Phase = v1alpha1.PhasePending
		set(v1alpha1.ConditionAvailable, false, ReasonNotRendered, "The StatefulSets of the instance do not exist yet; the module is deploying them.")
	case allReady && storage != nil && storage.Status != metav1.ConditionTrue:
		st.Phase = v1alpha1.PhaseProvisioning
		if prev.Phase == v1alpha1.PhaseRunning || prev.Phase == v1alpha1.PhaseDegraded {
			st.Phase = v1alpha1.PhaseDegraded
		}
		set(v1alpha1.ConditionAvailable, false, storage.Reason,
			fmt.Sprintf("%s and %s are ready, but the storage volume is not (see %s): %s", plural.Count(st.Frontend.Replicas, "FE pod"), plural.Count(workers.Replicas, workerWord+" pod"), ConditionStorageReady, storage.Message))
	case allReady:
		st.Phase = v1alpha1.PhaseRunning
		set(v1alpha1.ConditionAvailable, true, ReasonAllReplicasReady,
			fmt.Sprintf("%s and %s are ready.", plural.Count(st.Frontend.Replicas, "FE pod"), plural.Count(workers.Replicas, workerWord+" pod")))
	default:
		st.Phase = v1alpha1.PhaseProvisioning
		if prev.Phase == v1alpha1.PhaseRunning || prev.Phase == v1alpha1.PhaseDegraded {
			st.Phase = v1alpha1.PhaseDegraded
		}
		reason, msg := ReasonReplicasNotReady, fmt.Sprintf("Ready pods: %d of %d FE, %d of %d %s.", st.Frontend.ReadyReplicas, st.Frontend.Replicas, workers.ReadyReplicas, workers.Replicas, workerWord)
		switch {
		case obs.PullFailure != nil:
			reason, msg = ReasonImagePullFailed, msg+" "+pullFailureMessage(obs.PullPod, obs.PullFailure)
		case obs.Join != nil:
			reason, msg = obs.Join.Reason, fmt.Sprintf("%s The FE of pod %s has an empty meta directory on an instance that has bootstrapped, so it never starts a new cluster: %s", msg, obs.JoinPod, obs.Join.Message)
		case obs.Unschedulable != nil:
			// The scheduler's own words (which resource no node has left):
			// "Ready pods: 0 of 1" alone leaves the user guessing.
			reason, msg = ReasonPodsUnschedulable, fmt.Sprintf("%s Pod %s cannot be scheduled (%s): %s", msg, obs.UnschedulablePod, obs.Unschedulable.Reason, obs.Unschedulable.Message)
		}
		set(v1alpha1.ConditionAvailable, false, reason, msg)
	}

	ok, reason, msg := tlsReady(obs, e)
	if obs.Certificate != nil && obs.Certificate.NotAfter != nil {
		st.TLS.NotAfter = obs.Certificate.NotAfter
	}
	set(v1alpha1.ConditionTLSReady, ok, reason, msg)
	ok, reason, msg = backendScaleIn(res.ScaleIn)
	set(v1alpha1.ConditionBackendScaleIn, ok, reason, msg)
	set(v1alpha1.ConditionVolumesResized, obs.Volumes.OK, obs.Volumes.Reason, obs.Volumes.Message)
	status, reason, msg := tablesReplicated(st.Replication, e, backendsNoneAlive(obs))
	conds = setCondition(conds, metav1.Condition{Type: v1alpha1.ConditionTablesReplicated, Status: status, Reason: reason, Message: truncate(msg), ObservedGeneration: gen}, now)
	ok, reason, msg = rolledOut(obs.Rollout)
	set(v1alpha1.ConditionRolledOut, ok, reason, msg)
	var users Verdict
	users, st.Users, st.Databases = usersReady(e, obs, prev)
	set(ConditionUsersReady, users.OK, users.Reason, users.Message)
	if v, ok := restoredVerdict(sr, obs, prev); ok {
		set(v1alpha1.ConditionRestored, v.OK, v.Reason, v.Message)
		if !v.OK && st.Phase == v1alpha1.PhaseRunning {
			// Running pods, but closed to clients until the data is back.
			set(v1alpha1.ConditionAvailable, false, ReasonRestoring, v.Message)
		}
	}
	if bs, v, ok := backupsVerdict(sr, obs, now.Time); ok {
		st.Backup = bs
		set(v1alpha1.ConditionBackupsHealthy, v.OK, v.Reason, v.Message)
	}
	if e.Compute != nil {
		// A shared-data instance has no spec.backup: StarRocks' automated
		// cluster snapshot protects it.
		bs, v := snapshotsVerdict(obs, prev)
		st.Backup = bs
		conds = setCondition(conds, metav1.Condition{Type: v1alpha1.ConditionBackupsHealthy, Status: v.Status, Reason: v.Reason, Message: truncate(v.Message), ObservedGeneration: gen}, now)
	}
	st.Conditions = conds
	return st
}

func backendScaleIn(s desired.ScaleIn) (bool, string, string) {
	switch s.State {
	case desired.ScaleInWaitingForAgent:
		return false, ReasonWaitingForAgent, fmt.Sprintf("spec.backend.replicas is %d, but the BE StatefulSet keeps its %d pods until the agent of the FE leader reports which BEs StarRocks still lists: a BE pod is removed only after its tablets were moved to the others.", s.Desired, s.Rendered)
	case desired.ScaleInHeld:
		return false, ReasonBackupJobRunning, fmt.Sprintf("spec.backend.replicas is %d, the BE StatefulSet keeps its %d pods and no BE is decommissioned yet. %s", s.Desired, s.Rendered, s.Held)
	case desired.ScaleInDraining:
		if s.Refused != "" {
			return false, ReasonDecommissionRefused, decommissionRefusedMessage(s)
		}
		parts := make([]string, len(s.Kept))
		for i, k := range s.Kept {
			if k.Decommissioned {
				parts[i] = fmt.Sprintf("%s (decommissioned, %s left)", k.Host, plural.Count(k.TabletNum, "tablet"))
			} else {
				parts[i] = fmt.Sprintf("%s (still a member, not decommissioned yet)", k.Host)
			}
		}
		return false, ReasonDecommissionInProgress, fmt.Sprintf("spec.backend.replicas is %d, %d BE pods are kept: StarRocks still lists %s. Each pod keeps running until StarRocks has moved its tablets to the other BEs and the agent has dropped it.", s.Desired, s.Rendered, strings.Join(parts, ", "))
	}
	return true, ReasonNoScaleInPending, fmt.Sprintf("No BE is being removed: the BE StatefulSet runs the %s of the configuration in effect.", plural.Count(s.Rendered, "pod"))
}

func tlsReady(obs Observed, e *desired.Instance) (bool, string, string) {
	c := obs.Certificate
	switch {
	case c == nil:
		return false, ReasonCertificateMissing, fmt.Sprintf("The cert-manager Certificate of the instance does not exist yet; it is deployed with the instance and fills Secret %s.", e.TLS.SecretName)
	case c.Ready == nil || c.Ready.Status != metav1.ConditionTrue:
		why := "it has no Ready condition yet"
		if c.Ready != nil {
			why = fmt.Sprintf("Ready is %s (%s: %s)", c.Ready.Status, c.Ready.Reason, c.Ready.Message)
		}
		return false, ReasonCertificateNotReady, fmt.Sprintf("The certificate is not issued: %s. Check the Certificate and its issuer with kubectl describe certificate.", why)
	}
	pods := make([]string, 0, len(obs.AgentTLS))
	for p := range obs.AgentTLS {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	for _, p := range pods {
		a := obs.AgentTLS[p]
		if a == nil {
			return false, ReasonAgentNotReported, fmt.Sprintf("The certificate is issued, but the agent of pod %s has not confirmed TLS on the query port yet.", p)
		}
		if !a.Ready {
			reason := a.Reason
			if reason == "" {
				reason = defaultAgentTLSNotReadyWhy
			}
			return false, reason, fmt.Sprintf("The agent of pod %s reports TLS not working: %s", p, a.Message)
		}
	}
	if len(pods) == 0 {
		return false, ReasonAgentNotReported, "The certificate is issued, but no FE pod has confirmed TLS on the query port yet."
	}
	return true, ReasonCertificateReady, fmt.Sprintf("The certificate is issued and %s on the query port.", servedBy(len(pods)))
}

func invalidReason(vs classrules.Violations) string {
	for _, v := range vs {
		if v.Field == "spec.starrocksClassName" {
			if strings.Contains(v.Rule, "must exist") {
				return ReasonClassNotFound
			}
			return ReasonClassInvalid
		}
	}
	return ReasonClassRuleViolated
}

func invalidMessage(vs classrules.Violations) string {
	if len(vs) == 1 {
		if invalidReason(vs) == ReasonClassRuleViolated {
			return "The spec breaks a class rule: " + vs[0].Error() + "."
		}
		// The class is missing or broken: no class rule was checked, and
		// the violation itself says so.
		return vs[0].Error() + "."
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("(%d) %s", i+1, v.Error())
	}
	return fmt.Sprintf("The spec breaks %d class rules: %s.", len(vs), strings.Join(parts, "; "))
}

func servedBy(pods int) string {
	if pods == 1 {
		return "the FE pod serves it"
	}
	return fmt.Sprintf("every FE pod (%d) serves it", pods)
}

// setCondition replaces the condition of the same type, keeping its
// transition time when the status did not change.
func setCondition(conds []metav1.Condition, c metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(conds)+1)
	found := false
	for _, old := range conds {
		if old.Type != c.Type {
			out = append(out, old)
			continue
		}
		found = true
		c.LastTransitionTime = now
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		out = append(out, c)
	}
	if !found {
		c.LastTransitionTime = now
		out = append(out, c)
	}
	return out
}

func condStatus(ok bool) metav1.ConditionStatus {
	if ok {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

func truncate(s string) string { return truncateBytes(s, maxConditionMessageLength) }

func ptrTo[T any](v T) *T { return &v }

// ComputeClassStatus is the status of a class.
func ComputeClassStatus(class *v1alpha1.StarrocksClass, problems classrules.Violations, prev v1alpha1.StarrocksClassStatus, now metav1.Time) v1alpha1.StarrocksClassStatus {
	st := v1alpha1.StarrocksClassStatus{ObservedGeneration: class.Generation, SizingPolicyCount: int32(len(class.Spec.SizingPolicies))}
	c := metav1.Condition{Type: ConditionClassValid, ObservedGeneration: class.Generation}
	if len(problems) == 0 {
		c.Status, c.Reason = metav1.ConditionTrue, ReasonClassRulesCompiled
		c.Message = classValidMessage(len(class.Spec.Validations), len(class.Spec.SizingPolicies))
	} else {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonClassInvalid
		c.Message = truncate(fmt.Sprintf("Instances of this class are not deployed or changed until it is fixed: %s.", problems.Error()))
	}
	st.Conditions = setCondition(prev.Conditions, c, now)
	return st
}

func classValidMessage(rules, policies int) string {
	var r string
	switch rules {
	case 0:
		r = "The class has no validation rules"
	case 1:
		r = "The validation rule compiles"
	default:
		r = fmt.Sprintf("The %d validation rules compile", rules)
	}
	var p string
	switch policies {
	case 0:
		p = "there is no sizing policy"
	case 1:
		p = "the sizing policy is consistent"
	default:
		p = fmt.Sprintf("the %d sizing policies are consistent", policies)
	}
	return r + " and " + p + "."
}

// excludedBecause is the reason, message and short why of an instance that
// gets no entry whatever its spec (desired.Result.Excluded); "" otherwise.
func excludedBecause(res desired.Result) (reason, msg, why string) {
	const leftAsIs = "nothing of it is deployed or changed, and objects it already has are left as they are"
	switch {
	case res.Conflict != nil:
		// Two instances writing one object would fight over it every pass.
		return ReasonNameConflict, fmt.Sprintf("Starrocks %q, older in this namespace, already uses the name of %s that this instance would use too: "+
			"%s. Delete this instance and create it under another name.",
			res.Conflict.Other, res.Conflict.Object, leftAsIs), "(name conflict)"
	case res.NamespaceOverLimit > 0:
		return ReasonNamespaceLimitReached, fmt.Sprintf("The module manages at most %s per namespace, the oldest by creation time (ModuleConfig managed-starrocks settings.instances.maxPerNamespace), and this one is newer: "+
			"%s, until older instances of this namespace are deleted or your cluster admin raises the limit.", plural.Count(res.NamespaceOverLimit, "Starrocks instance"), leftAsIs), "(namespace limit reached)"
	case res.OverLimit > 0:
		// The limit bounds the hooks' work and the module's ConfigMaps,
		// which grow with every instance managed.
		return ReasonInstanceLimitReached, fmt.Sprintf("The module manages at most %d Starrocks instances, the oldest by creation time (ModuleConfig managed-starrocks settings.instances.maxCount), and this one is newer: "+
			"%s, until older instances are deleted or your cluster admin raises the limit.", res.OverLimit, leftAsIs), "(instance limit reached)"
	}
	return "", "", ""
}

// computeStatus is status.compute of a shared-data instance: the fixed CN
// count, or while autoscaling the count the autoscaler set on the CN
// StatefulSet, bounded by the entry's range (anyone who may edit the
// StatefulSet may write its replicas).
func computeStatus(e *desired.Instance, obs *StatefulSetState) *v1alpha1.ComponentStatus {
	c := &v1alpha1.ComponentStatus{Replicas: e.Compute.Replicas}
	if a := e.Compute.Autoscaling; a != nil {
		c.Replicas = a.MinReplicas
		if obs != nil {
			c.Replicas = min(max(obs.Replicas, a.MinReplicas), a.MaxReplicas)
		}
	}
	if obs != nil {
		c.ReadyReplicas = min(obs.ReadyReplicas, desired.MaxComputeReplicas)
	}
	c.Ready = readyOfDesired(*c)
	return c
}
