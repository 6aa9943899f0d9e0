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

package gobuild

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A second build of unchanged code links nothing: the cached binary is the
// same file, and each caller's copy is a hard link of it.
func TestASecondBuildLinksNothing(t *testing.T) {
	t.Setenv("MANAGED_STARROCKS_CACHE", t.TempDir())
	first, second := t.TempDir(), t.TempDir()
	flags := []string{"-trimpath", "-ldflags=-s -w"}
	if err := Build(t.Context(), first, "pause", flags, "./dev/cmd/pause"); err != nil {
		t.Fatal(err)
	}
	before := inode(t, filepath.Join(first, "pause"))
	if err := Build(t.Context(), second, "pause", flags, "./dev/cmd/pause"); err != nil {
		t.Fatal(err)
	}
	if got := inode(t, filepath.Join(second, "pause")); got != before {
		t.Errorf("the second build wrote a new binary (inode %d, was %d): go build linked again", got, before)
	}
	if got := inode(t, filepath.Join(first, "pause")); got != before {
		t.Errorf("the first caller's binary changed (inode %d, was %d)", got, before)
	}
	if fi, err := os.Stat(filepath.Join(second, "pause")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("the built binary is not executable: %v %v", fi, err)
	}
}

// Other flags are another binary: they do not overwrite each other.
func TestOtherFlagsAreAnotherBinary(t *testing.T) {
	t.Setenv("MANAGED_STARROCKS_CACHE", t.TempDir())
	a, b := t.TempDir(), t.TempDir()
	if err := Build(t.Context(), a, "pause", []string{"-trimpath"}, "./dev/cmd/pause"); err != nil {
		t.Fatal(err)
	}
	if err := Build(t.Context(), b, "pause", []string{"-trimpath", "-ldflags=-s -w"}, "./dev/cmd/pause"); err != nil {
		t.Fatal(err)
	}
	if inode(t, filepath.Join(a, "pause")) == inode(t, filepath.Join(b, "pause")) {
		t.Error("two flag sets share one cached binary")
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
