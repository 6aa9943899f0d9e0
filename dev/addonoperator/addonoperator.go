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

// Package addonoperator runs the module under the real addon-operator
// (github.com/flant/addon-operator, the version of the root go.mod, built
// into the tools cache by dev/scripts/tools.sh) against a local control
// plane: its queues, its retries, its values validation against openapi/,
// its Helm release storage (Helm 3 library, the release Secrets in the
// addon-operator namespace) and its metrics. `make run` and the end-to-end
// tests use it. Development tooling, never shipped.
//
// Layout: Start copies the module into a modules directory as the bundle is
// shipped (.werf/bundle.yaml: module.yaml, Chart.yaml, .helmignore,
// templates, crds, openapi, monitoring and the hooks binary at
// hooks/go-hooks, where addon-operator finds batch hooks by asking every
// executable without an extension `hook list`); the modules directory's
// values.yaml carries the `global` values Deckhouse provides and the chart
// reads (chartrender.DefaultGlobals), with a schema for them in the global
// hooks directory's openapi/.
//
// What differs from Deckhouse: Deckhouse configures modules with
// ModuleConfig objects (its own config backend and module loader, with
// module.yaml and the module's source); plain addon-operator reads one
// ConfigMap (ConfigMapName in Namespace) where `<valuesKey>Enabled` turns a
// module on or off and `<valuesKey>` holds its settings as YAML. Start
// writes it; Disable and Enable write the flag and restart addon-operator
// (see Disable); the module's hooks and Helm run as under Deckhouse. The
// global values are static (no global hooks of Deckhouse's run here), and
// `global.enabledModules` lists modules this cluster does not run
// (cert-manager, vertical-pod-autoscaler) because the chart checks for
// them. Whom addon-operator and the hooks act as is chosen in one place,
// Identity.
//
// The webhook: the module's WebhookConfigurations point at its Service,
// which nothing routes here (no pods, no kube-proxy). The webhook runs as a
// local process (dev/moduleloop.StartWebhook); the laid-out chart renders
// the entries with a url (renderWebhooksWithURL) and RedirectWebhooks
// points them at the local webhook, again whenever Helm writes them back.
package addonoperator

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleschema"
)

const (
	// ModuleName is the module's name, its directory in the modules dir.
	ModuleName = "managed-starrocks"
	// Namespace is addon-operator's own namespace (Deckhouse's d8-system):
	// its ConfigMap and the Helm release Secrets live there.
	Namespace = "d8-system"
	// ConfigMapName is the ConfigMap addon-operator reads module
	// enablement and settings from.
	ConfigMapName = "addon-operator"
	// HooksBinaryName is where the bundle puts the hooks binary
	// (.werf/consts.yaml HooksBinary), under the module's hooks/.
	HooksBinaryName = "go-hooks"
	// MetricsPrefix is addon-operator's default metric name prefix.
	MetricsPrefix = "addon_operator_"
)

// bundleFiles are what .werf/bundle.yaml ships from the repository, besides
// the hooks binary.
var bundleFiles = []string{".helmignore", "Chart.yaml", "module.yaml", "templates", "crds", "openapi", "monitoring"}

// Module is another module to run beside this one (a directory laid out as
// addon-operator expects), e.g. the queue sentinel of test/queues.
type Module struct {
	// Name is the module's directory name (kebab-case).
	Name string
	// Files maps paths inside the module directory to contents; a path under
	// hooks/ is written executable.
	Files map[string]string
}

// Options configure Start.
type Options struct {
	// Identity is whom addon-operator (and the hooks it runs, which
	// inherit its environment) act as in the cluster: its kubeconfig is
	// written from this config: Deckhouse's service account
	// (moduleloop.Identities), as Deckhouse runs them.
	Identity *rest.Config
	// AdminConfig is the cluster admin's config the harness itself uses
	// (the ConfigMap, the release, the webhook redirect); Identity when nil.
	AdminConfig *rest.Config
	// Binary is the addon-operator binary; the cached tool when empty.
	Binary string
	// HooksBinary is the module's built hooks binary.
	HooksBinary string
	// Dir holds the modules directory, the temporary files and the log.
	Dir string
	// Settings are the module's settings (ModuleConfig spec.settings).
	Settings map[string]any
	// Globals is the `global` values tree; chartrender.DefaultGlobals when nil.
	Globals map[string]any
	// Extra are other modules to run in the same addon-operator, enabled.
	Extra []Module
	// Log receives addon-operator's log (and its hooks'); it is also kept in
	// Dir/addon-operator.log.
	Log io.Writer
	// LogLevel of addon-operator and the hooks: debug, info, error.
	LogLevel string
	// GOGC is the Go collector's target of addon-operator and the hooks it
	// runs; empty keeps Go's default (100), as in Deckhouse. A test that
	// measures none of their memory may set controlplane.ServerGOGC: the
	// collections were about a tenth of test/e2e's CPU.
	GOGC string
}

// Operator is a running addon-operator.
type Operator struct {
	opts        Options
	kube        kubernetes.Interface
	cmd         *exec.Cmd
	done        chan struct{}
	metricsURL  string
	LogPath     string
	ModulesDir  string
	stopOnce    sync.Once
	waitErr     error
	logFile     *os.File
	socketDir   string
	ReleaseName string
}

// Start lays out the modules directory, enables the module (and Extra) in
// the ConfigMap and starts addon-operator. It returns once addon-operator
// serves its metrics; the module's first run follows (WaitRelease).
func Start(ctx context.Context, opts Options) (*Operator, error) {
	if opts.Identity == nil || opts.HooksBinary == "" || opts.Dir == "" {
		return nil, errors.New("addonoperator: Identity, HooksBinary and Dir are required")
	}
	if opts.AdminConfig == nil {
		opts.AdminConfig = opts.Identity
	}
	if opts.Globals == nil {
		opts.Globals = chartrender.DefaultGlobals()
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	if opts.Binary == "" {
		bin, err := controlplane.Tool("addon-operator")
		if err != nil {
			return nil, err
		}
		opts.Binary = bin
	}
	kube, err := kubernetes.NewForConfig(opts.AdminConfig)
	if err != nil {
		return nil, err
	}
	o := &Operator{opts: opts, kube: kube, done: make(chan struct{}), ReleaseName: ModuleName}
	if err := o.layout(); err != nil {
		return nil, err
	}
	if err := kubeutil.EnsureNamespace(ctx, kube, Namespace, map[string]string{"heritage": "deckhouse"}); err != nil {
		return nil, err
	}
	enabled := map[string]bool{ModuleName: true}
	for _, m := range opts.Extra {
		enabled[m.Name] = true
	}
	if err := o.writeConfig(ctx, opts.Settings, enabled); err != nil {
		return nil, err
	}
	if err := o.start(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// layout writes the modules directory, the global hooks directory and the
// identity's kubeconfig into Dir.
func (o *Operator) layout() error {
	o.ModulesDir = filepath.Join(o.opts.Dir, "modules")
	moduleDir := filepath.Join(o.ModulesDir, ModuleName)
	if err := os.RemoveAll(o.ModulesDir); err != nil {
		return err
	}
	root := controlplane.RepoRoot()
	for _, name := range bundleFiles {
		if err := copyTree(filepath.Join(root, name), filepath.Join(moduleDir, name)); err != nil {
			return fmt.Errorf("lay out the module: %w", err)
		}
	}
	if err := renderWebhooksWithURL(moduleDir); err != nil {
		return err
	}
	if err := copyFile(o.opts.HooksBinary, filepath.Join(moduleDir, "hooks", HooksBinaryName), 0o755); err != nil {
		return fmt.Errorf("lay out the hooks binary: %w", err)
	}
	for _, m := range o.opts.Extra {
		for path, content := range m.Files {
			mode := os.FileMode(0o644)
			if strings.HasPrefix(path, "hooks/") {
				mode = 0o755
			}
			full := filepath.Join(o.ModulesDir, m.Name, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, []byte(content), mode); err != nil {
				return err
			}
		}
	}
	// Static values: the globals Deckhouse provides, and every module off
	// unless the ConfigMap turns it on (Deckhouse's external modules are
	// off until a ModuleConfig enables them).
	static := map[string]any{"global": o.opts.Globals}
	static[moduleschema.ValuesKey+"Enabled"] = false
	for _, m := range o.opts.Extra {
		static[valuesKey(m.Name)+"Enabled"] = false
	}
	data, err := yaml.Marshal(static)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.ModulesDir, "values.yaml"), data, 0o644); err != nil {
		return err
	}
	globalOpenAPI := filepath.Join(o.opts.Dir, "global-hooks", "openapi")
	if err := os.MkdirAll(globalOpenAPI, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(globalOpenAPI, "config-values.yaml"), []byte(globalConfigSchema), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(globalOpenAPI, "values.yaml"), []byte(globalValuesSchema), 0o644); err != nil {
		return err
	}
	return kubeutil.WriteKubeconfig(o.kubeconfigPath(), o.opts.Identity)
}

func (o *Operator) kubeconfigPath() string {
	return filepath.Join(o.opts.Dir, "addon-operator.kubeconfig")
}

// globalConfigSchema: no global settings are configured here.
const globalConfigSchema = `type: object
additionalProperties: true
`

// globalValuesSchema covers the `global` values the chart reads, shaped as
// in Deckhouse's global openapi (deckhouse/deckhouse global-hooks/openapi).
const globalValuesSchema = `x-extend:
  schema: config-values.yaml
type: object
additionalProperties: true
properties:
  highAvailability:
    type: boolean
  enabledModules:
    type: array
    items:
      type: string
  discovery:
    type: object
    additionalProperties: true
    properties:
      clusterDomain:
        type: string
  modulesImages:
    type: object
    additionalProperties: true
    properties:
      registry:
        type: object
        additionalProperties: true
        properties:
          base:
            type: string
      digests:
        type: object
        additionalProperties:
          type: object
          additionalProperties:
            type: string
`

// valuesKey is addon-operator's values key of a module: its name in camelCase.
func valuesKey(module string) string {
	parts := strings.Split(module, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// writeConfig writes addon-operator's ConfigMap: the module's settings and
// which modules are on.
func (o *Operator) writeConfig(ctx context.Context, settings map[string]any, enabled map[string]bool) error {
	cms := o.kube.CoreV1().ConfigMaps(Namespace)
	cm, err := cms.Get(ctx, ConfigMapName, metav1.GetOptions{})
	create := apierrors.IsNotFound(err)
	if create {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: Namespace}}
	} else if err != nil {
		return fmt.Errorf("read ConfigMap %s/%s: %w", Namespace, ConfigMapName, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if settings != nil {
		data, err := yaml.Marshal(settings)
		if err != nil {
			return err
		}
		cm.Data[moduleschema.ValuesKey] = string(data)
	}
	for name, on := range enabled {
		cm.Data[valuesKey(name)+"Enabled"] = strconv.FormatBool(on)
	}
	if create {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	} else {
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("write ConfigMap %s/%s: %w", Namespace, ConfigMapName, err)
	}
	return nil
}

// SetSettings changes the module's settings while addon-operator runs, as
// an admin does under `make run` (addon-operator's ConfigMap stands for the
// ModuleConfig): addon-operator runs the module again and upgrades its
// release.
func (o *Operator) SetSettings(ctx context.Context, settings map[string]any) error {
	if settings == nil {
		settings = map[string]any{}
	}
	o.opts.Settings = settings
	return o.writeConfig(ctx, settings, nil)
}

// Disable turns the module off, as Deckhouse does when its ModuleConfig
// says enabled: false: addon-operator stops the module's hooks and deletes
// its Helm release (objects annotated helm.sh/resource-policy: keep stay).
// It returns once the release is gone.
//
// addon-operator v1.24.4 here does not act on a changed enabled flag while
// it runs (the ConfigMap change is logged as "Enabled flag transition", but
// no converge follows, seen with --log-level=debug), so Disable and Enable
// restart it with the new flag, and its first converge deletes the release
// of the disabled module, as after Deckhouse's own restart.
func (o *Operator) Disable(ctx context.Context, timeout time.Duration) error {
	if err := o.restartWith(ctx, false); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		secrets, err := o.releaseSecrets(ctx)
		if err == nil && len(secrets) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the module's Helm release still exists %s after disabling it (%d Secrets, %v); see %s", timeout, len(secrets), err, o.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Enable turns the module on again (see Disable); WaitRelease waits for
// its release.
func (o *Operator) Enable(ctx context.Context) error {
	return o.restartWith(ctx, true)
}

func (o *Operator) restartWith(ctx context.Context, enabled bool) error {
	o.Stop()
	if err := o.writeConfig(ctx, nil, map[string]bool{ModuleName: enabled}); err != nil {
		return err
	}
	o.stopOnce = sync.Once{}
	o.done = make(chan struct{})
	return o.start(ctx)
}

func (o *Operator) start(ctx context.Context) error {
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return err
	}
	tmp := filepath.Join(o.opts.Dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	o.LogPath = filepath.Join(o.opts.Dir, "addon-operator.log")
	logFile, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	o.logFile = logFile
	// A unix socket path has at most 107 bytes; a test's temporary
	// directory can be longer.
	if o.socketDir, err = os.MkdirTemp("", "addon-operator-"); err != nil {
		logFile.Close()
		return err
	}
	cmd := exec.Command(o.opts.Binary, "start",
		"--modules-dir="+o.ModulesDir,
		"--global-hooks-dir="+filepath.Join(o.opts.Dir, "global-hooks"),
		"--namespace="+Namespace,
		"--config-map="+ConfigMapName,
		"--tmp-dir="+tmp,
		"--prometheus-listen-address=127.0.0.1",
		"--prometheus-listen-port="+strconv.Itoa(ports[0]),
		"--prometheus-metrics-prefix="+MetricsPrefix,
		"--kube-config="+o.kubeconfigPath(),
		// The local apiserver takes more than addon-operator's defaults (5
		// QPS): a 1000-instance run would wait on its own rate limiter.
		"--kube-client-qps=50", "--kube-client-burst=100",
		"--object-patcher-kube-client-qps=50", "--object-patcher-kube-client-burst=100",
		"--debug-unix-socket="+filepath.Join(o.socketDir, "debug.socket"),
		"--log-level="+o.opts.LogLevel,
		"--log-type=json",
	)
	// The hooks inherit addon-operator's environment: KUBECONFIG is how
	// hooks/internal/kubewrite finds the cluster outside a pod, LOG_LEVEL the
	// level of module-sdk's logger (FATAL when unset). TMPDIR: every
	// Kubernetes client of flant/kube-client (addon-operator makes several
	// at each start) makes two folders for its discovery cache with
	// os.MkdirTemp and never removes them; in the run's own folder they go
	// with it, instead of piling up in the machine's /tmp (about 1,400
	// pairs here after a day of test runs). KUBECACHEDIR: its Helm client
	// (helm3lib and nelm build cli-runtime's ConfigFlags) keeps a discovery
	// and HTTP cache there, by default in $HOME/.kube/cache, a folder per
	// apiserver address that no one removes.
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+o.kubeconfigPath(),
		"LOG_LEVEL="+o.opts.LogLevel,
		"ADDON_OPERATOR_NAMESPACE="+Namespace,
		"TMPDIR="+tmp,
		"KUBECACHEDIR="+filepath.Join(tmp, "kube-cache"),
	)
	if o.opts.GOGC != "" {
		cmd.Env = append(cmd.Env, "GOGC="+o.opts.GOGC)
	}
	var out io.Writer = logFile
	if o.opts.Log != nil {
		out = io.MultiWriter(logFile, lineWriter{w: o.opts.Log})
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so Stop ends the hooks it runs with it, and a
	// Ctrl-C in the terminal reaches only the program that started it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		os.RemoveAll(o.socketDir)
		return fmt.Errorf("start addon-operator: %w", err)
	}
	o.cmd = cmd
	go func() {
		o.waitErr = cmd.Wait()
		close(o.done)
	}()
	o.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0])
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-o.done:
			o.Stop()
			return fmt.Errorf("addon-operator exited at start (%v): %s", o.waitErr, tail(o.LogPath, 30))
		case <-ctx.Done():
			o.Stop()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(o.metricsURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	o.Stop()
	return fmt.Errorf("addon-operator serves no metrics after 60s: %s", tail(o.LogPath, 30))
}

// Stop ends addon-operator: SIGTERM, then SIGKILL to its whole process group
// (the hooks it runs) if it has not exited in 10 seconds; then any hook
// process left in the group.
func (o *Operator) Stop() {
	o.stopOnce.Do(func() {
		if o.cmd == nil {
			return
		}
		_ = o.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-o.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
			<-o.done
		}
		// Hooks still running when addon-operator exited are its group's.
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		o.logFile.Close()
		os.RemoveAll(o.socketDir)
	})
}

// Pid is addon-operator's process id (its memory: /proc/<pid>/status).
func (o *Operator) Pid() int { return o.cmd.Process.Pid }

// Exited reports whether addon-operator has ended (it should not before Stop).
func (o *Operator) Exited() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// releaseSecrets are the Helm release Secrets of the module.
func (o *Operator) releaseSecrets(ctx context.Context) ([]corev1.Secret, error) {
	list, err := o.kube.CoreV1().Secrets(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + o.ReleaseName})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// WaitRelease waits until the module's Helm release is deployed (the
// module's first run done: hooks, values validation, Helm install).
func (o *Operator) WaitRelease(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		secrets, err := o.releaseSecrets(ctx)
		for _, s := range secrets {
			if s.Labels["status"] == "deployed" {
				return nil
			}
		}
		if o.Exited() {
			return fmt.Errorf("addon-operator exited (%v): %s", o.waitErr, tail(o.LogPath, 30))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the module's Helm release is not deployed after %s (%d release Secrets, %v): %s", timeout, len(secrets), err, tail(o.LogPath, 30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Metrics returns addon-operator's Prometheus metrics, as text.
func (o *Operator) Metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.metricsURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return string(data), err
}

// CollectGarbage makes addon-operator run a garbage collection now, instead
// of the one an idle Go program forces every 2 minutes: its HTTP server
// (shell-operator's, beside the metrics) serves net/http/pprof under
// /debug/pprof, whose heap profile with gc=1 runs runtime.GC first.
func (o *Operator) CollectGarbage(ctx context.Context) error {
	url := strings.TrimSuffix(o.metricsURL, "/metrics") + "/debug/pprof/heap?gc=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// lineWriter hands w whole lines only (a test log shows each as one entry).
type lineWriter struct{ w io.Writer }

func (l lineWriter) Write(p []byte) (int, error) {
	s := bufio.NewScanner(strings.NewReader(string(p)))
	s.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for s.Scan() {
		if _, err := l.w.Write(append(s.Bytes(), '\n')); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// tail returns the last lines of a file, for error messages.
func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "\n" + strings.Join(all, "\n")
}

// webhookServiceClient is the client part of the chart's webhook entries
// (templates/_helpers.tpl, ms.webhookClient): the module's Service.
const webhookServiceClient = `  service:
    name: managed-starrocks-webhook
    namespace: d8-managed-starrocks
    path: {{ .path | quote }}
    port: 443
`

// webhookURLClient replaces it in the laid-out copy: a URL, nowhere until
// the Redirector points it at the local webhook.
var webhookURLClient = "  url: {{ printf \"%s%s\" " + strconv.Quote(unreachable.URL) + " .path | quote }}\n"

// renderWebhooksWithURL makes the laid-out chart render the webhook
// entries with a url instead of the module's Service. The Redirector
// rewrites the live entries to a url; had the release a service, every
// later upgrade (a settings change) would fail: Helm's three-way patch adds
// the release's `service` beside the live `url` (it only removes what the
// previous release had and the new one has not), and the apiserver refuses
// "exactly one of url or service is required". With a url on both sides,
// Helm's patch replaces the url, and the Redirector points it back.
func renderWebhooksWithURL(moduleDir string) error {
	path := filepath.Join(moduleDir, "templates", "_helpers.tpl")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if strings.Count(string(data), webhookServiceClient) != 1 {
		return fmt.Errorf("lay out the module: %s no longer renders the webhook client as this harness expects (%q); update renderWebhooksWithURL", path, webhookServiceClient)
	}
	return os.WriteFile(path, []byte(strings.Replace(string(data), webhookServiceClient, webhookURLClient, 1)), 0o644)
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		// The bundle leaves Go sources and test data out (.werf/bundle.yaml).
		if strings.HasSuffix(path, ".go") || strings.Contains(rel, "testdata") {
			return nil
		}
		return copyFile(path, target, 0o644)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

// Release is the module's deployed Helm release as Helm stores it (the
// Secret's `release` field: base64 of gzipped JSON, helm.sh/helm/v3
// pkg/storage/driver/util.go), decoded: name, config (the values Helm got),
// manifest and so on.
type Release struct {
	Name     string         `json:"name"`
	Version  int            `json:"version"`
	Config   map[string]any `json:"config"`
	Manifest string         `json:"manifest"`
}

// DeployedRelease reads and decodes the module's deployed Helm release.
func (o *Operator) DeployedRelease(ctx context.Context) (*Release, error) {
	secrets, err := o.releaseSecrets(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range secrets {
		if s.Labels["status"] != "deployed" {
			continue
		}
		gz, err := base64.StdEncoding.DecodeString(string(s.Data["release"]))
		if err != nil {
			return nil, fmt.Errorf("release Secret %s: %w", s.Name, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, fmt.Errorf("release Secret %s: %w", s.Name, err)
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("release Secret %s: %w", s.Name, err)
		}
		var rel Release
		if err := json.Unmarshal(data, &rel); err != nil {
			return nil, fmt.Errorf("release Secret %s: %w", s.Name, err)
		}
		return &rel, nil
	}
	return nil, fmt.Errorf("no deployed release of %s in %s", o.ReleaseName, Namespace)
}

// Objects are the objects of the release's manifest.
func (r *Release) Objects() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(r.Manifest, "\n---") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return nil, fmt.Errorf("release %s manifest: %w", r.Name, err)
		}
		if obj.GetKind() != "" {
			out = append(out, obj)
		}
	}
	return out, nil
}
