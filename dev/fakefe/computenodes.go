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
	"strconv"

	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// What a shared-data instance's agent needs of compute nodes that the
// tests' real FE cannot show (it runs no CN): a CN that is alive and runs
// queries, and one whose process has exited. Statements as fe-grammar
// StarRocks.g4 addComputeNodeClause and dropComputeNodeClause, answers as
// fe-core system/SystemInfoService.addComputeNodes and dropComputeNode.

// ComputeNode is one row of SHOW COMPUTE NODES.
type ComputeNode struct {
	ID             int64
	Host           string
	HeartbeatPort  int
	Alive          bool
	RunningQueries int64
	Version        string
}

var (
	reShowComputeNodes = regexp.MustCompile(`(?i)^show\s+compute\s+nodes$`)
	reAddComputeNode   = regexp.MustCompile(`(?i)^alter\s+system\s+add\s+compute\s+node\s+["']([^"':]+):(\d+)["']$`)
	reDropComputeNode  = regexp.MustCompile(`(?i)^alter\s+system\s+drop\s+compute\s+node\s+["']([^"':]+):(\d+)["']$`)
)

// execComputeNodes answers the statements of this file.
func (s *Server) execComputeNodes(q string) (*sqltypes.Result, bool, error) {
	if reShowComputeNodes.MatchString(q) {
		// StarRocks order (common/proc/ComputeNodeProcDir TITLE_NAMES):
		// ComputeNodeId, IP, HeartbeatPort, ..., Alive, ..., Version, ...,
		// NumRunningQueries, ...; the fake's own order on purpose.
		r := &sqltypes.Result{Fields: fields("Alive", "NumRunningQueries", "IP", "ComputeNodeId", "HeartbeatPort", "Version")}
		for _, cn := range s.computeNodes {
			r.Rows = append(r.Rows, row(boolStr(cn.Alive), strconv.FormatInt(cn.RunningQueries, 10), cn.Host,
				strconv.FormatInt(cn.ID, 10), strconv.Itoa(cn.HeartbeatPort), cn.Version))
		}
		return r, true, nil
	}
	if m := reAddComputeNode.FindStringSubmatch(q); m != nil {
		port, _ := strconv.Atoi(m[2])
		if s.computeNodeIndex(m[1], port) >= 0 {
			// SystemInfoService.checkSameNodeExist.
			return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "Compute node already exists with same host %s and port %d", m[1], port)
		}
		// Not alive until a heartbeat answers (a name that does not
		// resolve is accepted all the same: HeartbeatMgr then reports
		// UnknownHostException).
		s.computeNodes = append(s.computeNodes, ComputeNode{ID: s.nextBackID, Host: m[1], HeartbeatPort: port})
		s.nextBackID++
		return &sqltypes.Result{}, true, nil
	}
	if m := reDropComputeNode.FindStringSubmatch(q); m != nil {
		port, _ := strconv.Atoi(m[2])
		i := s.computeNodeIndex(m[1], port)
		if i < 0 {
			return nil, true, sqlerror.NewSQLErrorf(1064, "HY000", "compute node does not exists[%s:%d]", m[1], port)
		}
		s.computeNodes = append(s.computeNodes[:i], s.computeNodes[i+1:]...)
		return &sqltypes.Result{}, true, nil
	}
	return nil, false, nil
}

func (s *Server) computeNodeIndex(host string, port int) int {
	for i, cn := range s.computeNodes {
		if cn.Host == host && cn.HeartbeatPort == port {
			return i
		}
	}
	return -1
}

// SetComputeNode sets a listed CN's liveness, running queries and version
// (its process started, answers heartbeats, runs queries or has exited).
func (s *Server) SetComputeNode(host string, alive bool, runningQueries int64, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.computeNodes {
		if s.computeNodes[i].Host == host {
			s.computeNodes[i].Alive, s.computeNodes[i].RunningQueries, s.computeNodes[i].Version = alive, runningQueries, version
		}
	}
}

// ComputeNodes returns the CN list.
func (s *Server) ComputeNodes() []ComputeNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ComputeNode(nil), s.computeNodes...)
}
