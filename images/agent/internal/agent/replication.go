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
	"errors"
	"sync"
	"time"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/membership"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/replication"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// replicationEvery bounds how often the numbers are read: partitions_meta
// walks every partition on the FE, and a table created since the last read
// that blocks a scale-in is still caught, by StarRocks refusing the
// decommission (noteRefusedDecommission).
const replicationEvery = time.Minute

// replicationCache is the last read, reused between reads.
type replicationCache struct {
	mu   sync.Mutex
	last *agentconfig.ReplicationReport
	at   time.Time
}

// readReplication adds the tables' replication numbers to the leader's
// membership report: the hooks and the webhook refuse BE counts below the
// largest. A failed read leaves it out (the hooks keep the last one).
//
// With no BE alive (bes as SHOW BACKENDS listed them this pass) it does not
// ask: StarRocks has a BE scan information_schema, so the query can only
// fail ("Backend node not found"), and it would fail every pass while the
// BEs start or are all down, an error in the pass for a state the BE
// conditions already report. The last read is reported again meanwhile.
func (a *Agent) readReplication(ctx context.Context, mst *agentconfig.MembershipStatus, bes []membership.Backend) error {
	c := &a.replication
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && time.Since(c.at) < replicationEvery && !a.opts.ReadReplicationEveryPass || !anyAlive(bes) {
		mst.Replication = c.last
		return nil
	}
	return a.service.Do(ctx, "read replication numbers", func(ctx context.Context, db *sql.DB) error {
		r, err := replication.Read(ctx, db)
		if err == nil {
			mst.Replication, c.last, c.at = r, r, time.Now()
		}
		return err
	})
}

func anyAlive(bes []membership.Backend) bool {
	for _, b := range bes {
		if b.Alive {
			return true
		}
	}
	return false
}

// noteRefusedDecommission puts StarRocks' answer to a refused ALTER SYSTEM
// DECOMMISSION BACKEND into the report: the scale-in cannot finish until
// the spec or the tables change, and the user must learn why from the
// status, not from the agent's log. The statement is retried every pass.
func (a *Agent) noteRefusedDecommission(mst *agentconfig.MembershipStatus, err error) {
	var se *membership.StatementError
	if errors.As(err, &se) && se.Decommission() {
		mst.DecommissionRefused = a.scrub(se.Err.Error())
		a.log.Warn("StarRocks refuses to decommission a backend", "statement", se.Statement, "error", mst.DecommissionRefused)
	}
}
