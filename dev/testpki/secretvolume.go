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

package testpki

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The names the kubelet's AtomicWriter (pkg/volume/util/atomic_writer.go)
// gives the indirection of a Secret volume.
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
)

// SecretVolume lays files out the way the kubelet fills a Secret volume, so
// that certificate-reload code is tested against the real on-disk sequence:
//
//	<Dir>/..2026_12_02_16_02_18.123456789/tls.crt   the data, one dir per update
//	<Dir>/..data -> ..2026_12_02_16_02_18.123456789  swapped by rename(2)
//	<Dir>/tls.crt -> ..data/tls.crt                  what a pod opens
//
// Each Update follows AtomicWriter.Write: write a new timestamped directory,
// point a fresh ..data_tmp symlink at it, rename that over ..data (the one
// atomic step a watcher sees), link new keys at the top level, unlink keys
// that are gone, then delete the previous timestamped directory.
//
// Unlike the kubelet, an Update whose data equals the current data still
// swaps: tests re-swap to re-trigger a watcher that may not have been
// listening yet, instead of sleeping a guessed time.
type SecretVolume struct {
	// Dir is the mount point, the directory a pod's volumeMount names.
	Dir string
	t   testing.TB
	// keys are the top-level names linked now.
	keys map[string]bool
}

// NewSecretVolume creates the volume in a temporary directory of t holding
// data (file name to content), e.g. leaf.SecretData(ca).
func NewSecretVolume(t testing.TB, data map[string][]byte) *SecretVolume {
	t.Helper()
	v := &SecretVolume{Dir: t.TempDir(), t: t, keys: map[string]bool{}}
	v.Update(data)
	return v
}

// Update replaces the volume's content with data in one atomic swap, as the
// kubelet does when the Secret changes. It fails the test on any error.
func (v *SecretVolume) Update(data map[string][]byte) {
	v.t.Helper()
	if err := v.update(data); err != nil {
		v.t.Fatalf("testpki: update Secret volume %s: %v", v.Dir, err)
	}
}

// Path is the user-visible path of a key in the volume (through ..data).
func (v *SecretVolume) Path(name string) string { return filepath.Join(v.Dir, name) }

func (v *SecretVolume) update(data map[string][]byte) error {
	for name := range data {
		// Secret keys are flat file names; the kubelet refuses paths with
		// separators or a leading "..".
		if name == "" || filepath.Base(name) != name || name[0] == '.' {
			return fmt.Errorf("key %q is not a plain file name", name)
		}
	}
	oldTsDir, err := os.Readlink(filepath.Join(v.Dir, dataDirName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the %s link: %w", dataDirName, err)
	}

	// The kubelet names the directory after the UTC time and lets MkdirTemp
	// add a random suffix, so two updates within a nanosecond never collide.
	tsDir, err := os.MkdirTemp(v.Dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return fmt.Errorf("create the timestamped directory: %w", err)
	}
	// 0755 whatever the umask, so group and other can traverse it (as the kubelet).
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return fmt.Errorf("chmod %s: %w", tsDir, err)
	}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		if err := os.WriteFile(filepath.Join(tsDir, name), data[name], 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}

	tmpLink := filepath.Join(v.Dir, newDataDirName)
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		return fmt.Errorf("link %s: %w", newDataDirName, err)
	}
	if err := os.Rename(tmpLink, filepath.Join(v.Dir, dataDirName)); err != nil {
		return fmt.Errorf("rename %s over %s: %w", newDataDirName, dataDirName, err)
	}

	for _, name := range slices.Sorted(maps.Keys(data)) {
		if v.keys[name] {
			continue
		}
		if err := os.Symlink(filepath.Join(dataDirName, name), v.Path(name)); err != nil {
			return fmt.Errorf("link %s: %w", name, err)
		}
		v.keys[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(v.keys)) {
		if _, keep := data[name]; keep {
			continue
		}
		if err := os.Remove(v.Path(name)); err != nil {
			return fmt.Errorf("unlink the removed key %s: %w", name, err)
		}
		delete(v.keys, name)
	}

	if oldTsDir != "" {
		if err := os.RemoveAll(filepath.Join(v.Dir, oldTsDir)); err != nil {
			return fmt.Errorf("remove the previous data directory %s: %w", oldTsDir, err)
		}
	}
	return nil
}
