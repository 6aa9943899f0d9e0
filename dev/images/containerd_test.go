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

package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/machinelock"
)

// startContainerd runs Debian's containerd (package containerd) with its own
// root, state and socket under a temporary directory, no CRI plugin, and
// stops it when the test ends. Images are unpacked with the native
// snapshotter, which copies instead of mounting, so nothing stays mounted.
// containerd 1.6 puts its shims' sockets in /run/containerd/s whatever its
// state folder, and the runc shim of a container ctr runs keeps runc's
// state in /run/containerd/runc/<namespace>: containerd runs in a mount
// namespace of its own with a tmpfs on /run, so they go with it and not
// into the machine's /run. ctr, outside it, is given a FIFO folder both
// see (ctr's default is /run/containerd/fifo).
// While it runs (its process, the mounts and cgroups of ctr run) it holds
// the machine lock shared: a test comparing the whole machine before and
// after (dev/node's) waits for it, and it waits for such a test.
func startContainerd(t *testing.T) (sock string, ctr func(args ...string) (string, error)) {
	t.Helper()
	lockCtx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	unlock, err := machinelock.Change(lockCtx)
	if err != nil {
		t.Fatal(err)
	}
	// The first cleanup, so the last to run: after containerd stopped and
	// the test's cgroups went.
	t.Cleanup(unlock)
	bin, err := exec.LookPath("containerd")
	if err != nil {
		t.Fatalf("containerd not found (Debian package containerd; .ci/run installs it): %v", err)
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		t.Fatalf("ctr not found (Debian package containerd): %v", err)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare not found (Debian package util-linux): %v", err)
	}
	// A short directory: the socket path must fit a sockaddr_un (108 bytes).
	dir, err := os.MkdirTemp("", "ctrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "c.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = ""
[metrics]
  address = ""
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc")
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--",
		"sh", "-c", `mount -t tmpfs -o mode=0755 tmpfs /run && exec "$0" "$@"`, bin, "--config", filepath.Join(dir, "config.toml"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// Pdeathsig: a killed test binary takes its containerd with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("containerd log:\n%s", logs.String())
		}
	})
	ctr = func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if len(args) > 0 && args[0] == "run" {
			args = append([]string{"run", "--fifo-dir", filepath.Join(dir, "fifo")}, args[1:]...)
		}
		out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)...).CombinedOutput()
		return string(out), err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := ctr("version"); err == nil {
			return sock, ctr
		}
		select {
		case err := <-done:
			t.Fatalf("containerd exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer on %s\n%s", sock, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestSetImportsIntoContainerdUnderTheCRINames(t *testing.T) {
	s := buildSet(t)
	sock, ctr := startContainerd(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := Import(ctx, sock, "native", s.Archive); err != nil {
		t.Fatal(err)
	}
	t.Logf("ctr images import: %s", time.Since(start).Round(time.Millisecond))
	out, err := ctr("images", "ls", "-q")
	if err != nil {
		t.Fatalf("ctr images ls: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, n := range strings.Fields(out) {
		names[n] = true
	}
	for _, b := range []Built{s.Pause, s.Busybox, s.Agent, s.Webhook, s.StarrocksFE, s.StarrocksBE, s.StarrocksCN, s.Client} {
		for _, ref := range []string{b.Ref, b.DigestRef} {
			if !names[ref] {
				t.Errorf("containerd has no image %s (it has %v)", ref, out)
			}
		}
	}
	// Unpacked for the node's platform: the CRI runs only unpacked images.
	out, err = ctr("images", "check")
	if err != nil {
		t.Fatalf("ctr images check: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if !strings.Contains(line, "complete") {
			t.Errorf("not complete: %s", line)
		}
	}
	out, err = ctr("snapshots", "--snapshotter", "native", "ls")
	if err != nil || len(strings.Split(strings.TrimSpace(out), "\n")) < 2 {
		t.Errorf("no snapshots unpacked: %v\n%s", err, out)
	}

	// The FE image runs under runc: the preStop's /bin/bash -c, busybox's
	// applets, the stand-in scripts in place and meta/ owned by uid 1000.
	// (ctr 1.6 has no --user; the pods' uid comes from their securityContext.)
	// ctr puts the container into cgroup /<namespace>/<id> of every
	// hierarchy and leaves the parent behind: a cgroup of the test's own,
	// removed afterwards.
	parent := fmt.Sprintf("managed-starrocks-images-test-%d", os.Getpid())
	t.Cleanup(func() { removeCgroups(t, parent) })
	// What a run would leave in the machine's /run/containerd, where the
	// node's containerd (dev/node) keeps only its shims' sockets (s).
	machineRun := []string{"/run/containerd/fifo", "/run/containerd/runc/k8s.io"}
	var before []bool
	for _, p := range machineRun {
		before = append(before, fileExists(p))
	}
	out, err = ctr("run", "--rm", "--snapshotter", "native", "--cgroup", "/"+parent+"/standin-check", s.StarrocksFE.DigestRef, "standin-check",
		"/bin/bash", "-c", "test -x /opt/starrocks/fe/bin/stop_fe.sh && stat -c %u /opt/starrocks/fe/meta && echo runs")
	if err != nil || !strings.Contains(out, "1000") || !strings.Contains(out, "runs") {
		t.Errorf("ctr run the FE image: %v\n%s", err, out)
	}
	for i, p := range machineRun {
		if !before[i] && fileExists(p) {
			t.Errorf("the test's containerd made %s on the machine", p)
		}
	}
}

// removeCgroups removes the cgroup directory name (and what runc left
// under it) from every hierarchy: cgroup v1's controllers and the unified
// v2 mount of a hybrid host.
func removeCgroups(t *testing.T, name string) {
	t.Helper()
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	if d := "/sys/fs/cgroup/" + name; fileExists(d) {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		subs, _ := filepath.Glob(d + "/*/")
		for _, sub := range subs {
			if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
				_ = os.Remove(sub)
			}
		}
		if err := os.Remove(d); err != nil {
			t.Errorf("remove cgroup %s: %v", d, err)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
