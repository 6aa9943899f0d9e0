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
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// maxCountLimit is the largest instances.maxCount the module settings
// accept (openapi/config-values.yaml): the release must fit at it whatever
// the tenants write.
const maxCountLimit = 2000

// randomText is n characters of alphabet, from a fixed seed: random enough
// that gzip finds nothing to share between instances, as with real tenants'
// unrelated names.
func randomText(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"
	lowerOnly   = "abcdefghijklmnopqrstuvwxyz"
)

// maximalInstance is an instance whose every tenant-written string and list
// is as long as the CRD and the class rules accept: the longest name and
// namespace, a Cluster of the most BEs, a storage class name of 253
// characters, 16 namespace selectors of 16 labels with the longest keys and
// values, and a declaration of databases, roles and users just under
// classrules.MaxDeclarationBytes.
func maximalInstance(r *rand.Rand, i int) *v1alpha1.Starrocks {
	name := "a" + randomText(r, lowerDigits, 38) + "z"
	ns := "n" + randomText(r, lowerDigits, 61) + "z"
	storageClass := randomText(r, lowerOnly, 63) + "." + randomText(r, lowerOnly, 63) + "." + randomText(r, lowerOnly, 63) + "." + randomText(r, lowerOnly, 61)
	component := func(mem string) v1alpha1.ComponentSpec {
		return v1alpha1.ComponentSpec{
			CPU:                   v1alpha1.CPUSpec{Cores: 16, CoreFraction: 100},
			Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(mem)},
			PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse("1023Ti"), StorageClassName: storageClass},
		}
	}
	selectors := make([]v1alpha1.NamespaceSelector, 16)
	for s := range selectors {
		labels := map[string]string{}
		for len(labels) < 16 {
			key := randomText(r, lowerOnly, 63) + "." + randomText(r, lowerOnly, 63) + "." + randomText(r, lowerOnly, 63) + "." + randomText(r, lowerOnly, 61) + "/" + randomText(r, lowerOnly, 63)
			labels[key] = randomText(r, lowerDigits, 63)
		}
		selectors[s] = v1alpha1.NamespaceSelector{MatchLabels: labels}
	}
	sr := &v1alpha1.Starrocks{
		ObjectMeta: metaOf(ns, name, fmt.Sprintf("%08x-0000-4000-8000-%012x", i, r.Uint64()>>16)),
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "general",
			Type:               v1alpha1.TypeCluster,
			Frontend:           component("128Gi"),
			Backend:            v1alpha1.BackendSpec{ComponentSpec: component("128Gi"), Replicas: ptr(int32(100))},
			Network:            &v1alpha1.NetworkSpec{AllowedNamespaces: selectors},
			TLS:                &v1alpha1.TLSSpec{RequireSecureTransport: true},
		},
	}
	declareMaximal(r, sr)
	return sr
}

// declareMaximal fills spec.databases, roles and users with random names up
// to just under the declaration limit.
func declareMaximal(r *rand.Rand, sr *v1alpha1.Starrocks) {
	ident := func() string { return "d" + randomText(r, lowerDigits, 63) }
	for {
		next := sr.DeepCopy()
		db := ident()
		next.Spec.Databases = append(next.Spec.Databases, v1alpha1.Database{Name: db})
		next.Spec.Roles = append(next.Spec.Roles, v1alpha1.Role{Name: ident(), Privileges: []v1alpha1.Privilege{{Database: db, Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT", "INSERT"}}}})
		next.Spec.Users = append(next.Spec.Users, v1alpha1.User{Name: ident(), Roles: []string{next.Spec.Roles[len(next.Spec.Roles)-1].Name}})
		if declarationSize(next) > classrules.MaxDeclarationBytes {
			return
		}
		*sr = *next
	}
}

// declarationSize measures a declaration as the class rules do
// (classrules.MaxDeclarationBytes: the JSON of the three lists).
func declarationSize(sr *v1alpha1.Starrocks) int {
	data, err := json.Marshal(struct {
		D []v1alpha1.Database `json:"d"`
		R []v1alpha1.Role     `json:"r"`
		U []v1alpha1.User     `json:"u"`
	}{sr.Spec.Databases, sr.Spec.Roles, sr.Spec.Users})
	if err != nil {
		panic(err)
	}
	return len(data)
}

func metaOf(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Generation: 1}
}

// maximalEntries are the desired states of n maximal instances, computed by
// the hooks' code: every instance must pass its class, or it would get no
// entry and prove nothing.
func maximalEntries(t testing.TB, n int) []desired.Instance {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	objs := make([]*v1alpha1.Starrocks, n)
	for i := range objs {
		objs[i] = maximalInstance(r, i)
	}
	out := desired.Compute(desired.Input{Instances: objs, Classes: sizeClasses(), ClusterDomain: "cluster.local", MaxInstances: n})
	for _, res := range out.Results {
		if !res.Valid() {
			t.Fatalf("maximal instance %s breaks its class: %v", res.Key, res.Violations)
		}
	}
	if len(out.Instances) != n {
		t.Fatalf("%d entries of %d maximal instances", len(out.Instances), n)
	}
	return out.Instances
}

// releaseOfMaximal is the stored release with n maximal instances and with
// none, and the largest entry's JSON. checkedValues holds each entry to the
// instance schema.
func releaseOfMaximal(t testing.TB, n int) (size, empty, largest int) {
	entries := maximalEntries(t, n)
	for _, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(data))
	}
	empty, _ = releaseSize(t, checkedValues(t, nil, nil))
	size, _ = releaseSize(t, checkedValues(t, entries, nil))
	return size, empty, largest
}

// Nothing a tenant writes may make the module's one Helm release outgrow the
// Secret Helm stores it in: with every instance as large as the CRD and the
// class rules allow, the stored release is what it is without any instance
// (the entries travel in ConfigMaps desired-<uid>, never in the values), and
// each entry's ConfigMap stays far below the 1 MiB an object may hold.
// BenchmarkHelmReleaseOfMaximalInstances measures it at the largest
// instances.maxCount.
func TestTenantInputNeverReachesTheRelease(t *testing.T) {
	const n = 100
	size, empty, largest := releaseOfMaximal(t, n)
	t.Logf("stored release: %d bytes with %d maximal instances, %d with none; the largest entry %d bytes", size, n, empty, largest)
	if size-empty > 64 {
		t.Errorf("the stored release takes %d bytes with %d maximal instances and %d with none: tenant input reaches the release", size, n, empty)
	}
	// A ConfigMap holds at most 1 MiB (the API server's object limit); an
	// entry needs a quarter of it at most, whatever the tenant wrote.
	if largest > secretLimit/4 {
		t.Errorf("the largest entry takes %d bytes, more than a quarter of the 1 MiB a ConfigMap may hold", largest)
	}
}

// BenchmarkHelmReleaseOfMaximalInstances builds the stored release with
// maxCountLimit maximal instances: stored-bytes, the growth over no instance
// at all (instance-bytes, 0 when no tenant input reaches the release), and
// the largest entry (largest-entry-bytes, what one desired-state ConfigMap
// holds), with x-limit, the stored release as a share of the Secret limit.
func BenchmarkHelmReleaseOfMaximalInstances(b *testing.B) {
	var size, empty, largest int
	for b.Loop() {
		size, empty, largest = releaseOfMaximal(b, maxCountLimit)
	}
	b.ReportMetric(float64(size), "stored-bytes")
	b.ReportMetric(float64(size-empty), "instance-bytes")
	b.ReportMetric(float64(largest), "largest-entry-bytes")
	b.ReportMetric(float64(size)/secretLimit, "x-limit")
}
