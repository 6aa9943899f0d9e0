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

// Package s3server starts a real S3 server for tests: versitygw (built once
// by dev/scripts/tools.sh from its Go module) serving a temporary directory
// on a free loopback port, over TLS with a certificate from dev/testpki, with
// real signature checks (an unsigned or wrongly signed request is refused).
// The backup tests write and read StarRocks' repository layout on it; there
// is no fake S3 anywhere. Test tooling, never shipped.
package s3server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// Region is the region the server answers for (versitygw's default).
const Region = "us-east-1"

// Server is a running versitygw.
type Server struct {
	// Endpoint is host:port (loopback unless Options.Host), without a
	// scheme.
	Endpoint string
	// AccessKey and SecretKey are the root user's keys.
	AccessKey, SecretKey string
	// CA signed the server certificate; RootCAs trusts it.
	CA      *testpki.CA
	RootCAs *x509.CertPool
	// Dir holds the buckets (posix backend: one directory per bucket).
	Dir string

	plain bool
}

// Start runs versitygw on loopback with TLS until t ends. The keys are
// random, passed in the environment (never on the command line, where ps
// shows them).
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// Options say where versitygw listens and how.
type Options struct {
	// Host is the address to listen on, 127.0.0.1 when empty. A real FE
	// runs in a network namespace of its own, where 127.0.0.1 is its own
	// loopback: it reaches the server at the host's address on its bridge
	// (realfe's Cluster.HostIP); net.IPv4zero listens on every host
	// address, for the FEs of several instances.
	Host net.IP
	// PlainHTTP serves http:// (no TLS), as a team's endpoint may.
	PlainHTTP bool
}

// StartWith runs versitygw as opts say until t ends; with TLS its
// certificate is for localhost, 127.0.0.1 and opts.Host, from a CA of its
// own (CA, RootCAs) that nothing else trusts.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := controlplane.Tool("versitygw")
	if err != nil {
		t.Fatalf("s3server: %v", err)
	}
	host := opts.Host
	if host == nil {
		host = net.ParseIP("127.0.0.1")
	}
	ca := testpki.MustCA(t, "s3server test CA")
	leaf, err := ca.Issue("localhost", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1"), host}, 0)
	if err != nil {
		t.Fatalf("s3server: %v", err)
	}
	work := t.TempDir()
	certFile, keyFile := filepath.Join(work, "tls.crt"), filepath.Join(work, "tls.key")
	if err := os.WriteFile(certFile, leaf.CertPEM, 0o600); err != nil {
		t.Fatalf("s3server: %v", err)
	}
	if err := os.WriteFile(keyFile, leaf.KeyPEM, 0o600); err != nil {
		t.Fatalf("s3server: %v", err)
	}
	if opts.PlainHTTP {
		certFile, keyFile = "", ""
	}
	data := filepath.Join(work, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatalf("s3server: %v", err)
	}
	s := &Server{AccessKey: "AK" + randomHex(t, 8), SecretKey: randomHex(t, 20), CA: ca, RootCAs: x509.NewCertPool(), Dir: data, plain: opts.PlainHTTP}
	s.RootCAs.AddCert(ca.Cert)
	// A port FreePorts found may be taken by a test running beside this
	// one before versitygw binds it: try again with another.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		ports, err := controlplane.FreePorts(1)
		if err != nil {
			t.Fatalf("s3server: %v", err)
		}
		s.Endpoint = net.JoinHostPort(host.String(), strconv.Itoa(ports[0]))
		if lastErr = s.run(t, bin, certFile, keyFile); lastErr == nil {
			return s
		}
	}
	t.Fatalf("s3server: versitygw did not start: %v", lastErr)
	return nil
}

func (s *Server) run(t testing.TB, bin, certFile, keyFile string) error {
	var out bytes.Buffer
	args := []string{"--port", s.Endpoint}
	if certFile != "" {
		args = append(args, "--cert", certFile, "--key", keyFile)
	}
	cmd := exec.Command(bin, append(args, "--quiet", "posix", s.Dir)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"ROOT_ACCESS_KEY=" + s.AccessKey, "ROOT_SECRET_KEY=" + s.SecretKey}
	cmd.Stdout, cmd.Stderr = &out, &out
	// Pdeathsig: a test binary that is killed takes its S3 server with it
	// (one outlived a killed test/e2e, holding its port and folder).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("versitygw exited: %v: %s", err, out.String())
		default:
		}
		if s.ready() {
			t.Cleanup(stop)
			return nil
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("versitygw not ready on %s after 20s: %s", s.Endpoint, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ready: a signed ListBuckets answers.
func (s *Server) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := s.Client(s.AccessKey, s.SecretKey).ListBuckets(ctx, &s3.ListBucketsInput{})
	return err == nil
}

// URL is the endpoint with its scheme.
func (s *Server) URL() string {
	if s.plain {
		return "http://" + s.Endpoint
	}
	return "https://" + s.Endpoint
}

// Client is an S3 client of the server with the given keys, path-style, and
// trusting only the test CA.
func (s *Server) Client(accessKey, secretKey string) *s3.Client {
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12}}}
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.URL()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		HTTPClient:   hc,
	})
}

// CreateBucket creates a bucket with the root keys.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Client(s.AccessKey, s.SecretKey).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3server: create bucket %s: %v", name, err)
	}
}

// Keys lists every object key in bucket under prefix, sorted.
func (s *Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client(s.AccessKey, s.SecretKey), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("s3server: list %s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys
}

// Get reads one object with the root keys.
func (s *Server) Get(t testing.TB, bucket, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := s.Client(s.AccessKey, s.SecretKey).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("s3server: get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("s3server: read %s/%s: %v", bucket, key, err)
	}
	return b
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("s3server: %v", errors.Join(errors.New("random key"), err))
	}
	return hex.EncodeToString(b)
}
