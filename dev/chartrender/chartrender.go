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

// Package chartrender renders the module's Helm chart (the repository root)
// with the Helm v3 engine, the way addon-operator does it in the cluster, and
// returns the parsed objects. It is development tooling: tests and the
// end-to-end loop use it; nothing of it ships in the module bundle.
package chartrender

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
	"github.com/deckhouse/managed-starrocks/pkg/manifests"
)

// ModuleValuesKey is the key of the module's values in the Helm values tree
// (addon-operator camelCases the module name).
const ModuleValuesKey = "managedStarrocks"

// Namespace is the module's own namespace.
const Namespace = "d8-managed-starrocks"

// Renderer holds a loaded chart; it is safe for concurrent use.
type Renderer struct {
	chart *chart.Chart
}

// Load loads the chart in dir, honouring its .helmignore exactly as Helm does.
func Load(dir string) (*Renderer, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	return &Renderer{chart: c}, nil
}

// Chart returns the loaded chart, e.g. to check which files it carries.
func (r *Renderer) Chart() *chart.Chart { return r.chart }

var (
	defaultOnce     sync.Once
	defaultRenderer *Renderer
	defaultErr      error
)

// Default returns the renderer of the repository's chart, loaded once.
func Default() (*Renderer, error) {
	defaultOnce.Do(func() { defaultRenderer, defaultErr = Load(controlplane.RepoRoot()) })
	return defaultRenderer, defaultErr
}

// Render renders the repository's chart with the given module values (the
// tree under `managedStarrocks`: settings, `internal`, `registry`) and
// DefaultGlobals.
func Render(moduleValues map[string]any) ([]*unstructured.Unstructured, error) {
	r, err := Default()
	if err != nil {
		return nil, err
	}
	return r.Render(moduleValues, DefaultGlobals())
}

// DefaultGlobals is a `global` tree like the one Deckhouse passes to modules,
// with fake but well-formed image digests under the image names the build
// (werf) uses.
func DefaultGlobals() map[string]any {
	digest := func(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }
	return map[string]any{
		"highAvailability": false,
		// What Deckhouse's startup hook reads from /deckhouse/version
		// (deckhouse/deckhouse global-hooks/deckhouse_version.go): the
		// release tag. A release of the role model the module's
		// templates/rbacv2 choose from 1.78 on.
		"deckhouseVersion": "v1.78.0",
		// Modules the templates check for (has ... .Values.global.enabledModules).
		"enabledModules": []any{"cert-manager", "vertical-pod-autoscaler", "operator-prometheus-crd", "prometheus-crd"},
		"discovery": map[string]any{
			"clusterDomain": "cluster.local",
			// What Deckhouse discovers; the local control plane's version.
			"kubernetesVersion": "1.36.3",
		},
		"modulesImages": map[string]any{
			// The platform's own registry. An external module's images are
			// not here but under its ModuleSource's registry
			// (DefaultRegistry), which the templates must prefer.
			"registry": map[string]any{
				"base":      "registry.example.com/deckhouse/ce",
				"dockercfg": base64.StdEncoding.EncodeToString([]byte(`{"auths":{"registry.example.com":{"auth":"cGxhdGZvcm06c2VjcmV0"}}}`)),
			},
			"digests": map[string]any{
				ModuleValuesKey: map[string]any{
					"agent":       digest('a'),
					"webhook":     digest('b'),
					"starrocksFe": digest('c'),
					"starrocksBe": digest('d'),
					"starrocksCn": digest('e'),
				},
			},
		},
	}
}

// DefaultRegistry is the `registry` tree Deckhouse puts into an external
// module's values (managedStarrocks.registry): the registry of the
// ModuleSource the module came from. ModuleValues adds it when the settings
// have none (and leaves it out when they set it to nil: an embedded module),
// so every render reads the values as a cluster gives them.
func DefaultRegistry() map[string]any {
	return map[string]any{
		"base":      "registry.example.com/modules-source/",
		"dockercfg": base64.StdEncoding.EncodeToString([]byte(`{"auths":{"registry.example.com":{"auth":"bW9kdWxlczpzZWNyZXQ="}}}`)),
		"scheme":    "https",
	}
}

// Instances in a module values tree of this package are the instance
// entries (internal.instances, ModuleValues): the tests' way to say which
// instances to render. The module's real values hold none — the instances
// hook hands each entry to the instanceobjects hook in a ConfigMap
// desired-<uid>, since values are stored with the one Helm release — so
// ReleaseValues drops them before Helm sees the tree, and RenderInstances
// renders them as the instanceobjects hook does.

// ReleaseValues is the module values tree as addon-operator passes it to
// Helm (and Helm stores it with the release): without the instance entries.
func ReleaseValues(moduleValues map[string]any) map[string]any {
	internal, ok := moduleValues["internal"].(map[string]any)
	if !ok {
		return moduleValues
	}
	if _, has := internal["instances"]; !has {
		return moduleValues
	}
	out := make(map[string]any, len(moduleValues))
	for k, v := range moduleValues {
		out[k] = v
	}
	stripped := make(map[string]any, len(internal))
	for k, v := range internal {
		if k != "instances" {
			stripped[k] = v
		}
	}
	out["internal"] = stripped
	return out
}

// RenderFiles runs the Helm engine only and returns the rendered text per
// template file, as addon-operator hands it to the cluster.
func (r *Renderer) RenderFiles(moduleValues, globals map[string]any) (map[string]string, error) {
	vals := map[string]any{
		ModuleValuesKey: ReleaseValues(moduleValues),
		"global":        globals,
	}
	renderVals, err := chartutil.ToRenderValues(r.chart, vals, chartutil.ReleaseOptions{
		Name:      "managed-starrocks",
		Namespace: Namespace,
		IsInstall: true,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("build render values: %w", err)
	}
	files, err := engine.Render(r.chart, renderVals)
	if err != nil {
		return nil, fmt.Errorf("render chart: %w", err)
	}
	return files, nil
}

// RenderRelease renders what Helm renders: the chart with the module values
// and globals, every object sorted by template file then document order.
func (r *Renderer) RenderRelease(moduleValues, globals map[string]any) ([]*unstructured.Unstructured, error) {
	files, err := r.RenderFiles(moduleValues, globals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "_") || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		parsed, err := manifests.Parse([]byte(files[name]))
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		objs = append(objs, parsed...)
	}
	return objs, nil
}

// Render renders everything the module puts into the cluster for these
// values: the release (RenderRelease), then the objects of every instance
// entry as the instanceobjects hook renders them.
func (r *Renderer) Render(moduleValues, globals map[string]any) ([]*unstructured.Unstructured, error) {
	objs, err := r.RenderRelease(moduleValues, globals)
	if err != nil {
		return nil, err
	}
	instanceObjs, err := RenderInstances(moduleValues, globals)
	if err != nil {
		return nil, err
	}
	return append(objs, instanceObjs...), nil
}

// RenderInstances renders the objects of every instance entry of the tree
// with pkg/instanceobjects, reading the module inputs from the values as the
// hook does.
func RenderInstances(moduleValues, globals map[string]any) ([]*unstructured.Unstructured, error) {
	tree, err := json.Marshal(map[string]any{ModuleValuesKey: moduleValues, "global": globals})
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	module := instanceobjects.ModuleFromValues(func(path string) gjson.Result { return gjson.GetBytes(tree, path) })
	var objs []*unstructured.Unstructured
	for _, e := range gjson.GetBytes(tree, ModuleValuesKey+".internal.instances").Array() {
		var instance map[string]any
		if err := json.Unmarshal([]byte(e.Raw), &instance); err != nil {
			return nil, fmt.Errorf("decode instance: %w", err)
		}
		rendered, err := module.Render(instance)
		if err != nil {
			return nil, fmt.Errorf("render instance %v/%v: %w", instance["namespace"], instance["name"], err)
		}
		objs = append(objs, rendered...)
	}
	return objs, nil
}

// Find returns the object of the given kind, namespace and name, or nil.
func Find(objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

// ModuleValues builds a module values tree of this package from instance
// entries (e.g. the []desired.Instance the hooks compute) and optional
// settings (the config-values tree), through JSON as addon-operator passes
// values to Helm; the entries go under internal.instances (see Instances
// above), which ReleaseValues drops.
func ModuleValues(instances any, settings map[string]any) (map[string]any, error) {
	data, err := json.Marshal(instances)
	if err != nil {
		return nil, fmt.Errorf("encode instances: %w", err)
	}
	var list []any
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("decode instances: %w", err)
	}
	if list == nil {
		list = []any{}
	}
	vals := map[string]any{}
	if settings != nil {
		data, err := json.Marshal(settings)
		if err != nil {
			return nil, fmt.Errorf("encode settings: %w", err)
		}
		if err := json.Unmarshal(data, &vals); err != nil {
			return nil, fmt.Errorf("decode settings: %w", err)
		}
	}
	switch registry, ok := vals["registry"]; {
	case !ok:
		vals["registry"] = DefaultRegistry()
	case registry == nil:
		// An embedded module: Deckhouse gives it no registry value.
		delete(vals, "registry")
	}
	internal, _ := vals["internal"].(map[string]any)
	if internal == nil {
		internal = map[string]any{}
	}
	internal["instances"] = list
	vals["internal"] = internal
	return vals, nil
}
