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
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// chartCopy copies the parts of the repository Helm reads into a temporary
// directory and adds extra files, so a test can shape the chart (monitoring
// files, build leftovers) without touching the repository.
func chartCopy(t testing.TB, extra map[string]string) string {
	t.Helper()
	root := controlplane.RepoRoot()
	dir := t.TempDir()
	for _, rel := range []string{"Chart.yaml", ".helmignore", "templates", "monitoring"} {
		src := filepath.Join(root, rel)
		if _, err := os.Stat(src); os.IsNotExist(err) && rel == "monitoring" {
			continue
		}
		err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			r, _ := filepath.Rel(root, path)
			if info.IsDir() {
				return os.MkdirAll(filepath.Join(dir, r), 0o755)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, r), data, 0o644)
		})
		if err != nil {
			t.Fatalf("copy %s: %v", rel, err)
		}
	}
	for rel, content := range extra {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The whole module directory is the chart: .helmignore must keep the Go
// sources, the hooks binary and the image build contexts out of it, or Helm
// refuses the hooks binary for its size and every render carries megabytes.
func TestChartLoadsWithoutBuildDirectories(t *testing.T) {
	dir := chartCopy(t, map[string]string{
		"hooks/hooks":                    "\x7fELF pretend binary",
		"hooks/instances/hook.go":        "package instances",
		"images/agent/main.go":           "package main",
		"images/webhook/werf.inc.yaml":   "image: webhook",
		"pkg/desired/desired.go":         "package desired",
		"dev/chartrender/chartrender.go": "package chartrender",
		"go.mod":                         "module x",
	})
	for _, chartDir := range []string{dir, controlplane.RepoRoot()} {
		r, err := chartrender.Load(chartDir)
		if err != nil {
			t.Fatalf("load %s: %v", chartDir, err)
		}
		var names []string
		for _, f := range r.Chart().Raw {
			names = append(names, f.Name)
		}
		for _, n := range names {
			// crds/, openapi/ and module.yaml Deckhouse reads itself; a chart
			// loader that sees crds/doc-ru-*.yaml takes them for CRDs and fails.
			for _, banned := range []string{"hooks/", "images/", "pkg/", "dev/", "api/", "docs/", "test/", "crds/", "openapi/"} {
				if strings.HasPrefix(n, banned) {
					t.Errorf("chart in %s carries %s", chartDir, n)
				}
			}
			if strings.HasSuffix(n, ".go") || n == "go.mod" || n == "module.yaml" {
				t.Errorf("chart in %s carries %s", chartDir, n)
			}
		}
		if len(r.Chart().Templates) == 0 {
			t.Errorf("chart in %s has no templates", chartDir)
		}
	}
}

const rulesAsList = `- name: managed-starrocks.frontend
  rules:
    - alert: StarrocksFrontendDown
      expr: up{component="frontend"} == 0
      for: 5m
      labels:
        severity_level: "4"
      annotations:
        summary: A StarRocks FE is down.
`

const rulesAsMap = `groups:
  - name: managed-starrocks.backend
    rules:
      - record: starrocks:be_up:sum
        expr: sum by (starrocks_instance) (up{component="backend"})
`

const dashboard = `{
  "title": "StarRocks instance",
  "uid": "managed-starrocks-instance",
  "panels": []
}
`

// monitoringFiles is what the monitoring engineer's files look like; the
// apply test sends the objects rendered from them to the real apiserver.
var monitoringFiles = map[string]string{
	"monitoring/prometheus-rules/zz-test-frontend.yaml":              rulesAsList,
	"monitoring/prometheus-rules/zz-test-backend.yaml":               rulesAsMap,
	"monitoring/grafana-dashboards/managed-services/zz-test.json":    dashboard,
	"monitoring/grafana-dashboards/zz-test-top-level-dashboard.json": dashboard,
}

func renderWithMonitoring(t testing.TB, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	r, err := chartrender.Load(chartCopy(t, monitoringFiles))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := r.Render(vals, chartrender.DefaultGlobals())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestMonitoringFilesBecomeObjects(t *testing.T) {
	objs := renderWithMonitoring(t, moduleValues(t, nil))

	cases := []struct {
		name, file, group string
	}{
		{"a file with a list of groups", "zz-test-frontend", "managed-starrocks.frontend"},
		{"a file with a groups map", "zz-test-backend", "managed-starrocks.backend"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := mustFind(t, objs, "PrometheusRule", chartrender.Namespace, "managed-starrocks-"+tc.file)
			if pr.GetLabels()["prometheus"] != "main" {
				t.Errorf("PrometheusRule labels %v lack prometheus: main", pr.GetLabels())
			}
			groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
			if len(groups) != 1 || groups[0].(map[string]any)["name"] != tc.group {
				t.Errorf("groups %v, want one named %s", groups, tc.group)
			}
		})
	}

	dashboards := map[string]string{
		"d8-managed-starrocks-managed-services-zz-test":    "Managed Services",
		"d8-managed-starrocks-zz-test-top-level-dashboard": "Managed services",
	}
	for name, folder := range dashboards {
		d := mustFind(t, objs, "GrafanaDashboardDefinition", "", name)
		if got, _, _ := unstructured.NestedString(d.Object, "spec", "folder"); got != folder {
			t.Errorf("%s folder %q, want %q", name, got, folder)
		}
		def, _, _ := unstructured.NestedString(d.Object, "spec", "definition")
		var parsed map[string]any
		if err := json.Unmarshal([]byte(def), &parsed); err != nil || parsed["uid"] != "managed-starrocks-instance" {
			t.Errorf("%s definition is not the dashboard JSON: %v", name, err)
		}
	}
}

// With Deckhouse's observability module on, the monitoring objects are
// those lib-helm emits for every module (deckhouse/lib-helm 29c379e,
// _monitoring_prometheus_rules.tpl and _monitoring_grafana_dashboards.tpl):
// each rule group a ClusterObservabilityMetricsRulesGroup instead of a
// PrometheusRule once its API is served, and each dashboard a
// ClusterObservabilityDashboard beside the GrafanaDashboardDefinition.
func TestMonitoringForTheObservabilityModule(t *testing.T) {
	r, err := chartrender.Load(chartCopy(t, monitoringFiles))
	if err != nil {
		t.Fatal(err)
	}
	withObservability := func(api bool) []*unstructured.Unstructured {
		globals := chartrender.DefaultGlobals()
		globals["enabledModules"] = append(globals["enabledModules"].([]any), "observability")
		if api {
			globals["discovery"].(map[string]any)["apiVersions"] = []any{"observability.deckhouse.io/v1alpha1/ClusterObservabilityMetricsRulesGroup"}
		}
		objs, err := r.Render(moduleValues(t, nil), globals)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}

	objs := withObservability(true)
	if pr := chartrender.Find(objs, "PrometheusRule", chartrender.Namespace, "managed-starrocks-zz-test-frontend"); pr != nil {
		t.Error("a PrometheusRule beside the observability module's rules group")
	}
	g := mustFind(t, objs, "ClusterObservabilityMetricsRulesGroup", "", "managed-starrocks-zz-test-frontend-0")
	if g.GetLabels()["prometheus"] != "main" || g.GetLabels()["module"] != "managed-starrocks" {
		t.Errorf("rules group labels %v", g.GetLabels())
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(g.Object, "spec", "name"); has {
		t.Error("the rules group keeps the group's name, which lib-helm drops")
	}
	if rules, _, _ := unstructured.NestedSlice(g.Object, "spec", "rules"); len(rules) == 0 {
		t.Error("the rules group has no rules")
	}
	mustFind(t, objs, "ClusterObservabilityMetricsRulesGroup", "", "managed-starrocks-zz-test-backend-0")
	for name, folder := range map[string]string{
		"d8-managed-starrocks-managed-services-zz-test":    "Managed Services",
		"d8-managed-starrocks-zz-test-top-level-dashboard": "Managed services",
	} {
		d := mustFind(t, objs, "ClusterObservabilityDashboard", "", name)
		if got := d.GetAnnotations()["metadata.deckhouse.io/category"]; got != folder {
			t.Errorf("%s category %q, want %q", name, got, folder)
		}
		if d.GetLabels()["observability.deckhouse.io/dashboard-origin"] != "module" {
			t.Errorf("%s labels %v", name, d.GetLabels())
		}
		def, _, _ := unstructured.NestedString(d.Object, "spec", "definition")
		if !strings.Contains(def, "managed-starrocks-instance") {
			t.Errorf("%s definition is not the dashboard", name)
		}
		gdd := mustFind(t, objs, "GrafanaDashboardDefinition", "", name)
		if _, ok := gdd.GetLabels()["observability.deckhouse.io/skip-dashboard-conversion"]; !ok {
			t.Errorf("%s: the GrafanaDashboardDefinition would be converted a second time", name)
		}
	}

	// As lib-helm, a rule annotated d8_ignore_on_update is silent while
	// Deckhouse updates itself.
	files := maps.Clone(monitoringFiles)
	files["monitoring/prometheus-rules/zz-test-update.yaml"] = `- name: managed-starrocks.update
  rules:
    - alert: ZZTestDown
      expr: up == 0
      annotations:
        d8_ignore_on_update: "true"
`
	ru, err := chartrender.Load(chartCopy(t, files))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ru.Render(moduleValues(t, nil), chartrender.DefaultGlobals())
	if err != nil {
		t.Fatal(err)
	}
	groups, _, _ := unstructured.NestedSlice(mustFind(t, plain, "PrometheusRule", chartrender.Namespace, "managed-starrocks-zz-test-update").Object, "spec", "groups")
	if expr := fmt.Sprint(groups[0].(map[string]any)["rules"].([]any)[0].(map[string]any)["expr"]); expr != "(up == 0) and ON() ((max(d8_is_updating) != 1) or ON() absent(d8_is_updating))" {
		t.Errorf("a rule with d8_ignore_on_update has expr %q", expr)
	}

	// The module on before its API is served: PrometheusRules still.
	objs = withObservability(false)
	mustFind(t, objs, "PrometheusRule", chartrender.Namespace, "managed-starrocks-zz-test-frontend")
	if g := chartrender.Find(objs, "ClusterObservabilityMetricsRulesGroup", "", "managed-starrocks-zz-test-frontend-0"); g != nil {
		t.Error("a rules group of an API the cluster does not serve")
	}
}

// The module's chart and the instance templates (embedded in the hooks
// binary, so they cannot include the chart's files) each define the helpers
// both need. The rules in them are one rule: the two copies must not drift.
func TestHelpersSharedWithTheInstanceTemplatesAreTheSame(t *testing.T) {
	root := controlplane.RepoRoot()
	define := func(file, name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		start := strings.Index(text, `{{- define "`+name+`" -}}`)
		if start < 0 {
			t.Fatalf("%s defines no %s", file, name)
		}
		end := strings.Index(text[start:], "{{- end }}")
		if end < 0 {
			t.Fatalf("%s: %s has no end", file, name)
		}
		return text[start : start+end]
	}
	for _, name := range []string{"ms.containerSecurityContext", "ms.logLevel"} {
		chart := define("templates/_helpers.tpl", name)
		instance := define("pkg/instanceobjects/templates/_helpers.tpl", name)
		if chart != instance {
			t.Errorf("%s differs between templates/_helpers.tpl and pkg/instanceobjects/templates/_helpers.tpl:\n%s\n---\n%s", name, chart, instance)
		}
	}
}
