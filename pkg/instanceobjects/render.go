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

// Package instanceobjects renders the Kubernetes objects of one Starrocks
// instance (StatefulSets, Services, ConfigMap, certificates, PDBs,
// NetworkPolicy, the agent's RBAC) from its desired state (desired.Instance),
// with the Helm engine and the templates embedded here. The hooks apply them
// (hooks/instanceobjects) instead of Helm: all instances in the module's one
// Helm release would not fit the 1 MiB Secret Helm stores a release in
// (dev/docs/BENCHMARKS.md). The templates read the instance as
// .Values.managedStarrocks.internal.instances of their own render tree
// (Module.values), never of the module's values.
package instanceobjects

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/manifests"
)

// Annotations every rendered object carries. ChecksumAnnotation is the
// checksum of everything the render read (Module.Checksum) and
// ObjectsAnnotation the number of objects rendered with it. They tell people
// which render an object is from; the hook decides whether an instance is
// current from its record (hooks/internal/applied), since a tenant can copy
// an annotation but not a UID or a resourceVersion.
const (
	ChecksumAnnotation = "managed-starrocks.deckhouse.io/render-checksum"
	ObjectsAnnotation  = "managed-starrocks.deckhouse.io/render-objects"
)

// Images are the module images the instance templates use, by werf's name.
var Images = []string{"starrocksFe", "starrocksBe", "agent"}

// OptionalImages are the images only some instances use: the CN image of
// shared-data instances. Read like Images, but not required for a render:
// without its digest only a shared-data instance fails to render (the
// template says which digest is missing), every other instance renders.
var OptionalImages = []string{"starrocksCn"}

// Kinds are the kinds of an instance's objects, in the order they are
// applied: what the pods mount and reach before the StatefulSets that start
// them (Helm's install order, with cert-manager's kinds before the
// StatefulSets rather than after everything it knows).
var Kinds = []Kind{
	{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
	{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
	{APIVersion: "v1", Kind: "ServiceAccount"},
	{APIVersion: "v1", Kind: "ConfigMap"},
	{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
	{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
	{APIVersion: "v1", Kind: "Service"},
	{APIVersion: "cert-manager.io/v1", Kind: "Certificate"},
	{APIVersion: "cert-manager.io/v1", Kind: "Issuer"},
	{APIVersion: "apps/v1", Kind: "StatefulSet"},
	// After the StatefulSet it scales.
	{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
}

// Kind is an API version and kind.
type Kind struct {
	APIVersion string
	Kind       string
}

//go:embed all:templates
var templateFS embed.FS

var (
	loadOnce    sync.Once
	loadedChart *chart.Chart
	templateSum string
	loadErr     error
)

// load builds an in-memory chart of the embedded templates and the checksum
// of their text, once.
func load() (*chart.Chart, string, error) {
	loadOnce.Do(func() {
		c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "managed-starrocks-instance", Version: "0.0.0"}}
		h := sha256.New()
		loadErr = fs.WalkDir(templateFS, "templates", func(name string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := templateFS.ReadFile(name)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
			h.Write(data)
			c.Templates = append(c.Templates, &chart.File{Name: name, Data: data})
			return nil
		})
		loadedChart, templateSum = c, hex.EncodeToString(h.Sum(nil))
	})
	return loadedChart, templateSum, loadErr
}

// Module is what the instance templates read besides the instance entry: the
// images, the cluster domain and the module settings that shape instance
// objects. Nothing else reaches them, so nothing else re-renders instances.
type Module struct {
	// ImageRepository is where the module's images are (ImageRepository).
	ImageRepository string            `json:"imageRepository"`
	Digests         map[string]string `json:"digests"`
	ClusterDomain   string            `json:"clusterDomain"`
	LogLevel        string            `json:"logLevel,omitempty"`
	// Certificates is the module setting certificates (clusterIssuerName,
	// duration, renewBefore).
	Certificates map[string]any `json:"certificates,omitempty"`
	// PVCRetention is the module setting instances.persistentVolumeClaimRetention.
	PVCRetention string `json:"pvcRetention,omitempty"`
}

// ModuleName is the module's name, the last element of its images'
// repository in an external module's registry.
const ModuleName = "managed-starrocks"

// ImageRepository is the repository of the module's images as lib-helm's
// helm_lib_module_image computes it for a module without .Module.Package
// (deckhouse/lib-helm charts/helm_lib/templates/_module_image.tpl, the
// "handle external modules registry" branch): Deckhouse gives an external
// module the registry of its ModuleSource as managedStarrocks.registry
// (base, dockercfg, scheme, CA, path; reference modules such as
// deckhouse/csi-nfs and deckhouse/sds-local-volume read
// .Values.<module>.registry.dockercfg, and dmt renders modules with it), and
// the images are <base without surrounding slashes>/managed-starrocks. Without
// it (an embedded module, the local harness) the platform's own
// global.modulesImages.registry.base, as lib-helm falls back. The chart's
// twin is templates/_helpers.tpl ms.imageRepository; dev/chartrender
// TestImagesComeFromTheModulesRegistry holds them to the same answer.
func ImageRepository(get func(path string) gjson.Result) string {
	if base := strings.Trim(get("managedStarrocks.registry.base").String(), "/"); base != "" {
		return base + "/" + ModuleName
	}
	return get("global.modulesImages.registry.base").String()
}

// ModuleFromValues reads Module from the values tree ({global, managedStarrocks})
// through get, a gjson path lookup (the hooks' input.Values.Get).
func ModuleFromValues(get func(path string) gjson.Result) Module {
	m := Module{
		ImageRepository: ImageRepository(get),
		Digests:         map[string]string{},
		ClusterDomain:   get("global.discovery.clusterDomain").String(),
		LogLevel:        get("managedStarrocks.logLevel").String(),
		PVCRetention:    get("managedStarrocks.instances.persistentVolumeClaimRetention").String(),
	}
	for _, name := range slices.Concat(Images, OptionalImages) {
		if d := get("global.modulesImages.digests.managedStarrocks." + name).String(); d != "" {
			m.Digests[name] = d
		}
	}
	if certs, ok := get("managedStarrocks.certificates").Value().(map[string]any); ok && len(certs) > 0 {
		m.Certificates = certs
	}
	return m
}

// Check says what is missing for any instance to render.
func (m Module) Check() error {
	var missing []string
	if m.ImageRepository == "" {
		missing = append(missing, "managedStarrocks.registry.base (an external module's registry) or global.modulesImages.registry.base")
	}
	for _, name := range Images {
		if m.Digests[name] == "" {
			missing = append(missing, "global.modulesImages.digests.managedStarrocks."+name)
		}
	}
	if m.ClusterDomain == "" {
		missing = append(missing, "global.discovery.clusterDomain")
	}
	if len(missing) > 0 {
		return fmt.Errorf("instance objects cannot render without %s", strings.Join(missing, ", "))
	}
	return nil
}

// Checksum is the checksum of one instance's render: the templates, the
// module inputs and the instance entry (re-encoded, so key order and spacing
// of the values do not count).
func (m Module) Checksum(instance map[string]any) (string, error) {
	_, tmpl, err := load()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(tmpl))
	enc := json.NewEncoder(h)
	if err := enc.Encode(m); err != nil {
		return "", err
	}
	if err := enc.Encode(instance); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// values is the values tree the templates read, with one instance.
func (m Module) values(instance map[string]any) map[string]any {
	settings := map[string]any{"internal": map[string]any{"instances": []any{instance}}}
	if m.LogLevel != "" {
		settings["logLevel"] = m.LogLevel
	}
	if m.Certificates != nil {
		settings["certificates"] = m.Certificates
	}
	if m.PVCRetention != "" {
		settings["instances"] = map[string]any{"persistentVolumeClaimRetention": m.PVCRetention}
	}
	digests := map[string]any{}
	for k, v := range m.Digests {
		digests[k] = v
	}
	return map[string]any{
		"managedStarrocks": settings,
		"global": map[string]any{
			"modulesImages": map[string]any{
				// The instance templates' ms.image reads the repository
				// here, computed once above.
				"registry": map[string]any{"base": m.ImageRepository},
				"digests":  map[string]any{"managedStarrocks": digests},
			},
			"discovery": map[string]any{"clusterDomain": m.ClusterDomain},
		},
	}
}

// Render renders the objects of one instance (its desired state as JSON
// decodes it) in the order they
// are applied, each annotated with the render checksum and object count.
func (m Module) Render(instance map[string]any) ([]*unstructured.Unstructured, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	c, _, err := load()
	if err != nil {
		return nil, fmt.Errorf("load instance templates: %w", err)
	}
	sum, err := m.Checksum(instance)
	if err != nil {
		return nil, fmt.Errorf("checksum: %w", err)
	}
	vals, err := chartutil.ToRenderValues(c, m.values(instance), chartutil.ReleaseOptions{Name: "managed-starrocks", Namespace: "d8-managed-starrocks"}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("render values: %w", err)
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if !strings.HasPrefix(path.Base(name), "_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		parsed, err := manifests.Parse([]byte(files[name]))
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		objs = append(objs, parsed...)
	}
	for _, o := range objs {
		if KindOrder(o.GetKind()) < 0 {
			return nil, fmt.Errorf("rendered %s %s: not a kind of an instance", o.GetKind(), o.GetName())
		}
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[ChecksumAnnotation] = sum
		a[ObjectsAnnotation] = strconv.Itoa(len(objs))
		o.SetAnnotations(a)
	}
	sort.SliceStable(objs, func(i, j int) bool { return KindOrder(objs[i].GetKind()) < KindOrder(objs[j].GetKind()) })
	return objs, nil
}

// KindOrder is the position of kind in Kinds, or -1.
func KindOrder(kind string) int {
	return slices.IndexFunc(Kinds, func(k Kind) bool { return k.Kind == kind })
}
