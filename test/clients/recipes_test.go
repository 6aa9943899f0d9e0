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

// Package clients_test runs every connection recipe of docs/USAGE.md (and of
// its Russian twin) as written, with the real client: Debian's mysql client
// (mariadb-client), Go with go-sql-driver, Java with MySQL Connector/J (its
// trust store made with the JDK's keytool) and Python with PyMySQL. The
// recipes are cut out of the pages' code blocks, so the docs and the test
// cannot drift. Each reads a user Secret with the content the agent writes
// (pkg/usersecret) and connects with full verification to a real StarRocks
// FE (dev/realfe) rendered by the module for the instance with
// requireSecureTransport; the same recipe with a foreign CA or a host name
// the certificate does not cover must fail. The recipes are subtests of
// TestRecipes and share its one FE: they only log in and run SELECT 1, and
// an FE's start costs more CPU than all of them.
//
// The Secret's host is the cluster FQDN of the client Service. Each client
// runs in a mount namespace of its own whose /etc/hosts points that name at
// the FE's address in its network namespace; the connection comes from the
// host's address on the FE's bridge, which the FE does not exempt from
// secure transport (it exempts 127.0.0.1); the machine's /etc/hosts is left
// alone. The only substitutions are the ones a Pod makes: the paths where the
// recipe mounts the Secret become the test's folder, and the mysql client's
// --ssl-mode becomes the MariaDB options the page names.
//
// The clients come from .ci/run: `apt-get install mariadb-client` and
// `dev/scripts/clients.sh install`. Without them the tests fail under CI (CI
// or MANAGED_STARROCKS_CACHE set) and skip elsewhere, naming the command.
package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// The Secrets' mount points and files in the recipes, which the test
// replaces with its own folders.
const (
	docSecretDir  = "/etc/starrocks-user"
	docTrustStore = "/tmp/starrocks-trust.p12"
)

var (
	// The command the mysql recipe runs in the client pod.
	reMysqlCommand = regexp.MustCompile(`sh -c \\\n\s*'([^']*)'`)
	// The Java recipe's run line names the driver it was written for.
	reClassName = regexp.MustCompile(`public class (\w+)`)
	reJavaRun   = regexp.MustCompile("`java -cp (\\S+\\.jar) (\\w+\\.java)`")
)

// TestRecipes runs every recipe against one FE of the instance (newFixture).
// A recipe that lacks its client skips alone.
func TestRecipes(t *testing.T) {
	f := newFixture(t)
	t.Run("mysql client", func(t *testing.T) { testMysqlClientRecipe(t, f) })
	t.Run("Go", func(t *testing.T) { testGoRecipe(t, f) })
	t.Run("Java", func(t *testing.T) { testJavaRecipe(t, f) })
	t.Run("Python", func(t *testing.T) { testPythonRecipe(t, f) })
	t.Run("admin with the mysql client", func(t *testing.T) { testAdminMysqlRecipe(t, f) })
}

// testMysqlClientRecipe runs "Connect with the mysql client": the pod's
// environment and mounted ca.crt from the user Secret, then the command the
// page execs in it, with Debian's mysql client (MariaDB: the page says which
// options replace --ssl-mode).
func testMysqlClientRecipe(t *testing.T, f *fixture) {
	needCommand(t, "mysql", "apt-get install mariadb-client")
	needCommand(t, "unshare", "apt-get install util-linux")
	mariadb := isMariaDB(t)
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			var pod corev1.Pod
			if err := yaml.UnmarshalStrict([]byte(recipe(t, page, "yaml", "name: etl-client")), &pod); err != nil {
				t.Fatalf("docs/%s: the client pod: %v", page, err)
			}
			m := reMysqlCommand.FindStringSubmatch(recipe(t, page, "shell", "exec -it etl-client"))
			if m == nil {
				t.Fatalf("docs/%s: no sh -c '...' command in the mysql recipe", page)
			}
			command := m[1]
			if mariadb {
				const mariadbOptions = "--ssl --ssl-verify-server-cert"
				if !strings.Contains(readPage(t, page), mariadbOptions) {
					t.Fatalf("docs/%s does not tell MariaDB client users to use %q", page, mariadbOptions)
				}
				command = strings.ReplaceAll(command, "--ssl-mode=VERIFY_IDENTITY", mariadbOptions)
			}
			for _, c := range f.cases() {
				t.Run(c.name, func(t *testing.T) {
					env, mounts := podEnvironment(t, page, &pod, map[string]map[string][]byte{desired.UserSecretName(instance, user): c.secret})
					f.run(t, c.user, c.connect, env, "SELECT 1;\n", "sh", "-c", substitute(command, mounts...))
				})
			}
		})
	}
}

// podEnvironment is what the recipe's pod gets from secrets (by name): its environment
// (secretKeyRef values) and, for each mount, the mount path and a folder
// holding the mounted keys (as strings.NewReplacer pairs).
func podEnvironment(t *testing.T, page string, pod *corev1.Pod, secrets map[string]map[string][]byte) (env, mounts []string) {
	t.Helper()
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("docs/%s: the client pod has %d containers, want 1", page, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	for _, e := range c.Env {
		ref := e.ValueFrom
		if ref == nil || ref.SecretKeyRef == nil {
			env = append(env, e.Name+"="+e.Value)
			continue
		}
		v, ok := secrets[ref.SecretKeyRef.Name][ref.SecretKeyRef.Key]
		if !ok {
			t.Fatalf("docs/%s: env %s takes key %q of Secret %q, which the module does not write", page, e.Name, ref.SecretKeyRef.Key, ref.SecretKeyRef.Name)
		}
		env = append(env, e.Name+"="+string(v))
	}
	for _, vm := range c.VolumeMounts {
		dir := t.TempDir()
		for _, v := range pod.Spec.Volumes {
			if v.Name != vm.Name || v.Secret == nil {
				continue
			}
			for _, item := range v.Secret.Items {
				data, ok := secrets[v.Secret.SecretName][item.Key]
				if !ok {
					t.Fatalf("docs/%s: volume %s mounts key %q of Secret %q, which the module does not write", page, v.Name, item.Key, v.Secret.SecretName)
				}
				if err := os.WriteFile(filepath.Join(dir, item.Path), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		mounts = append(mounts, vm.MountPath, dir)
	}
	return env, mounts
}

// testGoRecipe builds the page's open function with a main that calls it
// on the mounted Secret and runs SELECT 1.
func testGoRecipe(t *testing.T, f *fixture) {
	needCommand(t, "unshare", "apt-get install util-linux")
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			// Inside the repository's module, so the build uses its
			// go-sql-driver; a leading _ keeps it out of ./... patterns.
			src, err := os.MkdirTemp(".", "_recipe-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(src) })
			files := map[string]string{
				"open.go": "package main\n\n" + recipe(t, page, "go", "func open(dir string)"),
				"main.go": goHarness,
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			bin := filepath.Join(t.TempDir(), "recipe")
			if out, err := exec.Command("go", "build", "-o", bin, "./"+src).CombinedOutput(); err != nil {
				t.Fatalf("docs/%s: the Go recipe does not build: %v\n%s", page, err, out)
			}
			for _, c := range f.cases() {
				t.Run(c.name, func(t *testing.T) {
					f.run(t, c.user, c.connect, nil, "", bin, writeSecret(t, c.secret))
				})
			}
		})
	}
}

// goHarness is the application around the page's open function.
const goHarness = `package main

import (
	"fmt"
	"os"
)

func main() {
	db, err := open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("connected: SELECT 1 =", one)
}
`

// testJavaRecipe makes the trust store with the page's keytool command and
// runs the page's Java program with the Connector/J version it names.
func testJavaRecipe(t *testing.T, f *fixture) {
	needCommand(t, "unshare", "apt-get install util-linux")
	needCommand(t, "java", "apt-get install openjdk-17-jdk-headless")
	needCommand(t, "keytool", "apt-get install openjdk-17-jdk-headless")
	jar := clientPath(t, "java")
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			keytool := recipe(t, page, "shell", "keytool -importcert")
			program := recipe(t, page, "java", "DriverManager.getConnection")
			class := reClassName.FindStringSubmatch(program)
			run := reJavaRun.FindStringSubmatch(readPage(t, page))
			switch {
			case class == nil:
				t.Fatalf("docs/%s: the Java recipe has no public class", page)
			case run == nil:
				t.Fatalf("docs/%s: no `java -cp <driver>.jar <Class>.java` line for the Java recipe", page)
			case run[1] != filepath.Base(jar):
				t.Fatalf("docs/%s runs the recipe with %s, the test with %s (dev/scripts/clients.sh): make them agree", page, run[1], filepath.Base(jar))
			case run[2] != class[1]+".java":
				t.Fatalf("docs/%s runs %s, the program is class %s", page, run[2], class[1])
			}
			for _, c := range f.cases() {
				t.Run(c.name, func(t *testing.T) {
					dir, tmp := writeSecret(t, c.secret), t.TempDir()
					pairs := []string{docSecretDir, dir, docTrustStore, filepath.Join(tmp, "starrocks-trust.p12")}
					cmd := exec.Command("sh", "-c", substitute(keytool, pairs...))
					cmd.Env = append(os.Environ(), "JAVA_TOOL_OPTIONS="+strings.Join(clientJVMOptions, " "))
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("docs/%s: the keytool command fails: %v\n%s", page, err, out)
					}
					source := filepath.Join(tmp, run[2])
					if err := os.WriteFile(source, []byte(substitute(program, pairs...)), 0o644); err != nil {
						t.Fatal(err)
					}
					f.run(t, c.user, c.connect, nil, "", "java", slices.Concat(clientJVMOptions, []string{"-cp", jar, source})...)
				})
			}
		})
	}
}

// clientJVMOptions are given to the Java recipe's JVMs (keytool and the
// page's program, which the java launcher compiles in memory first): each
// lives about a second, too short for the optimizing compiler and the
// parallel collectors to pay for the CPU they take (about a third of it;
// dev/realfe's FE stops at C1 too). They change no behaviour the recipe
// relies on. -XX:-UsePerfData: no hsperfdata folder left in the machine's
// /tmp (dev/realfe's testJVMOptions).
var clientJVMOptions = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData"}

// testPythonRecipe runs the page's PyMySQL script.
func testPythonRecipe(t *testing.T, f *fixture) {
	needCommand(t, "unshare", "apt-get install util-linux")
	needCommand(t, "python3", "apt-get install python3")
	lib := clientPath(t, "python")
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			script := recipe(t, page, "python", "pymysql.connect")
			// PyMySQL encodes a str password as Latin-1
			// (Connection.__init__); the Secret holds UTF-8 bytes.
			cases := append(f.cases(), recipeCase{"connects with a team password outside Latin-1", unicodeUser, f.unicode, true})
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "connect.py")
					if err := os.WriteFile(path, []byte(substitute(script, docSecretDir, writeSecret(t, c.secret))), 0o644); err != nil {
						t.Fatal(err)
					}
					f.run(t, c.user, c.connect, []string{"PYTHONPATH=" + lib}, "", "python3", path)
				})
			}
		})
	}
}

func readPage(t *testing.T, page string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// isMariaDB tells Debian's mysql client (MariaDB's) from Oracle's: the pages
// say which options replace --ssl-mode for it.
func isMariaDB(t *testing.T) bool {
	t.Helper()
	version, err := exec.Command("mysql", "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("mysql --version: %v\n%s", err, version)
	}
	return strings.Contains(string(version), "MariaDB")
}

var (
	reHeredoc = regexp.MustCompile(`<<EOF\n([\s\S]*?)\nEOF\n`)
	// What the admin recipes ask kubectl; the test answers from the
	// instance's status as the hooks write it.
	reKubectlEndpoint = regexp.MustCompile(`kubectl -n team-a get starrocks analytics -o jsonpath='\{\.status\.endpoints\.query\}'`)
	reKubectlExec     = regexp.MustCompile(`kubectl -n team-a exec (?:-it )?mysql-client -- `)
)

// testAdminMysqlRecipe runs "Connect over TLS with the mysql client" with
// the admin account: the client pod of the page's heredoc (its Secrets named
// as the instance status names them), the host cut from
// status.endpoints.query, the page's port 9030; then the plaintext check of
// "Require TLS from every client", which must get error 5205.
func testAdminMysqlRecipe(t *testing.T, f *fixture) {
	needCommand(t, "mysql", "apt-get install mariadb-client")
	needCommand(t, "unshare", "apt-get install util-linux")
	mariadb := isMariaDB(t)
	// The recipe names the Service's port: the FE is reached there, at an
	// address of its own.
	names := desired.NamesFor(instance)
	creds := map[string][]byte{agentconfig.UsernameKey: []byte(agentconfig.AdminUser), agentconfig.PasswordKey: []byte(adminPassword)}
	otherCA := testpki.MustCA(t, "another-ca").CertPEM
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			m := reHeredoc.FindStringSubmatch(recipe(t, page, "shell", "name: mysql-client"))
			if m == nil {
				t.Fatalf("docs/%s: no <<EOF manifest in the client pod recipe", page)
			}
			var pod corev1.Pod
			manifest := substitute(m[1], "$CREDS", names.CredentialsSecret, "$TLS", desired.TLSSecretName(instance))
			if err := yaml.UnmarshalStrict([]byte(manifest), &pod); err != nil {
				t.Fatalf("docs/%s: the client pod: %v", page, err)
			}
			connect := recipe(t, page, "shell", "exec -it mysql-client")
			plaintext := recipe(t, page, "shell", "--ssl-mode=DISABLED")
			if !reKubectlEndpoint.MatchString(connect) || !reKubectlExec.MatchString(connect) || !reKubectlExec.MatchString(plaintext) {
				t.Fatalf("docs/%s: the admin recipes no longer ask kubectl for %s and exec %s: adapt the test", page, reKubectlEndpoint, reKubectlExec)
			}
			if mariadb {
				for _, o := range []string{"--ssl --ssl-ca=/etc/starrocks-ca/ca.crt --ssl-verify-server-cert", "--skip-ssl"} {
					if !strings.Contains(readPage(t, page), o) {
						t.Fatalf("docs/%s does not tell MariaDB client users to use %q", page, o)
					}
				}
				connect = strings.ReplaceAll(connect, "--ssl-mode=VERIFY_IDENTITY", "--ssl --ssl-verify-server-cert")
				plaintext = strings.ReplaceAll(plaintext, "--ssl-mode=DISABLED", "--skip-ssl")
			}
			script := func(instanceName, text string) string {
				endpoint := desired.Endpoints(instanceName, namespace, "cluster.local").Query
				text = reKubectlEndpoint.ReplaceAllLiteralString(text, "echo '"+endpoint+"'")
				return reKubectlExec.ReplaceAllLiteralString(text, "")
			}
			for _, c := range []struct {
				name     string
				instance string // whose endpoint the status names
				ca       []byte
				connect  bool
			}{
				{"connects with the TLS Secret's CA", instance, f.ca, true},
				{"refuses a server its CA did not sign", instance, otherCA, false},
				{"refuses a certificate without the endpoint's host name", "other", f.ca, false},
			} {
				t.Run(c.name, func(t *testing.T) {
					env, mounts := podEnvironment(t, page, &pod, map[string]map[string][]byte{
						names.CredentialsSecret: creds, desired.TLSSecretName(instance): {"ca.crt": c.ca},
					})
					f.run(t, agentconfig.AdminUser, c.connect, env, "SELECT 1;\n", "sh", "-c", substitute(script(c.instance, connect), mounts...))
				})
			}
			t.Run("a plaintext client gets error 5205", func(t *testing.T) {
				env, _ := podEnvironment(t, page, &pod, map[string]map[string][]byte{
					names.CredentialsSecret: creds, desired.TLSSecretName(instance): {"ca.crt": f.ca},
				})
				// The connect recipe sets HOST for the shell the check runs in.
				host := strings.SplitN(script(instance, connect), "\n", 2)[0]
				out, err := f.exec(env, "", "sh", "-c", host+"\n"+script(instance, plaintext))
				if err == nil || !strings.Contains(out.String(), strconv.Itoa(errSecureTransportRequired)) {
					t.Fatalf("the plaintext check: %v, want error %d:\n%s", err, errSecureTransportRequired, out)
				}
			})
		})
	}
}
