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

package realfe

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// classArchive is HotSpot's class data sharing for the test FEs: an
// archive of the FE's classes, parsed and laid out once, which every later
// FE maps instead of loading its jars class by class. An FE's start to its
// first query took 2.5 to 3.2 CPU-seconds with it instead of 3.6 to 4.0 (a
// quiet machine, dev/docs/BUILD.md).
//
// The first FE that finds no archive writes it when it exits
// (-XX:ArchiveClassesAtExit, about 7 CPU-seconds more, once per built FE
// and JDK); the others start without it meanwhile. The JVM checks the
// archive itself (the JDK's build, the class path, each jar's size and
// time) and starts without it when anything differs, so a stale archive
// costs speed, never a wrong class; its name carries what is known here
// (the built FE, the JVM options, the java binary).
type classArchive struct {
	path string
}

// archiveFor names the archive of the built FE (its folder in the tools
// cache) for the JVM the FEs start with.
func archiveFor(built string) (classArchive, error) {
	java := filepath.Join(os.Getenv("JAVA_HOME"), "bin", "java")
	if os.Getenv("JAVA_HOME") == "" {
		var err error
		if java, err = exec.LookPath("java"); err != nil {
			return classArchive{}, err
		}
	}
	java, err := filepath.EvalSymlinks(java)
	if err != nil {
		return classArchive{}, err
	}
	st, err := os.Stat(java)
	if err != nil {
		return classArchive{}, err
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00%d", testJVMOptions, java, st.Size(), st.ModTime().UnixNano())))
	return classArchive{path: built + "-" + hex.EncodeToString(sum[:6]) + ".jsa"}, nil
}

// options are the JVM options of an FE about to start: the archive's when
// it exists. Otherwise, when no other FE (of any test process) writes it
// meanwhile, the options that write it at exit, and written, which the
// caller runs once the FE has exited (true when it exited by itself or on
// SIGTERM, not killed): it keeps a whole archive and drops a partial one.
func (a classArchive) options() (opts string, written func(exitedCleanly bool)) {
	if _, err := os.Stat(a.path); err == nil {
		return "-XX:SharedArchiveFile=" + a.path, func(bool) {}
	}
	lock, err := os.OpenFile(a.path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", func(bool) {}
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return "", func(bool) {}
	}
	tmp := a.path + ".tmp"
	_ = os.Remove(tmp)
	return "-XX:ArchiveClassesAtExit=" + tmp, func(exitedCleanly bool) {
		defer lock.Close()
		if exitedCleanly {
			if err := os.Rename(tmp, a.path); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
		}
		_ = os.Remove(tmp)
	}
}
