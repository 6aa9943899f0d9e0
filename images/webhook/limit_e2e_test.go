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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// TestEndToEndInstanceLimit runs the real webhook with
// --max-instances=2 (the module setting instances.maxCount) against a real
// kube-apiserver: the third Starrocks of the cluster is refused, in any
// namespace, and an instance being deleted does not count.
func TestEndToEndInstanceLimit(t *testing.T) {
	ctx, dyn := limitsCluster(t, "--max-instances=2", "team-a")

	create(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, instance("first", func(*v1alpha1.Starrocks) {}))
	// Held by a finalizer, so it lingers with a deletionTimestamp below.
	create(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, instance("held", func(sr *v1alpha1.Starrocks) { sr.Finalizers = []string{"example.com/hold"} }))

	third := instance("third", func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-a" })
	_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-a").Create(ctx, toUnstructured(t, third), metav1.CreateOptions{})
	want := `admission webhook "` + validateSRName + `" denied the request: Starrocks "team-a/third" cannot be created: ` +
		`the cluster already has 2 Starrocks instances, the most the module manages (ModuleConfig managed-starrocks settings.instances.maxCount: 2); ask your cluster admin.`
	if err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
		t.Fatalf("third instance: got %v (reason %q)\nwant Forbidden: %s", err, apierrors.ReasonForError(err), want)
	}
	// What kubectl prints is what USAGE.md shows, there with the default limit.
	shown := strings.NewReplacer("has 2 Starrocks", "has 1000 Starrocks", "maxCount: 2)", "maxCount: 1000)").Replace(want)
	for _, doc := range []string{"USAGE.md", "USAGE.ru.md", "ADMIN_GUIDE.md", "ADMIN_GUIDE.ru.md"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), " Error from server (Forbidden): "+shown+"\n") && !strings.Contains(string(text), "\nError from server (Forbidden): "+shown+"\n") {
			t.Errorf("docs/%s does not show what kubectl prints:\n  Error from server (Forbidden): %s", doc, shown)
		}
	}

	// An update of an existing instance is no new instance.
	var first v1alpha1.Starrocks
	get(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, "first", &first)
	first.Spec.Backend.PersistentVolumeClaim.Size = q("200Gi")
	if _, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Update(ctx, toUnstructured(t, &first), metav1.UpdateOptions{}); err != nil {
		t.Errorf("update at the limit: %v", err)
	}

	// An instance being deleted frees its place.
	if err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete held: %v", err)
	}
	createOnceDeletionShown(ctx, t, dyn, "team-a", third)
}

// createOnceDeletionShown creates sr once the webhook's cache shows the
// deletion just made: the webhook counts from its cache, which shows a
// deletion within moments, and a CREATE it decides before then is refused as
// if the deleted instance still held its place (USAGE.md says to send it
// again). It fails when sr is still refused after 30 seconds, or refused for
// anything other than a limit.
func createOnceDeletionShown(ctx context.Context, t *testing.T, dyn dynamic.Interface, namespace string, sr *v1alpha1.Starrocks) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(namespace).Create(ctx, toUnstructured(t, sr), metav1.CreateOptions{})
		if err == nil {
			return
		}
		limit := apierrors.IsForbidden(err) && strings.Contains(err.Error(), "the most the module manages")
		if !limit || time.Now().After(deadline) {
			t.Fatalf("create %s/%s after a deletion freed its place: %v", namespace, sr.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// limitsCluster is a real kube-apiserver with the real webhook started with
// flags and registered, the namespaces made, the webhooks answering and the
// class "small": what the end-to-end tests of the CREATE limits start from.
func limitsCluster(t *testing.T, flags string, namespaces ...string) (context.Context, dynamic.Interface) {
	t.Helper()
	ctx, dyn, _ := limitsClusterWith(t, flags, nil, namespaces...)
	return ctx, dyn
}

// limitsClusterWith is limitsCluster where before, when not nil, runs once
// the namespaces and the class exist and before the webhook is registered:
// the objects it makes are what a cluster holds from before the webhook
// (or from while it was down).
func limitsClusterWith(t *testing.T, flags string, before func(context.Context, dynamic.Interface), namespaces ...string) (context.Context, dynamic.Interface, kubernetes.Interface) {
	t.Helper()
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{controlplane.ModuleCRDDir()}})
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = -1, 0 // the burst tests send their CREATEs at once
	dyn := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	// The inflated-metadata test writes about 50 MB first: minutes on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)

	for _, name := range append([]string{ns}, namespaces...) { // waitWebhooksActive probes in ns
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", name, err)
		}
	}
	if before != nil {
		create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", smallClass("small"))
		before(ctx, dyn)
	}
	ca := testpki.MustCA(t, "managed-starrocks-webhook test CA")
	certs := testpki.NewSecretVolume(t, ca.MustIssue(t, webhookDNSNames...).SecretData(ca))
	wh := startWebhook(ctx, t, cp.KubeconfigPath(), certs, strings.Fields(flags)...)
	t.Cleanup(func() { _ = wh.stop() })
	registerWebhooks(ctx, t, kube, wh.webhookAddr, ca.CertPEM)
	waitWebhooksActive(ctx, t, dyn)
	if before == nil {
		create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", smallClass("small"))
	}
	return ctx, dyn, kube
}
