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

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func volumeInstance(ns, name, feSize, beSize string) string {
	return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: %s
  namespace: %s
spec:
  starrocksClassName: analytics
  type: Standalone
  frontend:
    cpu: {cores: 1}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: %s, storageClassName: expandable}
  backend:
    cpu: {cores: 2}
    memory: {size: 8Gi}
    persistentVolumeClaim: {size: %s, storageClassName: expandable}
`, name, ns, feSize, beSize)
}

// testGrowingVolumesExpandsThePVCs grows the volumes of a shared-nothing
// and of a shared-data instance, one after the other, on a private env
// (TestModuleEndToEnd's, after its own steps): each counts the module's
// failed runs (other tests' would count on a shared env), and both use a
// cluster-wide StorageClass that allows expansion.
func testGrowingVolumesExpandsThePVCs(t *testing.T, e *env) {
	expand := true
	immediate := storagev1.VolumeBindingImmediate
	if _, err := e.kube.StorageV1().StorageClasses().Create(context.Background(), &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: "expandable"},
		Provisioner:          "e2e.example.com/none",
		AllowVolumeExpansion: &expand,
		VolumeBindingMode:    &immediate,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create StorageClass: %v", err)
	}
	t.Run("BE and FE volumes", func(t *testing.T) { testGrowingAVolume(t, e.forTest(t)) })
	t.Run("CN cache", func(t *testing.T) { testGrowingTheCNCache(t, e.forTest(t)) })
}

// testGrowingAVolume grows both volumes of an instance whose BE PVC is
// bound (the test plays the provisioner and the PV binder) and whose FE PVC
// is not. The StatefulSets must keep applying with the size they were
// created with; the bound PVC is raised to the new size; the unbound one
// cannot be (the apiserver allows a resize only of a bound PVC) and
// VolumesResized says so.
func testGrowingAVolume(t *testing.T, e *env) {
	const ns, name = "team-v", "vol"
	ctx := context.Background()
	e.apply(volumeInstance(ns, name, "10Gi", "50Gi"))
	e.waitObjects(ns, name, 1, 1)

	fePVC, bePVC := "meta-d8ms-sr-"+name+"-0", "storage-d8ms-sr-"+name+"-be-0"
	for _, pvc := range []string{fePVC, bePVC} {
		e.eventually("PVC "+pvc+" created by the StatefulSet controller", func() (bool, string) {
			_, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
	e.bindPVC(ns, bePVC, "50Gi")
	e.waitCondition(ns, name, "VolumesResized", "True")

	// What the apiserver allows: raising the request of an unbound PVC is
	// refused, which is why the hook does not try.
	// As the platform, which the hook is: an admin is refused any change of
	// the PVC by label-objects.deckhouse.io first.
	_, err := e.platformKube.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, fePVC, types.MergePatchType,
		[]byte(`{"spec":{"resources":{"requests":{"storage":"20Gi"}}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Fatalf("resizing the unbound PVC %s: %v, want the apiserver to refuse it (the hook relies on that to skip it)", fePVC, err)
	}
	t.Logf("the apiserver refuses to resize an unbound PVC: %v", err)

	drainPassErrors(e)
	e.apply(volumeInstance(ns, name, "20Gi", "60Gi"))
	e.eventually("BE PVC raised to 60Gi", func() (bool, string) {
		got := e.pvcRequest(ns, bePVC)
		return got == "60Gi", "requests " + got
	})
	e.eventually("VolumesResized explains the unbound FE PVC", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "VolumesResized")
		return status == "False" && reason == "ExpansionBlocked" && strings.Contains(message, "PVC "+fePVC+" requests 10Gi and is not bound") &&
				strings.Contains(message, "PVC "+bePVC+" requests 60Gi, its capacity is still 50Gi"),
			fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	if got := e.pvcRequest(ns, fePVC); got != "10Gi" {
		t.Errorf("unbound FE PVC requests %s, want the 10Gi it was created with", got)
	}
	time.Sleep(time.Second) // a few more passes, each applying the StatefulSets
	for sts, want := range map[string]string{"d8ms-sr-" + name: "10Gi", "d8ms-sr-" + name + "-be": "50Gi"} {
		if got := e.claimTemplateSize(ns, sts); got != want {
			t.Errorf("StatefulSet %s volumeClaimTemplates size %s, want the %s it was created with", sts, got, want)
		}
	}
	if n := e.moduleErrors(); n > e.errorsSeen {
		t.Fatalf("%v hook or module runs failed after the volumes grew (addon-operator's log: %s)", n-e.errorsSeen, e.ao.LogPath)
	}

	// The resizer finished (the test plays it): the BE volume is at size.
	e.setPVCCapacity(ns, bePVC, "60Gi")
	e.eventually("VolumesResized names only the FE PVC", func() (bool, string) {
		_, _, message := e.condition(ns, name, "VolumesResized")
		return !strings.Contains(message, bePVC) && strings.Contains(message, fePVC), message
	})
}

// drainPassErrors forgets the module's failed runs so far: only later ones
// count.
func drainPassErrors(e *env) {
	e.errorsSeen = e.moduleErrors()
}

// bindPVC plays the provisioner and the PV controller (the test control
// plane does not run the binder): a PV for the claim, and the claim's
// status Bound with the PV's capacity, as the binder writes it.
func (e *env) bindPVC(namespace, pvc, size string) {
	e.t.Helper()
	ctx := context.Background()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + pvc},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              "expandable",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: namespace, Name: pvc},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pvc}},
		},
	}
	if _, err := e.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create PV for %s: %v", pvc, err)
	}
	patch := fmt.Sprintf(`{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":%q}}}`, size)
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Patch(ctx, pvc, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatalf("bind %s: %v", pvc, err)
	}
}

func (e *env) setPVCCapacity(namespace, pvc, size string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"status":{"capacity":{"storage":%q}}}`, size)
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Patch(context.Background(), pvc, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatalf("set capacity of %s: %v", pvc, err)
	}
}

func (e *env) pvcRequest(namespace, pvc string) string {
	e.t.Helper()
	c, err := e.kube.CoreV1().PersistentVolumeClaims(namespace).Get(context.Background(), pvc, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	q := c.Spec.Resources.Requests[corev1.ResourceStorage]
	return q.String()
}

func (e *env) claimTemplateSize(namespace, sts string) string {
	e.t.Helper()
	obj, err := e.get("StatefulSet", namespace, sts)
	if err != nil {
		e.t.Fatal(err)
	}
	tpls, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
	if len(tpls) != 1 {
		e.t.Fatalf("StatefulSet %s has %d volumeClaimTemplates", sts, len(tpls))
	}
	size, _, _ := unstructured.NestedString(tpls[0].(map[string]any), "spec", "resources", "requests", "storage")
	return size
}

// testGrowingTheCNCache: spec.compute.cache.size of a shared-data instance
// grows like a BE volume: the CN StatefulSet keeps applying with the size
// it was created with, every bound cache PVC is raised, and a smaller size
// is refused naming the field.
func testGrowingTheCNCache(t *testing.T, e *env) {
	const ns, name = "team-cv", "lake"
	ctx := context.Background()
	lake := func(cache string) string {
		return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: %s, namespace: %s}
spec:
  starrocksClassName: analytics
  type: Standalone
  frontend: {cpu: {cores: 1}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  storage:
    mode: ObjectStorage
    objectStorage: {endpoint: "https://s3.example.com", bucket: team-data, prefix: sr, credentialsSecretRef: {name: s3-keys}}
  compute: {cpu: {cores: 2}, memory: {size: 4Gi}, replicas: 2, cache: {size: %s, storageClassName: expandable}}
`, name, ns, cache)
	}
	e.apply(lake("20Gi"))
	cn := "d8ms-sr-" + name + "-cn"
	pvcs := []string{"cache-" + cn + "-0", "cache-" + cn + "-1"}
	for _, pvc := range pvcs {
		e.eventually("PVC "+pvc+" created by the StatefulSet controller", func() (bool, string) {
			_, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
		e.bindPVC(ns, pvc, "20Gi")
	}
	e.eventually("VolumesResized True", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "VolumesResized")
		return status == "True", fmt.Sprintf("%s %s: %s", status, reason, message)
	})

	drainPassErrors(e)
	e.apply(lake("30Gi"))
	for _, pvc := range pvcs {
		e.eventually("cache PVC "+pvc+" raised to 30Gi", func() (bool, string) {
			got := e.pvcRequest(ns, pvc)
			return got == "30Gi", "requests " + got
		})
	}
	e.eventually("VolumesResized says the caches are being expanded", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "VolumesResized")
		return status == "False" && reason == "ExpansionInProgress" && strings.Contains(message, "PVC "+pvcs[1]+" requests 30Gi, its capacity is still 20Gi"),
			fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	time.Sleep(time.Second) // a few more passes, each applying the StatefulSets
	if got := e.claimTemplateSize(ns, cn); got != "20Gi" {
		t.Errorf("CN StatefulSet volumeClaimTemplates size %s, want the 20Gi it was created with", got)
	}
	if n := e.moduleErrors(); n > e.errorsSeen {
		t.Fatalf("%v hook or module runs failed after the cache grew (addon-operator's log: %s)", n-e.errorsSeen, e.ao.LogPath)
	}
	if _, _, message := e.condition(ns, name, "ObjectsApplied"); strings.Contains(message, "refused") {
		t.Errorf("ObjectsApplied: %s", message)
	}

	_, err := e.tryApply(lake("10Gi"))
	if err == nil || !strings.Contains(err.Error(), "compute.cache.size") || !strings.Contains(err.Error(), "shrink") {
		t.Fatalf("shrinking the cache: %v, want a refusal naming compute.cache.size", err)
	}
	t.Logf("a smaller cache is refused: %v", err)
}
