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
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/certmanager"
	"github.com/deckhouse/managed-starrocks/dev/node"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The client of the Cluster rotation test: a few workers sharing one
// connection pool, as an application does with database/sql. A pooled
// connection lives 2 s, so new connections go through the Service all the
// time, also while the FEs restart (docs/USAGE.md recommends minutes; the
// test wants many new connections in the short window).
const (
	rotationWorkers     = 2
	rotationConnMaxLife = 2 * time.Second
	// rotationAttempts is the first try and the retries of one query
	// whose connection was closed or refused (USAGE's recipe: retry once
	// or twice).
	rotationAttempts = 3
)

// podNetwork dials from the network namespace of a pod: the host cannot
// dial a Service's cluster IP (the node's blackhole route for
// 198.18.0.0/15 refuses the connect before kube-proxy's OUTPUT rules
// apply), a pod can. A socket belongs to the namespace of the thread that
// created it, so each dial moves its locked thread into the pod's
// namespace and back before unlocking it. The thread is never left to
// end with its goroutine: the node's and cert-manager's processes are
// started with Pdeathsig, which the kernel sends when the thread that
// started them ends, whichever goroutine holds it then. The connection
// then takes the pod's path: its veth, the bridge, kube-proxy's rules to
// one of the Service's ready endpoints, as an application pod's connection
// does. Names are resolved by the pod's nameserver (CoreDNS), also from
// inside the namespace.
type podNetwork struct {
	netns      string // /proc/<pid>/ns/net of a container of the pod
	nameserver string // ip:53 from the pod's resolv.conf
}

func (p podNetwork) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return nil, err
	}
	defer own.Close()
	target, err := os.Open(p.netns)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("setns %s: %w", p.netns, err)
	}
	defer func() {
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			// A thread left in the pod's namespace must not serve
			// other goroutines, and must not end either (Pdeathsig).
			panic(fmt.Sprintf("setns back to the test's network namespace: %v", err))
		}
	}()
	// socket(2) runs on this thread; the connect completes through the
	// netpoller whichever thread waits for it.
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// dialService resolves host (a Service's name) through
// the pod's nameserver and dials it, both from the pod's namespace.
func (p podNetwork) dialService(ctx context.Context, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return p.dial(ctx, network, p.nameserver)
	}}
	// The status names the Service by its FQDN; a shorter name is
	// completed as the pod's search list would.
	if !strings.HasSuffix(host, "."+node.ClusterDomain) {
		host += "." + node.ClusterDomain
	}
	ips, err := resolver.LookupHost(ctx, host+".")
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, "tcp", net.JoinHostPort(ips[0], port))
}

// rotationClient counts the queries of the workers.
type rotationClient struct {
	ok, failed, retried atomic.Int64
	mu                  sync.Mutex
	errs                map[string]int // each failure's and retry's error text, counted
	firstSeen           map[string]time.Time
	stop                chan struct{}
	done                sync.WaitGroup
}

func (c *rotationClient) note(kind string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[kind+": "+err.Error()]++
}

func (c *rotationClient) seen(serial string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.firstSeen[serial]
	return at, ok
}

func (c *rotationClient) errors() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lines []string
	for text, n := range c.errs {
		lines = append(lines, fmt.Sprintf("%dx %s", n, text))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// closedConnection is docs/USAGE.md's ("Keep queries going through
// restarts"): the connection could not be opened or was closed, the errors
// a restarting server gives; the query is retried on a new connection. A
// server's SQL error is not retried.
func closedConnection(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.As(err, &opErr)
}

// startRotationClient runs SELECT 1 in a loop over the instance's client
// Service, the server certificate verified against the CA and the
// Service's host name, from the network of a client pod in the instance's
// namespace.
func (e *env) startRotationClient(t *testing.T, pod podNetwork, host, user, password string, ca []byte) *rotationClient {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("the TLS Secret's ca.crt holds no certificate")
	}
	c := &rotationClient{errs: map[string]int{}, firstSeen: map[string]time.Time{}, stop: make(chan struct{})}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, "9030")
	cfg.DialFunc = func(ctx context.Context, _, addr string) (net.Conn, error) { return pod.dialService(ctx, addr) }
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 3*time.Second, 5*time.Second, 5*time.Second
	cfg.TLS = &tls.Config{
		RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			serial := cs.PeerCertificates[0].SerialNumber.String()
			c.mu.Lock()
			if _, ok := c.firstSeen[serial]; !ok {
				c.firstSeen[serial] = time.Now()
			}
			c.mu.Unlock()
			return nil
		},
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(rotationWorkers)
	db.SetMaxIdleConns(rotationWorkers)
	db.SetConnMaxLifetime(rotationConnMaxLife)
	query := func() error {
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		defer cancel()
		var one int
		return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
	}
	for range rotationWorkers {
		c.done.Add(1)
		go func() {
			defer c.done.Done()
			for {
				select {
				case <-c.stop:
					return
				default:
				}
				err := query()
				for attempt := 1; err != nil && closedConnection(err) && attempt < rotationAttempts; attempt++ {
					c.retried.Add(1)
					c.note("retried", err)
					time.Sleep(200 * time.Millisecond)
					err = query()
				}
				if err != nil {
					c.failed.Add(1)
					c.note("failed", err)
				} else {
					c.ok.Add(1)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	t.Cleanup(func() { db.Close() })
	return c
}

func (c *rotationClient) finish() {
	close(c.stop)
	c.done.Wait()
}

// servedSerial is the serial of the certificate an FE pod serves on its
// query port, dialled from the host at the pod's address (the host
// reaches pod addresses through the bridge).
func servedSerial(ctx context.Context, podIP, serverName, user, password string, roots *x509.CertPool) (string, error) {
	var serial string
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(podIP, "9030")
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 2*time.Second
	cfg.TLS = &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			serial = cs.PeerCertificates[0].SerialNumber.String()
			return nil
		}}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return "", err
	}
	return serial, nil
}

// createSleeper creates a pod in namespace that only sleeps, its one
// container named sleeperContainer, once the namespace's default
// ServiceAccount exists (the controller-manager makes it), and deletes it
// when the test ends.
func (e *env) createSleeper(t *testing.T, namespace, name string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{{Name: sleeperContainer, Image: node.BusyboxImage, Command: []string{"sleep", "3600"}}},
		},
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := e.kube.CoreV1().ServiceAccounts(namespace).Get(e.ctx, "default", metav1.GetOptions{}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if _, err := e.kube.CoreV1().Pods(namespace).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.kube.CoreV1().Pods(namespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
}

const sleeperContainer = "sleeper"

// startClientPod starts a pod that only sleeps, in namespace, and returns
// its network: the test's client dials from there.
func (e *env) startClientPod(t *testing.T, namespace, name string) podNetwork {
	t.Helper()
	e.createSleeper(t, namespace, name)
	deadline := time.Now().Add(2 * time.Minute)
	var p *corev1.Pod
	for {
		var err error
		p, err = e.kube.CoreV1().Pods(namespace).Get(e.ctx, name, metav1.GetOptions{})
		if err == nil && ready(p) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client pod %s/%s not Ready in 2m", namespace, name)
		}
		time.Sleep(500 * time.Millisecond)
	}
	pid := e.containerPID(p, sleeperContainer)
	resolv, err := os.Open(fmt.Sprintf("/proc/%d/root/etc/resolv.conf", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer resolv.Close()
	nameserver := ""
	sc := bufio.NewScanner(resolv)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "nameserver" && nameserver == "" {
			nameserver = net.JoinHostPort(f[1], "53")
		}
	}
	if nameserver == "" {
		t.Fatalf("the client pod's resolv.conf names no nameserver")
	}
	return podNetwork{netns: fmt.Sprintf("/proc/%d/ns/net", pid), nameserver: nameserver}
}

// testClusterCertificateRotation renews the certificate of the Cluster of
// testClusterRolloutOrder (3 FEs, 1 BE) while a client queries it through
// its client Service the way docs/USAGE.md ("Keep queries going through
// restarts") says: a connection pool over the Service, a query retried on
// a closed connection. The module restarts the FEs one at a time, the
// leader last, each only once the previous is Ready; each FE leaves the
// Service's endpoints when its pod is deleted, while its graceful exit
// still accepts connections (StarRocks: at least
// min_graceful_exit_time_second; the stand-in: its --graceful-wait), so the
// client must see no failed query. Measured: queries ok, retried and
// failed, and the seconds from the renewed Secret until every FE serves
// the new certificate.
func (e *env) testClusterCertificateRotation(t *testing.T) {
	names := desired.NamesFor(clusterName)
	sr, err := e.client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace(clusterNS).Get(e.ctx, clusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, _, _ := unstructured.NestedString(sr.Object, "status", "endpoints", "query")
	host, _, _ := strings.Cut(endpoint, ":")
	if host == "" {
		t.Fatalf("no status.endpoints.query: %q", endpoint)
	}
	creds, err := e.kube.CoreV1().Secrets(clusterNS).Get(e.ctx, names.CredentialsSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user, password := string(creds.Data[agentconfig.UsernameKey]), string(creds.Data[agentconfig.PasswordKey])
	secretName := desired.TLSSecretName(clusterName)
	before, err := e.kube.CoreV1().Secrets(clusterNS).Get(e.ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(before.Data["ca.crt"])
	oldSerial := leafSerial(t, before.Data["tls.crt"])

	fes := []string{names.FrontendStatefulSet + "-0", names.FrontendStatefulSet + "-1", names.FrontendStatefulSet + "-2"}
	be := names.BackendStatefulSet + "-0"
	podOf := func(name string) *corev1.Pod {
		p, err := e.kube.CoreV1().Pods(clusterNS).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := map[string]types.UID{}
	for _, name := range fes {
		old[name] = podOf(name).UID
	}
	beBefore := podOf(be)

	pod := e.startClientPod(t, clusterNS, "rotation-client")
	// A new pod reaches the FEs once the node's NetworkPolicy enforcer
	// has its address in the instance namespace's set (kube-router
	// refuses until then: "connection refused" through the Service); the
	// client counts from there.
	reached := time.Now()
	for {
		ctx, cancel := context.WithTimeout(e.ctx, 3*time.Second)
		conn, err := pod.dialService(ctx, net.JoinHostPort(host, "9030"))
		cancel()
		if err == nil {
			conn.Close()
			break
		}
		if time.Since(reached) > time.Minute {
			t.Fatalf("the client pod does not reach %s:9030 in 1m: %v", host, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the client pod reached the Service %s after it was Ready", time.Since(reached).Round(100*time.Millisecond))
	client := e.startRotationClient(t, pod, host, user, password, before.Data["ca.crt"])
	stopped := false
	defer func() {
		if !stopped {
			client.finish()
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, ok := client.seen(oldSerial); ok && client.ok.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no query through the Service in 1m: %d failed\n%s", client.failed.Load(), client.errors())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := client.failed.Load(); n != 0 {
		t.Fatalf("%d queries failed before the renewal:\n%s", n, client.errors())
	}

	if err := certmanager.Renew(e.ctx, e.client.Dynamic, clusterNS, names.FrontendStatefulSet); err != nil {
		t.Fatal(err)
	}
	var updated time.Time
	var after []byte
	// cert-manager re-issues within seconds on an idle machine; a busy
	// one (the node shares two cores with other work) has taken longer.
	deadline = time.Now().Add(3 * time.Minute)
	for {
		s, err := e.kube.CoreV1().Secrets(clusterNS).Get(e.ctx, secretName, metav1.GetOptions{})
		if err == nil && !bytes.Equal(s.Data["tls.crt"], before.Data["tls.crt"]) {
			after, updated = s.Data["tls.crt"], time.Now()
			break
		}
		if time.Now().After(deadline) {
			cert, _ := e.client.Dynamic.Resource(certmanager.Certificates).Namespace(clusterNS).Get(e.ctx, names.FrontendStatefulSet, metav1.GetOptions{})
			var status any
			if cert != nil {
				status = cert.Object["status"]
			}
			t.Fatalf("cert-manager did not re-issue the Secret in 3m; the Certificate's status: %v", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	newSerial := leafSerial(t, after)

	// Every FE restarted (a new pod of the new revision, Ready) and
	// serving the new certificate on its own address.
	restarted := map[string]time.Duration{}
	var everyFE time.Duration
	deadline = time.Now().Add(5 * time.Minute)
	for everyFE == 0 {
		serving := 0
		for _, name := range fes {
			p, err := e.kube.CoreV1().Pods(clusterNS).Get(e.ctx, name, metav1.GetOptions{})
			if err != nil || p.UID == old[name] || !ready(p) || p.Status.PodIP == "" {
				continue
			}
			if _, ok := restarted[name]; !ok {
				restarted[name] = time.Since(updated)
				if rev := p.Annotations[certificateRevisionAnnotation]; rev == "" || rev == "1" {
					t.Errorf("the restarted FE pod %s carries certificate revision %q, want 2 or more", name, rev)
				}
			}
			if serial, err := servedSerial(e.ctx, p.Status.PodIP, host, user, password, roots); err == nil && serial == newSerial {
				serving++
			}
		}
		if serving == len(fes) {
			everyFE = time.Since(updated)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every FE serves the renewed certificate 5m after the Secret changed (restarted: %v); the client so far: %d ok, %d failed, %d retried\n%s",
				restarted, client.ok.Load(), client.failed.Load(), client.retried.Load(), client.errors())
		}
		time.Sleep(500 * time.Millisecond)
	}
	e.waitAvailableOf(t, clusterNS, clusterName, 3*time.Minute)
	// A few more seconds of queries against the settled instance.
	time.Sleep(3 * time.Second)
	client.finish()
	stopped = true
	throughService, seenNew := client.seen(newSerial)
	t.Logf("cluster certificate rotation: %d queries ok, %d failed, %d retried on a closed connection; Secret updated -> every FE serves the new certificate in %s; FE pods Ready again after %v; the client saw the new certificate through the Service: %v (%s after the Secret)",
		client.ok.Load(), client.failed.Load(), client.retried.Load(), everyFE.Round(100*time.Millisecond), restarted, seenNew, throughService.Sub(updated).Round(100*time.Millisecond))
	if errs := client.errors(); errs != "" {
		t.Logf("client errors:\n%s", errs)
	}
	if n := client.failed.Load(); n != 0 {
		t.Errorf("%d queries failed while the FEs restarted one at a time", n)
	}
	if !seenNew {
		t.Errorf("no connection through the Service saw the new certificate")
	}

	// The BE pod is not restarted by a renewal.
	if now := podOf(be); now.UID != beBefore.UID {
		t.Errorf("the renewal restarted the BE pod %s", be)
	}
}
