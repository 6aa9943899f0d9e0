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

package agent_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestBackupThroughTheAgent: the leader's agent reads the keys from the
// team's Secret, creates the repository, backs up the set and publishes
// its progress; neither key is in any log line or status, not even after
// StarRocks refused the repository with wrong keys.
func TestBackupThroughTheAgent(t *testing.T) {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, "team-bucket")
	e := newEnv(t, envOptions{serverPassword: rootPass})
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true, Version: "4.1.2-abcdef0"})
	e.fe.SetS3RootCAs(s3.RootCAs)
	e.fe.SetBackupStep(2 * time.Millisecond)

	// A follower answers behind the client Service. SHOW RESTORE, SHOW
	// SNAPSHOT, SHOW REPOSITORIES and SHOW TABLES are not forwarded to the
	// leader (fe-core qe/RedirectStatus), so a follower's answers are its
	// replayed, late state: the backup is the leader's own FE's business
	// (the agent's connection to its pod), never the Service's.
	follower := fakefe.Start(t, fakefe.Options{TLS: e.serverTLS(), RootPassword: rootPass})
	follower.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true, Version: "4.1.2-abcdef0"})
	// Its accounts as StarRocks would have replicated them: an agent
	// that reaches only the follower sets them up there first.
	boot := e.options(fe0)
	boot.DialFunc = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, follower.Addr())
	}
	bootAgent := agent.New(boot)
	bootAgent.LoadCertificates()
	bootAgent.Pass(ctxT(t))

	const uid = "0b5e7c1d-2222-4333-8444-955566667777"
	setUID := "a1b2c3d4-1111-4222-8333-944455556666"
	repo := agentconfig.Repository{
		Name:        agentconfig.RepositoryName(uid),
		Location:    agentconfig.RepositoryLocation("team-bucket", "", "ns", "demo", uid),
		Endpoint:    s3.URL(),
		PathStyle:   true,
		EnableSSL:   true,
		Credentials: agentconfig.S3Credentials{SecretName: "s3-keys", AccessKeyIDKey: "access", SecretAccessKeyKey: "secret"},
		CA:          &agentconfig.SecretKeyRef{Name: "s3-ca", Key: "ca.crt"},
	}
	repo.Token = agentconfig.RepositoryToken(repo)
	e.cfg.Backup = &agentconfig.BackupConfig{Repository: repo, Sets: []agentconfig.BackupSet{
		{Name: "demo-now", UID: setUID, LabelPrefix: agentconfig.BackupLabelPrefix(setUID)}}}
	e.writeConfig(t)

	u := &usersEnv{env: e, store: newMemSecrets(), pub: &recordingPublisher{}}
	const wrongSecret = "WrongSecretKeyZ9y8x7w6v5"
	u.store.set("s3-keys", map[string]string{"access": s3.AccessKey, "secret": wrongSecret})
	u.store.set("s3-ca", map[string]string{"ca.crt": string(s3.CA.CertPEM)})
	a, logs := u.newAgentWith(t, func(o *agent.Options) {
		o.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			to := e.fe.Addr()
			if host, _, _ := net.SplitHostPort(addr); host == queryHost {
				to = follower.Addr()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, to)
		}
	})

	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", e.fe.Addr()
	conn, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{"CREATE DATABASE sales", "CREATE TABLE sales.orders (id INT, item STRING)", "INSERT INTO sales.orders VALUES (1, 'apple')"} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}

	a.Pass(ctxT(t))
	st := u.pub.last()
	require.NotNil(t, st.Backup)
	require.False(t, st.Backup.Repository.Ready)
	require.Equal(t, "RepositoryRefused", st.Backup.Repository.Reason)
	require.Contains(t, st.Backup.Repository.Message, "SignatureDoesNotMatch")

	u.store.set("s3-keys", map[string]string{"access": s3.AccessKey, "secret": s3.SecretKey})
	require.Eventually(t, func() bool {
		a.Pass(ctxT(t))
		b := u.pub.last().Backup
		return b != nil && len(b.Sets) == 1 && b.Sets[0].CompletionTime != ""
	}, 30*time.Second, 5*time.Millisecond)
	set := u.pub.last().Backup.Sets[0]
	require.Equal(t, agentconfig.BackupPhaseCompleted, set.Phase, "%+v", set)
	require.Equal(t, "4.1.2-abcdef0", set.StarrocksVersion)
	require.Len(t, set.Databases, 1)
	require.Equal(t, agentconfig.BackupStateFinished, set.Databases[0].State)
	require.NotEmpty(t, set.Databases[0].BackupTimestamp)
	keys := s3.Keys(t, "team-bucket", "ns/demo-0b5e7c1d/__starrocks_repository_"+repo.Name+"/__ss_"+set.Databases[0].Label+"/")
	require.GreaterOrEqual(t, len(keys), 3, "%v", keys)

	fcfg := mysql.NewConfig()
	fcfg.User, fcfg.Passwd, fcfg.Net, fcfg.Addr = "root", rootPass, "tcp", follower.Addr()
	fconn, err := mysql.NewConnector(fcfg)
	require.NoError(t, err)
	fdb := sql.OpenDB(fconn)
	t.Cleanup(func() { fdb.Close() })
	for _, q := range []string{"SHOW REPOSITORIES", "SHOW BACKUP"} {
		rows, err := fdb.Query(q)
		require.NoError(t, err, q)
		require.False(t, rows.Next(), "%s on the follower behind the Service: the backup went there", q)
		rows.Close()
	}

	statuses, _ := json.Marshal(u.pub.all)
	require.True(t, strings.Contains(logs.String(), "backup set"), "the phases are logged")
	requireAbsent(t, logs.String(), s3.SecretKey, wrongSecret, s3.AccessKey)
	requireAbsent(t, string(statuses), s3.SecretKey, wrongSecret, s3.AccessKey)
}

// TestRestoreComesBeforeTheDeclaredAccounts: an instance made from a
// backup restores first; its declared databases, roles and users are
// applied once the restore Completed, so nothing the team
// declared is created in a database StarRocks is still restoring into,
// and UsersReady says why it waits.
func TestRestoreComesBeforeTheDeclaredAccounts(t *testing.T) {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, "team-bucket")
	const uid = "0b5e7c1d-2222-4333-8444-955566667777"
	setUID := "a1b2c3d4-1111-4222-8333-944455556666"
	repo := agentconfig.Repository{
		Name:        agentconfig.RepositoryName(uid),
		Location:    agentconfig.RepositoryLocation("team-bucket", "", "ns", "demo", uid),
		Endpoint:    s3.URL(),
		PathStyle:   true,
		EnableSSL:   true,
		Credentials: agentconfig.S3Credentials{SecretName: "s3-keys", AccessKeyIDKey: "access", SecretAccessKeyKey: "secret"},
		CA:          &agentconfig.SecretKeyRef{Name: "s3-ca", Key: "ca.crt"},
	}
	repo.Token = agentconfig.RepositoryToken(repo)
	keys := func(u *usersEnv) {
		u.store.set("s3-keys", map[string]string{"access": s3.AccessKey, "secret": s3.SecretKey})
		u.store.set("s3-ca", map[string]string{"ca.crt": string(s3.CA.CertPEM)})
	}

	// The source backs sales up.
	src := newEnv(t, envOptions{serverPassword: rootPass})
	src.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	src.fe.SetS3RootCAs(s3.RootCAs)
	src.fe.SetBackupStep(2 * time.Millisecond)
	src.cfg.Backup = &agentconfig.BackupConfig{Repository: repo, Sets: []agentconfig.BackupSet{
		{Name: "demo-now", UID: setUID, LabelPrefix: agentconfig.BackupLabelPrefix(setUID)}}}
	src.writeConfig(t)
	su := &usersEnv{env: src, store: newMemSecrets(), pub: &recordingPublisher{}}
	keys(su)
	sa, _ := su.newAgent(t)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", src.fe.Addr()
	conn, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{"CREATE DATABASE sales", "CREATE TABLE sales.orders (id INT, item STRING)", "INSERT INTO sales.orders VALUES (1, 'apple')"} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.Eventually(t, func() bool {
		sa.Pass(ctxT(t))
		b := su.pub.last().Backup
		return b != nil && len(b.Sets) == 1 && b.Sets[0].CompletionTime != ""
	}, 30*time.Second, 5*time.Millisecond)
	set := su.pub.last().Backup.Sets[0]
	require.Equal(t, agentconfig.BackupPhaseCompleted, set.Phase, "%+v", set)

	// The new instance restores it, with accounts declared.
	u := newUsersEnv(t, "WRITERPASSWORD234567", "reader-password-1")
	u.fe.SetS3RootCAs(s3.RootCAs)
	u.fe.SetBackupStep(2 * time.Millisecond)
	u.fe.HoldJobs(true)
	keys(u)
	ro := repo
	ro.ReadOnly = true
	ro.Token = agentconfig.RepositoryToken(ro)
	u.cfg.Restore = &agentconfig.RestoreConfig{Token: "0123456789abcdef", Repository: ro, ReplicationNum: 1,
		Databases: []agentconfig.RestoreDatabase{{Name: "sales", Label: set.Databases[0].Label, BackupTimestamp: set.Databases[0].BackupTimestamp}}}
	u.writeConfig(t)
	for range 3 {
		st := u.pass(t)
		require.NotNil(t, st.Restore)
		require.Equal(t, agentconfig.BackupPhaseRunning, st.Restore.Phase, "%+v", st.Restore)
		require.NotNil(t, st.Users)
		require.False(t, st.Users.Ready)
		require.Equal(t, "RestorePending", st.Users.Reason, "%+v", st.Users)
		require.NotContains(t, u.fe.UserNames(), "writer_app", "a declared user was created while the restore runs")
		require.NotContains(t, u.fe.Databases(), "logs", "a declared database was created while the restore runs")
	}
	u.fe.HoldJobs(false)
	require.Eventually(t, func() bool {
		st := u.pass(t)
		return st.Restore != nil && st.Restore.Phase == agentconfig.BackupPhaseCompleted && st.Users != nil && st.Users.Reason != "RestorePending"
	}, 30*time.Second, 5*time.Millisecond, "%+v", u.a.Status().Users)
	require.Contains(t, u.fe.UserNames(), "writer_app")
	require.Equal(t, "[[1 apple]]", fmt.Sprint(u.fe.TableRows("sales", "orders")))
}
