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

// Command fakebe is the StarRocks BE and CN stand-in of the local node's BE
// and CN images (dev/images), started by the stand-in bin/start_be.sh or
// bin/start_cn.sh. As upstream's starrocks_be, one program is both: --cn
// makes it a compute node (StarRocks bin/start_cn.sh execs
// start_backend.sh --cn, which reads conf/cn.conf and writes bin/cn.pid
// instead of be.conf and be.pid).
//
// It reads its configuration file and listens where a BE or CN does:
// heartbeat_service_port (9050), be_port (9060; a CN's cn.conf names it
// thrift_port, which wins when set), brpc_port (8060), be_http_port (8040;
// webserver_port in a CN's cn.conf) and, for a CN, starlet_port (9070),
// with the defaults of StarRocks' be/src/common/config.h. The http port
// answers GET /api/health as the BE does (200,
// {"status":"OK","msg":"To Be Added"}) for the kubelet's probes. The FE
// stand-in counts the node alive while its heartbeat port accepts
// connections. SIGTERM (stop_be.sh -g, stop_cn.sh -g, or the kubelet) is
// its graceful exit: it appends a line to <storage_root_path>/standin-stops.log,
// then exits 0.
//
// Load: a real BE or CN burns CPU on the queries the FE sends it (scans,
// joins, aggregations through brpc), which is what a HorizontalPodAutoscaler
// on CNs reacts to. The stand-in runs no query; GET or POST
// /standin/burn?seconds=N[&threads=K][&percent=P] on the http port spins K
// goroutines (default 1, at most 8) for N seconds (at most 600), each busy P
// percent of every 10 ms (default 100), and answers at once, so a test can
// make a CN's pod busy and watch the autoscaler. The path is the
// stand-in's own: StarRocks has no such API.
//
// What it does not do: store or serve data, cache object storage, speak
// Thrift on the heartbeat and be ports, brpc on 8060 or StarOS on the
// starlet port (it accepts connections and closes them), keep a cluster id,
// report tablets or serve /metrics beyond a stub. It stands in for the
// process so the module's commands, probes, preStop and volumes run for
// real; StarRocks itself needs the upstream image.
package main

import (
	"context"
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
	"syscall"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/standin"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("be stand-in: %v", err)
	}
}

func run() error {
	home := flag.String("home", "/opt/starrocks/be", "STARROCKS_HOME")
	pidFile := flag.String("pid-file", "", "where the stop script finds the pid (PID_DIR/be.pid, PID_DIR/cn.pid)")
	cn := flag.Bool("cn", false, "start a CN, reading conf/cn.conf (start_backend.sh option)")
	// start_backend.sh's other options; the stand-in logs to stderr.
	flag.Bool("be", false, "start a BE (start_backend.sh option)")
	flag.Bool("logconsole", false, "log to the console (start_backend.sh option)")
	flag.Bool("daemon", false, "ignored: the stand-in stays in the foreground")
	flag.Parse()
	component := "be"
	if *cn {
		component = "cn"
	}
	log.SetPrefix(component + " stand-in: ")
	conf, err := standin.ReadConf(filepath.Join(*home, "conf", component+".conf"))
	if err != nil {
		return err
	}
	storage := conf["storage_root_path"]
	if storage == "" {
		storage = filepath.Join(*home, "storage")
	}
	// storage_root_path may list several paths with ;medium; the first holds the record.
	if i := strings.IndexAny(storage, ";,"); i >= 0 {
		storage = storage[:i]
	}
	ports, err := listenPorts(conf, *cn)
	if err != nil {
		return err
	}
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p.port))
		if err != nil {
			return fmt.Errorf("%s: %w", p.key, err)
		}
		listeners = append(listeners, l)
		go acceptAndClose(l)
	}
	httpPort, err := standin.Port(conf, "be_http_port", 8040)
	if err != nil {
		return err
	}
	// webserver_port is be_http_port's other name (config.h
	// CONF_Alias(be_http_port, webserver_port)); the CN's cn.conf uses it.
	if _, ok := conf["webserver_port"]; ok {
		if httpPort, err = standin.Port(conf, "webserver_port", 8040); err != nil {
			return err
		}
	}
	hl, err := net.Listen("tcp", fmt.Sprintf(":%d", httpPort))
	if err != nil {
		return fmt.Errorf("http port: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"OK","msg":"To Be Added"}`)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# stand-in: no StarRocks metrics\nstarrocks_%s_standin_up 1\n", component)
	})
	mux.HandleFunc("/standin/burn", burn)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("http: %v", err)
		}
	}()
	if *pidFile != "" {
		if err := standin.WritePID(*pidFile); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(ports))
	for _, p := range ports {
		names = append(names, fmt.Sprintf("%s %d", p.key, p.port))
	}
	log.Printf("listening (%s, http %d); storage %s", strings.Join(names, ", "), httpPort, storage)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	what := "graceful exit (" + signalName(s) + ")"
	if err := standin.RecordStop(storage, component, what); err != nil {
		log.Printf("record stop: %v", err)
	}
	log.Printf("%s", what)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
}

type listenPort struct {
	key  string
	port int
}

// listenPorts are the ports besides http a BE (or, with cn, a CN) listens
// on, with config.h's defaults: heartbeat_service_port 9050, be_port 9060
// (thrift_port, default 0, replaces it when set: the name the operator's and
// the docs' cn.conf use), brpc_port 8060, and for a CN starlet_port 9070
// (StarOS' worker, compiled in with USE_STAROS, which shared-data builds set).
func listenPorts(conf map[string]string, cn bool) ([]listenPort, error) {
	keys := []struct {
		key string
		def int
	}{{"heartbeat_service_port", 9050}, {"be_port", 9060}, {"brpc_port", 8060}}
	if cn {
		keys = append(keys, struct {
			key string
			def int
		}{"starlet_port", 9070})
	}
	var out []listenPort
	for _, k := range keys {
		port, err := standin.Port(conf, k.key, k.def)
		if err != nil {
			return nil, err
		}
		key := k.key
		if key == "be_port" && conf["thrift_port"] != "" && conf["thrift_port"] != "0" {
			if port, err = standin.Port(conf, "thrift_port", 0); err != nil {
				return nil, err
			}
			key = "thrift_port"
		}
		out = append(out, listenPort{key, port})
	}
	return out, nil
}

// Bounds of /standin/burn: a typo in a test cannot pin the machine's cores
// for long.
const (
	maxBurnSeconds = 600
	maxBurnThreads = 8
)

// burn spins threads goroutines for seconds and answers 202 at once: the
// stand-in's CPU load on demand (the package comment says why).
func burn(w http.ResponseWriter, r *http.Request) {
	seconds, err := strconv.Atoi(r.URL.Query().Get("seconds"))
	if err != nil || seconds < 1 || seconds > maxBurnSeconds {
		http.Error(w, fmt.Sprintf("seconds: want 1 to %d", maxBurnSeconds), http.StatusBadRequest)
		return
	}
	threads := 1
	if v := r.URL.Query().Get("threads"); v != "" {
		if threads, err = strconv.Atoi(v); err != nil || threads < 1 || threads > maxBurnThreads {
			http.Error(w, fmt.Sprintf("threads: want 1 to %d", maxBurnThreads), http.StatusBadRequest)
			return
		}
	}
	percent := 100
	if v := r.URL.Query().Get("percent"); v != "" {
		if percent, err = strconv.Atoi(v); err != nil || percent < 1 || percent > 100 {
			http.Error(w, "percent: want 1 to 100", http.StatusBadRequest)
			return
		}
	}
	until := time.Now().Add(time.Duration(seconds) * time.Second)
	const period = 10 * time.Millisecond
	busy := period * time.Duration(percent) / 100
	for range threads {
		go func() {
			for time.Now().Before(until) {
				sliceEnd := time.Now().Add(busy)
				for x := uint64(1); time.Now().Before(sliceEnd); x = x*6364136223846793005 + 1 {
				}
				if busy < period {
					time.Sleep(period - busy)
				}
			}
		}()
	}
	log.Printf("burning %d thread(s) at %d%% for %d s", threads, percent, seconds)
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, "burning %d thread(s) at %d%% for %d s\n", threads, percent, seconds)
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

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
