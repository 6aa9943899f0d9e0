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
	"testing"

	htypes "github.com/flant/shell-operator/pkg/hook/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// A team deletes the StarrocksBackup another instance restores from, on a
// real kube-apiserver: the deletion waits for the restore, and the backup
// says so (its status.message names the restoring instance and what the
// deletion waits for) with one Event, not one per run. The message goes
// once the restoring instance is gone.
func TestADeletedBackupHeldForARestoreSaysWhy(t *testing.T) {
	op := startOperator(t)
	client := op.client
	ctx := t.Context()
	for _, ns := range []string{"d8-managed-starrocks", "team"} {
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
	const sizing = `"starrocksClassName":"default","frontend":{"cpu":{"cores":1},"memory":{"size":"2Gi"},"persistentVolumeClaim":{"size":"20Gi"}},
		"backend":{"cpu":{"cores":1},"memory":{"size":"4Gi"},"persistentVolumeClaim":{"size":"5Gi"}},
		"backup":{"storage":{"endpoint":"https://s3.example.com","bucket":"team-backups","credentialsSecretRef":{"name":"s3-keys"}}}`
	create("team", `{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"Starrocks","metadata":{"name":"src"},"spec":{`+sizing+`}}`)
	create("team", `{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"StarrocksBackup","metadata":{"name":"nightly","finalizers":["`+v1alpha1.BackupFinalizer+`"]},"spec":{"instanceName":"src"}}`)
	backups := client.Dynamic().Resource(v1alpha1.StarrocksBackupGVR).Namespace("team")
	b, err := backups.Get(ctx, "nightly", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedMap(b.Object, map[string]any{"phase": "Completed", "message": "one database skipped",
		"completionTime": "2026-01-01T00:00:00Z", "instanceUID": string(op.starrocks("team", "src").UID), "instanceType": "Standalone"}, "status"))
	_, err = backups.UpdateStatus(ctx, b, metav1.UpdateOptions{})
	require.NoError(t, err)
	create("team", `{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"Starrocks","metadata":{"name":"dst"},"spec":{`+sizing+`,"restore":{"backupName":"nightly"}}}`)
	require.NoError(t, backups.Delete(ctx, "nightly", metav1.DeleteOptions{}))

	heldEvents := func() []corev1.Event {
		list, err := client.CoreV1().Events("team").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		var out []corev1.Event
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == v1alpha1.BackupKind && e.InvolvedObject.Name == "nightly" && e.Reason == "HeldForRestore" {
				out = append(out, e)
			}
		}
		return out
	}
	message := func() string {
		b, err := backups.Get(ctx, "nightly", metav1.GetOptions{})
		require.NoError(t, err, "the backup was let go while an instance restores from it")
		require.NotNil(t, b.GetDeletionTimestamp())
		m, _, _ := unstructured.NestedString(b.Object, "status", "message")
		return m
	}
	for range 3 {
		op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
		m := message()
		assert.Contains(t, m, `Starrocks "dst" restores from this backup`)
		assert.Contains(t, m, "waits until that instance is Restored")
		assert.Contains(t, m, "one database skipped", "the backup's own message is kept")
		if events := heldEvents(); assert.Len(t, events, 1, "one Event for the hold, whatever the runs") {
			assert.Equal(t, corev1.EventTypeNormal, events[0].Type)
			assert.Contains(t, events[0].Message, `Starrocks "dst"`)
		}
	}

	// The restoring instance is deleted: the hold ends, the deletion goes
	// on (the agent deletes the snapshots; none runs here, so the finalizer
	// stays), and the note goes.
	require.NoError(t, client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace("team").Delete(ctx, "dst", metav1.DeleteOptions{}))
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	assert.Equal(t, "one database skipped", message())
}
