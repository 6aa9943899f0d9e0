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

// Command fakebe is the StarRocks BE stand-in of the local node's BE image
// (dev/images), started by the stand-in bin/start_be.sh. It reads
// conf/be.conf and listens where a BE does: heartbeat_service_port (9050),
// be_port (9060), brpc_port (8060) and be_http_port (8040), which answers
// GET /api/health as the BE does (200, {"status":"OK","msg":"To Be Added"})
// for the kubelet's probes. The FE stand-in counts the BE alive while its
// heartbeat port accepts connections. SIGTERM (stop_be.sh -g, or the
// kubelet) is its graceful exit: it appends a line to
// <storage_root_path>/standin-stops.log, then exits 0.
//
// What it does not do: store or serve data, speak Thrift on the heartbeat
// and be ports or brpc on 8060 (it accepts connections and closes them),
// keep a cluster id, report tablets or serve /metrics beyond a stub. It
// stands in for the process so the module's commands, probes, preStop and
// volumes run for real; StarRocks itself needs the upstream image.
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
	pidFile := flag.String("pid-file", "", "where the stop script finds the pid (PID_DIR/be.pid)")
	// start_be.sh's options; the stand-in is always a BE and logs to stderr.
	flag.Bool("be", false, "start a BE (start_be.sh option)")
	flag.Bool("logconsole", false, "log to the console (start_be.sh option)")
	flag.Bool("daemon", false, "ignored: the stand-in stays in the foreground")
	flag.Parse()
	log.SetPrefix("be stand-in: ")
	conf, err := standin.ReadConf(filepath.Join(*home, "conf", "be.conf"))
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
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, p := range []struct {
		key string
		def int
	}{{"heartbeat_service_port", 9050}, {"be_port", 9060}, {"brpc_port", 8060}} {
		port, err := standin.Port(conf, p.key, p.def)
		if err != nil {
			return err
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
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
	hl, err := net.Listen("tcp", fmt.Sprintf(":%d", httpPort))
	if err != nil {
		return fmt.Errorf("be_http_port: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"OK","msg":"To Be Added"}`)
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# stand-in: no StarRocks metrics\nstarrocks_be_standin_up 1\n")
	})
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
	log.Printf("listening (heartbeat, be, brpc, http %d); storage %s", httpPort, storage)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	what := "graceful exit (" + signalName(s) + ")"
	if err := standin.RecordStop(storage, "be", what); err != nil {
		log.Printf("record stop: %v", err)
	}
	log.Printf("%s", what)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
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
