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
// Deckhouse runs it: real kube-apiserver, etcd and kube-controller-manager,
// the real addon-operator (dev/addonoperator) running the real hooks binary
// in its queues and installing the chart as its Helm release, the real
// webhook server (a local process) called by the apiserver over TLS. There is no kubelet: tests play
// its part by writing Pod and Certificate status.
//
// Such a cluster costs some 15 CPU-seconds (most of it its start), so the
// tests that only work in namespaces of their own share one
// (sharedEnv: withWebhook, or withoutWebhook for those that store specs
// the webhook would refuse), started by the first of them and stopped by
// TestMain. A test that changes what others would see (the module's
// settings, globals, modules or error counters, a restart or disable of
// the module, the webhook stopped or bypassed, a cluster-wide object) or that
// measures gets a cluster of its own (newEnv) and says why beside it. Such
// tests that do not measure run one after another as the steps of one test
// on one cluster (TestModuleEndToEnd, TestSettingsThenMaxCountThenDisable:
// env.step), each in namespaces of its own, counting the module's failed
// runs from its own start, and those that leave the cluster changed for
// good (the webhook stopped, the module disabled) last.
package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
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
	"github.com/deckhouse/managed-starrocks/dev/addonoperator"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
)

// binaries are the repository's binaries the tests run, each built once a
// run (binary).
var binaries struct {
	mu    sync.Mutex
	dir   string
	built map[string]builtBinary // by package
}

type builtBinary struct {
	path string
	err  error
}

// TestMain stops the shared environments once every test ended (their
// module logs printed when a test failed: a private env's go to its test's
// log instead) and removes the binaries the tests built (118 MB a run).
func TestMain(m *testing.M) {
	// This process (the fake FEs, the clients, the kubelet's part) is
	// measured by no test: it collects as the control plane's servers do.
	gogc, _ := strconv.Atoi(controlplane.ServerGOGC)
	debug.SetGCPercent(gogc)
	code := m.Run()
	for _, s := range []*shared{withWebhook, withoutWebhook} {
		if code != 0 && s.env != nil {
			fmt.Printf("=== the %s environment's addon-operator and hooks log:\n%s\n", s.name, s.env.moduleLogs.String())
			if s.env.webhook != nil {
				log, _ := os.ReadFile(s.env.webhook.Log)
				fmt.Printf("=== the %s environment's webhook log:\n%s\n", s.name, log)
			}
			// A webhook call that failed or timed out lets the request
			// through (failurePolicy Ignore): the apiserver says so.
			apiserverLog, _ := os.ReadFile(filepath.Join(s.env.cp.Dir(), "kube-apiserver.log"))
			for _, line := range strings.Split(string(apiserverLog), "\n") {
				if strings.Contains(line, "webhook") {
					fmt.Println(line)
				}
			}
		}
	}
	packageRun.stop()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// binary builds the main package pkg of the repository, once for all tests.
func binary(pkg string) (string, error) {
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if b, ok := binaries.built[pkg]; ok {
		return b.path, b.err
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "managed-starrocks-e2e-bin-")
		if err != nil {
			return "", err
		}
		binaries.dir, binaries.built = dir, map[string]builtBinary{}
	}
	path, err := moduleloop.BuildBinary(context.Background(), pkg, binaries.dir)
	binaries.built[pkg] = builtBinary{path, err}
	return path, err
}

// builtBinaries are the hooks and webhook binaries.
func builtBinaries() (hooks, webhook string, err error) {
	if hooks, err = binary(moduleloop.HooksPackage); err != nil {
		return "", "", err
	}
	webhook, err = binary(moduleloop.WebhookPackage)
	return hooks, webhook, err
}

// env is one cluster with the module running on it. Tests get one of
// their own (newEnv) or a view of a shared one (sharedEnv).
type env struct {
	// t is the test using the env: it fails and logs through it.
	t testing.TB
	// owner holds the env's processes and directories: the test of a
	// private env, packageRun for a shared one.
	owner envOwner
	// shared: other tests run on this cluster and module at the same time,
	// so nothing may restart the module, stop or bypass the webhook.
	shared bool
	cp     *controlplane.ControlPlane
	// dyn, kube and client act as the cluster admin (the control plane's
	// superuser), whom Deckhouse's policies do not exclude: what they
	// refuse an admin they refuse these.
	dyn    dynamic.Interface
	kube   kubernetes.Interface
	client *kubeutil.Client
	// platformDyn and platformKube act as Deckhouse itself
	// (controlplane.PlatformConfig), for what a test does in the
	// platform's place: an object of the module lost, the memory gone.
	platformDyn  dynamic.Interface
	platformKube kubernetes.Interface
	webhook      *moduleloop.Webhook
	// redirect points the module's webhook configurations at webhook.
	redirect *addonoperator.Redirector
	ao       *addonoperator.Operator
	// aoDir holds a folder for each start of addon-operator.
	aoDir string
	// errorsSeen is the module's failed hook and module runs counted at
	// the last drainPassErrors (addon-operator's metrics).
	errorsSeen float64
	// settings are the module's settings addon-operator starts with
	// (none at first; setMaxCount changes them).
	settings map[string]any
	// moduleConfig is the identity addon-operator and the hooks run as
	// (Deckhouse's service account: moduleloop.Identities).
	moduleConfig *rest.Config
	// globals replace chartrender.DefaultGlobals when set (a module
	// release with other images: rollout_test.go).
	globals map[string]any
	extra   []addonoperator.Module
	// gogc is addon-operator's (envOptions.measuresMemory).
	gogc string
	// moduleLogs keeps addon-operator's and the hooks' logs for tests that
	// search them (no secret in any log: backups_test.go); log gets them
	// too (the test's log of a private env), when set.
	moduleLogs *lockedLog
	log        io.Writer
}

type envOptions struct {
	noWebhook bool
	// measuresMemory keeps Go's default collector target for
	// addon-operator and the hooks, as Deckhouse runs them; the other
	// environments run them at controlplane.ServerGOGC.
	measuresMemory bool
	// extra are other modules addon-operator runs beside this one.
	extra []addonoperator.Module
}

// envOwner is what an env's processes and directories live as long as.
type envOwner interface {
	Cleanup(func())
	TempDir() string
	Logf(format string, args ...any)
}

// newEnv starts a cluster with the module for t alone, stopped when t ends.
// A test takes one of its own only when it changes what other tests would
// see: the module's settings, globals or modules, a module restart or
// disable, the webhook bypassed, the module's error counters, cluster-wide
// objects; or when it measures. Each such call says why beside it.
func newEnv(t testing.TB, opts envOptions) *env {
	t.Helper()
	e, err := startEnv(t, testLog{t}, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.t = t
	return e
}

// shared is one environment the tests that only work in namespaces of
// their own run on together, started by the first of them (sharedEnv) and
// stopped by TestMain.
type shared struct {
	name string
	opts envOptions
	once sync.Once
	env  *env
	err  error
}

var (
	// withWebhook runs the module as Deckhouse does, webhook included.
	withWebhook = &shared{name: "shared", opts: envOptions{}}
	// withoutWebhook has no webhook (as when it is down): the tests on it
	// store specs the webhook would refuse.
	withoutWebhook = &shared{name: "shared webhook-less", opts: envOptions{noWebhook: true}}
)

// sharedEnv returns t's view of s, started on first use. Tests on it must
// keep to their own namespaces and names (unique among the tests sharing
// it), count only objects of their own, and change no cluster-wide object
// another test reads (a StarrocksClass they change is their own).
func sharedEnv(t testing.TB, s *shared) *env {
	t.Helper()
	s.once.Do(func() {
		started := time.Now()
		s.env, s.err = startEnv(packageRun, nil, s.opts)
		if s.err == nil {
			s.env.shared = true
			packageRun.Logf("the %s environment started in %s", s.name, time.Since(started).Round(10*time.Millisecond))
		}
	})
	if s.err != nil {
		t.Fatalf("the %s environment: %v", s.name, s.err)
	}
	return s.env.forTest(t)
}

// forTest is t's view of e: the same cluster and module, failing and
// logging through t (a subtest on its parent's env).
func (e *env) forTest(t testing.TB) *env {
	view := *e
	view.t = t
	return &view
}

// step runs f as a subtest of t on e itself (e.t switched to the subtest),
// not on a view (forTest): a step may restart the module, and e's cleanup
// stops the addon-operator e holds. Steps run one after another, each
// seeing what the ones before left.
func (e *env) step(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		parent := e.t
		e.t = t
		defer func() { e.t = parent }()
		f(t)
	})
}

// packageRun owns the shared environments: it runs their cleanups, last
// registered first, when TestMain calls stop.
var packageRun = &runOwner{}

type runOwner struct {
	mu       sync.Mutex
	cleanups []func()
}

func (o *runOwner) Cleanup(f func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cleanups = append(o.cleanups, f)
}

// TempDir makes a directory that stop removes.
func (o *runOwner) TempDir() string {
	dir, err := os.MkdirTemp("", "managed-starrocks-e2e-shared-")
	if err != nil {
		panic(err)
	}
	o.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (o *runOwner) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

func (o *runOwner) stop() {
	o.mu.Lock()
	cleanups := o.cleanups
	o.cleanups = nil
	o.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

// startEnv starts a control plane, the module's webhook and addon-operator
// with the module, tied to owner. On error what started is stopped with
// owner's cleanups.
func startEnv(owner envOwner, log io.Writer, opts envOptions) (*env, error) {
	_, webhookBin, err := builtBinaries()
	if err != nil {
		return nil, err
	}
	// No cert-manager controller runs here: the CRDs of the kinds the
	// module uses suffice.
	crdDirs, err := moduleloop.ModuleCRDs()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.StartRetrying(ctx, controlplane.Options{CRDDirs: crdDirs, ControllerManager: true}, owner.Logf)
	if err != nil {
		return nil, fmt.Errorf("start local control plane: %w", err)
	}
	owner.Cleanup(cp.Stop)
	if err := moduleloop.PrepareCluster(ctx, cp.RESTConfig()); err != nil {
		return nil, err
	}
	// addon-operator's folders (one a start) are made in aoDir, which the
	// owner removes only after the stop registered below has run (cleanups
	// run last-in first-out): a folder made at a start and removed before
	// the stop raced addon-operator's hooks writing into it.
	e := &env{owner: owner, cp: cp, extra: opts.extra, gogc: controlplane.ServerGOGC, moduleLogs: &lockedLog{}, log: log,
		aoDir: owner.TempDir()}
	if opts.measuresMemory {
		e.gogc = ""
	}
	if e.dyn, err = dynamic.NewForConfig(cp.RESTConfig()); err != nil {
		return nil, err
	}
	if e.kube, err = kubernetes.NewForConfig(cp.RESTConfig()); err != nil {
		return nil, err
	}
	if e.client, err = kubeutil.NewClient(cp.RESTConfig()); err != nil {
		return nil, err
	}
	if e.platformDyn, err = dynamic.NewForConfig(controlplane.PlatformConfig(cp.RESTConfig())); err != nil {
		return nil, err
	}
	if e.platformKube, err = kubernetes.NewForConfig(controlplane.PlatformConfig(cp.RESTConfig())); err != nil {
		return nil, err
	}
	var webhookKubeconfig string
	if e.moduleConfig, webhookKubeconfig, err = moduleloop.Identities(ctx, cp); err != nil {
		return nil, err
	}
	if !opts.noWebhook {
		if e.webhook, err = moduleloop.PrepareWebhook(owner.TempDir()); err != nil {
			return nil, err
		}
		owner.Cleanup(e.webhook.Stop)
	}
	// Cleanups run last-in first-out: addon-operator stops before the
	// redirect, the webhook and the control plane.
	owner.Cleanup(func() {
		if e.redirect != nil {
			e.redirect.Stop()
		}
	})
	owner.Cleanup(func() { e.stopAddonOperator() })
	if err := e.tryStartModule(); err != nil {
		return nil, err
	}
	if e.webhook != nil {
		// Its service account and RBAC come with the module's release.
		if err := e.webhook.Start(context.Background(), webhookBin, webhookKubeconfig); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// startModule starts addon-operator with the module (again), as Deckhouse
// starts a module, and waits for its Helm release: admission is on from
// here.
func (e *env) startModule() {
	e.t.Helper()
	if e.shared {
		e.t.Fatal("startModule: the env is shared; a test that restarts the module needs its own (newEnv)")
	}
	if err := e.tryStartModule(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) tryStartModule() error {
	hooksBin, _, err := builtBinaries()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(e.aoDir, "addon-operator-")
	if err != nil {
		return err
	}
	ctx := context.Background()
	started := time.Now()
	var log io.Writer = e.moduleLogs
	if e.log != nil {
		log = io.MultiWriter(e.log, e.moduleLogs)
	}
	ao, err := addonoperator.Start(ctx, addonoperator.Options{
		Identity:    rest.CopyConfig(e.moduleConfig),
		AdminConfig: e.cp.RESTConfig(),
		HooksBinary: hooksBin,
		Dir:         dir,
		Settings:    e.settings,
		Globals:     e.globals,
		Extra:       e.extra,
		Log:         log,
		GOGC:        e.gogc,
	})
	if err != nil {
		return err
	}
	e.ao = ao
	if e.webhook != nil && e.redirect == nil {
		if e.redirect, err = addonoperator.RedirectWebhooks(controlplane.PlatformConfig(e.cp.RESTConfig()), &e.webhook.Endpoint); err != nil {
			return err
		}
	}
	if err := ao.WaitRelease(ctx, 3*time.Minute); err != nil {
		return err
	}
	if e.webhook != nil {
		if err := e.waitWebhookRedirected(); err != nil {
			return err
		}
	}
	e.owner.Logf("addon-operator: the module's release deployed %s after start", time.Since(started).Round(10*time.Millisecond))
	return nil
}

// waitWebhookRedirected waits until both webhook configurations point at
// the local webhook.
func (e *env) waitWebhookRedirected() error {
	ctx := context.Background()
	const timeout = 90 * time.Second
	if ok, why := poll(timeout, func() (bool, string) {
		var urls []*string
		v, err := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, addonoperator.WebhookConfigurationName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, w := range v.Webhooks {
			urls = append(urls, w.ClientConfig.URL)
		}
		m, err := e.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, addonoperator.WebhookConfigurationName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, w := range m.Webhooks {
			urls = append(urls, w.ClientConfig.URL)
		}
		for _, u := range urls {
			if u == nil || !strings.HasPrefix(*u, e.webhook.Endpoint.URL+"/") {
				return false, "not redirected yet"
			}
		}
		return true, ""
	}); !ok {
		return fmt.Errorf("the webhook configurations point at the local webhook: not reached in %s: %s (addon-operator's log: %s)", timeout, why, e.ao.LogPath)
	}
	return nil
}

// stopModule stops addon-operator (the module's objects stay, as when
// Deckhouse restarts).
func (e *env) stopModule() {
	e.t.Helper()
	if e.shared {
		e.t.Fatal("stopModule: the env is shared; a test that stops the module needs its own (newEnv)")
	}
	e.stopAddonOperator()
}

func (e *env) stopAddonOperator() {
	if e.ao != nil {
		e.ao.Stop()
		e.ao = nil
	}
}

// setWebhook points the module's webhook configurations at the local
// webhook, or nowhere (nil: the webhook bypassed, its failurePolicy Ignore
// lets everything through).
func (e *env) setWebhook(w *moduleloop.WebhookEndpoint) {
	e.t.Helper()
	if e.shared {
		e.t.Fatal("setWebhook: the env is shared; a test that bypasses the webhook needs its own (newEnv)")
	}
	if e.redirect == nil {
		e.t.Fatal("setWebhook: the env has no webhook")
	}
	e.redirect.Set(w)
}

// stopWebhook stops the webhook server: the apiserver fails open
// (failurePolicy Ignore), as when the module's webhook is down.
func (e *env) stopWebhook() {
	e.t.Helper()
	if e.shared {
		e.t.Fatal("stopWebhook: the env is shared; a test that stops the webhook needs its own (newEnv)")
	}
	e.webhook.Stop()
}

// moduleErrors counts the module's failed hook runs and module runs so far.
func (e *env) moduleErrors() float64 {
	e.t.Helper()
	if e.shared {
		e.t.Fatal("moduleErrors: the env is shared, its counters count other tests' runs too; a test that counts needs its own (newEnv)")
	}
	if e.ao == nil {
		return 0
	}
	n, err := e.ao.ModuleErrors(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
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
// with the last explanation and addon-operator's log.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.t.Helper()
	e.eventuallyWithin(90*time.Second, what, cond)
}

func (e *env) eventuallyWithin(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	if ok, why := poll(timeout, cond); !ok {
		where := "no addon-operator running"
		if e.ao != nil {
			where = "addon-operator's log: " + e.ao.LogPath
		}
		if e.shared {
			where += ", printed at the end of the run"
		}
		e.t.Fatalf("%s: not reached in %s: %s (%s)", what, timeout, why, where)
	}
}

// poll calls cond every 100 ms for its first 2 seconds, then every 500 ms,
// until it holds or timeout passed; then it returns cond's last
// explanation. Most conditions hold within a hook run or two; a longer
// wait polled every 100 ms cost the apiservers and the test binary CPU that
// make test needs elsewhere (a condition reads up to ten objects, and
// dozens of tests wait at once).
func poll(timeout time.Duration, cond func() (bool, string)) (ok bool, why string) {
	start := time.Now()
	deadline := start.Add(timeout)
	for time.Now().Before(deadline) {
		if ok, why = cond(); ok {
			return true, ""
		}
		if time.Since(start) < 2*time.Second {
			time.Sleep(100 * time.Millisecond)
		} else {
			time.Sleep(500 * time.Millisecond)
		}
	}
	return false, why
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
	return e.resourceOf(e.dyn, kind, namespace)
}

// platformResource is resource as Deckhouse itself.
func (e *env) platformResource(kind, namespace string) dynamic.ResourceInterface {
	return e.resourceOf(e.platformDyn, kind, namespace)
}

func (e *env) resourceOf(dyn dynamic.Interface, kind, namespace string) dynamic.ResourceInterface {
	var gvr schema.GroupVersionResource
	switch kind {
	case "Starrocks":
		gvr = v1alpha1.StarrocksGVR
	case "StarrocksClass":
		return dyn.Resource(v1alpha1.StarrocksClassGVR)
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
	case "HorizontalPodAutoscaler":
		gvr = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	default:
		e.t.Fatalf("resource: unknown kind %s", kind)
	}
	return dyn.Resource(gvr).Namespace(namespace)
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
