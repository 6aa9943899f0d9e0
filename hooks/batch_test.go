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
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deckhouse/deckhouse/pkg/log"
	sdkpkg "github.com/deckhouse/module-sdk/pkg"
	sdkhook "github.com/deckhouse/module-sdk/pkg/hook"
	"github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	"github.com/flant/addon-operator/pkg/utils"
	"github.com/flant/addon-operator/pkg/values/validation"
	bindingcontext "github.com/flant/shell-operator/pkg/hook/binding_context"
	htypes "github.com/flant/shell-operator/pkg/hook/types"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kubefake "github.com/flant/kube-client/fake"
	objectpatch "github.com/flant/shell-operator/pkg/kube/object_patch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/gobuild"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// The cluster as the hooks see it: a class, a valid and a brand-new invalid
// instance, a running StatefulSet of the valid one and FE pods whose agent
// has not reported or wrote garbage (the jq filter must survive both).
const clusterYAML = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata: {name: default, uid: class-uid, generation: 1, resourceVersion: "1"}
spec:
  topology: {allowedTopologies: [Ignored, TransZonal], defaultTopology: Ignored, allowedZones: [a, b]}
  sizingPolicies:
    - {cores: {min: 1, max: 4}, memory: {min: 2Gi, max: 16Gi, step: 1Gi}, coreFractions: [50, 100]}
  overridableConfiguration: [streamingLoadMaxMb]
  configuration: {catalogTrashExpireSecond: 3600}
  nodeSelector: {node-role.deckhouse.io/starrocks: ""}
  tolerations: [{key: dedicated, operator: Equal, value: starrocks, effect: NoSchedule}]
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]}]
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: olap, namespace: team, uid: uid-olap, generation: 2}
spec:
  starrocksClassName: default
  type: Cluster
  frontend: {cpu: {cores: 2, coreFraction: 50}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {replicas: 3, cpu: {cores: 4}, memory: {size: 8Gi}, persistentVolumeClaim: {size: 100Gi, storageClassName: fast}}
  cluster: {topology: TransZonal}
  configuration: {streamingLoadMaxMb: 2048}
  tls: {requireSecureTransport: true}
status: {phase: Provisioning}
---
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata: {name: toobig, namespace: team, uid: uid-toobig, generation: 1}
spec:
  starrocksClassName: default
  frontend: {cpu: {cores: 64}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
  backend: {cpu: {cores: 2}, memory: {size: 4Gi}, persistentVolumeClaim: {size: 10Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d8ms-sr-olap
  namespace: team
  labels: {heritage: deckhouse, managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
spec: {replicas: 3}
status: {readyReplicas: 3}
---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-olap-0
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
  annotations: {managed-starrocks.deckhouse.io/agent-status: "not json"}
---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-olap-1
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: unrelated
  namespace: team
spec: {replicas: 1}
`

// attackYAML is what a tenant with edit rights in namespace evil (or team)
// can write: FE look-alike pods whose agent status has fields of the wrong
// type, and copies of the module's memory with a forged entry for the
// invalid instance (64 cores) outside the module namespace.
const attackYAML = `
---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-olap-0
  namespace: evil
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: frontend}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: d8ms-sr-olap, uid: x, controller: true}]
  annotations: {managed-starrocks.deckhouse.io/agent-status: '{"tls":{"ready":"yes"},"accounts":{"ready":true}}'}
---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-other-0
  namespace: evil
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: other, app.kubernetes.io/component: frontend}
  annotations: {managed-starrocks.deckhouse.io/agent-status: '{"membership":{"draining":[{"host":"x","tabletNum":1.5}]}}'}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: last-valid-uid-toobig
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: last-valid}
data:
  instance.json: '{"name":"toobig","namespace":"team","uid":"uid-toobig","backend":{"replicas":50}}'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: d8ms-sr-toobig-last-valid
  namespace: evil
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, managed-starrocks.deckhouse.io/state: last-valid}
data:
  instance.json: '{"name":"toobig","namespace":"team","uid":"uid-toobig","backend":{"replicas":50}}'
`

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildHooks builds the hooks binary exactly as the module ships it, once
// per test process, into the repository's bin/test (dev/gobuild: linked
// only when its code changed; a link costs about 7 CPU-seconds).
func buildHooks(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		dir, err := filepath.Abs(filepath.Join("..", "bin", "test"))
		if err != nil {
			buildErr = err
			return
		}
		builtBin, buildErr = filepath.Join(dir, "hooks"), gobuild.Build(ctx, dir, "hooks", nil, "./hooks")
	})
	require.NoError(t, buildErr)
	return builtBin
}

// launch is the hooks binary launched with a KUBECONFIG for cfg
// (kubeutil.HooksLauncher): the hooks write into tenant namespaces with
// their own client.
func launch(t *testing.T, bin string, cfg *rest.Config) string {
	t.Helper()
	exe, err := kubeutil.HooksLauncher(t.TempDir(), bin, cfg)
	require.NoError(t, err)
	return exe
}

// noAPIServer is a cluster address where nothing listens: every write the
// hooks make themselves fails as a refusal would.
var noAPIServer = &rest.Config{Host: "https://127.0.0.1:1"}

func hookID(t *testing.T, cfg *kind.BatchHookConfig, name string) (string, *sdkhook.HookConfig) {
	t.Helper()
	for id, h := range cfg.Hooks {
		if h.Metadata.Name == name {
			return id, h
		}
	}
	t.Fatalf("hook %s is not in the binary's config", name)
	return "", nil
}

// snapshotsFor does what shell-operator does for a group of bindings: keep
// the objects each binding selects with its jq filter result (the module
// loop's FilterSnapshot, on the same gojq filter shell-operator uses).
func snapshotsFor(t *testing.T, h *sdkhook.HookConfig, objects []*unstructured.Unstructured) map[string][]kemtypes.ObjectAndFilterResult {
	t.Helper()
	snaps := map[string][]kemtypes.ObjectAndFilterResult{}
	for _, b := range h.Kubernetes {
		snap, err := moduleloop.FilterSnapshot(b, objects)
		require.NoError(t, err, "snapshot of binding %s", b.Name)
		snaps[b.Name] = snap
	}
	return snaps
}

func parseObjects(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(docs, "\n---\n") {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

func schemas(t *testing.T) *validation.SchemaStorage {
	t.Helper()
	cfg, err := os.ReadFile("../openapi/config-values.yaml")
	require.NoError(t, err)
	vals, err := os.ReadFile("../openapi/values.yaml")
	require.NoError(t, err)
	s, err := validation.NewSchemaStorage(cfg, vals)
	require.NoError(t, err)
	return s
}

func startValues() utils.Values {
	return utils.Values{
		"global":           map[string]any{"discovery": map[string]any{"clusterDomain": "k8s.example"}},
		"managedStarrocks": map[string]any{"internal": map[string]any{"webhookCert": map[string]any{}}},
	}
}

// run executes one hook of the built binary through addon-operator's own
// batch-hook runner and returns the values after applying its patch.
func run(t *testing.T, bin string, cfg *kind.BatchHookConfig, name string, bc bindingcontext.BindingContext, values utils.Values) (*kind.HookResult, utils.Values) {
	t.Helper()
	id, _ := hookID(t, cfg, name)
	hook := kind.NewBatchHook(name, bin, "managed-starrocks", id, false, false, log.NewNop())
	hook.WithTmpDir(t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := hook.Execute(ctx, "v1", []bindingcontext.BindingContext{bc}, "managedStarrocks", utils.Values{}, values, map[string]string{})
	require.NoError(t, err, "execute %s", name)
	patch := res.Patches[utils.MemoryValuesPatch]
	if patch == nil {
		return res, values // the hook did not touch values
	}
	newValues, _, err := utils.ApplyValuesPatch(values, *patch, utils.Strict)
	require.NoError(t, err, "the values patch applies")
	return res, newValues
}

func TestBuiltBinaryRunsThroughAddonOperatorsBatchHookRunner(t *testing.T) {
	built := buildHooks(t)
	// No API server: the hooks' own writes (status, Secrets, Events) fail
	// as refused ones, which must never fail a run.
	bin := launch(t, built, noAPIServer)
	cfg, err := kind.GetBatchHookConfig("managed-starrocks", bin)
	require.NoError(t, err, "addon-operator reads `hook config`")
	storage := schemas(t)

	t.Run("instances: values validate against openapi/values.yaml", func(t *testing.T) {
		_, h := hookID(t, cfg, "instances/hook")
		bc := bindingcontext.BindingContext{Binding: "starrocks", Type: kemtypes.TypeSynchronization, Snapshots: snapshotsFor(t, h, parseObjects(t, clusterYAML))}
		bc.Metadata.BindingType = htypes.OnKubernetesEvent
		bc.Metadata.Group = "main"
		bc.Metadata.IncludeAllSnapshots = true

		res, values := run(t, bin, cfg, "instances/hook", bc, startValues())
		require.NoError(t, storage.ValidateValues("managedStarrocks", values), "the values the hooks produce follow openapi/values.yaml")
		_, hasInstances := values["managedStarrocks"].(map[string]any)["internal"].(map[string]any)["instances"]
		assert.False(t, hasInstances, "no instance reaches the module's values (they are stored with its Helm release)")

		instances := desiredEntries(t, res)
		require.Len(t, instances, 1, "the brand-new invalid instance gets no entry")
		olap := instances[0]
		assert.Equal(t, "olap", olap["name"])
		assert.Equal(t, "TransZonal", olap["topology"])
		assert.Equal(t, "d8ms-sr-olap.team.svc.k8s.example", olap["agentConfig"].(map[string]any)["queryHost"])

		var descs []string
		for _, op := range res.ObjectPatcherOperations {
			descs = append(descs, op.Description())
		}
		joined := strings.Join(descs, "\n")
		assert.Contains(t, joined, "ConfigMap/d8-managed-starrocks/last-valid-uid-olap", "the last valid state is persisted in the module namespace")
		assert.NotContains(t, joined, "Starrocks/team/", "the status is the hook's own write (kubewrite), never the patch collector's")

		metrics := map[string]bool{}
		for _, m := range res.Metrics {
			metrics[m.Name] = true
		}
		assert.True(t, metrics["d8_managed_starrocks_instances"], "metrics: %+v", res.Metrics)
		assert.True(t, metrics["d8_managed_starrocks_instance_configuration_valid"])
	})

	t.Run("instances: a malformed pod and forged memory elsewhere change no values", func(t *testing.T) {
		_, h := hookID(t, cfg, "instances/hook")
		runOn := func(objects string) []map[string]any {
			bc := bindingcontext.BindingContext{Binding: "starrocks", Type: kemtypes.TypeSynchronization, Snapshots: snapshotsFor(t, h, parseObjects(t, objects))}
			bc.Metadata.BindingType = htypes.OnKubernetesEvent
			bc.Metadata.Group = "main"
			bc.Metadata.IncludeAllSnapshots = true
			res, values := run(t, bin, cfg, "instances/hook", bc, startValues())
			require.NoError(t, storage.ValidateValues("managedStarrocks", values))
			return desiredEntries(t, res)
		}
		clean := runOn(clusterYAML)
		attacked := runOn(clusterYAML + attackYAML)
		assert.Equal(t, clean, attacked, "every instance is reconciled with the desired state it has without the tenant's objects")
		require.Len(t, attacked, 1, "the invalid instance gets no forged entry")
	})

	t.Run("webhookcert: a serving certificate lands in values", func(t *testing.T) {
		_, h := hookID(t, cfg, "webhookcert/hook")
		bc := bindingcontext.BindingContext{Binding: "beforeHelm", Snapshots: snapshotsFor(t, h, nil)}
		bc.Metadata.BindingType = htypes.BindingType("beforeHelm")
		bc.Metadata.IncludeAllSnapshots = true
		_, values := run(t, bin, cfg, "webhookcert/hook", bc, startValues())
		require.NoError(t, storage.ValidateValues("managedStarrocks", values))
		cert := values["managedStarrocks"].(map[string]any)["internal"].(map[string]any)["webhookCert"].(map[string]any)
		for _, k := range []string{"ca", "crt", "key"} {
			assert.Contains(t, cert[k], "-----BEGIN", "webhookCert.%s is PEM", k)
		}
	})

	t.Run("instanceobjects/inputs: the after-Helm run writes only the render inputs' ConfigMap", func(t *testing.T) {
		_, h := hookID(t, cfg, "instanceobjects/inputs")
		// Whatever the cluster holds (tenants' instances, forged memory,
		// malformed pods): the run sees only its one ConfigMap.
		bc := bindingcontext.BindingContext{Binding: "afterHelm", Snapshots: snapshotsFor(t, h, parseObjects(t, clusterYAML+attackYAML))}
		bc.Metadata.BindingType = htypes.BindingType("afterHelm")
		bc.Metadata.IncludeAllSnapshots = true
		res, _ := run(t, bin, cfg, "instanceobjects/inputs", bc, withImages(startValues()))
		ops := describe(res.ObjectPatcherOperations)
		require.Len(t, ops, 1, "%v", ops)
		assert.Contains(t, ops[0], "managed-starrocks-render-inputs")
		assert.Contains(t, ops[0], "d8-managed-starrocks")
	})

	t.Run("every hook is listed with its bindings", func(t *testing.T) {
		var names []string
		for _, h := range cfg.Hooks {
			names = append(names, h.Metadata.Name)
		}
		assert.ElementsMatch(t, []string{"credentials/hook", "defaultclass/hook", "instanceobjects/hook", "instanceobjects/inputs", "instances/hook", "webhookcert/hook"}, names, fmt.Sprint(names))
	})
}

// desiredEntries executes a run's object patches of ConfigMaps in the module
// namespace with shell-operator's ObjectPatcher on its fake cluster, as
// addon-operator executes them, and returns the entries the run handed to
// the instanceobjects hook: the desired-state ConfigMaps it wrote, sorted by
// name. (The other patches, the class statuses, name objects this fake
// cluster does not hold.)
func desiredEntries(t *testing.T, res *kind.HookResult) []map[string]any {
	t.Helper()
	cluster := kubefake.NewFakeCluster(kubefake.ClusterVersionV136)
	cluster.CreateNs(shared.ModuleNamespace)
	patcher := objectpatch.NewObjectPatcher(cluster.Client, log.NewNop())
	var ops []sdkpkg.PatchCollectorOperation
	for _, op := range res.ObjectPatcherOperations {
		if strings.Contains(op.Description(), "/ConfigMap/"+shared.ModuleNamespace+"/") {
			ops = append(ops, op)
		}
	}
	require.NotEmpty(t, ops, "the run writes into the module namespace")
	require.NoError(t, patcher.ExecuteOperations(ops), "the run's object patches apply")
	list, err := cluster.Client.Dynamic().Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(shared.ModuleNamespace).
		List(context.Background(), metav1.ListOptions{LabelSelector: shared.LabelState + "=" + shared.StateDesired})
	require.NoError(t, err)
	var out []map[string]any
	for _, cm := range list.Items {
		data, _, _ := unstructured.NestedString(cm.Object, "data", shared.LastValidKey)
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &e), "ConfigMap %s", cm.GetName())
		out = append(out, e)
	}
	return out
}
