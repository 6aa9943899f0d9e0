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
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/machinelock"
	"github.com/deckhouse/managed-starrocks/dev/netnsdir"
	"github.com/deckhouse/managed-starrocks/dev/node"
)

func runWebAndClient(t *testing.T, cs kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := "default"
	waitServiceAccount(ctx, t, cs, ns)

	// The web pod's data is on a claim of no class: the node's default
	// StorageClass provisions it.
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:    "web",
				Image:   node.BusyboxImage,
				Command: []string{"sh", "-c", "echo hello-from-web > /data/index.html && exec httpd -f -p 8080 -h /data"},
				// As the StarRocks containers: not root.
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1000)), RunAsNonRoot: ptr(true)},
				VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/index.html", Port: intstr.FromInt32(8080)},
				}, PeriodSeconds: 1},
			}},
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"},
			}}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(ctx, t, cs, ns, "web", func(p *corev1.Pod) bool { return podReady(p) })

	name := "web." + ns + ".svc." + node.ClusterDomain
	client := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "client", Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "client",
				Image: node.BusyboxImage,
				// Debian's static busybox wget crashes (glibc's static NSS
				// looks up the "http" service); nc takes the address
				// nslookup found.
				Command: []string{"sh", "-c", "set -e; ip route; nslookup " + name + " > /tmp/ns; cat /tmp/ns; " +
					"ip=$(awk '/^Address/ {a=$NF} END {print a}' /tmp/ns); " +
					"printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 5 \"$ip\" 80"},
			}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, client, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(ctx, t, cs, ns, "client", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	logs, err := cs.CoreV1().Pods(ns).GetLogs("client", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("client logs (through the apiserver and the kubelet): %v", err)
	}
	t.Logf("client pod %s:\n%s", p.Status.Phase, logs)
	if p.Status.Phase != corev1.PodSucceeded || !strings.Contains(string(logs), "hello-from-web") {
		t.Fatalf("the client pod did not resolve %s and fetch from it", name)
	}
	// A pod routes only the node's range: nothing it sends can be routed
	// off the machine.
	var routes []string
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.HasPrefix(line, "Server:") {
			break
		}
		if strings.TrimSpace(line) != "" {
			routes = append(routes, line)
		}
	}
	sort.Strings(routes)
	if len(routes) != 2 || !strings.HasPrefix(routes[0], node.BenchmarkRange+" via "+node.Gateway) || !strings.HasPrefix(routes[1], node.PodCIDR+" dev eth0") {
		t.Errorf("pod routes are not exactly %s via %s and the bridge's /24: %q", node.BenchmarkRange, node.Gateway, routes)
	}

	// NetworkPolicy is enforced: once a policy admits nobody to the web pod,
	// the same fetch through the Service is refused (kube-router applies it
	// within a sync; the client tries for a while). The kubelet's probes
	// still reach the pod (kube-router admits the node's address).
	if _, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, denyAllIngress(ns, "web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svcIP, err := cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	denied := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "denied", Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "client",
				Image: node.BusyboxImage,
				Command: []string{"sh", "-c", "for i in $(seq 60); do " +
					"if ! printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 " + svcIP.Spec.ClusterIP + " 80 | grep -q hello-from-web; then echo refused after $i tries; exit 0; fi; " +
					"sleep 0.5; done; echo still served; exit 1"},
			}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, denied, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(ctx, t, cs, ns, "denied", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	logs, err = cs.CoreV1().Pods(ns).GetLogs("denied", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("client under a policy that admits nobody, %s: %s", p.Status.Phase, logs)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("NetworkPolicy is not enforced: the web pod still serves a pod the policy does not admit")
	}
	if p := waitPod(ctx, t, cs, ns, "web", func(*corev1.Pod) bool { return true }); !podReady(p) {
		t.Errorf("the web pod is not Ready under the policy: the kubelet's probes are refused")
	}
}

// denyAllIngress selects the pods labelled app=<app> and admits nobody.
func denyAllIngress(ns, app string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-" + app, Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

func waitServiceAccount(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	for {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no default ServiceAccount in %s", ns)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func waitPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = p
			if ok(p) {
				return p
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s/%s: %v; last status: %+v", ns, name, ctx.Err(), last.Status)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// snapshot is what the machine looks like, one sorted list of lines per
// aspect, with what changes on its own (counters, other tests' temporary
// folders) left out.
func snapshot(t *testing.T) map[string][]string {
	t.Helper()
	s := map[string][]string{}
	cmd := func(what string, name string, args ...string) {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		s[what] = sortedLines(string(out))
	}
	cmd("network namespaces", "ip", "netns", "list")
	cmd("links", "sh", "-c", "ip -o link show | sed 's/^[0-9]*: //; s/ qlen.*//; s/state [A-Z]* //'")
	cmd("IPv4 routes", "ip", "route", "show", "table", "all")
	cmd("iptables rules", "sh", "-c", "iptables-save | grep -v '^#' | sed 's/\\[[0-9]*:[0-9]*\\]//'")
	cmd("ip6tables rules", "sh", "-c", "ip6tables-save | grep -v '^#' | sed 's/\\[[0-9]*:[0-9]*\\]//'")
	cmd("nftables tables", "nft", "list", "tables")
	cmd("ipsets", "ipset", "list", "-n")
	cmd("sysctls", "sh", "-c", "cat /proc/sys/net/ipv4/ip_forward /proc/sys/vm/overcommit_memory /proc/sys/kernel/panic /proc/sys/kernel/panic_on_oops /proc/sys/net/ipv4/conf/all/route_localnet")
	// Mount points, but not other tests' and helpers' temporary ones.
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var points []string
	// /run/netns, mounted by the first namespace of a node or of another
	// package's real FEs, is the tests' while its marker is there, and its
	// last user unmounts it (dev/netnsdir, whose own test checks that).
	tracked := netnsdir.Tracked()
	for _, line := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(line); len(f) > 4 && !(f[4] == netnsdir.Dir && tracked) {
			points = append(points, f[4])
		}
	}
	s["mounts"] = sortedLines(strings.Join(points, "\n"))
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods*")
	s["kubepods cgroups"] = cgroups
	for _, p := range []string{"/run/containerd", "/var/log/containers", "/var/log/pods", "/var/lib/kubelet", "/var/lib/kubelet/device-plugins",
		"/var/lib/containerd", "/etc/cni/net.d", "/var/lib/cni", "/var/lib/cni/results"} {
		if _, err := os.Lstat(p); err == nil {
			s["folders"] = append(s["folders"], p)
		}
	}
	// libcni's cache of what each ADD returned, one file per network and
	// sandbox (containerd 1.6's CRI sets no cache folder of its own).
	cniResults, _ := filepath.Glob("/var/lib/cni/results/*")
	s["CNI results"] = cniResults
	// Processes of the node's programs (other helpers' processes come and go),
	// but not zombies: a shim the node killed was reparented to init (it
	// double-forks), which reaps it when it gets round to it.
	ps, err := exec.Command("ps", "-eo", "stat=,comm=").Output()
	if err != nil {
		t.Fatal(err)
	}
	own := regexp.MustCompile(`^(containerd|containerd-shim|kubelet|kube-proxy|kube-scheduler|coredns|kube-router|runc|pause)`)
	for _, line := range strings.Split(string(ps), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "Z") && own.MatchString(f[1]) {
			s["processes"] = append(s["processes"], f[1])
		}
	}
	sort.Strings(s["processes"])
	// The real FEs of other test packages (dev/realfe) come and go in
	// namespaces, links, routes and /run/netns mounts of their own while
	// this test runs beside them; they clean up after themselves.
	for what, lines := range s {
		kept := lines[:0]
		for _, l := range lines {
			if !realFENames.MatchString(l) {
				kept = append(kept, l)
			}
		}
		s[what] = kept
	}
	return s
}

// realFENames matches dev/realfe's namespaces (msr-fe<slot>, msr-fe<slot>-<ordinal>)
// and host links (msrfe<slot>), and so the routes and mounts that name them.
var realFENames = regexp.MustCompile(`\bmsr-?fe[0-9]`)

func sortedLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

// sortedKeys lists the aspects either snapshot has: an aspect with no line
// before (a folder list when none of the folders was there) still counts.
func sortedKeys(snapshots ...map[string][]string) []string {
	seen := map[string]bool{}
	for _, m := range snapshots {
		for k := range m {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// leftDiff is diff, except for processes: another test's containerd may end
// meanwhile, so only new ones count.
func leftDiff(what string, a, b []string) string {
	d := diff(a, b)
	if what != "processes" {
		return d
	}
	var added []string
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "+") {
			added = append(added, l)
		}
	}
	return strings.Join(added, "\n")
}

// diff lists lines only in a (-) or only in b (+).
func diff(a, b []string) string {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	var out []string
	for l, c := range count {
		switch {
		case c > 0:
			out = append(out, "- "+l)
		case c < 0:
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestNodeCleansUpAfterANodeThatWasKilled kills a process running a node
// (as a second Ctrl-C or the OOM killer would end `make run`), then starts
// the next node, which runs a web server pod behind a Service and a client
// pod that resolves the Service's name through CoreDNS and fetches from it,
// and stops it: the machine is as it was before the killed node (no
// process, network namespace, link, route, iptables rule, ipset, nftables
// table, mount, cgroup or sysctl of either node is left). One test, so one node
// start fewer: the next node's pods and clean Stop are what a test of a
// node on a clean machine would check, and the machine before the killed
// node is the one to find again.
func TestNodeCleansUpAfterANodeThatWasKilled(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
	if os.Geteuid() != 0 {
		t.Skip("the local node needs root")
	}
	m := lockMachine(t)
	// An empty nftables table of the machine's own (as iptables-nft leaves
	// an empty `ip filter`): the recovery must keep it.
	own := []string{"ip", "managed-starrocks-node-test-own"}
	if out, err := exec.Command("nft", append([]string{"add", "table"}, own...)...).CombinedOutput(); err != nil {
		t.Fatalf("nft add table: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("nft", append([]string{"delete", "table"}, own...)...).Run() })
	// An ipset of the machine's own, named as kube-router names its sets:
	// the recovery must keep it (the lock file lists the sets from before).
	if out, err := exec.Command("ipset", "create", ownIPSet, "hash:ip").CombinedOutput(); err != nil {
		t.Fatalf("ipset create: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ipset", "destroy", ownIPSet).Run() })
	before := snapshot(t)
	// The helper process takes the lock itself.
	m.Unlock()

	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestHelperRunNodeUntilKilled$", "-test.v")
	child.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "node-ready") {
				ready <- true
			}
			t.Logf("helper: %s", sc.Text())
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the helper process ended before its node was Ready")
		}
	case <-time.After(4 * time.Minute):
		_ = child.Process.Kill()
		t.Fatal("the helper's node was not Ready in 4 minutes")
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	left := snapshot(t)
	if diff(before["links"], left["links"]) == "" {
		t.Fatal("the killed node left nothing behind: the test would prove nothing")
	}
	if diff(before["ipsets"], left["ipsets"]) == "" || !strings.Contains(strings.Join(left["iptables rules"], "\n"), "KUBE-ROUTER-FORWARD") {
		t.Fatal("the killed node left no kube-router ipsets and policy chains: the test would prove nothing about them")
	}

	m = lockMachine(t)
	// A subtest owns the node: its cleanups (node, then control plane) have
	// run when it returns, so the machine can be compared after.
	// (A short name: the node's socket paths are under the subtest's
	// temporary folder, and a unix socket path has at most 104 bytes.)
	t.Run("pods", func(t *testing.T) {
		started := time.Now()
		cp, n := node.StartForTest(t, controlplane.Options{}, node.Options{Machine: m})
		t.Logf("node Ready %s after start (run dir %s)", time.Since(started).Round(time.Millisecond), n.Dir())
		cs, err := kubernetes.NewForConfig(cp.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		runWebAndClient(t, cs)
		t.Logf("node memory (RSS of its processes and pods): %d MiB", n.MemoryRSS()>>20)
	})

	after := snapshot(t)
	for _, what := range sortedKeys(before, after) {
		if d := leftDiff(what, before[what], after[what]); d != "" {
			t.Errorf("after a killed node and the next one, %s changed:\n%s", what, d)
		}
	}
}

const helperEnv = "MANAGED_STARROCKS_NODE_HELPER"

// ownIPSet is the machine's own ipset that a node's clean-up must keep.
// Its prefix is one the clean-up removes when a set was not there before
// (kube-router's KUBE-), but not KUBE-SRC- or KUBE-DST-: kube-router itself
// destroys every set of those prefixes that no policy of its uses
// (netpol.cleanupStaleIPSets), a machine's own among them.
const ownIPSet = "KUBE-MACHINE-OWN"

// TestLockMachineWaitsForAChangeOfTheMachine: while another test changes
// the machine (dev/images' throwaway containerd holds machinelock shared),
// the whole-machine tests above do not take their first look.
func TestLockMachineWaitsForAChangeOfTheMachine(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("helper process")
	}
	if os.Geteuid() != 0 {
		t.Skip("the node lock is under /run/lock")
	}
	unlock, err := machinelock.Change(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m, err := node.LockMachine(ctx)
	if err == nil {
		m.Unlock()
		unlock()
		t.Fatal("LockMachine returned while a changer held the machine lock")
	}
	unlock()
	m = lockMachine(t)
	m.Unlock()
}

// lockMachine takes the machine lock until the test ends.
func lockMachine(t *testing.T) *node.Machine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	m, err := node.LockMachine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Unlock)
	return m
}

// TestHelperRunNodeUntilKilled is the killed node's process: it runs only
// when TestNodeCleansUpAfterANodeThatWasKilled starts it.
func TestHelperRunNodeUntilKilled(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("runs only as the helper process of TestNodeCleansUpAfterANodeThatWasKilled")
	}
	for _, d := range []string{"cp", "node"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cp, _ := node.StartForTest(t, controlplane.Options{Dir: filepath.Join(dir, "cp")}, node.Options{Dir: filepath.Join(dir, "node")})
	// A policy, so the killed node leaves kube-router's ipsets and chains.
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies("default").Create(context.Background(), denyAllIngress("default", "nothing"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		out, _ := exec.Command("ipset", "list", "-n").Output()
		if strings.Contains(string(out), "KUBE-DST-") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("kube-router made no ipset for the policy in a minute")
		}
		time.Sleep(300 * time.Millisecond)
	}
	fmt.Println("node-ready")
	time.Sleep(10 * time.Minute)
}
