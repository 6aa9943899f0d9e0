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

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// localrun is the built program running as `make run` runs it, in a process
// group of its own so the test can press Ctrl-C the way a terminal does:
// SIGINT to every process of the foreground group.
type localrun struct {
	cmd    *exec.Cmd
	dir    string
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan string
	done   chan struct{}
	err    error
}

// startLocalrun runs the built program with -dir, -no-node and args. These
// tests are about the module's run, not the node (dev/node tests it): no
// node keeps them as fast as they were and free of the one-node lock.
func startLocalrun(t *testing.T, bin string, args ...string) *localrun {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	return start(t, dir, exec.Command(bin, append([]string{"-dir", dir, "-no-node"}, args...)...))
}

// startMakeRun runs `make run` in the repository, with -dir, -no-node and
// args.
func startMakeRun(t *testing.T, args ...string) *localrun {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command("make", "--no-print-directory", "run", "RUN_FLAGS=-dir "+dir+" -no-node "+strings.Join(args, " "))
	cmd.Dir = controlplane.RepoRoot()
	return start(t, dir, cmd)
}

func start(t *testing.T, dir string, cmd *exec.Cmd) *localrun {
	t.Helper()
	lr := &localrun{cmd: cmd, dir: dir, lines: make(chan string, 1024), done: make(chan struct{})}
	lr.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	lr.cmd.Stdout, lr.cmd.Stderr = outW, errW
	require.NoError(t, lr.cmd.Start())
	var readers sync.WaitGroup
	for _, r := range []struct {
		pipe *io.PipeReader
		buf  *bytes.Buffer
	}{{outR, &lr.stdout}, {errR, &lr.stderr}} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(r.pipe)
			for sc.Scan() {
				lr.mu.Lock()
				r.buf.WriteString(sc.Text() + "\n")
				lr.mu.Unlock()
				select {
				case lr.lines <- sc.Text():
				default:
				}
			}
		}()
	}
	go func() {
		lr.err = lr.cmd.Wait()
		outW.Close()
		errW.Close()
		readers.Wait()
		close(lr.done)
	}()
	t.Cleanup(func() {
		select {
		case <-lr.done:
		default:
			_ = syscall.Kill(-lr.cmd.Process.Pid, syscall.SIGKILL)
			<-lr.done
		}
	})
	return lr
}

// waitFor waits for a line of output containing s.
func (lr *localrun) waitFor(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line := <-lr.lines:
			if strings.Contains(line, s) {
				return
			}
		case <-lr.done:
			t.Fatalf("localrun exited (%v) before printing %q:\n%s\n%s", lr.err, s, lr.out(), lr.errOut())
		case <-deadline:
			t.Fatalf("no %q after %s:\n%s\n%s", s, timeout, lr.out(), lr.errOut())
		}
	}
}

// interrupt is Ctrl-C in a terminal: SIGINT to the whole process group.
func (lr *localrun) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, syscall.Kill(-lr.cmd.Process.Pid, syscall.SIGINT))
	select {
	case <-lr.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("localrun still running 2 minutes after Ctrl-C:\n%s", lr.errOut())
	}
}

func (lr *localrun) out() string    { lr.mu.Lock(); defer lr.mu.Unlock(); return lr.stdout.String() }
func (lr *localrun) errOut() string { lr.mu.Lock(); defer lr.mu.Unlock(); return lr.stderr.String() }

// apiserverGone reports whether nothing listens on the kube-apiserver's
// address any more.
func apiserverGone(t *testing.T, dir string) bool {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, "kubeconfig"))
	require.NoError(t, err)
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		require.NoError(t, err)
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err == nil {
			conn.Close()
			return false
		}
	}
	return true
}

func TestCtrlCStopsEverythingAndExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and the module (about a minute)")
	}
	// The tools the program builds on first use; built once into the cache.
	require.NoError(t, controlplane.BuildTools(io.Discard))
	// Built as `make run` builds it (same target, same flags), so that the
	// make run below finds it up to date instead of linking it again.
	build := exec.Command("make", "--no-print-directory", "bin/localrun")
	build.Dir = controlplane.RepoRoot()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "make bin/localrun: %s", out)
	bin := filepath.Join(controlplane.RepoRoot(), "bin", "localrun")

	t.Run("while starting", func(t *testing.T) {
		lr := startLocalrun(t, bin)
		lr.waitFor(t, "starting etcd and kube-apiserver", time.Minute)
		lr.interrupt(t)
		require.NoError(t, lr.err, "exit code 0 after Ctrl-C:\n%s", lr.errOut())
		assert.Contains(t, lr.errOut(), "==> stopped")
		assert.NotContains(t, lr.errOut(), "localrun:", "no error is reported")
		assert.NotContains(t, lr.errOut(), "first run only", "the tools are built: no wait is announced")
	})

	t.Run("make run, after disabling the module", func(t *testing.T) {
		lr := startMakeRun(t, "-disable")
		lr.waitFor(t, "until Ctrl-C", 5*time.Minute)
		lr.interrupt(t)
		// make, interrupted too, dies by the signal as a shell expects
		// after Ctrl-C; it reports no error because localrun exited 0
		// (`go run` exits 1 on SIGINT, and make printed "Error 1").
		var exit *exec.ExitError
		require.ErrorAs(t, lr.err, &exit)
		ws := exit.Sys().(syscall.WaitStatus)
		assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGINT, "make ends by the SIGINT: %v", lr.err)
		stderr := lr.errOut()
		assert.NotContains(t, stderr, "make: ***")
		assert.Contains(t, stderr, "module disabled: its hooks no longer run")
		assert.Contains(t, lr.out(), "The module is disabled; the cluster and the webhook keep running until Ctrl-C.")
		// The summary counts what Helm deleted and lists what stays: no
		// count of nothing, no heading without a list under it.
		out := lr.out()
		summary := out[strings.Index(out, "Module disabled:"):strings.Index(out, "There is no kubelet")]
		assert.Regexp(t, `Helm's uninstall deleted [1-9][0-9]* objects? of the release`, summary)
		assert.Regexp(t, `Starrocks team-a/analytics stays as it is, unmanaged, with its [1-9][0-9]* objects \(not in the release\):\n(  .*\n)*  StatefulSet +d8ms-sr-analytics-be\n`, summary)
		assert.NotContains(t, summary, " 0 objects")
		lines := strings.Split(summary, "\n")
		for i, l := range lines {
			if strings.HasSuffix(l, ":") {
				assert.True(t, i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  "), "%q heads no list:\n%s", l, summary)
			}
		}
		// The webhook and the control plane are stopped by the program, in
		// order, not killed by the terminal's SIGINT.
		webhook := strings.Index(stderr, "==> stopping the webhook")
		cp := strings.Index(stderr, "==> stopping kube-controller-manager, kube-apiserver and etcd")
		assert.True(t, webhook >= 0 && cp > webhook, "the webhook stops, then the control plane:\n%s", stderr)
		assert.True(t, strings.HasSuffix(stderr, "==> stopped\n"), stderr)
		assert.True(t, apiserverGone(t, lr.dir), "kube-apiserver is stopped")

		// addon-operator's log, which the program and the README point to,
		// holds the module's runs and what the hooks themselves log
		// (module-sdk logs nothing unless told a level).
		log, err := os.ReadFile(filepath.Join(lr.dir, "addon-operator", "addon-operator.log"))
		require.NoError(t, err)
		for _, want := range []string{"ModuleRun success, module is ready", "instances/hook", "creating the default StarrocksClass", "created password Secret"} {
			assert.Truef(t, strings.Contains(string(log), want), "addon-operator.log has %s", want)
		}
	})
}
