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

package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// startContainerd runs containerd with its own config, socket, state and
// root under the run directory. Its CRI plugin runs pods with runc and CNI.
func (n *Node) startContainerd(ctx context.Context) error {
	dir := filepath.Join(n.dir, "containerd")
	cniConf := filepath.Join(n.dir, "cni", "net.d")
	for _, d := range []string{dir, cniConf} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	n.containerdSock = filepath.Join(dir, "containerd.sock")
	// The bridge plugin attaches pods to the bridge setupNetwork made;
	// hairpinMode lets a pod reach itself through a Service. host-local keeps
	// its leases under the run directory and gives pods one route, to
	// BenchmarkRange through the bridge: no default route, so a pod cannot
	// even address the world. portmap serves hostPort.
	conflist := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %q,
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]],
              "routes": [{"dst": %q}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, cniNetwork, Bridge, filepath.Join(n.dir, "cni", "ipam"), PodCIDR, Gateway, BenchmarkRange)
	if err := os.WriteFile(filepath.Join(cniConf, "10-managed-starrocks.conflist"), []byte(conflist), 0o600); err != nil {
		return err
	}
	// containerd 1.6 (Debian 12) reads config version 2.
	// restrict_oom_score_adj: the kubelet asks -998 for every sandbox, and
	// a machine that withholds CAP_SYS_RESOURCE refuses a negative value
	// (runc then only says "can't get final child's PID from pipe: EOF").
	// overlayfs works on this kernel; the btrfs, zfs, devmapper and aufs
	// snapshotters are off so they do not probe the machine. runc keeps its
	// state in the run directory (its default is /run/containerd/runc).
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), n.containerdSock, n.containerdSock+".ttrpc",
		filepath.Join(dir, "opt"), PauseImage, filepath.Join(dir, "runc"), cniBinDir, cniConf)
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	if err := n.start("containerd", "containerd", "--config", cfgPath, "--log-level", "warn"); err != nil {
		return err
	}
	p := n.procs[len(n.procs)-1]
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() {
			return p.failure("exited early")
		}
		if c, err := net.Dial("unix", n.containerdSock); err == nil {
			c.Close()
			// The CRI plugin registers after the socket is served.
			if _, err := output("ctr", "--address", n.containerdSock, "plugins", "ls"); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return p.failure("did not serve " + n.containerdSock)
}

// ImportImage imports an image archive (docker or OCI) into the CRI's
// namespace (k8s.io). The archive's names must be the ones pods ask for in
// full (docker.io/library/...): the CRI resolves short names to docker.io
// and would try to pull.
func (n *Node) ImportImage(ctx context.Context, archive string) error {
	return run("ctr", "--address", n.containerdSock, "--namespace", "k8s.io", "images", "import", archive)
}

func (n *Node) startKubelet(bin string) error {
	dir := filepath.Join(n.dir, "kubelet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	kubeconfig, err := n.cp.UserKubeconfig("system:node:" + Name)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	healthz, err := freePort()
	if err != nil {
		return err
	}
	// failCgroupV1: false — these machines have a hybrid cgroup hierarchy
	// (v1 controllers, cgroup2 only at /sys/fs/cgroup/unified), and the
	// kubelet refuses cgroup v1 unless told. cgroupfs: there is no systemd.
	// The apiserver reaches the kubelet (logs, exec) with a certificate from
	// the control plane's CA; nothing else may. resolvConf "": pods resolve
	// through CoreDNS only, never the host's resolvers. Eviction thresholds
	// are low: a busy shared disk must not evict test pods.
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %q
port: %s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: %q
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %q}
authorization:
  mode: AlwaysAllow
clusterDomain: %s
clusterDNS: [%q]
resolvConf: ""
podCIDR: %q
podLogsDir: %q
volumePluginDir: %q
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
  nodefs.inodesFree: "1%%"
serializeImagePulls: false
registerNode: true
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 5s
syncFrequency: 10s
`, Gateway, port, healthz, "unix://"+n.containerdSock, n.cp.CAFile(), ClusterDomain, Gateway, PodCIDR,
		filepath.Join(n.dir, "pod-logs"), filepath.Join(n.dir, "volume-plugins"))
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	return n.start("kubelet", bin,
		"--config="+cfgPath,
		"--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(dir, "root"),
		"--cert-dir="+filepath.Join(dir, "pki"),
		"--hostname-override="+Name,
		"--node-ip="+Gateway,
		"--v=1",
	)
}

func (n *Node) startKubeProxy(bin string) error {
	kubeconfig, err := n.cp.UserKubeconfig("system:kube-proxy")
	if err != nil {
		return err
	}
	healthz, err := freePort()
	if err != nil {
		return err
	}
	metrics, err := freePort()
	if err != nil {
		return err
	}
	// conntrack 0s: kube-proxy leaves the machine's conntrack sysctls alone.
	// NodePorts only on the bridge's address, never on the host's own
	// interfaces.
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: %s
clusterCIDR: %q
clientConnection: {kubeconfig: %q}
healthzBindAddress: "127.0.0.1:%s"
metricsBindAddress: "127.0.0.1:%s"
nodePortAddresses: ["%s/32"]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`, Name, PodCIDR, kubeconfig, healthz, metrics, Gateway)
	cfgPath := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	return n.start("kube-proxy", bin, "--config="+cfgPath, "--v=1")
}

func (n *Node) startScheduler(bin string) error {
	kubeconfig, err := n.cp.UserKubeconfig("system:kube-scheduler")
	if err != nil {
		return err
	}
	return n.start("kube-scheduler", bin,
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--v=1",
	)
}

// startCoreDNS serves the cluster domain (and reverse lookups of pod and
// Service addresses) on the bridge's address, the kubelet's clusterDNS, as
// a host process: pods reach it over the bridge without a Service or an
// image of its own. There is no forward plugin in this build: any other
// name is refused, nothing leaves the machine. It reads the API with the
// admin kubeconfig (development tooling: no RBAC objects to keep).
func (n *Node) startCoreDNS(ctx context.Context, bin string) error {
	health, err := freePort()
	if err != nil {
		return err
	}
	ready, err := freePort()
	if err != nil {
		return err
	}
	corefile := fmt.Sprintf(`%s in-addr.arpa ip6.arpa {
    bind %s
    errors
    health 127.0.0.1:%s
    ready 127.0.0.1:%s
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s
        pods insecure
    }
    cache 5
}
`, ClusterDomain, Gateway, health, ready, ClusterDomain, n.cp.KubeconfigPath())
	path := filepath.Join(n.dir, "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o600); err != nil {
		return err
	}
	if err := n.start("coredns", bin, "-conf", path); err != nil {
		return err
	}
	return waitHTTP(ctx, n.procs[len(n.procs)-1], "http://127.0.0.1:"+ready+"/ready", 60*time.Second)
}

// startNetworkPolicies runs kube-router's NetworkPolicy controller on the
// host, and only it (--run-firewall; no BGP routing, no IPVS service proxy:
// the bridge routes and kube-proxy serves Services). It enforces policy with
// iptables chains (KUBE-ROUTER-INPUT/FORWARD/OUTPUT, KUBE-POD-FW-<hash> per
// selected local pod, KUBE-NWPLCY-<hash> per policy) that match peers with
// ipsets (KUBE-SRC-<hash>, KUBE-DST-<hash>), which this kernel has (the
// iptables "set" match), where kube-network-policies needs an nftables
// queue rule it has not (no nft_queue). Facts from kube-router v2.1.0:
//   - pkg/controllers/netpol/network_policy_controller.go
//     NewNetworkPolicyController: --service-cluster-ip-range is required;
//     the node is read by name (utils.GetNodeObject: $NODE_NAME, then the
//     hostname, then --hostname-override, no retry, so it starts once the
//     Node is registered) and its InternalIP is the node IP;
//   - pkg/controllers/netpol/pod.go getLocalPods: the pods it guards are
//     those whose status.hostIP is that node IP (the kubelet's --node-ip,
//     Gateway); no pod CIDR is read;
//   - pkg/healthcheck: --health-port listens on every interface (":port"),
//     so it is off (0); metrics are off by default (--metrics-port 0);
//   - it leaves its chains and ipsets when it stops (Cleanup runs only with
//     --cleanup-config): cleanMachine removes them.
//
// It reads the API with the admin kubeconfig (development tooling: no RBAC
// to keep).
func (n *Node) startNetworkPolicies(ctx context.Context, bin string) error {
	if err := n.startEnv("kube-router", []string{"NODE_NAME=" + Name}, bin,
		"--kubeconfig="+n.cp.KubeconfigPath(),
		"--hostname-override="+Name,
		"--run-firewall=true",
		"--run-router=false",
		"--run-service-proxy=false",
		"--service-cluster-ip-range="+ServiceCIDR,
		"--health-port=0",
		// 2 logs each pod event it acts on ("Received update to pod",
		// pod.go OnPodUpdate) beside each sync's duration (1): when a
		// new pod's address entered the sets.
		"--v=2",
	); err != nil {
		return err
	}
	// Its first full sync puts the jump to KUBE-ROUTER-FORWARD into the
	// filter table's FORWARD chain: from then on policies are enforced.
	p := n.procs[len(n.procs)-1]
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() {
			return p.failure("exited early")
		}
		if out, err := output("iptables", "--wait", "-S", "FORWARD"); err == nil && strings.Contains(out, "-j KUBE-ROUTER-FORWARD") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	return p.failure("did not set up its chains")
}

func waitHTTP(ctx context.Context, p *process, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.exited() {
			return p.failure("exited early")
		}
		if res, err := client.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	return p.failure("not ready at " + url)
}
