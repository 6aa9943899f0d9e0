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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestFrontendThatLostItsVolumeNeverBootstraps: once the accounts are
// ready the instance has bootstrapped, and agent.json says so, so FE-0's
// agent never lets an FE with empty meta start a cluster of its own (the
// agent's side: images/agent/internal/agent/bootstrap_test.go). While FE-0
// rejoins, Available names it and why.
func TestFrontendThatLostItsVolumeNeverBootstraps(t *testing.T) {
	t.Parallel()
	const ns, name = "team-v", "olap"
	e := sharedEnv(t, withWebhook)
	e.apply(testClass)
	e.apply(instance(ns, name, "Cluster", ""))
	e.waitObjects(ns, name, 3, 3)
	fe0 := "d8ms-sr-" + name + "-0"
	if e.agentConfig(ns, name).Bootstrapped {
		t.Fatal("agent.json says bootstrapped before any FE ran: FE-0 could never start the cluster")
	}
	e.reportAgent(ns, fe0, agentconfig.Status{Accounts: &agentconfig.AccountsStatus{Ready: true}})
	e.waitCondition(ns, name, "AccountsReady", "True")
	e.eventually("agent.json says the instance has bootstrapped", func() (bool, string) {
		c := e.agentConfig(ns, name)
		return c.Bootstrapped, fmt.Sprintf("bootstrapped %v", c.Bootstrapped)
	})

	// The tenant forges a refusal on its own FE pod: the hooks show it and
	// keep both the ports and the guard (docs/ADMIN_GUIDE.md, "What a tenant
	// can do").
	e.reportAgent(ns, fe0, agentconfig.Status{Accounts: &agentconfig.AccountsStatus{Reason: "RootPasswordRefused", Message: "forged"}})
	e.eventually("the forged refusal is in the message, the condition stays True", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "AccountsReady")
		return status == "True" && strings.Contains(message, "RootPasswordRefused: forged"), fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	if !e.agentConfig(ns, name).Bootstrapped {
		t.Fatal("a forged report switched the bootstrap guard off")
	}

	// FE-0's volume is gone: its agent rejoins it to the leader FE-1.
	e.reportAgent(ns, fe0, agentconfig.Status{Accounts: &agentconfig.AccountsStatus{Ready: true},
		Join: &agentconfig.JoinStatus{Reason: agentconfig.JoinReasonRejoining, Message: "the FE is added to the cluster of leader x again"}})
	e.eventually("Available names the rejoining FE", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "Available")
		return status == "False" && reason == agentconfig.JoinReasonRejoining && strings.Contains(message, "pod "+fe0) && strings.Contains(message, "never starts a new cluster"),
			fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	// A reason the agent never writes is not copied into the status.
	e.reportAgent(ns, fe0, agentconfig.Status{Accounts: &agentconfig.AccountsStatus{Ready: true},
		Join: &agentconfig.JoinStatus{Reason: "not a reason!", Message: "forged"}})
	e.eventually("a forged join reason is ignored", func() (bool, string) {
		_, reason, message := e.condition(ns, name, "Available")
		return reason == "ReplicasNotReady", reason + ": " + message
	})
}

// agentConfig is the rendered agent.json.
func (e *env) agentConfig(namespace, name string) agentconfig.Config {
	e.t.Helper()
	raw, _ := e.configMapData(namespace, "d8ms-sr-"+name+"-config")[agentconfig.FileName].(string)
	var c agentconfig.Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		e.t.Fatalf("parse %s of %s/%s: %v", agentconfig.FileName, namespace, name, err)
	}
	return c
}

// reportAgent plays the agent of pod: it publishes st as its status.
func (e *env) reportAgent(namespace, pod string, st agentconfig.Status) {
	e.t.Helper()
	st.TLS = agentconfig.TLSStatus{Ready: true}
	st.UpdatedAt = time.Now().UTC().Format(time.RFC3339)
	data, _ := json.Marshal(st)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{agentconfig.StatusAnnotation: string(data)}}})
	e.patchPodAsAgent(namespace, pod, patch)
}
