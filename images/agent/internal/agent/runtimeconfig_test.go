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

package agent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
)

// BE configuration is read from information_schema.be_configs, which a BE
// scans: without a live BE StarRocks refuses the query ("Backend node not
// found", 1064). The rest of the pass must not wait for a BE: a new
// instance has none until its first joins, a Standalone's restarts.
func TestBackendConfigWaitsForALiveBackend(t *testing.T) {
	for _, tc := range []struct {
		name string
		// listed are the BEs SHOW BACKENDS lists, none of them alive.
		listed []string
	}{
		{name: "no BE has joined yet"},
		{name: "the only BE is down", listed: []string{be0}},
		{name: "every BE is down", listed: []string{be0, be1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			e := newEnv(t, envOptions{serverPassword: rootPass})
			e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
			for _, h := range tc.listed {
				e.fe.AddBackendRow(fakefe.Backend{Host: h, HeartbeatPort: 9050, Alive: false})
			}
			e.fe.SetFEConfig("catalog_trash_expire_second", "86400", true)
			e.fe.SetBEConfigDefault("streaming_load_max_mb", "102400")
			e.cfg.Backends = tc.listed
			e.cfg.FrontendConfig = map[string]string{"catalog_trash_expire_second": "3600"}
			e.cfg.BackendConfig = map[string]string{"streaming_load_max_mb": "20480"}
			e.writeConfig(t)
			a, _, _ := e.agentWithLogs(t, nil)

			a.Pass(ctx)
			st := a.Status()
			require.True(t, st.LastApply.Succeeded, "the pass fails for want of a BE: %s", st.LastApply.Error)
			require.Equal(t, []string{"fe.catalog_trash_expire_second=3600"}, st.LastApply.Applied)
			require.Equal(t, []string{"be.streaming_load_max_mb"}, st.LastApply.Pending)
			require.Contains(t, st.LastApply.PendingMessage, "no BE is alive")
			require.True(t, st.Accounts.Ready)

			// A BE comes up: its configuration is applied on the next pass.
			if len(tc.listed) == 0 {
				e.fe.AddBackendRow(fakefe.Backend{Host: be0, HeartbeatPort: 9050, Alive: true})
				e.cfg.Backends = []string{be0}
				e.writeConfig(t)
			} else {
				e.fe.SetBackendAlive(tc.listed[0], true)
			}
			a.Pass(ctx)
			st = a.Status()
			require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
			require.Equal(t, []string{"be.streaming_load_max_mb=20480"}, st.LastApply.Applied)
			require.Empty(t, st.LastApply.Pending)
			require.Empty(t, st.LastApply.PendingMessage)
		})
	}
}
