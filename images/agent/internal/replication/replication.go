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

// Package replication reads how many replicas the tables of the cluster
// keep: the largest number is the fewest BEs the cluster can shrink to
// (StarRocks refuses to decommission a BE while a table needs more
// replicas than the BEs left), the smallest shows tables that lose data
// with a BE (a Standalone that became a Cluster keeps its tables at 1).
package replication

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// information_schema.partitions_meta has one row per partition with its
// DB_NAME, TABLE_NAME and REPLICATION_NUM
// (https://docs.starrocks.io/docs/sql-reference/information_schema/partitions_meta/);
// the decommission check walks the same per-partition numbers (fe-core
// PartitionInfo.getReplicationNum in system/SystemInfoService
// .decommissionBackend). information_schema lists only what the account may
// see: d8_agent has db_admin, which holds SELECT on every table, the
// internal _statistics_ ones included (docs: built_in_roles). One row each
// way keeps the answer small however many partitions there are; the names
// make the order total, so the table reported does not flap.
const (
	QueryMax = "SELECT DB_NAME, TABLE_NAME, REPLICATION_NUM FROM information_schema.partitions_meta WHERE DB_NAME != '_statistics_' ORDER BY REPLICATION_NUM DESC, DB_NAME, TABLE_NAME LIMIT 1"
	QueryMin = "SELECT DB_NAME, TABLE_NAME, REPLICATION_NUM FROM information_schema.partitions_meta WHERE DB_NAME != '_statistics_' ORDER BY REPLICATION_NUM ASC, DB_NAME, TABLE_NAME LIMIT 1"
)

// Both numbers leave the _statistics_ tables out. The largest is what a
// scale-in must not go below, and the StarRocks the module ships
// (desired.StarRocksVersion, 4.1) skips them in the decommission check
// (system/SystemInfoService.decommissionBackend; StarRocks PR 56114), so
// counting them would refuse a 2 -> 1 BE scale-in StarRocks performs (3.x,
// alter/SystemHandler.checkDecommission, counted them; it is not shipped).
// Counted, they would also hide a team table of the same number, as
// '_statistics_' sorts before lower-case names. The smallest leaves them out
// because the FE raises their replication itself as BEs join, to
// min(3, BEs) (statistic/StatisticUtils.alterSystemTableReplicationNumIfNecessary),
// and the team is never asked to alter them.

// Querier is what the package needs from a pool.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Read returns the largest and the smallest replication number in use; the
// numbers are 0 when there is no table at all.
func Read(ctx context.Context, q Querier) (*agentconfig.ReplicationReport, error) {
	maxNum, maxTable, err := one(ctx, q, QueryMax)
	if err != nil {
		return nil, err
	}
	minNum, minTable, err := one(ctx, q, QueryMin)
	if err != nil {
		return nil, err
	}
	return &agentconfig.ReplicationReport{MaxReplicationNum: maxNum, MaxReplicationTable: maxTable, MinReplicationNum: minNum, MinReplicationTable: minTable}, nil
}

// one reads the first row by column name.
func one(ctx context.Context, q Querier, query string) (int32, string, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return 0, "", fmt.Errorf("read replication numbers: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, "", fmt.Errorf("read replication numbers: %w", err)
	}
	if !rows.Next() {
		return 0, "", rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return 0, "", fmt.Errorf("read replication numbers: %w", err)
	}
	m := map[string]string{}
	for i, c := range cols {
		m[strings.ToUpper(c)] = vals[i].String
	}
	n, err := strconv.ParseInt(strings.TrimSpace(m["REPLICATION_NUM"]), 10, 16)
	if err != nil || n < 0 {
		// An unknown number must never read as "no table needs replicas".
		return 0, "", fmt.Errorf("read replication numbers: REPLICATION_NUM of %s.%s is %q", m["DB_NAME"], m["TABLE_NAME"], m["REPLICATION_NUM"])
	}
	return int32(n), m["DB_NAME"] + "." + m["TABLE_NAME"], nil
}
