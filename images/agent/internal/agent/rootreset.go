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
	"os"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/accounts"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/membership"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Root's password on the first FE of an instance restored from a cluster
// snapshot. The snapshot brings the source's accounts, and only root may
// change root's password; when root accepts none of the passwords the agent
// has (the source's is in no Secret it can read), the agent asks the FE
// start wrapper (images/starrocks-fe/fe-start.sh) to restore again with
// enable_auth_check = false (StarRocks' way for a lost root password:
// docs.starrocks.io/docs/administration/user_privs/authentication/
// native_authentication, "Reset lost root password"), gives root and the
// team's admin the new instance's passwords, and tells the wrapper to start
// the FE from its meta with authentication on. Until then no agent reports
// the accounts ready (refuseAnyPassword), so the client ports stay closed
// to everyone but the instance's own pods.

// askRootReset asks for the reset when err says root refused every password
// on the first FE of a restore that the instance has not yet bootstrapped
// since, and says so in the error. Not while the Secret the team named in
// rootPasswordSecretRef is unreadable (sourceUnread): the team said where
// the password is, and a Secret made just after the instance, or a Role
// not in effect yet, would otherwise cost the FE two restarts.
func (a *Agent) askRootReset(cfg *agentconfig.Config, sourceUnread bool, err error) error {
	if st, _ := accounts.Status(err); st.Reason != accounts.ReasonRootPasswordRefused || sourceUnread ||
		cfg.Bootstrapped || !a.isFirstFE(cfg) || !a.restoreStarted() {
		return err
	}
	written, werr := writeOnce(a.runFile(agentconfig.RootResetFileName), "reset\n")
	if werr != nil {
		return errors.Join(err, werr)
	}
	if written {
		a.log.Info("root of the restored FE accepts no password the agent has: the FE is restored again with authentication off to reset it")
	}
	return fmt.Errorf("%w; the FE is restored again with authentication off (enable_auth_check = false) for the agent to give root its password", err)
}

// resetRoot runs instead of the accounts' step while the reset is asked
// for and the restore's marker is in meta, and reports whether it ran. It
// never lets the accounts be reported ready: with authentication off every
// login passes, the agent account's check too.
func (a *Agent) resetRoot(ctx context.Context, cfg *agentconfig.Config, s accounts.Secrets) (bool, error) {
	if a.opts.HelperFile == "" {
		return false, nil
	}
	req, done := a.runFile(agentconfig.RootResetFileName), a.runFile(agentconfig.RootResetDoneFileName)
	if _, err := os.Stat(req); err != nil {
		return false, nil
	}
	if !a.restoreStarted() {
		// The wrapper removes the marker when it starts the FE from its
		// meta with authentication on: the reset is over.
		for _, f := range []string{done, req} {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return true, fmt.Errorf("remove %s: %w", f, err)
			}
		}
		return false, nil
	}
	waiting := func(why string) error {
		return &conn.Error{Kind: conn.KindAuth, Op: "reset root's password of the restored FE", Err: errors.New(why)}
	}
	if _, err := os.Stat(done); err == nil {
		return true, waiting("root has the agent's password: waiting for the FE to start from its meta with authentication on")
	}
	login := a.loginAt(cfg, a.self.Addr())
	off, err := accounts.AcceptsAnyPassword(ctx, login)
	if err != nil {
		return true, err
	}
	if !off {
		return true, waiting("root accepts no password the agent has (the restore source's root password is not available): waiting for the FE to be restored again with authentication off (enable_auth_check = false)")
	}
	root, err := login(agentconfig.RootUser, s.RootPassword)
	if err != nil {
		return true, err
	}
	defer root.Close()
	// StarRocks drops the source's FEs when it finishes the restore
	// (lake/snapshot RestoreClusterSnapshotMgr.finishRestoring, after the
	// query port opens); the wrapper removes the restore's marker on the
	// word of the done file, so that must come after.
	var fes []membership.Frontend
	if err := root.Do(ctx, "read membership", func(ctx context.Context, db *sql.DB) error {
		var err error
		fes, err = membership.ShowFrontends(ctx, db)
		return err
	}); err != nil {
		return true, err
	}
	for _, f := range fes {
		if !membership.SameHost(f.Host, a.opts.SelfHost) {
			return true, waiting(fmt.Sprintf("StarRocks has not finished the restore yet (the source's FE %s is still listed)", f.Host))
		}
	}
	if err := accounts.TakeRestoredRootOver(ctx, root, s); err != nil {
		return true, err
	}
	if _, err := writeOnce(done, "reset\n"); err != nil {
		return true, err
	}
	a.log.Info("root and the team's admin of the restored FE have the new instance's passwords: the FE starts from its meta with authentication on", "adminUser", s.AdminUser)
	return true, waiting("root has the agent's password: waiting for the FE to start from its meta with authentication on")
}
