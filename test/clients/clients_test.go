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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/realfe"
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
)

var (
	pages = []string{"USAGE.md", "USAGE.ru.md"}
	// The client Service's FQDN, as the hooks render it into the agent's
	// configuration and the agent into the Secret.
	instanceHost = desired.ServiceFQDN(desired.NamesFor(instance).ClientService, namespace, "cluster.local")
	// A name that resolves to the same FE but is not in its certificate.
	wrongHost = desired.ServiceFQDN(desired.NamesFor("other").ClientService, namespace, "cluster.local")
)

// fixture is a running real StarRocks FE (dev/realfe) of the instance
// with secure transport required, the recipe's users, and the user
// Secrets to try against it.
type fixture struct {
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

// newFixture starts the instance's FE, rendered by the module with
// requireSecureTransport, and makes the Secrets' host names resolve to it.
// The clients connect from the host's address on the FE's bridge, never
// 127.0.0.1, which the FE exempts from ssl_force_secure_transport (fe-core
// mysql/MysqlProto.negotiate, isRemoteIPLocalhost): a client that logs in
// used TLS because it had to.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := realfe.Start(t, realfe.Options{Name: instance, RequireSecureTransport: true})
	if got := c.AgentConfig.QueryHost; got != instanceHost {
		t.Fatalf("the rendered client Service is %s, the recipes' %s", got, instanceHost)
	}
	fe := c.StartLeader(t)
	root := c.DB(t, fe, "root", "", false)
	plain := c.DB(t, fe, "root", "", true)
	if err := plain.PingContext(context.Background()); !isSecureTransportRefusal(err) {
		t.Fatalf("a plaintext login from %s: %v, want error %d (secure transport forced)", c.HostIP, err, errSecureTransportRequired)
	}
	for _, q := range []string{"CREATE DATABASE sales",
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", user, password),
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", agentconfig.AdminUser, adminPassword),
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", teamUser, teamPassword),
		fmt.Sprintf("CREATE USER '%s' IDENTIFIED BY '%s'", unicodeUser, unicodePassword)} {
		if _, err := root.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, u := range []string{user, agentconfig.AdminUser, teamUser, unicodeUser} {
		q := fmt.Sprintf("GRANT ALL ON DATABASE sales TO USER '%s'", u)
		if _, err := root.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	system, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{hosts: filepath.Join(t.TempDir(), "hosts")}
	names := fmt.Sprintf("%s %s\n%s %s\n", fe.IP, instanceHost, fe.IP, wrongHost)
	if err := os.WriteFile(f.hosts, append([]byte(names), system...), 0o644); err != nil {
		t.Fatal(err)
	}
	port := realfe.QueryPort
	f.ca = c.CA.CertPEM
	var dsnOK bool
	if f.good, dsnOK = usersecret.Data(instanceHost, port, user, password, f.ca); !dsnOK {
		t.Fatal("the user Secret has no dsn key: the Go recipe needs one")
	}
	if f.team, dsnOK = usersecret.Data(instanceHost, port, teamUser, teamPassword, f.ca); !dsnOK {
		t.Fatalf("the Secret of a user with password %q has no dsn key", teamPassword)
	}
	f.unicode, _ = usersecret.Data(instanceHost, port, unicodeUser, unicodePassword, f.ca)
	f.wrongCA, _ = usersecret.Data(instanceHost, port, user, password, testpki.MustCA(t, "another-ca").CertPEM)
	f.wrongHost, _ = usersecret.Data(wrongHost, port, user, password, f.ca)
	return f
}

// errSecureTransportRequired is StarRocks' error for a plaintext login
// when secure transport is forced (fe-spi common/ErrorCode
// ERR_SECURE_TRANSPORT_REQUIRED).
const errSecureTransportRequired = 5205

func isSecureTransportRefusal(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errSecureTransportRequired
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

// run runs a client (see exec) and checks the outcome: a client that must
// connect printed the answer of SELECT 1 (over TLS: the FE refuses any
// other login from this address); one that must not failed on the
// server's certificate.
func (f *fixture) run(t *testing.T, loginUser string, connect bool, env []string, stdin string, name string, args ...string) {
	t.Helper()
	out, err := f.exec(env, stdin, name, args...)
	switch {
	case connect && err != nil:
		t.Fatalf("%s %s failed (as %s): %v\n%s", name, strings.Join(args, " "), loginUser, err, out.String())
	case connect && !strings.Contains(out.String(), "1"):
		t.Fatalf("%s printed no answer to SELECT 1:\n%s", name, out.String())
	case connect:
	case err == nil:
		t.Fatalf("%s %s connected, want a refused certificate:\n%s", name, strings.Join(args, " "), out.String())
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
