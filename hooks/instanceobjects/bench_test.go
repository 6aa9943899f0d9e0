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
	res := apply(b.Context(), w, module, s, p, time.Now())
	if res.written != min(n, BatchSize) {
		b.Fatalf("written %d, logs %v", res.written, res.logs)
	}
}
