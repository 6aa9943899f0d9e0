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

// Command fakefe is the StarRocks FE stand-in of the local node's FE image
// (dev/images), started by the stand-in bin/start_fe.sh that the module's
// fe-start.sh runs. It is the FE-dialect MySQL server of dev/fakefe as a
// process: it reads conf/fe.conf (ports, meta_dir, ssl_keystore_location,
// ssl_force_secure_transport), serves the MySQL protocol on query_port
// (9030) with TLS from the PKCS12 keystore (read once at start with the
// configured password, as the FE reads it), GET /api/health on
// http_port (8030) for the probes (500 while it drains after SIGUSR1, as the
// FE's graceful exit does), and accepts connections on edit_log_port (9010)
// and rpc_port (9020). Its cluster (frontends, backends, accounts and
// configuration items) is kept in meta_dir/standin-state.json, and
// meta_dir/image/VERSION is written as the FE writes it, so a restarted pod
// with its volume keeps its cluster and fe-start.sh sees meta. A heartbeat
// round every two seconds marks each BE alive while its heartbeat port
// accepts connections (and each other FE by its edit log port), so a
// deleted BE pod shows dead, then alive. SIGUSR1 (stop_fe.sh -g) and
// SIGTERM each append a line to meta_dir/standin-stops.log before it exits.
//
// An FE started with --helper is a follower: it remembers the helper as its
// leader in meta_dir/standin-leader and forwards every client connection on
// its query port to the leader's (which the leader's edit log port names),
// so all FEs of an instance answer from the leader's one catalog, as
// StarRocks' followers serve the leader's replicated catalog. It also keeps
// a copy of the leader's catalog, fetched every two seconds from the
// leader's HTTP port (which answers only the instance's FEs, as StarRocks'
// meta actions answer only known FEs: fe-core http/meta/MetaBaseAction
// checkFromValidFe), and answers a client from that copy while the leader
// does not answer: StarRocks' followers keep serving reads while the leader
// is away ("still offer read service", fe-core server/GlobalStateMgr
// transferToNonLeader; docs.starrocks.io graceful_exit: a follower handles
// read-only queries).
//
// What it does not do: run queries, store data, elect a new leader (the FE
// that bootstrapped stays the leader; while it is down its followers answer
// from their copy, where a change is lost and SHOW FRONTENDS shows the
// catalog as last fetched), keep databases, grants or tables across
// restarts, serve HTTPS or metrics beyond a stub.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/standin"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// Files of the stand-in in meta_dir: the leader's cluster, and a
// follower's leader (host:edit_log_port).
const (
	stateFile  = "standin-state.json"
	leaderFile = "standin-leader"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("fe stand-in: %v", err)
	}
}

func run() error {
	home := flag.String("home", "/opt/starrocks/fe", "STARROCKS_HOME")
	pidFile := flag.String("pid-file", "", "where the stop script finds the pid (PID_DIR/fe.pid)")
	helper := flag.String("helper", "", "host:edit_log_port of the FE to join (start_fe.sh option)")
	selfHost := flag.String("self-host", "", "this FE's host name (default: the FQDN /etc/hosts gives the host name, as the FE with --host_type FQDN)")
	drain := flag.Duration("graceful-wait", 2*time.Second, "how long /api/health answers 500 after SIGUSR1 before the exit (StarRocks waits longer; the stand-in keeps rollouts short)")
	heartbeat := flag.Duration("heartbeat-interval", 2*time.Second, "time between heartbeat rounds")
	flag.String("host_type", "", "FQDN or IP (start_fe.sh option)")
	flag.Bool("logconsole", false, "log to the console (start_fe.sh option)")
	flag.Bool("daemon", false, "ignored: the stand-in stays in the foreground")
	flag.Parse()
	log.SetPrefix("fe stand-in: ")

	conf, err := standin.ReadConf(filepath.Join(*home, "conf", "fe.conf"))
	if err != nil {
		return err
	}
	// fe.conf's ports and StarRocks' defaults.
	ports := map[string]int{"query_port": 9030, "http_port": 8030, "edit_log_port": 9010, "rpc_port": 9020}
	for key, def := range ports {
		if ports[key], err = standin.Port(conf, key, def); err != nil {
			return err
		}
	}
	queryPort, httpPort, editLogPort, rpcPort := ports["query_port"], ports["http_port"], ports["edit_log_port"], ports["rpc_port"]
	meta := conf["meta_dir"]
	if meta == "" {
		meta = filepath.Join(*home, "meta")
	}
	self := *selfHost
	if self == "" {
		if self, err = fqdn(); err != nil {
			return err
		}
	}
	tlsConf, err := serverTLS(conf)
	if err != nil {
		return err
	}

	// A follower forwards its clients to the leader, where the one catalog
	// is; the leader is the helper it joined through, remembered in meta.
	leaderPath := filepath.Join(meta, leaderFile)
	leader := *helper
	if leader == "" {
		if data, err := os.ReadFile(leaderPath); err == nil {
			leader = strings.TrimSpace(string(data))
		}
	}
	var srv *fakefe.Server
	if leader != "" {
		if err := os.MkdirAll(meta, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(leaderPath, []byte(leader+"\n"), 0o644); err != nil {
			return err
		}
		if err := writeVersion(meta); err != nil {
			return err
		}
		ql, err := net.Listen("tcp", fmt.Sprintf(":%d", queryPort))
		if err != nil {
			return fmt.Errorf("query_port %d: %w", queryPort, err)
		}
		defer ql.Close()
		copyOfLeader, err := newReplica(tlsConf, conf["ssl_force_secure_transport"] == "true", self)
		if err != nil {
			return err
		}
		defer copyOfLeader.srv.Close()
		go forward(ql, leader, copyOfLeader)
		go fetchImages(leader, httpPort, meta)
		go copyOfLeader.fetch(leader)
		log.Printf("follower of %s: clients are forwarded to the leader", leader)
	} else {
		statePath := filepath.Join(meta, stateFile)
		save := func() {
			if err := writeJSON(statePath, srv.State()); err != nil {
				log.Printf("save state: %v", err)
			}
		}
		srv, err = fakefe.New(fakefe.Options{
			TLS:                  tlsConf,
			ForceSecureTransport: conf["ssl_force_secure_transport"] == "true",
			ListenAddr:           fmt.Sprintf(":%d", queryPort),
			Heartbeat:            true,
			// The version the module ships: its rollout waits for each
			// restarted node to be alive on it (pkg/desired/rollout.go).
			NodeVersion:    desired.StarRocksVersion,
			AfterStatement: save,
		})
		if err != nil {
			return fmt.Errorf("query_port %d: %w", queryPort, err)
		}
		defer srv.Close()
		defer save()
		if err := startCluster(srv, statePath, self, editLogPort); err != nil {
			return err
		}
		if err := writeVersion(meta); err != nil {
			return err
		}
		save()
	}

	// The edit log port tells a follower the leader's query and HTTP
	// ports; the rpc port only accepts.
	el, err := net.Listen("tcp", fmt.Sprintf(":%d", editLogPort))
	if err != nil {
		return fmt.Errorf("edit_log_port %d: %w", editLogPort, err)
	}
	defer el.Close()
	reply := ""
	if srv != nil {
		reply = fmt.Sprintf("%d %d\n", queryPort, httpPort)
	}
	go acceptAndReply(el, reply)
	rl, err := net.Listen("tcp", fmt.Sprintf(":%d", rpcPort))
	if err != nil {
		return fmt.Errorf("rpc_port %d: %w", rpcPort, err)
	}
	defer rl.Close()
	go acceptAndReply(rl, "")
	var draining atomic.Bool
	mux := http.NewServeMux()
	// The leader names its newest image for its followers (fetchImages).
	mux.HandleFunc("/standin/image", func(w http.ResponseWriter, _ *http.Request) {
		if srv == nil || srv.NewestImage() == 0 {
			http.NotFound(w, nil)
			return
		}
		fmt.Fprintf(w, "image.%d", srv.NewestImage())
	})
	// The leader's catalog for its followers' copies (replica.fetch).
	mux.HandleFunc("/standin/state", func(w http.ResponseWriter, r *http.Request) {
		if srv == nil {
			http.NotFound(w, nil)
			return
		}
		if !fromFrontend(r.RemoteAddr, srv.Frontends()) {
			http.Error(w, "invalid client host", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(srv.State())
	})
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, _ *http.Request) {
		total, online := 0, 0
		if srv != nil {
			for _, b := range srv.Backends() {
				total++
				if b.Alive {
					online++
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if draining.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"status":"FAILED","msg":"graceful exit in progress"}`)
			return
		}
		fmt.Fprintf(w, `{"total_backend_num":%d,"online_backend_num":%d,"status":"OK","msg":"Success"}`, total, online)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# stand-in: no StarRocks metrics\nstarrocks_fe_standin_up 1\n")
	})
	hl, err := net.Listen("tcp", fmt.Sprintf(":%d", httpPort))
	if err != nil {
		return fmt.Errorf("http_port %d: %w", httpPort, err)
	}
	web := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := web.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("http: %v", err)
		}
	}()
	// With enable_https the FE serves the same HTTP API over TLS on
	// https_port (default 8443) beside http_port (fe-core
	// StarRocksFEServer.start: a second HttpServer(Config.https_port, true)).
	// The stand-in does too, so the NetworkPolicy test on the local node
	// finds a listener behind the client port 8443.
	if conf["enable_https"] == "true" && tlsConf != nil {
		httpsPort, err := standin.Port(conf, "https_port", 8443)
		if err != nil {
			return err
		}
		sl, err := net.Listen("tcp", fmt.Sprintf(":%d", httpsPort))
		if err != nil {
			return fmt.Errorf("https_port %d: %w", httpsPort, err)
		}
		secure := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsConf}
		go func() {
			if err := secure.ServeTLS(sl, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Printf("https: %v", err)
			}
		}()
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if srv != nil {
		// The leader's checkpoint writes the image ALTER SYSTEM CREATE
		// IMAGE asked for into its meta_dir, where its agent looks for it
		// before an FE rollout (pkg/desired/rollout.go).
		srv.SetImageMetaDirs(meta)
		go func() {
			t := time.NewTicker(*heartbeat)
			defer t.Stop()
			for {
				srv.Heartbeat(self, answers)
				srv.WritePendingImage()
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	if *pidFile != "" {
		if err := standin.WritePID(*pidFile); err != nil {
			return err
		}
	}
	log.Printf("serving as %s (query %d, http %d, edit log %d, rpc %d, TLS %v), meta %s",
		self, queryPort, httpPort, editLogPort, rpcPort, tlsConf != nil, meta)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	what := "exit (SIGTERM)"
	switch <-sig {
	case syscall.SIGUSR1:
		what = "graceful exit (SIGUSR1)"
		draining.Store(true)
		log.Printf("graceful exit: /api/health answers 500 for %s", *drain)
		time.Sleep(*drain)
	case syscall.SIGINT:
		what = "exit (SIGINT)"
	}
	if err := standin.RecordStop(meta, "fe", what); err != nil {
		log.Printf("record stop: %v", err)
	}
	log.Printf("%s", what)
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return web.Shutdown(shutdown)
}

// startCluster restores the leader's cluster from meta, or bootstraps one
// with itself as leader, as an FE started without --helper does.
func startCluster(srv *fakefe.Server, statePath, self string, editLogPort int) error {
	data, err := os.ReadFile(statePath)
	switch {
	case err == nil:
		var st fakefe.State
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("%s: %w", statePath, err)
		}
		srv.Restore(st)
		log.Printf("restored the cluster from %s", statePath)
	case errors.Is(err, os.ErrNotExist):
		srv.SetFrontends(fakefe.Frontend{Host: self, EditLogPort: editLogPort, Role: "LEADER", Alive: true})
		log.Printf("started a new cluster")
	default:
		return err
	}
	return nil
}

// writeVersion writes meta/image/VERSION, which the FE writes with its
// first image and fe-start.sh reads as "this FE has meta".
func writeVersion(meta string) error {
	if err := os.MkdirAll(filepath.Join(meta, "image"), 0o755); err != nil {
		return err
	}
	version := filepath.Join(meta, "image", "VERSION")
	if _, err := os.Stat(version); errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(version, []byte(fmt.Sprintf("#stand-in\nclusterId=%d\n", fakefe.ClusterID)), 0o644)
	}
	return nil
}

// forward hands every client connection to the leader's query port, which
// the leader's edit log port tells (asked per connection: the leader may
// have restarted), or to the follower's copy of the leader's catalog while
// the leader does not answer. TLS and the MySQL protocol pass through
// untouched, so a client sees the certificate of the leader (or, from the
// copy, of this follower: the pods of an instance share one).
func forward(l net.Listener, leader string, copyOfLeader *replica) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := dialLeader(leader)
			if err != nil {
				if !copyOfLeader.fetched.Load() {
					log.Printf("leader %s: %v; no copy of its catalog yet", leader, err)
					return
				}
				log.Printf("leader %s: %v; answering from the copy of its catalog", leader, err)
				if up, err = net.DialTimeout("tcp", copyOfLeader.addr, time.Second); err != nil {
					log.Printf("the copy of the leader's catalog: %v", err)
					return
				}
				// StarRocks' follower sends each write to the leader of the
				// moment; a connection of the copy would keep writing into
				// the copy, where it is lost. It is closed once the leader
				// answers again, and the client's next connection reaches it.
				go closeWhenLeaderAnswers(leader, c)
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
			<-done
		}()
	}
}

// closeWhenLeaderAnswers closes c, a client connection answered from the
// copy of the leader's catalog, once the leader's edit log port answers (or
// c is closed already).
func closeWhenLeaderAnswers(leader string, c net.Conn) {
	for {
		time.Sleep(time.Second)
		if _, _, err := leaderPorts(leader); err == nil {
			c.Close()
			return
		}
		// A closed connection's deadline cannot be set: the forwarder is done.
		if err := c.SetDeadline(time.Time{}); err != nil {
			return
		}
	}
}

// leaderDialTimeout bounds each dial of the leader: in the pod network a
// live leader answers within milliseconds, and a client waits for the
// answer from the copy while a gone leader's address times out.
const leaderDialTimeout = time.Second

// dialLeader connects to the leader's query port.
func dialLeader(leader string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(leader)
	if err != nil {
		return nil, err
	}
	query, _, err := leaderPorts(leader)
	if err != nil {
		return nil, err
	}
	return net.DialTimeout("tcp", net.JoinHostPort(host, query), leaderDialTimeout)
}

// leaderPorts asks the leader's edit log port for its query and HTTP ports.
func leaderPorts(leader string) (query, http string, err error) {
	c, err := net.DialTimeout("tcp", leader, leaderDialTimeout)
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(leaderDialTimeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", "", fmt.Errorf("no ports from the leader's edit log port (is it a follower?): %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		return "", "", fmt.Errorf("the leader's edit log port answered %q, want its query and HTTP ports", line)
	}
	return f[0], f[1], nil
}

// serverTLS reads the PKCS12 keystore at ssl_keystore_location with
// ssl_keystore_password, once, as the FE reads it only at start. The FE
// reads the key with ssl_key_password; a cert-manager keystore has one
// password for both, so a different key password fails here as the FE's
// handshakes would. No keystore configured: plaintext, as the FE.
func serverTLS(conf map[string]string) (*tls.Config, error) {
	keystore := conf["ssl_keystore_location"]
	if keystore == "" {
		return nil, nil
	}
	data, err := os.ReadFile(keystore)
	if err != nil {
		return nil, fmt.Errorf("ssl_keystore_location: %w", err)
	}
	password := conf["ssl_keystore_password"]
	if kp, ok := conf["ssl_key_password"]; ok && kp != password {
		return nil, errors.New("ssl_key_password differs from ssl_keystore_password: the keystore's key cannot be read")
	}
	key, cert, chain, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return nil, fmt.Errorf("ssl_keystore_location %s with ssl_keystore_password: %w", keystore, err)
	}
	c := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}, nil
}

// fqdn is the host's fully qualified name the way the FE finds it with
// --host_type FQDN (the canonical name of the host name): the first name
// with a dot on the /etc/hosts line that lists the host name, which the
// kubelet writes as "<ip> <pod>.<subdomain>.<namespace>.svc.<domain> <pod>".
func fqdn() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	f, err := os.Open("/etc/hosts")
	if err != nil {
		return host, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.SplitN(sc.Text(), "#", 2)[0])
		if len(fields) < 2 {
			continue
		}
		names := fields[1:]
		for _, n := range names {
			if n != host && !strings.HasPrefix(n, host+".") {
				continue
			}
			for _, m := range names {
				if strings.HasPrefix(m, host+".") {
					return m, nil
				}
			}
		}
	}
	return host, nil
}

func answers(host string, port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// acceptAndReply writes reply (if any) to each connection and closes it.
func acceptAndReply(l net.Listener, reply string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		if reply != "" {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, reply)
		}
		c.Close()
	}
}

// writeJSON replaces path atomically: a stop in the middle leaves the old state.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var imageName = regexp.MustCompile(`^image\.[0-9]+$`)

// fetchImages is a follower receiving the leader's images, as StarRocks'
// followers download each new image from the leader: it asks the leader's
// HTTP port for the newest image name every two seconds and puts an image
// of that name into its own meta_dir, where its agent looks before an FE
// rollout (pkg/desired/rollout.go waits for every follower to have it).
func fetchImages(leader string, httpPort int, meta string) {
	host, _, err := net.SplitHostPort(leader)
	if err != nil {
		host = leader
	}
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://%s/standin/image", net.JoinHostPort(host, strconv.Itoa(httpPort)))
	for range time.Tick(2 * time.Second) {
		resp, err := client.Get(url)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
		resp.Body.Close()
		name := strings.TrimSpace(string(body))
		if resp.StatusCode != http.StatusOK || !imageName.MatchString(name) {
			continue
		}
		dir := filepath.Join(meta, "image", "v2")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			_ = os.WriteFile(filepath.Join(dir, name), []byte("fake image"), 0o644)
			log.Printf("received %s from the leader", name)
		}
	}
}

// replica is a follower's copy of the leader's catalog (accounts, nodes,
// configuration), served on a port of its own in the pod: the forwarder
// hands it the clients the leader does not take. It is dialled at the
// pod's own address, not loopback, so ssl_force_secure_transport holds
// for it as for the leader (the FE exempts only 127.0.0.1).
type replica struct {
	srv     *fakefe.Server
	addr    string
	fetched atomic.Bool
}

func newReplica(tlsConf *tls.Config, force bool, self string) (*replica, error) {
	srv, err := fakefe.New(fakefe.Options{TLS: tlsConf, ForceSecureTransport: force, ListenAddr: ":0"})
	if err != nil {
		return nil, fmt.Errorf("the copy of the leader's catalog: %w", err)
	}
	_, port, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &replica{srv: srv, addr: net.JoinHostPort(self, port)}, nil
}

// fetch replaces the copy with the leader's catalog every two seconds,
// as long as the leader answers.
func (r *replica) fetch(leader string) {
	host, _, err := net.SplitHostPort(leader)
	if err != nil {
		host = leader
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for range time.Tick(2 * time.Second) {
		_, httpPort, err := leaderPorts(leader)
		if err != nil {
			continue
		}
		resp, err := client.Get(fmt.Sprintf("http://%s/standin/state", net.JoinHostPort(host, httpPort)))
		if err != nil {
			continue
		}
		var st fakefe.State
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			continue
		}
		r.srv.Restore(st)
		if !r.fetched.Swap(true) {
			log.Printf("copied the leader's catalog")
		}
	}
}

// fromFrontend says whether remote (host:port) is the address of one of
// the frontends, looked up by their host names.
func fromFrontend(remote string, frontends []fakefe.Frontend) bool {
	ip, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	for _, fe := range frontends {
		addrs, err := net.LookupHost(fe.Host)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if a == ip {
				return true
			}
		}
	}
	return false
}
