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
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

const killedHelperEnv = "MANAGED_STARROCKS_S3SERVER_KILLED_HELPER"

// A test binary that is killed (a timeout, a developer's Ctrl-C twice) runs
// no cleanup: its versitygw must not go on holding the port and the folder.
func TestAKilledTestTakesItsServerWithIt(t *testing.T) {
	if os.Getenv(killedHelperEnv) != "" {
		s := Start(t)
		// s.Dir is <t.TempDir's root>/001/data: the root goes with the kill.
		fmt.Printf("endpoint=%s dir=%s\n", s.Endpoint, filepath.Dir(filepath.Dir(s.Dir)))
		time.Sleep(time.Hour) // killed by the test that started this one
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAKilledTestTakesItsServerWithIt$")
	cmd.Env = append(os.Environ(), killedHelperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The helper goes whichever way the test ends (once: Wait may run once).
	var killOnce sync.Once
	kill := func() { killOnce.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(kill)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "endpoint=") {
				lines <- sc.Text()
			}
		}
		close(lines)
	}()
	var endpoint, dir string
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatal("the helper ended before its server served")
		}
		if _, err := fmt.Sscanf(line, "endpoint=%s dir=%s", &endpoint, &dir); err != nil {
			t.Fatalf("helper said %q: %v", line, err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the helper's server did not serve in a minute")
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // the killed helper's t.TempDir root
	if conn, err := net.DialTimeout("tcp", endpoint, 2*time.Second); err != nil {
		t.Fatalf("the helper's server does not answer before the kill: %v", err)
	} else {
		conn.Close()
	}
	kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", endpoint, time.Second)
		if err != nil {
			return
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("versitygw still serves %s 10 s after its test binary was killed", endpoint)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
