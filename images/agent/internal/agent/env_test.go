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

package agent_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const (
	queryHost = "d8ms-sr-demo.ns.svc.cluster.local"
	fe0       = "d8ms-sr-demo-0.d8ms-sr-demo-fe.ns.svc.cluster.local"
	fe1       = "d8ms-sr-demo-1.d8ms-sr-demo-fe.ns.svc.cluster.local"
	fe2       = "d8ms-sr-demo-2.d8ms-sr-demo-fe.ns.svc.cluster.local"
	be0       = "d8ms-sr-demo-be-0.d8ms-sr-demo-be.ns.svc.cluster.local"
	be1       = "d8ms-sr-demo-be-1.d8ms-sr-demo-be.ns.svc.cluster.local"
	rootPass  = "Zq8-secret-from-the-Secret"
	agentPass = "AGENTPASSWORDBASE32XYZ"
	adminPass = "TEAMADMINPASSWORD234567"
)

// env is one fake FE plus the files an agent pod mounts.
type env struct {
	fe        *fakefe.Server
	ca        *testpki.CA
	secret    *testpki.SecretVolume
	serverDir string
	dir       string
	cfg       agentconfig.Config
}

type envOptions struct {
	force          bool
	serverPassword string
	// serverHost is the certificate's DNS name; default queryHost.
	serverHost string
	listenAddr string
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	if o.serverHost == "" {
		o.serverHost = queryHost
	}
	e := &env{ca: testpki.MustCA(t, "instance-ca"), dir: t.TempDir(), serverDir: t.TempDir()}
	leaf := e.ca.MustIssue(t, o.serverHost)
	e.writeServerCert(t, leaf)
	e.secret = testpki.NewSecretVolume(t, leaf.SecretData(e.ca))
	// The fake FE reads its certificate at every handshake, so a rotation
	// on the server side takes effect immediately and the measured latency
	// is the agent's alone.
	e.fe = fakefe.Start(t, fakefe.Options{TLS: e.serverTLS(), RootPassword: o.serverPassword, ForceSecureTransport: o.force, ListenAddr: o.listenAddr})
	e.cfg = agentconfig.Config{
		Instance: "ns/demo", QueryHost: queryHost, QueryPort: agentconfig.QueryPort,
		Frontends: []string{fe0}, EditLogPort: agentconfig.EditLogPort,
		HeartbeatPort: agentconfig.HeartbeatPort,
	}
	e.writeConfig(t)
	e.writeSecret(t, "credentials", map[string]string{agentconfig.UsernameKey: agentconfig.AgentUser,
		agentconfig.PasswordKey: agentPass + "\n", agentconfig.RootPasswordKey: rootPass})
	e.writeSecret(t, "admin-credentials", map[string]string{agentconfig.UsernameKey: agentconfig.AdminUser,
		agentconfig.PasswordKey: adminPass})
	return e
}

// serverTLS is the fake FEs' TLS: the certificate in serverDir.
func (e *env) serverTLS() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		c, err := tls.LoadX509KeyPair(filepath.Join(e.serverDir, "tls.crt"), filepath.Join(e.serverDir, "tls.key"))
		return &c, err
	}}
}

// writeSecret writes the files of a mounted Secret.
func (e *env) writeSecret(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, dir), 0o755))
	for name, v := range files {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, dir, name), []byte(v), 0o600))
	}
}

func (e *env) writeServerCert(t testing.TB, leaf *testpki.Leaf) {
	t.Helper()
	// Write the key first and rename both into place so a handshake never
	// sees a certificate without its key.
	for _, f := range []struct {
		name string
		data []byte
	}{{"tls.key", leaf.KeyPEM}, {"tls.crt", leaf.CertPEM}} {
		tmp := filepath.Join(e.serverDir, f.name+".tmp")
		require.NoError(t, os.WriteFile(tmp, f.data, 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(e.serverDir, f.name)))
	}
}

func (e *env) writeConfig(t testing.TB) {
	t.Helper()
	data, err := json.Marshal(e.cfg)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "config"), 0o755))
	tmp := filepath.Join(e.dir, "config", "agent.json.tmp")
	require.NoError(t, os.WriteFile(tmp, data, 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(e.dir, "config", agentconfig.FileName)))
}

// dial sends every host name to the fake FE, standing in for cluster DNS:
// the agent itself only ever sees the names.
func (e *env) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, e.fe.Addr())
}

func (e *env) options(selfHost string) agent.Options {
	return agent.Options{
		ConfigFile:          filepath.Join(e.dir, "config", agentconfig.FileName),
		CAFile:              e.secret.Path("ca.crt"),
		CertFile:            e.secret.Path("tls.crt"),
		CredentialsDir:      filepath.Join(e.dir, "credentials"),
		AdminCredentialsDir: filepath.Join(e.dir, "admin-credentials"),
		SelfHost:            selfHost,
		HelperFile:          filepath.Join(e.dir, "fe-helper"),
		Interval:            time.Hour, // passes are driven by the test
		DialFunc:            e.dial,
		Logger:              slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

func rootsOf(t testing.TB, ca *testpki.CA) *x509.CertPool {
	p := x509.NewCertPool()
	require.True(t, p.AppendCertsFromPEM(ca.CertPEM))
	return p
}

// runAgent starts an agent's loop (certificate watch included) and stops it
// at the end of the test.
func runAgent(t testing.TB, opts agent.Options) *agent.Agent {
	t.Helper()
	a := agent.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.Run(ctx); err != nil {
			t.Errorf("agent run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	require.Eventually(t, func() bool { return a.Ready() == nil }, 10*time.Second, 10*time.Millisecond, "agent not ready")
	return a
}

type recordingPublisher struct {
	mu  sync.Mutex
	all []agentconfig.Status
}

func (p *recordingPublisher) Publish(_ context.Context, st agentconfig.Status) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.all = append(p.all, st)
	return nil
}

func (p *recordingPublisher) last() agentconfig.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.all) == 0 {
		return agentconfig.Status{}
	}
	return p.all[len(p.all)-1]
}
