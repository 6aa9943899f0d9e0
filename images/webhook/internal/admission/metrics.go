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

package admission

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of the admission handlers.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the admission metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "managed_starrocks_webhook",
			Name:      "admission_requests_total",
			Help:      "Admission reviews answered, by webhook, operation and result (allowed, denied, error).",
		}, []string{"webhook", "operation", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "managed_starrocks_webhook",
			Name:      "admission_duration_seconds",
			Help:      "Time to answer one admission review, from request body to response.",
			// Answers are sub-millisecond when the class is cached; the upper
			// buckets show live class GETs and CEL compilations.
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 3},
		}, []string{"webhook"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *Metrics) observe(webhook, operation, result string, seconds float64) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(webhook, operation, result).Inc()
	m.duration.WithLabelValues(webhook).Observe(seconds)
}
