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

// Package machinelock orders the tests that change the machine outside
// their own folders (a throwaway containerd's mounts, processes and
// cgroups) against the tests that compare the whole machine before and
// after (dev/node's leave-the-machine-as-found tests). `go test -p` runs
// packages side by side, so the order has to be a lock on the machine, not
// on one test binary: a flock on one file, shared by changers, exclusive
// for a check.
package machinelock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// File is the machine-wide lock file; /run/lock is a tmpfs, so a reboot
// leaves no stale lock (a flock goes with its process anyway).
const File = "/run/lock/managed-starrocks-machine.lock"

// Change takes the lock shared: any number of changers run side by side,
// none while a check runs. The caller calls the returned unlock when what
// it changed is undone.
func Change(ctx context.Context) (unlock func(), err error) {
	return take(ctx, File, syscall.LOCK_SH)
}

// Check takes the lock exclusively: no changer runs until unlock.
func Check(ctx context.Context) (unlock func(), err error) {
	return take(ctx, File, syscall.LOCK_EX)
}

// Exclusive takes an exclusive flock on another file, waiting until ctx
// ends: a lock of the tests' own among the packages go test runs side by
// side (dev/gobuild's build folder).
func Exclusive(ctx context.Context, file string) (unlock func(), err error) {
	return take(ctx, file, syscall.LOCK_EX)
}

func take(ctx context.Context, file string, how int) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err == nil {
			return func() { f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("the lock %s is held: %w", file, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
