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
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"

	sdkhook "github.com/deckhouse/module-sdk/pkg/hook"
	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	bindingcontext "github.com/flant/shell-operator/pkg/hook/binding_context"
	htypes "github.com/flant/shell-operator/pkg/hook/types"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
	"github.com/deckhouse/managed-starrocks/hooks/instanceobjects"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// What addon-operator keeps of an object in a tenant namespace, from the
// source of the versions in go.mod:
//
//   - shell-operator's kube_events_manager starts one client-go shared
//     informer per GVR, namespace, label and field selector (factory.go,
//     FactoryIndex; dynamicinformer.NewFilteredDynamicSharedInformerFactory,
//     no transform): its cache holds every object the selector lists, in
//     full, whatever keepFullObjectsInMemory says;
//   - each binding keeps its jq filter's result of every such object
//     (resource_informer.go cachedObjects; keepFullObjectsInMemory: false,
//     which module-sdk and addon-operator's batch hooks set, drops only the
//     full object from it), and every queued event carries one more copy;
//   - every run of a hook gets the snapshots of all its bindings (group
//     "main", addon-operator kind/batch_hook.go), encoded into the binding
//     context file (BindingContextList.Json), each filter result decoded
//     and encoded again on the way (kemtypes.ObjectAndFilterResult.Map).
//
// So a tenant object costs its full size once per informer whose selector
// lists it, and its filter results over and over. The bounds below are per
// such object.
const (
	// floodAnnotationBytes is the annotation of the flood that took
	// addon-operator from 200 MiB to 5.5 GiB: 800 such ConfigMaps.
	floodAnnotationBytes = 250 << 10
	// maxFilterBytes bounds the filter results of one tenant object, all
	// bindings together: whatever its metadata, no binding keeps more of it.
	maxFilterBytes = 16 << 10
	// maxPodFilterBytes bounds them for a pod: two bindings read its
	// agent's report, whose messages are cut to 1 KiB but whose lists only
	// the API server bounds (256 KiB of annotations).
	maxPodFilterBytes = 2 * 256 << 10
	// maxFloodFilterBytes bounds them for the flood's shape (one large
	// annotation or agent report).
	maxFloodFilterBytes = 4 << 10
	tenantNamespace     = "tenant-a"
)

// notTenantWritable are the kinds the hooks watch that a tenant with edit
// rights in its namespace cannot write: cluster-scoped, or kept from the
// edit role (ResourceQuota).
var notTenantWritable = map[string]bool{"Namespace": true, "StorageClass": true, "StarrocksClass": true, "ResourceQuota": true}

// fullCopyAllowed are the kinds of which addon-operator may keep a
// tenant's object in full once (one informer), with Deckhouse's policies in
// force: the module's own API (every Starrocks and StarrocksBackup is an
// instance's or a backup's), the pods (the StatefulSet controller makes them
// with the template's labels, which cannot carry `heritage: deckhouse`: the
// agent writes to its own pod) and the users' connection Secrets (the agent
// writes them: made without `heritage`). Every other kind the module makes
// labelled `heritage: deckhouse`, which Deckhouse lets no tenant set, and is
// watched only so labelled.
var fullCopyAllowed = map[string]bool{"Starrocks": true, "StarrocksBackup": true, "Pod": true, "Secret": true}

type informerKey struct{ apiVersion, kind, namespaces, labels string }

// holding is what addon-operator keeps of one object.
type holding struct {
	informers   map[informerKey]bool
	filterBytes int
	bindings    []string
}

func holdingsOf(t *testing.T, cfg *kind.BatchHookConfig, obj *unstructured.Unstructured) holding {
	t.Helper()
	h := holding{informers: map[informerKey]bool{}}
	for _, hk := range cfg.Hooks {
		for _, b := range hk.Kubernetes {
			snap, err := moduleloop.FilterSnapshot(b, []*unstructured.Unstructured{obj})
			require.NoError(t, err, "hook %s binding %s", hk.Metadata.Name, b.Name)
			if len(snap) == 0 {
				continue
			}
			h.informers[informerOf(t, b)] = true
			h.bindings = append(h.bindings, hk.Metadata.Name+"/"+b.Name)
			if s, ok := snap[0].FilterResult.(string); ok {
				h.filterBytes += len(s)
			} else {
				data, _ := json.Marshal(snap[0].Object)
				h.filterBytes += len(data)
			}
		}
	}
	return h
}

// informerOf is shell-operator's FactoryIndex of a binding: bindings with
// the same kind, namespaces and selectors share one informer.
func informerOf(t *testing.T, b sdkhook.KubernetesConfig) informerKey {
	t.Helper()
	k := informerKey{apiVersion: b.APIVersion, kind: b.Kind}
	if b.NamespaceSelector != nil && b.NamespaceSelector.NameSelector != nil {
		k.namespaces = strings.Join(b.NamespaceSelector.NameSelector.MatchNames, ",")
	}
	if b.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(b.LabelSelector)
		require.NoError(t, err)
		k.labels = sel.String()
	}
	return k
}

// selectedLabels are labels that satisfy a binding's label selector: what
// a tenant copies from the module's objects to have its own watched.
func selectedLabels(sel *metav1.LabelSelector) map[string]string {
	out := map[string]string{}
	if sel == nil {
		return out
	}
	for k, v := range sel.MatchLabels {
		out[k] = v
	}
	for _, e := range sel.MatchExpressions {
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			out[e.Key] = e.Values[0]
		case metav1.LabelSelectorOpExists:
			out[e.Key] = "x"
		}
	}
	return out
}

// floods are the tenant objects that bindings in tenant namespaces select,
// one per binding, each labelled to satisfy its selector, without
// `heritage` when Deckhouse's policies are in force (withHeritage false),
// and carrying payload.
func floods(t *testing.T, cfg *kind.BatchHookConfig, withHeritage bool, payload func(kind string, o *unstructured.Unstructured)) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, hk := range cfg.Hooks {
		for _, b := range hk.Kubernetes {
			if notTenantWritable[b.Kind] {
				continue
			}
			if b.NamespaceSelector != nil && b.NamespaceSelector.NameSelector != nil &&
				!containsString(b.NamespaceSelector.NameSelector.MatchNames, tenantNamespace) {
				continue // the module namespace only: no tenant writes there
			}
			labels := selectedLabels(b.LabelSelector)
			if withHeritage {
				labels["heritage"] = "deckhouse"
			} else {
				delete(labels, "heritage")
			}
			id := b.Kind + fmt.Sprint(labels)
			if seen[id] {
				continue
			}
			seen[id] = true
			apiVersion := b.APIVersion
			if apiVersion == "" {
				apiVersion = "v1"
			}
			o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": b.Kind}}
			o.SetNamespace(tenantNamespace)
			o.SetName(fmt.Sprintf("flood-%d", len(out)))
			o.SetUID(k8stypes.UID(fmt.Sprintf("uid-flood-%d", len(out))))
			o.SetGeneration(1)
			o.SetResourceVersion("1")
			o.SetLabels(labels)
			payload(b.Kind, o)
			out = append(out, o)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// bigAnnotation is the flood's payload: one 250 KB annotation, which on a
// pod is an agent report (valid JSON) with a 250 KB message.
func bigAnnotation(kind string, o *unstructured.Unstructured) {
	blob := strings.Repeat("x", floodAnnotationBytes)
	if kind == "Pod" {
		report, _ := json.Marshal(map[string]any{
			"tls":      map[string]any{"ready": false, "reason": "TLSNotReady", "message": blob},
			"accounts": map[string]any{"ready": true, "reason": "AccountsReady", "message": blob},
		})
		o.SetAnnotations(map[string]string{agentconfig.StatusAnnotation: string(report)})
		return
	}
	o.SetAnnotations(map[string]string{"tenant.example.com/blob": blob})
}

// worstMetadata is metadata as large as the API server lets a tenant make
// it in every way a filter could keep: many labels and annotations with
// the longest keys, long values, many ownerReferences (about 1 MB).
func worstMetadata(kind string, o *unstructured.Unstructured) {
	bigAnnotation(kind, o)
	if kind == "Pod" {
		// Long messages in every field that has one.
		msg := strings.Repeat("m", 60<<10)
		report, _ := json.Marshal(map[string]any{
			"tls":      map[string]any{"ready": false, "reason": "TLSNotReady", "message": msg},
			"accounts": map[string]any{"ready": true, "reason": "AccountsReady", "message": msg},
			"join":     map[string]any{"reason": "Joining", "message": msg},
		})
		o.SetAnnotations(map[string]string{agentconfig.StatusAnnotation: string(report)})
	}
	labels := o.GetLabels()
	annotations := o.GetAnnotations()
	prefix := strings.Repeat("p", 240) + ".example.com/"
	for i := range 400 {
		labels[fmt.Sprintf("%s%s%03d", prefix, strings.Repeat("l", 60), i)] = strings.Repeat("v", 63)
		annotations[fmt.Sprintf("%s%s%03d", prefix, strings.Repeat("a", 60), i)] = strings.Repeat("w", 1000)
	}
	o.SetLabels(labels)
	o.SetAnnotations(annotations)
	var owners []metav1.OwnerReference
	for i := range 400 {
		owners = append(owners, metav1.OwnerReference{APIVersion: strings.Repeat("g", 200) + "/v1", Kind: strings.Repeat("K", 60),
			Name: fmt.Sprintf("%s%03d", strings.Repeat("n", 240), i), UID: "uid"})
	}
	o.SetOwnerReferences(owners)
}

// oversizedReports are agent reports of about 250 KB, each beyond one
// bound of the pod filters.
func oversizedReports() map[string]string {
	host := strings.Repeat("h", 200)
	var hosts, nodes []any
	for range floodAnnotationBytes / (len(host) + 3) {
		hosts = append(hosts, host)
	}
	for range floodAnnotationBytes / (len(host) + 12) {
		nodes = append(nodes, map[string]any{"host": host})
	}
	long := strings.Repeat("n", floodAnnotationBytes)
	reports := map[string]any{
		"list of backends":          map[string]any{"membership": map[string]any{"backends": hosts}},
		"list of drains":            map[string]any{"membership": map[string]any{"draining": []any{map[string]any{"host": long}}}},
		"leader's name":             map[string]any{"membership": map[string]any{"leader": long}},
		"list of nodes":             map[string]any{"membership": map[string]any{"nodes": nodes}},
		"user's name":               map[string]any{"users": map[string]any{"users": []any{map[string]any{"name": long}}}},
		"backup report":             map[string]any{"backup": map[string]any{"sets": []any{map[string]any{"message": long}}}},
		"restore report":            map[string]any{"restore": map[string]any{"databases": []any{map[string]any{"name": long}}}},
		"replication table's name":  map[string]any{"membership": map[string]any{"replication": map[string]any{"maxReplicationTable": long}}},
		"reason of the TLS verdict": map[string]any{"tls": map[string]any{"reason": long}},
	}
	out := map[string]string{}
	for what, r := range reports {
		data, _ := json.Marshal(r)
		out[what] = string(data)
	}
	return out
}

func kbytes(n int) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }

// A tenant labels its own objects of every watched kind like the module's
// (one flood object per binding) and attaches 250 KB to each. With
// Deckhouse's policies in force (no tenant sets `heritage: deckhouse`) only
// the kinds the module cannot label so are held in full, once; without
// them, or for those kinds, each object costs at most maxFloodFilterBytes
// of filter results, never its annotation.
func TestATenantsLabelledObjectsStayOutOfAddonOperatorsMemory(t *testing.T) {
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", buildHooks(t))
	require.NoError(t, err)
	for _, policies := range []bool{true, false} {
		name := "under Deckhouse's policies"
		if !policies {
			name = "without Deckhouse's policies (the tenant labels heritage: deckhouse too)"
		}
		t.Run(name, func(t *testing.T) {
			for _, o := range floods(t, cfg, !policies, bigAnnotation) {
				h := holdingsOf(t, cfg, o)
				what := fmt.Sprintf("%s %v: bindings %v", o.GetKind(), o.GetLabels(), h.bindings)
				switch {
				case policies && !fullCopyAllowed[o.GetKind()]:
					assert.Empty(t, h.informers, "no informer may list a tenant's %s", what)
				default:
					assert.LessOrEqual(t, len(h.informers), 1, "at most one informer holds the tenant's %s", what)
				}
				assert.LessOrEqual(t, h.filterBytes, maxFloodFilterBytes, "the filter results of %s are %s", what, kbytes(h.filterBytes))
			}
		})
	}
	// A report beyond the bounds of the pod filters (a list longer than
	// shared.MaxReportEntries, a name longer than shared.MaxNameBytes, a
	// backup or restore report longer than shared.MaxReportBytes) is kept
	// as an unreadable marker, not as what it says.
	for what, report := range oversizedReports() {
		t.Run("a pod's "+what, func(t *testing.T) {
			for _, o := range floods(t, cfg, false, func(kind string, o *unstructured.Unstructured) {
				bigAnnotation(kind, o)
				if kind == "Pod" {
					o.SetAnnotations(map[string]string{agentconfig.StatusAnnotation: report})
				}
			}) {
				if o.GetKind() != "Pod" {
					continue
				}
				h := holdingsOf(t, cfg, o)
				assert.LessOrEqual(t, h.filterBytes, maxFloodFilterBytes, "the filter results of a pod with %s are %s", what, kbytes(h.filterBytes))
			}
		})
	}
	t.Run("whatever the metadata", func(t *testing.T) {
		var worst []string
		for _, o := range floods(t, cfg, true, worstMetadata) {
			h := holdingsOf(t, cfg, o)
			bound := maxFilterBytes
			if o.GetKind() == "Pod" {
				bound = maxPodFilterBytes
			}
			assert.LessOrEqual(t, h.filterBytes, bound, "the filter results of %s %v are %s", o.GetKind(), h.bindings, kbytes(h.filterBytes))
			worst = append(worst, fmt.Sprintf("%s %s", o.GetKind(), kbytes(h.filterBytes)))
		}
		sort.Strings(worst)
		t.Logf("filter results of a tenant object with the largest metadata, all bindings: %v", worst)
	})
}

// The module's own objects pass the same selectors: the labels every
// rendered object carries (shared.InstanceLabels) satisfy every tenant
// namespace binding of its kind but the users' connection Secrets, which
// go without `heritage`.
func TestTheModulesLabelsSatisfyItsBindings(t *testing.T) {
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", buildHooks(t))
	require.NoError(t, err)
	for _, hk := range cfg.Hooks {
		for _, b := range hk.Kubernetes {
			if b.LabelSelector == nil || b.Kind == "Pod" {
				continue
			}
			labels := shared.InstanceLabels("olap", selectedLabels(b.LabelSelector)[shared.LabelState])
			if c := selectedLabels(b.LabelSelector)[shared.LabelComponent]; c != "" {
				labels[shared.LabelComponent] = c
			}
			sel, err := metav1.LabelSelectorAsSelector(b.LabelSelector)
			require.NoError(t, err)
			assert.True(t, sel.Matches(k8slabels.Set(labels)), "hook %s binding %s (%s) selects the module's own objects", hk.Metadata.Name, b.Name, sel)
		}
	}
}

// floodHeld is what the hooks' bindings make addon-operator hold of objs,
// built with its own code (shell-operator's jq filter and binding context
// encoding): each binding's filter results and the binding context of one
// run of each hook that selects any (its snapshots encoded as
// BindingContextList.Json does for a batch hook run); and how many objects
// its informers list, each held in full once per informer (client-go
// decodes its own copy from the API server's answer).
func floodHeld(t *testing.T, cfg *kind.BatchHookConfig, objs []*unstructured.Unstructured) ([]any, int) {
	t.Helper()
	var held []any
	listed := 0
	informers := map[informerKey]bool{}
	for _, hk := range cfg.Hooks {
		snaps := map[string][]kemtypes.ObjectAndFilterResult{}
		for _, b := range hk.Kubernetes {
			snap, err := moduleloop.FilterSnapshot(b, objs)
			require.NoError(t, err)
			if len(snap) == 0 {
				continue
			}
			snaps[b.Name] = snap
			held = append(held, snap)
			if key := informerOf(t, b); !informers[key] {
				informers[key] = true
				listed += len(snap)
			}
		}
		if len(snaps) == 0 {
			continue
		}
		bc := bindingcontext.BindingContext{Binding: "flood", Snapshots: snaps}
		bc.Metadata.BindingType = htypes.OnKubernetesEvent
		bc.Metadata.Group = "main"
		bc.Metadata.IncludeAllSnapshots = true
		data, err := bindingcontext.ConvertBindingContextList("v1", []bindingcontext.BindingContext{bc}).Json()
		require.NoError(t, err)
		held = append(held, data)
	}
	return held, listed
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The flood that took addon-operator from 200 MiB to 5.5 GiB: 800
// ConfigMaps of a tenant labelled like an instance's, 250 KB each. Measured
// with addon-operator's own code: under Deckhouse's policies it holds
// nothing of them; without them (the tenant labels `heritage: deckhouse`
// too) the objects once, in one informer, and at most 2 KiB each besides.
func TestAFloodOfLabelledConfigMapsStaysWithinTheMemoryBound(t *testing.T) {
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", buildHooks(t))
	require.NoError(t, err)
	const n = 800
	for _, tc := range []struct {
		name     string
		heritage bool
		// bound on what the bindings hold
		bound uint64
		// copies of each object the informers may hold
		copies uint64
	}{
		{"under Deckhouse's policies", false, 1 << 20, 0},
		{"without Deckhouse's policies", true, n * 2 << 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelInstance: "olap", shared.LabelComponent: shared.ComponentFrontend}
			if tc.heritage {
				labels["heritage"] = "deckhouse"
			}
			objs := make([]*unstructured.Unstructured, 0, n)
			for i := range n {
				o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
				o.SetNamespace(tenantNamespace)
				o.SetName(fmt.Sprintf("flood-%d", i))
				o.SetUID(k8stypes.UID(fmt.Sprintf("uid-flood-%d", i)))
				o.SetResourceVersion("1")
				o.SetLabels(labels)
				o.SetAnnotations(map[string]string{"tenant.example.com/blob": strings.Repeat(string(rune('a'+i%26)), floodAnnotationBytes)})
				objs = append(objs, o)
			}
			size := uint64(n * floodAnnotationBytes)
			before := heapInUse()
			held, listed := floodHeld(t, cfg, objs)
			after := heapInUse()
			runtime.KeepAlive(held)
			grown := uint64(0)
			if after > before {
				grown = after - before
			}
			t.Logf("%d ConfigMaps of %d KiB (%.1f MiB): the bindings hold %.1f MiB, and informers list %d of them in full", n, floodAnnotationBytes>>10,
				float64(size)/(1<<20), float64(grown)/(1<<20), listed)
			assert.LessOrEqual(t, grown, tc.bound, "what the bindings hold of %d flood ConfigMaps", n)
			assert.LessOrEqual(t, uint64(listed), tc.copies*n, "copies of the flood ConfigMaps in informers")
		})
	}
}

// BenchmarkRunUnderAFlood measures what each run of the instanceobjects
// hook costs addon-operator before the hook starts: applying the jq filter
// to a changed object and encoding the snapshots of all its bindings into
// the binding context (BindingContextList.Json), with the objects of 100
// instances (the floor) and with those and 800 ConfigMaps of a tenant
// labelled like an instance's, 250 KB each: without `heritage: deckhouse`
// (Deckhouse's policies in force) and with it (a cluster without them). Reported as the ratio to the
// floor measured in the same run: a tenant's flood slowed another tenant's
// change from 0.6 s to 8.5 s when the filters kept its annotations.
func BenchmarkRunUnderAFlood(b *testing.B) {
	var bindings []sdkhook.KubernetesConfig
	for _, k := range instanceobjects.Config.Kubernetes {
		bindings = append(bindings, sdkhook.KubernetesConfig{Name: k.Name, APIVersion: k.APIVersion, Kind: k.Kind, LabelSelector: k.LabelSelector, JqFilter: k.JqFilter})
	}
	genuine := func(i int) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"fe.conf": strings.Repeat("k = v\n", 200)}}}
		o.SetNamespace(fmt.Sprintf("team-%d", i))
		o.SetName(fmt.Sprintf("d8ms-sr-olap-%d-fe", i))
		o.SetUID(k8stypes.UID(fmt.Sprintf("uid-%d", i)))
		o.SetResourceVersion("1")
		o.SetLabels(shared.InstanceLabels("olap", ""))
		o.SetAnnotations(map[string]string{"managed-starrocks.deckhouse.io/render-checksum": strings.Repeat("c", 64)})
		return o
	}
	var floor, flooded, floodedUnderPolicies []*unstructured.Unstructured
	for i := range 100 {
		floor = append(floor, genuine(i))
	}
	flooded = append(flooded, floor...)
	floodedUnderPolicies = append(floodedUnderPolicies, floor...)
	for i := range 800 {
		o := genuine(1000 + i)
		o.SetAnnotations(map[string]string{"tenant.example.com/blob": strings.Repeat("x", floodAnnotationBytes)})
		flooded = append(flooded, o)
		// Deckhouse lets no tenant set the heritage label.
		o = o.DeepCopy()
		labels := o.GetLabels()
		delete(labels, "heritage")
		o.SetLabels(labels)
		floodedUnderPolicies = append(floodedUnderPolicies, o)
	}
	run := func(b *testing.B, objs []*unstructured.Unstructured) {
		snaps := map[string][]kemtypes.ObjectAndFilterResult{}
		for _, bd := range bindings {
			snap, err := moduleloop.FilterSnapshot(bd, objs)
			require.NoError(b, err)
			snaps[bd.Name] = snap
		}
		b.ResetTimer()
		for b.Loop() {
			bc := bindingcontext.BindingContext{Binding: "instance_ConfigMap", Snapshots: snaps}
			bc.Metadata.BindingType = htypes.OnKubernetesEvent
			bc.Metadata.Group = "main"
			bc.Metadata.IncludeAllSnapshots = true
			if _, err := bindingcontext.ConvertBindingContextList("v1", []bindingcontext.BindingContext{bc}).Json(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var floorNs float64
	b.Run("floor", func(b *testing.B) {
		run(b, floor)
		floorNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	for _, tc := range []struct {
		name string
		objs []*unstructured.Unstructured
	}{{"flood under Deckhouse's policies", floodedUnderPolicies}, {"flood without Deckhouse's policies", flooded}} {
		b.Run(tc.name, func(b *testing.B) {
			run(b, tc.objs)
			if floorNs > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floorNs, "x-floor")
			}
		})
	}
}
