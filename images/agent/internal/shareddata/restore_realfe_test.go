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

package shareddata_test

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/accounts"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/shareddata"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// A shared-data instance restored from a cluster snapshot, on real FEs: the
// source's FE writes an automated cluster snapshot to versitygw and stops
// (the source is deleted); a new instance's first FE (other host names,
// empty meta) starts the way the module starts it (fe-start.sh with the
// restore env and keys of the FE StatefulSet), comes up with the source's
// databases and storage volume and without the source's nodes, and the
// agent's shared-data steps converge on it: no second storage volume, its
// compute nodes added, the automated snapshot on, and a second pass sends
// nothing. A restart of the restored FE never restores again.
func TestRestoreAClusterSnapshotIntoANewInstance(t *testing.T) {
	t.Parallel()
	const sourceUID = "0b5e7c1d-3333-4333-8444-955566667777"
	const sourceAdminPassword = "ADMINPASSWORDOFTHESOURCE1"
	src := realfe.Start(t, realfe.Options{SharedData: true, Name: "olap"})
	dst := realfe.Start(t, realfe.Options{SharedData: true, Name: "olap2"})
	// Each instance's FEs reach the host only on their own bridge: the
	// server listens on every host address and each FE names the one it
	// reaches (the same bucket).
	s3 := s3server.StartWith(t, s3server.Options{Host: net.IPv4zero, PlainHTTP: true})
	s3.CreateBucket(t, bucket)
	_, port, _ := net.SplitHostPort(s3.Endpoint)
	volumeOn := func(c *realfe.Cluster) shareddata.Volume {
		return shareddata.Volume{
			Name:     agentconfig.StorageVolumeName(sourceUID),
			Location: agentconfig.StorageVolumeLocation(bucket, "starrocks", "team-a", "olap", sourceUID),
			Endpoint: "http://" + net.JoinHostPort(c.HostIP.String(), port), Region: s3server.Region, PathStyle: true,
			Keys: backup.Keys{AccessKey: s3.AccessKey, SecretKey: s3.SecretKey},
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// The source: a volume, a database with a view, a compute node
	// registered, snapshots every minute.
	fe := src.StartLeader(t)
	db := src.DB(t, fe, "root", "", false)
	v := volumeOn(src)
	exec := func(db *sql.DB, stmts ...string) {
		t.Helper()
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// The source's agent gave root its password, as on every instance
	// (before the snapshot, which holds the accounts as they were then).
	exec(db, "SET PASSWORD = PASSWORD('"+src.RootPassword+"')")
	db = src.DB(t, fe, "root", src.RootPassword, false)
	// The first snapshot one interval after the FE's start (realfe_test.go).
	exec(db, `ADMIN SET FRONTEND CONFIG ("automated_cluster_snapshot_interval_seconds" = "10")`)
	if _, err := shareddata.EnsureVolume(ctx, db, v, ""); err != nil {
		t.Fatalf("EnsureVolume: %v\nFE:\n%s", err, fe.Tail())
	}
	// And the team's admin its password (the source's credentials Secret).
	exec(db, "CREATE USER "+agentconfig.AdminUser+" IDENTIFIED BY '"+sourceAdminPassword+"' DEFAULT ROLE "+strings.Join(accounts.AdminRoles, ", "))
	exec(db, "CREATE DATABASE shop", "CREATE VIEW shop.answers AS SELECT 42 AS answer",
		`ALTER SYSTEM ADD COMPUTE NODE "d8ms-sr-olap-cn-0.d8ms-sr-olap-cn-headless.team-a.svc.cluster.local:9050"`)
	st, _ := shareddata.EnsureSnapshots(ctx, db, v.Name, true, false)
	for deadline := time.Now().Add(4 * time.Minute); st.NewestSnapshotTime == ""; time.Sleep(2 * time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("no finished snapshot after 4 minutes: %+v\nFE:\n%s", st, fe.Tail())
		}
		st, _ = shareddata.EnsureSnapshots(ctx, db, v.Name, true, false)
	}
	// The source is deleted: its FE stops, its files stay.
	if err := src.StopFE(fe); err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for _, k := range s3.Keys(t, bucket, strings.TrimPrefix(v.Location, "s3://"+bucket+"/")+"/") {
		if i := strings.Index(k, "/meta/image/automated_cluster_snapshot_"); i >= 0 {
			snaps = append(snaps, k)
		}
	}
	if len(snaps) == 0 {
		t.Fatal("no snapshot in the bucket")
	}

	// The new instance: its FE's env names the source's volume at the
	// endpoint it reaches.
	rv := volumeOn(dst)
	dst.ClusterSnapshot = &realfe.ClusterSnapshotRestore{
		Volume:    agentconfig.StorageVolume{Name: rv.Name, Location: rv.Location, Endpoint: rv.Endpoint, Region: rv.Region, PathStyle: rv.PathStyle, EnableSSL: rv.EnableSSL},
		AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
	}
	rfe := dst.StartLeader(t)
	// The source's accounts: root has the source's password.
	rdb := dst.DB(t, rfe, "root", src.RootPassword, false)
	q := &recorder{db: rdb}

	t.Run("the FE restored the snapshot and dropped the source's nodes", func(t *testing.T) {
		if !strings.Contains(rfe.Output(), "Downloaded cluster snapshot") {
			t.Errorf("no download in the FE's log:\n%s", rfe.Tail())
		}
		if out := rfe.Output(); strings.Contains(out, s3.SecretKey) || strings.Contains(out, s3.AccessKey) {
			t.Error("a key in the FE's output")
		}
		var answer int
		if err := rdb.QueryRowContext(ctx, "SELECT answer FROM shop.answers").Scan(&answer); err != nil || answer != 42 {
			t.Fatalf("the source's view: %d, %v", answer, err)
		}
		// SHOW FRONTENDS names an FE's host in column IP (its FQDN with
		// HOST_TYPE=FQDN).
		hosts := queryColumn(t, ctx, rdb, "SHOW FRONTENDS", "IP")
		if len(hosts) != 1 || hosts[0] != rfe.Host {
			t.Errorf("frontends %v, want only %s", hosts, rfe.Host)
		}
		if cns, err := shareddata.ShowComputeNodes(ctx, rdb); err != nil || len(cns) != 0 {
			t.Errorf("compute nodes %+v, %v: want the source's dropped", cns, err)
		}
	})

	var applied string
	t.Run("the agent adopts the source's storage volume: no second one", func(t *testing.T) {
		got, err := shareddata.EnsureVolume(ctx, q, rv, "")
		if err != nil || got.Created || got.MadeDefault {
			t.Fatalf("EnsureVolume = %+v, %v\nFE:\n%s", got, err, rfe.Tail())
		}
		// Not knowing what it gave the volume (a new agent), it sends
		// the properties once: the keys of the team's Secret.
		sent := verbs(q.take())
		if len(sent) > 1 || (len(sent) == 1 && sent[0] != "ALTER STORAGE VOLUME `"+rv.Name+"`") {
			t.Fatalf("sent %v, want at most one ALTER STORAGE VOLUME", sent)
		}
		t.Logf("adopted the restored volume with %v", sent)
		applied = got.Fingerprint
		d, found, err := shareddata.Describe(ctx, rdb, rv.Name)
		if err != nil || !found || !d.IsDefault || d.Params["aws.s3.endpoint"] != rv.Endpoint {
			t.Fatalf("Describe = %+v, %t, %v: want the default volume at the new endpoint", d, found, err)
		}
		names := queryColumn(t, ctx, rdb, "SHOW STORAGE VOLUMES", "Storage Volume")
		if len(names) != 1 {
			t.Errorf("storage volumes %v, want the source's alone", names)
		}
	})

	cns := agentconfig.ComputeNodes{StatefulSet: "d8ms-sr-olap2-cn", HostFormat: "d8ms-sr-olap2-cn-%d.d8ms-sr-olap2-cn-headless.team-a.svc.cluster.local",
		HeartbeatPort: 9050, Min: 1, Max: 1}
	t.Run("the agent adds the new instance's compute node and turns the snapshots on", func(t *testing.T) {
		listed, err := shareddata.ShowComputeNodes(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		plan := shareddata.DecideComputeNodes(shareddata.DesiredHosts(cns, 1), cns.HeartbeatPort, listed)
		if done, err := shareddata.ApplyComputeNodes(ctx, rdb, plan); err != nil || len(done) != 1 {
			t.Fatalf("ApplyComputeNodes(%+v) = %v, %v", plan, done, err)
		}
		st, _ := shareddata.EnsureSnapshots(ctx, q, rv.Name, true, false)
		if !st.Enabled || st.Reason != "" {
			t.Fatalf("EnsureSnapshots = %+v\nFE:\n%s", st, rfe.Tail())
		}
		q.take()
	})

	t.Run("a second pass sends no statement", func(t *testing.T) {
		got, err := shareddata.EnsureVolume(ctx, q, rv, applied)
		if err != nil || got.Created || got.Altered || got.MadeDefault {
			t.Fatalf("EnsureVolume = %+v, %v", got, err)
		}
		listed, err := shareddata.ShowComputeNodes(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if plan := shareddata.DecideComputeNodes(shareddata.DesiredHosts(cns, 1), cns.HeartbeatPort, listed); !plan.Empty() {
			t.Errorf("plan %+v, want nothing", plan)
		}
		if st, sent := shareddata.EnsureSnapshots(ctx, q, rv.Name, true, false); sent || !st.Enabled {
			t.Errorf("EnsureSnapshots = %+v, sent %t", st, sent)
		}
		if sent := q.take(); len(sent) != 0 {
			t.Fatalf("sent %v", verbs(sent))
		}
	})

	// The agent's logins to an FE of the new instance, and its Secrets.
	loginTo := func(fe *realfe.FE) accounts.Login {
		return func(user, password string) (*conn.Client, error) {
			c := conn.New(conn.Options{DialFunc: dst.Dial})
			return c, c.SetTarget(conn.Target{Addr: net.JoinHostPort(fe.Host, strconv.Itoa(realfe.QueryPort)), ServerName: fe.Host,
				Roots: dst.RootCAs(), RootsID: "1", User: user, Password: password})
		}
	}
	secrets := accounts.Secrets{AgentUser: agentconfig.AgentUser, AgentPassword: "AGENTPASSWORDOFTHENEWONE2",
		RootPassword: dst.RootPassword, AdminUser: agentconfig.AdminUser, AdminPassword: "ADMINPASSWORDOFTHENEWONE3"}

	t.Run("the agent takes root over with the source's password and makes its own account", func(t *testing.T) {
		login, s := loginTo(rfe), secrets
		agent, err := login(s.AgentUser, s.AgentPassword)
		if err != nil {
			t.Fatal(err)
		}
		defer agent.Close()
		if _, err := accounts.Ensure(ctx, agent, login, s); err == nil {
			t.Fatal("Ensure without the source's root password succeeded: the test proves nothing")
		} else if st, _ := accounts.Status(err); st.Reason != accounts.ReasonRootPasswordRefused {
			t.Fatalf("without the source's password: %+v, want %s", st, accounts.ReasonRootPasswordRefused)
		}
		s.SourceRootPassword = src.RootPassword
		ch, err := accounts.Ensure(ctx, agent, login, s)
		if err != nil || !ch.RootPasswordSet || !ch.AdminPasswordSet || !ch.AgentRepaired {
			t.Fatalf("Ensure = %+v, %v\nFE:\n%s", ch, err, rfe.Tail())
		}
		// The team reads the admin's password from the new instance's
		// credentials Secret: that one works, the source's no more.
		if err := dst.DB(t, rfe, s.AdminUser, s.AdminPassword, false).PingContext(ctx); err != nil {
			t.Errorf("the admin with the new instance's password: %v", err)
		}
		if err := dst.DB(t, rfe, s.AdminUser, sourceAdminPassword, false).PingContext(ctx); err == nil {
			t.Error("the admin still logs in with the source's password")
		}
		for _, p := range []string{src.RootPassword, dst.RootPassword, s.AgentPassword, s.AdminPassword, sourceAdminPassword} {
			if strings.Contains(rfe.Output(), p) {
				t.Error("a password in the FE's output")
			}
		}
		if err := dst.DB(t, rfe, "root", dst.RootPassword, false).PingContext(ctx); err != nil {
			t.Fatalf("root with the new instance's password: %v", err)
		}
		if ch, err := accounts.Ensure(ctx, agent, login, s); err != nil || ch != (accounts.Changes{}) {
			t.Fatalf("second Ensure = %+v, %v: want nothing to do", ch, err)
		}
	})

	var again *realfe.FE
	t.Run("a restart with meta does not restore again", func(t *testing.T) {
		exec(rdb, "CREATE DATABASE after_restore")
		if err := dst.StopFE(rfe); err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(rfe.Home, "meta", agentconfig.RestoreMarkerName)
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("the restore left no marker in meta: %v", err)
		}
		// The agent of the instance, which has bootstrapped since (its
		// accounts were made above): no bootstrap file, the restored one.
		_ = os.Remove(filepath.Join(rfe.RunDir, agentconfig.BootstrapFileName))
		if err := os.WriteFile(filepath.Join(rfe.RunDir, agentconfig.RestoredFileName), []byte("restored\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		again = dst.StartFE(t, 0)
		again.WaitReady(t, realfe.StartTimeout)
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("the restore marker is still in meta: %v", err)
		}
		if strings.Contains(again.Output(), "restore from a cluster snapshot") {
			t.Errorf("the restart restored again:\n%s", again.Tail())
		}
		if _, err := os.Stat(filepath.Join(again.Home, "conf", "cluster_snapshot.yaml")); !os.IsNotExist(err) {
			t.Errorf("cluster_snapshot.yaml with the keys left in conf/: %v", err)
		}
		adb := dst.DB(t, again, "root", dst.RootPassword, false)
		dbs := queryColumn(t, ctx, adb, "SHOW DATABASES", "Database")
		if !strings.Contains(" "+strings.Join(dbs, " ")+" ", " after_restore ") || !strings.Contains(" "+strings.Join(dbs, " ")+" ", " shop ") {
			t.Errorf("databases %v after the restart, want shop and after_restore", dbs)
		}
	})

	parent := t
	var restoredAgain *realfe.FE
	t.Run("a restore whose download did not finish is done again", func(t *testing.T) {
		if again == nil {
			t.Skip("the restart above failed")
		}
		if err := dst.StopFE(again); err != nil {
			t.Fatal(err)
		}
		// What StarRocks leaves when the FE stops during the download: it
		// deleted image/ and bdb/, then copied VERSION (and StarMgr's
		// folder) but not the image. The wrapper's marker is there (it is
		// written before the restore starts), and the instance has not
		// bootstrapped: the agent writes the bootstrap file, not the
		// restored one.
		meta := filepath.Join(again.Home, "meta")
		if err := os.WriteFile(filepath.Join(meta, agentconfig.RestoreMarkerName), []byte("restore started\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(filepath.Join(again.RunDir, agentconfig.RestoredFileName))
		for _, d := range []string{filepath.Join(meta, "bdb"), filepath.Join(meta, "image", "v2")} {
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
		}
		old, _ := filepath.Glob(filepath.Join(meta, "image", "image.*"))
		for _, f := range old {
			_ = os.Remove(f)
		}
		// The next subtest goes on with this FE.
		fe := dst.StartFE(parent, 0)
		fe.Bootstrap(t)
		fe.WaitReady(t, realfe.StartTimeout)
		restoredAgain = fe
		if !strings.Contains(fe.Output(), "restoring again") || !strings.Contains(fe.Output(), "restore from a cluster snapshot") {
			t.Errorf("the FE did not restore again:\n%s", fe.Tail())
		}
		// The snapshot's state again (its accounts, without what came after).
		db := dst.DB(t, fe, "root", src.RootPassword, false)
		dbs := " " + strings.Join(queryColumn(t, ctx, db, "SHOW DATABASES", "Database"), " ") + " "
		if !strings.Contains(dbs, " shop ") || strings.Contains(dbs, " after_restore ") {
			t.Errorf("databases %s, want the snapshot's: shop, no after_restore", dbs)
		}
	})

	// The source's root password is nowhere: the agent asks for the
	// restore with authentication off (enable_auth_check = false), gives
	// root its password, and the FE starts from its meta with
	// authentication on (fe-start.sh; images/agent/internal/agent
	// rootreset.go plays the same steps on the FE-dialect server).
	t.Run("without the source's root password root is reset through a restore with authentication off", func(t *testing.T) {
		if restoredAgain == nil {
			t.Skip("the restore above failed")
		}
		fe, login, s := restoredAgain, loginTo(restoredAgain), secrets
		acceptsAny := func() bool {
			off, err := accounts.AcceptsAnyPassword(ctx, login)
			return err == nil && off
		}
		if acceptsAny() {
			t.Fatal("the FE lets any password in before the reset: the test proves nothing")
		}
		if err := os.WriteFile(filepath.Join(fe.RunDir, agentconfig.RootResetFileName), []byte("reset\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(realfe.StartTimeout); !acceptsAny(); time.Sleep(time.Second) {
			if time.Now().After(deadline) || fe.Exited() {
				t.Fatalf("the FE does not let any password in:\n%s", fe.Tail())
			}
		}
		root, err := login("root", "NOTROOTSPASSWORD1234")
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		// StarRocks finishes the restore after the query port opens: the
		// source's FE goes then.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
			var hosts []string
			_ = root.Do(ctx, "show frontends", func(ctx context.Context, db *sql.DB) error {
				hosts = queryColumn(t, ctx, db, "SHOW FRONTENDS", "IP")
				return nil
			})
			if len(hosts) == 1 && hosts[0] == fe.Host {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("frontends %v after a minute, want only %s", hosts, fe.Host)
			}
		}
		if err := accounts.TakeRestoredRootOver(ctx, root, s); err != nil {
			t.Fatalf("TakeRestoredRootOver: %v\n%s", err, fe.Tail())
		}
		if err := os.WriteFile(filepath.Join(fe.RunDir, agentconfig.RootResetDoneFileName), []byte("reset\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rootWorks := func() bool {
			c, err := login("root", s.RootPassword)
			if err != nil {
				return false
			}
			defer c.Close()
			return c.Ping(ctx) == nil
		}
		for deadline := time.Now().Add(realfe.StartTimeout); acceptsAny() || !rootWorks(); time.Sleep(time.Second) {
			if time.Now().After(deadline) || fe.Exited() {
				t.Fatalf("the FE does not run with authentication on and root's new password:\n%s", fe.Tail())
			}
		}
		for _, f := range []string{filepath.Join(fe.Home, "meta", agentconfig.RestoreMarkerName),
			filepath.Join(fe.RunDir, agentconfig.RootResetFileName), filepath.Join(fe.RunDir, agentconfig.RootResetDoneFileName)} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("%s is still there: %v", f, err)
			}
		}
		agent, err := login(s.AgentUser, s.AgentPassword)
		if err != nil {
			t.Fatal(err)
		}
		defer agent.Close()
		if ch, err := accounts.Ensure(ctx, agent, login, s); err != nil || !ch.AgentRepaired {
			t.Fatalf("Ensure = %+v, %v\nFE:\n%s", ch, err, fe.Tail())
		}
		if err := dst.DB(t, fe, s.AdminUser, s.AdminPassword, false).PingContext(ctx); err != nil {
			t.Errorf("the admin with the new instance's password: %v", err)
		}
		if err := dst.DB(t, fe, "root", src.RootPassword, false).PingContext(ctx); err == nil {
			t.Error("root still logs in with the source's password")
		}
		out := fe.Output()
		if !strings.Contains(out, "restoring with authentication off") || !strings.Contains(out, "starting from the meta with authentication on") {
			t.Errorf("the wrapper did not say what it did:\n%s", fe.Tail())
		}
		for _, p := range []string{src.RootPassword, dst.RootPassword, s.AgentPassword, s.AdminPassword} {
			if strings.Contains(out, p) {
				t.Error("a password in the FE's output")
			}
		}
	})

	t.Run("without a snapshot at the location the first FE does not start", func(t *testing.T) {
		bad := realfe.Start(t, realfe.Options{SharedData: true, Name: "olap3"})
		w := volumeOn(bad)
		w.Location = agentconfig.StorageVolumeLocation(bucket, "starrocks", "team-a", "olap", "99999999-3333-4333-8444-955566667777")
		bad.ClusterSnapshot = &realfe.ClusterSnapshotRestore{
			Volume:    agentconfig.StorageVolume{Name: w.Name, Location: w.Location, Endpoint: w.Endpoint, Region: w.Region, PathStyle: w.PathStyle},
			AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
		}
		bfe := bad.StartFE(t, 0)
		bfe.Bootstrap(t)
		for deadline := time.Now().Add(realfe.StartTimeout); !bfe.Exited(); time.Sleep(time.Second) {
			if time.Now().After(deadline) {
				t.Fatalf("the FE still runs without a snapshot:\n%s", bfe.Tail())
			}
		}
		if !strings.Contains(bfe.Output(), "No cluster snapshot found in path") {
			t.Errorf("the FE's output does not say why:\n%s", bfe.Tail())
		}
	})
}

// queryColumn returns one column of every row of a statement.
func queryColumn(t *testing.T, ctx context.Context, q shareddata.Querier, stmt, column string) []string {
	t.Helper()
	rows, err := q.QueryContext(ctx, stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	idx := -1
	for i, c := range cols {
		if c == column {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("%s has no column %s: %v", stmt, column, cols)
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals[idx].String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
