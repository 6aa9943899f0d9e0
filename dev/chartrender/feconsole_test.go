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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// writeConfSource writes a rendered fe.conf where the pod mounts the
// ConfigMap, read-only as a ConfigMap volume is, and returns its path.
func writeConfSource(t *testing.T, dir string) string {
	t.Helper()
	mount := filepath.Join(dir, "configmap")
	if err := os.MkdirAll(mount, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(mount, "fe.conf")
	if err := os.WriteFile(path, []byte("meta_dir = /opt/starrocks/fe/meta\nsys_log_to_console = true\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	return path
}

// startFEConsole is what 3.x's start_fe.sh does with --logconsole before it
// starts the JVM (StarRocks/starrocks bin/start_fe.sh): conf/fe.conf must
// take an appended line. 4.1's, the version shipped, no longer appends; the
// stricter 3.x behaviour keeps the wrapper honest about a writable copy.
const startFEConsole = `#!/bin/sh
conf="$(dirname "$0")/../conf/fe.conf"
case " $* " in *" --logconsole "*)
  printf '\nsys_log_to_console = true\n' >> "$conf" || exit 1 ;;
esac
`

// TestFrontendConsoleLogs: start_fe.sh --logconsole gets a writable
// conf/fe.conf holding the rendered configuration, at every start afresh, so
// the FE logs to the console (kubectl logs) and never to the container's
// disk, and restarts do not pile up appended lines.
func TestFrontendConsoleLogs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), feStartScript))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	feHome := filepath.Join(dir, "fe")
	for _, d := range []string{filepath.Join(feHome, "bin"), filepath.Join(feHome, "conf"), filepath.Join(feHome, "meta", "image")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The image's own fe.conf, which the rendered one replaces.
	if err := os.WriteFile(filepath.Join(feHome, "conf", "fe.conf"), []byte("JAVA_OPTS = \"-Xmx8192m\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(feHome, "bin", "start_fe.sh"), []byte(startFEConsole), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(feHome, "meta", "image", "VERSION"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	source := writeConfSource(t, dir)
	wrapper := filepath.Join(dir, "fe-start.sh")
	if err := os.WriteFile(wrapper, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "meta_dir = /opt/starrocks/fe/meta\nsys_log_to_console = true\n\nsys_log_to_console = true\n"
	for start := 1; start <= 2; start++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "/bin/sh", wrapper)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "POD_NAME=d8ms-sr-analytics-1", "FE_HOME=" + feHome,
			"AGENT_RUN_DIR=" + dir, "FE_CONF_SOURCE=" + source}
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("start %d: wrapper failed: %v: %s", start, err, out)
		}
		got, err := os.ReadFile(filepath.Join(feHome, "conf", "fe.conf"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("start %d: conf/fe.conf\n%s\nwant the rendered fe.conf plus the appended line:\n%s", start, got, want)
		}
	}
	if got, _ := os.ReadFile(source); !strings.HasSuffix(string(got), "sys_log_to_console = true\n") || strings.Count(string(got), "sys_log_to_console") != 1 {
		t.Errorf("the mounted fe.conf changed: %q", got)
	}
}
