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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	kubeclient "github.com/flant/kube-client/client"
	htypes "github.com/flant/shell-operator/pkg/hook/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// One tenant never stalls the others, on a real kube-apiserver with
// kube-controller-manager (namespace deletion): tenant "quota" has a
// ResourceQuota that refuses its Secrets and its volume's growth, tenant
// "fat" inflated its Starrocks so close to etcd's limit that its own status
// cannot be written, tenants "held" (its Starrocks has a finalizer of the
// tenant's) and "gone" delete their namespaces. Tenant "good" gets its
// values, status and Secrets in the same runs, and every run succeeds.
func TestOneTenantNeverStallsTheOthers(t *testing.T) {
	op := startOperator(t)
	// kube-controller-manager runs for this test only: the other tests
	// make objects no controller may touch (a StatefulSet and its pod,
	// a namespace left terminating).
	cp := sharedControlPlane.cp
	require.NoError(t, cp.StartControllerManager())
	t.Cleanup(cp.StopControllerManager)
	client := op.client
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	tenants := []string{"good", "quota", "fat", "held", "gone"}
	for _, ns := range append([]string{"d8-managed-starrocks"}, tenants...) {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	srs := client.Dynamic().Resource(v1alpha1.StarrocksGVR)
	class := &unstructured.Unstructured{}
	require.NoError(t, json.Unmarshal([]byte(`{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"StarrocksClass","metadata":{"name":"default"},
		"spec":{"topology":{"allowedTopologies":["Ignored"],"defaultTopology":"Ignored"},"sizingPolicies":[{"cores":{"min":1,"max":8},"memory":{"min":"2Gi","max":"32Gi","step":"1Gi"},"coreFractions":[50,100]}]}}`), &class.Object))
	_, err := client.Dynamic().Resource(v1alpha1.StarrocksClassGVR).Create(ctx, class, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, ns := range tenants {
		sr := &unstructured.Unstructured{}
		require.NoError(t, json.Unmarshal([]byte(`{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"Starrocks","metadata":{"name":"db"},
			"spec":{"starrocksClassName":"default","frontend":{"cpu":{"cores":1},"memory":{"size":"2Gi"},"persistentVolumeClaim":{"size":"20Gi"}},
			"backend":{"cpu":{"cores":1},"memory":{"size":"4Gi"},"persistentVolumeClaim":{"size":"5Gi"}}}}`), &sr.Object))
		if ns == "held" {
			sr.SetFinalizers([]string{"tenant.example.com/hold"})
		}
		_, err := srs.Namespace(ns).Create(ctx, sr, metav1.CreateOptions{})
		require.NoError(t, err, ns)
	}

	// Tenant quota: its FE volume (bound, 10Gi, of a class allowing
	// expansion) may not grow, and no Secret may be created. The test
	// plays the quota controller (not run here): status.used as it counts.
	expandable := true
	_, err = client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "expandable"}, Provisioner: "example.com/none", AllowVolumeExpansion: &expandable}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, ns := range []string{"good", "quota"} {
		sc := "expandable"
		pvc, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "meta-d8ms-sr-db-0", Labels: map[string]string{
				"heritage": "deckhouse", "managed-services.deckhouse.io/managed-service-type": "starrocks", "app.kubernetes.io/instance": "db", "app.kubernetes.io/component": "frontend"}},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &sc, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}
		_, err = client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	hard := corev1.ResourceList{"count/secrets": resource.MustParse("0"), corev1.ResourceRequestsStorage: resource.MustParse("12Gi")}
	q, err := client.CoreV1().ResourceQuotas("quota").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "tight"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{})
	require.NoError(t, err)
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{"count/secrets": resource.MustParse("0"), corev1.ResourceRequestsStorage: resource.MustParse("10Gi")}}
	_, err = client.CoreV1().ResourceQuotas("quota").UpdateStatus(ctx, q, metav1.UpdateOptions{})
	require.NoError(t, err)

	// Tenant fat: its own labels take the Starrocks to the edge of what
	// etcd stores, so the module's status patch no longer fits.
	inflate(t, ctx, client, "fat", "db")

	status := func(ns string) v1alpha1.StarrocksStatus { return op.starrocks(ns, "db").Status }
	names := func() []string {
		var out []string
		for _, e := range op.entries() {
			out = append(out, e["namespace"].(string))
		}
		return out
	}

	_, values := op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	assert.ElementsMatch(t, tenants, names(), "every tenant gets its desired state in the same run")
	require.NoError(t, schemas(t).ValidateValues("managedStarrocks", values))
	assert.Equal(t, metav1.ConditionTrue, findCondition(status("good"), v1alpha1.ConditionConfigurationValid).Status, "the good tenant's status lands")
	assert.Empty(t, status("fat").Conditions, "fat's own status does not fit: refused for it alone")
	vr := findCondition(status("quota"), v1alpha1.ConditionVolumesResized)
	assert.Equal(t, "ExpansionRefused", vr.Reason)
	assert.Contains(t, vr.Message, "exceeded quota: tight")
	assert.Contains(t, vr.Message, "meta-d8ms-sr-db-0")
	goodPVC, err := client.CoreV1().PersistentVolumeClaims("good").Get(ctx, "meta-d8ms-sr-db-0", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "20Gi", goodPVC.Spec.Resources.Requests.Storage().String(), "the good tenant's volume grows in the same run")
	assert.True(t, hasEvent(t, ctx, client, "quota", "ExpansionRefused"), "an Event names the refused PVC")

	op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())
	for _, s := range []string{"d8ms-sr-db-credentials", "d8ms-sr-db-agent-credentials", "d8ms-sr-db-keystore"} {
		_, err := client.CoreV1().Secrets("good").Get(ctx, s, metav1.GetOptions{})
		assert.NoError(t, err, "the good tenant's %s", s)
	}
	list, err := client.CoreV1().Secrets("quota").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, s := range list.Items {
		assert.NotContains(t, s.Name, "d8ms-sr-db", "the quota refused it")
	}
	assert.True(t, hasEvent(t, ctx, client, "quota", "SecretRefused"), "a Warning Event names the refused Secret")

	// Two tenants delete their namespaces: "gone" goes entirely, "held"
	// stays terminating while its Starrocks' finalizer holds it.
	uids := map[string]types.UID{}
	for _, ns := range tenants {
		uids[ns] = op.starrocks(ns, "db").UID
	}
	for _, ns := range []string{"held", "gone"} {
		require.NoError(t, client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}))
	}
	require.Eventually(t, func() bool {
		_, err := client.CoreV1().Namespaces().Get(ctx, "gone", metav1.GetOptions{})
		held, herr := srs.Namespace("held").Get(ctx, "db", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && herr == nil && held.GetDeletionTimestamp() != nil
	}, 2*time.Minute, 200*time.Millisecond, "kube-controller-manager deletes namespace gone; held's Starrocks is being deleted")

	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	assert.ElementsMatch(t, []string{"good", "quota", "fat"}, names(), "an ending instance gets no desired state")
	for ns, kept := range map[string]bool{"good": true, "quota": true, "fat": true, "held": false, "gone": false} {
		_, err := client.CoreV1().ConfigMaps("d8-managed-starrocks").Get(ctx, "last-valid-"+string(uids[ns]), metav1.GetOptions{})
		if kept {
			assert.NoError(t, err, "%s keeps its memory", ns)
		} else {
			assert.True(t, apierrors.IsNotFound(err), "%s's memory is deleted when its namespace goes: %v", ns, err)
		}
	}
	op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())
	list, err = client.CoreV1().Secrets("held").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, s := range list.Items {
		assert.NotContains(t, s.Name, "d8ms-sr-db", "nothing is recreated in a namespace being deleted")
	}
	_, err = srs.Namespace("held").Get(ctx, "db", metav1.GetOptions{})
	assert.NoError(t, err, "the tenant's finalizer keeps its Starrocks; the module neither removes it nor fails on it")
}

// inflate adds labels to a Starrocks until etcd refuses the object, then
// backs off to the largest size it stores: any write that adds a few
// hundred bytes more is refused.
func inflate(t *testing.T, ctx context.Context, client *kubeclient.Client, ns, name string) {
	t.Helper()
	srs := client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace(ns)
	// A DNS-subdomain prefix of 253 characters and 63-character names and
	// values: about 390 bytes a label.
	seg := strings.Repeat("a", 63)
	prefix := seg + "." + seg + "." + seg + "." + strings.Repeat("a", 61)
	value := strings.Repeat("v", 63)
	n := 0
	add := func(count int) bool {
		labels := map[string]any{}
		for i := 0; i < count; i++ {
			labels[fmt.Sprintf("%s/l%062d", prefix, n+i)] = value
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
		require.NoError(t, err)
		if _, err := srs.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return false
		}
		n += count
		return true
	}
	for _, chunk := range []int{256, 32, 4, 1} {
		for add(chunk) {
		}
	}
	require.Greater(t, n*len(prefix+value), etcdMaxRequestBytes/3, "the Starrocks holds %d labels", n)
}

func hasEvent(t *testing.T, ctx context.Context, client *kubeclient.Client, ns, reason string) bool {
	t.Helper()
	list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, e := range list.Items {
		if e.Reason == reason && e.InvolvedObject.Kind == v1alpha1.StarrocksKind {
			return true
		}
	}
	return false
}
