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

package agentconfig

// The backup contract. The hooks decide WHAT is backed up,
// restored and deleted, and WHEN (Config.Backup, Config.Restore,
// Config.BackupHold); the agent of the FE leader does the SQL (CREATE
// REPOSITORY, BACKUP, SHOW BACKUP, RESTORE, SHOW RESTORE) and the
// object-storage work from the instance's own namespace, and reports what
// happened (Status.Backup, Status.Restore). The hooks never connect to the
// team's endpoint: a tenant could point it at anything the Deckhouse pod
// reaches.
//
// Keys are never in the Config: it names the team's Secret and its keys,
// and the agent reads the Secret by name through its Role (which the
// templates limit to exactly those Secret names).
//
// Both directions are bounded (the Config lives in a ConfigMap, the Status
// in one Pod annotation, 256 KiB for all annotations together): the hooks
// name at most MaxBackupSets sets and MaxBackupDeletes deletions, the agent
// reports only what the Config names, at most MaxBackupDatabases databases a
// set and messages of at most MaxBackupMessageLen bytes.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Bounds of the backup contract.
const (
	// MaxBackupSets is how many sets (StarrocksBackup objects) one Config
	// names: the running one plus those waiting. The hooks pick the oldest;
	// the others wait for a later Config.
	MaxBackupSets = 3
	// MaxBackupDeletes is how many sets one Config asks to delete.
	MaxBackupDeletes = 10
	// MaxBackupDatabases is how many databases one set or restore covers.
	// The agent backs up at most this many databases of a set (in name
	// order) and reports the set PartiallyFailed when there are more.
	MaxBackupDatabases = 100
	// MaxBackupMessageLen bounds every message in the backup report
	// (StarRocks' own error texts can be long).
	MaxBackupMessageLen = 512
)

// S3 property keys of CREATE REPOSITORY ... PROPERTIES the agent sets, as
// StarRocks names them (docs: sql-reference/sql-statements/backup_restore/
// CREATE_REPOSITORY, "aws.s3.*"): listed here so the agent and the docs
// agree on what the module configures.
const (
	S3PropAccessKey = "aws.s3.access_key"
	S3PropSecretKey = "aws.s3.secret_key"
	S3PropEndpoint  = "aws.s3.endpoint"
	S3PropRegion    = "aws.s3.region"
	S3PropPathStyle = "aws.s3.enable_path_style_access"
	S3PropSSL       = "aws.s3.enable_ssl"
)

// Bounds of Config.BackupJobTimeoutSeconds: StarRocks' least timeout
// (fe-core sql/analyzer/BackupRestoreAnalyzer.setPropTimeout, "timeout
// must be at least 10 min") and the week a class may set.
const (
	MinBackupJobTimeoutSeconds = 600
	MaxBackupJobTimeoutSeconds = 168 * 3600
)

// BackupHold reasons (Config.BackupHold): while one is set the agent starts
// no new BACKUP or RESTORE job. A job already running goes on; the hooks in
// turn hold a rollout or a BE scale-in while a job runs (bounded: a job
// running longer than the hooks' limit is reported, not waited on).
const (
	BackupHoldRollout = "RolloutInProgress"
	BackupHoldScaleIn = "ScaleInPending"
)

// BackupConfig is the instance's backup repository and the work on it
// (Config.Backup). Nil: the instance has no spec.backup; the agent then
// starts no backup and drops nothing (a repository it made stays: its
// snapshots are the team's).
type BackupConfig struct {
	// Repository is where the snapshots go; read-write.
	Repository Repository `json:"repository"`
	// Sets are the backup sets to run or to keep reporting, oldest first,
	// at most MaxBackupSets. The agent runs one set at a time, a database
	// at a time (StarRocks allows one BACKUP or RESTORE job per database;
	// docs: backup_restore/BACKUP, "only one running BACKUP or RESTORE job
	// is allowed each time").
	Sets []BackupSet `json:"sets,omitempty"`
	// Deletes are the sets whose snapshots the agent removes from the
	// bucket (retention and deleted StarrocksBackup objects), at most
	// MaxBackupDeletes. StarRocks 4.1 has no DROP SNAPSHOT: the agent
	// deletes each snapshot's __ss_<label>/ prefix itself, only for labels
	// with the set's LabelPrefix, never __repo_info, never while a job
	// uses the repository.
	Deletes []BackupDelete `json:"deletes,omitempty"`
}

// Repository is a StarRocks repository on S3-compatible storage.
type Repository struct {
	// Name is the StarRocks repository name, RepositoryName(instance UID)
	// for the instance's own repository, the source instance's for a
	// restore (the same name at the same location re-attaches the
	// snapshots there).
	Name string `json:"name"`
	// Location is s3://<bucket>/<prefix>/<namespace>/<instance>-<short uid>
	// (RepositoryLocation): two instances never share one.
	Location string `json:"location"`
	// Endpoint is the S3 endpoint as the team wrote it, http(s)://host[:port].
	Endpoint string `json:"endpoint"`
	Region   string `json:"region,omitempty"`
	// PathStyle: bucket in the path, not in the host name.
	PathStyle bool `json:"pathStyle,omitempty"`
	// EnableSSL is true for an https endpoint.
	EnableSSL bool `json:"enableSSL"`
	// Credentials name the team's Secret with the keys; the agent reads it.
	Credentials S3Credentials `json:"credentials"`
	// CA is the team's Secret key with the endpoint's CA bundle (PEM), nil
	// for the system roots.
	CA *SecretKeyRef `json:"ca,omitempty"`
	// ReadOnly: CREATE REPOSITORY ... READ ONLY (a restore source: this
	// instance must never write into another instance's location).
	ReadOnly bool `json:"readOnly,omitempty"`
	// Token changes whenever something the repository is created with
	// changes (RepositoryToken; also the Secret's resourceVersion, which the
	// hooks do not know: the agent compares the keys itself). There is no
	// ALTER REPOSITORY: a change is DROP + CREATE, which the agent does
	// only while no job uses the repository.
	Token string `json:"token"`
}

// S3Credentials is a Secret of the instance's namespace with the access keys.
type S3Credentials struct {
	SecretName         string `json:"secretName"`
	AccessKeyIDKey     string `json:"accessKeyIdKey"`
	SecretAccessKeyKey string `json:"secretAccessKeyKey"`
}

// BackupSet is one StarrocksBackup: one BACKUP per database.
type BackupSet struct {
	// Name and UID of the StarrocksBackup object: the agent reports the
	// set under the UID (a set deleted and created again under the same
	// name is another set).
	Name string `json:"name"`
	UID  string `json:"uid"`
	// LabelPrefix is BackupLabelPrefix(UID); each database's snapshot
	// label is BackupLabel(LabelPrefix, database).
	LabelPrefix string `json:"labelPrefix"`
	// Include are the databases to back up; empty: every database the
	// instance has except the system ones and Exclude.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// BackupDelete is a set whose snapshots are to be removed.
type BackupDelete struct {
	Name        string `json:"name"`
	UID         string `json:"uid"`
	LabelPrefix string `json:"labelPrefix"`
}

// RestoreConfig asks the FE leader's agent to restore snapshots into this
// (new) instance (Config.Restore). The hooks set it once the instance is
// provisioned; the client ports stay closed until Status.Restore says
// Completed.
type RestoreConfig struct {
	// Token identifies the request (the Starrocks UID and the source): the
	// agent reports Status.Restore for this token only.
	Token string `json:"token"`
	// Repository is the source, always ReadOnly.
	Repository Repository `json:"repository"`
	// Databases to restore, each from its own snapshot.
	Databases []RestoreDatabase `json:"databases"`
	// ReplicationNum is RESTORE's replication_num, min(3, BEs): a snapshot
	// taken on a Cluster (3 replicas) restores into fewer BEs only with it
	// (docs: backup_restore/RESTORE, "replication_num ... Default: 3").
	ReplicationNum int `json:"replicationNum"`
}

// RestoreDatabase is one RESTORE SNAPSHOT <label> FROM <repo> DATABASE
// <name> PROPERTIES ("backup_timestamp" = BackupTimestamp).
type RestoreDatabase struct {
	Name            string `json:"name"`
	Label           string `json:"label"`
	BackupTimestamp string `json:"backupTimestamp"`
}

// Set phases (StarrocksBackup status.phase) the agent reports.
const (
	BackupPhasePending         = "Pending"
	BackupPhaseRunning         = "Running"
	BackupPhaseCompleted       = "Completed"
	BackupPhasePartiallyFailed = "PartiallyFailed"
	BackupPhaseFailed          = "Failed"
)

// Per-database states the agent reports besides StarRocks' own job states
// (SHOW BACKUP / SHOW RESTORE column State: PENDING, SNAPSHOTING,
// UPLOAD_SNAPSHOT, UPLOADING, SAVE_META, UPLOAD_INFO, FINISHED, CANCELLED for
// a backup; docs: backup_restore/SHOW_BACKUP).
const (
	// BackupDatabaseSkipped: the database is empty; StarRocks refuses to
	// back it up ("is empty").
	BackupDatabaseSkipped = "SKIPPED"
	// BackupDatabaseWaiting: not submitted yet.
	BackupDatabaseWaiting = "WAITING"
	// BackupDatabaseFailed: StarRocks refused the submission (Message has
	// its error), or the agent gave up on it (busy retries exhausted, a
	// stuck job it cancelled): no job state of StarRocks fits.
	BackupDatabaseFailed = "FAILED"
	// BackupStateFinished and BackupStateCancelled are StarRocks' final
	// job states.
	BackupStateFinished  = "FINISHED"
	BackupStateCancelled = "CANCELLED"
)

// BackupStatus is what the FE leader's agent reports about Config.Backup
// (Status.Backup). Only sets the Config names: the Kubernetes objects are
// the history, not the annotation.
type BackupStatus struct {
	Repository RepositoryStatus  `json:"repository"`
	Sets       []BackupSetStatus `json:"sets,omitempty"`
	// Deleted are the UIDs of Config.Backup.Deletes whose snapshots are
	// gone from the bucket (or were never there).
	Deleted []string `json:"deleted,omitempty"`
	// DeleteErrors: the UID and what failed, for deletions that did not
	// go through (tried again next pass).
	DeleteErrors []BackupDeleteError `json:"deleteErrors,omitempty"`
}

// RepositoryStatus is the state of the repository in StarRocks.
type RepositoryStatus struct {
	Name string `json:"name"`
	// Token is the Repository.Token the repository was created with.
	Token string `json:"token,omitempty"`
	Ready bool   `json:"ready"`
	// Reason is CamelCase when not ready (e.g. CredentialsMissing,
	// RepositoryRefused); Message StarRocks' error, without keys.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// RecreatedAt is when the agent last created the repository again
	// because it was gone (a team's db_admin may DROP it), RFC 3339.
	RecreatedAt string `json:"recreatedAt,omitempty"`
}

// BackupSetStatus is the progress of one set.
type BackupSetStatus struct {
	UID            string `json:"uid"`
	Phase          string `json:"phase"`
	StartTime      string `json:"startTime,omitempty"`
	CompletionTime string `json:"completionTime,omitempty"`
	// StarrocksVersion is the FE's version when the set started.
	StarrocksVersion string                 `json:"starrocksVersion,omitempty"`
	Message          string                 `json:"message,omitempty"`
	Databases        []BackupDatabaseStatus `json:"databases,omitempty"`
}

// BackupDatabaseStatus is one database of a set (columns of SHOW BACKUP,
// read by name: SnapshotName, DbName, State, Status).
type BackupDatabaseStatus struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// BackupTimestamp is SHOW SNAPSHOT's Timestamp of the snapshot, needed
	// by RESTORE (yyyy-MM-dd-HH-mm-ss, optionally -SSS).
	BackupTimestamp string `json:"backupTimestamp,omitempty"`
	State           string `json:"state"`
	Message         string `json:"message,omitempty"`
	// JobStartTime is when the database's running job was submitted (RFC
	// 3339), set while it runs: the hooks hold pod restarts for it at most
	// the job timeout from then.
	JobStartTime string `json:"jobStartTime,omitempty"`
}

// BackupDeleteError is a deletion that failed this pass.
type BackupDeleteError struct {
	UID     string `json:"uid"`
	Message string `json:"message"`
}

// RestoreStatus is the progress of Config.Restore.
type RestoreStatus struct {
	Token string `json:"token"`
	// Phase is Running, Completed or Failed (BackupPhase*).
	Phase          string                  `json:"phase"`
	StartTime      string                  `json:"startTime,omitempty"`
	CompletionTime string                  `json:"completionTime,omitempty"`
	Message        string                  `json:"message,omitempty"`
	Databases      []RestoreDatabaseStatus `json:"databases,omitempty"`
}

// RestoreDatabaseStatus is one database (SHOW RESTORE columns Label,
// DbName, State, Status, read by name; State is StarRocks' own: PENDING,
// SNAPSHOTING, DOWNLOAD, DOWNLOADING, COMMIT, COMMITTING, FINISHED,
// CANCELLED; docs: backup_restore/SHOW_RESTORE, StarRocks 3.2 to 4.0).
type RestoreDatabaseStatus struct {
	Name    string `json:"name"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// JobStartTime: as BackupDatabaseStatus.JobStartTime.
	JobStartTime string `json:"jobStartTime,omitempty"`
}

// JobRunning reports whether a database's State is that of a job
// StarRocks runs (neither waiting for its turn nor final).
func JobRunning(state string) bool {
	switch state {
	case "", BackupDatabaseWaiting, BackupDatabaseSkipped, BackupDatabaseFailed, BackupStateFinished, BackupStateCancelled:
		return false
	}
	return true
}

// DatabaseNamePattern is StarRocks 4.1's rule for a database name, the one
// rule of every layer that handles the names of backed-up databases (the
// CRDs, the webhook, the hooks, the agent): fe-core
// sql/analyzer/FeNameFormat.DB_NAME_REGEX, "^[a-zA-Z][\w<special>]{0,255}$|
// ^_[a-zA-Z0-9][\w<special>]{0,254}$" with SPECIAL_CHARACTERS_IN_DB_NAME
// - ~ ! @ # $ % ^ & < > = + (Java's \w is [a-zA-Z0-9_]), so `sales-2024`
// is a database. None of them is a backtick, quote, backslash, dot or
// space: a name of this rule is safe in backticks in a statement.
const DatabaseNamePattern = `^([a-zA-Z][-~!@#$%^&<>=+\w]{0,255}|_[a-zA-Z0-9][-~!@#$%^&<>=+\w]{0,254})$`

// DatabaseNameMaxLength is DatabaseNamePattern's bound.
const DatabaseNameMaxLength = 256

var (
	// A StarRocks repository name is a "common name":
	// ^[a-zA-Z]\w{0,63}$ (fe-core common/FeNameFormat.java,
	// COMMON_NAME_REGEX, checked by CREATE REPOSITORY).
	repositoryNameRE = regexp.MustCompile(`^d8ms_[0-9a-f]{32}$`)
	// Snapshot labels: ^[-\w]{1,128}$ (FeNameFormat.LABEL_REGEX).
	labelRE       = regexp.MustCompile(`^[-_A-Za-z0-9]{1,128}$`)
	labelPrefixRE = regexp.MustCompile(`^d8ms_[0-9a-f]{16}$`)
	// Database names of backups and restores: StarRocks' own rule, as
	// the team may create any database with SQL.
	starrocksDatabaseRE = regexp.MustCompile(DatabaseNamePattern)
	uidRE               = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	objectNameRE        = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	secretKeyRE         = regexp.MustCompile(`^[-._a-zA-Z0-9]{1,253}$`)
	// EndpointPattern is an S3 endpoint: scheme, host (DNS name or IPv4),
	// optional port, nothing else (no user info, path or query a tenant
	// could smuggle into a property or a NetworkPolicy).
	EndpointPattern = `^https?://[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`
	endpointRE      = regexp.MustCompile(EndpointPattern)
	// RegionPattern: an AWS-style region name.
	RegionPattern = `^[a-z0-9][-a-z0-9]{0,62}$`
	regionRE      = regexp.MustCompile(RegionPattern)
	// LocationPattern: s3://<bucket>/<path>, bucket as S3 names them, path
	// segments of safe characters.
	LocationPattern   = `^s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9](/[-_.a-zA-Z0-9]+)+$`
	locationRE        = regexp.MustCompile(LocationPattern)
	backupTimestampRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}(-[0-9]{3})?$`)
	tokenRE           = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// RepositoryName is the StarRocks repository of the instance with this UID:
// unique per instance and the same on every run, so a restore finds the
// source's repository under the name it was written with.
func RepositoryName(instanceUID string) string {
	return "d8ms_" + strings.ReplaceAll(strings.ToLower(instanceUID), "-", "")
}

// ShortUID is the first 8 hex digits of a UID, as the location uses it.
func ShortUID(uid string) string {
	u := strings.ReplaceAll(strings.ToLower(uid), "-", "")
	if len(u) > 8 {
		u = u[:8]
	}
	return u
}

// RepositoryLocation is s3://<bucket>/<prefix>/<namespace>/<instance>-<short
// uid>: the module appends the instance so that two instances (or an
// instance deleted and created again under its name) never share a location.
func RepositoryLocation(bucket, prefix, namespace, instance, instanceUID string) string {
	p := strings.Trim(prefix, "/")
	if p != "" {
		p += "/"
	}
	return "s3://" + bucket + "/" + p + namespace + "/" + instance + "-" + ShortUID(instanceUID)
}

// BackupLabelPrefix is the label prefix of the set with this UID.
func BackupLabelPrefix(setUID string) string {
	return "d8ms_" + ShortUIDN(setUID, 16)
}

// ShortUIDN is the first n hex digits of a UID.
func ShortUIDN(uid string, n int) string {
	u := strings.ReplaceAll(strings.ToLower(uid), "-", "")
	if len(u) > n {
		u = u[:n]
	}
	return u
}

// BackupLabel is the snapshot label of one database of a set: labels are
// unique per repository across databases, so the database is part of it;
// a database name that would not fit StarRocks' label rule (128 characters
// of [-\w]) is replaced by the first 16 hex digits of its SHA-256.
func BackupLabel(prefix, database string) string {
	l := prefix + "_" + database
	if labelRE.MatchString(l) {
		return l
	}
	sum := sha256.Sum256([]byte(database))
	return prefix + "_h" + hex.EncodeToString(sum[:8])
}

// RepositoryToken is the first 16 hex digits of the SHA-256 of what the
// repository is created with (Token left out).
func RepositoryToken(r Repository) string {
	r.Token = ""
	ca := ""
	if r.CA != nil {
		ca = r.CA.Name + "/" + r.CA.Key
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{r.Name, r.Location, r.Endpoint, r.Region,
		fmt.Sprint(r.PathStyle), fmt.Sprint(r.EnableSSL), r.Credentials.SecretName,
		r.Credentials.AccessKeyIDKey, r.Credentials.SecretAccessKeyKey, ca, fmt.Sprint(r.ReadOnly)}, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// validateBackup checks the backup fields of a Config. The hooks write only what
// passes these rules; the agent refuses a Config that does not (a forged
// ConfigMap is not possible for a tenant, but a bug must not reach SQL).
func (c *Config) validateBackup() error {
	if c.BackupHold != "" && c.BackupHold != BackupHoldRollout && c.BackupHold != BackupHoldScaleIn {
		return fmt.Errorf("backupHold %q is not %s or %s", c.BackupHold, BackupHoldRollout, BackupHoldScaleIn)
	}
	if t := c.BackupJobTimeoutSeconds; t != 0 && (t < MinBackupJobTimeoutSeconds || t > MaxBackupJobTimeoutSeconds) {
		return fmt.Errorf("backupJobTimeoutSeconds %d: must be %d to %d", t, MinBackupJobTimeoutSeconds, MaxBackupJobTimeoutSeconds)
	}
	if b := c.Backup; b != nil {
		if err := b.Repository.validate("backup.repository"); err != nil {
			return err
		}
		if b.Repository.ReadOnly {
			return fmt.Errorf("backup.repository.readOnly: the instance's own repository is written to")
		}
		if len(b.Sets) > MaxBackupSets {
			return fmt.Errorf("backup.sets has %d entries, at most %d", len(b.Sets), MaxBackupSets)
		}
		for i, s := range b.Sets {
			if err := validateSetRef(fmt.Sprintf("backup.sets[%d]", i), s.Name, s.UID, s.LabelPrefix); err != nil {
				return err
			}
			if len(s.Include) > MaxBackupDatabases || len(s.Exclude) > MaxBackupDatabases {
				return fmt.Errorf("backup.sets[%d]: at most %d databases in include and in exclude", i, MaxBackupDatabases)
			}
			for _, d := range append(append([]string{}, s.Include...), s.Exclude...) {
				if !starrocksDatabaseRE.MatchString(d) {
					return fmt.Errorf("backup.sets[%d]: database %q does not match %s", i, d, starrocksDatabaseRE)
				}
			}
		}
		if len(b.Deletes) > MaxBackupDeletes {
			return fmt.Errorf("backup.deletes has %d entries, at most %d", len(b.Deletes), MaxBackupDeletes)
		}
		for i, d := range b.Deletes {
			if err := validateSetRef(fmt.Sprintf("backup.deletes[%d]", i), d.Name, d.UID, d.LabelPrefix); err != nil {
				return err
			}
		}
	}
	if r := c.Restore; r != nil {
		if !tokenRE.MatchString(r.Token) {
			return fmt.Errorf("restore.token %q is not 16 hex digits", r.Token)
		}
		if err := r.Repository.validate("restore.repository"); err != nil {
			return err
		}
		if !r.Repository.ReadOnly {
			return fmt.Errorf("restore.repository.readOnly must be true: a restore never writes into its source")
		}
		if len(r.Databases) == 0 || len(r.Databases) > MaxBackupDatabases {
			return fmt.Errorf("restore.databases has %d entries, 1 to %d", len(r.Databases), MaxBackupDatabases)
		}
		for i, d := range r.Databases {
			switch {
			case !starrocksDatabaseRE.MatchString(d.Name):
				return fmt.Errorf("restore.databases[%d].name %q does not match %s", i, d.Name, starrocksDatabaseRE)
			case !labelRE.MatchString(d.Label):
				return fmt.Errorf("restore.databases[%d].label %q does not match %s", i, d.Label, labelRE)
			case !backupTimestampRE.MatchString(d.BackupTimestamp):
				return fmt.Errorf("restore.databases[%d].backupTimestamp %q is not yyyy-MM-dd-HH-mm-ss[-SSS]", i, d.BackupTimestamp)
			}
		}
		if r.ReplicationNum < 1 || r.ReplicationNum > 3 {
			return fmt.Errorf("restore.replicationNum %d is not 1 to 3", r.ReplicationNum)
		}
	}
	return nil
}

func validateSetRef(field, name, uid, prefix string) error {
	switch {
	case len(name) > 253 || !objectNameRE.MatchString(name):
		return fmt.Errorf("%s.name %q is not an object name", field, name)
	case !uidRE.MatchString(uid):
		return fmt.Errorf("%s.uid %q is not a UID", field, uid)
	case prefix != BackupLabelPrefix(uid) || !labelPrefixRE.MatchString(prefix):
		return fmt.Errorf("%s.labelPrefix %q is not BackupLabelPrefix(uid) %q", field, prefix, BackupLabelPrefix(uid))
	}
	return nil
}

func (r *Repository) validate(field string) error {
	switch {
	case !repositoryNameRE.MatchString(r.Name):
		return fmt.Errorf("%s.name %q does not match %s", field, r.Name, repositoryNameRE)
	case len(r.Location) > 1024 || !locationRE.MatchString(r.Location):
		return fmt.Errorf("%s.location %q does not match %s", field, r.Location, LocationPattern)
	case len(r.Endpoint) > 512 || !endpointRE.MatchString(r.Endpoint):
		return fmt.Errorf("%s.endpoint %q does not match %s", field, r.Endpoint, EndpointPattern)
	case r.Region != "" && !regionRE.MatchString(r.Region):
		return fmt.Errorf("%s.region %q does not match %s", field, r.Region, RegionPattern)
	case r.EnableSSL != strings.HasPrefix(r.Endpoint, "https://"):
		return fmt.Errorf("%s.enableSSL %v disagrees with endpoint %q", field, r.EnableSSL, r.Endpoint)
	case len(r.Credentials.SecretName) > 253 || !objectNameRE.MatchString(r.Credentials.SecretName):
		return fmt.Errorf("%s.credentials.secretName %q is not an object name", field, r.Credentials.SecretName)
	case !secretKeyRE.MatchString(r.Credentials.AccessKeyIDKey):
		return fmt.Errorf("%s.credentials.accessKeyIdKey %q is not a Secret key", field, r.Credentials.AccessKeyIDKey)
	case !secretKeyRE.MatchString(r.Credentials.SecretAccessKeyKey):
		return fmt.Errorf("%s.credentials.secretAccessKeyKey %q is not a Secret key", field, r.Credentials.SecretAccessKeyKey)
	case r.CA != nil && (len(r.CA.Name) > 253 || !objectNameRE.MatchString(r.CA.Name) || !secretKeyRE.MatchString(r.CA.Key)):
		return fmt.Errorf("%s.ca %q/%q is not a Secret name and key", field, r.CA.Name, r.CA.Key)
	case r.Token != RepositoryToken(*r):
		return fmt.Errorf("%s.token %q is not RepositoryToken %q", field, r.Token, RepositoryToken(*r))
	}
	return nil
}

// TruncateBackupMessage bounds a message for the report (MaxBackupMessageLen
// bytes, cut on a rune boundary).
func TruncateBackupMessage(s string) string {
	if len(s) <= MaxBackupMessageLen {
		return s
	}
	cut := MaxBackupMessageLen - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
