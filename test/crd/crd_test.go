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

// Package crd_test proves the CRDs in crds/ against a real kube-apiserver:
// documented examples are accepted, bad objects are rejected with a message
// that names the field, status is written only through its subresource and
// the printer columns are served.
package crd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubectlrun"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

const namespace = "team-a"

type cluster struct {
	dyn        dynamic.Interface
	kube       kubernetes.Interface
	kubeconfig string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{controlplane.ModuleCRDDir()}})
	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{dyn: dyn, kube: kube, kubeconfig: cp.KubeconfigPath()}
	c.ensureNamespace(t, namespace)
	return c
}

func (c *cluster) ensureNamespace(t *testing.T, name string) {
	t.Helper()
	if err := kubeutil.EnsureNamespace(context.Background(), c.kube, name, nil); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) resource(obj *unstructured.Unstructured) dynamic.ResourceInterface {
	gvr := v1alpha1.StarrocksGVR
	if obj.GetKind() == v1alpha1.StarrocksClassKind {
		return c.dyn.Resource(v1alpha1.StarrocksClassGVR)
	}
	if obj.GetKind() == v1alpha1.BackupKind {
		gvr = v1alpha1.StarrocksBackupGVR
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = namespace
	}
	return c.dyn.Resource(gvr).Namespace(ns)
}

func (c *cluster) create(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return c.resource(obj).Create(context.Background(), obj, metav1.CreateOptions{FieldValidation: "Strict"})
}

func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("parse test object: %v\n%s", err, doc)
	}
	return obj
}

const validClass = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: %s
spec:
  topology:
    allowedTopologies: [Ignored, Zonal, TransZonal]
    defaultTopology: Ignored
  sizingPolicies:
    - cores: {min: 1, max: 4}
      memory: {min: 4Gi, max: 16Gi, step: 1Gi}
      coreFractions: [50, 100]
    - cores: {min: 5, max: 16}
      memory: {min: 16Gi, max: 128Gi, step: 4Gi}
      coreFractions: [100]
  overridableConfiguration: [streamingLoadMaxMb, catalogTrashExpireSecond]
  configuration:
    streamingLoadMaxMb: 10240
    loadProcessMaxMemoryLimitPercent: 30
    catalogTrashExpireSecond: 86400
  validations:
    - rule: configuration.streamingLoadMaxMb <= 102400
      message: Stream Load requests may be at most 100 GB.
`

const validStarrocks = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: %s
  namespace: team-a
spec:
  starrocksClassName: default
  type: %s
  frontend:
    cpu: {cores: 2, coreFraction: 50}
    memory: {size: 8Gi}
    persistentVolumeClaim: {size: 20Gi}
  backend:
    %s
    cpu: {cores: 4}
    memory: {size: 16Gi}
    persistentVolumeClaim: {size: 100Gi, storageClassName: fast}
  configuration:
    streamingLoadMaxMb: 20480
  tls:
    requireSecureTransport: true
`

func classDoc(name string) string { return sprintf(validClass, name) }

func starrocksDoc(name, typ string) string {
	replicas := ""
	if typ == "Cluster" {
		replicas = "replicas: 3"
	}
	return sprintf(validStarrocks, name, typ, replicas)
}

const backupYAML = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata:
  name: olap-now
  namespace: team-a
spec:
  instanceName: olap
  databases:
    include: [sales]
`

// withBackup adds a valid spec.backup.
func withBackup(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	return set(t, obj, map[string]any{
		"storage": map[string]any{"endpoint": "https://s3.example.com", "bucket": "team-backups", "prefix": "starrocks/prod",
			"credentialsSecretRef": map[string]any{"name": "s3-keys"}},
		"schedule":  "0 3 * * *",
		"retention": map[string]any{"keepLast": int64(7)},
	}, "spec", "backup")
}

func restoreSource() map[string]any {
	return map[string]any{
		"storage":      map[string]any{"endpoint": "https://s3.example.com", "bucket": "team-backups", "credentialsSecretRef": map[string]any{"name": "s3-keys"}},
		"namespace":    "team-a",
		"instanceName": "olap",
		"instanceUID":  "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
		"backupId":     "11112222-3333-4444-5555-666677778888",
		"databases":    []any{map[string]any{"name": "sales", "backupTimestamp": "2026-01-01-03-00-05"}},
	}
}

func parseMap(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

func sprintf(format string, args ...any) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a.(string), 1)
	}
	return format
}

// set changes one field of an object; numeric path elements index lists.
func set(t *testing.T, obj *unstructured.Unstructured, value any, path ...string) *unstructured.Unstructured {
	t.Helper()
	var cur any = obj.Object
	for i, key := range path {
		last := i == len(path)-1
		switch node := cur.(type) {
		case map[string]any:
			if last {
				node[key] = value
				return obj
			}
			if _, ok := node[key]; !ok {
				node[key] = map[string]any{}
			}
			cur = node[key]
		case []any:
			idx, err := strconv.Atoi(key)
			if err != nil || idx >= len(node) {
				t.Fatalf("set %v: bad index %q", path, key)
			}
			if last {
				node[idx] = value
				return obj
			}
			cur = node[idx]
		default:
			t.Fatalf("set %v: %q is not an object or list", path, key)
		}
	}
	return obj
}

func del(obj *unstructured.Unstructured, path ...string) *unstructured.Unstructured {
	unstructured.RemoveNestedField(obj.Object, path...)
	return obj
}

func TestCRDs(t *testing.T) {
	c := startCluster(t)

	t.Run("kubectl explain reads as user docs", func(t *testing.T) {
		// From the OpenAPI the apiserver publishes (it may take a moment to
		// include new CRDs).
		explain := func(field string) string {
			deadline := time.Now().Add(20 * time.Second)
			for {
				r := kubectlrun.Run(t, c.kubeconfig, t.TempDir(), "explain", field)
				if !r.Failed {
					return r.Out
				}
				if time.Now().After(deadline) {
					t.Fatalf("kubectl explain %s: %s", field, r.Err)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
		checks := []struct {
			field string
			want  *regexp.Regexp
		}{
			{"starrocks", regexp.MustCompile(`DESCRIPTION:\n\s+A managed StarRocks instance`)},
			{"starrocks", regexp.MustCompile(`\n\s+spec\s+<Object> -required-\n\s+What the user orders`)},
			{"starrocks.spec.frontend.memory", regexp.MustCompile(`\n\s+size\s+<string> -required-\n`)},
			{"starrocks.spec.backend.persistentVolumeClaim", regexp.MustCompile(`\n\s+size\s+<string> -required-\n`)},
			{"starrocksclass.spec.sizingPolicies.memory", regexp.MustCompile(`\n\s+min\s+<string> -required-\n`)},
			{"starrocksclass", regexp.MustCompile(`\n\s+status\s+<Object>\n\s+What the module reports`)},
		}
		for _, ch := range checks {
			out := explain(ch.field)
			if !ch.want.MatchString(out) {
				t.Errorf("kubectl explain %s lacks %s:\n%s", ch.field, ch.want, out)
			}
			if w := internalWords.FindString(out); w != "" {
				t.Errorf("kubectl explain %s mentions %q:\n%s", ch.field, w, out)
			}
		}
	})

	t.Run("documented examples are accepted", func(t *testing.T) {
		docs := documentedExamples(t)
		if len(docs) < 2 {
			t.Fatalf("found %d Starrocks/StarrocksClass examples in docs/, want at least a class and an instance", len(docs))
		}
		for i, d := range docs {
			obj := parse(t, d.yaml)
			if ns := obj.GetNamespace(); ns != "" {
				c.ensureNamespace(t, ns)
			}
			// The same object may appear in several pages: give each copy
			// its own name so every one is really created.
			obj.SetName(obj.GetName() + "-doc" + itoa(i))
			if _, err := c.create(obj); err != nil {
				t.Errorf("%s: %s %s rejected: %v", d.source, obj.GetKind(), obj.GetName(), err)
			}
		}
	})

	t.Run("valid objects are accepted", func(t *testing.T) {
		for _, doc := range []string{classDoc("default"), starrocksDoc("standalone", "Standalone"), starrocksDoc("cluster", "Cluster")} {
			if _, err := c.create(parse(t, doc)); err != nil {
				t.Errorf("valid object rejected: %v\n%s", err, doc)
			}
		}
		open := set(t, parse(t, starrocksDoc("open", "Standalone")), manySelectors(16), "spec", "network", "allowedNamespaces")
		set(t, open, "ceph-rbd.fast", "spec", "frontend", "persistentVolumeClaim", "storageClassName")
		if _, err := c.create(open); err != nil {
			t.Errorf("16 namespace selectors and a dotted storage class rejected: %v", err)
		}
		accounts := parse(t, starrocksDoc("accounts", "Standalone"))
		set(t, accounts, manyNames(64), "spec", "databases")
		set(t, accounts, []any{map[string]any{"name": "reader", "roles": []any{"public"}, "privileges": []any{
			map[string]any{"database": "n0", "object": "Database", "privileges": []any{"CREATE TABLE", "CREATE MATERIALIZED VIEW"}},
			map[string]any{"database": "n0", "object": "AllTables", "privileges": []any{"SELECT", "INSERT"}},
			map[string]any{"database": "n0", "object": "AllViews", "privileges": []any{"SELECT", "ALTER", "DROP"}},
			map[string]any{"database": "n0", "object": "AllMaterializedViews", "privileges": []any{"SELECT", "ALTER", "REFRESH", "DROP"}},
		}}}, "spec", "roles")
		set(t, accounts, []any{map[string]any{"name": "a" + strings.Repeat("_b", 31) + "c", "roles": []any{"reader"}},
			map[string]any{"name": "bi", "passwordSecretRef": map[string]any{"name": "bi-password.v1"}}}, "spec", "users")
		created, err := c.create(accounts)
		if err != nil {
			t.Errorf("64 databases, a role and two users rejected: %v", err)
		} else {
			users, _, _ := unstructured.NestedSlice(created.Object, "spec", "users")
			if ref, _ := users[1].(map[string]any)["passwordSecretRef"].(map[string]any); ref["key"] != "password" {
				t.Errorf("passwordSecretRef.key defaulted to %v, want password", ref["key"])
			}
		}
		classAccounts := set(t, parse(t, classDoc("accounts")), map[string]any{"maxDatabases": int64(0), "maxRoles": int64(64), "maxUsers": int64(8),
			"forbiddenBuiltinRoles": []any{"db_admin", "user_admin", "public"}}, "spec", "accounts")
		if _, err := c.create(classAccounts); err != nil {
			t.Errorf("class with accounts limits rejected: %v", err)
		}
		backed := withBackup(t, parse(t, starrocksDoc("backed", "Standalone")))
		set(t, backed, map[string]any{"name": "s3-ca"}, "spec", "backup", "storage", "caSecretRef")
		set(t, backed, map[string]any{"include": []any{"sales", "events"}}, "spec", "backup", "databases")
		created, err = c.create(backed)
		if err != nil {
			t.Errorf("instance with spec.backup rejected: %v", err)
		} else {
			ref, _, _ := unstructured.NestedStringMap(created.Object, "spec", "backup", "storage", "credentialsSecretRef")
			ca, _, _ := unstructured.NestedString(created.Object, "spec", "backup", "storage", "caSecretRef", "key")
			if ref["accessKeyIDKey"] != "accessKeyID" || ref["secretAccessKeyKey"] != "secretAccessKey" || ca != "ca.crt" {
				t.Errorf("Secret keys defaulted to %v and CA key %q, want accessKeyID, secretAccessKey, ca.crt", ref, ca)
			}
			// spec.restore is only for a new instance.
			set(t, created, "olap-1", "spec", "restore", "backupName")
			if _, err := c.resource(created).Update(context.Background(), created, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.restore can only be set when the instance is created") {
				t.Errorf("adding spec.restore to an existing instance: %v, want the only-at-creation message", err)
			}
		}
		restored := set(t, parse(t, starrocksDoc("restored", "Standalone")), map[string]any{"source": restoreSource(), "databases": []any{"sales"}}, "spec", "restore")
		created, err = c.create(restored)
		if err != nil {
			t.Errorf("instance with spec.restore from a source rejected: %v", err)
		} else {
			set(t, created, []any{"events"}, "spec", "restore", "databases")
			if _, err := c.resource(created).Update(context.Background(), created, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.restore is immutable") {
				t.Errorf("changing spec.restore: %v, want the immutable message", err)
			}
		}
		backup := parse(t, backupYAML)
		created, err = c.create(backup)
		if err != nil {
			t.Errorf("StarrocksBackup rejected: %v", err)
		} else {
			set(t, created, "other", "spec", "instanceName")
			if _, err := c.resource(created).Update(context.Background(), created, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "StarrocksBackup spec is immutable") {
				t.Errorf("changing a StarrocksBackup's spec: %v, want the immutable message", err)
			}
		}
		for _, bad := range []struct{ name, value, want string }{
			{"bk-hostile-instance", "olap\nkind: Secret", "spec.instanceName in body should match"},
			{"bk-long-instance", strings.Repeat("a", 41), "spec.instanceName: Too long"},
		} {
			b := set(t, parse(t, strings.Replace(backupYAML, "olap-now", bad.name, 1)), bad.value, "spec", "instanceName")
			if _, err := c.create(b); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("StarrocksBackup with instanceName %q: %v, want %q", bad.value, err, bad.want)
			}
		}
		classBackup := set(t, parse(t, classDoc("backups")), map[string]any{"allowed": true, "allowedEndpoints": []any{"s3.example.com", "*.storage.svc"},
			"minScheduleInterval": "1h", "maxRetention": map[string]any{"keepLast": int64(30), "keepWithin": "720h"}}, "spec", "backup")
		if _, err := c.create(classBackup); err != nil {
			t.Errorf("class with a backup policy rejected: %v", err)
		}
		zones := set(t, parse(t, classDoc("zoned")), []any{"ru-central1-a", "zone_B.2"}, "spec", "topology", "allowedZones")
		if _, err := c.create(zones); err != nil {
			t.Errorf("class with label-value zones rejected: %v", err)
		}
	})

	t.Run("invalid objects are rejected with a message naming the field", func(t *testing.T) {
		sr := func(name string) *unstructured.Unstructured { return parse(t, starrocksDoc(name, "Standalone")) }
		cl := func() *unstructured.Unstructured { return parse(t, classDoc("broken")) }
		long := strings.Repeat("a", 41)
		cases := []struct {
			name string
			obj  *unstructured.Unstructured
			want string
		}{
			{"missing class name", del(sr("no-class"), "spec", "starrocksClassName"), "spec.starrocksClassName: Required value"},
			{"unknown type", set(t, sr("bad-type"), "Big", "spec", "type"), `spec.type: Unsupported value: "Big"`},
			{"backend replicas on Standalone", set(t, sr("standalone-replicas"), int64(2), "spec", "backend", "replicas"), "spec.backend.replicas may only be set when spec.type is Cluster"},
			{"Cluster without backend replicas", set(t, sr("cluster-no-replicas"), "Cluster", "spec", "type"), "spec.backend.replicas is required when spec.type is Cluster"},
			{"load memory percent zero", set(t, sr("lpm-zero"), int64(0), "spec", "configuration", "loadProcessMaxMemoryLimitPercent"), "spec.configuration.loadProcessMaxMemoryLimitPercent: Invalid value: 0: spec.configuration.loadProcessMaxMemoryLimitPercent in body should be greater than or equal to 1"},
			{"load memory percent above 100", set(t, sr("lpm-big"), int64(101), "spec", "configuration", "loadProcessMaxMemoryLimitPercent"), "spec.configuration.loadProcessMaxMemoryLimitPercent in body should be less than or equal to 100"},
			{"streaming load zero", set(t, sr("slm-zero"), int64(0), "spec", "configuration", "streamingLoadMaxMb"), "spec.configuration.streamingLoadMaxMb in body should be greater than or equal to 1"},
			{"negative trash expiry", set(t, sr("trash-neg"), int64(-1), "spec", "configuration", "catalogTrashExpireSecond"), "spec.configuration.catalogTrashExpireSecond in body should be greater than or equal to 0"},
			{"zero cores", set(t, sr("zero-cores"), int64(0), "spec", "frontend", "cpu", "cores"), "spec.frontend.cpu.cores in body should be greater than or equal to 1"},
			{"core fraction above 100", set(t, sr("fraction-big"), int64(150), "spec", "backend", "cpu", "coreFraction"), "spec.backend.cpu.coreFraction in body should be less than or equal to 100"},
			{"memory not a quantity", set(t, sr("mem-word"), "lots", "spec", "frontend", "memory", "size"), "spec.frontend.memory.size"},
			{"memory as a bare number", set(t, sr("mem-number"), int64(8), "spec", "frontend", "memory", "size"), `spec.frontend.memory.size: Invalid value: "integer": spec.frontend.memory.size in body must be of type string`},
			{"memory quantity longer than 64 characters", set(t, sr("mem-long"), strings.Repeat("1", 65), "spec", "frontend", "memory", "size"), "spec.frontend.memory.size: Too long"},
			{"zero memory", set(t, sr("mem-zero"), "0", "spec", "backend", "memory", "size"), "memory.size must be greater than zero"},
			{"zero volume", set(t, sr("pvc-zero"), "0Gi", "spec", "frontend", "persistentVolumeClaim", "size"), "persistentVolumeClaim.size must be greater than zero"},
			{"name too long", sr(long), "metadata.name: Too long: may not be more than 40 bytes"},
			{"name not a DNS-1035 label", sr("1st-instance"), "metadata.name must start with a lowercase letter"},
			{"require TLS not a boolean", set(t, sr("tls-word"), "yes", "spec", "tls", "requireSecureTransport"), `spec.tls.requireSecureTransport: Invalid value: "string": spec.tls.requireSecureTransport in body must be of type boolean`},
			{"unknown spec field", set(t, sr("unknown-field"), "x", "spec", "replicas"), `unknown field "spec.replicas"`},
			{"unknown topology", set(t, sr("bad-topology"), "Galactic", "spec", "cluster", "topology"), `spec.cluster.topology: Unsupported value: "Galactic"`},
			{"class: overlapping core ranges", set(t, cl(), int64(4), "spec", "sizingPolicies", "1", "cores", "min"), "core ranges [cores.min, cores.max] of two policies overlap"},
			{"class: default topology not allowed", set(t, cl(), []any{"Zonal"}, "spec", "topology", "allowedTopologies"), "spec.topology.defaultTopology must be one of spec.topology.allowedTopologies"},
			{"class: unknown topology", set(t, cl(), []any{"Ignored", "Galactic"}, "spec", "topology", "allowedTopologies"), `spec.topology.allowedTopologies[1]: Unsupported value: "Galactic"`},
			{"class: min cores above max", set(t, set(t, cl(), int64(4), "spec", "sizingPolicies", "0", "cores", "min"), int64(3), "spec", "sizingPolicies", "0", "cores", "max"), "cores.min must not be greater than cores.max"},
			{"class: no core fractions", set(t, cl(), []any{}, "spec", "sizingPolicies", "0", "coreFractions"), "spec.sizingPolicies[0].coreFractions: Invalid value: 0: spec.sizingPolicies[0].coreFractions in body should have at least 1 items"},
			{"class: core fraction zero", set(t, cl(), []any{int64(0)}, "spec", "sizingPolicies", "0", "coreFractions"), "spec.sizingPolicies[0].coreFractions[0] in body should be greater than or equal to 1"},
			{"class: empty validation rule", set(t, cl(), []any{map[string]any{"rule": "", "message": "m"}}, "spec", "validations"), "spec.validations[0].rule in body should be at least 1 chars long"},
			{"class: unknown overridable key", set(t, cl(), []any{"maxConnections"}, "spec", "overridableConfiguration"), `spec.overridableConfiguration[0]: Unsupported value: "maxConnections"`},
			{"class: no sizing policies", set(t, cl(), []any{}, "spec", "sizingPolicies"), "spec.sizingPolicies in body should have at least 1 items"},
			// Tenant strings that once reached the chart raw.
			{"storage class name holding a ClusterRoleBinding", set(t, sr("scn-doc"), hostileStorageClass, "spec", "backend", "persistentVolumeClaim", "storageClassName"), "spec.backend.persistentVolumeClaim.storageClassName in body should match"},
			{"storage class name with ': '", set(t, sr("scn-colon"), "a: b: c", "spec", "frontend", "persistentVolumeClaim", "storageClassName"), "spec.frontend.persistentVolumeClaim.storageClassName in body should match"},
			{"storage class name with '{{'", set(t, sr("scn-tpl"), "{{ .Values }}", "spec", "frontend", "persistentVolumeClaim", "storageClassName"), "spec.frontend.persistentVolumeClaim.storageClassName in body should match"},
			{"storage class name in upper case", set(t, sr("scn-upper"), "Fast", "spec", "backend", "persistentVolumeClaim", "storageClassName"), "spec.backend.persistentVolumeClaim.storageClassName in body should match"},
			{"class name with a newline", set(t, sr("cn-newline"), "default\nkind: Secret", "spec", "starrocksClassName"), "spec.starrocksClassName in body should match"},
			{"allowed namespaces: label key with a space", set(t, sr("np-key"), []any{map[string]any{"matchLabels": map[string]any{"a b": "x"}}}, "spec", "network", "allowedNamespaces"), "matchLabels keys must be label keys"},
			{"allowed namespaces: label key with a newline", set(t, sr("np-key-nl"), []any{map[string]any{"matchLabels": map[string]any{"a\n---": "x"}}}, "spec", "network", "allowedNamespaces"), "matchLabels keys must be label keys"},
			{"allowed namespaces: label value with '{{'", set(t, sr("np-value"), []any{map[string]any{"matchLabels": map[string]any{"team": "{{ .Values }}"}}}, "spec", "network", "allowedNamespaces"), "matchLabels values must be label values"},
			{"allowed namespaces: label value of 64 characters", set(t, sr("np-long"), []any{map[string]any{"matchLabels": map[string]any{"team": strings.Repeat("a", 64)}}}, "spec", "network", "allowedNamespaces"), "spec.network.allowedNamespaces[0].matchLabels.team: Too long: may not be more than 63 bytes"},
			{"allowed namespaces: empty selector selects every namespace", set(t, sr("np-empty"), []any{map[string]any{"matchLabels": map[string]any{}}}, "spec", "network", "allowedNamespaces"), "spec.network.allowedNamespaces[0].matchLabels: Invalid value: 0: spec.network.allowedNamespaces[0].matchLabels in body should have at least 1 properties"},
			{"allowed namespaces: more than 16 selectors", set(t, sr("np-many"), manySelectors(17), "spec", "network", "allowedNamespaces"), "spec.network.allowedNamespaces: Too many: 17: must have at most 16 items"},
			{"class: zone with a newline", set(t, cl(), []any{"zone-a\n- zone-b"}, "spec", "topology", "allowedZones"), "spec.topology.allowedZones[0] in body should match"},
			{"class: empty zone", set(t, cl(), []any{""}, "spec", "topology", "allowedZones"), "spec.topology.allowedZones[0] in body should be at least 1 chars long"},
			{"class: accounts limit above 64", set(t, cl(), int64(65), "spec", "accounts", "maxUsers"), "spec.accounts.maxUsers in body should be less than or equal to 64"},
			{"class: priority class holding a YAML document", set(t, cl(), "production-high\nkind: Secret", "spec", "priorityClassName"), "spec.priorityClassName in body should match"},
			{"class: a system- priority class", set(t, cl(), "system-node-critical", "spec", "priorityClassName"), "spec.priorityClassName: a system- PriorityClass is for the cluster's own components"},
			{"class: forbidding a role that is not built in", set(t, cl(), []any{"root"}, "spec", "accounts", "forbiddenBuiltinRoles"), `spec.accounts.forbiddenBuiltinRoles[0]: Invalid value: "root"`},
			// Backups.
			{"backup: retention with neither keepLast nor keepWithin", set(t, withBackup(t, sr("bk-ret")), map[string]any{}, "spec", "backup", "retention"), "retention needs keepLast, keepWithin or both"},
			{"backup: keepLast zero", set(t, withBackup(t, sr("bk-ret0")), map[string]any{"keepLast": int64(0)}, "spec", "backup", "retention"), "spec.backup.retention.keepLast in body should be greater than or equal to 1"},
			{"backup: keepWithin in days", set(t, withBackup(t, sr("bk-days")), map[string]any{"keepWithin": "7d"}, "spec", "backup", "retention"), "spec.backup.retention.keepWithin in body should match"},
			{"backup: schedule with 6 fields", set(t, withBackup(t, sr("bk-cron6")), "0 0 3 * * *", "spec", "backup", "schedule"), "spec.backup.schedule in body should match"},
			{"backup: schedule with a macro", set(t, withBackup(t, sr("bk-macro")), "@hourly", "spec", "backup", "schedule"), "spec.backup.schedule in body should match"},
			{"backup: no credentials", del(withBackup(t, sr("bk-nocred")), "spec", "backup", "storage", "credentialsSecretRef"), "spec.backup.storage.credentialsSecretRef: Required value"},
			{"restore: both a backup name and a source", set(t, set(t, sr("rs-both"), "olap-1", "spec", "restore", "backupName"), restoreSource(), "spec", "restore", "source"), "restore needs exactly one of backupName"},
			{"restore: neither a backup name nor a source", set(t, sr("rs-none"), map[string]any{}, "spec", "restore"), "restore needs exactly one of backupName"},
			{"restore: source without databases", set(t, sr("rs-nodb"), map[string]any{"source": del(parseMap(restoreSource()), "databases").Object}, "spec", "restore"), "spec.restore.source.databases: Required value"},
			{"class: backup endpoint with a scheme", set(t, cl(), map[string]any{"allowed": true, "allowedEndpoints": []any{"https://s3.example.com"}}, "spec", "backup"), "spec.backup.allowedEndpoints[0] in body should match"},
			{"class: backup interval in days", set(t, cl(), map[string]any{"allowed": true, "minScheduleInterval": "1d"}, "spec", "backup"), "spec.backup.minScheduleInterval in body should match"},
		}
		// Every tenant string of spec.backup and spec.restore is refused by
		// the schema when hostile: nothing raw reaches a
		// template, a NetworkPolicy or an SQL statement.
		backupHostile := []string{"a\"b", "a b", "x`; DROP", "{{ .Values }}", "a\n---", "caf\u00e9", "https://user:pw@h", "h/p?q"}
		backupFields := []struct {
			field string
			path  []string
			value func(v string) any
		}{
			{"spec.backup.storage.endpoint", []string{"spec", "backup", "storage", "endpoint"}, func(v string) any { return "https://" + v }},
			{"spec.backup.storage.region", []string{"spec", "backup", "storage", "region"}, func(v string) any { return v }},
			{"spec.backup.storage.bucket", []string{"spec", "backup", "storage", "bucket"}, func(v string) any { return "bkt" + v }},
			{"spec.backup.storage.prefix", []string{"spec", "backup", "storage", "prefix"}, func(v string) any { return "p/" + v }},
			{"spec.backup.storage.credentialsSecretRef.name", []string{"spec", "backup", "storage", "credentialsSecretRef", "name"}, func(v string) any { return v }},
			{"spec.backup.storage.credentialsSecretRef.accessKeyIDKey", []string{"spec", "backup", "storage", "credentialsSecretRef", "accessKeyIDKey"}, func(v string) any { return v }},
			{"spec.backup.storage.credentialsSecretRef.secretAccessKeyKey", []string{"spec", "backup", "storage", "credentialsSecretRef", "secretAccessKeyKey"}, func(v string) any { return v }},
			{"spec.backup.storage.caSecretRef.name", []string{"spec", "backup", "storage", "caSecretRef", "name"}, func(v string) any { return v }},
			{"spec.backup.schedule", []string{"spec", "backup", "schedule"}, func(v string) any { return "0 3 * * " + v }},
			{"spec.backup.databases.include[0]", []string{"spec", "backup", "databases", "include"}, func(v string) any { return []any{v} }},
			{"spec.backup.databases.exclude[0]", []string{"spec", "backup", "databases", "exclude"}, func(v string) any { return []any{v} }},
			{"spec.restore.backupName", []string{"spec", "restore", "backupName"}, func(v string) any { return v }},
			{"spec.restore.databases[0]", []string{"spec", "restore", "databases"}, func(v string) any { return []any{v} }},
		}
		for i, f := range backupFields {
			for j, v := range backupHostile {
				if strings.HasSuffix(f.field, "Key") && (v == "h/p?q" || v == "https://user:pw@h") {
					continue
				}
				obj := sr("bk-hostile-" + itoa(i) + "-" + itoa(j))
				if strings.HasPrefix(f.field, "spec.backup.") {
					obj = withBackup(t, obj)
				}
				if f.field == "spec.backup.storage.caSecretRef.name" {
					set(t, obj, map[string]any{"name": "ca"}, "spec", "backup", "storage", "caSecretRef")
				}
				cases = append(cases, struct {
					name string
					obj  *unstructured.Unstructured
					want string
				}{fmt.Sprintf("%s %q", f.field, v), set(t, obj, f.value(v), f.path...), f.field})
			}
		}
		// Names become StarRocks identifiers and Secret references: the
		// schema refuses every hostile one and names the field. Reserved
		// names (root, d8_agent, d8ms_managed, on) are the class rules'
		// (pkg/classrules): the webhook and the hooks refuse them.
		hostile := []string{"a'b", "a\"b", "a`b", "a;b", "x`; DROP DATABASE sales; --", "Sales", "a b",
			"\u0431\u0430\u0437\u0430", "caf\u00e9", "a\nb"}
		nameFields := []struct {
			field string
			set   func(o *unstructured.Unstructured, v string) *unstructured.Unstructured
		}{
			{"spec.databases[0].name", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": v}}, "spec", "databases")
			}},
			{"spec.roles[0].name", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": v}}, "spec", "roles")
			}},
			{"spec.roles[0].roles[0]", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": "r", "roles": []any{v}}}, "spec", "roles")
			}},
			{"spec.roles[0].privileges[0].database", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": "r", "privileges": []any{map[string]any{"database": v, "object": "Database", "privileges": []any{"ALTER"}}}}}, "spec", "roles")
			}},
			{"spec.roles[0].privileges[0].privileges[0]", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": "r", "privileges": []any{map[string]any{"database": "d", "object": "Database", "privileges": []any{v}}}}}, "spec", "roles")
			}},
			{"spec.users[0].name", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": v}}, "spec", "users")
			}},
			{"spec.users[0].roles[0]", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": "u", "roles": []any{v}}}, "spec", "users")
			}},
			{"spec.users[0].passwordSecretRef.name", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": "u", "passwordSecretRef": map[string]any{"name": v}}}, "spec", "users")
			}},
			{"spec.users[0].passwordSecretRef.key", func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
				return set(t, o, []any{map[string]any{"name": "u", "passwordSecretRef": map[string]any{"name": "s", "key": v}}}, "spec", "users")
			}},
		}
		n := 0
		for _, f := range nameFields {
			for _, v := range hostile {
				if strings.HasSuffix(f.field, "privileges[0]") && v == "Sales" || strings.HasSuffix(f.field, ".key") && v == "Sales" {
					continue // upper case is the syntax of a privilege and of a Secret key
				}
				want := f.field + " in body should match"
				if strings.HasSuffix(f.field, "privileges[0]") {
					want = f.field // the pattern or the CEL rule of allowed privileges
				}
				n++
				cases = append(cases, struct {
					name string
					obj  *unstructured.Unstructured
					want string
				}{fmt.Sprintf("%s %q", f.field, v), f.set(sr("hostile-"+itoa(n)), v), want})
			}
			n++
			cases = append(cases, struct {
				name string
				obj  *unstructured.Unstructured
				want string
			}{f.field + " of 1000 characters", f.set(sr("hostile-"+itoa(n)), strings.Repeat("a", 1000)), f.field + ": Too long"})
		}
		cases = append(cases, []struct {
			name string
			obj  *unstructured.Unstructured
			want string
		}{
			{"user name ending with _", set(t, sr("user-underscore"), []any{map[string]any{"name": "app_"}}, "spec", "users"), "spec.users[0].name in body should match"},
			{"SELECT on a database", set(t, sr("priv-db"), []any{map[string]any{"name": "r", "privileges": []any{map[string]any{"database": "d", "object": "Database", "privileges": []any{"SELECT"}}}}}, "spec", "roles"),
				"privileges on a Database must be among ALTER, DROP, CREATE TABLE"},
			{"INSERT on all views", set(t, sr("priv-views"), []any{map[string]any{"name": "r", "privileges": []any{map[string]any{"database": "d", "object": "AllViews", "privileges": []any{"INSERT"}}}}}, "spec", "roles"),
				"privileges on AllViews must be among SELECT, ALTER, DROP"},
			{"DELETE on all materialized views", set(t, sr("priv-mvs"), []any{map[string]any{"name": "r", "privileges": []any{map[string]any{"database": "d", "object": "AllMaterializedViews", "privileges": []any{"DELETE"}}}}}, "spec", "roles"),
				"privileges on AllMaterializedViews must be among SELECT, ALTER, REFRESH, DROP"},
			{"privileges on a table", set(t, sr("priv-table"), []any{map[string]any{"name": "r", "privileges": []any{map[string]any{"database": "d", "object": "Table", "privileges": []any{"SELECT"}}}}}, "spec", "roles"),
				`spec.roles[0].privileges[0].object: Unsupported value: "Table"`},
			{"the same user twice", set(t, sr("user-twice"), []any{map[string]any{"name": "u"}, map[string]any{"name": "u"}}, "spec", "users"), "spec.users[1]: Duplicate value"},
			{"65 databases", set(t, sr("dbs-65"), manyNames(65), "spec", "databases"), "spec.databases: Too many: 65: must have at most 64 items"},
		}...)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := c.create(tc.obj)
				if err == nil {
					t.Fatalf("accepted, want rejection mentioning %q", tc.want)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("rejected with\n  %v\nwant a message containing\n  %s", err, tc.want)
				}
			})
		}
	})

	t.Run("a bad quantity is refused with an example and nothing else", func(t *testing.T) {
		// The apiserver's answer to a bad quantity used to be the quantity
		// regular expression plus a line for every CEL rule of the field
		// that could not evaluate: a user learns nothing from either.
		sr := func(name string) *unstructured.Unstructured { return parse(t, starrocksDoc(name, "Standalone")) }
		for _, tc := range []struct {
			field string
			obj   *unstructured.Unstructured
		}{
			{"spec.frontend.memory.size", set(t, sr("qty-mem"), "10GB", "spec", "frontend", "memory", "size")},
			{"spec.backend.persistentVolumeClaim.size", set(t, sr("qty-pvc"), "lots", "spec", "backend", "persistentVolumeClaim", "size")},
			{"spec.sizingPolicies[0].memory.min", set(t, parse(t, classDoc("qty-class")), []any{map[string]any{
				"cores": map[string]any{"min": int64(1), "max": int64(4)}, "memory": map[string]any{"min": "1 Gi", "max": "8Gi"}, "coreFractions": []any{int64(100)}}}, "spec", "sizingPolicies")},
		} {
			t.Run(tc.field, func(t *testing.T) {
				_, err := c.create(tc.obj)
				if err == nil {
					t.Fatal("accepted")
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.field+": Invalid value: ") || !strings.Contains(msg, "must be a quantity such as 10Gi") {
					t.Errorf("rejected with\n  %s\nwant the field and an example (10Gi)", msg)
				}
				for _, noise := range []string{"<nil>", "should match", "[0-9]", "no such key", "evaluation"} {
					if strings.Contains(msg, noise) {
						t.Errorf("rejected with\n  %s\nwhich holds %q", msg, noise)
					}
				}
			})
		}
		// As a user sees it: kubectl apply of a manifest.
		dir := t.TempDir()
		doc, err := yaml.Marshal(set(t, sr("qty-kubectl"), "10GB", "spec", "frontend", "memory", "size").Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sr.yaml"), doc, 0o600); err != nil {
			t.Fatal(err)
		}
		got := kubectlrun.Run(t, c.kubeconfig, dir, "apply", "-f", "sr.yaml")
		out := got.Out + got.Err
		if !got.Failed || !strings.Contains(out, "spec.frontend.memory.size: Invalid value: \"10GB\": must be a quantity such as 10Gi") ||
			strings.Contains(out, "<nil>") || strings.Contains(out, "null") || strings.Contains(out, "should match") {
			t.Errorf("kubectl apply printed\n%s\nwant one line naming the field with an example (10Gi), no <nil>, null or regular expression", out)
		}
	})

	t.Run("invalid updates are rejected", func(t *testing.T) {
		base, err := c.create(parse(t, starrocksDoc("updates", "Cluster")))
		if err != nil {
			t.Fatal(err)
		}
		set(t, base, int64(5), "spec", "backend", "replicas")
		if base, err = c.resource(base).Update(context.Background(), base, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("growing backend replicas: %v", err)
		}
		cases := []struct {
			name   string
			change func(*unstructured.Unstructured)
			want   string
		}{
			{"class changes", func(o *unstructured.Unstructured) { set(t, o, "other", "spec", "starrocksClassName") }, "spec.starrocksClassName is immutable"},
			{"storage class changes", func(o *unstructured.Unstructured) {
				set(t, o, "slow", "spec", "backend", "persistentVolumeClaim", "storageClassName")
			}, "persistentVolumeClaim.storageClassName is immutable"},
			{"storage class is added", func(o *unstructured.Unstructured) {
				set(t, o, "slow", "spec", "frontend", "persistentVolumeClaim", "storageClassName")
			}, "spec.frontend.persistentVolumeClaim: Invalid value: persistentVolumeClaim.storageClassName is immutable"},
			{"volume shrinks", func(o *unstructured.Unstructured) {
				set(t, o, "50Gi", "spec", "backend", "persistentVolumeClaim", "size")
			}, `spec.backend.persistentVolumeClaim.size: Invalid value: "50Gi": persistentVolumeClaim.size cannot shrink`},
			{"Cluster becomes Standalone", func(o *unstructured.Unstructured) {
				set(t, o, "Standalone", "spec", "type")
				del(o, "spec", "backend", "replicas")
			}, "spec.type cannot change from Cluster to Standalone"},
			{"two BEs removed at once", func(o *unstructured.Unstructured) { set(t, o, int64(3), "spec", "backend", "replicas") },
				"spec.backend.replicas: Invalid value: the smallest BE count allowed now is the count in effect minus one: BEs are removed one at a time"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				obj := base.DeepCopy()
				tc.change(obj)
				_, err := c.resource(obj).Update(context.Background(), obj, metav1.UpdateOptions{})
				if err == nil {
					t.Fatalf("accepted, want rejection mentioning %q", tc.want)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("rejected with\n  %v\nwant a message containing\n  %s", err, tc.want)
				}
			})
		}
		t.Run("volume grows and one BE is removed", func(t *testing.T) {
			obj := base.DeepCopy()
			set(t, obj, "200Gi", "spec", "backend", "persistentVolumeClaim", "size")
			set(t, obj, int64(4), "spec", "backend", "replicas")
			if _, err := c.resource(obj).Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("allowed update rejected: %v", err)
			}
		})
		t.Run("3 BEs say they cannot shrink, to 1 or to 2", func(t *testing.T) {
			// A user refused 3 -> 1 must not be sent to try 3 -> 2 next.
			obj, err := c.resource(base).Get(context.Background(), base.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			set(t, obj, int64(3), "spec", "backend", "replicas")
			if obj, err = c.resource(obj).Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("4 -> 3 BEs rejected: %v", err)
			}
			for _, n := range []int64{1, 2} {
				o := set(t, obj.DeepCopy(), n, "spec", "backend", "replicas")
				_, err := c.resource(o).Update(context.Background(), o, metav1.UpdateOptions{})
				if want := "spec.backend.replicas: Invalid value: the smallest BE count allowed now is 3: BEs are removed one at a time and 2 BEs are not allowed"; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("3 -> %d BEs: %v, want a rejection containing %q", n, err, want)
				}
			}
		})
	})

	t.Run("the admin guide's command lists the instances a class change broke", func(t *testing.T) {
		testBrokenByClassCommand(t, c)
	})

	t.Run("the user guide's command waits for a user", func(t *testing.T) {
		testWaitForUserCommand(t, c)
	})

	t.Run("the docs quote kubectl get as kubectl prints it", func(t *testing.T) {
		testGetSamples(t, c)
	})

	t.Run("status is written only through the subresource", func(t *testing.T) {
		obj := parse(t, starrocksDoc("status-test", "Standalone"))
		set(t, obj, "Running", "status", "phase")
		created, err := c.create(obj)
		if err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedString(created.Object, "status", "phase"); found {
			t.Fatal("status sent with create was stored")
		}
		set(t, created, "Running", "status", "phase")
		updated, err := c.resource(created).Update(context.Background(), created, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedString(updated.Object, "status", "phase"); found {
			t.Fatal("status sent with a main-resource update was stored")
		}
		set(t, updated, "Running", "status", "phase")
		set(t, updated, map[string]any{"replicas": int64(3), "readyReplicas": int64(2), "ready": "2/3"}, "status", "frontend")
		set(t, updated, map[string]any{"replicas": int64(4), "readyReplicas": int64(4), "ready": "4/4"}, "status", "backend")
		// A later spec broke a class rule; the last valid one still runs.
		set(t, updated, []any{map[string]any{"type": "ConfigurationValid", "status": "False", "reason": "ClassRuleViolated",
			"message": "The spec breaks a class rule.", "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "status", "conditions")
		viaStatus, err := c.resource(updated).UpdateStatus(context.Background(), updated, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		if phase, _, _ := unstructured.NestedString(viaStatus.Object, "status", "phase"); phase != "Running" {
			t.Fatalf("status phase after UpdateStatus = %q, want Running", phase)
		}
		if viaStatus.GetGeneration() != updated.GetGeneration() {
			t.Errorf("status update changed generation %d -> %d", updated.GetGeneration(), viaStatus.GetGeneration())
		}

		t.Run("printer columns show", func(t *testing.T) {
			table := getTable(t, c, "/apis/managed-services.deckhouse.io/v1alpha1/namespaces/team-a/starrocks/status-test")
			want := []string{"Name", "Class", "Type", "Phase", "Valid", "FE Ready", "BE Ready", "CN Ready", "Endpoint", "Last Backup", "Age"}
			if got := table.columnNames(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("columns %v, want %v", got, want)
			}
			row := table.Rows[0].Cells
			if row[1] != "default" || row[2] != "Standalone" || row[3] != "Running" || row[4] != "False" || row[5] != "2/3" || row[6] != "4/4" {
				t.Fatalf("row %v, want class default, type Standalone, phase Running, valid False, FE ready 2/3, BE ready 4/4", row)
			}
			// Plain `kubectl get` (no -o wide) shows whether the spec is valid:
			// a phase of Running alone would hide that a change was refused.
			got := kubectlrun.Run(t, c.kubeconfig, t.TempDir(), "-n", namespace, "get", "starrocks", "status-test")
			lines := strings.Split(strings.TrimSpace(got.Out), "\n")
			if got.Failed || len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME CLASS TYPE PHASE VALID FE READY BE READY CN READY AGE" ||
				!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "status-test default Standalone Running False 2/3 4/4") {
				t.Fatalf("kubectl get starrocks printed\n%s%s\nwant the VALID column (False) and ready of desired pods (2/3, 4/4) without -o wide", got.Out, got.Err)
			}
			classTable := getTable(t, c, "/apis/managed-services.deckhouse.io/v1alpha1/starrocksclasses/default")
			if got := strings.Join(classTable.columnNames(), ","); got != "Name,Default topology,Policies,Valid,Age" {
				t.Fatalf("class columns %s", got)
			}
		})
	})
}

type table struct {
	ColumnDefinitions []struct {
		Name string `json:"name"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells []any `json:"cells"`
	} `json:"rows"`
}

func (tb table) columnNames() []string {
	var names []string
	for _, c := range tb.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

// getTable asks the apiserver for the server-side printed form kubectl shows.
func getTable(t *testing.T, c *cluster, path string) table {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.kube.Discovery().RESTClient().Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatalf("get table %s: %v", path, err)
	}
	var tb table
	if err := json.Unmarshal(raw, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 1 {
		t.Fatalf("table %s has %d rows", path, len(tb.Rows))
	}
	return tb
}

type example struct {
	source string
	yaml   string
}

var fence = regexp.MustCompile("(?s)```ya?ml\n(.*?)```")

// documentedExamples collects the Starrocks and StarrocksClass manifests of
// docs/: the example files and every YAML block of the English pages.
func documentedExamples(t *testing.T) []example {
	t.Helper()
	root := controlplane.RepoRoot()
	var out []example
	add := func(source, text string) {
		for _, doc := range strings.Split(text, "\n---") {
			var meta metav1.TypeMeta
			if yaml.Unmarshal([]byte(doc), &meta) != nil {
				continue
			}
			gv, _ := schema.ParseGroupVersion(meta.APIVersion)
			if gv.Group == v1alpha1.GroupName && (meta.Kind == v1alpha1.StarrocksKind || meta.Kind == v1alpha1.StarrocksClassKind) {
				out = append(out, example{source: source, yaml: doc})
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "examples", "*.yaml"))
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, f := range append(files, pages...) {
		if strings.HasSuffix(f, ".ru.md") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		if strings.HasSuffix(f, ".md") {
			for _, m := range fence.FindAllStringSubmatch(string(data), -1) {
				add(rel, m[1])
			}
			continue
		}
		add(rel, string(data))
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// hostileStorageClass is a storageClassName like the 238-character one that
// once made the chart render a ClusterRoleBinding of
// system:authenticated to cluster-admin: a second YAML document whose last
// key absorbs the rest of the template.
const hostileStorageClass = "fast\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: Group, name: \"system:authenticated\"}]\nx:"

// manyNames is n valid name objects (databases, users).
func manyNames(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": "n" + itoa(i)}
	}
	return out
}

// manySelectors is n valid namespace selectors with label keys of every form.
func manySelectors(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"matchLabels": map[string]any{
			"kubernetes.io/metadata.name":      "team-" + itoa(i),
			"team.example.com/tier_" + itoa(i): "gold.v1",
			"plain":                            "",
		}}
	}
	return out
}
