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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/dev/addonoperator"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// The flood a tenant with edit rights in its namespace can make of objects
// labelled like an instance's. Sized for CI on 2 cores: 200 ConfigMaps and
// 200 Pods of 200 KB each (80 MB; a request of about 200 KB is far below
// etcd's 1.5 MiB, an annotation of 200 KB below the API server's 256 KiB).
const (
	floodObjects    = 200
	floodAnnotation = 200 * 1000
	mib             = 1 << 20
	// floodBound is what addon-operator's resident memory may grow by
	// under the flood, and stay above its start after the flood is gone.
	// A tenant's pods are still held in full, once, by the pod informer
	// (the StatefulSet controller makes the instances' pods without
	// `heritage: deckhouse`): 40 MB of pods, decoded, with Go's GC room
	// (GOGC=100 lets the heap reach twice what is live). The ConfigMaps
	// cost nothing: no binding selects them. Before the selectors took
	// `heritage` and the filters were bounded, the same flood took it
	// past a GiB (hooks/README.md "What addon-operator holds").
	floodBound = 192 * mib
	// floodHeapLeft is what addon-operator's Go heap may still hold after
	// the flood is deleted and a collection ran.
	floodHeapLeft = 32 * mib
)

// TestATenantsFloodOfLabelledObjectsStaysWithinAddonOperatorsMemoryBound
// runs the module under the real addon-operator process while a tenant
// (a user with edit rights in its namespace, under Deckhouse's policies)
// creates ConfigMaps and Pods labelled like an instance's, each with a
// 200 KB annotation: a plain one, an agent-status report of long lists and
// names, or one with a long backup report. addon-operator's resident
// memory (VmRSS of /proc/<pid>/status) must grow by less than floodBound
// under the flood and after it, and another tenant's new instance must
// still get its objects.
func TestATenantsFloodOfLabelledObjectsStaysWithinAddonOperatorsMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of 80 MB")
	}
	const floodNS, otherNS = "team-flood", "team-other"
	// Its own env, and not parallel: it measures addon-operator, whom no
	// other test may load meanwhile.
	e := newEnv(t, envOptions{measuresMemory: true})
	e.apply(testClass)
	// One instance so the module's informers and hook runs are warm.
	e.apply(instance("team-warm", "warm", "Standalone", ""))
	e.waitObjects("team-warm", "warm", 1, 1)
	tenantKube, _ := e.tenant(floodNS)
	e.settle()

	pid := e.ao.Pid()
	start := e.memory(pid)
	t.Logf("addon-operator at rest: %s", start)

	peak := newPeakSampler(pid)
	began := time.Now()
	flood(t, tenantKube, floodNS)
	t.Logf("the tenant created %d ConfigMaps and %d Pods of %d KB in %s", floodObjects, floodObjects, floodAnnotation/1000, time.Since(began).Round(time.Second))
	e.settle()

	// Another tenant's change goes through while the flood is held.
	began = time.Now()
	e.apply(instance(otherNS, "ledger", "Standalone", ""))
	e.waitObjects(otherNS, "ledger", 1, 1)
	t.Logf("another tenant's new instance got its objects %s after its apply, under the flood", time.Since(began).Round(10*time.Millisecond))
	under := e.memory(pid)
	t.Logf("addon-operator under the flood: %s, peak VmRSS %d MiB", under, peak.max()/mib)

	unflood(t, tenantKube, floodNS)
	e.settle()
	// Garbage counts as heap in use until a collection, and an idle
	// addon-operator collects only every 2 minutes (Go's forced GC), so
	// waitGC asks it for one; VmRSS shrinks later still (the scavenger).
	// The heap after a collection
	// that began once the flood was gone is what addon-operator still
	// holds of it.
	e.waitGC(time.Now())
	after := e.memory(pid)
	peakRSS := peak.stop()
	t.Logf("addon-operator after the flood is deleted: %s", after)

	if grown := peakRSS - start.rss; grown > floodBound {
		t.Errorf("addon-operator's VmRSS grew by %d MiB under the flood (%d -> peak %d MiB), want under %d MiB",
			grown/mib, start.rss/mib, peakRSS/mib, floodBound/mib)
	}
	if start.heap > 0 && after.heap-start.heap > floodHeapLeft {
		t.Errorf("addon-operator's heap %d MiB after a GC once the flood is gone, %d MiB at rest: it keeps what the tenant deleted",
			after.heap/mib, start.heap/mib)
	}
}

// memoryReading is addon-operator's resident memory and, when its metrics
// expose Go's, its heap in use.
type memoryReading struct{ rss, heap int64 }

func (m memoryReading) String() string {
	s := fmt.Sprintf("VmRSS %d MiB", m.rss/mib)
	if m.heap > 0 {
		s += fmt.Sprintf(", Go heap in use %d MiB", m.heap/mib)
	}
	return s
}

func (e *env) memory(pid int) memoryReading {
	e.t.Helper()
	rss, err := vmRSS(pid)
	if err != nil {
		e.t.Fatal(err)
	}
	m := memoryReading{rss: rss}
	if samples, err := e.ao.Samples(context.Background(), "go_memstats_heap_inuse_bytes", nil); err == nil && len(samples) > 0 {
		m.heap = int64(samples[0].Value)
	}
	return m
}

// vmRSS reads a process's resident set size from /proc/<pid>/status.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// peakSampler reads a process's VmRSS every 200 ms and keeps the largest.
type peakSampler struct {
	mu   sync.Mutex
	peak int64
	done chan struct{}
	wg   sync.WaitGroup
}

func newPeakSampler(pid int) *peakSampler {
	p := &peakSampler{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			if rss, err := vmRSS(pid); err == nil {
				p.mu.Lock()
				p.peak = max(p.peak, rss)
				p.mu.Unlock()
			}
			select {
			case <-p.done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return p
}

func (p *peakSampler) max() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

func (p *peakSampler) stop() int64 {
	close(p.done)
	p.wg.Wait()
	return p.max()
}

// waitGC waits (up to 150 seconds) for a garbage collection in
// addon-operator that ended after since, which it asks addon-operator to
// run now.
func (e *env) waitGC(since time.Time) {
	e.t.Helper()
	if err := e.ao.CollectGarbage(context.Background()); err != nil {
		e.t.Logf("addon-operator ran no garbage collection when asked (%v): waiting for one of its own", err)
	}
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		samples, err := e.ao.Samples(context.Background(), "go_memstats_last_gc_time_seconds", nil)
		if err != nil || len(samples) == 0 {
			e.t.Logf("addon-operator's metrics tell no GC time (%v): the heap read may hold garbage", err)
			return
		}
		if samples[0].Value > float64(since.UnixNano())/1e9 {
			return
		}
	}
	e.t.Logf("no GC in addon-operator 150 seconds after %s", since.Format(time.TimeOnly))
}

// settle waits until addon-operator has run no hook of the module for 5
// seconds (at most 3 minutes): what the events queued is done.
func (e *env) settle() {
	e.t.Helper()
	ctx := context.Background()
	runs := func() float64 {
		match := map[string]string{"module": addonoperator.ModuleName}
		ok, err := e.ao.Total(ctx, addonoperator.ModuleHookSuccessTotal, match)
		if err != nil {
			e.t.Fatal(err)
		}
		failed, err := e.ao.Total(ctx, addonoperator.ModuleHookErrorsTotal, match)
		if err != nil {
			e.t.Fatal(err)
		}
		return ok + failed
	}
	last, since := runs(), time.Now()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if n := runs(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 5*time.Second {
			return
		}
	}
	e.t.Logf("addon-operator still runs hooks after 3 minutes (%v runs)", last)
}

// floodLabels are an instance's labels, without `heritage` (Deckhouse's
// policies refuse it to a tenant).
func floodLabels() map[string]string {
	return map[string]string{
		"managed-services.deckhouse.io/managed-service-type": "starrocks",
		"managed-services.deckhouse.io/managed-service-name": "warm",
		"app.kubernetes.io/instance":                         "warm",
		"app.kubernetes.io/component":                        "frontend",
		"module":                                             "managed-starrocks",
	}
}

// floodReport is an agent-status annotation of about size bytes: i%3 picks
// a plain annotation, a report of long lists and names, or a long backup
// report.
func floodReport(i, size int) (key, value string) {
	switch i % 3 {
	case 1:
		name := strings.Repeat("b", 200)
		var backends []string
		for n := 0; n*(len(name)+3) < size-200; n++ {
			backends = append(backends, name)
		}
		data, _ := json.Marshal(map[string]any{"membership": map[string]any{"leader": strings.Repeat("l", 100), "backends": backends}})
		return agentconfig.StatusAnnotation, string(data)
	case 2:
		data, _ := json.Marshal(map[string]any{"backup": map[string]any{"name": "b", "message": strings.Repeat("m", size-100)}})
		return agentconfig.StatusAnnotation, string(data)
	}
	return "example.com/payload", strings.Repeat("x", size)
}

func flood(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	parallel(t, floodObjects, func(ctx context.Context, i int) error {
		payload := strings.Repeat("x", floodAnnotation)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%d", i), Labels: floodLabels(),
			Annotations: map[string]string{"example.com/payload": payload}}}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("the tenant creates ConfigMap %s: %w", cm.Name, err)
		}
		key, value := floodReport(i, floodAnnotation)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%d", i), Labels: floodLabels(), Annotations: map[string]string{key: value}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/idle"}}},
		}
		if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("the tenant creates Pod %s: %w", pod.Name, err)
		}
		return nil
	})
}

func unflood(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	zero := int64(0)
	parallel(t, floodObjects, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("flood-%d", i)
		if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		// No kubelet: a pod without a node goes at once.
		return kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

// parallel runs do for 0..n-1 on 8 workers and fails the test on the first
// error.
func parallel(t *testing.T, n int, do func(ctx context.Context, i int) error) {
	t.Helper()
	ctx := context.Background()
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(ctx, i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
