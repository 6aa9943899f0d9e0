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

package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// runBackups runs one pass of Config.Backup and Config.Restore (package
// internal/backup) on the leader's agent. The keys are read from the
// team's Secrets through SecretStore; the statuses carry no key (the
// backup package scrubs every message), and what is logged here are the
// phases and reasons only, never a statement.
func (a *Agent) runBackups(ctx context.Context, cfg *agentconfig.Config, version string) error {
	if cfg.Backup == nil && cfg.Restore == nil && a.backups.SourcesDropped() {
		a.setBackupStatus(nil, nil)
		return nil
	}
	if a.opts.Secrets != nil {
		a.backups.Secrets = a.opts.Secrets
	}
	// The class's bound of each job (0: the backup package's default).
	a.backups.Limits.JobTimeout = time.Duration(cfg.BackupJobTimeoutSeconds) * time.Second
	var bst *agentconfig.BackupStatus
	var rst *agentconfig.RestoreStatus
	// On the leader's own FE (only the leader's agent runs this), not
	// through the client Service: SHOW RESTORE, SHOW SNAPSHOT, SHOW
	// REPOSITORIES and SHOW TABLES are not forwarded to the leader (fe-core
	// qe/RedirectStatus: only SHOW BACKUP is), and a follower shows the
	// RestoreJob as replayed from the journal, where SNAPSHOTING and
	// DOWNLOADING are never logged (RestoreJob.run), a repository or a job
	// moments late. The statements that change something would be
	// forwarded anyway.
	err := a.self.Do(ctx, "backup and restore", func(ctx context.Context, db *sql.DB) error {
		bst = a.backups.Backup(ctx, db, cfg.Backup, cfg.BackupHold != "", version)
		rst = a.backups.Restore(ctx, db, cfg.Restore, cfg.BackupHold != "")
		if cfg.Restore == nil {
			// The instance is Restored (or never restored): the source's
			// repository, keys included, goes from the FE's metadata.
			if err := a.backups.DropRestoreSources(ctx, db); err != nil {
				a.log.Info("restore source repository not dropped yet", "error", a.scrub(err.Error()))
			}
		}
		return nil
	})
	a.logBackupChanges(bst, rst)
	a.setBackupStatus(bst, rst)
	return err
}

// ReasonRestorePending: the declared databases, roles and users wait for
// the restore of Config.Restore to complete.
const ReasonRestorePending = "RestorePending"

// restorePending says why the declared accounts wait: a restore is asked
// for and this agent has not seen it Completed (its report, of this
// request's token). A Failed or PartiallyFailed restore does not hold them
// forever: the team reads Restored and may go on with what is there.
func (a *Agent) restorePending(cfg *agentconfig.Config) string {
	if cfg.Restore == nil || cfg.Grants == nil {
		return ""
	}
	a.mu.Lock()
	r := a.restoreSt
	a.mu.Unlock()
	if r != nil && r.Token == cfg.Restore.Token {
		switch r.Phase {
		case agentconfig.BackupPhaseCompleted, agentconfig.BackupPhaseFailed, agentconfig.BackupPhasePartiallyFailed:
			return ""
		}
	}
	return "the declared databases, roles and users are applied once the restore from the backup has completed"
}

func (a *Agent) setBackupStatus(b *agentconfig.BackupStatus, r *agentconfig.RestoreStatus) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.backupSt, a.restoreSt = b, r
}

// logBackupChanges logs what changed since the last pass: the repository's
// readiness and each set's and the restore's phase.
func (a *Agent) logBackupChanges(b *agentconfig.BackupStatus, r *agentconfig.RestoreStatus) {
	a.mu.Lock()
	oldB, oldR := a.backupSt, a.restoreSt
	a.mu.Unlock()
	if b != nil {
		if oldB == nil || oldB.Repository != b.Repository {
			if b.Repository.Ready {
				a.log.Info("backup repository ready", "repository", b.Repository.Name, "message", a.scrub(b.Repository.Message))
			} else {
				a.log.Warn("backup repository not ready", "repository", b.Repository.Name, "reason", b.Repository.Reason, "message", a.scrub(b.Repository.Message))
			}
		}
		phases := map[string]string{}
		if oldB != nil {
			for _, s := range oldB.Sets {
				phases[s.UID] = s.Phase
			}
		}
		for _, s := range b.Sets {
			if phases[s.UID] != s.Phase {
				dbs, _ := json.Marshal(s.Databases)
				a.log.Info("backup set", "uid", s.UID, "phase", s.Phase, "databases", a.scrub(string(dbs)))
			}
		}
		if len(b.Deleted) > 0 {
			a.log.Info("backup snapshots deleted", "uids", b.Deleted)
		}
		for _, e := range b.DeleteErrors {
			a.log.Warn("backup snapshots not deleted", "uid", e.UID, "message", a.scrub(e.Message))
		}
	}
	if r != nil && (oldR == nil || oldR.Phase != r.Phase) {
		a.log.Info("restore", "phase", r.Phase, "message", a.scrub(r.Message))
	}
}
