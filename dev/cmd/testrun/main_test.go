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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPackagesOfTheSameNameGoToDifferentFolders(t *testing.T) {
	pkgs := []testPackage{
		{ImportPath: "m/dev/node"},
		{ImportPath: "m/test/node"},
		{ImportPath: "m/pkg/desired"},
		{ImportPath: "m/x/node"},
		{ImportPath: "m/images/agent"},
		{ImportPath: "m/images/agent/internal/agent"},
	}
	groups := groupByBinaryName(pkgs)
	want := [][]int{{0, 2, 4}, {1, 5}, {3}}
	if len(groups) != len(want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
	for i := range want {
		if !slices.Equal(groups[i], want[i]) {
			t.Fatalf("groups %v, want %v", groups, want)
		}
	}
}

// A failing package's output is printed and counted; a passing one's is
// not, and the binary runs in the package's folder.
func TestFailedPackagesAreReportedWithTheirOutput(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string { return writeScript(t, dir, name, body) }
	pkgDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkgDir, "testdata"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs := []testPackage{
		{ImportPath: "m/good", Dir: pkgDir, Binary: script("good", "test -f testdata || exit 1; echo quiet-pass")},
		{ImportPath: "m/bad", Dir: pkgDir, Binary: script("bad", "echo loud-failure; exit 1")},
		{ImportPath: "m/killed", Dir: pkgDir, Binary: script("killed", "kill -9 $$")},
	}
	var out bytes.Buffer
	if failed := runAll(pkgs, nil, time.Minute, 2, false, &out, nil); failed != 2 {
		t.Errorf("%d failed, want 2; output:\n%s", failed, out.String())
	}
	for _, want := range []string{
		`(?m)^ok  \tm/good\t[0-9.]+s\tcpu [0-9.]+s$`,
		`(?m)^loud-failure\n\nexit status 1\nFAIL\tm/bad\t`,
		`(?m)^signal: killed\nFAIL\tm/killed\t`,
	} {
		if !regexp.MustCompile(want).Match(out.Bytes()) {
			t.Errorf("output does not match %q:\n%s", want, out.String())
		}
	}
	if bytes.Contains(out.Bytes(), []byte("quiet-pass")) {
		t.Errorf("a passing package's output was printed:\n%s", out.String())
	}
}

// An interrupt reaches the running binaries, their output is printed while
// they clean up, and no other package starts.
func TestAnInterruptStopsTheRunAfterTheRunningPackages(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string { return writeScript(t, dir, name, body) }
	pkgs := []testPackage{
		{ImportPath: "m/long", Dir: dir, Binary: script("long", `sleep 30 </dev/null >/dev/null 2>&1 &
trap 'kill $!; echo cleaned-up; exit 1' INT
echo started
wait`)},
		{ImportPath: "m/next", Dir: dir, Binary: script("next", "echo next-ran")},
	}
	signals := make(chan os.Signal, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		signals <- os.Interrupt
	}()
	var out bytes.Buffer
	failed := runAll(pkgs, nil, time.Minute, 1, false, &out, signals)
	if failed != 2 {
		t.Errorf("%d failed, want 2 (the interrupted package and the run)", failed)
	}
	for _, want := range []string{"started\ncleaned-up\n", "FAIL\tm/long\t", "testrun: interrupt: packages not started"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output has no %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "next-ran") {
		t.Errorf("a package started after the interrupt:\n%s", out.String())
	}
}

// writeScript writes a shell script that stands in for a test binary.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
