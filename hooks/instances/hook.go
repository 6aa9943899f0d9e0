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

// Package instances is the module's controller hook: on every change of a
// Starrocks, a StarrocksClass or an object of an instance it validates every
// instance against its class, computes the desired state of each and hands
// it to the instanceobjects hook (ConfigMaps desired-<uid> in the module
// namespace, never the module's values, which the Helm release stores),
// remembers the last valid state of each instance in the cluster, and
// reports status and metrics.
package instances

import (
	"context"
	"fmt"
	"strings"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/pkg/metric/operation"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// Snapshot names.
const (
	SnapStarrocks       = "starrocks"
	SnapStarrocksStatus = "starrocks_status"
	SnapClasses         = "classes"
	SnapClassStatus     = "class_status"
	SnapStatefulSets    = "statefulsets"
	SnapPods            = "frontend_pods"
	SnapCertificates    = "certificates"
	SnapLastValid       = "last_valid"
	SnapDesired         = "desired"
	SnapPVCs            = "pvcs"
	SnapStorageClasses  = "storage_classes"
	SnapNamespaces      = "namespaces"
	SnapEventQuotas     = "event_quotas"
	SnapApplied         = "applied"
	SnapBackups         = "backups"
)

// Metric names (alerts in monitoring/ use exactly these).
const (
	MetricGroup              = "d8_managed_starrocks_instances"
	MetricInstances          = "d8_managed_starrocks_instances"
	MetricConfigurationValid = "d8_managed_starrocks_instance_configuration_valid"
	// Backups, per instance with spec.backup: the time of the newest
	// Completed backup (absent before the first), when the schedule was or
	// is next due after it, how many of its StarrocksBackups failed (bounded
	// by the objects that exist), the BackupsHealthy condition and whether a
	// schedule runs. A shared-data instance has the same series for its
	// automated cluster snapshots (snapshotMetric).
	MetricBackupLastSuccess = "d8_managed_starrocks_backup_last_success_timestamp_seconds"
	MetricBackupDue         = "d8_managed_starrocks_backup_due_timestamp_seconds"
	MetricBackupsFailed     = "d8_managed_starrocks_backups_failed"
	MetricBackupsHealthy    = "d8_managed_starrocks_backups_healthy"
	MetricBackupScheduled   = "d8_managed_starrocks_backup_scheduled"
)

var _ = registry.RegisterFunc(Config, Handle)

var (
	no = false
	// instanceSel: the pods of every instance. The StatefulSet controller
	// makes them with the template's labels, which go without `heritage:
	// deckhouse` (the agent writes its own pod's annotation), so a tenant's
	// pod can carry them too: both pod bindings use this one selector, so
	// addon-operator holds such a pod once (one informer), and their
	// filters keep a bounded part of it (podFilter).
	instanceSel  = &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue}}
	lastValidSel = &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateLastValid}}
	appliedSel   = &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelState: applied.State}}
)

// Config binds everything the desired state and the status depend on. The
// jq filters keep only what is read: the Starrocks and class bindings never
// include .status, so the hook's own status patches do not trigger it again;
// the *_status bindings hold the current status (to patch only on change)
// with events switched off for the same reason.
var Config = &pkg.HookConfig{
	Queue: shared.QueueInstances,
	// Every minute: a backup schedule's slot is started within
	// backupplan.SlotWindow of its time, whether or not anything changed.
	Schedule: []pkg.ScheduleConfig{{Name: "backup-schedule", Crontab: "* * * * *"}},
	Kubernetes: shared.NoWaitForSynchronization([]pkg.KubernetesConfig{
		{
			Name:       SnapStarrocks,
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.StarrocksKind,
			// creationTimestamp: past instances.maxCount the oldest instances
			// are managed; deletionTimestamp: a Starrocks being deleted is
			// ending (endingInstances).
			JqFilter: `{metadata: {name: .metadata.name, namespace: .metadata.namespace, uid: .metadata.uid, generation: .metadata.generation, creationTimestamp: .metadata.creationTimestamp, deletionTimestamp: .metadata.deletionTimestamp}, spec: .spec}`,
		},
		{
			Name:                         SnapStarrocksStatus,
			APIVersion:                   v1alpha1.SchemeGroupVersion.String(),
			Kind:                         v1alpha1.StarrocksKind,
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     `{namespace: .metadata.namespace, name: .metadata.name, status: (.status // {})}`,
		},
		{
			// StarrocksBackup objects live in tenant namespaces and are
			// tenant-written (all but status): every field is coerced, and
			// an object counts only for the instance its spec names in its
			// own namespace (backups.go). Its status is read: the phase
			// decides which set runs next.
			Name:       SnapBackups,
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.BackupKind,
			JqFilter:   shared.JqTypes + backupFilter,
		},
		{
			Name:       SnapClasses,
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.StarrocksClassKind,
			JqFilter:   `{metadata: {name: .metadata.name, uid: .metadata.uid, generation: .metadata.generation, resourceVersion: .metadata.resourceVersion}, spec: .spec}`,
		},
		{
			Name:                         SnapClassStatus,
			APIVersion:                   v1alpha1.SchemeGroupVersion.String(),
			Kind:                         v1alpha1.StarrocksClassKind,
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     `{name: .metadata.name, status: (.status // {})}`,
		},
		{
			// StatefulSets, Certificates, PVCs and Pods live in tenant
			// namespaces: tenants can create look-alikes with any labels and
			// annotations. Every field is coerced to its type (shared.JqTypes)
			// so no item can fail the decoding of the snapshot, and the hook
			// counts an object only under the name the module gives it
			// (observe).
			Name:          SnapStatefulSets,
			APIVersion:    "apps/v1",
			Kind:          "StatefulSet",
			LabelSelector: shared.ModuleObjectSelector(),
			JqFilter: shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), uid: (.metadata.uid | str),` +
				` instance: (.metadata.labels["` + shared.LabelInstance + `"] | str), component: (.metadata.labels["` + shared.LabelComponent + `"] | str),` +
				` replicas: (.spec.replicas // 1 | num), readyReplicas: (.status.readyReplicas | num), updateRevision: (.status.updateRevision | str),` +
				// The size the StatefulSet was created with: volumeClaimTemplates cannot change.
				` templateSize: ([(.spec.volumeClaimTemplates // [])[] | .spec.resources.requests.storage // empty][0] | str)}`,
		},
		{
			// Only the verdicts of the agent status (TLS, accounts) and the
			// membership: the agent rewrites its timestamp on every pass,
			// which must not rerun the hook. A tenant can write any
			// annotation on any pod: an annotation that is not JSON or has a
			// field of the wrong type makes the pod's report unreadable (a
			// reason naming the field), never a failed snapshot. The
			// controller owner is kept: only pods of the instance's FE
			// StatefulSet count.
			Name:          SnapPods,
			APIVersion:    "v1",
			Kind:          "Pod",
			LabelSelector: instanceSel,
			JqFilter:      shared.JqTypes + podFilter,
		},
		{
			// Every pod of every instance, FE, BE and CN, with its revision and
			// readiness: the rollout restarts them one at a time (rollout.go).
			Name:          SnapRolloutPods,
			APIVersion:    "v1",
			Kind:          "Pod",
			LabelSelector: instanceSel,
			JqFilter:      rolloutPodsFilter,
		},
		{
			Name:          SnapCertificates,
			APIVersion:    "cert-manager.io/v1",
			Kind:          "Certificate",
			LabelSelector: shared.ModuleObjectSelector(),
			JqFilter: shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), instance: (.metadata.labels["` + shared.LabelInstance + `"] | str),` +
				` ready: ([(.status.conditions // [])[] | select(.type == "Ready") | {type: (.type | str), status: (.status | str), reason: (.reason | str), message: (.message | str), lastTransitionTime: (.lastTransitionTime // null)}][0] // null),` +
				` notAfter: (.status.notAfter // null), revision: (.status.revision | num)}`,
		},
		{
			// The module's memory: only in the module namespace, where no
			// tenant can write; a copy anywhere else is not even seen.
			Name:              SnapLastValid,
			APIVersion:        "v1",
			Kind:              "ConfigMap",
			NamespaceSelector: shared.ModuleNamespaceSelector,
			LabelSelector:     lastValidSel,
			JqFilter:          shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), entry: (.data["` + shared.LastValidKey + `"] | str)}`,
		},
		{
			// The entries handed to the instanceobjects hook
			// (shared.DesiredPrefix), to write only those that changed. A
			// snapshot only: the hook's own writes must not run it again.
			Name:                         SnapDesired,
			APIVersion:                   "v1",
			Kind:                         "ConfigMap",
			NamespaceSelector:            shared.ModuleNamespaceSelector,
			LabelSelector:                &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateDesired}},
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), entry: (.data["` + shared.LastValidKey + `"] | str)}`,
		},
		{
			// The instanceobjects hook's records (hooks/internal/applied):
			// only in the module namespace, like the memory, so a tenant
			// cannot forge one. Its writes change them: a reason to run.
			Name:              SnapApplied,
			APIVersion:        "v1",
			Kind:              "ConfigMap",
			NamespaceSelector: shared.ModuleNamespaceSelector,
			LabelSelector:     appliedSel,
			JqFilter:          shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), record: (.data["` + applied.Key + `"] | str)}`,
		},
		{
			// The PVCs the StatefulSets create from their volumeClaimTemplates
			// carry the templates' instance labels: the ones to expand.
			Name:          SnapPVCs,
			APIVersion:    "v1",
			Kind:          "PersistentVolumeClaim",
			LabelSelector: shared.ModuleObjectSelector(),
			JqFilter: shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), instance: (.metadata.labels["` + shared.LabelInstance + `"] | str), component: (.metadata.labels["` + shared.LabelComponent + `"] | str),` +
				` storageClassName: (.spec.storageClassName | str), requested: (.spec.resources.requests.storage | str), capacity: (.status.capacity.storage | str), phase: (.status.phase | str),` +
				` bypass: (.metadata.labels["` + BypassLabel + `"] | str)}`,
		},
		{
			// Whether a PVC may be expanded at all: the apiserver refuses it
			// unless its StorageClass allows volume expansion.
			Name:       SnapStorageClasses,
			APIVersion: "storage.k8s.io/v1",
			Kind:       "StorageClass",
			JqFilter:   `{name: .metadata.name, allowVolumeExpansion: (.allowVolumeExpansion // false)}`,
		},
		{
			// A namespace being deleted ends its instances (endingInstances),
			// and the apiserver refuses new objects there. A snapshot only,
			// never a reason to run: the deletion of the namespace's
			// Starrocks (or the finalizers' run) triggers the hook.
			Name:                         SnapNamespaces,
			APIVersion:                   "v1",
			Kind:                         "Namespace",
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     `{name: .metadata.name, terminating: (.metadata.deletionTimestamp != null or .status.phase == "Terminating")}`,
		},
		{
			// A ResourceQuota that counts Events may refuse one: the hook
			// writes none in its namespace (the status still says it all;
			// a refused Event would only be logged).
			Name:                         SnapEventQuotas,
			APIVersion:                   "v1",
			Kind:                         "ResourceQuota",
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     `{namespace: .metadata.namespace, countsEvents: ((.spec.hard // {}) | has("count/events") or has("count/events.events.k8s.io"))}`,
		},
	}),
}

// podFilter reads an FE pod: its controller owner and the verdicts of its
// agent status. Its binding lists every pod of the instances (instanceSel,
// the rollout's informer): only the agent of an FE pod reports, and a pod
// counts only when its controller is the instance's FE StatefulSet.
// want/whole raise an error naming the field of a wrong type; the try
// turns any error into an unreadable report for this pod alone. Messages,
// reasons and table names are kept up to 1025 characters (cutmsg: the
// hooks check a reason and cut a message to 1 KiB, which that cut leaves
// the same); names and lists within shared.MaxNameBytes and
// shared.MaxReportEntries, or the report is unreadable (name, few).
const podFilter = `((.metadata.annotations // {}) | if type == "object" then .["` + agentconfig.StatusAnnotation + `"] else null end) as $raw |` +
	` (if $raw == null then {} else (try ($raw | want("string"; "the annotation") | (try fromjson catch error("the agent-status annotation is not valid JSON")) |` +
	` want("object"; "the agent status") | {` +
	` tls: (.tls | want("object"; "tls") | if . == null then null else {ready: (.ready | want("boolean"; "tls.ready") // false), reason: (.reason | want("string"; "tls.reason") // "" | cutmsg), message: (.message | want("string"; "tls.message") // "" | cutmsg)} end),` +
	` accounts: (.accounts | want("object"; "accounts") | if . == null then null else {ready: (.ready | want("boolean"; "accounts.ready") // false), reason: (.reason | want("string"; "accounts.reason") // "" | cutmsg), message: (.message | want("string"; "accounts.message") // "" | cutmsg)} end),` +
	` membership: (.membership | want("object"; "membership") | if . == null then null else {leader: (.leader | name("membership.leader") // ""),` +
	` backends: [(.backends | few("membership.backends") // [])[] | name("membership.backends[]")],` +
	` draining: [(.draining | few("membership.draining") // [])[] | want("object"; "membership.draining[]") |` +
	` {host: (.host | name("membership.draining[].host") // ""), tabletNum: (.tabletNum | whole("membership.draining[].tabletNum") // 0)}],` +
	// Whether StarRocks counts a listed node alive (replication.go).
	` nodes: [(.nodes | few("membership.nodes") // [])[] | want("object"; "membership.nodes[]") |` +
	` {host: (.host | name("membership.nodes[].host") // ""), alive: (.alive == true)}],` +
	replicationFilter + `} end),` + usersFilter + `,` +
	// The backup and restore reports pass as JSON text, decoded and
	// checked in Go (backups.go): a string always decodes here. Each is
	// kept up to shared.MaxReportBytes; a longer one is not the agent's.
	` backupRaw: ((.backup // null) | report("the backup report")), restoreRaw: ((.restore // null) | report("the restore report")),` +
	sharedDataFilter + `})` +
	` catch {unreadable: (if type == "string" then . else "the agent-status annotation is not readable" end)}) end) as $agent |` +
	` {namespace: (.metadata.namespace | str), name: (.metadata.name | str), instance: (.metadata.labels["` + shared.LabelInstance + `"] | str),` +
	` owner: ([(.metadata.ownerReferences // [])[] | select(.controller == true and .kind == "StatefulSet") | {name: (.name | str), uid: (.uid | str)}][0] // null)} +` +
	` (if $agent.unreadable then {agentTLS: {ready: false, reason: "` + ReasonAgentStatusUnreadable + `", message: $agent.unreadable},` +
	` accounts: {ready: false, reason: "` + ReasonAgentStatusUnreadable + `", message: $agent.unreadable}, membership: {unreadable: true}, users: {unreadable: $agent.unreadable}}` +
	` else {agentTLS: $agent.tls, accounts: $agent.accounts, membership: $agent.membership, users: $agent.users, backupRaw: $agent.backupRaw, restoreRaw: $agent.restoreRaw,` +
	` sharedData: $agent.sharedData} end)`

// sharedDataFilter reads the shared-data report of a shared-data
// instance's FE leader (shareddata.go): the storage volume and the
// automated cluster snapshot, only the fields the status shows, names
// within shared.MaxNameBytes, reasons and messages cut as the others.
const sharedDataFilter = ` sharedData: (.sharedData | want("object"; "sharedData") | if . == null then null else {` +
	` storageVolume: (.storageVolume | want("object"; "sharedData.storageVolume") // {} | {name: (.name | name("sharedData.storageVolume.name") // ""),` +
	` ready: (.ready | want("boolean"; "sharedData.storageVolume.ready") // false),` +
	` reason: (.reason | want("string"; "sharedData.storageVolume.reason") // "" | cutmsg), message: (.message | want("string"; "sharedData.storageVolume.message") // "" | cutmsg)}),` +
	` clusterSnapshots: (.clusterSnapshots | want("object"; "sharedData.clusterSnapshots") | if . == null then null else {` +
	` enabled: (.enabled | want("boolean"; "sharedData.clusterSnapshots.enabled") // false),` +
	` newestSnapshotTime: (.newestSnapshotTime | name("sharedData.clusterSnapshots.newestSnapshotTime") // ""),` +
	` lastJob: (.lastJob | want("object"; "sharedData.clusterSnapshots.lastJob") | if . == null then null else {` +
	` snapshotName: (.snapshotName | name("sharedData.clusterSnapshots.lastJob.snapshotName") // ""),` +
	` createdTime: (.createdTime | name("sharedData.clusterSnapshots.lastJob.createdTime") // ""),` +
	` finishedTime: (.finishedTime | name("sharedData.clusterSnapshots.lastJob.finishedTime") // ""),` +
	` state: (.state | name("sharedData.clusterSnapshots.lastJob.state") // ""),` +
	` succeeded: (.succeeded | want("boolean"; "sharedData.clusterSnapshots.lastJob.succeeded") // false),` +
	` errorMessage: (.errorMessage | want("string"; "sharedData.clusterSnapshots.lastJob.errorMessage") // "" | cutmsg)} end),` +
	` reason: (.reason | want("string"; "sharedData.clusterSnapshots.reason") // "" | cutmsg), message: (.message | want("string"; "sharedData.clusterSnapshots.message") // "" | cutmsg)} end)} end)`

// replicationFilter reads the replication numbers and the refused
// decommission of the leader's membership report (replication.go).
const replicationFilter = ` replication: (.replication | want("object"; "membership.replication") | if . == null then null else {` +
	` maxReplicationNum: (.maxReplicationNum | whole("membership.replication.maxReplicationNum") // 0),` +
	` maxReplicationTable: (.maxReplicationTable | want("string"; "membership.replication.maxReplicationTable") // "" | cutmsg),` +
	` minReplicationNum: (.minReplicationNum | whole("membership.replication.minReplicationNum") // 0),` +
	` minReplicationTable: (.minReplicationTable | want("string"; "membership.replication.minReplicationTable") // "" | cutmsg)} end),` +
	` decommissionRefused: (.decommissionRefused | want("string"; "membership.decommissionRefused") // "" | cutmsg)`

// cache only memoizes compiled CEL per class generation (a pure function of
// the class): no decision depends on it surviving a restart.
var cache = classrules.NewCache()

// Handle reads the snapshots, reconciles and writes values, the memory,
// the tenants' objects and status (each on its own: kubewrite), Events and
// metrics.
func Handle(ctx context.Context, input *pkg.HookInput) error {
	return handle(ctx, input, kubewrite.New(input))
}

// handle writes through w: module-sdk's test framework rebuilds its fake
// cluster on every KubeStateSet after the dependency container holds the
// first one, so its tests hand the current one in.
func handle(ctx context.Context, input *pkg.HookInput, w *kubewrite.Writer) error {
	state, err := ReadState(input)
	if err != nil {
		return err
	}
	for _, msg := range state.Warnings {
		input.Logger.Warn(msg)
	}
	now := metav1.NewTime(input.DC.GetClock().Now()).Rfc3339Copy()
	// Every write a tenant can get refused (its PVCs, pods, Starrocks
	// status, Events in its namespace) goes through w, one at a time, and a
	// refusal stays that instance's: the patch collector's operations run
	// after the hook returns, and one refused there fails the whole run
	// (every instance; in Deckhouse the queue, retried at its head). The
	// PVC expansions and pod restarts are made first, inside Reconcile, so
	// a refusal reaches the status written below in the same run.
	plan := Reconcile(state, cache, now, tenantWrites{ctx: ctx, w: w})
	for _, msg := range plan.Warnings {
		input.Logger.Warn(msg)
	}
	for _, r := range plan.Refusals {
		input.Logger.Warn("the API server refused a write of an instance", "instance", r.Instance, "object", r.Object, "refusal", r.Message)
	}

	// The memory and the desired state live in the module namespace, where
	// no tenant can write, set a quota or admit anything: no tenant can get
	// these refused, so the patch collector (all or nothing, after the hook)
	// is safe here. Nothing goes into the module's values: they are stored
	// with its one Helm release, which tenant-sized entries would outgrow.
	for _, cm := range plan.LastValid {
		input.PatchCollector.CreateOrUpdate(cm)
	}
	for _, name := range plan.StaleLastValid {
		input.PatchCollector.DeleteInBackground("v1", "ConfigMap", shared.ModuleNamespace, name)
	}
	for _, cm := range plan.Desired {
		input.PatchCollector.CreateOrUpdate(cm)
	}
	for _, name := range plan.StaleDesired {
		input.PatchCollector.DeleteInBackground("v1", "ConfigMap", shared.ModuleNamespace, name)
	}
	for _, p := range plan.StatusPatches {
		// A Starrocks its tenant inflated close to etcd's size limit gets
		// its own status refused; every other status still lands.
		if err := writeStatus(ctx, w, p); err != nil && !kubewrite.Gone(err) {
			input.Logger.Warn("the status of an instance was refused", "instance", desired.Key(p.Namespace, p.Name), "refusal", kubewrite.Refusal(err))
		}
	}
	// StarrocksBackup objects are in tenant namespaces: one at a time
	// through w, a refusal is logged and stays its instance's.
	for _, b := range plan.BackupWrites {
		if err := writeBackup(ctx, w, b); err != nil && !kubewrite.Gone(err) {
			input.Logger.Warn("a write of a StarrocksBackup was refused", "instance", b.Instance, "backup", b.Name, "write", b.What, "refusal", kubewrite.Refusal(err))
		}
	}
	// Cluster-scoped and the admins' alone: no tenant can make it refused.
	for _, p := range plan.ClassStatusPatches {
		input.PatchCollector.PatchWithJSON(statusPatch(p.Status), v1alpha1.SchemeGroupVersion.String(), v1alpha1.StarrocksClassKind, "", p.Name,
			objectpatch.WithSubresource("status"), objectpatch.WithIgnoreMissingObject(true))
	}
	// Events go only where the apiserver takes them (State.EventNamespaces)
	// and an existing one of the same name is left alone; one still refused
	// (an admission plugin) is logged, the condition says it all anyway.
	for _, e := range plan.Events {
		if err := writeEvent(ctx, w, e); err != nil && !kubewrite.Gone(err) {
			input.Logger.Warn("an Event of an instance was refused", "instance", desired.Key(e.Namespace, e.InvolvedObject.Name), "reason", e.Reason, "refusal", kubewrite.Refusal(err))
		}
	}
	// Log a broken instance when its status changes, not on every run:
	// the status holds the same text for as long as it stays broken.
	changed := make(map[string]bool, len(plan.StatusPatches))
	for _, p := range plan.StatusPatches {
		changed[desired.Key(p.Namespace, p.Name)] = true
	}
	for _, r := range plan.Results {
		if !r.Valid() && changed[r.Key] {
			// Violations name fields, values and rules: never secrets.
			input.Logger.Info("instance breaks its class rules", "instance", r.Key, "violations", r.Violations.Error(), "lastValidKept", r.Entry != nil)
		}
	}
	publishMetrics(input.MetricsCollector, plan)
	return nil
}

// statusPatch replaces the whole status: "add" on an object member replaces
// it and also works when there is no status yet, and fields the new status
// leaves out are dropped (a merge patch would keep them).
func statusPatch(status any) []map[string]any {
	return []map[string]any{{"op": "add", "path": "/status", "value": status}}
}

func publishMetrics(mc pkg.MetricsCollector, plan Plan) {
	// Expire first: deleted instances must not leave series behind.
	mc.Expire(MetricGroup)
	group := metricGroup(MetricGroup)
	counts := map[v1alpha1.Phase]float64{}
	for _, p := range []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseRunning, v1alpha1.PhaseDegraded, v1alpha1.PhaseInvalid} {
		counts[p] = 0
	}
	for _, p := range plan.Phases {
		counts[p]++
	}
	for p, n := range counts {
		mc.Set(MetricInstances, n, map[string]string{"phase": string(p)}, group)
	}
	for _, r := range plan.Results {
		v := 0.0
		if r.Valid() {
			v = 1
		}
		mc.Set(MetricConfigurationValid, v, map[string]string{"namespace": r.Object.Namespace, "name": r.Object.Name, "class": r.Object.Spec.StarrocksClassName}, group)
	}
	for _, m := range plan.BackupMetrics {
		labels := map[string]string{"namespace": m.Namespace, "name": m.Name}
		if m.LastSuccess > 0 {
			mc.Set(MetricBackupLastSuccess, m.LastSuccess, labels, group)
		}
		if m.Due > 0 {
			mc.Set(MetricBackupDue, m.Due, labels, group)
		}
		mc.Set(MetricBackupsFailed, m.Failed, labels, group)
		if m.HealthKnown {
			mc.Set(MetricBackupsHealthy, boolFloat(m.Healthy), labels, group)
		}
		mc.Set(MetricBackupScheduled, boolFloat(m.Scheduled), labels, group)
	}
}

// ReadState decodes the snapshots. Objects in tenant namespaces are decoded
// one by one: an item that still does not decode (the jq filters coerce
// every field, so this is a last line of defence) becomes an item marked
// unreadable, for its own instance only; the run never fails on one.
func ReadState(input *pkg.HookInput) (State, error) {
	type srStatus struct {
		Namespace string                   `json:"namespace"`
		Name      string                   `json:"name"`
		Status    v1alpha1.StarrocksStatus `json:"status"`
	}
	type clStatus struct {
		Name   string                        `json:"name"`
		Status v1alpha1.StarrocksClassStatus `json:"status"`
	}
	var s State
	snaps := input.Snapshots
	var statuses []srStatus
	var classes []clStatus
	// Starrocks and StarrocksClass objects are checked by their CRD schema
	// (and status by the hooks' own patches): one that does not decode is
	// skipped with a warning instead of failing every other instance.
	s.Instances, s.UnreadableUIDs = decodePtrs[v1alpha1.Starrocks](snaps, SnapStarrocks, &s.Warnings)
	s.Classes, _ = decodePtrs[v1alpha1.StarrocksClass](snaps, SnapClasses, &s.Warnings)
	statuses = decodeEach[srStatus](snaps, SnapStarrocksStatus, func(v *srStatus, err error) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the status of Starrocks %s/%s is not readable and is recomputed: %v", v.Namespace, v.Name, err))
		v.Status = v1alpha1.StarrocksStatus{}
	})
	classes = decodeEach[clStatus](snaps, SnapClassStatus, func(v *clStatus, err error) { v.Status = v1alpha1.StarrocksClassStatus{} })
	s.StatefulSets = decodeEach[StatefulSetSnap](snaps, SnapStatefulSets, func(v *StatefulSetSnap, err error) { v.Unreadable = err.Error() })
	s.Pods = decodeEach[PodSnap](snaps, SnapPods, func(v *PodSnap, err error) { v.markUnreadable(err.Error()) })
	for i := range s.Pods {
		s.Pods[i].checkReasons()
	}
	s.RolloutPods = decodeEach[RolloutPodSnap](snaps, SnapRolloutPods, func(v *RolloutPodSnap, err error) { v.Owner = nil })
	s.Certificates = decodeEach[CertificateSnap](snaps, SnapCertificates, func(v *CertificateSnap, err error) { v.Unreadable = err.Error() })
	s.LastValid = decodeEach[LastValidSnap](snaps, SnapLastValid, func(v *LastValidSnap, err error) { v.Entry = "" })
	s.Desired = decodeEach[LastValidSnap](snaps, SnapDesired, func(v *LastValidSnap, err error) { v.Entry = "" })
	s.PVCs = decodeEach[PVCSnap](snaps, SnapPVCs, func(v *PVCSnap, err error) { v.Unreadable = err.Error() })
	s.StorageClasses = decodeEach[StorageClassSnap](snaps, SnapStorageClasses, func(v *StorageClassSnap, err error) { v.AllowVolumeExpansion = false })
	s.Backups = decodeEach[BackupSnap](snaps, SnapBackups, func(v *BackupSnap, err error) { v.Unreadable = err.Error() })
	s.EventNamespaces = map[string]bool{}
	s.TerminatingNamespaces = map[string]bool{}
	for _, ns := range decodeEach[NamespaceSnap](snaps, SnapNamespaces, func(v *NamespaceSnap, err error) { v.Terminating = false }) {
		if ns.Terminating {
			s.TerminatingNamespaces[ns.Name] = true
		} else {
			s.EventNamespaces[ns.Name] = true
		}
	}
	s.Applied = map[string]*applied.Record{}
	for _, a := range decodeEach[AppliedSnap](snaps, SnapApplied, func(v *AppliedSnap, err error) { v.Record = "" }) {
		uid, ok := strings.CutPrefix(a.Name, applied.Prefix)
		if a.Namespace != shared.ModuleNamespace || !ok || uid == "" || a.Record == "" {
			continue
		}
		if r, err := applied.Parse(a.Record); err == nil {
			s.Applied[uid] = r
		} else {
			s.Warnings = append(s.Warnings, fmt.Sprintf("ConfigMap %s/%s is not readable and is ignored: %v", a.Namespace, a.Name, err))
		}
	}
	for _, q := range decodeEach[EventQuotaSnap](snaps, SnapEventQuotas, func(v *EventQuotaSnap, err error) { v.CountsEvents = true }) {
		if q.CountsEvents {
			delete(s.EventNamespaces, q.Namespace)
		}
	}

	s.InstanceStatus = make(map[string]v1alpha1.StarrocksStatus, len(statuses))
	for _, st := range statuses {
		s.InstanceStatus[desired.Key(st.Namespace, st.Name)] = st.Status
	}
	s.ClassStatus = make(map[string]v1alpha1.StarrocksClassStatus, len(classes))
	for _, c := range classes {
		s.ClassStatus[c.Name] = c.Status
	}
	s.ClusterDomain = input.Values.Get(shared.ClusterDomainPath).String()
	s.MaxInstances = desired.DefaultMaxInstances
	if v := input.Values.Get(shared.MaxInstancesPath); v.Exists() && v.Int() > 0 {
		s.MaxInstances = int(v.Int())
	}
	s.MaxPerNamespace = max(0, int(input.Values.Get(shared.MaxPerNamespacePath).Int()))
	return s, nil
}

// decodeEach decodes every item of a snapshot on its own. encoding/json
// fills what it can before it reports a type error, so a bad item keeps its
// namespace and instance, and unreadable marks it.
func decodeEach[T any](snaps pkg.Snapshots, name string, unreadable func(*T, error)) []T {
	items := snaps.Get(name)
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if err := it.UnmarshalTo(&v); err != nil {
			unreadable(&v, fmt.Errorf("snapshot %s: %w", name, err))
		}
		out = append(out, v)
	}
	return out
}

// decodePtrs decodes objects checked by a CRD schema, skipping one that
// does not decode; it returns the UIDs of the skipped ones, whose memory
// must not be taken for stale.
func decodePtrs[T any](snaps pkg.Snapshots, name string, warnings *[]string) ([]*T, map[string]bool) {
	items := snaps.Get(name)
	out := make([]*T, 0, len(items))
	skipped := map[string]bool{}
	for _, it := range items {
		v := new(T)
		if err := it.UnmarshalTo(v); err != nil {
			var meta struct {
				Metadata struct {
					UID string `json:"uid"`
				} `json:"metadata"`
			}
			_ = it.UnmarshalTo(&meta)
			skipped[meta.Metadata.UID] = true
			*warnings = append(*warnings, fmt.Sprintf("object %s of snapshot %s is not readable and is skipped: %v", meta.Metadata.UID, name, err))
			continue
		}
		out = append(out, v)
	}
	return out, skipped
}

// metricGroup puts a metric into a group. module-sdk v0.12.2's
// operation.WithGroup has a value receiver and sets the group on a copy, so
// the group would be lost and Expire could not remove series of deleted
// instances; the collector passes a *operation.Operation, set it directly.
type metricGroup string

func (g metricGroup) Apply(o pkg.MetricCollectorOptionApplier) {
	if op, ok := o.(*operation.Operation); ok {
		op.Group = string(g)
		return
	}
	o.WithGroup(string(g))
}
