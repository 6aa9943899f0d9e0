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
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deckhouse/deckhouse/pkg/log"
	sdkpkg "github.com/deckhouse/module-sdk/pkg"
	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	"github.com/flant/addon-operator/pkg/utils"
	kubeclient "github.com/flant/kube-client/client"
	bindingcontext "github.com/flant/shell-operator/pkg/hook/binding_context"
	htypes "github.com/flant/shell-operator/pkg/hook/types"
	objectpatch "github.com/flant/shell-operator/pkg/kube/object_patch"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// operator plays addon-operator's part against a real kube-apiserver: it
// builds each hook's snapshots by listing what its bindings select and
// running their jq filters, runs the built binary through the batch-hook
// runner, and executes the returned object patches with shell-operator's
// ObjectPatcher, as addon-operator does.
type operator struct {
	t       *testing.T
	bin     string
	cfg     *kind.BatchHookConfig
	client  *kubeclient.Client
	patcher *objectpatch.ObjectPatcher
}

func (o *operator) listFor(name string) []*unstructured.Unstructured {
	_, h := hookID(o.t, o.cfg, name)
	var objs []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, b := range h.Kubernetes {
		key := b.APIVersion + "/" + b.Kind
		if seen[key] {
			continue
		}
		seen[key] = true
		gvr, err := o.client.GroupVersionResource(b.APIVersion, b.Kind)
		require.NoError(o.t, err, "resolve %s", key)
		list, err := o.client.Dynamic().Resource(gvr).List(o.t.Context(), metav1.ListOptions{})
		require.NoError(o.t, err, "list %s", key)
		for i := range list.Items {
			objs = append(objs, &list.Items[i])
		}
	}
	return objs
}

func (o *operator) run(name string, bindingType htypes.BindingType, values utils.Values) (*kind.HookResult, utils.Values) {
	o.t.Helper()
	_, h := hookID(o.t, o.cfg, name)
	bc := bindingcontext.BindingContext{Binding: string(bindingType), Snapshots: snapshotsFor(o.t, h, o.listFor(name))}
	bc.Metadata.BindingType = bindingType
	bc.Metadata.IncludeAllSnapshots = true
	if bindingType == htypes.OnKubernetesEvent {
		bc.Binding, bc.Type, bc.Metadata.Group = "main", kemtypes.TypeSynchronization, "main"
	}
	res, newValues := run(o.t, o.bin, o.cfg, name, bc, values)
	require.NoError(o.t, o.patcher.ExecuteOperations(res.ObjectPatcherOperations), "apply the object patches of %s", name)
	return res, newValues
}

func (o *operator) starrocks(ns, name string) *v1alpha1.Starrocks {
	o.t.Helper()
	u, err := o.client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace(ns).Get(o.t.Context(), name, metav1.GetOptions{})
	require.NoError(o.t, err)
	var sr v1alpha1.Starrocks
	require.NoError(o.t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sr))
	return &sr
}

func findCondition(st v1alpha1.StarrocksStatus, typ string) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// entries are the entries the instances hook handed to the instanceobjects
// hook: the desired-state ConfigMaps in the module namespace, sorted by
// namespace and name.
func (o *operator) entries() []map[string]any {
	o.t.Helper()
	list, err := o.client.CoreV1().ConfigMaps(shared.ModuleNamespace).List(o.t.Context(), metav1.ListOptions{LabelSelector: shared.LabelState + "=" + shared.StateDesired})
	require.NoError(o.t, err)
	out := make([]map[string]any, 0, len(list.Items))
	for _, cm := range list.Items {
		var e map[string]any
		require.NoError(o.t, json.Unmarshal([]byte(cm.Data[shared.LastValidKey]), &e), "ConfigMap %s", cm.Name)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		return fmt.Sprint(out[i]["namespace"], "/", out[i]["name"]) < fmt.Sprint(out[j]["namespace"], "/", out[j]["name"])
	})
	return out
}

// setEntry replaces the desired state of an instance, as the instances hook
// would after a change of its spec.
func (o *operator) setEntry(e map[string]any) {
	o.t.Helper()
	data, err := json.Marshal(e)
	require.NoError(o.t, err)
	name := shared.DesiredConfigMapName(e["uid"].(string))
	cm, err := o.client.CoreV1().ConfigMaps(shared.ModuleNamespace).Get(o.t.Context(), name, metav1.GetOptions{})
	require.NoError(o.t, err)
	cm.Data[shared.LastValidKey] = string(data)
	_, err = o.client.CoreV1().ConfigMaps(shared.ModuleNamespace).Update(o.t.Context(), cm, metav1.UpdateOptions{})
	require.NoError(o.t, err)
}

var clientRuns atomic.Int64

// sharedControlPlane is the control plane (etcd and kube-apiserver with the
// module's and cert-manager's CRDs) the cluster tests share: started on
// first use, stopped by TestMain. A start costs about 3 CPU-seconds (2.4 of
// them kube-apiserver's with the CRDs) and a control plane keeps using CPU
// while it lives. The tests run one after another, each on a cluster reset
// to its start (resetCluster): the hooks read the whole cluster.
var sharedControlPlane struct {
	once sync.Once
	cp   *controlplane.ControlPlane
	err  error
}

// etcdMaxRequestBytes is the largest request etcd takes on the shared
// control plane: a third of its default (1.5 MiB), with room for the
// largest CRD (cert-manager's Issuers, about 150 KB stored). The tenants
// test fills a Starrocks to that edge with labels; filling it to the
// default (three times the labels, each write three times the size) took
// about 10 of that test's 16 CPU-seconds. The edge is the same to the
// module: etcd refuses its write.
const etcdMaxRequestBytes = 512 << 10

func TestMain(m *testing.M) {
	// kube-client makes two folders for every client's discovery cache
	// (os.MkdirTemp) and never removes them: the tests' own clients
	// (startOperator) keep them in a folder of this run, removed at its
	// end.
	tmp, err := os.MkdirTemp("", "managed-starrocks-hooks-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if cp := sharedControlPlane.cp; cp != nil {
		cp.Stop()
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// startOperator resets the shared control plane and starts what plays
// addon-operator against it: the built hooks binary launched with the
// cluster's KUBECONFIG (its own writes go there), its config as
// addon-operator reads it, and shell-operator's ObjectPatcher for the patch
// collector's operations.
func startOperator(t *testing.T) *operator {
	t.Helper()
	s := &sharedControlPlane
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		s.cp, s.err = controlplane.StartRetrying(ctx, controlplane.Options{
			CRDDirs:  []string{controlplane.ModuleCRDDir(), controlplane.CertManagerCRDDir()},
			ETCDArgs: []string{fmt.Sprintf("--max-request-bytes=%d", etcdMaxRequestBytes)},
		}, t.Logf)
	})
	require.NoError(t, s.err, "start the shared control plane")
	resetCluster(t, s.cp.RESTConfig())
	bin := buildHooks(t)
	launcher := launch(t, bin, s.cp.RESTConfig())
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", launcher)
	require.NoError(t, err)
	client := kubeclient.New()
	client.WithRestConfig(s.cp.RESTConfig())
	// kube-client registers its metrics in the global Prometheus registry:
	// a prefix of its own per run keeps -count=N from registering twice.
	client.WithMetricPrefix(fmt.Sprintf("hooks_cluster_test_%d_", clientRuns.Add(1)))
	require.NoError(t, client.Init(), "kube client")
	return &operator{t: t, bin: launcher, cfg: cfg, client: client, patcher: objectpatch.NewObjectPatcher(client, log.NewNop())}
}

// systemNamespaces are kube-apiserver's own: no test writes there.
var systemNamespaces = map[string]bool{metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true, corev1.NamespaceNodeLease: true}

// resetCluster takes a control plane back to what it was after its start,
// as the namespace controller (not run there) would empty a namespace:
// every object outside kube-apiserver's own namespaces goes, its
// finalizers first (no controller removes them), then those namespaces,
// and every StarrocksClass and StorageClass, the cluster-scoped kinds the
// tests make.
func resetCluster(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx := t.Context()
	// Listing every kind lists deprecated ones too (v1 Endpoints): no
	// warning about each.
	cfg.WarningHandler = rest.NoWarnings{}
	clientset, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	lists, err := clientset.Discovery().ServerPreferredNamespacedResources()
	require.NoError(t, err)
	resources := []schema.GroupVersionResource{v1alpha1.StarrocksClassGVR, storagev1.SchemeGroupVersion.WithResource("storageclasses")}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		require.NoError(t, err)
		for _, r := range l.APIResources {
			if slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "deletecollection") {
				resources = append(resources, gv.WithResource(r.Name))
			}
		}
	}
	now := int64(0)
	for _, gvr := range resources {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		require.NoError(t, err, "list %s", gvr)
		used := map[string]bool{} // namespaces ("" for cluster scope) with objects to delete
		for _, o := range list.Items {
			if systemNamespaces[o.GetNamespace()] {
				continue
			}
			used[o.GetNamespace()] = true
			if len(o.GetFinalizers()) > 0 {
				_, err := dyn.Resource(gvr).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				require.NoError(t, err, "remove the finalizers of %s %s/%s", gvr.Resource, o.GetNamespace(), o.GetName())
			}
		}
		for ns := range used {
			require.NoError(t, dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &now}, metav1.ListOptions{}), "delete %s in %q", gvr, ns)
		}
	}
	namespaces, err := clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, ns := range namespaces.Items {
		if systemNamespaces[ns.Name] {
			continue
		}
		// No namespace controller empties spec.finalizers: here it is done
		// first. A delete then marks an active namespace terminating, and
		// the next one (the first, for a namespace already terminating)
		// removes it.
		ns.Spec.Finalizers = nil
		_, err := clientset.CoreV1().Namespaces().Finalize(ctx, &ns, metav1.UpdateOptions{})
		require.NoError(t, err, "finalize namespace %s", ns.Name)
		for range 2 {
			if err := clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
				require.NoError(t, err, "delete namespace %s", ns.Name)
			}
		}
		_, err = clientset.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "namespace %s is gone: %v", ns.Name, err)
	}
	// kube-apiserver's admission refuses objects in a namespace its cache
	// still holds as terminating: wait until the watch cache (a list at
	// resourceVersion 0) no longer has the deleted ones.
	require.Eventually(t, func() bool {
		list, err := clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false
		}
		for _, ns := range list.Items {
			if !systemNamespaces[ns.Name] {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "the deleted namespaces leave kube-apiserver's cache")
}

func TestHooksAgainstARealAPIServer(t *testing.T) {
	op := startOperator(t)
	client := op.client
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, ns := range []string{"d8-managed-starrocks", "team", "evil"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	// The default class: created after the first Helm run, accepted by the CRD schema.
	op.run("defaultclass/hook", htypes.BindingType("afterHelm"), startValues())
	_, err := client.Dynamic().Resource(v1alpha1.StarrocksClassGVR).Get(ctx, "default", metav1.GetOptions{})
	require.NoError(t, err, "the default class exists")

	// An admin class and two instances of it.
	apply := func(obj string) {
		t.Helper()
		objs := parseObjects(t, obj)
		for _, u := range objs {
			gvr, err := client.GroupVersionResource(u.GetAPIVersion(), u.GetKind())
			require.NoError(t, err)
			// Namespace("") addresses a cluster-scoped resource.
			_, err = client.Dynamic().Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
			require.NoError(t, err, "create %s %s", u.GetKind(), u.GetName())
		}
	}
	apply(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata: {name: analytics}
spec:
  topology: {allowedTopologies: [Ignored], defaultTopology: Ignored}
  sizingPolicies: [{cores: {min: 1, max: 8}, memory: {min: 2Gi, max: 32Gi, step: 1Gi}, coreFractions: [50, 100]}]
  overridableConfiguration: [streamingLoadMaxMb, catalogTrashExpireSecond]
  validations:
    - rule: "configuration.streamingLoadMaxMb <= 4096"
      message: "Stream Load requests may be at most 4 GiB in the analytics class."
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: olap, namespace: team}
spec:
  starrocksClassName: analytics
  type: Cluster
  frontend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {replicas: 3, cpu: {cores: 4}, memory: {size: 8Gi}, persistentVolumeClaim: {size: 50Gi}}
  configuration: {streamingLoadMaxMb: 1024}
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: dev, namespace: team}
spec:
  starrocksClassName: default
  frontend: {cpu: {cores: 1}, memory: {size: 2Gi}, persistentVolumeClaim: {size: 5Gi}}
  backend: {cpu: {cores: 1}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 5Gi}}
`)

	_, values := op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	require.Len(t, op.entries(), 2)
	require.NoError(t, schemas(t).ValidateValues("managedStarrocks", values))
	op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())

	sr := op.starrocks("team", "olap")
	assert.Equal(t, v1alpha1.PhasePending, sr.Status.Phase)
	assert.EqualValues(t, 1, sr.Status.ObservedGeneration)
	assert.Equal(t, "d8ms-sr-olap-credentials", sr.Status.CredentialsSecretName)
	assert.Equal(t, "d8ms-sr-olap.team.svc.k8s.example:9030", sr.Status.Endpoints.Query)
	assert.Equal(t, metav1.ConditionTrue, findCondition(sr.Status, v1alpha1.ConditionConfigurationValid).Status)
	assert.EqualValues(t, 3, sr.Status.Frontend.Replicas)
	assert.EqualValues(t, 3, sr.Status.Backend.Replicas)

	secret, err := client.CoreV1().Secrets("team").Get(ctx, sr.Status.CredentialsSecretName, metav1.GetOptions{})
	require.NoError(t, err, "the credentials Secret exists")
	assert.Equal(t, "admin", string(secret.Data["username"]), "the team's account, never root")
	password := string(secret.Data["password"])
	assert.Len(t, password, 26)
	assert.Empty(t, secret.OwnerReferences, "held for the FE volume (none yet): not collected with the instance")
	agent, err := client.CoreV1().Secrets("team").Get(ctx, "d8ms-sr-olap-agent-credentials", metav1.GetOptions{})
	require.NoError(t, err, "the module's accounts Secret exists")
	assert.Equal(t, "d8_agent", string(agent.Data["username"]))
	assert.Len(t, agent.Data["root-password"], 26)
	_, err = client.CoreV1().Secrets("team").Get(ctx, "d8ms-sr-olap-keystore", metav1.GetOptions{})
	require.NoError(t, err, "the keystore password Secret exists")
	memory, err := client.CoreV1().ConfigMaps("d8-managed-starrocks").Get(ctx, "last-valid-"+string(sr.UID), metav1.GetOptions{})
	require.NoError(t, err, "the module's memory is in the module namespace, named by the UID")
	assert.Empty(t, memory.OwnerReferences)
	statusJSON, _ := json.Marshal(sr.Status)
	assert.NotContains(t, string(statusJSON), password, "the password is not in status")
	valuesJSON, _ := json.Marshal(values)
	assert.NotContains(t, string(valuesJSON), password, "nor in values")

	// The user breaks the class's CEL rule. The hooks restart with empty
	// values: only what they wrote into the cluster carries the last valid state.
	u, err := client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace("team").Get(ctx, "olap", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(8192), "spec", "configuration", "streamingLoadMaxMb"))
	_, err = client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace("team").Update(ctx, u, metav1.UpdateOptions{})
	require.NoError(t, err)

	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	entries := op.entries()
	require.Len(t, entries, 2)
	var olap map[string]any
	for _, e := range entries {
		if e["name"] == "olap" {
			olap = e
		}
	}
	require.NotNil(t, olap)
	assert.EqualValues(t, 1, olap["generation"], "the last valid generation stays rendered")
	assert.EqualValues(t, 1024, olap["configuration"].(map[string]any)["streamingLoadMaxMb"])

	sr = op.starrocks("team", "olap")
	assert.EqualValues(t, 2, sr.Status.ObservedGeneration)
	assert.EqualValues(t, 1, sr.Status.LastValidGeneration)
	valid := findCondition(sr.Status, v1alpha1.ConditionConfigurationValid)
	assert.Equal(t, metav1.ConditionFalse, valid.Status)
	assert.Equal(t, "ClassRuleViolated", valid.Reason)
	assert.Equal(t, `The spec breaks a class rule: spec.configuration.streamingLoadMaxMb: Stream Load requests may be at most 4 GiB in the analytics class. (value configuration.streamingLoadMaxMb=8192; class "analytics" validations[0]: configuration.streamingLoadMaxMb <= 4096).`, valid.Message)
	kept := findCondition(sr.Status, v1alpha1.ConditionLastValidConfigurationApplied)
	assert.Equal(t, metav1.ConditionTrue, kept.Status)
	assert.Equal(t, "LastValidConfigurationKept", kept.Reason)
	assert.EqualValues(t, 1024, *sr.Status.Configuration.StreamingLoadMaxMb, "status shows the configuration in effect")

	// `kubectl describe starrocks olap` shows what happened, as Events the
	// apiserver found by the object's kind, name, namespace and UID.
	describeEvents := func() map[string]corev1.Event {
		t.Helper()
		list, err := client.CoreV1().Events("team").List(ctx, metav1.ListOptions{FieldSelector: fmt.Sprintf(
			"involvedObject.kind=Starrocks,involvedObject.name=olap,involvedObject.namespace=team,involvedObject.uid=%s", sr.UID)})
		require.NoError(t, err)
		out := map[string]corev1.Event{}
		for _, e := range list.Items {
			_, dup := out[e.Reason]
			assert.False(t, dup, "one Event per transition: %s", e.Reason)
			out[e.Reason] = e
		}
		return out
	}
	events := describeEvents()
	require.Len(t, events, 2, "the violation and the kept state")
	assert.Equal(t, corev1.EventTypeWarning, events["ClassRuleViolated"].Type)
	assert.Equal(t, valid.Message, events["ClassRuleViolated"].Message, "the Event names the field and the rule")
	assert.Contains(t, events["LastValidConfigurationKept"].Message, "the last valid generation 1 stays in effect")
	assert.Equal(t, "managed-starrocks", events["ClassRuleViolated"].Source.Component)
	assert.EqualValues(t, 1, events["ClassRuleViolated"].Count)

	// A tenant forges the module's memory (in its own namespace and in
	// another) and puts a pod with a malformed agent status in another
	// namespace: nothing changes, every instance is still reconciled.
	forged := `{"name":"olap","namespace":"team","uid":"` + string(sr.UID) + `","generation":1,"backend":{"replicas":50}}`
	for _, ns := range []string{"team", "evil"} {
		for _, name := range []string{"last-valid-" + string(sr.UID), "d8ms-sr-olap-last-valid"} {
			_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"managed-services.deckhouse.io/managed-service-type": "starrocks", "managed-starrocks.deckhouse.io/state": "last-valid"}},
				Data:       map[string]string{"instance.json": forged},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
	for _, bad := range []string{`{"tls":{"ready":"yes"}}`, `{"membership":{"draining":[{"host":"x","tabletNum":1.5}]}}`} {
		_, err := client.CoreV1().Pods("evil").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "d8ms-sr-olap-", Labels: map[string]string{"managed-services.deckhouse.io/managed-service-type": "starrocks", "app.kubernetes.io/instance": "olap", "app.kubernetes.io/component": "frontend"},
				Annotations: map[string]string{"managed-starrocks.deckhouse.io/agent-status": bad}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	// Nothing changed since: no status patch, no rewrite, no new password.
	// The status is the hook's own write: the Starrocks' resourceVersion
	// says whether it wrote one.
	versionBefore := op.starrocks("team", "olap").ResourceVersion
	res, attacked := op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	assert.Equal(t, values, attacked, "forged memory and malformed pods elsewhere change no values")
	assert.Empty(t, describe(res.ObjectPatcherOperations), "a reconcile over an unchanged cluster writes nothing")
	assert.Equal(t, versionBefore, op.starrocks("team", "olap").ResourceVersion, "no status patch over an unchanged cluster")
	res, _ = op.run("credentials/hook", htypes.OnKubernetesEvent, startValues())
	assert.Empty(t, describe(res.ObjectPatcherOperations))
	secret, err = client.CoreV1().Secrets("team").Get(ctx, "d8ms-sr-olap-credentials", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, password, string(secret.Data["password"]), "the password is never rotated")
	assert.Equal(t, events, describeEvents(), "no Event again without a transition")

	// Where the apiserver would refuse an Event (a terminating namespace, a
	// ResourceQuota counting Events), none is written and the run succeeds.
	// The instance of the terminating namespace is ending: no status
	// either; the other one's status still tells.
	for _, ns := range []string{"leaving", "quota"} {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
		apply(fmt.Sprintf(`
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: huge, namespace: %s}
spec:
  starrocksClassName: analytics
  frontend: {cpu: {cores: 16}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {cpu: {cores: 1}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 5Gi}}
`, ns))
	}
	_, err = client.CoreV1().ResourceQuotas("quota").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "events"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/events": resource.MustParse("0")}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// No namespace controller runs here: the namespace stays Terminating.
	require.NoError(t, client.CoreV1().Namespaces().Delete(ctx, "leaving", metav1.DeleteOptions{}))
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	assert.Empty(t, op.starrocks("leaving", "huge").Status.Conditions, "an ending instance gets no status")
	assert.Equal(t, "ClassRuleViolated", findCondition(op.starrocks("quota", "huge").Status, v1alpha1.ConditionConfigurationValid).Reason)
	for _, ns := range []string{"leaving", "quota"} {
		list, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, list.Items, ns)
	}

	// A deleted instance's memory is deleted by the hook: no ownerReference
	// can reach across namespaces.
	dev := op.starrocks("team", "dev")
	require.NoError(t, client.Dynamic().Resource(v1alpha1.StarrocksGVR).Namespace("team").Delete(ctx, "dev", metav1.DeleteOptions{}))
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	_, err = client.CoreV1().ConfigMaps("d8-managed-starrocks").Get(ctx, "last-valid-"+string(dev.UID), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "memory of a gone Starrocks is deleted: %v", err)
	_, err = client.CoreV1().ConfigMaps("team").Get(ctx, "last-valid-"+string(sr.UID), metav1.GetOptions{})
	assert.NoError(t, err, "the hook never deletes in a tenant namespace")

	// The admin deletes the default class; after the next Helm run it stays deleted.
	require.NoError(t, client.Dynamic().Resource(v1alpha1.StarrocksClassGVR).Delete(ctx, "default", metav1.DeleteOptions{}))
	op.run("defaultclass/hook", htypes.BindingType("afterHelm"), startValues())
	_, err = client.Dynamic().Resource(v1alpha1.StarrocksClassGVR).Get(ctx, "default", metav1.GetOptions{})
	assert.Error(t, err, "the default class does not come back")

	// A tenant writes a "reason" the CRD would refuse in a condition on a
	// real FE pod of its instance: the run still succeeds (a refused status
	// patch would fail it for every instance) and only that instance says
	// its agent status is unreadable.
	replicas := int32(1)
	labels := map[string]string{"managed-services.deckhouse.io/managed-service-type": "starrocks", "app.kubernetes.io/instance": "olap", "app.kubernetes.io/component": "frontend"}
	sts, err := client.AppsV1().StatefulSets("team").Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-olap", Labels: map[string]string{"heritage": "deckhouse", "managed-services.deckhouse.io/managed-service-type": "starrocks",
			"app.kubernetes.io/instance": "olap", "app.kubernetes.io/component": "frontend"}},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	controller := true
	_, err = client.CoreV1().Pods("team").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-olap-0", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: &controller}},
			Annotations:     map[string]string{"managed-starrocks.deckhouse.io/agent-status": `{"accounts":{"ready":false,"reason":"root refused!","message":"m"}}`}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	op.run("instances/hook", htypes.OnKubernetesEvent, startValues())
	accounts := findCondition(op.starrocks("team", "olap").Status, "AccountsReady")
	assert.Equal(t, "AgentStatusUnreadable", accounts.Reason)
	assert.Contains(t, accounts.Message, "accounts.reason is not a CamelCase word")
}

func describe(ops []sdkpkg.PatchCollectorOperation) []string {
	out := make([]string, 0, len(ops))
	for _, o := range ops {
		out = append(out, fmt.Sprint(o.Description()))
	}
	return out
}
