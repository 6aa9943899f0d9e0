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
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/gobuild"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binaries builds the agent and the idle floor program once per test run,
// into the repository's bin/test/agent (dev/gobuild: linked only when
// their code changed; two links cost about 6 CPU-seconds).
func binaries(t testing.TB) (agentBin, idleBin string) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = filepath.Abs(filepath.Join("..", "..", "bin", "test", "agent"))
		if buildErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{{"agent", "./images/agent"}, {"idle", "./images/agent/testdata/idle"}} {
			if buildErr = gobuild.Build(context.Background(), buildDir, b.out, nil, b.pkg); buildErr != nil {
				return
			}
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(buildDir, "agent"), filepath.Join(buildDir, "idle")
}

// process is the agent binary running against a fake FE. The FE is reached
// through this machine's host name, the way the agent reaches the Service
// name in a cluster: the binary has no test hooks.
type process struct {
	cmd    *exec.Cmd
	listen string
	fe     *fakefe.Server
	logs   *syncBuffer
	exited chan error
}

// Passwords as the hooks make them (crypto/rand, base32).
const (
	agentPassword = "AGENTPASSWORDBASE32XYZ"
	rootPassword  = "ROOTPASSWORDBASE32ABCD"
	adminPassword = "TEAMADMINPASSWORD234567"
)

func startAgent(t testing.TB) *process {
	t.Helper()
	agentBin, _ := binaries(t)
	host, err := os.Hostname()
	require.NoError(t, err)
	addrs, err := net.LookupHost(host)
	require.NoError(t, err, "the test needs the machine's host name %q to resolve", host)
	require.NotEmpty(t, addrs)

	dir := t.TempDir()
	ca := testpki.MustCA(t, "ca")
	leaf := ca.MustIssue(t, host)
	secret := testpki.NewSecretVolume(t, leaf.SecretData(ca))
	pair, err := leaf.TLSCertificate()
	require.NoError(t, err)
	fe := fakefe.Start(t, fakefe.Options{
		TLS:          &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		RootPassword: "", ListenAddr: "0.0.0.0:0", // a fresh FE
	})
	fe.SetFrontends(fakefe.Frontend{Host: host, EditLogPort: 9010, Role: "LEADER", Alive: true})
	_, port, err := net.SplitHostPort(fe.Addr())
	require.NoError(t, err)
	qport, _ := strconv.Atoi(port)
	cfg, err := json.Marshal(agentconfig.Config{QueryHost: host, QueryPort: qport, Frontends: []string{host},
		EditLogPort: 9010, HeartbeatPort: 9050})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "config"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config", "agent.json"), cfg, 0o644))
	for sub, files := range map[string]map[string]string{
		"cred":  {"username": "d8_agent", "password": agentPassword, "root-password": rootPassword},
		"admin": {"username": "admin", "password": adminPassword},
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
		for name, v := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, sub, name), []byte(v), 0o600))
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := l.Addr().String()
	require.NoError(t, l.Close())

	p := &process{listen: listen, fe: fe, logs: &syncBuffer{}, exited: make(chan error, 1)}
	p.cmd = exec.Command(agentBin,
		"--config="+filepath.Join(dir, "config", "agent.json"),
		"--tls-ca-file="+secret.Path("ca.crt"),
		"--credentials-dir="+filepath.Join(dir, "cred"),
		"--admin-credentials-dir="+filepath.Join(dir, "admin"),
		"--self-host="+host,
		"--listen="+listen,
		"--helper-file="+filepath.Join(dir, "fe-helper"),
		"--publish-status=false",
		"--manage-users=false",
		"--interval=1s",
		"--log-level=Debug",
	)
	p.cmd.Stderr = p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	require.Eventually(t, func() bool { return p.get("/readyz") == http.StatusOK && len(fe.Connections()) > 0 },
		15*time.Second, 20*time.Millisecond, "agent did not become ready; logs:\n%s", p.logs)
	return p
}

func (p *process) get(path string) int {
	resp, err := http.Get("http://" + p.listen + path)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func (p *process) rssKiB(t testing.TB) float64 {
	return vmRSS(t, p.cmd.Process.Pid)
}

func vmRSS(t testing.TB, pid int) float64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			require.NoError(t, err)
			return kib
		}
	}
	t.Fatal("VmRSS not found")
	return 0
}

func TestBinary(t *testing.T) {
	p := startAgent(t)

	t.Run("serves probes and the module's metrics", func(t *testing.T) {
		require.Equal(t, http.StatusOK, p.get("/healthz"))
		require.Equal(t, http.StatusOK, p.get("/readyz"))
		resp, err := http.Get("http://" + p.listen + "/metrics")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		for _, name := range []string{status.MetricCertificateNotAfter, status.MetricCertificateReady + " 1",
			status.MetricLastApplySuccess, status.MetricApplyTotal + `{result="success"}`,
			status.MetricErrorsTotal + `{kind="tls"} 0`} {
			require.Contains(t, string(body), name)
		}
	})

	t.Run("sets root's password on a fresh FE and reports the accounts", func(t *testing.T) {
		require.Eventually(t, func() bool { return p.fe.RootPassword() == rootPassword }, 10*time.Second, 20*time.Millisecond)
		resp, err := http.Get("http://" + p.listen + "/metrics")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Contains(t, string(body), status.MetricAccountsReady+" 1")
	})

	t.Run("logs JSON without any password", func(t *testing.T) {
		logs := p.logs.String()
		for _, secret := range []string{agentPassword, rootPassword, adminPassword} {
			require.NotContains(t, logs, secret)
		}
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			require.True(t, json.Valid([]byte(line)), "not a JSON log line: %s", line)
		}
	})

	t.Run("stops gracefully on SIGTERM", func(t *testing.T) {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		select {
		case err := <-p.exited:
			p.exited <- err // for the cleanup
			require.NoError(t, err, "exit status; logs:\n%s", p.logs)
		case <-time.After(10 * time.Second):
			t.Fatalf("agent did not exit within 10s of SIGTERM; logs:\n%s", p.logs)
		}
		require.Contains(t, p.logs.String(), "agent stopped gracefully")
	})
}

// BenchmarkIdleRSS reports the agent's resident memory while idle and
// connected (goal < 30 MiB) against a do-nothing Go HTTP server measured in
// the same run.
func BenchmarkIdleRSS(b *testing.B) {
	_, idleBin := binaries(b)
	p := startAgent(b)
	floor := exec.Command(idleBin)
	require.NoError(b, floor.Start())
	defer func() { _ = floor.Process.Kill(); _ = floor.Wait() }()
	// A few passes (interval 1s) so the pools, watchers and HTTP server are
	// all warm.
	time.Sleep(3 * time.Second)
	b.ResetTimer()
	var agentKiB, floorKiB float64
	for i := 0; i < b.N; i++ {
		agentKiB = p.rssKiB(b)
		floorKiB = vmRSS(b, floor.Process.Pid)
	}
	b.ReportMetric(agentKiB/1024, "agent-RSS-MiB")
	b.ReportMetric(floorKiB/1024, "floor-RSS-MiB")
	b.ReportMetric(agentKiB/floorKiB, "agent/floor")
	b.ReportMetric(agentKiB/1024/30, "agent/goal30MiB")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
