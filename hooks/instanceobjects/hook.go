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

// Package instanceobjects applies the Kubernetes objects of every instance
// the instances hook computed, handed over as ConfigMaps desired-<uid> in
// the module namespace (shared.DesiredPrefix). They are rendered per
// instance from the templates of pkg/instanceobjects and created or updated
// here, neither by Helm nor through the module's values: both are stored
// with the module's one Helm release in one Secret of at most 1 MiB, which
// a thousand instances' objects, or their tenant-sized entries, would not
// fit.
//
// Every object lives in a tenant namespace, where the tenant can get any
// write refused (an immutable ConfigMap, a StatefulSet re-created with
// another selector, a ResourceQuota, its own admission policy, a namespace
// being deleted). So the writes go one at a time through the hook's own
// client (kubewrite), never the patch collector, whose one refused
// operation would fail the run of every instance: a refusal stops only the
// writes of its own instance and is recorded and announced for it.
//
// What was written is recorded per instance in the module namespace
// (hooks/internal/applied): the render checksum and, per object, the UID
// and version the API server returned. An instance is current when its
// record has the current checksum and every recorded object is live with
// the same UID and version (and, for kinds with a generation, the same
// labels, annotations and ownerReferences): a tenant cannot forge a UID or
// a version, so any change, deletion or decoy of an object makes its
// instance render again on the next run, which the change itself triggers.
//
// The objects carry an ownerReference to their Starrocks and go with it
// (garbage collection); an instance that loses its desired state (invalid
// without memory, beyond a limit) keeps the objects it has. The hook deletes
// an instance object only when pruning (prune.go): once a render is written
// completely, an object the instance's last record lists and the render no
// longer has (a kind or name a new module version dropped) is deleted
// through kubewrite, if it is still the recorded object (UID) with the
// module's labels and an ownerReference to that Starrocks — never a
// look-alike a tenant made, never a StatefulSet, PersistentVolumeClaim or
// Secret (neverPruned says why). It also deletes the records of Starrocks
// that are gone.
package instanceobjects

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/deckhouse/module-sdk/pkg"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

var _ = registry.RegisterFunc(Config, Handle)

// Snapshots besides one per kind of instance object (snapshotName).
const (
	SnapRecords    = "applied_records"
	SnapStarrocks  = "starrocks"
	SnapNamespaces = "namespaces"
	SnapDesired    = "desired"
)

// BatchSize is the most instances one run renders and writes. A render is
// about 10 ms and its writes up to 15 round trips to the API server, so a
// batch keeps a run near a second while a module upgrade re-renders a
// thousand instances; the records a batch writes trigger the next run
// until every instance is current (BenchmarkPass measures both).
const BatchSize = 25

// refusalRefresh is how long a refusal of the same object is kept as it
// was recorded although the API server words it differently: a tenant's
// admission webhook that answers with a new text every time (a timestamp, a
// counter) would otherwise have each run rewrite the record, and so start
// the next run, for ever.
const refusalRefresh = 10 * time.Minute

// Config watches the desired state of every instance (the instances hook
// writes it into ConfigMaps desired-<uid> of the module namespace), the
// objects of every instance, their records and the Starrocks (for their
// UIDs), all in the module's own queue. A module run (new image digests,
// settings) reaches it through the render inputs' ConfigMap the after-Helm
// hook writes (inputs.go), never as a run of its own in the shared main
// queue, where its writes into tenant namespaces would hold every module.
// It also runs every minute: what ends a standing refusal (a quota
// deleted, a look-alike without the module's labels deleted after its
// take-over was refused) is no event of its bindings, which select by the
// module's labels, and the refused instances take turns by the minute.
var Config = &pkg.HookConfig{
	Queue:      shared.QueueObjects,
	Schedule:   []pkg.ScheduleConfig{{Name: "retry", Crontab: "* * * * *"}},
	Kubernetes: shared.NoWaitForSynchronization(bindings()),
}

// objectFilter keeps what says whether an object is the one the hook
// wrote: identity, version and the metadata that selectors, NetworkPolicies
// and garbage collection go by. The objects live in tenant namespaces, where
// look-alikes with anything in them can exist: every field is coerced to
// its type, so no object can fail the snapshot, and bounded (boundMetadata
// is the same in Go), so none takes more than a few KiB of addon-operator's
// memory: the module's own keys and values are short and few, a longer one
// is kept as a marker of its length (cut), a map of more than
// maxMetadataEntries entries as the number of its entries, more than
// maxOwners ownerReferences as their number. What the module wrote is
// kept as it is; anything else still differs from it, and its object is
// restored.
const objectFilter = shared.JqTypes +
	`def boundedmap: if type != "object" then {} elif length > ` + maxMetadataEntriesJq + ` then {"": "\(length) entries"} else with_entries(.key |= cut | .value |= (str | cut)) end;` +
	` {namespace: (.metadata.namespace | str), name: (.metadata.name | str), uid: (.metadata.uid | str | cut),` +
	` generation: (.metadata.generation | if type == "number" then tostring else "" end), resourceVersion: (.metadata.resourceVersion | str | cut),` +
	` labels: (.metadata.labels | boundedmap), annotations: (.metadata.annotations | boundedmap),` +
	` ownerReferences: (.metadata.ownerReferences | if type == "array" then [.[] | select(type == "object")] |` +
	` if length > ` + maxOwnersJq + ` then [{apiVersion: "", kind: "", name: "\(length) ownerReferences", uid: "", controller: false, blockOwnerDeletion: false}] else map(` +
	` {apiVersion: (.apiVersion | str | cut), kind: (.kind | str | cut), name: (.name | str | cut), uid: (.uid | str | cut), controller: (.controller == true), blockOwnerDeletion: (.blockOwnerDeletion == true)}) end else [] end)}`

// The bounds of objectFilter (boundMetadata): the module renders at most
// 10 labels and 4 annotations on an object, and one ownerReference.
const (
	maxMetadataEntries   = 16
	maxMetadataEntriesJq = "16"
	maxOwners            = 4
	maxOwnersJq          = "4"
)

func bindings() []pkg.KubernetesConfig {
	no := false
	out := make([]pkg.KubernetesConfig, 0, len(instanceobjects.Kinds)+5)
	for _, k := range instanceobjects.Kinds {
		out = append(out, pkg.KubernetesConfig{
			Name:          snapshotName(k),
			APIVersion:    k.APIVersion,
			Kind:          k.Kind,
			LabelSelector: shared.ModuleObjectSelector(),
			JqFilter:      objectFilter,
		})
	}
	return append(out,
		pkg.KubernetesConfig{
			// The records: the module namespace only, where no tenant writes.
			Name:              SnapRecords,
			APIVersion:        "v1",
			Kind:              "ConfigMap",
			NamespaceSelector: shared.ModuleNamespaceSelector,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: applied.State}},
			JqFilter:          shared.JqTypes + `{name: (.metadata.name | str), record: (.data["` + applied.Key + `"] | str)}`,
		},
		pkg.KubernetesConfig{
			// Which Starrocks exist: a record of a UID that is gone is
			// deleted; the Event of a refusal names the Starrocks.
			Name:       SnapStarrocks,
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.StarrocksKind,
			JqFilter:   `{namespace: .metadata.namespace, name: .metadata.name, uid: .metadata.uid}`,
		},
		pkg.KubernetesConfig{
			// What to render: the entries the instances hook computed
			// (shared.DesiredPrefix), in the module namespace only, where no
			// tenant writes. Not the module's values: those are stored with
			// its one Helm release, which tenant-sized entries would outgrow.
			Name:              SnapDesired,
			APIVersion:        "v1",
			Kind:              "ConfigMap",
			NamespaceSelector: shared.ModuleNamespaceSelector,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateDesired}},
			JqFilter:          shared.JqTypes + `{name: (.metadata.name | str), entry: (.data["` + shared.LastValidKey + `"] | str)}`,
		},
		// A module run changed what every render reads (inputs.go).
		inputsBinding(true),
		pkg.KubernetesConfig{
			// Nothing is created in a namespace being deleted (the API
			// server would refuse it anyway). A snapshot only.
			Name:                         SnapNamespaces,
			APIVersion:                   "v1",
			Kind:                         "Namespace",
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     `{name: .metadata.name, terminating: (.metadata.deletionTimestamp != null or .status.phase == "Terminating")}`,
		},
	)
}

func snapshotName(k instanceobjects.Kind) string { return "instance_" + k.Kind }

// writer is what the hook writes instance objects with
// (kubewrite.Writer).
type writer interface {
	CreateOrUpdate(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error)
	Replace(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error)
	Get(ctx context.Context, r kubewrite.Ref) (*unstructured.Unstructured, error)
	Delete(ctx context.Context, r kubewrite.Ref, uid string) error
}

// Handle renders and writes the objects of the instances that are not
// current, at most BatchSize of them, and records each.
func Handle(ctx context.Context, input *pkg.HookInput) error {
	s := readState(input.Snapshots)
	for _, name := range s.staleRecords() {
		input.PatchCollector.Delete("v1", "ConfigMap", shared.ModuleNamespace, name)
	}
	entries := s.entries()
	if len(entries) == 0 {
		return nil
	}
	module := instanceobjects.ModuleFromValues(input.Values.Get)
	if err := module.Check(); err != nil {
		// The module's own inputs, never a tenant's: Deckhouse shows a
		// failing hook that names the missing value.
		return err
	}
	now := input.DC.GetClock().Now()
	p := plan(module, s, entries, now)
	for _, err := range p.failed {
		input.Logger.Error("instance objects not rendered", slog.String("error", err.Error()))
	}
	res := apply(ctx, kubewrite.New(input), module, p, now)
	for _, rec := range res.records {
		input.PatchCollector.CreateOrUpdate(recordConfigMap(rec))
	}
	for _, msg := range res.logs {
		input.Logger.Warn(msg)
	}
	if len(p.stale) > 0 || len(p.failed) > 0 {
		input.Logger.Info("instance objects", slog.Int("instancesWritten", res.written), slog.Int("instancesRefused", res.refused),
			slog.Int("instancesStale", len(p.stale)), slog.Int("instancesFailed", len(p.failed)), slog.Int("instances", len(entries)))
	}
	return nil
}

// state is what the snapshots say.
type state struct {
	// live are the instance objects by kind, namespace and name.
	live map[objectKey]liveObject
	// records by the UID of their Starrocks; a record that does not parse
	// is no record (its instance is stale and rewrites it).
	records map[string]*applied.Record
	// starrocks by UID.
	starrocks map[string]starrocksRef
	// terminating namespaces.
	terminating map[string]bool
	// desired are the entries by their ConfigMap's name, as written.
	desired []desiredItem
	// recordNames are the records' ConfigMap names, parsed or not.
	recordNames []string
}

type objectKey struct{ kind, namespace, name string }

// liveObject is what a binding keeps of an instance object (objectFilter).
type liveObject struct {
	Namespace       string            `json:"namespace"`
	Name            string            `json:"name"`
	UID             string            `json:"uid"`
	Generation      string            `json:"generation"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
	OwnerReferences []ownerRef        `json:"ownerReferences"`
}

type ownerRef struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         bool   `json:"controller"`
	BlockOwnerDeletion bool   `json:"blockOwnerDeletion"`
}

// recordItem is what the records' binding keeps.
type recordItem struct {
	Name   string `json:"name"`
	Record string `json:"record"`
}

type namespaceItem struct {
	Name        string `json:"name"`
	Terminating bool   `json:"terminating"`
}

type starrocksRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// readState decodes the snapshots item by item: an item that does not
// decode counts for nothing.
func readState(snaps pkg.Snapshots) *state {
	s := &state{
		live:        map[objectKey]liveObject{},
		records:     map[string]*applied.Record{},
		starrocks:   map[string]starrocksRef{},
		terminating: map[string]bool{},
	}
	for _, k := range instanceobjects.Kinds {
		for o, err := range objectpatch.SnapshotIter[liveObject](snaps.Get(snapshotName(k))) {
			if err == nil {
				s.live[objectKey{k.Kind, o.Namespace, o.Name}] = o
			}
		}
	}
	for r, err := range objectpatch.SnapshotIter[recordItem](snaps.Get(SnapRecords)) {
		if err != nil {
			continue
		}
		s.recordNames = append(s.recordNames, r.Name)
		uid, ok := cutPrefix(r.Name, applied.Prefix)
		if !ok {
			continue
		}
		if rec, err := applied.Parse(r.Record); err == nil && rec.UID == uid {
			s.records[uid] = rec
		}
	}
	for sr, err := range objectpatch.SnapshotIter[starrocksRef](snaps.Get(SnapStarrocks)) {
		if err == nil && sr.UID != "" {
			s.starrocks[sr.UID] = sr
		}
	}
	for ns, err := range objectpatch.SnapshotIter[namespaceItem](snaps.Get(SnapNamespaces)) {
		if err == nil && ns.Terminating {
			s.terminating[ns.Name] = true
		}
	}
	for d, err := range objectpatch.SnapshotIter[desiredItem](snaps.Get(SnapDesired)) {
		if err == nil {
			s.desired = append(s.desired, d)
		}
	}
	return s
}

// desiredItem is what the desired-state binding keeps.
type desiredItem struct {
	Name  string `json:"name"`
	Entry string `json:"entry"`
	uid   string // from the name
}

// entries are the desired-state ConfigMaps to render, sorted by name, each
// with the UID its name gives (plan holds the entry to it and checks the
// instance schema of what it is about to render).
func (s *state) entries() []desiredItem {
	var out []desiredItem
	for _, d := range s.desired {
		if uid, ok := cutPrefix(d.Name, shared.DesiredPrefix); ok {
			d.uid = uid
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b desiredItem) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// cutPrefix is the UID in a record's or a memory's name.
func cutPrefix(s, prefix string) (string, bool) {
	uid, ok := strings.CutPrefix(s, prefix)
	return uid, ok && uid != ""
}

// staleRecords are the records whose Starrocks is gone: what they say
// belongs to no instance any more.
func (s *state) staleRecords() []string {
	var out []string
	for _, name := range s.recordNames {
		if uid, ok := cutPrefix(name, applied.Prefix); ok && s.starrocks[uid].UID == "" {
			out = append(out, name)
		}
	}
	return out
}

// entry is one entry to render.
type entry struct {
	instance            map[string]any
	namespace, name, id string
	checksum            string
	record              *applied.Record
	turn                turn
}

// planned is the outcome of the decision: the stale instances in the order
// they are written, and the entries that cannot render.
type planned struct {
	stale  []entry
	failed []error
	// live are the instance objects the snapshots have (state.live).
	live map[objectKey]liveObject
}

// plan decides which entries are stale and in which order they are
// written (fairOrder): each namespace in turn, so that no tenant, whatever
// it changes, holds back another's instances.
func plan(module instanceobjects.Module, s *state, items []desiredItem, now time.Time) planned {
	var p planned
	var stale, refused []entry
	for _, d := range items {
		r := d.Entry
		var instance map[string]any
		if err := json.Unmarshal([]byte(r), &instance); err != nil {
			p.failed = append(p.failed, fmt.Errorf("ConfigMap %s/%s: decode the entry: %w", shared.ModuleNamespace, d.Name, err))
			continue
		}
		e := entry{instance: instance}
		e.namespace, _ = instance["namespace"].(string)
		e.name, _ = instance["name"].(string)
		e.id, _ = instance["uid"].(string)
		if e.namespace == "" || e.name == "" || e.id == "" {
			p.failed = append(p.failed, fmt.Errorf("an entry without namespace, name or uid"))
			continue
		}
		if e.id != d.uid {
			p.failed = append(p.failed, fmt.Errorf("ConfigMap %s/%s holds the entry of uid %q", shared.ModuleNamespace, d.Name, e.id))
			continue
		}
		if s.terminating[e.namespace] {
			continue // its instances are ending: nothing is created there
		}
		sr := s.starrocks[e.id]
		if sr.UID == "" {
			// Its Starrocks is gone (the values follow a moment later):
			// objects owned by it would be collected at once, and its
			// record deleted.
			continue
		}
		if sr.Namespace != e.namespace || sr.Name != e.name {
			// The objects go into the namespace the entry names, owned by
			// the UID it carries: both must be the one Starrocks', or an
			// entry gone wrong would write one instance's objects over
			// another tenant's.
			p.failed = append(p.failed, fmt.Errorf("ConfigMap %s/%s names %s/%s, but the Starrocks of uid %s is %s/%s",
				shared.ModuleNamespace, d.Name, e.namespace, e.name, e.id, sr.Namespace, sr.Name))
			continue
		}
		sum, err := module.Checksum(instance)
		if err != nil {
			p.failed = append(p.failed, fmt.Errorf("%s/%s: %w", e.namespace, e.name, err))
			continue
		}
		e.checksum = sum
		e.record = s.records[e.id]
		if current(e.record, sum, e.namespace, s.live) {
			continue
		}
		// The instance schema again, the last layer between a tenant's
		// strings and the templates, for what is about to render only: a
		// current entry was checked when it was rendered, and checking a
		// thousand entries on every steady pass would cost more than the pass.
		if err := desired.ValidateEntry([]byte(r)); err != nil {
			p.failed = append(p.failed, fmt.Errorf("%s/%s: %w", e.namespace, e.name, err))
			continue
		}
		e.turn = turnOf(e.record, len(stale)+len(refused))
		if e.turn.class == classRefused {
			refused = append(refused, e)
			continue
		}
		stale = append(stale, e)
	}
	// Refused instances wait oldest refusal first. The same refusal again
	// leaves its record as it was, so that order alone would retry the
	// same oldest refusals in every run; starting further down the list
	// every minute gives each refused instance its turn when more of them
	// than a batch wait.
	slices.SortStableFunc(refused, func(a, b entry) int {
		return a.record.Refused.Time.Compare(b.record.Refused.Time.Time)
	})
	if n := len(refused); n > 0 {
		start := int(now.Unix()/60) % n
		refused = append(refused[start:], refused[:start]...)
	}
	for i := range refused {
		refused[i].turn.seq = i
	}
	p.stale = fairOrder(append(stale, refused...))
	p.live = s.live
	return p
}

// Classes of stale instances, in the order they are served within a round.
const (
	// classNew: nothing of the instance written yet (no record, or one
	// without objects). A new instance never waits behind instances that
	// already have their objects.
	classNew = iota
	// classChanged: the instance has its objects and something changed
	// (its entry, the module, or one of its objects).
	classChanged
	// classRefused: its last attempt was refused and may well be refused
	// again.
	classRefused
)

// turn is where an instance stands in line. Everything in it comes from the
// hook's own record in the module namespace, which no tenant writes: a
// tenant can make its instances stale as often as it likes, but each write
// stamps their records with the time of that turn, so they go behind every
// instance that has waited longer.
type turn struct {
	class int
	// since is when the hook last wrote the instance's record (classChanged
	// only); zero for records of older versions, which then go first.
	since time.Time
	// seq orders the rest: the entries' order (their ConfigMaps' names),
	// or the refusals' order.
	seq int
}

func turnOf(rec *applied.Record, seq int) turn {
	switch {
	case rec != nil && rec.Refused != nil:
		return turn{class: classRefused}
	case rec == nil || len(rec.Objects) == 0:
		return turn{class: classNew, seq: seq}
	}
	t := turn{class: classChanged, seq: seq}
	if rec.Written != nil {
		t.since = rec.Written.Time
	}
	return t
}

func compareTurns(a, b entry) int {
	if a.turn.class != b.turn.class {
		return a.turn.class - b.turn.class
	}
	if c := a.turn.since.Compare(b.turn.since); c != 0 {
		return c
	}
	return a.turn.seq - b.turn.seq
}

// fairOrder is the order the stale instances are written in: round by
// round, each round taking the first in line of every namespace that still
// has one, the round itself in line order (new instances first, then the
// longest waiting, refused ones last). A namespace, whatever it makes stale,
// takes one place per round; while fewer namespaces than BatchSize wait, the
// first in line of each is written in the next run.
func fairOrder(stale []entry) []entry {
	slices.SortStableFunc(stale, compareTurns)
	queues := map[string][]entry{}
	var namespaces []string
	for _, e := range stale {
		if _, ok := queues[e.namespace]; !ok {
			namespaces = append(namespaces, e.namespace)
		}
		queues[e.namespace] = append(queues[e.namespace], e)
	}
	out := make([]entry, 0, len(stale))
	for len(namespaces) > 0 {
		start := len(out)
		left := namespaces[:0]
		for _, ns := range namespaces {
			q := queues[ns]
			out = append(out, q[0])
			if len(q) > 1 {
				queues[ns] = q[1:]
				left = append(left, ns)
			}
		}
		namespaces = left
		slices.SortStableFunc(out[start:], compareTurns)
	}
	return out
}

// current: the record is of this render and every object it recorded is
// live as the API server returned it. The render's object set is the
// recorded set, since the same checksum renders the same objects, and the
// record is written only when every one of them was.
func current(rec *applied.Record, checksum, namespace string, live map[objectKey]liveObject) bool {
	if rec == nil || rec.Checksum != checksum || rec.Refused != nil || len(rec.Objects) == 0 {
		return false
	}
	for _, o := range rec.Objects {
		l, ok := live[objectKey{o.Kind, namespace, o.Name}]
		if !ok || l.UID != o.UID {
			return false
		}
		if l.Generation != "" && l.Generation != "0" {
			if o.Version != "g"+l.Generation || o.Metadata != metadataDigest(l.Labels, l.Annotations, l.OwnerReferences) {
				return false
			}
		} else if o.Version != "rv"+l.ResourceVersion {
			return false
		}
	}
	return true
}

// result is what apply wrote.
type result struct {
	records          []*applied.Record
	logs             []string
	written, refused int
}

// apply renders and writes at most BatchSize stale instances. Per instance
// the objects go in instanceobjects.Kinds order (StatefulSets last) and the
// first refused write stops the rest: a StatefulSet never rolls onto a
// ConfigMap that did not land. Every other instance is written all the
// same, and nothing a tenant does makes the run fail.
func apply(ctx context.Context, w writer, module instanceobjects.Module, p planned, now time.Time) result {
	var res result
	attempted := 0
	for _, e := range p.stale {
		if attempted >= BatchSize {
			break
		}
		instance := e.instance
		attempted++
		objs, err := render(module, instance, e.namespace)
		if err != nil {
			res.logs = append(res.logs, fmt.Sprintf("instance %s/%s not rendered: %v", e.namespace, e.name, err))
			continue
		}
		rec := &applied.Record{Namespace: e.namespace, Name: e.name, UID: e.id}
		var refusal error
		var refusedObject string
		for _, o := range objs {
			_, live := p.live[objectKey{o.GetKind(), e.namespace, o.GetName()}]
			stored, err := write(ctx, w, o, live)
			if err != nil {
				refusal, refusedObject = err, kubewrite.RefOf(o).String()
				break
			}
			rec.Objects = append(rec.Objects, objectOf(stored))
		}
		if refusal == nil {
			// Everything rendered is written: what the last record lists
			// and this render no longer has goes (prune.go).
			left, ref, err := prune(ctx, w, e, pruneCandidates(e.record, objs))
			if err != nil {
				refusal, refusedObject = err, "delete of "+ref.String()
				rec.Objects = append(rec.Objects, left...)
			}
		} else {
			// The record keeps what the last one listed and this attempt
			// did not write, so the run that completes the render still
			// knows what to prune.
			rec.Objects = append(rec.Objects, notWritten(e.record, rec.Objects)...)
		}
		switch {
		case refusal != nil && kubewrite.Gone(refusal):
			// The namespace is being deleted: its instances end there.
			res.logs = append(res.logs, fmt.Sprintf("instance %s/%s: namespace is terminating or gone, nothing written", e.namespace, e.name))
			continue
		case refusal != nil && kubewrite.Conflict(refusal):
			// The object changed under every attempt: no refusal. The
			// instance stays stale (its record keeps the last checksum
			// applied), so the next run, at the latest the minute's,
			// writes it again. The record is rewritten only when this
			// attempt created an object the last one does not list, which
			// the record must keep to prune it: a rewrite runs the hook
			// again at once, and would for as long as the conflicts last.
			res.logs = append(res.logs, fmt.Sprintf("instance %s/%s: %s changed while being written, written again next run: %s", e.namespace, e.name, refusedObject, kubewrite.Refusal(refusal)))
			if e.record != nil && !listsMore(rec.Objects, e.record.Objects) {
				continue
			}
			if e.record != nil {
				rec.Checksum, rec.Refused = e.record.Checksum, e.record.Refused
			}
		case refusal != nil:
			res.refused++
			rec.Refused = &applied.Refusal{Object: refusedObject, Message: kubewrite.Refusal(refusal), Time: metav1.NewTime(now)}
			if old := e.record; old != nil && old.Refused != nil && old.Refused.Object == rec.Refused.Object &&
				(old.Refused.Message == rec.Refused.Message || now.Sub(old.Refused.Time.Time) < refusalRefresh) {
				// The same refusal again: the record stays as it is, or
				// each run would trigger the next.
				continue
			}
			// The record is the announcement: the instances hook turns it
			// into condition ObjectsApplied and the one Warning Event of
			// the refusal (reason ObjectRefused), where it already checks
			// that the namespace takes Events. This hook writes none, so a
			// refusal is announced once, in one wording.
			res.logs = append(res.logs, fmt.Sprintf("instance %s/%s: %s refused: %s", e.namespace, e.name, rec.Refused.Object, rec.Refused.Message))
		default:
			res.written++
			rec.Checksum = e.checksum
		}
		rec.Written = &metav1.Time{Time: now}
		res.records = append(res.records, rec)
	}
	return res
}

// writeAttempts bounds how often write takes a name over again.
const writeAttempts = 3

// write creates or updates one object, trying again when the object under
// its name changed between the steps of CreateOrUpdate: created by someone
// else after the create found none (AlreadyExists), changed (Conflict) or
// deleted (NotFound) after the get. An object the snapshots have (live) is
// replaced without the create, which the API server would admit in full
// before it found the name taken: an update of an instance then costs two
// requests an object instead of three; one deleted since goes back to
// CreateOrUpdate. A tenant that replaces an object with
// a look-alike without the module's labels and then deletes it races the
// take-over; recorded as a refusal, that race would leave the name empty,
// and the look-alike's deletion is no event of the bindings (they select
// by the module's labels), so nothing would run the hook again. Taken over
// in the same run, the object carries the module's labels again, and its
// next deletion is seen.
func write(ctx context.Context, w writer, o *unstructured.Unstructured, live bool) (*unstructured.Unstructured, error) {
	var err error
	for range writeAttempts {
		var stored *unstructured.Unstructured
		if live {
			stored, err = w.Replace(ctx, o)
		} else {
			stored, err = w.CreateOrUpdate(ctx, o)
		}
		if err == nil {
			return stored, nil
		}
		if !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return nil, err
		}
		live = !apierrors.IsNotFound(err)
	}
	return nil, err
}

// render renders one instance and holds every object to its namespace: an
// object anywhere else is a defect of the templates, never written.
func render(module instanceobjects.Module, instance map[string]any, namespace string) ([]*unstructured.Unstructured, error) {
	objs, err := module.Render(instance)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetNamespace() != namespace {
			return nil, fmt.Errorf("rendered %s %s in namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	return objs, nil
}

// notWritten are the objects of the last record that written does not have
// (by kind and name).
func notWritten(last *applied.Record, written []applied.Object) []applied.Object {
	if last == nil {
		return nil
	}
	have := make(map[[2]string]bool, len(written))
	for _, o := range written {
		have[[2]string{o.Kind, o.Name}] = true
	}
	var out []applied.Object
	for _, o := range last.Objects {
		if !have[[2]string{o.Kind, o.Name}] {
			out = append(out, o)
		}
	}
	return out
}

// listsMore reports whether objects has one (by kind and name) that last
// does not.
func listsMore(objects, last []applied.Object) bool {
	have := make(map[[2]string]bool, len(last))
	for _, o := range last {
		have[[2]string{o.Kind, o.Name}] = true
	}
	for _, o := range objects {
		if !have[[2]string{o.Kind, o.Name}] {
			return true
		}
	}
	return false
}

// objectOf is what the record keeps of an object the API server stored.
func objectOf(o *unstructured.Unstructured) applied.Object {
	out := applied.Object{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: string(o.GetUID())}
	if g := o.GetGeneration(); g > 0 {
		out.Version = fmt.Sprintf("g%d", g)
		owners := make([]ownerRef, 0, len(o.GetOwnerReferences()))
		for _, r := range o.GetOwnerReferences() {
			owners = append(owners, ownerRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: string(r.UID),
				Controller: r.Controller != nil && *r.Controller, BlockOwnerDeletion: r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion})
		}
		out.Metadata = metadataDigest(boundMetadata(o.GetLabels(), o.GetAnnotations(), owners))
	} else {
		out.Version = "rv" + o.GetResourceVersion()
	}
	return out
}

// recordConfigMap is the record's ConfigMap in the module namespace.
func recordConfigMap(rec *applied.Record) *corev1.ConfigMap {
	data, _ := json.Marshal(rec) // plain strings and numbers: cannot fail
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      applied.ConfigMapName(rec.UID),
			Namespace: shared.ModuleNamespace,
			Labels: map[string]string{
				"heritage":              "deckhouse",
				"module":                "managed-starrocks",
				shared.LabelServiceType: shared.ServiceTypeValue,
				shared.LabelState:       applied.State,
			},
			Annotations: map[string]string{shared.AnnotationInstance: rec.Namespace + "/" + rec.Name},
		},
		Data: map[string]string{applied.Key: string(data)},
	}
}
