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
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// BenchmarkValidateStarrocks20Rules measures one validating admission
// review, in process through the HTTP handler, for a class with 20 CEL
// rules: with the rules compiled once per class generation (production) and,
// in the same run as the floor to compare against, compiled on every
// request. Reported: p50/p99 of both and their ratio (goal <= 0.1).
func BenchmarkValidateStarrocks20Rules(b *testing.B) {
	class := classWithRules(20)
	body := reviewBody(b, request(b, admissionv1.Create, testInstance(), nil))

	cached := newHandler(class)
	uncached := newHandler(class)
	uncached.Compile = classrules.Compile
	serveCached := serveOnce(b, cached, body)
	serveUncached := serveOnce(b, uncached, body)
	serveCached() // fill the cache and check the instance passes all 20 rules

	// The floor: a fixed number of compile-every-time reviews, enough for a
	// stable p99, measured before the timed loop.
	const floorRuns = 300
	floor := make([]time.Duration, floorRuns)
	for i := range floor {
		start := time.Now()
		serveUncached()
		floor[i] = time.Since(start)
	}

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		serveCached()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()

	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	f50, f99 := percentile(floor, 50), percentile(floor, 99)
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(f50.Nanoseconds()), "compile-every-time-p50-ns")
	b.ReportMetric(float64(f99.Nanoseconds()), "compile-every-time-p99-ns")
	b.ReportMetric(float64(p50)/float64(f50), "ratio-p50")
	b.ReportMetric(float64(p99)/float64(f99), "ratio-p99")
}

// classWithRules is testClass with n CEL rules, all holding for
// testInstance, reading every variable the rules may use.
func classWithRules(n int) *v1alpha1.StarrocksClass {
	c := testClass()
	templates := []string{
		"configuration.streamingLoadMaxMb <= %d",
		"configuration.catalogTrashExpireSecond >= %d - 4000",
		"backend.memory.size >= frontend.memory.size - %d",
		"frontend.cpu.cores <= backend.cpu.cores + %d",
		"type != 'Cluster' || backend.replicas <= %d",
		"backend.persistentVolumeClaim.size >= frontend.persistentVolumeClaim.size - %d",
		"frontend.cpu.coreFraction + backend.cpu.coreFraction >= 2 - %d",
		"configuration.loadProcessMaxMemoryLimitPercent <= 100 + %d",
	}
	c.Spec.Validations = nil
	for i := range n {
		c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{
			Rule:    fmt.Sprintf(templates[i%len(templates)], 4096+i),
			Message: fmt.Sprintf("rule %d", i),
		})
	}
	return c
}

func serveOnce(b *testing.B, h *Handler, body []byte) func() {
	mux := http.NewServeMux()
	h.Register(mux)
	return func() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, PathValidateStarrocks, bytes.NewReader(body)))
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"allowed":true`)) {
			b.Fatalf("review not allowed: %d %s", rec.Code, rec.Body.String())
		}
	}
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
