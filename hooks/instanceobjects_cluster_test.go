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
	"testing"
	"time"

	"github.com/flant/addon-operator/pkg/utils"
	htypes "github.com/flant/shell-operator/pkg/hook/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// withImages adds what the instance templates need besides the instances.
func withImages(values utils.Values) utils.Values {
	values["global"].(map[string]any)["modulesImages"] = map[string]any{
		"registry": map[string]any{"base": "registry.example.com/managed-starrocks"},
		"digests":  map[string]any{"managedStarrocks": map[string]any{"agent": "sha256:aaaa", "starrocksFe": "sha256:cccc", "starrocksBe": "sha256:dddd"}},
	}
	return values
}

// The instanceobjects hook through the built binary (launched with its
// cluster's KUBECONFIG, kubeutil.HooksLauncher) and addon-operator's batch
// runner on a real kube-apiserver, with two tenants: what tenant A makes the
// API server refuse (an immutable ConfigMap with other data, a
// ResourceQuota, a StatefulSet re-created with another selector) is
// recorded and announced for A alone, B's objects are all written in the
// same run, and every run succeeds; what A changes in its objects (a
// NetworkPolicy, a PVC retention policy, ConfigMap data, a decoy Service, a
// stripped ownerReference) is restored on the next run.
func TestInstanceObjectsAgainstARealAPIServer(t *testing.T) {
	op := startOperator(t)
	client := op.client
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, ns := range []string{"d8-managed-starrocks", "team-a", "team-b"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	op.run("defaultclass/hook", htypes.BindingType("afterHelm"), startValues())
	for _, ns := range []string{"team-a", "team-b"} {
		for _, u := range parseObjects(t, fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: olap, namespace: %s}
spec:
  starrocksClassName: default
  frontend: {cpu: {cores: 1}, memory: {size: 2Gi}, persistentVolumeClaim: {size: 5Gi}}
  backend: {cpu: {cores: 1}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 5Gi}}
`, ns)) {
			gvr, err := client.GroupVersionResource(u.GetAPIVersion(), u.GetKind())
			require.NoError(t, err)
			_, err = client.Dynamic().Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
	_, values := op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	require.Len(t, op.entries(), 2)
	values = withImages(values)
	uidOf := map[string]string{}
	for _, ns := range []string{"team-a", "team-b"} {
		uidOf[ns] = string(op.starrocks(ns, "olap").UID)
	}

	type rec struct {
		Checksum string
		Objects  []struct{ Kind, Name, UID, Version string }
		Refused  *struct{ Object, Message string }
	}
	record := func(ns string) rec {
		t.Helper()
		cm, err := client.CoreV1().ConfigMaps("d8-managed-starrocks").Get(ctx, "applied-"+uidOf[ns], metav1.GetOptions{})
		require.NoError(t, err, "the record of %s", ns)
		var r rec
		require.NoError(t, json.Unmarshal([]byte(cm.Data["record.json"]), &r))
		return r
	}
	// versions are the resourceVersions of a namespace's instance objects.
	versions := func(ns string) map[string]string {
		t.Helper()
		out := map[string]string{}
		add := func(kind, name, rv string) { out[kind+" "+name] = rv }
		cms, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, o := range cms.Items {
			add("ConfigMap", o.Name, o.ResourceVersion)
		}
		svcs, err := client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, o := range svcs.Items {
			add("Service", o.Name, o.ResourceVersion)
		}
		stss, err := client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, o := range stss.Items {
			add("StatefulSet", o.Name, o.ResourceVersion)
		}
		nps, err := client.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, o := range nps.Items {
			add("NetworkPolicy", o.Name, o.ResourceVersion)
		}
		return out
	}
	refusedEvents := func(ns string) []corev1.Event {
		t.Helper()
		list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=ObjectRefused"})
		require.NoError(t, err)
		return list.Items
	}

	// Tenant A made its ConfigMap before the module could: immutable, with
	// other data. The module's update is refused.
	yes := true
	_, err := client.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-olap-config"}, Immutable: &yes, Data: map[string]string{"fe.conf": "mine"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values) // fails the test if any patch of the run fails
	r := record("team-a")
	require.NotNil(t, r.Refused, "A's record has the refusal")
	assert.Equal(t, "ConfigMap team-a/d8ms-sr-olap-config", r.Refused.Object)
	assert.Contains(t, r.Refused.Message, "immutable")
	assert.Empty(t, r.Checksum)
	_, err = client.AppsV1().StatefulSets("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	assert.Error(t, err, "no StatefulSet of A after its refused ConfigMap")
	b := record("team-b")
	assert.Nil(t, b.Refused)
	assert.NotEmpty(t, b.Checksum)
	assert.Len(t, b.Objects, 15, "B's objects are all written in the same run")
	// What the record keeps is what the real API server gives: a
	// generation (bumped by any change of the spec) for these kinds, a
	// resourceVersion (bumped by any change) for the others.
	generation := map[string]bool{"StatefulSet": true, "PodDisruptionBudget": true, "NetworkPolicy": true, "Certificate": true, "Issuer": true}
	for _, o := range b.Objects {
		assert.NotEmpty(t, o.UID, "%s %s", o.Kind, o.Name)
		if generation[o.Kind] {
			assert.Equal(t, "g1", o.Version, "%s %s", o.Kind, o.Name)
		} else {
			assert.Regexp(t, `^rv[0-9]+$`, o.Version, "%s %s", o.Kind, o.Name)
		}
	}
	// The instances hook runs on the record the refusal wrote: its
	// condition ObjectsApplied and its one Warning Event announce it. One
	// refused write, one Event.
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	events := refusedEvents("team-a")
	require.Len(t, events, 1, "one Event of one refusal: %+v", events)
	assert.Equal(t, "Warning", events[0].Type)
	assert.Equal(t, uidOf["team-a"], string(events[0].InvolvedObject.UID))
	assert.Contains(t, events[0].Message, "ConfigMap team-a/d8ms-sr-olap-config")
	assert.Contains(t, events[0].Message, "immutable")
	assert.Empty(t, refusedEvents("team-b"))

	// A swaps the ConfigMap for a ResourceQuota that allows no Service.
	require.NoError(t, client.CoreV1().ConfigMaps("team-a").Delete(ctx, "d8ms-sr-olap-config", metav1.DeleteOptions{}))
	_, err = client.CoreV1().ResourceQuotas("team-a").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-services"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/services": resource.MustParse("0")}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// No quota controller runs here: the quota's usage is set by hand, as it would.
	rq, err := client.CoreV1().ResourceQuotas("team-a").Get(ctx, "no-services", metav1.GetOptions{})
	require.NoError(t, err)
	rq.Status = corev1.ResourceQuotaStatus{Hard: rq.Spec.Hard, Used: corev1.ResourceList{"count/services": resource.MustParse("0")}}
	_, err = client.CoreV1().ResourceQuotas("team-a").UpdateStatus(ctx, rq, metav1.UpdateOptions{})
	require.NoError(t, err)
	bVersions := versions("team-b")
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	r = record("team-a")
	require.NotNil(t, r.Refused)
	assert.Contains(t, r.Refused.Object, "Service team-a/d8ms-sr-olap", "the first Service of A")
	assert.Contains(t, r.Refused.Message, "exceeded quota")
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	assert.Len(t, refusedEvents("team-a"), 2, "a new refusal, a new Event")
	assert.Equal(t, bVersions, versions("team-b"), "B is current: not written again")

	// The quota goes: A is written, and then nothing is.
	require.NoError(t, client.CoreV1().ResourceQuotas("team-a").Delete(ctx, "no-services", metav1.DeleteOptions{}))
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	r = record("team-a")
	assert.Nil(t, r.Refused)
	assert.NotEmpty(t, r.Checksum)
	aVersions := versions("team-a")
	res, _ := op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	assert.Empty(t, describe(res.ObjectPatcherOperations), "a steady cluster: no record written")
	assert.Equal(t, aVersions, versions("team-a"), "and no object")

	// A rewrites its NetworkPolicy, its BE StatefulSet's PVC retention and
	// its ConfigMap: the next run restores them.
	np, err := client.NetworkingV1().NetworkPolicies("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	wantNP := np.Spec.DeepCopy()
	np.Spec.Ingress = append(np.Spec.Ingress, np.Spec.Ingress[0])
	np.Spec.Ingress[len(np.Spec.Ingress)-1].From = nil // from anywhere
	_, err = client.NetworkingV1().NetworkPolicies("team-a").Update(ctx, np, metav1.UpdateOptions{})
	require.NoError(t, err)
	be, err := client.AppsV1().StatefulSets("team-a").Get(ctx, "d8ms-sr-olap-be", metav1.GetOptions{})
	require.NoError(t, err)
	wantRetention := be.Spec.PersistentVolumeClaimRetentionPolicy.DeepCopy()
	be.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	_, err = client.AppsV1().StatefulSets("team-a").Update(ctx, be, metav1.UpdateOptions{})
	require.NoError(t, err)
	cm, err := client.CoreV1().ConfigMaps("team-a").Get(ctx, "d8ms-sr-olap-config", metav1.GetOptions{})
	require.NoError(t, err)
	wantData := cm.Data
	cm.Data = map[string]string{"fe.conf": "mine"}
	_, err = client.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	bVersions = versions("team-b")
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	cm, err = client.CoreV1().ConfigMaps("team-a").Get(ctx, "d8ms-sr-olap-config", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, wantData, cm.Data, "the ConfigMap is restored")
	np, err = client.NetworkingV1().NetworkPolicies("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, *wantNP, np.Spec, "the NetworkPolicy is restored")
	be, err = client.AppsV1().StatefulSets("team-a").Get(ctx, "d8ms-sr-olap-be", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, wantRetention, be.Spec.PersistentVolumeClaimRetentionPolicy, "the retention policy is restored")
	assert.Equal(t, bVersions, versions("team-b"))
	aVersions = versions("team-a")
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	assert.Equal(t, aVersions, versions("team-a"), "restored, then left alone")

	// A deletes its client Service and leaves a decoy of the same name with
	// every label and annotation of the original (the render checksum
	// included), and strips the ownerReference of a PodDisruptionBudget:
	// both are restored.
	svc, err := client.CoreV1().Services("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	wantPorts := svc.Spec.Ports
	require.NoError(t, client.CoreV1().Services("team-a").Delete(ctx, svc.Name, metav1.DeleteOptions{}))
	_, err = client.CoreV1().Services("team-a").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Labels: svc.Labels, Annotations: svc.Annotations, OwnerReferences: svc.OwnerReferences},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "mine", Port: 80}}, Selector: map[string]string{"app": "mine"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pdb, err := client.PolicyV1().PodDisruptionBudgets("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	wantOwners := pdb.OwnerReferences
	pdb.OwnerReferences = nil
	_, err = client.PolicyV1().PodDisruptionBudgets("team-a").Update(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	svc, err = client.CoreV1().Services("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, wantPorts, svc.Spec.Ports, "the decoy Service is rewritten as rendered")
	pdb, err = client.PolicyV1().PodDisruptionBudgets("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, wantOwners, pdb.OwnerReferences, "the ownerReference is back")
	aVersions = versions("team-a")
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	assert.Equal(t, aVersions, versions("team-a"))

	// A re-creates its FE StatefulSet with another selector: the update is
	// refused (the selector is immutable), B is written in the same run
	// (a changed entry), and the run succeeds.
	fe, err := client.AppsV1().StatefulSets("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, client.AppsV1().StatefulSets("team-a").Delete(ctx, fe.Name, metav1.DeleteOptions{}))
	other := map[string]string{"app": "mine"}
	for k, v := range fe.Labels {
		other[k] = v
	}
	_, err = client.AppsV1().StatefulSets("team-a").Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: fe.Name, Labels: fe.Labels},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "mine"}}, ServiceName: fe.Spec.ServiceName,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: other}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, e := range op.entries() {
		e["configuration"].(map[string]any)["catalogTrashExpireSecond"] = 7200
		op.setEntry(e)
	}
	bVersions = versions("team-b")
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	r = record("team-a")
	require.NotNil(t, r.Refused)
	assert.Equal(t, "StatefulSet team-a/d8ms-sr-olap", r.Refused.Object)
	assert.Contains(t, r.Refused.Message, "spec")
	assert.NotEqual(t, bVersions["ConfigMap d8ms-sr-olap-config"], versions("team-b")["ConfigMap d8ms-sr-olap-config"], "B's changed entry is written in the same run")
	assert.NotEmpty(t, record("team-b").Checksum)
	assert.Nil(t, record("team-b").Refused)
}

// Pruning on a real kube-apiserver, through the built binary: the record of
// an older module version lists a ConfigMap and a NetworkPolicy the current
// templates do not render (copies of the instance's own, with its labels and
// ownerReference, as that version made them); the next run deletes exactly
// those. A tenant's look-alike (the same labels and ownerReference, in no
// record) and the instance's StatefulSets and Secrets stay.
func TestPruningAgainstARealAPIServer(t *testing.T) {
	op := startOperator(t)
	client := op.client
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, ns := range []string{"d8-managed-starrocks", "team-a"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	op.run("defaultclass/hook", htypes.BindingType("afterHelm"), startValues())
	for _, u := range parseObjects(t, `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: olap, namespace: team-a}
spec:
  starrocksClassName: default
  frontend: {cpu: {cores: 1}, memory: {size: 2Gi}, persistentVolumeClaim: {size: 5Gi}}
  backend: {cpu: {cores: 1}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 5Gi}}
`) {
		_, err := client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace("team-a").Create(ctx, u, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, values := op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	values = withImages(values)
	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	uid := string(op.starrocks("team-a", "olap").UID)

	// What the older version left: its objects and its record.
	recCM, err := client.CoreV1().ConfigMaps(shared.ModuleNamespace).Get(ctx, "applied-"+uid, metav1.GetOptions{})
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(recCM.Data["record.json"]), &rec))
	cfg, err := client.CoreV1().ConfigMaps("team-a").Get(ctx, "d8ms-sr-olap-config", metav1.GetOptions{})
	require.NoError(t, err)
	retired, err := client.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-olap-retired", Labels: cfg.Labels, OwnerReferences: cfg.OwnerReferences}, Data: map[string]string{"old": "version"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	np, err := client.NetworkingV1().NetworkPolicies("team-a").Get(ctx, "d8ms-sr-olap", metav1.GetOptions{})
	require.NoError(t, err)
	retiredNP, err := client.NetworkingV1().NetworkPolicies("team-a").Create(ctx, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-olap-retired", Labels: np.Labels, OwnerReferences: np.OwnerReferences}, Spec: np.Spec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	rec["checksum"] = "the-older-version"
	rec["objects"] = append(rec["objects"].([]any),
		map[string]any{"kind": "ConfigMap", "name": retired.Name, "uid": string(retired.UID), "version": "rv" + retired.ResourceVersion},
		map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "name": retiredNP.Name, "uid": string(retiredNP.UID), "version": "g1"},
		map[string]any{"kind": "StatefulSet", "name": "d8ms-sr-olap-be", "uid": "not-rendered-by-the-new-version", "version": "g1"})
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	recCM.Data["record.json"] = string(data)
	_, err = client.CoreV1().ConfigMaps(shared.ModuleNamespace).Update(ctx, recCM, metav1.UpdateOptions{})
	require.NoError(t, err)
	// The tenant's look-alike.
	_, err = client.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-olap-mine", Labels: cfg.Labels, OwnerReferences: cfg.OwnerReferences},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	op.run("instanceobjects/hook", htypes.OnKubernetesEvent, values)
	_, err = client.CoreV1().ConfigMaps("team-a").Get(ctx, retired.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the retired ConfigMap is pruned: %v", err)
	_, err = client.NetworkingV1().NetworkPolicies("team-a").Get(ctx, retiredNP.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the retired NetworkPolicy is pruned: %v", err)
	_, err = client.CoreV1().ConfigMaps("team-a").Get(ctx, "d8ms-sr-olap-mine", metav1.GetOptions{})
	assert.NoError(t, err, "the tenant's look-alike stays")
	for _, name := range []string{"d8ms-sr-olap", "d8ms-sr-olap-be"} {
		_, err = client.AppsV1().StatefulSets("team-a").Get(ctx, name, metav1.GetOptions{})
		assert.NoError(t, err, "StatefulSet %s stays", name)
	}
	recCM, err = client.CoreV1().ConfigMaps(shared.ModuleNamespace).Get(ctx, "applied-"+uid, metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, recCM.Data["record.json"], "retired")
	assert.NotContains(t, recCM.Data["record.json"], "the-older-version")
	assert.NotContains(t, recCM.Data["record.json"], `"refused"`)
}
