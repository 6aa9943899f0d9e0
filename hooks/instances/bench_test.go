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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
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
// any event, that must write nothing.
//
// With backups > 0 every instance has spec.backup (a daily schedule whose
// slot is not due, keepLast 30) and that many Completed StarrocksBackup
// objects (issue 26), so the run plans, bounds and reports them and still
// writes nothing.
func steadyState(b *testing.B, n, backups int) helpers.StaticSnapshots {
	b.Helper()
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
	var instances []*v1alpha1.Starrocks
	for i := range n {
		comp := v1alpha1.ComponentSpec{
			CPU:                   v1alpha1.CPUSpec{Cores: int32(1 + i%4), CoreFraction: 50},
			Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(fmt.Sprintf("%dGi", 4+i%4))},
			PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse("50Gi")},
		}
		uid := types.UID("u" + typesUID(i))
		if backups > 0 {
			// The repository name derives from the UID, which the API
			// server makes a UUID.
			uid = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		}
		instances = append(instances, &v1alpha1.Starrocks{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sr-%d", i), Namespace: fmt.Sprintf("ns-%d", i%50), UID: uid, Generation: 1},
			Spec: v1alpha1.StarrocksSpec{
				StarrocksClassName: fmt.Sprintf("class-%d", i%5),
				Type:               v1alpha1.TypeCluster,
				Frontend:           comp,
				Backend:            v1alpha1.BackendSpec{ComponentSpec: comp, Replicas: ptrTo(int32(3))},
				Configuration:      &v1alpha1.Configuration{StreamingLoadMaxMb: ptrTo(int64(1024))},
			},
		})
	}

	if backups > 0 {
		for c := range classes {
			classes[c].Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true}
			// The hook caches compiled classes by UID and generation.
			classes[c].UID += "-backups"
		}
		for _, sr := range instances {
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
			b.Fatal(err)
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
	for _, sr := range instances {
		ns, name := sr.Namespace, sr.Name
		names := desired.NamesFor(name)
		for _, c := range []struct {
			component, sts, claim string
			replicas              int32
		}{{shared.ComponentFrontend, names.FrontendStatefulSet, "meta", 3}, {shared.ComponentBackend, names.BackendStatefulSet, "storage", 3}} {
			size := sr.Spec.Frontend.PersistentVolumeClaim.Size.String()
			s := StatefulSetSnap{Namespace: ns, Name: c.sts, UID: "sts-" + c.sts, Instance: name, Component: c.component, StatefulSetState: StatefulSetState{Replicas: c.replicas, ReadyReplicas: c.replicas, TemplateSize: size}}
			st.StatefulSets = append(st.StatefulSets, s)
			add(SnapStatefulSets, s)
			for p := range c.replicas {
				pvc := PVCSnap{Namespace: ns, Name: fmt.Sprintf("%s-%s-%d", c.claim, c.sts, p), Instance: name, Component: c.component,
					StorageClassName: "expandable", Requested: size, Capacity: size, Phase: "Bound"}
				st.PVCs = append(st.PVCs, pvc)
				add(SnapPVCs, pvc)
			}
		}
		for p := range 3 {
			pod := PodSnap{Namespace: ns, Name: fmt.Sprintf("d8ms-sr-%s-%d", name, p), Instance: name, Owner: &OwnerSnap{Name: names.FrontendStatefulSet, UID: "sts-" + names.FrontendStatefulSet},
				AgentTLS: &AgentTLS{Ready: true}, Accounts: &AgentAccounts{Ready: true}}
			st.Pods = append(st.Pods, pod)
			add(SnapPods, pod)
		}
		cert := CertificateSnap{Namespace: ns, Name: names.FrontendStatefulSet, Instance: name, CertificateState: CertificateState{Ready: ready, NotAfter: &now, Revision: 2}}
		st.Certificates = append(st.Certificates, cert)
		add(SnapCertificates, cert)
	}
	for _, sr := range instances {
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

func typesUID(i int) string { return fmt.Sprintf("-%08d", i) }

// BenchmarkFullReconcile measures one run of the hook over a steady cluster
// and reports the time per instance as a ratio to a floor measured in the
// same benchmark: decoding the same snapshots into the same Go types and
// encoding the same values with encoding/json, the least any hook reading
// these snapshots and writing these values must do.
func BenchmarkFullReconcile(b *testing.B) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC))
	for _, c := range []struct{ n, backups int }{{10, 0}, {100, 0}, {1000, 0}, {10, 30}, {100, 30}, {1000, 30}} {
		n := c.n
		name := fmt.Sprintf("instances=%d", n)
		if c.backups > 0 {
			name += fmt.Sprintf("/backups=%d", c.backups)
		}
		b.Run(name, func(b *testing.B) {
			snaps := steadyState(b, n, c.backups)
			input := func() *pkg.HookInput {
				return helpers.NewInputBuilder(b).WithSnapshots(snaps).
					WithValuesJSON(`{"global":{"discovery":{"clusterDomain":"cluster.local"}}}`).
					WithDependencyContainer(benchDC{clock: clock}).Build()
			}
			// Sanity: the steady state needs no writes (neither the patch
			// collector's nor the hook's own), and every instance renders.
			in := input()
			cluster := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
			if err := handle(context.Background(), in, kubewrite.NewForClient(cluster)); err != nil {
				b.Fatal(err)
			}
			if ops := in.PatchCollector.Operations(); len(ops) != 0 {
				b.Fatalf("steady state wrote %d objects (first %+v)", len(ops), ops[0])
			}
			if acts := cluster.Actions(); len(acts) != 0 {
				b.Fatalf("steady state wrote %d objects itself (first: %s %s %s %+v)", len(acts), acts[0].GetVerb(), acts[0].GetResource().Resource, acts[0].GetSubresource(), acts[0])
			}
			// Every instance renders: its entry is the one handed on.
			state, err := ReadState(input())
			if err != nil {
				b.Fatal(err)
			}
			if plan := Reconcile(state, classrules.NewCache(), metav1.NewTime(clock.Now()), nil); len(plan.Values) != n {
				b.Fatalf("%d entries for %d instances", len(plan.Values), n)
			}

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
