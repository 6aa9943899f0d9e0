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

package agent

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// createImage runs ALTER SYSTEM CREATE IMAGE once per token the hooks put
// into agentConfig.createImage during a rollout, before any FE restarts:
// StarRocks' upgrade guide asks for a fresh metadata image before FEs move
// to another version (https://docs.starrocks.io/docs/deployment/upgrade/;
// the statement: https://docs.starrocks.io/docs/sql-reference/sql-statements/cluster-management/nodes_processes/ALTER_SYSTEM/,
// it makes the leader write a new image asynchronously). Only the leader's
// agent calls it. Remembered in memory only: an agent that restarts runs
// it once more, which costs one more image and nothing else.
func (a *Agent) createImage(ctx context.Context, token string) error {
	if token == "" || token == a.imageCreatedFor() {
		return nil
	}
	// Taken before the statement: an image the leader writes for it is
	// newer than this.
	baseline, asked := newestImage(a.opts.MetaDir), time.Now()
	err := a.service.Do(ctx, "create image", func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "ALTER SYSTEM CREATE IMAGE")
		return err
	})
	if err != nil {
		return fmt.Errorf("ALTER SYSTEM CREATE IMAGE: %w", err)
	}
	a.log.Info("metadata image requested before the FEs restart", "statement", "ALTER SYSTEM CREATE IMAGE", "rollout", token, "newestImage", baseline)
	a.mu.Lock()
	a.imageCreated, a.imageBaseline, a.imageAskedAt = token, baseline, asked
	a.mu.Unlock()
	return nil
}

func (a *Agent) imageCreatedFor() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.imageCreated
}

// imageRequest is the token of the last image request, this FE's newest
// image before it and when it was made ("" and zeros before the first).
func (a *Agent) imageRequest() (token string, baseline int64, at string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.imageCreated == "" {
		return "", 0, ""
	}
	return a.imageCreated, a.imageBaseline, a.imageAskedAt.UTC().Format(time.RFC3339)
}

// newestImage is the journal id of the newest metadata image in an FE's
// meta directory, 0 when there is none or the directory is not known. It
// reads the names as fe-core does (persist/Storage.reload: a file whose
// name starts with "image" and has a dot, except image.ckpt, the image
// being written, holds the journal id after its last dot) in both places
// an image goes: image/v2/, the only one 4.1 writes (GlobalStateMgr
// .saveImage; leader/MetaHelper's image directory is <meta>/image/v2), and
// image/, where images of older versions (format v1) may be left over.
func newestImage(metaDir string) int64 {
	if metaDir == "" {
		return 0
	}
	var newest int64
	for _, dir := range []string{filepath.Join(metaDir, "image"), filepath.Join(metaDir, "image", "v2")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || name == "image.ckpt" || !strings.HasPrefix(name, "image") || !strings.Contains(name, ".") {
				continue
			}
			id, err := strconv.ParseInt(name[strings.LastIndex(name, ".")+1:], 10, 64)
			if err == nil && id > newest {
				newest = id
			}
		}
	}
	return newest
}
