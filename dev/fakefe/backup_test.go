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

package fakefe_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
)

const rootPass = "root-pass"

type fe struct {
	t  *testing.T
	s  *fakefe.Server
	db *sql.DB
}

func startFE(t *testing.T, s3 *s3server.Server) *fe {
	t.Helper()
	s := fakefe.Start(t, fakefe.Options{RootPassword: rootPass})
	s.SetS3RootCAs(s3.RootCAs)
	s.SetBackupStep(5 * time.Millisecond)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", s.Addr()
	cfg.Timeout = 5 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &fe{t: t, s: s, db: db}
}

func (f *fe) exec(q string) error {
	_, err := f.db.ExecContext(context.Background(), q)
	return err
}

func (f *fe) mustExec(q string) {
	f.t.Helper()
	if err := f.exec(q); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// rows reads a result by column name.
func (f *fe) rows(q string) []map[string]string {
	f.t.Helper()
	rs, err := f.db.QueryContext(context.Background(), q)
	if err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []map[string]string
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			f.t.Fatal(err)
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		out = append(out, m)
	}
	return out
}

func (f *fe) createRepo(s3 *s3server.Server, name, bucket, prefix, access, secret string, readOnly bool) error {
	ro := ""
	if readOnly {
		ro = "READ ONLY "
	}
	return f.exec(fmt.Sprintf(`CREATE %sREPOSITORY %s WITH BROKER ON LOCATION "s3://%s/%s" PROPERTIES (`+
		`"aws.s3.access_key" = "%s", "aws.s3.secret_key" = "%s", "aws.s3.endpoint" = "%s", "aws.s3.region" = "%s", `+
		`"aws.s3.enable_path_style_access" = "true", "aws.s3.enable_ssl" = "true")`,
		ro, name, bucket, prefix, access, secret, s3.Endpoint, s3server.Region))
}

// waitJob polls SHOW BACKUP|RESTORE FROM db until the job is done and
// returns the states it saw.
func (f *fe) waitJob(kind, db string) (map[string]string, []string) {
	f.t.Helper()
	var seen []string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		rows := f.rows("SHOW " + kind + " FROM " + db)
		if len(rows) != 1 {
			f.t.Fatalf("SHOW %s FROM %s: %d rows", kind, db, len(rows))
		}
		st := rows[0]["State"]
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if st == "FINISHED" || st == "CANCELLED" {
			return rows[0], seen
		}
		time.Sleep(time.Millisecond)
	}
	f.t.Fatalf("%s of %s not done after 20s (states %v)", kind, db, seen)
	return nil, nil
}

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), substr) {
		t.Fatalf("err = %v, want one containing %q", err, substr)
	}
}

func TestRepositoryChecksTheLocationWithTheKeys(t *testing.T) {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, "team-bucket")
	f := startFE(t, s3)

	wantErr(t, f.createRepo(s3, "r1", "team-bucket", "p", s3.AccessKey, "wrong-secret", false), "Failed to create repository: ")
	wantErr(t, f.createRepo(s3, "r1", "team-bucket", "p", "AKUNKNOWN", s3.SecretKey, false), "No user exists with the provided access key ID")
	wantErr(t, f.createRepo(s3, "r1", "no-such-bucket", "p", s3.AccessKey, s3.SecretKey, false), "NoSuchBucket")
	if got := f.s.Repositories(); len(got) != 0 {
		t.Fatalf("repositories after failures: %v", got)
	}

	if err := f.createRepo(s3, "r1", "team-bucket", "p/q", s3.AccessKey, s3.SecretKey, false); err != nil {
		t.Fatal(err)
	}
	if keys := s3.Keys(t, "team-bucket", ""); len(keys) != 1 || keys[0] != "p/q/__starrocks_repository_r1/__repo_info" {
		t.Fatalf("keys = %v", keys)
	}
	wantErr(t, f.createRepo(s3, "r1", "team-bucket", "p/q", s3.AccessKey, s3.SecretKey, false), "already exist")
	repos := f.rows("SHOW REPOSITORIES")
	if len(repos) != 1 || repos[0]["RepoName"] != "r1" || repos[0]["Location"] != "s3://team-bucket/p/q" || repos[0]["IsReadOnly"] != "false" {
		t.Fatalf("SHOW REPOSITORIES = %v", repos)
	}
	wantErr(t, f.exec("DROP REPOSITORY nope"), "Repository does not exist")
	f.mustExec("DROP REPOSITORY r1")
	if got := f.rows("SHOW REPOSITORIES"); len(got) != 0 {
		t.Fatalf("after DROP: %v", got)
	}
}

func TestBackupAndRestoreThroughTheBucket(t *testing.T) {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, "team-bucket")
	src := startFE(t, s3)
	if err := src.createRepo(s3, "mod", "team-bucket", "ns/sr-1", s3.AccessKey, s3.SecretKey, false); err != nil {
		t.Fatal(err)
	}
	src.mustExec("CREATE DATABASE sales")
	src.mustExec("CREATE DATABASE empty_db")
	src.mustExec("CREATE TABLE sales.orders (id INT, item STRING)")
	src.mustExec("INSERT INTO sales.orders VALUES (1, 'apple'), (2, 'pear')")

	wantErr(t, src.exec("BACKUP DATABASE empty_db SNAPSHOT s_empty TO mod"), "is empty")
	wantErr(t, src.exec("BACKUP DATABASE sales SNAPSHOT s1 TO nope"), "Repository [nope] does not exist")

	src.s.BusySubmissions(1)
	wantErr(t, src.exec("BACKUP DATABASE sales SNAPSHOT s1 TO mod"), "Another backup or restore job is being submitted")

	src.s.HoldJobs(true)
	src.mustExec("BACKUP DATABASE sales SNAPSHOT s1 TO mod")
	wantErr(t, src.exec("BACKUP DATABASE sales SNAPSHOT s2 TO mod"), "Can only run one backup or restore job of a database at same time")
	wantErr(t, src.exec("DROP REPOSITORY mod"), "Backup or restore job is running on this repository. Can not drop it")
	src.s.HoldJobs(false)
	job, states := src.waitJob("BACKUP", "sales")
	want := []string{"PENDING", "SNAPSHOTING", "UPLOAD_SNAPSHOT", "UPLOADING", "SAVE_META", "UPLOAD_INFO", "FINISHED"}
	if job["State"] != "FINISHED" || job["SnapshotName"] != "s1" || job["Status"] != "[OK]" {
		t.Fatalf("job = %v", job)
	}
	for _, st := range states {
		found := false
		for _, w := range want {
			found = found || st == w
		}
		if !found {
			t.Fatalf("state %q is not a BackupJob state (saw %v)", st, states)
		}
	}

	keys := s3.Keys(t, "team-bucket", "ns/sr-1/__starrocks_repository_mod/__ss_s1/")
	var info, meta, data int
	for _, k := range keys {
		rest := strings.TrimPrefix(k, "ns/sr-1/__starrocks_repository_mod/__ss_s1/")
		switch {
		case strings.HasPrefix(rest, "__info_"):
			info++
		case strings.HasPrefix(rest, "__meta."):
			meta++
		case strings.HasPrefix(rest, "__ss_content/__db_"):
			data++
		}
	}
	if info != 1 || meta != 1 || data != 1 {
		t.Fatalf("snapshot objects %v: want one __info_, one __meta, one content object", keys)
	}
	if b := s3.Get(t, "team-bucket", keys[len(keys)-1]); len(b) == 0 {
		t.Fatalf("empty object %s", keys[len(keys)-1])
	}
	wantErr(t, src.exec("BACKUP DATABASE sales SNAPSHOT s1 TO mod"), "Snapshot with name 's1' already exist in repository")

	snaps := src.rows("SHOW SNAPSHOT ON mod")
	if len(snaps) != 1 || snaps[0]["Snapshot"] != "s1" || snaps[0]["Status"] != "OK" || snaps[0]["Timestamp"] == "" {
		t.Fatalf("SHOW SNAPSHOT = %v", snaps)
	}
	ts := snaps[0]["Timestamp"]
	if one := src.rows(`SHOW SNAPSHOT ON mod WHERE SNAPSHOT = "s1"`); len(one) != 1 || one[0]["Timestamp"] != ts || one[0]["Status"] != "OK" {
		t.Fatalf("SHOW SNAPSHOT WHERE SNAPSHOT = %v", one)
	}
	detail := src.rows(`SHOW SNAPSHOT ON mod WHERE SNAPSHOT = "s1" AND TIMESTAMP = "` + ts + `"`)
	if len(detail) != 1 || detail[0]["Database"] != "sales" {
		t.Fatalf("SHOW SNAPSHOT WHERE = %v", detail)
	}

	t.Run("a cancelled backup leaves its content but no __info", func(t *testing.T) {
		src.s.SetBackupStep(50 * time.Millisecond)
		src.mustExec("BACKUP DATABASE sales SNAPSHOT s_cancel TO mod")
		for src.s.JobState("sales") != "UPLOAD_INFO" && src.s.JobState("sales") != "SAVE_META" {
			time.Sleep(2 * time.Millisecond)
		}
		src.mustExec("CANCEL BACKUP FROM sales")
		job, _ := src.waitJob("BACKUP", "sales")
		if job["State"] != "CANCELLED" || !strings.Contains(job["Status"], "user cancelled") {
			t.Fatalf("job = %v", job)
		}
		left := s3.Keys(t, "team-bucket", "ns/sr-1/__starrocks_repository_mod/__ss_s_cancel/")
		if len(left) == 0 {
			t.Fatal("a backup cancelled after UPLOADING left nothing")
		}
		for _, k := range left {
			if strings.Contains(k, "__info_") {
				t.Fatalf("cancelled backup wrote %s", k)
			}
		}
		wantErr(t, src.exec("CANCEL BACKUP FROM sales"), "can not be cancelled")
		wantErr(t, src.exec("CANCEL RESTORE FROM sales"), "No restore is currently running")
		src.s.SetBackupStep(5 * time.Millisecond)
	})

	t.Run("a new FE re-attaches the snapshots read only and restores the rows", func(t *testing.T) {
		dst := startFE(t, s3)
		if err := dst.createRepo(s3, "mod", "team-bucket", "ns/sr-1", s3.AccessKey, s3.SecretKey, true); err != nil {
			t.Fatal(err)
		}
		repos := dst.rows("SHOW REPOSITORIES")
		if len(repos) != 1 || repos[0]["IsReadOnly"] != "true" {
			t.Fatalf("SHOW REPOSITORIES = %v", repos)
		}
		dst.mustExec("CREATE DATABASE sales")
		wantErr(t, dst.exec("BACKUP DATABASE sales SNAPSHOT s9 TO mod"), "is empty")
		wantErr(t, dst.exec("RESTORE SNAPSHOT s1 FROM mod DATABASE sales"), "Missing backup_timestamp property")
		wantErr(t, dst.exec(`RESTORE SNAPSHOT s1 FROM mod DATABASE sales PROPERTIES ("backup_timestamp" = "2000-01-01-00-00-00-000")`),
			"Maybe specified wrong backup timestamp")
		wantErr(t, dst.exec(`RESTORE SNAPSHOT s1 FROM mod DATABASE sales PROPERTIES ("backup_timestamp" = "`+ts+`", "colour" = "red")`),
			"Unknown restore job properties: [colour]")
		if got := dst.s.TableRows("sales", "orders"); got != nil {
			t.Fatalf("rows before the restore: %v", got)
		}
		dst.mustExec(`RESTORE SNAPSHOT s1 FROM mod DATABASE sales PROPERTIES ("backup_timestamp" = "` + ts + `", "replication_num" = "1")`)
		job, _ := dst.waitJob("RESTORE", "sales")
		if job["State"] != "FINISHED" || job["Label"] != "s1" || job["Timestamp"] != ts || job["ReplicationNum"] != "1" {
			t.Fatalf("restore job = %v", job)
		}
		got := dst.rows("SELECT * FROM sales.orders")
		if len(got) != 2 || got[0]["item"] != "apple" || got[1]["item"] != "pear" {
			t.Fatalf("rows after the restore: %v", got)
		}
	})

	t.Run("SHOW REPOSITORIES does not show the keys", func(t *testing.T) {
		for _, r := range src.rows("SHOW REPOSITORIES") {
			for col, v := range r {
				if strings.Contains(v, s3.SecretKey) || strings.Contains(v, s3.AccessKey) {
					t.Fatalf("column %s shows a key", col)
				}
			}
		}
	})
}

func TestRepositoryNeedsTheRepositoryPrivilege(t *testing.T) {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, "team-bucket")
	f := startFE(t, s3)
	f.mustExec("CREATE USER 'reader' IDENTIFIED BY 'reader-pass-1'")
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "reader", "reader-pass-1", "tcp", f.s.Addr()
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	reader := &fe{t: t, s: f.s, db: db}
	wantErr(t, reader.createRepo(s3, "r1", "team-bucket", "p", s3.AccessKey, s3.SecretKey, false), "REPOSITORY privilege")
	wantErr(t, reader.exec("BACKUP DATABASE x SNAPSHOT l TO r1"), "REPOSITORY privilege")
	f.mustExec("GRANT db_admin TO USER 'reader'@'%'")
	f.mustExec("SET DEFAULT ROLE db_admin TO 'reader'@'%'")
	db.Close()
	db = sql.OpenDB(c)
	reader.db = db
	if err := reader.createRepo(s3, "r1", "team-bucket", "p", s3.AccessKey, s3.SecretKey, false); err != nil {
		t.Fatalf("with db_admin: %v", err)
	}
}
