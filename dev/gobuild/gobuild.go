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

// Package gobuild builds the repository's main packages for the tests and
// the local run, linking only what changed.
//
// go build links a binary again unless the file it writes already is that
// binary (a link costs 1 to 3 CPU-seconds; the tests build about twenty
// binaries a run). So binaries are built into a folder of the tools cache,
// which outlives runs and fresh clones ($MANAGED_STARROCKS_CACHE/go-binaries,
// one subfolder per package and flags), and the caller gets a hard link of
// each in a folder of its own. A hard link keeps its file: when another checkout
// builds different code, go build renames a new file into the cache and
// the caller's binary stays as it was. A lock on that folder keeps one
// build and its links together.
package gobuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/machinelock"
)

// Build builds the main package pkg (a path relative to the repository's
// root, e.g. ./hooks) with go build and the extra flags, CGO off as in the
// images, into dir/name.
func Build(ctx context.Context, dir, name string, flags []string, pkg string) error {
	key := strings.Join(append(append([]string{}, flags...), pkg), "\x00")
	return Cached(ctx, key, dir, []string{name}, func(cacheDir string) error {
		args := append(append([]string{"build"}, flags...), "-o", filepath.Join(cacheDir, name), pkg)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = controlplane.RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
		return nil
	})
}

// Cached runs build with the cache's folder for key, where it writes the
// named binaries (with go build, which leaves an up-to-date binary alone),
// and hard-links them into dir, all with the cache's lock held.
func Cached(ctx context.Context, key, dir string, names []string, build func(cacheDir string) error) error {
	root, err := cacheRoot()
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(key))
	cacheDir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	for _, d := range []string{cacheDir, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	unlock, err := machinelock.Exclusive(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if err := build(cacheDir); err != nil {
		return err
	}
	for _, name := range names {
		if err := link(filepath.Join(cacheDir, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// cacheRoot is go-binaries/ in the tools cache.
func cacheRoot() (string, error) {
	cache, err := controlplane.CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "go-binaries"), nil
}

// link makes dst a hard link of src, or a copy where the two are on
// different file systems.
func link(src, dst string) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	err := os.Link(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
