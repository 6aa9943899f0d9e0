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

package clients_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/usersecret"
)

// The instance and user of the pages' examples.
const (
	namespace = "team-a"
	instance  = "analytics"
	user      = "etl"
	// As the module generates one: 26 characters, DSN-safe.
	password = "K7QW2ZP4MXN6RT3VB5YH8JC2DL"
	// A user whose password is the team's (passwordSecretRef): every
	// character a DSN splits at, and a try at switching TLS off through it.
	teamUser      = "dashboards"
	teamPassword  = "p@ss/w:rd?tls=false&x=(y)@tcp(evil:1)/"
	adminPassword = "M3VX7QK2PZ5TN8RB4WY6HJD2CL"
	// A user whose team-chosen password (passwordSecretRef, any 8 to 1024
	// bytes) is UTF-8 outside Latin-1, with a Latin-1 letter (ü) as well:
	// a client that encodes the text as Latin-1 fails on the first or
	// sends other bytes for the second. The generated passwords are
	// base32 (hooks/credentials: rand.Text), ASCII only.
	unicodeUser     = "analyst"
	unicodePassword = "Passwort-Ω-密码-über-9"
	// The Secrets' host names resolve to listenIP (or adminListenIP); see
	// forward.
	listenIP      = "127.0.0.2"
	adminListenIP = "127.0.0.4"
	forwardIP     = "127.0.0.3"
)

var (
	pages = []string{"USAGE.md", "USAGE.ru.md"}
	// The client Service's FQDN, as the hooks render it into the agent's
	// configuration and the agent into the Secret.
	instanceHost = desired.ServiceFQDN(desired.NamesFor(instance).ClientService, namespace, "cluster.local")
	// A name that resolves to the same FE but is not in its certificate.
	wrongHost = desired.ServiceFQDN(desired.NamesFor("other").ClientService, namespace, "cluster.local")
)

// fixture is a running FE-dialect server with the recipe's user, and the
// user Secrets to try against it.
type fixture struct {
	fe    *fakefe.Server
	hosts string // the /etc/hosts of the clients' mount namespace
	// good is the Secret the agent writes; wrongCA carries another CA;
	// wrongHost names a host the certificate does not cover.
	good, wrongCA, wrongHost map[string][]byte
	// team is the Secret of a user whose password the team chose
	// (passwordSecretRef); unicode that of one whose password is UTF-8
	// outside Latin-1.
	team, unicode map[string][]byte
	ca            []byte // the CA of the FE's certificate
}

// newFixture serves the FE at listen (an address of listenIP or of another
// loopback address), where the Secrets' host names resolve.
func newFixture(t *testing.T, listen string) *fixture {
	t.Helper()
	ca := testpki.MustCA(t, "instance-ca")
	pair, err := ca.MustIssue(t, instanceHost).TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	// StarRocks serves TLS 1.2 on the query port.
	fe := fakefe.Start(t, fakefe.Options{
		TLS:                  &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12},
		ForceSecureTransport: true,
	})
	addr := forward(t, listen, fe.Addr())
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = fakefe.RootUser, "tcp", fe.Addr(), 5*time.Second
	cfg.TLS = &tls.Config{RootCAs: roots, ServerName: instanceHost, MinVersion: tls.VersionTLS12}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	root := sql.OpenDB(conn)
	defer root.Close()
	// The forwarding makes every client remote for the FE: a plaintext
	// login is refused, so a recipe that connects used TLS because it had to.
	plain := *cfg
	plain.TLS, plain.Addr = nil, addr
	plainConn, err := mysql.NewConnector(&plain)
	if err != nil {
		t.Fatal(err)
	}
	plainDB := sql.OpenDB(plainConn)
	defer plainDB.Close()
	if err := plainDB.PingContext(context.Background()); !isSecureTransportRefusal(err) {
		t.Fatalf("a plaintext login through %s: %v, want error %d (secure transport forced)", addr, err, fakefe.ErrSecureTransportRequired)
	}
	for _, q := range []string{"CREATE DATABASE sales", fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", user, password),
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", agentconfig.AdminUser, adminPassword),
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", teamUser, teamPassword),
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", unicodeUser, unicodePassword)} {
		if _, err := root.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	system, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{fe: fe, hosts: filepath.Join(t.TempDir(), "hosts")}
	ip, _, _ := net.SplitHostPort(listen)
	names := fmt.Sprintf("%s %s\n%s %s\n", ip, instanceHost, ip, wrongHost)
	if err := os.WriteFile(f.hosts, append([]byte(names), system...), 0o644); err != nil {
		t.Fatal(err)
	}
	f.ca = ca.CertPEM
	var dsnOK bool
	if f.good, dsnOK = usersecret.Data(instanceHost, port, user, password, ca.CertPEM); !dsnOK {
		t.Fatal("the user Secret has no dsn key: the Go recipe needs one")
	}
	if f.team, dsnOK = usersecret.Data(instanceHost, port, teamUser, teamPassword, ca.CertPEM); !dsnOK {
		t.Fatalf("the Secret of a user with password %q has no dsn key", teamPassword)
	}
	f.unicode, _ = usersecret.Data(instanceHost, port, unicodeUser, unicodePassword, ca.CertPEM)
	f.wrongCA, _ = usersecret.Data(instanceHost, port, user, password, testpki.MustCA(t, "another-ca").CertPEM)
	f.wrongHost, _ = usersecret.Data(wrongHost, port, user, password, ca.CertPEM)
	return f
}

func isSecureTransportRefusal(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == fakefe.ErrSecureTransportRequired
}

// forward listens on listen and passes each connection on to the FE from
// forwardIP. Linux dials any loopback address from 127.0.0.1, which the FE
// exempts from ssl_force_secure_transport; through this the clients are
// remote for it, as they are in a cluster.
func forward(t *testing.T, listen, fe string) string {
	t.Helper()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(forwardIP)}, Timeout: 5 * time.Second}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := dialer.Dial("tcp", fe)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); _ = out.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return l.Addr().String()
}

// cases are the Secrets a recipe runs with and whether it must connect.
func (f *fixture) cases() []recipeCase {
	return []recipeCase{
		{"connects with the user Secret", user, f.good, true},
		{"connects with a team password full of DSN delimiters", teamUser, f.team, true},
		{"refuses a server its CA did not sign", user, f.wrongCA, false},
		{"refuses a certificate without the Secret's host name", user, f.wrongHost, false},
	}
}

type recipeCase struct {
	name    string
	user    string // whose Secret it is
	secret  map[string][]byte
	connect bool
}

// run runs a client (see exec) and checks the outcome on both ends: a client that
// must connect did so over TLS as the user and printed the answer of
// SELECT 1; one that must not failed before the FE let it in.
func (f *fixture) run(t *testing.T, loginUser string, connect bool, env []string, stdin string, name string, args ...string) {
	t.Helper()
	before := f.logins(loginUser)
	out, err := f.exec(env, stdin, name, args...)
	after := f.logins(loginUser)
	switch {
	case connect && err != nil:
		t.Fatalf("%s %s failed: %v\n%s", name, strings.Join(args, " "), err, out.String())
	case connect && !strings.Contains(out.String(), "1"):
		t.Fatalf("%s printed no answer to SELECT 1:\n%s", name, out.String())
	case connect && len(after) == len(before):
		t.Fatalf("%s connected, but the FE saw no login of %q:\n%s", name, loginUser, out.String())
	case connect:
		for _, c := range after[len(before):] {
			if !c.TLS {
				t.Fatalf("%s logged in without TLS: %+v", name, c)
			}
		}
	case err == nil:
		t.Fatalf("%s %s connected, want a refused certificate:\n%s", name, strings.Join(args, " "), out.String())
	case len(after) != len(before):
		t.Fatalf("%s failed, but only after the FE let it in (%+v):\n%s", name, after[len(before):], out.String())
	case !reCertificateRefusal.MatchString(out.String()):
		t.Fatalf("%s failed, but not on the server's certificate:\n%s", name, out.String())
	default:
		t.Logf("%s refused the certificate as it must: %s", name, reCertificateRefusal.FindString(out.String()))
	}
}

// exec runs a client in a mount namespace whose /etc/hosts resolves the
// Secrets' host names; out has its stdout and stderr.
func (f *fixture) exec(env []string, stdin string, name string, args ...string) (out *bytes.Buffer, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$0" /etc/hosts && exec "$@"`, f.hosts, name}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	return out, cmd.Run()
}

// logins are the FE's accepted connections of user.
func (f *fixture) logins(user string) []fakefe.ConnInfo {
	var out []fakefe.ConnInfo
	for _, c := range f.fe.Connections() {
		if c.User == user {
			out = append(out, c)
		}
	}
	return out
}

// reCertificateRefusal is a line in which a client says it refused the
// server's certificate (MariaDB, Go, PyMySQL, a "Caused by" of Connector/J;
// not a stack frame).
var reCertificateRefusal = regexp.MustCompile(`(?im)^[^\s].*(certificate|PKIX|subject alternative).*$`)

// writeSecret writes a Secret's keys as files, as a Pod mounts it.
func writeSecret(t *testing.T, data map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// block is a fenced code block of a page.
type block struct{ lang, text string }

func codeBlocks(t *testing.T, page string) []block {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	for _, line := range strings.SplitAfter(string(data), "\n") {
		fence := strings.HasPrefix(line, "```")
		switch {
		case cur == nil && fence:
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
		case cur != nil && fence:
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line
		}
	}
	return out
}

// recipe is the one code block of page in lang that holds marker.
func recipe(t *testing.T, page, lang, marker string) string {
	t.Helper()
	var found []string
	for _, b := range codeBlocks(t, page) {
		if b.lang == lang && strings.Contains(b.text, marker) {
			found = append(found, b.text)
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/%s: want one %s block with %q, found %d", page, lang, marker, len(found))
	}
	return found[0]
}

// need fails under CI and skips elsewhere when a client is missing, saying
// how to install it.
func need(t *testing.T, ok bool, what, install string) {
	t.Helper()
	if ok {
		return
	}
	msg := fmt.Sprintf("%s is not installed; install it with `%s` (.ci/run does)", what, install)
	if os.Getenv("CI") != "" || os.Getenv("MANAGED_STARROCKS_CACHE") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func needCommand(t *testing.T, name, install string) {
	t.Helper()
	_, err := exec.LookPath(name)
	need(t, err == nil, name, install)
}

// clientPath is where dev/scripts/clients.sh keeps a client.
func clientPath(t *testing.T, which string) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join("..", "..", "dev", "scripts", "clients.sh"), "path", which).Output()
	if err != nil {
		t.Fatalf("dev/scripts/clients.sh path %s: %v", which, err)
	}
	p := strings.TrimSpace(string(out))
	_, err = os.Stat(p)
	need(t, err == nil, which+" client ("+p+")", "dev/scripts/clients.sh install")
	return p
}

func substitute(s string, pairs ...string) string {
	return strings.NewReplacer(pairs...).Replace(s)
}
