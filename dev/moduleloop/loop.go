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

// Package moduleloop runs the module on a cluster the way Deckhouse does,
// without Deckhouse: it watches the objects the hooks bind to, builds their
// snapshots and binding contexts, runs the real hooks binary through
// addon-operator's batch-hook runner, applies the values patches and object
// patches, validates the values against openapi/, renders the chart with the
// Helm engine and applies (and prunes) the objects — and repeats on every
// change. `make run` and the end-to-end tests use it. Development tooling,
// never shipped.
//
// It acts as the identity Options.RESTConfig carries; the harness gives it
// Deckhouse's service account (Identities), under Deckhouse's platform
// admission policies (PrepareCluster), so what those refuse the module is
// refused here too.
//
// Like Helm, it never deletes an object annotated helm.sh/resource-policy:
// keep: not when it leaves the chart (prune reads the live object, as Helm's
// upgrade does) and not on Uninstall, which plays Deckhouse disabling the
// module (it goes by the last render's manifests, as Helm's uninstall does).
//
// What it leaves out, on purpose: Deckhouse's queues and retries per hook,
// schedule bindings, and Helm's release history (a ConfigMap remembers the
// rendered objects, and which were kept, so they can be pruned).
package moduleloop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/deckhouse/deckhouse/pkg/log"
	"github.com/deckhouse/deckhouse/pkg/metrics-storage/operation"
	"github.com/flant/addon-operator/pkg/utils"
	objectpatch "github.com/flant/shell-operator/pkg/kube/object_patch"
	kemtypes "github.com/flant/shell-operator/pkg/kube_events_manager/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleschema"
)

const fieldManager = "managed-starrocks-localrun"

// Options configure a Loop.
type Options struct {
	RESTConfig *rest.Config
	// HooksBinary is the built hooks binary (see BuildBinary).
	HooksBinary string
	// Settings are the ModuleConfig's spec.settings.
	Settings map[string]any
	// Globals is the `global` values tree; chartrender.DefaultGlobals when nil.
	Globals map[string]any
	// Webhook says where the apiserver reaches the admission webhook. The
	// rendered WebhookConfigurations point at the module's Service, which
	// nothing routes here, so the loop points them at this URL and CA. When
	// nil, WebhookConfigurations are not applied.
	Webhook *WebhookEndpoint
	// Log receives the loop's and the hooks' logs; os.Stderr when nil.
	Log io.Writer
	// LogLevel of the hooks' and the loop's logs (slog.LevelInfo when zero).
	LogLevel slog.Level
}

// WebhookEndpoint is a reachable admission webhook server.
type WebhookEndpoint struct {
	// URL is the server's base URL, e.g. https://127.0.0.1:9443.
	URL string
	// CABundle is the PEM CA that signed the server's certificate.
	CABundle []byte
}

// Result is what one pass did.
type Result struct {
	HooksRun int
	Applied  int
	Deleted  int
	Duration time.Duration
}

// Loop is the module running against one cluster.
type Loop struct {
	opts     Options
	client   *kubeutil.Client
	kube     kubernetes.Interface
	patcher  *objectpatch.ObjectPatcher
	schemas  *moduleschema.Schemas
	renderer *chartrender.Renderer
	hooks    []*hook
	logger   *log.Logger
	tmpDir   string

	mu       sync.Mutex
	values   utils.Values // {global: ..., managedStarrocks: ...}, kept across passes like addon-operator's memory values
	started  bool
	metrics  []operation.MetricOperation
	lastErr  error
	rendered []*unstructured.Unstructured
}

// New loads the hooks' configuration and the schemas, and prepares the
// module's initial values (settings with the schema defaults).
func New(opts Options) (*Loop, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.Globals == nil {
		opts.Globals = chartrender.DefaultGlobals()
	}
	logger := log.NewLogger(log.WithOutput(opts.Log), log.WithLevel(opts.LogLevel))
	// A module-sdk hook logs nothing below $LOG_LEVEL, which defaults to
	// FATAL; Deckhouse runs its hooks with its own level (Info unless
	// configured), and addon-operator hands its environment to every hook
	// run. Without this the hooks' own messages never reach the log.
	if os.Getenv("LOG_LEVEL") == "" {
		if err := os.Setenv("LOG_LEVEL", strings.ToLower(opts.LogLevel.String())); err != nil {
			return nil, err
		}
	}
	client, err := kubeutil.NewClient(opts.RESTConfig)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(opts.RESTConfig)
	if err != nil {
		return nil, err
	}
	schemas, err := moduleschema.Load()
	if err != nil {
		return nil, err
	}
	if err := schemas.ValidateSettings(opts.Settings); err != nil {
		return nil, fmt.Errorf("module settings: %w", err)
	}
	renderer, err := chartrender.Default()
	if err != nil {
		return nil, err
	}
	tmpDir, err := os.MkdirTemp("", "managed-starrocks-hooks-")
	if err != nil {
		return nil, err
	}
	// The hooks write into tenant namespaces with their own client
	// (hooks/internal/kubewrite): they get this cluster's KUBECONFIG.
	launcher, err := kubeutil.HooksLauncher(tmpDir, opts.HooksBinary, opts.RESTConfig)
	if err != nil {
		return nil, err
	}
	hooks, err := loadHooks(launcher, tmpDir, logger)
	if err != nil {
		return nil, err
	}
	moduleValues := deepCopy(opts.Settings)
	if moduleValues == nil {
		moduleValues = map[string]any{}
	}
	schemas.ApplyDefaults(moduleValues)
	l := &Loop{
		opts:     opts,
		client:   client,
		kube:     kube,
		patcher:  objectpatch.NewObjectPatcher(patcherClient{Interface: kube, client: client}, logger),
		schemas:  schemas,
		renderer: renderer,
		hooks:    hooks,
		logger:   logger,
		tmpDir:   tmpDir,
		values:   utils.Values{"global": deepCopy(opts.Globals), moduleschema.ValuesKey: moduleValues},
	}
	return l, nil
}

// Close removes the loop's temporary files.
func (l *Loop) Close() { os.RemoveAll(l.tmpDir) }

// SetWebhook changes where the webhook configurations point; nil removes
// them on the next pass (as if the webhook were bypassed).
func (l *Loop) SetWebhook(w *WebhookEndpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opts.Webhook = w
}

// ModuleValues returns a copy of the module's current values.
func (l *Loop) ModuleValues() map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return deepCopy(l.values[moduleschema.ValuesKey].(map[string]any))
}

// Metrics returns the metric operations of the last pass's hooks.
func (l *Loop) Metrics() []operation.MetricOperation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]operation.MetricOperation(nil), l.metrics...)
}

// Rendered returns the objects of the last render.
func (l *Loop) Rendered() []*unstructured.Unstructured {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rendered
}

// RunOnce is one full pass: hooks (startup hooks on the first pass), values,
// render, apply, prune.
func (l *Loop) RunOnce(ctx context.Context) (*Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := time.Now()
	res := &Result{}
	// The release ConfigMap lives in the module's namespace, which the chart
	// itself creates: make sure it exists before the first render.
	if err := kubeutil.EnsureNamespace(ctx, l.kube, releaseNamespace, nil); err != nil {
		return nil, err
	}
	if !l.started {
		for _, h := range l.hooks {
			if h.config.OnStartup == nil {
				continue
			}
			if err := l.runHook(ctx, h, true); err != nil {
				return nil, err
			}
			res.HooksRun++
		}
		l.started = true
	}
	l.metrics = nil
	for _, h := range l.hooks {
		if len(h.config.Kubernetes) == 0 && h.config.OnBeforeHelm == nil {
			continue
		}
		if err := l.runHook(ctx, h, false); err != nil {
			return nil, err
		}
		res.HooksRun++
	}

	moduleValues := l.values[moduleschema.ValuesKey].(map[string]any)
	if err := l.schemas.ValidateValues(moduleValues); err != nil {
		return nil, fmt.Errorf("values after hooks do not match openapi/values.yaml: %w", err)
	}
	objs, err := l.renderer.RenderRelease(moduleValues, l.values["global"].(map[string]any))
	if err != nil {
		return nil, err
	}
	l.rendered = objs
	if res.Applied, res.Deleted, err = l.applyRendered(ctx, objs); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	l.logger.Info("module pass done", slog.Int("hookRuns", res.HooksRun), slog.Int("objectsApplied", res.Applied),
		slog.Int("objectsDeleted", res.Deleted), slog.Duration("duration", res.Duration))
	return res, nil
}

func (l *Loop) runHook(ctx context.Context, h *hook, startup bool) error {
	snapshots := map[string][]kemtypes.ObjectAndFilterResult{}
	if !startup {
		for _, b := range h.config.Kubernetes {
			snap, err := snapshot(ctx, l.client, b)
			if err != nil {
				return fmt.Errorf("hook %s: %w", h.batch.GetName(), err)
			}
			snapshots[b.Name] = snap
		}
	}
	configValues := utils.Values{moduleschema.ValuesKey: deepCopy(l.opts.Settings)}
	result, err := h.run(ctx, bindingContexts(h, snapshots, startup), configValues, l.values)
	if err != nil {
		return err
	}
	if patch := result.Patches[utils.MemoryValuesPatch]; patch != nil {
		values, _, err := utils.ApplyValuesPatch(l.values, *patch, utils.IgnoreNonExistentPaths)
		if err != nil {
			return fmt.Errorf("hook %s: apply values patch: %w", h.batch.GetName(), err)
		}
		l.values = values
	}
	if patch := result.Patches[utils.ConfigMapPatch]; patch != nil && len(patch.Operations) > 0 {
		l.logger.Warn("hook patched config values; the local loop ignores that", slog.String("hook", h.batch.GetName()))
	}
	// What the hook wrote, by object (Description names the operation and
	// the object, never its data: no Secret content reaches the log).
	writes := make([]string, 0, len(result.ObjectPatcherOperations))
	for _, op := range result.ObjectPatcherOperations {
		writes = append(writes, op.Description())
	}
	valuesPatched := 0
	if patch := result.Patches[utils.MemoryValuesPatch]; patch != nil {
		valuesPatched = len(patch.Operations)
	}
	l.logger.Info("hook ran", slog.String("hook", h.batch.GetName()), slog.Int("valuesPatchOperations", valuesPatched), slog.Any("objectPatches", writes))
	if err := l.patcher.ExecuteOperations(result.ObjectPatcherOperations); err != nil {
		return fmt.Errorf("hook %s: object patches: %w", h.batch.GetName(), err)
	}
	l.metrics = append(l.metrics, result.Metrics...)
	return nil
}

// keep decides whether a rendered object is applied here, pointing the
// webhook configurations at the reachable webhook server.
func (l *Loop) keep(obj *unstructured.Unstructured) bool {
	switch obj.GetKind() {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		if l.opts.Webhook == nil {
			return false
		}
		webhooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for i, w := range webhooks {
			wh := w.(map[string]any)
			path, _, _ := unstructured.NestedString(wh, "clientConfig", "service", "path")
			wh["clientConfig"] = map[string]any{
				"url":      strings.TrimSuffix(l.opts.Webhook.URL, "/") + path,
				"caBundle": base64.StdEncoding.EncodeToString(l.opts.Webhook.CABundle),
			}
			webhooks[i] = wh
		}
		_ = unstructured.SetNestedSlice(obj.Object, webhooks, "webhooks")
	}
	return true
}

// Run runs passes until ctx ends: one now, then one after every change of a
// watched object (debounced), and again after a failed pass.
func (l *Loop) Run(ctx context.Context, onPass func(*Result, error)) error {
	trigger := make(chan struct{}, 1)
	poke := func() {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(l.client.Dynamic, 0)
	watched := map[schema.GroupVersionResource]bool{}
	watch := func(apiVersion, kind string) {
		gvr, _, err := gvrOf(l.client, apiVersion, kind)
		if err != nil || watched[gvr] {
			return
		}
		watched[gvr] = true
		_, _ = factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { poke() },
			UpdateFunc: func(any, any) { poke() },
			DeleteFunc: func(any) { poke() },
		})
		factory.Start(ctx.Done())
	}
	for _, h := range l.hooks {
		for _, b := range h.config.Kubernetes {
			// Bindings that only keep a snapshot do not start a run, as in
			// shell-operator.
			if b.ExecuteHookOnEvents != nil && !*b.ExecuteHookOnEvents {
				continue
			}
			watch(b.APIVersion, b.Kind)
		}
	}
	defer factory.Shutdown()

	poke()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-trigger:
		}
		// Let a burst of events (an apply touches many objects) settle.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(150 * time.Millisecond):
		}
		select {
		case <-trigger:
		default:
		}
		res, err := l.RunOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if onPass != nil {
			onPass(res, err)
		}
		if err != nil {
			l.logger.Error("module pass failed; retrying in 2s", log.Err(err))
			time.AfterFunc(2*time.Second, poke)
			continue
		}
		for _, obj := range l.Rendered() {
			watch(obj.GetAPIVersion(), obj.GetKind())
		}
	}
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}
