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
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/standin"
)

// TestCNStandinStartsProbesBurnsAndStopsGracefully runs the CN stand-in of
// the built image as a plain process through the module's cn-start.sh, by
// the /opt/starrocks/cn paths a CN's pod uses: it listens on every port of
// cn.conf (the names upstream's cn.conf uses), answers the probes, burns CPU
// on demand, and records its graceful exit from stop_cn.sh -g (upstream's
// preStop, docker/dockerfiles/be/cn_prestop.sh).
func TestCNStandinStartsProbesBurnsAndStopsGracefully(t *testing.T) {
	s := buildSet(t)
	root := t.TempDir()
	extractOpt(t, s.Archive, s.StarrocksCN, root)
	cnHome := filepath.Join(root, strings.TrimPrefix(CNHome, "/"))
	if target, err := os.Readlink(cnHome); err != nil || target != "be" {
		t.Fatalf("%s: want a link to be, as upstream's image (%q, %v)", CNHome, target, err)
	}
	ports, err := controlplane.FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	web, heartbeat, thrift, brpc, starlet := ports[0], ports[1], ports[2], ports[3], ports[4]
	storage := filepath.Join(cnHome, "storage")
	cnConf := fmt.Sprintf("thrift_port = %d\nwebserver_port = %d\nheartbeat_service_port = %d\nbrpc_port = %d\nstarlet_port = %d\nstorage_root_path = %s\n",
		thrift, web, heartbeat, brpc, starlet, storage)
	if err := os.WriteFile(filepath.Join(cnHome, "conf/cn.conf"), []byte(cnConf), 0o644); err != nil {
		t.Fatal(err)
	}
	cnStart := filepath.Join(root, strings.TrimPrefix(CNStartWrapper, "/"))
	spill := filepath.Join(storage, "spill")
	p := startProcess(t, []string{"CN_HOME=" + cnHome}, "/bin/sh", cnStart, spill)
	eventually(t, "CN /api/health answers 200", func() (bool, string) {
		code, body := health(web)
		return code == 200 && body == `{"status":"OK","msg":"To Be Added"}`, body
	})
	for name, port := range map[string]int{"heartbeat": heartbeat, "thrift": thrift, "brpc": brpc, "starlet": starlet} {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
		if err != nil {
			t.Errorf("%s port %d: %v", name, port, err)
			continue
		}
		c.Close()
	}
	if st, err := os.Stat(spill); err != nil || !st.IsDir() {
		t.Errorf("cn-start.sh did not make the spill directory %s: %v", spill, err)
	}

	// The burn endpoint refuses what it does not bound, and burns what it does.
	url := fmt.Sprintf("http://127.0.0.1:%d/standin/burn", web)
	for _, q := range []string{"", "?seconds=0", "?seconds=601", "?seconds=1&threads=9", "?seconds=1&percent=0", "?seconds=1&percent=101"} {
		resp, err := http.Post(url+q, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("burn%s: status %d, want 400", q, resp.StatusCode)
		}
	}
	before := cpuTicks(t, p.cmd.Process.Pid)
	resp, err := http.Post(url+"?seconds=2&threads=2", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("burn: status %d, want 202", resp.StatusCode)
	}
	time.Sleep(2500 * time.Millisecond)
	// An idle stand-in uses no clock tick in 2 s; a loaded machine (these
	// share 2 cores with other builds) may give the burn little more than
	// a few, so the floor is low and the test only shows that it spins.
	if burnt := cpuTicks(t, p.cmd.Process.Pid) - before; burnt < 5 {
		t.Errorf("burn of 2 threads for 2 s used %d clock ticks of CPU, want at least 5 (0.05 s)", burnt)
	} else {
		t.Logf("burn of 2 threads for 2 s used %d clock ticks of CPU", burnt)
	}
	// A partial burn keeps to its share: a tenth of one thread for 2 s is
	// about 20 ticks, a whole thread 200.
	before = cpuTicks(t, p.cmd.Process.Pid)
	if resp, err = http.Post(url+"?seconds=2&percent=10", "", nil); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	time.Sleep(2500 * time.Millisecond)
	if burnt := cpuTicks(t, p.cmd.Process.Pid) - before; burnt > 60 {
		t.Errorf("burn at 10%% for 2 s used %d clock ticks of CPU, want at most 60", burnt)
	} else {
		t.Logf("burn at 10%% for 2 s used %d clock ticks of CPU", burnt)
	}

	run(t, nil, "/bin/sh", filepath.Join(cnHome, "bin/stop_cn.sh"), "-g")
	if err := p.waitExit(t); err != nil {
		t.Errorf("CN exit after stop_cn.sh -g: %v, want 0", err)
	}
	data, err := os.ReadFile(filepath.Join(storage, standin.StopsLog))
	if err != nil || !strings.Contains(string(data), "cn graceful exit (SIGTERM)") {
		t.Errorf("%s: want a line \"cn graceful exit (SIGTERM)\", got %q (%v)", standin.StopsLog, data, err)
	}
	if _, err := os.Stat(filepath.Join(cnHome, "bin/cn.pid")); !os.IsNotExist(err) {
		t.Errorf("stop_cn.sh left bin/cn.pid (%v)", err)
	}
}

// cpuTicks is the user and system CPU time of pid, in clock ticks
// (/proc/<pid>/stat fields 14 and 15; 100 a second on Linux).
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return utime + stime
}
