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
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// testReplicationAwareScaling plays the FE leader's agent (its status
// annotation) and checks the BE count rules end to end: admission refuses
// counts below the replication number the agent reported, 2 BEs, and a
// second scale-in while one is pending; a scale-in StarRocks refuses stalls
// with a clear condition; and with the webhook down the hooks hold the
// same rules, keeping the configuration in effect. Its last part stops the
// webhook for good: it runs last on its env (TestModuleEndToEnd).
func testReplicationAwareScaling(t *testing.T, e *env) {
	const ns, name = "team-r", "olap"
	withBEs := func(n int) string {
		return strings.Replace(instance(ns, name, "Cluster", ""), "replicas: 3", fmt.Sprintf("replicas: %d", n), 1)
	}
	e.apply(withBEs(5))
	e.waitObjects(ns, name, 3, 5)
	hosts := e.agentBackends(ns, name)
	leader := "d8ms-sr-" + name + "-0"
	e.eventually("pod "+leader+" created", func() (bool, string) {
		_, err := e.kube.CoreV1().Pods(ns).Get(context.Background(), leader, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	report := func(m agentconfig.MembershipStatus) {
		m.Leader = leader
		e.reportMembership(ns, leader, &m)
	}
	report(agentconfig.MembershipStatus{Backends: hosts, Replication: &agentconfig.ReplicationReport{
		MaxReplicationNum: 5, MaxReplicationTable: "shop.orders", MinReplicationNum: 1, MinReplicationTable: "shop.tmp"}})
	e.waitReplication(ns, name, 5)

	t.Run("a table below the default replication is reported with what to run", func(t *testing.T) {
		// As after a Standalone became a Cluster: shop.tmp kept 1 replica.
		_, message := e.waitCondition(ns, name, "TablesReplicated", "False")
		for _, want := range []string{"Table shop.tmp keeps 1 replica, fewer than the instance's default of 3",
			`ALTER TABLE shop.tmp MODIFY PARTITION (*) SET ("replication_num" = "3")`} {
			if !strings.Contains(message, want) {
				t.Errorf("TablesReplicated message lacks %q: %s", want, message)
			}
		}
	})

	refused := func(t *testing.T, doc string, want ...string) {
		t.Helper()
		_, err := e.tryApply(doc)
		if err == nil {
			t.Fatalf("applied, want refused with %q", want)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("refusal lacks %q:\n%v", w, err)
			}
		}
	}

	t.Run("admission refuses a BE count below the reported replication number", func(t *testing.T) {
		refused(t, withBEs(4), `admission webhook "validate-starrocks.managed-services.deckhouse.io" denied the request`,
			"spec.backend.replicas: the smallest BE count allowed now is 5: StarRocks cannot remove a BE while a table needs more replicas than the BEs left, and table shop.orders has replication_num 5")
		if got := len(e.agentBackends(ns, name)); got != 5 {
			t.Errorf("agent.json lists %d backends, want 5", got)
		}
	})

	t.Run("admission refuses 2 BEs: a new Cluster of 2 and 3 -> 2", func(t *testing.T) {
		pair := strings.Replace(instance(ns, "pair", "Cluster", ""), "replicas: 3", "replicas: 2", 1)
		refused(t, pair, "spec.backend.replicas: 2 BEs cannot load data while one of them is down")
		e.apply(instance(ns, "trio", "Cluster", ""))
		refused(t, strings.Replace(instance(ns, "trio", "Cluster", ""), "replicas: 3", "replicas: 2", 1), "the smallest BE count allowed now is 3: BEs are removed one at a time and 2 BEs are not allowed")
	})

	// The tables need 3 replicas now (shop.orders was lowered, the
	// statistics tables keep 3): 5 -> 4 goes ahead, be-4 drains.
	report(agentconfig.MembershipStatus{Backends: hosts, Replication: &agentconfig.ReplicationReport{
		MaxReplicationNum: 3, MaxReplicationTable: "_statistics_.column_statistics", MinReplicationNum: 1, MinReplicationTable: "shop.tmp"}})
	e.waitReplication(ns, name, 3)
	e.apply(withBEs(4))
	e.eventually("agent.json lists the 4 desired backends", func() (bool, string) {
		got := e.agentBackends(ns, name)
		return len(got) == 4, fmt.Sprintf("backends %v", got)
	})
	report(agentconfig.MembershipStatus{Backends: hosts, Draining: []agentconfig.BackendDrain{{Host: hosts[4], TabletNum: 42}},
		Replication: &agentconfig.ReplicationReport{MaxReplicationNum: 3, MaxReplicationTable: "_statistics_.column_statistics"}})
	e.waitCondition(ns, name, "BackendScaleIn", "False")

	t.Run("admission refuses a second scale-in while one is pending", func(t *testing.T) {
		refused(t, withBEs(3), "spec.backend.replicas: the smallest BE count allowed now is 4: a BE is still being removed: lower the count again once the condition BackendScaleIn is True")
	})

	t.Run("a scale-in StarRocks refuses stalls with a clear condition", func(t *testing.T) {
		// A table created with 5 replicas after the last report: StarRocks
		// refuses the decommission, the agent says so.
		const why = "Error 1064 (42000): Unexpected exception: It will cause insufficient BE number if these BEs are decommissioned because the table shop.events requires 5 replicas."
		report(agentconfig.MembershipStatus{Backends: hosts, Draining: []agentconfig.BackendDrain{{Host: hosts[4], TabletNum: 42}}, DecommissionRefused: why,
			Replication: &agentconfig.ReplicationReport{MaxReplicationNum: 5, MaxReplicationTable: "shop.events"}})
		e.eventually("BackendScaleIn=False/DecommissionRefused", func() (bool, string) {
			status, reason, message := e.condition(ns, name, "BackendScaleIn")
			return status == "False" && reason == "DecommissionRefused" && strings.Contains(message, "StarRocks refuses to decommission "+hosts[4]) &&
					strings.Contains(message, "the table shop.events requires 5 replicas") && strings.Contains(message, "set spec.backend.replicas back to 5"),
				fmt.Sprintf("%s %s: %s", status, reason, message)
		})
		time.Sleep(time.Second) // a few more passes
		if got := e.beReplicas(ns, name); got != 5 {
			t.Fatalf("BE StatefulSet replicas %d while StarRocks refuses the decommission, want 5", got)
		}
		e.eventually("a Warning Event DecommissionRefused", func() (bool, string) {
			ev := e.starrocksEvents(ns, name)["DecommissionRefused"]
			return len(ev) == 1 && ev[0].Type == corev1.EventTypeWarning, fmt.Sprint(ev)
		})
	})

	t.Run("once StarRocks lets be-4 go the next scale-in is admitted", func(t *testing.T) {
		report(agentconfig.MembershipStatus{Backends: hosts[:4],
			Replication: &agentconfig.ReplicationReport{MaxReplicationNum: 3, MaxReplicationTable: "_statistics_.column_statistics"}})
		e.waitObjects(ns, name, 3, 4)
		e.waitCondition(ns, name, "BackendScaleIn", "True")
		e.apply(withBEs(3))
		e.eventually("agent.json lists the 3 desired backends", func() (bool, string) {
			got := e.agentBackends(ns, name)
			return len(got) == 3, fmt.Sprintf("backends %v", got)
		})
	})

	t.Run("with the webhook down the hooks hold the rules", func(t *testing.T) {
		e.stopWebhook()
		// The CRD refuses any scale-in from 3 BEs (2 is not allowed), so
		// grow to 4 first; then a table needs 4 replicas, and 4 -> 3 passes
		// the CRD (by one) while the hooks refuse it and keep 4.
		e.apply(withBEs(4))
		e.eventually("agent.json lists the 4 desired backends", func() (bool, string) {
			got := e.agentBackends(ns, name)
			return len(got) == 4, fmt.Sprintf("backends %v", got)
		})
		report(agentconfig.MembershipStatus{Backends: e.agentBackends(ns, name),
			Replication: &agentconfig.ReplicationReport{MaxReplicationNum: 4, MaxReplicationTable: "shop.orders"}})
		e.waitReplication(ns, name, 4)
		e.apply(withBEs(3))
		e.eventually("ConfigurationValid=False naming the smallest count and the table", func() (bool, string) {
			status, reason, message := e.condition(ns, name, "ConfigurationValid")
			return status == "False" && strings.Contains(message, "the smallest BE count allowed now is 4: StarRocks cannot remove a BE while a table needs more replicas than the BEs left, and table shop.orders has replication_num 4"),
				fmt.Sprintf("%s %s: %s", status, reason, message)
		})
		if got := len(e.agentBackends(ns, name)); got != 4 {
			t.Errorf("agent.json lists %d backends, want the 4 in effect", got)
		}
		if status, reason, _ := e.condition(ns, name, "LastValidConfigurationApplied"); status != "True" || reason != "LastValidConfigurationKept" {
			t.Errorf("LastValidConfigurationApplied %s/%s, want True/LastValidConfigurationKept", status, reason)
		}
	})
}

// waitReplication waits until status.replication.maxReplicationNum is n.
func (e *env) waitReplication(namespace, name string, n int64) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("status.replication.maxReplicationNum %d", n), func() (bool, string) {
		sr, err := e.get("Starrocks", namespace, name)
		if err != nil {
			return false, err.Error()
		}
		got, _, _ := unstructured.NestedInt64(sr.Object, "status", "replication", "maxReplicationNum")
		return got == n, fmt.Sprintf("maxReplicationNum %d", got)
	})
}
