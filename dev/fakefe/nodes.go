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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// What the rollout and the bootstrap guard need of the FE dialect: node
// versions (the Version column of SHOW FRONTENDS and SHOW BACKENDS), the
// cluster id a BE keeps on its volume, a leader that changes, and ALTER
// SYSTEM DROP FOLLOWER.

// ClusterID is the id of the fake FE's cluster; a BE whose volume holds
// another (it was formatted by a different cluster) never turns alive:
// StarRocks' heartbeat refuses it with a cluster id mismatch.
const ClusterID int64 = 1234567

var (
	reDropFollower = regexp.MustCompile(`(?i)^alter\s+system\s+drop\s+follower\s+["']([^"':]+):(\d+)["']$`)
	reCreateImage  = regexp.MustCompile(`(?i)^alter\s+system\s+create\s+image$`)
)

// execNodes answers the statements of this file; handled is false for others.
func (s *Server) execNodes(q string) (*sqltypes.Result, bool, error) {
	if reShowStatistic.MatchString(q) {
		return s.showStatistic(), true, nil
	}
	if reCreateImage.MatchString(q) {
		// fe-core alter/SystemHandler.process: CreateImageClause only calls
		// GlobalStateMgr.triggerNewImage, which asks the journal to roll;
		// the checkpoint writes the image later. The statement returns at
		// once, before any image exists; requests before the next
		// checkpoint make one image (WritePendingImage).
		s.images++
		s.imagePending = true
		return &sqltypes.Result{}, true, nil
	}
	if m := reDropFollower.FindStringSubmatch(q); m != nil {
		for i, f := range s.frontends {
			if f.Host != m[1] {
				continue
			}
			if f.Role == "LEADER" {
				return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "can not drop current leader node")
			}
			s.frontends = append(s.frontends[:i], s.frontends[i+1:]...)
			s.dropped = append(s.dropped, m[1])
			return &sqltypes.Result{}, true, nil
		}
		return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "frontend does not exist: %s", m[1])
	}
	return nil, false, nil
}

// backendAlive is a BE's Alive column and ErrMsg.
func (s *Server) backendAlive(b Backend) (bool, string) {
	if b.ClusterID != 0 && b.ClusterID != ClusterID {
		return false, fmt.Sprintf("invalid cluster id %d, expected %d", b.ClusterID, ClusterID)
	}
	if !b.Alive {
		// A BE whose heartbeat fails shows the exception's message
		// (fe-core system/HeartbeatMgr: BackendHbResponse with
		// e.getMessage()); the fake's BEs have no socket, so a typical one.
		return false, "java.net.ConnectException: Connection refused"
	}
	return true, ""
}

// noBackendAlive is the error of a statement that needs a live BE while
// none is: information_schema tables such as be_configs and
// partitions_meta are scanned by a BE, and UPDATE information_schema.
// be_configs runs on one too (sql/UpdatePlanner's SchemaTableSink). The
// scheduler finds no worker and reports fe-core FeConstants
// .BACKEND_NODE_NOT_FOUND_ERROR followed by the BEs not alive
// (qe/scheduler/DefaultWorkerProvider.reportWorkerNotFoundException,
// backendsToString, formatNodeInfo); no ErrorCode is set, so the packet
// carries mysql/MysqlErrPacket's default 1064 and HY000. nil while a BE is
// alive.
func (s *Server) noBackendAlive() error {
	var down strings.Builder
	for _, b := range s.backends {
		if ok, _ := s.backendAlive(b); ok {
			return nil
		}
		fmt.Fprintf(&down, "[%s alive: false inBlacklist: false] ", b.Host)
	}
	return sqlerror.NewSQLErrorf(1064, "HY000", "Backend node not found. Check if any backend node is down.backend: %s", down.String())
}

// SetLeader makes host the leader (an election): the former leader becomes
// a follower.
func (s *Server) SetLeader(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.frontends {
		switch {
		case s.frontends[i].Host == host:
			s.frontends[i].Role = "LEADER"
		case s.frontends[i].Role == "LEADER":
			s.frontends[i].Role = "FOLLOWER"
		}
	}
}

// SetNodeVersion sets the Version column of the FE or BE listed as host,
// and whether it is alive (a node that restarted on a new version).
func (s *Server) SetNodeVersion(host, version string, alive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.frontends {
		if s.frontends[i].Host == host {
			s.frontends[i].Version, s.frontends[i].Alive = version, alive
		}
	}
	for i := range s.backends {
		if s.backends[i].Host == host {
			s.backends[i].Version, s.backends[i].Alive = version, alive
		}
	}
}

// SetBackendAlive marks a listed BE alive or not (it stopped, or answers
// heartbeats again).
func (s *Server) SetBackendAlive(host string, alive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.backends {
		if s.backends[i].Host == host {
			s.backends[i].Alive = alive
		}
	}
}

// SelfDroppedBackends are the hosts of the BEs the FE dropped itself once
// decommissioned and empty, in order.
func (s *Server) SelfDroppedBackends() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.selfDropped...)
}

// SetKeepDecommissionedBackends is fe.conf drop_backend_after_decommission
// = false: a decommissioned BE stays listed until DROP BACKEND.
func (s *Server) SetKeepDecommissionedBackends(keep bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keepDecommissioned = keep
}

// ImagesCreated counts ALTER SYSTEM CREATE IMAGE statements (requests).
func (s *Server) ImagesCreated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.images
}

// WritePendingImage is the checkpoint after ALTER SYSTEM CREATE IMAGE: it
// writes one image if any was asked for and reports whether it did.
func (s *Server) WritePendingImage() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.imagePending {
		return false
	}
	s.imagePending = false
	s.imagesWritten++
	// fe-core names an image by the journal id it holds
	// (persist/Storage.getImageFile: image.<id>, format v2 in image/v2/).
	// Journal ids only grow, also across restarts: the next image is named
	// past every image already in the meta directories.
	id := s.newestImage + 1000
	for _, dir := range s.imageMetaDirs {
		if newest := newestImageIn(filepath.Join(dir, "image", "v2")); newest >= id {
			id = newest + 1000
		}
	}
	s.newestImage = id
	for _, dir := range s.imageMetaDirs {
		d := filepath.Join(dir, "image", "v2")
		if err := os.MkdirAll(d, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("image.%d", id)), []byte("fake image"), 0o644)
		}
	}
	return true
}

// NewestImage is the journal id of the newest image WritePendingImage
// wrote since the server started (0: none).
func (s *Server) NewestImage() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newestImage
}

// newestImageIn is the highest id of the image.<id> files in dir (0: none).
func newestImageIn(dir string) int64 {
	entries, _ := os.ReadDir(dir)
	var newest int64
	for _, e := range entries {
		if id, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), "image."), 10, 64); err == nil && strings.HasPrefix(e.Name(), "image.") && id > newest {
			newest = id
		}
	}
	return newest
}

// SetImageMetaDirs makes WritePendingImage put each image it writes into
// these FE meta directories, where the agents look for them.
func (s *Server) SetImageMetaDirs(dirs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imageMetaDirs = append([]string(nil), dirs...)
}

// SetUnhealthyTablets sets UnhealthyTabletNum of SHOW PROC '/statistic'.
func (s *Server) SetUnhealthyTablets(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unhealthyTablets = n
}

var reShowStatistic = regexp.MustCompile(`(?i)^show\s+proc\s+'/statistic'$`)

// showStatistic answers SHOW PROC '/statistic' as fe-core
// common/proc/StatisticProcDir does: its columns in its order, a row per
// database sorted by name, then the Total row (DbId "Total", DbName the
// number of databases). The unhealthy tablets count in the first database.
func (s *Server) showStatistic() *sqltypes.Result {
	r := &sqltypes.Result{Fields: fields("DbId", "DbName", "TableNum", "PartitionNum", "IndexNum", "TabletNum",
		"ReplicaNum", "UnhealthyTabletNum", "InconsistentTabletNum", "CloningTabletNum", "ErrorStateTabletNum")}
	// Every database of the local metastore but the one of id 0, which
	// 4.1 no longer has: information_schema is SystemId
	// .INFORMATION_SCHEMA_DB_ID = 1, so it and sys are listed too (fe-core
	// common/proc/StatisticProcDir, server/LocalMetastore).
	dbs := sortedSet(s.grantState().databases)
	for _, t := range s.tables {
		if !slices.Contains(dbs, t.DB) {
			dbs = append(dbs, t.DB)
		}
	}
	sort.Strings(dbs)
	for i, db := range dbs {
		unhealthy := int64(0)
		if i == 0 {
			unhealthy = s.unhealthyTablets
		}
		r.Rows = append(r.Rows, row(strconv.Itoa(10000+i), db, "0", "0", "0", "0", "0", strconv.FormatInt(unhealthy, 10), "0", "0", "0"))
	}
	r.Rows = append(r.Rows, row("Total", strconv.Itoa(len(dbs)), "0", "0", "0", "0", "0", strconv.FormatInt(s.unhealthyTablets, 10), "0", "0", "0"))
	return r
}

// ImagesWritten counts the images the checkpoint wrote.
func (s *Server) ImagesWritten() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.imagesWritten
}

// DroppedFollowers are the hosts ALTER SYSTEM DROP FOLLOWER removed, in order.
func (s *Server) DroppedFollowers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dropped...)
}

// nullable is how StarRocks prints an FE's unknown version: the text NULL
// (fe-core common/proc/FrontendsProcNode).
func nullable(v string) string {
	if v == "" {
		return "NULL"
	}
	return v
}
