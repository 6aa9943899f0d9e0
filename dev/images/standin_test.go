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

package images

import (
	"archive/tar"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/standin"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// extractOpt writes the /opt tree of one image of the archive under root,
// with the image's modes: a directory laid out like the image, for running
// its scripts and stand-ins as plain processes.
func extractOpt(t *testing.T, archive string, b Built, root string) {
	t.Helper()
	lp, err := layout.FromPath(untar(t, archive))
	if err != nil {
		t.Fatal(err)
	}
	h, err := v1.NewHash(b.Digest)
	if err != nil {
		t.Fatal(err)
	}
	img, err := lp.Image(h)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Name, "opt/") {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, os.FileMode(h.Mode)&0o777)
			}
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// process is a stand-in started by its image's script, in its own process
// group, killed with the group when the test ends.
type process struct {
	cmd  *exec.Cmd
	done chan error
	out  *bytes.Buffer
}

func startProcess(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(name, args...), done: make(chan error, 1), out: &bytes.Buffer{}}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	// Pdeathsig: a killed test binary takes its stand-ins with it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(args[0]), p.out.String())
		}
	})
	return p
}

// waitExit waits for the process to end and returns its exit error.
func (p *process) waitExit(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("process did not exit:\n%s", p.out.String())
		return nil
	}
}

func eventually(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, last := f()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after 30s (last: %s)", what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func health(port int) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/api/health", port))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func run(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// TestStandinsStartProbeAndStopGracefully runs the FE and BE stand-ins of
// the built images as plain processes, through the module's fe-start.sh and
// the BE StatefulSet's command, and stops them with the preStop commands
// (stop_fe.sh -g, stop_be.sh -g).
func TestStandinsStartProbeAndStopGracefully(t *testing.T) {
	s := buildSet(t)
	root := t.TempDir()
	extractOpt(t, s.Archive, s.StarrocksFE, root)
	extractOpt(t, s.Archive, s.StarrocksBE, root)
	feHome, beHome := filepath.Join(root, "opt/starrocks/fe"), filepath.Join(root, "opt/starrocks/be")
	ports, err := controlplane.FreePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	query, feHTTP, editLog, rpc := ports[0], ports[1], ports[2], ports[3]
	beHTTP, heartbeat, bePort, brpc := ports[4], ports[5], ports[6], ports[7]

	// The instance's TLS Secret as mounted; the FE reads the keystore's directory.
	ca := testpki.MustCA(t, "stand-in test CA")
	tlsDir := filepath.Join(root, "etc/starrocks/tls")
	if err := os.MkdirAll(tlsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	leaf := ca.MustIssue(t, "localhost")
	if err := leaf.WriteFiles(tlsDir, ca); err != nil {
		t.Fatal(err)
	}
	// keystore.p12 as cert-manager writes it (keystores.pkcs12), with the
	// password the pod passes in STARROCKS_KEYSTORE_PASSWORD.
	pair, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	p12, err := pkcs12.Modern.Encode(pair.PrivateKey, leaf.Cert, []*x509.Certificate{ca.Cert}, "keystore-password")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tlsDir, "keystore.p12"), p12, 0o600); err != nil {
		t.Fatal(err)
	}
	// The rendered fe.conf as the ConfigMap mounts it, ports moved off the
	// defaults so tests can run side by side.
	confDir := filepath.Join(root, "etc/starrocks/fe/conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	feConf := fmt.Sprintf("http_port = %d\nrpc_port = %d\nquery_port = %d\nedit_log_port = %d\nmeta_dir = %s\n"+
		"ssl_keystore_location = %s\nssl_keystore_password = ${STARROCKS_KEYSTORE_PASSWORD}\nssl_key_password = ${STARROCKS_KEYSTORE_PASSWORD}\n"+
		"ssl_force_secure_transport = true\n",
		feHTTP, rpc, query, editLog, filepath.Join(feHome, "meta"), filepath.Join(tlsDir, "keystore.p12"))
	if err := os.WriteFile(filepath.Join(confDir, "fe.conf"), []byte(feConf), 0o444); err != nil {
		t.Fatal(err)
	}
	beConf := fmt.Sprintf("be_port = %d\nbe_http_port = %d\nheartbeat_service_port = %d\nbrpc_port = %d\nstorage_root_path = %s\n",
		bePort, beHTTP, heartbeat, brpc, filepath.Join(beHome, "storage"))
	if err := os.WriteFile(filepath.Join(beHome, "conf/be.conf"), []byte(beConf), 0o644); err != nil {
		t.Fatal(err)
	}
	agentRun := filepath.Join(root, "opt/starrocks/agent-run")
	if err := os.MkdirAll(agentRun, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agentRun, "fe-bootstrap"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	feEnv := []string{"FE_HOME=" + feHome, "FE_CONF_SOURCE=" + filepath.Join(confDir, "fe.conf"),
		"AGENT_RUN_DIR=" + agentRun, "POD_NAME=sr-0"}
	feStart := filepath.Join(root, strings.TrimPrefix(FEStartWrapper, "/"))
	startFE := func() *process {
		p := startProcess(t, append(feEnv, "STARROCKS_KEYSTORE_PASSWORD=keystore-password"), "/bin/sh", feStart)
		eventually(t, "FE /api/health answers 200", func() (bool, string) {
			code, body := health(feHTTP)
			return code == 200, body
		})
		return p
	}
	// The BE StatefulSet's command, with its paths.
	beStart := filepath.Join(root, strings.TrimPrefix(BEStartWrapper, "/"))
	startBE := func() *process {
		p := startProcess(t, []string{"BE_HOME=" + beHome}, "/bin/sh", beStart, filepath.Join(beHome, "storage/spill"))
		eventually(t, "BE /api/health answers 200", func() (bool, string) {
			code, body := health(beHTTP)
			return code == 200, body
		})
		return p
	}

	// A wrong keystore password stops the FE at start, naming the setting.
	wrong := startProcess(t, append(feEnv, "STARROCKS_KEYSTORE_PASSWORD=wrong"), "/bin/sh", feStart)
	if err := wrong.waitExit(t); err == nil || !strings.Contains(wrong.out.String(), "ssl_keystore_password") {
		t.Fatalf("an FE with a wrong keystore password: exit %v, output %q", err, wrong.out.String())
	}
	if _, err := os.Stat(filepath.Join(feHome, "meta/image/VERSION")); err == nil {
		t.Fatal("an FE that failed at start wrote meta")
	}

	fe := startFE()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	if err := mysql.RegisterTLSConfig("standin", &tls.Config{RootCAs: pool, ServerName: "localhost"}); err != nil {
		t.Fatal(err)
	}
	connectTo := func(port int, password string) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(127.0.0.1:%d)/?tls=standin&interpolateParams=true", password, port))
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	connect := func(password string) *sql.DB { return connectTo(query, password) }
	db := connect("")
	backendAlive := func(db *sql.DB) (string, string) {
		rows, err := db.Query("SHOW BACKENDS")
		if err != nil {
			return "", err.Error()
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var alive, all []string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return "", err.Error()
			}
			for i, c := range cols {
				if c == "Alive" {
					alive = append(alive, vals[i].String)
				}
				all = append(all, c+"="+vals[i].String)
			}
		}
		return strings.Join(alive, ","), strings.Join(all, " ")
	}
	var role string
	if err := db.QueryRow("SHOW FRONTENDS").Scan(new(string), &role, new(string), new(string), new(string), new(string), new(string), new(string), new(string)); err != nil || role != "LEADER" {
		t.Fatalf("SHOW FRONTENDS over TLS: role %q, %v", role, err)
	}
	if _, err := db.Exec(fmt.Sprintf(`ALTER SYSTEM ADD BACKEND "127.0.0.1:%d"`, heartbeat)); err != nil {
		t.Fatal(err)
	}
	if alive, _ := backendAlive(db); alive != "false" {
		t.Errorf("a BE nothing answers for is listed alive=%q; StarRocks lists it dead until a heartbeat answers", alive)
	}

	be := startBE()
	eventually(t, "the BE is alive once its heartbeat port answers", func() (bool, string) {
		alive, all := backendAlive(db)
		return alive == "true", all
	})
	run(t, nil, "/bin/sh", filepath.Join(beHome, "bin/stop_be.sh"), "-g")
	if err := be.waitExit(t); err != nil {
		t.Errorf("BE stand-in exit: %v", err)
	}
	eventually(t, "a stopped BE is dead", func() (bool, string) {
		alive, all := backendAlive(db)
		return alive == "false", all
	})
	startBE()
	eventually(t, "a restarted BE is alive again", func() (bool, string) {
		alive, all := backendAlive(db)
		return alive == "true", all
	})

	// A second FE joins as a follower through the leader (fe-start.sh with
	// the helper file the agent writes) and answers from the leader's catalog.
	root2 := t.TempDir()
	extractOpt(t, s.Archive, s.StarrocksFE, root2)
	fe2Home := filepath.Join(root2, "opt/starrocks/fe")
	p2, err := controlplane.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	conf2 := fmt.Sprintf("http_port = %d\nrpc_port = %d\nquery_port = %d\nedit_log_port = %d\nmeta_dir = %s\n"+
		"ssl_keystore_location = %s\nssl_keystore_password = ${STARROCKS_KEYSTORE_PASSWORD}\n",
		p2[0], p2[1], p2[2], p2[3], filepath.Join(fe2Home, "meta"), filepath.Join(tlsDir, "keystore.p12"))
	if err := os.WriteFile(filepath.Join(root2, "fe.conf"), []byte(conf2), 0o444); err != nil {
		t.Fatal(err)
	}
	agentRun2 := filepath.Join(root2, "agent-run")
	if err := os.MkdirAll(agentRun2, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`ALTER SYSTEM ADD FOLLOWER "127.0.0.1:%d"`, p2[3])); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agentRun2, "fe-helper"), []byte(fmt.Sprintf("127.0.0.1:%d", editLog)), 0o644); err != nil {
		t.Fatal(err)
	}
	startProcess(t, []string{"FE_HOME=" + fe2Home, "FE_CONF_SOURCE=" + filepath.Join(root2, "fe.conf"), "AGENT_RUN_DIR=" + agentRun2,
		"POD_NAME=sr-1", "STARROCKS_KEYSTORE_PASSWORD=keystore-password"}, "/bin/sh", filepath.Join(root2, strings.TrimPrefix(FEStartWrapper, "/")))
	eventually(t, "the follower's /api/health answers 200", func() (bool, string) {
		code, body := health(p2[0])
		return code == 200, body
	})
	follower := connectTo(p2[2], "")
	eventually(t, "the follower answers from the leader's catalog", func() (bool, string) {
		alive, all := backendAlive(follower)
		return alive == "true", all
	})
	eventually(t, "the leader lists the follower alive", func() (bool, string) {
		rows, err := db.Query("SHOW FRONTENDS")
		if err != nil {
			return false, err.Error()
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var alive, role string
			if err := rows.Scan(&alive, &role, new(string), new(string), new(string), new(string), new(string), new(string), new(string)); err != nil {
				return false, err.Error()
			}
			if alive == "true" {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d alive", n)
	})

	if _, err := db.Exec("SET PASSWORD = PASSWORD('after-restart')"); err != nil {
		t.Fatal(err)
	}
	// The follower copies the leader's catalog every two seconds; let one
	// copy hold the new password before the leader goes.
	time.Sleep(3 * time.Second)
	// preStop: stop_fe.sh -g; /api/health answers 500 while the FE drains.
	stop := exec.Command("/bin/sh", filepath.Join(feHome, "bin/stop_fe.sh"), "-g")
	stopOut := &bytes.Buffer{}
	stop.Stdout, stop.Stderr = stopOut, stopOut
	if err := stop.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a draining FE answers 500 on /api/health", func() (bool, string) {
		code, body := health(feHTTP)
		return code == 500, body
	})
	if err := stop.Wait(); err != nil {
		t.Fatalf("stop_fe.sh -g: %v\n%s", err, stopOut)
	}
	if err := fe.waitExit(t); err != nil {
		t.Errorf("FE stand-in exit: %v", err)
	}
	// With the leader gone the follower answers from its copy of the
	// leader's catalog, over TLS, with the password set last.
	fromCopy := connectTo(p2[2], "after-restart")
	eventually(t, "the follower answers from its copy while the leader is down", func() (bool, string) {
		alive, all := backendAlive(fromCopy)
		return alive != "", all
	})
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(feHome, "meta"), "fe graceful exit (SIGUSR1)"},
		{filepath.Join(beHome, "storage"), "be graceful exit (SIGTERM)"},
	} {
		data, err := os.ReadFile(filepath.Join(c.dir, standin.StopsLog))
		if err != nil || !strings.Contains(string(data), c.want) {
			t.Errorf("%s: want a line %q, got %q (%v)", standin.StopsLog, c.want, data, err)
		}
	}

	// A restart with its meta keeps the cluster: no bootstrap file needed
	// (fe-start.sh sees image/VERSION), the BE still listed, root's password kept.
	if err := os.Remove(filepath.Join(agentRun, "fe-bootstrap")); err != nil {
		t.Fatal(err)
	}
	startFE()
	db = connect("after-restart")
	eventually(t, "the restarted FE lists the BE alive", func() (bool, string) {
		alive, all := backendAlive(db)
		return alive == "true", all
	})
}
