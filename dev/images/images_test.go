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

import (
	"archive/tar"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// untar unpacks an archive written by Write into a directory.
func untar(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// files lists an image's flattened file system: path -> header.
func files(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out["/"+strings.TrimSuffix(h.Name, "/")] = h
	}
}

func TestWriteNamesEveryImageAsTheCRILooksItUp(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "images.tar")
	built, err := Write(archive,
		Image{Ref: "registry.k8s.io/pause:3.10", Layers: [][]File{{{Path: "/pause", Data: []byte("x"), Mode: 0o755}}}, Entrypoint: []string{"/pause"}},
		Image{Ref: "busybox:1.35", Layers: [][]File{{{Path: "/bin/sh", Link: "busybox"}, {Path: "/opt/starrocks/fe/meta", Dir: true, UID: 1000, GID: 1000}}}, User: "1000"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if built[1].Ref != "docker.io/library/busybox:1.35" {
		t.Errorf("a short name must become the CRI's docker.io name, got %q", built[1].Ref)
	}
	if want := "registry.k8s.io/pause@" + built[0].Digest; built[0].DigestRef != want {
		t.Errorf("DigestRef = %q, want %q", built[0].DigestRef, want)
	}
	lp, err := layout.FromPath(untar(t, archive))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, d := range m.Manifests {
		names[d.Annotations[AnnotationImageName]] = d.Digest.String()
	}
	for _, b := range built {
		for _, ref := range []string{b.Ref, b.DigestRef} {
			if names[ref] != b.Digest {
				t.Errorf("index.json: %s names %q, want manifest %s (names: %v)", ref, names[ref], b.Digest, names)
			}
		}
	}
	h, err := v1.NewHash(built[1].Digest)
	if err != nil {
		t.Fatal(err)
	}
	img, err := lp.Image(h)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" || cf.Config.User != "1000" {
		t.Errorf("config: os %q arch %q user %q", cf.OS, cf.Architecture, cf.Config.User)
	}
	fs := files(t, img)
	if h := fs["/bin/sh"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("/bin/sh: %+v", h)
	}
	if h := fs["/opt/starrocks/fe/meta"]; h == nil || h.Uid != 1000 || h.Typeflag != tar.TypeDir {
		t.Errorf("/opt/starrocks/fe/meta: %+v", h)
	}
	if h := fs["/opt/starrocks"]; h == nil || h.Uid != 0 || h.Mode != 0o755 {
		t.Errorf("a parent not listed is a root-owned 0755 directory: %+v", h)
	}

	// The same inputs give the same digests.
	again, err := Write(filepath.Join(dir, "again.tar"),
		Image{Ref: "registry.k8s.io/pause:3.10", Layers: [][]File{{{Path: "/pause", Data: []byte("x"), Mode: 0o755}}}, Entrypoint: []string{"/pause"}})
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Digest != built[0].Digest {
		t.Errorf("digest changed between two writes: %s, %s", built[0].Digest, again[0].Digest)
	}
}

func TestWriteRefusesAmbiguousInput(t *testing.T) {
	for name, img := range map[string]Image{
		"a reference without a tag": {Ref: "registry.k8s.io/pause"},
		"a relative path":           {Ref: "a/b:1", Layers: [][]File{{{Path: "etc/passwd", Data: []byte("x")}}}},
		"a path listed twice":       {Ref: "a/b:1", Layers: [][]File{{{Path: "/a", Data: []byte("x")}, {Path: "/a", Data: []byte("y")}}}},
		"a path with dot-dot":       {Ref: "a/b:1", Layers: [][]File{{{Path: "/a/../../b", Data: []byte("x")}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Write(filepath.Join(t.TempDir(), "x.tar"), img); err == nil {
				t.Fatal("Write accepted it")
			}
		})
	}
}

var (
	setOnce sync.Once
	setDir  string
	set     *Set
	setErr  error
)

// TestMain removes the image set the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	if setDir != "" {
		os.RemoveAll(setDir)
	}
	os.Exit(code)
}

// buildSet builds the module's image set once for the tests that need it.
func buildSet(t *testing.T) *Set {
	t.Helper()
	setOnce.Do(func() {
		if setDir, setErr = os.MkdirTemp("", "images-set-"); setErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		if set, setErr = BuildSet(ctx, setDir); setErr != nil {
			return
		}
		fi, err := os.Stat(set.Archive)
		if setErr = err; err == nil {
			t.Logf("BuildSet: %s, archive %.1f MiB", time.Since(start).Round(time.Second), float64(fi.Size())/(1<<20))
		}
	})
	if setErr != nil {
		t.Fatal(setErr)
	}
	return set
}

func TestSetLaysOutTheImagesAsWerfAndUpstream(t *testing.T) {
	s := buildSet(t)
	lp, err := layout.FromPath(untar(t, s.Archive))
	if err != nil {
		t.Fatal(err)
	}
	image := func(b Built) (v1.Image, *v1.ConfigFile, map[string]*tar.Header) {
		h, err := v1.NewHash(b.Digest)
		if err != nil {
			t.Fatal(err)
		}
		img, err := lp.Image(h)
		if err != nil {
			t.Fatalf("%s: %v", b.Ref, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		return img, cf, files(t, img)
	}
	for _, c := range []struct {
		b          Built
		entrypoint string
	}{{s.Agent, "/agent"}, {s.Webhook, "/webhook"}, {s.Pause, "/pause"}} {
		_, cf, fs := image(c.b)
		if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != c.entrypoint {
			t.Errorf("%s: entrypoint %v, want [%s] (images/*/werf.inc.yaml)", c.b.Ref, got, c.entrypoint)
		}
		if h := fs[c.entrypoint]; h == nil || h.Mode&0o111 == 0 {
			t.Errorf("%s: %s missing or not executable: %+v", c.b.Ref, c.entrypoint, h)
		}
	}
	_, cf, fe := image(s.StarrocksFE)
	if cf.Config.WorkingDir != "/opt/starrocks" {
		t.Errorf("FE workingDir %q (images/starrocks-fe/werf.inc.yaml)", cf.Config.WorkingDir)
	}
	_, _, be := image(s.StarrocksBE)
	for img, want := range map[string]map[string]*tar.Header{
		"fe": fe, "be": be,
	} {
		home := "/opt/starrocks/" + img
		for _, p := range []string{"/bin/sh", "/bin/bash", "/bin/sleep", "/bin/cat", "/bin/mkdir", "/bin/kill", home + "/bin/start_" + img + ".sh", home + "/bin/stop_" + img + ".sh", home + "/lib/starrocks-" + img + "-standin", home + "/conf/" + img + ".conf"} {
			if want[p] == nil {
				t.Errorf("%s image: %s missing", img, p)
			}
		}
		for _, d := range []string{home, home + "/bin", home + "/conf", home + "/log"} {
			if h := want[d]; h == nil || h.Uid != starrocksUID {
				t.Errorf("%s image: %s must be a directory of the starrocks user (uid 1000): %+v", img, d, h)
			}
		}
	}
	if fe[FEStartWrapper] == nil || fe["/opt/starrocks/fe/meta"] == nil {
		t.Errorf("FE image: %s or meta/ missing", FEStartWrapper)
	}
	if be["/opt/starrocks/be/storage"] == nil {
		t.Errorf("BE image: storage/ missing")
	}
	mi, _ := json.Marshal(s.ModulesImages())
	for _, b := range []Built{s.Agent, s.Webhook, s.StarrocksFE, s.StarrocksBE, s.StarrocksCN} {
		if !strings.HasPrefix(b.DigestRef, Registry+"@sha256:") || !strings.Contains(string(mi), b.Digest) {
			t.Errorf("%s: DigestRef %s not in %s or not in ModulesImages %s", b.Ref, b.DigestRef, Registry, mi)
		}
	}
	// USAGE's client pod: image mysql:8.4, command sleep, then mysql.
	if s.Client.Ref != ClientRef {
		t.Fatalf("client image %q, want %s", s.Client.Ref, ClientRef)
	}
	_, _, client := image(s.Client)
	for _, p := range []string{"/bin/sh", "/bin/sleep", "/usr/bin/mysql", "/usr/bin/mariadb"} {
		if client[p] == nil {
			t.Errorf("client image: %s missing", p)
		}
	}
	var refs []string
	for _, b := range []Built{s.Pause, s.Busybox, s.Agent, s.Webhook, s.StarrocksFE, s.StarrocksBE, s.StarrocksCN, s.Client} {
		refs = append(refs, b.Ref)
	}
	sort.Strings(refs)
	t.Logf("images: %v", refs)
}
