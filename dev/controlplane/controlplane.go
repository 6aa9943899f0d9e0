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

// Package controlplane starts a real etcd and kube-apiserver on 127.0.0.1
// for tests and for `make run`. It is development tooling: nothing here is
// shipped in the module bundle.
//
// The binaries come from dev/scripts/tools.sh (built once from their Go
// modules into a cache folder). Each ControlPlane lives in its own temporary
// directory with random free ports, so tests can run side by side.
//
// RESTConfig is the control plane's admin (user "admin", system:masters),
// which plays what a cluster runs outside the module under test (kubelet,
// cert-manager, the installer). Other identities: ServiceAccountConfig (a
// service account's own token) and UserConfig (a user, impersonated).
// InstallPlatformPolicies adds Deckhouse's platform admission policies
// (policies/deckhouse.yaml).
package controlplane

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure a ControlPlane.
type Options struct {
	// CRDDirs are directories (or single .yaml files) whose
	// CustomResourceDefinitions are installed (and waited for) before Start
	// returns. Files named doc-ru-* (Deckhouse
	// Russian description twins) and non-CRD documents are skipped.
	CRDDirs []string
	// Dir is where data, certificates and logs go; a new temporary directory
	// when empty. Start does not remove a Dir it was given.
	Dir string
	// APIServerArgs are extra kube-apiserver flags.
	APIServerArgs []string
	// ETCDArgs are extra etcd flags.
	ETCDArgs []string
	// ControllerManager also runs kube-controller-manager with the controllers
	// that need no nodes or cloud: garbage collection (ownerReferences),
	// StatefulSets (Pods and PVCs from volumeClaimTemplates, PVC retention),
	// namespaces, ServiceAccounts and ClusterRole aggregation (aggregationRule,
	// which Deckhouse's access roles are built on). Pods stay Pending: there
	// is no kubelet.
	ControllerManager bool
	// Node prepares the control plane for a kubelet (dev/node); nil for none.
	Node *NodeOptions
}

// NodeOptions are what a kubelet node needs from the control plane. The
// defaults (no node) keep the apiserver as the hook and webhook tests know it.
type NodeOptions struct {
	// Name is the node's name: the kubelet authenticates as system:node:<Name>
	// in group system:nodes, which the Node authorizer and the NodeRestriction
	// admission plugin confine to its own Node and pods, as in a cluster.
	Name string
	// ServiceCIDR is --service-cluster-ip-range; its first address (the
	// kubernetes Service) is in the serving certificate.
	ServiceCIDR string
	// AdvertiseAddress is where pods reach the apiserver (the endpoint of the
	// kubernetes Service); the node forwards it to the apiserver on loopback.
	// It is in the serving certificate.
	AdvertiseAddress string
}

// ControlPlane is a running etcd + kube-apiserver pair.
type ControlPlane struct {
	dir        string
	ownDir     bool
	etcd       *process
	apiserver  *process
	controller *process
	restConfig *rest.Config
	kubeconfig string
	pki        *pki
	node       *NodeOptions
}

// Start launches etcd and kube-apiserver, waits until the apiserver is ready
// and installs the CRDs. On error everything started is stopped again.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	etcdBin, err := Tool("etcd")
	if err != nil {
		return nil, err
	}
	apiserverBin, err := Tool("kube-apiserver")
	if err != nil {
		return nil, err
	}

	cp := &ControlPlane{dir: opts.Dir}
	if cp.dir == "" {
		if cp.dir, err = os.MkdirTemp("", "managed-starrocks-controlplane-"); err != nil {
			return nil, err
		}
		cp.ownDir = true
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()

	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]

	if cp.etcd, err = startETCD(cp.dir, etcdBin, etcdClient, etcdPeer, opts.ETCDArgs); err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, cp.etcd, fmt.Sprintf("127.0.0.1:%d", etcdClient), 30*time.Second); err != nil {
		return nil, fmt.Errorf("etcd did not start: %w", err)
	}

	pki, err := writePKI(cp.dir, opts.Node)
	if err != nil {
		return nil, err
	}
	cp.pki, cp.node = pki, opts.Node
	if cp.apiserver, err = startAPIServer(cp.dir, apiserverBin, pki, etcdClient, apiPort, opts.Node, opts.APIServerArgs); err != nil {
		return nil, err
	}

	cp.restConfig = &rest.Config{
		Host:            fmt.Sprintf("https://127.0.0.1:%d", apiPort),
		BearerToken:     pki.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: pki.caPEM},
		QPS:             200,
		Burst:           400,
	}
	if cp.kubeconfig, err = writeKubeconfig(cp.dir, "kubeconfig", cp.restConfig); err != nil {
		return nil, err
	}
	if err := waitReady(ctx, cp.apiserver, cp.restConfig, 90*time.Second); err != nil {
		return nil, err
	}
	if err := InstallCRDs(ctx, cp.restConfig, opts.CRDDirs...); err != nil {
		return nil, err
	}
	if opts.ControllerManager {
		if err := cp.StartControllerManager(); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// StartForTest starts a ControlPlane that is stopped when the test ends,
// whether it passed or not. It fails the test when the control plane cannot
// start. A start that lost a port is tried again (see StartRetrying).
func StartForTest(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if opts.Dir == "" {
		// The test's own directory, removed with the test even when a
		// start fails half-way.
		opts.Dir = t.TempDir()
		cp, err := startRetrying(ctx, opts, t.TempDir, t.Logf)
		if err != nil {
			t.Fatalf("start local control plane: %v", err)
		}
		t.Cleanup(cp.Stop)
		return cp
	}
	cp, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start local control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	return cp
}

// StartRetrying is Start for a control plane that outlives any one test
// (several tests share it; the caller stops it). opts.Dir must be empty:
// each attempt gets a fresh temporary directory, which Stop removes.
//
// FreePorts finds ports that are free when it looks; a test running beside
// this one can take one of them before etcd or kube-apiserver binds it. Such
// a start is tried again, in a fresh directory, up to three times in all.
func StartRetrying(ctx context.Context, opts Options, logf func(format string, args ...any)) (*ControlPlane, error) {
	if opts.Dir != "" {
		return nil, fmt.Errorf("StartRetrying: Options.Dir %q given; each attempt needs a fresh directory", opts.Dir)
	}
	return startRetrying(ctx, opts, func() string { return "" }, logf)
}

// startRetrying starts a control plane in opts.Dir, then in newDir() for
// each further attempt after a port was taken meanwhile.
func startRetrying(ctx context.Context, opts Options, newDir func() string, logf func(format string, args ...any)) (*ControlPlane, error) {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if attempt > 1 {
			opts.Dir = newDir()
		}
		var cp *ControlPlane
		if cp, err = Start(ctx, opts); err == nil {
			return cp, nil
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
		logf("start local control plane, attempt %d: a port was taken meanwhile, trying again", attempt)
	}
	return nil, err
}

// RESTConfig is a cluster-admin client configuration. Callers get a copy.
func (cp *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(cp.restConfig) }

// KubeconfigPath is a kubeconfig file for kubectl with cluster-admin rights.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfig }

// CAFile is the control plane's CA certificate: it signs the apiserver's
// serving certificate and the client certificate the apiserver shows kubelets.
func (cp *ControlPlane) CAFile() string { return cp.pki.caFile }

// KubeletClientCertificate is the client certificate and key the apiserver
// shows kubelets (Options.Node; empty without one): the node's kubelet
// trusts only certificates of the control plane's CA, and metrics-server
// reads the kubelet's resource metrics with this one.
func (cp *ControlPlane) KubeletClientCertificate() (certFile, keyFile string) {
	return cp.pki.kubeletClientCert, cp.pki.kubeletClientKey
}

// UserKubeconfig writes a kubeconfig that authenticates as one of the node's
// identities (Options.Node): "system:node:<name>", "system:kube-proxy" or
// "system:kube-scheduler" (each has its token in the apiserver's token file;
// the last two are bound by the apiserver's default RBAC). The server is the
// loopback address.
func (cp *ControlPlane) UserKubeconfig(user string) (string, error) {
	token, ok := cp.pki.userTokens[user]
	if !ok {
		return "", fmt.Errorf("no token for %q: the control plane was started without Options.Node or the user is not one of the node's", user)
	}
	cfg := rest.CopyConfig(cp.restConfig)
	cfg.BearerToken = token
	return writeKubeconfig(cp.dir, "kubeconfig-"+strings.ReplaceAll(user, ":", "-"), cfg)
}

// StartControllerManager starts kube-controller-manager (see
// Options.ControllerManager) on a running control plane: for a test that
// needs it on a control plane shared with tests that must not have it.
// StopControllerManager stops it again.
func (cp *ControlPlane) StartControllerManager() error {
	if cp.controller != nil {
		return errors.New("kube-controller-manager runs already")
	}
	bin, err := Tool("kube-controller-manager")
	if err != nil {
		return err
	}
	controllerConfig := rest.CopyConfig(cp.restConfig)
	controllerConfig.BearerToken = cp.pki.controllerToken
	kubeconfig, err := writeKubeconfig(cp.dir, "kube-controller-manager.kubeconfig", controllerConfig)
	if err != nil {
		return err
	}
	cp.controller, err = startControllerManager(cp.dir, bin, kubeconfig, cp.pki, cp.node != nil)
	return err
}

// StopControllerManager stops kube-controller-manager if it runs.
func (cp *ControlPlane) StopControllerManager() {
	if cp.controller != nil {
		cp.controller.stop(10 * time.Second)
		cp.controller = nil
	}
}

// Dir is the directory with data, certificates and logs.
func (cp *ControlPlane) Dir() string { return cp.dir }

// Stop stops the apiserver, then etcd (the other order leaves the apiserver
// retrying etcd for minutes), and removes the directory it created.
func (cp *ControlPlane) Stop() {
	cp.StopControllerManager()
	if cp.apiserver != nil {
		cp.apiserver.stop(20 * time.Second)
		cp.apiserver = nil
	}
	if cp.etcd != nil {
		cp.etcd.stop(10 * time.Second)
		cp.etcd = nil
	}
	if cp.ownDir {
		os.RemoveAll(cp.dir)
		cp.ownDir = false
	}
}

func startETCD(dir, bin string, clientPort, peerPort int, extra []string) (*process, error) {
	client := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	args := []string{
		"--name=default",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		// Test data need not survive a power cut; fsync dominates start-up.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	return startProcess(dir, "etcd", bin, append(args, extra...)...)
}

func startAPIServer(dir, bin string, pki *pki, etcdPort, port int, node *NodeOptions, extra []string) (*process, error) {
	advertise, serviceCIDR := "127.0.0.1", "10.96.0.0/16"
	authorization := "RBAC"
	// No controller-manager creates default ServiceAccounts here, so the
	// ServiceAccount admission plugin would reject every Pod.
	admission := "--disable-admission-plugins=ServiceAccount"
	var nodeArgs []string
	if node != nil {
		advertise, serviceCIDR = node.AdvertiseAddress, node.ServiceCIDR
		authorization = "Node,RBAC"
		// Pods run now: they get their ServiceAccount token projected
		// (the controller-manager creates the default ServiceAccounts), and
		// the kubelet may touch only its own Node and pods.
		admission = "--enable-admission-plugins=NodeRestriction"
		nodeArgs = []string{
			// kubectl logs/exec: the kubelet trusts this client certificate.
			"--kubelet-client-certificate=" + pki.kubeletClientCert,
			"--kubelet-client-key=" + pki.kubeletClientKey,
			"--kubelet-preferred-address-types=InternalIP",
			// The aggregation layer, for extension apiservers on the node
			// (metrics-server serves metrics.k8s.io to HPAs): the aggregator
			// authenticates to them with the front proxy's client
			// certificate and passes the user in these headers, as kubeadm
			// sets it up. Aggregator routing dials an APIService's endpoint
			// address, not its Service's cluster IP: the host cannot reach
			// cluster IPs (the node's blackhole route for 198.18.0.0/15
			// refuses them before kube-proxy's rules apply).
			"--requestheader-client-ca-file=" + pki.frontProxyCAFile,
			"--requestheader-allowed-names=" + frontProxyClientName,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file=" + pki.frontProxyClientCert,
			"--proxy-client-key-file=" + pki.frontProxyClientKey,
			"--enable-aggregator-routing=true",
		}
	}
	args := []string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=" + advertise,
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servingKey,
		"--token-auth-file=" + pki.tokenFile,
		"--authorization-mode=" + authorization,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saKey,
		"--service-account-signing-key-file=" + pki.saKey,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		admission,
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--v=1",
	}
	args = append(args, nodeArgs...)
	return startProcess(dir, "kube-apiserver", bin, append(args, extra...)...)
}

func startControllerManager(dir, bin, kubeconfig string, pki *pki, node bool) (*process, error) {
	var extra []string
	controllers := "garbage-collector-controller,statefulset-controller,namespace-controller,serviceaccount-controller,replicaset-controller,deployment-controller,persistentvolume-protection-controller,persistentvolumeclaim-protection-controller,clusterrole-aggregation-controller"
	if node {
		// With a node, Services get EndpointSlices (kube-proxy and CoreDNS
		// read them), pods of a deleted node or gone owner are cleaned up, and
		// every namespace gets kube-root-ca.crt (projected token volumes), and
		// a Ready node loses the not-ready taint the kubelet registers it with;
		// claims bind to the volumes the node provisions.
		controllers += ",endpointslice-controller,endpointslice-mirroring-controller,endpoints-controller,pod-garbage-collector-controller,ttl-controller,root-ca-certificate-publisher-controller,node-lifecycle-controller,persistentvolume-binder-controller"
		// HorizontalPodAutoscalers scale the StatefulSets they target from
		// the metrics the node serves when asked (dev/node
		// Options.MetricsServer); without them an HPA only reports that
		// it cannot read metrics. Every 5 s instead of 15 s, so a test sees
		// a scale within seconds of the load.
		controllers += ",horizontal-pod-autoscaler-controller"
		extra = append(extra, "--horizontal-pod-autoscaler-sync-period=5s")
	}
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-skip-lookup=true",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		// Each controller acts as its own service account in kube-system
		// (system:serviceaccount:kube-system:statefulset-controller makes
		// the PVCs of volumeClaimTemplates), as in kubeadm's clusters: the
		// identities Deckhouse's admission policies let write objects
		// labelled heritage: deckhouse (policies/deckhouse.yaml).
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + pki.saKey,
		"--root-ca-file=" + pki.caFile,
		"--controllers=" + controllers,
		"--concurrent-gc-syncs=5",
		"--v=1",
	}, extra...)
	return startProcess(dir, "kube-controller-manager", bin, args...)
}

// process is a child process whose output goes to a log file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// ServerGOGC is the Go garbage collector's target for etcd,
// kube-apiserver and kube-controller-manager, and for the local node's
// servers (dev/node): four times the heap growth of the default (100)
// between collections. Collections were a fifth of a control plane's CPU
// (its first 30 seconds: 4.0 CPU-seconds, 3.3 at 400); test/e2e took 10%
// less CPU (301 -> 271 CPU-seconds, its dozen control planes at 400). The
// tests' clusters are small: the larger heaps fit the machine many times
// over. Processes whose memory a test measures (addon-operator, the
// agent) are not started here and keep the default.
const ServerGOGC = "400"

func startProcess(dir, name, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "GOGC="+ServerGOGC)
	// Pdeathsig: if the test binary dies, its servers die with it instead of
	// holding ports and CPU.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// tail returns the last lines of the process log, for error messages.
func (p *process) tail(lines int) string {
	f, err := os.Open(p.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func (p *process) failure(what string) error {
	state := "still running"
	if p.exited() {
		state = fmt.Sprintf("exited: %v", p.err)
	}
	return fmt.Errorf("%s %s (%s); last log lines of %s:\n%s", p.name, what, state, p.log, p.tail(30))
}

func waitTCP(ctx context.Context, p *process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.exited() {
			return p.failure("exited early")
		}
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return p.failure("did not listen on " + addr + " in " + timeout.String())
}

func waitReady(ctx context.Context, p *process, cfg *rest.Config, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	client := cs.Discovery().RESTClient()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		if p.exited() {
			return p.failure("exited early")
		}
		var code int
		res := client.Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		if res.Error() == nil && code == 200 {
			return nil
		}
		lastErr = res.Error()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return errors.Join(p.failure("not ready in "+timeout.String()), lastErr)
}

// FreePorts finds n distinct free TCP ports on 127.0.0.1.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func writeKubeconfig(dir, name string, cfg *rest.Config) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, Impersonate: cfg.Impersonate.UserName, ImpersonateGroups: cfg.Impersonate.Groups}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	kc.CurrentContext = "local"
	path := filepath.Join(dir, name)
	return path, clientcmd.WriteToFile(*kc, path)
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func writePEMKey(path string, key *rsa.PrivateKey) error {
	der := x509.MarshalPKCS1PrivateKey(key)
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600)
}
