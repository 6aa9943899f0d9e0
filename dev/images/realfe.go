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

package images

// The real StarRocks FE image of the local node: the FE built by
// dev/scripts/starrocks-fe.sh and this machine's JDK 17, laid out as
// upstream's starrocks/fe-ubuntu (StarRocks/starrocks
// docker/dockerfiles/fe/fe-ubuntu.Dockerfile, branch-4.1: Ubuntu 24.04 with
// openjdk-17-jdk, `ln -s java-17-openjdk-amd64 java-17-openjdk` in /lib/jvm,
// ENV JAVA_HOME=/lib/jvm/java-17-openjdk, the release in /opt/starrocks/fe
// owned by starrocks 1000:1000, WORKDIR /opt/starrocks), with the module's
// fe-start.sh where werf adds it. The pod's command is the module's
// fe-start.sh, which runs the release's own bin/start_fe.sh: nothing of the
// start path is a stand-in.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// Where the JDK lives on this machine (Debian's openjdk-17-jdk-headless)
// and in the image, as in upstream's image (Ubuntu's openjdk-17-jdk: the
// same paths, /lib a link to usr/lib in both).
const (
	JDKHome = "/usr/lib/jvm/java-17-openjdk-amd64"
	// JavaHome is upstream's ENV JAVA_HOME, a link to JDKHome.
	JavaHome = "/lib/jvm/java-17-openjdk"
	// jdkConf holds the files the JDK's conf/ and lib/ link to on Debian
	// and Ubuntu (java.security, jvm.cfg, ...); the CA store is
	// ca-certificates-java's.
	jdkConf    = "/etc/java-17-openjdk"
	jdkCACerts = "/etc/ssl/certs/java/cacerts"
	// RealFERef is the real FE image's tag; pods name it by digest.
	RealFERef = Registry + ":starrocks-fe-real"
	// realFEImageVersion changes when the image's layout does, so a cached
	// archive of an older layout is not used.
	realFEImageVersion = "1"
)

// jdkLeftOut are the JDK's parts no FE uses: the modules for jlink, C
// headers, manuals, sources, and the GUI and sound libraries (the FE runs
// headless), whose X11 and ALSA libraries the image then does not need.
var jdkLeftOut = map[string]bool{
	"jmods": true, "include": true, "man": true, "docs": true, "lib/src.zip": true,
	"lib/libawt_xawt.so": true, "lib/libsplashscreen.so": true, "lib/libjsound.so": true, "lib/libatk-wrapper.so": true,
}

// RealFE writes the real FE image into an archive in cacheDir, or finds it
// there: feHome is the built FE (its folder name carries the source
// archive's checksum), and the key also covers the JDK, the module's
// fe-start.sh and this layout, so a change of any of them writes a new
// archive and removes the older ones. Writing takes about 1.5 GB of disk
// and about 15 s; the image is the same every time, so the archive is kept.
func RealFE(feHome, cacheDir string) (archive string, built Built, err error) {
	wrapper := filepath.Join(controlplane.RepoRoot(), "images/starrocks-fe/fe-start.sh")
	key, err := realFEKey(feHome, wrapper)
	if err != nil {
		return "", Built{}, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", Built{}, err
	}
	archive = filepath.Join(cacheDir, "fe-image-"+key+".tar")
	meta := archive + ".json"
	if data, err := os.ReadFile(meta); err == nil && json.Unmarshal(data, &built) == nil && exists(archive) {
		return archive, built, nil
	}
	files, err := realFELayers(feHome, wrapper)
	if err != nil {
		return "", Built{}, err
	}
	out, err := Write(archive, Image{
		Ref: RealFERef, Layers: files, Uncompressed: true,
		WorkingDir: "/opt/starrocks", Env: []string{"JAVA_HOME=" + JavaHome},
		Cmd: []string{FEHome + "/bin/start_fe.sh"},
	})
	if err != nil {
		return "", Built{}, err
	}
	data, err := json.Marshal(out[0])
	if err != nil {
		return "", Built{}, err
	}
	// The record last: an archive without one is written again.
	if err := os.WriteFile(meta, data, 0o644); err != nil {
		return "", Built{}, err
	}
	old, _ := filepath.Glob(filepath.Join(cacheDir, "fe-image-*.tar*"))
	for _, o := range old {
		if o != archive && o != meta {
			_ = os.Remove(o)
		}
	}
	return archive, out[0], nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// realFEKey hashes what the image is made of: the FE build (its folder is
// named by its source's checksum), the JDK's release and the java binary
// and modules as installed (size and time), the start wrapper and the
// layout's version.
func realFEKey(feHome, wrapper string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "layout %s\nfe %s\n", realFEImageVersion, filepath.Base(feHome))
	for _, p := range []string{JDKHome + "/release", wrapper} {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("the real FE image needs %s: %w", p, err)
		}
		h.Write(data)
	}
	for _, p := range []string{JDKHome + "/bin/java", JDKHome + "/lib/modules", JDKHome + "/lib/server/libjvm.so", jdkCACerts} {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("the real FE image needs %s (apt-get install openjdk-17-jdk-headless): %w", p, err)
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// realFELayers is the image, lowest layer first: busybox's shell and
// tools (what fe-start.sh and start_fe.sh call: awk, grep, sed, readlink,
// mktemp), the runtime (bash for start_fe.sh, the JDK and the shared
// libraries it and bash load) and the FE.
func realFELayers(feHome, wrapper string) ([][]File, error) {
	shell, err := BusyboxLayer(BusyboxPath)
	if err != nil {
		return nil, err
	}
	runtime, err := runtimeFiles()
	if err != nil {
		return nil, err
	}
	fe, err := realFEFiles(feHome, wrapper)
	if err != nil {
		return nil, err
	}
	return [][]File{shell, runtime, fe}, nil
}

// runtimeFiles is the JDK and bash with the libraries they load, at the
// paths they have here (Debian and Ubuntu alike: /lib a link to usr/lib).
func runtimeFiles() ([]File, error) {
	files := []File{
		{Path: "/lib", Link: "usr/lib"},
		{Path: "/lib64", Link: "usr/lib64"},
		// Replaces busybox's /bin/bash: start_fe.sh is a bash script.
		{Path: "/bin/bash", Source: "/bin/bash"},
		{Path: "/usr/lib/jvm/java-17-openjdk", Link: path.Base(JDKHome)},
		{Path: jdkCACerts, Source: jdkCACerts, Mode: 0o644},
	}
	jdk, err := hostTree(JDKHome, func(rel string) bool { return jdkLeftOut[rel] })
	if err != nil {
		return nil, err
	}
	conf, err := hostTree(jdkConf, nil)
	if err != nil {
		return nil, err
	}
	files = append(append(files, jdk...), conf...)
	var binaries []string
	for _, f := range files {
		if f.Source != "" && (f.Path == "/bin/bash" || strings.HasPrefix(f.Path, JDKHome+"/bin/") || strings.HasSuffix(f.Path, ".so")) {
			binaries = append(binaries, f.Source)
		}
	}
	libs, err := sharedLibraries(binaries)
	if err != nil {
		return nil, err
	}
	return append(files, libs...), nil
}

// hostTree lists a folder of this machine as files at the same paths:
// folders, links as links, files with their permission bits; leave says
// which paths (relative to root) to leave out.
func hostTree(root string, leave func(rel string) bool) ([]File, error) {
	var files []File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && leave != nil && leave(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			files = append(files, File{Path: p, Dir: true, Mode: int64(info.Mode().Perm())})
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: p, Link: target})
		case info.Mode().IsRegular():
			files = append(files, File{Path: p, Source: p, Mode: int64(info.Mode().Perm())})
		}
		return nil
	})
	return files, err
}

// sharedLibraries is every library ldd lists for the binaries, at its
// path with the folder's links resolved (/lib/x86_64-linux-gnu/libc.so.6
// at /usr/lib/x86_64-linux-gnu/libc.so.6) under the name the loader asks
// for, with the content of the file it names. The JDK's own libraries are
// in its tree already.
func sharedLibraries(binaries []string) ([]File, error) {
	seen := map[string]bool{}
	for _, b := range binaries {
		out, err := exec.Command("ldd", b).Output()
		if err != nil {
			// Not a dynamic executable (a script, a static binary).
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			var lib string
			switch {
			case len(fields) >= 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "/"):
				lib = fields[2]
			case len(fields) >= 1 && strings.HasPrefix(fields[0], "/"):
				lib = fields[0]
			case len(fields) >= 3 && fields[2] == "not" && fields[0] != "libjvm.so":
				// libjvm.so is the JDK's: the JVM has it loaded when it
				// loads its other libraries.
				return nil, fmt.Errorf("%s needs %s, which is not installed", b, fields[0])
			default:
				continue
			}
			if !strings.HasPrefix(lib, JDKHome+"/") {
				seen[lib] = true
			}
		}
	}
	var files []File
	at := map[string]bool{}
	names := make([]string, 0, len(seen))
	for lib := range seen {
		names = append(names, lib)
	}
	sort.Strings(names)
	for _, lib := range names {
		dir, err := filepath.EvalSymlinks(filepath.Dir(lib))
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, filepath.Base(lib))
		if at[p] {
			continue
		}
		at[p] = true
		files = append(files, File{Path: p, Source: lib, Mode: 0o755})
	}
	return files, nil
}

// realFEFiles is /opt/starrocks/fe as the release lays it out (bin, conf,
// lib, webroot), meta/ and log/ created, all owned by starrocks as upstream
// copies it, the module's fe-start.sh, the agent's shared folder, and the
// image's users.
func realFEFiles(feHome, wrapper string) ([]File, error) {
	own := func(f File) File { f.UID, f.GID = starrocksUID, starrocksUID; return f }
	files := []File{
		own(File{Path: "/opt/starrocks", Dir: true}),
		own(File{Path: FEHome, Dir: true}),
		own(File{Path: FEHome + "/meta", Dir: true}),
		own(File{Path: FEHome + "/log", Dir: true}),
		own(File{Path: "/opt/starrocks/agent-run", Dir: true}),
		{Path: FEStartWrapper, Source: wrapper},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\nstarrocks:x:1000:1000:StarRocks:/opt/starrocks:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")},
		{Path: "/etc/group", Data: []byte("root:x:0:\nstarrocks:x:1000:\nnogroup:x:65534:\n")},
	}
	for _, d := range []string{"bin", "conf", "lib", "webroot"} {
		tree, err := hostTree(filepath.Join(feHome, d), nil)
		if err != nil {
			return nil, fmt.Errorf("the built FE at %s: %w", feHome, err)
		}
		for _, f := range tree {
			rel, _ := filepath.Rel(feHome, f.Path)
			f.Path = FEHome + "/" + filepath.ToSlash(rel)
			files = append(files, own(f))
		}
	}
	return files, nil
}
