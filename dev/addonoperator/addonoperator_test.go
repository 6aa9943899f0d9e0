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

package addonoperator

import (
	"encoding/json"
	"math"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestValuesKeyIsAddonOperatorsCamelCase(t *testing.T) {
	for in, want := range map[string]string{"managed-starrocks": "managedStarrocks", "sentinel": "sentinel", "a-b-c": "aBC"} {
		if got := valuesKey(in); got != want {
			t.Errorf("valuesKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedirectPatch(t *testing.T) {
	path := "/validate-starrocks"
	target := WebhookEndpoint{URL: "https://127.0.0.1:9443", CABundle: []byte("CA")}
	rendered := []admissionregistrationv1.WebhookClientConfig{{Service: &admissionregistrationv1.ServiceReference{Name: "webhook", Namespace: "d8-managed-starrocks", Path: &path}, CABundle: []byte("module CA")}}

	t.Run("points the Service client at the URL, keeping the path", func(t *testing.T) {
		var ops []struct {
			Op, Path string
			Value    map[string]any
		}
		if err := json.Unmarshal(redirectPatch(rendered, target), &ops); err != nil {
			t.Fatal(err)
		}
		if len(ops) != 1 || ops[0].Op != "replace" || ops[0].Path != "/webhooks/0/clientConfig" || ops[0].Value["url"] != "https://127.0.0.1:9443/validate-starrocks" || ops[0].Value["service"] != nil {
			t.Fatalf("patch %+v", ops)
		}
	})
	t.Run("nothing to do once redirected", func(t *testing.T) {
		url := "https://127.0.0.1:9443/validate-starrocks"
		done := []admissionregistrationv1.WebhookClientConfig{{URL: &url, CABundle: []byte("CA")}}
		if p := redirectPatch(done, target); p != nil {
			t.Fatalf("patch %s, want none", p)
		}
	})
	t.Run("bypassed: nowhere, still with the path", func(t *testing.T) {
		url := "https://127.0.0.1:9443/validate-starrocks"
		done := []admissionregistrationv1.WebhookClientConfig{{URL: &url, CABundle: []byte("CA")}}
		var ops []struct{ Value map[string]any }
		if err := json.Unmarshal(redirectPatch(done, unreachable), &ops); err != nil {
			t.Fatal(err)
		}
		if len(ops) != 1 || ops[0].Value["url"] != "https://127.0.0.1:1/validate-starrocks" {
			t.Fatalf("patch %+v", ops)
		}
	})
}

func TestParseSamplesReadsHistogramsAndCounters(t *testing.T) {
	const text = `# TYPE addon_operator_module_hook_run_seconds histogram
addon_operator_module_hook_run_seconds_bucket{module="managed-starrocks",hook="a",queue="q",le="1"} 1
addon_operator_module_hook_run_seconds_bucket{module="managed-starrocks",hook="a",queue="q",le="5"} 3
addon_operator_module_hook_run_seconds_bucket{module="managed-starrocks",hook="a",queue="q",le="10"} 3
addon_operator_module_hook_run_seconds_bucket{module="managed-starrocks",hook="a",queue="q",le="+Inf"} 3
addon_operator_module_hook_run_seconds_sum{module="managed-starrocks",hook="a",queue="q"} 7.5
addon_operator_module_hook_run_seconds_count{module="managed-starrocks",hook="a",queue="q"} 3
addon_operator_module_hook_run_seconds_bucket{module="other",hook="b",queue="main",le="+Inf"} 1
addon_operator_module_hook_run_seconds_sum{module="other",hook="b",queue="main"} 20
addon_operator_module_hook_run_seconds_count{module="other",hook="b",queue="main"} 1
# TYPE addon_operator_module_hook_errors_total counter
addon_operator_module_hook_errors_total{module="managed-starrocks",hook="a"} 2
`
	samples, err := parseSamples(text, ModuleHookRunSeconds, map[string]string{"module": ModuleName})
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 1 || samples[0].Count != 3 || samples[0].Sum != 7.5 || samples[0].Max != 5 {
		t.Fatalf("samples %+v, want the one series of the module: 3 runs, 7.5 s, all within 5 s", samples)
	}
	other, _ := parseSamples(text, ModuleHookRunSeconds, map[string]string{"module": "other"})
	if len(other) != 1 || !math.IsInf(other[0].Max, 1) {
		t.Fatalf("a run beyond the last bucket: %+v, want Max +Inf", other)
	}
	errs, _ := parseSamples(text, ModuleHookErrorsTotal, nil)
	if len(errs) != 1 || errs[0].Value != 2 {
		t.Fatalf("counter %+v", errs)
	}
}
