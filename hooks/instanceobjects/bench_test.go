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

package instanceobjects

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// rawSnapshot is one snapshot item as the jq filter wrote it.
type rawSnapshot string

func (r rawSnapshot) UnmarshalTo(v any) error { return json.Unmarshal([]byte(r), v) }
func (r rawSnapshot) String() string          { return string(r) }

type benchSnapshots map[string][]pkg.Snapshot

func (s benchSnapshots) Get(key string) []pkg.Snapshot { return s[key] }

// fleet is n values entries (the two examples under distinct names, UIDs
// and namespaces, as JSON the way the hook reads them) and the snapshots of
// a cluster where every one of them is current: its Starrocks, its record
// and its objects as the bindings' filters give them.
func fleet(b *testing.B, n int) (instanceobjects.Module, []desiredItem, benchSnapshots) {
	b.Helper()
	module := instanceobjects.ModuleFromValues(func(path string) gjson.Result { return gjson.Get(globals, path) })
	examples := exampleInstances(b)
	rendered := make([][]liveObject, 2)
	kinds := make([][]string, 2)
	for i, ex := range examples {
		objs, err := module.Render(ex)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range objs {
			owners := []ownerRef{}
			for _, r := range o.GetOwnerReferences() {
				owners = append(owners, ownerRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID), Controller: r.Controller != nil && *r.Controller})
			}
			rendered[i] = append(rendered[i], liveObject{Name: o.GetName(), Labels: o.GetLabels(), Annotations: o.GetAnnotations(), OwnerReferences: owners})
			kinds[i] = append(kinds[i], o.GetKind())
		}
	}
	snaps := benchSnapshots{}
	entries := make([]desiredItem, 0, n)
	for i := range n {
		inst := cloneInstances(b, examples[i%2:i%2+1])[0]
		inst["name"] = fmt.Sprintf("%s-%d", inst["name"], i)
		inst["namespace"] = fmt.Sprintf("team-%d", i)
		inst["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		raw, err := json.Marshal(inst)
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, desiredItem{Name: shared.DesiredConfigMapName(inst["uid"].(string)), Entry: string(raw), uid: inst["uid"].(string)})
		sum, err := module.Checksum(inst)
		if err != nil {
			b.Fatal(err)
		}
		ns, uid := inst["namespace"].(string), inst["uid"].(string)
		add := func(key string, v any) {
			data, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			snaps[key] = append(snaps[key], rawSnapshot(data))
		}
		add(SnapStarrocks, starrocksRef{Namespace: ns, Name: inst["name"].(string), UID: uid})
		rec := &applied.Record{Namespace: ns, Name: inst["name"].(string), UID: uid, Checksum: sum}
		for j, tmpl := range rendered[i%2] {
			o := tmpl
			o.Namespace = ns
			o.Name = fmt.Sprintf("%s-%d", tmpl.Name, i)
			o.UID = fmt.Sprintf("%s-%d", uid, j)
			o.ResourceVersion = fmt.Sprint(1000 + j)
			ro := applied.Object{Kind: kinds[i%2][j], Name: o.Name, UID: o.UID}
			if generationKinds[ro.Kind] {
				o.Generation = "1"
				ro.Version, ro.Metadata = "g1", metadataDigest(o.Labels, o.Annotations, o.OwnerReferences)
			} else {
				ro.Version = "rv" + o.ResourceVersion
			}
			rec.Objects = append(rec.Objects, ro)
			add("instance_"+ro.Kind, o)
		}
		data, _ := json.Marshal(rec)
		add(SnapRecords, map[string]string{"name": applied.ConfigMapName(uid), "record": string(data)})
	}
	return module, entries, snaps
}

// BenchmarkPass measures the runs of the hook over n instances.
//
//   - floor: what every run must do, decoding the values entries and the
//     snapshots (objects, records and the JSON in them, Starrocks) with
//     encoding/json;
//   - steady: every instance current (decode, checksum, compare with the
//     record, no render), as x-floor;
//   - longest: nothing current (a module upgrade): the decision over every
//     instance plus the render and writes of one batch (BatchSize
//     instances) into a fake API server, the longest a run gets; ms/run.
func BenchmarkPass(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		module, entries, snaps := fleet(b, n)
		var floor float64
		b.Run(fmt.Sprintf("floor/instances=%d", n), func(b *testing.B) {
			for b.Loop() {
				for _, e := range entries {
					var v map[string]any
					if err := json.Unmarshal([]byte(e.Entry), &v); err != nil {
						b.Fatal(err)
					}
				}
				decodeAll(b, snaps)
			}
			floor = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(fmt.Sprintf("steady/instances=%d", n), func(b *testing.B) {
			for b.Loop() {
				s := readState(snaps)
				if p := plan(module, s, entries, time.Now()); len(p.stale) > 0 || len(p.failed) > 0 {
					b.Fatalf("steady cluster has %d stale and %d failed instances", len(p.stale), len(p.failed))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floor, "x-floor")
		})
		b.Run(fmt.Sprintf("longest/instances=%d", n), func(b *testing.B) {
			cold := benchSnapshots{SnapStarrocks: snaps[SnapStarrocks]}
			for b.Loop() {
				longestRun(b, module, entries, cold, n)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
		})
	}
}

// decodeAll decodes every snapshot item into the type the hook reads it as.
func decodeAll(b *testing.B, snaps benchSnapshots) {
	for key, items := range snaps {
		for _, it := range items {
			var err error
			switch key {
			case SnapRecords:
				var r recordItem
				if err = it.UnmarshalTo(&r); err == nil {
					_, err = applied.Parse(r.Record)
				}
			case SnapStarrocks:
				err = it.UnmarshalTo(&starrocksRef{})
			default:
				err = it.UnmarshalTo(&liveObject{})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// longestRun is a run where nothing is current: the decision over every
// instance, then the render and writes of one batch into a fake API server.
func longestRun(b *testing.B, module instanceobjects.Module, entries []desiredItem, snaps benchSnapshots, n int) {
	w := kubewrite.NewForClient(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()))
	s := readState(snaps)
	p := plan(module, s, entries, time.Now())
	if len(p.stale) != n {
		b.Fatalf("%d stale of %d", len(p.stale), n)
	}
	res := apply(b.Context(), w, module, p, time.Now())
	if res.written != min(n, BatchSize) {
		b.Fatalf("written %d, logs %v", res.written, res.logs)
	}
}

// churnSim is the hook's decision run after run over a cluster where one
// namespace (team-churn) changes every one of its instances before every
// run, as a tenant in a loop can, while other namespaces' instances turn
// stale one per run: a new instance or a change. Each run writes the batch
// plan puts first, as apply would (its records, with the run's time; no
// render: only the order is measured). waits are the runs each other
// instance waited, 1 being the next run.
type churnSim struct {
	module  instanceobjects.Module
	s       *state
	churner []map[string]any
	victims []map[string]any
	items   map[string]desiredItem
	now     time.Time
}

const churnVictims = 10

func newChurnSim(b *testing.B, n int) *churnSim {
	b.Helper()
	module := instanceobjects.ModuleFromValues(func(path string) gjson.Result { return gjson.Get(globals, path) })
	examples := exampleInstances(b)
	sim := &churnSim{module: module, items: map[string]desiredItem{}, now: time.Unix(1_800_000_000, 0),
		s: &state{live: map[objectKey]liveObject{}, records: map[string]*applied.Record{}, starrocks: map[string]starrocksRef{}, terminating: map[string]bool{}}}
	add := func(inst map[string]any, ns, name, uid string) map[string]any {
		inst["namespace"], inst["name"], inst["uid"] = ns, name, uid
		sim.s.starrocks[uid] = starrocksRef{Namespace: ns, Name: name, UID: uid}
		return inst
	}
	// The churner's UIDs sort before every other: the entries' order alone
	// would put all of them first.
	for i := range n {
		sim.churner = append(sim.churner, add(cloneInstances(b, examples[:1])[0], "team-churn", fmt.Sprintf("churn-%d", i), fmt.Sprintf("00000000-0000-0000-0000-%012d", i)))
	}
	for i := range churnVictims {
		sim.victims = append(sim.victims, add(cloneInstances(b, examples[1:2])[0], fmt.Sprintf("team-%d", i), "olap", fmt.Sprintf("ffffffff-0000-0000-0000-%012d", i)))
	}
	for _, inst := range sim.churner {
		sim.set(b, inst)
	}
	// Every instance current at the start, except the new victims (even
	// ones), which get their entries later.
	sim.write(b, sim.churner)
	for i, inst := range sim.victims {
		if i%2 == 1 {
			sim.set(b, inst)
			sim.write(b, []map[string]any{inst})
		}
	}
	return sim
}

// set hands an entry to the hook, as the instances hook does.
func (sim *churnSim) set(b *testing.B, inst map[string]any) {
	raw, err := json.Marshal(inst)
	if err != nil {
		b.Fatal(err)
	}
	uid := inst["uid"].(string)
	sim.items[uid] = desiredItem{Name: shared.DesiredConfigMapName(uid), Entry: string(raw), uid: uid}
}

func (sim *churnSim) entries() []desiredItem {
	s := &state{}
	for _, d := range sim.items {
		s.desired = append(s.desired, d)
	}
	return s.entries()
}

// write records instances as written by this run: one object each, live.
func (sim *churnSim) write(b *testing.B, insts []map[string]any) {
	for _, inst := range insts {
		sum, err := sim.module.Checksum(inst)
		if err != nil {
			b.Fatal(err)
		}
		ns, name, uid := inst["namespace"].(string), inst["name"].(string), inst["uid"].(string)
		obj := applied.Object{Kind: "ConfigMap", Name: "d8ms-sr-" + name + "-config", UID: "o-" + uid, Version: "rv1"}
		sim.s.live[objectKey{obj.Kind, ns, obj.Name}] = liveObject{Namespace: ns, Name: obj.Name, UID: obj.UID, ResourceVersion: "1"}
		sim.s.records[uid] = &applied.Record{Namespace: ns, Name: name, UID: uid, Checksum: sum, Objects: []applied.Object{obj}, Written: &metav1.Time{Time: sim.now}}
	}
}

// run is one run of the hook: the batch plan puts first is written.
func (sim *churnSim) run(b *testing.B) map[string]bool {
	sim.now = sim.now.Add(time.Second)
	p := plan(sim.module, sim.s, sim.entries(), sim.now)
	if len(p.failed) > 0 {
		b.Fatal(p.failed)
	}
	written := map[string]bool{}
	var batch []map[string]any
	for _, e := range p.stale[:min(len(p.stale), BatchSize)] {
		batch = append(batch, e.instance)
		written[e.id] = true
	}
	sim.write(b, batch)
	return written
}

// longestWait runs the simulation: before run i the churner (if churning)
// changes all its instances and victim i turns stale; it returns the most
// runs a victim waited, capped at limit runs after the last victim.
func (sim *churnSim) longestWait(b *testing.B, churning bool, limit int) int {
	since := map[string]int{}
	longest := 0
	for run := 1; run <= churnVictims+limit; run++ {
		if churning {
			churn(sim.churner, run)
			for _, inst := range sim.churner {
				sim.set(b, inst)
			}
		}
		if i := run - 1; i < churnVictims {
			v := sim.victims[i]
			if i%2 == 1 {
				v["configuration"].(map[string]any)["catalogTrashExpireSecond"] = float64(7200 + run)
			}
			sim.set(b, v)
			since[v["uid"].(string)] = run
		}
		for uid := range sim.run(b) {
			if start, ok := since[uid]; ok {
				longest = max(longest, run-start+1)
				delete(since, uid)
			}
		}
		if len(since) == 0 && run >= churnVictims {
			return longest
		}
	}
	return churnVictims + limit // some victim was never written
}

// BenchmarkChurn measures how long another namespace's instance waits
// while one namespace keeps n instances stale, in runs of the hook, as a
// ratio to the same wait with that namespace idle (the floor, one run: the
// instance is written by the next run). 10 instances of 10 other
// namespaces turn stale one per run (5 new, 5 changed); x-floor is the
// longest of their waits. A wait that never ends is reported as the
// simulation's length (the 10 runs that make the victims stale and 40
// more: 50 runs).
func BenchmarkChurn(b *testing.B) {
	for _, n := range []int{BatchSize, 100, 1000} {
		b.Run(fmt.Sprintf("churning=%d", n), func(b *testing.B) {
			var floor, churned int
			for b.Loop() {
				floor = newChurnSim(b, n).longestWait(b, false, 40)
				churned = newChurnSim(b, n).longestWait(b, true, 40)
			}
			b.ReportMetric(float64(floor), "floor-runs")
			b.ReportMetric(float64(churned), "wait-runs")
			b.ReportMetric(float64(churned)/float64(floor), "x-floor")
		})
	}
}
