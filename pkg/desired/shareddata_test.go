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

package desired

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

func sharedDataClass() *v1alpha1.StarrocksClass {
	c := class()
	c.Spec.SharedData = &v1alpha1.ClassSharedData{Allowed: true, MinReplicas: 1, MaxReplicas: 10, AutoscalingAllowed: true}
	return c
}

func sharedDataInstance(ns, name, uid string) *v1alpha1.Starrocks {
	sr := instance(ns, name)
	sr.UID = types.UID(uid)
	sr.Spec.Backend = v1alpha1.BackendSpec{}
	sr.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
		Endpoint: "http://s3.storage.svc:9000", Bucket: "olap", Prefix: "teams", PathStyle: true,
		CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"},
	}}
	sr.Spec.Compute = &v1alpha1.ComputeSpec{
		CPU: v1alpha1.CPUSpec{Cores: 4, CoreFraction: 100}, Memory: v1alpha1.MemorySpec{Size: resource.MustParse("16Gi")},
		Replicas: ptr(int32(3)), Cache: v1alpha1.CacheVolumeSpec{Size: resource.MustParse("100Gi"), StorageClassName: "fast"},
	}
	return sr
}

const uidA = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"

func TestSharedDataEntry(t *testing.T) {
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{sharedDataInstance("team-a", "olap", uidA)}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}, ClusterDomain: "k8s.example"})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	e := out.Instances[0]
	assert.Equal(t, "ObjectStorage", e.StorageMode)
	require.NotNil(t, e.Compute)
	assert.Equal(t, int32(3), e.Compute.Replicas)
	assert.Nil(t, e.Compute.Autoscaling)
	assert.Equal(t, Storage{Size: "100Gi", TemplateSize: "100Gi", StorageClassName: "fast"}, e.Compute.Cache, "a new CN StatefulSet is created at the spec's size")
	assert.Equal(t, ResourceList{CPU: "4000m", Memory: "16Gi"}, e.Compute.Resources.Requests)
	assert.Equal(t, int32(0), e.Backend.Replicas, "no BEs")
	assert.Empty(t, e.AgentConfig.Backends)
	assert.NotContains(t, e.AgentConfig.FrontendConfig, "default_replication_num", "StarRocks keeps one replica of a shared-data table whatever it says")
	assert.Equal(t, "d8ms-sr-olap-cn", e.Names.ComputeStatefulSet)

	sd := e.AgentConfig.SharedData
	require.NotNil(t, sd)
	assert.Equal(t, "d8ms_sv_0b1c2d3e4f5061728394a5b6c7d8e9f0", sd.StorageVolume.Name)
	assert.Equal(t, "s3://olap/teams/team-a/olap/"+uidA, sd.StorageVolume.Location)
	assert.Equal(t, "http://s3.storage.svc:9000", sd.StorageVolume.Endpoint)
	assert.False(t, sd.StorageVolume.EnableSSL)
	assert.True(t, sd.StorageVolume.PathStyle)
	assert.Equal(t, "s3-keys", sd.StorageVolume.Credentials.SecretName)
	assert.Equal(t, "accessKeyID", sd.StorageVolume.Credentials.AccessKeyIDKey)
	assert.Equal(t, "d8ms-sr-olap-cn", sd.ComputeNodes.StatefulSet)
	assert.Equal(t, "d8ms-sr-olap-cn-%d.d8ms-sr-olap-cn-headless.team-a.svc.k8s.example", sd.ComputeNodes.HostFormat)
	assert.Equal(t, 9050, sd.ComputeNodes.HeartbeatPort)
	assert.Equal(t, int32(3), sd.ComputeNodes.Min, "a fixed count: min = max = replicas")
	assert.Equal(t, int32(3), sd.ComputeNodes.Max)
	assert.True(t, sd.ClusterSnapshots)

	data, err := json.Marshal(e)
	require.NoError(t, err)
	require.NoError(t, ValidateEntry(data))
	assert.NotContains(t, string(data), "secretAccessKey\":\"", "no key in the entry, only key names")
}

// TestSharedDataStorageCAReachesTheFrontend: the FE's JVM is the S3
// client of a shared-data instance, so a private CA of its object storage
// goes into the FE's trust store, and a changed CA Secret restarts the FEs.
func TestSharedDataStorageCAReachesTheFrontend(t *testing.T) {
	sr := sharedDataInstance("team-a", "olap", uidA)
	without := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, without.Instances, 1, "%v", without.Results[0].Violations)
	assert.Empty(t, without.Instances[0].Frontend.TrustedCAs)

	sr.Spec.Storage.ObjectStorage.CASecretRef = &v1alpha1.BackupSecretKeyRef{Name: "s3-ca"}
	with := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, with.Instances, 1, "%v", with.Results[0].Violations)
	f := with.Instances[0].Frontend
	assert.Equal(t, []TrustedCA{{SecretName: "s3-ca", Key: "ca.crt", File: "storage.crt"}}, f.TrustedCAs)
	assert.NotEqual(t, without.Instances[0].Frontend.ConfigChecksum, f.ConfigChecksum, "the JVM reads its trust store only at start")
	assert.Equal(t, &agentconfig.SecretKeyRef{Name: "s3-ca", Key: "ca.crt"}, with.Instances[0].AgentConfig.SharedData.StorageVolume.CA)
}

func TestSharedDataAutoscalingLeavesReplicasToTheHPA(t *testing.T) {
	sr := sharedDataInstance("team-a", "olap", uidA)
	sr.Spec.Compute.Replicas = nil
	sr.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 2, MaxReplicas: 8, TargetCPUUtilizationPercentage: ptr(int32(70))}
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	e := out.Instances[0]
	assert.Equal(t, int32(0), e.Compute.Replicas, "no count of the module's while autoscaling")
	assert.Equal(t, &Autoscaling{MinReplicas: 2, MaxReplicas: 8, TargetCPUUtilizationPercentage: 70}, e.Compute.Autoscaling)
	assert.Equal(t, int32(2), e.AgentConfig.SharedData.ComputeNodes.Min)
	assert.Equal(t, int32(8), e.AgentConfig.SharedData.ComputeNodes.Max)
	data, err := json.Marshal(e)
	require.NoError(t, err)
	require.NoError(t, ValidateEntry(data))
	assert.NotContains(t, string(data), `"compute":{"memLimitBytes":1,"replicas"`)
}

// TestSharedDataPrefixIntoAnotherInstance: a team chooses a prefix that
// reaches into an older instance's location (its namespace, name and UID
// are in the other's status and names); the newer instance is refused,
// the older keeps running.
func TestSharedDataPrefixIntoAnotherInstance(t *testing.T) {
	victim := sharedDataInstance("team-a", "olap", uidA)
	victim.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	attacker := sharedDataInstance("team-b", "x", "11112222-3333-4444-5555-666677778888")
	attacker.CreationTimestamp = metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	attacker.Spec.Storage.ObjectStorage.Prefix = "teams/team-a/olap/" + uidA
	same := sharedDataInstance("team-c", "y", "21112222-3333-4444-5555-666677778888")
	same.CreationTimestamp = metav1.NewTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	same.Spec.Storage.ObjectStorage.Bucket = "other-bucket"
	same.Spec.Storage.ObjectStorage.Prefix = "teams/team-a/olap/" + uidA

	out := Compute(Input{Instances: []*v1alpha1.Starrocks{attacker, victim, same}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	byKey := map[string]Result{}
	for _, r := range out.Results {
		byKey[r.Key] = r
	}
	assert.True(t, byKey["team-a/olap"].Valid(), "the older instance keeps running: %v", byKey["team-a/olap"].Violations)
	assert.True(t, byKey["team-c/y"].Valid(), "another bucket does not overlap: %v", byKey["team-c/y"].Violations)
	vs := byKey["team-b/x"].Violations
	require.Len(t, vs, 1)
	assert.Equal(t, "spec.storage.objectStorage.prefix", vs[0].Field)
	assert.Contains(t, vs[0].Message, "Starrocks team-a/olap")
	assert.Nil(t, byKey["team-b/x"].Entry)
}

func TestSharedDataLocationKeptAgainstTheEntryInEffect(t *testing.T) {
	sr := sharedDataInstance("team-a", "olap", uidA)
	first := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, first.Instances, 1)
	last := map[string]*Instance{"team-a/olap": &first.Instances[0]}

	moved := sr.DeepCopy()
	moved.Spec.Storage.ObjectStorage.Prefix = "elsewhere"
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{moved}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}, LastValid: last})
	require.False(t, out.Results[0].Valid())
	assert.Equal(t, "spec.storage.objectStorage", out.Results[0].Violations[0].Field)
	require.Len(t, out.Instances, 1, "the entry in effect stays")
	assert.Equal(t, "s3://olap/teams/team-a/olap/"+uidA, out.Instances[0].AgentConfig.SharedData.StorageVolume.Location)

	local := instance("team-a", "olap")
	local.UID = uidA
	out = Compute(Input{Instances: []*v1alpha1.Starrocks{local}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}, LastValid: last})
	require.False(t, out.Results[0].Valid())
	assert.Equal(t, "spec.storage.mode", out.Results[0].Violations[0].Field)

	keys := sr.DeepCopy()
	keys.Spec.Storage.ObjectStorage.CredentialsSecretRef.Name = "s3-keys-rotated"
	out = Compute(Input{Instances: []*v1alpha1.Starrocks{keys}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}, LastValid: last})
	require.True(t, out.Results[0].Valid(), "%v", out.Results[0].Violations)
	assert.Equal(t, "s3-keys-rotated", out.Instances[0].AgentConfig.SharedData.StorageVolume.Credentials.SecretName)
}

// TestSharedDataHostileStringsNeverReachTheEntry: strings the CRD would
// refuse, stored past it, are refused by the hooks and produce no entry.
func TestSharedDataHostileStringsNeverReachTheEntry(t *testing.T) {
	for field, edit := range map[string]func(*v1alpha1.BackupStorage){
		"endpoint": func(s *v1alpha1.BackupStorage) { s.Endpoint = "http://s3\"}}\n{{ .Values }}" },
		"bucket":   func(s *v1alpha1.BackupStorage) { s.Bucket = "b')); DROP" },
		"prefix":   func(s *v1alpha1.BackupStorage) { s.Prefix = "a/../../b" },
		"region":   func(s *v1alpha1.BackupStorage) { s.Region = "us\n" },
		"credentialsSecretRef": func(s *v1alpha1.BackupStorage) {
			s.CredentialsSecretRef.AccessKeyIDKey = "k\"}"
		},
	} {
		sr := sharedDataInstance("team-a", "olap", uidA)
		edit(sr.Spec.Storage.ObjectStorage)
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
		require.False(t, out.Results[0].Valid(), field)
		assert.Empty(t, out.Instances, field)
		assert.True(t, strings.HasPrefix(out.Results[0].Violations[0].Field, "spec.storage.objectStorage."+field), "%s: %v", field, out.Results[0].Violations)
	}
}

// TestRestoredInstanceTakesOverTheSourcesVolume: an instance restored from
// a cluster snapshot runs with the source's storage volume (name and
// location, which its FE comes up with), its first FE restores, and it is
// refused while the source still lives: two live instances on one
// location delete each other's files.
func TestRestoredInstanceTakesOverTheSourcesVolume(t *testing.T) {
	const uidB = "11112222-3333-4444-5555-666677778888"
	source := sharedDataInstance("team-a", "olap", uidA)
	source.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	restored := sharedDataInstance("team-a", "olap2", uidB)
	restored.CreationTimestamp = metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	restored.Spec.Storage.RestoreFrom = &v1alpha1.ClusterSnapshotSource{Namespace: "team-a", InstanceName: "olap", InstanceUID: uidA}

	out := Compute(Input{Instances: []*v1alpha1.Starrocks{restored}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	e := out.Instances[0]
	assert.True(t, e.Frontend.RestoreClusterSnapshot)
	assert.Equal(t, "d8ms-sr-olap-agent-credentials", e.Frontend.RestoreSourceCredentialsSecret, "the source's root password, for the agent")
	vol := e.AgentConfig.SharedData.StorageVolume
	assert.Equal(t, "d8ms_sv_0b1c2d3e4f5061728394a5b6c7d8e9f0", vol.Name, "the source's volume name")
	assert.Equal(t, "s3://olap/teams/team-a/olap/"+uidA, vol.Location, "the source's location")
	assert.True(t, e.AgentConfig.SharedData.ClusterSnapshots, "the restored instance protects itself again")
	data, err := json.Marshal(e)
	require.NoError(t, err)
	require.NoError(t, ValidateEntry(data))

	elsewhere := restored.DeepCopy()
	elsewhere.Spec.Storage.RestoreFrom.Namespace = "team-b"
	other := Compute(Input{Instances: []*v1alpha1.Starrocks{elsewhere}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, other.Instances, 1, "%v", other.Results[0].Violations)
	assert.Empty(t, other.Instances[0].Frontend.RestoreSourceCredentialsSecret, "no pod mounts a Secret of another namespace")
	assert.Equal(t, "s3://olap/teams/team-b/olap/"+uidA, other.Instances[0].AgentConfig.SharedData.StorageVolume.Location)
	assert.Nil(t, e.AgentConfig.SharedData.SourceRootPassword, "no Secret of the team named")

	// The team names a Secret of this namespace with the source's root
	// password (the only way for a source of another namespace): the
	// agent reads it by name.
	named := elsewhere.DeepCopy()
	named.Spec.Storage.RestoreFrom.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "olap-root"}
	byName := Compute(Input{Instances: []*v1alpha1.Starrocks{named}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, byName.Instances, 1, "%v", byName.Results[0].Violations)
	assert.Equal(t, &agentconfig.SecretKeyRef{Name: "olap-root", Key: "password"}, byName.Instances[0].AgentConfig.SharedData.SourceRootPassword)
	named.Spec.Storage.RestoreFrom.RootPasswordSecretRef.Key = "root-password"
	byName = Compute(Input{Instances: []*v1alpha1.Starrocks{named}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, byName.Instances, 1)
	assert.Equal(t, &agentconfig.SecretKeyRef{Name: "olap-root", Key: "root-password"}, byName.Instances[0].AgentConfig.SharedData.SourceRootPassword)
	data, err = json.Marshal(byName.Instances[0])
	require.NoError(t, err)
	require.NoError(t, ValidateEntry(data))

	plain := Compute(Input{Instances: []*v1alpha1.Starrocks{source}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	require.Len(t, plain.Instances, 1)
	assert.False(t, plain.Instances[0].Frontend.RestoreClusterSnapshot)

	both := Compute(Input{Instances: []*v1alpha1.Starrocks{restored, source}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}})
	byKey := map[string]Result{}
	for _, r := range both.Results {
		byKey[r.Key] = r
	}
	assert.True(t, byKey["team-a/olap"].Valid(), "the source keeps running: %v", byKey["team-a/olap"].Violations)
	vs := byKey["team-a/olap2"].Violations
	require.Len(t, vs, 1)
	assert.Equal(t, "spec.storage.restoreFrom", vs[0].Field)
	assert.Contains(t, vs[0].Message, "delete Starrocks team-a/olap first")
	assert.Nil(t, byKey["team-a/olap2"].Entry, "no objects while the source lives")

	// Once restored, the entry in effect keeps the source's location.
	last := map[string]*Instance{"team-a/olap2": &out.Instances[0]}
	again := Compute(Input{Instances: []*v1alpha1.Starrocks{restored}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}, LastValid: last})
	require.True(t, again.Results[0].Valid(), "%v", again.Results[0].Violations)
}

// TestSharedDataIgnoresABackendStatefulSet: a shared-data instance has no
// BE, so the BE scale-in guard and the BE volume template have nothing to
// keep. A StatefulSet under the instance's BE name (a tenant can make one
// with the module's labels in its namespace) must not make the entry grow
// BEs: no BE pods kept "for decommission", no BE volume template, no
// BackendScaleIn waiting; CNs leave through their graceful exit and the
// agent's DROP COMPUTE NODE, never through a decommission.
func TestSharedDataIgnoresABackendStatefulSet(t *testing.T) {
	sr := sharedDataInstance("team-a", "olap", uidA)
	key := Key("team-a", "olap")
	three := int32(3)
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()},
		Backends: map[string]BackendObservation{key: {Replicas: &three}},
		Existing: map[string]Existing{key: {BackendTemplateSize: "10Gi", TabletHealth: true, ScaleInHold: "a backup runs"}}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	e := out.Instances[0]
	assert.Equal(t, Backend{}, e.Backend, "no BE StatefulSet is rendered for a shared-data instance")
	assert.Empty(t, e.AgentConfig.Backends)
	assert.False(t, e.AgentConfig.TabletHealth, "no BE restart to wait for")
	assert.Equal(t, ScaleInNone, out.Results[0].ScaleIn.State)
	data, err := json.Marshal(e)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"backend"`)
}

// TestSharedDataCacheKeepsTheTemplateSize: a grown cache is the hooks'
// PVC expansion; the existing CN StatefulSet keeps the volumeClaimTemplates
// size it was created with (the apiserver refuses any change of them).
func TestSharedDataCacheKeepsTheTemplateSize(t *testing.T) {
	sr := sharedDataInstance("team-a", "olap", uidA)
	key := Key("team-a", "olap")
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()},
		Existing: map[string]Existing{key: {ComputeTemplateSize: "50Gi"}}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	assert.Equal(t, Storage{Size: "100Gi", TemplateSize: "50Gi", StorageClassName: "fast"}, out.Instances[0].Compute.Cache)
}
