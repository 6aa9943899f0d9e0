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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// realFENodeEnv asks for TestRealFEOnNode.
const realFENodeEnv = "MANAGED_STARROCKS_REAL_FE_NODE"

// TestRealFEOnNode runs the instance's FE pod on the real StarRocks FE
// image (dev/images realfe.go): the module's fe-start.sh starts the
// release's start_fe.sh in the pod, the agent bootstraps the FE over TLS
// and reports it, and the instance becomes Available. The BE stays the
// stand-in, which does not answer the FE's heartbeat: the agent reports it
// listed and not alive, as the FE sees it. Then a shared-data instance
// runs on the same node (testSharedDataOnRealFE).
//
// It needs a node of its own (the module gives every instance the same FE
// image), and one node runs on a machine at a time, so it would run after
// TestOnNode: about eight minutes more (five of them the HPA's scale-down
// window), past make test's budget. It runs when asked for.
func TestRealFEOnNode(t *testing.T) {
	if os.Getenv(realFENodeEnv) != "1" {
		t.Skipf("the real FE on the node needs a second node after TestOnNode (about 8 minutes): %s=1 runs it", realFENodeEnv)
	}
	e := startModuleOnNode(t, realfe.Built(t))
	fePod, bePod := "d8ms-sr-db-0", "d8ms-sr-db-be-0"

	p := e.pod(fePod)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", e.containerPID(p, "starrocks")))
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.ReplaceAll(string(cmdline), "\x00", " "); !strings.Contains(args, "com.starrocks.StarRocksFE") {
		t.Fatalf("the FE container runs %q, not StarRocks' FE", args)
	}

	// The leader's agent reports what SHOW FRONTENDS and SHOW BACKENDS say.
	var st agentconfig.Status
	deadline := time.Now().Add(3 * time.Minute)
	for {
		raw := e.pod(fePod).Annotations[agentconfig.StatusAnnotation]
		st = agentconfig.Status{}
		_ = json.Unmarshal([]byte(raw), &st)
		if st.Membership != nil && len(st.Membership.Nodes) >= 2 && st.Accounts != nil && st.Accounts.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent does not report the FE and the BE with its accounts ready: %s", raw)
		}
		time.Sleep(2 * time.Second)
	}
	for _, n := range st.Membership.Nodes {
		switch {
		case strings.HasPrefix(n.Host, fePod+"."):
			if !n.Alive || n.Version == "" {
				t.Errorf("the real FE is reported %+v, want alive with its version", n)
			}
		case strings.HasPrefix(n.Host, bePod+"."):
			// fe-core system/HeartbeatMgr: a BE is alive once it answers
			// HeartbeatService.heartbeat over Thrift; the stand-in accepts
			// the connection and closes it.
			if n.Alive {
				t.Errorf("the BE stand-in is reported alive (%+v): it answers no heartbeat, so the docs' word on it is wrong", n)
			}
		default:
			t.Errorf("the agent reports a node of no pod of the instance: %+v", n)
		}
		t.Logf("the FE reports %+v", n)
	}

	sr, err := e.client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Get(e.ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(sr.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		t.Logf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"])
		if m["type"] == "AccountsReady" && m["status"] != "True" {
			t.Errorf("AccountsReady is %v on the real FE: %v", m["status"], m["message"])
		}
	}
	t.Run("a shared-data instance autoscales its CNs", e.testSharedDataOnRealFE)
}
