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

package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestCertificateErrorWithClientsStillServed: the real agent binary runs as
// the FE pod's sidecar against the FE-dialect server and publishes its status
// on the pod in the real apiserver, where the module's hooks read it. When the
// certificate Secret turns into one the agent cannot load, the instance's
// TLSReady condition turns False naming the pod and the reason, while the
// agent's /readyz stays OK (every FE's agent reads the same Secret: a failing
// readiness would take every FE out of the client Service at once) and
// clients keep being served over TLS.
func TestCertificateErrorWithClientsStillServed(t *testing.T) {
	t.Parallel()
	const ns, name = "team-t", "tlserr"
	e := sharedEnv(t, withWebhook)
	e.apply(testClass)
	e.apply(instance(ns, name, "Standalone", ""))
	pod := e.waitFirstFrontendPod(ns, name)

	a := startSidecar(t, e.agentKubeconfig(ns, pod), ns, name, pod)
	e.eventually("TLSReady from the agent's report", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "TLSReady")
		return status == "True", fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	if got := a.get("/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz %d with a good certificate; logs:\n%s", got, a.logs)
	}

	// The Secret now holds a certificate of another CA: it does not verify
	// against ca.crt, so the agent cannot load it.
	stranger := testpki.MustCA(t, "someone-elses-ca").MustIssue(t, a.host)
	a.secret.Update(stranger.SecretData(a.ca))
	e.eventually("TLSReady turns False with the agent's reason", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "TLSReady")
		if got := a.get("/readyz"); got != http.StatusOK {
			t.Fatalf("/readyz %d after the certificate broke: the pod would leave the client Service; logs:\n%s", got, a.logs)
		}
		return status == "False" && reason == "CertificateInvalid" && strings.Contains(message, pod) && strings.Contains(message, "does not verify"),
			fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	for range 5 { // a few more agent passes
		time.Sleep(time.Second)
		if got := a.get("/readyz"); got != http.StatusOK {
			t.Fatalf("/readyz %d after the certificate broke; logs:\n%s", got, a.logs)
		}
	}
	// A client of the team still works over TLS: the FE serves its own keystore.
	if err := a.tryLogin(agentconfig.AdminUser, sidecarAdminPassword); err != nil {
		t.Fatalf("a TLS client of the instance: %v", err)
	}
}

// waitFirstFrontendPod waits for a Standalone instance's objects, marks its
// certificate issued and waits for the StatefulSet controller to create the
// first FE pod, the one a sidecar then plays the agent of.
func (e *env) waitFirstFrontendPod(namespace, name string) (pod string) {
	e.t.Helper()
	e.waitObjects(namespace, name, 1, 1)
	fe := "d8ms-sr-" + name
	pod = fe + "-0"
	e.markCertificateRevision(namespace, fe, 1)
	e.eventually("the StatefulSet controller created "+pod, func() (bool, string) {
		_, err := e.kube.CoreV1().Pods(namespace).Get(context.Background(), pod, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	return pod
}

// sidecar is the agent binary with the files its container mounts.
type sidecar struct {
	host, listen string
	queryPort    string
	ca           *testpki.CA
	secret       *testpki.SecretVolume
	fe           *fakefe.Server
	logs         *strings.Builder
	configPath   string
	self         string // the FE's own host, as the fake FE lists it
}

const (
	sidecarAgentPassword = "AGENTPASSWORDBASE32XYZ"
	sidecarRootPassword  = "ROOTPASSWORDBASE32ABCD"
	sidecarAdminPassword = "TEAMADMINPASSWORD234567"
)

// startSidecar runs the agent for pod against a fresh fake FE reached through
// this machine's host name (the binary has no test hooks, so it resolves the
// name the way it resolves the Service name in a cluster). A selfHost
// (the pod's FQDN, as the FE leader names itself in a cluster) makes the
// agent run in a mount namespace of its own whose /etc/hosts points that
// name at this machine: the hooks count the leader's report only when the
// leader's host is the reporting pod's.
func startSidecar(t *testing.T, kubeconfig, namespace, instance, pod string, selfHost ...string) *sidecar {
	t.Helper()
	bin, err := binary("./images/agent")
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.LookupHost(host); err != nil {
		t.Fatalf("the test needs the machine's host name %q to resolve: %v", host, err)
	}
	s := &sidecar{host: host, ca: testpki.MustCA(t, "instance-ca"), logs: &strings.Builder{}}
	leaf := s.ca.MustIssue(t, host)
	s.secret = testpki.NewSecretVolume(t, leaf.SecretData(s.ca))
	pair, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	s.fe = fakefe.Start(t, fakefe.Options{TLS: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, ListenAddr: "0.0.0.0:0"})
	s.self = host
	if len(selfHost) > 0 {
		s.self = selfHost[0]
	}
	s.fe.SetFrontends(fakefe.Frontend{Host: s.self, EditLogPort: 9010, Role: "LEADER", Alive: true})
	_, s.queryPort, _ = net.SplitHostPort(s.fe.Addr())
	qport, _ := strconv.Atoi(s.queryPort)

	dir := t.TempDir()
	cfg, _ := json.Marshal(agentconfig.Config{Instance: namespace + "/" + instance, QueryHost: host, QueryPort: qport,
		Frontends: []string{s.self}, EditLogPort: 9010, HeartbeatPort: 9050})
	files := map[string]string{
		"config/" + agentconfig.FileName: string(cfg),
		"cred/username":                  agentconfig.AgentUser, "cred/password": sidecarAgentPassword, "cred/root-password": sidecarRootPassword,
		"admin/username": agentconfig.AdminUser, "admin/password": sidecarAdminPassword,
	}
	s.configPath = filepath.Join(dir, "config", agentconfig.FileName)
	for p, v := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.listen = l.Addr().String()
	_ = l.Close()

	args := []string{
		"--config=" + s.configPath,
		"--tls-ca-file=" + s.secret.Path("ca.crt"),
		"--credentials-dir=" + filepath.Join(dir, "cred"),
		"--admin-credentials-dir=" + filepath.Join(dir, "admin"),
		"--pod-name=" + pod, "--pod-namespace=" + namespace,
		"--self-host=" + s.self,
		"--listen=" + s.listen,
		"--helper-file=" + filepath.Join(dir, "fe-helper"),
		"--kubeconfig=" + kubeconfig,
		"--interval=1s",
	}
	cmd := exec.Command(bin, args...)
	if s.self != host {
		system, err := os.ReadFile("/etc/hosts")
		if err != nil {
			t.Fatal(err)
		}
		hosts := filepath.Join(dir, "hosts")
		if err := os.WriteFile(hosts, append([]byte("127.0.0.1 "+s.self+"\n"), system...), 0o644); err != nil {
			t.Fatal(err)
		}
		// unshare and sh exec in place: the process is the agent's.
		cmd = exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c",
			`mount --bind "$0" /etc/hosts && exec "$@"`, hosts, bin}, args...)...)
	}
	cmd.Stderr = s.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); <-exited })
	return s
}

func (s *sidecar) get(path string) int {
	resp, err := http.Get("http://" + s.listen + path) //nolint:noctx // a local test server
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// openAs is a pool that logs in as user over verified TLS, as a client of
// the instance does.
func (s *sidecar) openAs(user, password string) (*sql.DB, error) {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.ca.CertPEM)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", net.JoinHostPort(s.host, s.queryPort)
	cfg.TLS = &tls.Config{RootCAs: roots, ServerName: s.host, MinVersion: tls.VersionTLS12}
	cfg.Timeout = 5 * time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// tryLogin is nil when user logs in with password over verified TLS.
func (s *sidecar) tryLogin(user, password string) error {
	db, err := s.openAs(user, password)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}
