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

// Package e2e_test runs the whole module on a local control plane the way
// Deckhouse runs it (dev/moduleloop): real kube-apiserver, etcd and
// kube-controller-manager, the real hooks binary through addon-operator's
// batch-hook runner, the chart through the Helm engine, the real webhook
// server called by the apiserver over TLS. There is no kubelet: tests play
// its part by writing Pod and Certificate status.
package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
)

var binaries struct {
	once           sync.Once
	hooks, webhook string
	err            error
}

func buildBinaries(t testing.TB) (hooks, webhook string) {
	t.Helper()
	binaries.once.Do(func() {
		dir, err := os.MkdirTemp("", "managed-starrocks-e2e-bin-")
		if err != nil {
			binaries.err = err
			return
		}
		ctx := context.Background()
		if binaries.hooks, binaries.err = moduleloop.BuildBinary(ctx, moduleloop.HooksPackage, dir); binaries.err != nil {
			return
		}
		binaries.webhook, binaries.err = moduleloop.BuildBinary(ctx, moduleloop.WebhookPackage, dir)
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return binaries.hooks, binaries.webhook
}

// env is one cluster with the module running on it.
type env struct {
	t        testing.TB
	cp       *controlplane.ControlPlane
	dyn      dynamic.Interface
	kube     kubernetes.Interface
	client   *kubeutil.Client
	webhook  *moduleloop.Webhook
	loop     *moduleloop.Loop
	stopLoop func()
	passErr  chan error
	settings map[string]any
	// moduleConfig is the identity the module runs as (Deckhouse's
	// service account: moduleloop.Identities).
	moduleConfig *rest.Config
	// globals replace chartrender.DefaultGlobals when set (a module
	// release with other images: rollout_test.go).
	globals map[string]any
	// moduleLogs keeps the loop's and the hooks' logs for tests that
	// search them (no secret in any log: backups_test.go).
	moduleLogs lockedLog
}

type envOptions struct {
	settings  map[string]any
	noWebhook bool
}

func newEnv(t testing.TB, opts envOptions) *env {
	t.Helper()
	_, webhookBin := buildBinaries(t)
	crdDirs, err := moduleloop.CRDDirs()
	if err != nil {
		t.Fatal(err)
	}
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: crdDirs, ControllerManager: true})
	ctx := context.Background()
	if err := moduleloop.PrepareCluster(ctx, cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cp: cp, settings: opts.settings}
	if e.dyn, err = dynamic.NewForConfig(cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if e.kube, err = kubernetes.NewForConfig(cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if e.client, err = kubeutil.NewClient(cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	var webhookKubeconfig string
	if e.moduleConfig, webhookKubeconfig, err = moduleloop.Identities(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if !opts.noWebhook {
		if e.webhook, err = moduleloop.PrepareWebhook(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.webhook.Stop)
	}
	e.startModule()
	t.Cleanup(func() { e.stopModule() })
	if e.webhook != nil {
		// Its service account and RBAC come with the module's release.
		if err := e.webhook.Start(ctx, webhookBin, webhookKubeconfig); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// startModule starts the module loop (again), as Deckhouse starts a module.
func (e *env) startModule() {
	e.t.Helper()
	hooksBin, _ := buildBinaries(e.t)
	var wh *moduleloop.WebhookEndpoint
	if e.webhook != nil {
		wh = &e.webhook.Endpoint
	}
	loop, err := moduleloop.New(moduleloop.Options{
		RESTConfig:  rest.CopyConfig(e.moduleConfig),
		HooksBinary: hooksBin,
		Settings:    e.settings,
		Globals:     e.globals,
		Webhook:     wh,
		Log:         io.MultiWriter(testLog{e.t}, &e.moduleLogs),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.loop = loop
	e.passErr = make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = loop.Run(ctx, func(_ *moduleloop.Result, err error) {
			if err != nil {
				select {
				case e.passErr <- err:
				default:
				}
			}
		})
	}()
	e.stopLoop = func() { cancel(); <-done; loop.Close() }
	// The first pass installs the module's own objects, webhook
	// configurations included; wait for it so admission is on from here.
	e.eventually("the module's first pass", func() (bool, string) {
		_, err := e.kube.CoreV1().ConfigMaps("d8-managed-starrocks").Get(context.Background(), "managed-starrocks-localrun-release", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

func (e *env) stopModule() {
	if e.stopLoop != nil {
		e.stopLoop()
		e.stopLoop = nil
	}
}

// lockedLog is a log writers append to from several goroutines.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// testLog sends the module's logs to the test log, shown on failure or -v.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// eventually polls cond until it holds, failing the test after 90 seconds
// with the last explanation and the last failed module pass.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	e.eventuallyWithin(90*time.Second, what, cond)
}

func (e *env) eventuallyWithin(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, why = cond(); ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var lastPass error
	for {
		select {
		case err := <-e.passErr:
			lastPass = err
			continue
		default:
		}
		break
	}
	e.t.Fatalf("%s: not reached in %s: %s (last failed module pass: %v)", what, timeout, why, lastPass)
}

func (e *env) apply(doc string) *unstructured.Unstructured {
	e.t.Helper()
	obj, err := e.tryApply(doc)
	if err != nil {
		e.t.Fatalf("apply: %v\n%s", err, doc)
	}
	return obj
}

func (e *env) tryApply(doc string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		e.t.Fatalf("parse: %v", err)
	}
	ctx := context.Background()
	if ns := obj.GetNamespace(); ns != "" {
		if err := kubeutil.EnsureNamespace(ctx, e.kube, ns, nil); err != nil {
			return nil, err
		}
	}
	return e.client.Apply(ctx, obj, "e2e-user")
}

func (e *env) resource(kind, namespace string) dynamic.ResourceInterface {
	var gvr schema.GroupVersionResource
	switch kind {
	case "Starrocks":
		gvr = v1alpha1.StarrocksGVR
	case "StarrocksClass":
		return e.dyn.Resource(v1alpha1.StarrocksClassGVR)
	case "StatefulSet":
		gvr = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	case "Certificate":
		gvr = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	case "Service":
		gvr = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	case "ConfigMap":
		gvr = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	case "Secret":
		gvr = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	case "PodDisruptionBudget":
		gvr = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	case "NetworkPolicy":
		gvr = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	default:
		e.t.Fatalf("resource: unknown kind %s", kind)
	}
	return e.dyn.Resource(gvr).Namespace(namespace)
}

func (e *env) get(kind, namespace, name string) (*unstructured.Unstructured, error) {
	return e.resource(kind, namespace).Get(context.Background(), name, metav1.GetOptions{})
}

// condition returns status, reason and message of a Starrocks condition.
func (e *env) condition(namespace, name, typ string) (status, reason, message string) {
	sr, err := e.get("Starrocks", namespace, name)
	if err != nil {
		return "", "", err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(sr.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == typ {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
		}
	}
	return "", "", "no " + typ + " condition yet"
}

func (e *env) waitCondition(namespace, name, typ, want string) (reason, message string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%s/%s %s=%s", namespace, name, typ, want), func() (bool, string) {
		var status string
		status, reason, message = e.condition(namespace, name, typ)
		return status == want, fmt.Sprintf("%s is %q (%s: %s)", typ, status, reason, message)
	})
	return reason, message
}

// podTemplate returns a StatefulSet's pod template, to compare across changes.
func (e *env) podTemplate(namespace, name string) string {
	e.t.Helper()
	sts, err := e.get("StatefulSet", namespace, name)
	if err != nil {
		e.t.Fatal(err)
	}
	tmpl, _, _ := unstructured.NestedMap(sts.Object, "spec", "template")
	data, _ := yaml.Marshal(tmpl)
	return string(data)
}

func (e *env) configMapData(namespace, name string) map[string]any {
	e.t.Helper()
	cm, err := e.get("ConfigMap", namespace, name)
	if err != nil {
		e.t.Fatal(err)
	}
	data, _, _ := unstructured.NestedMap(cm.Object, "data")
	return data
}

func examplePath(name string) string {
	return filepath.Join(controlplane.RepoRoot(), "docs", "examples", name)
}

// hasValuesEntry says whether the instances hook handed on a desired state
// for the instance (a ConfigMap desired-<uid> in the module namespace): what
// the instanceobjects hook renders objects from.
func (e *env) hasValuesEntry(namespace, name string) bool {
	list, err := e.kube.CoreV1().ConfigMaps("d8-managed-starrocks").List(context.Background(), metav1.ListOptions{LabelSelector: "managed-starrocks.deckhouse.io/state=desired"})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, cm := range list.Items {
		var entry struct{ Namespace, Name string }
		if json.Unmarshal([]byte(cm.Data["instance.json"]), &entry) == nil && entry.Namespace == namespace && entry.Name == name {
			return true
		}
	}
	return false
}
