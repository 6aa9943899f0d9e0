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

// Package status holds what the agent reports: Prometheus metrics and the
// agentconfig.Status JSON it publishes on its Pod for the hooks.
package status

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metric names; the module's alerts are written against exactly these.
const (
	MetricCertificateNotAfter = "d8_starrocks_agent_certificate_not_after_timestamp_seconds"
	MetricCertificateReady    = "d8_starrocks_agent_certificate_ready"
	MetricLastApplySuccess    = "d8_starrocks_agent_last_apply_success_timestamp_seconds"
	MetricApplyTotal          = "d8_starrocks_agent_apply_total"
	MetricErrorsTotal         = "d8_starrocks_agent_errors_total"
	MetricAccountsReady       = "d8_starrocks_agent_accounts_ready"
	// The block cache lookups of each CN of a shared-data instance, which
	// the FE leader's agent reads from the CNs' HTTP API.
	MetricComputeCacheHits   = "d8_starrocks_agent_compute_node_cache_hits_total"
	MetricComputeCacheMisses = "d8_starrocks_agent_compute_node_cache_misses_total"
)

// Metrics is the agent's registry. Not global, so tests can have several.
type Metrics struct {
	Registry *prometheus.Registry

	certNotAfter prometheus.Gauge
	certReady    prometheus.Gauge
	lastApply    prometheus.Gauge
	applyTotal   *prometheus.CounterVec
	errorsTotal  *prometheus.CounterVec
	accounts     prometheus.Gauge
	computeCache *computeCacheCollector
}

// NewMetrics registers every metric with its label values pre-created, so
// that a rate() over a counter that never moved still has a series.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		certNotAfter: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricCertificateNotAfter,
			Help: "NotAfter of the mounted instance certificate, Unix seconds."}),
		certReady: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricCertificateReady,
			Help: "1 when the mounted certificate verifies against the CA and the last TLS connection to the FE succeeded."}),
		lastApply: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricLastApplySuccess,
			Help: "Time of the last fully successful configuration pass, Unix seconds."}),
		applyTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricApplyTotal,
			Help: "Configuration passes by result."}, []string{"result"}),
		errorsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricErrorsTotal,
			Help: "Errors talking to StarRocks by kind: tls, auth, connection, query."}, []string{"kind"}),
		accounts: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricAccountsReady,
			Help: "1 when root has the module's password and the agent's and the team's accounts exist."}),
		computeCache: newComputeCacheCollector(),
	}
	for _, r := range []string{"success", "failure"} {
		m.applyTotal.WithLabelValues(r)
	}
	for _, k := range []string{"tls", "auth", "connection", "query"} {
		m.errorsTotal.WithLabelValues(k)
	}
	m.Registry.MustRegister(m.certNotAfter, m.certReady, m.lastApply, m.applyTotal, m.errorsTotal, m.accounts, m.computeCache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// SetCertificate records the mounted certificate; zero notAfter clears it.
func (m *Metrics) SetCertificate(notAfter time.Time, ready bool) {
	if notAfter.IsZero() {
		m.certNotAfter.Set(0)
	} else {
		m.certNotAfter.Set(float64(notAfter.Unix()))
	}
	if ready {
		m.certReady.Set(1)
	} else {
		m.certReady.Set(0)
	}
}

// Apply counts one configuration pass.
func (m *Metrics) Apply(success bool, at time.Time) {
	if success {
		m.applyTotal.WithLabelValues("success").Inc()
		m.lastApply.Set(float64(at.Unix()))
		return
	}
	m.applyTotal.WithLabelValues("failure").Inc()
}

// Error counts one error of kind (tls, auth, connection, query).
func (m *Metrics) Error(kind string) {
	m.errorsTotal.WithLabelValues(kind).Inc()
}

// SetAccountsReady records whether the accounts are ready.
func (m *Metrics) SetAccountsReady(ready bool) {
	if ready {
		m.accounts.Set(1)
		return
	}
	m.accounts.Set(0)
}

// CacheLookups are a CN's block cache lookups since it started.
type CacheLookups struct{ Hits, Misses int64 }

// SetComputeCache replaces the CNs' block cache lookups by CN host; nil
// when this agent reads none (not the shared-data FE leader's), so a former
// leader's series end.
func (m *Metrics) SetComputeCache(byHost map[string]CacheLookups) {
	m.computeCache.set(byHost)
}

// computeCacheCollector exports the CNs' own counts as counters: each is
// what the CN has counted since it started, so a CN's restart is a counter
// reset to Prometheus, as for any process.
type computeCacheCollector struct {
	hits, misses *prometheus.Desc
	mu           sync.Mutex
	byHost       map[string]CacheLookups
}

func newComputeCacheCollector() *computeCacheCollector {
	return &computeCacheCollector{
		hits: prometheus.NewDesc(MetricComputeCacheHits,
			"Block cache lookups a compute node answered from its cache since it started (its /api/datacache/stat).", []string{"compute_node"}, nil),
		misses: prometheus.NewDesc(MetricComputeCacheMisses,
			"Block cache lookups of a compute node that went to the object storage since it started (its /api/datacache/stat).", []string{"compute_node"}, nil),
	}
}

func (c *computeCacheCollector) set(byHost map[string]CacheLookups) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byHost = byHost
}

func (c *computeCacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.hits
	ch <- c.misses
}

func (c *computeCacheCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for host, v := range c.byHost {
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(v.Hits), host)
		ch <- prometheus.MustNewConstMetric(c.misses, prometheus.CounterValue, float64(v.Misses), host)
	}
}
