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
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// The backup part of an instance entry. Build puts the
// instance's repository into agentConfig.backup from spec.backup; what runs
// on it (sets, deletions), whether jobs wait (backupHold) and the restore
// come from the cluster (StarrocksBackup objects, the rollout, the restore
// source) through Existing, as the other observed facts do. The keys never
// enter the entry: only the Secret's name and key names, which the agent's
// Role lists by name (pkg/instanceobjects rbac-for-us.yaml).

// BackupRepository is the instance's own repository for spec.backup.storage.
func BackupRepository(sr *v1alpha1.Starrocks) *agentconfig.Repository {
	if sr.Spec.Backup == nil {
		return nil
	}
	r := repositoryFor(sr.Spec.Backup.Storage, string(sr.UID), sr.Namespace, sr.Name, false)
	return &r
}

// backupConfig is agentConfig.backup without sets and deletions (those are
// observed: applyExisting).
func backupConfig(sr *v1alpha1.Starrocks) *agentconfig.BackupConfig {
	r := BackupRepository(sr)
	if r == nil {
		return nil
	}
	return &agentconfig.BackupConfig{Repository: *r}
}

// backupJobTimeoutSeconds is agentConfig.backupJobTimeoutSeconds: the
// class's job timeout where the class allows backups and restores (0, the
// agent's default of a day, where it does not: no job runs there).
func backupJobTimeoutSeconds(class *v1alpha1.StarrocksClass) int64 {
	if class == nil || class.Spec.Backup == nil {
		return 0
	}
	return int64(classrules.BackupJobTimeout(class) / time.Second)
}

// RestoreRepository is the source's repository of a restore by location:
// the name the source instance's UID gives it at the location the module
// gave it, READ ONLY (the same name at the same location re-attaches the
// snapshots; the restore never writes into its source).
func RestoreRepository(storage v1alpha1.BackupStorage, sourceNamespace, sourceName, sourceUID string) agentconfig.Repository {
	return repositoryFor(storage, sourceUID, sourceNamespace, sourceName, true)
}

func repositoryFor(s v1alpha1.BackupStorage, uid, namespace, name string, readOnly bool) agentconfig.Repository {
	ref := s.CredentialsSecretRef
	r := agentconfig.Repository{
		Name:      agentconfig.RepositoryName(uid),
		Location:  agentconfig.RepositoryLocation(s.Bucket, s.Prefix, namespace, name, uid),
		Endpoint:  s.Endpoint,
		Region:    s.Region,
		PathStyle: s.PathStyle,
		EnableSSL: strings.HasPrefix(s.Endpoint, "https://"),
		Credentials: agentconfig.S3Credentials{
			SecretName:         ref.Name,
			AccessKeyIDKey:     orDefault(ref.AccessKeyIDKey, "accessKeyID"),
			SecretAccessKeyKey: orDefault(ref.SecretAccessKeyKey, "secretAccessKey"),
		},
		ReadOnly: readOnly,
	}
	if ca := s.CASecretRef; ca != nil {
		r.CA = &agentconfig.SecretKeyRef{Name: ca.Name, Key: orDefault(ca.Key, "ca.crt")}
	}
	r.Token = agentconfig.RepositoryToken(r)
	return r
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// RestoreFrom is what the hooks found for spec.restore: the source
// repository and the snapshots of each database (from the StarrocksBackup's
// status, or from spec.restore.source).
type RestoreFrom struct {
	Repository agentconfig.Repository
	Databases  []agentconfig.RestoreDatabase
}

// RestoreFromSource is the restore of spec.restore.source (a backup whose
// object is gone): every label is derived from the backup's UID, as the
// module named it when it made the backup.
func RestoreFromSource(sr *v1alpha1.Starrocks) *RestoreFrom {
	r := sr.Spec.Restore
	if r == nil || r.Source == nil {
		return nil
	}
	s := r.Source
	prefix := agentconfig.BackupLabelPrefix(s.BackupID)
	out := &RestoreFrom{Repository: RestoreRepository(s.Storage, s.Namespace, s.InstanceName, s.InstanceUID)}
	for _, d := range s.Databases {
		if len(r.Databases) > 0 && !contains(r.Databases, d.Name) {
			continue
		}
		out.Databases = append(out.Databases, agentconfig.RestoreDatabase{Name: d.Name, Label: agentconfig.BackupLabel(prefix, d.Name), BackupTimestamp: d.BackupTimestamp})
	}
	return out
}

// RestoreFromBackup is the restore of spec.restore.backupName: the
// StarrocksBackup's status names the databases, labels and timestamps, the
// source instance's UID and the location; the endpoint and keys are the new
// instance's spec.backup.storage (the team's bucket: classrules refuses a
// restore by name without spec.backup). Nil when the backup says too little.
func RestoreFromBackup(sr *v1alpha1.Starrocks, b *v1alpha1.StarrocksBackup) *RestoreFrom {
	r := sr.Spec.Restore
	if r == nil || b == nil || sr.Spec.Backup == nil || b.Status.InstanceUID == "" || b.Status.Location == "" {
		return nil
	}
	repo := repositoryFor(sr.Spec.Backup.Storage, b.Status.InstanceUID, "", "", true)
	repo.Location = b.Status.Location
	repo.Token = agentconfig.RepositoryToken(repo)
	out := &RestoreFrom{Repository: repo}
	for _, d := range b.Status.Databases {
		if d.State != agentconfig.BackupStateFinished || d.Label == "" || d.BackupTimestamp == "" {
			continue // skipped (empty) or failed: nothing to restore
		}
		if len(r.Databases) > 0 && !contains(r.Databases, d.Name) {
			continue
		}
		out.Databases = append(out.Databases, agentconfig.RestoreDatabase{Name: d.Name, Label: d.Label, BackupTimestamp: d.BackupTimestamp})
	}
	return out
}

// RestoreConfig is the agent's restore request for a new instance with
// backends BEs: replication_num = min(3, BEs), so a backup of a 3-replica
// Cluster restores into fewer BEs.
func RestoreConfig(instanceUID string, from *RestoreFrom, backends int32) *agentconfig.RestoreConfig {
	if from == nil || len(from.Databases) == 0 {
		return nil
	}
	dbs := from.Databases
	if len(dbs) > agentconfig.MaxBackupDatabases {
		dbs = dbs[:agentconfig.MaxBackupDatabases]
	}
	sum := sha256.Sum256([]byte(instanceUID + "\x00" + from.Repository.Name + "\x00" + dbs[0].Label))
	return &agentconfig.RestoreConfig{
		Token:          hex.EncodeToString(sum[:8]),
		Repository:     from.Repository,
		Databases:      dbs,
		ReplicationNum: int(min(3, max(1, backends))),
	}
}

// BackupSecretNames are the Secrets the agent reads for backups and the
// restore (the keys and the CA), for the agent's Role: exactly these, by
// name.
func BackupSecretNames(c *agentconfig.Config) []string {
	var names []string
	add := func(r *agentconfig.Repository) {
		names = append(names, r.Credentials.SecretName)
		if r.CA != nil {
			names = append(names, r.CA.Name)
		}
	}
	if c.Backup != nil {
		add(&c.Backup.Repository)
	}
	if c.Restore != nil {
		add(&c.Restore.Repository)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
