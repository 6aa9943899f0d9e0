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

package shareddata_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/shareddata"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestCheckBucket: the agent's check before CREATE STORAGE VOLUME against
// versitygw over TLS from a private CA (signature checks on): the right
// keys, bucket and CA pass; each wrong one is a BucketError that says what
// S3 answered and never holds a key.
func TestCheckBucket(t *testing.T) {
	s3 := s3server.Start(t)
	s3.CreateBucket(t, "team-data")
	uid := "0b5e7c1d-2222-4333-8444-955566667777"
	good := shareddata.Volume{Name: agentconfig.StorageVolumeName(uid),
		Location: agentconfig.StorageVolumeLocation("team-data", "sr", "team-a", "x", uid),
		Endpoint: s3.URL(), Region: s3server.Region, PathStyle: true, EnableSSL: true,
		Keys: backup.Keys{AccessKey: s3.AccessKey, SecretKey: s3.SecretKey}, CAPEM: s3.CA.CertPEM}
	ctx := context.Background()
	if err := good.CheckBucket(ctx); err != nil {
		t.Fatalf("CheckBucket with the right settings: %v", err)
	}

	// Nothing listens here: taken and released, so the port is closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	l.Close()

	wrongSecret := "wrong-secret-0123456789abcdefghij"
	for _, tc := range []struct {
		name   string
		change func(v *shareddata.Volume)
		says   string
	}{
		{"a secret key the server refuses", func(v *shareddata.Volume) { v.Keys.SecretKey = wrongSecret }, "SignatureDoesNotMatch"},
		{"an access key the server does not know", func(v *shareddata.Volume) { v.Keys.AccessKey = "AKUNKNOWN0000001" }, "access key"}, // versitygw: XAdminUserNotFound
		{"a bucket that does not exist", func(v *shareddata.Volume) {
			v.Location = agentconfig.StorageVolumeLocation("no-such-bucket", "sr", "team-a", "x", uid)
		}, "NoSuchBucket"},
		{"no CA: the private certificate is not trusted", func(v *shareddata.Volume) { v.CAPEM = nil }, "certificate"},
		{"an endpoint nothing listens on", func(v *shareddata.Volume) { v.Endpoint = closed }, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := good
			tc.change(&v)
			start := time.Now()
			err := v.CheckBucket(ctx)
			var be *shareddata.BucketError
			if !errors.As(err, &be) {
				t.Fatalf("CheckBucket = %v, want a BucketError", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("CheckBucket = %v, want it to say %q", err, tc.says)
			}
			for _, k := range []string{s3.SecretKey, wrongSecret, s3.AccessKey} {
				if strings.Contains(err.Error(), k) {
					t.Errorf("a key in %q", err)
				}
			}
			if d := time.Since(start); d > 40*time.Second {
				t.Errorf("CheckBucket took %s, beyond its bound", d)
			}
		})
	}
}
