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
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestStartsServesAndStops(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{})
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != "v1.36.3" {
		t.Errorf("server version %q, want v1.36.3", v.GitVersion)
	}
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), "no-such-namespace", metav1.GetOptions{})
	if !errors.IsNotFound(err) {
		t.Errorf("get missing namespace: %v, want NotFound", err)
	}
	cp.Stop()
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Error("apiserver still answers after Stop")
	}
}

// The tests that need kube-controller-manager share one control plane: a
// start of kube-apiserver, etcd and the controller manager costs more CPU
// than both tests together, and they touch different namespaces (default;
// team-a and d8-system).
func TestControllerManager(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{ControllerManager: true})
	t.Run("collects garbage", func(t *testing.T) { controllerManagerCollectsGarbage(t, cp) })
	t.Run("platform policies refuse tenants and let the platform through", func(t *testing.T) {
		platformPoliciesRefuseTenantsAndLetThePlatformThrough(t, cp)
	})
}

func controllerManagerCollectsGarbage(t *testing.T, cp *controlplane.ControlPlane) {
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	owner, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	}}}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "child", metav1.GetOptions{})
		if errors.IsNotFound(err) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the owned ConfigMap was not garbage collected in 60s")
}
