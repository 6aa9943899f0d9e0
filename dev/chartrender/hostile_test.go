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
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// Everything a tenant writes is hostile input (DESIGN.md, "Trust boundary").
// These tests put hostile strings into every string a tenant (or an admin's
// class) controls and require that a schema layer refuses them, or that the
// chart renders exactly the objects a benign instance has: no extra object,
// nothing outside the instance's namespace but the module's own.

// clusterRoleBindingPayload is the storageClassName that once made the chart
// render a ClusterRoleBinding of system:authenticated to
// cluster-admin: a second YAML document in an unquoted scalar.
const clusterRoleBindingPayload = "fast\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: Group, name: \"system:authenticated\"}]\nx:"

// hostilePayloads are strings that break YAML or templates when emitted raw.
var hostilePayloads = []string{
	clusterRoleBindingPayload,
	"a: b: c",
	"fast\nkind: ClusterRoleBinding",
	"fast\n  extra: field",
	"---",
	"fast\n---\n",
	"{{ .Values }}",
	`{{ fail "x" }}`,
	`"quoted"`,
	"'single'",
	`fast"`,
	"fast #comment",
	"*alias",
	"&anchor fast",
	"!!binary fast",
	"[a, b]",
	"{a: b}",
	"- item",
	" fast",
	"fast ",
	"FAST",
	"fast\ttab",
	"fast\r\nkind: Secret",
	"null",
	"~",
	strings.Repeat("\u044f", 300),
	strings.Repeat("a", 300),
	"zone\u2028line",
	"team-a/other",
	"../etc",
}

// valuesPayloads is a smaller set for the values-level test, which puts each
// into every string of an entry (addon-operator's validation takes tens of
// milliseconds per run): one of each way a raw scalar breaks YAML or a
// template, plus "null", a valid name that YAML reads as no value.
var valuesPayloads = []string{
	clusterRoleBindingPayload,
	"a: b: c",
	"---",
	"{{ .Values }}",
	`"quoted"`,
	"fast #comment",
	" fast",
	"null",
	strings.Repeat("\u044f", 300),
}

// objectKey is what an object is: kind, namespace, name.
type objectKey struct{ Kind, Namespace, Name string }

func (k objectKey) String() string { return k.Kind + " " + k.Namespace + "/" + k.Name }

func keysOf(objs []*unstructured.Unstructured) []objectKey {
	out := make([]objectKey, 0, len(objs))
	for _, o := range objs {
		out = append(out, objectKey{o.GetKind(), o.GetNamespace(), o.GetName()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// harmless compares a render with the benign one. A string a schema layer
// accepted may be a valid name ("null" is one) and so rename the instance's
// objects; it must not add, drop or change the kind of any, move one out of
// the instance's namespace, or touch the module's own objects.
func harmless(got, benign []objectKey, namespace string) error {
	kinds := func(keys []objectKey) string {
		n := map[string]int{}
		for _, k := range keys {
			n[k.Kind]++
		}
		return fmt.Sprint(n)
	}
	module := func(keys []objectKey) []string {
		var out []string
		for _, k := range keys {
			if k.Namespace == "" || k.Namespace == chartrender.Namespace {
				out = append(out, k.String())
			}
		}
		return out
	}
	if kinds(got) != kinds(benign) {
		return fmt.Errorf("kinds %s, want %s", kinds(got), kinds(benign))
	}
	if fmt.Sprint(module(got)) != fmt.Sprint(module(benign)) {
		return fmt.Errorf("module objects %v, want %v", module(got), module(benign))
	}
	for _, k := range got {
		if k.Namespace != namespace && k.Namespace != "" && k.Namespace != chartrender.Namespace {
			return fmt.Errorf("%v is outside the instance's namespace %q", k, namespace)
		}
	}
	return nil
}

// hostileClass is the test class with every kind of class string that
// reaches values: zones, node selector, tolerations, node affinity.
func hostileClass() *v1alpha1.StarrocksClass {
	c := testClass()
	c.UID = types.UID("class-uid")
	c.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated.example.com", Operator: corev1.TolerationOpEqual, Value: "analytics", Effect: corev1.TaintEffectNoSchedule}}
	c.Spec.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "node.example.com/disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}},
		}}},
	}}
	return c
}

// hostileInstance is a Cluster instance that sets every optional string.
func hostileInstance() *v1alpha1.Starrocks {
	sr := starrocks("team-h", "target", v1alpha1.TypeCluster)
	sr.UID = "0b7c4a2e-1d6f-4c1a-9d2e-5f3a8b9c0d1e"
	sr.Spec.Frontend.PersistentVolumeClaim.StorageClassName = "fast"
	sr.Spec.Backend.PersistentVolumeClaim.StorageClassName = "fast"
	sr.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
	sr.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{
		{MatchLabels: map[string]string{"team.example.com/name": "reporting"}},
	}}
	sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}}
	sr.Spec.Roles = []v1alpha1.Role{{Name: "reader", Roles: []string{"public"},
		Privileges: []v1alpha1.Privilege{{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT"}}}}}
	sr.Spec.Users = []v1alpha1.User{{Name: "bi", Roles: []string{"reader"},
		PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "bi-password", Key: "password"}}}
	return sr
}

// layers runs objects through what stands between a tenant and the chart:
// the class rules (the webhook and the hooks run pkg/classrules through
// pkg/desired), the hooks' check of each entry against the instance schema
// (and addon-operator's of the module values), and the Helm engine. rejectedBy names the layer that
// refused; a render error is returned as err (it stops every instance).
func layers(t testing.TB, class *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks) (objs []*unstructured.Unstructured, rejectedBy string, err error) {
	t.Helper()
	out := desired.Compute(desired.Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class}, ClusterDomain: "cluster.local"})
	if !out.Results[0].Valid() {
		return nil, "classrules: " + out.Results[0].Violations.Error(), nil
	}
	return renderEntries(t, out.Instances)
}

// renderEntries validates instance entries as the hooks do (the instance
// schema, pkg/desired/instance.schema.yaml) and the values as addon-operator
// does, and renders.
func renderEntries(t testing.TB, instances any) (objs []*unstructured.Unstructured, rejectedBy string, err error) {
	t.Helper()
	settings := map[string]any{"internal": map[string]any{"webhookCert": webhookCert(t)}}
	vals, err := chartrender.ModuleValues(instances, settings)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range vals["internal"].(map[string]any)["instances"].([]any) {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := desired.ValidateEntry(data); err != nil {
			return nil, "the instance schema: " + err.Error(), nil
		}
	}
	if err := loadSchemas(t).ValidateValues(chartrender.ReleaseValues(vals)); err != nil {
		return nil, "openapi/values.yaml: " + err.Error(), nil
	}
	objs, err = renderValues(vals)
	return objs, "", err
}

// stringSetter sets one tenant- or class-controlled string.
type stringSetter struct {
	field string
	set   func(c *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string)
}

// specStrings lists every string of the Starrocks spec and metadata and of
// the class that reaches values. Quantities are typed (resource.Quantity) and
// cannot carry text; the values-level test covers their rendered form.
var specStrings = []stringSetter{
	{"metadata.name", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) { sr.Name = v }},
	{"metadata.namespace", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) { sr.Namespace = v }},
	{"metadata.uid", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) { sr.UID = types.UID(v) }},
	{"spec.starrocksClassName", func(c *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		c.Name, sr.Spec.StarrocksClassName = v, v
	}},
	{"spec.type", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Type = v1alpha1.InstanceType(v)
	}},
	{"spec.cluster.topology", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Cluster.Topology = v1alpha1.Topology(v)
	}},
	{"spec.frontend.persistentVolumeClaim.storageClassName", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Frontend.PersistentVolumeClaim.StorageClassName = v
	}},
	{"spec.backend.persistentVolumeClaim.storageClassName", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Backend.PersistentVolumeClaim.StorageClassName = v
	}},
	{"spec.network.allowedNamespaces[0].matchLabels (key)", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Network.AllowedNamespaces[0].MatchLabels = map[string]string{v: "reporting"}
	}},
	{"spec.network.allowedNamespaces[0].matchLabels (value)", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Network.AllowedNamespaces[0].MatchLabels = map[string]string{"team.example.com/name": v}
	}},
	{"spec.databases[0].name", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Databases[0].Name, sr.Spec.Roles[0].Privileges[0].Database = v, v
	}},
	{"spec.roles[0].name", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Roles[0].Name, sr.Spec.Users[0].Roles[0] = v, v
	}},
	{"spec.roles[0].roles[0]", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[0].Roles[0] = v }},
	{"spec.roles[0].privileges[0].database", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Roles[0].Privileges[0].Database = v
	}},
	{"spec.roles[0].privileges[0].on", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Roles[0].Privileges[0].Object = v1alpha1.PrivilegeObject(v)
	}},
	{"spec.roles[0].privileges[0].privileges[0]", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Roles[0].Privileges[0].Privileges[0] = v
	}},
	{"spec.users[0].name", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Name = v }},
	{"spec.users[0].roles[0]", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Roles[0] = v }},
	{"spec.users[0].passwordSecretRef.name", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Users[0].PasswordSecretRef.Name = v
	}},
	{"spec.users[0].passwordSecretRef.key", func(_ *v1alpha1.StarrocksClass, sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Users[0].PasswordSecretRef.Key = v
	}},
	{"class spec.topology.allowedZones[0]", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) {
		c.Spec.Topology.AllowedZones = []string{v, "zone-b"}
	}},
	{"class spec.nodeSelector (key)", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) {
		c.Spec.NodeSelector = map[string]string{v: ""}
	}},
	{"class spec.nodeSelector (value)", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) {
		c.Spec.NodeSelector = map[string]string{"node-role.example.com/analytics": v}
	}},
	{"class spec.tolerations[0].key", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) { c.Spec.Tolerations[0].Key = v }},
	{"class spec.tolerations[0].value", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) { c.Spec.Tolerations[0].Value = v }},
	{"class spec.nodeAffinity key", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) {
		c.Spec.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key = v
	}},
	{"class spec.nodeAffinity values[0]", func(c *v1alpha1.StarrocksClass, _ *v1alpha1.Starrocks, v string) {
		c.Spec.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{v}
	}},
}

func TestHostileSpecStringsAreRejectedOrHarmless(t *testing.T) {
	benign, rejected, err := layers(t, hostileClass(), hostileInstance())
	if err != nil || rejected != "" {
		t.Fatalf("the benign instance does not render: %v %s", err, rejected)
	}
	want := keysOf(benign)
	for _, s := range specStrings {
		for i, p := range hostilePayloads {
			t.Run(fmt.Sprintf("%s/%d", s.field, i), func(t *testing.T) {
				class, sr := hostileClass(), hostileInstance()
				s.set(class, sr, p)
				objs, rejectedBy, err := layers(t, class, sr)
				switch {
				case err != nil:
					t.Fatalf("%s = %q passed every schema layer and broke the chart (every instance stops): %v", s.field, p, err)
				case rejectedBy != "":
					return
				}
				if err := harmless(keysOf(objs), want, sr.Namespace); err != nil {
					t.Fatalf("%s = %q passed every schema layer and changed the rendered objects: %v", s.field, p, err)
				}
			})
		}
	}
}

// entryPath is where a string sits in a values entry: map keys (string),
// list indexes (int) and, last, mapKey when the string is a key of a
// label-like map.
type entryPath []any

type mapKey string

func (p entryPath) String() string {
	var b strings.Builder
	for _, e := range p {
		switch v := e.(type) {
		case string:
			b.WriteString("." + v)
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		case mapKey:
			fmt.Fprintf(&b, "{key %s}", string(v))
		}
	}
	return b.String()
}

// entryStrings lists every string and every key of a label-like map in a
// values entry, so a field added to pkg/desired is covered without editing
// this test.
func entryStrings(v any, path entryPath, out *[]entryPath) {
	at := func(e any) entryPath { return append(append(entryPath{}, path...), e) }
	switch n := v.(type) {
	case string:
		*out = append(*out, path)
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		labelLike := len(n) > 0
		for _, val := range n {
			if _, ok := val.(string); !ok {
				labelLike = false
			}
		}
		for _, k := range keys {
			if labelLike && len(path) > 0 {
				*out = append(*out, at(mapKey(k)))
			}
			entryStrings(n[k], at(k), out)
		}
	case []any:
		for i := range n {
			entryStrings(n[i], at(i), out)
		}
	}
}

// setEntryString writes payload at path (as listed by entryStrings) into a
// JSON copy of an entry.
func setEntryString(entry map[string]any, path entryPath, payload string) {
	var cur any = entry
	for i, e := range path {
		last := i == len(path)-1
		switch k := e.(type) {
		case mapKey:
			m := cur.(map[string]any)
			m[payload] = m[string(k)]
			delete(m, string(k))
			return
		case int:
			l := cur.([]any)
			if last {
				l[k] = payload
				return
			}
			cur = l[k]
		case string:
			m := cur.(map[string]any)
			if last {
				m[k] = payload
				return
			}
			cur = m[k]
		}
	}
}

// benignEntry is the values entry of hostileInstance as JSON, with an
// allow-list entry (pkg/desired may not fill it from the spec yet).
func benignEntry(t testing.TB) map[string]any {
	t.Helper()
	out := desired.Compute(desired.Input{Instances: []*v1alpha1.Starrocks{hostileInstance()}, Classes: []*v1alpha1.StarrocksClass{hostileClass()}, ClusterDomain: "cluster.local"})
	if len(out.Instances) != 1 {
		t.Fatalf("benign instance invalid: %v", out.Results[0].Violations)
	}
	e := out.Instances[0]
	e.Network.AllowedNamespaces = []desired.NamespaceSelector{{MatchLabels: map[string]string{"team.example.com/name": "reporting"}}}
	e.Frontend.Storage.TemplateSize = e.Frontend.Storage.Size
	e.Backend.Storage.TemplateSize = e.Backend.Storage.Size
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func cloneEntry(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(m)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The values entry is the last line of defence: an entry the class rules
// never saw (restored memory, a bug in a hook) must not inject either. Every
// string of the entry gets every payload; addon-operator's validation must
// refuse it or the chart must render the benign objects.
func TestHostileValuesStringsAreRejectedOrHarmless(t *testing.T) {
	base := benignEntry(t)
	var paths []entryPath
	entryStrings(base, nil, &paths)
	if len(paths) < 40 {
		t.Fatalf("found only %d strings in the entry: %v", len(paths), paths)
	}
	valuesRejectedOrHarmless(t, base, paths)
}

// valuesRejectedOrHarmless puts each of valuesPayloads at each path of the
// benign entry base in turn: the instance schema refuses it, or the chart
// renders the objects base renders, in base's namespace.
func valuesRejectedOrHarmless(t *testing.T, base map[string]any, paths []entryPath) {
	t.Helper()
	benign, rejected, err := renderEntries(t, []any{base})
	if err != nil || rejected != "" {
		t.Fatalf("the benign entry does not render: %v %s", err, rejected)
	}
	want := keysOf(benign)
	for _, path := range paths {
		for i, p := range valuesPayloads {
			t.Run(fmt.Sprintf("%s/%d", path, i), func(t *testing.T) {
				e := cloneEntry(t, base)
				setEntryString(e, path, p)
				objs, rejectedBy, err := renderEntries(t, []any{e})
				switch {
				case err != nil:
					t.Fatalf("%s = %q passed the instance schema and broke the chart: %v", path, p, err)
				case rejectedBy != "":
					return
				}
				if err := harmless(keysOf(objs), want, e["namespace"].(string)); err != nil {
					t.Fatalf("%s = %q passed the instance schema and changed the rendered objects: %v", path, p, err)
				}
			})
		}
	}
}

// entryOf is the values entry pkg/desired computes for a valid instance of
// class, as JSON.
func entryOf(t *testing.T, sr *v1alpha1.Starrocks, class *v1alpha1.StarrocksClass) map[string]any {
	t.Helper()
	out := desired.Compute(desired.Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class}, ClusterDomain: "cluster.local"})
	if len(out.Instances) != 1 {
		t.Fatalf("benign instance invalid: %v", out.Results[0].Violations)
	}
	data, _ := json.Marshal(out.Instances[0])
	var e map[string]any
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// FuzzValuesEntry is the values-level property with arbitrary strings: a
// string the schema accepts may rename the instance's objects (it may be a
// valid name), but never adds an object, changes a kind, or puts anything
// outside the entry's namespace besides the module's own objects.
//
//	go test ./dev/chartrender -run '^$' -fuzz FuzzValuesEntry -fuzztime 10s
func FuzzValuesEntry(f *testing.F) {
	base := benignEntry(f)
	var paths []entryPath
	entryStrings(base, nil, &paths)
	benign, _, err := renderEntries(f, []any{base})
	if err != nil {
		f.Fatal(err)
	}
	want := keysOf(benign)
	for i, p := range hostilePayloads {
		f.Add(uint16(i*7), p)
	}
	f.Fuzz(func(t *testing.T, field uint16, payload string) {
		path := paths[int(field)%len(paths)]
		e := cloneEntry(t, base)
		setEntryString(e, path, payload)
		objs, rejectedBy, err := renderEntries(t, []any{e})
		if err != nil {
			t.Fatalf("%s = %q passed the instance schema and broke the chart: %v", path, payload, err)
		}
		if rejectedBy != "" {
			return
		}
		ns, _ := e["namespace"].(string)
		if err := harmless(keysOf(objs), want, ns); err != nil {
			t.Fatalf("%s = %q passed the instance schema and changed the rendered objects: %v", path, payload, err)
		}
	})
}

// Whatever canonical form a volume size the class rules accept takes, the
// values schema accepts it too: an entry it refused would stop every
// instance, not just this one.
func TestEveryAcceptedVolumeSizePassesTheValuesSchema(t *testing.T) {
	for _, size := range []string{"150Gi", "1e3", "1e-9", "500m", "1n", "1u", "0.1Ki", "1073741824n", "123456789012345678901234567890"} {
		t.Run(size, func(t *testing.T) {
			sr := hostileInstance()
			sr.Spec.Backend.PersistentVolumeClaim.Size = resource.MustParse(size)
			_, rejectedBy, err := layers(t, hostileClass(), sr)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if strings.HasPrefix(rejectedBy, "the instance schema") || strings.HasPrefix(rejectedBy, "openapi") {
				t.Fatalf("size %s (%s) accepted by the class rules but refused by the instance schema: %s", size, sr.Spec.Backend.PersistentVolumeClaim.Size.String(), rejectedBy)
			}
		})
	}
}

// The longest name and namespace the CRD and the apiserver accept pass every
// layer: every derived name and host fits the values patterns.
func TestLongestNamesPassEveryLayer(t *testing.T) {
	sr := hostileInstance()
	sr.Name = "n" + strings.Repeat("a", 39)
	sr.Namespace = "s" + strings.Repeat("b", 62)
	objs, rejectedBy, err := layers(t, hostileClass(), sr)
	if err != nil || rejectedBy != "" {
		t.Fatalf("a %d-character name in a %d-character namespace: render error %v, refused by %s", len(sr.Name), len(sr.Namespace), err, rejectedBy)
	}
	if len(objs) == 0 {
		t.Fatal("nothing rendered")
	}
}

// The strings of agentConfig.grants become SQL identifiers and Secret
// references in the agent: the instance schema refuses every hostile payload
// there, not only those that would break the chart.
func TestHostileGrantsStringsAreRefusedByTheInstanceSchema(t *testing.T) {
	base := benignEntry(t)
	var paths []entryPath
	entryStrings(base, nil, &paths)
	checked := 0
	for _, path := range paths {
		if !strings.HasPrefix(path.String(), ".agentConfig.grants.") {
			continue
		}
		checked++
		for i, p := range append(valuesPayloads, "a`b", "a;b", "a'b", "on DATABASE x", strings.Repeat("a", 1000)) {
			if p == "null" || p == "---" && strings.HasSuffix(path.String(), ".key") {
				continue // a valid name, a valid Secret key
			}
			t.Run(fmt.Sprintf("%s/%d", path, i), func(t *testing.T) {
				e := cloneEntry(t, base)
				setEntryString(e, path, p)
				if _, rejectedBy, _ := renderEntries(t, []any{e}); !strings.HasPrefix(rejectedBy, "the instance schema") {
					t.Fatalf("%s = %q passed the instance schema", path, p)
				}
			})
		}
	}
	if checked < 10 {
		t.Fatalf("found %d strings in agentConfig.grants, want every one of the hostile instance's (10)", checked)
	}
}
