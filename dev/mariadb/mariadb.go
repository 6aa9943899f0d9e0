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

// Package mariadb starts a real MariaDB server for tests: own datadir, a
// loopback TCP port, TLS from the caller's files and require_secure_transport
// on, running in the foreground as a child of the test process. It needs the
// Debian package mariadb-server (mariadbd, mariadb-install-db); without it the
// test fails with a message saying so. Development tooling, never shipped.
package mariadb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// Options are the server's TLS files; all three are required because the
// point of this server is to refuse plaintext.
type Options struct {
	CAFile   string
	CertFile string
	KeyFile  string
}

// Server is a running MariaDB.
type Server struct {
	Port   int
	Socket string
	// Addr is 127.0.0.1:Port.
	Addr string

	mu     sync.Mutex
	stderr bytes.Buffer
}

// Start runs mariadb-install-db and mariadbd, waits until the server accepts
// connections on its socket, and stops it with t.Cleanup. The root accounts
// (root@localhost, root@127.0.0.1) have an empty password, like a fresh
// StarRocks FE.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	mariadbd, err := exec.LookPath("mariadbd")
	if err != nil {
		mariadbd = "/usr/sbin/mariadbd"
		if _, statErr := os.Stat(mariadbd); statErr != nil {
			t.Fatalf("mariadbd not found: install the Debian package mariadb-server (apt-get install -y mariadb-server)")
		}
	}
	installDB, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		t.Fatalf("mariadb-install-db not found: install the Debian package mariadb-server (apt-get install -y mariadb-server)")
	}
	// Unix socket paths are limited to 108 bytes; t.TempDir can be longer.
	base, err := os.MkdirTemp("", "mdb")
	if err != nil {
		t.Fatalf("create MariaDB dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	datadir := filepath.Join(base, "data")
	// MariaDB's temporary tables go into base too, not the machine's /tmp:
	// a bootstrap in a full make test failed on one it found deleted under
	// it ("Error on delete of '/tmp/#sql-temptable-...'"), and nothing of
	// the test's server belongs outside its own folder.
	tmpdir := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmpdir, 0o700); err != nil {
		t.Fatalf("create MariaDB tmpdir: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, installDB,
		"--no-defaults", "--datadir="+datadir, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db",
		"--skip-name-resolve", "--tmpdir="+tmpdir)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}

	s := &Server{Socket: filepath.Join(base, "s.sock")}
	for attempt := 0; ; attempt++ {
		ports, err := controlplane.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		s.Port = ports[0]
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		cmd := exec.Command(mariadbd,
			"--no-defaults",
			"--user=root", // MariaDB refuses to run as root otherwise; tests run as root in CI.
			"--datadir="+datadir,
			"--tmpdir="+tmpdir,
			"--socket="+s.Socket,
			"--pid-file="+filepath.Join(base, "pid"),
			"--port="+strconv.Itoa(s.Port),
			"--bind-address=127.0.0.1",
			"--skip-name-resolve",
			"--skip-log-bin",
			"--innodb-buffer-pool-size=16M",
			"--innodb-log-file-size=8M",
			"--performance-schema=OFF",
			"--ssl-ca="+opts.CAFile,
			"--ssl-cert="+opts.CertFile,
			"--ssl-key="+opts.KeyFile,
			"--require-secure-transport=ON",
		)
		cmd.Stdout = &lockedWriter{s: s}
		cmd.Stderr = &lockedWriter{s: s}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start mariadbd: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if err := s.waitReady(exited); err != nil {
			_ = cmd.Process.Kill()
			if attempt < 2 && bytes.Contains(s.output(), []byte("Address already in use")) {
				continue
			}
			t.Fatalf("mariadbd did not become ready: %v\n%s", err, s.output())
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		return s
	}
}

func (s *Server) waitReady(exited <-chan error) error {
	deadline := time.After(60 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("mariadbd exited: %v", err)
		case <-deadline:
			return errors.New("timeout after 60s")
		case <-time.After(100 * time.Millisecond):
		}
		db, err := s.SocketDB()
		if err != nil {
			return err
		}
		err = db.Ping()
		_ = db.Close()
		if err == nil {
			return nil
		}
	}
}

// SocketDB opens an administrative connection as root over the Unix socket,
// which MariaDB treats as secure transport: tests use it to set the server up
// (users, FLUSH SSL) without going through the TLS path under test.
func (s *Server) SocketDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = s.Socket
	cfg.Timeout = 2 * time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mariadb socket connector: %w", err)
	}
	return sql.OpenDB(c), nil
}

// Exec runs administrative statements over the socket.
func (s *Server) Exec(t testing.TB, stmts ...string) {
	t.Helper()
	db, err := s.SocketDB()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("mariadb %q: %v", q, err)
		}
	}
}

func (s *Server) output() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.stderr.Bytes()...)
}

type lockedWriter struct{ s *Server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.stderr.Write(p)
}
