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

// The local node of `make run` (dev/node), all in this file: the rest of
// localrun runs the module the same with or without it. The node needs root
// (containerd, network namespaces, iptables); without root the run goes on
// without pods, as before.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/certmanager"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/images"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/node"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// localNodeWanted says whether this run gets a node, and why not.
func localNodeWanted() (bool, string) {
	if *noNode {
		return false, "-no-node was given"
	}
	if os.Geteuid() != 0 {
		return false, "the node needs root (containerd, network namespaces, iptables)"
	}
	return true, ""
}

// standinFE keeps the FE stand-in even where the real FE could run.
var standinFE = flag.Bool("standin-fe", false, "run the FE stand-in (dev/cmd/fakefe) in the FE pods even where the real StarRocks FE is built and memory allows")

// realFE says whether the FE pods of this run run the real FE.
var realFE bool

// realFEMemory is the memory the real FE needs free to be chosen: the
// on-node instance's FE pod may use 4 GiB (its memory limit; the JVM's
// -Xmx is 3 GiB of it, pkg/desired JavaHeapMb), and 2 GiB more keep the
// control plane, the other pods and the rest of the machine out of the
// kernel's OOM killer.
const realFEMemory = 6 << 30

// realFEWanted returns the built FE's folder when the FE pods should run
// the real FE, or why not: -standin-fe, no FE source to build from, or
// less MemAvailable (/proc/meminfo) than realFEMemory.
func realFEWanted() (string, string) {
	if *standinFE {
		return "", "-standin-fe was given"
	}
	avail, err := memAvailable()
	if err != nil {
		return "", err.Error()
	}
	if avail < realFEMemory {
		return "", fmt.Sprintf("the real FE needs %d GiB of MemAvailable, this machine has %.1f GiB", realFEMemory>>30, float64(avail)/(1<<30))
	}
	home, err := realfe.Find()
	if err != nil {
		return "", err.Error()
	}
	return home, ""
}

// memAvailable is MemAvailable of /proc/meminfo in bytes: the kernel's
// estimate of what can be allocated without swapping.
func memAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no MemAvailable in /proc/meminfo")
}

// localNodeControlPlane is the control plane's side of the node, nil
// without one.
func localNodeControlPlane() *controlplane.NodeOptions {
	if ok, _ := localNodeWanted(); !ok {
		return nil
	}
	return node.ControlPlaneOptions()
}

// startLocalNode builds the module's images (dev/images: the agent, the
// webhook, the StarRocks stand-ins), starts the node with them imported,
// and returns the global values that point the module at them: only the
// local run's values name these images; the shipped templates do not
// change. Without a node it returns the default globals and a no-op stop.
func startLocalNode(ctx context.Context, cp *controlplane.ControlPlane, dir string) (map[string]any, func(), error) {
	globals := chartrender.DefaultGlobals()
	if ok, why := localNodeWanted(); !ok {
		say("no local node: %s; pods will stay Pending", why)
		return globals, func() {}, nil
	}
	say("building the module's images for the local node (agent, webhook, StarRocks stand-ins)")
	started := time.Now()
	set, err := images.BuildSet(ctx, filepath.Join(dir, "images"))
	if err != nil {
		return nil, nil, err
	}
	if feHome, why := realFEWanted(); feHome == "" {
		say("the FE pods run the FE stand-in (dev/cmd/fakefe): %s", why)
	} else {
		say("the FE pods run the real StarRocks FE built in %s (the image is written once into the tools cache, about 15 s the first time)", feHome)
		if err := set.UseRealFE(feHome); err != nil {
			return nil, nil, err
		}
		realFE = true
	}
	say("starting the local node: containerd, kubelet, kube-proxy, kube-scheduler, CoreDNS, kube-router")
	n, err := node.Start(ctx, cp, node.Options{Dir: filepath.Join(dir, "node"), Images: set.Archives()})
	if err != nil {
		return nil, nil, err
	}
	say("node %s Ready in %s (pods %s, Services %s; logs in %s)", node.Name, time.Since(started).Round(100*time.Millisecond),
		node.PodCIDR, node.ServiceCIDR, n.Dir())
	// Pods start only with their TLS Secrets: cert-manager's own
	// controllers issue the instances' Certificates (dev/certmanager).
	kubeconfig, err := certmanager.Kubeconfig(ctx, cp)
	if err != nil {
		n.Stop()
		return nil, nil, err
	}
	cm, err := certmanager.Start(kubeconfig, dir)
	if err != nil {
		n.Stop()
		return nil, nil, err
	}
	say("cert-manager's controllers issue Certificates (log: %s)", cm.Log)
	globals["modulesImages"] = set.ModulesImages()
	return globals, func() {
		cm.Stop()
		say("stopping the local node (pods, kubelet, containerd; removing its network, mounts and cgroups)")
		n.Stop()
	}, nil
}

// nodeInstance is a Standalone instance of the smallest size the example
// class allows, applied besides the documented examples when the node runs:
// the documented three-FE Cluster asks for more cores than this machine has,
// so only this one's pods are scheduled and reach Ready.
const nodeInstance = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: on-node
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

// applyNodeInstance applies nodeInstance and waits (up to 5 minutes) for it
// to become Available, printing the time from apply to Available.
func applyNodeInstance(ctx context.Context, client *kubeutil.Client) {
	if ok, _ := localNodeWanted(); !ok {
		return
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(nodeInstance), &obj.Object); err != nil {
		say("node instance: %v", err)
		return
	}
	applied := time.Now()
	if _, err := client.Apply(ctx, &obj, "localrun"); err != nil {
		say("apply Starrocks team-a/on-node: %v", err)
		return
	}
	say("applied Starrocks team-a/on-node (Standalone, the smallest size of class example) for the local node")
	deadline := time.Now().Add(5 * time.Minute)
	last := ""
	for time.Now().Before(deadline) {
		sr, err := client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace("team-a").Get(ctx, "on-node", metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(sr.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Available" {
					last = fmt.Sprintf("%v: %v", m["reason"], m["message"])
					if m["status"] == "True" {
						say("Starrocks team-a/on-node Available %s after apply", time.Since(applied).Round(time.Second))
						return
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
	say("Starrocks team-a/on-node not Available 5 minutes after apply (%s); see kubectl -n team-a get pods and their events", last)
}

// localNodeNote is the closing lines' word on pods.
func localNodeNote() string {
	if ok, _ := localNodeWanted(); !ok {
		return `There is no kubelet and no scheduler here: the StatefulSet controller creates the
Pods and PVCs, but no container ever runs, so instances stay Provisioning and
Available=False. Everything else (hooks, webhook, Helm render, status) is real.`
	}
	fe := `StarRocks stand-ins`
	if realFE {
		fe = `the real StarRocks FE (this machine's JDK and the FE built in the
cache) beside a BE stand-in, which the FE never counts alive: it answers no
Thrift heartbeat, so SHOW BACKENDS lists it with Alive false, TablesReplicated
says NoBackendAlive and statements that need a BE fail,`
	}
	return `A real node (` + node.Name + `) runs the pods: containerd and runc, the kubelet,
kube-proxy, kube-scheduler, CoreDNS and kube-router, with the module's
agent and webhook images and ` + fe + ` built here (dev/images), and
cert-manager's controllers issue the certificates. team-a/on-node runs there;
the documented Cluster team-a/analytics asks for more cores than this machine
has, so its pods stay Pending with the scheduler's reason in their events.`
}

// localNodeTry is what a newcomer can try on the node.
func localNodeTry() string {
	if ok, _ := localNodeWanted(); !ok {
		return ""
	}
	return `  kubectl -n team-a get pods,pvc -o wide          # Running, Ready by their probes
  kubectl -n team-a logs d8ms-sr-on-node-0 -c agent
  kubectl -n team-a logs d8ms-sr-on-node-0 -c starrocks  # the FE's own log
  kubectl -n team-a delete pod d8ms-sr-on-node-be-0   # it comes back and rejoins
  kubectl -n team-a describe pod d8ms-sr-analytics-0  # why the Cluster is Pending
  kubectl get nodes -o wide
`
}
