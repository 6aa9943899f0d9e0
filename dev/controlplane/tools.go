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

package controlplane

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// RepoRoot is the root of the module's repository, found from this file's
// path, so tests and `make run` work from any working directory. Built
// with -trimpath (make sets it, so that a fresh clone reuses the build
// cache) that path is relative: then the root is the folder above the
// working directory or the executable whose go.mod declares this module.
func RepoRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for ; ; dir = filepath.Dir(dir) {
			if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(data), "module "+modulePath+"\n") {
				return dir
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	panic("controlplane: cannot find the repository of " + modulePath + " above the working directory or the executable")
}

// CacheDir is the tools cache that dev/scripts/tools.sh fills and the
// tests and the local run keep what outlives a run in:
// $MANAGED_STARROCKS_CACHE, ~/.cache/managed-starrocks by default.
func CacheDir() (string, error) {
	if cache := os.Getenv("MANAGED_STARROCKS_CACHE"); cache != "" {
		return cache, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "managed-starrocks"), nil
}

// modulePath is the module's path, the first line of its go.mod.
const modulePath = "github.com/deckhouse/managed-starrocks"

var (
	toolsMu    sync.Mutex
	toolsCache = map[string]string{}
)

// Tool returns the path of a cached development tool, building it on first
// use with dev/scripts/tools.sh (see that script for the names).
func Tool(name string) (string, error) {
	toolsMu.Lock()
	defer toolsMu.Unlock()
	if p, ok := toolsCache[name]; ok {
		return p, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(RepoRoot(), "dev", "scripts", "tools.sh"), name)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("dev/scripts/tools.sh %s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	p := strings.TrimSpace(stdout.String())
	toolsCache[name] = p
	return p, nil
}

func mustTool(name string) string {
	p, err := Tool(name)
	if err != nil {
		panic(fmt.Sprintf("controlplane: %v (run `make tools`)", err))
	}
	return p
}

// ModuleCRDDir is the module's own crds/ directory.
func ModuleCRDDir() string { return filepath.Join(RepoRoot(), "crds") }

// CertManagerCRDDir holds cert-manager's CRDs, from its Go module.
func CertManagerCRDDir() string { return mustTool("cert-manager-crds") }

// PrometheusOperatorCRDDir holds prometheus-operator's CRDs, generated from
// its API Go module.
func PrometheusOperatorCRDDir() string { return mustTool("prometheus-operator-crds") }

// MissingTools are the tools BuildTools would build (not yet in the cache);
// it builds nothing.
func MissingTools() ([]string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(RepoRoot(), "dev", "scripts", "tools.sh"), "missing")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("dev/scripts/tools.sh missing: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.Fields(stdout.String()), nil
}

// BuildTools builds every cached tool, streaming the build progress to w, so
// a first `make run` shows what it is waiting for.
func BuildTools(w io.Writer) error {
	cmd := exec.Command(filepath.Join(RepoRoot(), "dev", "scripts", "tools.sh"), "all")
	cmd.Stderr = w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build tools: %w", err)
	}
	return nil
}
