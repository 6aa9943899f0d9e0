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

package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkApplyToValid measures, in the running module loop, the time from
// applying N Starrocks objects to all of them having their StatefulSets and
// ConfigurationValid=True. The floor, measured in the same run, is one
// module pass on a cluster with no instances (hooks, render, apply of the
// module's own objects); ratio = time per batch / floor.
//
//	go test ./test/e2e -run '^$' -bench ApplyToValid -benchtime 1x
func BenchmarkApplyToValid(b *testing.B) {
	e := newEnv(b, envOptions{})
	e.apply(testClass)
	floor := e.passFloor()
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			parent := e.t
			e.t = b
			defer func() { e.t = parent }()
			var total time.Duration
			for i := 0; i < b.N; i++ {
				ns := fmt.Sprintf("bench-%d-%d", n, i)
				start := time.Now()
				for j := 0; j < n; j++ {
					e.apply(instance(ns, fmt.Sprintf("sr%d", j), "Standalone", ""))
				}
				for j := 0; j < n; j++ {
					name := fmt.Sprintf("sr%d", j)
					e.eventuallyWithin(10*time.Minute, "objects and ConfigurationValid of "+ns+"/"+name, func() (bool, string) {
						if _, err := e.get("StatefulSet", ns, "d8ms-sr-"+name+"-be"); err != nil {
							return false, err.Error()
						}
						status, _, msg := e.condition(ns, name, "ConfigurationValid")
						return status == "True", msg
					})
				}
				total += time.Since(start)
				b.StopTimer()
				e.deleteNamespaceInstances(ns)
				b.StartTimer()
			}
			perBatch := total / time.Duration(b.N)
			b.ReportMetric(float64(perBatch.Milliseconds()), "ms/batch")
			b.ReportMetric(float64(perBatch.Milliseconds())/float64(n), "ms/instance")
			b.ReportMetric(float64(floor.Milliseconds()), "floor-ms/pass")
			b.ReportMetric(float64(perBatch)/float64(floor), "ratio-to-floor")
		})
	}
}

// passFloor times one module pass with nothing to change.
func (e *env) passFloor() time.Duration {
	e.t.Helper()
	var best time.Duration
	for i := 0; i < 3; i++ {
		res, err := e.loop.RunOnce(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		if best == 0 || res.Duration < best {
			best = res.Duration
		}
	}
	return best
}

func (e *env) deleteNamespaceInstances(ns string) {
	e.t.Helper()
	if err := e.resource("Starrocks", ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.eventuallyWithin(10*time.Minute, "instances of "+ns+" pruned", func() (bool, string) {
		list, err := e.kube.AppsV1().StatefulSets(ns).List(context.Background(), metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return err == nil && len(list.Items) == 0, fmt.Sprintf("%d StatefulSets left", len(list.Items))
	})
}
