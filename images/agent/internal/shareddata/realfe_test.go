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
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/shareddata"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const bucket = "team-data"

// recorder is a Querier that notes every statement it sends (never
// logged: they hold keys).
type recorder struct {
	db *sql.DB
	mu sync.Mutex
	// sent are the ExecContext statements.
	sent []string
}

func (r *recorder) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return r.db.QueryContext(ctx, q, args...)
}

func (r *recorder) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	r.mu.Lock()
	r.sent = append(r.sent, q)
	r.mu.Unlock()
	return r.db.ExecContext(ctx, q, args...)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// verbs are the statements without their arguments, for messages that
// must not carry keys.
func verbs(stmts []string) []string {
	out := make([]string, len(stmts))
	for i, s := range stmts {
		f := strings.Fields(s)
		out[i] = strings.Join(f[:min(4, len(f))], " ")
	}
	return out
}

// A real StarRocks FE in shared-data mode (dev/realfe with fe.conf
// run_mode = shared_data) against versitygw over TLS from a private CA,
// which the FE trusts the way the module gives it the backup storage's CA
// (fe-start.sh builds its trust store from the trusted-cas volume): the
// storage volume, the compute nodes and the automated cluster snapshot as
// StarRocks itself answers the agent's statements. One FE for the
// package: an FE's start costs more than everything it is asked here.
func TestSharedDataOnARealFrontend(t *testing.T) {
	t.Parallel()
	c := realfe.Start(t, realfe.Options{SharedData: true, Backup: &v1alpha1.BackupStorage{
		// Only for the trusted-cas volume: the CA of the S3 server below.
		Endpoint: "https://s3.realfe.invalid", Bucket: bucket, PathStyle: true,
		CASecretRef:          &v1alpha1.BackupSecretKeyRef{Name: "team-s3-ca"},
		CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "team-s3-keys"},
	}})
	s3 := s3server.StartWith(t, s3server.Options{Host: c.HostIP})
	s3.CreateBucket(t, bucket)
	c.BackupCA = s3.CA.CertPEM
	fe := c.StartLeader(t)
	db := c.DB(t, fe, "root", "", false)
	q := &recorder{db: db}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// The snapshot scheduler waits one interval after the FE's start
	// before its first job (fe-core lake/snapshot/ClusterSnapshotJobScheduler
	// .runAfterCatalogReady; common/Config automated_cluster_snapshot_interval_seconds,
	// mutable, 600 by default, read on every run of the scheduler, which
	// runs every 10 s): 10 s here, set first thing.
	if _, err := db.ExecContext(ctx, `ADMIN SET FRONTEND CONFIG ("automated_cluster_snapshot_interval_seconds" = "10")`); err != nil {
		t.Fatal(err)
	}

	name := agentconfig.StorageVolumeName("0b5e7c1d-2222-4333-8444-955566667777")
	v := shareddata.Volume{
		Name:     name,
		Location: agentconfig.StorageVolumeLocation(bucket, "starrocks", "team-a", "realfe", "0b5e7c1d-2222-4333-8444-955566667777"),
		Endpoint: "https://" + s3.Endpoint, Region: s3server.Region, PathStyle: true, EnableSSL: true,
		Keys: backup.Keys{AccessKey: s3.AccessKey, SecretKey: s3.SecretKey},
	}
	var applied string

	t.Run("creates the storage volume and makes it the default", func(t *testing.T) {
		got, err := shareddata.EnsureVolume(ctx, q, v, "")
		if err != nil || !got.Created || !got.MadeDefault {
			t.Fatalf("EnsureVolume = %+v, %v\nFE:\n%s", got, err, fe.Tail())
		}
		applied = got.Fingerprint
		if sent := verbs(q.take()); len(sent) != 2 || sent[0] != "CREATE STORAGE VOLUME IF" || sent[1] != "SET `"+name+"` AS DEFAULT" {
			t.Fatalf("sent %v, want CREATE STORAGE VOLUME, SET ... AS DEFAULT", sent)
		}
		d, found, err := shareddata.Describe(ctx, db, name)
		if err != nil || !found || !d.IsDefault || !d.Enabled {
			t.Fatalf("Describe = %+v, %t, %v", d, found, err)
		}
		t.Logf("DESC STORAGE VOLUME: Location %q, Params %v", d.Location, d.Params)
		for _, k := range []string{"aws.s3.access_key", "aws.s3.secret_key"} {
			if d.Params[k] == "" || d.Params[k] == v.Keys.AccessKey || d.Params[k] == v.Keys.SecretKey {
				t.Errorf("DESC STORAGE VOLUME shows %s as %q, want it masked", k, d.Params[k])
			}
		}
	})

	t.Run("a second pass sends no statement", func(t *testing.T) {
		got, err := shareddata.EnsureVolume(ctx, q, v, applied)
		if err != nil || got.Created || got.Altered || got.MadeDefault {
			t.Fatalf("EnsureVolume = %+v, %v", got, err)
		}
		if sent := q.take(); len(sent) != 0 {
			t.Fatalf("sent %v", verbs(sent))
		}
	})

	t.Run("after an agent restart the properties are sent once more", func(t *testing.T) {
		got, err := shareddata.EnsureVolume(ctx, q, v, "")
		if err != nil || !got.Altered || got.Fingerprint != applied {
			t.Fatalf("EnsureVolume = %+v, %v", got, err)
		}
		if sent := verbs(q.take()); len(sent) != 1 || sent[0] != "ALTER STORAGE VOLUME `"+name+"`" {
			t.Fatalf("sent %v, want one ALTER STORAGE VOLUME", sent)
		}
	})

	t.Run("new keys are ALTER STORAGE VOLUME, never in an error", func(t *testing.T) {
		rotated := v
		rotated.Keys = backup.Keys{AccessKey: "AKROTATED0000001", SecretKey: "rotated-secret-0123456789abcdef"}
		got, err := shareddata.EnsureVolume(ctx, q, rotated, applied)
		sent := q.take()
		if len(sent) != 1 || !strings.HasPrefix(sent[0], "ALTER STORAGE VOLUME `"+name+"` SET (") || !strings.Contains(sent[0], rotated.Keys.SecretKey) {
			t.Fatalf("sent %v, want one ALTER STORAGE VOLUME with the new keys", verbs(sent))
		}
		if err != nil {
			if strings.Contains(err.Error(), rotated.Keys.SecretKey) || strings.Contains(err.Error(), rotated.Keys.AccessKey) {
				t.Fatal("a key in the error")
			}
			t.Fatalf("EnsureVolume: %v", err)
		}
		if !got.Altered || got.Fingerprint == applied {
			t.Fatalf("EnsureVolume = %+v", got)
		}
		// And back to the keys versitygw knows.
		got, err = shareddata.EnsureVolume(ctx, q, v, got.Fingerprint)
		if err != nil || !got.Altered {
			t.Fatalf("EnsureVolume back = %+v, %v", got, err)
		}
		applied = got.Fingerprint
		q.take()
	})

	t.Run("a changed location is refused and nothing is sent", func(t *testing.T) {
		moved := v
		moved.Location += "/moved"
		_, err := shareddata.EnsureVolume(ctx, q, moved, applied)
		var le *shareddata.LocationError
		if !errors.As(err, &le) {
			t.Fatalf("EnsureVolume: %v, want a LocationError", err)
		}
		if sent := q.take(); len(sent) != 0 {
			t.Fatalf("sent %v", verbs(sent))
		}
	})

	// StarRocks reaches no bucket on CREATE STORAGE VOLUME: a volume with
	// keys the bucket refuses, in a bucket that does not exist, is created
	// (and fails only once something writes to it). The agent checks first.
	otherUID := "1c6f8d2e-3333-4444-8555-a66677778888"
	refused := v
	refused.Name = agentconfig.StorageVolumeName(otherUID)
	refused.Location = agentconfig.StorageVolumeLocation("no-such-bucket", "starrocks", "team-a", "other", otherUID)
	refused.Keys = backup.Keys{AccessKey: "AKUNKNOWN0000001", SecretKey: "wrong-secret-0123456789abcdefghij"}
	refused.CAPEM = s3.CA.CertPEM
	t.Run("StarRocks creates a storage volume the bucket refuses", func(t *testing.T) {
		stmt := fmt.Sprintf("CREATE STORAGE VOLUME `%s` TYPE = S3 LOCATIONS = (\"%s\") PROPERTIES (\"aws.s3.endpoint\" = \"%s\", \"aws.s3.region\" = \"%s\", "+
			"\"aws.s3.enable_path_style_access\" = \"true\", \"aws.s3.use_aws_sdk_default_behavior\" = \"false\", \"aws.s3.use_instance_profile\" = \"false\", "+
			"\"aws.s3.access_key\" = \"%s\", \"aws.s3.secret_key\" = \"%s\")",
			refused.Name, refused.Location, refused.Endpoint, s3server.Region, refused.Keys.AccessKey, refused.Keys.SecretKey)
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("StarRocks refused the volume itself (the check would then be StarRocks'): %v", err)
		}
		if _, found, err := shareddata.Describe(ctx, db, refused.Name); err != nil || !found {
			t.Fatalf("Describe = %t, %v", found, err)
		}
		if _, err := db.ExecContext(ctx, "DROP STORAGE VOLUME `"+refused.Name+"`"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the agent's bucket check sends nothing to StarRocks for a bucket that refuses the keys", func(t *testing.T) {
		checked := refused
		checked.Check = true
		got, err := shareddata.EnsureVolume(ctx, q, checked, "")
		var be *shareddata.BucketError
		if !errors.As(err, &be) || got.Created {
			t.Fatalf("EnsureVolume = %+v, %v, want a BucketError", got, err)
		}
		if strings.Contains(err.Error(), checked.Keys.SecretKey) || strings.Contains(err.Error(), checked.Keys.AccessKey) {
			t.Fatal("a key in the error")
		}
		if sent := q.take(); len(sent) != 0 {
			t.Fatalf("sent %v", verbs(sent))
		}
		if _, found, err := shareddata.Describe(ctx, db, checked.Name); err != nil || found {
			t.Fatalf("Describe = %t, %v: the volume was created", found, err)
		}
		// The instance's own volume with its keys and CA passes the check.
		ok := v
		ok.Check, ok.CAPEM = true, s3.CA.CertPEM
		if got, err := shareddata.EnsureVolume(ctx, q, ok, ""); err != nil || !got.Altered {
			t.Fatalf("EnsureVolume of the instance's volume, checked = %+v, %v", got, err)
		}
		q.take()
	})

	cns := agentconfig.ComputeNodes{StatefulSet: "d8ms-sr-realfe-cn", HostFormat: "d8ms-sr-realfe-cn-%d.d8ms-sr-realfe-cn.team-a.svc.cluster.local",
		HeartbeatPort: 9050, Min: 1, Max: 3}
	t.Run("compute nodes are added, listed not alive without a process, and dropped beyond the count", func(t *testing.T) {
		want := shareddata.DesiredHosts(cns, shareddata.DesiredCount(5, cns))
		listed, err := shareddata.ShowComputeNodes(ctx, db)
		if err != nil || len(listed) != 0 {
			t.Fatalf("ShowComputeNodes = %v, %v", listed, err)
		}
		plan := shareddata.DecideComputeNodes(want, cns.HeartbeatPort, listed)
		if len(plan.Add) != 3 {
			t.Fatalf("plan %+v, want 3 CNs added (5 replicas bounded by max 3)", plan)
		}
		if done, err := shareddata.ApplyComputeNodes(ctx, db, plan); err != nil || len(done) != 3 {
			t.Fatalf("ApplyComputeNodes = %v, %v\nFE:\n%s", done, err, fe.Tail())
		}
		listed, err = shareddata.ShowComputeNodes(ctx, db)
		if err != nil || len(listed) != 3 {
			t.Fatalf("ShowComputeNodes = %v, %v", listed, err)
		}
		for _, cn := range listed {
			if cn.Alive {
				t.Fatalf("%s is alive without a CN process", cn.Host)
			}
			// What tells a graceful exit (SHUTDOWN) from a process gone.
			if cn.Status != "CONNECTING" && cn.Status != "DISCONNECTED" {
				t.Fatalf("%s: StatusCode %q, want CONNECTING or DISCONNECTED without a CN process", cn.Host, cn.Status)
			}
		}
		if plan := shareddata.DecideComputeNodes(want, cns.HeartbeatPort, listed); !plan.Empty() {
			t.Fatalf("second plan %+v, want nothing", plan)
		}
		// Scaled in to one: the two CNs beyond it answer no heartbeat
		// (their processes are gone) and are dropped.
		want = shareddata.DesiredHosts(cns, shareddata.DesiredCount(1, cns))
		plan = shareddata.DecideComputeNodes(want, cns.HeartbeatPort, listed)
		if len(plan.Drop) != 2 || len(plan.Add) != 0 {
			t.Fatalf("plan %+v, want 2 dropped", plan)
		}
		if done, err := shareddata.ApplyComputeNodes(ctx, db, plan); err != nil || len(done) != 2 {
			t.Fatalf("ApplyComputeNodes = %v, %v", done, err)
		}
		// Dropped meanwhile by someone else: the DROP's "does not exist"
		// is what it was for.
		if done, err := shareddata.ApplyComputeNodes(ctx, db, plan); err != nil || len(done) != 0 {
			t.Fatalf("ApplyComputeNodes again = %v, %v", done, err)
		}
		listed, err = shareddata.ShowComputeNodes(ctx, db)
		if err != nil || len(listed) != 1 || listed[0].Host != want[0] {
			t.Fatalf("ShowComputeNodes = %+v, %v", listed, err)
		}
	})

	t.Run("the automated cluster snapshot is turned on once and writes to the bucket without a CN", func(t *testing.T) {
		st, sent := shareddata.EnsureSnapshots(ctx, q, name, true, false)
		if !sent || !st.Enabled || st.Reason != "" {
			t.Fatalf("EnsureSnapshots = %+v, sent %t\nFE:\n%s", st, sent, fe.Tail())
		}
		q.take()
		st, sent = shareddata.EnsureSnapshots(ctx, q, name, true, false)
		if sent || !st.Enabled {
			t.Fatalf("second EnsureSnapshots = %+v, sent %t", st, sent)
		}
		if got := q.take(); len(got) != 0 {
			t.Fatalf("sent %v", verbs(got))
		}
		// The scheduler starts the first job at once (fe-core
		// ClusterSnapshotMgr.canScheduleNextJob with no job before).
		for deadline := time.Now().Add(3 * time.Minute); st.NewestSnapshotTime == ""; time.Sleep(2 * time.Second) {
			if time.Now().After(deadline) {
				t.Fatalf("no snapshot after 3 minutes: %+v\nFE:\n%s", st, fe.Tail())
			}
			st, _ = shareddata.EnsureSnapshots(ctx, q, name, true, false)
		}
		prefix := strings.TrimPrefix(v.Location, "s3://"+bucket+"/") + "/"
		var snap []string
		for _, k := range s3.Keys(t, bucket, prefix) {
			if strings.Contains(k, "/meta/image/automated_cluster_snapshot_") {
				snap = append(snap, k)
			}
		}
		if len(snap) == 0 {
			t.Fatalf("newest snapshot %s, but nothing under %smeta/image/automated_cluster_snapshot_*", st.NewestSnapshotTime, prefix)
		}
		t.Logf("snapshot of %s: %d objects, e.g. %s", st.NewestSnapshotTime, len(snap), snap[0])
	})

	t.Run("information_schema.cluster_snapshot_jobs needs a live CN", func(t *testing.T) {
		_, err := shareddata.LastJob(ctx, db)
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			t.Fatalf("LastJob: %v, want StarRocks' refusal without a live CN", err)
		}
		t.Logf("without a live CN: %v", err)
	})
}
