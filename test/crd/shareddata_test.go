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

package crd_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const sharedDataStarrocks = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: %s
  namespace: team-a
spec:
  starrocksClassName: default
  type: Cluster
  storage:
    mode: ObjectStorage
    objectStorage:
      endpoint: https://s3.example.com
      bucket: team-olap
      prefix: starrocks/prod
      region: us-east-1
      credentialsSecretRef: {name: s3-keys}
  frontend:
    cpu: {cores: 2, coreFraction: 50}
    memory: {size: 8Gi}
    persistentVolumeClaim: {size: 20Gi}
  compute:
    cpu: {cores: 4}
    memory: {size: 16Gi}
    replicas: 3
    cache: {size: 100Gi}
`

func sharedDataDoc(name string) string { return sprintf(sharedDataStarrocks, name) }

const sourceUID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"

func snapshotSource(namespace, name, uid string) map[string]any {
	return map[string]any{"namespace": namespace, "instanceName": name, "instanceUID": uid}
}

// TestSharedDataCRD proves the schema's shared-data rules against a real
// kube-apiserver: the mode and the object storage location are fixed at
// creation, a shared-data instance has compute nodes and no BEs, and no
// BACKUP schedule.
func TestSharedDataCRD(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()

	t.Run("a shared-data instance is accepted", func(t *testing.T) {
		obj := parse(t, sharedDataDoc("sd-ok"))
		if _, err := c.create(obj); err != nil {
			t.Fatal(err)
		}
		auto := parse(t, sharedDataDoc("sd-auto"))
		del(auto, "spec", "compute", "replicas")
		set(t, auto, map[string]any{"minReplicas": int64(1), "maxReplicas": int64(8), "targetCPUUtilizationPercentage": int64(70)}, "spec", "compute", "autoscaling")
		if _, err := c.create(auto); err != nil {
			t.Fatal(err)
		}
	})

	refused := []struct {
		name   string
		change func(*unstructured.Unstructured)
		want   string
	}{
		{"backend with object storage", func(o *unstructured.Unstructured) {
			set(t, o, map[string]any{"cpu": map[string]any{"cores": int64(4)}, "memory": map[string]any{"size": "16Gi"},
				"persistentVolumeClaim": map[string]any{"size": "100Gi"}, "replicas": int64(3)}, "spec", "backend")
		}, "spec.backend is required with local storage and not allowed with spec.storage.mode ObjectStorage"},
		{"no compute", func(o *unstructured.Unstructured) { del(o, "spec", "compute") }, "spec.compute is required with spec.storage.mode ObjectStorage"},
		{"no object storage", func(o *unstructured.Unstructured) { del(o, "spec", "storage", "objectStorage") }, "spec.storage.objectStorage is required when spec.storage.mode is ObjectStorage"},
		{"replicas and autoscaling", func(o *unstructured.Unstructured) {
			set(t, o, map[string]any{"minReplicas": int64(1), "maxReplicas": int64(8), "targetCPUUtilizationPercentage": int64(70)}, "spec", "compute", "autoscaling")
		}, "spec.compute needs exactly one of replicas"},
		{"autoscaling min above max", func(o *unstructured.Unstructured) {
			del(o, "spec", "compute", "replicas")
			set(t, o, map[string]any{"minReplicas": int64(5), "maxReplicas": int64(2), "targetCPUUtilizationPercentage": int64(70)}, "spec", "compute", "autoscaling")
		}, "minReplicas must not be greater than maxReplicas"},
		{"autoscaling without a target", func(o *unstructured.Unstructured) {
			del(o, "spec", "compute", "replicas")
			set(t, o, map[string]any{"minReplicas": int64(1), "maxReplicas": int64(2)}, "spec", "compute", "autoscaling")
		}, "needs targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both"},
		{"replicas beyond 100", func(o *unstructured.Unstructured) { set(t, o, int64(101), "spec", "compute", "replicas") }, "spec.compute.replicas"},
		{"backup schedule", func(o *unstructured.Unstructured) { withBackup(t, o) }, "cluster snapshots protect the instance instead"},
		{"restore", func(o *unstructured.Unstructured) {
			set(t, o, map[string]any{"source": restoreSource()}, "spec", "restore")
		}, "restored from a cluster snapshot"},
		{"endpoint with a path", func(o *unstructured.Unstructured) {
			set(t, o, "https://s3.example.com/evil", "spec", "storage", "objectStorage", "endpoint")
		}, "spec.storage.objectStorage.endpoint"},
		{"endpoint with a quote", func(o *unstructured.Unstructured) {
			set(t, o, "https://s3.example.com\"\n  x: y", "spec", "storage", "objectStorage", "endpoint")
		}, "spec.storage.objectStorage.endpoint"},
		{"bucket with a slash", func(o *unstructured.Unstructured) {
			set(t, o, "team/../other", "spec", "storage", "objectStorage", "bucket")
		}, "spec.storage.objectStorage.bucket"},
		{"prefix with a dot-dot segment", func(o *unstructured.Unstructured) {
			set(t, o, "starrocks/../other-team", "spec", "storage", "objectStorage", "prefix")
		}, "must not have a '.' or '..' segment"},
		{"prefix with a quote", func(o *unstructured.Unstructured) { set(t, o, "a'b", "spec", "storage", "objectStorage", "prefix") }, "spec.storage.objectStorage.prefix"},
		{"cache storage class with a quote", func(o *unstructured.Unstructured) {
			set(t, o, "fast\"", "spec", "compute", "cache", "storageClassName")
		}, "spec.compute.cache.storageClassName"},
		{"restoreFrom with a hostile namespace", func(o *unstructured.Unstructured) {
			set(t, o, snapshotSource("team-a'/../x", "olap", sourceUID), "spec", "storage", "restoreFrom")
		}, "spec.storage.restoreFrom.namespace"},
		{"restoreFrom with a hostile name", func(o *unstructured.Unstructured) {
			set(t, o, snapshotSource("team-a", "olap\"\n- x", sourceUID), "spec", "storage", "restoreFrom")
		}, "spec.storage.restoreFrom.instanceName"},
		{"restoreFrom with a glob for a UID", func(o *unstructured.Unstructured) {
			set(t, o, snapshotSource("team-a", "olap", "*"), "spec", "storage", "restoreFrom")
		}, "spec.storage.restoreFrom.instanceUID"},
		{"restoreFrom without a UID", func(o *unstructured.Unstructured) {
			set(t, o, map[string]any{"namespace": "team-a", "instanceName": "olap"}, "spec", "storage", "restoreFrom")
		}, "spec.storage.restoreFrom.instanceUID"},
	}
	for _, tc := range refused {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			obj := parse(t, sharedDataDoc("sd-bad"))
			tc.change(obj)
			_, err := c.create(obj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}

	t.Run("kubectl get shows the ready CNs", func(t *testing.T) {
		created, err := c.create(parse(t, sharedDataDoc("sd-status")))
		if err != nil {
			t.Fatal(err)
		}
		set(t, created, map[string]any{"replicas": int64(5), "readyReplicas": int64(4), "ready": "4/5"}, "status", "compute")
		if _, err := c.resource(created).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		table := getTable(t, c, "/apis/managed-services.deckhouse.io/v1alpha1/namespaces/team-a/starrocks/sd-status")
		cn := -1
		for i, n := range table.columnNames() {
			if n == "CN Ready" {
				cn = i
			}
		}
		if cn < 0 || table.Rows[0].Cells[cn] != "4/5" {
			t.Fatalf("columns %v, row %v: want CN Ready 4/5", table.columnNames(), table.Rows[0].Cells)
		}
	})

	t.Run("a local instance cannot set compute", func(t *testing.T) {
		obj := parse(t, starrocksDoc("local-cn", "Cluster"))
		set(t, obj, map[string]any{"cpu": map[string]any{"cores": int64(4)}, "memory": map[string]any{"size": "16Gi"},
			"replicas": int64(3), "cache": map[string]any{"size": "100Gi"}}, "spec", "compute")
		if _, err := c.create(obj); err == nil || !strings.Contains(err.Error(), "spec.compute is required with spec.storage.mode ObjectStorage and not allowed with local storage") {
			t.Fatalf("got %v", err)
		}
	})

	// Updates of a created instance: the mode and the location are
	// immutable, the credentials and the CN count are not.
	updates := []struct {
		name   string
		change func(*unstructured.Unstructured)
		want   string // empty: accepted
	}{
		{"mode to Local", func(o *unstructured.Unstructured) {
			set(t, o, map[string]any{"mode": "Local"}, "spec", "storage")
			del(o, "spec", "compute")
			set(t, o, map[string]any{"cpu": map[string]any{"cores": int64(4)}, "memory": map[string]any{"size": "16Gi"},
				"persistentVolumeClaim": map[string]any{"size": "100Gi"}, "replicas": int64(3)}, "spec", "backend")
		}, "spec.storage.mode is immutable"},
		{"storage removed", func(o *unstructured.Unstructured) { del(o, "spec", "storage") }, "spec.storage.mode is immutable"},
		{"endpoint", func(o *unstructured.Unstructured) {
			set(t, o, "https://s3.other.example.com", "spec", "storage", "objectStorage", "endpoint")
		}, "spec.storage.objectStorage.endpoint is immutable"},
		{"bucket", func(o *unstructured.Unstructured) {
			set(t, o, "other-bucket", "spec", "storage", "objectStorage", "bucket")
		}, "spec.storage.objectStorage.bucket is immutable"},
		{"prefix", func(o *unstructured.Unstructured) {
			set(t, o, "starrocks/other", "spec", "storage", "objectStorage", "prefix")
		}, "spec.storage.objectStorage.prefix is immutable"},
		{"prefix removed", func(o *unstructured.Unstructured) { del(o, "spec", "storage", "objectStorage", "prefix") }, "spec.storage.objectStorage.prefix is immutable"},
		{"region", func(o *unstructured.Unstructured) {
			set(t, o, "eu-west-1", "spec", "storage", "objectStorage", "region")
		}, "spec.storage.objectStorage.region is immutable"},
		{"path style", func(o *unstructured.Unstructured) { set(t, o, true, "spec", "storage", "objectStorage", "pathStyle") }, "spec.storage.objectStorage.pathStyle is immutable"},
		{"cache size grown", func(o *unstructured.Unstructured) { set(t, o, "200Gi", "spec", "compute", "cache", "size") }, ""},
		{"cache size shrunk", func(o *unstructured.Unstructured) { set(t, o, "10Gi", "spec", "compute", "cache", "size") }, "compute.cache.size cannot shrink"},
		{"credentials", func(o *unstructured.Unstructured) {
			set(t, o, map[string]any{"name": "s3-keys-2"}, "spec", "storage", "objectStorage", "credentialsSecretRef")
			set(t, o, map[string]any{"name": "s3-ca"}, "spec", "storage", "objectStorage", "caSecretRef")
		}, ""},
		{"CN count", func(o *unstructured.Unstructured) { set(t, o, int64(5), "spec", "compute", "replicas") }, ""},
	}
	for i, tc := range updates {
		t.Run("update: "+tc.name, func(t *testing.T) {
			obj := parse(t, sharedDataDoc("sd-upd-"+itoa(i)))
			created, err := c.create(obj)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(created)
			_, err = c.resource(created).Update(ctx, created, metav1.UpdateOptions{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}

	t.Run("restoreFrom is set at creation only, for ObjectStorage only", func(t *testing.T) {
		restored := parse(t, sharedDataDoc("sd-restored"))
		set(t, restored, snapshotSource("team-a", "olap", sourceUID), "spec", "storage", "restoreFrom")
		created, err := c.create(restored)
		if err != nil {
			t.Fatal(err)
		}
		for name, change := range map[string]func(*unstructured.Unstructured){
			"changed": func(o *unstructured.Unstructured) {
				set(t, o, "olap-other", "spec", "storage", "restoreFrom", "instanceName")
			},
			"removed": func(o *unstructured.Unstructured) { del(o, "spec", "storage", "restoreFrom") },
			"the UID changed with the root password's Secret named": func(o *unstructured.Unstructured) {
				set(t, o, map[string]any{"name": "olap-root"}, "spec", "storage", "restoreFrom", "rootPasswordSecretRef")
				set(t, o, "11112222-3333-4444-5555-666677779999", "spec", "storage", "restoreFrom", "instanceUID")
			},
		} {
			o := created.DeepCopy()
			change(o)
			if _, err := c.resource(o).Update(ctx, o, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.storage.restoreFrom") {
				t.Errorf("%s: got %v, want a refusal naming spec.storage.restoreFrom", name, err)
			}
		}
		// Where the agent reads the source's root password is the team's
		// to name once it finds the instance waiting with
		// RootPasswordRefused, and to change.
		for _, ref := range []map[string]any{{"name": "olap-root"}, {"name": "olap-root-2", "key": "root-password"}} {
			set(t, created, ref, "spec", "storage", "restoreFrom", "rootPasswordSecretRef")
			updated, err := c.resource(created).Update(ctx, created, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("rootPasswordSecretRef %v refused: %v", ref, err)
			}
			created = updated
		}
		if key, _, _ := unstructured.NestedString(created.Object, "spec", "storage", "restoreFrom", "rootPasswordSecretRef", "key"); key != "root-password" {
			t.Errorf("rootPasswordSecretRef.key = %q after the update", key)
		}
		hostile := created.DeepCopy()
		set(t, hostile, map[string]any{"name": "olap-root", "key": "../root"}, "spec", "storage", "restoreFrom", "rootPasswordSecretRef")
		if _, err := c.resource(hostile).Update(ctx, hostile, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.storage.restoreFrom.rootPasswordSecretRef.key") {
			t.Errorf("a hostile key: got %v", err)
		}
		plain, err := c.create(parse(t, sharedDataDoc("sd-restore-later")))
		if err != nil {
			t.Fatal(err)
		}
		set(t, plain, snapshotSource("team-a", "olap", sourceUID), "spec", "storage", "restoreFrom")
		if _, err := c.resource(plain).Update(ctx, plain, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.storage.restoreFrom can only be set when the instance is created") {
			t.Errorf("added later: got %v", err)
		}
		local := parse(t, starrocksDoc("local-restore-from", "Cluster"))
		set(t, local, map[string]any{"mode": "Local", "restoreFrom": snapshotSource("team-a", "olap", sourceUID)}, "spec", "storage")
		if _, err := c.create(local); err == nil || !strings.Contains(err.Error(), "spec.storage.restoreFrom is only allowed with spec.storage.mode ObjectStorage") {
			t.Errorf("local: got %v", err)
		}
	})

	t.Run("a local instance cannot become shared-data", func(t *testing.T) {
		created, err := c.create(parse(t, starrocksDoc("local-to-sd", "Cluster")))
		if err != nil {
			t.Fatal(err)
		}
		sd := parse(t, sharedDataDoc("local-to-sd"))
		created.Object["spec"] = sd.Object["spec"]
		if _, err := c.resource(created).Update(ctx, created, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "spec.storage.mode is immutable") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("the class's shared-data policy", func(t *testing.T) {
		obj := parse(t, classDoc("sd-class"))
		set(t, obj, map[string]any{"allowed": true, "allowedEndpoints": []any{"*.example.com"}, "minReplicas": int64(2), "maxReplicas": int64(20),
			"autoscalingAllowed": true, "cacheSize": map[string]any{"min": "10Gi", "max": "1Ti"}}, "spec", "sharedData")
		if _, err := c.create(obj); err != nil {
			t.Fatal(err)
		}
		bad := parse(t, classDoc("sd-class-bad"))
		set(t, bad, map[string]any{"allowed": true, "minReplicas": int64(20), "maxReplicas": int64(2)}, "spec", "sharedData")
		if _, err := c.create(bad); err == nil || !strings.Contains(err.Error(), "spec.sharedData.minReplicas must not be greater than maxReplicas") {
			t.Fatalf("got %v", err)
		}
		bad = parse(t, classDoc("sd-class-bad"))
		set(t, bad, map[string]any{"allowed": true, "allowedEndpoints": []any{"s3.example.com\"x"}}, "spec", "sharedData")
		if _, err := c.create(bad); err == nil || !strings.Contains(err.Error(), "spec.sharedData.allowedEndpoints") {
			t.Fatalf("got %v", err)
		}
	})
}
