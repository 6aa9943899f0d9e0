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

package chartrender_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// secretLimit is the most data a Kubernetes Secret may hold
// (corev1.MaxSecretSize, checked by the apiserver on create and update).
const secretLimit = corev1.MaxSecretSize

// releaseBudget is the goal of the module: 1000 realistic instances fit in
// half of secretLimit, leaving the other half for the real global values tree
// (every module's image digests), growth of the templates and margin.
const releaseBudget = secretLimit / 2

// sizeClasses are three StarrocksClasses as an admin might define them:
// general purpose on labelled nodes, dedicated tainted nodes with node
// affinity, and a development class with no placement at all.
func sizeClasses() []*v1alpha1.StarrocksClass {
	step := resource.MustParse("1Gi")
	base := func(name string) *v1alpha1.StarrocksClass {
		return &v1alpha1.StarrocksClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "StarrocksClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
			Spec: v1alpha1.StarrocksClassSpec{
				Topology: v1alpha1.ClassTopology{
					AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyZonal, v1alpha1.TopologyTransZonal},
					DefaultTopology:   v1alpha1.TopologyIgnored,
					AllowedZones:      testZones,
				},
				SizingPolicies: []v1alpha1.SizingPolicy{{
					Cores:         v1alpha1.CoreRange{Min: 1, Max: 16},
					Memory:        v1alpha1.MemoryRange{Min: resource.MustParse("1Gi"), Max: resource.MustParse("128Gi"), Step: &step},
					CoreFractions: []int32{25, 50, 100},
				}},
				OverridableConfiguration: v1alpha1.AllConfigurationKeys,
				Configuration: v1alpha1.Configuration{
					StreamingLoadMaxMb:               ptr(int64(10240)),
					LoadProcessMaxMemoryLimitPercent: ptr(int32(30)),
					CatalogTrashExpireSecond:         ptr(int64(86400)),
				},
			},
		}
	}
	general := base("general")
	general.Spec.NodeSelector = map[string]string{"node-role.deckhouse.io/starrocks": ""}
	dedicated := base("dedicated-nvme")
	dedicated.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated.deckhouse.io", Operator: corev1.TolerationOpEqual, Value: "starrocks", Effect: corev1.TaintEffectNoExecute}}
	dedicated.Spec.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "node.deckhouse.io/group", Operator: corev1.NodeSelectorOpIn, Values: []string{"starrocks-nvme-a", "starrocks-nvme-b"}},
		}}},
	}}
	dev := base("dev")
	dev.Spec.Configuration.CatalogTrashExpireSecond = ptr(int64(3600))
	return []*v1alpha1.StarrocksClass{general, dedicated, dev}
}

// realisticInstances are n instances that differ the way a fleet does:
// names and namespaces of different lengths (about three instances per
// namespace), real-looking UIDs, Standalone and Cluster of different sizes,
// storage classes, topologies, configuration overrides, TLS settings,
// allowed namespaces, and existing objects at different stages (certificate
// revisions, grown volumes, accounts not ready yet). Deterministic in n.
func realisticInstances(n int) ([]*v1alpha1.Starrocks, map[string]desired.Existing) {
	classes := []string{"general", "dedicated-nvme", "dev"}
	teams := []string{"payments", "analytics", "growth-marketing", "logistics", "ml", "fraud-detection", "search", "billing-eu"}
	apps := []string{"olap", "events", "clickstream-warehouse", "reports", "dwh", "orders-realtime", "ab-tests", "lakehouse-cache"}
	cores := []int32{1, 2, 4, 8, 16}
	memGi := []int{4, 8, 12, 16, 24, 32, 48, 64}
	diskGi := []int{20, 50, 100, 250, 500, 1024, 2048}
	storageClasses := []string{"", "ceph-rbd-ssd", "local-nvme", ""}
	objs := make([]*v1alpha1.Starrocks, n)
	existing := map[string]desired.Existing{}
	for i := range objs {
		h := sha256.Sum256([]byte(fmt.Sprintf("instance-%d", i)))
		pick := func(k, m int) int { return int(h[k]) % m }
		nsHash := sha256.Sum256([]byte(fmt.Sprintf("namespace-%d", i/3)))
		ns := fmt.Sprintf("%s-%s-%d", teams[int(nsHash[0])%len(teams)], []string{"prod", "stage", "dev"}[int(nsHash[1])%3], i/3)
		name := fmt.Sprintf("%s-%d", apps[pick(2, len(apps))], i)
		typ := v1alpha1.TypeStandalone
		if pick(3, 2) == 1 {
			typ = v1alpha1.TypeCluster
		}
		fe := v1alpha1.ComponentSpec{
			CPU:                   v1alpha1.CPUSpec{Cores: cores[pick(4, 3)], CoreFraction: []int32{25, 50, 100}[pick(5, 3)]},
			Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(fmt.Sprintf("%dGi", memGi[pick(6, 4)]))},
			PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse(fmt.Sprintf("%dGi", diskGi[pick(7, 3)])), StorageClassName: storageClasses[pick(8, len(storageClasses))]},
		}
		be := v1alpha1.ComponentSpec{
			CPU:                   v1alpha1.CPUSpec{Cores: cores[pick(9, len(cores))], CoreFraction: []int32{50, 100}[pick(10, 2)]},
			Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(fmt.Sprintf("%dGi", memGi[pick(11, len(memGi))]))},
			PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse(fmt.Sprintf("%dGi", diskGi[pick(12, len(diskGi))])), StorageClassName: fe.PersistentVolumeClaim.StorageClassName},
		}
		uid := fmt.Sprintf("%x-%x-%x-%x-%x", h[16:20], h[20:22], h[22:24], h[24:26], h[26:32])
		sr := &v1alpha1.Starrocks{
			TypeMeta:   metav1.TypeMeta{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Generation: int64(1 + pick(13, 20))},
			Spec: v1alpha1.StarrocksSpec{
				StarrocksClassName: classes[pick(14, len(classes))],
				Type:               typ,
				Frontend:           fe,
				Backend:            v1alpha1.BackendSpec{ComponentSpec: be},
			},
		}
		if typ == v1alpha1.TypeCluster {
			sr.Spec.Backend.Replicas = ptr(int32(3 + pick(15, 6)))
			sr.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: []v1alpha1.Topology{"", v1alpha1.TopologyZonal, v1alpha1.TopologyTransZonal}[pick(16, 3)]}
		}
		if pick(17, 2) == 0 {
			sr.Spec.Configuration = &v1alpha1.Configuration{
				StreamingLoadMaxMb:       ptr(int64(1024 * (1 + pick(18, 20)))),
				CatalogTrashExpireSecond: ptr(int64(3600 * (1 + pick(19, 72)))),
			}
			if pick(20, 2) == 0 {
				sr.Spec.Configuration.LoadProcessMaxMemoryLimitPercent = ptr(int32(20 + pick(21, 40)))
			}
		}
		if pick(22, 3) == 0 {
			sr.Spec.TLS = &v1alpha1.TLSSpec{RequireSecureTransport: true}
		}
		if pick(23, 4) == 0 {
			sr.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{
				{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns + "-apps"}},
				{MatchLabels: map[string]string{"team.example.com/name": teams[pick(24, len(teams))], "env": "prod"}},
			}[:1+pick(25, 2)]}
		}
		ex := desired.Existing{
			CertificateRevision: int64(pick(26, 6)),
			AccountsReady:       pick(27, 10) != 0,
		}
		if pick(28, 4) == 0 {
			// The volumes grew after the StatefulSets were created.
			ex.FrontendTemplateSize = fmt.Sprintf("%dGi", diskGi[0])
			ex.BackendTemplateSize = fmt.Sprintf("%dGi", diskGi[0])
		}
		existing[desired.Key(ns, name)] = ex
		objs[i] = sr
	}
	return objs, existing
}

// realisticValues are the module values for n realistic instances, computed
// by the hooks' code and checked against openapi/.
func realisticValues(t testing.TB, n int) map[string]any {
	t.Helper()
	objs, existing := realisticInstances(n)
	out := desired.Compute(desired.Input{
		Instances:     objs,
		Classes:       sizeClasses(),
		ClusterDomain: "cluster.local",
		Existing:      existing,
	})
	for _, r := range out.Results {
		if !r.Valid() {
			t.Fatalf("test instance %s is invalid for its class: %v", r.Key, r.Violations)
		}
	}
	vals := checkedValues(t, out.Instances, nil)
	return vals
}

// releaseSize is what the module's Helm release takes when stored, built
// the way Helm builds and stores it (helm.sh/helm/v3 v3.22.0):
//   - the manifest as pkg/action/action.go renderResources joins it: the
//     rendered files split and sorted by releaseutil.SortManifests, each
//     document written as "---\n# Source: <file>\n<content>\n";
//   - the release as pkg/action/install.go createRelease fills it: the whole
//     loaded chart and the values exactly as passed (addon-operator passes
//     the module's tree and global);
//   - encoded as pkg/storage/driver/util.go encodeRelease does (unexported):
//     json.Marshal, gzip at gzip.BestCompression, base64.StdEncoding. The
//     Secrets driver stores that string under the Secret's "release" key,
//     the data the Secret size limit applies to.
//
// It returns the length of that string and of the manifest alone.
func releaseSize(t testing.TB, moduleValues map[string]any) (stored, manifest int) {
	t.Helper()
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	globals := chartrender.DefaultGlobals()
	files, err := r.RenderFiles(moduleValues, globals)
	if err != nil {
		t.Fatal(err)
	}
	_, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatalf("split the rendered manifests: %v", err)
	}
	var doc strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&doc, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	now := helmtime.Now()
	rel := &release.Release{
		Name:      "managed-starrocks",
		Namespace: chartrender.Namespace,
		Chart:     r.Chart(),
		Config:    map[string]any{chartrender.ModuleValuesKey: chartrender.ReleaseValues(moduleValues), "global": globals},
		Info:      &release.Info{FirstDeployed: now, LastDeployed: now, Status: release.StatusDeployed, Description: "Install complete"},
		Manifest:  doc.String(),
		Version:   1,
	}
	data, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodedLen(buf.Len()), len(rel.Manifest)
}

// BenchmarkHelmRelease builds the stored Helm release for 1, 100 and 1000
// realistic instances and reports the stored size (stored-bytes), the
// manifest bytes per instance and the stored size as a multiple of the goal
// releaseBudget (x-goal, 1 or less meets it). The instances' desired state
// travels in ConfigMaps, not in the values, so the stored size does not
// depend on their number (BenchmarkHelmReleaseOfMaximalInstances shows it
// at the largest instances, and TestTenantInputNeverReachesTheRelease holds
// it). The time per op is secondary.
func BenchmarkHelmRelease(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		vals := realisticValues(b, n)
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			var size, manifest int
			for b.Loop() {
				size, manifest = releaseSize(b, vals)
			}
			b.ReportMetric(float64(size), "stored-bytes")
			b.ReportMetric(float64(manifest)/float64(n), "manifest-bytes/instance")
			b.ReportMetric(float64(size)/releaseBudget, "x-goal")
		})
	}
}
