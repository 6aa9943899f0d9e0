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
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	dir := flag.String("dir", "", "folder that keeps the test binaries between runs (required)")
	procs := flag.Int("p", 4, "packages tested at a time")
	idleProcs := flag.Int("pidle", 0, "packages tested at a time while the cores idle (at most; 0: -p)")
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
	if *dir == "" || flag.NArg() == 0 || *procs < 1 || (*idleProcs != 0 && *idleProcs < *procs) {
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
	sched := schedule{procs: *procs, idleProcs: *idleProcs, every: 5 * time.Second, idle: cpuIdle()}
	if failed := runAll(pkgs, args, *timeout, sched, *verbose, os.Stdout, signals); failed > 0 {
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

// schedule says how many packages run at a time: procs, and up to
// idleProcs while the cores idle. Most packages wait (for pods, real FEs,
// StarRocks' schedulers, addon-operator's passes) more than they compute;
// when the running ones happen to wait at the same time, one more starts,
// and a busy machine starts none beyond procs.
type schedule struct {
	procs, idleProcs int
	// every is how often idle is read; idle returns the share of the
	// cores' time that was idle since it was last called.
	every time.Duration
	idle  func() float64
}

// idleShare is the share of idle core time, over one schedule.every, at
// which one more package starts.
const idleShare = 0.35

// runAll runs the test binaries in the order of pkgs as sched allows, and
// writes each package's result as go test does; it returns how many failed.
func runAll(pkgs []testPackage, args []string, timeout time.Duration, sched schedule, verbose bool, stdout io.Writer, signals <-chan os.Signal) int {
	type result struct {
		p       testPackage
		output  []byte
		elapsed time.Duration
		cpu     time.Duration
		err     error
	}
	var (
		failed      int
		started     int
		active      int
		interrupted os.Signal
		results     = make(chan result)
		running     = &processes{set: map[*os.Process]bool{}}
	)
	start := func() {
		p := pkgs[started]
		started++
		active++
		go func() {
			output, elapsed, cpu, err := runOne(p, args, timeout, running)
			results <- result{p, output, elapsed, cpu, err}
		}()
	}
	fill := func() {
		for interrupted == nil && started < len(pkgs) && active < sched.procs {
			start()
		}
	}
	var tick <-chan time.Time
	if sched.idleProcs > sched.procs && sched.idle != nil {
		ticker := time.NewTicker(sched.every)
		defer ticker.Stop()
		tick = ticker.C
		sched.idle() // the first window starts now
	}
	fill()
	for active > 0 {
		select {
		case r := <-results:
			active--
			if r.err != nil || verbose {
				stdout.Write(r.output)
			}
			status := "ok  "
			if r.err != nil {
				failed++
				status = "FAIL"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%.3fs\tcpu %.1fs\n", status, r.p.ImportPath, r.elapsed.Seconds(), r.cpu.Seconds())
			fill()
		case <-tick:
			if idle := sched.idle(); interrupted == nil && started < len(pkgs) && active < sched.idleProcs && idle >= idleShare {
				start()
			}
		case sig := <-signals:
			running.signal(sig)
			interrupted = sig
		}
	}
	if interrupted != nil {
		fmt.Fprintf(stdout, "testrun: %v: packages not started\n", interrupted)
		failed++
	}
	return failed
}

// cpuIdle returns a function that returns the share of the cores' time
// that was idle (not I/O wait: more I/O would not go faster) since it was
// last called, from /proc/stat; 0 when it cannot read it.
func cpuIdle() func() float64 {
	var lastIdle, lastTotal uint64
	return func() float64 {
		idle, total, err := readCPUTimes()
		if err != nil {
			return 0
		}
		dIdle, dTotal := idle-lastIdle, total-lastTotal
		lastIdle, lastTotal = idle, total
		if dTotal == 0 {
			return 0
		}
		return float64(dIdle) / float64(dTotal)
	}
}

// readCPUTimes reads the idle and the total time of all cores (the first
// line of /proc/stat: user nice system idle iowait irq softirq steal ...).
func readCPUTimes() (idle, total uint64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		// guest and guest_nice (the 9th and 10th) are already in user
		// and nice.
		if i < 8 {
			total += v
		}
		if i == 3 {
			idle = v
		}
	}
	return idle, total, nil
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
