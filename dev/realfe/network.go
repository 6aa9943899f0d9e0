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

package realfe

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/netnsdir"
)

// The network of one cluster of real FEs. An FE binds every address and
// lets clients from 127.0.0.1 past ssl_force_secure_transport (fe-core
// mysql/MysqlProto.java: negotiate skips the check when
// isRemoteIPLocalhost), so the FEs never share the host's loopback: each
// runs in a network namespace of its own (its ports are fixed by the
// rendered fe.conf, so two FEs cannot share one), and the test reaches
// them from the host through a bridge in a hub namespace:
//
//	host: msrfe<slot> 198.18.128.<16*slot+1>/28
//	   └─veth─ hub namespace msr-fe<slot>: bridge br0
//	              ├─veth─ msr-fe<slot>-0: eth0 .<16*slot+2>   (ordinal 0)
//	              └─veth─ msr-fe<slot>-1: eth0 .<16*slot+3>   (ordinal 1) …
//
// One L2 segment: no routing and no sysctl changes on the host. The
// addresses are in 198.18.0.0/15 (reserved for benchmarking) as the local
// node's are, in 198.18.128.0/22, away from its pods (198.18.0.0/24) and
// Services (198.19.0.0/16); its blackhole route for the whole /15 is less
// specific than the segment's own route. Deleting the namespaces removes
// every link and route made here.

// maxSlots is how many clusters may run at once on a machine.
const maxSlots = 64

// maxFrontends is how many FEs one segment holds (a /28 less the host).
const maxFrontends = 13

// network is one slot's namespaces and addresses.
type network struct {
	slot int
	lock *os.File
	// releaseNetns gives back /run/netns's mount when this slot was its
	// last user (dev/netnsdir): `ip netns add` mounts it.
	releaseNetns func() error
}

func (n *network) hub() string          { return fmt.Sprintf("msr-fe%d", n.slot) }
func (n *network) hostLink() string     { return fmt.Sprintf("msrfe%d", n.slot) }
func (n *network) ns(i int) string      { return fmt.Sprintf("msr-fe%d-%d", n.slot, i) }
func (n *network) hubPort(i int) string { return fmt.Sprintf("fe%d", i) }

func (n *network) addr(host int) net.IP {
	return net.IPv4(198, 18, byte(128+n.slot*16/256), byte(n.slot*16%256+host)).To4()
}

// HostIP is the host's address on the segment, where the test's
// connections come from.
func (n *network) HostIP() net.IP { return n.addr(1) }

// IP is the address of the FE of an ordinal.
func (n *network) IP(ordinal int) net.IP { return n.addr(2 + ordinal) }

func (n *network) cidr(ip net.IP) string { return ip.String() + "/28" }

// lockDir holds one lock file per slot. A slot is taken while its file is
// locked (flock), so a test process that dies frees its slot, and the next
// user of the slot removes what it left.
const lockDir = "/run/lock"

func lockPath(slot int) string {
	return filepath.Join(lockDir, "managed-starrocks-realfe-"+strconv.Itoa(slot)+".lock")
}

// takeSlot locks a free slot and removes what a killed test left in it.
func takeSlot() (*network, error) {
	for slot := 0; slot < maxSlots; slot++ {
		f, err := os.OpenFile(lockPath(slot), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue
			}
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		n := &network{slot: slot, lock: f}
		if n.releaseNetns, err = netnsdir.Use(); err != nil {
			n.release()
			return nil, err
		}
		if err := n.remove(); err != nil {
			n.release()
			return nil, fmt.Errorf("remove what an earlier test left in slot %d: %w", slot, err)
		}
		return n, nil
	}
	return nil, fmt.Errorf("all %d slots of real FE networks are taken (lock files %s)", maxSlots, lockPath(0))
}

// release gives up the slot, after its namespaces are removed.
func (n *network) release() error {
	var err error
	if n.releaseNetns != nil {
		err = n.releaseNetns()
		n.releaseNetns = nil
	}
	_ = syscall.Flock(int(n.lock.Fd()), syscall.LOCK_UN)
	n.lock.Close()
	return err
}

// namespaces lists this slot's network namespaces that exist.
func (n *network) namespaces() []string {
	entries, _ := os.ReadDir(netnsdir.Dir)
	var out []string
	for _, e := range entries {
		if e.Name() == n.hub() || strings.HasPrefix(e.Name(), n.hub()+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// create makes the hub with its bridge and the host's link into it.
func (n *network) create() error {
	steps := [][]string{
		{"ip", "netns", "add", n.hub()},
		{"ip", "-n", n.hub(), "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", n.hub(), "link", "set", "br0", "up"},
		{"ip", "link", "add", n.hostLink(), "type", "veth", "peer", "name", "host", "netns", n.hub()},
		{"ip", "-n", n.hub(), "link", "set", "host", "master", "br0", "up"},
		{"ip", "addr", "add", n.cidr(n.HostIP()), "dev", n.hostLink()},
		{"ip", "link", "set", n.hostLink(), "up"},
	}
	return runAll(steps)
}

// addFrontend makes the namespace of an ordinal, plugged into the hub.
func (n *network) addFrontend(ordinal int) error {
	ns := n.ns(ordinal)
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", n.hubPort(ordinal), "netns", n.hub()},
		{"ip", "-n", n.hub(), "link", "set", n.hubPort(ordinal), "master", "br0", "up"},
		{"ip", "-n", ns, "addr", "add", n.cidr(n.IP(ordinal)), "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
	}
	return runAll(steps)
}

// remove kills whatever still runs in the slot's namespaces (an FE of a
// test that was killed) and deletes them; the veths, the bridge and the
// host's route go with them.
func (n *network) remove() error {
	var errs []error
	for _, ns := range n.namespaces() {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, f := range strings.Fields(string(out)) {
			// Never this process: a thread of it may have entered the
			// namespace for a moment (the network's own test does).
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				waitGone(pid, 10*time.Second)
			}
		}
		if err := run("ip", "netns", "delete", ns); err != nil {
			errs = append(errs, err)
		}
	}
	// The host's end of the hub's veth goes with the hub's namespace, but
	// the kernel destroys it a moment later: it may vanish between the
	// look and the delete, which is what was asked.
	link := "/sys/class/net/" + n.hostLink()
	if _, err := os.Stat(link); err == nil {
		if err := run("ip", "link", "delete", n.hostLink()); err != nil {
			if _, gone := os.Stat(link); gone == nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// leftovers says what of the slot is still on the machine.
func (n *network) leftovers() []string {
	var out []string
	for _, ns := range n.namespaces() {
		out = append(out, "network namespace "+ns)
	}
	if _, err := os.Stat("/sys/class/net/" + n.hostLink()); err == nil {
		out = append(out, "link "+n.hostLink())
	}
	routes, _ := exec.Command("ip", "-4", "route", "show", "match", n.HostIP().String()).Output()
	for _, line := range strings.Split(strings.TrimSpace(string(routes)), "\n") {
		if strings.Contains(line, n.hostLink()) {
			out = append(out, "route "+line)
		}
	}
	return out
}

func runAll(steps [][]string) error {
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitGone waits until a process no longer exists (its parent reaped it,
// or it was not our child).
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !alive(pid)
}

// alive reports whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
