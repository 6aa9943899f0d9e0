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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestClientImageRunsUSAGEsMysqlCommand lays the client image's files out
// in a directory and runs the recipe's mysql options there, chrooted: the
// image holds every library the client needs, and MySQL 8's
// --ssl-mode=VERIFY_IDENTITY reaches the MariaDB client as its own
// verification options.
func TestClientImageRunsUSAGEsMysqlCommand(t *testing.T) {
	if _, err := os.Stat(MariaDBPath); err != nil {
		t.Fatalf("%s (Debian package mariadb-client; .ci/run installs it): %v", MariaDBPath, err)
	}
	shell, err := BusyboxLayer(BusyboxPath)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ClientLayer(MariaDBPath)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range append(shell, client...) {
		materialise(t, root, f)
	}
	run := func(script string) (string, error) {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		cmd.Dir, cmd.Env = "/", []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run(`mysql --host d8ms-sr-analytics.team-a.svc --port 9030 --user admin --ssl-mode=VERIFY_IDENTITY --ssl-ca=/etc/starrocks-ca/ca.crt --help`)
	if err != nil {
		t.Fatalf("mysql in the image: %v\n%s", err, out)
	}
	for _, want := range []string{`(?m)^ssl\s+TRUE$`, `(?m)^ssl-verify-server-cert\s+TRUE$`, `(?m)^ssl-ca\s+/etc/starrocks-ca/ca.crt$`, `(?m)^port\s+9030$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the client's options lack %s:\n%s", want, out)
		}
	}
	if out, err := run(`sleep 0`); err != nil {
		t.Errorf("the pod's command (sleep): %v\n%s", err, out)
	}
	out, err = run(`mysql --ssl-mode=REQUIRED --help`)
	if err == nil || !strings.Contains(out, "translates only --ssl-mode=VERIFY_IDENTITY") {
		t.Errorf("another --ssl-mode: %v, %q, want it refused by name", err, out)
	}
}

// materialise writes one layer entry under root.
func materialise(t *testing.T, root string, f File) {
	t.Helper()
	p := filepath.Join(root, f.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o755)
	if f.Mode != 0 {
		mode = os.FileMode(f.Mode)
	}
	var err error
	switch {
	case f.Dir:
		err = os.MkdirAll(p, mode)
	case f.Link != "":
		err = os.Symlink(f.Link, p)
	case f.Source != "":
		var data []byte
		if data, err = os.ReadFile(f.Source); err == nil {
			err = os.WriteFile(p, data, mode)
		}
	default:
		err = os.WriteFile(p, f.Data, mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}
