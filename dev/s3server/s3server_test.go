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

package s3server

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestServerChecksSignaturesOverTLS(t *testing.T) {
	s := Start(t)
	s.CreateBucket(t, "bucket-one")
	ctx := context.Background()

	if _, err := s.Client(s.AccessKey, s.SecretKey).PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("bucket-one"), Key: aws.String("a/b"), Body: strings.NewReader("x")}); err != nil {
		t.Fatalf("put with the root keys: %v", err)
	}
	if got := s.Keys(t, "bucket-one", "a/"); len(got) != 1 || got[0] != "a/b" {
		t.Fatalf("keys = %v, want [a/b]", got)
	}

	t.Run("refuses a wrong secret key", func(t *testing.T) {
		_, err := s.Client(s.AccessKey, "wrong").ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bucket-one")})
		if err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
			t.Fatalf("err = %v, want SignatureDoesNotMatch", err)
		}
	})
	t.Run("refuses an unsigned request", func(t *testing.T) {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.RootCAs}}}
		resp, err := hc.Get(s.URL() + "/bucket-one/a/b")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("unsigned GET: status %d, want 403", resp.StatusCode)
		}
	})
	t.Run("serves only TLS from the test CA", func(t *testing.T) {
		_, err := http.Get(s.URL() + "/")
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("GET without the CA: err = %v, want a certificate error", err)
		}
	})
	t.Run("missing bucket", func(t *testing.T) {
		_, err := s.Client(s.AccessKey, s.SecretKey).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("no-such-bucket")})
		if err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
			t.Fatalf("err = %v, want NoSuchBucket", err)
		}
	})
}
