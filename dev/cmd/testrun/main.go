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

// Command testrun runs the tests of the named packages as `go test -count=1`
// does in package list mode (an "ok" line for a package that passed, its
// whole output for one that failed, at most -p packages at a time in the
// order named), but keeps each package's test binary in -dir between runs.
//
// Why: go test links every test binary anew on every run, even when nothing
// changed (it caches test results, which -count=1 turns off, not test
// binaries): about a hundred CPU-seconds of a warm `make test` on 2 cores.
// `go test -c -o FILE` leaves FILE alone when it already is the binary of the
// same build ID, so a run whose code did not change links nothing.
//
// Differences from go test: a package that does not build fails the whole
// run before any test starts (its compiler errors are printed), and go test's
// vet pass is not run (make test runs `go vet ./...` first).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func main() {
	dir := flag.String("dir", "", "folder that keeps the test binaries between runs (required)")
	procs := flag.Int("p", 4, "packages tested at a time")
	parallel := flag.Int("parallel", 4, "passed to each test binary as -test.parallel")
	timeout := flag.Duration("timeout", 45*time.Minute, "passed to each test binary as -test.timeout")
	ldflags := flag.String("ldflags", "", "passed to go test -c")
	run := flag.String("run", "", "passed to each test binary as -test.run")
	verbose := flag.Bool("v", false, "print every package's output, as go test -v")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: testrun -dir FOLDER [flags] packages...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dir == "" || flag.NArg() == 0 || *procs < 1 {
		flag.Usage()
		os.Exit(2)
	}

	pkgs, err := listTestPackages(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		os.Exit(1)
	}
	if err := build(*dir, pkgs, *ldflags, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		os.Exit(1)
	}
	args := []string{
		"-test.paniconexit0",
		"-test.count=1",
		"-test.timeout=" + timeout.String(),
		"-test.parallel=" + strconv.Itoa(*parallel),
	}
	if *run != "" {
		args = append(args, "-test.run="+*run)
	}
	if *verbose {
		args = append(args, "-test.v=true")
	}
	// Ctrl-C reaches the test binaries too (one process group); testrun
	// stays to print what they say while they clean up, as go test does,
	// and starts no other package. A SIGTERM for testrun alone is passed on.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	if failed := runAll(pkgs, args, *timeout, *procs, *verbose, os.Stdout, signals); failed > 0 {
		fmt.Printf("testrun: %d of %d packages failed\n", failed, len(pkgs))
		os.Exit(1)
	}
}

// testPackage is a package with tests and where its test binary goes.
type testPackage struct {
	ImportPath string
	Dir        string
	Binary     string
}

// listTestPackages lists the packages the patterns match that have tests, in
// the order named (a package matched again later keeps its first place).
func listTestPackages(patterns []string) ([]testPackage, error) {
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %v: %w", patterns, err)
	}
	var pkgs []testPackage
	seen := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir           string
			TestGoFiles, XTestGoFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		if seen[p.ImportPath] || len(p.TestGoFiles)+len(p.XTestGoFiles) == 0 {
			continue
		}
		seen[p.ImportPath] = true
		pkgs = append(pkgs, testPackage{ImportPath: p.ImportPath, Dir: p.Dir})
	}
	return pkgs, nil
}

// groupByBinaryName splits pkgs into groups in which no two packages share
// the last element of their import path: go test -c names a binary after
// it, and refuses to write two of the same name into one folder.
func groupByBinaryName(pkgs []testPackage) [][]int {
	var groups [][]int
	var names []map[string]bool
	for i, p := range pkgs {
		name := path.Base(p.ImportPath)
		g := 0
		for g < len(groups) && names[g][name] {
			g++
		}
		if g == len(groups) {
			groups = append(groups, nil)
			names = append(names, map[string]bool{})
		}
		groups[g] = append(groups[g], i)
		names[g][name] = true
	}
	return groups
}

// build writes every package's test binary into dir/<group>/ and sets its
// Binary. go test -c relinks only the binaries whose build ID changed.
func build(dir string, pkgs []testPackage, ldflags string, stderr io.Writer) error {
	for g, members := range groupByBinaryName(pkgs) {
		out := filepath.Join(dir, strconv.Itoa(g))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		args := []string{"test", "-c", "-o", out + string(filepath.Separator)}
		if ldflags != "" {
			args = append(args, "-ldflags="+ldflags)
		}
		for _, i := range members {
			args = append(args, pkgs[i].ImportPath)
			pkgs[i].Binary = filepath.Join(out, path.Base(pkgs[i].ImportPath)+".test")
		}
		cmd := exec.Command("go", args...)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the test binaries: %w", err)
		}
	}
	return removeOthers(dir, pkgs)
}

// removeOthers removes what is in dir besides the binaries of pkgs (those
// of packages since removed or regrouped), so dir does not grow.
func removeOthers(dir string, pkgs []testPackage) error {
	keep := map[string]bool{}
	for _, p := range pkgs {
		keep[p.Binary] = true
		keep[filepath.Dir(p.Binary)] = true
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir || keep[path] {
			return err
		}
		if err := os.RemoveAll(path); err != nil {
			return err
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
}

// runAll runs the test binaries, procs at a time in the order of pkgs, and
// writes each package's result as go test does; it returns how many failed.
func runAll(pkgs []testPackage, args []string, timeout time.Duration, procs int, verbose bool, stdout io.Writer, signals <-chan os.Signal) int {
	var (
		mu      sync.Mutex
		failed  int
		wg      sync.WaitGroup
		next    = make(chan testPackage)
		running = &processes{set: map[*os.Process]bool{}}
	)
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				output, elapsed, cpu, err := runOne(p, args, timeout, running)
				mu.Lock()
				if err != nil || verbose {
					stdout.Write(output)
				}
				status := "ok  "
				if err != nil {
					failed++
					status = "FAIL"
				}
				fmt.Fprintf(stdout, "%s\t%s\t%.3fs\tcpu %.1fs\n", status, p.ImportPath, elapsed.Seconds(), cpu.Seconds())
				mu.Unlock()
			}
		}()
	}
	var interrupted os.Signal
feed:
	for _, p := range pkgs {
		select {
		case next <- p:
		case interrupted = <-signals:
			running.signal(interrupted)
			break feed
		}
	}
	close(next)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case sig := <-signals:
			running.signal(sig)
			interrupted = sig
		case <-done:
			if interrupted != nil {
				fmt.Fprintf(stdout, "testrun: %v: packages not started\n", interrupted)
				failed++
			}
			return failed
		}
	}
}

// processes are the test binaries running now.
type processes struct {
	mu  sync.Mutex
	set map[*os.Process]bool
}

func (ps *processes) add(p *os.Process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.set[p] = true
}

func (ps *processes) remove(p *os.Process) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.set, p)
}

func (ps *processes) signal(sig os.Signal) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for p := range ps.set {
		_ = p.Signal(sig)
	}
}

// runOne runs one package's test binary in the package's folder, as go test
// does, and returns its output, how long it ran and the CPU time it and the
// processes it waited for used (what make test's budget is made of). Like
// go test it sends SIGQUIT (for the goroutines' stacks) to a binary still
// running a minute after its own -test.timeout, and fails a package whose
// processes still hold its output 5 s after it exited.
func runOne(p testPackage, args []string, timeout time.Duration, running *processes) ([]byte, time.Duration, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Binary, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = p.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		running.add(cmd.Process)
		err = cmd.Wait()
		running.remove(cmd.Process)
	}
	elapsed := time.Since(start)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		fmt.Fprintf(&out, "\n*** Test killed with SIGQUIT: ran too long (%v).\n", timeout+time.Minute)
	case errors.Is(err, exec.ErrWaitDelay):
		fmt.Fprintf(&out, "\n*** Test I/O incomplete %v after exiting.\n", cmd.WaitDelay)
	default:
		fmt.Fprintf(&out, "\n%v\n", err)
	}
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return out.Bytes(), elapsed, cpu, err
}
