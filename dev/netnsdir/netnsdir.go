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

// Package netnsdir gives the machine back the /run/netns mount that the
// first named network namespace makes. iproute2's `ip netns add` (the real
// FEs' networks, dev/realfe) and containerd's CNI setup (the local node's
// pods, dev/node) both bind-mount /run/netns on itself, shared, when it is
// not a mount point yet, and neither ever unmounts it: on a machine that
// had none, every test run would leave one behind.
//
// Several test packages make namespaces side by side, so the mount belongs
// to none of them. Each holds a shared flock on one file while its
// namespaces may exist (Use); whoever finds no mount point first writes a
// marker saying the mount, when it appears, is the tests'. The last user
// to leave (its exclusive flock succeeds) unmounts it once it is empty, and
// removes the folder if the marker says it was not there. A second file's
// exclusive flock keeps the marker's check and the release apart. A killed
// test loses its flocks with its process and leaves the marker, so the
// next user's release still gives the mount back.
package netnsdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/deckhouse/managed-starrocks/dev/machinelock"
)

const (
	// Dir is where iproute2 and containerd keep named network namespaces
	// (/var/run/netns is the same folder on Debian).
	Dir = "/run/netns"
	// usersFile's flock is shared by the users; mutexFile's is exclusive
	// around a marker check and a release. Both are machine-wide; a flock
	// goes with its process.
	usersFile = "/run/lock/managed-starrocks-netns.users"
	mutexFile = "/run/lock/managed-starrocks-netns.lock"
	marker    = "/run/lock/managed-starrocks-netns.mounted-by-tests"
	// Marker contents: whether Dir existed before the tests mounted it.
	folderExisted = "folder existed\n"
	folderMade    = "folder made\n"
)

// Use declares that the caller is about to make named network namespaces.
// It returns release, to call once the caller's namespaces are gone.
func Use() (release func() error, err error) {
	unlock, err := lockMutex()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := noteMount(); err != nil {
		return nil, err
	}
	users, err := os.OpenFile(usersFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	// Only a release takes it exclusively, and releases hold the mutex.
	if err := syscall.Flock(int(users.Fd()), syscall.LOCK_SH); err != nil {
		users.Close()
		return nil, fmt.Errorf("lock %s: %w", usersFile, err)
	}
	return func() error { return releaseMount(users) }, nil
}

func lockMutex() (unlock func(), err error) {
	return machinelock.Exclusive(context.Background(), mutexFile)
}

// noteMount writes the marker when /run/netns is not a mount point yet and
// no marker is there (one there means an earlier user's mount is still the
// tests').
func noteMount() error {
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	mounted, err := mountPoint()
	if err != nil || mounted {
		return err
	}
	state := folderMade
	if _, err := os.Stat(Dir); err == nil {
		state = folderExisted
	}
	return os.WriteFile(marker, []byte(state), 0o644)
}

// releaseMount gives back the mount when the caller is the last user.
func releaseMount(users *os.File) error {
	unlock, err := lockMutex()
	if err != nil {
		users.Close()
		return err
	}
	defer unlock()
	// Closed before the mutex is unlocked: a Use that takes the mutex next
	// finds no exclusive holder of the users' file.
	defer users.Close()
	if err := syscall.Flock(int(users.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // another user goes on; the last one gives it back
		}
		return fmt.Errorf("lock %s: %w", usersFile, err)
	}
	state, err := os.ReadFile(marker)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the mount, if any, was the machine's before
	}
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(entries) > 0 {
		// Namespaces that are not the tests' (or that a user failed to
		// delete, which its own check reports): leave the mount and the
		// marker, so a later release gives it back once they are gone.
		return nil
	}
	mounted, err := mountPoint()
	if err != nil {
		return err
	}
	if mounted {
		if err := unix.Unmount(Dir, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", Dir, err)
		}
	}
	if string(state) == folderMade {
		if err := os.Remove(Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.Remove(marker)
}

// mountPoint says whether /run/netns is a mount point where this process
// sees it: the root of a mount (statx's STATX_ATTR_MOUNT_ROOT), not only a
// path in /proc/self/mountinfo, which also lists mounts hidden under a
// later one (a test's own tmpfs on /run).
func mountPoint() (bool, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, Dir, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS, &st)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("statx %s: %w", Dir, err)
	}
	if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return false, fmt.Errorf("statx %s: the kernel does not say whether it is a mount root (Linux 5.8 or later does)", Dir)
	}
	return st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
}

// Tracked says whether a /run/netns mount is the tests' own, which its
// last user gives back (a whole-machine comparison may ignore it while
// other users run).
func Tracked() bool {
	_, err := os.Stat(marker)
	return err == nil
}
