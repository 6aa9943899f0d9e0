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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func class() *v1alpha1.StarrocksClass {
	return &v1alpha1.StarrocksClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "c1", Generation: 1},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyZonal},
				DefaultTopology:   v1alpha1.TopologyIgnored,
				AllowedZones:      []string{"z1", "z2"},
			},
			SizingPolicies: []v1alpha1.SizingPolicy{{
				Cores:         v1alpha1.CoreRange{Min: 1, Max: 8},
				Memory:        v1alpha1.MemoryRange{Min: resource.MustParse("1Gi"), Max: resource.MustParse("64Gi")},
				CoreFractions: []int32{25, 50, 100},
			}},
			OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyCatalogTrashExpireSecond, v1alpha1.KeyLoadProcessMaxMemoryLimitPercent},
			Configuration:            v1alpha1.Configuration{CatalogTrashExpireSecond: ptr(int64(3600))},
			NodeSelector:             map[string]string{"node-role/starrocks": ""},
			Tolerations:              []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "starrocks", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func instance(ns, name string) *v1alpha1.Starrocks {
	comp := v1alpha1.ComponentSpec{
		CPU:                   v1alpha1.CPUSpec{Cores: 2, CoreFraction: 50},
		Memory:                v1alpha1.MemorySpec{Size: resource.MustParse("8Gi")},
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse("20Gi")},
	}
	return &v1alpha1.Starrocks{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "u-" + "ns-" + "name", Generation: 3},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "default",
			Type:               v1alpha1.TypeCluster,
			Frontend:           comp,
			Backend:            v1alpha1.BackendSpec{ComponentSpec: comp, Replicas: ptr(int32(3))},
		},
	}
}

func TestComputeBuildsTheValuesEntry(t *testing.T) {
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{instance("team-a", "olap")}, Classes: []*v1alpha1.StarrocksClass{class()}, ClusterDomain: "k8s.example"})
	require.Len(t, out.Instances, 1)
	require.True(t, out.Results[0].Valid(), "%v", out.Results[0].Violations)
	e := out.Instances[0]

	assert.Equal(t, Names{
		FrontendStatefulSet: "d8ms-sr-olap", BackendStatefulSet: "d8ms-sr-olap-be", ClientService: "d8ms-sr-olap",
		FrontendHeadlessService: "d8ms-sr-olap-fe-headless", BackendHeadlessService: "d8ms-sr-olap-be-headless",
		ConfigMap: "d8ms-sr-olap-config", CredentialsSecret: "d8ms-sr-olap-credentials", AgentCredentialsSecret: "d8ms-sr-olap-agent-credentials",
	}, e.Names)
	assert.Equal(t, []string{
		"d8ms-sr-olap-0.d8ms-sr-olap-fe-headless.team-a.svc.k8s.example",
		"d8ms-sr-olap-1.d8ms-sr-olap-fe-headless.team-a.svc.k8s.example",
		"d8ms-sr-olap-2.d8ms-sr-olap-fe-headless.team-a.svc.k8s.example",
	}, e.Frontend.Hosts)
	assert.Equal(t, []string{
		"d8ms-sr-olap-be-0.d8ms-sr-olap-be-headless.team-a.svc.k8s.example",
		"d8ms-sr-olap-be-1.d8ms-sr-olap-be-headless.team-a.svc.k8s.example",
		"d8ms-sr-olap-be-2.d8ms-sr-olap-be-headless.team-a.svc.k8s.example",
	}, e.Backend.Hosts)
	assert.Equal(t, Resources{Requests: ResourceList{CPU: "1000m", Memory: "8Gi"}, Limits: ResourceList{CPU: "2", Memory: "8Gi"}}, e.Frontend.Resources)
	assert.Equal(t, Storage{Size: "20Gi", TemplateSize: "20Gi"}, e.Backend.Storage, "a new StatefulSet is created with the spec size")
	assert.EqualValues(t, 3, e.Frontend.Replicas)
	assert.EqualValues(t, 3, e.Backend.Replicas)
	assert.Equal(t, Configuration{StreamingLoadMaxMb: 102400, LoadProcessMaxMemoryLimitPercent: 30, CatalogTrashExpireSecond: 3600, DefaultReplicationNum: 3}, e.Configuration)
	assert.Equal(t, TLS{
		SecretName: "d8ms-sr-olap-tls", KeystorePasswordSecretName: "d8ms-sr-olap-keystore",
		DNSNames: []string{
			"d8ms-sr-olap", "d8ms-sr-olap.team-a", "d8ms-sr-olap.team-a.svc", "d8ms-sr-olap.team-a.svc.k8s.example",
			"d8ms-sr-olap-0.d8ms-sr-olap-fe-headless.team-a.svc.k8s.example",
			"d8ms-sr-olap-1.d8ms-sr-olap-fe-headless.team-a.svc.k8s.example",
			"d8ms-sr-olap-2.d8ms-sr-olap-fe-headless.team-a.svc.k8s.example",
		},
		CertificateRevision: 1,
	}, e.TLS)
	assert.Equal(t, "d8ms-sr-olap.team-a.svc.k8s.example", e.AgentConfig.QueryHost)
	assert.Equal(t, map[string]string{"catalog_trash_expire_second": "3600", "default_replication_num": "3"}, e.AgentConfig.FrontendConfig)
	assert.Equal(t, map[string]string{"streaming_load_max_mb": "102400"}, e.AgentConfig.BackendConfig)
	assert.NoError(t, e.AgentConfig.Validate())
	assert.Equal(t, "team-a/olap", e.AgentConfig.Instance)
	assert.Equal(t, []string{"z1", "z2"}, e.Zones)
	assert.Equal(t, "Ignored", e.Topology)
	assert.Equal(t, map[string]string{"node-role/starrocks": ""}, e.Scheduling.NodeSelector)
	assert.Len(t, e.Scheduling.Tolerations, 1)
	assert.EqualValues(t, 3, e.Generation)
	assert.Equal(t, v1alpha1.Endpoints{
		Query: "d8ms-sr-olap.team-a.svc.k8s.example:9030",
		HTTPS: "d8ms-sr-olap.team-a.svc.k8s.example:8443",
		HTTP:  "d8ms-sr-olap.team-a.svc.k8s.example:8030",
	}, Endpoints("olap", "team-a", "k8s.example"))
}

func TestDefaultReplicationNumIsAtMostTheBECount(t *testing.T) {
	for _, tt := range []struct {
		name     string
		typ      v1alpha1.InstanceType
		replicas *int32
		want     int32
	}{
		{"one on a Standalone", v1alpha1.TypeStandalone, nil, 1},
		{"two with two BEs (an instance that already has them)", v1alpha1.TypeCluster, ptr(int32(2)), 2},
		{"three with three BEs", v1alpha1.TypeCluster, ptr(int32(3)), 3},
		{"three with ten BEs", v1alpha1.TypeCluster, ptr(int32(10)), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sr := instance("ns", "a")
			sr.Spec.Type, sr.Spec.Backend.Replicas = tt.typ, tt.replicas
			// A new instance cannot order 2 BEs (classrules.CheckScaling);
			// one whose BE StatefulSet already runs them keeps them.
			two := int32(2)
			backends := map[string]BackendObservation{"ns/a": {Replicas: &two}}
			out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}, Backends: backends})
			require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
			assert.Equal(t, tt.want, out.Instances[0].Configuration.DefaultReplicationNum)
		})
	}
}

func TestResourcesAndMemoryUnits(t *testing.T) {
	for _, tt := range []struct {
		name            string
		cores, fraction int32
		memory          string
		wantReq, wantLm string
		wantMem         string
	}{
		{"a quarter of one core", 1, 25, "4Gi", "250m", "1", "4Gi"},
		{"all of eight cores", 8, 100, "4096Mi", "8000m", "8", "4Gi"},
		{"decimal units become the largest exact binary unit", 2, 50, "4G", "1000m", "2", "3906250Ki"},
		{"odd byte counts stay bytes", 2, 50, "4294967297", "1000m", "2", "4294967297"},
		{"fractional Gi become Mi", 2, 50, "2.5Gi", "1000m", "2", "2560Mi"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sr := instance("ns", "a")
			sr.Spec.Frontend.CPU = v1alpha1.CPUSpec{Cores: tt.cores, CoreFraction: tt.fraction}
			sr.Spec.Frontend.Memory.Size = resource.MustParse(tt.memory)
			out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}})
			require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
			r := out.Instances[0].Frontend.Resources
			assert.Equal(t, tt.wantReq, r.Requests.CPU)
			assert.Equal(t, tt.wantLm, r.Limits.CPU)
			assert.Equal(t, tt.wantMem, r.Requests.Memory)
			assert.Equal(t, tt.wantMem, r.Limits.Memory)
		})
	}
}

func TestChecksumsChangeOnlyForRestartNeedingSettings(t *testing.T) {
	base := func() *v1alpha1.Starrocks { return instance("ns", "a") }
	compute := func(sr *v1alpha1.Starrocks) Instance {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}})
		require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
		return out.Instances[0]
	}
	ref := compute(base())
	for _, tt := range []struct {
		name      string
		mutate    func(*v1alpha1.Starrocks)
		feChanges bool
		beChanges bool
	}{
		{"catalogTrashExpireSecond is runtime-mutable", func(s *v1alpha1.Starrocks) {
			s.Spec.Configuration = &v1alpha1.Configuration{CatalogTrashExpireSecond: ptr(int64(1))}
		}, false, false},
		{"streamingLoadMaxMb is runtime-mutable", func(s *v1alpha1.Starrocks) {
			s.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(1))}
		}, false, false},
		{"defaultReplicationNum is runtime-mutable", func(s *v1alpha1.Starrocks) { s.Spec.Backend.Replicas = ptr(int32(3)) }, false, false},
		{"requireSecureTransport restarts the FE", func(s *v1alpha1.Starrocks) {
			s.Spec.TLS = &v1alpha1.TLSSpec{RequireSecureTransport: true}
		}, true, false},
		{"FE memory changes the heap", func(s *v1alpha1.Starrocks) { s.Spec.Frontend.Memory.Size = resource.MustParse("16Gi") }, true, false},
		{"loadProcessMaxMemoryLimitPercent restarts the BE", func(s *v1alpha1.Starrocks) {
			s.Spec.Configuration = &v1alpha1.Configuration{LoadProcessMaxMemoryLimitPercent: ptr(int32(50))}
		}, false, true},
		{"BE memory changes mem_limit", func(s *v1alpha1.Starrocks) { s.Spec.Backend.Memory.Size = resource.MustParse("16Gi") }, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sr := base()
			tt.mutate(sr)
			got := compute(sr)
			assert.Equal(t, tt.feChanges, got.Frontend.ConfigChecksum != ref.Frontend.ConfigChecksum, "frontend checksum")
			assert.Equal(t, tt.beChanges, got.Backend.ConfigChecksum != ref.Backend.ConfigChecksum, "backend checksum")
		})
	}
}

func TestComputeKeepsTheLastValidEntry(t *testing.T) {
	valid := instance("ns", "a")
	first := Compute(Input{Instances: []*v1alpha1.Starrocks{valid}, Classes: []*v1alpha1.StarrocksClass{class()}})
	require.True(t, first.Results[0].Current)
	last := first.Results[0].Entry

	broken := valid.DeepCopy()
	broken.Generation = 4
	broken.Spec.Frontend.CPU.Cores = 64

	t.Run("a later-invalid instance keeps its last valid entry", func(t *testing.T) {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{broken}, Classes: []*v1alpha1.StarrocksClass{class()}, LastValid: map[string]*Instance{"ns/a": last}})
		require.Len(t, out.Instances, 1)
		assert.Equal(t, *last, out.Instances[0])
		assert.False(t, out.Results[0].Current)
		assert.False(t, out.Results[0].Valid())
		assert.Contains(t, out.Results[0].Violations.Error(), "spec.frontend.cpu.cores")
	})
	t.Run("a brand-new invalid instance gets no entry", func(t *testing.T) {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{broken}, Classes: []*v1alpha1.StarrocksClass{class()}})
		assert.Empty(t, out.Instances)
		assert.Nil(t, out.Results[0].Entry)
	})
	t.Run("a recreated object does not inherit the entry of its predecessor", func(t *testing.T) {
		again := broken.DeepCopy()
		again.UID = "new-uid"
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{again}, Classes: []*v1alpha1.StarrocksClass{class()}, LastValid: map[string]*Instance{"ns/a": last}})
		assert.Empty(t, out.Instances)
	})
	t.Run("an instance whose class is gone keeps its last valid entry and says why", func(t *testing.T) {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{valid}, LastValid: map[string]*Instance{"ns/a": last}})
		require.Len(t, out.Instances, 1)
		assert.Contains(t, out.Results[0].Violations.Error(), `StarrocksClass "default" does not exist`)
	})
	t.Run("a broken class keeps its instances on their last valid entry", func(t *testing.T) {
		cl := class()
		cl.Spec.Validations = []v1alpha1.ValidationRule{{Rule: "(", Message: "x"}}
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{valid}, Classes: []*v1alpha1.StarrocksClass{cl}, LastValid: map[string]*Instance{"ns/a": last}})
		require.Len(t, out.Instances, 1)
		assert.Equal(t, *last, out.Instances[0])
		assert.NotEmpty(t, out.ClassProblems["default"])
	})
}

func TestComputeTakesWhatTheExistingObjectsFix(t *testing.T) {
	grown := instance("ns", "a")
	grown.Spec.Backend.PersistentVolumeClaim.Size = resource.MustParse("60Gi")
	grown.Spec.Frontend.PersistentVolumeClaim.Size = resource.MustParse("30Gi")
	for _, tt := range []struct {
		name                           string
		existing                       *Existing
		wantFETemplate, wantBETemplate string
		wantRevision                   int64
	}{
		{"no objects yet: templates get the spec size, revision 1", nil, "30Gi", "60Gi", 1},
		{"existing StatefulSets keep the size they were created with", &Existing{FrontendTemplateSize: "20Gi", BackendTemplateSize: "20Gi"}, "20Gi", "20Gi", 1},
		{"only the BE StatefulSet exists: the FE template gets the spec size", &Existing{BackendTemplateSize: "20Gi"}, "30Gi", "20Gi", 1},
		{"a Certificate without revision counts as the first issuance", &Existing{CertificateRevision: 0}, "30Gi", "60Gi", 1},
		{"a renewed Certificate's revision is passed on", &Existing{CertificateRevision: 3}, "30Gi", "60Gi", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Instances: []*v1alpha1.Starrocks{grown}, Classes: []*v1alpha1.StarrocksClass{class()}}
			if tt.existing != nil {
				in.Existing = map[string]Existing{"ns/a": *tt.existing}
			}
			out := Compute(in)
			require.Len(t, out.Instances, 1)
			e := out.Instances[0]
			assert.Equal(t, "30Gi", e.Frontend.Storage.Size, "the desired PVC size stays the spec's")
			assert.Equal(t, "60Gi", e.Backend.Storage.Size, "the desired PVC size stays the spec's")
			assert.Equal(t, tt.wantFETemplate, e.Frontend.Storage.TemplateSize)
			assert.Equal(t, tt.wantBETemplate, e.Backend.Storage.TemplateSize)
			assert.Equal(t, tt.wantRevision, e.TLS.CertificateRevision)
		})
	}

	t.Run("a last valid entry gets them too, without changing the persisted entry", func(t *testing.T) {
		first := Compute(Input{Instances: []*v1alpha1.Starrocks{instance("ns", "a")}, Classes: []*v1alpha1.StarrocksClass{class()}})
		last := first.Results[0].Entry
		broken := instance("ns", "a")
		broken.Spec.Frontend.CPU.Cores = 64
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{broken}, Classes: []*v1alpha1.StarrocksClass{class()}, LastValid: map[string]*Instance{"ns/a": last},
			Existing: map[string]Existing{"ns/a": {FrontendTemplateSize: "10Gi", BackendTemplateSize: "15Gi", CertificateRevision: 2}}})
		require.Len(t, out.Instances, 1)
		assert.Equal(t, "10Gi", out.Instances[0].Frontend.Storage.TemplateSize)
		assert.Equal(t, "15Gi", out.Instances[0].Backend.Storage.TemplateSize)
		assert.EqualValues(t, 2, out.Instances[0].TLS.CertificateRevision)
		assert.Equal(t, "20Gi", last.Backend.Storage.TemplateSize, "the caller's entry is not modified")
		assert.EqualValues(t, 1, last.TLS.CertificateRevision)
	})
}

func TestComputeSortsByNamespaceAndName(t *testing.T) {
	in := []*v1alpha1.Starrocks{instance("b", "x"), instance("a", "z"), instance("a", "y")}
	out := Compute(Input{Instances: in, Classes: []*v1alpha1.StarrocksClass{class()}})
	var got []string
	for _, e := range out.Instances {
		got = append(got, e.Namespace+"/"+e.Name)
	}
	assert.Equal(t, []string{"a/y", "a/z", "b/x"}, got)
	assert.Equal(t, "b", in[0].Namespace, "the input slice is not reordered")

	again := Compute(Input{Instances: []*v1alpha1.Starrocks{in[2], in[0], in[1]}, Classes: []*v1alpha1.StarrocksClass{class()}})
	a, _ := json.Marshal(out.Instances)
	b, _ := json.Marshal(again.Instances)
	assert.JSONEq(t, string(a), string(b), "the output does not depend on the input order")
}

func TestNetworkFollowsTheSpecAndTheAccounts(t *testing.T) {
	sr := instance("ns", "a")
	sr.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{{MatchLabels: map[string]string{"team": "bi"}}}}
	for _, tt := range []struct {
		name     string
		existing *Existing
		wantOpen bool
	}{
		{"no accounts yet: client ports closed", nil, false},
		{"AccountsReady: client ports open", &Existing{AccountsReady: true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}}
			if tt.existing != nil {
				in.Existing = map[string]Existing{"ns/a": *tt.existing}
			}
			out := Compute(in)
			require.Len(t, out.Instances, 1)
			assert.Equal(t, tt.wantOpen, out.Instances[0].Network.ClientPortsOpen)
			assert.Equal(t, []NamespaceSelector{{MatchLabels: map[string]string{"team": "bi"}}}, out.Instances[0].Network.AllowedNamespaces)
		})
	}
	t.Run("a last valid entry opens with the accounts too", func(t *testing.T) {
		last := Compute(Input{Instances: []*v1alpha1.Starrocks{instance("ns", "a")}, Classes: []*v1alpha1.StarrocksClass{class()}}).Results[0].Entry
		broken := instance("ns", "a")
		broken.Spec.Frontend.CPU.Cores = 64
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{broken}, Classes: []*v1alpha1.StarrocksClass{class()}, LastValid: map[string]*Instance{"ns/a": last},
			Existing: map[string]Existing{"ns/a": {AccountsReady: true}}})
		require.Len(t, out.Instances, 1)
		assert.True(t, out.Instances[0].Network.ClientPortsOpen)
		assert.Nil(t, out.Instances[0].Network.AllowedNamespaces, "no allow list in the spec: only the instance's namespace")
	})
	t.Run("the entry does not share the spec's maps", func(t *testing.T) {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class()}})
		out.Instances[0].Network.AllowedNamespaces[0].MatchLabels["team"] = "x"
		assert.Equal(t, "bi", sr.Spec.Network.AllowedNamespaces[0].MatchLabels["team"])
	})
}
