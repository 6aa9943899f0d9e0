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
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// platformPolicies are the names a refusal by Deckhouse's policies
// carries (dev/controlplane/policies/deckhouse.yaml).
var platformPolicies = []string{"label-objects.deckhouse.io", "deny-set-heritage-label.deckhouse.io", "d8ms-prefix.deckhouse.io"}

func refusedByPolicy(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	for _, p := range platformPolicies {
		if strings.Contains(err.Error(), p) {
			return true
		}
	}
	return false
}

// TestUnderDeckhousePlatformPolicies runs an instance from the tenant's
// apply to Available under Deckhouse's admission policies, with every
// party as the identity it has in a Deckhouse cluster: the tenant a user
// with edit rights in its namespace, the hooks Deckhouse's service
// account, the agent its instance's service account. The tenant cannot
// create, change or delete what the module made (heritage: deckhouse);
// the agent's own writes pass; the module is refused nothing.
func TestUnderDeckhousePlatformPolicies(t *testing.T) {
	t.Parallel()
	const ns, name = "team-p", "olap"
	e := sharedEnv(t, withWebhook)
	e.apply(testClass)
	tenantKube, tenantDyn := e.tenant(ns)
	ctx := context.Background()

	sr := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(instance(ns, name, "Standalone", "")), &sr.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := tenantDyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Create(ctx, sr, metav1.CreateOptions{FieldManager: tenantUser}); err != nil {
		t.Fatalf("the tenant orders an instance: %v", err)
	}
	e.waitObjects(ns, name, 1, 1)
	fe, be := "d8ms-sr-"+name, "d8ms-sr-"+name+"-be"
	var pvc *corev1.PersistentVolumeClaim
	e.eventually("the FE's metadata PVC, made by the StatefulSet controller from a labelled volumeClaimTemplate", func() (bool, string) {
		var err error
		pvc, err = e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "meta-"+fe+"-0", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	if pvc.Labels["heritage"] != "deckhouse" {
		t.Fatalf("PVC %s labels %v: want heritage: deckhouse", pvc.Name, pvc.Labels)
	}

	// The pods go without heritage: the agent writes its report on them.
	for _, pod := range []string{fe + "-0", be + "-0"} {
		var labels map[string]string
		e.eventually("pod "+pod, func() (bool, string) {
			p, err := e.kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err == nil {
				labels = p.Labels
			}
			return err == nil, fmt.Sprint(err)
		})
		if _, has := labels["heritage"]; has {
			t.Errorf("pod %s labels %v: a pod the agent writes to must not carry heritage", pod, labels)
		}
	}

	// The bootstrap path: the agent reports as its service account, the
	// kubelet and cert-manager (the control plane's admin) mark what they
	// own ready.
	e.reportAgent(ns, fe+"-0", agentconfig.Status{Accounts: &agentconfig.AccountsStatus{Ready: true}})
	e.waitCondition(ns, name, "AccountsReady", "True")
	e.markPodsReady(ns, fe, 1)
	e.markPodsReady(ns, be, 1)
	e.markCertificateReady(ns, fe)
	e.reportAgentTLS(ns, fe+"-0")
	e.waitCondition(ns, name, "Available", "True")
	e.waitCondition(ns, name, "TLSReady", "True")

	// What the module made carries heritage: deckhouse; the tenant may
	// read it, not change it.
	labelled := metav1.ListOptions{LabelSelector: "heritage=deckhouse,managed-services.deckhouse.io/managed-service-name=" + name}
	secrets, err := tenantKube.CoreV1().Secrets(ns).List(ctx, labelled)
	if err != nil || len(secrets.Items) == 0 {
		t.Fatalf("the module's labelled Secrets, as the tenant lists them: %v, %v", secrets, err)
	}
	merge := []byte(`{"metadata":{"labels":{"tampered":"yes"}}}`)
	for _, attempt := range []struct {
		what string
		do   func() error
	}{
		{"change the instance's credentials Secret", func() error {
			_, err := tenantKube.CoreV1().Secrets(ns).Patch(ctx, fe+"-credentials", types.MergePatchType, []byte(`{"stringData":{"password":"mine"}}`), metav1.PatchOptions{})
			return err
		}},
		{"delete the agent's credentials", func() error {
			return tenantKube.CoreV1().Secrets(ns).Delete(ctx, fe+"-agent-credentials", metav1.DeleteOptions{})
		}},
		{"change the FE StatefulSet", func() error {
			_, err := tenantKube.AppsV1().StatefulSets(ns).Patch(ctx, fe, types.MergePatchType, merge, metav1.PatchOptions{})
			return err
		}},
		{"delete the BE StatefulSet", func() error {
			return tenantKube.AppsV1().StatefulSets(ns).Delete(ctx, be, metav1.DeleteOptions{})
		}},
		{"change the agent's configuration", func() error {
			_, err := tenantKube.CoreV1().ConfigMaps(ns).Patch(ctx, fe+"-config", types.MergePatchType, merge, metav1.PatchOptions{})
			return err
		}},
		{"delete the client Service", func() error {
			return tenantKube.CoreV1().Services(ns).Delete(ctx, fe, metav1.DeleteOptions{})
		}},
		// The PVC's name is not d8ms-*: only its heritage label guards it.
		{"delete the FE's metadata volume", func() error {
			return tenantKube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, pvc.Name, metav1.DeleteOptions{})
		}},
		{"label an object of its own as Deckhouse's", func() error {
			_, err := tenantKube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "forged",
				Labels: map[string]string{"heritage": "deckhouse", "managed-services.deckhouse.io/managed-service-name": name}}}, metav1.CreateOptions{})
			return err
		}},
		{"write the agent's report on the FE pod", func() error {
			_, err := tenantKube.CoreV1().Pods(ns).Patch(ctx, fe+"-0", types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"`+agentconfig.StatusAnnotation+`":"{}"}}}`), metav1.PatchOptions{})
			return err
		}},
	} {
		if err := attempt.do(); !refusedByPolicy(err) {
			t.Errorf("the tenant tries to %s: got %v, want a refusal by Deckhouse's policies", attempt.what, err)
		}
	}
	// The tenant's own objects stay its own.
	if _, err := tenantKube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-settings"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("the tenant creates a ConfigMap of its own: %v", err)
	}
	if _, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the FE's volume after the tenant's attempts: %v", err)
	}

	// The module was refused nothing: no pass failed on a policy, no
	// Event tells of a refusal.
	for reason, events := range e.starrocksEvents(ns, name) {
		for _, ev := range events {
			if ev.Type == corev1.EventTypeWarning && (strings.Contains(ev.Message, "denied") || strings.Contains(ev.Message, "forbidden")) {
				t.Errorf("Warning Event %s: %s", reason, ev.Message)
			}
		}
	}
	// Nor any hook run: addon-operator's log holds the hooks' own logs,
	// which name the API server's refusals.
	aoLog, err := os.ReadFile(e.ao.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range platformPolicies {
		if strings.Contains(string(aoLog), p) {
			t.Errorf("addon-operator's log tells of a refusal by %s (see %s)", p, e.ao.LogPath)
		}
	}

	// What an instance leaves is the admin's to delete. While the instance
	// exists its volumes are refused to the cluster admin as to anyone;
	// once its Starrocks is gone (persistentVolumeClaimRetention: Retain)
	// the hooks give them Deckhouse's delete bypass and the admin deletes
	// them (docs/ADMIN_GUIDE.md "Clean up volumes of deleted instances").
	if err := e.kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, pvc.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); !refusedByPolicy(err) {
		t.Errorf("the cluster admin deletes a running instance's volume: got %v, want a refusal by Deckhouse's policies", err)
	}
	if err := tenantDyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the tenant deletes its instance: %v", err)
	}
	claims := []string{pvc.Name, "storage-" + be + "-0"}
	for _, claim := range claims {
		e.eventually("PVC "+claim+" released with the delete bypass", func() (bool, string) {
			c, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return c.Labels["security.deckhouse.io/heritage-bypass"] == "delete", fmt.Sprintf("labels %v", c.Labels)
		})
	}
	released, err := e.kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: "managed-services.deckhouse.io/managed-service-name=" + name + ",security.deckhouse.io/heritage-bypass=delete"})
	if err != nil || len(released.Items) != len(claims) {
		t.Fatalf("the ADMIN_GUIDE's list of released volumes: %v, %v", released, err)
	}
	for _, c := range released.Items {
		if err := e.kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("the cluster admin deletes the released volume %s: %v", c.Name, err)
		}
	}
}
