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
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

const classYAML = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata: {name: default, uid: class-uid, generation: 1}
spec:
  topology: {allowedTopologies: [Ignored], defaultTopology: Ignored}
  sizingPolicies:
    - cores: {min: 1, max: 4}
      memory: {min: 2Gi, max: 16Gi, step: 1Gi}
      coreFractions: [50, 100]
  overridableConfiguration: [streamingLoadMaxMb]
  validations:
    - rule: "configuration.streamingLoadMaxMb <= 2048"
      message: "Stream Load requests may be at most 2 GiB."
`

func starrocksYAML(name string, generation int, cores int, streaming int) string {
	return fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: %[1]s, namespace: team, uid: uid-%[1]s, generation: %[2]d}
spec:
  starrocksClassName: default
  type: Standalone
  frontend: {cpu: {cores: %[3]d}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 20Gi}}
  configuration: {streamingLoadMaxMb: %[4]d}
`, name, generation, cores, streaming)
}

func readyObjectsYAML(name string, feReady, beReady int) string {
	sts := func(component, suffix string, ready int) string {
		return fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-%[1]s%[2]s
  namespace: team
  uid: sts-uid-%[1]s%[2]s
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s, app.kubernetes.io/component: %[3]s}
spec: {replicas: 1}
status: {readyReplicas: %[4]d}
`, name, suffix, component, ready)
	}
	return sts("frontend", "", feReady) + "---" + sts("backend", "-be", beReady) + fmt.Sprintf(`---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: d8ms-sr-%[1]s
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s}
status:
  notAfter: "2027-03-01T00:00:00Z"
  conditions: [{type: Ready, status: "True", reason: Ready, message: Certificate is up to date and has not expired}]
---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-%[1]s-0
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s, app.kubernetes.io/component: frontend}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: d8ms-sr-%[1]s, uid: sts-uid-%[1]s, controller: true}]
  annotations:
    managed-starrocks.deckhouse.io/agent-status: '{"tls":{"ready":true,"notAfter":"2027-03-01T00:00:00Z"},"lastApply":{"succeeded":true},"updatedAt":"2026-12-02T10:00:00Z"}'
`, name)
}

func newHook(t *testing.T) *framework.HookExecutionConfig {
	t.Helper()
	var f *framework.HookExecutionConfig
	// The hook's own writes go to the fake cluster of the moment: the
	// framework's dependency container keeps the first one it was given.
	run := func(ctx context.Context, input *pkg.HookInput) error {
		fakeClient(f).ClearActions() // written: this run's writes only
		return handle(ctx, input, kubewrite.NewForClient(fakeResources{f.KubeClient()}))
	}
	f = framework.NewHookExecutionConfig(t, Config, run,
		framework.WithOpenAPIDir("../../openapi"),
		framework.WithInitialValues(`{"global": {"discovery": {"clusterDomain": "cluster.local"}}}`),
		framework.WithSchemeBuilder(runtime.SchemeBuilder{v1alpha1.AddToScheme}),
		framework.WithCRD("cert-manager.io", "v1", "Certificate", true),
	)
	f.DependencyContainer().SetClock(clockwork.NewFakeClockAt(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)))
	return f
}

func statusOf(t *testing.T, f *framework.HookExecutionConfig, name string) v1alpha1.StarrocksStatus {
	t.Helper()
	u := f.KubernetesResource("Starrocks", "team", name)
	require.NotNil(t, u, "Starrocks %s", name)
	return decodeStatus(t, u)
}

func decodeStatus(t *testing.T, u *unstructured.Unstructured) v1alpha1.StarrocksStatus {
	t.Helper()
	raw, _, _ := unstructured.NestedMap(u.Object, "status")
	data, err := json.Marshal(raw)
	require.NoError(t, err)
	var st v1alpha1.StarrocksStatus
	require.NoError(t, json.Unmarshal(data, &st))
	return st
}

func condition(st v1alpha1.StarrocksStatus, typ string) (status, reason, message string) {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return string(c.Status), c.Reason, c.Message
		}
	}
	return "", "", ""
}

// statusPatches are the Starrocks status patches of the last run.
func statusPatches(f *framework.HookExecutionConfig) []k8stesting.Action {
	return written(f, "patch", "starrockses")
}

func TestHookRendersAValidInstanceAndReportsStatus(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())

	entries := entriesOf(t, f)
	require.Len(t, entries, 1)
	assert.Equal(t, "olap", entries[0].Get("name").String())
	assert.Equal(t, "d8ms-sr-olap.team.svc.cluster.local", entries[0].Get("agentConfig.queryHost").String())
	assert.Equal(t, int64(1024), entries[0].Get("configuration.streamingLoadMaxMb").Int())

	cm := f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-olap")
	require.NotNil(t, cm, "the last valid configuration is persisted in the module namespace, named by the UID")
	assert.Empty(t, cm.GetOwnerReferences(), "an owner cannot be in another namespace: the hook deletes it")
	assert.Nil(t, f.KubernetesResource("ConfigMap", "team", "d8ms-sr-olap-last-valid"), "nothing of the module's memory is in the tenant namespace")

	st := statusOf(t, f, "olap")
	assert.Equal(t, v1alpha1.PhasePending, st.Phase, "nothing deployed yet")
	assert.EqualValues(t, 1, st.ObservedGeneration)
	assert.EqualValues(t, 1, st.LastValidGeneration)
	assert.Equal(t, "d8ms-sr-olap-credentials", st.CredentialsSecretName)
	assert.Equal(t, "d8ms-sr-olap.team.svc.cluster.local:9030", st.Endpoints.Query)
	assert.Equal(t, "d8ms-sr-olap.team.svc.cluster.local:8030", st.Endpoints.HTTP)
	assert.Equal(t, "d8ms-sr-olap.team.svc.cluster.local:8443", st.Endpoints.HTTPS, "clients get the FE HTTP API over HTTPS")
	assert.EqualValues(t, 1024, *st.Configuration.StreamingLoadMaxMb)
	assert.EqualValues(t, 30, *st.Configuration.LoadProcessMaxMemoryLimitPercent, "effective values include keys the user did not set")
	s, r, _ := condition(st, v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, []string{"True", ReasonValid}, []string{s, r})
	s, r, _ = condition(st, v1alpha1.ConditionTLSReady)
	assert.Equal(t, []string{"False", ReasonCertificateMissing}, []string{s, r})

	cls := f.KubernetesGlobalResource("StarrocksClass", "default")
	count, _, _ := unstructured.NestedInt64(cls.Object, "status", "sizingPolicyCount")
	assert.EqualValues(t, 1, count)
	conds, _, _ := unstructured.NestedSlice(cls.Object, "status", "conditions")
	require.Len(t, conds, 1)
	assert.Equal(t, "True", conds[0].(map[string]any)["status"])

	assertMetric(t, f, MetricConfigurationValid, map[string]string{"namespace": "team", "name": "olap", "class": "default"}, 1)
	assertMetric(t, f, MetricInstances, map[string]string{"phase": "Pending"}, 1)
	assertMetric(t, f, MetricInstances, map[string]string{"phase": "Running"}, 0)

	t.Run("becomes Running with TLSReady once pods, StatefulSets and the certificate are ready", func(t *testing.T) {
		f.AddKubeObject(readyObjectsYAML("olap", 1, 1))
		f.RunHook()
		require.NoError(t, f.HookError())
		st := statusOf(t, f, "olap")
		assert.Equal(t, v1alpha1.PhaseRunning, st.Phase)
		s, r, _ := condition(st, v1alpha1.ConditionAvailable)
		assert.Equal(t, []string{"True", ReasonAllReplicasReady}, []string{s, r})
		s, r, _ = condition(st, v1alpha1.ConditionTLSReady)
		assert.Equal(t, []string{"True", ReasonCertificateReady}, []string{s, r})
		assert.Equal(t, "2027-03-01T00:00:00Z", st.TLS.NotAfter.UTC().Format(time.RFC3339))
		assert.Equal(t, "d8ms-sr-olap-tls", st.TLS.SecretName)
		conditionsAreDocumented(t, st)
	})

	t.Run("patches nothing when nothing changed", func(t *testing.T) {
		f.RunHook()
		require.NoError(t, f.HookError())
		assert.Empty(t, statusPatches(f), "no status patch")
		for _, p := range f.PatchedOperations() {
			assert.NotEqual(t, framework.PatchTypeCreateOrUpdate, p.Type, "the persisted state is not rewritten")
		}
	})

	t.Run("becomes Degraded when a pod stops being ready", func(t *testing.T) {
		f.KubeStateSet(classYAML + "---" + starrocksYAMLWithStatus(t, f, "olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 0) + "---" + lastValidYAML(t, f, "uid-olap"))
		f.RunHook()
		require.NoError(t, f.HookError())
		st := statusOf(t, f, "olap")
		assert.Equal(t, v1alpha1.PhaseDegraded, st.Phase)
		s, r, m := condition(st, v1alpha1.ConditionAvailable)
		assert.Equal(t, []string{"False", ReasonReplicasNotReady, "Ready pods: 1 of 1 FE, 0 of 1 BE."}, []string{s, r, m})
		// kubectl get shows ready of desired, as kubectl get deployments does.
		assert.Equal(t, []string{"1/1", "0/1"}, []string{st.Frontend.Ready, st.Backend.Ready})
	})
}

// unschedulablePodYAML is a BE pod of the instance the scheduler does not
// place, with the scheduler's message; owned: its controller is the
// instance's BE StatefulSet (a tenant's look-alike has none).
func unschedulablePodYAML(name, pod string, owned bool, message string) string {
	owner := ""
	if owned {
		owner = fmt.Sprintf("\n  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: d8ms-sr-%[1]s-be, uid: sts-uid-%[1]s-be, controller: true}]", name)
	}
	return fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata:
  name: %[2]s
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: %[1]s, app.kubernetes.io/component: backend}%[3]s
status:
  phase: Pending
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: %[4]q}]
`, name, pod, owner, message)
}

func TestHookReportsWhyAPodCannotBeScheduled(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())
	f.KubeStateSet(classYAML + "---" + starrocksYAMLWithStatus(t, f, "olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 0) + "---" + lastValidYAML(t, f, "uid-olap") +
		"---" + unschedulablePodYAML("olap", "d8ms-sr-olap-be-0", true, "0/1 nodes are available: 1 Insufficient cpu.") +
		// A tenant's look-alike, not owned by the StatefulSet: not the instance's pod.
		"---" + unschedulablePodYAML("olap", "d8ms-sr-olap-be-1", false, "forged"))
	f.RunHook()
	require.NoError(t, f.HookError())
	st := statusOf(t, f, "olap")
	s, r, m := condition(st, v1alpha1.ConditionAvailable)
	assert.Equal(t, []string{"False", ReasonPodsUnschedulable, "Ready pods: 1 of 1 FE, 0 of 1 BE. Pod d8ms-sr-olap-be-0 cannot be scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient cpu."}, []string{s, r, m})

	t.Run("a long message is cut", func(t *testing.T) {
		long := strings.Repeat("x", 100000)
		f.KubeStateSet(classYAML + "---" + starrocksYAMLWithStatus(t, f, "olap", 1, 2, 1024) + "---" + readyObjectsYAML("olap", 1, 0) + "---" + lastValidYAML(t, f, "uid-olap") +
			"---" + unschedulablePodYAML("olap", "d8ms-sr-olap-be-0", true, long))
		f.RunHook()
		require.NoError(t, f.HookError())
		_, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionAvailable)
		assert.Equal(t, ReasonPodsUnschedulable, r)
		assert.Less(t, len(m), 2048, "the scheduler's message is cut as every message the hook reads")
	})
}

// starrocksYAMLWithStatus renders an instance carrying the status the fake
// cluster holds now, as the next reconcile would find it.
func starrocksYAMLWithStatus(t *testing.T, f *framework.HookExecutionConfig, name string, gen, cores, streaming int) string {
	t.Helper()
	st, _, _ := unstructured.NestedMap(f.KubernetesResource("Starrocks", "team", name).Object, "status")
	data, err := json.Marshal(st)
	require.NoError(t, err)
	return starrocksYAML(name, gen, cores, streaming) + "status: " + string(data) + "\n"
}

// lastValidYAML is the module's memory of the Starrocks with this UID as
// the fake cluster holds it now.
func lastValidYAML(t *testing.T, f *framework.HookExecutionConfig, uid string) string {
	t.Helper()
	cm := f.KubernetesResource("ConfigMap", shared.ModuleNamespace, shared.LastValidConfigMapName(uid))
	require.NotNil(t, cm)
	data, err := json.Marshal(cm.Object)
	require.NoError(t, err)
	return "\n" + string(data) + "\n"
}

func TestHookKeepsTheLastValidConfigurationOfAnInstanceThatBecameInvalid(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 2, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())
	before := entriesOf(t, f)[0].Raw

	// Generation 2 breaks the class's CEL rule; the cluster still holds the
	// persisted ConfigMap and the status of generation 1, not the desired
	// state written before: only the memory can carry the last valid state.
	f.KubeStateSet(classYAML + "---" + starrocksYAMLWithStatus(t, f, "olap", 2, 2, 4096) + "---" + lastValidYAML(t, f, "uid-olap"))
	f.RunHook()
	require.NoError(t, f.HookError())

	entries := entriesOf(t, f)
	require.Len(t, entries, 1)
	assert.JSONEq(t, before, entries[0].Raw, "the values entry is the one of generation 1")

	st := statusOf(t, f, "olap")
	assert.EqualValues(t, 2, st.ObservedGeneration)
	assert.EqualValues(t, 1, st.LastValidGeneration)
	assert.EqualValues(t, 1024, *st.Configuration.StreamingLoadMaxMb, "status shows the configuration in effect")
	s, r, m := condition(st, v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, "False", s)
	assert.Equal(t, ReasonClassRuleViolated, r)
	assert.Equal(t, `The spec breaks a class rule: spec.configuration.streamingLoadMaxMb: Stream Load requests may be at most 2 GiB. (value configuration.streamingLoadMaxMb=4096; class "default" validations[0]: configuration.streamingLoadMaxMb <= 2048).`, m)
	s, r, _ = condition(st, v1alpha1.ConditionLastValidConfigurationApplied)
	assert.Equal(t, []string{"True", ReasonLastValidKept}, []string{s, r})
	assertMetric(t, f, MetricConfigurationValid, map[string]string{"namespace": "team", "name": "olap", "class": "default"}, 0)

	cm := f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-olap")
	var persisted desired.Instance
	require.NoError(t, json.Unmarshal([]byte(cm.Object["data"].(map[string]any)[shared.LastValidKey].(string)), &persisted))
	assert.EqualValues(t, 1, persisted.Generation, "the persisted state is not overwritten by an invalid spec")
}

func TestHookRendersNothingForABrandNewInvalidInstance(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("bad", 1, 8, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())

	assert.Empty(t, entriesOf(t, f))
	assert.Nil(t, f.KubernetesResource("ConfigMap", shared.ModuleNamespace, "last-valid-uid-bad"))
	st := statusOf(t, f, "bad")
	assert.Equal(t, v1alpha1.PhaseInvalid, st.Phase)
	assert.Empty(t, st.CredentialsSecretName)
	assert.Nil(t, st.Endpoints)
	s, r, m := condition(st, v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, []string{"False", ReasonClassRuleViolated}, []string{s, r})
	assert.Contains(t, m, `spec.frontend.cpu.cores: 8 cores fall into no sizing policy of the class (value 8; class "default" sizingPolicies cores ranges [1-4])`)
	s, r, _ = condition(st, v1alpha1.ConditionLastValidConfigurationApplied)
	assert.Equal(t, []string{"False", ReasonNeverValid}, []string{s, r})
	assertMetric(t, f, MetricInstances, map[string]string{"phase": "Invalid"}, 1)
}

func TestHookReportsAMissingClassAndAnInvalidClass(t *testing.T) {
	f := newHook(t)
	// A new generation: the compiled-rules cache is keyed by UID and generation.
	broken := strings.Replace(classYAML, `"configuration.streamingLoadMaxMb <= 2048"`, `"configuration.streamingLoadMaxMb <="`, 1)
	broken = strings.Replace(broken, "generation: 1", "generation: 2", 1)
	other := strings.Replace(starrocksYAML("orphan", 1, 2, 1024), "starrocksClassName: default", "starrocksClassName: gone", 1)
	f.KubeStateSet(broken + "---" + starrocksYAML("olap", 1, 2, 1024) + "---" + other)
	f.RunHook()
	require.NoError(t, f.HookError())

	_, r, _ := condition(statusOf(t, f, "olap"), v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, ReasonClassInvalid, r)
	_, r, m := condition(statusOf(t, f, "orphan"), v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, ReasonClassNotFound, r)
	assert.Contains(t, m, `StarrocksClass "gone" does not exist`)

	cls := f.KubernetesGlobalResource("StarrocksClass", "default")
	conds, _, _ := unstructured.NestedSlice(cls.Object, "status", "conditions")
	require.Len(t, conds, 1)
	c := conds[0].(map[string]any)
	assert.Equal(t, "False", c["status"])
	assert.Equal(t, ReasonClassInvalid, c["reason"])
	assert.Contains(t, c["message"], "spec.validations[0].rule: the CEL rule does not compile")
}

func TestHookSortsValuesAndValidatesThemAgainstTheSchema(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("zeta", 1, 2, 1024) + "---" + starrocksYAML("alpha", 1, 2, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())
	entries := entriesOf(t, f)
	require.Len(t, entries, 2)
	assert.Equal(t, "alpha", entries[0].Get("name").String())
	assert.Equal(t, "zeta", entries[1].Get("name").String())
}

// Privileges on views and materialized views reach the agent's part of
// the desired state as declared: the instance schema, which the hook holds
// every entry to before handing it on, takes them.
func TestHookValuesCarryPrivilegesOnViews(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("views", 1, 2, 1024) + `  databases: [{name: sales}]
  roles:
    - name: reader
      privileges:
        - {database: sales, object: AllViews, privileges: [SELECT]}
        - {database: sales, object: AllMaterializedViews, privileges: [SELECT, REFRESH]}
`)
	f.RunHook()
	require.NoError(t, f.HookError())
	entries := entriesOf(t, f)
	require.Len(t, entries, 1, "the entry holds to the instance schema")
	privs := entries[0].Get("agentConfig.grants.roles.0.privileges").Array()
	require.Len(t, privs, 2)
	assert.Equal(t, "AllViews", privs[0].Get("object").String())
	assert.Equal(t, "AllMaterializedViews", privs[1].Get("object").String())
	assert.Equal(t, `["SELECT","REFRESH"]`, privs[1].Get("privileges").Raw)
}

func assertMetric(t *testing.T, f *framework.HookExecutionConfig, name string, labels map[string]string, want float64) {
	t.Helper()
	expired := false
	for _, m := range f.CollectedMetrics() {
		if m.Action == "expire" && m.Group == MetricGroup {
			expired = true
		}
		if m.Name == name && fmt.Sprint(m.Labels) == fmt.Sprint(labels) {
			require.NotNil(t, m.Value)
			assert.Equal(t, want, *m.Value, "metric %s%v", name, labels)
			assert.Equal(t, MetricGroup, m.Group, "metric %s is in the expiring group", name)
			assert.True(t, expired, "the group is expired before it is set again")
			return
		}
	}
	t.Errorf("metric %s%v not published; got %+v", name, labels, f.CollectedMetrics())
}
