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

package node

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/deckhouse/managed-starrocks/dev/netnsdir"
)

// sysctls the node's components change: the kubelet sets kernel tunables
// (vm.overcommit_memory, panics, keys), the CNI bridge plugin turns on IP
// forwarding for its gateway. Stop puts back what was there.
var sysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet", "net/ipv6/conf/all/forwarding",
	"net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
}

// cgroupRoot holds the cgroup v1 hierarchies; with cgroupfs the kubelet
// makes a kubepods folder in every one of them.
const cgroupRoot = "/sys/fs/cgroup"

// machineState is what Start records and Stop compares against: what
// existed before the node, so Stop removes only what the node made.
type machineState struct {
	hasBlackhole bool
	netns        map[string]bool
	nftTables    map[string]bool
	ipsets       map[string]bool
	cgroups      map[string]bool // kubepods folders present before
	sysctl       map[string]string
	folders      map[string]bool // of machineFolders, those there before
	cniResults   map[string]bool // files in libcni's cache before
}

// machineFolders are the folders outside its run directory that the node's
// programs make, each with what is the node's in it: /run/containerd
// (containerd 1.6 puts shim sockets in /run/containerd/s whatever its state
// folder), the kubelet's /var/log/containers, /var/lib/kubelet (the
// kubelet's device manager serves kubelet.sock in
// /var/lib/kubelet/device-plugins, fixed in its code: v1beta1
// DevicePluginPath, not under --root-dir) and libcni's cache. Stop removes
// one that was not there before, and the subfolders listed with it, once
// they hold nothing else.
var machineFolders = map[string][]string{
	"/run/containerd":     {"s"},
	"/var/log/containers": nil,
	"/var/lib/kubelet":    {"device-plugins"},
	cniCacheDir:           {"results"},
}

// cniNetwork names the node's CNI network (its conflist).
const cniNetwork = "managed-starrocks"

// cniCacheDir is libcni's cache (libcni.CacheDir, as containerd 1.6's CRI
// sets none of its own): results/<network>-<sandbox ID>-<interface> keeps
// what each ADD returned until the DEL, which a sandbox removePods deletes
// never gets.
const cniCacheDir = "/var/lib/cni"

func captureMachineState() (*machineState, error) {
	s := &machineState{netns: map[string]bool{}, nftTables: map[string]bool{}, ipsets: map[string]bool{}, cgroups: map[string]bool{}, sysctl: map[string]string{},
		folders: map[string]bool{}, cniResults: map[string]bool{}}
	routes, err := output("ip", "route", "show", "type", "blackhole")
	if err != nil {
		return nil, err
	}
	s.hasBlackhole = strings.Contains(routes, BenchmarkRange)
	for _, ns := range netnsNames() {
		s.netns[ns] = true
	}
	tables, err := nftTables()
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		s.nftTables[t] = true
	}
	sets, err := ipsetNames()
	if err != nil {
		return nil, err
	}
	for _, name := range sets {
		s.ipsets[name] = true
	}
	for _, c := range kubepodsCgroups() {
		s.cgroups[c] = true
	}
	for _, k := range sysctls {
		if v, err := os.ReadFile(filepath.Join("/proc/sys", k)); err == nil {
			s.sysctl[k] = strings.TrimSpace(string(v))
		}
	}
	for f := range machineFolders {
		s.folders[f] = exists(f)
	}
	results, _ := filepath.Glob(filepath.Join(cniCacheDir, "results", "*"))
	for _, f := range results {
		s.cniResults[f] = true
	}
	return s, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func netnsNames() []string {
	entries, _ := os.ReadDir(netnsdir.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// nftTables lists "family name" of every nftables table (iptables-nft's
// tables among them).
func nftTables() ([]string, error) {
	out, err := output("nft", "list", "tables")
	if err != nil {
		return nil, err
	}
	var tables []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "table" {
			tables = append(tables, f[1]+" "+f[2])
		}
	}
	return tables, nil
}

// ipsetNames lists the kernel's ipsets by name.
func ipsetNames() ([]string, error) {
	out, err := output("ipset", "list", "-n")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// kubeRouterIPSet tells kube-router's ipsets (pkg/controllers/netpol:
// KUBE-SRC-<hash>, KUBE-DST-<hash>; pkg/utils/ipset.go: TMP-<hash> while it
// swaps a set's members, "inet6:" before an IPv6 set's name).
func kubeRouterIPSet(name string) bool {
	name = strings.TrimPrefix(name, "inet6:")
	return strings.HasPrefix(name, "KUBE-") || strings.HasPrefix(name, "TMP-")
}

// destroyIPSets destroys kube-router's ipsets that were not there before,
// once no iptables rule refers to them (cleanIPTables ran).
func destroyIPSets(before map[string]bool) error {
	sets, err := ipsetNames()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range sets {
		if before[name] || !kubeRouterIPSet(name) {
			continue
		}
		if err := run("ipset", "destroy", name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func kubepodsCgroups() []string {
	matches, _ := filepath.Glob(filepath.Join(cgroupRoot, "*", "kubepods*"))
	return matches
}

// removePods kills every container and sandbox the CRI made (namespace
// k8s.io of the node's containerd) and deletes them, which unmounts their
// root filesystems. The kubelet is stopped already (it would start them
// again); network namespaces go in cleanMachine, leases with the run
// directory.
func (n *Node) removePods() error {
	ctr := func(args ...string) (string, error) {
		return output("ctr", append([]string{"--address", n.containerdSock, "--namespace", "k8s.io"}, args...)...)
	}
	var errs []error
	out, err := ctr("tasks", "ls", "-q")
	if err != nil {
		return fmt.Errorf("list tasks: %w", err)
	}
	tasks := strings.Fields(out)
	for _, id := range tasks {
		_, _ = ctr("tasks", "kill", "--all", "--signal", "SIGKILL", id)
	}
	for _, id := range tasks {
		if _, err := ctr("tasks", "delete", "--force", id); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, err)
		}
	}
	out, err = ctr("containers", "ls", "-q")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range strings.Fields(out) {
		if _, err := ctr("containers", "delete", id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cleanMachine removes what the stopped node left: mounts under the run
// directory, network namespaces, the bridge (its veths went with the pods'
// namespaces), iptables chains and rules (KUBE-*, CNI-*, the egress guard;
// kube-router's KUBE-ROUTER-*, KUBE-NWPLCY-*, KUBE-POD-FW-* among them), then
// kube-router's ipsets that did not exist before, nftables tables that did not exist before, kubepods cgroups, the
// blackhole route, changed sysctls, the node's cached CNI results and the
// machineFolders it made.
func (n *Node) cleanMachine() error {
	b := n.before
	if b == nil {
		return nil
	}
	var errs []error
	errs = append(errs, unmountUnder(n.dir))
	for _, ns := range netnsNames() {
		if !b.netns[ns] && strings.HasPrefix(ns, "cni-") {
			if err := run("ip", "netns", "delete", ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if n.bridgeMade {
		// A pod's veth goes with its network namespace only when the kernel
		// gets round to destroying that namespace, after its last user (seen
		// seconds later on a busy machine): delete them with the bridge.
		errs = append(errs, deleteBridgePorts())
		if err := run("ip", "link", "delete", Bridge); err != nil {
			errs = append(errs, err)
		}
		n.bridgeMade = false
	}
	errs = append(errs, cleanIPTables("iptables"), cleanIPTables("ip6tables"))
	errs = append(errs, destroyIPSets(b.ipsets))
	if tables, err := nftTables(); err == nil {
		for _, t := range tables {
			if b.nftTables[t] {
				continue
			}
			if empty, err := nftTableEmpty(t); err == nil && empty {
				if err := run("nft", append([]string{"delete", "table"}, strings.Fields(t)...)...); err != nil {
					errs = append(errs, err)
				}
			}
		}
	} else {
		errs = append(errs, err)
	}
	errs = append(errs, removeCgroups(b.cgroups))
	if n.routeMade {
		if err := run("ip", "route", "delete", "blackhole", BenchmarkRange); err != nil {
			errs = append(errs, err)
		}
		n.routeMade = false
	}
	for k, v := range b.sysctl {
		path := filepath.Join("/proc/sys", k)
		if now, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(now)) != v {
			if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restore sysctl %s: %w", k, err))
			}
		}
	}
	// Another containerd or kubelet on the machine may use these folders
	// too: only what is the node's goes, and a folder only when it is
	// empty; the kubelet's socket only from a folder the node made.
	errs = append(errs, n.removeContainerLogLinks(), removeCNIResults(b.cniResults))
	if !b.folders["/var/lib/kubelet"] {
		if err := os.Remove("/var/lib/kubelet/device-plugins/kubelet.sock"); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for f, subs := range machineFolders {
		if b.folders[f] {
			continue
		}
		for _, sub := range subs {
			_ = unix.Rmdir(filepath.Join(f, sub))
		}
		_ = unix.Rmdir(f)
	}
	return errors.Join(errs...)
}

// removeCNIResults removes the cached results of the node's network that
// were not there before, and the loopback's (containerd's cni-loopback) of
// the same sandboxes.
func removeCNIResults(before map[string]bool) error {
	results := filepath.Join(cniCacheDir, "results")
	files, _ := filepath.Glob(filepath.Join(results, cniNetwork+"-*"))
	var errs []error
	for _, f := range files {
		if before[f] {
			continue
		}
		// A sandbox ID is hex: the name is <network>-<ID>-<interface>.
		id, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(f), cniNetwork+"-"), "-")
		for _, g := range []string{f, filepath.Join(results, "cni-loopback-"+id+"-lo")} {
			if err := os.Remove(g); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// deleteBridgePorts deletes the links on the node's bridge (the host ends
// of the pods' veths; deleting one end deletes its peer). A link the kernel
// removed meanwhile is not an error.
func deleteBridgePorts() error {
	out, err := output("ip", "-o", "link", "show", "master", Bridge)
	if err != nil {
		return err
	}
	var errs []error
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if err := run("ip", "link", "delete", name); err != nil && exists("/sys/class/net/"+name) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeContainerLogLinks removes the kubelet's links in
// /var/log/containers (a fixed path in the kubelet) to the node's pod logs.
func (n *Node) removeContainerLogLinks() error {
	entries, err := os.ReadDir("/var/log/containers")
	if err != nil {
		return nil
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(path); err == nil && strings.HasPrefix(target, n.dir+"/") {
			errs = append(errs, os.Remove(path))
		}
	}
	return errors.Join(errs...)
}

// unmountUnder unmounts every mount point under dir, deepest first (the
// kubelet's tmpfs volumes, sandboxes' /dev/shm, root filesystems).
func unmountUnder(dir string) error {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	prefix := filepath.Clean(dir) + "/"
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4]+"/", prefix) {
			points = append(points, unescapeMount(f[4]))
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownRule tells the node's iptables lines: the chains of the kubelet and
// kube-proxy (KUBE-*), of the CNI plugins (CNI-*), and the node's egress
// guard (commented managed-starrocks-node).
func ownRule(line string) bool {
	if strings.HasPrefix(line, ":KUBE-") || strings.HasPrefix(line, ":CNI-") {
		return true
	}
	if !strings.HasPrefix(line, "-A ") {
		return false
	}
	return strings.HasPrefix(line, "-A KUBE-") || strings.HasPrefix(line, "-A CNI-") ||
		strings.Contains(line, " -j KUBE-") || strings.Contains(line, " -j CNI-") ||
		strings.Contains(line, " -g KUBE-") || strings.Contains(line, " -g CNI-") ||
		strings.Contains(line, guardComment)
}

// cleanIPTables rewrites each table that holds node rules without them
// (iptables-save, filter, iptables-restore of that table: atomic per table).
func cleanIPTables(cmd string) error {
	saved, err := output(cmd + "-save")
	if err != nil {
		return err
	}
	var errs []error
	for _, table := range splitTables(saved) {
		var kept []string
		changed := false
		for _, line := range table {
			if ownRule(line) {
				changed = true
				continue
			}
			kept = append(kept, line)
		}
		if !changed {
			continue
		}
		c := exec.Command(cmd+"-restore", "--wait")
		c.Stdin = strings.NewReader(strings.Join(kept, "\n") + "\n")
		if out, err := c.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore: %w: %s", cmd, err, out))
		}
	}
	return errors.Join(errs...)
}

// splitTables cuts iptables-save output into its tables, each from "*name"
// to "COMMIT", comments dropped.
func splitTables(saved string) [][]string {
	var tables [][]string
	var cur []string
	for _, line := range strings.Split(saved, "\n") {
		switch {
		case strings.HasPrefix(line, "#") || line == "":
		case strings.HasPrefix(line, "*"):
			cur = []string{line}
		case line == "COMMIT":
			tables = append(tables, append(cur, line))
			cur = nil
		default:
			cur = append(cur, line)
		}
	}
	return tables
}

// nftTableEmpty: a table with chains but no rules (what iptables-nft leaves
// once the node's rules are gone) or nothing at all.
func nftTableEmpty(table string) (bool, error) {
	out, err := output("nft", append([]string{"list", "table"}, strings.Fields(table)...)...)
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || l == "}" || strings.HasPrefix(l, "table ") || strings.HasPrefix(l, "chain ") ||
			strings.HasPrefix(l, "type ") || strings.HasPrefix(l, "policy ") {
			continue
		}
		return false, nil
	}
	return true, nil
}

// removeCgroups removes the kubepods folders that were not there before,
// children first (a cgroup folder goes with rmdir once it has no tasks).
func removeCgroups(before map[string]bool) error {
	var errs []error
	for _, root := range kubepodsCgroups() {
		if before[root] {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// nftTableLine starts a lock file line naming a table ("family name") that
// existed before the node, ipsetLine one naming an ipset that did,
// folderLine one naming a folder of machineFolders that did; sysctl lines
// are key=value (a key has no space).
const (
	nftTableLine = "nft "
	ipsetLine    = "ipset "
	folderLine   = "folder "
)

// recordInLock writes the node's run directory, the sysctls as they were
// before it and the nftables tables, ipsets and machineFolders that existed
// before it (an empty table of the machine's own is not the node's to
// delete) into the lock file, for recoverDeadNode; Stop empties the file.
func (n *Node) recordInLock() error {
	var b strings.Builder
	b.WriteString(n.dir + "\n")
	for k, v := range n.before.sysctl {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	for t := range n.before.nftTables {
		fmt.Fprintf(&b, "%s%s\n", nftTableLine, t)
	}
	for name := range n.before.ipsets {
		fmt.Fprintf(&b, "%s%s\n", ipsetLine, name)
	}
	for f, there := range n.before.folders {
		if there {
			fmt.Fprintf(&b, "%s%s\n", folderLine, f)
		}
	}
	if err := n.lock.Truncate(0); err != nil {
		return err
	}
	_, err := n.lock.WriteAt([]byte(b.String()), 0)
	return err
}

// recoverDeadNode cleans up after a node whose program died without Stop
// (killed, or a second Ctrl-C): its run directory and the sysctls as they
// were before it are in the lock file, which Stop empties. Holding the
// lock, whatever of the node's kinds is on the machine is that dead node's:
// its shims and containers, mounts under its run directory, the bridge, pod
// network namespaces, the node's iptables chains, kube-router's ipsets and
// empty nftables tables that were not there before it (both listed in the
// lock file), kubepods cgroups, the blackhole route, the cached CNI results
// of the node's network and the machineFolders it made (the lock file lists
// those that were there) go, and the sysctls go back.
func recoverDeadNode(lock *os.File) error {
	data := make([]byte, 64*1024)
	k, _ := lock.ReadAt(data, 0)
	lines := strings.Split(strings.TrimSpace(string(data[:k])), "\n")
	if prev := lines[0]; prev != "" {
		sysctl := map[string]string{}
		tables, sets, folders := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, l := range lines[1:] {
			if t, ok := strings.CutPrefix(l, nftTableLine); ok {
				tables[t] = true
			} else if name, ok := strings.CutPrefix(l, ipsetLine); ok {
				sets[name] = true
			} else if f, ok := strings.CutPrefix(l, folderLine); ok {
				folders[f] = true
			} else if key, v, ok := strings.Cut(l, "="); ok && slices.Contains(sysctls, key) {
				sysctl[key] = v
			}
		}
		fmt.Fprintf(os.Stderr, "node: a node in %s did not stop cleanly; removing what it left\n", prev)
		dead := &Node{
			dir:            prev,
			containerdSock: filepath.Join(prev, "containerd", "containerd.sock"),
			bridgeMade:     exists("/sys/class/net/" + Bridge),
			before: &machineState{netns: map[string]bool{}, nftTables: tables, ipsets: sets, cgroups: map[string]bool{}, sysctl: sysctl,
				folders: folders, cniResults: map[string]bool{}},
		}
		if routes, err := output("ip", "route", "show", "type", "blackhole"); err == nil {
			dead.routeMade = strings.Contains(routes, BenchmarkRange)
		}
		if err := errors.Join(dead.killShims(), dead.cleanMachine()); err != nil {
			return fmt.Errorf("clean up after the dead node in %s: %w", prev, err)
		}
	}
	return lock.Truncate(0)
}
