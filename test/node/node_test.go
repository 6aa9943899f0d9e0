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

// Package node_test runs the module on a real node (dev/node): its pods
// start from the images built here (dev/images), cert-manager's controllers
// issue their certificates, and their probes make them Ready. These tests
// check what only running containers show; test/e2e keeps checking the
// module's decisions without a node.
package node_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/addonoperator"
	"github.com/deckhouse/managed-starrocks/dev/certmanager"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/images"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
	"github.com/deckhouse/managed-starrocks/dev/node"
)

const ns = "team-a"

// instance is the smallest Standalone of the example class: it fits the
// node's two cores.
const instance = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: db
  namespace: team-a
spec:
  starrocksClassName: example
  type: Standalone
  frontend:
    cpu: {cores: 1, coreFraction: 50}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: 1Gi}
  backend:
    cpu: {cores: 1, coreFraction: 50}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: 1Gi}
`

type env struct {
	t      *testing.T
	ctx    context.Context
	kube   kubernetes.Interface
	client *kubeutil.Client
	ao     *addonoperator.Operator
	node   *node.Node
}

// startModuleOnNode brings up the control plane, the node with the module's
// images, cert-manager, the webhook and the module under addon-operator, and applies the
// example class and the instance; it returns once the instance is
// Available. With realFEHome the FE image is the real FE built there.
func startModuleOnNode(t *testing.T, realFEHome string) *env {
	if os.Geteuid() != 0 {
		t.Skip("the local node needs root")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	// The images and the module's binaries build while the control plane
	// and the node start (the builds wait for the build cache's lock, the
	// node for the machine's: other tests may hold either); the node
	// imports the images once both are done.
	var (
		set               *images.Set
		hooks, webhookBin string
		building          sync.WaitGroup
	)
	built := make(chan error, 1)
	building.Add(1)
	go func() {
		defer building.Done()
		built <- func() (err error) {
			if set, err = images.BuildSet(ctx, filepath.Join(dir, "images")); err != nil {
				return err
			}
			if realFEHome != "" {
				if err := set.UseRealFE(realFEHome); err != nil {
					return err
				}
			}
			bin := filepath.Join(dir, "bin")
			if hooks, err = moduleloop.BuildBinary(ctx, moduleloop.HooksPackage, bin); err != nil {
				return err
			}
			webhookBin, err = moduleloop.BuildBinary(ctx, moduleloop.WebhookPackage, bin)
			return err
		}()
	}()
	// Runs before dir is removed, also when the node fails to start.
	t.Cleanup(func() { cancel(); building.Wait() })
	crdDirs, err := moduleloop.CRDDirs()
	if err != nil {
		t.Fatal(err)
	}
	// metrics-server for testCNAutoscaling's HorizontalPodAutoscaler.
	cp, n := node.StartForTest(t, controlplane.Options{CRDDirs: crdDirs}, node.Options{MetricsServer: true})
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	for _, archive := range set.Archives() {
		if err := n.ImportImage(ctx, archive); err != nil {
			t.Fatal(err)
		}
	}
	if err := moduleloop.PrepareCluster(ctx, cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	// As Deckhouse's cert-manager, in the namespace PrepareCluster made.
	certmanager.StartForTest(t, cp)
	moduleConfig, webhookKubeconfig, err := moduleloop.Identities(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	webhook, err := moduleloop.PrepareWebhook(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(webhook.Stop)
	redirect, err := addonoperator.RedirectWebhooks(controlplane.PlatformConfig(cp.RESTConfig()), &webhook.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redirect.Stop)
	globals := chartrender.DefaultGlobals()
	globals["modulesImages"] = set.ModulesImages()
	var log bytes.Buffer
	ao, err := addonoperator.Start(ctx, addonoperator.Options{
		Identity: moduleConfig, AdminConfig: cp.RESTConfig(), HooksBinary: hooks,
		Dir: filepath.Join(dir, "addon-operator"), Settings: map[string]any{}, Globals: globals, Log: &log,
		// No test here measures addon-operator's memory (test/e2e does).
		GOGC: controlplane.ServerGOGC,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ao.Stop)
	if err := ao.WaitRelease(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	// The webhook's account and RBAC come with the release.
	if err := webhook.Start(ctx, webhookBin, webhookKubeconfig); err != nil {
		t.Fatal(err)
	}

	client, err := kubeutil.NewClient(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, kube: kube, client: client, ao: ao, node: n}
	class, err := kubeutil.ReadManifests(filepath.Join(controlplane.RepoRoot(), "docs", "examples", "starrocksclass.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range class {
		if _, err := client.Apply(ctx, obj, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := kubeutil.EnsureNamespace(ctx, kube, ns, nil); err != nil {
		t.Fatal(err)
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(instance), &obj.Object); err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	if _, err := client.Apply(ctx, &obj, "test"); err != nil {
		t.Fatal(err)
	}
	e.waitAvailable(5 * time.Minute)
	t.Logf("instance Available %s after apply", time.Since(applied).Round(time.Second))
	return e
}

func (e *env) available() (bool, string) { return e.availableOf(ns, "db") }

func (e *env) waitAvailable(timeout time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		var ok bool
		if ok, last = e.available(); ok {
			return
		}
		time.Sleep(time.Second)
	}
	e.t.Fatalf("instance not Available in %s: %s", timeout, last)
}

func (e *env) pod(name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.kube.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitNewPodReady waits until pod name exists with a UID other than old and
// is Ready.
func (e *env) waitNewPodReady(name string, old types.UID, timeout time.Duration) *corev1.Pod {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		p, err := e.kube.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
		if err == nil && p.UID != old && ready(p) {
			return p
		}
		time.Sleep(time.Second)
	}
	e.t.Fatalf("pod %s did not come back Ready in %s", name, timeout)
	return nil
}

func TestOnNode(t *testing.T) {
	e := startModuleOnNode(t, "")
	pods := []string{"d8ms-sr-db-0", "d8ms-sr-db-be-0"}
	for _, name := range pods {
		p := e.pod(name)
		if p.Status.Phase != corev1.PodRunning || !ready(p) {
			t.Fatalf("pod %s is %s, Ready %v", name, p.Status.Phase, ready(p))
		}
	}

	// 4. The rendered security contexts hold in the running containers,
	// read from the kernel (the node is this machine): the process's user,
	// whether its root filesystem is read-only, and no ServiceAccount token
	// in the StarRocks containers (the agent has its own, to report).
	t.Run("security contexts hold in the running containers", func(t *testing.T) {
		for _, name := range pods {
			p := e.pod(name)
			for _, c := range p.Spec.Containers {
				pid := e.containerPID(p, c.Name)
				uid := procUID(t, pid)
				if c.SecurityContext == nil || c.SecurityContext.RunAsUser == nil && (p.Spec.SecurityContext == nil || p.Spec.SecurityContext.RunAsUser == nil) {
					t.Errorf("%s/%s: no runAsUser rendered", name, c.Name)
				}
				if uid == "0" {
					t.Errorf("%s/%s runs as root", name, c.Name)
				}
				want := p.Spec.SecurityContext.RunAsUser
				if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
					want = c.SecurityContext.RunAsUser
				}
				if want != nil && uid != strconv.FormatInt(*want, 10) {
					t.Errorf("%s/%s runs as uid %s, rendered %d", name, c.Name, uid, *want)
				}
				ro := c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem
				if got := rootReadOnly(t, pid); got != ro {
					t.Errorf("%s/%s: root filesystem read-only %v, rendered %v", name, c.Name, got, ro)
				}
				_, err := os.Stat(fmt.Sprintf("/proc/%d/root/var/run/secrets/kubernetes.io/serviceaccount/token", pid))
				hasToken := err == nil
				if c.Name == "starrocks" && hasToken {
					t.Errorf("%s/%s has a ServiceAccount token", name, c.Name)
				}
				if c.Name == "agent" && !hasToken {
					t.Errorf("%s/%s has no ServiceAccount token to report with", name, c.Name)
				}
				t.Logf("%s/%s: pid %d uid %s, read-only root %v, token %v", name, c.Name, pid, uid, ro, hasToken)
			}
		}
	})

	// The Standalone's client, rollout, deleted pods and certificate
	// rotation; beside them (test 1b) a Cluster of its own, on which the
	// NetworkPolicy test runs while it comes up (test 3), then whose every
	// pod template changes: it rolls its pods in the documented order, one
	// at a time; and CN stand-ins under an HPA. They share nothing but the
	// node; side by side they take the time of the longest, not of all
	// (make test's warm budget). One wait: the NetworkPolicy test dials
	// the Standalone's pods as the other tenant's, so the Standalone's
	// restarts begin once it is done.
	t.Run("instances side by side", func(t *testing.T) {
		netpolDone := make(chan struct{})
		clusterLane := false
		t.Run("cluster", func(t *testing.T) {
			clusterLane = true
			t.Parallel()
			// 3. NetworkPolicy, enforced by the node's kube-router
			// (networkpolicy_test.go).
			t.Run("network policy", e.testNetworkPolicy)
			close(netpolDone)
			t.Run("cluster rollout order", e.testClusterRolloutOrder)
			t.Run("cluster certificate rotation without a failed query", e.testClusterCertificateRotation)
		})
		if !clusterLane {
			// Left out by go test -run: nobody dials the Standalone.
			close(netpolDone)
		}
		t.Run("CN stand-ins autoscale on CPU", func(t *testing.T) {
			t.Parallel()
			e.testCNAutoscaling(t)
		})
		t.Run("standalone", func(t *testing.T) {
			t.Parallel()
			// Reads only: the NetworkPolicy test may dial meanwhile.
			t.Run("USAGE's mysql client pod connects over verified TLS", e.testUSAGEClient)
			waited := time.Now()
			<-netpolDone
			t.Logf("waited %s for the NetworkPolicy test to leave these pods", time.Since(waited).Round(time.Second))
			// 1. A change that needs a BE restart rolls the BE: the hooks delete its
			// pod, its preStop stops the BE gracefully (the stand-in records it on
			// its volume), and the new pod is Ready before the instance is Available.
			t.Run("rollout runs the preStop and the pod comes back Ready", func(t *testing.T) {
				be := e.pod(pods[1])
				patch := []byte(`{"spec":{"configuration":{"loadProcessMaxMemoryLimitPercent":40}}}`)
				if _, err := e.client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Patch(e.ctx, "db", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
				started := time.Now()
				e.waitNewPodReady(pods[1], be.UID, 4*time.Minute)
				e.waitAvailable(3 * time.Minute)
				t.Logf("BE rolled and the instance Available in %s", time.Since(started).Round(time.Second))
				stops, err := os.ReadFile(filepath.Join(e.node.Dir(), "volumes", ns+"_storage-"+pods[1], images.StopsLog))
				if err != nil {
					t.Fatalf("the BE stand-in recorded no stop: %v", err)
				}
				if !strings.Contains(string(stops), "graceful") {
					t.Errorf("the BE did not stop gracefully:\n%s", stops)
				}
				t.Logf("BE stops:\n%s", stops)
			})

			// 5. A deleted pod comes back with its volume and the instance is
			// Available again: the FE rejoins with its meta, the BE with its storage.
			t.Run("a deleted pod comes back and rejoins with its volume", func(t *testing.T) {
				for _, name := range pods {
					old := e.pod(name)
					claims := map[string]types.UID{}
					for _, v := range old.Spec.Volumes {
						if v.PersistentVolumeClaim != nil {
							pvc, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(e.ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
							if err != nil {
								t.Fatal(err)
							}
							claims[pvc.Name] = pvc.UID
						}
					}
					if len(claims) == 0 {
						t.Fatalf("pod %s has no volume claim", name)
					}
					if err := e.kube.CoreV1().Pods(ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					started := time.Now()
					e.waitNewPodReady(name, old.UID, 3*time.Minute)
					e.waitAvailable(3 * time.Minute)
					t.Logf("%s deleted: back Ready and the instance Available in %s", name, time.Since(started).Round(time.Second))
					for claim, uid := range claims {
						pvc, err := e.kube.CoreV1().PersistentVolumeClaims(ns).Get(e.ctx, claim, metav1.GetOptions{})
						if err != nil || pvc.UID != uid {
							t.Errorf("%s came back without its volume %s (was %s, now %v %v)", name, claim, uid, pvc.UID, err)
						}
					}
				}
			})

			// 2. A renewed certificate while a client queries over TLS: the FE is
			// restarted and serves the new certificate, the BE is left alone.
			t.Run("certificate rotation under load", e.testCertificateRotation)
		})
	})

	// 6. Module disable leaves the pods running: addon-operator stops the
	// hooks and deletes the release; the same pods keep running, not restarted.
	t.Run("module disable leaves the pods running", func(t *testing.T) {
		before := map[string]*corev1.Pod{}
		for _, name := range pods {
			before[name] = e.pod(name)
		}
		if err := e.ao.Disable(e.ctx, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
		// Disable returns once the release's Secrets are gone: Helm has
		// deleted what was in the release. A pod would go only through the
		// garbage collector, after its owner (the StatefulSet, written by
		// the hooks, not Helm) or the namespace: both are there, not being
		// deleted, so nothing is on its way to the pods (no fixed wait
		// for the collector to act or not).
		if nsObj, err := e.kube.CoreV1().Namespaces().Get(e.ctx, ns, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		} else if nsObj.DeletionTimestamp != nil {
			t.Fatalf("after disable namespace %s is being deleted", ns)
		}
		for _, name := range pods {
			p := e.pod(name)
			if p.DeletionTimestamp != nil {
				t.Errorf("after disable pod %s is being deleted", name)
			}
			owners := 0
			for _, ref := range p.OwnerReferences {
				if ref.Kind != "StatefulSet" {
					continue
				}
				owners++
				sts, err := e.kube.AppsV1().StatefulSets(ns).Get(e.ctx, ref.Name, metav1.GetOptions{})
				switch {
				case err != nil:
					t.Errorf("after disable the StatefulSet %s of pod %s: %v", ref.Name, name, err)
				case sts.UID != ref.UID || sts.DeletionTimestamp != nil:
					t.Errorf("after disable the StatefulSet %s of pod %s is another (uid %s, was %s) or being deleted (%v)", ref.Name, name, sts.UID, ref.UID, sts.DeletionTimestamp)
				}
			}
			if owners != 1 {
				t.Errorf("pod %s has %d StatefulSet owners, want 1", name, owners)
			}
		}
		for _, name := range pods {
			p := e.pod(name)
			if p.UID != before[name].UID || p.Status.Phase != corev1.PodRunning || !ready(p) {
				t.Errorf("after disable pod %s: uid %s (was %s), %s, Ready %v", name, p.UID, before[name].UID, p.Status.Phase, ready(p))
			}
			for i, c := range p.Status.ContainerStatuses {
				if c.RestartCount != before[name].Status.ContainerStatuses[i].RestartCount {
					t.Errorf("after disable container %s/%s restarted", name, c.Name)
				}
			}
		}
	})
}

// containerPID is the host PID of a running container's process, from the
// node's containerd (the pod status names the container).
func (e *env) containerPID(p *corev1.Pod, container string) int {
	e.t.Helper()
	for _, st := range p.Status.ContainerStatuses {
		if st.Name != container {
			continue
		}
		id := strings.TrimPrefix(st.ContainerID, "containerd://")
		out, err := exec.Command("ctr", "--address", e.node.ContainerdSocket(), "--namespace", "k8s.io", "tasks", "ls").Output()
		if err != nil {
			e.t.Fatal(err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == id {
				pid, err := strconv.Atoi(f[1])
				if err != nil {
					e.t.Fatal(err)
				}
				return pid
			}
		}
	}
	e.t.Fatalf("no running task for %s/%s", p.Name, container)
	return 0
}

// procUID is the real uid of a process.
func procUID(t *testing.T, pid int) string {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			return f[1]
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return ""
}

// rootReadOnly says whether / is mounted read-only in the process's mount
// namespace.
func rootReadOnly(t *testing.T, pid int) bool {
	t.Helper()
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			return slices.Contains(strings.Split(f[5], ","), "ro")
		}
	}
	t.Fatalf("no / in /proc/%d/mountinfo", pid)
	return false
}
