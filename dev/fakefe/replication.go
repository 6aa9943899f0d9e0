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

package fakefe

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// Tables and their replication numbers, as far as scaling needs them:
// information_schema.partitions_meta (one row per partition with DB_NAME,
// TABLE_NAME, REPLICATION_NUM; docs sql-reference/information_schema/
// partitions_meta) and the decommission check of the FE.

// Table is an OLAP table of the fake FE; every partition of it has
// ReplicationNum replicas.
type Table struct {
	DB, Name       string
	Partitions     int
	ReplicationNum int
}

// SetTable creates or replaces a table (e.g. "_statistics_",
// "column_statistics", 3 like the FE's own statistics tables).
func (s *Server) SetTable(db, name string, replicationNum int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range s.tables {
		if t.DB == db && t.Name == name {
			s.tables[i].ReplicationNum = replicationNum
			return
		}
	}
	s.tables = append(s.tables, Table{DB: db, Name: name, Partitions: 1, ReplicationNum: replicationNum})
	sort.Slice(s.tables, func(i, j int) bool {
		if s.tables[i].DB != s.tables[j].DB {
			return s.tables[i].DB < s.tables[j].DB
		}
		return s.tables[i].Name < s.tables[j].Name
	})
}

// ErrInsufficientBackends is the error code StarRocks answers a refused
// decommission with (DdlException, ERR_COMMON_ERROR 1064, seen as
// "[1064] [42000]: Unexpected exception: It will cause insufficient BE
// number ..." in StarRocks/starrocks issue 50681).
const ErrInsufficientBackends = 1064

// reSelectPartitionsMeta is the agent's query (images/agent/internal/replication).
var reSelectPartitionsMeta = regexp.MustCompile(`(?i)^select\s+db_name\s*,\s*table_name\s*,\s*replication_num\s+from\s+information_schema\.partitions_meta(?:\s+where\s+db_name\s*!=\s*'([^']*)')?\s+order\s+by\s+replication_num\s+(asc|desc)\s*,\s*db_name\s*,\s*table_name\s+limit\s+1$`)

// execReplication answers the partitions_meta query. information_schema
// shows only tables the account holds a privilege on: here, accounts with
// the data privileges (db_admin, root) see every table, others none.
func (s *Server) execReplication(c *mysql.Conn, q string) (*sqltypes.Result, bool, error) {
	m := reSelectPartitionsMeta.FindStringSubmatch(q)
	if m == nil {
		return nil, false, nil
	}
	// information_schema is scanned by a BE (nodes.go, noBackendAlive;
	// seen in StarRocks/starrocks issue 16315 and apecloud/kubeblocks issue
	// 7860, ERROR 1064 (HY000)).
	if err := s.noBackendAlive(); err != nil {
		return nil, true, err
	}
	r := &sqltypes.Result{Fields: fields("DB_NAME", "TABLE_NAME", "REPLICATION_NUM")}
	if u := s.users[c.User]; u == nil || !u.has(PrivUpdate) {
		return r, true, nil
	}
	var best *Table
	for i := range s.tables {
		t := &s.tables[i]
		switch {
		case m[1] != "" && t.DB == m[1]:
		case best == nil:
			best = t
		case strings.EqualFold(m[2], "desc"):
			if t.ReplicationNum > best.ReplicationNum {
				best = t
			}
		default:
			if t.ReplicationNum < best.ReplicationNum {
				best = t
			}
		}
	}
	if best != nil {
		r.Rows = append(r.Rows, row(best.DB, best.Name, strconv.Itoa(best.ReplicationNum)))
	}
	return r, true, nil
}

// checkDecommission refuses to decommission backend i while a table needs
// more replicas than the available BEs left, as the FE does: available are
// the BEs alive and not decommissioned, minus the ones to decommission;
// tables are walked with a running maximum and the first one that needs
// more names the error (fe-core alter/SystemHandler.checkDecommission in
// 3.x, system/SystemInfoService.decommissionBackend in 4.x). It skips the
// _statistics_ database as 4.x does (StarRocks PR 56114; 3.x counted it),
// the version the module ships.
func (s *Server) checkDecommission(i int) error {
	available := 0
	for j, b := range s.backends {
		if j != i && b.Alive && !b.Decommissioned {
			available++
		}
	}
	maxNum := 0
	for _, t := range s.tables {
		if t.DB == "_statistics_" || t.ReplicationNum <= maxNum {
			continue
		}
		maxNum = t.ReplicationNum
		if available < maxNum {
			return sqlerror.NewSQLErrorf(ErrInsufficientBackends, "42000",
				"Unexpected exception: It will cause insufficient BE number if these BEs are decommissioned because the table %s.%s requires %d replicas.", t.DB, t.Name, maxNum)
		}
	}
	return nil
}
