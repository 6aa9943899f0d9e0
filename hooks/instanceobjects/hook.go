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

// Package instanceobjects applies the Kubernetes objects of every instance
// the instances hook put into managedStarrocks.internal.instances. They are
// rendered per instance from the templates of pkg/instanceobjects and
// created or updated here, not by Helm: all instances in the module's one
// Helm release would not fit the 1 MiB Secret Helm stores a release in.
//
// The hook never deletes: an instance's objects carry an ownerReference to
// its Starrocks and go with it (garbage collection), and an instance that
// leaves the values (invalid without memory, beyond instances.maxCount)
// keeps the objects it has. Every object carries the checksum of what its
// render read; an instance whose objects all carry the current checksum, as
// many as they say, is neither rendered nor written, so a pass over a steady
// cluster writes nothing and a deleted object comes back on the next pass.
package instanceobjects

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/deckhouse/module-sdk/pkg"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

var _ = registry.RegisterFunc(Config, Handle)

// Config watches the objects of every instance (only what says whether they
// are current) and runs before every Helm run, which follows every change of
// the values the instances hook writes.
var Config = &pkg.HookConfig{
	Queue:        shared.Queue,
	OnBeforeHelm: &pkg.OrderedConfig{Order: 10},
	Kubernetes:   bindings(),
}

// bindings is one binding per kind of instance object. The objects live in
// tenant namespaces, where look-alikes with any labels can exist: every
// field is coerced to a string, so no object can fail the snapshot, and an
// object counts only for the instance of its own namespace.
func bindings() []pkg.KubernetesConfig {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue}}
	out := make([]pkg.KubernetesConfig, 0, len(instanceobjects.Kinds))
	for _, k := range instanceobjects.Kinds {
		out = append(out, pkg.KubernetesConfig{
			Name:          snapshotName(k),
			APIVersion:    k.APIVersion,
			Kind:          k.Kind,
			LabelSelector: sel,
			JqFilter: shared.JqTypes + `{namespace: (.metadata.namespace | str), instance: (.metadata.labels["` + shared.LabelInstance + `"] | str),` +
				` checksum: (.metadata.annotations["` + instanceobjects.ChecksumAnnotation + `"] | str), objects: (.metadata.annotations["` + instanceobjects.ObjectsAnnotation + `"] | str)}`,
		})
	}
	return out
}

func snapshotName(k instanceobjects.Kind) string { return "instance_" + k.Kind }

// liveObject is what a binding keeps of an instance object.
type liveObject struct {
	Namespace string `json:"namespace"`
	Instance  string `json:"instance"`
	Checksum  string `json:"checksum"`
	Objects   string `json:"objects"`
}

type instanceKey struct{ namespace, name string }

// rendered counts, per instance, the live objects by render checksum, and
// the object count they claim.
type rendered map[instanceKey]map[string]renderedSet

type renderedSet struct{ count, claimed int }

// Handle renders and writes the objects of every instance whose live objects
// are not all from the current render.
func Handle(_ context.Context, input *pkg.HookInput) error {
	entries := input.Values.Get(shared.InstancesValuesPath).Array()
	if len(entries) == 0 {
		return nil
	}
	module := instanceobjects.ModuleFromValues(input.Values.Get)
	if err := module.Check(); err != nil {
		return err
	}
	live := readLive(input)
	var written, failed int
	for _, e := range entries {
		objs, err := stale(module, live, e.Raw)
		if err != nil {
			// One entry that cannot render never holds back the others; a
			// returned error would drop every write of the run.
			failed++
			input.Logger.Error("instance objects not rendered", slog.String("error", err.Error()))
			continue
		}
		for _, o := range objs {
			input.PatchCollector.CreateOrUpdate(o)
		}
		if len(objs) > 0 {
			written++
		}
	}
	if written > 0 || failed > 0 {
		input.Logger.Info("instance objects", slog.Int("instancesWritten", written), slog.Int("instancesFailed", failed), slog.Int("instances", len(entries)))
	}
	return nil
}

// stale renders one values entry unless its live objects are current.
func stale(module instanceobjects.Module, live rendered, raw string) ([]*unstructured.Unstructured, error) {
	var instance map[string]any
	if err := json.Unmarshal([]byte(raw), &instance); err != nil {
		return nil, fmt.Errorf("decode values entry: %w", err)
	}
	namespace, _ := instance["namespace"].(string)
	name, _ := instance["name"].(string)
	if namespace == "" || name == "" {
		return nil, fmt.Errorf("values entry without namespace or name")
	}
	sum, err := module.Checksum(instance)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", namespace, name, err)
	}
	if set, ok := live[instanceKey{namespace, name}][sum]; ok && set.claimed > 0 && set.count >= set.claimed {
		return nil, nil
	}
	objs, err := module.Render(instance)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", namespace, name, err)
	}
	for _, o := range objs {
		// The templates name the instance's namespace on every object; an
		// object anywhere else is a defect, never written.
		if o.GetNamespace() != namespace {
			return nil, fmt.Errorf("%s/%s: rendered %s %s in namespace %q", namespace, name, o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	return objs, nil
}

// readLive groups the live objects by instance and checksum. An item that
// does not decode counts for nothing.
func readLive(input *pkg.HookInput) rendered {
	live := rendered{}
	for _, k := range instanceobjects.Kinds {
		for o, err := range objectpatch.SnapshotIter[liveObject](input.Snapshots.Get(snapshotName(k))) {
			if err != nil || o.Checksum == "" {
				continue
			}
			key := instanceKey{o.Namespace, o.Instance}
			if live[key] == nil {
				live[key] = map[string]renderedSet{}
			}
			set := live[key][o.Checksum]
			set.count++
			// The largest claim: a look-alike can only make its own
			// instance render again, never skip a render.
			if n, err := strconv.Atoi(o.Objects); err == nil && n > set.claimed {
				set.claimed = n
			}
			live[key][o.Checksum] = set
		}
	}
	return live
}
