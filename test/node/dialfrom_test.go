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
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test's servers (the control plane, the node, cert-manager, the
// webhook, addon-operator) run with Pdeathsig SIGKILL, and the kernel sends
// it when the thread that forked the child ends, not the process (prctl(2),
// PR_SET_PDEATHSIG: "the 'parent' in this case is considered to be the
// thread that created this process"). A Go thread ends when a goroutine
// exits locked to it. dialFrom enters pods' network namespaces, dozens of
// times in "network policy": if its threads ended, any of those servers
// could die without a line in its log (cert-manager did, and with it every
// later certificate). This starts children as the harness does, from
// several threads, dials as the NetworkPolicy test does, and checks that
// every child lives.
func TestDialFromKeepsTheTestsChildrenAlive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("entering a network namespace needs root")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port

	// Which thread runs a dial is the scheduler's choice: a few rounds make
	// an ended thread that had forked a child all but certain where threads
	// end (half of the single rounds catch it).
	for round := range 8 {
		dialRound(t, round, port)
	}
}

// dialRound forks children as the harness forks its servers (from the
// test's goroutine and from other goroutines, on other threads), dials
// from a network namespace as the NetworkPolicy test does, and fails if a
// child died or a thread ended.
func dialRound(t *testing.T, round, port int) {
	var children []*exec.Cmd
	var mu sync.Mutex
	start := func() {
		cmd := exec.Command("sleep", "120")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		children = append(children, cmd)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range 16 {
		start()
		wg.Add(1)
		go func() { defer wg.Done(); start() }()
	}
	wg.Wait()
	threads := osThreads(t)
	exited := make(chan *exec.Cmd, len(children))
	for _, c := range children {
		go func() { _ = c.Wait(); exited <- c }()
	}
	defer func() {
		for _, c := range children {
			_ = c.Process.Kill()
		}
	}()

	// The test's own namespace stands for a pod's: entering it is the
	// same system call.
	for i := range 256 {
		if err := dialFrom("/proc/self/ns/net", "127.0.0.1", port, 2*time.Second); err != nil {
			t.Fatalf("round %d, dial %d: %v", round, i, err)
		}
	}
	select {
	case c := <-exited:
		t.Fatalf("round %d: a child of the test (pid %d) died while the test dialled from a network namespace: %v", round, c.Process.Pid, c.ProcessState)
	case <-time.After(200 * time.Millisecond):
	}
	// The Go runtime ends no thread but one a goroutine exited locked to.
	after := osThreads(t)
	for tid := range threads {
		if !after[tid] {
			t.Fatalf("round %d: thread %s of the test ended while the test dialled from a network namespace: the children it forked got their Pdeathsig", round, tid)
		}
	}
}

// osThreads are the test process's threads (/proc/self/task).
func osThreads(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	tids := map[string]bool{}
	for _, e := range entries {
		tids[e.Name()] = true
	}
	return tids
}
