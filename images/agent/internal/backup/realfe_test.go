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
	"database/sql"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// realRepo is the instance's repository on a versitygw the FE reaches from
// its network namespace (the host's address on the FEs' bridge).
// ensureInPasses runs EnsureRepository pass after pass, as the agent does,
// while it says the next pass looks again: on a loaded machine a CREATE
// REPOSITORY (StarRocks lists the storage first) has outlived the read
// timeout, and the next pass's CREATE then found the repository that one
// made. Any other error fails.
func ensureInPasses(t *testing.T, ctx context.Context, db backup.Querier, r backup.Repository) {
	t.Helper()
	for {
		_, err := backup.EnsureRepository(ctx, db, r, "")
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "the next pass looks again") || ctx.Err() != nil {
			t.Fatalf("EnsureRepository of %s: %v", r.Name, err)
		}
		t.Logf("the next pass looks again: %v", err)
	}
}

func realRepo(s3 *s3server.Server, name string) backup.Repository {
	return backup.Repository{
		Name: name,
		Storage: backup.Storage{Endpoint: s3.URL(), Region: s3server.Region, Bucket: bucket, Prefix: prefix,
			PathStyle: true, CAPEM: s3.CA.CertPEM},
		Keys: backup.Keys{AccessKey: s3.AccessKey, SecretKey: s3.SecretKey},
	}
}

func repositories(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := sqlrows.QueryMaps(context.Background(), db, "SHOW REPOSITORIES")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range rows {
		out[m["RepoName"]] = m["Location"]
	}
	return out
}

// The agent's repository code against a real StarRocks FE rendered for an
// instance whose spec.backup names a CA Secret: the FE's start script
// builds its trust store from the JDK's CAs and that bundle, so CREATE
// REPOSITORY reaches an S3 endpoint of a private CA; an endpoint over plain
// HTTP needs none; an endpoint of a CA the FE was not given fails with
// StarRocks' PKIX error, and a replacement with such settings leaves the
// working repository in place. Then the same FE is the source of a backup
// restored on another (viewsBackupAndRestore).
func TestRepositoryOnARealFrontend(t *testing.T) {
	c := realfe.Start(t, realfe.Options{Backup: &v1alpha1.BackupStorage{
		// The rendering needs only the CA's Secret; the repositories
		// below name the S3 servers' real endpoints.
		Endpoint: "https://s3.realfe.invalid", Bucket: bucket, PathStyle: true,
		CASecretRef:          &v1alpha1.BackupSecretKeyRef{Name: "team-s3-ca"},
		CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "team-s3-keys"},
	}})
	private := s3server.StartWith(t, s3server.Options{Host: c.HostIP})
	plain := s3server.StartWith(t, s3server.Options{Host: c.HostIP, PlainHTTP: true})
	// Its own CA, which the FE was never given.
	stranger := s3server.StartWith(t, s3server.Options{Host: c.HostIP})
	for _, s := range []*s3server.Server{private, plain, stranger} {
		s.CreateBucket(t, bucket)
	}
	c.BackupCA = private.CA.CertPEM
	fe := c.StartLeader(t)
	if !strings.Contains(fe.Output(), "trusting the JDK's CAs and") {
		t.Fatalf("fe-start.sh built no trust store:\n%s", fe.Tail())
	}
	db := c.DB(t, fe, "root", "", false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel) // the parallel subtests below run after this function returns

	t.Run("creates the repository on a plain HTTP endpoint", func(t *testing.T) {
		got, err := backup.EnsureRepository(ctx, db, realRepo(plain, "d8ms_plain"), "")
		if err != nil || !got.Created {
			t.Fatalf("EnsureRepository = %+v, %v", got, err)
		}
		if keys := plain.Keys(t, bucket, prefix+"/__starrocks_repository_d8ms_plain/"); len(keys) != 1 {
			t.Fatalf("the repository's directory holds %v, want its __repo_info", keys)
		}
	})

	t.Run("creates the repository on an endpoint of the private CA in the trust store", func(t *testing.T) {
		got, err := backup.EnsureRepository(ctx, db, realRepo(private, "d8ms_private"), "")
		if err != nil || !got.Created {
			t.Fatalf("EnsureRepository = %+v, %v", got, err)
		}
	})

	// The subtests below touch repositories of their own, and each mostly
	// waits for StarRocks (its S3 client's retries before the PKIX error,
	// the backup job's steps, a second FE's start): side by side, the test
	// takes the restore's time instead of the sum.
	t.Run("an endpoint of a CA the FE was not given fails with StarRocks' PKIX error", func(t *testing.T) {
		t.Parallel()
		_, err := backup.EnsureRepository(ctx, db, realRepo(stranger, "d8ms_stranger"), "")
		if err == nil || !strings.Contains(err.Error(), "PKIX") {
			t.Fatalf("EnsureRepository: %v, want StarRocks' PKIX error", err)
		}
		if _, ok := repositories(t, db)["d8ms_stranger"]; ok {
			t.Fatal("a repository StarRocks cannot reach was created")
		}
	})

	t.Run("new settings replace the repository; settings StarRocks refuses leave it in place", func(t *testing.T) {
		t.Parallel()
		r := realRepo(plain, "d8ms_plain")
		applied := r.Fingerprint()
		// Another prefix: DROP + CREATE, as for new keys (versitygw has
		// one user here).
		r.Storage.Prefix += "/moved"
		got, err := backup.EnsureRepository(ctx, db, r, applied)
		if err != nil || !got.Replaced {
			t.Fatalf("EnsureRepository = %+v, %v", got, err)
		}
		applied = got.Fingerprint

		// The same repository moved to the stranger's endpoint: the agent
		// has its CA and reaches it, StarRocks does not.
		moved := realRepo(stranger, "d8ms_plain")
		moved.Storage.Prefix = r.Storage.Prefix
		got, err = backup.EnsureRepository(ctx, db, moved, applied)
		if err == nil || !strings.Contains(err.Error(), "keeps its current settings") || !strings.Contains(err.Error(), "PKIX") {
			t.Fatalf("EnsureRepository = %+v, %v; want the repository kept and StarRocks' PKIX error", got, err)
		}
		repos := repositories(t, db)
		if loc, ok := repos["d8ms_plain"]; !ok || loc != r.Storage.Location() {
			t.Fatalf("the working repository is gone: %v", repos)
		}
		if _, ok := repos["d8ms_plain_probe"]; ok {
			t.Fatalf("the probe repository was left: %v", repos)
		}
		for _, s := range []*s3server.Server{plain, stranger} {
			if keys := s.Keys(t, bucket, r.Storage.Prefix+"/__starrocks_repository_d8ms_plain_probe/"); len(keys) != 0 {
				t.Fatalf("the probe left %v", keys)
			}
		}
	})

	t.Run("a database of views backed up here is restored on another FE", func(t *testing.T) {
		t.Parallel()
		viewsBackupAndRestore(t, c, fe, db)
	})
}

// runSteps drives a backup or restore step until every database is done,
// as the agent's passes do.
func runSteps(t *testing.T, step func([]backup.Database) ([]backup.Database, error), dbs []backup.Database) []backup.Database {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		var err error
		if dbs, err = step(dbs); err != nil {
			t.Fatalf("step: %v", err)
		}
		done := true
		for _, d := range dbs {
			done = done && d.State.Done()
		}
		if done {
			return dbs
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done after 3 minutes: %+v", dbs)
		}
	}
}

// What needs no BE, backed up by the agent's steps on one real FE (fe of
// src, db its root) and restored on a new one: databases of views only, one
// named as only 4.1's FeNameFormat allows (`sales-2024`). On the way: a
// snapshot whose only __info_ file is an upload's .part is not taken for a
// finished backup (SHOW SNAPSHOT says Status OK with "Invalid: ..."); a
// READ ONLY repository is not created where no backup was (StarRocks would
// write __repo_info there); the source's repository is dropped after the
// restore.
// The source is TestRepositoryOnARealFrontend's FE: its repositories are
// other names in other places, and an FE's start costs more CPU than
// the backup. BACKUP DATABASE without ON takes every table of the
// database, views included (sql/analyzer/BackupRestoreAnalyzer, BackupStmt:
// "Backup all table/mv/view without ON clause"), so the database is not
// refused as empty (AuthorizerStmtVisitor.visitBackupStatement: "Database:
// %s is empty" only when no table and no function is named).
func viewsBackupAndRestore(t *testing.T, src *realfe.Cluster, fe *realfe.FE, db *sql.DB) {
	// The name a restore gives the source's repository (agentconfig
	// .RepositoryName of the source instance's UID).
	const sourceRepo = "d8ms_0b5e7c1d222243338444955566667777"
	dst := realfe.Start(t, realfe.Options{})
	// The new FE starts while the backup runs (WaitReady below).
	fe2 := dst.StartFE(t, 0)
	fe2.Bootstrap(t)
	// Each instance's FEs reach the host only on their own bridge: the
	// server listens on every host address, and each repository names
	// the one its FE reaches (the same bucket and location).
	s3 := s3server.StartWith(t, s3server.Options{Host: net.IPv4zero, PlainHTTP: true})
	s3.CreateBucket(t, bucket)
	_, port, _ := net.SplitHostPort(s3.Endpoint)
	on := func(c *realfe.Cluster) backup.Repository {
		r := realRepo(s3, sourceRepo)
		r.Storage.Endpoint = "http://" + net.JoinHostPort(c.HostIP.String(), port)
		return r
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := on(src)
	ensureInPasses(t, ctx, db, r)
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE VIEW shop.answers AS SELECT 42 AS answer, 'forty-two' AS spelled",
		"CREATE VIEW shop.doubled AS SELECT answer * 2 AS twice FROM shop.answers",
		"CREATE DATABASE `sales-2024`",
		"CREATE VIEW `sales-2024`.`q1` AS SELECT 'q1' AS quarter",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Not StarRocks' default of a day: the job must carry the one given.
	lim := backup.Limits{JobTimeout: 2 * time.Hour}

	t.Run("an unfinished __info_ file is no finished backup", func(t *testing.T) {
		// What a cancelled upload of the __info_ file leaves
		// (Repository.upload writes <name>.part, then renames it).
		label := backup.LabelPrefix + "part_1"
		key := prefix + "/__starrocks_repository_" + sourceRepo + "/__ss_" + label + "/__info_2026-12-05-03-00-05.part"
		if _, err := s3.Client(s3.AccessKey, s3.SecretKey).PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
			Body: strings.NewReader("{}")}); err != nil {
			t.Fatal(err)
		}
		var ts, status sql.NullString
		var name string
		if err := db.QueryRowContext(ctx, "SHOW SNAPSHOT ON `"+sourceRepo+"` WHERE SNAPSHOT = \""+label+"\"").Scan(&name, &ts, &status); err != nil {
			t.Fatal(err)
		}
		t.Logf("SHOW SNAPSHOT of a .part: Timestamp %q, Status %q", ts.String, status.String)
		got, err := backup.BackupStep(ctx, db, r, []backup.Database{{Name: "shop", Label: label}}, false, time.Now(), lim)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].State == backup.StateCompleted || got[0].Timestamp != "" {
			t.Fatalf("a snapshot with only %s taken for a finished backup: %+v", key, got[0])
		}
	})

	backupStart := time.Now()
	dbs := runSteps(t, func(d []backup.Database) ([]backup.Database, error) {
		return backup.BackupStep(ctx, db, r, d, false, time.Now(), lim)
	}, []backup.Database{{Name: "shop", Label: backup.LabelPrefix + "views_1"}, {Name: "sales-2024", Label: backup.LabelPrefix + "views_1_sales-2024"}})
	for _, d := range dbs {
		if d.State != backup.StateCompleted || d.Timestamp == "" {
			t.Fatalf("backup of the views: %+v\nFE:\n%s", d, fe.Tail())
		}
	}
	t.Logf("backup: %+v", dbs)
	checkJobColumns(t, db, "SHOW BACKUP FROM shop", "SnapshotName", dbs[0].Label)
	checkAdoptedStart(t, backupStart, func(d []backup.Database) ([]backup.Database, error) {
		return backup.BackupStep(ctx, db, r, d, false, time.Now().Add(time.Hour), lim)
	}, backup.Database{Name: "shop", Label: dbs[0].Label})

	fe2.WaitReady(t, realfe.StartTimeout)
	db2 := dst.DB(t, fe2, "root", "", false)

	t.Run("a READ ONLY repository is not created where no backup was", func(t *testing.T) {
		typo := on(dst)
		typo.Name, typo.ReadOnly = "d8ms_0b5e7c1d222243338444955566667778", true
		_, err := backup.EnsureRepository(ctx, db2, typo, "")
		if err == nil || !strings.Contains(err.Error(), "no repository "+typo.Name) {
			t.Fatalf("EnsureRepository of a source that is not there: %v", err)
		}
		if keys := s3.Keys(t, bucket, prefix+"/__starrocks_repository_"+typo.Name+"/"); len(keys) != 0 {
			t.Fatalf("the team's bucket got %v", keys)
		}
		if _, ok := repositories(t, db2)[typo.Name]; ok {
			t.Fatal("the repository was created")
		}
	})

	ro := on(dst)
	ro.ReadOnly = true
	ensureInPasses(t, ctx, db2, ro)
	var toRestore []backup.Database
	for _, d := range dbs {
		toRestore = append(toRestore, backup.Database{Name: d.Name, Label: d.Label, Timestamp: d.Timestamp})
	}
	restoreStart := time.Now()
	restored := runSteps(t, func(d []backup.Database) ([]backup.Database, error) {
		return backup.RestoreStep(ctx, db2, ro, d, 1, false, time.Now(), lim)
	}, toRestore)
	for _, d := range restored {
		if d.State != backup.StateCompleted {
			t.Fatalf("restore of the views: %+v\nFE:\n%s", d, fe2.Tail())
		}
	}
	var quarter string
	if err := db2.QueryRowContext(ctx, "SELECT quarter FROM `sales-2024`.`q1`").Scan(&quarter); err != nil || quarter != "q1" {
		t.Fatalf("the restored `sales-2024`.q1: %q, %v", quarter, err)
	}
	checkJobColumns(t, db2, "SHOW RESTORE FROM shop", "Label", dbs[0].Label)
	checkAdoptedStart(t, restoreStart, func(d []backup.Database) ([]backup.Database, error) {
		return backup.RestoreStep(ctx, db2, ro, d, 1, false, time.Now().Add(time.Hour), lim)
	}, toRestore[0])
	for _, v := range []string{"answers", "doubled"} {
		// Name, Create View, character_set_client, collation_connection.
		var name, create, cs, cc sql.NullString
		if err := db2.QueryRowContext(ctx, "SHOW CREATE VIEW shop."+v).Scan(&name, &create, &cs, &cc); err != nil {
			t.Fatalf("SHOW CREATE VIEW shop.%s on the second FE: %v", v, err)
		}
		if !strings.Contains(create.String, "answer") {
			t.Fatalf("view %s restored as %q", v, create.String)
		}
	}

	t.Run("the source's repository is dropped after the restore, its backups stay", func(t *testing.T) {
		var runner backup.Runner
		if err := runner.DropRestoreSources(ctx, db2); err != nil {
			t.Fatal(err)
		}
		if _, ok := repositories(t, db2)[ro.Name]; ok || !runner.SourcesDropped() {
			t.Fatalf("the source's repository is still attached: %v", repositories(t, db2))
		}
		if keys := s3.Keys(t, bucket, prefix+"/__starrocks_repository_"+ro.Name+"/__ss_"+dbs[0].Label+"/"); len(keys) == 0 {
			t.Fatal("the backup's files went with the repository")
		}
		// The source instance's own (writable) repository is not the
		// restore's business.
		if err := (&backup.Runner{}).DropRestoreSources(ctx, db); err != nil {
			t.Fatal(err)
		}
		if _, ok := repositories(t, db)[r.Name]; !ok {
			t.Fatal("a writable repository was dropped")
		}
	})
}

// checkJobColumns: the job of label ran with the 2-hour timeout the steps
// gave it (the Timeout column, seconds: BackupJob.getInfo and
// RestoreJob.getInfo, timeoutMs / 1000), and shows the columns the agent
// judges progress by.
func checkJobColumns(t *testing.T, db *sql.DB, show, labelColumn, label string) {
	t.Helper()
	rows, err := sqlrows.QueryMaps(context.Background(), db, show)
	if err != nil {
		t.Fatalf("%s: %v", show, err)
	}
	for _, m := range rows {
		if m[labelColumn] != label {
			continue
		}
		if m["Timeout"] != "7200" {
			t.Errorf("%s: Timeout %q, want the 7200 s the job was given", show, m["Timeout"])
		}
		for _, c := range []string{"UnfinishedTasks", "Progress"} {
			if _, ok := m[c]; !ok {
				t.Errorf("%s has no column %s: %v", show, c, m)
			}
		}
		return
	}
	t.Fatalf("%s shows no job %s: %v", show, label, rows)
}

// checkAdoptedStart: a restarted agent (a Database of only its name and
// label, an hour later) adopts the finished job and takes its start from
// the job's CreateTime, which StarRocks shows in a fixed +08:00 whatever
// the FE's zone (this FE runs in UTC): the start lies between when the
// steps began and now, not an hour ahead nor eight hours off.
func checkAdoptedStart(t *testing.T, began time.Time, step func([]backup.Database) ([]backup.Database, error), d backup.Database) {
	t.Helper()
	got, err := step([]backup.Database{d})
	if err != nil {
		t.Fatal(err)
	}
	if s := got[0].Submitted; s.Before(began.Add(-time.Second)) || s.After(time.Now().Add(time.Second)) {
		t.Errorf("the adopted job of %s started at %s, want between %s and now (%+v)", d.Label, s.UTC(), began.UTC(), got[0])
	}
}
