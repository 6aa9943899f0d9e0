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
	"context"
	"os"
	"path/filepath"

	"github.com/deckhouse/managed-starrocks/dev/gobuild"
	"github.com/deckhouse/managed-starrocks/dev/images"
)

// The node's own images: the sandbox image its containerd is configured
// with, and a shell for test pods. Both are dev/images' (the module's image
// set has them too); the node writes just these two, so a node test builds
// no module binary.
const (
	PauseImage   = images.PauseRef
	BusyboxImage = images.BusyboxRef
)

// buildOwnImages builds dev/cmd/pause and writes the pause and busybox
// images into one archive in the run directory, for ImportImage.
func (n *Node) buildOwnImages(ctx context.Context) (string, error) {
	bin := filepath.Join(n.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	if err := gobuild.Build(ctx, bin, "pause", []string{"-trimpath", "-ldflags=-s -w"}, "./dev/cmd/pause"); err != nil {
		return "", err
	}
	shell, err := images.BusyboxLayer(images.BusyboxPath)
	if err != nil {
		return "", err
	}
	archive := filepath.Join(n.dir, "node-images.tar")
	_, err = images.Write(archive,
		images.Image{Ref: PauseImage, Layers: [][]images.File{{{Path: "/pause", Source: filepath.Join(bin, "pause")}}}, Entrypoint: []string{"/pause"}, User: "65535:65535"},
		images.Image{Ref: BusyboxImage, Layers: [][]images.File{shell}, Cmd: []string{"sh"}},
	)
	return archive, err
}
