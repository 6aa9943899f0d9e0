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

package realfe_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// A leader and a follower of a Cluster instance with requireSecureTransport,
// from the module's rendered fe.conf and start script, reached from another
// address than 127.0.0.1; when they stop, nothing of them is left.
func TestLeaderAndFollower(t *testing.T) {
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := realfe.Start(t, realfe.Options{Type: v1alpha1.TypeCluster, RequireSecureTransport: true})
		leader := c.StartLeader(t)
		pids = append(pids, leader.Pid())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()

		t.Run("runs the rendered fe.conf with a heap of at most 2 GiB", func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(leader.Home, "conf", "fe.conf"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "ssl_force_secure_transport = true") || !strings.Contains(string(data), "-Xmx1024m") {
				t.Errorf("conf/fe.conf is not the rendered one:\n%s", data)
			}
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", leader.Pid()))
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Split(string(cmdline), "\x00")
			if filepath.Base(args[0]) != "java" || !contains(args, "-Xmx1024m") || !contains(args, "com.starrocks.StarRocksFE") {
				t.Errorf("the FE process is %q, want the JVM with -Xmx1024m", args)
			}
		})

		root := c.DB(t, leader, "root", "", false)
		t.Run("refuses plaintext from another address with 5205", func(t *testing.T) {
			err := c.DB(t, leader, "root", "", true).PingContext(ctx)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 5205 {
				t.Fatalf("plaintext login from %s: %v, want error 5205", c.HostIP, err)
			}
		})
		t.Run("serves TLS for the instance's names", func(t *testing.T) {
			if _, err := root.ExecContext(ctx, fmt.Sprintf("SET PASSWORD = PASSWORD('%s')", c.RootPassword)); err != nil {
				t.Fatalf("set root's password: %v", err)
			}
			if err := c.DB(t, leader, "root", c.RootPassword, false).PingContext(ctx); err != nil {
				t.Fatalf("TLS login with root's new password: %v", err)
			}
			t.Logf("TLS login as root from %s to %s works", c.HostIP, leader.QueryAddr())
		})
		root = c.DB(t, leader, "root", c.RootPassword, false)
		t.Run("serves HTTP and HTTPS with the instance certificate", func(t *testing.T) {
			for _, u := range []struct {
				url    string
				client *http.Client
			}{
				{"http://" + leader.HTTPAddr() + "/api/health", http.DefaultClient},
				{"https://" + leader.Host + ":8443/api/health", &http.Client{Transport: &http.Transport{
					TLSClientConfig: c.TLSConfig(leader.Host), DialContext: c.Dial}}},
			} {
				resp, err := u.client.Get(u.url)
				if err != nil {
					t.Fatalf("GET %s: %v", u.url, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %s", u.url, resp.Status)
				}
			}
		})

		follower := c.Join(t, root, leader, 1)
		pids = append(pids, follower.Pid())
		t.Run("lists the follower joined with --helper, alive", func(t *testing.T) {
			var fes []map[string]string
			deadline := time.Now().Add(2 * time.Minute)
			for {
				var err error
				fes, err = sqlrows.QueryMaps(ctx, root, "SHOW FRONTENDS")
				if err != nil {
					t.Fatal(err)
				}
				if len(fes) == 2 && fes[0]["Alive"] == "true" && fes[1]["Alive"] == "true" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("SHOW FRONTENDS after the join: %v\nfollower:\n%s", fes, follower.Tail())
				}
				time.Sleep(time.Second)
			}
			roles := map[string]string{}
			for _, fe := range fes {
				roles[fe["Name"]+" "+fe["IP"]] = fe["Role"]
				if !strings.HasPrefix(fe["Version"], "4.1-") {
					t.Errorf("Version %q, want the archive's 4.1-<commit>", fe["Version"])
				}
			}
			t.Logf("SHOW FRONTENDS: %v", roles)
			if fes[0]["IP"] != leader.Host && fes[1]["IP"] != leader.Host {
				t.Errorf("the FEs are not listed by FQDN (%s): %v", leader.Host, fes)
			}
		})
		t.Run("the follower answers from the same catalog", func(t *testing.T) {
			if _, err := root.ExecContext(ctx, "CREATE DATABASE realfe_check"); err != nil {
				t.Fatal(err)
			}
			fdb := c.DB(t, follower, "root", c.RootPassword, false)
			deadline := time.Now().Add(time.Minute)
			for {
				dbs, err := sqlrows.QueryMaps(ctx, fdb, "SHOW DATABASES")
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range dbs {
					if d["Database"] == "realfe_check" {
						return
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("the follower does not list the leader's new database: %v", dbs)
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	})
	if len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("FE process %d still runs", pid)
		}
	}
	// The namespaces, links and routes: Start's cleanup checks them while
	// the slot is still this test's (another test may take it right after).
}

// Without the FE's source archive the tests skip, naming what is missing.
func TestSkipsWithoutTheArchive(t *testing.T) {
	t.Setenv("MANAGED_STARROCKS_FE_SOURCE", filepath.Join(t.TempDir(), "no-starrocks-here"))
	var inner *testing.T
	t.Run("built", func(t *testing.T) {
		inner = t
		realfe.Built(t)
		t.Error("Built returned without the archive")
	})
	if !inner.Skipped() {
		t.Fatal("the test did not skip")
	}
	cmd := exec.Command(filepath.Join(controlplane.RepoRoot(), "dev", "scripts", "starrocks-fe.sh"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(string(out), "no-starrocks-here") || !strings.Contains(string(out), "starrocks-fe-src-*.tar.gz") {
		t.Errorf("starrocks-fe.sh without the archive: %v: %s", err, out)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
