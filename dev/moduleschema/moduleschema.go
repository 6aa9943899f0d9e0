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

// Package moduleschema loads the module's openapi/ schemas into
// addon-operator's own validation package, the code Deckhouse runs on
// ModuleConfig settings and on the values hooks produce. Tests use it to hold
// settings and values to the same contract as a real cluster.
package moduleschema

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flant/addon-operator/pkg/utils"
	"github.com/flant/addon-operator/pkg/values/validation"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// ValuesKey is the module's key in addon-operator values (the camelCase
// module name).
const ValuesKey = "managedStarrocks"

// Schemas validates module settings and values.
type Schemas struct {
	storage *validation.SchemaStorage
	config  []byte
	values  []byte
}

// Load reads openapi/config-values.yaml and openapi/values.yaml.
func Load() (*Schemas, error) {
	dir := filepath.Join(controlplane.RepoRoot(), "openapi")
	config, err := os.ReadFile(filepath.Join(dir, "config-values.yaml"))
	if err != nil {
		return nil, err
	}
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	storage, err := validation.NewSchemaStorage(config, values)
	if err != nil {
		return nil, fmt.Errorf("load openapi schemas: %w", err)
	}
	// addon-operator puts its own strict schema of the registry value
	// (base, dockercfg, scheme, ca) into the values schemas of a module
	// that comes from a ModuleSource (ValuesStorage.InjectRegistryValue),
	// as this module always does.
	storage.InjectRegistrySpec(validation.ValuesSchema)
	storage.InjectRegistrySpec(validation.HelmValuesSchema)
	return &Schemas{storage: storage, config: config, values: values}, nil
}

// ValidateSettings checks ModuleConfig settings (spec.settings).
func (s *Schemas) ValidateSettings(settings map[string]any) error {
	return s.storage.ValidateConfigValues(ValuesKey, utils.Values{ValuesKey: settings})
}

// ValidateValues checks the module's values (settings plus internal).
func (s *Schemas) ValidateValues(values map[string]any) error {
	return s.storage.ValidateValues(ValuesKey, utils.Values{ValuesKey: values})
}

// ConfigExamples returns the x-examples of config-values.yaml.
func (s *Schemas) ConfigExamples() ([]map[string]any, error) {
	var doc struct {
		Examples []map[string]any `json:"x-examples"`
	}
	if err := yaml.Unmarshal(s.config, &doc); err != nil {
		return nil, err
	}
	return doc.Examples, nil
}

// ApplyDefaults fills the defaults of values.yaml (which extends
// config-values.yaml) into the module's values, as addon-operator does
// before it runs hooks and Helm.
func (s *Schemas) ApplyDefaults(values map[string]any) {
	validation.ApplyDefaults(values, s.storage.Schemas[validation.ValuesSchema])
}
