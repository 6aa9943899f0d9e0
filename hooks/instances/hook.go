// Package instances is the module's controller hook: on every change of a
// Starrocks, a StarrocksClass or an object of an instance it validates every
// instance against its class, computes the desired state into
// managedStarrocks.internal.instances, remembers the last valid state of each
// instance in the cluster, and reports status and metrics.
package instances

import (
	"context"
	"errors"
	"fmt"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/pkg/metric/operation"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
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
	SnapPVCs            = "pvcs"
	SnapStorageClasses  = "storage_classes"
)

// Metric names (alerts in monitoring/ use exactly these).
const (
	MetricGroup              = "d8_managed_starrocks_instances"
	MetricInstances          = "d8_managed_starrocks_instances"
	MetricConfigurationValid = "d8_managed_starrocks_instance_configuration_valid"
)

var _ = registry.RegisterFunc(Config, Handle)

var (
	no           = false
	instanceSel  = &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue}}
	frontendSel  = &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelComponent: shared.ComponentFrontend}}
	lastValidSel = &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateLastValid}}
)

// Config binds everything the desired state and the status depend on. The
// jq filters keep only what is read: the Starrocks and class bindings never
// include .status, so the hook's own status patches do not trigger it again;
// the *_status bindings hold the current status (to patch only on change)
// with events switched off for the same reason.
var Config = &pkg.HookConfig{
	Queue: "main",
	Kubernetes: []pkg.KubernetesConfig{
		{
			Name:       SnapStarrocks,
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.StarrocksKind,
			JqFilter:   `{metadata: {name: .metadata.name, namespace: .metadata.namespace, uid: .metadata.uid, generation: .metadata.generation}, spec: .spec}`,
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
			Name:          SnapStatefulSets,
			APIVersion:    "apps/v1",
			Kind:          "StatefulSet",
			LabelSelector: instanceSel,
			JqFilter: `{namespace: .metadata.namespace, instance: .metadata.labels["` + shared.LabelInstance + `"], component: .metadata.labels["` + shared.LabelComponent + `"],` +
				` replicas: (.spec.replicas // 1), readyReplicas: (.status.readyReplicas // 0),` +
				// The size the StatefulSet was created with: volumeClaimTemplates cannot change.
				` templateSize: ([(.spec.volumeClaimTemplates // [])[] | .spec.resources.requests.storage // empty][0] // "")}`,
		},
		{
			// Only the TLS verdict and the membership of the agent status: the
			// agent rewrites its timestamp on every pass, which must not rerun
			// the hook. The membership is normalised here (hosts as strings,
			// tablets as numbers) or marked unreadable, so a malformed
			// annotation cannot fail the decoding of the whole snapshot.
			Name:          SnapPods,
			APIVersion:    "v1",
			Kind:          "Pod",
			LabelSelector: frontendSel,
			JqFilter: `((.metadata.annotations // {})["` + agentconfig.StatusAnnotation + `"]) as $raw |` +
				` {namespace: .metadata.namespace, name: .metadata.name, instance: .metadata.labels["` + shared.LabelInstance + `"],` +
				` agentTLS: ($raw | if . == null then null else (try (fromjson | .tls | {ready, reason, message}) catch {ready: false, reason: "AgentStatusUnreadable", message: "the agent-status annotation is not valid JSON"}) end),` +
				` membership: ($raw | if . == null then null else (try (fromjson | .membership | if . == null then null else` +
				` {leader: (.leader // "" | tostring), backends: [(.backends // [])[] | tostring], draining: [(.draining // [])[] | {host: (.host | tostring), tabletNum: (.tabletNum // 0 | tonumber)}]} end)` +
				` catch {unreadable: true}) end)}`,
		},
		{
			Name:          SnapCertificates,
			APIVersion:    "cert-manager.io/v1",
			Kind:          "Certificate",
			LabelSelector: instanceSel,
			JqFilter: `{namespace: .metadata.namespace, instance: .metadata.labels["` + shared.LabelInstance + `"],` +
				` ready: ([(.status.conditions // [])[] | select(.type == "Ready")][0] // null), notAfter: .status.notAfter, revision: (.status.revision // 0)}`,
		},
		{
			Name:          SnapLastValid,
			APIVersion:    "v1",
			Kind:          "ConfigMap",
			LabelSelector: lastValidSel,
			JqFilter:      `{namespace: .metadata.namespace, name: .metadata.name, entry: (.data["` + shared.LastValidKey + `"] // "")}`,
		},
		{
			// The PVCs the StatefulSets create from their volumeClaimTemplates
			// carry the templates' instance labels: the ones to expand.
			Name:          SnapPVCs,
			APIVersion:    "v1",
			Kind:          "PersistentVolumeClaim",
			LabelSelector: instanceSel,
			JqFilter: `{namespace: .metadata.namespace, name: .metadata.name, instance: .metadata.labels["` + shared.LabelInstance + `"], component: .metadata.labels["` + shared.LabelComponent + `"],` +
				` storageClassName: (.spec.storageClassName // ""), requested: (.spec.resources.requests.storage // ""), capacity: (.status.capacity.storage // ""), phase: (.status.phase // "")}`,
		},
		{
			// Whether a PVC may be expanded at all: the apiserver refuses it
			// unless its StorageClass allows volume expansion.
			Name:       SnapStorageClasses,
			APIVersion: "storage.k8s.io/v1",
			Kind:       "StorageClass",
			JqFilter:   `{name: .metadata.name, allowVolumeExpansion: (.allowVolumeExpansion // false)}`,
		},
	},
}

// cache only memoizes compiled CEL per class generation (a pure function of
// the class): no decision depends on it surviving a restart.
var cache = classrules.NewCache()

// Handle reads the snapshots, reconciles and writes values, objects, status
// patches and metrics.
func Handle(_ context.Context, input *pkg.HookInput) error {
	state, err := ReadState(input)
	if err != nil {
		return err
	}
	now := metav1.NewTime(input.DC.GetClock().Now()).Rfc3339Copy()
	plan := Reconcile(state, cache, now)
	for _, w := range plan.Warnings {
		input.Logger.Warn(w)
	}

	input.Values.Set(shared.InstancesValuesPath, plan.Values)
	for _, cm := range plan.LastValid {
		input.PatchCollector.CreateOrUpdate(cm)
	}
	for _, v := range plan.VolumeExpansions {
		// Only the size: a merge patch leaves the rest of the PVC alone.
		// planVolumes sends it only when the apiserver accepts it (a bound
		// PVC of a class allowing expansion): a refused object patch fails
		// the whole run, and with it the values of every instance.
		input.PatchCollector.PatchWithMerge(map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": v.Size}}}},
			"v1", "PersistentVolumeClaim", v.Namespace, v.Name, objectpatch.WithIgnoreMissingObject(true))
	}
	for _, p := range plan.StatusPatches {
		input.PatchCollector.PatchWithJSON(statusPatch(p.Status), v1alpha1.SchemeGroupVersion.String(), v1alpha1.StarrocksKind, p.Namespace, p.Name,
			objectpatch.WithSubresource("status"), objectpatch.WithIgnoreMissingObject(true))
	}
	for _, p := range plan.ClassStatusPatches {
		input.PatchCollector.PatchWithJSON(statusPatch(p.Status), v1alpha1.SchemeGroupVersion.String(), v1alpha1.StarrocksClassKind, "", p.Name,
			objectpatch.WithSubresource("status"), objectpatch.WithIgnoreMissingObject(true))
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
}

// ReadState decodes the snapshots.
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
	var (
		s        State
		statuses []srStatus
		classes  []clStatus
	)
	snaps := input.Snapshots
	err := errors.Join(
		decodePtrs(snaps, SnapStarrocks, &s.Instances),
		decodePtrs(snaps, SnapClasses, &s.Classes),
		decode(snaps, SnapStarrocksStatus, &statuses),
		decode(snaps, SnapClassStatus, &classes),
		decode(snaps, SnapStatefulSets, &s.StatefulSets),
		decode(snaps, SnapPods, &s.Pods),
		decode(snaps, SnapCertificates, &s.Certificates),
		decode(snaps, SnapLastValid, &s.LastValid),
		decode(snaps, SnapPVCs, &s.PVCs),
		decode(snaps, SnapStorageClasses, &s.StorageClasses),
	)
	if err != nil {
		return s, err
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
	return s, nil
}

func decode[T any](snaps pkg.Snapshots, name string, out *[]T) error {
	v, err := objectpatch.UnmarshalToStruct[T](snaps, name)
	if err != nil {
		return fmt.Errorf("decode snapshot %s: %w", name, err)
	}
	*out = v
	return nil
}

func decodePtrs[T any](snaps pkg.Snapshots, name string, out *[]*T) error {
	items := snaps.Get(name)
	*out = make([]*T, 0, len(items))
	for _, it := range items {
		v := new(T)
		if err := it.UnmarshalTo(v); err != nil {
			return fmt.Errorf("decode snapshot %s: %w", name, err)
		}
		*out = append(*out, v)
	}
	return nil
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
