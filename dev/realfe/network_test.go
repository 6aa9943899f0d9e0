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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deckhouse/managed-starrocks/dev/netnsdir"
)

// listenIn opens a TCP listener on every address of a network namespace,
// as the FE binds its ports: a socket stays in the namespace it was made
// in, and the thread returns to the test's namespace afterwards.
func listenIn(t *testing.T, ns string) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	f, err := os.Open(filepath.Join(netnsdir.Dir, ns))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatalf("enter %s: %v", ns, err)
	}
	l, lerr := net.Listen("tcp4", ":9030")
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread must not run anything else in the wrong namespace.
		panic("return to the test's network namespace: " + err.Error())
	}
	if lerr != nil {
		t.Fatalf("listen in %s: %v", ns, lerr)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// The test reaches an FE's namespace from the host's own address on the
// segment, never from loopback, and removing the slot leaves nothing.
func TestNetworkReachesFrontendsFromTheHostAndLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	n, err := takeSlot()
	if err != nil {
		t.Fatal(err)
	}
	defer n.release()
	t.Cleanup(func() { _ = n.remove() })
	if err := n.create(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := n.addFrontend(i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		l := listenIn(t, n.ns(i))
		accepted := make(chan net.Addr, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				accepted <- nil
				return
			}
			accepted <- c.RemoteAddr()
			c.Close()
		}()
		c, err := net.DialTimeout("tcp", net.JoinHostPort(n.IP(i).String(), "9030"), 5*time.Second)
		if err != nil {
			t.Fatalf("dial FE %d at %s: %v", i, n.IP(i), err)
		}
		c.Close()
		select {
		case from := <-accepted:
			if host, _, _ := net.SplitHostPort(from.String()); host != n.HostIP().String() {
				t.Errorf("FE %d saw the host as %v, want %s", i, from, n.HostIP())
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("FE %d accepted nothing", i)
		}
		l.Close()
	}
	// The FEs reach each other (edit log, heartbeats) on the same segment.
	l := listenIn(t, n.ns(1))
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	out, err := runIn(n.ns(0), "bash", "-c", "exec 3<>/dev/tcp/"+n.IP(1).String()+"/9030")
	if err != nil {
		t.Errorf("FE 0 cannot reach FE 1: %v: %s", err, out)
	}

	if err := n.remove(); err != nil {
		t.Fatal(err)
	}
	if left := n.leftovers(); len(left) > 0 {
		t.Errorf("left on the machine: %s", strings.Join(left, ", "))
	}
}

// A slot whose test was killed is cleaned up by the next one to take it.
func TestSlotLeftByAKilledTestIsCleanedUp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	n, err := takeSlot()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.create(); err != nil {
		t.Fatal(err)
	}
	if err := n.addFrontend(0); err != nil {
		t.Fatal(err)
	}
	slot := n.slot
	// As if the process had died: the lock goes, the namespaces stay.
	n.release()
	again, err := takeSlot()
	if err != nil {
		t.Fatal(err)
	}
	defer again.release()
	if again.slot != slot {
		t.Fatalf("took slot %d, want the free slot %d again", again.slot, slot)
	}
	if left := again.leftovers(); len(left) > 0 {
		t.Errorf("left on the machine: %s", strings.Join(left, ", "))
	}
}

func runIn(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}
