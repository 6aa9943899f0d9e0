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

package shareddata

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// ComputeNode is a row of SHOW COMPUTE NODES (fe-core common/proc/
// ComputeNodeProcDir TITLE_NAMES: IP, HeartbeatPort, Alive,
// NumRunningQueries, Version, StatusCode, ...), read by column name.
type ComputeNode struct {
	Host           string
	HeartbeatPort  int
	Alive          bool
	RunningQueries int64
	Version        string
	// Status is column StatusCode (fe-core system/ComputeNode.Status:
	// CONNECTING, OK, SHUTDOWN, DISCONNECTED); "" when the FE has no such
	// column.
	Status string
}

// StatusShutdown is the StatusCode of a CN in its graceful exit.
const StatusShutdown = "SHUTDOWN"

// ShowComputeNodes runs SHOW COMPUTE NODES.
func ShowComputeNodes(ctx context.Context, q Querier) ([]ComputeNode, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW COMPUTE NODES")
	if err != nil {
		return nil, fmt.Errorf("show compute nodes: %w", err)
	}
	out := make([]ComputeNode, 0, len(rows))
	for _, r := range rows {
		host := r["IP"]
		if host == "" {
			return nil, fmt.Errorf("show compute nodes: a row without IP")
		}
		port, _ := strconv.Atoi(r["HeartbeatPort"])
		running, _ := strconv.ParseInt(strings.TrimSpace(r["NumRunningQueries"]), 10, 64)
		version := strings.TrimSpace(r["Version"])
		if strings.EqualFold(version, "NULL") {
			version = ""
		}
		out = append(out, ComputeNode{Host: normHost(host), HeartbeatPort: port, Alive: isTrue(r["Alive"]),
			RunningQueries: running, Version: version, Status: strings.ToUpper(strings.TrimSpace(r["StatusCode"]))})
	}
	return out, nil
}

// reHostFormat is a lower-case DNS name with one %d for the ordinal: the
// hosts go into ALTER SYSTEM statements between double quotes.
var reHostFormat = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*%d[a-z0-9.-]*[a-z0-9]$`)

// Validate checks what goes into the statements: the host format and the
// port, and Min <= Max.
func Validate(c agentconfig.ComputeNodes) error {
	switch {
	case len(c.HostFormat) > 253 || !reHostFormat.MatchString(c.HostFormat) || strings.Count(c.HostFormat, "%") != 1:
		return fmt.Errorf("computeNodes.hostFormat %q: must be a lower-case DNS name with one %%d (%s)", c.HostFormat, reHostFormat)
	case c.HeartbeatPort <= 0 || c.HeartbeatPort > 65535:
		return fmt.Errorf("computeNodes.heartbeatPort %d is not a TCP port", c.HeartbeatPort)
	case c.Min < 0 || c.Max < c.Min:
		return fmt.Errorf("computeNodes.min %d and max %d: want 0 <= min <= max", c.Min, c.Max)
	}
	return nil
}

// DesiredCount bounds the CN StatefulSet's spec.replicas by Min and Max:
// the tenant can write the field as well as the HorizontalPodAutoscaler.
func DesiredCount(replicas int32, c agentconfig.ComputeNodes) int32 {
	return max(c.Min, min(replicas, c.Max))
}

// DesiredHosts are the FQDNs of CN 0..n-1.
func DesiredHosts(c agentconfig.ComputeNodes, n int32) []string {
	out := make([]string, 0, n)
	for i := int32(0); i < n; i++ {
		out = append(out, normHost(strings.Replace(c.HostFormat, "%d", strconv.Itoa(int(i)), 1)))
	}
	return out
}

// CNPlan is what to change, as "host:heartbeatPort".
type CNPlan struct {
	Add  []string
	Drop []string
	// Leaving are unwanted CNs still alive, left until they have exited.
	Leaving []string
}

// Empty reports whether the plan sends nothing.
func (p CNPlan) Empty() bool { return len(p.Add)+len(p.Drop) == 0 }

// DecideComputeNodes adds every desired CN StarRocks does not list and
// drops a listed CN that is not desired only once its process is gone.
// StarRocks has no decommission for a CN (fe-grammar StarRocks.g4 has
// DECOMMISSION BACKEND only): a CN keeps no data, it holds a cache and
// runs queries. While alive it may run queries (NumRunningQueries), and
// dropping it would fail them. Alive turns false already when the CN
// starts its graceful exit (the pod's preStop, stop_cn.sh -g, after the
// StatefulSet was scaled in): its heartbeat answers SHUTDOWN, and fe-core
// system/ComputeNode.handleHbResponse sets Alive false and StatusCode
// SHUTDOWN at once, yet keeps the node out of the CoordinatorMonitor "where
// the node is still trying to complete" its queries. Dropping it then
// would remove its starlet worker under those queries (SystemInfoService
// .dropComputeNode: StarOSAgent.removeWorker). So a CN in SHUTDOWN is still
// leaving; it is dropped once its heartbeats go unanswered past
// heartbeat_retry_times (StatusCode DISCONNECTED: the process exited) or
// it never answered one (CONNECTING). A CN beyond the count that is still
// alive (its pod still runs, e.g. spec.replicas above Max) keeps serving.
func DecideComputeNodes(want []string, port int, cns []ComputeNode) CNPlan {
	var p CNPlan
	wanted := map[string]bool{}
	for _, h := range want {
		wanted[hostPort(h, port)] = true
	}
	listed := map[string]bool{}
	for _, cn := range cns {
		hp := hostPort(cn.Host, cn.HeartbeatPort)
		listed[hp] = true
		switch {
		case wanted[hp]:
		case cn.Alive || cn.Status == StatusShutdown:
			p.Leaving = append(p.Leaving, hp)
		default:
			p.Drop = append(p.Drop, hp)
		}
	}
	for _, h := range want {
		if hp := hostPort(h, port); !listed[hp] {
			p.Add = append(p.Add, hp)
		}
	}
	sort.Strings(p.Drop)
	sort.Strings(p.Leaving)
	return p
}

// ApplyComputeNodes runs the plan: ALTER SYSTEM ADD COMPUTE NODE and DROP
// COMPUTE NODE (StarRocks.g4 addComputeNodeClause, dropComputeNodeClause;
// fe-core system/SystemInfoService.addComputeNodes, dropComputeNode). It
// stops at the first refusal and returns the statements done.
func ApplyComputeNodes(ctx context.Context, q Querier, p CNPlan) ([]string, error) {
	var stmts []string
	for _, hp := range p.Add {
		stmts = append(stmts, fmt.Sprintf("ALTER SYSTEM ADD COMPUTE NODE %q", hp))
	}
	for _, hp := range p.Drop {
		stmts = append(stmts, fmt.Sprintf("ALTER SYSTEM DROP COMPUTE NODE %q", hp))
	}
	var done []string
	for _, s := range stmts {
		if _, err := q.ExecContext(ctx, s); err != nil {
			// Gone between SHOW and DROP (SystemInfoService.dropComputeNode:
			// "compute node does not exists[host:port]"): what the DROP
			// was for.
			if strings.Contains(s, "DROP COMPUTE NODE") && strings.Contains(strings.ToLower(err.Error()), "compute node does not exist") {
				continue
			}
			return done, fmt.Errorf("%s: %w", s, err)
		}
		done = append(done, s)
	}
	return done, nil
}

func hostPort(host string, port int) string {
	return net.JoinHostPort(normHost(host), strconv.Itoa(port))
}

// normHost makes "a.b." and "A.b" the same host.
func normHost(h string) string { return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ".")) }
