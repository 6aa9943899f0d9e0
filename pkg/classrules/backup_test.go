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

package classrules

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func backupClass() *v1alpha1.StarrocksClass {
	cl := testClass()
	cl.Spec.Backup = &v1alpha1.ClassBackupPolicy{
		Allowed:             true,
		AllowedEndpoints:    []string{"s3.example.com", "*.storage.svc"},
		MinScheduleInterval: "1h",
		MaxRetention:        &v1alpha1.ClassMaxRetention{KeepLast: ptr(int32(30)), KeepWithin: "720h"},
	}
	return cl
}

func backupInstance() *v1alpha1.Starrocks {
	sr := testInstance()
	sr.Spec.Backup = &v1alpha1.BackupSpec{
		Storage: v1alpha1.BackupStorage{
			Endpoint: "https://s3.example.com", Bucket: "team-backups", Prefix: "starrocks/prod",
			CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"},
		},
		Schedule:  "0 3 * * *",
		Retention: &v1alpha1.BackupRetention{KeepLast: ptr(int32(7)), KeepWithin: "168h"},
	}
	return sr
}

func TestBackupRules(t *testing.T) {
	if vs := mustCompile(t, backupClass()).Validate(backupInstance()); len(vs) != 0 {
		t.Fatalf("a valid backup was refused: %v", vs)
	}
	cases := []struct {
		name   string
		class  func(*v1alpha1.StarrocksClass)
		mutate func(*v1alpha1.Starrocks)
		field  string
		want   string
	}{
		{"refuses backups in a class without a policy", func(c *v1alpha1.StarrocksClass) { c.Spec.Backup = nil }, nil,
			"spec.backup", "does not allow backups"},
		{"refuses backups in a class that forbids them", func(c *v1alpha1.StarrocksClass) { c.Spec.Backup.Allowed = false }, nil,
			"spec.backup", "does not allow backups"},
		{"refuses an endpoint the class does not allow", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backup.Storage.Endpoint = "https://evil.example.org"
		}, "spec.backup.storage.endpoint", "not among the endpoints the class allows"},
		{"refuses the suffix itself for a wildcard", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backup.Storage.Endpoint = "http://storage.svc:9000"
		}, "spec.backup.storage.endpoint", "not among the endpoints"},
		{"refuses an IP address against a wildcard", func(c *v1alpha1.StarrocksClass) { c.Spec.Backup.AllowedEndpoints = []string{"*.0.0.1"} },
			func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.Endpoint = "http://127.0.0.1:9000" },
			"spec.backup.storage.endpoint", "not among the endpoints"},
		{"refuses an endpoint with user info", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backup.Storage.Endpoint = "https://k:s@s3.example.com"
		}, "spec.backup.storage.endpoint", "scheme://host[:port]"},
		{"refuses port 0", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.Endpoint = "https://s3.example.com:0" },
			"spec.backup.storage.endpoint", "not 1 to 65535"},
		{"refuses port 99999", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.Endpoint = "https://s3.example.com:99999" },
			"spec.backup.storage.endpoint", "not 1 to 65535"},
		{"refuses an invalid cron", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Schedule = "0 25 * * *" },
			"spec.backup.schedule", "hour field"},
		{"refuses a schedule more often than the class allows", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Schedule = "*/30 * * * *" },
			"spec.backup.schedule", "more often than the class allows"},
		{"refuses two runs an hour apart at night only when the floor is longer", func(c *v1alpha1.StarrocksClass) { c.Spec.Backup.MinScheduleInterval = "2h" },
			func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Schedule = "0 2,3 * * *" }, "spec.backup.schedule", "1h0m0s apart"},
		{"refuses keepLast beyond the class", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Retention.KeepLast = ptr(int32(31)) },
			"spec.backup.retention.keepLast", "at most 30 backups"},
		{"refuses keepWithin beyond the class", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Retention.KeepWithin = "721h" },
			"spec.backup.retention.keepWithin", "at most 720h0m0s"},
		{"refuses no retention when the class limits it", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Retention = nil },
			"spec.backup.retention", "must say it"},
		{"refuses keepWithin in days", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Retention.KeepWithin = "7d" },
			"spec.backup.retention.keepWithin", "hours, minutes and seconds"},
		{"refuses a hostile bucket", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.Bucket = "b\n---" },
			"spec.backup.storage.bucket", "bucket name"},
		{"refuses a hostile prefix", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.Prefix = "../../x\"" },
			"spec.backup.storage.prefix", "path segments"},
		{"refuses a hostile region", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.Region = "us\"; DROP" },
			"spec.backup.storage.region", "region name"},
		{"refuses a hostile Secret name", nil, func(sr *v1alpha1.Starrocks) { sr.Spec.Backup.Storage.CredentialsSecretRef.Name = "{{ .Values }}" },
			"spec.backup.storage.credentialsSecretRef.name", "DNS-1123 subdomain"},
		{"refuses a hostile Secret key", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backup.Storage.CredentialsSecretRef.SecretAccessKeyKey = "a b"
		}, "spec.backup.storage.credentialsSecretRef.secretAccessKeyKey", "Secret key"},
		{"refuses a hostile CA Secret", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backup.Storage.CASecretRef = &v1alpha1.BackupSecretKeyRef{Name: "ca", Key: "a\nb"}
		}, "spec.backup.storage.caSecretRef.key", "Secret key"},
		{"refuses a hostile database", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backup.Databases = &v1alpha1.BackupDatabases{Include: []string{"sales`; DROP"}}
		}, "spec.backup.databases.include[0]", "database name"},
		{"refuses a restore in a class without backups", func(c *v1alpha1.StarrocksClass) { c.Spec.Backup = nil },
			func(sr *v1alpha1.Starrocks) {
				sr.Spec.Backup = nil
				sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: "olap-1"}
			}, "spec.restore", "does not allow"},
		{"refuses a restore source at a disallowed endpoint", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Restore = &v1alpha1.RestoreSpec{Source: &v1alpha1.RestoreSource{
				Storage: v1alpha1.BackupStorage{Endpoint: "https://other.example.org", Bucket: "b-1",
					CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "k"}},
				Namespace: "team-a", InstanceName: "olap", InstanceUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
				BackupID:  "11112222-3333-4444-5555-666677778888",
				Databases: []v1alpha1.RestoreSourceDatabase{{Name: "sales", BackupTimestamp: "2026-01-01-03-00-05"}}}}
		}, "spec.restore.source.storage.endpoint", "not among the endpoints"},
		{"refuses a hostile backup timestamp", nil, func(sr *v1alpha1.Starrocks) {
			sr.Spec.Restore = &v1alpha1.RestoreSpec{Source: &v1alpha1.RestoreSource{
				Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com", Bucket: "b-1",
					CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "k"}},
				Namespace: "team-a", InstanceName: "olap", InstanceUID: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
				BackupID:  "11112222-3333-4444-5555-666677778888",
				Databases: []v1alpha1.RestoreSourceDatabase{{Name: "sales", BackupTimestamp: "2026\"); DROP"}}}}
		}, "spec.restore.source.databases[0].backupTimestamp", "backup timestamp"},
		{"a class CEL rule sees the backup fields", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "!backup.enabled || backup.keepLast >= 10", Message: "keep at least 10 backups"})
		}, nil, "", "keep at least 10 backups"},
		{"a class CEL rule sees the endpoint host", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "backup.host != 's3.example.com' || backup.schedule == '0 1 * * *'", Message: "s3.example.com backs up at 01:00"})
		}, nil, "", "backs up at 01:00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := backupClass()
			if tc.class != nil {
				tc.class(cl)
			}
			sr := backupInstance()
			if tc.mutate != nil {
				tc.mutate(sr)
			}
			vs := mustCompile(t, cl).Validate(sr)
			for _, v := range vs {
				if (tc.field == "" || v.Field == tc.field) && strings.Contains(v.Error(), tc.want) {
					return
				}
			}
			t.Fatalf("want a violation of %s with %q, got %v", tc.field, tc.want, vs)
		})
	}
}

// StarRocks 4.1 database names with its special characters are databases a
// team has (fe-core FeNameFormat.DB_NAME_REGEX): every list of databases
// takes them; a name that could end a backtick quote does not pass.
func TestBackupDatabasesAsStarRocksNamesThem(t *testing.T) {
	cl := mustCompile(t, backupClass())
	sr := backupInstance()
	names := []string{"sales-2024", "Q1~report", "_a=b+c", "x@y#z$%^&<>!"}
	sr.Spec.Backup.Databases = &v1alpha1.BackupDatabases{Include: names, Exclude: names}
	sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: "olap-1", Databases: names}
	if vs := cl.Validate(sr); len(vs) != 0 {
		t.Fatalf("StarRocks' own database names refused: %v", vs)
	}
	for _, bad := range []string{"sales`x", "a b", "a.b", "-a", "_-a", "a'b", "a\\b", strings.Repeat("a", 257)} {
		sr.Spec.Backup.Databases = &v1alpha1.BackupDatabases{Include: []string{bad}}
		if vs := cl.Validate(sr); !strings.Contains(vs.Error(), "spec.backup.databases.include[0]") {
			t.Errorf("database %q accepted: %v", bad, vs)
		}
	}
}

func TestClassBackupPolicyIsChecked(t *testing.T) {
	cl := backupClass()
	cl.Spec.Backup.AllowedEndpoints = []string{"https://s3.example.com"}
	cl.Spec.Backup.MinScheduleInterval = "1d"
	cl.Spec.Backup.JobTimeout = "169h"
	_, vs := Compile(cl)
	got := vs.Error()
	for _, want := range []string{"spec.backup.allowedEndpoints[0]", "spec.backup.minScheduleInterval", "spec.backup.jobTimeout"} {
		if !strings.Contains(got, want) {
			t.Errorf("class problems %q lack %s", got, want)
		}
	}
}

// A class's job timeout: whole hours within StarRocks' sense (at least
// its 10-minute minimum) and a week at most; anything else is the default
// day, as an unset one.
func TestBackupJobTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 24 * time.Hour, "1h": time.Hour, "48h": 48 * time.Hour, "168h": 168 * time.Hour,
		"169h": 24 * time.Hour, "0h": 24 * time.Hour, "90m": 24 * time.Hour, "2d": 24 * time.Hour} {
		cl := backupClass()
		cl.Spec.Backup.JobTimeout = in
		if got := BackupJobTimeout(cl); got != want {
			t.Errorf("jobTimeout %q: %s, want %s", in, got, want)
		}
	}
	if got := BackupJobTimeout(nil); got != DefaultBackupJobTimeout {
		t.Errorf("without a class: %s", got)
	}
}

func TestCheckRestoreSource(t *testing.T) {
	restore := func(typ v1alpha1.InstanceType, dbs ...string) *v1alpha1.Starrocks {
		sr := testInstance()
		sr.Spec.Type = typ
		sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: "olap-1", Databases: dbs}
		return sr
	}
	backup := func(phase v1alpha1.BackupPhase, typ v1alpha1.InstanceType) *v1alpha1.StarrocksBackup {
		return &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: "olap-1", Namespace: "ns"},
			Status: v1alpha1.StarrocksBackupStatus{Phase: phase, InstanceType: typ,
				Databases: []v1alpha1.BackupDatabaseStatus{{Name: "sales", State: "FINISHED"}}}}
	}
	cases := []struct {
		name  string
		sr    *v1alpha1.Starrocks
		facts BackupFacts
		want  string
	}{
		{"refuses a backup that does not exist", restore(v1alpha1.TypeStandalone), BackupFacts{}, "there is no StarrocksBackup \"olap-1\""},
		{"refuses a running backup", restore(v1alpha1.TypeStandalone), BackupFacts{Backup: backup(v1alpha1.BackupPhaseRunning, v1alpha1.TypeStandalone)}, "is Running"},
		{"refuses a failed backup", restore(v1alpha1.TypeStandalone), BackupFacts{Backup: backup(v1alpha1.BackupPhaseFailed, v1alpha1.TypeStandalone)}, "is Failed"},
		{"refuses a Cluster backup into a Standalone", restore(v1alpha1.TypeStandalone), BackupFacts{Backup: backup(v1alpha1.BackupPhaseCompleted, v1alpha1.TypeCluster)}, "restore into a Cluster"},
		{"refuses a database the backup lacks", restore(v1alpha1.TypeCluster, "events"), BackupFacts{Backup: backup(v1alpha1.BackupPhaseCompleted, v1alpha1.TypeCluster)}, "has no database \"events\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckRestoreSource(tc.sr, tc.facts).Error(); !strings.Contains(got, tc.want) {
				t.Fatalf("CheckRestoreSource = %q, want %q", got, tc.want)
			}
		})
	}
	if vs := CheckRestoreSource(restore(v1alpha1.TypeCluster, "sales"), BackupFacts{Backup: backup(v1alpha1.BackupPhaseCompleted, v1alpha1.TypeCluster)}); len(vs) != 0 {
		t.Fatalf("a Completed Cluster backup into a Cluster was refused: %v", vs)
	}
}

func TestCheckBackupObject(t *testing.T) {
	b := &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: "now", Namespace: "ns"}, Spec: v1alpha1.StarrocksBackupSpec{InstanceName: "sr"}}
	if got := CheckBackupObject(b, nil).Error(); !strings.Contains(got, "there is no Starrocks \"sr\"") {
		t.Errorf("missing instance: %q", got)
	}
	if got := CheckBackupObject(b, testInstance()).Error(); !strings.Contains(got, "has no spec.backup") {
		t.Errorf("instance without spec.backup: %q", got)
	}
	if vs := CheckBackupObject(b, backupInstance()); len(vs) != 0 {
		t.Errorf("valid backup refused: %v", vs)
	}
	b.Spec.InstanceName = "sr\nkind: Secret"
	if got := CheckBackupObject(b, nil).Error(); !strings.Contains(got, "spec.instanceName") || strings.Contains(got, "\n") {
		t.Errorf("hostile instance name: %q", got)
	}
}
