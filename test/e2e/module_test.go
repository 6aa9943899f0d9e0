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
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const testClass = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: analytics
spec:
  topology:
    allowedTopologies: [Ignored, TransZonal]
    defaultTopology: Ignored
    allowedZones: [zone-a, zone-b, zone-c]
  sizingPolicies:
    - cores: {min: 1, max: 8}
      memory: {min: 2Gi, max: 32Gi, step: 1Gi}
      coreFractions: [50, 100]
  overridableConfiguration: [streamingLoadMaxMb, loadProcessMaxMemoryLimitPercent, catalogTrashExpireSecond]
  configuration:
    streamingLoadMaxMb: 10240
    loadProcessMaxMemoryLimitPercent: 30
    catalogTrashExpireSecond: 86400
  validations:
    - rule: configuration.streamingLoadMaxMb <= 102400
      message: Stream Load requests may be at most 100 GB in this class.
`

// sharedDataTestClass is testClass allowing shared-data instances.
var sharedDataTestClass = strings.Replace(testClass, "  overridableConfiguration:", "  sharedData: {allowed: true, minReplicas: 1, maxReplicas: 5}\n  overridableConfiguration:", 1)

func instance(namespace, name, typ string, config string) string {
	replicas := ""
	if typ == "Cluster" {
		replicas = "\n    replicas: 3"
	}
	if config != "" {
		config = "\n  configuration:\n" + config
	}
	return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: %s
  namespace: %s
spec:
  starrocksClassName: analytics
  type: %s
  frontend:
    cpu: {cores: 1}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: 10Gi}
  backend:%s
    cpu: {cores: 2}
    memory: {size: 8Gi}
    persistentVolumeClaim: {size: 50Gi}%s
`, name, namespace, typ, replicas, config)
}

// starrocksEvents are the Events `kubectl describe starrocks` lists (by
// the object's kind, name, namespace and UID), by reason.
func (e *env) starrocksEvents(namespace, name string) map[string][]corev1.Event {
	e.t.Helper()
	sr, err := e.get("Starrocks", namespace, name)
	if err != nil {
		e.t.Fatal(err)
	}
	list, err := e.kube.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{FieldSelector: fmt.Sprintf(
		"involvedObject.kind=Starrocks,involvedObject.name=%s,involvedObject.namespace=%s,involvedObject.uid=%s", name, namespace, sr.GetUID())})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]corev1.Event{}
	for _, ev := range list.Items {
		out[ev.Reason] = append(out[ev.Reason], ev)
	}
	return out
}

func (e *env) waitObjects(namespace, name string, feReplicas, beReplicas int64) {
	e.t.Helper()
	prefix := "d8ms-sr-" + name
	e.eventually("objects of "+namespace+"/"+name, func() (bool, string) {
		for _, o := range []struct{ kind, name string }{
			{"StatefulSet", prefix}, {"StatefulSet", prefix + "-be"}, {"Service", prefix},
			{"Service", prefix + "-fe-headless"}, {"Service", prefix + "-be-headless"},
			{"ConfigMap", prefix + "-config"}, {"Certificate", prefix}, {"Secret", prefix + "-credentials"},
		} {
			if _, err := e.get(o.kind, namespace, o.name); err != nil {
				return false, fmt.Sprintf("%s %s: %v", o.kind, o.name, err)
			}
		}
		fe, _ := e.get("StatefulSet", namespace, prefix)
		be, _ := e.get("StatefulSet", namespace, prefix+"-be")
		feR, _, _ := unstructured.NestedInt64(fe.Object, "spec", "replicas")
		beR, _, _ := unstructured.NestedInt64(be.Object, "spec", "replicas")
		return feR == feReplicas && beR == beReplicas, fmt.Sprintf("replicas FE %d BE %d, want %d %d", feR, beR, feReplicas, beReplicas)
	})
}

// TestModuleEndToEnd runs the module's main paths step by step, then the
// volume tests and the scaling test, on one env.
func TestModuleEndToEnd(t *testing.T) {
	t.Parallel()
	// Its own env: its steps bypass the webhook, restart the module and
	// delete the default StarrocksClass; the volume tests count the
	// module's failed runs and make a cluster-wide StorageClass; the
	// scaling test stops the webhook. Other tests would see each of these.
	// They run one after the other, the scaling test last (the webhook
	// stays stopped), each in namespaces of its own and counting failed
	// runs from its own start (drainPassErrors).
	e := newEnv(t, envOptions{})
	// One class for every step; it allows the CN cache test's shared-data
	// instance.
	e.apply(sharedDataTestClass)
	run := func(name string, f func(t *testing.T)) { e.step(t, name, f) }

	run("Standalone and Cluster instances get their objects and a valid status", func(t *testing.T) {
		e.apply(instance("team-a", "small", "Standalone", ""))
		e.apply(instance("team-a", "big", "Cluster", ""))
		e.waitObjects("team-a", "small", 1, 1)
		e.waitObjects("team-a", "big", 3, 3)
		e.waitCondition("team-a", "small", "ConfigurationValid", "True")
		e.waitCondition("team-a", "big", "ConfigurationValid", "True")
		reason, _ := e.waitCondition("team-a", "small", "Available", "False")
		if reason == "" {
			t.Error("Available=False without a reason")
		}
		// addon-operator's clients' discovery-cache folders
		// (flant/kube-client's os.MkdirTemp, never removed) belong in the
		// run's folder, not the machine's /tmp.
		tmp := filepath.Join(filepath.Dir(e.ao.LogPath), "tmp")
		if caches, _ := filepath.Glob(filepath.Join(tmp, "kube-cache-discovery-*")); len(caches) == 0 {
			t.Errorf("no kube-cache-discovery folder in addon-operator's %s: the clients' folders went elsewhere (the machine's /tmp)", tmp)
		}
		// Its Helm client's discovery cache too (cli-runtime's ConfigFlags:
		// $HOME/.kube/cache unless KUBECACHEDIR says otherwise).
		if caches, _ := filepath.Glob(filepath.Join(tmp, "kube-cache", "discovery", "*")); len(caches) == 0 {
			t.Errorf("no Helm discovery cache in addon-operator's %s: it went elsewhere (the machine's $HOME/.kube/cache)", tmp)
		}
	})

	run("a runtime-mutable change updates the configuration, not the pod templates", func(t *testing.T) {
		feBefore, beBefore := e.podTemplate("team-a", "d8ms-sr-small"), e.podTemplate("team-a", "d8ms-sr-small-be")
		before := fmt.Sprint(e.configMapData("team-a", "d8ms-sr-small-config"))
		e.apply(instance("team-a", "small", "Standalone", "    streamingLoadMaxMb: 20480\n    catalogTrashExpireSecond: 3600"))
		e.eventually("ConfigMap with the new values", func() (bool, string) {
			data := fmt.Sprint(e.configMapData("team-a", "d8ms-sr-small-config"))
			return data != before && strings.Contains(data, "20480") && strings.Contains(data, "3600"), "ConfigMap unchanged"
		})
		if e.podTemplate("team-a", "d8ms-sr-small") != feBefore {
			t.Error("FE pod template changed on a runtime-mutable change (pods would restart)")
		}
		if e.podTemplate("team-a", "d8ms-sr-small-be") != beBefore {
			t.Error("BE pod template changed on a runtime-mutable change (pods would restart)")
		}
	})

	run("loadProcessMaxMemoryLimitPercent rolls the BE pods", func(t *testing.T) {
		beBefore := e.podTemplate("team-a", "d8ms-sr-small-be")
		e.apply(instance("team-a", "small", "Standalone", "    streamingLoadMaxMb: 20480\n    catalogTrashExpireSecond: 3600\n    loadProcessMaxMemoryLimitPercent: 50"))
		e.eventually("BE pod template rolled", func() (bool, string) {
			return e.podTemplate("team-a", "d8ms-sr-small-be") != beBefore, "BE pod template unchanged"
		})
	})

	run("an invalid change is rejected by the webhook", func(t *testing.T) {
		_, err := e.tryApply(instance("team-a", "small", "Standalone", "    streamingLoadMaxMb: 204800"))
		if err == nil || !strings.Contains(err.Error(), "Stream Load requests may be at most 100 GB") {
			t.Fatalf("apply of a change breaking the class rule: %v, want the webhook's rejection with the rule's message", err)
		}
		_, err = e.tryApply(strings.Replace(instance("team-a", "small", "Standalone", ""), "size: 8Gi", "size: 64Gi", 1))
		if err == nil || !strings.Contains(err.Error(), "spec.backend.memory.size") {
			t.Fatalf("apply of a size outside every policy: %v, want a rejection naming spec.backend.memory.size", err)
		}
	})

	run("with the webhook bypassed the hooks keep the last valid objects", func(t *testing.T) {
		// Pointed nowhere (a webhook that is down): its failurePolicy
		// Ignore lets everything through. The apiserver may still cache
		// the old configuration for a moment: retry.
		e.setWebhook(nil)
		var applyErr error
		e.eventually("invalid change accepted by the apiserver", func() (bool, string) {
			_, applyErr = e.tryApply(instance("team-a", "small", "Standalone", "    streamingLoadMaxMb: 204800\n    catalogTrashExpireSecond: 3600\n    loadProcessMaxMemoryLimitPercent: 50"))
			return applyErr == nil, fmt.Sprint(applyErr)
		})
		cmBefore := configWithoutRolloutState(t, e.configMapData("team-a", "d8ms-sr-small-config"))
		_, message := e.waitCondition("team-a", "small", "ConfigurationValid", "False")
		if !strings.Contains(message, "Stream Load requests may be at most 100 GB") {
			t.Errorf("ConfigurationValid message %q does not quote the class rule", message)
		}
		reason, _ := e.waitCondition("team-a", "small", "LastValidConfigurationApplied", "True")
		if reason != "LastValidConfigurationKept" {
			t.Errorf("LastValidConfigurationApplied reason %q, want LastValidConfigurationKept", reason)
		}
		time.Sleep(time.Second) // a few more passes
		if got := configWithoutRolloutState(t, e.configMapData("team-a", "d8ms-sr-small-config")); got != cmBefore || strings.Contains(got, "204800") {
			t.Error("the invalid value reached the instance's configuration")
		}
		// kubectl describe shows it as Events, each once however many
		// passes ran since.
		e.eventually("Events of the violation and the kept state", func() (bool, string) {
			ev := e.starrocksEvents("team-a", "small")
			return len(ev["ClassRuleViolated"]) > 0 && len(ev["LastValidConfigurationKept"]) > 0, fmt.Sprint(ev)
		})
		ev := e.starrocksEvents("team-a", "small")
		for _, reason := range []string{"ClassRuleViolated", "LastValidConfigurationKept"} {
			if len(ev[reason]) != 1 || ev[reason][0].Type != corev1.EventTypeWarning || ev[reason][0].Count != 1 {
				t.Errorf("Events %s: %+v, want one Warning", reason, ev[reason])
			}
		}
		if msg := ev["ClassRuleViolated"][0].Message; !strings.Contains(msg, "spec.configuration.streamingLoadMaxMb") || !strings.Contains(msg, "Stream Load requests may be at most 100 GB") {
			t.Errorf("the Event %q does not name the field and the rule", msg)
		}
		// Back to a valid spec: the condition clears.
		e.apply(instance("team-a", "small", "Standalone", "    streamingLoadMaxMb: 20480\n    catalogTrashExpireSecond: 3600\n    loadProcessMaxMemoryLimitPercent: 50"))
		e.waitCondition("team-a", "small", "ConfigurationValid", "True")
		e.eventually("an Event of the fix", func() (bool, string) {
			ev := e.starrocksEvents("team-a", "small")
			return len(ev["Valid"]) == 1 && ev["Valid"][0].Type == corev1.EventTypeNormal, fmt.Sprint(ev["Valid"])
		})
		e.setWebhook(&e.webhook.Endpoint)
		if err := e.waitWebhookRedirected(); err != nil {
			t.Fatal(err)
		}
	})

	run("a brand-new invalid instance gets no objects", func(t *testing.T) {
		e.setWebhook(nil)
		e.eventually("invalid instance accepted by the apiserver", func() (bool, string) {
			_, err := e.tryApply(strings.Replace(instance("team-a", "oversized", "Standalone", ""), "size: 8Gi", "size: 64Gi", 1))
			return err == nil, fmt.Sprint(err)
		})
		e.waitCondition("team-a", "oversized", "ConfigurationValid", "False")
		if _, err := e.get("StatefulSet", "team-a", "d8ms-sr-oversized"); !apierrors.IsNotFound(err) {
			t.Errorf("StatefulSet of a never-valid instance: %v, want NotFound", err)
		}
		e.setWebhook(&e.webhook.Endpoint)
		if err := e.waitWebhookRedirected(); err != nil {
			t.Fatal(err)
		}
	})

	run("status follows Pod and Certificate readiness", func(t *testing.T) {
		e.markPodsReady("team-a", "d8ms-sr-small", 1)
		e.markPodsReady("team-a", "d8ms-sr-small-be", 1)
		e.waitCondition("team-a", "small", "Available", "True")
		e.markCertificateReady("team-a", "d8ms-sr-small")
		e.reportAgentTLS("team-a", "d8ms-sr-small-0")
		e.waitCondition("team-a", "small", "TLSReady", "True")
		e.eventually("phase Running", func() (bool, string) {
			sr, _ := e.get("Starrocks", "team-a", "small")
			phase, _, _ := unstructured.NestedString(sr.Object, "status", "phase")
			return phase == "Running", "phase " + phase
		})
	})

	run("two instances of the same name in two namespaces do not collide", func(t *testing.T) {
		e.apply(instance("team-b", "small", "Standalone", "    streamingLoadMaxMb: 30720"))
		e.waitObjects("team-b", "small", 1, 1)
		e.waitCondition("team-b", "small", "ConfigurationValid", "True")
		a := fmt.Sprint(e.configMapData("team-a", "d8ms-sr-small-config"))
		b := fmt.Sprint(e.configMapData("team-b", "d8ms-sr-small-config"))
		if !strings.Contains(b, "30720") || strings.Contains(a, "30720") {
			t.Error("the ConfigMaps of team-a/small and team-b/small mixed up their configuration")
		}
		sa, _ := e.get("Secret", "team-a", "d8ms-sr-small-credentials")
		sb, _ := e.get("Secret", "team-b", "d8ms-sr-small-credentials")
		pa, _, _ := unstructured.NestedString(sa.Object, "data", "password")
		pb, _, _ := unstructured.NestedString(sb.Object, "data", "password")
		if pa == "" || pa == pb {
			t.Error("the two instances share (or lack) an admin password")
		}
	})

	run("a deleted instance loses its objects and keeps its volumes and their credentials (Retain)", func(t *testing.T) {
		e.eventually("PVCs of team-b/small created by the StatefulSet controller", func() (bool, string) {
			pvcs, err := e.kube.CoreV1().PersistentVolumeClaims("team-b").List(context.Background(), metav1.ListOptions{})
			return err == nil && len(pvcs.Items) >= 2, fmt.Sprintf("%d PVCs (%v)", len(pvcs.Items), err)
		})
		// Deleted as soon as its PVCs exist: the credentials hook may not have
		// handed the Secrets to the FE's metadata PVC yet (they are held for
		// it, owned by nothing, until then), and they must stay anyway.
		if err := e.resource("Starrocks", "team-b").Delete(context.Background(), "small", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.eventually("objects of team-b/small gone", func() (bool, string) {
			for _, o := range []struct{ kind, name string }{
				{"StatefulSet", "d8ms-sr-small"}, {"StatefulSet", "d8ms-sr-small-be"}, {"Service", "d8ms-sr-small"},
				{"ConfigMap", "d8ms-sr-small-config"}, {"Certificate", "d8ms-sr-small"},
			} {
				if _, err := e.get(o.kind, "team-b", o.name); !apierrors.IsNotFound(err) {
					return false, fmt.Sprintf("%s %s still there (%v)", o.kind, o.name, err)
				}
			}
			return true, ""
		})
		pvcs, err := e.kube.CoreV1().PersistentVolumeClaims("team-b").List(context.Background(), metav1.ListOptions{})
		if err != nil || len(pvcs.Items) < 2 {
			t.Fatalf("PVCs after deletion with the Retain policy: %d (%v), want them kept", len(pvcs.Items), err)
		}
		// The passwords are in the retained FE metadata too: the Secrets
		// follow the volume (test/e2e/datasafety_test.go re-creates the instance).
		e.eventually("the credentials Secrets of team-b/small kept, owned by the FE's metadata PVC", func() (bool, string) {
			for _, s := range []string{"d8ms-sr-small-credentials", "d8ms-sr-small-agent-credentials", "d8ms-sr-small-keystore"} {
				sec, err := e.get("Secret", "team-b", s)
				if err != nil {
					return false, fmt.Sprintf("Secret %s after deletion with the Retain policy: %v, want it kept with the volume", s, err)
				}
				if owners := sec.GetOwnerReferences(); len(owners) != 1 || owners[0].Kind != "PersistentVolumeClaim" {
					return false, fmt.Sprintf("Secret %s owners %v", s, owners)
				}
			}
			return true, ""
		})
		if _, err := e.get("StatefulSet", "team-a", "d8ms-sr-small"); err != nil {
			t.Errorf("deleting team-b/small touched team-a/small: %v", err)
		}
	})

	run("a deleted default class does not come back after a module restart", func(t *testing.T) {
		e.eventually("default class created by the module", func() (bool, string) {
			_, err := e.resource("StarrocksClass", "").Get(context.Background(), "default", metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
		if err := e.resource("StarrocksClass", "").Delete(context.Background(), "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.stopModule()
		e.startModule()
		time.Sleep(2 * time.Second)
		if _, err := e.resource("StarrocksClass", "").Get(context.Background(), "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("default class after the admin deleted it and the module restarted: %v, want NotFound", err)
		}
		// The restarted module still serves the existing instances.
		e.waitCondition("team-a", "small", "ConfigurationValid", "True")
	})

	run("growing volumes expands the PVCs", func(t *testing.T) { testGrowingVolumesExpandsThePVCs(t, e) })
	run("replication-aware scaling", func(t *testing.T) { testReplicationAwareScaling(t, e) })
}

// markPodsReady plays the kubelet: the StatefulSet controller created the
// Pods; mark them Running and Ready so it counts them.
func (e *env) markPodsReady(namespace, sts string, n int) {
	e.t.Helper()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", sts, i)
		e.eventually("pod "+name+" created", func() (bool, string) {
			_, err := e.kube.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
			return err == nil, fmt.Sprint(err)
		})
		now := metav1.Now()
		patch := fmt.Sprintf(`{"status":{"phase":"Running","startTime":%q,"conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q},{"type":"ContainersReady","status":"True","lastTransitionTime":%q}]}}`,
			now.Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339))
		if _, err := e.kube.CoreV1().Pods(namespace).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			e.t.Fatalf("mark pod %s ready: %v", name, err)
		}
	}
	_ = corev1.PodRunning
}

// reportAgentTLS plays the agent sidecar: it publishes that TLS works on the
// query port in its pod's status annotation.
func (e *env) reportAgentTLS(namespace, pod string) {
	e.t.Helper()
	status := agentconfig.Status{
		TLS:       agentconfig.TLSStatus{Ready: true, NotAfter: time.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339), Serial: "01"},
		LastApply: agentconfig.ApplyStatus{Time: time.Now().UTC().Format(time.RFC3339), Succeeded: true},
		UpdatedAt: time.Now().UTC().Format(time.RFC3339),
	}
	data, _ := json.Marshal(status)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{agentconfig.StatusAnnotation: string(data)}}})
	e.patchPodAsAgent(namespace, pod, patch)
}

// markCertificateReady plays cert-manager.
func (e *env) markCertificateReady(namespace, name string) {
	e.t.Helper()
	notAfter := time.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339)
	patch := fmt.Sprintf(`{"status":{"notAfter":%q,"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"Certificate is up to date and has not expired","lastTransitionTime":%q}]}}`,
		notAfter, time.Now().UTC().Format(time.RFC3339))
	if _, err := e.resource("Certificate", namespace).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatalf("mark certificate ready: %v", err)
	}
}

// configWithoutRolloutState is an instance's config ConfigMap without what
// follows its rollout rather than its spec: agent.json's tabletHealth is on
// while a BE restart is pending (the BE rollout of an earlier step may still
// run), which a spec never reaches.
func configWithoutRolloutState(t *testing.T, data map[string]any) string {
	t.Helper()
	out := map[string]any{}
	for k, v := range data {
		out[k] = v
	}
	if raw, ok := data["agent.json"].(string); ok {
		var agent map[string]any
		if err := json.Unmarshal([]byte(raw), &agent); err != nil {
			t.Fatalf("agent.json: %v", err)
		}
		delete(agent, "tabletHealth")
		out["agent.json"] = agent
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
