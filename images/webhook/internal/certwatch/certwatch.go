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

// Package certwatch serves a TLS key pair from files and reloads it when the
// files change, so a rotated serving certificate is picked up without a
// restart.
//
// Kubernetes Secret volumes never rewrite tls.crt in place: the kubelet
// writes a new timestamped directory and atomically swaps the `..data`
// symlink that tls.crt points through. Watching the file itself would lose
// the watch at the first swap, so the directories holding the files are
// watched instead and every event there triggers a reload.
package certwatch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher holds the current key pair.
type Watcher struct {
	certFile, keyFile string
	log               *slog.Logger
	onReload          func(leaf *x509.Certificate, err error)

	mu   sync.RWMutex
	cert *tls.Certificate
}

// Options tune a Watcher.
type Options struct {
	// OnReload, if set, is called after every reload attempt with the new
	// leaf certificate or the error (metrics hook in here).
	OnReload func(leaf *x509.Certificate, err error)
}

// New loads the key pair once; it fails if the files are not a valid pair,
// because a webhook without a certificate cannot serve anything.
func New(certFile, keyFile string, log *slog.Logger, opts Options) (*Watcher, error) {
	w := &Watcher{certFile: certFile, keyFile: keyFile, log: log, onReload: opts.OnReload}
	if err := w.reload(); err != nil {
		return nil, err
	}
	return w, nil
}

// GetCertificate is a tls.Config.GetCertificate.
func (w *Watcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.cert, nil
}

// Leaf is the certificate served now.
func (w *Watcher) Leaf() *x509.Certificate {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.cert.Leaf
}

func (w *Watcher) reload() error {
	pair, err := tls.LoadX509KeyPair(w.certFile, w.keyFile)
	if err == nil && pair.Leaf == nil {
		pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0])
	}
	if err != nil {
		err = fmt.Errorf("load key pair %s, %s: %w", w.certFile, w.keyFile, err)
		if w.onReload != nil {
			w.onReload(nil, err)
		}
		return err
	}
	w.mu.Lock()
	w.cert = &pair
	w.mu.Unlock()
	if w.onReload != nil {
		w.onReload(pair.Leaf, nil)
	}
	return nil
}

// Run watches the directories of the files until ctx is done. A failed
// reload keeps the previous pair: during a swap the kubelet may briefly show
// a new certificate next to the old key, and the next event fixes it.
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("create file watcher: %w", err)
	}
	defer fw.Close()
	dirs := map[string]bool{filepath.Dir(w.certFile): true, filepath.Dir(w.keyFile): true}
	for dir := range dirs {
		if err := fw.Add(dir); err != nil {
			return fmt.Errorf("watch %s: %w", dir, err)
		}
	}

	// Events come in bursts (a symlink swap is several renames and removes);
	// reloading once after the burst settles avoids reading a half-swapped
	// pair.
	const settle = 100 * time.Millisecond
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			w.log.Debug("certificate directory changed", "path", ev.Name, "op", ev.Op.String())
			timer.Reset(settle)
		case err, ok := <-fw.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			w.log.Warn("certificate file watcher error", "error", err)
		case <-timer.C:
			if err := w.reload(); err != nil {
				w.log.Error("reload serving certificate; keeping the previous one", "error", err)
				continue
			}
			leaf := w.Leaf()
			w.log.Info("serving certificate reloaded", "subject", leaf.Subject.String(),
				"serial", leaf.SerialNumber.String(), "notAfter", leaf.NotAfter)
		}
	}
}
