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

package node_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/images"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// tinyClass lets a Cluster fit the node's two cores: each pod asks for 5%
// of a core (the stand-ins use almost nothing). Memory is the module's
// floor (an FE 2Gi, a BE 4Gi: pkg/classrules), which the scheduler counts
// against the machine's 23Gi beside the Standalone's 8Gi: 3 FEs and 3 BEs
// (18Gi) do not fit, 3 FEs and 1 BE (10Gi) do, and then a third instance
// (6Gi at the least) does not: the NetworkPolicy test runs on this Cluster.
const tinyClass = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: tiny
spec:
  topology:
    allowedTopologies: [Ignored]
    defaultTopology: Ignored
  sizingPolicies:
    - cores: {min: 1, max: 1}
      memory: {min: 2Gi, max: 4Gi, step: 1Gi}
      coreFractions: [5, 10]
`

const clusterNS, clusterName = "team-b", "c"

// The Cluster's pods, FEs and BEs.
var (
	clusterFEs = []string{"d8ms-sr-c-0", "d8ms-sr-c-1", "d8ms-sr-c-2"}
	clusterBEs = []string{"d8ms-sr-c-be-0"}
)

// clusterInstance allows the namespaces labelled clientsLabel
// (networkpolicy_test.go).
const clusterInstance = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: c
  namespace: team-b
spec:
  starrocksClassName: tiny
  type: Cluster
  network:
    allowedNamespaces:
      - matchLabels: {clients-of-team-b: "yes"}
  frontend:
    cpu: {cores: 1, coreFraction: 5}
    memory: {size: 2Gi}
    persistentVolumeClaim: {size: 1Gi}
  backend:
    replicas: 1
    cpu: {cores: 1, coreFraction: 5}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: 1Gi}
`

// podEvent is a deletion of a pod (its UID got a deletionTimestamp) or a
// new pod of that name turning Ready.
type podEvent struct {
	at   time.Time
	name string
	kind string // "deleted" or "ready"
}

func (e *env) availableOf(namespace, name string) (bool, string) {
	status, message := e.conditionOf(namespace, name, "Available")
	return status == "True", message
}

// conditionOf is the status and "reason: message" of condition typ of a
// Starrocks.
func (e *env) conditionOf(namespace, name, typ string) (string, string) {
	sr, err := e.client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(sr.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"], ": ", m["message"])
		}
	}
	return "", "no " + typ + " condition"
}

func (e *env) waitAvailableOf(t *testing.T, namespace, name string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		var ok bool
		if ok, last = e.availableOf(namespace, name); ok {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s/%s not Available in %s: %s", namespace, name, timeout, last)
}

// applyCluster applies the tiny class and the Cluster. The NetworkPolicy
// test applies them first; the rollout order test again, which changes
// nothing (server-side apply of the same manifests), so that it also runs
// without it (go test -run).
func (e *env) applyCluster(t *testing.T) {
	t.Helper()
	if err := kubeutil.EnsureNamespace(e.ctx, e.kube, clusterNS, nil); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{tinyClass, clusterInstance} {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := e.client.Apply(e.ctx, &obj, "test"); err != nil {
			t.Fatal(err)
		}
	}
}

// testClusterRolloutOrder changes the CPU share of a Cluster (3 FEs, 1 BE),
// which changes every pod template, and checks the order the module
// promises (docs/ADMIN_GUIDE.md "Rollouts", hooks/README.md "Rollouts",
// hooks/instances/rollout.go): every BE first, then the FE followers, the
// leader last; one pod at a time, the next deleted only once the previous
// one is back Ready; each stopped through its preStop (the stand-ins record
// the graceful stop on their volume).
func (e *env) testClusterRolloutOrder(t *testing.T) {
	e.applyCluster(t)
	e.waitAvailableOf(t, clusterNS, clusterName, 8*time.Minute)

	fes, bes := clusterFEs, clusterBEs
	leader := ""
	old := map[string]types.UID{}
	for _, name := range append(append([]string{}, fes...), bes...) {
		p, err := e.kube.CoreV1().Pods(clusterNS).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		old[name] = p.UID
		var st agentconfig.Status
		if raw := p.Annotations[agentconfig.StatusAnnotation]; raw != "" && json.Unmarshal([]byte(raw), &st) == nil && st.Membership != nil && st.Membership.Leader != "" {
			leader = strings.SplitN(st.Membership.Leader, ".", 2)[0]
		}
	}
	if leader == "" {
		t.Fatal("no agent reports the FE leader")
	}
	t.Logf("FE leader: %s", leader)

	// Every deletion and every new pod turning Ready, from a watch.
	w, err := e.kube.CoreV1().Pods(clusterNS).Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []podEvent
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		deleting, readySeen := map[types.UID]bool{}, map[types.UID]bool{}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if p.DeletionTimestamp != nil && !deleting[p.UID] && p.UID == old[p.Name] {
				deleting[p.UID] = true
				events = append(events, podEvent{time.Now(), p.Name, "deleted"})
			}
			if p.UID != old[p.Name] && ready(p) && !readySeen[p.UID] {
				readySeen[p.UID] = true
				events = append(events, podEvent{time.Now(), p.Name, "ready"})
			}
			mu.Unlock()
		}
	}()

	patch := []byte(`{"spec":{"frontend":{"cpu":{"coreFraction":10}},"backend":{"cpu":{"coreFraction":10}}}}`)
	if _, err := e.client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace(clusterNS).Patch(e.ctx, clusterName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		mu.Lock()
		n := 0
		for _, ev := range events {
			if ev.kind == "ready" {
				n++
			}
		}
		mu.Unlock()
		if n == len(old) {
			break
		}
		if time.Now().After(deadline) {
			w.Stop()
			<-watched
			t.Fatalf("only %d of %d pods rolled in 10m: %v", n, len(old), events)
		}
		time.Sleep(time.Second)
	}
	e.waitAvailableOf(t, clusterNS, clusterName, 3*time.Minute)
	w.Stop()
	<-watched
	t.Logf("%d pods rolled and the Cluster Available in %s", len(old), time.Since(started).Round(time.Second))

	// One at a time: each deletion after the previously deleted pod's
	// replacement turned Ready.
	var order []string
	back := true
	for _, ev := range events {
		t.Logf("%s %s %s", ev.at.Sub(started).Round(100*time.Millisecond), ev.name, ev.kind)
		if ev.kind == "ready" {
			back = back || len(order) > 0 && ev.name == order[len(order)-1]
			continue
		}
		if !back {
			t.Errorf("%s deleted before %s came back Ready", ev.name, order[len(order)-1])
		}
		back = false
		order = append(order, ev.name)
	}
	if len(order) != len(old) {
		t.Fatalf("deleted %v, want each of the %d pods once", order, len(old))
	}
	for i, name := range order {
		isBE := strings.Contains(name, "-be-")
		switch {
		case i < len(bes) && !isBE:
			t.Errorf("deletion %d is %s: every BE goes first (%v)", i+1, name, order)
		case i >= len(bes) && i < len(order)-1 && (isBE || name == leader):
			t.Errorf("deletion %d is %s: the FE followers go after the BEs, before the leader (%v)", i+1, name, order)
		case i == len(order)-1 && name != leader:
			t.Errorf("the last deletion is %s, want the leader %s (%v)", name, leader, order)
		}
	}

	// Each pod stopped through its preStop: the stand-ins append a line
	// to their volume (the FE's meta, the BE's storage) on a graceful stop.
	for _, name := range order {
		claim := "storage-" + name
		if !strings.Contains(name, "-be-") {
			claim = "meta-" + name
		}
		stops, err := os.ReadFile(filepath.Join(e.node.Dir(), "volumes", clusterNS+"_"+claim, images.StopsLog))
		if err != nil || !strings.Contains(string(stops), "graceful") {
			t.Errorf("%s recorded no graceful stop (%v):\n%s", name, err, stops)
		}
	}
}
