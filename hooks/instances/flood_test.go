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

package instances

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/backupplan"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

const goodUID = "9a9a9a9a-1111-4222-8333-444455556666"

// floodYAML is tenant team's instance olap with n StarrocksBackup objects
// without the module's finalizer (created past admission, or with the
// finalizer stripped in a loop), and tenant good's instance olap with one
// new StarrocksBackup.
func floodYAML(n int) string {
	var b strings.Builder
	b.WriteString(backupClassYAML + "---" + backedUpYAML("olap"))
	good := strings.NewReplacer("namespace: team", "namespace: good", olapUID, goodUID).Replace(backedUpYAML("olap"))
	b.WriteString("---" + good)
	for i := range n {
		created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		fmt.Fprintf(&b, `---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: flood-%04d, namespace: team, uid: 00000000-0000-4000-8000-%012d, creationTimestamp: "%s"}
spec: {instanceName: olap}
`, i, i, created)
	}
	b.WriteString(`---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: good-now, namespace: good, uid: 9b9b9b9b-1111-4222-8333-444455556666, creationTimestamp: "2026-12-02T09:00:00Z"}
spec: {instanceName: olap}
`)
	return b.String()
}

// backupWritesOf are the writes to StarrocksBackup objects among actions, by
// namespace.
func backupWritesOf(actions []k8stesting.Action) map[string][]k8stesting.Action {
	out := map[string][]k8stesting.Action{}
	for _, a := range actions {
		if a.GetResource().Resource != "starrocksbackups" {
			continue
		}
		switch a.GetVerb() {
		case "create", "patch", "update", "delete":
			out[a.GetNamespace()] = append(out[a.GetNamespace()], a)
		}
	}
	return out
}

// A tenant with 2000 StarrocksBackups without the module's finalizer (or
// stripping them in a loop) gets a bounded number of writes per run, and
// the other tenant's new backup gets its finalizer in the same run: the
// writes of one run do not grow with what one tenant creates.
func TestABackupFloodIsBoundedPerRunAndSharedFairly(t *testing.T) {
	f := newHook(t)
	state := floodYAML(2000)
	for run := range 3 {
		// Each run sees every finalizer stripped again.
		f.KubeStateSet(state)
		start := time.Now()
		f.RunHook()
		took := time.Since(start)
		require.NoError(t, f.HookError())
		writes := backupWritesOf(fakeClient(f).Actions())
		total := 0
		for _, w := range writes {
			total += len(w)
		}
		t.Logf("run %d: %d writes to StarrocksBackups (team %d, good %d) in %s", run, total, len(writes["team"]), len(writes["good"]), took)
		assert.LessOrEqual(t, total, MaxBackupWritesPerRun, "run %d: the writes of one run grew with one tenant's objects", run)
		assert.LessOrEqual(t, len(writes["team"]), 2*backupplan.MaxObjectWrites, "run %d: finalizers and refusals of one instance", run)
		for _, a := range writes["team"] {
			name := actionName(a)
			n, _ := strconv.Atoi(strings.TrimPrefix(name, "flood-"))
			if a.(k8stesting.PatchAction).GetSubresource() == "status" {
				assert.GreaterOrEqual(t, n, classrules.DefaultMaxBackups, "%s within the limit was refused", name)
				assert.Contains(t, string(a.(k8stesting.PatchAction).GetPatch()), `"phase":"Refused"`)
			} else {
				assert.Less(t, n, classrules.DefaultMaxBackups, "%s beyond the limit got a finalizer", name)
			}
		}
		good := f.KubernetesResource(v1alpha1.BackupKind, "good", "good-now")
		require.NotNil(t, good)
		assert.Equal(t, []string{v1alpha1.BackupFinalizer}, good.GetFinalizers(), "run %d: the other tenant's backup waited", run)
	}
}

func TestShareBackupWritesTakesTurns(t *testing.T) {
	w := func(ns, instance, what string, i int) BackupWrite {
		return BackupWrite{Instance: ns + "/" + instance, Namespace: ns, Name: fmt.Sprintf("%s-%d", instance, i), What: what}
	}
	var writes []BackupWrite
	for i := range 500 {
		writes = append(writes, w("flood", "a", "add-finalizer", i), w("flood", "b", "refuse", i))
	}
	writes = append(writes, w("quiet", "x", "add-finalizer", 0), w("quiet", "x", "delete", 1), w("sched", "y", "create", 0))
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	kept, held := shareBackupWrites(writes, 10, now)
	require.Len(t, kept, 10)
	assert.Equal(t, len(writes)-10, held)
	assert.Equal(t, "y-0", kept[0].Name, "a scheduled backup goes first")
	var quiet, refusals int
	for _, k := range kept {
		if k.Namespace == "quiet" {
			quiet++
		}
		if k.What == "refuse" {
			refusals++
		}
	}
	assert.Equal(t, 2, quiet, "the quiet namespace waited for the flooding one")
	assert.Zero(t, refusals, "a refusal went before a finalizer")
	kept, held = shareBackupWrites(writes[:5], 10, now)
	assert.Len(t, kept, 5)
	assert.Zero(t, held)

	// More namespaces with work than the budget: each comes first in turn,
	// minute by minute.
	writes = nil
	for i := range 30 {
		writes = append(writes, w(fmt.Sprintf("ns-%02d", i), "a", "add-finalizer", 0))
	}
	served := map[string]bool{}
	for m := range 3 {
		kept, _ := shareBackupWrites(writes, 10, now.Add(time.Duration(m)*time.Minute))
		for _, k := range kept {
			served[k.Namespace] = true
		}
	}
	assert.Len(t, served, 30, "a namespace waited for ever")
}

// A lower limit (a class changed, or a new module version) loses nothing:
// backups beyond it that ran keep their finalizers and are not deleted, a
// backup being deleted still has its data deleted; only the new one that
// never started is refused, and BackupsHealthy names the limit.
func TestHookKeepsWhatIsBeyondALoweredLimit(t *testing.T) {
	class := strings.Replace(backupClassYAML, "backup: {allowed: true}", "backup: {allowed: true, maxBackups: 2}", 1)
	backup := func(i int, name, created, phase string, extra string) string {
		return fmt.Sprintf(`---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: %s, namespace: team, uid: 33334444-5555-4666-8777-%012d, creationTimestamp: "%s", finalizers: ["%s"]%s}
spec: {instanceName: olap}
status: {phase: %s}
`, name, i, created, v1alpha1.BackupFinalizer, extra, phase)
	}
	state := class + "---" + backedUpYAML("olap") +
		backup(1, "old-1", "2026-11-01T00:00:00Z", "Completed", "") +
		backup(2, "old-2", "2026-11-02T00:00:00Z", "Completed", "") +
		backup(3, "ran-3", "2026-11-03T00:00:00Z", "Completed", "") +
		backup(4, "gone-4", "2026-11-04T00:00:00Z", "Completed", `, deletionTimestamp: "2026-12-01T00:00:00Z"`) +
		strings.Replace(backup(5, "new-5", "2026-11-05T00:00:00Z", `""`, ""), `finalizers: ["`+v1alpha1.BackupFinalizer+`"]`, "finalizers: []", 1)
	f := newHook(t)
	f.KubeStateSet(state)
	f.RunHook()
	require.NoError(t, f.HookError())
	for _, name := range []string{"old-1", "old-2", "ran-3", "gone-4"} {
		b := f.KubernetesResource(v1alpha1.BackupKind, "team", name)
		require.NotNil(t, b, "%s was deleted", name)
		assert.Equal(t, []string{v1alpha1.BackupFinalizer}, b.GetFinalizers(), "%s lost its finalizer", name)
	}
	assert.Empty(t, written(f, "delete", "starrocksbackups"))
	fresh := f.KubernetesResource(v1alpha1.BackupKind, "team", "new-5")
	require.NotNil(t, fresh)
	assert.Empty(t, fresh.GetFinalizers())
	phase, _, _ := unstructured.NestedString(fresh.Object, "status", "phase")
	assert.Equal(t, string(v1alpha1.BackupPhaseRefused), phase)
	msg, _, _ := unstructured.NestedString(fresh.Object, "status", "message")
	assert.Contains(t, msg, `its class "default" allows 2 (spec.backup.maxBackups)`)

	cm := f.KubernetesResource("ConfigMap", "d8-managed-starrocks", "desired-"+olapUID)
	require.NotNil(t, cm)
	data := fmt.Sprint(cm.Object["data"])
	assert.Contains(t, data, "gone-4", "the deleted backup's data is not deleted")
	assert.NotContains(t, data, "new-5", "the refused backup reached the agent")

	s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionBackupsHealthy)
	assert.Equal(t, []string{"False", ReasonBackupLimitReached}, []string{s, r}, m)
	assert.Contains(t, m, `The instance has reached the most StarrocksBackup objects its class "default" allows, 2 (spec.backup.maxBackups)`)
	assert.Contains(t, m, "the schedule starts no backup")
	assert.Contains(t, m, "newer StarrocksBackups are not run (phase Refused)")
}
