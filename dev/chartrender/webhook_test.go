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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/dev/chartrender"
)

// The webhook follows Deckhouse's conventions for module components (what
// dmt lint checks): a priority class of the platform, ephemeral-storage
// requests, a VPA when the vertical-pod-autoscaler module is on, a PDB, and
// webhook configurations registered only after the webhook serves.
func TestWebhookFollowsDeckhouseConventions(t *testing.T) {
	const ns = chartrender.Namespace
	for _, vpaOn := range []bool{true, false} {
		g := chartrender.DefaultGlobals()
		if !vpaOn {
			g["enabledModules"] = []any{"cert-manager"}
		}
		r, err := chartrender.Default()
		if err != nil {
			t.Fatal(err)
		}
		objs, err := r.Render(moduleValues(t, nil), g)
		if err != nil {
			t.Fatal(err)
		}
		d := mustFind(t, objs, "Deployment", ns, "webhook")
		spec, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
		if pc := spec["priorityClassName"]; pc != "cluster-medium" {
			t.Errorf("webhook priorityClassName %v, want cluster-medium", pc)
		}
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		limits := map[string]string{}
		for _, c := range containers {
			c := c.(map[string]any)
			name := c["name"].(string)
			es, _, _ := unstructured.NestedString(c, "resources", "requests", "ephemeral-storage")
			if es == "" {
				t.Errorf("container %s requests no ephemeral-storage", name)
			}
			limits[name], _, _ = unstructured.NestedString(c, "resources", "limits", "memory")
		}

		vpa := chartrender.Find(objs, "VerticalPodAutoscaler", ns, "webhook")
		if (vpa != nil) != vpaOn {
			t.Fatalf("VPA rendered = %v with vertical-pod-autoscaler enabled = %v", vpa != nil, vpaOn)
		}
		if vpa != nil {
			ref, _, _ := unstructured.NestedStringMap(vpa.Object, "spec", "targetRef")
			if ref["kind"] != "Deployment" || ref["name"] != "webhook" {
				t.Errorf("VPA targets %v", ref)
			}
			policies, _, _ := unstructured.NestedSlice(vpa.Object, "spec", "resourcePolicy", "containerPolicies")
			covered := map[string]bool{}
			for _, p := range policies {
				p := p.(map[string]any)
				name := p["containerName"].(string)
				covered[name] = true
				maxMem, _, _ := unstructured.NestedString(p, "maxAllowed", "memory")
				lim := limits[name]
				if lim == "" || maxMem == "" {
					t.Errorf("VPA container %s: maxAllowed.memory %q, container memory limit %q", name, maxMem, lim)
					continue
				}
				// Above the limit, RequestsOnly would aim requests past what the pod may use.
				if maxQ, limQ := resource.MustParse(maxMem), resource.MustParse(lim); maxQ.Cmp(limQ) > 0 {
					t.Errorf("VPA container %s: maxAllowed.memory %s above the limit %s", name, maxMem, lim)
				}
			}
			for name := range limits {
				if !covered[name] {
					t.Errorf("VPA has no containerPolicy for container %s", name)
				}
			}
		}

		mustFind(t, objs, "PodDisruptionBudget", ns, "webhook")

		for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
			wc := mustFind(t, objs, kind, "", "d8-managed-starrocks")
			dep := ""
			for k, v := range wc.GetAnnotations() {
				if strings.HasPrefix(k, "werf.io/deploy-dependency-") {
					dep = v
				}
			}
			if !strings.Contains(dep, "state=ready") || !strings.Contains(dep, "kind=Deployment") || !strings.Contains(dep, "name=webhook") || !strings.Contains(dep, "namespace="+ns) {
				t.Errorf("%s deploy dependency %q, want the webhook Deployment ready", kind, dep)
			}
		}
	}
}

// The webhook's VPA resizes pods in place only where the kubelet can: from
// Kubernetes 1.33 (in-place pod resize beta, on by default); before, and when
// the version is unknown, it evicts (Recreate: Auto means the same and dmt
// refuses it as deprecated; Deckhouse refuses InPlaceOrRecreate below 1.33
// with its policy deny-vpa-in-place-mode).
func TestWebhookVPAResizesInPlaceOnlyWhereKubernetesCan(t *testing.T) {
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]string{
		"1.36.3": "InPlaceOrRecreate", "1.33.0": "InPlaceOrRecreate", "1.33.1-gke.200": "InPlaceOrRecreate",
		"1.32.9": "Recreate", "1.31.0": "Recreate", "": "Recreate",
	} {
		g := chartrender.DefaultGlobals()
		g["discovery"].(map[string]any)["kubernetesVersion"] = version
		objs, err := r.Render(moduleValues(t, nil), g)
		if err != nil {
			t.Fatalf("Kubernetes %q: %v", version, err)
		}
		vpa := mustFind(t, objs, "VerticalPodAutoscaler", chartrender.Namespace, "webhook")
		if got, _, _ := unstructured.NestedString(vpa.Object, "spec", "updatePolicy", "updateMode"); got != want {
			t.Errorf("Kubernetes %q: updateMode %q, want %q", version, got, want)
		}
	}
}

// Monitoring objects are rendered only where their CRDs are, as lib-helm
// guards them: PodMonitor and PrometheusRules with the operator-prometheus-crd
// module, GrafanaDashboardDefinitions with prometheus-crd. The PodMonitor is
// in the module's namespace (labelled for Deckhouse's monitor watcher) with
// prometheus: main.
func TestMonitoringObjectsOnlyWhereTheirCRDsAre(t *testing.T) {
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	count := func(objs []*unstructured.Unstructured) map[string]int {
		out := map[string]int{}
		for _, o := range objs {
			out[o.GetKind()]++
		}
		return out
	}
	for _, tc := range []struct {
		modules []any
		want    map[string]bool
	}{
		{[]any{"cert-manager", "operator-prometheus-crd", "prometheus-crd"}, map[string]bool{"PodMonitor": true, "PrometheusRule": true, "GrafanaDashboardDefinition": true}},
		{[]any{"cert-manager", "operator-prometheus-crd"}, map[string]bool{"PodMonitor": true, "PrometheusRule": true}},
		{[]any{"cert-manager", "prometheus-crd"}, map[string]bool{"GrafanaDashboardDefinition": true}},
		{[]any{"cert-manager"}, map[string]bool{}},
	} {
		g := chartrender.DefaultGlobals()
		g["enabledModules"] = tc.modules
		objs, err := r.Render(moduleValues(t, nil), g)
		if err != nil {
			t.Fatalf("modules %v: %v", tc.modules, err)
		}
		got := count(objs)
		for _, kind := range []string{"PodMonitor", "PrometheusRule", "GrafanaDashboardDefinition"} {
			if (got[kind] > 0) != tc.want[kind] {
				t.Errorf("modules %v: %d %s, want rendered = %v", tc.modules, got[kind], kind, tc.want[kind])
			}
		}
		if pm := chartrender.Find(objs, "PodMonitor", chartrender.Namespace, "managed-starrocks-instances"); pm != nil && pm.GetLabels()["prometheus"] != "main" {
			t.Errorf("PodMonitor labels %v, want prometheus: main", pm.GetLabels())
		}
	}
	ns := mustFind(t, mustRender(t, r), "Namespace", "", chartrender.Namespace)
	if ns.GetLabels()["prometheus.deckhouse.io/monitor-watcher-enabled"] != "true" {
		t.Errorf("module namespace labels %v: Deckhouse's Prometheus would not read its PodMonitor", ns.GetLabels())
	}
}

func mustRender(t *testing.T, r *chartrender.Renderer) []*unstructured.Unstructured {
	t.Helper()
	objs, err := r.Render(moduleValues(t, nil), chartrender.DefaultGlobals())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
