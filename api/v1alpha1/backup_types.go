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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Everything here is written by tenants (spec) and is hostile input: every
// string has a pattern and a maxLength, repeated in pkg/desired's schema and
// checked again by pkg/classrules, so nothing raw reaches a template, a
// NetworkPolicy or an SQL statement. Keys are only referenced by Secret name.

// BackupSpec is where, when, what and how long an instance is backed up
// (spec.backup).
type BackupSpec struct {
	// S3-compatible object storage of the team.
	Storage BackupStorage `json:"storage"`

	// When a backup starts: a 5-field cron expression (minute hour
	// day-of-month month day-of-week, UTC), e.g. `0 3 * * *` (daily at
	// 03:00). Numbers, `*`, ranges `a-b`, steps `/n` and lists `a,b` only.
	// The class may set a shortest interval. Empty: no scheduled backups,
	// only those created by hand.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[0-9*/,-]+( [0-9*/,-]+){4}$`
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// Stop scheduled backups; backups created by hand still run.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Which databases: all (system databases left out) unless `include`
	// lists them; `exclude` leaves some out.
	// +optional
	Databases *BackupDatabases `json:"databases,omitempty"`

	// How long scheduled backups are kept. Backups created by hand are kept
	// until deleted.
	// +optional
	Retention *BackupRetention `json:"retention,omitempty"`
}

// BackupStorage is an S3-compatible bucket. The module appends
// `<namespace>/<instance>-<first 8 characters of the instance UID>` to the
// prefix, so two instances never share a location.
type BackupStorage struct {
	// S3 endpoint URL: scheme, host and optional port, nothing else, e.g.
	// `https://s3.example.com` or `http://minio.storage.svc:9000`. The class
	// may limit the hosts allowed.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`
	Endpoint string `json:"endpoint"`

	// Region, e.g. `us-east-1`.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][-a-z0-9]{0,62}$`
	// +optional
	Region string `json:"region,omitempty"`

	// Bucket name (3-63 lowercase letters, digits, '-' and '.'), e.g. `team-backups`.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][-a-z0-9.]{1,61}[a-z0-9]$`
	Bucket string `json:"bucket"`

	// Key prefix inside the bucket: path segments of letters, digits, '-',
	// '_' and '.', separated by '/', e.g. `starrocks/prod`.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[-_a-zA-Z0-9]+(/[-_.a-zA-Z0-9]+)*$`
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// Address the bucket in the path (`https://host/bucket`) rather than
	// in the host name; most self-hosted S3 servers need it.
	// +optional
	PathStyle bool `json:"pathStyle,omitempty"`

	// A Secret of the namespace with the CA bundle (PEM) of the endpoint.
	// +optional
	CASecretRef *BackupSecretKeyRef `json:"caSecretRef,omitempty"`

	// A Secret of the namespace with the access keys. The module never
	// copies the keys: the instance's agent reads this Secret by name.
	CredentialsSecretRef BackupCredentialsRef `json:"credentialsSecretRef"`
}

// BackupSecretKeyRef is a key of a Secret in the instance's namespace.
type BackupSecretKeyRef struct {
	// Secret name, e.g. `s3-ca`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key in the Secret, e.g. `ca.crt`.
	// +kubebuilder:default="ca.crt"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	Key string `json:"key,omitempty"`
}

// BackupCredentialsRef names the Secret with the S3 keys and its keys.
type BackupCredentialsRef struct {
	// Secret name, e.g. `s3-backup-keys`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key holding the access key id.
	// +kubebuilder:default="accessKeyID"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	AccessKeyIDKey string `json:"accessKeyIDKey,omitempty"`
	// Key holding the secret access key.
	// +kubebuilder:default="secretAccessKey"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +optional
	SecretAccessKeyKey string `json:"secretAccessKeyKey,omitempty"`
}

// BackupDatabases selects databases by name.
type BackupDatabases struct {
	// Only these databases, e.g. `[sales, events]`.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^([a-zA-Z][-~!@#$%^&<>=+\w]{0,255}|_[a-zA-Z0-9][-~!@#$%^&<>=+\w]{0,254})$`
	// +listType=set
	// +optional
	Include []string `json:"include,omitempty"`
	// All databases but these.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^([a-zA-Z][-~!@#$%^&<>=+\w]{0,255}|_[a-zA-Z0-9][-~!@#$%^&<>=+\w]{0,254})$`
	// +listType=set
	// +optional
	Exclude []string `json:"exclude,omitempty"`
}

// BackupRetention keeps scheduled backups by count and by age; a backup is
// deleted (with its data in the bucket) once it is kept by neither. The
// newest Completed backup is always kept.
// +kubebuilder:validation:XValidation:rule="has(self.keepLast) || has(self.keepWithin)",message="retention needs keepLast, keepWithin or both, e.g. keepLast: 7"
type BackupRetention struct {
	// Keep the newest N scheduled backups, e.g. 7.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`
	// Keep scheduled backups younger than this, e.g. `168h` (Go duration:
	// hours, minutes, seconds).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	// +optional
	KeepWithin string `json:"keepWithin,omitempty"`
}

// RestoreSpec restores a backup into a new instance (spec.restore). Set only
// when the instance is created; it cannot change.
// +kubebuilder:validation:XValidation:rule="has(self.backupName) != has(self.source)",message="restore needs exactly one of backupName (a StarrocksBackup of this namespace) or source (storage and backupId), e.g. backupName: olap-20260101-0300"
type RestoreSpec struct {
	// A StarrocksBackup of this namespace in phase Completed or
	// PartiallyFailed, e.g. `olap-20260101-0300`.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	BackupName string `json:"backupName,omitempty"`

	// A backup whose StarrocksBackup object is gone: where it is and which
	// one.
	// +optional
	Source *RestoreSource `json:"source,omitempty"`

	// Only these databases of the backup; all by default.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^([a-zA-Z][-~!@#$%^&<>=+\w]{0,255}|_[a-zA-Z0-9][-~!@#$%^&<>=+\w]{0,254})$`
	// +listType=set
	// +optional
	Databases []string `json:"databases,omitempty"`
}

// RestoreSource is a backup found by its location.
type RestoreSource struct {
	// The storage the backup was written to, as in the source instance's
	// spec.backup.storage.
	Storage BackupStorage `json:"storage"`
	// Namespace of the source instance.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// Name of the source instance.
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	InstanceName string `json:"instanceName"`
	// UID of the source instance (metadata.uid; also in the
	// StarrocksBackup's status.location).
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
	InstanceUID string `json:"instanceUID"`
	// UID of the StarrocksBackup (its metadata.uid), which names its
	// snapshots.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
	BackupID string `json:"backupId"`
	// The backup's databases with their backup timestamps, from the
	// StarrocksBackup's status.databases.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	Databases []RestoreSourceDatabase `json:"databases"`
}

// One database of a backup found by location.
type RestoreSourceDatabase struct {
	// Name of the database as StarRocks 4.1 accepts it, e.g.
	// `sales-2024`.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^([a-zA-Z][-~!@#$%^&<>=+\w]{0,255}|_[a-zA-Z0-9][-~!@#$%^&<>=+\w]{0,254})$`
	Name string `json:"name"`
	// StarRocks backup timestamp, e.g. `2026-01-01-03-00-05`.
	// +kubebuilder:validation:MaxLength=23
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}(-[0-9]{3})?$`
	BackupTimestamp string `json:"backupTimestamp"`
}

// InstanceBackupStatus is the backup state of an instance (status.backup).
type InstanceBackupStatus struct {
	// When the newest Completed backup finished.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// The newest failure.
	// +optional
	LastFailure *BackupFailure `json:"lastFailure,omitempty"`
	// When the schedule starts the next backup.
	// +optional
	NextScheduledTime *metav1.Time `json:"nextScheduledTime,omitempty"`
}

// BackupFailure is when and why a backup failed.
type BackupFailure struct {
	// When the failed backup ended.
	Time metav1.Time `json:"time"`
	// What failed, with StarRocks' own message.
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`
}

// Condition types and reasons of backups and restore.
const (
	// ConditionBackupsHealthy is False when the repository cannot be used
	// or the newest backup failed.
	ConditionBackupsHealthy = "BackupsHealthy"
	// ConditionRestored is False while spec.restore runs or after it
	// failed; True once every database is restored.
	ConditionRestored = "Restored"
	// ReasonRestoring: Available is False while a restore runs.
	ReasonRestoring = "Restoring"
)

// BackupPhase is the one-word state of a StarrocksBackup.
// +kubebuilder:validation:Enum=Pending;Running;Completed;PartiallyFailed;Failed;Refused
type BackupPhase string

const (
	BackupPhasePending         BackupPhase = "Pending"
	BackupPhaseRunning         BackupPhase = "Running"
	BackupPhaseCompleted       BackupPhase = "Completed"
	BackupPhasePartiallyFailed BackupPhase = "PartiallyFailed"
	BackupPhaseFailed          BackupPhase = "Failed"
	// BackupPhaseRefused: beyond its instance's limit (the class's
	// spec.backup.maxBackups) before it started; never run, holds no data.
	BackupPhaseRefused BackupPhase = "Refused"
)

// BackupFinalizer is removed by the module once the backup's data is
// deleted from the bucket, or at once when its instance no longer exists
// (then the data stays in the bucket).
const BackupFinalizer = "managed-services.deckhouse.io/starrocks-backup"

// One backup set of a Starrocks instance: one StarRocks snapshot per
// database in the instance's bucket. Created by the module on the
// instance's schedule or by the team for a backup now. Deleting it deletes
// its data in the bucket while the instance exists. It has no owner
// reference to the instance: backups outlive it and can be restored into a
// new one.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=srbackup,categories=managed-services
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.spec.instanceName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Databases",type=integer,JSONPath=`.status.databaseCount`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StarrocksBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Which instance and which databases. Cannot change.
	Spec StarrocksBackupSpec `json:"spec"`
	// What the module reports. Written by the module only.
	// +optional
	Status StarrocksBackupStatus `json:"status,omitempty"`
}

// StarrocksBackupSpec says which instance and which databases.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="StarrocksBackup spec is immutable: create a new StarrocksBackup"
type StarrocksBackupSpec struct {
	// The Starrocks of this namespace to back up, e.g. `olap`; it needs
	// spec.backup.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	InstanceName string `json:"instanceName"`
	// Databases of this backup; the instance's spec.backup.databases by
	// default.
	// +optional
	Databases *BackupDatabases `json:"databases,omitempty"`
}

// StarrocksBackupStatus is reported by the module from the instance's agent.
type StarrocksBackupStatus struct {
	// Pending (waiting for its turn), Running, Completed (every database
	// backed up or skipped as empty), PartiallyFailed (some databases
	// failed), Failed, or Refused (beyond the most backups the instance's
	// class allows, spec.backup.maxBackups: never run; delete it).
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`
	// When the first database's backup started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// When the last database's backup ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// How long it took (or runs), e.g. `4m10s`, for kubectl.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Duration string `json:"duration,omitempty"`
	// StarRocks version of the instance when the backup started.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	StarrocksVersion string `json:"starrocksVersion,omitempty"`
	// Where the snapshots are: s3://bucket/prefix/namespace/instance-uid.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Location string `json:"location,omitempty"`
	// UID of the instance the backup was taken from (for a restore by
	// location after the instance is gone).
	// +kubebuilder:validation:MaxLength=36
	// +optional
	InstanceUID string `json:"instanceUID,omitempty"`
	// Type of the instance when the backup was taken: a backup of a
	// Cluster restores only into a Cluster.
	// +optional
	InstanceType InstanceType `json:"instanceType,omitempty"`
	// Number of databases, for kubectl.
	// +optional
	DatabaseCount int32 `json:"databaseCount,omitempty"`
	// One entry per database.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Databases []BackupDatabaseStatus `json:"databases,omitempty"`
	// Why it failed or what it waits for, for a person.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// One database's snapshot.
type BackupDatabaseStatus struct {
	// Name of the database.
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
	// The snapshot label in StarRocks.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Label string `json:"label,omitempty"`
	// StarRocks backup timestamp (needed to restore): the database's own
	// point in time; databases are backed up one after another.
	// +kubebuilder:validation:MaxLength=23
	// +optional
	BackupTimestamp string `json:"backupTimestamp,omitempty"`
	// StarRocks' job state (FINISHED, CANCELLED, UPLOADING, ...) or
	// SKIPPED (no tables or views) or WAITING.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	State string `json:"state,omitempty"`
	// StarRocks' own message when it failed; for a finished database,
	// its asynchronous materialized views the snapshot does not hold.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// StarrocksBackupList is a list of StarrocksBackup.
// +kubebuilder:object:root=true
type StarrocksBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StarrocksBackup `json:"items"`
}

// ClassBackupPolicy is what the admin allows for backups
// (StarrocksClass spec.backup). Without it backups are not allowed.
type ClassBackupPolicy struct {
	// Whether instances of the class may set spec.backup and spec.restore.
	Allowed bool `json:"allowed"`
	// Endpoint hosts allowed, exactly or as `*.suffix` for any subdomain,
	// e.g. `s3.example.com`, `*.storage.svc`. Empty: any endpoint.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^([*][.])?[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +listType=set
	// +optional
	AllowedEndpoints []string `json:"allowedEndpoints,omitempty"`
	// Shortest time between two scheduled backups, e.g. `1h`.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	// +optional
	MinScheduleInterval string `json:"minScheduleInterval,omitempty"`
	// Largest retention instances may ask for.
	// +optional
	MaxRetention *ClassMaxRetention `json:"maxRetention,omitempty"`
	// Most StarrocksBackup objects one instance may have: scheduled and
	// created by hand, failed, refused and being deleted alike, e.g. 100.
	// The webhook refuses a StarrocksBackup beyond it, one that got past is
	// not run (phase `Refused`), and the schedule starts no backup while an
	// instance has this many. Keep it above maxRetention.keepLast. Lowering
	// it deletes nothing: existing backups are kept and still deleted with
	// their data on request. Default 1000 (the largest keepLast), at most 1000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxBackups *int32 `json:"maxBackups,omitempty"`
	// Longest one database's BACKUP or RESTORE job may run, in whole hours
	// from 1h to 168h, e.g. `48h`: StarRocks cancels a job that runs longer,
	// and a job holds the instance's pod restarts at most this long. A job
	// that shows no progress (no upload or download task done) for 6 hours
	// is cancelled sooner. Raise it for databases whose upload or download
	// takes longer than a day. Default `24h` (StarRocks' own default).
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^([1-9]|[1-9][0-9]|1[0-5][0-9]|16[0-8])h$`
	// +optional
	JobTimeout string `json:"jobTimeout,omitempty"`
}

// ClassMaxRetention bounds spec.backup.retention.
type ClassMaxRetention struct {
	// Largest keepLast, e.g. 30.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`
	// Longest keepWithin, e.g. `720h`.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	// +optional
	KeepWithin string `json:"keepWithin,omitempty"`
}
