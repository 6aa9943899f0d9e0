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
	"testing"
	"time"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/jonboulle/clockwork"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

type benchDC struct {
	pkg.DependencyContainer
	clock clockwork.Clock
}

func (d benchDC) GetClock() clockwork.Clock { return d.clock }

// steadyState builds the snapshots of a cluster in which every instance is
// deployed and its status is current: the common full reconcile, triggered by
// any event, that must write nothing. Every pod of every instance is in the
// rollout snapshot, on its StatefulSet's update revision and ready.
//
// With backups > 0 every instance has spec.backup (a daily schedule whose
// slot is not due, keepLast 30) and that many Completed StarrocksBackup
// objects, so the run plans, bounds and reports them and still
// writes nothing.
//
// With sharedData > 0 that many of the instances (every n/sharedData-th)
// are shared-data (spec.storage.mode ObjectStorage), which their class
// allows: 3 FEs and CNs, a fixed count of 3 for half of them and an
// autoscaler's range of 2 to 8 for the others, whose HPA scaled them to 5.
// Each has what a steady shared-data instance has: the CN StatefulSet and
// a cache PVC per CN, the FE leader's agent reporting the membership, the
// storage volume ready and the newest automated cluster snapshot finished.
func steadyState(tb testing.TB, n, backups, sharedData int) helpers.StaticSnapshots {
	tb.Helper()
	var classes []*v1alpha1.StarrocksClass
	for c := range 5 {
		classes = append(classes, &v1alpha1.StarrocksClass{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("class-%d", c), UID: types.UID("c" + typesUID(c)), Generation: 1},
			Spec: v1alpha1.StarrocksClassSpec{
				Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored}, DefaultTopology: v1alpha1.TopologyIgnored},
				SizingPolicies: []v1alpha1.SizingPolicy{
					{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}, Memory: v1alpha1.MemoryRange{Min: resource.MustParse("2Gi"), Max: resource.MustParse("16Gi"), Step: ptrTo(resource.MustParse("1Gi"))}, CoreFractions: []int32{50, 100}},
					{Cores: v1alpha1.CoreRange{Min: 5, Max: 16}, Memory: v1alpha1.MemoryRange{Min: resource.MustParse("8Gi"), Max: resource.MustParse("64Gi")}, CoreFractions: []int32{100}},
				},
				OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyStreamingLoadMaxMb},
				Validations: []v1alpha1.ValidationRule{
					{Rule: "configuration.streamingLoadMaxMb * 1048576 <= backend.memory.size", Message: "too large"},
					{Rule: "type != 'Cluster' || backend.replicas >= 2", Message: "at least two BEs"},
				},
			},
		})
	}
	if sharedData > 0 {
		for _, c := range classes {
			// The same rules for BEs, and one for CNs.
			c.Spec.Validations = []v1alpha1.ValidationRule{
				{Rule: "storage == 'ObjectStorage' || configuration.streamingLoadMaxMb * 1048576 <= backend.memory.size", Message: "too large"},
				{Rule: "storage == 'ObjectStorage' || type != 'Cluster' || backend.replicas >= 2", Message: "at least two BEs"},
				{Rule: "storage != 'ObjectStorage' || configuration.streamingLoadMaxMb * 1048576 <= compute.memory.size", Message: "too large for a CN"},
			}
			c.Spec.SharedData = &v1alpha1.ClassSharedData{Allowed: true, AllowedEndpoints: []string{"s3.example.com"}, MinReplicas: 1, MaxReplicas: 10,
				AutoscalingAllowed: true, CacheSize: &v1alpha1.QuantityRange{Min: ptrTo(resource.MustParse("10Gi")), Max: ptrTo(resource.MustParse("1Ti"))}}
			// The hook caches compiled classes by UID and generation.
			c.UID += "-shared-data"
		}
	}
	isShared := func(i int) bool { return sharedData > 0 && i%(n/sharedData) == 0 }
	var instances []*v1alpha1.Starrocks
	for i := range n {
		comp := v1alpha1.ComponentSpec{
			CPU:                   v1alpha1.CPUSpec{Cores: int32(1 + i%4), CoreFraction: 50},
			Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(fmt.Sprintf("%dGi", 4+i%4))},
			PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse("50Gi")},
		}
		uid := types.UID("u" + typesUID(i))
		if backups > 0 || sharedData > 0 {
			// The repository and the storage volume names derive from
			// the UID, which the API server makes a UUID.
			uid = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		}
		sr := &v1alpha1.Starrocks{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sr-%d", i), Namespace: fmt.Sprintf("ns-%d", i%50), UID: uid, Generation: 1},
			Spec: v1alpha1.StarrocksSpec{
				StarrocksClassName: fmt.Sprintf("class-%d", i%5),
				Type:               v1alpha1.TypeCluster,
				Frontend:           comp,
				Backend:            v1alpha1.BackendSpec{ComponentSpec: comp, Replicas: ptrTo(int32(3))},
				Configuration:      &v1alpha1.Configuration{StreamingLoadMaxMb: ptrTo(int64(1024))},
			},
		}
		if isShared(i) {
			sr.Spec.Backend = v1alpha1.BackendSpec{}
			sr.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
				Endpoint: "https://s3.example.com", Bucket: "team-data", Prefix: "starrocks",
				CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"}}}
			sr.Spec.Compute = &v1alpha1.ComputeSpec{CPU: comp.CPU, Memory: comp.Memory,
				Cache: v1alpha1.CacheVolumeSpec{Size: resource.MustParse("100Gi"), StorageClassName: "expandable"}}
			if (i/(n/sharedData))%2 == 0 {
				sr.Spec.Compute.Replicas = ptrTo(int32(3))
			} else {
				sr.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 2, MaxReplicas: 8, TargetCPUUtilizationPercentage: ptrTo(int32(70))}
			}
		}
		instances = append(instances, sr)
	}

	if backups > 0 {
		for c := range classes {
			classes[c].Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true}
			// The hook caches compiled classes by UID and generation.
			classes[c].UID += "-backups"
		}
		for _, sr := range instances {
			if sr.Spec.IsSharedData() {
				continue // automated cluster snapshots instead
			}
			sr.Spec.Backup = &v1alpha1.BackupSpec{
				Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com", Bucket: "team-backups", Prefix: "starrocks",
					CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"}},
				Schedule:  "0 3 * * *",
				Retention: &v1alpha1.BackupRetention{KeepLast: ptrTo(int32(int32(backups)))},
			}
		}
	}
	snaps := helpers.NewSnapshots()
	add := func(key string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		snaps.Add(key, helpers.SnapshotJSON(string(data)))
	}
	for _, c := range classes {
		add(SnapClasses, map[string]any{"metadata": c.ObjectMeta, "spec": c.Spec})
	}
	for _, sr := range instances {
		add(SnapStarrocks, map[string]any{"metadata": sr.ObjectMeta, "spec": sr.Spec})
	}

	// The previous run: its entries are persisted and its statuses current.
	now := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	var st State
	st.Instances, st.Classes = instances, classes
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now}
	const revision = "rev-1"
	for _, sr := range instances {
		ns, name := sr.Namespace, sr.Name
		names := desired.NamesFor(name)
		size := sr.Spec.Frontend.PersistentVolumeClaim.Size.String()
		type workload struct {
			component, sts, claim, size string
			replicas                    int32
		}
		workloads := []workload{{shared.ComponentFrontend, names.FrontendStatefulSet, "meta", size, 3}, {shared.ComponentBackend, names.BackendStatefulSet, "storage", size, 3}}
		if c := sr.Spec.Compute; c != nil {
			// Autoscaled: the HPA set the StatefulSet's replicas within
			// the range.
			cns := int32(5)
			if c.Replicas != nil {
				cns = *c.Replicas
			}
			workloads[1] = workload{shared.ComponentCompute, names.ComputeStatefulSet, "cache", c.Cache.Size.String(), cns}
		}
		for _, c := range workloads {
			s := StatefulSetSnap{Namespace: ns, Name: c.sts, UID: "sts-" + c.sts, Instance: name, Component: c.component,
				StatefulSetState: StatefulSetState{Replicas: c.replicas, ReadyReplicas: c.replicas, TemplateSize: c.size, UpdateRevision: revision}}
			st.StatefulSets = append(st.StatefulSets, s)
			add(SnapStatefulSets, s)
			for p := range c.replicas {
				pvc := PVCSnap{Namespace: ns, Name: fmt.Sprintf("%s-%s-%d", c.claim, c.sts, p), Instance: name, Component: c.component,
					StorageClassName: "expandable", Requested: c.size, Capacity: c.size, Phase: "Bound"}
				st.PVCs = append(st.PVCs, pvc)
				add(SnapPVCs, pvc)
				pod := RolloutPodSnap{Namespace: ns, Name: fmt.Sprintf("%s-%d", c.sts, p), UID: fmt.Sprintf("pod-%s-%d", c.sts, p), Instance: name, Component: c.component,
					Revision: revision, Owner: &OwnerSnap{Name: c.sts, UID: "sts-" + c.sts}, Ready: true}
				if c.component == shared.ComponentFrontend && p == 0 {
					pod.Agent = &RolloutAgentRep{Leader: leaderHost(sr)}
				}
				st.RolloutPods = append(st.RolloutPods, pod)
				add(SnapRolloutPods, pod)
			}
		}
		for p := range 3 {
			pod := PodSnap{Namespace: ns, Name: fmt.Sprintf("d8ms-sr-%s-%d", name, p), Instance: name, Owner: &OwnerSnap{Name: names.FrontendStatefulSet, UID: "sts-" + names.FrontendStatefulSet},
				AgentTLS: &AgentTLS{Ready: true}, Accounts: &AgentAccounts{Ready: true}}
			if p == 0 {
				pod.Membership, pod.SharedData = steadyLeaderReport(sr)
			}
			st.Pods = append(st.Pods, pod)
			add(SnapPods, pod)
		}
		cert := CertificateSnap{Namespace: ns, Name: names.FrontendStatefulSet, Instance: name, CertificateState: CertificateState{Ready: ready, NotAfter: &now, Revision: 2}}
		st.Certificates = append(st.Certificates, cert)
		add(SnapCertificates, cert)
		rec := appliedRecord(sr, now)
		data, _ := json.Marshal(rec)
		add(SnapApplied, AppliedSnap{Namespace: shared.ModuleNamespace, Name: applied.ConfigMapName(rec.UID), Record: string(data)})
		if st.Applied == nil {
			st.Applied = map[string]*applied.Record{}
		}
		st.Applied[rec.UID] = rec
	}
	for _, sr := range instances {
		if sr.Spec.Backup == nil {
			continue
		}
		for k := range backups {
			day := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC).AddDate(0, 0, -k)
			status := map[string]any{"phase": "Completed", "startTime": day.Format(time.RFC3339), "completionTime": day.Add(4 * time.Minute).Format(time.RFC3339),
				"databases": []any{map[string]any{"name": "sales", "label": "l", "backupTimestamp": "2026-12-01-03-00-05", "state": "FINISHED"}}}
			raw, _ := json.Marshal(status)
			bs := BackupSnap{Namespace: sr.Namespace, Name: fmt.Sprintf("%s-%d", sr.Name, k), UID: fmt.Sprintf("00000000-0000-4000-9000-%06d%06d", k, len(st.Backups)),
				Created: day.Format(time.RFC3339), Finalizer: true, Finalizers: []string{v1alpha1.BackupFinalizer}, Scheduled: true, Instance: sr.Name,
				Phase: "Completed", CompletionTime: day.Add(4 * time.Minute).Format(time.RFC3339), StatusRaw: string(raw)}
			st.Backups = append(st.Backups, bs)
			add(SnapBackups, bs)
		}
	}
	sc := StorageClassSnap{Name: "expandable", AllowVolumeExpansion: true}
	st.StorageClasses = append(st.StorageClasses, sc)
	add(SnapStorageClasses, sc)
	plan := Reconcile(st, classrules.NewCache(), now, nil)
	for _, e := range plan.Values {
		data, _ := json.Marshal(e)
		add(SnapLastValid, LastValidSnap{Namespace: shared.ModuleNamespace, Name: shared.LastValidConfigMapName(e.UID), Entry: string(data)})
		// What the instanceobjects hook was handed last run: the same entry.
		add(SnapDesired, LastValidSnap{Namespace: shared.ModuleNamespace, Name: shared.DesiredConfigMapName(e.UID), Entry: string(data)})
	}
	for _, p := range plan.StatusPatches {
		add(SnapStarrocksStatus, map[string]any{"namespace": p.Namespace, "name": p.Name, "status": p.Status})
	}
	for _, p := range plan.ClassStatusPatches {
		add(SnapClassStatus, map[string]any{"name": p.Name, "status": p.Status})
	}
	return snaps
}

// leaderHost is the host of a Cluster's first FE, as StarRocks names the
// leader (FQDN).
func leaderHost(sr *v1alpha1.Starrocks) string {
	names := desired.NamesFor(sr.Name)
	return fmt.Sprintf("%s-0.%s.%s.svc.cluster.local", names.FrontendStatefulSet, names.FrontendHeadlessService, sr.Namespace)
}

// steadyLeaderReport is what the agent of a steady instance's FE leader reports,
// as the pods' filter keeps it: the membership (3 FEs and the BEs alive,
// every table at the instance's default replication) and, for a
// shared-data instance, the storage volume ready and the newest automated
// cluster snapshot finished (times as StarRocks prints them: the snapshot's
// at +08:00, the job's in the FE's zone, UTC).
func steadyLeaderReport(sr *v1alpha1.Starrocks) (*MembershipSnap, *agentconfig.SharedDataStatus) {
	names := desired.NamesFor(sr.Name)
	host := func(sts, headless string, p int) string {
		return fmt.Sprintf("%s-%d.%s.%s.svc.cluster.local", sts, p, headless, sr.Namespace)
	}
	m := &MembershipSnap{MembershipStatus: agentconfig.MembershipStatus{Leader: leaderHost(sr)}}
	for p := range 3 {
		m.Nodes = append(m.Nodes, agentconfig.NodeStatus{Host: host(names.FrontendStatefulSet, names.FrontendHeadlessService, p), Alive: true})
	}
	if !sr.Spec.IsSharedData() {
		for p := range int(*sr.Spec.Backend.Replicas) {
			be := host(names.BackendStatefulSet, names.BackendHeadlessService, p)
			m.Backends = append(m.Backends, be)
			m.Nodes = append(m.Nodes, agentconfig.NodeStatus{Host: be, Alive: true})
		}
		m.Replication = &agentconfig.ReplicationReport{MaxReplicationNum: 3, MinReplicationNum: 3}
		return m, nil
	}
	// StarRocks keeps one replica of a shared-data table.
	m.Replication = &agentconfig.ReplicationReport{MaxReplicationNum: 1, MinReplicationNum: 1}
	return m, &agentconfig.SharedDataStatus{
		StorageVolume: agentconfig.StorageVolumeStatus{Name: agentconfig.StorageVolumeName(string(sr.UID)), Ready: true, CreatedAt: "2026-11-20T08:00:00Z"},
		ClusterSnapshots: &agentconfig.ClusterSnapshotsStatus{Enabled: true, NewestSnapshotTime: "2026-12-02 17:50:00",
			LastJob: &agentconfig.ClusterSnapshotJob{SnapshotName: "automated_cluster_snapshot_1764669000000", CreatedTime: "2026-12-02 09:50:00",
				FinishedTime: "2026-12-02 09:50:41", State: "FINISHED", Succeeded: true}},
	}
}

// appliedRecord is the instanceobjects hook's record of a steady instance:
// its render applied, every object it writes with the UID and version the
// API server gave it.
func appliedRecord(sr *v1alpha1.Starrocks, now metav1.Time) *applied.Record {
	names := desired.NamesFor(sr.Name)
	skip := map[string]bool{names.BackendStatefulSet: true, names.BackendHeadlessService: true, names.ComputeStatefulSet: true, names.ComputeHeadlessService: true}
	if c := sr.Spec.Compute; c != nil {
		skip = map[string]bool{names.BackendStatefulSet: true, names.BackendHeadlessService: true}
		if c.Autoscaling == nil {
			// No HorizontalPodAutoscaler for a fixed count.
			skip["HorizontalPodAutoscaler/"+names.ComputeStatefulSet] = true
		}
	}
	rec := &applied.Record{Namespace: sr.Namespace, Name: sr.Name, UID: string(sr.UID), Checksum: "sha256:" + string(sr.UID), Written: &now}
	for _, o := range desired.ObjectNames(sr.Name) {
		if o.Form != desired.Exact || skip[o.Name] || skip[o.Kind+"/"+o.Name] || o.Kind == "Pod" || o.Kind == "PersistentVolumeClaim" {
			continue
		}
		rec.Objects = append(rec.Objects, applied.Object{APIVersion: "v1", Kind: o.Kind, Name: o.Name, UID: fmt.Sprintf("obj-%s-%s-%s", sr.UID, o.Kind, o.Name),
			Version: "g1", Metadata: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})
	}
	return rec
}

// steadyIsHealthy fails unless every instance of the steady state is
// Running with every condition True (a shared-data instance's StorageReady
// and BackupsHealthy from its cluster snapshots among them): what steady
// means, not a broken state that merely stays the same.
func steadyIsHealthy(tb testing.TB, s State) {
	tb.Helper()
	for _, sr := range s.Instances {
		st := s.InstanceStatus[desired.Key(sr.Namespace, sr.Name)]
		if st.Phase != v1alpha1.PhaseRunning {
			tb.Fatalf("%s/%s is %s, not Running: %+v", sr.Namespace, sr.Name, st.Phase, st.Conditions)
		}
		for _, c := range st.Conditions {
			if c.Status != metav1.ConditionTrue {
				tb.Fatalf("%s/%s: %s is %s (%s: %s)", sr.Namespace, sr.Name, c.Type, c.Status, c.Reason, c.Message)
			}
		}
		if sr.Spec.IsSharedData() {
			for _, typ := range []string{ConditionStorageReady, v1alpha1.ConditionBackupsHealthy} {
				if meta.FindStatusCondition(st.Conditions, typ) == nil {
					tb.Fatalf("%s/%s has no %s", sr.Namespace, sr.Name, typ)
				}
			}
		}
	}
}

func typesUID(i int) string { return fmt.Sprintf("-%08d", i) }

// steadyInput makes the input of one run over snaps at the clock's time.
func steadyInput(tb testing.TB, snaps helpers.StaticSnapshots, clock clockwork.Clock) func() *pkg.HookInput {
	return func() *pkg.HookInput {
		return helpers.NewInputBuilder(tb).WithSnapshots(snaps).
			WithValuesJSON(`{"global":{"discovery":{"clusterDomain":"cluster.local"}}}`).
			WithDependencyContainer(benchDC{clock: clock}).Build()
	}
}

// checkSteady runs the hook once over a steady state of n instances and
// fails unless it wrote nothing (neither the patch collector's operations
// nor the hook's own writes), every instance renders and every instance is
// healthy. It returns the fake cluster of the hook's own writes.
func checkSteady(tb testing.TB, input func() *pkg.HookInput, n int, clock clockwork.Clock) *dynamicfake.FakeDynamicClient {
	tb.Helper()
	in := input()
	cluster := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	if err := handle(context.Background(), in, kubewrite.NewForClient(cluster)); err != nil {
		tb.Fatal(err)
	}
	if ops := in.PatchCollector.Operations(); len(ops) != 0 {
		tb.Fatalf("steady state wrote %d objects (first %+v)", len(ops), ops[0])
	}
	if acts := cluster.Actions(); len(acts) != 0 {
		what := fmt.Sprintf("%s %s %s in %s", acts[0].GetVerb(), acts[0].GetResource().Resource, acts[0].GetSubresource(), acts[0].GetNamespace())
		if p, ok := acts[0].(k8stesting.PatchAction); ok {
			what += fmt.Sprintf(" %s: %.4000s", p.GetName(), p.GetPatch())
		}
		tb.Fatalf("steady state wrote %d objects itself (first: %s)", len(acts), what)
	}
	// Every instance renders: its entry is the one handed on.
	state, err := ReadState(input())
	if err != nil {
		tb.Fatal(err)
	}
	if plan := Reconcile(state, classrules.NewCache(), metav1.NewTime(clock.Now()), nil); len(plan.Values) != n {
		tb.Fatalf("%d entries for %d instances", len(plan.Values), n)
	}
	steadyIsHealthy(tb, state)
	return cluster
}

// TestSteadyClusterWritesNothing holds in every test run what the
// benchmark's sanity check holds: a steady cluster, shared-nothing, with
// backups, and with both modes mixed (CNs fixed and autoscaled), is
// healthy and one run over it writes nothing.
func TestSteadyClusterWritesNothing(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC))
	for _, c := range []struct{ n, backups, sharedData int }{{10, 0, 0}, {10, 3, 0}, {10, 0, 5}, {12, 2, 4}} {
		t.Run(fmt.Sprintf("instances=%d/backups=%d/shared-data=%d", c.n, c.backups, c.sharedData), func(t *testing.T) {
			checkSteady(t, steadyInput(t, steadyState(t, c.n, c.backups, c.sharedData), clock), c.n, clock)
		})
	}
}

// BenchmarkFullReconcile measures one run of the hook over a steady cluster
// and reports the time per instance as a ratio to a floor measured in the
// same benchmark: decoding the same snapshots into the same Go types and
// encoding the same values with encoding/json, the least any hook reading
// these snapshots and writing these values must do.
func BenchmarkFullReconcile(b *testing.B) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC))
	for _, c := range []struct{ n, backups, sharedData int }{
		{10, 0, 0}, {100, 0, 0}, {1000, 0, 0},
		{10, 30, 0}, {100, 30, 0}, {1000, 30, 0},
		{10, 0, 5}, {100, 0, 50}, {1000, 0, 500},
	} {
		n := c.n
		name := fmt.Sprintf("instances=%d", n)
		if c.backups > 0 {
			name += fmt.Sprintf("/backups=%d", c.backups)
		}
		if c.sharedData > 0 {
			name += fmt.Sprintf("/shared-data=%d", c.sharedData)
		}
		b.Run(name, func(b *testing.B) {
			input := steadyInput(b, steadyState(b, n, c.backups, c.sharedData), clock)
			cluster := checkSteady(b, input, n, clock)

			b.ResetTimer()
			var hook, floor time.Duration
			for range b.N {
				in := input()
				start := time.Now()
				if err := handle(context.Background(), in, kubewrite.NewForClient(cluster)); err != nil {
					b.Fatal(err)
				}
				hook += time.Since(start)

				in = input()
				start = time.Now()
				state, err := ReadState(in)
				if err != nil {
					b.Fatal(err)
				}
				entries := make([]desired.Instance, 0, len(state.Instances))
				for _, lv := range state.LastValid {
					var e desired.Instance
					if err := json.Unmarshal([]byte(lv.Entry), &e); err != nil {
						b.Fatal(err)
					}
					entries = append(entries, e)
				}
				if _, err := json.Marshal(entries); err != nil {
					b.Fatal(err)
				}
				floor += time.Since(start)
			}
			perHook := float64(hook.Nanoseconds()) / float64(b.N) / float64(n)
			perFloor := float64(floor.Nanoseconds()) / float64(b.N) / float64(n)
			b.ReportMetric(perHook, "ns/instance")
			b.ReportMetric(perFloor, "floor-ns/instance")
			b.ReportMetric(perHook/perFloor, "ratio")
		})
	}
}
