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
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// The leader's agent of a shared-data instance exports each live CN's
// block cache lookups, read from the CN's /api/datacache/stat, by CN; a CN
// that does not answer has no series; an agent that is not the leader
// exports none (its series end when it loses the leadership).
func TestComputeNodeCacheLookupsAreExported(t *testing.T) {
	ctx := ctxT(t)
	e, secrets := newSharedDataEnv(t, rootPass)

	// The CNs' HTTP port: each answers with counts of its own, CN 2 with
	// an error as a CN whose cache is not initialised does.
	var mu sync.Mutex
	var asked []string
	cns := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		mu.Lock()
		asked = append(asked, r.Method+" "+host+" "+r.URL.Path)
		mu.Unlock()
		switch host {
		case cnHost(0):
			fmt.Fprint(w, `{"status":"NORMAL","hit_count":90,"miss_count":10}`)
		case cnHost(1):
			fmt.Fprint(w, `{"block_cache_hit_count":3,"block_cache_miss_count":1,"page_cache_hit_count":1000}`)
		default:
			fmt.Fprint(w, `{"error":"Cache system is not ready"}`)
		}
	}))
	defer cns.Close()
	opts := e.options(fe0)
	opts.Secrets, opts.StatefulSets = secrets, &scriptedReplicas{n: 3}
	opts.Metrics = status.NewMetrics()
	opts.ComputeCacheReadEvery = time.Nanosecond // every pass
	opts.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, port, _ := net.SplitHostPort(addr); port == fmt.Sprint(agentconfig.ComputeHTTPPort) {
			var d net.Dialer
			return d.DialContext(ctx, network, cns.Listener.Addr().String())
		}
		return e.dial(ctx, network, addr)
	}
	a := agent.New(opts)
	a.LoadCertificates()

	a.Pass(ctx) // adds the three CNs
	for i := range 3 {
		e.fe.SetComputeNode(cnHost(i), true, 0, "4.1.7")
	}
	a.Pass(ctx)
	require.Equal(t, map[string]string{
		"hits " + cnHost(0): "90", "misses " + cnHost(0): "10",
		"hits " + cnHost(1): "3", "misses " + cnHost(1): "1",
	}, cacheSeries(t, opts.Metrics))
	mu.Lock()
	require.Contains(t, asked, "GET "+cnHost(0)+" /api/datacache/stat")
	mu.Unlock()

	// CN 1 has exited: not asked, no series.
	e.fe.SetComputeNode(cnHost(1), false, 0, "4.1.7")
	a.Pass(ctx)
	require.Equal(t, map[string]string{"hits " + cnHost(0): "90", "misses " + cnHost(0): "10"}, cacheSeries(t, opts.Metrics))

	// Another FE leads now: this agent exports no CN's lookups.
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "FOLLOWER", Alive: true},
		fakefe.Frontend{Host: fe1, EditLogPort: 9010, Role: "LEADER", Alive: true})
	a.Pass(ctx)
	require.Empty(t, cacheSeries(t, opts.Metrics))

	// By default a CN is asked once a minute, not on every pass.
	e.fe.SetFrontends(fakefe.Frontend{Host: fe0, EditLogPort: 9010, Role: "LEADER", Alive: true})
	opts.ComputeCacheReadEvery, opts.Metrics = 0, status.NewMetrics()
	b := agent.New(opts)
	b.LoadCertificates()
	askedCN0 := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, q := range asked {
			if strings.Contains(q, " "+cnHost(0)+" ") {
				n++
			}
		}
		return n
	}
	before := askedCN0()
	b.Pass(ctx)
	b.Pass(ctx)
	require.Equal(t, before+1, askedCN0(), "CN 0 asked on every pass")
	require.Equal(t, "90", cacheSeries(t, opts.Metrics)["hits "+cnHost(0)])
}

// cacheSeries are the agent's CN cache series: "hits <host>" -> value.
func cacheSeries(t *testing.T, m *status.Metrics) map[string]string {
	t.Helper()
	families, err := m.Registry.Gather()
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range families {
		kind := ""
		switch f.GetName() {
		case status.MetricComputeCacheHits:
			kind = "hits"
		case status.MetricComputeCacheMisses:
			kind = "misses"
		default:
			continue
		}
		for _, s := range f.GetMetric() {
			host := ""
			for _, l := range s.GetLabel() {
				if l.GetName() == "compute_node" {
					host = l.GetValue()
				}
			}
			out[kind+" "+host] = strings.TrimSuffix(fmt.Sprint(s.GetCounter().GetValue()), ".0")
		}
	}
	return out
}
