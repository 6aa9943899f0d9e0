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

package chartrender_test

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/images"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

const beStartScript = "images/starrocks-be/be-start.sh"

// The BE StatefulSet runs the wrapper from where the image recipe (and the
// tests' stand-in image) puts it.
func TestBackendStartWrapperIsInTheImage(t *testing.T) {
	sr := starrocks("team-b", "analytics", v1alpha1.TypeCluster)
	e := entries(t, sr)[0]
	sts := typed[appsv1.StatefulSet](t, mustFind(t, render(t, nil, sr), "StatefulSet", e.Namespace, e.Names.BackendStatefulSet))
	if got := sts.Spec.Template.Spec.Containers[0].Command; len(got) != 3 || got[0] != "/bin/sh" || got[1] != images.BEStartWrapper {
		t.Errorf("BE command %q, want /bin/sh %s <spill directory>", got, images.BEStartWrapper)
	}
	recipe, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "images/starrocks-be/werf.inc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "- add: /" + beStartScript + "\n    to: " + images.BEStartWrapper + "\n"; !strings.Contains(string(recipe), want) {
		t.Errorf("images/starrocks-be/werf.inc.yaml does not add %s to %s", beStartScript, images.BEStartWrapper)
	}
}

// The BE start wrapper, run by a real /bin/sh against a stand-in
// start_be.sh that records its arguments and the CA bundle it was given.
// The bundle is checked the way the BE's S3 client uses it: OpenSSL's
// default verify paths (what Poco's default client context loads) with
// SSL_CERT_FILE naming the bundle, here through openssl s_client against a
// TLS server of a private CA. Without the instance's CA the server is not
// trusted; with it, it is, and the system's CAs are still in the bundle.
func TestBackendStartWrapper(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl (Debian package openssl) is needed to check the bundle as OpenSSL reads it")
	}
	script := filepath.Join(controlplane.RepoRoot(), beStartScript)
	ca := testpki.MustCA(t, "team private CA")
	leaf := ca.MustIssue(t, "s3.team.internal")
	cert, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
			}(c)
		}
	}()
	// The system bundle stand-in: another CA, which must stay trusted.
	system := testpki.MustCA(t, "a public CA")

	run := func(t *testing.T, withCA bool) (env, out string, bundle []byte) {
		t.Helper()
		dir := t.TempDir()
		beHome, cas := filepath.Join(dir, "be"), filepath.Join(dir, "trusted-cas")
		for _, d := range []string{filepath.Join(beHome, "bin"), filepath.Join(beHome, "conf"), cas} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		record := filepath.Join(dir, "record")
		fake := "#!/bin/sh\necho \"$* SSL_CERT_FILE=${SSL_CERT_FILE:-} AWS_CA_BUNDLE=${AWS_CA_BUNDLE:-}\" > " + record + "\n"
		if err := os.WriteFile(filepath.Join(beHome, "bin", "start_be.sh"), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		systemFile := filepath.Join(dir, "ca-certificates.crt")
		if err := os.WriteFile(systemFile, system.CertPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		// A stale bundle of an earlier start (a CA since removed).
		if err := os.WriteFile(filepath.Join(beHome, "conf", "trusted-cas.pem"), ca.CertPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		if withCA {
			if err := os.WriteFile(filepath.Join(cas, "backup.crt"), ca.CertPEM, 0o444); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", script, filepath.Join(beHome, "storage", "spill"))
		cmd.Env = []string{"PATH=/usr/bin:/bin", "BE_HOME=" + beHome, "TRUSTED_CAS_DIR=" + cas, "SYSTEM_CA_BUNDLE=" + systemFile}
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("wrapper failed: %v: %s", err, o)
		}
		rec, err := os.ReadFile(record)
		if err != nil {
			t.Fatalf("start_be.sh was not run: %v: %s", err, o)
		}
		if _, err := os.Stat(filepath.Join(beHome, "storage", "spill")); err != nil {
			t.Errorf("no spill directory: %v", err)
		}
		bundle, _ = os.ReadFile(filepath.Join(beHome, "conf", "trusted-cas.pem"))
		return strings.TrimSpace(string(rec)), string(o), bundle
	}
	// verifies runs openssl s_client with the default verify paths and
	// SSL_CERT_FILE as given; it reports whether the chain verified.
	verifies := func(t *testing.T, certFile string) bool {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "openssl", "s_client", "-connect", ln.Addr().String(), "-servername", "s3.team.internal",
			"-verify_hostname", "s3.team.internal", "-verify_return_error", "-brief")
		cmd.Stdin = strings.NewReader("")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "SSL_CERT_FILE=" + certFile, "SSL_CERT_DIR=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		ok := err == nil && strings.Contains(string(out), "Verification: OK")
		t.Logf("openssl s_client with SSL_CERT_FILE=%s: ok=%v", filepath.Base(certFile), ok)
		return ok
	}

	t.Run("without a CA Secret the BE starts as before, with no bundle of its own", func(t *testing.T) {
		env, _, bundle := run(t, false)
		if env != "--be --logconsole SSL_CERT_FILE= AWS_CA_BUNDLE=" {
			t.Errorf("start_be.sh %q", env)
		}
		if bundle != nil {
			t.Error("a stale bundle of an earlier start was left")
		}
	})
	t.Run("with one the BE's S3 client trusts the system's CAs and the instance's", func(t *testing.T) {
		env, out, bundle := run(t, true)
		dir := t.TempDir()
		file := filepath.Join(dir, "bundle.pem")
		if err := os.WriteFile(file, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(env, "SSL_CERT_FILE=/") || !strings.HasSuffix(env, "/be/conf/trusted-cas.pem") ||
			!strings.Contains(env, "--be --logconsole SSL_CERT_FILE=") || strings.Count(env, "/be/conf/trusted-cas.pem") != 2 {
			t.Errorf("start_be.sh %q, want SSL_CERT_FILE and AWS_CA_BUNDLE naming conf/trusted-cas.pem", env)
		}
		if !strings.Contains(out, "trusting the system's CAs and") {
			t.Errorf("the wrapper does not say what it trusts: %s", out)
		}
		if !strings.Contains(string(bundle), strings.TrimSpace(string(system.CertPEM))) {
			t.Error("the bundle lost the system's CAs")
		}
		systemOnly := filepath.Join(dir, "system.pem")
		if err := os.WriteFile(systemOnly, system.CertPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		if verifies(t, systemOnly) {
			t.Fatal("the endpoint verifies with the system's CAs alone: the check proves nothing")
		}
		if !verifies(t, file) {
			t.Error("OpenSSL's default verify paths with SSL_CERT_FILE of the bundle do not trust the instance's CA")
		}
	})
}
