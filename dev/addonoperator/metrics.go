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

package addonoperator

import (
	"context"
	"math"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric names addon-operator serves (pkg/metrics/metrics.go of
// github.com/flant/addon-operator v1.24.4, "{PREFIX}" being MetricsPrefix).
const (
	// ModuleHookRunSeconds is a histogram of module hook run durations,
	// labelled module, hook, binding, queue, activation.
	ModuleHookRunSeconds = MetricsPrefix + "module_hook_run_seconds"
	// ModuleHookErrorsTotal counts failed module hook runs.
	ModuleHookErrorsTotal = MetricsPrefix + "module_hook_errors_total"
	// ModuleHookSuccessTotal counts successful module hook runs.
	ModuleHookSuccessTotal = MetricsPrefix + "module_hook_success_total"
	// ModuleRunErrorsTotal counts failed module runs (hooks + Helm).
	ModuleRunErrorsTotal = MetricsPrefix + "module_run_errors_total"
	// TasksQueueLength is the length of each named queue.
	TasksQueueLength = MetricsPrefix + "tasks_queue_length"
)

// Sample is one metric series: its labels and value (for a histogram, the
// sum and count of observations).
type Sample struct {
	Labels map[string]string
	Value  float64
	Sum    float64
	Count  uint64
	// Max bounds the longest observation of a histogram: the smallest
	// bucket bound that holds all of them (+Inf beyond the last bucket).
	Max float64
}

// Samples returns the series of metric whose labels include match.
func (o *Operator) Samples(ctx context.Context, metric string, match map[string]string) ([]Sample, error) {
	text, err := o.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	return parseSamples(text, metric, match)
}

func parseSamples(text, metric string, match map[string]string) ([]Sample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	family, ok := families[metric]
	if !ok {
		return nil, nil
	}
	var out []Sample
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !matches(labels, match) {
			continue
		}
		s := Sample{Labels: labels}
		switch family.GetType() {
		case dto.MetricType_COUNTER:
			s.Value = m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			s.Value = m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			h := m.GetHistogram()
			s.Sum, s.Count = h.GetSampleSum(), h.GetSampleCount()
			s.Max = math.Inf(1)
			for _, b := range h.GetBucket() {
				if b.GetCumulativeCount() == s.Count && b.GetUpperBound() < s.Max {
					s.Max = b.GetUpperBound()
				}
			}
		default:
			s.Value = m.GetUntyped().GetValue()
		}
		out = append(out, s)
	}
	return out, nil
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Total adds up the values of metric's series whose labels include match.
func (o *Operator) Total(ctx context.Context, metric string, match map[string]string) (float64, error) {
	samples, err := o.Samples(ctx, metric, match)
	var total float64
	for _, s := range samples {
		total += s.Value
	}
	return total, err
}

// ModuleErrors counts failed hook runs and failed module runs of the
// module: what a failed pass of the hand-written module loop was.
func (o *Operator) ModuleErrors(ctx context.Context) (float64, error) {
	match := map[string]string{"module": ModuleName}
	hooks, err := o.Total(ctx, ModuleHookErrorsTotal, match)
	if err != nil {
		return 0, err
	}
	runs, err := o.Total(ctx, ModuleRunErrorsTotal, match)
	return hooks + runs, err
}
