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

package chartrender_test

import (
	"fmt"
	"testing"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// Backups: every tenant string of spec.backup and spec.restore
// is refused by a layer or changes nothing but its own instance's objects,
// and so is every string of the backup part of an entry.

func backupClass() *v1alpha1.StarrocksClass {
	c := hostileClass()
	c.Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true}
	return c
}

func backupInstance() *v1alpha1.Starrocks {
	sr := hostileInstance()
	sr.Spec.Backup = &v1alpha1.BackupSpec{
		Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com:9000", Region: "us-east-1", Bucket: "team-backups", Prefix: "sr/prod",
			CASecretRef:          &v1alpha1.BackupSecretKeyRef{Name: "s3-ca", Key: "ca.crt"},
			CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"}},
		Schedule:  "0 3 * * *",
		Databases: &v1alpha1.BackupDatabases{Include: []string{"sales"}, Exclude: []string{"tmp"}},
		Retention: &v1alpha1.BackupRetention{KeepLast: ptrInt32(7), KeepWithin: "168h"},
	}
	return sr
}

func ptrInt32(v int32) *int32 { return &v }

var backupStrings = []struct {
	field string
	set   func(sr *v1alpha1.Starrocks, v string)
}{
	{"spec.backup.storage.endpoint", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.Endpoint = v }},
	{"spec.backup.storage.region", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.Region = v }},
	{"spec.backup.storage.bucket", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.Bucket = v }},
	{"spec.backup.storage.prefix", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.Prefix = v }},
	{"spec.backup.storage.caSecretRef.name", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.CASecretRef.Name = v }},
	{"spec.backup.storage.caSecretRef.key", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.CASecretRef.Key = v }},
	{"spec.backup.storage.credentialsSecretRef.name", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Storage.CredentialsSecretRef.Name = v }},
	{"spec.backup.storage.credentialsSecretRef.accessKeyIDKey", func(sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Backup.Storage.CredentialsSecretRef.AccessKeyIDKey = v
	}},
	{"spec.backup.storage.credentialsSecretRef.secretAccessKeyKey", func(sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Backup.Storage.CredentialsSecretRef.SecretAccessKeyKey = v
	}},
	{"spec.backup.schedule", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Schedule = v }},
	{"spec.backup.databases.include[0]", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Databases.Include[0] = v }},
	{"spec.backup.databases.exclude[0]", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Databases.Exclude[0] = v }},
	{"spec.backup.retention.keepWithin", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Backup.Retention.KeepWithin = v }},
	{"spec.restore.backupName", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: v} }},
	{"spec.restore.databases[0]", func(sr *v1alpha1.Starrocks, v string) {
		sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: "olap-1", Databases: []string{v}}
	}},
}

func TestHostileBackupStringsAreRejectedOrHarmless(t *testing.T) {
	benign, rejected, err := layers(t, backupClass(), backupInstance())
	if err != nil || rejected != "" {
		t.Fatalf("the benign instance does not render: %v %s", err, rejected)
	}
	want := keysOf(benign)
	for _, s := range backupStrings {
		for i, p := range hostilePayloads {
			t.Run(fmt.Sprintf("%s/%d", s.field, i), func(t *testing.T) {
				class, sr := backupClass(), backupInstance()
				s.set(sr, p)
				objs, rejectedBy, err := layers(t, class, sr)
				switch {
				case err != nil:
					t.Fatalf("%s = %q passed every schema layer and broke the chart (every instance stops): %v", s.field, p, err)
				case rejectedBy != "":
					return
				}
				if err := harmless(keysOf(objs), want, sr.Namespace); err != nil {
					t.Fatalf("%s = %q passed every schema layer and changed the rendered objects: %v", s.field, p, err)
				}
			})
		}
	}
}

// The backup part of an entry (the repository, sets, a restore): every
// string there is refused by the instance schema or harmless.
func TestHostileBackupValuesStringsAreRejectedOrHarmless(t *testing.T) {
	base := entryOf(t, backupInstance(), backupClass())
	var paths []entryPath
	entryStrings(base["agentConfig"].(map[string]any)["backup"], entryPath{"agentConfig", "backup"}, &paths)
	if len(paths) < 8 {
		t.Fatalf("found only %d strings in agentConfig.backup: %v", len(paths), paths)
	}
	valuesRejectedOrHarmless(t, base, paths)
}
