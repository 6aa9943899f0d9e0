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

// Package certmanager runs cert-manager's own controllers (built by
// dev/tools/cert-manager into the tools cache) as a host process against
// the local control plane, so Certificates, CA and SelfSigned Issuers and
// ClusterIssuers are issued by cert-manager itself: Secrets with tls.crt,
// tls.key, ca.crt and the keystores a Certificate asks for, renewed when due
// or asked. It does not run cert-manager's webhook (nothing validates or
// defaults cert-manager objects here), its cainjector, ACME, Vault or
// Venafi issuers, or leader election. Development tooling, never shipped.
package certmanager

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// Controller is a running cert-manager controller process.
type Controller struct {
	cmd  *exec.Cmd
	done chan struct{}
	// Log is the file with the controller's output.
	Log string
}

// Start runs the controllers with the kubeconfig; its log goes to
// dir/cert-manager.log. Stop it before the API server.
func Start(kubeconfig, dir string) (*Controller, error) {
	bin, err := controlplane.Tool("cert-manager-controller")
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "cert-manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: if the test binary dies, the controller dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start cert-manager controller: %w", err)
	}
	c := &Controller{cmd: cmd, done: make(chan struct{}), Log: logPath}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	return c, nil
}

// Deckhouse's cert-manager runs as this service account; Deckhouse's
// policies exclude it as one of a d8- namespace (d8ms-prefix.deckhouse.io's
// exclude-d8-namespaces lets it issue the instances' d8ms-* certificates).
const (
	ServiceAccountNamespace = "d8-cert-manager"
	ServiceAccountName      = "cert-manager"
)

// Kubeconfig makes cert-manager's service account (bound to cluster-admin)
// and writes a kubeconfig acting as it, by impersonation: admission judges
// the controllers as it judges Deckhouse's cert-manager.
func Kubeconfig(ctx context.Context, cp *controlplane.ControlPlane) (string, error) {
	if err := controlplane.EnsureServiceAccount(ctx, cp.RESTConfig(), ServiceAccountNamespace, ServiceAccountName, "cluster-admin"); err != nil {
		return "", err
	}
	user, groups := controlplane.ServiceAccountUser(ServiceAccountNamespace, ServiceAccountName)
	return cp.WriteKubeconfig("cert-manager.kubeconfig", cp.UserConfig(user, groups...))
}

// StartForTest is Start for a test, as Deckhouse's cert-manager
// (Kubeconfig): it fails t on an error and stops the controller when t
// ends (before a control plane started earlier).
func StartForTest(t testing.TB, cp *controlplane.ControlPlane) *Controller {
	t.Helper()
	kubeconfig, err := Kubeconfig(context.Background(), cp)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(kubeconfig, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			if data, err := os.ReadFile(c.Log); err == nil {
				t.Logf("cert-manager log:\n%s", tail(data, 60))
			}
		}
	})
	return c
}

// Stop ends the controller: SIGTERM, then SIGKILL after 10 s.
func (c *Controller) Stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
}

func tail(data []byte, lines int) []byte {
	n := 0
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			if n++; n > lines {
				return data[i+1:]
			}
		}
	}
	return data
}
