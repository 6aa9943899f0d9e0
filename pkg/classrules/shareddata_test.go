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

package classrules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func sharedDataClass() *v1alpha1.StarrocksClass {
	c := testClass()
	c.Spec.SharedData = &v1alpha1.ClassSharedData{
		Allowed:            true,
		AllowedEndpoints:   []string{"*.example.com"},
		MinReplicas:        1,
		MaxReplicas:        8,
		AutoscalingAllowed: true,
		CacheSize:          &v1alpha1.QuantityRange{Min: qp("10Gi"), Max: qp("500Gi")},
	}
	return c
}

func sharedDataInstance() *v1alpha1.Starrocks {
	sr := testInstance()
	sr.UID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
	sr.Spec.Backend = v1alpha1.BackendSpec{}
	sr.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
		Endpoint: "https://s3.example.com", Bucket: "team-olap", Prefix: "starrocks/prod",
		CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"},
	}}
	sr.Spec.Compute = &v1alpha1.ComputeSpec{
		CPU:      v1alpha1.CPUSpec{Cores: 4},
		Memory:   v1alpha1.MemorySpec{Size: q("8Gi")},
		Replicas: ptr(int32(3)),
		Cache:    v1alpha1.CacheVolumeSpec{Size: q("100Gi")},
	}
	return sr
}

func TestSharedDataResolves(t *testing.T) {
	c := mustCompile(t, sharedDataClass())
	sr := sharedDataInstance()
	c.Default(sr)
	assert.Equal(t, int32(100), sr.Spec.Compute.CPU.CoreFraction, "the compute core fraction defaults to the policy's largest")
	r, vs := c.Resolve(sr)
	require.Empty(t, vs)
	require.NotNil(t, r.SharedData)
	assert.Equal(t, int32(3), r.SharedData.MinReplicas)
	assert.Equal(t, int32(3), r.SharedData.MaxReplicas)
	assert.Equal(t, int32(0), r.Backend.Replicas, "no BEs")
	assert.Equal(t, "s3://team-olap/starrocks/prod/ns/sr/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", StorageLocation(sr))

	auto := sharedDataInstance()
	auto.Spec.Compute.Replicas = nil
	auto.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 2, MaxReplicas: 6, TargetCPUUtilizationPercentage: ptr(int32(70))}
	r, vs = c.Resolve(auto)
	require.Empty(t, vs)
	assert.Equal(t, int32(2), r.SharedData.MinReplicas)
	assert.Equal(t, int32(6), r.SharedData.MaxReplicas)

	// A local instance is untouched by the shared-data rules.
	_, vs = c.Resolve(testInstance())
	require.Empty(t, vs)
}

// TestSharedDataRefusals: each broken rule is refused naming the field and
// the rule.
func TestSharedDataRefusals(t *testing.T) {
	cases := []struct {
		name  string
		class func(*v1alpha1.StarrocksClass)
		edit  func(*v1alpha1.Starrocks)
		field string
		want  string
	}{
		{"class does not allow it", func(c *v1alpha1.StarrocksClass) { c.Spec.SharedData = nil }, nil, "spec.storage.mode", "does not allow ObjectStorage"},
		{"endpoint not allowed", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Endpoint = "https://s3.evil.org" }, "spec.storage.objectStorage.endpoint", "not among the endpoints"},
		{"hostile endpoint", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Storage.ObjectStorage.Endpoint = "https://s3.example.com\"\n  run_mode = shared_nothing"
		}, "spec.storage.objectStorage.endpoint", "scheme://host"},
		{"hostile bucket", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Bucket = "b'); DROP STORAGE VOLUME x; --" }, "spec.storage.objectStorage.bucket", "a bucket name"},
		{"hostile prefix", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Prefix = "a')\n" }, "spec.storage.objectStorage.prefix", "path segments"},
		{"prefix leaving itself", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Prefix = "team/../other-team" }, "spec.storage.objectStorage.prefix", "'.' and '..'"},
		{"backend", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backend = testInstance().Spec.Backend }, "spec.backend", "has no BEs"},
		{"backup", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup = &v1alpha1.BackupSpec{Schedule: "0 3 * * *"} }, "spec.backup", "cluster snapshots protect"},
		{"no compute", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute = nil }, "spec.compute", "needs compute nodes"},
		{"replicas beyond the class", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Replicas = ptr(int32(9)) }, "spec.compute.replicas", "1 to 8 compute nodes"},
		{"replicas below the class", func(c *v1alpha1.StarrocksClass) { c.Spec.SharedData.MinReplicas = 2 }, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Replicas = ptr(int32(1)) }, "spec.compute.replicas", "2 to 8 compute nodes"},
		{"autoscaling beyond the class", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Compute.Replicas = nil
			sr.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 1, MaxReplicas: 50, TargetCPUUtilizationPercentage: ptr(int32(70))}
		}, "spec.compute.autoscaling.maxReplicas", "1 to 8 compute nodes"},
		{"autoscaling not allowed", func(c *v1alpha1.StarrocksClass) { c.Spec.SharedData.AutoscalingAllowed = false }, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Compute.Replicas = nil
			sr.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 1, MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr(int32(70))}
		}, "spec.compute.autoscaling", "does not allow CN autoscaling"},
		{"both replicas and autoscaling", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 1, MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr(int32(70))}
		}, "spec.compute", "exactly one of replicas"},
		{"cache too small", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Cache.Size = q("1Gi") }, "spec.compute.cache.size", "at least 10Gi"},
		{"cache too large", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Cache.Size = q("1Ti") }, "spec.compute.cache.size", "at most 500Gi"},
		{"CN size outside the policies", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.CPU.Cores = 64 }, "spec.compute.cpu.cores", "no sizing policy"},
		{"CN size outside the compute policies", func(c *v1alpha1.StarrocksClass) {
			c.Spec.SharedData.ComputeSizingPolicies = []v1alpha1.SizingPolicy{{Cores: v1alpha1.CoreRange{Min: 8, Max: 16}, Memory: v1alpha1.MemoryRange{Min: q("16Gi"), Max: q("64Gi")}, CoreFractions: []int32{100}}}
		}, nil, "spec.compute.cpu.cores", "sharedData.computeSizingPolicies"},
		{"CN memory below the floor", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Memory.Size = q("2Gi") }, "spec.compute.memory.size", "a CN needs at least 4Gi"},
		{"hostile cache storage class", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Cache.StorageClassName = "fast\"\n" }, "spec.compute.cache.storageClassName", "DNS"},
		{"compute on a local instance", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Storage = nil
			sr.Spec.Backend = testInstance().Spec.Backend
		}, "spec.compute", "for an ObjectStorage instance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := sharedDataClass()
			if tc.class != nil {
				tc.class(cl)
			}
			sr := sharedDataInstance()
			if tc.edit != nil {
				tc.edit(sr)
			}
			vs := mustCompile(t, cl).Validate(sr)
			for _, v := range vs {
				if v.Field == tc.field && strings.Contains(v.Error(), tc.want) {
					assert.NotContains(t, v.Error(), "\n", "a violation is one line")
					return
				}
			}
			t.Fatalf("no violation of %s with %q in %v", tc.field, tc.want, vs)
		})
	}
}

func TestSharedDataClassRules(t *testing.T) {
	cl := sharedDataClass()
	cl.Spec.SharedData.MinReplicas, cl.Spec.SharedData.MaxReplicas = 5, 2
	cl.Spec.SharedData.AllowedEndpoints = []string{"s3.example.com\"x"}
	cl.Spec.SharedData.CacheSize = &v1alpha1.QuantityRange{Min: qp("1Ti"), Max: qp("1Gi")}
	cl.Spec.SharedData.ComputeSizingPolicies = []v1alpha1.SizingPolicy{
		{Cores: v1alpha1.CoreRange{Min: 1, Max: 8}, Memory: v1alpha1.MemoryRange{Min: q("4Gi"), Max: q("32Gi")}, CoreFractions: []int32{100}},
		{Cores: v1alpha1.CoreRange{Min: 4, Max: 16}, Memory: v1alpha1.MemoryRange{Min: q("4Gi"), Max: q("32Gi")}, CoreFractions: []int32{100}},
	}
	_, vs := Compile(cl)
	fields := map[string]bool{}
	for _, v := range vs {
		fields[v.Field] = true
	}
	for _, f := range []string{"spec.sharedData.minReplicas", "spec.sharedData.allowedEndpoints[0]", "spec.sharedData.cacheSize", "spec.sharedData.computeSizingPolicies"} {
		assert.True(t, fields[f], "no violation of %s in %v", f, vs)
	}
}

func TestStorageChange(t *testing.T) {
	old := sharedDataInstance()
	local := testInstance()
	assert.Empty(t, CheckStorageChange(&old.Spec, nil), "a new instance chooses")
	assert.Empty(t, CheckStorageChange(&old.Spec, &old.Spec))

	vs := CheckStorageChange(&local.Spec, &old.Spec)
	require.Len(t, vs, 1)
	assert.Equal(t, "spec.storage.mode", vs[0].Field)
	vs = CheckStorageChange(&old.Spec, &local.Spec)
	require.Len(t, vs, 1)
	assert.Equal(t, "spec.storage.mode", vs[0].Field)

	for field, edit := range map[string]func(*v1alpha1.BackupStorage){
		"endpoint":  func(s *v1alpha1.BackupStorage) { s.Endpoint = "https://s3.other.example.com" },
		"bucket":    func(s *v1alpha1.BackupStorage) { s.Bucket = "other" },
		"prefix":    func(s *v1alpha1.BackupStorage) { s.Prefix = "" },
		"region":    func(s *v1alpha1.BackupStorage) { s.Region = "eu-west-1" },
		"pathStyle": func(s *v1alpha1.BackupStorage) { s.PathStyle = true },
	} {
		now := sharedDataInstance()
		edit(now.Spec.Storage.ObjectStorage)
		vs := CheckStorageChange(&now.Spec, &old.Spec)
		require.Len(t, vs, 1, field)
		assert.Equal(t, "spec.storage.objectStorage."+field, vs[0].Field)
		assert.Contains(t, vs[0].Message, "read-only")
	}
	keys := sharedDataInstance()
	keys.Spec.Storage.ObjectStorage.CredentialsSecretRef.Name = "s3-keys-2"
	keys.Spec.Storage.ObjectStorage.CASecretRef = &v1alpha1.BackupSecretKeyRef{Name: "s3-ca"}
	assert.Empty(t, CheckStorageChange(&keys.Spec, &old.Spec), "the credentials may change")
}

// TestLocationsOverlap: a prefix that reaches into another instance's
// location is an overlap, a sibling with a common start is not.
func TestLocationsOverlap(t *testing.T) {
	a := "s3://b/p/ns/db/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
	assert.True(t, LocationsOverlap(a, a))
	assert.True(t, LocationsOverlap(a, a+"/ns2/x/11112222-3333-4444-5555-666677778888"))
	assert.True(t, LocationsOverlap(a+"/ns2/x/11112222-3333-4444-5555-666677778888", a))
	assert.False(t, LocationsOverlap(a, a+"0"), "a longer last segment is another directory")
	assert.False(t, LocationsOverlap("s3://b/p/ns/db/1", "s3://c/p/ns/db/1"))
	assert.False(t, LocationsOverlap("", a))
}

func TestSharedDataCELVariables(t *testing.T) {
	cl := sharedDataClass()
	cl.Spec.Validations = append(cl.Spec.Validations, v1alpha1.ValidationRule{
		Rule:    "storage != 'ObjectStorage' || compute.maxReplicas <= 4",
		Message: "at most 4 CNs",
	})
	c := mustCompile(t, cl)
	require.Empty(t, c.Validate(sharedDataInstance()))
	sr := sharedDataInstance()
	sr.Spec.Compute.Replicas = ptr(int32(5))
	vs := c.Validate(sr)
	require.NotEmpty(t, vs)
	assert.Contains(t, vs.Error(), "at most 4 CNs")
	require.Empty(t, c.Validate(testInstance()), "a local instance sees storage Local")
}

func restoredInstance() *v1alpha1.Starrocks {
	sr := sharedDataInstance()
	sr.Spec.Storage.RestoreFrom = &v1alpha1.ClusterSnapshotSource{Namespace: "team-a", InstanceName: "olap", InstanceUID: "11112222-3333-4444-5555-666677778888"}
	return sr
}

// TestRestoreFromClusterSnapshot: a restored instance's storage volume is
// the source's, location and name; its strings are patterned; it is only
// for an ObjectStorage instance and fixed at creation.
func TestRestoreFromClusterSnapshot(t *testing.T) {
	c := mustCompile(t, sharedDataClass())
	sr := restoredInstance()
	require.Empty(t, c.Validate(sr))
	assert.Equal(t, "s3://team-olap/starrocks/prod/team-a/olap/11112222-3333-4444-5555-666677778888", StorageLocation(sr))
	assert.Equal(t, "11112222-3333-4444-5555-666677778888", StorageVolumeUID(sr))
	assert.Equal(t, "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", StorageVolumeUID(sharedDataInstance()))

	for name, tc := range map[string]struct {
		edit        func(*v1alpha1.ClusterSnapshotSource)
		field, want string
	}{
		"hostile namespace": {func(r *v1alpha1.ClusterSnapshotSource) { r.Namespace = "a'/../b" }, "spec.storage.restoreFrom.namespace", "DNS-1123 label"},
		"hostile name":      {func(r *v1alpha1.ClusterSnapshotSource) { r.InstanceName = "x\"\n- name: y" }, "spec.storage.restoreFrom.instanceName", "DNS-1035"},
		"name too long":     {func(r *v1alpha1.ClusterSnapshotSource) { r.InstanceName = strings.Repeat("a", 41) }, "spec.storage.restoreFrom.instanceName", "DNS-1035"},
		"hostile uid":       {func(r *v1alpha1.ClusterSnapshotSource) { r.InstanceUID = "*/meta/../x" }, "spec.storage.restoreFrom.instanceUID", "a UID"},
		"upper-case uid":    {func(r *v1alpha1.ClusterSnapshotSource) { r.InstanceUID = "11112222-3333-4444-5555-66667777888A" }, "spec.storage.restoreFrom.instanceUID", "a UID"},
		"hostile root password Secret": {func(r *v1alpha1.ClusterSnapshotSource) {
			r.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "x\"\n- name: y"}
		}, "spec.storage.restoreFrom.rootPasswordSecretRef.name", "DNS-1123 subdomain"},
		"hostile root password key": {func(r *v1alpha1.ClusterSnapshotSource) {
			r.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "olap-root", Key: "../root"}
		}, "spec.storage.restoreFrom.rootPasswordSecretRef.key", "Secret key"},
	} {
		t.Run(name, func(t *testing.T) {
			sr := restoredInstance()
			tc.edit(sr.Spec.Storage.RestoreFrom)
			assertViolation(t, c.Validate(sr), tc.field, tc.want)
		})
	}

	t.Run("only with ObjectStorage", func(t *testing.T) {
		local := testInstance()
		local.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageLocal, RestoreFrom: restoredInstance().Spec.Storage.RestoreFrom}
		assertViolation(t, c.Validate(local), "spec.storage.restoreFrom", "restored from a BACKUP")
		assert.Equal(t, "", StorageLocation(local))
	})

	t.Run("fixed at creation", func(t *testing.T) {
		assert.Empty(t, CheckStorageChange(&restoredInstance().Spec, &restoredInstance().Spec))
		assertViolation(t, CheckStorageChange(&restoredInstance().Spec, &sharedDataInstance().Spec), "spec.storage.restoreFrom", "only when the instance is created")
		assertViolation(t, CheckStorageChange(&sharedDataInstance().Spec, &restoredInstance().Spec), "spec.storage.restoreFrom", "only when the instance is created")
		other := restoredInstance()
		other.Spec.Storage.RestoreFrom.InstanceName = "olap2"
		assertViolation(t, CheckStorageChange(&other.Spec, &restoredInstance().Spec), "spec.storage.restoreFrom", "immutable")
	})

	t.Run("the root password's Secret may be named or changed later", func(t *testing.T) {
		named := restoredInstance()
		named.Spec.Storage.RestoreFrom.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "olap-root"}
		require.Empty(t, c.Validate(named))
		assert.Empty(t, CheckStorageChange(&named.Spec, &restoredInstance().Spec))
		renamed := named.DeepCopy()
		renamed.Spec.Storage.RestoreFrom.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "olap-root-2", Key: "root-password"}
		assert.Empty(t, CheckStorageChange(&renamed.Spec, &named.Spec))
		assert.Empty(t, CheckStorageChange(&restoredInstance().Spec, &named.Spec))
		renamed.Spec.Storage.RestoreFrom.InstanceUID = "11112222-3333-4444-5555-666677779999"
		assertViolation(t, CheckStorageChange(&renamed.Spec, &named.Spec), "spec.storage.restoreFrom", "immutable")
	})
}

func assertViolation(t *testing.T, vs Violations, field, want string) {
	t.Helper()
	for _, v := range vs {
		if v.Field == field && strings.Contains(v.Error(), want) {
			assert.NotContains(t, v.Error(), "\n", "a violation is one line")
			return
		}
	}
	t.Fatalf("no violation of %s with %q in %v", field, want, vs)
}
