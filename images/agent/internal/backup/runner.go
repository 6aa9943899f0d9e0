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

package backup

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// Runner follows the backup contract (pkg/agentconfig/backup.go) pass by
// pass on the FE leader's agent. It keeps the progress of the sets and the
// restore in memory; after a restart it takes over the jobs StarRocks
// still shows (adopt) and reads completed snapshots back from the bucket.
type Runner struct {
	Secrets SecretGetter
	Limits  Limits
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time

	fingerprints map[string]string // repository name -> what it was created with
	// sourcesDropped: no restore source repository is left (see
	// DropRestoreSources) since the restore request went.
	sourcesDropped bool
	recreatedAt    string
	sets           map[string]*setRun // by set UID
	restore        *restoreRun
}

type setRun struct {
	dbs       []Database
	started   time.Time
	completed time.Time
	version   string
	message   string
	// held: the next database waits for a rollout or a BE scale-in
	// (Config.BackupHold), nothing of the set runs.
	held bool
}

// heldMessage says what a held set waits for.
const heldMessage = "the next database starts once the instance's pod restarts or BE scale-in are done (they do not wait for the whole set, only for a running database's job)"

type restoreRun struct {
	token     string
	dbs       []Database
	started   time.Time
	completed time.Time
}

// Reasons of RepositoryStatus.
const (
	ReasonCredentialsMissing = "CredentialsMissing"
	ReasonRepositoryRefused  = "RepositoryRefused"
	ReasonWaitingForJob      = "WaitingForJob"
)

// systemDatabases are never backed up: StarRocks' own.
var systemDatabases = map[string]bool{"information_schema": true, "_statistics_": true, "sys": true}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// repository resolves a contract repository: keys and CA from the team's
// Secrets, the location split into bucket and prefix.
func (r *Runner) repository(ctx context.Context, c agentconfig.Repository) (Repository, error) {
	if r.Secrets == nil {
		return Repository{}, fmt.Errorf("the agent has no Kubernetes access (--manage-users=false): it cannot read Secret %s", c.Credentials.SecretName)
	}
	keys, err := ReadKeys(ctx, r.Secrets, c.Credentials.SecretName, c.Credentials.AccessKeyIDKey, c.Credentials.SecretAccessKeyKey)
	if err != nil {
		return Repository{}, err
	}
	rest, ok := strings.CutPrefix(c.Location, "s3://")
	if !ok {
		return Repository{}, fmt.Errorf("location %q is not s3://", c.Location)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	repo := Repository{Name: c.Name, Keys: keys, ReadOnly: c.ReadOnly, Storage: Storage{
		Endpoint: c.Endpoint, Region: c.Region, Bucket: bucket, Prefix: prefix, PathStyle: c.PathStyle}}
	if c.CA != nil {
		data, err := r.Secrets.Get(ctx, c.CA.Name)
		if err != nil {
			return Repository{}, fmt.Errorf("read the storage CA from Secret %s: %w", c.CA.Name, err)
		}
		pem, ok := data[c.CA.Key]
		if !ok || len(pem) == 0 {
			return Repository{}, fmt.Errorf("Secret %s has no key %q with the storage CA", c.CA.Name, c.CA.Key)
		}
		repo.Storage.CAPEM = pem
	}
	return repo, repo.Validate()
}

// ensure resolves and ensures a repository and reports it.
func (r *Runner) ensure(ctx context.Context, q Querier, c agentconfig.Repository) (Repository, agentconfig.RepositoryStatus) {
	st := agentconfig.RepositoryStatus{Name: c.Name, RecreatedAt: r.recreatedAt}
	repo, err := r.repository(ctx, c)
	if err != nil {
		st.Reason, st.Message = ReasonCredentialsMissing, agentconfig.TruncateBackupMessage(err.Error())
		return repo, st
	}
	if r.fingerprints == nil {
		r.fingerprints = map[string]string{}
	}
	got, err := EnsureRepository(ctx, q, repo, r.fingerprints[c.Name])
	if err != nil {
		st.Reason, st.Message = ReasonRepositoryRefused, agentconfig.TruncateBackupMessage(repo.scrub(err.Error()))
		return repo, st
	}
	if got.Waiting {
		// The old repository still works for what runs; the change waits.
		st.Ready, st.Reason, st.Message = true, ReasonWaitingForJob, "the repository is re-created with the new settings once the running job has finished"
		return repo, st
	}
	r.fingerprints[c.Name] = got.Fingerprint
	if got.Recreated {
		r.recreatedAt = r.now().UTC().Format(time.RFC3339)
		st.RecreatedAt = r.recreatedAt
		st.Message = "the repository was gone (dropped in StarRocks) and was created again"
	}
	st.Ready, st.Token = true, c.Token
	return repo, st
}

// Backup runs one pass of Config.Backup and reports it. hold is
// Config.BackupHold != "". version is the FE's version, reported with a
// set when it starts.
func (r *Runner) Backup(ctx context.Context, q Querier, c *agentconfig.BackupConfig, hold bool, version string) *agentconfig.BackupStatus {
	if c == nil {
		return nil
	}
	repo, rst := r.ensure(ctx, q, c.Repository)
	out := &agentconfig.BackupStatus{Repository: rst}
	if r.sets == nil {
		r.sets = map[string]*setRun{}
	}
	known := map[string]bool{}
	for _, s := range c.Sets {
		known[s.UID] = true
	}
	for uid := range r.sets {
		if !known[uid] {
			delete(r.sets, uid) // the Kubernetes objects are the history
		}
	}
	active := true // one set at a time, oldest first
	for _, s := range c.Sets {
		run := r.sets[s.UID]
		if run == nil {
			run = &setRun{}
			r.sets[s.UID] = run
		}
		if active && rst.Ready && run.completed.IsZero() {
			r.stepSet(ctx, q, repo, s, run, hold, version)
			active = !run.completed.IsZero()
		}
		out.Sets = append(out.Sets, setStatus(s.UID, run))
	}
	if rst.Ready && len(c.Deletes) > 0 {
		r.deletes(ctx, q, repo, c.Deletes, out)
	}
	return out
}

func (r *Runner) stepSet(ctx context.Context, q Querier, repo Repository, s agentconfig.BackupSet, run *setRun, hold bool, version string) {
	now := r.now()
	if run.dbs == nil {
		if run.held = hold; hold {
			return
		}
		dbs, extra, err := databases(ctx, q, s)
		if err != nil {
			run.message = agentconfig.TruncateBackupMessage(repo.scrub(err.Error()))
			return
		}
		for _, d := range dbs {
			run.dbs = append(run.dbs, Database{Name: d, Label: agentconfig.BackupLabel(s.LabelPrefix, d)})
		}
		run.message = extra
		if len(run.dbs) == 0 {
			run.completed = now
			run.message = "no database to back up"
			return
		}
	}
	dbs, err := BackupStep(ctx, q, repo, run.dbs, hold, now, r.Limits)
	run.dbs = dbs
	run.held = hold
	for _, d := range dbs {
		run.held = run.held && d.State != StateRunning
	}
	if err != nil {
		run.message = agentconfig.TruncateBackupMessage(repo.scrub(err.Error()))
	}
	for _, d := range dbs {
		if d.State == StateRunning && run.started.IsZero() {
			run.started, run.version = now, version
		}
	}
	done := true
	for _, d := range dbs {
		done = done && d.State.Done()
	}
	if done {
		run.completed = now
		if run.started.IsZero() {
			run.started = now
		}
		r.removeLeftovers(ctx, q, repo, run)
	}
}

// removeLeftovers deletes what the set's failed databases left in the
// bucket (content uploaded before the job failed, no __info file).
func (r *Runner) removeLeftovers(ctx context.Context, q Querier, repo Repository, run *setRun) {
	store, err := NewStore(repo)
	if err != nil {
		return
	}
	failed := map[string]bool{}
	for _, d := range run.dbs {
		if d.State == StateFailed {
			failed[d.Label] = true
		}
	}
	if len(failed) == 0 {
		return
	}
	left, err := store.Leftovers(ctx, nil)
	if err != nil {
		return
	}
	var mine []string
	for _, l := range left {
		if failed[l] {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		return
	}
	if deleted, err := store.DeleteSnapshots(ctx, q, mine); err == nil {
		n := 0
		for _, d := range deleted {
			n += d.Objects
		}
		run.message = strings.TrimSpace(run.message + fmt.Sprintf(" removed %d objects failed backups left", n))
	}
}

// databases lists what a set backs up: Include, or every database but the
// system ones and Exclude; at most MaxBackupDatabases in name order.
func databases(ctx context.Context, q Querier, s agentconfig.BackupSet) ([]string, string, error) {
	var names []string
	if len(s.Include) > 0 {
		names = append(names, s.Include...)
	} else {
		rows, err := sqlrows.QueryMaps(ctx, q, "SHOW DATABASES")
		if err != nil {
			return nil, "", fmt.Errorf("show databases: %w", err)
		}
		skip := map[string]bool{}
		for _, e := range s.Exclude {
			skip[e] = true
		}
		for _, rw := range rows {
			if d := rw["Database"]; !systemDatabases[d] && !skip[d] && reDatabase.MatchString(d) {
				names = append(names, d)
			}
		}
	}
	sort.Strings(names)
	if len(names) > agentconfig.MaxBackupDatabases {
		return names[:agentconfig.MaxBackupDatabases], fmt.Sprintf("%d databases: only the first %d are backed up", len(names), agentconfig.MaxBackupDatabases), nil
	}
	return names, "", nil
}

func setStatus(uid string, run *setRun) agentconfig.BackupSetStatus {
	st := agentconfig.BackupSetStatus{UID: uid, StarrocksVersion: run.version, Message: run.message}
	if !run.started.IsZero() {
		st.StartTime = run.started.UTC().Format(time.RFC3339)
	}
	var completed, failed, running int
	for _, d := range run.dbs {
		ds := agentconfig.BackupDatabaseStatus{Name: d.Name, Label: d.Label, BackupTimestamp: d.Timestamp,
			Message: agentconfig.TruncateBackupMessage(d.Message)}
		switch d.State {
		case StateSkipped:
			ds.State = agentconfig.BackupDatabaseSkipped
			completed++
		case StateCompleted:
			ds.State = agentconfig.BackupStateFinished
			if ds.Message == "" {
				ds.Message = agentconfig.TruncateBackupMessage(d.MaterializedViewNote())
			}
			completed++
		case StateFailed:
			ds.State = agentconfig.BackupDatabaseFailed
			if d.JobState == agentconfig.BackupStateCancelled {
				ds.State = agentconfig.BackupStateCancelled
			}
			failed++
		case StateRunning:
			ds.State = d.JobState
			if ds.State == "" {
				ds.State = "PENDING" // submitted, not seen in SHOW BACKUP yet
			}
			ds.JobStartTime = jobStartTime(d)
			running++
		default:
			ds.State = agentconfig.BackupDatabaseWaiting
		}
		st.Databases = append(st.Databases, ds)
	}
	switch {
	case run.completed.IsZero() && running == 0 && completed == 0 && failed == 0:
		st.Phase = agentconfig.BackupPhasePending
	case run.completed.IsZero():
		st.Phase = agentconfig.BackupPhaseRunning
	case failed == 0 && !strings.Contains(run.message, "only the first"):
		st.Phase = agentconfig.BackupPhaseCompleted
	case completed > 0:
		st.Phase = agentconfig.BackupPhasePartiallyFailed
	default:
		st.Phase = agentconfig.BackupPhaseFailed
	}
	if !run.completed.IsZero() {
		st.CompletionTime = run.completed.UTC().Format(time.RFC3339)
	} else if run.held {
		st.Message = strings.TrimSpace(st.Message + " " + heldMessage)
	}
	return st
}

func (r *Runner) deletes(ctx context.Context, q Querier, repo Repository, dels []agentconfig.BackupDelete, out *agentconfig.BackupStatus) {
	store, err := NewStore(repo)
	if err != nil {
		for _, d := range dels {
			out.DeleteErrors = append(out.DeleteErrors, agentconfig.BackupDeleteError{UID: d.UID, Message: agentconfig.TruncateBackupMessage(err.Error())})
		}
		return
	}
	for _, d := range dels {
		labels, err := store.SetLabels(ctx, d.LabelPrefix)
		if err == nil {
			_, err = store.DeleteSnapshots(ctx, q, labels)
		}
		if err != nil {
			out.DeleteErrors = append(out.DeleteErrors, agentconfig.BackupDeleteError{UID: d.UID, Message: agentconfig.TruncateBackupMessage(repo.scrub(err.Error()))})
			continue
		}
		out.Deleted = append(out.Deleted, d.UID)
	}
}

// Restore runs one pass of Config.Restore and reports it; hold is
// Config.BackupHold != "" (no new RESTORE job starts).
func (r *Runner) Restore(ctx context.Context, q Querier, c *agentconfig.RestoreConfig, hold bool) *agentconfig.RestoreStatus {
	if c == nil {
		r.restore = nil
		return nil
	}
	r.sourcesDropped = false
	if r.restore == nil || r.restore.token != c.Token {
		r.restore = &restoreRun{token: c.Token}
		for _, d := range c.Databases {
			r.restore.dbs = append(r.restore.dbs, Database{Name: d.Name, Label: d.Label, Timestamp: d.BackupTimestamp})
		}
	}
	run := r.restore
	st := &agentconfig.RestoreStatus{Token: c.Token, Phase: agentconfig.BackupPhaseRunning}
	repo, rst := r.ensure(ctx, q, c.Repository)
	if !rst.Ready && run.completed.IsZero() {
		st.Message = rst.Message
	}
	if rst.Ready && run.completed.IsZero() {
		now := r.now()
		dbs, err := RestoreStep(ctx, q, repo, run.dbs, c.ReplicationNum, hold, now, r.Limits)
		for _, d := range dbs {
			if (d.State == StateRunning || d.State.Done()) && run.started.IsZero() {
				run.started = now
			}
		}
		run.dbs = dbs
		if err != nil {
			st.Message = agentconfig.TruncateBackupMessage(repo.scrub(err.Error()))
		}
		done := true
		for _, d := range dbs {
			done = done && d.State.Done()
		}
		if done {
			run.completed = now
		}
	}
	if !run.started.IsZero() {
		st.StartTime = run.started.UTC().Format(time.RFC3339)
	}
	failed := 0
	for _, d := range run.dbs {
		ds := agentconfig.RestoreDatabaseStatus{Name: d.Name, Message: agentconfig.TruncateBackupMessage(d.Message)}
		switch d.State {
		case StateCompleted:
			ds.State = agentconfig.BackupStateFinished
		case StateFailed:
			ds.State = agentconfig.BackupDatabaseFailed
			if d.JobState == agentconfig.BackupStateCancelled {
				ds.State = agentconfig.BackupStateCancelled
			}
			failed++
		case StateRunning:
			ds.State = d.JobState
			if ds.State == "" {
				ds.State = "PENDING" // submitted, not seen in SHOW RESTORE yet
			}
			ds.JobStartTime = jobStartTime(d)
		default:
			ds.State = agentconfig.BackupDatabaseWaiting
		}
		st.Databases = append(st.Databases, ds)
	}
	if !run.completed.IsZero() {
		st.CompletionTime = run.completed.UTC().Format(time.RFC3339)
		st.Phase = agentconfig.BackupPhaseCompleted
		if failed > 0 {
			st.Phase = agentconfig.BackupPhaseFailed
			st.Message = "a database was not restored; the instance stays closed to clients until the team decides (see the per-database messages)"
		}
	}
	return st
}

// jobStartTime is when d's running job was submitted, as a report says it.
func jobStartTime(d Database) string {
	if d.Submitted.IsZero() {
		return ""
	}
	return d.Submitted.UTC().Format(time.RFC3339)
}

// restoreSourceRE: the name of a repository the module attaches READ ONLY
// for a restore (agentconfig.RepositoryName of the source instance).
var restoreSourceRE = regexp.MustCompile(`^d8ms_[0-9a-f]{32}$`)

// SourcesDropped reports that DropRestoreSources has nothing left to do.
func (r *Runner) SourcesDropped() bool { return r.sourcesDropped }

// DropRestoreSources drops the READ ONLY repositories a restore attached,
// once the instance asks for no restore any more (it is Restored). They
// would stay in the FE's metadata for good otherwise, the source's keys
// with them, pinged every 10 minutes (fe-core backup/RepositoryMgr's
// daemon). DROP REPOSITORY removes metadata only, never a file
// (RepositoryMgr.removeRepo), and is refused while a job uses the
// repository (BackupHandler.dropRepository); nothing is dropped while any
// job runs. After one pass that finds none it does not look again (until
// the agent restarts or a restore is asked for).
func (r *Runner) DropRestoreSources(ctx context.Context, q Querier) error {
	if r.sourcesDropped {
		return nil
	}
	repos, err := showRepositories(ctx, q)
	if err != nil {
		return err
	}
	var names []string
	for name, row := range repos {
		if row.readOnly && restoreSourceRE.MatchString(name) {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		busy, err := Busy(ctx, q)
		if err != nil {
			return err
		}
		if busy {
			return nil // the next pass
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := q.ExecContext(ctx, "DROP REPOSITORY `"+name+"`"); err != nil {
			return fmt.Errorf("drop the restore's source repository %s: %s", name, serverMessage(err))
		}
	}
	r.sourcesDropped = true
	return nil
}
