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

package node

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// busyboxPath is Debian's busybox-static: one static binary, so an image of
// it needs no libraries.
const busyboxPath = "/bin/busybox"

// buildOwnImages writes the node's pause and busybox images as archives in
// the run directory, for ImportImage. Both are one layer: busybox and a
// link for each of its applets in /bin. The pause container only sleeps
// (the CRI stops a sandbox with SIGKILL).
func (n *Node) buildOwnImages() ([]string, error) {
	layer, err := BusyboxLayer()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, img := range []struct {
		ref        string
		entrypoint []string
	}{
		{PauseImage, []string{"/bin/sleep", "2147483647"}},
		{BusyboxImage, []string{"/bin/sh"}},
	} {
		path := filepath.Join(n.dir, strings.NewReplacer("/", "_", ":", "_").Replace(img.ref)+".tar")
		if err := WriteImage(path, img.ref, layer, v1.Config{Entrypoint: img.entrypoint, Env: []string{"PATH=/bin"}}); err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

// BusyboxLayer is a layer with Debian's static busybox at /bin/busybox, its
// applets as symlinks in /bin, and an empty /tmp.
func BusyboxLayer() (v1.Layer, error) {
	bin, err := os.ReadFile(busyboxPath)
	if err != nil {
		return nil, fmt.Errorf("read %s (Debian package busybox-static): %w", busyboxPath, err)
	}
	list, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", busyboxPath, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Unix(0, 0)
	for _, d := range []string{"bin/", "tmp/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin)), ModTime: mtime}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet == "busybox" || strings.Contains(applet, "/") {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + applet, Linkname: "busybox", Mode: 0o777, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// WriteImage writes a one-layer image for this machine's platform as an
// archive `ctr images import` reads, named ref (in full: docker.io/...).
func WriteImage(path, ref string, layer v1.Layer, config v1.Config) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config = config
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("write image %s: %w", ref, err)
	}
	return nil
}
