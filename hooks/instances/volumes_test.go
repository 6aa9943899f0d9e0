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
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func TestPlanVolumesGrowsOnlyWhatKubernetesCanExpand(t *testing.T) {
	entry := &desired.Instance{
		Frontend: desired.Frontend{Storage: desired.Storage{Size: "10Gi"}},
		Backend:  desired.Backend{Storage: desired.Storage{Size: "60Gi"}},
	}
	pvc := func(name, component, sc, requested, capacity, phase string) PVCSnap {
		return PVCSnap{Namespace: "team", Name: name, Instance: "olap", Component: component, StorageClassName: sc, Requested: requested, Capacity: capacity, Phase: phase}
	}
	expandable := map[string]bool{"fast": true, "fixed": false}
	for _, tt := range []struct {
		name        string
		pvcs        []PVCSnap
		wantPatches []VolumeExpansion
		wantOK      bool
		wantReason  string
		wantInMsg   string
	}{
		{"nothing to do at the desired size", []PVCSnap{pvc("meta-0", "frontend", "fast", "10Gi", "10Gi", "Bound"), pvc("storage-0", "backend", "fast", "60Gi", "60Gi", "Bound")},
			nil, true, ReasonVolumesAtDesiredSize, "Every PVC"},
		{"a bound PVC of an expandable class below the spec is raised", []PVCSnap{pvc("storage-0", "backend", "fast", "50Gi", "50Gi", "Bound")},
			[]VolumeExpansion{{Namespace: "team", Name: "storage-0", Size: "60Gi"}}, false, ReasonExpansionInProgress, "PVC storage-0: request raised from 50Gi to 60Gi"},
		{"a bigger PVC is never shrunk", []PVCSnap{pvc("storage-0", "backend", "fast", "80Gi", "80Gi", "Bound")},
			nil, true, ReasonVolumesAtDesiredSize, "Every PVC"},
		{"the same size in other units is not a change", []PVCSnap{pvc("meta-0", "frontend", "fast", "10240Mi", "10240Mi", "Bound")},
			nil, true, ReasonVolumesAtDesiredSize, "Every PVC"},
		{"an unbound PVC is not patched: the apiserver forbids it", []PVCSnap{pvc("storage-0", "backend", "fast", "50Gi", "", "Pending")},
			nil, false, ReasonExpansionBlocked, "PVC storage-0 requests 50Gi and is not bound (phase Pending)"},
		{"a class without allowVolumeExpansion is named", []PVCSnap{pvc("storage-0", "backend", "fixed", "50Gi", "50Gi", "Bound")},
			nil, false, ReasonExpansionBlocked, `StorageClass "fixed" does not allow volume expansion`},
		{"an unknown class blocks as well", []PVCSnap{pvc("storage-0", "backend", "gone", "50Gi", "50Gi", "Bound")},
			nil, false, ReasonExpansionBlocked, `StorageClass "gone"`},
		{"a raised request whose capacity lags is still in progress", []PVCSnap{pvc("storage-0", "backend", "fast", "60Gi", "50Gi", "Bound")},
			nil, false, ReasonExpansionInProgress, "PVC storage-0 requests 60Gi, its capacity is still 50Gi"},
		{"a blocked PVC wins over one in progress, both are named", []PVCSnap{pvc("storage-1", "backend", "fast", "50Gi", "", "Pending"), pvc("storage-0", "backend", "fast", "50Gi", "50Gi", "Bound")},
			[]VolumeExpansion{{Namespace: "team", Name: "storage-0", Size: "60Gi"}}, false, ReasonExpansionBlocked, "Being expanded: PVC storage-0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			patches, v := planVolumes(entry, tt.pvcs, expandable)
			assert.Equal(t, tt.wantPatches, patches)
			assert.Equal(t, tt.wantOK, v.OK)
			assert.Equal(t, tt.wantReason, v.Reason)
			assert.Contains(t, v.Message, tt.wantInMsg)
		})
	}
}

// grownObjectsYAML are the objects of an instance created with 10Gi FE and
// 20Gi BE volumes, as the StatefulSet controller and the PV binder leave them.
func grownObjectsYAML(name, storageClass string, revision int) string {
	sts := func(component, suffix, claim, size string) string {
		return fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-%[1]s%[2]s
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s, app.kubernetes.io/component: %[3]s}
spec:
  replicas: 1
  volumeClaimTemplates:
    - metadata: {name: %[4]s}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: %[5]s}}}
status: {readyReplicas: 1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %[4]s-d8ms-sr-%[1]s%[2]s-0
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s, app.kubernetes.io/component: %[3]s}
spec: {storageClassName: %[6]s, accessModes: [ReadWriteOnce], resources: {requests: {storage: %[5]s}}}
status: {phase: Bound, capacity: {storage: %[5]s}}
`, name, suffix, component, claim, size, storageClass)
	}
	return sts("frontend", "", "meta", "10Gi") + "---" + sts("backend", "-be", "storage", "20Gi") + fmt.Sprintf(`---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: expandable}
provisioner: example.com/none
allowVolumeExpansion: true
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: d8ms-sr-%[1]s
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s}
status:
  revision: %[2]d
  notAfter: "2027-03-01T00:00:00Z"
  conditions: [{type: Ready, status: "True", reason: Ready, message: Certificate is up to date and has not expired}]
`, name, revision)
}

func pvcRequest(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	require.NotNil(t, u)
	v, _, _ := unstructured.NestedString(u.Object, "spec", "resources", "requests", "storage")
	return v
}

func TestHookExpandsGrownVolumesAndKeepsTheTemplateSize(t *testing.T) {
	grown := strings.Replace(starrocksYAML("olap", 2, 2, 1024), "persistentVolumeClaim: {size: 20Gi}", "persistentVolumeClaim: {size: 30Gi}", 1)
	require.Contains(t, grown, "size: 30Gi")

	t.Run("an expandable class: the BE PVC is raised, the FE PVC is left", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + grown + "---" + grownObjectsYAML("olap", "expandable", 1))
		f.RunHook()
		require.NoError(t, f.HookError())

		e := entriesOf(t, f)[0]
		assert.Equal(t, "30Gi", e.Get("backend.storage.size").String())
		assert.Equal(t, "20Gi", e.Get("backend.storage.templateSize").String(), "the StatefulSet keeps the size it was created with")
		assert.Equal(t, "10Gi", e.Get("frontend.storage.templateSize").String())
		assert.Equal(t, "30Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", "storage-d8ms-sr-olap-be-0")))
		assert.Equal(t, "10Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", "meta-d8ms-sr-olap-0")))

		s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"False", ReasonExpansionInProgress}, []string{s, r})
		assert.Contains(t, m, "PVC storage-d8ms-sr-olap-be-0: request raised from 20Gi to 30Gi")
	})
	t.Run("a class without expansion: nothing is patched and the status says why", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + grown + "---" + grownObjectsYAML("olap", "standard", 1))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Equal(t, "20Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", "storage-d8ms-sr-olap-be-0")))
		s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"False", ReasonExpansionBlocked}, []string{s, r})
		assert.Contains(t, m, `StorageClass "standard" does not allow volume expansion`)
	})
	t.Run("at the desired size: no PVC patch and the condition is True", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + grownObjectsYAML("olap", "expandable", 1))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, written(f, "patch", "persistentvolumeclaims"), "no PVC patch on an instance at its size")
		s, r, _ := condition(statusOf(t, f, "olap"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"True", ReasonVolumesAtDesiredSize}, []string{s, r})
	})
}

func TestHookPassesTheCertificateRevisionToTheValues(t *testing.T) {
	for _, tt := range []struct {
		name     string
		objects  string
		revision int64
	}{
		{"no Certificate yet: 1", "", 1},
		{"the first issuance: 1", "---" + grownObjectsYAML("olap", "expandable", 1), 1},
		{"a renewal: its revision", "---" + grownObjectsYAML("olap", "expandable", 2), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024) + tt.objects)
			f.RunHook()
			require.NoError(t, f.HookError())
			assert.Equal(t, tt.revision, entriesOf(t, f)[0].Get("tls.certificateRevision").Int())
		})
	}
}

// sharedDataYAML is the class allowing shared-data instances and the
// shared-data instance sd with 3 CNs whose cache volumes are cacheSize.
func sharedDataYAML(cacheSize string) string {
	// Its own UID: the hooks compile a class once per UID and generation.
	class := strings.Replace(classYAML, "uid: class-uid,", "uid: class-uid-sd,", 1)
	return strings.Replace(class, "  overridableConfiguration:", "  sharedData: {allowed: true, minReplicas: 1, maxReplicas: 5}\n  overridableConfiguration:", 1) + `---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: sd, namespace: team, uid: 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0, generation: 1}
spec:
  starrocksClassName: default
  type: Standalone
  frontend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  storage:
    mode: ObjectStorage
    objectStorage: {endpoint: "https://s3.example.com", bucket: team-data, prefix: sr, credentialsSecretRef: {name: s3-keys}}
  compute: {cpu: {cores: 2}, memory: {size: 4Gi}, replicas: 3, cache: {size: ` + cacheSize + `}}
  configuration: {streamingLoadMaxMb: 1024}
`
}

// cnCacheObjectsYAML is the CN StatefulSet of sd created with 50Gi cache
// volumes, and its 3 bound cache PVCs.
func cnCacheObjectsYAML(storageClass string) string {
	out := `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-sd-cn
  namespace: team
  uid: sts-uid-sd-cn
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: sd, app.kubernetes.io/component: compute}
spec:
  replicas: 3
  volumeClaimTemplates:
    - metadata: {name: cache}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
status: {readyReplicas: 3}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: expandable}
provisioner: example.com/none
allowVolumeExpansion: true
`
	for i := range 3 {
		out += fmt.Sprintf(`---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: cache-d8ms-sr-sd-cn-%d
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: sd, app.kubernetes.io/component: compute}
spec: {storageClassName: %s, accessModes: [ReadWriteOnce], resources: {requests: {storage: 50Gi}}}
status: {phase: Bound, capacity: {storage: 50Gi}}
`, i, storageClass)
	}
	return out
}

// TestHookExpandsGrownCNCaches: spec.compute.cache.size grown raises the
// request of every CN cache PVC, the CN StatefulSet keeps the size it was
// created with (the apiserver refuses a change of volumeClaimTemplates),
// and VolumesResized names the PVCs as for FE and BE volumes.
func TestHookExpandsGrownCNCaches(t *testing.T) {
	t.Run("an expandable class: every cache PVC is raised", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(sharedDataYAML("80Gi") + "---" + cnCacheObjectsYAML("expandable"))
		f.RunHook()
		require.NoError(t, f.HookError())
		entries := entriesOf(t, f)
		require.Len(t, entries, 1, "%+v", statusOf(t, f, "sd").Conditions)
		e := entries[0]
		assert.Equal(t, "80Gi", e.Get("compute.cache.size").String())
		assert.Equal(t, "50Gi", e.Get("compute.cache.templateSize").String(), "the CN StatefulSet keeps the size it was created with")
		for i := range 3 {
			assert.Equal(t, "80Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", fmt.Sprintf("cache-d8ms-sr-sd-cn-%d", i))))
		}
		s, r, m := condition(statusOf(t, f, "sd"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"False", ReasonExpansionInProgress}, []string{s, r})
		assert.Contains(t, m, "PVC cache-d8ms-sr-sd-cn-2: request raised from 50Gi to 80Gi")
	})
	t.Run("a class without expansion: nothing is patched and the status says why", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(sharedDataYAML("80Gi") + "---" + cnCacheObjectsYAML("standard"))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Equal(t, "50Gi", pvcRequest(t, f.KubernetesResource("PersistentVolumeClaim", "team", "cache-d8ms-sr-sd-cn-0")))
		s, r, m := condition(statusOf(t, f, "sd"), v1alpha1.ConditionVolumesResized)
		assert.Equal(t, []string{"False", ReasonExpansionBlocked}, []string{s, r})
		assert.Contains(t, m, `PVC cache-d8ms-sr-sd-cn-0 requests 50Gi, but its StorageClass "standard" does not allow volume expansion`)
	})
	t.Run("at the created size: no PVC patch", func(t *testing.T) {
		f := newHook(t)
		f.KubeStateSet(sharedDataYAML("50Gi") + "---" + cnCacheObjectsYAML("expandable"))
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, written(f, "patch", "persistentvolumeclaims"))
		assert.Equal(t, "50Gi", entriesOf(t, f)[0].Get("compute.cache.templateSize").String())
	})
}
