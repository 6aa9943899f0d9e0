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
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/certwatch"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
)

// TestCertificateErrorKeepsClientsServed: every FE's agent reads the same
// certificate Secret, so if a certificate load error made /readyz fail, every
// FE pod would leave the client Service at once while the FEs still serve
// clients. The error must show in the status (TLSReady through the hooks)
// and the metrics (alerts) instead, and /readyz must stay ready.
func TestCertificateErrorKeepsClientsServed(t *testing.T) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	pub := &recordingPublisher{}
	metrics := status.NewMetrics()
	opts := e.options(fe0)
	opts.Publisher, opts.Metrics = pub, metrics
	a := runAgent(t, opts)
	probes := httptest.NewServer(server.Handler(metrics.Registry, server.Checks{Live: a.Live, Ready: a.Ready}))
	t.Cleanup(probes.Close)
	require.Eventually(t, func() bool { return a.Status().TLS.Ready }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, http.StatusOK, get(t, probes.URL+"/readyz"))

	// The Secret gets a certificate of another CA: it does not verify
	// against ca.crt, so the agent cannot load it.
	stranger := testpki.MustCA(t, "someone-elses-ca").MustIssue(t, queryHost)
	e.secret.Update(stranger.SecretData(e.ca))
	require.Eventually(t, func() bool {
		st := pub.last().TLS
		return !st.Ready && st.Reason == certwatch.ReasonCertificateInvalid
	}, 10*time.Second, 10*time.Millisecond, "the load error is not reported in the published status")
	require.Contains(t, pub.last().TLS.Message, "does not verify")
	require.Equal(t, 0.0, metricValue(t, metrics, status.MetricCertificateReady, "", ""))

	require.Equal(t, http.StatusOK, get(t, probes.URL+"/readyz"), "a certificate error took the pod out of the Service")
	require.Equal(t, http.StatusOK, get(t, probes.URL+"/healthz"))
	// The FE still serves its clients over TLS with its own keystore.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.client(t, rootPass).Ping(ctx))
}

// TestStartsReadyWithABrokenCertificate: an agent that starts while the
// Secret holds a certificate it cannot load still becomes ready (after its
// first pass) and reports why.
func TestStartsReadyWithABrokenCertificate(t *testing.T) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	stranger := testpki.MustCA(t, "someone-elses-ca").MustIssue(t, queryHost)
	e.secret.Update(stranger.SecretData(e.ca))
	a := runAgent(t, e.options(fe0)) // fails the test unless Ready() turns nil
	st := a.Status().TLS
	require.False(t, st.Ready)
	require.Equal(t, certwatch.ReasonCertificateInvalid, st.Reason)
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test against a local server
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestNotReadyUntilTheFirstPassEnds: ready means a first pass ran, so its
// status is there to read; while the first pass still waits for the FE the
// agent is not ready. The first connection (the handshake that proves newly
// loaded certificates, before the first pass) goes through; the next ones,
// the pass's, wait for release.
func TestNotReadyUntilTheFirstPassEnds(t *testing.T) {
	e := newEnv(t, envOptions{serverPassword: rootPass})
	opts := e.options(fe0)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	dial := opts.DialFunc
	var dials atomic.Int32
	opts.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return dial(ctx, network, addr)
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return dial(ctx, network, addr)
	}
	a := agent.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent run: %v", err)
		}
	})

	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first pass never dialled the FE")
	}
	require.Error(t, a.Ready(), "ready while the first pass still runs")
	require.Empty(t, a.Status().UpdatedAt)

	close(release)
	require.Eventually(t, func() bool { return a.Ready() == nil }, 10*time.Second, 10*time.Millisecond, "not ready after the first pass")
	require.NotEmpty(t, a.Status().UpdatedAt, "ready without the first pass's status")
}
