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

package machinelock

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestChangersShareAndACheckExcludesThem: two changers hold the lock
// together; a check waits for both to unlock, and a changer waits for the
// check.
// (On a lock file of its own: a changer of another package may run beside.)
func TestChangersShareAndACheckExcludesThem(t *testing.T) {
	file := filepath.Join(t.TempDir(), "machine.lock")
	Change := func(ctx context.Context) (func(), error) { return take(ctx, file, syscall.LOCK_SH) }
	Check := func(ctx context.Context) (func(), error) { return take(ctx, file, syscall.LOCK_EX) }
	ctx := context.Background()
	unlock1, err := Change(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock2, err := Change(ctx)
	if err != nil {
		t.Fatalf("a second changer beside the first: %v", err)
	}
	if _, err := Check(shortly(t)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a check beside two changers: %v, want it to wait", err)
	}
	unlock1()
	if _, err := Check(shortly(t)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a check beside one changer: %v, want it to wait", err)
	}
	unlock2()
	unlockCheck, err := Check(shortly(t))
	if err != nil {
		t.Fatalf("a check with no changer: %v", err)
	}
	if _, err := Change(shortly(t)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a changer during a check: %v, want it to wait", err)
	}
	unlockCheck()
	unlock, err := Change(shortly(t))
	if err != nil {
		t.Fatalf("a changer after the check: %v", err)
	}
	unlock()
}

func shortly(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	t.Cleanup(cancel)
	return ctx
}
