// Command localrun is `make run`: it starts a local control plane (real etcd
// and kube-apiserver on 127.0.0.1), installs the CRDs, applies the documented
// example StarrocksClass and Starrocks, prints what exists and keeps running
// until Ctrl-C, then stops everything it started. Development tooling only.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localrun:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	say("building the local control plane tools (first run only, about 10 minutes on 2 cores)")
	if err := controlplane.BuildTools(os.Stderr); err != nil {
		return err
	}

	dir, err := runDir()
	if err != nil {
		return err
	}
	say("starting etcd and kube-apiserver on 127.0.0.1")
	started := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Dir: dir,
		CRDDirs: []string{
			controlplane.ModuleCRDDir(),
			controlplane.CertManagerCRDDir(),
			controlplane.PrometheusOperatorCRDDir(),
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		say("stopping kube-apiserver and etcd")
		cp.Stop()
	}()
	say("control plane ready in %s", time.Since(started).Round(100*time.Millisecond))

	client, err := kubeutil.NewClient(cp.RESTConfig())
	if err != nil {
		return err
	}
	if err := applyExamples(ctx, cp, client); err != nil {
		return err
	}

	fmt.Println()
	if err := client.PrintTable(ctx, os.Stdout, "StarrocksClasses", "/apis/managed-services.deckhouse.io/v1alpha1/starrocksclasses"); err != nil {
		return err
	}
	if err := client.PrintTable(ctx, os.Stdout, "Starrocks (all namespaces)", "/apis/managed-services.deckhouse.io/v1alpha1/starrocks"); err != nil {
		return err
	}
	fmt.Printf(`
The control plane keeps running until Ctrl-C. In another terminal:

  export KUBECONFIG=%s
  kubectl explain starrocks.spec
  kubectl get starrocksclasses,starrocks -A -o wide

`, cp.KubeconfigPath())
	<-ctx.Done()
	fmt.Println()
	return nil
}

// runDir is a fixed place for the control plane's files, so the printed
// kubeconfig path stays the same from run to run.
func runDir() (string, error) {
	cache := os.Getenv("MANAGED_STARROCKS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache", "managed-starrocks")
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
				_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
				if err != nil && !isAlreadyExists(err) {
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

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...)
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
