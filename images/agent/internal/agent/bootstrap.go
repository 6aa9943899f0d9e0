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
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/membership"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// The bootstrap guard. The FE start wrapper (images/starrocks-fe/fe-start.sh)
// starts an FE that has meta at once; an FE without meta waits until this
// agent writes one of two files into the run directory they share:
//
//   - agentconfig.BootstrapFileName: start a new cluster. Written only for
//     the first FE of an instance that has never bootstrapped
//     (agentconfig.Config.Bootstrapped false).
//   - agentconfig.HelperFileName: join through the leader written in it.
//
// On a bootstrapped instance an FE without meta has lost its volume. It
// must never start a cluster of its own: a second, empty cluster behind the
// same client Service (StarRocks' own entrypoint probes for a leader first
// for the same reason: StarRocks/starrocks
// docker/dockerfiles/fe/fe_entrypoint.sh, probe_leader_for_pod0). The agent
// finds the leader through the client Service over TLS, drops the stale
// entry of its FE (a node whose meta is gone cannot come back under its old
// BDB JE identity; StarRocks' scale-in docs re-add an FE with ALTER SYSTEM
// DROP FOLLOWER and ADD FOLLOWER "host:edit_log_port",
// https://docs.starrocks.io/docs/administration/management/Scale_up_down/),
// adds it again and writes the helper file; with no leader it waits and
// says so in its status (Join).

// metaEmpty says whether the FE has no meta: the wrapper's own test
// (image/VERSION, which the FE writes with its first image).
func (a *Agent) metaEmpty() bool {
	if a.opts.MetaDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(a.opts.MetaDir, "image", "VERSION"))
	return errors.Is(err, os.ErrNotExist)
}

func (a *Agent) runFile(name string) string {
	return filepath.Join(filepath.Dir(a.opts.HelperFile), name)
}

// guardBootstrap runs first in every pass. It writes the bootstrap file for
// the first FE of a new instance, removes it once the instance has
// bootstrapped, answers the wrapper of an FE whose meta has a restore
// marker (bootstrapped since: the restored file; else the bootstrap file,
// restore again), and reports whether this FE must rejoin (meta empty on a
// bootstrapped instance, and no helper file written for it yet: once
// written, the FE is joining and must not be dropped again).
func (a *Agent) guardBootstrap(cfg *agentconfig.Config) (bool, error) {
	if a.opts.HelperFile == "" || a.opts.MetaDir == "" {
		a.setJoin("", "")
		return false, nil
	}
	bootstrap := a.runFile(agentconfig.BootstrapFileName)
	if cfg.Bootstrapped {
		if err := os.Remove(bootstrap); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("remove %s: %w", bootstrap, err)
		}
	}
	first := a.isFirstFE(cfg)
	if a.restoreStarted() {
		// The wrapper waits on a restore it started for the verdict only
		// the instance's record gives (fe-start.sh): bootstrapped since,
		// or restore again.
		if cfg.Bootstrapped {
			if _, err := writeOnce(a.runFile(agentconfig.RestoredFileName), "restored\n"); err != nil {
				return false, err
			}
		} else if first {
			if err := a.writeBootstrap(bootstrap); err != nil {
				return false, err
			}
		}
	}
	if !a.metaEmpty() {
		a.setJoin("", "")
		return false, nil
	}
	if _, err := os.Stat(a.opts.HelperFile); err == nil {
		return false, nil
	}
	if cfg.Bootstrapped {
		return true, nil
	}
	if first {
		if err := a.writeBootstrap(bootstrap); err != nil {
			return false, err
		}
	}
	return false, nil
}

// isFirstFE says whether this is the instance's first FE, the one that
// starts a new cluster or restores a cluster snapshot.
func (a *Agent) isFirstFE(cfg *agentconfig.Config) bool {
	return len(cfg.Frontends) > 0 && membership.SameHost(cfg.Frontends[0], a.opts.SelfHost)
}

// restoreStarted says whether the FE's meta has the marker the start
// wrapper leaves before a restore from a cluster snapshot
// (agentconfig.RestoreMarkerName): the wrapper keeps it until the agent
// says the instance has bootstrapped since.
func (a *Agent) restoreStarted() bool {
	if a.opts.MetaDir == "" || a.opts.HelperFile == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(a.opts.MetaDir, agentconfig.RestoreMarkerName))
	return err == nil
}

func (a *Agent) writeBootstrap(path string) error {
	written, err := writeOnce(path, "bootstrap\n")
	if written {
		a.log.Info("first FE of a new instance: it starts the cluster", "file", path)
	}
	return err
}

// writeOnce writes a file of the run directory unless it exists, and says
// whether it wrote it.
func writeOnce(path, content string) (bool, error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// rejoin adds this FE, whose meta is empty, to the existing cluster again.
func (a *Agent) rejoin(ctx context.Context, cfg *agentconfig.Config, fes []membership.Frontend, leader membership.Frontend, hasLeader bool) error {
	if !hasLeader || membership.SameHost(leader.Host, a.opts.SelfHost) {
		a.setJoin(agentconfig.JoinReasonWaitingForLeader, "StarRocks reports no FE leader; the FE waits for one instead of starting an empty cluster")
		return errors.New("this FE has no meta and the instance has bootstrapped: waiting for an FE leader to rejoin")
	}
	self := net.JoinHostPort(a.opts.SelfHost, strconv.Itoa(cfg.EditLogPort))
	listed := false
	for _, f := range fes {
		listed = listed || membership.SameHost(f.Host, a.opts.SelfHost)
	}
	if !listed {
		// A new FE (the leader's agent adds followers one at a time, so
		// that no two unstarted ones ever count towards the quorum):
		// once listed, it is dropped and added again like a stale one,
		// which for a fresh entry changes nothing.
		a.setJoin(agentconfig.JoinReasonRejoining, fmt.Sprintf("the FE waits for the agent of leader %s to add it", leader.Host))
		return errors.New("this FE has no meta: waiting for the leader's agent to add it")
	}
	for _, f := range fes {
		switch {
		case membership.SameHost(f.Host, a.opts.SelfHost):
		case !f.Alive:
			// Dropping and adding change the electable group: only with
			// every other member alive is the majority never at risk.
			a.setJoin(agentconfig.JoinReasonRejoining, fmt.Sprintf("the FE rejoins leader %s once FE %s is alive again", leader.Host, f.Host))
			return fmt.Errorf("this FE has no meta: it rejoins once FE %s is alive", f.Host)
		}
	}
	a.setJoin(agentconfig.JoinReasonRejoining, fmt.Sprintf("the FE is added to the cluster of leader %s again and starts with it as its helper", leader.Host))
	err := a.service.Do(ctx, "rejoin", func(ctx context.Context, db *sql.DB) error {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("ALTER SYSTEM DROP FOLLOWER %q", self)); err != nil {
			return fmt.Errorf("drop the stale entry %s: %w", self, err)
		}
		a.log.Info("membership changed", "statement", "ALTER SYSTEM DROP FOLLOWER", "fe", self, "why", "its meta is empty")
		if _, err := db.ExecContext(ctx, fmt.Sprintf("ALTER SYSTEM ADD FOLLOWER %q", self)); err != nil {
			return fmt.Errorf("add %s: %w", self, err)
		}
		a.log.Info("membership changed", "statement", "ALTER SYSTEM ADD FOLLOWER", "fe", self, "why", "its meta is empty")
		return nil
	})
	if err != nil {
		return err
	}
	return a.writeHelper(net.JoinHostPort(leader.Host, strconv.Itoa(leader.EditLogPort)))
}

func (a *Agent) setJoin(reason, message string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if reason == "" {
		a.join = nil
		return
	}
	a.join = &agentconfig.JoinStatus{Reason: reason, Message: message}
}
