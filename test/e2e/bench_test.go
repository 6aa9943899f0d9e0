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

	"github.com/deckhouse/managed-starrocks/dev/addonoperator"
)

// BenchmarkApplyToValid measures, with the module running under
// addon-operator, the time from applying N Starrocks objects to all of them
// having their StatefulSets and ConfigurationValid=True. The floor,
// measured in the same run, is the mean hook run on a cluster with no
// instances (addon-operator's metrics); ratio = time per batch / floor.
//
//	go test ./test/e2e -run '^$' -bench ApplyToValid -benchtime 1x
func BenchmarkApplyToValid(b *testing.B) {
	// Its own env: it measures the module's hook runs.
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

// passFloor is the mean run of the module's hooks so far, on a cluster
// with no instances (addon-operator's module_hook_run_seconds, sum over
// count): what a run with nothing to change costs.
func (e *env) passFloor() time.Duration {
	e.t.Helper()
	var sum float64
	var count uint64
	e.eventually("the module's hooks ran", func() (bool, string) {
		samples, err := e.ao.Samples(context.Background(), addonoperator.ModuleHookRunSeconds, map[string]string{"module": addonoperator.ModuleName})
		if err != nil {
			return false, err.Error()
		}
		sum, count = 0, 0
		for _, s := range samples {
			sum += s.Sum
			count += s.Count
		}
		return count > 0, "no hook run in the metrics yet"
	})
	return time.Duration(sum / float64(count) * float64(time.Second))
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
