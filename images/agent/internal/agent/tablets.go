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
	"strconv"
	"time"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// readTablets reports how many tablets StarRocks counts unhealthy, for the
// hooks to hold the next BE restart of a rollout until replicas a
// restarted BE missed are cloned. SHOW PROC '/statistic' is fe-core
// common/proc/StatisticProcDir: one row per database and a last row whose
// first column is "Total", column UnhealthyTabletNum counting the tablets
// TabletChecker finds neither HEALTHY nor REDUNDANT, COLOCATE_REDUNDANT or
// NEED_FURTHER_REPAIR. Columns are read by name. A count that cannot be
// read is reported as -1: unknown is not healthy. Since is kept in memory:
// an agent that restarts starts the bound anew, which only waits longer.
//
// It is read only when asked (Config.TabletHealth: a BE restart is
// pending): StatisticProcDir walks every tablet of every database and
// asks TabletChecker about each, holding each database's read lock, which
// on a large instance is real load on the leader every pass. Not asked,
// the report says so (NotRead), which the rollout does not take for
// healthy.
func (a *Agent) readTablets(ctx context.Context, asked bool) *agentconfig.TabletsStatus {
	if !asked {
		a.mu.Lock()
		a.unhealthyAt = time.Time{}
		a.mu.Unlock()
		return &agentconfig.TabletsStatus{Unhealthy: -1, NotRead: true}
	}
	n := int64(-1)
	// Asked of its own FE, the leader (only the leader's agent calls
	// this): SHOW PROC '/statistic' is not forwarded to the leader
	// (fe-core sql/ast/ShowProcStmt.NEED_FORWARD_PATH_ROOT lacks it), and a
	// follower behind the Service would answer from its replayed state.
	err := a.self.Do(ctx, "read tablet health", func(ctx context.Context, db *sql.DB) error {
		v, err := unhealthyTablets(ctx, db)
		n = v
		return err
	})
	if err != nil {
		n = -1
		a.log.Info("tablet health not readable", "error", err)
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if n == 0 {
		a.unhealthyAt = time.Time{}
		return &agentconfig.TabletsStatus{}
	}
	if a.unhealthyAt.IsZero() {
		a.unhealthyAt = now
	}
	return &agentconfig.TabletsStatus{Unhealthy: n, Since: a.unhealthyAt.UTC().Format(time.RFC3339)}
}

// unhealthyTablets is UnhealthyTabletNum of the Total row; 0 when there
// is no database at all (StatisticProcDir then returns no row).
func unhealthyTablets(ctx context.Context, db *sql.DB) (int64, error) {
	rows, err := db.QueryContext(ctx, "SHOW PROC '/statistic'")
	if err != nil {
		return -1, fmt.Errorf("SHOW PROC '/statistic': %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return -1, fmt.Errorf("SHOW PROC '/statistic': %w", err)
	}
	col := -1
	for i, c := range cols {
		if c == "UnhealthyTabletNum" {
			col = i
		}
	}
	if col < 0 || len(cols) == 0 {
		return -1, fmt.Errorf("SHOW PROC '/statistic' has no column UnhealthyTabletNum (columns %v)", cols)
	}
	total := int64(0)
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return -1, fmt.Errorf("SHOW PROC '/statistic': %w", err)
		}
		if vals[0].String != "Total" {
			continue
		}
		v, err := strconv.ParseInt(vals[col].String, 10, 64)
		if err != nil || v < 0 {
			return -1, fmt.Errorf("SHOW PROC '/statistic': UnhealthyTabletNum %q of the Total row is not a count", vals[col].String)
		}
		total = v
	}
	if err := rows.Err(); err != nil {
		return -1, fmt.Errorf("SHOW PROC '/statistic': %w", err)
	}
	return total, nil
}
