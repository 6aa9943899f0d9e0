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
// What it does not do: run queries, store data, replicate its catalog
// between FEs (each FE stand-in of a three-FE instance keeps its own: a
// follower started with --helper lists the helper as leader and itself as
// follower and knows no accounts of the leader), keep databases, grants or
// tables across restarts, serve HTTPS or metrics beyond a stub.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/standin"
)

const stateFile = "standin-state.json"

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
	port := func(key string, def int) int {
		if err != nil {
			return 0
		}
		var p int
		p, err = standin.Port(conf, key, def)
		return p
	}
	queryPort, httpPort := port("query_port", 9030), port("http_port", 8030)
	editLogPort, rpcPort := port("edit_log_port", 9010), port("rpc_port", 9020)
	if err != nil {
		return err
	}
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

	statePath := filepath.Join(meta, stateFile)
	var srv *fakefe.Server
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
		AfterStatement:       save,
	})
	if err != nil {
		return fmt.Errorf("query_port %d: %w", queryPort, err)
	}
	defer srv.Close()
	if err := startCluster(srv, meta, statePath, self, editLogPort, *helper); err != nil {
		return err
	}
	save()

	for _, p := range []int{editLogPort, rpcPort} {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			return fmt.Errorf("port %d: %w", p, err)
		}
		defer l.Close()
		go acceptAndClose(l)
	}
	var draining atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, _ *http.Request) {
		total, online := 0, 0
		for _, b := range srv.Backends() {
			total++
			if b.Alive {
				online++
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

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		t := time.NewTicker(*heartbeat)
		defer t.Stop()
		for {
			srv.Heartbeat(self, answers)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
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
	save()
	if err := standin.RecordStop(meta, "fe", what); err != nil {
		log.Printf("record stop: %v", err)
	}
	log.Printf("%s", what)
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return web.Shutdown(shutdown)
}

// startCluster restores the cluster from meta, or starts one as the FE
// does: with --helper it joins (the helper is the leader it knows), without
// it bootstraps with itself as leader. Either way it writes image/VERSION,
// which fe-start.sh reads as "this FE has meta".
func startCluster(srv *fakefe.Server, meta, statePath, self string, editLogPort int, helper string) error {
	data, err := os.ReadFile(statePath)
	switch {
	case err == nil:
		var st fakefe.State
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("%s: %w", statePath, err)
		}
		srv.Restore(st)
		log.Printf("restored the cluster from %s", statePath)
	case !errors.Is(err, os.ErrNotExist):
		return err
	case helper != "":
		host, p, err := net.SplitHostPort(helper)
		if err != nil {
			return fmt.Errorf("--helper %q: %w", helper, err)
		}
		hp, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("--helper %q: bad port", helper)
		}
		srv.SetFrontends(fakefe.Frontend{Host: host, EditLogPort: hp, Role: "LEADER"},
			fakefe.Frontend{Host: self, EditLogPort: editLogPort, Role: "FOLLOWER", Alive: true})
		log.Printf("joined through helper %s", helper)
	default:
		srv.SetFrontends(fakefe.Frontend{Host: self, EditLogPort: editLogPort, Role: "LEADER", Alive: true})
		log.Printf("started a new cluster")
	}
	if err := os.MkdirAll(filepath.Join(meta, "image"), 0o755); err != nil {
		return err
	}
	version := filepath.Join(meta, "image", "VERSION")
	if _, err := os.Stat(version); errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(version, []byte(fmt.Sprintf("#stand-in\nclusterId=%d\n", fakefe.ClusterID)), 0o644)
	}
	return nil
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

func acceptAndClose(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
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
