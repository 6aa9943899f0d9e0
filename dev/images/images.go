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

// Package images writes OCI image archives that a containerd imports with
// `ctr -n k8s.io images import <archive>`, without a container engine or a
// registry: each image is a config and a few layers assembled from files on
// this machine with go-containerregistry and written as an OCI image layout
// in a tar file. set.go builds the module's images for the local node (the
// pause image, the agent, the webhook and the StarRocks stand-ins).
//
// Every image is listed in the layout's index.json once per name, each with
// the annotation io.containerd.image.name: containerd's importer takes a
// full reference from that annotation as the image's name
// (containerd/containerd images/archive/importer.go, imageName), and the
// CRI finds an image by exactly that name (it resolves short names to
// docker.io/... and would try to pull anything it does not find). A pod that
// names an image by digest (<repository>@sha256:...) is found only if an
// image of that exact name exists, so Write lists every image under its tag
// and under repository@digest, as a pull would have recorded it.
//
// Layers are written deterministically (fixed times, sorted entries), so
// the same inputs give the same digests. Development tooling, never shipped.
package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// AnnotationImageName is containerd's images.AnnotationImageName: the full
// reference ctr import names the image with.
const AnnotationImageName = "io.containerd.image.name"

// File is one entry of a layer. Exactly one of Data, Source, Link or Dir
// says what it is.
type File struct {
	// Path inside the image, absolute ("/opt/starrocks/fe/bin/start_fe.sh").
	Path string
	// Data is the file's content.
	Data []byte
	// Source is a file on this machine whose content is copied.
	Source string
	// Link makes a symbolic link to this target.
	Link string
	// Dir makes a directory.
	Dir bool
	// Mode is the permission bits; 0 means 0755 for directories and
	// executables given by Source, 0644 otherwise.
	Mode int64
	// UID and GID own the entry (0: root).
	UID, GID int
}

// Image is what Write puts into an archive.
type Image struct {
	// Ref is the image's full reference with a tag
	// ("docker.io/library/busybox:1", "registry.k8s.io/pause:3.10").
	Ref string
	// Layers, lowest first; a later layer's file replaces an earlier one.
	Layers [][]File
	// Config of the container: entrypoint, command, user, working
	// directory and environment as in an image's config.
	Entrypoint []string
	Cmd        []string
	User       string
	WorkingDir string
	Env        []string
	// Uncompressed writes the layers as plain tar files straight into the
	// archive, streamed from their sources: for the real FE's 1.5 GB of
	// jars, which are compressed already, gzip would spend a minute of CPU
	// and the in-memory layer as much memory, for nothing.
	Uncompressed bool
}

// Built is one image written to an archive.
type Built struct {
	// Ref is the tagged reference Image.Ref, normalised
	// (index.docker.io is written docker.io).
	Ref string
	// Digest is the manifest digest ("sha256:...").
	Digest string
	// DigestRef is Ref's repository @ Digest, the name a pod gets when the
	// image is given by digest.
	DigestRef string
}

// epoch is every entry's and the image's creation time: the same inputs
// give the same digests.
var epoch = time.Unix(0, 0).UTC()

// Write writes the images as one OCI image layout into a tar file at
// archive and returns them in the order given.
func Write(archive string, imgs ...Image) ([]Built, error) {
	dir, err := os.MkdirTemp(filepath.Dir(archive), ".oci-layout-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("oci layout: %w", err)
	}
	var out []Built
	for _, spec := range imgs {
		b, img, err := build(spec, dir)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", spec.Ref, err)
		}
		for _, ref := range []string{b.Ref, b.DigestRef} {
			if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
				AnnotationImageName: ref,
				// The OCI name of the entry; containerd prefers the
				// annotation above, other tools read this one.
				"org.opencontainers.image.ref.name": ref,
			})); err != nil {
				return nil, fmt.Errorf("image %s: %w", ref, err)
			}
		}
		out = append(out, b)
	}
	if err := tarDir(dir, archive); err != nil {
		return nil, err
	}
	return out, nil
}

// build assembles an image; uncompressed layers are written into the
// layout at dir directly.
func build(spec Image, dir string) (Built, v1.Image, error) {
	// A short name ("busybox:1.35") is completed as the CRI completes it
	// (docker.io/library/...); a missing tag is an error, not "latest".
	tag, err := name.NewTag(spec.Ref)
	if err != nil || !strings.HasSuffix(spec.Ref, ":"+tag.TagStr()) {
		return Built{}, nil, fmt.Errorf("reference must name a tag (%v)", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for i, files := range spec.Layers {
		var l v1.Layer
		var err error
		if spec.Uncompressed {
			l, err = plainLayer(files, dir)
		} else {
			l, err = Layer(files)
		}
		if err != nil {
			return Built{}, nil, fmt.Errorf("layer %d: %w", i, err)
		}
		mt, err := l.MediaType()
		if err != nil {
			return Built{}, nil, err
		}
		if img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: mt}); err != nil {
			return Built{}, nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Built{}, nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = "amd64"
	cf.OS = "linux"
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = spec.Entrypoint
	cf.Config.Cmd = spec.Cmd
	cf.Config.User = spec.User
	cf.Config.WorkingDir = spec.WorkingDir
	cf.Config.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, spec.Env...)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return Built{}, nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return Built{}, nil, err
	}
	repo := tag.Context().Name()
	ref := tag.Name()
	// go-containerregistry spells Docker Hub index.docker.io; the CRI and
	// containerd spell it docker.io.
	if strings.HasPrefix(ref, name.DefaultRegistry+"/") {
		ref = "docker.io/" + strings.TrimPrefix(ref, name.DefaultRegistry+"/")
		repo = "docker.io/" + strings.TrimPrefix(repo, name.DefaultRegistry+"/")
	}
	return Built{Ref: ref, Digest: d.String(), DigestRef: repo + "@" + d.String()}, img, nil
}

// Layer is a gzip-compressed tar layer of files, parents created as root
// owned 0755 directories where not listed.
func Layer(files []File) (v1.Layer, error) {
	var buf bytes.Buffer
	if err := writeLayerTar(&buf, files); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// plainLayer writes an uncompressed tar layer of files into the OCI layout
// at dir as the blob of its digest, which layout.AppendImage then finds
// written (it skips a blob of the right size that exists).
func plainLayer(files []File, dir string) (v1.Layer, error) {
	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(blobs, ".layer-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	counted := &countingWriter{w: io.MultiWriter(f, h)}
	err = writeLayerTar(bufio.NewWriterSize(counted, 1<<20), files)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	digest := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
	blob := filepath.Join(blobs, digest.Hex)
	if err := os.Rename(f.Name(), blob); err != nil {
		return nil, err
	}
	return &fileLayer{path: blob, digest: digest, size: counted.n}, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// fileLayer is an uncompressed layer in a file: its digest is its diff ID.
type fileLayer struct {
	path   string
	digest v1.Hash
	size   int64
}

func (l *fileLayer) Digest() (v1.Hash, error)             { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)             { return l.digest, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.path) }
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return os.Open(l.path) }
func (l *fileLayer) Size() (int64, error)                 { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error)  { return types.OCIUncompressedLayer, nil }

// writeLayerTar writes the tar of files to w (flushed if w is a
// bufio.Writer), each Source streamed from its file.
func writeLayerTar(w io.Writer, files []File) error {
	entries := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		if p == "/" || p != f.Path {
			return fmt.Errorf("file path %q must be absolute and clean", f.Path)
		}
		if _, dup := entries[p]; dup {
			return fmt.Errorf("file %s listed twice", p)
		}
		entries[p] = f
	}
	for p := range entries {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = File{Path: d, Dir: true}
			}
		}
	}
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, p := range paths {
		f := entries[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, "/"), ModTime: epoch, Uid: f.UID, Gid: f.GID, Mode: f.Mode, Format: tar.FormatPAX}
		var body []byte
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		case f.Link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.Link, 0o777
		case f.Source != "":
			st, err := os.Stat(f.Source)
			if err != nil {
				return fmt.Errorf("file %s: %w", p, err)
			}
			h.Typeflag, h.Size = tar.TypeReg, st.Size()
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		default:
			body = f.Data
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if h.Typeflag == 0 {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if f.Source != "" {
			if err := copyFile(tw, f.Source, h.Size); err != nil {
				return fmt.Errorf("file %s: %w", p, err)
			}
		} else if _, err := tw.Write(body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if bw, ok := w.(*bufio.Writer); ok {
		return bw.Flush()
	}
	return nil
}

// copyFile copies exactly size bytes of a file into the tar: a file that
// changed size since its header was written fails instead of corrupting
// the layer.
func copyFile(w io.Writer, name string, size int64) error {
	src, err := os.Open(name)
	if err != nil {
		return err
	}
	defer src.Close()
	n, err := io.Copy(w, io.LimitReader(src, size))
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes read, %d expected: the file changed while it was written", n, size)
	}
	return err
}

// tarDir packs the layout directory into a tar file, written beside and
// renamed so a reader never sees half an archive.
func tarDir(dir, archive string) error {
	tmp := archive + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname = filepath.ToSlash(rel), epoch, 0, 0, "", ""
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", archive, err)
	}
	return os.Rename(tmp, archive)
}
