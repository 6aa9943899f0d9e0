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

// Package openapi_test holds the module's openapi/ schemas to addon-operator's
// own validation: documented examples pass and wrong settings are rejected.
package openapi_test

import (
	"strings"
	"testing"

	"github.com/deckhouse/managed-starrocks/dev/moduleschema"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func load(t *testing.T) *moduleschema.Schemas {
	t.Helper()
	s, err := moduleschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConfigExamplesAreValid(t *testing.T) {
	s := load(t)
	examples, err := s.ConfigExamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) < 2 {
		t.Fatalf("config-values.yaml has %d x-examples, want at least an empty and a full one", len(examples))
	}
	for i, ex := range examples {
		if err := s.ValidateSettings(ex); err != nil {
			t.Errorf("x-examples[%d] rejected: %v", i, err)
		}
	}
}

func TestWrongSettingsAreRejected(t *testing.T) {
	s := load(t)
	cases := []struct {
		name     string
		settings map[string]any
		want     string
	}{
		{"unknown log level", map[string]any{"logLevel": "Loud"}, "logLevel"},
		{"unknown setting", map[string]any{"replicas": 3}, "replicas"},
		{"issuer name with capitals", map[string]any{"certificates": map[string]any{"clusterIssuerName": "Corporate_CA"}}, "clusterIssuerName"},
		{"duration in days", map[string]any{"certificates": map[string]any{"duration": "90d"}}, "duration"},
		{"unknown retention", map[string]any{"instances": map[string]any{"persistentVolumeClaimRetention": "Keep"}}, "persistentVolumeClaimRetention"},
		{"high availability as a string", map[string]any{"highAvailability": "yes"}, "highAvailability"},
		{"node selector value not a string", map[string]any{"nodeSelector": map[string]any{"role": 1}}, "nodeSelector"},
		{"unknown toleration operator", map[string]any{"tolerations": []any{map[string]any{"key": "k", "operator": "Maybe"}}}, "operator"},
		{"unknown toleration field", map[string]any{"tolerations": []any{map[string]any{"key": "k", "priority": 1}}}, "priority"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.ValidateSettings(tc.settings)
			if err == nil {
				t.Fatalf("accepted %v", tc.settings)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %s", err, tc.want)
			}
		})
	}
}

func TestInternalValuesSchema(t *testing.T) {
	s := load(t)
	// The values hold no instance: they are stored with the module's one
	// Helm release, which tenant-sized entries would outgrow (the hooks hand
	// the entries on in ConfigMaps, pkg/desired/instance.schema.yaml).
	err := s.ValidateValues(map[string]any{"internal": map[string]any{"instances": []any{}}})
	if err == nil || !strings.Contains(err.Error(), "instances") {
		t.Fatalf("an instance list in the values: %v, want an error naming instances", err)
	}
	err = s.ValidateValues(map[string]any{"internal": map[string]any{"unknownKey": true}})
	if err == nil || !strings.Contains(err.Error(), "unknownKey") {
		t.Fatalf("unknown internal key: %v, want an error naming it", err)
	}
}

// The hooks and the webhook fall back to desired.DefaultMaxInstances when the
// values lack instances.maxCount; a running module gets the openapi default.
// Both must be the same number.
func TestMaxCountDefaultIsTheCodesDefault(t *testing.T) {
	values := map[string]any{}
	load(t).ApplyDefaults(values)
	instances, _ := values["instances"].(map[string]any)
	got, ok := instances["maxCount"]
	if !ok {
		t.Fatalf("no default for instances.maxCount in %v", values)
	}
	if n, ok := got.(int64); !ok || n != desired.DefaultMaxInstances {
		if f, ok := got.(float64); !ok || f != desired.DefaultMaxInstances {
			t.Errorf("openapi default of instances.maxCount %v (%T), want desired.DefaultMaxInstances %d", got, got, desired.DefaultMaxInstances)
		}
	}
}
