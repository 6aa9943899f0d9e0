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

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestBackendScaleInWaitsForTheDecommission lowers a Cluster from 4 to 3 BEs
// while the test plays the FE leader's agent: the BE StatefulSet must keep
// be-3 while StarRocks still lists it, and lower only once it is gone. A
// backup the team asks for meanwhile waits for the scale-in: the agent is
// told to start no job until it has ended (the agent's side of that hold:
// images/agent/internal/backup's runner tests).
func TestBackendScaleInWaitsForTheDecommission(t *testing.T) {
	t.Parallel()
	const ns, name = "team-s", "olap"
	e := sharedEnv(t, withWebhook)
	e.apply(backupClass)
	e.apply(fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: s3-keys, namespace: %s}
stringData: {accessKeyID: AKIAEXAMPLE, secretAccessKey: example-secret-key}
`, ns))
	// A Cluster of the class that allows backups, with a backup storage
	// (nothing is sent to it: no agent runs here).
	withBackup := func(doc string) string {
		return strings.Replace(doc, "starrocksClassName: analytics", "starrocksClassName: backups", 1) + `  backup:
    storage:
      endpoint: "https://127.0.0.1:9"
      bucket: team-backups
      pathStyle: true
      credentialsSecretRef: {name: s3-keys}
    retention: {keepLast: 2}
`
	}
	three := withBackup(instance(ns, name, "Cluster", ""))
	four := strings.Replace(three, "replicas: 3", "replicas: 4", 1)
	e.apply(four)
	e.waitObjects(ns, name, 3, 4)
	hosts := e.agentBackends(ns, name)
	if len(hosts) != 4 {
		t.Fatalf("agent.json lists %d backends, want 4: %v", len(hosts), hosts)
	}
	leader := "d8ms-sr-" + name + "-0"
	e.eventually("pod "+leader+" created", func() (bool, string) {
		_, err := e.kube.CoreV1().Pods(ns).Get(context.Background(), leader, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	e.reportMembership(ns, leader, &agentconfig.MembershipStatus{Leader: leader, Backends: hosts})
	reason, _ := e.waitCondition(ns, name, "BackendScaleIn", "True")
	if reason != "NoScaleInPending" {
		t.Errorf("BackendScaleIn reason %q before the scale-in, want NoScaleInPending", reason)
	}

	// Lower the spec; the leader's agent decommissions be-3, which still holds tablets.
	e.apply(three)
	e.eventually("agent.json lists the 3 desired backends", func() (bool, string) {
		got := e.agentBackends(ns, name)
		return len(got) == 3 && got[2] == hosts[2], fmt.Sprintf("backends %v", got)
	})
	e.reportMembership(ns, leader, &agentconfig.MembershipStatus{Leader: leader, Backends: hosts,
		Draining: []agentconfig.BackendDrain{{Host: hosts[3], TabletNum: 42}}})
	e.eventually("BackendScaleIn=False/DecommissionInProgress naming be-3", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "BackendScaleIn")
		return status == "False" && reason == "DecommissionInProgress" && strings.Contains(message, hosts[3]+" (decommissioned, 42 tablets left)"),
			fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	time.Sleep(time.Second) // a few more passes: the StatefulSet must not have been lowered meanwhile
	if got := e.beReplicas(ns, name); got != 4 {
		t.Fatalf("BE StatefulSet replicas %d while be-3 drains, want 4 (its pod would be deleted with tablets on it)", got)
	}
	// "Back up now" during the scale-in: the set reaches the agent with the
	// hold, so no BACKUP starts while a BE drains.
	e.apply(fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksBackup
metadata: {name: during-scale-in, namespace: %s}
spec: {instanceName: %s}
`, ns, name))
	backupSet := func(c agentconfig.Config) bool {
		return c.Backup != nil && slices.ContainsFunc(c.Backup.Sets, func(s agentconfig.BackupSet) bool { return s.Name == "during-scale-in" })
	}
	e.eventually("the backup set in agent.json, held for the scale-in", func() (bool, string) {
		c := e.agentConfig(ns, name)
		return backupSet(c) && c.BackupHold == agentconfig.BackupHoldScaleIn, fmt.Sprintf("backupHold %q, backup %+v", c.BackupHold, c.Backup)
	})

	// StarRocks moved the tablets and the agent dropped be-3.
	e.reportMembership(ns, leader, &agentconfig.MembershipStatus{Leader: leader, Backends: hosts[:3]})
	e.waitObjects(ns, name, 3, 3)
	e.eventually("the backup set no longer held once the scale-in has ended", func() (bool, string) {
		c := e.agentConfig(ns, name)
		return backupSet(c) && c.BackupHold == "", fmt.Sprintf("backupHold %q, backup %+v", c.BackupHold, c.Backup)
	})
	reason, _ = e.waitCondition(ns, name, "BackendScaleIn", "True")
	if reason != "NoScaleInPending" {
		t.Errorf("BackendScaleIn reason %q after the scale-in, want NoScaleInPending", reason)
	}
	// kubectl describe tells the wait and its end, once each: the tablet
	// count is progress, not news.
	e.eventually("an Event of the end of the scale-in", func() (bool, string) {
		ev := e.starrocksEvents(ns, name)
		return len(ev["NoScaleInPending"]) == 1, fmt.Sprint(ev)
	})
	ev := e.starrocksEvents(ns, name)
	if d := ev["DecommissionInProgress"]; len(d) != 1 || d[0].Type != corev1.EventTypeNormal || !strings.Contains(d[0].Message, hosts[3]) {
		t.Errorf("Events DecommissionInProgress: %+v, want one naming %s", d, hosts[3])
	}
}

// agentBackends are the backends of the rendered agent.json.
func (e *env) agentBackends(namespace, name string) []string {
	e.t.Helper()
	raw, _ := e.configMapData(namespace, "d8ms-sr-"+name+"-config")[agentconfig.FileName].(string)
	var c agentconfig.Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		e.t.Fatalf("parse %s of %s/%s: %v", agentconfig.FileName, namespace, name, err)
	}
	return c.Backends
}

func (e *env) beReplicas(namespace, name string) int64 {
	e.t.Helper()
	sts, err := e.get("StatefulSet", namespace, "d8ms-sr-"+name+"-be")
	if err != nil {
		e.t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas")
	return n
}

// reportMembership plays the FE leader's agent: it publishes the membership
// StarRocks lists in its pod's status annotation.
func (e *env) reportMembership(namespace, pod string, m *agentconfig.MembershipStatus) {
	e.t.Helper()
	status := agentconfig.Status{
		TLS:        agentconfig.TLSStatus{Ready: true},
		LastApply:  agentconfig.ApplyStatus{Time: time.Now().UTC().Format(time.RFC3339), Succeeded: true},
		Membership: m,
		UpdatedAt:  time.Now().UTC().Format(time.RFC3339),
	}
	data, _ := json.Marshal(status)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{agentconfig.StatusAnnotation: string(data)}}})
	e.patchPodAsAgent(namespace, pod, patch)
}
