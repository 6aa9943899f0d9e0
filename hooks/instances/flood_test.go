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
