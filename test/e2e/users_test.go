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

package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// TestUsersAndDatabasesAsCode runs users and databases as code on addon-operator,
// the real agent binary and the FE-dialect server: two databases, a
// read-only role, a writer whose password the module generates and a
// reader whose password is the team's. Each user's Secret lets a client
// log in over verified TLS and do exactly what its roles allow; a grant
// added by hand is revoked; a changed password is rolled out; a user
// removed from the spec is dropped with its Secret; a database removed
// from the spec stays.
func TestUsersAndDatabasesAsCode(t *testing.T) {
	t.Parallel()
	const ns, name = "team-u", "grants"
	e := sharedEnv(t, withWebhook)
	e.apply(testClass)
	e.apply(teamPasswordSecret(ns, "reader-password", "first-password-of-the-team"))
	e.apply(usersInstance(ns, name, true, true))
	pod := e.waitFirstFrontendPod(ns, name)
	fe := "d8ms-sr-" + name
	// The FE names itself by the pod's FQDN, as in a cluster: the hooks
	// take the users report of the pod the FE leader is.
	var rendered agentconfig.Config
	if err := json.Unmarshal([]byte(e.configMapData(ns, fe+"-config")[agentconfig.FileName].(string)), &rendered); err != nil {
		t.Fatal(err)
	}
	a := startSidecar(t, e.agentKubeconfig(ns, pod), ns, name, pod, rendered.Frontends[0])
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go a.followConfigMap(ctx, e, ns, fe+"-config")

	e.eventually("UsersReady", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "UsersReady")
		return status == "True", fmt.Sprintf("%s %s: %s\nagent logs:\n%s", status, reason, message, tail(a.logs.String()))
	})
	writerSecret, readerSecret := desired.UserSecretName(name, "etl_writer"), desired.UserSecretName(name, "reader")
	users := e.statusUsers(ns, name)
	if len(users) != 2 || users["etl_writer"] != writerSecret || users["reader"] != readerSecret {
		t.Fatalf("status.users = %v, want etl_writer -> %s and reader -> %s", users, writerSecret, readerSecret)
	}

	writer := a.loginWithSecret(t, e, ns, writerSecret)
	reader := a.loginWithSecret(t, e, ns, readerSecret)
	admin := a.loginAs(t, agentconfig.AdminUser, sidecarAdminPassword)
	mustExec(t, admin, "CREATE TABLE events.clicks (id INT)")
	mustExec(t, admin, "INSERT INTO events.clicks VALUES (1)")

	// The writer creates and fills tables of sales and reads events.
	mustExec(t, writer, "CREATE TABLE sales.orders (id INT)")
	mustExec(t, writer, "INSERT INTO sales.orders VALUES (1)")
	mustQuery(t, writer, "SELECT COUNT(*) FROM events.clicks")
	mustBeDenied(t, writer, "INSERT INTO events.clicks VALUES (2)")
	mustBeDenied(t, writer, "CREATE TABLE events.more (id INT)")
	// The reader reads both and writes nothing.
	mustQuery(t, reader, "SELECT COUNT(*) FROM sales.orders")
	mustQuery(t, reader, "SELECT COUNT(*) FROM events.clicks")
	mustBeDenied(t, reader, "INSERT INTO sales.orders VALUES (2)")
	mustBeDenied(t, reader, "CREATE TABLE sales.more (id INT)")

	// Views and materialized views are objects of their own in StarRocks'
	// GRANT: the spec's AllViews and AllMaterializedViews reach the FE
	// through the CRD, the hooks' values and the agent.
	for _, want := range []string{
		"GRANT SELECT ON ALL VIEWS IN DATABASE sales TO ROLE 'read_only'",
		"GRANT REFRESH, SELECT ON ALL MATERIALIZED VIEWS IN DATABASE sales TO ROLE 'read_only'",
	} {
		if !slices.Contains(a.fe.RoleGrants("read_only"), want) {
			t.Fatalf("grants of read_only %q lack %q", a.fe.RoleGrants("read_only"), want)
		}
	}

	// A grant made by hand is drift: revoked on a following pass.
	mustExec(t, admin, "GRANT INSERT ON ALL TABLES IN DATABASE sales TO ROLE `read_only`")
	e.eventually("the hand-made INSERT of read_only is revoked", func() (bool, string) {
		_, err := reader.Exec("INSERT INTO sales.orders VALUES (3)")
		return isAccessDenied(err), fmt.Sprintf("INSERT as reader: %v; grants of read_only: %v", err, a.fe.RoleGrants("read_only"))
	})

	// The team changes the reader's password in its own Secret.
	e.apply(teamPasswordSecret(ns, "reader-password", "second-password-of-the-team"))
	e.eventually("the new password of reader is rolled out", func() (bool, string) {
		data := e.secretStrings(ns, readerSecret)
		if data[agentconfig.UserSecretPasswordKey] != "second-password-of-the-team" {
			return false, "the user's Secret still has the old password"
		}
		old := a.tryLogin(data[agentconfig.UserSecretUsernameKey], "first-password-of-the-team")
		now := a.tryLogin(data[agentconfig.UserSecretUsernameKey], "second-password-of-the-team")
		return old != nil && now == nil, fmt.Sprintf("old password: %v, new password: %v", old, now)
	})
	if _, err := a.loginWithSecret(t, e, ns, readerSecret).Exec("SELECT COUNT(*) FROM sales.orders"); err != nil {
		t.Fatalf("the reader's Secret after the rollout: %v", err)
	}

	// The reader and the database events leave the spec.
	e.apply(usersInstance(ns, name, false, false))
	e.eventually("reader is dropped with its Secret, events is kept", func() (bool, string) {
		if slices.Contains(a.fe.UserNames(), "reader") {
			return false, "the user reader still exists"
		}
		if _, err := e.get("Secret", ns, readerSecret); err == nil {
			return false, "the Secret of reader still exists"
		}
		dbs := e.statusDatabases(ns, name)
		return slices.Contains(a.fe.Databases(), "events") && dbs["events"] == "unmanaged",
			fmt.Sprintf("databases in StarRocks %v, in the status %v", a.fe.Databases(), dbs)
	})
	if err := a.tryLogin("reader", "second-password-of-the-team"); err == nil {
		t.Fatal("the dropped user still logs in")
	}
	mustQuery(t, admin, "SELECT COUNT(*) FROM events.clicks")
	if _, err := writer.Exec("INSERT INTO sales.orders VALUES (4)"); err != nil {
		t.Fatalf("the writer after another user left: %v", err)
	}
	// No password reached the values, the status or the agent's log.
	sr, err := e.get("Starrocks", ns, name)
	if err != nil {
		t.Fatal(err)
	}
	status, _ := json.Marshal(sr.Object["status"])
	// The values as Helm got them and stored them with the release, and
	// the rendered manifest.
	release, err := e.ao.DeployedRelease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	values, _ := json.Marshal(release)
	writerPassword := e.secretStrings(ns, writerSecret)[agentconfig.UserSecretPasswordKey]
	for _, p := range []string{writerPassword, "first-password-of-the-team", "second-password-of-the-team"} {
		for where, text := range map[string]string{"status": string(status), "values": string(values), "agent log": a.logs.String()} {
			if strings.Contains(text, p) {
				t.Errorf("a password is in the %s", where)
			}
		}
	}
}

// usersInstance is the test instance with databases, a read-only role, a
// writer role and users; withReader adds the user reader (password from the
// team's Secret), withEvents the database events.
func usersInstance(namespace, name string, withReader, withEvents bool) string {
	doc := instance(namespace, name, "Standalone", "") + `
  databases:
    - name: sales`
	if withEvents {
		doc += `
    - name: events`
	}
	readOnly := `
    - name: read_only
      privileges:
        - {database: sales, object: AllTables, privileges: [SELECT]}
        - {database: sales, object: AllViews, privileges: [SELECT]}
        - {database: sales, object: AllMaterializedViews, privileges: [SELECT, REFRESH]}`
	if withEvents {
		readOnly += `
        - {database: events, object: AllTables, privileges: [SELECT]}`
	}
	doc += `
  roles:` + readOnly + `
    - name: writer
      roles: [read_only]
      privileges:
        - {database: sales, object: Database, privileges: [CREATE TABLE]}
        - {database: sales, object: AllTables, privileges: [INSERT, UPDATE, DELETE]}
  users:
    - name: etl_writer
      roles: [writer]`
	if withReader {
		doc += `
    - name: reader
      roles: [read_only]
      passwordSecretRef: {name: reader-password}`
	}
	return doc
}

func teamPasswordSecret(namespace, name, password string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata:
  name: %s
  namespace: %s
stringData:
  password: %q
`, name, namespace, password)
}

// followConfigMap does the kubelet's part: it copies agent.json from the
// instance's ConfigMap into the agent's configuration file whenever it
// changes, pointing the FE addresses at the fake FE of this machine. It
// watches the ConfigMap (a GET every 300 ms was a steady load on the
// apiserver all the while an agent ran).
func (s *sidecar) followConfigMap(ctx context.Context, e *env, namespace, configMap string) {
	last := ""
	byName := metav1.ListOptions{FieldSelector: "metadata.name=" + configMap}
	for ctx.Err() == nil {
		list, err := e.kube.CoreV1().ConfigMaps(namespace).List(ctx, byName)
		if err != nil {
			time.Sleep(300 * time.Millisecond)
			continue
		}
		for _, cm := range list.Items {
			if cm.Data[agentconfig.FileName] == last {
				continue
			}
			var cfg agentconfig.Config
			if err := json.Unmarshal([]byte(cm.Data[agentconfig.FileName]), &cfg); err == nil {
				cfg.QueryHost, cfg.Frontends, cfg.Backends = s.host, []string{s.self}, nil
				fmt.Sscan(s.queryPort, &cfg.QueryPort)
				cfg.FrontendConfig, cfg.BackendConfig = nil, nil
				data, _ := json.Marshal(cfg)
				tmp := s.configPath + ".tmp"
				if os.WriteFile(tmp, data, 0o600) == nil && os.Rename(tmp, s.configPath) == nil {
					last = cm.Data[agentconfig.FileName]
				}
			}
		}
		byName.ResourceVersion = list.ResourceVersion
		w, err := e.kube.CoreV1().ConfigMaps(namespace).Watch(ctx, byName)
		byName.ResourceVersion = ""
		if err != nil {
			time.Sleep(300 * time.Millisecond)
			continue
		}
		// Any event or 30 s: list again; a closed watch after a pause.
		select {
		case <-ctx.Done():
		case _, open := <-w.ResultChan():
			if !open {
				time.Sleep(300 * time.Millisecond)
			}
		case <-time.After(30 * time.Second):
		}
		w.Stop()
	}
}

func (e *env) secretStrings(namespace, name string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for k, v := range e.secretData(namespace, name) {
		out[k] = string(v)
	}
	return out
}

// statusUsers is status.users as name -> secretName.
func (e *env) statusUsers(namespace, name string) map[string]string {
	e.t.Helper()
	sr, err := e.get("Starrocks", namespace, name)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	list, _, _ := unstructured.NestedSlice(sr.Object, "status", "users")
	for _, u := range list {
		m, _ := u.(map[string]any)
		n, _ := m["name"].(string)
		s, _ := m["secretName"].(string)
		out[n] = s
	}
	return out
}

// statusDatabases is status.databases as name -> managed or unmanaged.
func (e *env) statusDatabases(namespace, name string) map[string]string {
	e.t.Helper()
	sr, err := e.get("Starrocks", namespace, name)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	list, _, _ := unstructured.NestedSlice(sr.Object, "status", "databases")
	for _, d := range list {
		m, _ := d.(map[string]any)
		n, _ := m["name"].(string)
		out[n] = "unmanaged"
		if managed, _ := m["managed"].(bool); managed {
			out[n] = "managed"
		}
	}
	return out
}

// loginWithSecret connects as a client of the team does: the DSN and the
// CA from the user's Secret, the server certificate verified.
func (s *sidecar) loginWithSecret(t *testing.T, e *env, namespace, secret string) *sql.DB {
	t.Helper()
	data := e.secretStrings(namespace, secret)
	for _, k := range []string{agentconfig.UserSecretUsernameKey, agentconfig.UserSecretPasswordKey, agentconfig.UserSecretHostKey,
		agentconfig.UserSecretPortKey, agentconfig.UserSecretCAKey, agentconfig.UserSecretDSNKey, agentconfig.UserSecretJDBCKey} {
		if data[k] == "" {
			t.Fatalf("Secret %s has no %s", secret, k)
		}
	}
	if want := "jdbc:mysql://" + net.JoinHostPort(data[agentconfig.UserSecretHostKey], data[agentconfig.UserSecretPortKey]) + "/?sslMode=VERIFY_IDENTITY"; data[agentconfig.UserSecretJDBCKey] != want {
		t.Errorf("jdbc-url of %s = %q, want %q", secret, data[agentconfig.UserSecretJDBCKey], want)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(data[agentconfig.UserSecretCAKey])) {
		t.Fatalf("ca.crt of %s holds no certificate", secret)
	}
	// The DSN names the TLS configuration "starrocks" (docs/USAGE.md).
	if err := mysql.RegisterTLSConfig("starrocks", &tls.Config{RootCAs: roots, ServerName: data[agentconfig.UserSecretHostKey], MinVersion: tls.VersionTLS12}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", data[agentconfig.UserSecretDSNKey])
	if err != nil {
		t.Fatalf("dsn of %s: %v", secret, err)
	}
	db.SetMaxIdleConns(0) // every statement on a fresh login: a dropped user or an old password shows at once
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("log in with the Secret %s: %v", secret, err)
	}
	return db
}

func (s *sidecar) loginAs(t *testing.T, user, password string) *sql.DB {
	t.Helper()
	db, err := s.openAs(user, password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func mustQuery(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	_ = rows.Close()
}

func mustBeDenied(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	_, err := db.Exec(q)
	if !isAccessDenied(err) {
		t.Fatalf("%s: want access denied, got %v", q, err)
	}
}

// isAccessDenied: StarRocks' access-denied error (fe-core ErrorCode
// ERR_ACCESS_DENIED, 1045... as the fake FE reproduces it).
func isAccessDenied(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && strings.Contains(strings.ToLower(me.Message), "access denied")
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
