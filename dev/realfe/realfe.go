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

// Package realfe starts real StarRocks FEs for tests: the FE built from
// source by dev/scripts/starrocks-fe.sh, configured by what the module
// renders for an instance and started by the module's own start script.
//
//   - fe.conf is the instance ConfigMap's, rendered by the instance
//     templates from the desired state the hooks compute; only the pod's
//     absolute paths are mapped to the test's folders (FEHome,
//     TLS volume).
//   - The keystore is a PKCS12 file as cert-manager writes it for the
//     instance Certificate (keystores.pkcs12, profile Modern2023), for the
//     rendered DNS names, from a CA of dev/testpki; its password reaches the
//     FE in STARROCKS_KEYSTORE_PASSWORD, as the pod's env gives it.
//   - Each FE runs images/starrocks-fe/fe-start.sh, the FE container's
//     command, in a network, UTS and mount namespace of its own: the pod's
//     hostname and an /etc/hosts like the kubelet's, so StarRocks'
//     --host_type FQDN finds the name the module gives the FE, and its
//     home at one path for every FE (homeMountPoint), so that all map one
//     archive of the FE's class data (classArchive). Like the
//     pod, an FE without meta waits for the agent's files: Bootstrap lets
//     the first FE start a new cluster, Join adds a follower as the agent
//     does (ALTER SYSTEM ADD FOLLOWER on the leader, then --helper).
//   - The test reaches the FEs from the host at another address
//     (network.go): never 127.0.0.1, which the FE exempts from
//     ssl_force_secure_transport.
//
// Everything stops with t.Cleanup: the JVMs (SIGTERM, then SIGKILL), the
// namespaces, links and routes; Cluster's cleanup fails the test if
// anything is left. Without the source archive of the FE the tests skip,
// naming it. Needs root (namespaces), iproute2, util-linux and a JDK 17.
// Development tooling, never shipped.
package realfe

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/netnsdir"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// Ports of the rendered fe.conf (query_port, http_port, https_port,
// edit_log_port).
const (
	QueryPort   = 9030
	HTTPPort    = 8030
	HTTPSPort   = 8443
	EditLogPort = 9010
)

// Pod paths of the FE container that the rendered fe.conf names, and the
// start script the FE image carries (images/starrocks-fe/werf.inc.yaml).
const (
	podFEHome = "/opt/starrocks/fe"
	podTLSDir = "/etc/starrocks/tls"
	// The FE container's trusted-cas volume, which fe-start.sh reads from
	// TRUSTED_CAS_DIR in tests.
	podTrustedCAsDir = "/etc/starrocks/trusted-cas"
	startScript      = "images/starrocks-fe/fe-start.sh"
)

// testJVMOptions are HotSpot options for the test FEs only (see StartFE):
// -XX:TieredStopAtLevel=1 stops the tiered compiler at C1, and
// -XX:-BytecodeVerificationRemote skips verifying the bytecode of the FE's
// own jars (the archive built here from StarRocks' source, not code the
// test trusts less than the JDK's): an FE's start to its first query took
// about 3.9 CPU-seconds instead of 4.8. It is a diagnostic option, so it
// needs -XX:+UnlockDiagnosticVMOptions before it (without that the JVM
// refuses to start, and start_fe.sh's `java -version` check with it).
// -XX:-UsePerfData: no hsperfdata file, which HotSpot keeps in a folder of
// the machine's /tmp (hsperfdata_<user>) that it never removes; only jps
// and jstat read it.
const testJVMOptions = "-XX:TieredStopAtLevel=1 -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote -XX:-UsePerfData"

// Options shape the instance the cluster is rendered for.
type Options struct {
	// Type is Standalone (one FE host) by default; Cluster renders three
	// FE hosts, of which a test starts those it needs.
	Type v1alpha1.InstanceType
	// RequireSecureTransport is spec.tls.requireSecureTransport
	// (fe.conf ssl_force_secure_transport).
	RequireSecureTransport bool
	// Name is the instance's name in namespace team-a ("realfe" when
	// empty): it names the FEs' hosts and the certificate's DNS names.
	Name string
	// Backup is spec.backup.storage; with a caSecretRef the FEs get
	// Cluster.BackupCA in their trusted-cas volume, as the pod mounts the
	// Secret. Only what the rendering of the FE needs counts: the test
	// gives the agent's repository the S3 server's endpoint itself.
	Backup *v1alpha1.BackupStorage
	// SharedData starts the FEs in StarRocks' shared-data mode: fe.conf
	// is still the rendered one, with the lines of SharedDataConf added
	// where the rendering has no run_mode of its own. The storage volume
	// is the test's (the agent creates it with SQL).
	SharedData bool
}

// SharedDataConf are the fe.conf lines of a shared-data FE: run_mode (a
// fe-core common/Config @ConfField that never changes for a cluster),
// StarManager's port (cloud_native_meta_port, 6090 by default, written out
// because the CNs are told it) and no storage volume built from fe.conf
// (enable_load_volume_from_conf, false by default: the keys would sit in
// fe.conf).
const SharedDataConf = "run_mode = shared_data\ncloud_native_meta_port = 6090\nenable_load_volume_from_conf = false\n"

// Cluster is the frame of one instance's FEs: the rendered configuration,
// the PKI and the network. StartFE runs its FEs.
type Cluster struct {
	// Entry is the instance's desired state as the hooks compute it.
	Entry desired.Instance
	// AgentConfig is agent.json of the instance's ConfigMap.
	AgentConfig agentconfig.Config
	// FEConf is fe.conf of the instance's ConfigMap, unchanged.
	FEConf string
	// CA signed the FEs' certificate; CAFile is its PEM file (ca.crt of
	// the TLS Secret volume, TLSDir).
	CA     *testpki.CA
	CAFile string
	// TLSDir holds what the instance's TLS Secret holds: tls.crt, tls.key,
	// ca.crt and keystore.p12.
	TLSDir string
	// KeystorePassword is the keystore password Secret's value.
	KeystorePassword string
	// RootPassword is a fresh random password for root, for the test (or
	// the agent's credentials) to set: a new FE's root has none.
	RootPassword string
	// HostIP is the host's address on the FEs' segment; the test's
	// connections come from it.
	HostIP net.IP
	// BackupCA is the content of the Secret key Options.Backup's
	// caSecretRef names (PEM), set before StartFE.
	BackupCA []byte
	// ClusterSnapshot makes the cluster an instance restored from a
	// cluster snapshot (spec.storage.restoreFrom), set before StartFE.
	ClusterSnapshot *ClusterSnapshotRestore

	home string // the built FE (bin/, conf/, lib/, webroot/)
	dir  string
	// trustedCAs stands for the FE container's trusted-cas volume.
	trustedCAs string
	net        *network

	mu  sync.Mutex
	fes map[int]*FE
}

// ClusterSnapshotRestore stands for what the FE StatefulSet of a restored
// instance gives its FE container (pkg/instanceobjects/templates
// _statefulset-frontend.tpl, checked by dev/chartrender
// TestRestoredInstanceRenders): the CLUSTER_SNAPSHOT_* env of the storage
// volume and the cluster-snapshot Secret volume with the team's keys.
type ClusterSnapshotRestore struct {
	Volume               agentconfig.StorageVolume
	AccessKey, SecretKey string
}

// env writes the keys as the Secret volume holds them and returns the
// container's env.
func (r *ClusterSnapshotRestore) env(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for f, v := range map[string]string{"access-key": r.AccessKey, "secret-key": r.SecretKey} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o600); err != nil {
			return nil, err
		}
	}
	v := r.Volume
	region := v.Region
	if region == "" {
		region = "us-east-1"
	}
	return []string{
		"CLUSTER_SNAPSHOT_DIR=" + dir,
		"CLUSTER_SNAPSHOT_VOLUME_NAME=" + v.Name,
		"CLUSTER_SNAPSHOT_VOLUME_LOCATION=" + v.Location,
		"CLUSTER_SNAPSHOT_S3_ENDPOINT=" + v.Endpoint,
		"CLUSTER_SNAPSHOT_S3_REGION=" + region,
		"CLUSTER_SNAPSHOT_S3_PATH_STYLE=" + strconv.FormatBool(v.PathStyle),
		"CLUSTER_SNAPSHOT_S3_ENABLE_SSL=" + strconv.FormatBool(v.EnableSSL),
	}, nil
}

// FE is one running FE process, the pod of an ordinal.
type FE struct {
	Ordinal int
	// Host is the FE's FQDN (the StatefulSet pod's name in the headless
	// Service), PodName its short name (the pod's hostname).
	Host, PodName string
	IP            net.IP
	// Home is the FE's STARROCKS_HOME; RunDir the agent's shared folder
	// (fe-helper, fe-bootstrap); Log the FE's console output.
	Home, RunDir, Log string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Built returns the folder of the built FE, building it once with
// dev/scripts/starrocks-fe.sh; it skips the test when the FE's source
// archive is not there, saying where it was looked for.
func Built(t testing.TB) string {
	t.Helper()
	home, err := Find()
	var missing *MissingError
	if errors.As(err, &missing) {
		t.Skipf("no real StarRocks FE for this test: %s", missing.Why)
	}
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// MissingError says that there is no FE to build: the source archive is
// not where dev/scripts/starrocks-fe.sh looks (Why names the folder).
type MissingError struct{ Why string }

func (e *MissingError) Error() string { return "no real StarRocks FE: " + e.Why }

// Find returns the folder of the built FE, building it once with
// dev/scripts/starrocks-fe.sh (a *MissingError without its source).
func Find() (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(controlplane.RepoRoot(), "dev", "scripts", "starrocks-fe.sh"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		return "", &MissingError{Why: strings.TrimSpace(stderr.String())}
	}
	if err != nil {
		return "", fmt.Errorf("dev/scripts/starrocks-fe.sh: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// requirements skips the test where real FEs cannot run, saying why.
func requirements(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("real FEs run in network namespaces of their own, which needs root")
	}
	for cmd, pkg := range map[string]string{"ip": "iproute2", "unshare": "util-linux", "java": "openjdk-17-jdk-headless", "javac": "openjdk-17-jdk-headless"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("real FEs need %s (apt-get install %s)", cmd, pkg)
		}
	}
}

// Start renders an instance of the given options, issues its certificate
// and keystore and makes the FEs' network; it starts no FE (StartFE,
// StartLeader). Everything goes with t.Cleanup.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	requirements(t)
	home := Built(t)
	if opts.Type == "" {
		opts.Type = v1alpha1.TypeStandalone
	}
	name := opts.Name
	if name == "" {
		name = "realfe"
	}
	r, err := render("team-a", name, opts)
	if err != nil {
		t.Fatalf("realfe: %v", err)
	}
	if len(r.entry.Frontend.Hosts) > maxFrontends {
		t.Fatalf("realfe: %d FE hosts, at most %d fit", len(r.entry.Frontend.Hosts), maxFrontends)
	}
	c := &Cluster{Entry: r.entry, AgentConfig: r.agent, FEConf: r.feConf, home: home, dir: t.TempDir(), fes: map[int]*FE{}}
	if opts.SharedData && !strings.Contains(c.FEConf, "\nrun_mode") {
		c.FEConf = strings.TrimRight(c.FEConf, "\n") + "\n" + SharedDataConf
	}
	c.KeystorePassword, c.RootPassword = randomString(t), randomString(t)
	c.writeTLS(t)

	n, err := takeSlot()
	if err != nil {
		t.Fatalf("realfe: %v", err)
	}
	c.net, c.HostIP = n, n.HostIP()
	t.Cleanup(func() {
		if err := n.remove(); err != nil {
			t.Errorf("realfe: remove the FEs' network: %v", err)
		}
		if left := n.leftovers(); len(left) > 0 {
			t.Errorf("realfe: left on the machine: %s", strings.Join(left, ", "))
		}
		if err := n.release(); err != nil {
			t.Errorf("realfe: %v", err)
		}
	})
	if err := n.create(); err != nil {
		t.Fatalf("realfe: %v", err)
	}
	c.writeHosts(t)
	return c
}

func randomString(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// writeTLS writes the TLS Secret's files: the certificate for the rendered
// DNS names (the instance Certificate's dnsNames) and the keystore as
// cert-manager encodes it for keystores.pkcs12 with profile Modern2023
// (cert-manager pkg/controller/certificates/issuing/internal/keystore.go:
// the key, the certificate and the CA as the chain, one password).
func (c *Cluster) writeTLS(t testing.TB) {
	t.Helper()
	c.CA = testpki.MustCA(t, "realfe instance CA")
	leaf, err := c.CA.Issue(c.Entry.TLS.DNSNames[0], c.Entry.TLS.DNSNames, nil, 0)
	if err != nil {
		t.Fatalf("realfe: %v", err)
	}
	c.TLSDir = filepath.Join(c.dir, "tls")
	if err := os.MkdirAll(c.TLSDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := leaf.WriteFiles(c.TLSDir, c.CA); err != nil {
		t.Fatalf("realfe: %v", err)
	}
	pair, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatalf("realfe: %v", err)
	}
	p12, err := pkcs12.Modern2023.Encode(pair.PrivateKey, leaf.Cert, []*x509.Certificate{c.CA.Cert}, c.KeystorePassword)
	if err != nil {
		t.Fatalf("realfe: encode the keystore: %v", err)
	}
	if err := os.WriteFile(filepath.Join(c.TLSDir, "keystore.p12"), p12, 0o600); err != nil {
		t.Fatal(err)
	}
	c.CAFile = filepath.Join(c.TLSDir, "ca.crt")
}

// writeTrustedCAs fills the trusted-cas volume as the kubelet projects it:
// each rendered bundle under its file name, here all BackupCA.
func (c *Cluster) writeTrustedCAs(t testing.TB) {
	t.Helper()
	ca := c.BackupCA
	c.trustedCAs = filepath.Join(c.dir, "trusted-cas")
	if err := os.MkdirAll(c.trustedCAs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range c.Entry.Frontend.TrustedCAs {
		if len(ca) == 0 {
			t.Fatalf("realfe: the instance trusts the CA of Secret %s, but Cluster.BackupCA is empty", b.SecretName)
		}
		if err := os.WriteFile(filepath.Join(c.trustedCAs, b.File), ca, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeHosts writes the /etc/hosts every FE sees: the kubelet's lines for
// a pod in a headless Service ("<ip> <fqdn> <pod>"), one for every FE host
// of the instance, which stands in for the cluster's DNS between FEs. With
// --host_type FQDN the FE takes InetAddress.getLocalHost() (the pod's
// hostname, resolved here) and its getCanonicalHostName() (the first name
// of the line), then insists that an interface holds that address (fe-core
// service/FrontendOptions.java initAddrUseFqdn).
func (c *Cluster) writeHosts(t testing.TB) {
	t.Helper()
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for i, host := range c.Entry.Frontend.Hosts {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", c.net.IP(i), host, podName(host))
	}
	if err := os.WriteFile(c.hostsFile(), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (c *Cluster) hostsFile() string { return filepath.Join(c.dir, "hosts") }

func podName(host string) string { return strings.SplitN(host, ".", 2)[0] }

// homeMountPoint is where every test FE finds its home (FE_HOME, and
// start_fe.sh's STARROCKS_HOME): its own folder (FE.Home), bind-mounted
// there in the FE's mount namespace. One path for every FE gives every FE
// the same class path, which lets them share one archive of class data
// (classArchive): the JVM maps an archive only for the class path it was
// written with. The folder beside the built FE stays empty on the host.
func homeMountPoint(built string) (string, error) {
	p := filepath.Join(filepath.Dir(built), "fe-home")
	return p, os.MkdirAll(p, 0o755)
}

// podConf is the rendered fe.conf with the pod's folders mapped to the
// FE's: its home (meta/, log/) and the TLS Secret volume. A pod path left
// over (a new one in the template) fails rather than reaching into the
// host's /opt or /etc.
func (c *Cluster) podConf(feHome string) (string, error) {
	conf := strings.ReplaceAll(c.FEConf, podFEHome+"/", feHome+"/")
	conf = strings.ReplaceAll(conf, podTLSDir+"/", c.TLSDir+"/")
	for _, p := range []string{"/opt/", "/etc/"} {
		if i := strings.Index(conf, p); i >= 0 {
			line := conf[strings.LastIndexByte(conf[:i], '\n')+1:]
			line, _, _ = strings.Cut(line, "\n")
			return "", fmt.Errorf("the rendered fe.conf names a pod path this package does not map: %q", line)
		}
	}
	return conf, nil
}

// StartFE starts the FE of an ordinal as its pod does: the rendered fe.conf
// in place of the ConfigMap volume, the module's start script, which waits
// (an FE without meta) until Bootstrap or Join tells it how to start.
func (c *Cluster) StartFE(t testing.TB, ordinal int) *FE {
	t.Helper()
	if ordinal < 0 || ordinal >= len(c.Entry.Frontend.Hosts) {
		t.Fatalf("realfe: the instance has FE ordinals 0..%d, not %d", len(c.Entry.Frontend.Hosts)-1, ordinal)
	}
	c.mu.Lock()
	_, running := c.fes[ordinal]
	c.mu.Unlock()
	if running {
		t.Fatalf("realfe: FE %d runs already", ordinal)
	}
	host := c.Entry.Frontend.Hosts[ordinal]
	fe := &FE{Ordinal: ordinal, Host: host, PodName: podName(host), IP: c.net.IP(ordinal), exited: make(chan struct{})}
	base := filepath.Join(c.dir, "fe-"+strconv.Itoa(ordinal))
	fe.Home, fe.RunDir, fe.Log = filepath.Join(base, "fe"), filepath.Join(base, "agent-run"), filepath.Join(base, "fe.out")
	c.writeTrustedCAs(t)
	if err := c.layOut(fe); err != nil {
		t.Fatalf("realfe: %v", err)
	}
	mountPoint, err := homeMountPoint(c.home)
	if err != nil {
		t.Fatalf("realfe: %v", err)
	}
	conf, err := c.podConf(mountPoint)
	if err != nil {
		t.Fatalf("realfe: %v", err)
	}
	confSource := filepath.Join(base, "fe.conf")
	if err := os.WriteFile(confSource, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(netnsdir.Dir, c.net.ns(ordinal))); err != nil {
		if err := c.net.addFrontend(ordinal); err != nil {
			t.Fatalf("realfe: %v", err)
		}
	}
	logFile, err := os.Create(fe.Log)
	if err != nil {
		t.Fatal(err)
	}
	// Hadoop's S3A client, which CREATE REPOSITORY and the backups use,
	// keeps its upload buffers in hadoop.tmp.dir, /tmp/hadoop-<user> by
	// default: an FE stopped mid-upload left its block files in the
	// machine's /tmp. Each test FE gets a folder of its own, removed with
	// the test (a system property: Hadoop's Configuration expands
	// ${hadoop.tmp.dir} from the JVM's properties first).
	hadoopTmp := "-Dhadoop.tmp.dir=" + filepath.Join(base, "hadoop-tmp")
	archiveOpts, archiveWritten := "", func(bool) {}
	if a, err := archiveFor(c.home); err == nil {
		archiveOpts, archiveWritten = a.options()
	}
	// ip netns exec, unshare, both shells and start_fe.sh each exec the
	// next (start_fe.sh without --daemon: "exec $LIMIT $JAVA ...
	// com.starrocks.StarRocksFE", bin/start_fe.sh), so the process started
	// here ends up being the JVM, and its parent-death signal stays set.
	inner := `hostname "$1" && mount --bind "$2" /etc/hosts && mount --bind "$3" "$4" && shift 4 && exec /bin/sh "$@"`
	fe.cmd = exec.Command("ip", "netns", "exec", c.net.ns(ordinal),
		"unshare", "--uts", "--mount", "--propagation", "private",
		"/bin/sh", "-c", inner, "sh", fe.PodName, c.hostsFile(), fe.Home, mountPoint,
		filepath.Join(controlplane.RepoRoot(), startScript))
	fe.cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + base,
		// The pod's env (the FE container of the StatefulSet).
		"POD_NAME=" + fe.PodName,
		"STARROCKS_KEYSTORE_PASSWORD=" + c.KeystorePassword,
		// The start script's folders, which it lets tests move.
		"FE_HOME=" + mountPoint,
		"AGENT_RUN_DIR=" + fe.RunDir,
		"FE_CONF_SOURCE=" + confSource,
		"TRUSTED_CAS_DIR=" + c.trustedCAs,
		// The test harness's JVM options (testJVMOptions, and the
		// class archive's: classArchive), beside the rendered
		// JAVA_OPTS (fe.conf stays the module's): the JVM reads
		// JAVA_TOOL_OPTIONS itself, before the command line, so
		// start_fe.sh and fe.conf are untouched. A test FE lives for
		// seconds to minutes, where C2's compiling costs far more CPU
		// than it wins back: with C1 alone an FE's start to its first
		// query took about 5 CPU-seconds instead of 9-12 on this
		// 2-core machine, and tests start many FEs side by side.
		"JAVA_TOOL_OPTIONS=" + strings.TrimSpace(testJVMOptions+" "+hadoopTmp+" "+archiveOpts),
	}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		fe.cmd.Env = append(fe.cmd.Env, "JAVA_HOME="+jh)
	}
	if r := c.ClusterSnapshot; r != nil {
		env, err := r.env(filepath.Join(base, "cluster-snapshot"))
		if err != nil {
			t.Fatalf("realfe: %v", err)
		}
		fe.cmd.Env = append(fe.cmd.Env, env...)
	}
	fe.cmd.Stdout, fe.cmd.Stderr = logFile, logFile
	// Pdeathsig: if the test binary dies, the JVM dies with it.
	fe.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := fe.cmd.Start(); err != nil {
		logFile.Close()
		archiveWritten(false)
		t.Fatalf("realfe: start FE %d: %v", ordinal, err)
	}
	go func() {
		fe.err = fe.cmd.Wait()
		logFile.Close()
		archiveWritten(fe.cmd.ProcessState.Exited())
		close(fe.exited)
	}()
	c.mu.Lock()
	c.fes[ordinal] = fe
	c.mu.Unlock()
	t.Cleanup(func() {
		if err := c.StopFE(fe); err != nil {
			t.Errorf("realfe: %v", err)
		}
	})
	return fe
}

// layOut makes the FE's STARROCKS_HOME as the image has it: its own bin/
// (start_fe.sh writes its pid file there) and conf/, the built lib/ and
// webroot/ shared, meta/ and log/ empty.
func (c *Cluster) layOut(fe *FE) error {
	for _, d := range []string{fe.Home, fe.RunDir, filepath.Join(fe.Home, "meta"), filepath.Join(fe.Home, "log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{"bin", "conf"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(c.home, d), fe.Home+"/").CombinedOutput(); err != nil {
			return fmt.Errorf("copy %s: %v: %s", d, err, out)
		}
	}
	for _, d := range []string{"lib", "webroot"} {
		if err := os.Symlink(filepath.Join(c.home, d), filepath.Join(fe.Home, d)); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return nil
}

// StopFE stops an FE as the kubelet stops its container (SIGTERM, SIGKILL
// after 30 seconds) and waits until the process is gone.
func (c *Cluster) StopFE(fe *FE) error {
	c.mu.Lock()
	delete(c.fes, fe.Ordinal)
	c.mu.Unlock()
	select {
	case <-fe.exited:
		return nil
	default:
	}
	_ = fe.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-fe.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-fe.cmd.Process.Pid, syscall.SIGKILL)
		<-fe.exited
	}
	// Anything the JVM started in its group goes too.
	_ = syscall.Kill(-fe.cmd.Process.Pid, syscall.SIGKILL)
	if alive(fe.cmd.Process.Pid) {
		return fmt.Errorf("FE %d (pid %d) still runs", fe.Ordinal, fe.cmd.Process.Pid)
	}
	return nil
}

// Exited reports whether the FE's process has ended.
func (fe *FE) Exited() bool {
	select {
	case <-fe.exited:
		return true
	default:
		return false
	}
}

// Pid is the FE's process (the JVM once it runs).
func (fe *FE) Pid() int { return fe.cmd.Process.Pid }

// Output is the FE's console output so far (the rendered fe.conf sends
// every log there).
func (fe *FE) Output() string {
	data, _ := os.ReadFile(fe.Log)
	return string(data)
}

// Tail is the end of the output, for failure messages.
func (fe *FE) Tail() string {
	out := fe.Output()
	if len(out) > 6000 {
		out = "…" + out[len(out)-6000:]
	}
	return out
}

// QueryAddr, HTTPAddr and HTTPSAddr are the FE's ports at its address.
func (fe *FE) QueryAddr() string { return net.JoinHostPort(fe.IP.String(), strconv.Itoa(QueryPort)) }
func (fe *FE) HTTPAddr() string  { return net.JoinHostPort(fe.IP.String(), strconv.Itoa(HTTPPort)) }
func (fe *FE) HTTPSAddr() string { return net.JoinHostPort(fe.IP.String(), strconv.Itoa(HTTPSPort)) }

// Bootstrap lets the FE start a new cluster: the file the agent writes for
// ordinal 0 of an instance that has never bootstrapped.
func (fe *FE) Bootstrap(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(fe.RunDir, "fe-bootstrap"), []byte("bootstrap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SetHelper tells an FE without meta to join through the leader's edit log
// port (the agent's fe-helper file).
func (fe *FE) SetHelper(t testing.TB, leader *FE) {
	t.Helper()
	helper := net.JoinHostPort(leader.Host, strconv.Itoa(EditLogPort))
	if err := os.WriteFile(filepath.Join(fe.RunDir, "fe-helper"), []byte(helper), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WaitReady waits until the FE serves the MySQL protocol: StarRocks opens
// its query port last, after its catalog is ready and its HTTP servers run
// (fe-core StarRocksFEServer.start: waitForReady, then the HTTP servers,
// then QeService).
func (fe *FE) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if fe.Exited() {
			t.Fatalf("realfe: FE %d exited (%v) before it served %s:\n%s", fe.Ordinal, fe.err, fe.QueryAddr(), fe.Tail())
		}
		conn, err := net.DialTimeout("tcp", fe.QueryAddr(), time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("realfe: FE %d does not serve %s after %s:\n%s", fe.Ordinal, fe.QueryAddr(), timeout, fe.Tail())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// StartTimeout is how long an FE may take to serve: about 15 s alone on
// two cores, much longer beside other tests.
const StartTimeout = 3 * time.Minute

// StartLeader starts ordinal 0 as the first FE of a new instance and waits
// until it serves.
func (c *Cluster) StartLeader(t testing.TB) *FE {
	t.Helper()
	fe := c.StartFE(t, 0)
	fe.Bootstrap(t)
	fe.WaitReady(t, StartTimeout)
	return fe
}

// Join adds the FE of an ordinal as a follower the way the agent does:
// ALTER SYSTEM ADD FOLLOWER "<fqdn>:9010" on the leader (db), then the new
// FE starts with --helper <leader>:9010; it waits until the FE serves.
func (c *Cluster) Join(t testing.TB, db *sql.DB, leader *FE, ordinal int) *FE {
	t.Helper()
	fe := c.StartFE(t, ordinal)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stmt := fmt.Sprintf("ALTER SYSTEM ADD FOLLOWER %q", net.JoinHostPort(fe.Host, strconv.Itoa(EditLogPort)))
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("realfe: %s: %v", stmt, err)
	}
	fe.SetHelper(t, leader)
	fe.WaitReady(t, StartTimeout)
	return fe
}

// Dial resolves the instance's names as the cluster's DNS would, for a
// client's DialFunc (the agent's, go-sql-driver's): an FE's FQDN to its
// address, and the client Service (AgentConfig.QueryHost) to the running FE
// of the lowest ordinal. The connection comes from HostIP.
func (c *Cluster) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		if ip = c.resolve(host); ip == nil {
			return nil, &net.DNSError{Err: "no such host in the test's instance", Name: host, IsNotFound: true}
		}
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
}

func (c *Cluster) resolve(host string) net.IP {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for i, h := range c.Entry.Frontend.Hosts {
		if h == host {
			return c.net.IP(i)
		}
	}
	if host == c.AgentConfig.QueryHost {
		c.mu.Lock()
		defer c.mu.Unlock()
		best := -1
		for i, fe := range c.fes {
			if !fe.Exited() && (best < 0 || i < best) {
				best = i
			}
		}
		if best >= 0 {
			return c.net.IP(best)
		}
	}
	return nil
}

// RootCAs trusts the instance's CA.
func (c *Cluster) RootCAs() *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(c.CA.CertPEM)
	return p
}

// TLSConfig verifies an FE as the agent does: the instance CA, the server
// name the client dials.
func (c *Cluster) TLSConfig(serverName string) *tls.Config {
	return &tls.Config{RootCAs: c.RootCAs(), ServerName: serverName, MinVersion: tls.VersionTLS12}
}

// DB opens a MySQL-protocol pool to an FE over TLS (verified for the FE's
// FQDN) as user; with plaintext true it does not even ask for TLS.
func (c *Cluster) DB(t testing.TB, fe *FE, user, password string, plaintext bool) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", fe.QueryAddr()
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 10*time.Second, time.Minute, time.Minute
	if !plaintext {
		cfg.TLS = c.TLSConfig(fe.Host)
		// The tests' own sessions give the planner a minute instead of
		// StarRocks' 3 s (SessionVariable new_planner_optimize_timeout,
		// optimizerExecuteTimeout = 3000): on 2 cores shared with the rest
		// of make test a young FE's first plans took over 3 s ("StarRocks
		// planner use long time 3162 ms in logical phase"), which is the
		// machine's load, not an answer under test. The agent's sessions
		// keep the default. A plaintext client is left as it is: its
		// first statement must meet 5205.
		cfg.Params = map[string]string{"new_planner_optimize_timeout": "60000"}
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { _ = db.Close() })
	return db
}
