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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// State of one database in a backup set or a restore.
type State string

const (
	StatePending   State = "Pending"
	StateRunning   State = "Running"
	StateCompleted State = "Completed"
	StateFailed    State = "Failed"
	// StateSkipped: the database has no tables (StarRocks refuses to back
	// up an empty database).
	StateSkipped State = "Skipped"
)

// Done reports a final state.
func (s State) Done() bool {
	return s == StateCompleted || s == StateFailed || s == StateSkipped
}

// Database is the progress of one database; the agent keeps it between
// passes and reports it.
type Database struct {
	Name  string
	Label string
	State State
	// Timestamp is the snapshot's backup timestamp (SHOW SNAPSHOT,
	// column Timestamp), the RESTORE's backup_timestamp.
	Timestamp string
	// JobState is StarRocks' own state of the job (UPLOADING, ...).
	JobState string
	// Message is StarRocks' message (scrubbed of the keys).
	Message string
	// Progress is a digest of what the job last showed of its work: its
	// State, UnfinishedTasks and Progress (see watch).
	Progress string
	// Since is when Progress last changed (stuck detection); Submitted is
	// when the job was submitted (after a restart: its CreateTime, see
	// jobCreated).
	Since, Submitted time.Time
	// Attempts counts submissions refused as busy; NotBefore is when the
	// next one may go.
	Attempts  int
	NotBefore time.Time
	// RetriedTempPartitions: the BACKUP was refused once for a table with
	// temporary partitions and submitted again (see msgTempPartitions).
	RetriedTempPartitions bool
	// AsyncMaterializedViews are the database's asynchronous materialized
	// views when its BACKUP went, and MaterializedViewsInBackup whether
	// the snapshot holds them (see asyncMaterializedViews).
	AsyncMaterializedViews    []string
	MaterializedViewsInBackup bool
}

// Limits bound the waiting.
type Limits struct {
	// MaxAttempts of a submission refused as busy (default 6).
	MaxAttempts int
	// Backoff before the first retry, doubled each time (default 5s).
	Backoff time.Duration
	// StuckAfter: a job that has shown no progress for this long (its
	// state, unfinished tasks and per-task progress unchanged) is
	// cancelled and reported failed (default 6h).
	StuckAfter time.Duration
	// JobTimeout is StarRocks' own bound of each job, passed as its
	// "timeout" property (default DefaultJobTimeout; see timeoutProperty).
	JobTimeout time.Duration
	// TempPartitionRetry: how long after a refusal for temporary
	// partitions the one retry goes (default 10m).
	TempPartitionRetry time.Duration
}

// DefaultJobTimeout is StarRocks' default timeout of a BACKUP or RESTORE
// job (fe-core common/Config.backup_job_default_timeout_ms = 86400*1000,
// a day), passed explicitly so that what the module promises does not
// move with the FE's configuration.
const DefaultJobTimeout = 24 * time.Hour

// MinJobTimeout is the least "timeout" StarRocks accepts
// (sql/analyzer/BackupRestoreAnalyzer.setPropTimeout: "timeout must be at
// least 10 min").
const MinJobTimeout = 10 * time.Minute

func (l Limits) withDefaults() Limits {
	if l.MaxAttempts == 0 {
		l.MaxAttempts = 6
	}
	if l.Backoff == 0 {
		l.Backoff = 5 * time.Second
	}
	if l.StuckAfter == 0 {
		l.StuckAfter = 6 * time.Hour
	}
	if l.JobTimeout == 0 {
		l.JobTimeout = DefaultJobTimeout
	}
	l.JobTimeout = max(l.JobTimeout, MinJobTimeout)
	if l.TempPartitionRetry == 0 {
		l.TempPartitionRetry = 10 * time.Minute
	}
	return l
}

// timeoutProperty is the jobs' "timeout" property: seconds
// (BackupRestoreAnalyzer reads it for BACKUP, analyzeBackupProperties, and
// RESTORE, analyzeRestoreProperties, through setPropTimeout, which takes
// seconds). StarRocks cancels a job that has run longer (BackupJob.run and
// RestoreJob.run: System.currentTimeMillis() - createTime > timeoutMs),
// whatever state it is in.
func (l Limits) timeoutProperty() string {
	return fmt.Sprintf("\"timeout\" = \"%d\"", int64(l.JobTimeout/time.Second))
}

// LabelPrefix starts every snapshot label the module makes
// (agentconfig.BackupLabelPrefix): retention deletes only snapshots with it.
const LabelPrefix = "d8ms_"

var (
	// reLabel: snapshot labels (fe-core FeNameFormat.LABEL_REGEX, as
	// agentconfig checks them).
	reLabel = regexp.MustCompile(`^[-_A-Za-z0-9]{1,128}$`)
	// reDatabase: StarRocks database names (agentconfig.DatabaseNamePattern,
	// fe-core FeNameFormat.DB_NAME_REGEX); SHOW DATABASES may list any the
	// team created, `sales-2024` too. No character of it ends a backtick
	// quote, so the statements quote a name in backticks.
	reDatabase = regexp.MustCompile(agentconfig.DatabaseNamePattern)
)

// Messages of fe-core backup/BackupHandler the steps act on.
const (
	// tryLock: another submission holds the FE's lock for 10 s.
	msgSubmitting = "Another backup or restore job is being submitted"
	// process: a job of the database has not finished.
	msgOneJob = "Can only run one backup or restore job of a database at same time"
	// An empty database (see dev/fakefe/backup.go on the wording).
	msgEmpty = "is empty"
	// BackupHandler.backup refuses a whole database while one of its
	// tables has temporary partitions (OlapTable.existTempPartitions),
	// which INSERT OVERWRITE creates for as long as it runs: the
	// submission is retried once, later.
	msgTempPartitions = "Do not support backing up table with temp partitions"
)

func serverMessage(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}

// Busy reports whether any backup or restore job has not finished (SHOW
// BACKUP and SHOW RESTORE without FROM list the last job of every database:
// fe-core qe/ShowExecutor.visitShowBackupStatement walks every database
// when none is named): nothing
// replaces the repository or deletes snapshots then, and the hooks hold BE
// scale-in and rolling restarts.
func Busy(ctx context.Context, q Querier) (bool, error) {
	for _, stmt := range []string{"SHOW BACKUP", "SHOW RESTORE"} {
		rows, err := sqlrows.QueryMaps(ctx, q, stmt)
		if err != nil {
			return false, fmt.Errorf("%s: %w", strings.ToLower(stmt), err)
		}
		for _, r := range rows {
			if st := r["State"]; st != "FINISHED" && st != "CANCELLED" {
				return true, nil
			}
		}
	}
	return false, nil
}

// job is one kind of job: BACKUP or RESTORE.
type job struct {
	show    string // SHOW BACKUP | SHOW RESTORE
	cancel  string // CANCEL BACKUP | CANCEL RESTORE
	labelOf string // SnapshotName | Label
}

var (
	backupJob  = job{show: "SHOW BACKUP", cancel: "CANCEL BACKUP", labelOf: "SnapshotName"}
	restoreJob = job{show: "SHOW RESTORE", cancel: "CANCEL RESTORE", labelOf: "Label"}
)

// BackupStep moves a backup set on by one pass: it watches the running
// database, and when none runs submits the next pending one (one job at a
// time: StarRocks runs one per database, and one at a time keeps the BEs'
// upload load to one database). hold (a rollout, a scale-in) starts
// nothing new; running jobs are still watched. It returns the databases
// with their new progress.
func BackupStep(ctx context.Context, q Querier, r Repository, dbs []Database, hold bool, now time.Time, lim Limits) ([]Database, error) {
	lim = lim.withDefaults()
	out := append([]Database(nil), dbs...)
	for i := range out {
		d := &out[i]
		if d.State == StateRunning {
			return out, watch(ctx, q, r, backupJob, d, now, lim)
		}
	}
	if hold {
		return out, nil
	}
	for i := range out {
		d := &out[i]
		if d.State != StatePending && d.State != "" {
			continue
		}
		d.State = StatePending
		if now.Before(d.NotBefore) {
			return out, nil
		}
		if !reDatabase.MatchString(d.Name) || !reLabel.MatchString(d.Label) {
			d.State, d.Message = StateFailed, fmt.Sprintf("database %q, snapshot %q: not valid names", d.Name, d.Label)
			continue
		}
		// After an agent restart the job may be there already.
		if adopted, err := adopt(ctx, q, r, backupJob, d, now, lim); err != nil || adopted {
			return out, err
		}
		// A job StarRocks no longer shows (SHOW BACKUP keeps the last job
		// per database only, and drops finished ones after
		// history_job_keep_max_second) may have finished before the
		// restart: its snapshot is in the repository, and a second BACKUP
		// of the label is refused ("Snapshot with name '<label>' already
		// exist in repository", fe-core backup/BackupHandler.backup). SHOW
		// SNAPSHOT lists a snapshot by its __info file, which BackupJob
		// writes last (UPLOAD_INFO), so a listed one is finished.
		if ts, err := snapshotTimestamp(ctx, q, r.Name, d.Label); err == nil {
			d.State, d.Timestamp, d.JobState, d.Message = StateCompleted, ts, "FINISHED", ""
			continue
		}
		tables, err := sqlrows.QueryMaps(ctx, q, "SHOW TABLES FROM `"+d.Name+"`")
		if err != nil {
			d.State, d.Message = StateFailed, "list the tables: "+r.scrub(serverMessage(err))
			continue
		}
		if len(tables) == 0 {
			d.State, d.Message = StateSkipped, "the database has no tables; StarRocks does not back up an empty database"
			continue
		}
		d.AsyncMaterializedViews, d.MaterializedViewsInBackup = asyncMaterializedViews(ctx, q, d.Name)
		_, err = q.ExecContext(ctx, "BACKUP DATABASE `"+d.Name+"` SNAPSHOT `"+d.Label+"` TO `"+r.Name+"` PROPERTIES ("+lim.timeoutProperty()+")")
		if submitted(d, err, r, now, lim) {
			return out, nil
		}
		if d.State == StatePending {
			return out, nil // retry later
		}
	}
	return out, nil
}

// asyncMaterializedViews lists the database's asynchronous materialized
// views (SHOW MATERIALIZED VIEWS, column name; refresh_type ROLLUP marks a
// synchronous one, ShowMaterializedViewStatus) and whether BACKUP takes
// them. BACKUP DATABASE without ON skips every one while the FE's
// enable_backup_materialized_view is false, StarRocks' default, an
// experimental switch upstream (fe-core sql/analyzer/BackupRestoreAnalyzer
// .analyze, common/Config.java); with it true they are backed up marked
// inactive (BackupHandler.backup: setInactiveAndReason) and restored so.
// The module leaves the switch alone and says in the status what the
// snapshot lacks. Synchronous materialized views are indexes of their
// base table and go with it. A listing StarRocks refuses lists nothing.
func asyncMaterializedViews(ctx context.Context, q Querier, db string) ([]string, bool) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW MATERIALIZED VIEWS FROM `"+db+"`")
	if err != nil {
		return nil, false
	}
	var names []string
	for _, r := range rows {
		if r["refresh_type"] != "ROLLUP" && r["name"] != "" {
			names = append(names, r["name"])
		}
	}
	if len(names) == 0 {
		return nil, false
	}
	in := false
	if cfg, err := sqlrows.QueryMaps(ctx, q, "ADMIN SHOW FRONTEND CONFIG LIKE 'enable_backup_materialized_view'"); err == nil {
		for _, c := range cfg {
			in = in || c["Key"] == "enable_backup_materialized_view" && strings.EqualFold(c["Value"], "true")
		}
	}
	sort.Strings(names)
	return names, in
}

// MaterializedViewNote says what a finished backup holds of the
// database's asynchronous materialized views ("" when it has none).
func (d Database) MaterializedViewNote() string {
	n := len(d.AsyncMaterializedViews)
	if n == 0 {
		return ""
	}
	list := strings.Join(d.AsyncMaterializedViews[:min(n, 10)], ", ")
	if n > 10 {
		list += fmt.Sprintf(" and %d more", n-10)
	}
	if d.MaterializedViewsInBackup {
		return fmt.Sprintf("%d asynchronous materialized views (%s) are in the snapshot marked inactive (the FE's enable_backup_materialized_view is true): after a restore, ALTER MATERIALIZED VIEW ... ACTIVE and refresh them", n, list)
	}
	return fmt.Sprintf("not in the snapshot: %d asynchronous materialized views (%s); StarRocks backs up none (enable_backup_materialized_view is false): re-create them with CREATE MATERIALIZED VIEW after a restore", n, list)
}

// submitted records a submission's outcome; it reports whether a job now runs.
func submitted(d *Database, err error, r Repository, now time.Time, lim Limits) bool {
	if err == nil {
		d.State, d.JobState, d.Message, d.Progress, d.Since, d.Submitted = StateRunning, "PENDING", "", "", now, now
		return true
	}
	msg := r.scrub(serverMessage(err))
	switch {
	case strings.Contains(msg, msgEmpty):
		d.State, d.Message = StateSkipped, msg
	case strings.Contains(msg, msgTempPartitions) && !d.RetriedTempPartitions:
		d.RetriedTempPartitions = true
		d.Message = fmt.Sprintf("%s; an INSERT OVERWRITE may be running: submitted once more in %s", msg, lim.TempPartitionRetry)
		d.NotBefore = now.Add(lim.TempPartitionRetry)
	case strings.Contains(msg, msgTempPartitions):
		d.State, d.Message = StateFailed, msg+" (again after one retry: a table keeps temporary partitions, e.g. a long or stuck INSERT OVERWRITE)"
	case strings.Contains(msg, msgSubmitting) || strings.Contains(msg, msgOneJob):
		d.Attempts++
		if d.Attempts >= lim.MaxAttempts {
			d.State, d.Message = StateFailed, fmt.Sprintf("%s (gave up after %d attempts)", msg, d.Attempts)
			return false
		}
		d.Message = msg
		d.NotBefore = now.Add(lim.Backoff << (d.Attempts - 1))
	default:
		d.State, d.Message = StateFailed, msg
	}
	return false
}

// watch reads the database's last job by column name and moves d on.
func watch(ctx context.Context, q Querier, r Repository, j job, d *Database, now time.Time, lim Limits) error {
	rows, err := sqlrows.QueryMaps(ctx, q, j.show+" FROM `"+d.Name+"`")
	if err != nil {
		return fmt.Errorf("%s from %s: %s", strings.ToLower(j.show), d.Name, r.scrub(serverMessage(err)))
	}
	var row map[string]string
	for _, rw := range rows {
		if rw[j.labelOf] == d.Label {
			row = rw
		}
	}
	if row == nil {
		// StarRocks keeps only the last job per database: another one
		// replaced ours before it was seen finished.
		d.State, d.Message = StateFailed, "the job is no longer shown by StarRocks: another job of the database replaced it"
		return nil
	}
	st := row["State"]
	d.JobState = st
	// A job's progress is more than its state: a backup uploads every
	// tablet in the one state UPLOADING (fe-core backup/BackupJob
	// .uploadSnapshot sends every upload task, waitingAllUploadingFinished
	// leaves the state once none is unfinished), a restore downloads in
	// DOWNLOADING (RestoreJob.downloadSnapshots), for hours on a large
	// database. Each task done leaves UnfinishedTasks ("<signature>=<beId>,
	// ..."), and the BEs report the files of a task done in Progress
	// ("[<signature>: <finished>/<total>], ...", BackupHandler.report);
	// both are columns of SHOW BACKUP and SHOW RESTORE (BackupJob.getInfo,
	// RestoreJob.getInfo). A change of any of the three is progress.
	// The first look only records it: the clock runs from the submission.
	// Kept as a digest: while snapshots are taken UnfinishedTasks lists
	// every tablet.
	sum := sha256.Sum256([]byte(st + "\n" + row["UnfinishedTasks"] + "\n" + row["Progress"]))
	if p := hex.EncodeToString(sum[:]); p != d.Progress {
		if d.Progress != "" {
			d.Since = now
		}
		d.Progress = p
	}
	switch st {
	case "FINISHED":
		d.State, d.Message = StateCompleted, ""
		if j == backupJob {
			ts, err := snapshotTimestamp(ctx, q, r.Name, d.Label)
			if err != nil {
				return fmt.Errorf("show snapshot %s: %s", d.Label, r.scrub(serverMessage(err)))
			}
			d.Timestamp = ts
		}
	case "CANCELLED":
		d.State = StateFailed
		d.Message = r.scrub(strings.TrimSpace(row["Status"] + " " + nonEmptyList(row["TaskErrMsg"])))
	default:
		if now.Sub(d.Since) >= lim.StuckAfter {
			// Bounded: a job that does not move is cancelled, so it holds
			// nothing (scale-in, restarts, the repository) forever.
			if _, err := q.ExecContext(ctx, j.cancel+" FROM `"+d.Name+"`"); err != nil {
				return fmt.Errorf("cancel the stuck job of %s: %s", d.Name, r.scrub(serverMessage(err)))
			}
			d.State = StateFailed
			d.Message = fmt.Sprintf("no progress in %s since %s (no task finished, no file uploaded or downloaded): cancelled", st, d.Since.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// adopt takes over a job of d's label StarRocks already shows (the agent
// restarted after submitting it): it reports whether there was one.
func adopt(ctx context.Context, q Querier, r Repository, j job, d *Database, now time.Time, lim Limits) (bool, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, j.show+" FROM `"+d.Name+"`")
	if err != nil {
		// An unknown database is the submission's to report.
		return false, nil
	}
	for _, rw := range rows {
		if rw[j.labelOf] == d.Label && (j == restoreJob || rw["State"] != "CANCELLED") {
			d.State, d.Since, d.Submitted, d.Progress = StateRunning, now, jobCreated(rw["CreateTime"], now), ""
			return true, watch(ctx, q, r, j, d, now, lim)
		}
	}
	return false, nil
}

// showTimeZone is the zone of the times SHOW BACKUP and SHOW RESTORE show:
// their CreateTime is TimeUtils.longToTimeString(createTime) (fe-core
// backup/BackupJob.getInfo, RestoreJob.getInfo), which formats with
// DATETIME_TO_STRING_FORMAT, "yyyy-MM-dd HH:mm:ss" .withZone(TIME_ZONE),
// TIME_ZONE being ZoneOffset.ofTotalSeconds(8 * 3600) (common/util
// /TimeUtils): a fixed UTC+08:00, neither the JVM's default zone nor the
// time_zone variable. The real-FE test checks it.
var showTimeZone = time.FixedZone("UTC+08:00", 8*3600)

// jobCreated is when StarRocks created a job, from its CreateTime cell,
// for a job the agent adopts after a restart: StarRocks cancels it a
// timeout after that (BackupJob.run, RestoreJob.run), so the hold of pod
// restarts it is reported with (JobStartTime) ends then, not a timeout
// after the adoption. The cell has whole seconds: one more second keeps
// the hold from ending before StarRocks could. A cell that does not read
// (NULL, another format) or lies ahead of now gives now, as before.
func jobCreated(cell string, now time.Time) time.Time {
	t, err := time.ParseInLocation(time.DateTime, cell, showTimeZone)
	if err != nil {
		return now
	}
	if t = t.Add(time.Second); t.After(now) {
		return now
	}
	return t
}

func nonEmptyList(s string) string {
	if s == "[]" || s == "{}" {
		return ""
	}
	return s
}

// snapshotTimestamp is the newest timestamp of the snapshot, read from SHOW
// SNAPSHOT ON repo WHERE SNAPSHOT = label (fe-core ShowSnapshotStmt;
// backup/Repository.getSnapshotInfo), trusted only from a row whose Status
// is OK. That row's Timestamp cell is every __info_ file of the snapshot
// joined by "\n": a finished upload's __info_<ts>.<md5>, and also any
// __info_<ts>.part a cancelled or interrupted upload left
// (Repository.upload writes .part first and renames it), listed as
// "Invalid: <file name>" with Status still OK. Only entries that are
// BackupJob.TIMESTAMP_FORMAT count. A listing error is Status "ERROR: ...";
// no __info_ file at all is "ERROR: no snapshot".
func snapshotTimestamp(ctx context.Context, q Querier, repo, label string) (string, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW SNAPSHOT ON `"+repo+"` WHERE SNAPSHOT = \""+label+"\"")
	if err != nil {
		return "", err
	}
	ts, status := "", ""
	for _, r := range rows {
		if r["Snapshot"] != label {
			continue
		}
		status = r["Status"]
		if status != "OK" {
			continue
		}
		for _, t := range strings.Split(r["Timestamp"], "\n") {
			if t = strings.TrimSpace(t); reTimestamp.MatchString(t) && t > ts {
				ts = t
			}
		}
	}
	if ts == "" {
		if status == "" {
			status = "not listed"
		}
		return "", fmt.Errorf("snapshot %s has no finished backup in the repository (%s)", label, status)
	}
	return ts, nil
}

// RestoreStep moves a restore on by one pass, like BackupStep: each
// database's snapshot (Label, Timestamp) is restored with RESTORE SNAPSHOT
// ... PROPERTIES ("backup_timestamp", "replication_num") (docs
// sql-reference/sql-statements/backup_restore/RESTORE.md;
// BackupRestoreAnalyzer reads both). The database is created first if it
// is missing. hold starts no new RESTORE, like BackupStep.
func RestoreStep(ctx context.Context, q Querier, r Repository, dbs []Database, replicationNum int, hold bool, now time.Time, lim Limits) ([]Database, error) {
	lim = lim.withDefaults()
	out := append([]Database(nil), dbs...)
	for i := range out {
		if out[i].State == StateRunning {
			return out, watch(ctx, q, r, restoreJob, &out[i], now, lim)
		}
	}
	if hold {
		return out, nil
	}
	if replicationNum < 1 || replicationNum > 3 {
		return out, fmt.Errorf("replication_num %d: must be 1 to 3", replicationNum)
	}
	for i := range out {
		d := &out[i]
		if d.State != StatePending && d.State != "" {
			continue
		}
		d.State = StatePending
		if now.Before(d.NotBefore) {
			return out, nil
		}
		if !reDatabase.MatchString(d.Name) || !reLabel.MatchString(d.Label) || !reTimestamp.MatchString(d.Timestamp) {
			d.State, d.Message = StateFailed, fmt.Sprintf("database %q, snapshot %q, timestamp %q: not valid names", d.Name, d.Label, d.Timestamp)
			continue
		}
		if adopted, err := adopt(ctx, q, r, restoreJob, d, now, lim); err != nil || adopted {
			return out, err
		}
		if _, err := q.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+d.Name+"`"); err != nil {
			d.State, d.Message = StateFailed, "create the database: "+r.scrub(serverMessage(err))
			continue
		}
		_, err := q.ExecContext(ctx, fmt.Sprintf("RESTORE SNAPSHOT `%s` FROM `%s` DATABASE `%s` PROPERTIES (\"backup_timestamp\" = \"%s\", \"replication_num\" = \"%d\", %s)",
			d.Label, r.Name, d.Name, d.Timestamp, replicationNum, lim.timeoutProperty()))
		if submitted(d, err, r, now, lim) || d.State == StatePending {
			return out, nil
		}
	}
	return out, nil
}

// reTimestamp: BackupJob.TIMESTAMP_FORMAT, yyyy-MM-dd-HH-mm-ss[-SSS].
var reTimestamp = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}(-[0-9]{3})?$`)
