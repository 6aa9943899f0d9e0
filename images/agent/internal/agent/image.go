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
	err := a.service.Do(ctx, "create image", func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "ALTER SYSTEM CREATE IMAGE")
		return err
	})
	if err != nil {
		return fmt.Errorf("ALTER SYSTEM CREATE IMAGE: %w", err)
	}
	a.log.Info("metadata image requested before the FEs restart", "statement", "ALTER SYSTEM CREATE IMAGE", "rollout", token)
	a.mu.Lock()
	a.imageCreated = token
	a.mu.Unlock()
	return nil
}

func (a *Agent) imageCreatedFor() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.imageCreated
}
