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

package netnsdir

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const childEnv = "MANAGED_STARROCKS_NETNSDIR_CHILD"

// The cases run in a child of the test in a mount namespace of its own with
// a tmpfs on /run, so that /run/netns and the lock files are its own: other
// test packages use the machine's while this one runs.
func TestTheLastUserGivesTheMountBack(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("needs root: it mounts a tmpfs in a mount namespace of its own")
		}
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("needs unshare (apt-get install util-linux)")
		}
		cmd := exec.Command("unshare", "--mount", "--propagation", "private",
			os.Args[0], "-test.run=^TestTheLastUserGivesTheMountBack$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		// The child goes with this test, and a hang fails it, not the run.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.WaitDelay = time.Second
		timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
		out, err := cmd.CombinedOutput()
		t.Logf("child:\n%s", out)
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		return
	}
	// Never the machine's /run: only in a mount namespace other than the
	// parent's (unshare execs this binary, so the parent is the test).
	own, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid()))
	if err1 != nil || err2 != nil || own == parent {
		t.Fatalf("%s is set outside a mount namespace of the test's own (%s, parent %s: %v %v)", childEnv, own, parent, err1, err2)
	}
	if err := unix.Mount("tmpfs", "/run", "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs on /run: %v", err)
	}

	t.Run("no folder before: the last of two users unmounts and removes it", func(t *testing.T) {
		first := use(t)
		mountLikeIPNetnsAdd(t)
		second := use(t)
		if err := first(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, true, "while the second user goes on")
		if err := second(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, false, "after the last user")
		if _, err := os.Stat(Dir); !os.IsNotExist(err) {
			t.Fatalf("%s is still there (%v); it was not before", Dir, err)
		}
		if Tracked() {
			t.Fatal("the marker is still there")
		}
	})

	t.Run("a namespace still in the folder keeps the mount for a later user", func(t *testing.T) {
		release := use(t)
		mountLikeIPNetnsAdd(t)
		ns := filepath.Join(Dir, "someone-elses")
		if err := os.WriteFile(ns, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, true, "with a namespace left in it")
		if !Tracked() {
			t.Fatal("the marker went while the mount stays")
		}
		if err := os.Remove(ns); err != nil {
			t.Fatal(err)
		}
		if err := use(t)(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, false, "after a later user, the folder empty")
	})

	t.Run("a killed user's mount goes with the next user", func(t *testing.T) {
		// A user that dies after its namespaces' first: its flock goes
		// with its file, the marker and the mount stay.
		if _, err := Use(); err != nil {
			t.Fatal(err)
		}
		mountLikeIPNetnsAdd(t)
		closeUsersFiles(t)
		if !Tracked() {
			t.Fatal("no marker for the killed user's mount")
		}
		if err := use(t)(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, false, "after the next user")
	})

	t.Run("a folder that was there stays, unmounted", func(t *testing.T) {
		if err := os.Mkdir(Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		release := use(t)
		mountLikeIPNetnsAdd(t)
		if err := release(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, false, "after the last user")
		if _, err := os.Stat(Dir); err != nil {
			t.Fatalf("%s was there before and is gone: %v", Dir, err)
		}
	})

	t.Run("a mount the machine had is never touched", func(t *testing.T) {
		mountLikeIPNetnsAdd(t)
		release := use(t)
		if Tracked() {
			t.Fatal("a mount that was there before is marked as the tests'")
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		wantMounted(t, true, "after the last user")
	})
}

// closeUsersFiles closes this process's descriptors of the users' lock
// file, as a killed process's go.
func closeUsersFiles(t *testing.T) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	for _, fd := range fds {
		if target, _ := os.Readlink("/proc/self/fd/" + fd.Name()); target == usersFile {
			n, _ := strconv.Atoi(fd.Name())
			if err := syscall.Close(n); err != nil {
				t.Fatal(err)
			}
			closed++
		}
	}
	if closed == 0 {
		t.Fatal("no descriptor of the users' lock file is open")
	}
}

func use(t *testing.T) func() error {
	t.Helper()
	release, err := Use()
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// mountLikeIPNetnsAdd makes /run/netns a shared mount point as iproute2's
// netns_add (ip/ipnetns.c) and containerd's pkg/netns do: make it shared,
// and when that fails (not a mount point yet) bind it on itself first.
func mountLikeIPNetnsAdd(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err == nil {
		return
	}
	if err := unix.Mount(Dir, Dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
}

func wantMounted(t *testing.T, want bool, when string) {
	t.Helper()
	got, err := mountPoint()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s is a mount point: %v, want %v %s", Dir, got, want, when)
	}
}
