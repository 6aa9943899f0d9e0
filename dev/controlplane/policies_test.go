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

package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

func clientFor(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// The policies refuse what Deckhouse's refuse, to whom Deckhouse's refuse
// it, and let the platform's own identities through: Deckhouse's service
// account, and the StatefulSet controller making the PVCs of a
// volumeClaimTemplate labelled heritage: deckhouse.
func platformPoliciesRefuseTenantsAndLetThePlatformThrough(t *testing.T, cp *controlplane.ControlPlane) {
	ctx := context.Background()
	admin := clientFor(t, cp.RESTConfig())
	if err := controlplane.EnsureServiceAccount(ctx, cp.RESTConfig(), "d8-system", "deckhouse", "cluster-admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "tenant"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager fills the aggregated role edit after it
	// starts.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		edit, err := admin.RbacV1().ClusterRoles().Get(ctx, "edit", metav1.GetOptions{})
		if err == nil && len(edit.Rules) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClusterRole edit not aggregated in 60s: %v", err)
		}
	}
	if err := controlplane.InstallPlatformPolicies(ctx, cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}

	deckhouseCfg, err := cp.ServiceAccountConfig(ctx, "d8-system", "deckhouse")
	if err != nil {
		t.Fatal(err)
	}
	deckhouse := clientFor(t, deckhouseCfg)
	review, err := deckhouse.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != "system:serviceaccount:d8-system:deckhouse" {
		t.Fatalf("ServiceAccountConfig authenticates as %q", got)
	}
	tenant := clientFor(t, cp.UserConfig("tenant"))

	labelled := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"heritage": "deckhouse"}}, Data: map[string]string{"k": "v"}}
	}
	if _, err := deckhouse.CoreV1().ConfigMaps("team-a").Create(ctx, labelled("module-object"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("Deckhouse's service account creates a heritage object: %v", err)
	}
	if _, err := deckhouse.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "d8-some-module"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Deckhouse's service account creates a d8-* namespace: %v", err)
	}

	// refused wants a refusal by one of the policies: where two refuse the
	// same request, the API server names whichever it evaluated first.
	refused := func(what string, err error, policies ...string) {
		t.Helper()
		for _, policy := range policies {
			if apierrors.IsForbidden(err) && strings.Contains(err.Error(), policy) {
				return
			}
		}
		t.Errorf("tenant %s: got %v, want a refusal by %s", what, err, strings.Join(policies, " or "))
	}
	_, err = tenant.CoreV1().ConfigMaps("team-a").Create(ctx, labelled("forged"), metav1.CreateOptions{})
	refused("creates a heritage object", err, "label-objects.deckhouse.io", "deny-set-heritage-label.deckhouse.io")
	cm, err := tenant.CoreV1().ConfigMaps("team-a").Get(ctx, "module-object", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("tenant reads the module's object: %v", err)
	}
	cm.Data["k"] = "changed"
	_, err = tenant.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{})
	refused("updates a heritage object", err, "label-objects.deckhouse.io")
	err = tenant.CoreV1().ConfigMaps("team-a").Delete(ctx, "module-object", metav1.DeleteOptions{})
	refused("deletes a heritage object", err, "label-objects.deckhouse.io")
	_, err = tenant.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-forged"}}, metav1.CreateOptions{})
	refused("creates a d8ms-* object", err, "d8ms-prefix.deckhouse.io")
	// Tenants' own objects stay theirs.
	if _, err := tenant.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "own"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("tenant creates its own ConfigMap: %v", err)
	}
	_, err = clientFor(t, cp.UserConfig("someone", "system:masters")).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-mine"}}, metav1.CreateOptions{})
	refused("(even a cluster-admin) creates a kube-* namespace", err, "system-ns.deckhouse.io")

	// A StatefulSet whose volumeClaimTemplate carries heritage: deckhouse,
	// as the module renders it: the StatefulSet controller (its own
	// service account in kube-system) still makes the PVC.
	replicas := int32(1)
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Labels: map[string]string{"heritage": "deckhouse"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"heritage": "deckhouse"}},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			}},
		},
	}
	if _, err := deckhouse.AppsV1().StatefulSets("team-a").Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pvc, err := admin.CoreV1().PersistentVolumeClaims("team-a").Get(ctx, "data-db-0", metav1.GetOptions{})
		if err == nil {
			if pvc.Labels["heritage"] != "deckhouse" {
				t.Errorf("PVC labels %v, want heritage: deckhouse from the template", pvc.Labels)
			}
			break
		}
		if time.Now().After(deadline) {
			events, _ := admin.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{})
			var msgs []string
			for _, e := range events.Items {
				msgs = append(msgs, e.Reason+": "+e.Message)
			}
			t.Fatalf("the StatefulSet controller made no PVC in 60s (%v); events: %s", err, strings.Join(msgs, "; "))
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The cluster admin (the control plane's superuser, system:masters) is
	// no one the policies exclude, as a Deckhouse cluster's admin is not:
	// it may not delete the PVC, until the platform gives it the delete
	// bypass; it may restart the workload, and nothing more under the
	// restart.
	err = admin.CoreV1().PersistentVolumeClaims("team-a").Delete(ctx, "data-db-0", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "label-objects.deckhouse.io") {
		t.Errorf("the cluster admin deletes a heritage PVC: got %v, want a refusal by label-objects.deckhouse.io", err)
	}
	bypass := []byte(`{"metadata":{"labels":{"security.deckhouse.io/heritage-bypass":"delete"}}}`)
	_, err = admin.CoreV1().PersistentVolumeClaims("team-a").Patch(ctx, "data-db-0", types.MergePatchType, bypass, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the cluster admin sets the bypass label itself: got %v, want a refusal", err)
	}
	if _, err := deckhouse.CoreV1().PersistentVolumeClaims("team-a").Patch(ctx, "data-db-0", types.MergePatchType, bypass, metav1.PatchOptions{}); err != nil {
		t.Fatalf("the platform sets the bypass label: %v", err)
	}
	if err := admin.CoreV1().PersistentVolumeClaims("team-a").Delete(ctx, "data-db-0", metav1.DeleteOptions{}); err != nil {
		t.Errorf("the cluster admin deletes a PVC the platform released: %v", err)
	}
	restart := []byte(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-05T12:00:00Z"}}}}}`)
	if _, err := admin.AppsV1().StatefulSets("team-a").Patch(ctx, "db", types.StrategicMergePatchType, restart, metav1.PatchOptions{}); err != nil {
		t.Errorf("the cluster admin restarts a heritage StatefulSet: %v", err)
	}
	smuggle := []byte(`{"spec":{"replicas":0,"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-05T13:00:00Z"}}}}}`)
	_, err = admin.AppsV1().StatefulSets("team-a").Patch(ctx, "db", types.StrategicMergePatchType, smuggle, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "label-objects.deckhouse.io") {
		t.Errorf("the cluster admin scales a heritage StatefulSet under a restart: got %v, want a refusal by label-objects.deckhouse.io", err)
	}
}
