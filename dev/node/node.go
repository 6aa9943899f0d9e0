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

// Package node gives the local control plane (dev/controlplane) one real
// node on this machine, so pods run: containerd and runc from Debian with
// the CRI on, CNI bridge networking, a kubelet, kube-proxy (iptables mode),
// kube-scheduler, CoreDNS for the cluster domain and kube-router's
// NetworkPolicy controller. It is development tooling for tests and `make run`:
// nothing here is shipped in the module bundle.
//
// Everything lives under one run directory (containerd's socket, state and
// root, the kubelet's root, CNI state, logs); Stop removes what Start made
// on the machine (pods, mounts, network namespaces, the bridge, iptables
// chains, ipsets and nftables tables, kubepods cgroups, the blackhole route), so a
// test leaves the machine as it found it.
//
// Addresses are in 198.18.0.0/15, reserved for benchmarking (RFC 2544):
// pods in 198.18.0.0/24 on the bridge, Services in 198.19.0.0/16. A
// blackhole route for the whole /15 means nothing addressed there can leave
// the machine; the bridge's own /24 route is more specific, so local pods
// are reached. The apiserver stays on loopback; pods reach it through a
// forwarder on the bridge's address.
//
// One node runs on a machine at a time (kube-proxy and the kubelet own
// machine-wide iptables chains): Start waits for a lock file.
package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/machinelock"
	"github.com/deckhouse/managed-starrocks/dev/netnsdir"
)

// The node's fixed addresses and names. One node per machine makes fixed
// values safe and lets the docs name them.
const (
	Name = "local-node"
	// BenchmarkRange holds every address the node hands out; the host has
	// a blackhole route for it while a node runs.
	BenchmarkRange = "198.18.0.0/15"
	PodCIDR        = "198.18.0.0/24"
	ServiceCIDR    = "198.19.0.0/16"
	// Gateway is the bridge's address on the host: the pods' default route,
	// the kubelet's node IP, CoreDNS (the pods' nameserver) and the
	// apiserver forwarder listen there.
	Gateway = "198.18.0.1"
	Bridge  = "msr0"
	// ClusterDomain is what CoreDNS answers; nothing else is resolved.
	ClusterDomain = "cluster.local"

	lockFile     = "/run/lock/managed-starrocks-node.lock"
	guardComment = "managed-starrocks-node egress guard"
	cniBinDir    = "/usr/lib/cni"
)

// ControlPlaneOptions is what dev/controlplane needs to serve this node.
func ControlPlaneOptions() *controlplane.NodeOptions {
	return &controlplane.NodeOptions{Name: Name, ServiceCIDR: ServiceCIDR, AdvertiseAddress: Gateway}
}

// Options configure a Node.
type Options struct {
	// Dir is the run directory; a new temporary one when empty (removed by
	// Stop).
	Dir string
	// Images are image archives (docker or OCI) imported into containerd
	// before the kubelet starts, besides the node's own pause and busybox.
	Images []string
	// MetricsServer also runs metrics-server and registers it as the
	// metrics.k8s.io APIService (metrics.go), so HorizontalPodAutoscalers
	// read pods' CPU and memory; Start then returns once the API is
	// Available. Off by default: it costs a process and a scrape of the
	// kubelet every 10 s that most tests do not need.
	MetricsServer bool
	// Machine is the machine lock, held by the caller (LockMachine), who
	// wants the machine to itself around the node (a test comparing the
	// machine before and after); Stop leaves it held. Start takes the lock
	// itself when nil.
	Machine *Machine
}

// Machine is the machine-wide node lock, held: one node runs on a machine
// at a time. It also holds dev/machinelock exclusively: no other test
// changes the machine meanwhile (a throwaway containerd of dev/images).
type Machine struct {
	f             *os.File
	unlockChanges func()
}

// LockMachine takes the machine lock, waiting for a running node to stop
// and for other tests' changes to the machine to be undone, and removes
// what a node killed before it could stop left behind: from here the
// machine is as it will be found again once the caller's node stops (a
// test takes its "before" look now).
func LockMachine(ctx context.Context) (*Machine, error) {
	f, err := acquireLock(ctx)
	if err != nil {
		return nil, err
	}
	// The node lock first, then the machine lock: a changer holds only the
	// machine lock, so no two take both in the other order.
	unlockChanges, err := machinelock.Check(ctx)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := recoverDeadNode(f); err != nil {
		unlockChanges()
		f.Close()
		return nil, err
	}
	return &Machine{f: f, unlockChanges: unlockChanges}, nil
}

// Unlock lets the next node run and other tests change the machine again.
func (m *Machine) Unlock() {
	m.unlockChanges()
	m.f.Close()
}

// Node is a running node.
type Node struct {
	dir    string
	ownDir bool
	cp     *controlplane.ControlPlane
	lock   *os.File
	before *machineState
	// releaseNetns gives back /run/netns's mount when this node was its
	// last user (dev/netnsdir): containerd mounts it for the pods' network
	// namespaces.
	releaseNetns func() error

	procs     []*process // in start order; stopped in reverse
	forwarder net.Listener
	fwdWG     sync.WaitGroup
	// The volume provisioner (volumes.go) runs until stopVolumes.
	stopVolumes context.CancelFunc
	volumesWG   sync.WaitGroup

	containerdSock string
	bridgeMade     bool
	routeMade      bool
	callersLock    bool // Options.Machine: Stop leaves the lock held
}

// Start brings up the node against cp (started with ControlPlaneOptions and
// ControllerManager) and waits until the Node is Ready. On error everything
// started is stopped and removed again.
func Start(ctx context.Context, cp *controlplane.ControlPlane, opts Options) (_ *Node, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the local node needs root (containerd, network namespaces, iptables)")
	}
	n := &Node{dir: opts.Dir, cp: cp}
	if n.dir == "" {
		if n.dir, err = os.MkdirTemp("", "managed-starrocks-node-"); err != nil {
			return nil, err
		}
		n.ownDir = true
	}
	if opts.Machine != nil {
		n.lock, n.callersLock = opts.Machine.f, true
	} else if n.lock, err = acquireLock(ctx); err != nil {
		return nil, err
	}
	if err := recoverDeadNode(n.lock); err != nil {
		if !n.callersLock {
			n.lock.Close()
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	if n.before, err = captureMachineState(); err != nil {
		return nil, err
	}
	if err := n.recordInLock(); err != nil {
		return nil, err
	}
	if n.releaseNetns, err = netnsdir.Use(); err != nil {
		return nil, err
	}
	bins, err := tools()
	if err != nil {
		return nil, err
	}
	if err := n.setupNetwork(); err != nil {
		return nil, err
	}
	if err := n.startForwarder(); err != nil {
		return nil, err
	}
	if err := n.startContainerd(ctx); err != nil {
		return nil, err
	}
	own, err := n.buildOwnImages(ctx)
	if err != nil {
		return nil, err
	}
	for _, img := range append([]string{own}, opts.Images...) {
		if err := n.ImportImage(ctx, img); err != nil {
			return nil, err
		}
	}
	if err := n.startKubelet(bins["kubelet"]); err != nil {
		return nil, err
	}
	if err := n.startKubeProxy(bins["kube-proxy"]); err != nil {
		return nil, err
	}
	if err := n.startScheduler(bins["kube-scheduler"]); err != nil {
		return nil, err
	}
	if err := n.startCoreDNS(ctx, bins["coredns"]); err != nil {
		return nil, err
	}
	if err := n.waitReady(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	// kube-router reads the Node at start (it must be registered).
	if err := n.startNetworkPolicies(ctx, bins["kube-router"]); err != nil {
		return nil, err
	}
	if opts.MetricsServer {
		if err := n.startMetricsServer(ctx); err != nil {
			return nil, err
		}
	}
	volumesCtx, stopVolumes := context.WithCancel(context.Background())
	n.stopVolumes = stopVolumes
	if err := n.startVolumes(volumesCtx); err != nil {
		return nil, err
	}
	return n, nil
}

// Dir is the node's run directory (logs are <component>.log there).
func (n *Node) Dir() string { return n.dir }

// ContainerdSocket is the address `ctr --address` takes.
func (n *Node) ContainerdSocket() string { return n.containerdSock }

func tools() (map[string]string, error) {
	bins := map[string]string{}
	for _, name := range []string{"kubelet", "kube-proxy", "kube-scheduler", "coredns", "kube-router"} {
		p, err := controlplane.Tool(name)
		if err != nil {
			return nil, err
		}
		bins[name] = p
	}
	for _, name := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip6tables", "ip", "nft", "ipset"} {
		if _, err := exec.LookPath(name); err != nil {
			return nil, fmt.Errorf("%s not found: the node needs the Debian packages containerd, runc, containernetworking-plugins, iptables, nftables, iproute2, ipset (.ci/run installs them)", name)
		}
	}
	if _, err := os.Stat(filepath.Join(cniBinDir, "bridge")); err != nil {
		return nil, fmt.Errorf("CNI plugins not found in %s: install the Debian package containernetworking-plugins", cniBinDir)
	}
	return bins, nil
}

// acquireLock takes the machine-wide node lock, waiting for another node
// (another test binary, a `make run`) to stop.
func acquireLock(ctx context.Context) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(lockFile), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			return f, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("another local node holds %s: %w", lockFile, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// setupNetwork makes the bridge with the gateway address (CNI's bridge
// plugin would make it on the first pod, but CoreDNS and the forwarder
// listen on it before) and the blackhole route.
func (n *Node) setupNetwork() error {
	if err := run("ip", "link", "add", Bridge, "type", "bridge"); err != nil {
		return err
	}
	n.bridgeMade = true
	if err := run("ip", "addr", "add", Gateway+"/24", "dev", Bridge); err != nil {
		return err
	}
	if err := run("ip", "link", "set", Bridge, "up"); err != nil {
		return err
	}
	// The CNI bridge plugin turns on IP forwarding for its gateway. Pods get
	// no default route (only BenchmarkRange, see the CNI config), and this
	// guard drops anything from the bridge addressed outside the range all
	// the same: nothing a pod sends is routed off the machine.
	if err := run("iptables", "--wait", "-I", "FORWARD", "-i", Bridge, "!", "-d", BenchmarkRange,
		"-m", "comment", "--comment", guardComment, "-j", "DROP"); err != nil {
		return err
	}
	if !n.before.hasBlackhole {
		if err := run("ip", "route", "add", "blackhole", BenchmarkRange); err != nil {
			return err
		}
		n.routeMade = true
	}
	return nil
}

// startForwarder forwards Gateway:<apiserver port> to the apiserver on
// loopback: the kubernetes Service's endpoint (the advertised address) for
// pods, while the apiserver itself stays bound to 127.0.0.1.
func (n *Node) startForwarder() error {
	u, err := url.Parse(n.cp.RESTConfig().Host)
	if err != nil {
		return err
	}
	target := u.Host
	l, err := net.Listen("tcp", net.JoinHostPort(Gateway, u.Port()))
	if err != nil {
		return fmt.Errorf("apiserver forwarder: %w", err)
	}
	n.forwarder = l
	n.fwdWG.Add(1)
	go func() {
		defer n.fwdWG.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go forward(c, target)
		}
	}()
	return nil
}

func forward(c net.Conn, target string) {
	defer c.Close()
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (n *Node) waitReady(ctx context.Context, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(n.cp.RESTConfig())
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		for _, p := range n.procs {
			if p.exited() {
				return p.failure("exited")
			}
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					last = c.Reason + ": " + c.Message
				}
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s not Ready in %s (%s); see %s/kubelet.log", Name, timeout, last, n.dir)
}

// Stop stops every component in reverse order, removes the pods'
// containers and sandboxes, and removes what the node made on the machine.
// It reports (on stderr) what it could not remove.
func (n *Node) Stop() {
	if n.lock == nil {
		return
	}
	var errs []error
	if n.stopVolumes != nil {
		n.stopVolumes()
		n.volumesWG.Wait()
	}
	// Everything but containerd first, the kubelet above all: a running
	// kubelet starts again what removePods kills.
	for i := len(n.procs) - 1; i >= 1; i-- {
		n.procs[i].stop(15 * time.Second)
	}
	if n.containerdSock != "" && len(n.procs) > 0 && !n.procs[0].exited() {
		errs = append(errs, n.removePods())
	}
	if len(n.procs) > 0 {
		n.procs[0].stop(15 * time.Second)
	}
	n.procs = nil
	// A shim outlives containerd (it double-forks to init); one left by a
	// container that was being created when the kubelet stopped goes now,
	// with its container.
	errs = append(errs, n.killShims())
	if n.forwarder != nil {
		n.forwarder.Close()
		n.fwdWG.Wait()
		n.forwarder = nil
	}
	errs = append(errs, n.cleanMachine())
	if n.releaseNetns != nil {
		errs = append(errs, n.releaseNetns())
		n.releaseNetns = nil
	}
	if n.ownDir {
		if err := os.RemoveAll(n.dir); err != nil {
			errs = append(errs, err)
		}
		n.ownDir = false
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "node: cleanup: %v\n", err)
	}
	// Stopped cleanly: nothing for the next node to recover.
	_ = n.lock.Truncate(0)
	if !n.callersLock {
		n.lock.Close()
	}
	n.lock = nil
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func output(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

func freePort() (string, error) {
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(ports[0]), nil
}

// StartForTest starts a control plane (with the controller-manager) and a
// node on it, both stopped when the test ends, the node first. It skips the
// test when not root; it fails it when the node cannot start.
func StartForTest(t testing.TB, cpOpts controlplane.Options, opts Options) (*controlplane.ControlPlane, *Node) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the local node needs root")
	}
	cpOpts.Node = ControlPlaneOptions()
	cpOpts.ControllerManager = true
	cp := controlplane.StartForTest(t, cpOpts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	n, err := Start(ctx, cp, opts)
	if err != nil {
		t.Fatalf("start local node: %v", err)
	}
	t.Cleanup(n.Stop)
	// Registered last, so it runs first: the logs are still there.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, log := range []string{filepath.Join(cp.Dir(), "kube-controller-manager.log"), filepath.Join(cp.Dir(), "kube-apiserver.log")} {
			t.Logf("last lines of %s:\n%s", log, tail(log, 15))
		}
		for _, p := range n.procs {
			t.Logf("last lines of %s:\n%s", p.log, tail(p.log, 15))
		}
		if dir, err := n.dumpForFailure(cp, t.Name()); err != nil {
			t.Logf("keep the node's logs in %s: %v", dir, err)
		} else if dir != "" {
			t.Logf("the node's logs, pods, events and NetworkPolicy state are in %s", dir)
		}
	})
	return cp, n
}

// MemoryRSS is the resident memory of the node's processes (containerd, the
// kubelet, kube-proxy, kube-scheduler, CoreDNS, kube-router) and
// of the pods' shims and containers under containerd, in bytes.
func (n *Node) MemoryRSS() uint64 {
	var total uint64
	seen := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		total += rss(pid)
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, c := range strings.Fields(string(children)) {
			if cpid, err := strconv.Atoi(c); err == nil {
				walk(cpid)
			}
		}
	}
	for _, p := range n.procs {
		if !p.exited() {
			walk(p.cmd.Process.Pid)
		}
	}
	// Shims are re-parented to init (they double-fork); they and their
	// containers are found by the node's socket in their command line.
	for _, pid := range n.shims() {
		walk(pid)
	}
	return total
}

// shims are the pids of the node's containerd shims (their command line
// names the node's socket).
func (n *Node) shims() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), "containerd-shim") && strings.Contains(string(cmdline), n.containerdSock) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killShims kills the node's remaining shims and their children (containers
// and a runc init between create and start), and waits until they are gone.
func (n *Node) killShims() error {
	if n.containerdSock == "" {
		return nil
	}
	shims := n.shims()
	for _, pid := range shims {
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, c := range strings.Fields(string(children)) {
			if cpid, err := strconv.Atoi(c); err == nil {
				_ = syscall.Kill(cpid, syscall.SIGKILL)
			}
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(n.shims()) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("containerd shims %v still running", n.shims())
}

func rss(pid int) uint64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
