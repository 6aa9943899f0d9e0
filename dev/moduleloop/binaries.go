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

package moduleloop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/gobuild"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// Packages of the binaries the loop runs.
const (
	HooksPackage   = "./hooks"
	WebhookPackage = "./images/webhook"
)

// BuildBinary builds a main package of the repository into dir and returns
// the binary's path (dev/gobuild: linked only when its code changed).
// -s -w leave out the symbol table and DWARF: the link takes half the CPU
// and the hooks binary, started for every hook run, is a third smaller;
// module-sdk still names the hooks after their source paths
// (runtime.Caller reads the pclntab, which -s keeps).
func BuildBinary(ctx context.Context, pkg, dir string) (string, error) {
	name := filepath.Base(pkg)
	if err := gobuild.Build(ctx, dir, name, []string{"-ldflags=-s -w"}, pkg); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// WebhookEndpoint is a reachable admission webhook server.
type WebhookEndpoint struct {
	// URL is the server's base URL, e.g. https://127.0.0.1:9443.
	URL string
	// CABundle is the PEM CA that signed the server's certificate.
	CABundle []byte
}

// Webhook is an admission webhook server on 127.0.0.1: its Endpoint is
// known from PrepareWebhook on, the process runs from Start on.
type Webhook struct {
	Endpoint WebhookEndpoint
	cmd      *exec.Cmd
	done     chan struct{}
	Log      string

	dir              string
	port, healthPort int
}

// StartWebhook is PrepareWebhook and Start at once.
func StartWebhook(ctx context.Context, binary, kubeconfig, dir string) (*Webhook, error) {
	w, err := PrepareWebhook(dir)
	if err != nil {
		return nil, err
	}
	if err := w.Start(ctx, binary, kubeconfig); err != nil {
		return nil, err
	}
	return w, nil
}

// PrepareWebhook picks the webhook's ports and makes its certificate for
// 127.0.0.1, signed by a throwaway CA, so that the module's webhook
// configurations can point at it before it runs. The webhook runs as its
// own service account, which the module's release makes: Start it once the
// module's first pass is done, as the webhook's pod starts in a cluster
// once its release is installed.
func PrepareWebhook(dir string) (*Webhook, error) {
	ca, err := testpki.NewCA("managed-starrocks local webhook CA")
	if err != nil {
		return nil, err
	}
	leaf, err := ca.Issue("managed-starrocks-webhook", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, 0)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "webhook-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := leaf.WriteFiles(certDir, ca); err != nil {
		return nil, err
	}
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	return &Webhook{
		Endpoint: WebhookEndpoint{URL: "https://127.0.0.1:" + strconv.Itoa(ports[0]), CABundle: ca.CertPEM},
		Log:      filepath.Join(dir, "webhook.log"),
		done:     make(chan struct{}),
		dir:      dir, port: ports[0], healthPort: ports[1],
	}, nil
}

// Start runs the webhook binary; it reads StarrocksClasses through the
// kubeconfig. It returns once the webhook is ready.
func (w *Webhook) Start(ctx context.Context, binary, kubeconfig string) error {
	certDir := filepath.Join(w.dir, "webhook-certs")
	logFile, err := os.Create(w.Log)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary,
		"--listen=127.0.0.1:"+strconv.Itoa(w.port),
		"--health-listen=127.0.0.1:"+strconv.Itoa(w.healthPort),
		"--tls-cert-file="+filepath.Join(certDir, "tls.crt"),
		"--tls-key-file="+filepath.Join(certDir, "tls.key"),
		"--kubeconfig="+kubeconfig,
		"--shutdown-delay=0s",
		"--shutdown-grace=2s",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a Ctrl-C in the terminal reaches the program
	// that started it, which stops it in order, not the webhook directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start webhook: %w", err)
	}
	w.cmd = cmd
	go func() { cmd.Wait(); logFile.Close(); close(w.done) }()

	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", w.healthPort)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-w.done:
			return fmt.Errorf("webhook exited at start; see %s", w.Log)
		case <-ctx.Done():
			w.Stop()
			return ctx.Err()
		default:
		}
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.Stop()
	return fmt.Errorf("webhook not ready in 30s; see %s", w.Log)
}

// Stop ends the webhook server (if it was started).
func (w *Webhook) Stop() {
	if w.cmd == nil {
		return
	}
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}
