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

package fakefe

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
)

func execAll(t *testing.T, s *Server, password string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/", password, s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestHeartbeatMarksNodesAliveByWhetherTheirPortAnswers(t *testing.T) {
	s := Start(t, Options{Heartbeat: true})
	s.SetFrontends(Frontend{Host: "fe-0", EditLogPort: 9010, Role: "LEADER", Alive: true},
		Frontend{Host: "fe-1", EditLogPort: 9010, Role: "FOLLOWER"})
	execAll(t, s, "", `ALTER SYSTEM ADD BACKEND "be-0:9050"`, `ALTER SYSTEM ADD BACKEND "be-1:9050"`)
	if b := s.Backends(); b[0].Alive || b[1].Alive {
		t.Fatalf("BEs no heartbeat reached are alive: %+v", b)
	}
	up := map[string]bool{"fe-1:9010": true, "be-1:9050": true}
	var asked []string
	s.Heartbeat("fe-0", func(host string, port int) bool {
		asked = append(asked, fmt.Sprintf("%s:%d", host, port))
		return up[fmt.Sprintf("%s:%d", host, port)]
	})
	if strings.Contains(strings.Join(asked, " "), "fe-0") {
		t.Errorf("the FE heartbeats itself: %v", asked)
	}
	fes, bes := s.Frontends(), s.Backends()
	if !fes[0].Alive || !fes[1].Alive || bes[0].Alive || !bes[1].Alive {
		t.Errorf("after a round with fe-1 and be-1 answering: frontends %+v, backends %+v", fes, bes)
	}
	up["be-1:9050"] = false
	s.Heartbeat("fe-0", func(host string, port int) bool { return up[fmt.Sprintf("%s:%d", host, port)] })
	if s.Backends()[1].Alive {
		t.Errorf("a BE whose heartbeat port stopped answering stays alive")
	}
}

// A node that answers a heartbeat reports its version (StarRocks takes the
// Version column from the heartbeat response), itself included: without it
// the module's rollout, which waits for each restarted pod to be alive on
// the version it ships, never passes the first pod on the local node.
func TestHeartbeatReportsTheNodeVersion(t *testing.T) {
	s := Start(t, Options{Heartbeat: true, NodeVersion: "4.1.7"})
	s.SetFrontends(Frontend{Host: "fe-0", EditLogPort: 9010, Role: "LEADER", Alive: true},
		Frontend{Host: "fe-1", EditLogPort: 9010, Role: "FOLLOWER"})
	execAll(t, s, "", `ALTER SYSTEM ADD BACKEND "be-0:9050"`, `ALTER SYSTEM ADD BACKEND "be-1:9050"`)
	up := map[string]bool{"fe-1:9010": true, "be-1:9050": true}
	s.Heartbeat("fe-0", func(host string, port int) bool { return up[fmt.Sprintf("%s:%d", host, port)] })
	fes, bes := s.Frontends(), s.Backends()
	if fes[0].Version != "4.1.7" || fes[1].Version != "4.1.7" || bes[1].Version != "4.1.7" {
		t.Errorf("answering nodes without the version: frontends %+v, backends %+v", fes, bes)
	}
	if bes[0].Version != "" {
		t.Errorf("a BE that never answered has version %q", bes[0].Version)
	}
}

func TestStateRestoresNodesAccountsAndSettings(t *testing.T) {
	s := Start(t, Options{})
	s.SetFrontends(Frontend{Host: "fe-0", EditLogPort: 9010, Role: "LEADER", Alive: true})
	var saved int
	execAll(t, s, "", `ALTER SYSTEM ADD BACKEND "be-0:9050"`, `SET PASSWORD = PASSWORD('root-pw')`)
	s.SetFEConfig("catalog_trash_expire_second", "3600", true)
	st := s.State()

	r := Start(t, Options{AfterStatement: func() { saved++ }})
	r.Restore(st)
	if pw := r.RootPassword(); pw != "root-pw" {
		t.Errorf("root password after Restore = %q", pw)
	}
	if b := r.Backends(); len(b) != 1 || b[0].Host != "be-0" {
		t.Errorf("backends after Restore: %+v", b)
	}
	if v := r.FEConfigValue("catalog_trash_expire_second"); v != "3600" {
		t.Errorf("FE config after Restore = %q", v)
	}
	execAll(t, r, "root-pw", `ALTER SYSTEM ADD BACKEND "be-1:9050"`)
	if b := r.Backends(); len(b) != 2 || b[1].ID == b[0].ID {
		t.Errorf("a BE added after Restore reuses an id: %+v", b)
	}
	if saved == 0 {
		t.Errorf("AfterStatement did not run")
	}
}

// An FE restarted on its meta names its next image past the ones already
// there, as journal ids only grow: an agent that waits for an image newer
// than its baseline sees one after every CREATE IMAGE.
func TestImageIDsGrowAcrossRestarts(t *testing.T) {
	meta := t.TempDir()
	first := Start(t, Options{})
	first.SetImageMetaDirs(meta)
	execAll(t, first, "", "ALTER SYSTEM CREATE IMAGE")
	if !first.WritePendingImage() || first.NewestImage() != 1000 {
		t.Fatalf("the first image is %d, want 1000", first.NewestImage())
	}
	first.Close()

	restarted := Start(t, Options{})
	restarted.SetImageMetaDirs(meta)
	execAll(t, restarted, "", "ALTER SYSTEM CREATE IMAGE")
	if !restarted.WritePendingImage() || restarted.NewestImage() != 2000 {
		t.Fatalf("after a restart the next image is %d, want 2000", restarted.NewestImage())
	}
	if _, err := os.Stat(filepath.Join(meta, "image", "v2", "image.2000")); err != nil {
		t.Fatal(err)
	}
}
