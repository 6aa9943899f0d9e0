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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/pem"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/dev/certmanager"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// certificateRevisionAnnotation is what the FE pod template carries from
// revision 2 on (pkg/instanceobjects/templates/_statefulset-frontend.tpl).
const certificateRevisionAnnotation = "managed-starrocks.deckhouse.io/certificate-revision"

// queryLoop runs SELECT 1 over TLS on a fresh login each time (so each one
// is a new handshake) through the client Service, verifying the server
// certificate against the instance CA, and records the serial each
// handshake saw.
type queryLoop struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	firstSeen  map[string]time.Time // serial → first handshake that saw it
	lastErr    error
	stop       chan struct{}
	done       chan struct{}
}

func (e *env) startQueryLoop(t *testing.T, ca []byte) *queryLoop {
	t.Helper()
	names := desired.NamesFor("db")
	creds, err := e.kube.CoreV1().Secrets(ns).Get(e.ctx, names.CredentialsSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("the TLS Secret's ca.crt holds no certificate")
	}
	l := &queryLoop{firstSeen: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	// The name verified is the Service's DNS name, as a team's client
	// verifies it (the certificate's dnsNames).
	cfg := &tls.Config{
		RootCAs: roots, ServerName: names.ClientService + "." + ns + ".svc", MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			serial := cs.PeerCertificates[0].SerialNumber.String()
			l.mu.Lock()
			if _, seen := l.firstSeen[serial]; !seen {
				l.firstSeen[serial] = time.Now()
			}
			l.mu.Unlock()
			return nil
		},
	}
	if err := mysql.RegisterTLSConfig("rotation", cfg); err != nil {
		t.Fatal(err)
	}
	dsn := mysql.NewConfig()
	dsn.User, dsn.Passwd = string(creds.Data[agentconfig.UsernameKey]), string(creds.Data[agentconfig.PasswordKey])
	// The host cannot dial a Service's cluster IP: the node's blackhole
	// route for 198.18.0.0/15 refuses the connect (EINVAL) before
	// kube-proxy's OUTPUT rules could rewrite it. It reaches pod addresses
	// through the bridge, so each connection dials the FE pod's current IP,
	// as the Service would route it (the restarted pod has a new one).
	mysql.RegisterDialContext("fepod", func(ctx context.Context, _ string) (net.Conn, error) {
		p, err := e.kube.CoreV1().Pods(ns).Get(ctx, names.FrontendStatefulSet+"-0", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil || !ready(p) {
			return nil, fmt.Errorf("FE pod %s not Ready", p.Name)
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", net.JoinHostPort(p.Status.PodIP, "9030"))
	})
	dsn.Net, dsn.Addr, dsn.TLSConfig = "fepod", names.ClientService+":9030", "rotation"
	dsn.Timeout, dsn.ReadTimeout = 2*time.Second, 2*time.Second
	db, err := sql.Open("mysql", dsn.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0)
	go func() {
		defer close(l.done)
		defer db.Close()
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(e.ctx, 3*time.Second)
			var one int
			err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
			cancel()
			if err != nil {
				l.failed.Add(1)
				l.mu.Lock()
				l.lastErr = err
				l.mu.Unlock()
				time.Sleep(100 * time.Millisecond)
				continue
			}
			l.ok.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return l
}

func (l *queryLoop) finish() {
	close(l.stop)
	<-l.done
}

func (l *queryLoop) seen(serial string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.firstSeen[serial]
	return at, ok
}

func leafSerial(t *testing.T, crt []byte) string {
	t.Helper()
	block, _ := pem.Decode(crt)
	if block == nil {
		t.Fatal("tls.crt holds no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.String()
}

// renewCertificate asks cert-manager to re-issue the Certificate now
// (certmanager.Renew, as `cmctl renew` does).
func (e *env) renewCertificate(t *testing.T, name string) {
	t.Helper()
	if err := certmanager.Renew(e.ctx, e.client.Dynamic, ns, name); err != nil {
		t.Fatal(err)
	}
}

// testCertificateRotation re-issues the instance certificate while a client
// queries over TLS. The module's promise (hooks/README.md "Certificate
// renewal", docs/ADMIN_GUIDE.md): the FE reads its keystore only at start,
// so a renewal restarts the FE pods one at a time and leaves the BE pods
// alone (the agent reloads its files). A Standalone has one FE, so its
// clients see the restart; the test reports how many queries failed and
// how long the new certificate took to be served.
func (e *env) testCertificateRotation(t *testing.T) {
	names := desired.NamesFor("db")
	secretName := desired.TLSSecretName("db")
	before, err := e.kube.CoreV1().Secrets(ns).Get(e.ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldSerial := leafSerial(t, before.Data["tls.crt"])
	fe, be := e.pod(names.FrontendStatefulSet+"-0"), e.pod(names.BackendStatefulSet+"-0")

	loop := e.startQueryLoop(t, before.Data["ca.crt"])
	stopped := false
	defer func() {
		if !stopped {
			loop.finish()
		}
	}()
	// The loop serves the old certificate before the renewal.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := loop.seen(oldSerial); ok && loop.ok.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			loop.mu.Lock()
			defer loop.mu.Unlock()
			t.Fatalf("no query over TLS with the current certificate in 30s: %d failed, last error %v", loop.failed.Load(), loop.lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	failedBefore := loop.failed.Load()

	e.renewCertificate(t, names.FrontendStatefulSet)
	var after []byte
	var updated time.Time
	deadline = time.Now().Add(time.Minute)
	for after == nil {
		s, err := e.kube.CoreV1().Secrets(ns).Get(e.ctx, secretName, metav1.GetOptions{})
		if err == nil && !bytes.Equal(s.Data["tls.crt"], before.Data["tls.crt"]) {
			after, updated = s.Data["tls.crt"], time.Now()
			if !bytes.Equal(s.Data["ca.crt"], before.Data["ca.crt"]) {
				t.Errorf("the renewal changed the instance CA")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("cert-manager did not re-issue the Secret in 1m")
		}
		time.Sleep(100 * time.Millisecond)
	}
	newSerial := leafSerial(t, after)
	if newSerial == oldSerial {
		t.Fatal("the renewal kept the serial")
	}

	// The FE is restarted from a template carrying the new revision.
	newFE := e.waitNewPodReady(fe.Name, fe.UID, 4*time.Minute)
	if rev := newFE.Annotations[certificateRevisionAnnotation]; rev == "" || rev == "1" {
		t.Errorf("the restarted FE pod carries certificate revision %q, want 2 or more", rev)
	}
	deadline = time.Now().Add(time.Minute)
	var inUse time.Time
	for {
		if at, ok := loop.seen(newSerial); ok {
			inUse = at
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the FE does not serve the renewed certificate a minute after its pod is Ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.waitAvailable(3 * time.Minute)
	// After the new certificate is in use, every handshake sees it.
	time.Sleep(2 * time.Second)
	loop.finish()
	stopped = true
	loop.mu.Lock()
	lastErr := loop.lastErr
	loop.mu.Unlock()
	t.Logf("certificate rotation: %d queries ok, %d failed during the FE restart (%d before the renewal; last error: %v); Secret updated -> new certificate served in %s",
		loop.ok.Load(), loop.failed.Load()-failedBefore, failedBefore, lastErr, inUse.Sub(updated).Round(100*time.Millisecond))
	if failedBefore != 0 {
		t.Errorf("%d queries failed before the renewal", failedBefore)
	}

	// The BE pod is not restarted: its template does not change and its
	// agent reloads the files.
	nowBE := e.pod(be.Name)
	if nowBE.UID != be.UID {
		t.Errorf("the renewal restarted the BE pod %s", be.Name)
	}
	for i, c := range nowBE.Status.ContainerStatuses {
		if c.RestartCount != be.Status.ContainerStatuses[i].RestartCount {
			t.Errorf("the renewal restarted container %s/%s", be.Name, c.Name)
		}
	}
}
