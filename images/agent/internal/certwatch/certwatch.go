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

// Package certwatch loads the mounted CA and instance certificate and reports
// every change within milliseconds. A Secret volume updates by swapping the
// "..data" symlink, so the directory is watched, not the files: watching the
// file itself would follow the old inode and miss the swap.
package certwatch

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Reasons for a Material error, as in agentconfig.TLSStatus.Reason.
const (
	ReasonCertificateMissing = "CertificateMissing"
	ReasonCertificateInvalid = "CertificateInvalid"
)

// Material is one consistent read of the files.
type Material struct {
	Roots *x509.CertPool
	// ID is a hash of the CA and certificate content.
	ID string
	// Leaf is the instance certificate (tls.crt).
	Leaf *x509.Certificate
}

// LoadError is a failure to load, with a Reason for the status.
type LoadError struct {
	Reason string
	Err    error
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Load reads caFile and certFile and checks that the certificate verifies
// against the CA, so a half-rotated volume is not reported as ready.
func Load(caFile, certFile string) (*Material, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, missing(err, "read CA")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, missing(err, "read certificate")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, &LoadError{Reason: ReasonCertificateInvalid, Err: fmt.Errorf("CA file %s holds no PEM certificate", caFile)}
	}
	block, rest := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, &LoadError{Reason: ReasonCertificateInvalid, Err: fmt.Errorf("certificate file %s holds no PEM certificate", certFile)}
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, &LoadError{Reason: ReasonCertificateInvalid, Err: fmt.Errorf("parse certificate %s: %w", certFile, err)}
	}
	intermediates := x509.NewCertPool()
	intermediates.AppendCertsFromPEM(rest)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates}); err != nil {
		return nil, &LoadError{Reason: ReasonCertificateInvalid, Err: fmt.Errorf("certificate %s does not verify against %s: %w", certFile, caFile, err)}
	}
	sum := sha256.New()
	sum.Write(caPEM)
	sum.Write(certPEM)
	return &Material{Roots: roots, ID: hex.EncodeToString(sum.Sum(nil)), Leaf: leaf}, nil
}

func missing(err error, op string) error {
	reason := ReasonCertificateInvalid
	if errors.Is(err, fs.ErrNotExist) {
		reason = ReasonCertificateMissing
	}
	return &LoadError{Reason: reason, Err: fmt.Errorf("%s: %w", op, err)}
}

// Watcher calls OnChange with every new Material (or load error).
type Watcher struct {
	CAFile, CertFile string
	// OnChange is called from Run's goroutine, first with the initial load.
	OnChange func(*Material, error)
	// Debounce gathers the several events of one swap; default 10ms.
	Debounce time.Duration
	// Resync re-reads the files even without events, in case an event was
	// lost (e.g. the watch was re-created); default 30s.
	Resync time.Duration
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	if w.Debounce == 0 {
		w.Debounce = 10 * time.Millisecond
	}
	if w.Resync == 0 {
		w.Resync = 30 * time.Second
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("create file watcher: %w", err)
	}
	defer fw.Close()
	for _, dir := range uniqueDirs(w.CAFile, w.CertFile) {
		if err := fw.Add(dir); err != nil {
			return fmt.Errorf("watch %s: %w", dir, err)
		}
	}

	last := ""
	lastErr := ""
	emit := func() {
		m, err := Load(w.CAFile, w.CertFile)
		switch {
		case err != nil:
			if err.Error() == lastErr {
				return
			}
			lastErr, last = err.Error(), ""
		default:
			if m.ID == last {
				return
			}
			last, lastErr = m.ID, ""
		}
		w.OnChange(m, err)
	}
	emit()

	resync := time.NewTicker(w.Resync)
	defer resync.Stop()
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-fw.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			if debounce == nil {
				debounce = time.After(w.Debounce)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			// An overflow loses events: read the files now instead.
			_ = err
			emit()
		case <-debounce:
			debounce = nil
			emit()
		case <-resync.C:
			emit()
		}
	}
}

func uniqueDirs(files ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		d := filepath.Dir(f)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
