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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const instanceUID = "6f1c2a9e-1111-4222-8333-944455556666"

func (e *env) contractRepo(readOnly bool) agentconfig.Repository {
	r := agentconfig.Repository{
		Name:        agentconfig.RepositoryName(instanceUID),
		Location:    agentconfig.RepositoryLocation(bucket, "backups", "team-ns", "sr", instanceUID),
		Endpoint:    e.s3.URL(),
		Region:      "us-east-1",
		PathStyle:   true,
		EnableSSL:   true,
		Credentials: agentconfig.S3Credentials{SecretName: "s3-keys", AccessKeyIDKey: "AWS_ACCESS_KEY_ID", SecretAccessKeyKey: "AWS_SECRET_ACCESS_KEY"},
		CA:          &agentconfig.SecretKeyRef{Name: "s3-ca", Key: "ca.crt"},
		ReadOnly:    readOnly,
	}
	r.Token = agentconfig.RepositoryToken(r)
	return r
}

func (e *env) teamSecrets() secrets {
	return secrets{
		"s3-keys": {"AWS_ACCESS_KEY_ID": []byte(e.s3.AccessKey), "AWS_SECRET_ACCESS_KEY": []byte(e.s3.SecretKey)},
		"s3-ca":   {"ca.crt": e.s3.CA.CertPEM},
	}
}

func set(name string) agentconfig.BackupSet {
	uid := uidOf(name)
	return agentconfig.BackupSet{Name: name, UID: uid, LabelPrefix: agentconfig.BackupLabelPrefix(uid)}
}

// TestRunnerFollowsTheContract: rows -> a scheduled set -> objects in the
// bucket -> retention deletes it -> ... and a restore into a new instance.
func TestRunnerFollowsTheContract(t *testing.T) {
	e := newEnv(t)
	src := e.fe()
	src.exec(t, "CREATE DATABASE sales", "CREATE DATABASE empty_db",
		"CREATE TABLE sales.orders (id INT, item STRING)", "INSERT INTO sales.orders VALUES (1, 'apple'), (2, 'pear')")
	run := &backup.Runner{Secrets: e.teamSecrets()}
	cfg := &agentconfig.Config{QueryHost: "sr-fe.team-ns.svc", QueryPort: 9030, Frontends: []string{"sr-fe-0"}, EditLogPort: 9010, HeartbeatPort: 9050,
		Backup: &agentconfig.BackupConfig{Repository: e.contractRepo(false),
			Sets: []agentconfig.BackupSet{set("sr-20261204-2200"), set("sr-20261204-2300")}}}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the test's Config breaks the contract: %v", err)
	}
	var reports []string
	pass := func(c *agentconfig.Config) *agentconfig.BackupStatus {
		st := run.Backup(ctx, src.db, c.Backup, c.BackupHold != "", "4.1.2")
		b, _ := json.Marshal(st)
		reports = append(reports, string(b))
		return st
	}

	t.Run("hold starts nothing", func(t *testing.T) {
		cfg.BackupHold = agentconfig.BackupHoldRollout
		st := pass(cfg)
		cfg.BackupHold = ""
		if !st.Repository.Ready || st.Sets[0].Phase != agentconfig.BackupPhasePending {
			t.Fatalf("%+v", st)
		}
		if !strings.Contains(st.Sets[0].Message, "the next database starts once the instance's pod restarts or BE scale-in are done") {
			t.Fatalf("a held set does not say what it waits for: %+v", st.Sets[0])
		}
	})

	var st *agentconfig.BackupStatus
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st = pass(cfg)
		if st.Sets[1].CompletionTime != "" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for i, s := range st.Sets {
		if s.Phase != agentconfig.BackupPhaseCompleted || s.StarrocksVersion != "4.1.2" || s.StartTime == "" {
			t.Fatalf("set %d: %+v", i, s)
		}
		byName := map[string]agentconfig.BackupDatabaseStatus{}
		for _, d := range s.Databases {
			byName[d.Name] = d
		}
		if byName["sales"].State != agentconfig.BackupStateFinished || byName["sales"].BackupTimestamp == "" ||
			byName["empty_db"].State != agentconfig.BackupDatabaseSkipped || len(byName) != 2 {
			t.Fatalf("set %d databases: %+v", i, s.Databases)
		}
	}
	first := st.Sets[0].Databases[1]
	if first.Name != "sales" {
		first = st.Sets[0].Databases[0]
	}
	repoDir := "backups/team-ns/sr-6f1c2a9e/__starrocks_repository_" + cfg.Backup.Repository.Name + "/"
	if keys := e.s3.Keys(t, bucket, repoDir+"__ss_"+first.Label+"/"); len(keys) < 3 {
		t.Fatalf("objects of %s: %v", first.Label, keys)
	}

	t.Run("a repository dropped by the team's admin is re-created and reported", func(t *testing.T) {
		src.exec(t, "DROP REPOSITORY "+cfg.Backup.Repository.Name)
		st := pass(cfg)
		if !st.Repository.Ready || st.Repository.RecreatedAt == "" || !strings.Contains(st.Repository.Message, "created again") {
			t.Fatalf("%+v", st.Repository)
		}
	})
	t.Run("a Secret without the keys is reported by name", func(t *testing.T) {
		bad := &backup.Runner{Secrets: secrets{"s3-keys": {"AWS_ACCESS_KEY_ID": []byte("x")}, "s3-ca": e.teamSecrets()["s3-ca"]}}
		st := bad.Backup(ctx, src.db, cfg.Backup, false, "4.1.2")
		if st.Repository.Ready || st.Repository.Reason != backup.ReasonCredentialsMissing ||
			!strings.Contains(st.Repository.Message, `no key "AWS_SECRET_ACCESS_KEY"`) {
			t.Fatalf("%+v", st.Repository)
		}
	})
	t.Run("retention deletes the first set's snapshots and nothing else", func(t *testing.T) {
		before := e.s3.Keys(t, bucket, repoDir)
		c := *cfg.Backup
		c.Sets = c.Sets[1:]
		old := set("sr-20261204-2200")
		c.Deletes = []agentconfig.BackupDelete{{Name: old.Name, UID: old.UID, LabelPrefix: old.LabelPrefix}}
		st := run.Backup(ctx, src.db, &c, false, "4.1.2")
		if len(st.Deleted) != 1 || st.Deleted[0] != old.UID || len(st.DeleteErrors) != 0 {
			t.Fatalf("%+v", st)
		}
		after := e.s3.Keys(t, bucket, repoDir)
		for _, k := range before {
			gone := !contains(after, k)
			if gone != strings.Contains(k, "/__ss_"+old.LabelPrefix+"_") {
				t.Fatalf("%s: gone=%v", k, gone)
			}
		}
	})

	t.Run("a new instance restores the second set", func(t *testing.T) {
		dst := e.fe()
		var dbs []agentconfig.RestoreDatabase
		for _, d := range st.Sets[1].Databases {
			if d.State == agentconfig.BackupStateFinished {
				dbs = append(dbs, agentconfig.RestoreDatabase{Name: d.Name, Label: d.Label, BackupTimestamp: d.BackupTimestamp})
			}
		}
		rc := &agentconfig.RestoreConfig{Token: "0123456789abcdef", Repository: e.contractRepo(true), Databases: dbs, ReplicationNum: 1}
		rcfg := *cfg
		rcfg.Backup, rcfg.Restore = nil, rc
		if err := rcfg.Validate(); err != nil {
			t.Fatalf("the test's Config breaks the contract: %v", err)
		}
		rrun := &backup.Runner{Secrets: e.teamSecrets()}
		var rs *agentconfig.RestoreStatus
		rs = rrun.Restore(ctx, dst.db, rc, true)
		if rs.Phase != agentconfig.BackupPhaseRunning || rs.StartTime != "" || rs.Databases[0].State != agentconfig.BackupDatabaseWaiting {
			t.Fatalf("under hold: %+v", rs)
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			rs = rrun.Restore(ctx, dst.db, rc, false)
			b, _ := json.Marshal(rs)
			reports = append(reports, string(b))
			if rs.CompletionTime != "" {
				break
			}
		}
		if rs.Phase != agentconfig.BackupPhaseCompleted || len(rs.Databases) != 1 || rs.Databases[0].State != agentconfig.BackupStateFinished {
			t.Fatalf("%+v", rs)
		}
		if got := fmt.Sprint(dst.fe.TableRows("sales", "orders")); got != "[[1 apple] [2 pear]]" {
			t.Fatalf("rows after the restore: %s", got)
		}
	})
	noKeys(t, e.keys(), reports...)
}
