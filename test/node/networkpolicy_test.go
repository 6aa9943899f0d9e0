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

package node_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

// The NetworkPolicy test runs on the Cluster of the cluster lane
// (rolloutorder_test.go, team-b), which lets the pods of the namespaces
// labelled clientsLabel reach its client ports; it starts with the lane,
// so the test sees it before its accounts are ready. TestOnNode's
// Standalone in team-a is the other tenant. A tenant of its own for this
// test would not fit on the node beside those two (tinyClass).
const (
	clientsNS     = "team-b-clients"
	otherTenantNS = "elsewhere"
	monitoringNS  = "d8-monitoring"
	clientsLabel  = "clients-of-team-b"
)

// The ports of pkg/instanceobjects/templates/networkpolicy.yaml, by who
// listens on them (the stand-ins listen where StarRocks does, dev/cmd/fakefe
// and dev/cmd/fakebe; the agent, in the FE pods only, on 8090).
var (
	feClientPorts   = []int{9030, 8443}
	feInternalPorts = []int{9010, 9020}
	beInternalPorts = []int{9050, 9060, 8040, 8060}
	feMetricsPorts  = []int{8030, 8090}
	beMetricsPorts  = []int{8040}
)

// peer is a pod whose network namespace the test connects from (the host
// is the node: it enters the pod's namespace) and whose listening sockets it
// reads.
type peer struct {
	name  string // namespace/pod
	ip    string
	netns string // /proc/<pid>/ns/net of a process of the pod
	pid   int
}

// connection is one attempt from a peer to a port of another.
type connection struct {
	from *peer
	to   *peer
	port int
	want bool // should connect
}

func (c connection) String() string {
	return fmt.Sprintf("%s -> %s:%d", c.from.name, c.to.name, c.port)
}

// testNetworkPolicy runs the module's NetworkPolicies under the node's
// enforcer (kube-router) and connects from real pods: another tenant
// reaches no port of an instance, an allowed namespace reaches the client
// ports only once the instance is AccountsReady, the instance's pods reach
// each other and Deckhouse's monitoring reaches the metrics ports. It
// applies the cluster lane's Cluster and returns once it is Available.
func (e *env) testNetworkPolicy(t *testing.T) {
	for name, labels := range map[string]map[string]string{
		clusterNS: nil, clientsNS: {clientsLabel: "yes"}, otherTenantNS: nil, monitoringNS: nil,
	} {
		if err := kubeutil.EnsureNamespace(e.ctx, e.kube, name, labels); err != nil {
			t.Fatal(err)
		}
	}
	// The last, the Standalone's own namespace: another tenant to the
	// Cluster. No probe in the Cluster's namespace: the rollout order test
	// counts every pod there that turns Ready.
	probes := e.startProbes(t, clientsNS, otherTenantNS, monitoringNS, ns)
	clients, other, monitoring, standaloneNS := probes[0], probes[1], probes[2], probes[3]

	applied := time.Now()
	e.applyCluster(t)

	// The client ports are opened by the hooks once an agent reports the
	// accounts ready (desired.go: ClientPortsOpen = AccountsReady && ...);
	// until then the NetworkPolicy has no client rule. Watched from the
	// moment the first FE listens: an allowed namespace is refused while
	// the instance is not AccountsReady, seen before and after the attempt.
	t.Run("an allowed namespace does not reach the client ports before AccountsReady", func(t *testing.T) {
		seen := map[int]bool{}
		deadline := time.Now().Add(6 * time.Minute)
		for len(seen) < len(feClientPorts) && time.Now().Before(deadline) {
			if e.accountsReady(clusterNS, clusterName) {
				break
			}
			fe := e.peerOf(t, clusterNS, clusterFEs[0], false)
			if fe == nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for _, port := range feClientPorts {
				if seen[port] || !listening(fe.pid, port) {
					continue
				}
				err := dialFrom(clients.netns, fe.ip, port, 2*time.Second)
				if e.accountsReady(clusterNS, clusterName) {
					break
				}
				if err == nil {
					t.Errorf("%s reached %s:%d while the instance is not AccountsReady", clients.name, fe.name, port)
				}
				t.Logf("%s -> %s:%d before AccountsReady: %v", clients.name, fe.name, port, err)
				seen[port] = true
			}
			time.Sleep(200 * time.Millisecond)
		}
		if len(seen) < len(feClientPorts) {
			t.Fatalf("the FE listened on only %v of the client ports %v before the instance was AccountsReady: nothing was shown", sortedPorts(seen), feClientPorts)
		}
	})
	e.waitAvailableOf(t, clusterNS, clusterName, 8*time.Minute)
	t.Logf("Cluster of 3 FEs and 1 BE Available %s after apply", time.Since(applied).Round(time.Second))
	var fes []*peer
	for _, name := range clusterFEs {
		fes = append(fes, e.peerOf(t, clusterNS, name, true))
	}
	be := e.peerOf(t, clusterNS, clusterBEs[0], true)
	otherFE := e.peerOf(t, ns, "d8ms-sr-db-0", true)
	otherBE := e.peerOf(t, ns, "d8ms-sr-db-be-0", true)

	// The hooks open the ports with the condition; the NetworkPolicy is
	// applied by Helm and kube-router after it: waited for. Every FE
	// serves clients (the Service picks any).
	t.Run("an allowed namespace reaches the client ports once AccountsReady", func(t *testing.T) {
		var conns []connection
		for _, fe := range fes {
			for _, port := range feClientPorts {
				conns = append(conns, connection{clients, fe, port, true})
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			failed := check(t, conns)
			if len(failed) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after AccountsReady still refused: %v", failed)
			}
			time.Sleep(time.Second)
		}
	})

	t.Run("the other ports", func(t *testing.T) {
		var conns []connection
		add := func(from, to *peer, ports []int, want bool) {
			for _, p := range ports {
				conns = append(conns, connection{from, to, p, want})
			}
		}
		for _, fe := range fes {
			// The allowed namespace: the client ports, nothing
			// internal, and nothing of the other tenant.
			add(clients, fe, feInternalPorts, false)
			add(clients, fe, feMetricsPorts, false)
			// Another tenant (a namespace no instance allows, and the
			// other instance's own namespace): no port at all.
			for _, from := range []*peer{other, standaloneNS} {
				add(from, fe, feClientPorts, false)
				add(from, fe, feInternalPorts, false)
				add(from, fe, feMetricsPorts, false)
			}
			// The instance's own pods reach each other on every port:
			// the FEs each other's edit log and thrift ports too.
			add(fe, be, beInternalPorts, true)
			add(be, fe, feClientPorts, true)
			add(be, fe, feInternalPorts, true)
			for _, to := range fes {
				if to != fe {
					add(fe, to, feInternalPorts, true)
				}
			}
			// Deckhouse's monitoring: the metrics ports and nothing else.
			add(monitoring, fe, feMetricsPorts, true)
			add(monitoring, fe, feClientPorts, false)
			add(monitoring, fe, feInternalPorts, false)
		}
		add(clients, be, beInternalPorts, false)
		add(clients, be, beMetricsPorts, false)
		add(clients, otherFE, feClientPorts, false)
		for _, from := range []*peer{other, standaloneNS} {
			add(from, be, beInternalPorts, false)
			add(from, be, beMetricsPorts, false)
		}
		add(other, otherFE, feClientPorts, false)
		add(other, otherFE, feInternalPorts, false)
		add(other, otherBE, beInternalPorts, false)
		// An instance's own namespace reaches its client ports.
		add(standaloneNS, otherFE, feClientPorts, true)
		add(standaloneNS, otherBE, beInternalPorts, false)
		add(otherFE, otherBE, beInternalPorts, true)
		add(otherBE, otherFE, feInternalPorts, true)
		add(monitoring, be, beMetricsPorts, true)
		add(monitoring, be, []int{9050, 9060, 8060}, false)
		add(monitoring, otherFE, feMetricsPorts, true)
		add(monitoring, otherBE, beMetricsPorts, true)
		add(monitoring, otherFE, feClientPorts, false)
		add(monitoring, otherFE, feInternalPorts, false)
		add(monitoring, otherBE, []int{9050, 9060, 8060}, false)
		if failed := check(t, conns); len(failed) > 0 {
			for _, c := range failed {
				t.Errorf("%s: want connected %v", c, c.want)
			}
		}
		t.Logf("%d connections as the NetworkPolicies say", len(conns))
	})
}

// check makes every connection at once and returns those whose outcome is
// not the wanted one. A refused connection counts only if the port listens
// (read in the target's network namespace): else the test proves nothing.
func check(t *testing.T, conns []connection) []connection {
	t.Helper()
	for _, c := range conns {
		if !listening(c.to.pid, c.port) {
			t.Fatalf("%s: nothing listens on %s:%d, a refusal would prove nothing", c, c.to.name, c.port)
		}
	}
	got := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = dialFrom(c.from.netns, c.to.ip, c.port, 3*time.Second)
		}()
	}
	wg.Wait()
	var failed []connection
	for i, c := range conns {
		if (got[i] == nil) != c.want {
			failed = append(failed, c)
		}
	}
	return failed
}

// dialFrom connects to ip:port from the network namespace at netns, as a
// process of that pod would. A socket belongs to the namespace of the
// thread that made it: the calling goroutine, locked to its thread, enters
// the namespace, dials and returns the thread to the test's namespace
// before unlocking it. The thread must never end: the test's servers run
// with Pdeathsig, which the kernel sends when the thread that forked them
// ends (prctl(2) PR_SET_PDEATHSIG), and a goroutine that exits locked ends
// its thread (TestDialFromKeepsTheTestsChildrenAlive).
func dialFrom(netns, ip string, port int, timeout time.Duration) error {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer own.Close()
	f, err := os.Open(netns)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter %s: %w", netns, err)
	}
	c, dialErr := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), timeout)
	if dialErr == nil {
		c.Close()
	}
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
		// Neither unlocked (it would run the test in the pod's namespace)
		// nor ended (its children would die): stop the test here.
		panic("return to the test's network namespace: " + err.Error())
	}
	runtime.UnlockOSThread()
	return dialErr
}

// listening says whether a socket listens on port in the network namespace
// of pid (/proc/<pid>/net/tcp and tcp6: local address "…:PORT" in hex,
// state 0A is LISTEN).
func listening(pid, port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			if fs := strings.Fields(line); len(fs) > 3 && strings.HasSuffix(fs[1], suffix) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// startProbes runs a pod that only sleeps in each namespace, all at once:
// the test connects from their network namespaces. They are deleted when
// the test ends.
func (e *env) startProbes(t *testing.T, namespaces ...string) []*peer {
	t.Helper()
	name := "netpol-probe"
	for _, namespace := range namespaces {
		e.createSleeper(t, namespace, name)
	}
	peers := make([]*peer, len(namespaces))
	deadline := time.Now().Add(2 * time.Minute)
	for i, namespace := range namespaces {
		for {
			if peers[i] = e.peerOf(t, namespace, name, false); peers[i] != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("probe pod in %s not running in 2 minutes", namespace)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	return peers
}

// peerOf is a running pod as a peer, or nil (or a failed test, with must)
// while it has no IP or no running container yet.
func (e *env) peerOf(t *testing.T, namespace, name string, must bool) *peer {
	t.Helper()
	p, err := e.kube.CoreV1().Pods(namespace).Get(e.ctx, name, metav1.GetOptions{})
	if err == nil && p.Status.PodIP != "" {
		for _, st := range p.Status.ContainerStatuses {
			if st.State.Running == nil {
				continue
			}
			if pid := e.taskPID(t, strings.TrimPrefix(st.ContainerID, "containerd://")); pid > 0 {
				return &peer{name: namespace + "/" + name, ip: p.Status.PodIP, netns: fmt.Sprintf("/proc/%d/ns/net", pid), pid: pid}
			}
		}
	}
	if must {
		t.Fatalf("pod %s/%s has no running container (%v)", namespace, name, err)
	}
	return nil
}

// taskPID is the host PID of a running container, from the node's
// containerd, or 0.
func (e *env) taskPID(t *testing.T, id string) int {
	t.Helper()
	out, err := exec.Command("ctr", "--address", e.node.ContainerdSocket(), "--namespace", "k8s.io", "tasks", "ls").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
			pid, _ := strconv.Atoi(f[1])
			return pid
		}
	}
	return 0
}

func (e *env) accountsReady(namespace, name string) bool {
	status, _ := e.conditionOf(namespace, name, "AccountsReady")
	return status == "True"
}

func sortedPorts(m map[int]bool) []int {
	var ports []int
	for p := range m {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	return ports
}
