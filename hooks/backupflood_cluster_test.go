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
	"slices"
	"testing"
	"time"

	htypes "github.com/flant/shell-operator/pkg/hook/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/instances"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// A tenant with more StarrocksBackups than any class allows (n below),
// without the module's finalizer (made past admission, or stripped in a
// loop), on a real kube-apiserver: one run
// of the instances hook changes a bounded number of them, and the other
// tenant's new instance gets its desired state and its backup its finalizer
// in that run. The run's time is logged: the API server's round trips are
// what the bound saves.
func TestABackupFloodOnARealAPIServer(t *testing.T) {
	op := startOperator(t)
	client := op.client
	ctx := t.Context()
	for _, ns := range []string{"d8-managed-starrocks", "flood", "good"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	create := func(ns, text string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		require.NoError(t, json.Unmarshal([]byte(text), &u.Object))
		gvr, err := client.GroupVersionResource(u.GetAPIVersion(), u.GetKind())
		require.NoError(t, err)
		_, err = client.Dynamic().Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		require.NoError(t, err, "create %s %s", u.GetKind(), u.GetName())
	}
	create("", `{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"StarrocksClass","metadata":{"name":"default"},
		"spec":{"topology":{"allowedTopologies":["Ignored"],"defaultTopology":"Ignored"},"sizingPolicies":[{"cores":{"min":1,"max":8},"memory":{"min":"2Gi","max":"32Gi","step":"1Gi"},"coreFractions":[50,100]}],
		"backup":{"allowed":true}}}`)
	instance := `{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"Starrocks","metadata":{"name":"db"},
		"spec":{"starrocksClassName":"default","frontend":{"cpu":{"cores":1},"memory":{"size":"2Gi"},"persistentVolumeClaim":{"size":"20Gi"}},
		"backend":{"cpu":{"cores":1},"memory":{"size":"4Gi"},"persistentVolumeClaim":{"size":"5Gi"}},
		"backup":{"storage":{"endpoint":"https://s3.example.com","bucket":"team-backups","credentialsSecretRef":{"name":"s3-keys"}}}}}`
	create("flood", instance)
	// More than any class allows (the flood is past the limit) and more
	// than one run may write, twice over: what the bound is about, without
	// paying for a bigger flood in apiserver writes.
	const n = classrules.MaxMaxBackups + 2*instances.MaxBackupWritesPerRun
	start := time.Now()
	for i := range n {
		create("flood", fmt.Sprintf(`{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"StarrocksBackup","metadata":{"name":"flood-%04d"},"spec":{"instanceName":"db"}}`, i))
	}
	t.Logf("%d StarrocksBackups created in %s", n, time.Since(start))
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())

	// Tenant good orders a new instance and a backup of it now.
	create("good", instance)
	create("good", `{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"StarrocksBackup","metadata":{"name":"now"},"spec":{"instanceName":"db"}}`)
	backups := client.Dynamic().Resource(v1alpha1.StarrocksBackupGVR)
	for run := range 2 {
		// The flooding tenant strips every finalizer the last run added.
		list, err := backups.Namespace("flood").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for i := range list.Items {
			if b := &list.Items[i]; len(b.GetFinalizers()) > 0 {
				b.SetFinalizers(nil)
				_, err := backups.Namespace("flood").Update(ctx, b, metav1.UpdateOptions{})
				require.NoError(t, err)
			}
		}
		list, err = backups.Namespace("flood").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		before := map[string]string{}
		for _, b := range list.Items {
			before[b.GetName()] = b.GetResourceVersion()
		}
		start := time.Now()
		op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
		took := time.Since(start)
		list, err = backups.Namespace("flood").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		changed := 0
		for _, b := range list.Items {
			if before[b.GetName()] != b.GetResourceVersion() {
				changed++
			}
		}
		t.Logf("run %d of the instances hook: %s, %d of tenant flood's %d StarrocksBackups written", run, took, changed, n)
		assert.LessOrEqual(t, changed, 100, "one tenant's objects made the run's writes grow")
		good, err := backups.Namespace("good").Get(ctx, "now", metav1.GetOptions{})
		require.NoError(t, err)
		assert.True(t, slices.Contains(good.GetFinalizers(), v1alpha1.BackupFinalizer), "tenant good's backup waited")
		var goodEntry bool
		for _, e := range op.entries() {
			goodEntry = goodEntry || e["namespace"] == "good"
		}
		assert.True(t, goodEntry, "tenant good's new instance got no desired state")
	}
}
