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

package desired

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const backupUID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"

func backupClassDesired() *v1alpha1.StarrocksClass {
	cl := class()
	cl.Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true}
	return cl
}

func backedUp(ns, name string) *v1alpha1.Starrocks {
	sr := instance(ns, name)
	sr.UID = backupUID
	sr.Spec.Backup = &v1alpha1.BackupSpec{
		Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com:9000", Region: "us-east-1", Bucket: "team-backups", Prefix: "sr/prod", PathStyle: true,
			CASecretRef:          &v1alpha1.BackupSecretKeyRef{Name: "s3-ca"},
			CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"}},
		Schedule:  "0 3 * * *",
		Retention: &v1alpha1.BackupRetention{KeepLast: ptr(int32(7))},
	}
	return sr
}

func setRef(i int) agentconfig.BackupSet {
	uid := fmt.Sprintf("11112222-3333-4444-5555-%012d", i)
	return agentconfig.BackupSet{Name: fmt.Sprintf("olap-%d", i), UID: uid, LabelPrefix: agentconfig.BackupLabelPrefix(uid)}
}

func TestBackupEntry(t *testing.T) {
	sets := make([]agentconfig.BackupSet, 0, 30)
	deletes := make([]agentconfig.BackupDelete, 0, 30)
	for i := range 30 {
		s := setRef(i)
		sets = append(sets, s)
		deletes = append(deletes, agentconfig.BackupDelete{Name: s.Name, UID: s.UID, LabelPrefix: s.LabelPrefix})
	}
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{backedUp("team-a", "olap")}, Classes: []*v1alpha1.StarrocksClass{backupClassDesired()},
		Existing: map[string]Existing{"team-a/olap": {AccountsReady: true, BackupSets: sets, BackupDeletes: deletes, BackupHold: agentconfig.BackupHoldRollout}}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	e := out.Instances[0]
	b := e.AgentConfig.Backup
	require.NotNil(t, b)
	assert.Equal(t, "d8ms_0b1c2d3e4f5061728394a5b6c7d8e9f0", b.Repository.Name)
	assert.Equal(t, "s3://team-backups/sr/prod/team-a/olap-0b1c2d3e", b.Repository.Location)
	assert.Equal(t, agentconfig.S3Credentials{SecretName: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"}, b.Repository.Credentials)
	assert.Equal(t, &agentconfig.SecretKeyRef{Name: "s3-ca", Key: "ca.crt"}, b.Repository.CA)
	assert.True(t, b.Repository.EnableSSL)
	// Bounded whatever the number of StarrocksBackup objects.
	assert.Len(t, b.Sets, agentconfig.MaxBackupSets)
	assert.Len(t, b.Deletes, agentconfig.MaxBackupDeletes)
	assert.Equal(t, agentconfig.BackupHoldRollout, e.AgentConfig.BackupHold)
	assert.Equal(t, int64(86400), e.AgentConfig.BackupJobTimeoutSeconds, "StarRocks' day, explicitly, where the class sets none")
	require.NoError(t, e.AgentConfig.Validate())
	requireEntriesValid(t, out.Instances)
	assert.Equal(t, []string{"s3-keys", "s3-ca"}, BackupSecretNames(&e.AgentConfig))

	// The persisted entry is not changed by the observed sets of a run.
	last := e
	last.AgentConfig.Backup = &agentconfig.BackupConfig{Repository: b.Repository}
	applied := applyExisting(last, Existing{BackupSets: sets[:1]})
	assert.Empty(t, last.AgentConfig.Backup.Sets)
	assert.Len(t, applied.AgentConfig.Backup.Sets, 1)
}

// The class's job timeout reaches the agent, which passes it to every job.
func TestBackupJobTimeoutComesFromTheClass(t *testing.T) {
	class := backupClassDesired()
	class.Spec.Backup.JobTimeout = "72h"
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{backedUp("team-a", "olap")}, Classes: []*v1alpha1.StarrocksClass{class},
		Existing: map[string]Existing{"team-a/olap": {AccountsReady: true}}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	assert.Equal(t, int64(72*3600), out.Instances[0].AgentConfig.BackupJobTimeoutSeconds)
	require.NoError(t, out.Instances[0].AgentConfig.Validate())
}

func TestRestoreKeepsClientPortsClosed(t *testing.T) {
	sr := backedUp("team-a", "copy")
	sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: "olap-1"}
	bk := &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: "olap-1", Namespace: "team-a"}, Status: v1alpha1.StarrocksBackupStatus{
		Phase: v1alpha1.BackupPhaseCompleted, InstanceUID: "99998888-7777-6666-5555-444433332222", Location: "s3://team-backups/sr/prod/team-a/olap-99998888",
		Databases: []v1alpha1.BackupDatabaseStatus{
			{Name: "sales", Label: "d8ms_1111222233334444_sales", BackupTimestamp: "2026-12-04-03-00-05", State: agentconfig.BackupStateFinished},
			{Name: "empty", State: agentconfig.BackupDatabaseSkipped},
			{Name: "broken", Label: "d8ms_1111222233334444_broken", State: agentconfig.BackupStateCancelled},
		}}}
	from := RestoreFromBackup(sr, bk)
	require.NotNil(t, from)
	assert.Equal(t, "s3://team-backups/sr/prod/team-a/olap-99998888", from.Repository.Location)
	assert.Equal(t, "d8ms_9999888877776666555544443333222"+"2", from.Repository.Name)
	assert.True(t, from.Repository.ReadOnly)
	require.Len(t, from.Databases, 1, "only finished databases restore")
	rc := RestoreConfig(string(sr.UID), from, 3)
	require.NotNil(t, rc)
	assert.Equal(t, 3, rc.ReplicationNum)
	assert.Equal(t, 1, RestoreConfig(string(sr.UID), from, 1).ReplicationNum)
	assert.Equal(t, 3, RestoreConfig(string(sr.UID), from, 7).ReplicationNum)

	out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{backupClassDesired()},
		Existing: map[string]Existing{"team-a/copy": {AccountsReady: true, Restore: rc, RestorePending: true}}})
	require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
	assert.False(t, out.Instances[0].Network.ClientPortsOpen, "client ports open during a restore")
	require.NoError(t, out.Instances[0].AgentConfig.Validate())
	requireEntriesValid(t, out.Instances)
	assert.Equal(t, []string{"s3-keys", "s3-ca", "s3-keys", "s3-ca"}, BackupSecretNames(&out.Instances[0].AgentConfig))
	// The backup storage's CA reaches the FE's trust store; a restore from
	// a StarrocksBackup reads that same storage.
	assert.Equal(t, []TrustedCA{{SecretName: "s3-ca", Key: "ca.crt", File: "backup.crt"}}, out.Instances[0].Frontend.TrustedCAs)
	// Once the restore has ended the FE keeps its trust store and its
	// checksum: a change would restart the FEs, and the rollout would hold
	// every backup until it ends.
	restored := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{backupClassDesired()},
		Existing: map[string]Existing{"team-a/copy": {AccountsReady: true}}})
	require.Len(t, restored.Instances, 1)
	assert.Equal(t, out.Instances[0].Frontend.TrustedCAs, restored.Instances[0].Frontend.TrustedCAs)
	assert.Equal(t, out.Instances[0].Frontend.ConfigChecksum, restored.Instances[0].Frontend.ConfigChecksum, "the FEs restart once the restore ends")

	// The source of a restore by location derives its labels from the backup's UID.
	sr.Spec.Restore = &v1alpha1.RestoreSpec{Source: &v1alpha1.RestoreSource{Storage: sr.Spec.Backup.Storage, Namespace: "team-a", InstanceName: "olap",
		InstanceUID: "99998888-7777-6666-5555-444433332222", BackupID: "11112222-3333-4444-5555-666677778888",
		Databases: []v1alpha1.RestoreSourceDatabase{{Name: "sales", BackupTimestamp: "2026-12-04-03-00-05"}}}}
	src := RestoreFromSource(sr)
	require.NotNil(t, src)
	assert.Equal(t, "d8ms_1111222233334444_sales", src.Databases[0].Label)
	assert.Equal(t, "s3://team-backups/sr/prod/team-a/olap-99998888", src.Repository.Location)
	// Its storage's CA is the FE's too, before and after the restore (the
	// source is immutable), in a fixed order after the backup's.
	for _, ex := range []Existing{{AccountsReady: true, Restore: RestoreConfig(string(sr.UID), src, 1), RestorePending: true}, {AccountsReady: true}} {
		out := Compute(Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{backupClassDesired()},
			Existing: map[string]Existing{"team-a/copy": ex}})
		require.Len(t, out.Instances, 1, "%v", out.Results[0].Violations)
		assert.Equal(t, []TrustedCA{{SecretName: "s3-ca", Key: "ca.crt", File: "backup.crt"}, {SecretName: "s3-ca", Key: "ca.crt", File: "restore.crt"}},
			out.Instances[0].Frontend.TrustedCAs)
	}
}

// Every string of the backup part of an entry has a pattern in the schema:
// an entry carrying a hostile one is refused before it is written or rendered.
func TestBackupEntryRefusesHostileStrings(t *testing.T) {
	out := Compute(Input{Instances: []*v1alpha1.Starrocks{backedUp("team-a", "olap")}, Classes: []*v1alpha1.StarrocksClass{backupClassDesired()},
		Existing: map[string]Existing{"team-a/olap": {BackupSets: []agentconfig.BackupSet{setRef(1)}}}})
	require.Len(t, out.Instances, 1)
	base, err := json.Marshal(out.Instances[0])
	require.NoError(t, err)
	hostile := []string{"a\"b", "a\nkind: Secret", "{{ .Values }}", "x`; DROP", "https://u:p@h/x?y", strings.Repeat("a", 2000)}
	paths := [][]string{
		{"agentConfig", "backup", "repository", "name"},
		{"agentConfig", "backup", "repository", "location"},
		{"agentConfig", "backup", "repository", "endpoint"},
		{"agentConfig", "backup", "repository", "region"},
		{"agentConfig", "backup", "repository", "token"},
		{"agentConfig", "backup", "repository", "credentials", "secretName"},
		{"agentConfig", "backup", "repository", "credentials", "accessKeyIdKey"},
		{"agentConfig", "backup", "repository", "credentials", "secretAccessKeyKey"},
		{"agentConfig", "backup", "repository", "ca", "name"},
		{"agentConfig", "backup", "repository", "ca", "key"},
		{"agentConfig", "backup", "sets", "0", "name"},
		{"agentConfig", "backup", "sets", "0", "uid"},
		{"agentConfig", "backup", "sets", "0", "labelPrefix"},
		{"agentConfig", "backupHold"},
	}
	for _, p := range paths {
		for _, v := range hostile {
			var m map[string]any
			require.NoError(t, json.Unmarshal(base, &m))
			var cur any = m
			for i, k := range p {
				last := i == len(p)-1
				switch node := cur.(type) {
				case map[string]any:
					if last {
						node[k] = v
					} else {
						cur = node[k]
					}
				case []any:
					var idx int
					fmt.Sscan(k, &idx)
					cur = node[idx]
				}
			}
			data, _ := json.Marshal(m)
			assert.Error(t, ValidateEntry(data), "%s = %q passed the schema", strings.Join(p, "."), v)
		}
	}
	// A key can never be in an entry: the schema has no place for one.
	var m map[string]any
	require.NoError(t, json.Unmarshal(base, &m))
	m["agentConfig"].(map[string]any)["backup"].(map[string]any)["repository"].(map[string]any)["secretKey"] = "AKIA..."
	data, _ := json.Marshal(m)
	assert.ErrorContains(t, ValidateEntry(data), "secretKey")
}
