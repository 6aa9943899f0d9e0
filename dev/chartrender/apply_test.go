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

package chartrender_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// DevCRDDir holds the CRD fixtures no Go module ships (Deckhouse's own).
func devCRDDir() string { return filepath.Join(controlplane.RepoRoot(), "dev", "crds") }

// Every object the chart renders, for every scenario and for the module
// settings that change what is rendered, must be accepted by a real
// kube-apiserver with the real CRDs (ours, cert-manager's,
// prometheus-operator's, Deckhouse's, the VPA's) under strict field validation.
func TestRealAPIServerAcceptsEveryRenderedObject(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{
		controlplane.ModuleCRDDir(),
		controlplane.CertManagerCRDDir(),
		controlplane.PrometheusOperatorCRDDir(),
		devCRDDir(),
	}})
	cfg := cp.RESTConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var objs []*v1alpha1.Starrocks
	for _, sc := range scenarios() {
		objs = append(objs, sc.sr)
	}
	variants := []struct {
		name     string
		settings map[string]any
	}{
		{"defaults", nil},
		{"every setting set", map[string]any{
			"logLevel":         "Debug",
			"highAvailability": true,
			"certificates":     map[string]any{"clusterIssuerName": "corporate-ca", "duration": "4320h", "renewBefore": "360h"},
			"instances":        map[string]any{"persistentVolumeClaimRetention": "Delete"},
			"nodeSelector":     map[string]any{"node-role.deckhouse.io/system": ""},
			"tolerations":      []any{map[string]any{"key": "dedicated.deckhouse.io", "operator": "Equal", "value": "system", "effect": "NoExecute"}},
		}},
	}

	// Namespaces the chart expects to exist: the instances' (users create
	// them).
	need := map[string]bool{}
	for _, o := range objs {
		need[o.Namespace] = true
	}
	for ns := range need {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
	}

	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			rendered := renderWithMonitoring(t, moduleValues(t, v.settings, objs...))
			kinds := map[string]int{}
			// Namespaces first, as Helm installs them first.
			ordered := make([]*unstructured.Unstructured, 0, len(rendered))
			for _, o := range rendered {
				if o.GetKind() == "Namespace" {
					ordered = append(ordered, o)
				}
			}
			for _, o := range rendered {
				if o.GetKind() != "Namespace" {
					ordered = append(ordered, o)
				}
			}
			for _, o := range ordered {
				gvk := o.GroupVersionKind()
				kinds[gvk.Kind]++
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Errorf("%s %s: the apiserver does not serve this kind: %v", gvk, o.GetName(), err)
					continue
				}
				data, err := json.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if o.GetNamespace() != "" {
					ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
				}
				_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
					FieldManager:    "managed-starrocks-render-test",
					Force:           ptr(true),
					FieldValidation: "Strict",
				})
				if err != nil {
					t.Errorf("apply %s %s/%s rejected: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
				}
			}
			for _, k := range []string{"StatefulSet", "Certificate", "PodMonitor", "PrometheusRule", "GrafanaDashboardDefinition", "ValidatingWebhookConfiguration", "NetworkPolicy", "VerticalPodAutoscaler"} {
				if kinds[k] == 0 {
					t.Errorf("no %s was rendered, so none was checked", k)
				}
			}
			t.Logf("applied %d objects: %v", len(ordered), kinds)
		})
	}
}
