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

package instanceobjects

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// sharedDataEntry is the entry the instances hook computes for an
// autoscaled shared-data Standalone in team-a.
func sharedDataEntry(t *testing.T) map[string]any {
	t.Helper()
	q := resource.MustParse
	comp := v1alpha1.ComponentSpec{CPU: v1alpha1.CPUSpec{Cores: 2}, Memory: v1alpha1.MemorySpec{Size: q("8Gi")}, PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: q("20Gi")}}
	sr := &v1alpha1.Starrocks{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "lake", UID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", Generation: 1},
		Spec: v1alpha1.StarrocksSpec{StarrocksClassName: "default", Type: v1alpha1.TypeStandalone, Frontend: comp,
			Storage: &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
				Endpoint: "http://s3.storage.svc:9000", Bucket: "olap", CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"}}},
			Compute: &v1alpha1.ComputeSpec{CPU: v1alpha1.CPUSpec{Cores: 2}, Memory: v1alpha1.MemorySpec{Size: q("8Gi")}, Cache: v1alpha1.CacheVolumeSpec{Size: q("50Gi")},
				Autoscaling: &v1alpha1.ComputeAutoscaling{MinReplicas: 1, MaxReplicas: 6, TargetCPUUtilizationPercentage: ptrTo(int32(70))}},
		},
	}
	class := &v1alpha1.StarrocksClass{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "c1", Generation: 1}, Spec: v1alpha1.StarrocksClassSpec{
		Topology:       v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored}, DefaultTopology: v1alpha1.TopologyIgnored},
		SizingPolicies: []v1alpha1.SizingPolicy{{Cores: v1alpha1.CoreRange{Min: 1, Max: 8}, Memory: v1alpha1.MemoryRange{Min: q("4Gi"), Max: q("64Gi")}, CoreFractions: []int32{100}}},
		SharedData:     &v1alpha1.ClassSharedData{Allowed: true, MinReplicas: 1, MaxReplicas: 10, AutoscalingAllowed: true},
	}}
	out := desired.Compute(desired.Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class}, ClusterDomain: "cluster.local"})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	data, err := json.Marshal(out.Instances[0])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func ptrTo[T any](v T) *T { return &v }

// TestSharedDataAutoscalerOwnsTheCNCount: the hook writes the CN
// StatefulSet without replicas and an HPA; when it writes the StatefulSet
// again (another object of the instance changed), the count the autoscaler
// set stays, where a plain update would have reset it to 1.
func TestSharedDataAutoscalerOwnsTheCNCount(t *testing.T) {
	c := newCluster(t, []map[string]any{sharedDataEntry(t)})
	c.run(t)
	stsGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	hpaGVR := schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	_, err := c.fake.Resource(hpaGVR).Namespace("team-a").Get(t.Context(), "d8ms-sr-lake-cn", metav1.GetOptions{})
	require.NoError(t, err, "the CN autoscaler is written")
	sts, err := c.fake.Resource(stsGVR).Namespace("team-a").Get(t.Context(), "d8ms-sr-lake-cn", metav1.GetOptions{})
	require.NoError(t, err)
	_, found, _ := unstructured.NestedFieldNoCopy(sts.Object, "spec", "replicas")
	assert.False(t, found, "no count of the module's")

	// The autoscaler scales out.
	require.NoError(t, unstructured.SetNestedField(sts.Object, int64(5), "spec", "replicas"))
	_, err = c.fake.Resource(stsGVR).Namespace("team-a").Update(t.Context(), sts, metav1.UpdateOptions{})
	require.NoError(t, err)
	// Something else of the instance goes, so the hook writes its objects again.
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	require.NoError(t, c.fake.Resource(cms).Namespace("team-a").Delete(t.Context(), "d8ms-sr-lake-config", metav1.DeleteOptions{}))
	writes := c.run(t)
	require.NotEmpty(t, writes)
	sts, err = c.fake.Resource(stsGVR).Namespace("team-a").Get(t.Context(), "d8ms-sr-lake-cn", metav1.GetOptions{})
	require.NoError(t, err)
	n, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas")
	assert.Equal(t, int64(5), n, "the autoscaler's count stays (writes: %v)", writes)
}
