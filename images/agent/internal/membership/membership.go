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

// Package membership keeps the StarRocks cluster's FE followers and BEs equal
// to the desired lists: it reads SHOW FRONTENDS/BACKENDS by column name (the
// column order differs between StarRocks versions), decides in a pure
// function, and runs the ALTER SYSTEM statements.
package membership

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// Frontend is a row of SHOW FRONTENDS.
type Frontend struct {
	Host        string
	EditLogPort int
	Leader      bool
	Alive       bool
	// Version is the Version column ("4.1.7-8f0ab1c"; StarRocks/starrocks
	// fe-core common/proc/FrontendsProcNode.java TITLE_NAMES).
	Version string
}

// Backend is a row of SHOW BACKENDS.
type Backend struct {
	Host           string
	HeartbeatPort  int
	Alive          bool
	Decommissioned bool
	TabletNum      int64
	// Version is the Version column (BackendsProcDir.java TITLE_NAMES).
	Version string
}

// Querier is what the package needs from a pool.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ShowFrontends runs SHOW FRONTENDS. The leader is the row with Role=LEADER
// (3.x) or IsMaster=true (older versions).
func ShowFrontends(ctx context.Context, q Querier) ([]Frontend, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW FRONTENDS")
	if err != nil {
		return nil, fmt.Errorf("show frontends: %w", err)
	}
	out := make([]Frontend, 0, len(rows))
	for _, r := range rows {
		host := first(r, "IP", "Host")
		if host == "" {
			return nil, fmt.Errorf("show frontends: no IP/Host column in %v", slices.Sorted(maps.Keys(r)))
		}
		port, _ := strconv.Atoi(r["EditLogPort"])
		out = append(out, Frontend{
			Host:        normHost(host),
			EditLogPort: port,
			Leader:      strings.EqualFold(r["Role"], "LEADER") || isTrue(r["IsMaster"]),
			Alive:       isTrue(r["Alive"]),
			Version:     version(r["Version"]),
		})
	}
	return out, nil
}

// ShowBackends runs SHOW BACKENDS.
func ShowBackends(ctx context.Context, q Querier) ([]Backend, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW BACKENDS")
	if err != nil {
		return nil, fmt.Errorf("show backends: %w", err)
	}
	out := make([]Backend, 0, len(rows))
	for _, r := range rows {
		host := first(r, "IP", "Host")
		if host == "" {
			return nil, fmt.Errorf("show backends: no IP/Host column in %v", slices.Sorted(maps.Keys(r)))
		}
		port, _ := strconv.Atoi(r["HeartbeatPort"])
		tablets, err := strconv.ParseInt(strings.TrimSpace(r["TabletNum"]), 10, 64)
		if err != nil {
			// Unknown tablet count must never look like "empty".
			return nil, fmt.Errorf("show backends: TabletNum of %s is %q", host, r["TabletNum"])
		}
		out = append(out, Backend{
			Host:           normHost(host),
			HeartbeatPort:  port,
			Alive:          isTrue(r["Alive"]),
			Decommissioned: isTrue(r["SystemDecommissioned"]),
			TabletNum:      tablets,
			Version:        version(r["Version"]),
		})
	}
	return out, nil
}

// Leader returns the leader row, if any.
func Leader(fes []Frontend) (Frontend, bool) {
	for _, f := range fes {
		if f.Leader {
			return f, true
		}
	}
	return Frontend{}, false
}

// Desired is the target membership.
type Desired struct {
	Frontends     []string
	EditLogPort   int
	Backends      []string
	HeartbeatPort int
}

// Plan is what to change, as the statements' "host:port" arguments.
type Plan struct {
	AddFollower        string
	AddBackends        []string
	Decommission       []string
	CancelDecommission []string
	DropBackends       []string
	// Draining are unwanted BEs still holding tablets.
	Draining []Backend
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool {
	return p.AddFollower == "" && len(p.AddBackends)+len(p.Decommission)+len(p.CancelDecommission)+len(p.DropBackends) == 0
}

// Decide compares desired with the current membership.
//
// Followers are added one at a time and only while every listed FE is alive:
// a follower that is listed but not yet running counts towards the quorum of
// the edit log, so adding several before they start could leave the leader
// without a majority.
//
// A BE that is no longer desired is decommissioned (StarRocks migrates its
// tablets away) and dropped only once it holds no tablet; with tablets it is
// reported as draining and left alone. A desired BE found decommissioned
// (scaled in, then out again) gets its decommission cancelled.
func Decide(d Desired, fes []Frontend, bes []Backend) Plan {
	var p Plan
	listed := map[string]bool{}
	allAlive := true
	for _, f := range fes {
		listed[f.Host] = true
		allAlive = allAlive && f.Alive
	}
	if allAlive {
		for _, h := range d.Frontends {
			if !listed[normHost(h)] {
				p.AddFollower = hostPort(h, d.EditLogPort)
				break
			}
		}
	}

	want := map[string]bool{}
	for _, h := range d.Backends {
		want[normHost(h)] = true
	}
	have := map[string]bool{}
	for _, b := range bes {
		have[b.Host] = true
		hp := hostPort(b.Host, b.HeartbeatPort)
		switch {
		case want[b.Host] && b.Decommissioned:
			p.CancelDecommission = append(p.CancelDecommission, hp)
		case want[b.Host]:
		case !b.Decommissioned:
			p.Decommission = append(p.Decommission, hp)
			if b.TabletNum > 0 {
				p.Draining = append(p.Draining, b)
			}
		case b.TabletNum == 0:
			p.DropBackends = append(p.DropBackends, hp)
		default:
			p.Draining = append(p.Draining, b)
		}
	}
	for _, h := range d.Backends {
		if !have[normHost(h)] {
			p.AddBackends = append(p.AddBackends, hostPort(h, d.HeartbeatPort))
		}
	}
	sort.Strings(p.Decommission)
	sort.Strings(p.DropBackends)
	return p
}

// Apply runs the plan's statements; it stops at the first failure.
func Apply(ctx context.Context, q Querier, p Plan) ([]string, error) {
	var stmts []string
	if p.AddFollower != "" {
		stmts = append(stmts, fmt.Sprintf("ALTER SYSTEM ADD FOLLOWER %q", p.AddFollower))
	}
	for _, hp := range p.AddBackends {
		stmts = append(stmts, fmt.Sprintf("ALTER SYSTEM ADD BACKEND %q", hp))
	}
	for _, hp := range p.CancelDecommission {
		stmts = append(stmts, fmt.Sprintf("CANCEL DECOMMISSION BACKEND %q", hp))
	}
	for _, hp := range p.Decommission {
		stmts = append(stmts, fmt.Sprintf("ALTER SYSTEM DECOMMISSION BACKEND %q", hp))
	}
	for _, hp := range p.DropBackends {
		stmts = append(stmts, fmt.Sprintf("ALTER SYSTEM DROP BACKEND %q", hp))
	}
	var done []string
	for _, s := range stmts {
		if _, err := q.ExecContext(ctx, s); err != nil {
			if strings.HasPrefix(s, "ALTER SYSTEM DROP BACKEND") && alreadyDropped(err) {
				continue
			}
			return done, &StatementError{Statement: s, Err: err}
		}
		done = append(done, s)
	}
	return done, nil
}

// alreadyDropped: DROP BACKEND found no such BE. The FE drops an empty
// decommissioned BE itself (fe-core alter/SystemHandler.runAlterJobV2 with
// drop_backend_after_decommission, its default), which can happen between
// SHOW BACKENDS and the agent's own DROP; system/SystemInfoService.
// dropBackends then answers "backend does not exists[host:port]". The BE
// is gone either way, which is what the DROP was for.
func alreadyDropped(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "backend does not exist")
}

// StatementError is a membership statement StarRocks refused.
type StatementError struct {
	Statement string
	Err       error
}

func (e *StatementError) Error() string { return e.Statement + ": " + e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// Decommission reports whether the refused statement was a decommission.
func (e *StatementError) Decommission() bool {
	return strings.HasPrefix(e.Statement, "ALTER SYSTEM DECOMMISSION BACKEND")
}

func hostPort(host string, port int) string {
	return net.JoinHostPort(normHost(host), strconv.Itoa(port))
}

// normHost makes "a.b." and "A.b" the same host.
func normHost(h string) string { return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ".")) }

// SameHost compares host names as membership does.
func SameHost(a, b string) bool { return normHost(a) == normHost(b) }

// version is a Version cell; StarRocks writes NULL for an FE that has not
// reported one yet.
func version(s string) string {
	if s = strings.TrimSpace(s); strings.EqualFold(s, "NULL") {
		return ""
	}
	return s
}

func isTrue(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

func first(r map[string]string, names ...string) string {
	for _, n := range names {
		if v := r[n]; v != "" {
			return v
		}
	}
	return ""
}
