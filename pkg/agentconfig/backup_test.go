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

import (
	"strings"
	"testing"
)

const (
	testInstanceUID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
	testSetUID      = "11112222-3333-4444-5555-666677778888"
)

func testRepository() Repository {
	r := Repository{
		Name:      RepositoryName(testInstanceUID),
		Location:  RepositoryLocation("team-bucket", "/backups/", "team-a", "olap", testInstanceUID),
		Endpoint:  "https://s3.example.com:9000",
		Region:    "us-east-1",
		PathStyle: true,
		EnableSSL: true,
		Credentials: S3Credentials{SecretName: "s3-keys", AccessKeyIDKey: "access-key-id",
			SecretAccessKeyKey: "secret-access-key"},
	}
	r.Token = RepositoryToken(r)
	return r
}

func testBackupConfig() *Config {
	return &Config{
		QueryHost: "sr.team-a.svc", QueryPort: QueryPort, Frontends: []string{"fe-0"},
		EditLogPort: EditLogPort, HeartbeatPort: HeartbeatPort,
		Backup: &BackupConfig{
			Repository: testRepository(),
			Sets: []BackupSet{{Name: "olap-20261204-2100", UID: testSetUID,
				LabelPrefix: BackupLabelPrefix(testSetUID), Include: []string{"sales"}}},
			Deletes: []BackupDelete{{Name: "olap-old", UID: testSetUID, LabelPrefix: BackupLabelPrefix(testSetUID)}},
		},
	}
}

func TestBackupNames(t *testing.T) {
	if got := RepositoryName(testInstanceUID); got != "d8ms_0b1c2d3e4f506172839"+"4a5b6c7d8e9f0" {
		t.Errorf("RepositoryName = %q", got)
	}
	if got := RepositoryLocation("b", "/p/q/", "ns", "olap", testInstanceUID); got != "s3://b/p/q/ns/olap-0b1c2d3e" {
		t.Errorf("RepositoryLocation = %q", got)
	}
	if got := RepositoryLocation("bkt", "", "ns", "olap", testInstanceUID); got != "s3://bkt/ns/olap-0b1c2d3e" {
		t.Errorf("RepositoryLocation without prefix = %q", got)
	}
	p := BackupLabelPrefix(testSetUID)
	if p != "d8ms_1111222233334444" {
		t.Errorf("BackupLabelPrefix = %q", p)
	}
	if got := BackupLabel(p, "sales"); got != p+"_sales" {
		t.Errorf("BackupLabel = %q", got)
	}
	long := strings.Repeat("x", 200)
	if got := BackupLabel(p, long); !labelRE.MatchString(got) || !strings.HasPrefix(got, p+"_h") {
		t.Errorf("BackupLabel of a long name = %q: not a StarRocks label", got)
	}
}

func TestBackupConfigValidate(t *testing.T) {
	if err := testBackupConfig().Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"refuses an unknown hold", func(c *Config) { c.BackupHold = "Whenever" }, "backupHold"},
		{"refuses a job timeout StarRocks refuses", func(c *Config) { c.BackupJobTimeoutSeconds = 599 }, "backupJobTimeoutSeconds"},
		{"refuses a job timeout beyond a week", func(c *Config) { c.BackupJobTimeoutSeconds = 168*3600 + 1 }, "backupJobTimeoutSeconds"},
		{"refuses a repository name that is not the module's", func(c *Config) {
			c.Backup.Repository.Name = "repo; DROP DATABASE x"
		}, "backup.repository.name"},
		{"refuses an endpoint with user info", func(c *Config) {
			c.Backup.Repository.Endpoint = "https://user:pw@s3.example.com"
		}, "backup.repository.endpoint"},
		{"refuses an endpoint with a path", func(c *Config) {
			c.Backup.Repository.Endpoint = "https://s3.example.com/x\"y"
		}, "backup.repository.endpoint"},
		{"refuses a location with a quote", func(c *Config) {
			c.Backup.Repository.Location = "s3://bucket/a\"b"
		}, "backup.repository.location"},
		{"refuses enableSSL that disagrees with the endpoint", func(c *Config) {
			c.Backup.Repository.EnableSSL = false
		}, "enableSSL"},
		{"refuses a stale token", func(c *Config) { c.Backup.Repository.Region = "eu-west-1" }, "token"},
		{"refuses a read-only own repository", func(c *Config) {
			c.Backup.Repository.ReadOnly = true
			c.Backup.Repository.Token = RepositoryToken(c.Backup.Repository)
		}, "readOnly"},
		{"refuses a hostile Secret key", func(c *Config) {
			c.Backup.Repository.Credentials.AccessKeyIDKey = "a\nb"
			c.Backup.Repository.Token = RepositoryToken(c.Backup.Repository)
		}, "accessKeyIdKey"},
		{"refuses a label prefix not derived from the UID", func(c *Config) {
			c.Backup.Sets[0].LabelPrefix = "d8ms_0000000000000000"
		}, "labelPrefix"},
		{"refuses a hostile database", func(c *Config) {
			c.Backup.Sets[0].Include = []string{"sales`; DROP"}
		}, "database"},
		{"refuses too many sets", func(c *Config) {
			for len(c.Backup.Sets) <= MaxBackupSets {
				c.Backup.Sets = append(c.Backup.Sets, c.Backup.Sets[0])
			}
		}, "at most"},
		{"refuses too many deletes", func(c *Config) {
			for len(c.Backup.Deletes) <= MaxBackupDeletes {
				c.Backup.Deletes = append(c.Backup.Deletes, c.Backup.Deletes[0])
			}
		}, "at most"},
		{"refuses a restore that writes into its source", func(c *Config) {
			c.Restore = &RestoreConfig{Token: "0123456789abcdef", Repository: testRepository(),
				Databases: []RestoreDatabase{{Name: "sales", Label: "d8ms_1111222233334444_sales",
					BackupTimestamp: "2026-12-04-21-00-03"}}, ReplicationNum: 1}
		}, "readOnly must be true"},
		{"refuses a restore with a bad timestamp", func(c *Config) {
			r := testRepository()
			r.ReadOnly = true
			r.Token = RepositoryToken(r)
			c.Restore = &RestoreConfig{Token: "0123456789abcdef", Repository: r,
				Databases: []RestoreDatabase{{Name: "sales", Label: "d8ms_1111222233334444_sales",
					BackupTimestamp: "2026-12-04\"); DROP"}}, ReplicationNum: 1}
		}, "backupTimestamp"},
		{"refuses replication beyond 3", func(c *Config) {
			r := testRepository()
			r.ReadOnly = true
			r.Token = RepositoryToken(r)
			c.Restore = &RestoreConfig{Token: "0123456789abcdef", Repository: r,
				Databases: []RestoreDatabase{{Name: "sales", Label: "d8ms_1111222233334444_sales",
					BackupTimestamp: "2026-12-04-21-00-03-123"}}, ReplicationNum: 4}
		}, "replicationNum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testBackupConfig()
			tc.mutate(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestTruncateBackupMessage(t *testing.T) {
	s := strings.Repeat("é", MaxBackupMessageLen)
	got := TruncateBackupMessage(s)
	if len(got) > MaxBackupMessageLen || !strings.HasSuffix(got, "...") {
		t.Fatalf("TruncateBackupMessage: %d bytes", len(got))
	}
	if TruncateBackupMessage("short") != "short" {
		t.Fatal("a short message changed")
	}
}
