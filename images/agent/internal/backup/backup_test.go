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

package backup_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// uidOf is a fixed UID per set name.
func uidOf(set string) string {
	h := sha256.Sum256([]byte(set))
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// label is the snapshot label of db in the set, as the hooks name it.
func label(set, db string) string {
	return agentconfig.BackupLabel(agentconfig.BackupLabelPrefix(uidOf(set)), db)
}

const (
	rootPass = "root-pass-1"
	bucket   = "team-bucket"
	prefix   = "backups/team-ns/sr-a1b2c3"
)

type env struct {
	t  *testing.T
	s3 *s3server.Server
}

type feConn struct {
	fe *fakefe.Server
	db *sql.DB
}

func newEnv(t *testing.T) *env {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, bucket)
	return &env{t: t, s3: s3}
}

func (e *env) fe() *feConn {
	e.t.Helper()
	s := fakefe.Start(e.t, fakefe.Options{RootPassword: rootPass})
	s.SetS3RootCAs(e.s3.RootCAs)
	s.SetBackupStep(2 * time.Millisecond)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", s.Addr()
	cfg.Timeout = 5 * time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	e.t.Cleanup(func() { db.Close() })
	return &feConn{fe: s, db: db}
}

func (f *feConn) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := f.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func (e *env) repo(keys backup.Keys) backup.Repository {
	return backup.Repository{
		Name: "d8_managed",
		Storage: backup.Storage{Endpoint: e.s3.URL(), Region: s3server.Region, Bucket: bucket, Prefix: prefix,
			PathStyle: true, CAPEM: e.s3.CA.CertPEM},
		Keys: keys,
	}
}

func (e *env) keys() backup.Keys {
	return backup.Keys{AccessKey: e.s3.AccessKey, SecretKey: e.s3.SecretKey}
}

var ctx = context.Background()

// noKeys fails the test when a text carries either key.
func noKeys(t *testing.T, k backup.Keys, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, k.SecretKey) || strings.Contains(s, k.AccessKey) {
			t.Fatalf("a key leaked into %q", s)
		}
	}
}

func TestRepository(t *testing.T) {
	e := newEnv(t)
	f := e.fe()

	t.Run("wrong keys fail as StarRocks reports it, without the keys", func(t *testing.T) {
		bad := backup.Keys{AccessKey: e.s3.AccessKey, SecretKey: "WrongSecret0123456789"}
		_, err := backup.EnsureRepository(ctx, f.db, e.repo(bad), "")
		if err == nil || !strings.Contains(err.Error(), "Failed to create repository") || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
			t.Fatalf("err = %v", err)
		}
		noKeys(t, bad, err.Error())
	})
	t.Run("a missing bucket is named", func(t *testing.T) {
		r := e.repo(e.keys())
		r.Storage.Bucket = "no-such-bucket"
		_, err := backup.EnsureRepository(ctx, f.db, r, "")
		if err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a statement StarRocks echoes back is scrubbed of the keys", func(t *testing.T) {
		k := e.keys()
		f.fe.Refuse("CREATE REPOSITORY", 1064, "Getting syntax error near \"aws.s3.secret_key\" = \""+k.SecretKey+"\"")
		_, err := backup.EnsureRepository(ctx, f.db, e.repo(k), "")
		f.fe.Refuse("", 0, "")
		if err == nil {
			t.Fatal("no error")
		}
		noKeys(t, k, err.Error())
	})
	t.Run("a repository an abandoned CREATE made meanwhile is left to the next pass", func(t *testing.T) {
		// What the real FE answers a CREATE that waited for an earlier
		// pass's (realfe_test.go meets it when the storage is slow).
		f.fe.Refuse("CREATE REPOSITORY", 5064, "Failed to create repository: repository with same name already exist: d8_managed")
		_, err := backup.EnsureRepository(ctx, f.db, e.repo(e.keys()), "")
		f.fe.Refuse("", 0, "")
		if err == nil || !strings.Contains(err.Error(), "the CREATE of an earlier pass") || !strings.Contains(err.Error(), "the next pass looks again") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("hostile strings never reach a statement", func(t *testing.T) {
		for name, mutate := range map[string]func(*backup.Repository){
			"name":     func(r *backup.Repository) { r.Name = "x` ; DROP DATABASE d; --" },
			"bucket":   func(r *backup.Repository) { r.Storage.Bucket = `b" PROPERTIES ("x"="y` },
			"prefix":   func(r *backup.Repository) { r.Storage.Prefix = "a/../b" },
			"endpoint": func(r *backup.Repository) { r.Storage.Endpoint = `https://h" , "aws.s3.secret_key" = "x` },
			"key":      func(r *backup.Repository) { r.Keys.SecretKey = `a"b` },
		} {
			r := e.repo(e.keys())
			mutate(&r)
			before := len(f.fe.Statements())
			if _, err := backup.EnsureRepository(ctx, f.db, r, ""); err == nil {
				t.Fatalf("%s: accepted", name)
			}
			if after := len(f.fe.Statements()); after != before {
				t.Fatalf("%s: %d statements sent", name, after-before)
			}
		}
	})

	r := e.repo(e.keys())
	got, err := backup.EnsureRepository(ctx, f.db, r, "")
	if err != nil || !got.Created || got.Fingerprint == "" {
		t.Fatalf("first ensure: %+v, %v", got, err)
	}
	if keys := e.s3.Keys(t, bucket, prefix+"/"); len(keys) != 1 || keys[0] != prefix+"/__starrocks_repository_d8_managed/__repo_info" {
		t.Fatalf("bucket: %v", keys)
	}
	fp := got.Fingerprint
	if again, err := backup.EnsureRepository(ctx, f.db, r, fp); err != nil || again != (backup.Ensured{Fingerprint: fp}) {
		t.Fatalf("second ensure changed something: %+v, %v", again, err)
	}

	t.Run("a repository the team's admin dropped is re-created and reported", func(t *testing.T) {
		f.exec(t, "DROP REPOSITORY d8_managed")
		got, err := backup.EnsureRepository(ctx, f.db, r, fp)
		if err != nil || !got.Recreated || got.Created {
			t.Fatalf("%+v, %v", got, err)
		}
	})
	t.Run("new keys that do not work leave the repository as it is", func(t *testing.T) {
		bad := e.repo(backup.Keys{AccessKey: e.s3.AccessKey, SecretKey: "NotTheRightSecret42"})
		before := len(f.fe.Statements())
		_, err := backup.EnsureRepository(ctx, f.db, bad, fp)
		if err == nil || !strings.Contains(err.Error(), "keeps its current settings") || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
			t.Fatalf("err = %v", err)
		}
		noKeys(t, bad.Keys, err.Error())
		for _, q := range f.fe.Statements()[before:] {
			if strings.HasPrefix(q, "DROP") || strings.HasPrefix(q, "CREATE") {
				t.Fatalf("sent %.40s", q)
			}
		}
		if got := f.fe.Repositories(); len(got) != 1 {
			t.Fatalf("repositories: %v", got)
		}
	})
	t.Run("new keys: DROP + CREATE, never while a job runs", func(t *testing.T) {
		f.exec(t, "CREATE DATABASE d1", "CREATE TABLE d1.t (a INT)", "INSERT INTO d1.t VALUES (1)")
		f.fe.HoldJobs(true)
		f.exec(t, "BACKUP DATABASE d1 SNAPSHOT "+label("hold", "d1")+" TO d8_managed")
		got, err := backup.EnsureRepository(ctx, f.db, r, "fingerprint-of-the-old-keys")
		if err != nil || !got.Waiting || got.Replaced {
			t.Fatalf("while a job runs: %+v, %v", got, err)
		}
		f.fe.HoldJobs(false)
		for f.fe.JobState("d1") != "FINISHED" {
			time.Sleep(time.Millisecond)
		}
		got, err = backup.EnsureRepository(ctx, f.db, r, "fingerprint-of-the-old-keys")
		if err != nil || !got.Replaced || got.Fingerprint != fp {
			t.Fatalf("after the job: %+v, %v", got, err)
		}
	})
}

func TestReadKeys(t *testing.T) {
	g := secrets{"s3-keys": {"accessKey": []byte("AKIA123\n"), "secretKey": []byte("c2VjcmV0")},
		"half": {"accessKey": []byte("AKIA123")}}
	k, err := backup.ReadKeys(ctx, g, "s3-keys", "accessKey", "secretKey")
	if err != nil || k.AccessKey != "AKIA123" || k.SecretKey != "c2VjcmV0" {
		t.Fatalf("%+v, %v", k, err)
	}
	_, err = backup.ReadKeys(ctx, g, "half", "accessKey", "secretKey")
	if err == nil || !strings.Contains(err.Error(), `Secret half has no key "secretKey"`) {
		t.Fatalf("a Secret without the keys: %v", err)
	}
	_, err = backup.ReadKeys(ctx, g, "absent", "accessKey", "secretKey")
	if err == nil || !strings.Contains(err.Error(), "Secret absent") {
		t.Fatalf("no Secret: %v", err)
	}
}

type secrets map[string]map[string][]byte

func (s secrets) Get(_ context.Context, name string) (map[string][]byte, error) {
	d, ok := s[name]
	if !ok {
		return nil, errors.New("not found")
	}
	return d, nil
}

// runBackup steps a set until every database is done.
func runBackup(t *testing.T, q backup.Querier, r backup.Repository, set string, dbs []string, lim backup.Limits) []backup.Database {
	t.Helper()
	var progress []backup.Database
	for _, db := range dbs {
		progress = append(progress, backup.Database{Name: db, Label: label(set, db)})
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var err error
		if progress, err = backup.BackupStep(ctx, q, r, progress, false, time.Now(), lim); err != nil {
			t.Fatal(err)
		}
		done := true
		for _, d := range progress {
			done = done && d.State.Done()
		}
		if done {
			return progress
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("set %s not done: %+v", set, progress)
	return nil
}

func TestBackupSetsAndRetention(t *testing.T) {
	e := newEnv(t)
	f := e.fe()
	r := e.repo(e.keys())
	if _, err := backup.EnsureRepository(ctx, f.db, r, ""); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "CREATE DATABASE sales", "CREATE DATABASE web", "CREATE DATABASE empty_db",
		"CREATE TABLE sales.orders (id INT, item STRING)", "INSERT INTO sales.orders VALUES (1, 'apple'), (2, 'pear')",
		"CREATE TABLE web.hits (url STRING)", "INSERT INTO web.hits VALUES ('/a')")
	lim := backup.Limits{Backoff: time.Millisecond}

	// Two submissions are refused as busy: retried, then through.
	f.fe.BusySubmissions(2)
	s1 := runBackup(t, f.db, r, "s1", []string{"sales", "web", "empty_db"}, lim)
	for _, d := range s1 {
		want := backup.StateCompleted
		if d.Name == "empty_db" {
			want = backup.StateSkipped
		}
		if d.State != want || (want == backup.StateCompleted && d.Timestamp == "") {
			t.Fatalf("%s: %+v", d.Name, d)
		}
	}
	if s1[0].Attempts != 2 {
		t.Fatalf("sales: %d busy attempts, want 2", s1[0].Attempts)
	}
	s2 := runBackup(t, f.db, r, "s2", []string{"sales", "web"}, lim)
	s3 := runBackup(t, f.db, r, "s3", []string{"sales"}, lim)
	_ = s3

	store, err := backup.NewStore(r)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := store.Snapshots(ctx)
	if err != nil || len(snaps) != 5 {
		t.Fatalf("snapshots %+v, %v", snaps, err)
	}

	t.Run("busy submissions give up after MaxAttempts", func(t *testing.T) {
		f.fe.BusySubmissions(10)
		got := runBackup(t, f.db, r, "s_busy", []string{"web"}, backup.Limits{Backoff: time.Millisecond, MaxAttempts: 3})
		f.fe.BusySubmissions(0)
		if got[0].State != backup.StateFailed || !strings.Contains(got[0].Message, "Another backup or restore job is being submitted") ||
			!strings.Contains(got[0].Message, "after 3 attempts") {
			t.Fatalf("%+v", got[0])
		}
	})

	t.Run("retention deletes exactly the expired snapshots' objects", func(t *testing.T) {
		all := e.s3.Keys(t, bucket, prefix+"/")
		var expired []string
		for _, d := range s1 {
			if d.State == backup.StateCompleted {
				expired = append(expired, d.Label)
			}
		}
		expired = append(expired, s2[0].Label)
		deleted, err := store.DeleteSnapshots(ctx, f.db, expired)
		if err != nil || len(deleted) != 3 {
			t.Fatalf("%+v, %v", deleted, err)
		}
		var want []string
		for _, k := range all {
			gone := false
			for _, l := range expired {
				gone = gone || strings.Contains(k, "/__ss_"+l+"/")
			}
			if !gone {
				want = append(want, k)
			}
		}
		got := e.s3.Keys(t, bucket, prefix+"/")
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("left:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		n := 0
		for _, d := range deleted {
			n += d.Objects
		}
		if n != len(all)-len(want) || n == 0 {
			t.Fatalf("reported %d objects deleted, %d went", n, len(all)-len(want))
		}
		if !contains(got, prefix+"/__starrocks_repository_d8_managed/__repo_info") {
			t.Fatal("__repo_info went")
		}
		// The remaining snapshots are still listed by StarRocks.
		rows, err := f.db.Query("SHOW SNAPSHOT ON d8_managed")
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 2 {
			t.Fatalf("SHOW SNAPSHOT lists %d snapshots, want 2 (s2/web, s3/sales)", n)
		}
	})
	t.Run("retention never deletes a snapshot the module did not make", func(t *testing.T) {
		f.exec(t, "BACKUP DATABASE web SNAPSHOT team_own TO d8_managed")
		for f.fe.JobState("web") != "FINISHED" {
			time.Sleep(time.Millisecond)
		}
		before := e.s3.Keys(t, bucket, prefix+"/")
		for _, l := range []string{"team_own", "d8ms_../x", "d8ms_a/b", "__repo_info", ""} {
			if _, err := store.DeleteSnapshots(ctx, f.db, []string{l}); err == nil {
				t.Fatalf("%q: deleted", l)
			}
		}
		if after := e.s3.Keys(t, bucket, prefix+"/"); len(after) != len(before) {
			t.Fatalf("objects went: %d -> %d", len(before), len(after))
		}
	})
	t.Run("retention waits while a job runs, then removes a failed backup's leftovers", func(t *testing.T) {
		f.fe.SetBackupStep(30 * time.Millisecond)
		failed := label("failed", "sales")
		f.exec(t, "BACKUP DATABASE sales SNAPSHOT "+failed+" TO d8_managed")
		for f.fe.JobState("sales") != "SAVE_META" && f.fe.JobState("sales") != "UPLOAD_INFO" {
			time.Sleep(time.Millisecond)
		}
		if _, err := store.DeleteSnapshots(ctx, f.db, []string{s3[0].Label}); err == nil || !strings.Contains(err.Error(), "job runs") {
			t.Fatalf("while a job runs: %v", err)
		}
		f.exec(t, "CANCEL BACKUP FROM sales")
		f.fe.SetBackupStep(2 * time.Millisecond)
		left, err := store.Leftovers(ctx, nil)
		if err != nil || len(left) != 1 || left[0] != failed {
			t.Fatalf("leftovers %v, %v", left, err)
		}
		if _, err := store.DeleteSnapshots(ctx, f.db, left); err != nil {
			t.Fatal(err)
		}
		if got := e.s3.Keys(t, bucket, prefix+"/__starrocks_repository_d8_managed/__ss_"+failed+"/"); len(got) != 0 {
			t.Fatalf("left: %v", got)
		}
	})
	t.Run("a stuck job is cancelled and reported, not waited on", func(t *testing.T) {
		f.fe.HoldJobs(true)
		defer f.fe.HoldJobs(false)
		progress := []backup.Database{{Name: "web", Label: label("s_stuck", "web")}}
		start := time.Now()
		lim := backup.Limits{StuckAfter: time.Hour}
		progress, err := backup.BackupStep(ctx, f.db, r, progress, false, start, lim)
		if err != nil || progress[0].State != backup.StateRunning {
			t.Fatalf("%+v, %v", progress, err)
		}
		if progress, err = backup.BackupStep(ctx, f.db, r, progress, false, start.Add(30*time.Minute), lim); err != nil || progress[0].State != backup.StateRunning {
			t.Fatalf("after 30m: %+v, %v", progress, err)
		}
		if progress, err = backup.BackupStep(ctx, f.db, r, progress, false, start.Add(61*time.Minute), lim); err != nil {
			t.Fatal(err)
		}
		if progress[0].State != backup.StateFailed || !strings.Contains(progress[0].Message, "no progress in PENDING") || f.fe.JobState("web") != "CANCELLED" {
			t.Fatalf("%+v, job %s", progress[0], f.fe.JobState("web"))
		}
	})
	t.Run("a job that uploads for hours in one state is watched by its tasks, with the timeout it was given", func(t *testing.T) {
		f.fe.HoldJobs(true)
		defer f.fe.HoldJobs(false)
		progress := []backup.Database{{Name: "web", Label: label("s_long", "web")}}
		start := time.Now()
		lim := backup.Limits{StuckAfter: time.Hour, JobTimeout: 30 * time.Hour}
		progress, err := backup.BackupStep(ctx, f.db, r, progress, false, start, lim)
		if err != nil || progress[0].State != backup.StateRunning {
			t.Fatalf("%+v, %v", progress, err)
		}
		if got := f.fe.JobTimeout("web"); got != 30*3600 {
			t.Fatalf("the job's Timeout is %d s, want the 30 h it was given", got)
		}
		// The BEs report: a file of a task done, then a task done; the
		// state stays the same all along.
		for i, p := range []struct {
			at                   time.Duration
			unfinished, progress string
		}{
			{50 * time.Minute, "30101=10001, 30102=10002", "[30101: 3/40], [30102: 0/40]"},
			{100 * time.Minute, "30102=10002", "[30102: 12/40]"},
		} {
			f.fe.SetJobProgress("web", p.unfinished, p.progress)
			if progress, err = backup.BackupStep(ctx, f.db, r, progress, false, start.Add(p.at), lim); err != nil || progress[0].State != backup.StateRunning {
				t.Fatalf("report %d: %+v, %v", i, progress, err)
			}
		}
		// 150 min after the start, 50 after the last report: going on.
		if progress, err = backup.BackupStep(ctx, f.db, r, progress, false, start.Add(150*time.Minute), lim); err != nil || progress[0].State != backup.StateRunning {
			t.Fatalf("a job reporting progress was cancelled: %+v, %v, job %s", progress[0], err, f.fe.JobState("web"))
		}
		// An hour without a report: cancelled.
		if progress, err = backup.BackupStep(ctx, f.db, r, progress, false, start.Add(161*time.Minute), lim); err != nil {
			t.Fatal(err)
		}
		if progress[0].State != backup.StateFailed || !strings.Contains(progress[0].Message, "no progress in PENDING since") || f.fe.JobState("web") != "CANCELLED" {
			t.Fatalf("%+v, job %s", progress[0], f.fe.JobState("web"))
		}
	})
	t.Run("hold starts nothing", func(t *testing.T) {
		l := label("s_hold", "web")
		before := len(f.fe.Statements())
		got, err := backup.BackupStep(ctx, f.db, r, []backup.Database{{Name: "web", Label: l}}, true, time.Now(), lim)
		if err != nil || got[0].State.Done() || got[0].State == backup.StateRunning || len(f.fe.Statements()) != before {
			t.Fatalf("%+v, %v", got, err)
		}
	})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// TestBackupRestoreEndToEnd: rows -> backup -> objects in the bucket -> a
// new instance (a new FE) re-attaches the repository read only -> restore
// -> the rows are there.
func TestBackupRestoreEndToEnd(t *testing.T) {
	e := newEnv(t)
	src := e.fe()
	r := e.repo(e.keys())
	var texts []string
	if _, err := backup.EnsureRepository(ctx, src.db, r, ""); err != nil {
		t.Fatal(err)
	}
	src.exec(t, "CREATE DATABASE sales", "CREATE TABLE sales.orders (id INT, item STRING)",
		"INSERT INTO sales.orders VALUES (1, 'apple'), (2, 'pear'), (3, 'plum')")
	set := runBackup(t, src.db, r, "nightly_1", []string{"sales"}, backup.Limits{})
	if set[0].State != backup.StateCompleted {
		t.Fatalf("%+v", set[0])
	}
	objs := e.s3.Keys(t, bucket, prefix+"/__starrocks_repository_d8_managed/__ss_"+set[0].Label+"/")
	if len(objs) < 3 {
		t.Fatalf("objects of the snapshot: %v", objs)
	}

	dst := e.fe()
	ro := r
	ro.ReadOnly = true
	if _, err := backup.EnsureRepository(ctx, dst.db, ro, ""); err != nil {
		t.Fatal(err)
	}
	progress := []backup.Database{{Name: "sales", Label: set[0].Label, Timestamp: set[0].Timestamp}}
	deadline := time.Now().Add(30 * time.Second)
	for !progress[0].State.Done() && time.Now().Before(deadline) {
		var err error
		progress, err = backup.RestoreStep(ctx, dst.db, ro, progress, 1, false, time.Now(), backup.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, progress[0].Message)
		time.Sleep(time.Millisecond)
	}
	if progress[0].State != backup.StateCompleted {
		t.Fatalf("restore: %+v", progress[0])
	}
	got := dst.fe.TableRows("sales", "orders")
	if fmt.Sprint(got) != "[[1 apple] [2 pear] [3 plum]]" {
		t.Fatalf("rows after the restore: %v", got)
	}
	noKeys(t, e.keys(), texts...)

	t.Run("a restore from a timestamp that does not exist fails with StarRocks' message", func(t *testing.T) {
		dst.exec(t, "CREATE DATABASE other")
		p := []backup.Database{{Name: "other", Label: set[0].Label, Timestamp: "2001-01-01-00-00-00-000"}}
		p, err := backup.RestoreStep(ctx, dst.db, ro, p, 1, false, time.Now(), backup.Limits{})
		if err != nil || p[0].State != backup.StateFailed || !strings.Contains(p[0].Message, "Maybe specified wrong backup timestamp") {
			t.Fatalf("%+v, %v", p, err)
		}
	})
	t.Run("the read-only repository refuses a backup", func(t *testing.T) {
		got := runBackup(t, dst.db, ro, "x", []string{"sales"}, backup.Limits{})
		if got[0].State != backup.StateFailed || !strings.Contains(got[0].Message, "is read only") {
			t.Fatalf("%+v", got[0])
		}
	})
}

// An agent that restarted after a set finished, when StarRocks no longer
// shows that job (another job of the database replaced it in SHOW BACKUP,
// or the FE dropped it after history_job_keep_max_second), must not
// submit the BACKUP again: StarRocks refuses it ("Snapshot with name ...
// already exist in repository") and the set would turn Failed although
// its snapshot is in the bucket. The snapshot SHOW SNAPSHOT lists is the
// finished one.
func TestBackupAfterARestartAdoptsAFinishedSnapshot(t *testing.T) {
	e := newEnv(t)
	f := e.fe()
	r := e.repo(e.keys())
	if _, err := backup.EnsureRepository(ctx, f.db, r, ""); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "CREATE DATABASE sales", "CREATE TABLE sales.orders (id INT)", "INSERT INTO sales.orders VALUES (1)")
	first := runBackup(t, f.db, r, "first", []string{"sales"}, backup.Limits{})
	if first[0].State != backup.StateCompleted {
		t.Fatalf("%+v", first[0])
	}
	// The next set's job of sales replaces the first in SHOW BACKUP.
	if second := runBackup(t, f.db, r, "second", []string{"sales"}, backup.Limits{}); second[0].State != backup.StateCompleted {
		t.Fatalf("%+v", second[0])
	}
	again := runBackup(t, f.db, r, "first", []string{"sales"}, backup.Limits{})
	if again[0].State != backup.StateCompleted || again[0].Timestamp != first[0].Timestamp {
		t.Fatalf("the finished set after a restart: %+v, want Completed at %s", again[0], first[0].Timestamp)
	}
}

// An agent that restarted while a job runs reports the job's start as
// StarRocks created it (SHOW BACKUP's CreateTime, in StarRocks' fixed
// +08:00), not as the time it adopted the job: the hooks hold pod restarts
// until a job timeout after that start, and no longer.
func TestAJobAdoptedAfterARestartKeepsItsStartTime(t *testing.T) {
	e := newEnv(t)
	f := e.fe()
	r := e.repo(e.keys())
	if _, err := backup.EnsureRepository(ctx, f.db, r, ""); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "CREATE DATABASE sales", "CREATE TABLE sales.orders (id INT)", "INSERT INTO sales.orders VALUES (1)")
	f.fe.HoldJobs(true)
	defer f.fe.HoldJobs(false)
	submitted := time.Now()
	progress, err := backup.BackupStep(ctx, f.db, r, []backup.Database{{Name: "sales", Label: label("long", "sales")}}, false, submitted, backup.Limits{})
	if err != nil || progress[0].State != backup.StateRunning {
		t.Fatalf("%+v, %v", progress, err)
	}
	// Two hours later a restarted agent knows only the set's labels.
	adopted := submitted.Add(2 * time.Hour)
	progress, err = backup.BackupStep(ctx, f.db, r, []backup.Database{{Name: "sales", Label: label("long", "sales")}}, false, adopted, backup.Limits{})
	if err != nil || progress[0].State != backup.StateRunning {
		t.Fatalf("adopted: %+v, %v", progress, err)
	}
	if got := progress[0].Submitted; got.Before(submitted.Add(-time.Second)) || got.After(submitted.Add(2*time.Second)) {
		t.Fatalf("the adopted job started at %s, want the submission at %s (adopted at %s)", got, submitted, adopted)
	}
}

// What fails a database's backup and what it lacks: BACKUP refuses a
// database while a table has temporary partitions (an INSERT OVERWRITE
// runs; fe-core BackupHandler.backup), which is retried once; the
// asynchronous materialized views are not in the snapshot
// (BackupRestoreAnalyzer skips them while enable_backup_materialized_view
// is false) and the database's status names them.
func TestBackupRetriesTempPartitionsOnceAndNamesTheMaterializedViews(t *testing.T) {
	e := newEnv(t)
	f := e.fe()
	r := e.repo(e.keys())
	if _, err := backup.EnsureRepository(ctx, f.db, r, ""); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "CREATE DATABASE sales", "CREATE TABLE sales.orders (id INT)", "INSERT INTO sales.orders VALUES (1)",
		"CREATE MATERIALIZED VIEW sales.daily REFRESH ASYNC AS SELECT id FROM sales.orders")
	const refused = "Do not support backing up table with temp partitions"
	f.fe.Refuse("BACKUP DATABASE", 5064, refused)
	lim := backup.Limits{TempPartitionRetry: time.Hour}
	now := time.Now()
	dbs, err := backup.BackupStep(ctx, f.db, r, []backup.Database{{Name: "sales", Label: label("tmp", "sales")}}, false, now, lim)
	if err != nil {
		t.Fatal(err)
	}
	if d := dbs[0]; d.State != backup.StatePending || !strings.Contains(d.Message, "submitted once more in 1h0m0s") {
		t.Fatalf("a refusal for temporary partitions: %+v, want one retry later", d)
	}
	if dbs, _ = backup.BackupStep(ctx, f.db, r, dbs, false, now.Add(time.Minute), lim); dbs[0].State != backup.StatePending {
		t.Fatalf("retried before its time: %+v", dbs[0])
	}
	again, _ := backup.BackupStep(ctx, f.db, r, dbs, false, now.Add(time.Hour), lim)
	if d := again[0]; d.State != backup.StateFailed || !strings.Contains(d.Message, "again after one retry") {
		t.Fatalf("refused again: %+v, want Failed after the one retry", d)
	}

	f.fe.Refuse("", 0, "")
	dbs, err = backup.BackupStep(ctx, f.db, r, dbs, false, now.Add(time.Hour), lim)
	if err != nil {
		t.Fatal(err)
	}
	for !dbs[0].State.Done() {
		time.Sleep(time.Millisecond)
		if dbs, err = backup.BackupStep(ctx, f.db, r, dbs, false, time.Now().Add(time.Hour), lim); err != nil {
			t.Fatal(err)
		}
	}
	if d := dbs[0]; d.State != backup.StateCompleted || !strings.Contains(d.MaterializedViewNote(), "not in the snapshot: 1 asynchronous materialized views (daily)") {
		t.Fatalf("the retried backup: %+v, note %q", d, d.MaterializedViewNote())
	}
}
