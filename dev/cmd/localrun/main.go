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

// Command localrun is `make run`: it starts a local control plane (real etcd
// and kube-apiserver on 127.0.0.1), installs the CRDs, applies the documented
// example StarrocksClass and Starrocks, prints what exists and keeps running
// until Ctrl-C, then stops everything it started. Development tooling only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/addonoperator"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
	"k8s.io/client-go/kubernetes"
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// A second Ctrl-C ends the program at once.
		stop()
	}()
	err := run(ctx)
	if ctx.Err() != nil || interrupted(err) {
		// Ctrl-C or SIGTERM: run has stopped everything it started (its
		// deferred stops ran), which is the clean end the user asked for,
		// even when the signal cut a step short.
		say("stopped")
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localrun:", err)
		os.Exit(1)
	}
}

// runDirFlag lets a test run localrun next to a developer's `make run`.
var runDirFlag = flag.String("dir", "", "where the control plane keeps its files and logs, emptied first (default: $MANAGED_STARROCKS_CACHE/run, else ~/.cache/managed-starrocks/run)")

// noNode runs without the local node (dev/node) even as root.
var noNode = flag.Bool("no-node", false, "do not start the local node (kubelet, containerd): pods stay Pending")

// disable plays Deckhouse disabling the module once the examples run.
var disable = flag.Bool("disable", false, "after the examples are deployed, disable the module through addon-operator: it stops the module's hooks and deletes its Helm release (objects with helm.sh/resource-policy: keep stay), then keep the cluster for inspection")

func run(ctx context.Context) error {
	// The note about the first run only when it is one: on every later run
	// it would say a wait is coming that never does.
	missing, err := controlplane.MissingTools()
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		say("building the local control plane tools %s (first run only, about 12 minutes on 2 cores)", strings.Join(missing, ", "))
	}
	if err := controlplane.BuildTools(os.Stderr); err != nil {
		return err
	}

	dir, err := runDir()
	if err != nil {
		return err
	}
	crdDirs, err := moduleloop.CRDDirs()
	if err != nil {
		return err
	}
	say("starting etcd and kube-apiserver on 127.0.0.1")
	started := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Dir:               dir,
		CRDDirs:           crdDirs,
		ControllerManager: true,
		Node:              localNodeControlPlane(),
	})
	if err != nil {
		return err
	}
	defer func() {
		// controlplane stops kube-apiserver before etcd.
		say("stopping kube-controller-manager, kube-apiserver and etcd")
		cp.Stop()
	}()
	say("control plane ready in %s", time.Since(started).Round(100*time.Millisecond))

	client, err := kubeutil.NewClient(cp.RESTConfig())
	if err != nil {
		return err
	}
	if err := moduleloop.PrepareCluster(ctx, cp.RESTConfig()); err != nil {
		return err
	}

	globals, stopNode, err := startLocalNode(ctx, cp, dir)
	if err != nil {
		return err
	}
	defer stopNode()

	say("building the hooks and the webhook")
	// Outside the run folder, which every run empties: go build leaves a
	// binary that is up to date alone, where linking the two anew costs
	// about 10 CPU-seconds a run. In the repository (not the shared
	// cache), so that two worktrees' runs never overwrite each other's.
	binDir := filepath.Join(controlplane.RepoRoot(), "bin", "run")
	if err := os.MkdirAll(binDir, 0o700); err != nil {
		return err
	}
	hooksBin, err := moduleloop.BuildBinary(ctx, moduleloop.HooksPackage, binDir)
	if err != nil {
		return err
	}
	webhookBin, err := moduleloop.BuildBinary(ctx, moduleloop.WebhookPackage, binDir)
	if err != nil {
		return err
	}
	moduleConfig, webhookKubeconfig, err := moduleloop.Identities(ctx, cp)
	if err != nil {
		return err
	}
	webhook, err := moduleloop.PrepareWebhook(dir)
	if err != nil {
		return err
	}
	defer func() {
		say("stopping the webhook")
		webhook.Stop()
	}()

	redirect, err := addonoperator.RedirectWebhooks(controlplane.PlatformConfig(cp.RESTConfig()), &webhook.Endpoint)
	if err != nil {
		return err
	}
	defer redirect.Stop()

	say("starting addon-operator with the module as %s (log: %s)", "system:serviceaccount:"+moduleloop.DeckhouseNamespace+":"+moduleloop.DeckhouseServiceAccount,
		filepath.Join(dir, "addon-operator", "addon-operator.log"))
	started = time.Now()
	ao, err := addonoperator.Start(ctx, addonoperator.Options{
		Identity:    moduleConfig,
		AdminConfig: cp.RESTConfig(),
		HooksBinary: hooksBin,
		Dir:         filepath.Join(dir, "addon-operator"),
		Settings:    map[string]any{},
		Globals:     globals,
	})
	if err != nil {
		return err
	}
	defer func() {
		say("stopping addon-operator")
		ao.Stop()
	}()
	if err := ao.WaitRelease(ctx, 5*time.Minute); err != nil {
		return err
	}
	say("the module's Helm release is deployed, %s after addon-operator started", time.Since(started).Round(100*time.Millisecond))
	// The webhook runs as its own service account, which the release made
	// with its RBAC, as its pod starts after the release in a cluster.
	if err := webhook.Start(ctx, webhookBin, webhookKubeconfig); err != nil {
		return err
	}
	say("webhook serving on %s as service account %s/%s (log: %s)", webhook.Endpoint.URL, moduleloop.WebhookNamespace, moduleloop.WebhookServiceAccount, webhook.Log)

	if err := applyExamples(ctx, cp, client); err != nil {
		return err
	}
	if err := waitValid(ctx, client, 2*time.Minute); err != nil {
		say("%v", err)
	}
	applyNodeInstance(ctx, client)
	// Let the passes that follow the first render (StatefulSets, Pods and
	// PVCs appearing) update the status before printing it.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(3 * time.Second):
	}

	fmt.Println()
	if err := client.PrintTable(ctx, os.Stdout, "StarrocksClasses", "/apis/managed-services.deckhouse.io/v1alpha1/starrocksclasses"); err != nil {
		return err
	}
	if err := client.PrintTable(ctx, os.Stdout, "Starrocks (all namespaces)", "/apis/managed-services.deckhouse.io/v1alpha1/starrocks"); err != nil {
		return err
	}
	if err := printInstances(ctx, client, os.Stdout); err != nil {
		return err
	}
	if *disable {
		// What Helm deletes is the release's manifest but what is
		// annotated helm.sh/resource-policy: keep.
		release, err := ao.DeployedRelease(ctx)
		if err != nil {
			return err
		}
		objs, err := release.Objects()
		if err != nil {
			return err
		}
		var deleted, kept []string
		for _, obj := range objs {
			key := obj.GetKind() + " " + kubeutil.Key(obj)
			if obj.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
				kept = append(kept, key)
			} else {
				deleted = append(deleted, key)
			}
		}
		if err := ao.Disable(ctx, 3*time.Minute); err != nil {
			return err
		}
		say("module disabled: its hooks no longer run and addon-operator deleted its Helm release (the flag is in addon-operator's ConfigMap)")
		if err := printDisabled(ctx, client, os.Stdout, deleted, kept); err != nil {
			return err
		}
	}
	running := "The module keeps running"
	if *disable {
		running = "The module is disabled; the cluster and the webhook keep running"
	}
	fmt.Printf(`
%s

%s until Ctrl-C. Logs are in %s.
In another terminal:

  export KUBECONFIG=%s
  kubectl explain starrocks.spec
  kubectl get starrocksclasses,starrocks -A -o wide
  kubectl -n team-a describe starrocks analytics
%s
`, localNodeNote(), running, dir, cp.KubeconfigPath(), localNodeTry())
	<-ctx.Done()
	fmt.Println()
	return nil
}

// runDir is a fixed place for the control plane's files, so the printed
// kubeconfig path stays the same from run to run.
func runDir() (string, error) {
	if *runDirFlag != "" {
		if err := os.RemoveAll(*runDirFlag); err != nil {
			return "", err
		}
		return *runDirFlag, os.MkdirAll(*runDirFlag, 0o700)
	}
	cache, err := controlplane.CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "run")
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o700)
}

func applyExamples(ctx context.Context, cp *controlplane.ControlPlane, client *kubeutil.Client) error {
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return err
	}
	for _, file := range []string{"starrocksclass.yaml", "starrocks.yaml"} {
		path := filepath.Join(controlplane.RepoRoot(), "docs", "examples", file)
		objs, err := kubeutil.ReadManifests(path)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if ns := obj.GetNamespace(); ns != "" {
				if err := kubeutil.EnsureNamespace(ctx, kube, ns, nil); err != nil {
					return err
				}
			}
			if _, err := client.Apply(ctx, obj, "localrun"); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			say("applied %s %s from docs/examples/%s", obj.GetKind(), kubeutil.Key(obj), file)
		}
	}
	return nil
}

// interrupted reports whether err comes from a child process (a tool
// build, go build) that the terminal's Ctrl-C ended: the signal reaches the
// whole foreground process group, and the child may fail before ctx says so.
func interrupted(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM)
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...)
}
