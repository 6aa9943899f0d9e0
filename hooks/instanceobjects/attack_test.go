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
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// writtenFor are the writes of one instance among a run's writes.
func writtenFor(writes []string, namespace, name string) []string {
	var out []string
	for _, w := range writes {
		ns, obj, _ := strings.Cut(strings.Fields(w)[1], "/")
		if ns == namespace && strings.HasPrefix(obj, "d8ms-sr-"+name) {
			out = append(out, w)
		}
	}
	return out
}

func (c *cluster) events(t *testing.T, namespace string) []corev1.Event {
	t.Helper()
	list, err := c.fake.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(namespace).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	var out []corev1.Event
	for _, u := range list.Items {
		var e corev1.Event
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e))
		out = append(out, e)
	}
	return out
}

// bump changes every entry, so every instance must be written again.
func bump(t *testing.T, c *cluster, instances []map[string]any, v float64) {
	t.Helper()
	changed := cloneInstances(t, instances)
	for _, inst := range changed {
		inst["configuration"].(map[string]any)["catalogTrashExpireSecond"] = v
	}
	setEntries(t, c.fake, changed)
}

// A tenant gets a write of its instance refused by the API server: the run
// succeeds, the rest of that instance is not written (no StatefulSet rolls
// onto a ConfigMap that did not land), the record says which object and
// what the API server said, and the other tenant's instance is written
// whole in the same run. The same refusal again does not rewrite the
// record; once the tenant lifts it, the instance is written.
func TestARefusedWriteStopsOnlyItsInstance(t *testing.T) {
	for _, tc := range []struct {
		name string
		// object the tenant's doing makes refused, by kind and name suffix
		kind, suffix string
		verb         string
		refusal      func(o *unstructured.Unstructured) error
		words        string
	}{
		{
			name: "a ConfigMap made immutable with other data", kind: "ConfigMap", suffix: "-config", verb: "update",
			refusal: func(o *unstructured.Unstructured) error {
				return apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, o.GetName(), field.ErrorList{field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set")})
			},
			words: "field is immutable when `immutable` is set",
		},
		{
			name: "a StatefulSet re-created with another selector", kind: "StatefulSet", suffix: "", verb: "update",
			refusal: func(o *unstructured.Unstructured) error {
				return apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, o.GetName(), field.ErrorList{field.Forbidden(field.NewPath("spec"),
					"updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")})
			},
			words: "updates to statefulset spec for fields other than",
		},
		{
			name: "a ResourceQuota", kind: "Service", suffix: "", verb: "create",
			refusal: func(o *unstructured.Unstructured) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, o.GetName(), fmt.Errorf("exceeded quota: no-services, requested: services=1, used: services=0, limited: services=0"))
			},
			words: "exceeded quota: no-services",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			instances := twoTenants(t)
			a, b := instances[0], instances[1]
			aName, bName := a["name"].(string), b["name"].(string)
			c := newCluster(t, instances)
			if tc.verb == "update" {
				c.run(t) // the objects exist; the tenant then changes one
				bump(t, c, instances, 7200)
			} else {
				// the quota is there before the instance: nothing of A
				// exists yet, its creates start with the NetworkPolicy.
				c.refuse = func(verb string, o *unstructured.Unstructured) error {
					if verb == "create" && o.GetNamespace() == "team-a" && o.GetKind() != "Event" {
						return tc.refusal(o)
					}
					return nil
				}
			}
			target := "d8ms-sr-" + aName + tc.suffix
			if tc.verb == "update" {
				c.refuse = func(verb string, o *unstructured.Unstructured) error {
					if verb == "update" && o.GetKind() == tc.kind && o.GetNamespace() == "team-a" && o.GetName() == target {
						return tc.refusal(o)
					}
					return nil
				}
			}
			w := c.run(t)

			bWrites := writtenFor(w, "team-b", bName)
			assert.Len(t, bWrites, len(c.live(t, "team-b")), "the other tenant's instance is written whole in the same run")
			for _, x := range writtenFor(w, "team-a", aName) {
				assert.NotContains(t, x, "StatefulSet", "no StatefulSet is written after a refused object")
			}
			rec := record(t, c, a["uid"].(string))
			require.NotNil(t, rec.Refused, "A's record has the refusal")
			refused := tc.kind + " team-a/" + target
			if tc.verb == "create" {
				refused = "NetworkPolicy team-a/d8ms-sr-" + aName // the first object in Kinds order
			}
			assert.Equal(t, refused, rec.Refused.Object)
			assert.Contains(t, rec.Refused.Message, tc.words)
			assert.Empty(t, rec.Checksum, "the render is not applied")
			assert.Nil(t, record(t, c, b["uid"].(string)).Refused)
			assert.NotEmpty(t, record(t, c, b["uid"].(string)).Checksum)

			// The record is the announcement: the instances hook makes the
			// one Warning Event of it (condition ObjectsApplied), so this
			// hook writes none, or a refusal would be announced twice.
			assert.Empty(t, c.events(t, "team-a"), "no Event of this hook")

			c.run(t)
			assert.Empty(t, c.recordWrites(), "the same refusal again rewrites no record (which would run the hook again)")

			c.refuse = nil
			w = c.run(t)
			assert.Contains(t, w, "StatefulSet team-a/d8ms-sr-"+aName, "lifted: the instance is written")
			rec = record(t, c, a["uid"].(string))
			assert.Nil(t, rec.Refused)
			assert.NotEmpty(t, rec.Checksum)
			assert.Empty(t, c.run(t))
		})
	}
}

// namespaceTerminating is the API server's refusal of a create in a
// namespace being deleted.
func namespaceTerminating(ns string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", ns),
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "NamespaceTerminating"}}}}}
}

// A namespace being deleted gets nothing created: seen terminating in the
// snapshot, or said so by the API server. No record of a refusal, no
// Event, and the other tenant is written.
func TestATerminatingNamespaceGetsNothing(t *testing.T) {
	t.Run("seen terminating", func(t *testing.T) {
		instances := twoTenants(t)
		c := newCluster(t, instances)
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName("team-a")
		now := metav1.Now()
		ns.SetDeletionTimestamp(&now)
		_, err := c.fake.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), ns, metav1.CreateOptions{})
		require.NoError(t, err)
		w := c.run(t)
		assert.Empty(t, writtenFor(w, "team-a", instances[0]["name"].(string)))
		assert.NotEmpty(t, writtenFor(w, "team-b", instances[1]["name"].(string)))
	})
	t.Run("said so by the API server", func(t *testing.T) {
		instances := twoTenants(t)
		c := newCluster(t, instances)
		c.refuse = func(verb string, o *unstructured.Unstructured) error {
			if o.GetNamespace() == "team-a" {
				return namespaceTerminating("team-a")
			}
			return nil
		}
		w := c.run(t)
		assert.NotEmpty(t, writtenFor(w, "team-b", instances[1]["name"].(string)))
		_, err := c.fake.Resource(kindGVR("ConfigMap")).Namespace(shared.ModuleNamespace).Get(t.Context(), "applied-"+instances[0]["uid"].(string), metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "no record of an instance that is ending")
		assert.Empty(t, c.events(t, "team-a"))
	})
}

// What a tenant does to its instance's objects is undone on the next run,
// which its change triggers: whatever it leaves of the checksum
// annotations, only the objects the API server returned to the hook count.
func TestTamperedObjectsAreRestored(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   string
		suffix string
		tamper func(t *testing.T, c *cluster, o *unstructured.Unstructured)
	}{
		{"a NetworkPolicy rewritten to let everyone in", "NetworkPolicy", "", func(t *testing.T, c *cluster, o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedSlice(o.Object, []any{map[string]any{}}, "spec", "ingress"))
			c.update(t, o)
		}},
		{"an object deleted and a decoy left with the current checksum", "Service", "", func(t *testing.T, c *cluster, o *unstructured.Unstructured) {
			require.NoError(t, c.fake.Resource(kindGVR("Service")).Namespace(o.GetNamespace()).Delete(t.Context(), o.GetName(), metav1.DeleteOptions{}))
			decoy := o.DeepCopy()
			decoy.SetUID("")
			decoy.SetResourceVersion("")
			require.NoError(t, unstructured.SetNestedField(decoy.Object, "LoadBalancer", "spec", "type"))
			_, err := c.fake.Resource(kindGVR("Service")).Namespace(o.GetNamespace()).Create(t.Context(), decoy, metav1.CreateOptions{})
			require.NoError(t, err)
		}},
		{"a StatefulSet's PVC retention policy changed", "StatefulSet", "-be", func(t *testing.T, c *cluster, o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedStringMap(o.Object, map[string]string{"whenDeleted": "Delete", "whenScaled": "Delete"}, "spec", "persistentVolumeClaimRetentionPolicy"))
			c.update(t, o)
		}},
		{"a label stripped from a StatefulSet", "StatefulSet", "", func(t *testing.T, c *cluster, o *unstructured.Unstructured) {
			// The component label, which the instances hook and the
			// monitoring go by; a label change bumps no generation.
			labels := o.GetLabels()
			delete(labels, shared.LabelComponent)
			o.SetLabels(labels)
			c.update(t, o)
		}},
		{"the ownerReference removed from a PodDisruptionBudget", "PodDisruptionBudget", "", func(t *testing.T, c *cluster, o *unstructured.Unstructured) {
			o.SetOwnerReferences(nil)
			c.update(t, o)
		}},
		{"a ConfigMap's data changed", "ConfigMap", "-config", func(t *testing.T, c *cluster, o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, "priority_networks = 0.0.0.0/0\n", "data", "fe.conf"))
			c.update(t, o)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			instances := twoTenants(t)
			c := newCluster(t, instances)
			c.run(t)
			require.Empty(t, c.run(t))
			name := instances[0]["name"].(string)
			objName := "d8ms-sr-" + name + tc.suffix
			want := c.get(t, tc.kind, "team-a", objName)
			tc.tamper(t, c, want.DeepCopy())

			w := c.run(t)
			assert.Contains(t, w, tc.kind+" team-a/"+objName, "the tampered object is written again")
			assert.Empty(t, writtenFor(w, "team-b", instances[1]["name"].(string)), "only its instance")
			got := c.get(t, tc.kind, "team-a", objName)
			assert.Equal(t, content(want), content(got), "restored as rendered")
			assert.Equal(t, want.GetLabels(), got.GetLabels())
			assert.Equal(t, want.GetOwnerReferences(), got.GetOwnerReferences())
			assert.Empty(t, c.run(t), "and then left alone")
		})
	}
}

// The record of a Starrocks that is gone is deleted; a record's look-alike
// outside the module namespace is not even read.
func TestRecordsOfGoneStarrocksAreDeleted(t *testing.T) {
	instances := exampleInstances(t)
	c := newCluster(t, instances)
	c.run(t)
	for _, ns := range []string{shared.ModuleNamespace, "team-a"} {
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace(ns)
		cm.SetName("applied-11111111-2222-3333-4444-555555555555")
		cm.SetLabels(map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: "applied"})
		_, err := c.fake.Resource(kindGVR("ConfigMap")).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	assert.Empty(t, c.run(t))
	_, err := c.fake.Resource(kindGVR("ConfigMap")).Namespace(shared.ModuleNamespace).Get(t.Context(), "applied-11111111-2222-3333-4444-555555555555", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the record of a gone Starrocks is deleted")
	c.get(t, "ConfigMap", "team-a", "applied-11111111-2222-3333-4444-555555555555") // the tenant's own ConfigMap stays
	for _, inst := range instances {
		record(t, c, inst["uid"].(string)) // the live instances' records stay
	}

	// A forged record in the tenant namespace that claims the current
	// render does not stop a deleted object from coming back.
	forged, _ := json.Marshal(map[string]any{"uid": instances[0]["uid"], "checksum": record(t, c, instances[0]["uid"].(string)).Checksum})
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("team-a")
	cm.SetName("applied-" + instances[0]["uid"].(string))
	cm.SetLabels(map[string]string{shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: "applied"})
	require.NoError(t, unstructured.SetNestedField(cm.Object, string(forged), "data", "record.json"))
	_, err = c.fake.Resource(kindGVR("ConfigMap")).Namespace("team-a").Create(t.Context(), cm, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, c.fake.Resource(kindGVR("ConfigMap")).Namespace(shared.ModuleNamespace).Delete(t.Context(), "applied-"+instances[0]["uid"].(string), metav1.DeleteOptions{}))
	assert.NotEmpty(t, writtenFor(c.run(t), "team-a", instances[0]["name"].(string)))
}

// fleetOf is n instances, one per namespace (the examples' object names
// come from their entries, not from the names given here).
func fleetOf(t *testing.T, n int) []map[string]any {
	t.Helper()
	examples := exampleInstances(t)
	out := make([]map[string]any, 0, n)
	for i := range n {
		inst := cloneInstances(t, examples[i%2:i%2+1])[0]
		inst["name"] = fmt.Sprintf("%s-%d", inst["name"], i)
		inst["namespace"] = fmt.Sprintf("team-%d", i)
		inst["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		out = append(out, inst)
	}
	return out
}

// A run renders and writes at most BatchSize instances; the next runs
// (which the records written trigger) write the rest, and then nothing.
func TestARunWritesABatch(t *testing.T) {
	n := BatchSize + 5
	c := newCluster(t, fleetOf(t, n))
	instancesIn := func(writes []string) int {
		seen := map[string]bool{}
		for _, w := range writes {
			if strings.HasPrefix(w, "ConfigMap ") && strings.HasSuffix(w, "-config") {
				seen[w] = true
			}
		}
		return len(seen)
	}
	assert.Equal(t, BatchSize, instancesIn(c.run(t)))
	assert.Len(t, c.recordWrites(), BatchSize, "each written instance is recorded, which runs the hook again")
	assert.Equal(t, 5, instancesIn(c.run(t)))
	assert.Empty(t, c.run(t))
}

// Refused instances wait behind the others: a tenant whose writes are
// refused run after run never holds back another instance's batch.
func TestRefusedInstancesGoLast(t *testing.T) {
	n := BatchSize + 1
	instances := fleetOf(t, n)
	c := newCluster(t, instances)
	attempts := 0
	c.refuse = func(verb string, o *unstructured.Unstructured) error {
		if o.GetNamespace() == "team-0" && o.GetKind() != "Event" {
			attempts++
			return apierrors.NewForbidden(schema.GroupResource{Resource: "networkpolicies"}, o.GetName(), fmt.Errorf("exceeded quota: q"))
		}
		return nil
	}
	c.run(t) // team-0's instance refused, 24 others written
	require.Equal(t, 1, attempts)
	c.run(t) // the last other, then team-0's again
	require.Equal(t, 2, attempts)
	bump(t, c, instances, 7200)
	attempts = 0
	w := c.run(t)
	assert.Zero(t, attempts, "the refused instance comes after the others, beyond this batch")
	assert.Len(t, w, BatchSize*len(c.live(t, "team-1")), "a whole batch of the others is written")
	attempts = 0
	c.run(t)
	assert.Equal(t, 1, attempts, "and is tried again in the next run")
}

// A tenant's admission webhook that words its refusal differently every
// time (here a counter) does not make each run rewrite the record, which
// would start the next run for ever: the same object's refusal is kept as
// recorded for refusalRefresh, then recorded anew.
func TestARefusalWordedAnewEachTimeDoesNotLoop(t *testing.T) {
	instances := twoTenants(t)
	c := newCluster(t, instances)
	// The framework's clock is a fake one (clockwork's), still until advanced.
	clock, ok := c.f.DependencyContainer().GetClock().(interface{ Advance(time.Duration) })
	require.True(t, ok)
	calls := 0
	c.refuse = func(verb string, o *unstructured.Unstructured) error {
		if o.GetNamespace() == "team-a" && o.GetKind() == "NetworkPolicy" {
			calls++
			return apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, o.GetName(),
				fmt.Errorf("admission webhook \"tenant.example\" denied the request: attempt %d", calls))
		}
		return nil
	}
	c.run(t)
	uid := instances[0]["uid"].(string)
	assert.Contains(t, record(t, c, uid).Refused.Message, "attempt 1")
	c.run(t)
	assert.Equal(t, 2, calls, "tried again")
	assert.Empty(t, c.recordWrites(), "but the record stays: a rewrite would run the hook again")

	clock.Advance(refusalRefresh)
	c.run(t)
	assert.Contains(t, record(t, c, uid).Refused.Message, "attempt 3", "after a while the new words are recorded")
}

// Look-alikes with metadata of the wrong types (which the fake cluster,
// unlike an API server, stores as given) never fail the snapshot through
// the bindings' real jq filters: the instances are written as usual.
func TestMalformedLookAlikesFailNoSnapshot(t *testing.T) {
	instances := twoTenants(t)
	c := newCluster(t, instances)
	for i, meta := range []map[string]any{
		{"labels": map[string]any{shared.LabelServiceType: shared.ServiceTypeValue}, "annotations": "not a map", "generation": "g", "uid": int64(7), "ownerReferences": "x"},
		{"labels": map[string]any{shared.LabelServiceType: shared.ServiceTypeValue}, "annotations": map[string]any{"a": []any{int64(1)}}, "ownerReferences": []any{"x", map[string]any{"uid": int64(5), "controller": "yes"}}},
	} {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}}
		o.SetNamespace("team-a")
		o.SetName(fmt.Sprintf("look-alike-%d", i))
		_, err := c.fake.Resource(kindGVR("ConfigMap")).Namespace("team-a").Create(t.Context(), o, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	w := c.run(t)
	assert.NotEmpty(t, writtenFor(w, "team-a", instances[0]["name"].(string)))
	assert.NotEmpty(t, writtenFor(w, "team-b", instances[1]["name"].(string)))
	assert.Empty(t, c.run(t))
}

// More refused instances than a batch: each gets its turn, the batch's
// window moving on every minute, although their records (and so the
// order by refusal) stay as they are.
func TestEveryRefusedInstanceGetsItsTurn(t *testing.T) {
	n := BatchSize + 5
	c := newCluster(t, fleetOf(t, n))
	clock, ok := c.f.DependencyContainer().GetClock().(interface{ Advance(time.Duration) })
	require.True(t, ok)
	attempted := map[string]int{}
	c.refuse = func(verb string, o *unstructured.Unstructured) error {
		if o.GetKind() == "NetworkPolicy" {
			attempted[o.GetNamespace()]++
			return apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, o.GetName(), fmt.Errorf("exceeded quota: q"))
		}
		return nil
	}
	c.run(t) // a batch refused and recorded
	c.run(t) // the rest refused and recorded
	require.Len(t, attempted, n)
	clear(attempted)
	for range 6 {
		clock.Advance(time.Minute)
		c.run(t)
		assert.Empty(t, c.recordWrites(), "the same refusals: no record rewritten")
	}
	assert.Len(t, attempted, n, "every refused instance was tried again")
}

// A tenant's admission webhook may answer with anything, at any length: the
// record keeps at most 1 KiB of it, valid UTF-8 (the Event and the condition
// the instances hook makes of it quote the record).
func TestALongRefusalIsCut(t *testing.T) {
	instances := twoTenants(t)
	c := newCluster(t, instances)
	c.refuse = func(verb string, o *unstructured.Unstructured) error {
		if o.GetNamespace() == "team-a" && o.GetKind() == "NetworkPolicy" {
			return apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, o.GetName(),
				fmt.Errorf("denied: %s", strings.Repeat("\u0436", 4000)))
		}
		return nil
	}
	c.run(t)
	msg := record(t, c, instances[0]["uid"].(string)).Refused.Message
	assert.LessOrEqual(t, len(msg), 1024)
	assert.True(t, utf8.ValidString(msg))
}

// churning is a tenant's namespace with n instances, their UIDs sorting
// before any other instance's (the order the entries' ConfigMaps are read
// in), and one instance of another tenant, its UID sorting last.
func churning(t *testing.T, n int) (churner []map[string]any, victim map[string]any) {
	t.Helper()
	examples := exampleInstances(t)
	for i := range n {
		inst := cloneInstances(t, examples[:1])[0]
		inst["name"] = fmt.Sprintf("churn-%d", i)
		inst["namespace"] = "team-churn"
		inst["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		churner = append(churner, inst)
	}
	victim = cloneInstances(t, examples[1:2])[0]
	victim["namespace"] = "team-victim"
	victim["uid"] = "ffffffff-0000-0000-0000-000000000000"
	return churner, victim
}

// churn changes a value of every churner's spec, as a tenant in a loop
// does with the rights it has: each of its instances is stale again.
func churn(churner []map[string]any, round int) {
	for _, inst := range churner {
		inst["configuration"].(map[string]any)["catalogTrashExpireSecond"] = float64(3600 + round)
	}
}

// A tenant that keeps BatchSize or more of its own instances stale (it
// changes their specs in a loop, which its rights allow) does not hold
// back another tenant's instance: a new one is written in the first run
// after its entry appears, a changed one in the first run after its
// change, while the churn goes on. Each run shares its batch among the
// namespaces with stale instances, so one namespace takes at most one
// place per round.
func TestAChurningTenantHoldsBackNoOtherInstance(t *testing.T) {
	churner, victim := churning(t, BatchSize)
	c := newCluster(t, churner)
	clock, ok := c.f.DependencyContainer().GetClock().(interface{ Advance(time.Duration) })
	require.True(t, ok)
	victimName := victim["name"].(string)
	round := 0
	next := func(entries []map[string]any) []string {
		t.Helper()
		round++
		churn(churner, round)
		setEntries(t, c.fake, entries)
		clock.Advance(time.Second)
		return c.run(t)
	}
	for range 3 {
		next(churner) // the churner's instances written, and stale again
	}

	// Another tenant creates an instance while the churn goes on.
	c.addStarrocks(t, victim)
	all := append(slices.Clone(churner), victim)
	w := next(all)
	assert.NotEmpty(t, writtenFor(w, "team-victim", victimName), "the new instance is written in the first run after its entry appears")
	assert.NotEmpty(t, writtenFor(w, "team-churn", ""), "the churner still gets the rest of the batch")
	assert.NotEmpty(t, record(t, c, victim["uid"].(string)).Checksum)
	assert.Empty(t, writtenFor(next(all), "team-victim", victimName), "then it is current")

	// And changes it, while the churn goes on.
	victim["configuration"].(map[string]any)["catalogTrashExpireSecond"] = float64(7200)
	w = next(all)
	assert.Contains(t, w, "ConfigMap team-victim/d8ms-sr-"+victimName+"-config", "the change is written in the first run after it")
}

// An entry is rendered only into the namespace of the Starrocks its UID
// belongs to, under that Starrocks' name: an entry that carries one
// instance's UID but names another namespace (or name) would write objects
// owned by that instance into another tenant's namespace, over the objects
// of the instance there. Not rendered, logged; the other instances are.
func TestAnEntryNamingAnotherStarrocksIsNotRendered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(inst map[string]any)
	}{
		{"another namespace", func(inst map[string]any) { inst["namespace"] = "team-b" }},
		{"another name", func(inst map[string]any) { inst["name"] = "someone-else" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			instances := twoTenants(t)
			c := newCluster(t, instances)
			forged := cloneInstances(t, instances)
			tc.change(forged[0])
			setEntries(t, c.fake, forged)
			w := c.run(t)
			aObjects := "d8ms-sr-" + instances[0]["name"].(string)
			for _, x := range w {
				assert.NotContains(t, x, aObjects, "nothing of the entry is written anywhere")
			}
			assert.NotEmpty(t, writtenFor(w, "team-b", instances[1]["name"].(string)), "the other instance is written")
			assert.Contains(t, c.f.LoggerOutput().String(), "is team-a/"+instances[0]["name"].(string))
			_, err := c.fake.Resource(kindGVR("ConfigMap")).Namespace(shared.ModuleNamespace).Get(t.Context(), "applied-"+instances[0]["uid"].(string), metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "no record")
		})
	}
}

// A tenant replaces an instance object with a look-alike without the
// module's labels (which the bindings select by, so it is not in any
// snapshot) and deletes the look-alike while the hook takes the name over.
// The object is back in that same run, with the module's labels, so its
// next deletion is an event again; a refusal recorded for the race would
// have left the name empty until some unrelated event ran the hook.
func TestALookAlikeDeletedDuringTheTakeOverIsRestoredInTheSameRun(t *testing.T) {
	instances := twoTenants(t)
	c := newCluster(t, instances)
	c.run(t)
	name := "d8ms-sr-" + instances[0]["name"].(string)
	orig := c.get(t, "Service", "team-a", name)
	require.NoError(t, c.fake.Resource(kindGVR("Service")).Namespace("team-a").Delete(t.Context(), name, metav1.DeleteOptions{}))
	lookAlike := &unstructured.Unstructured{}
	lookAlike.SetAPIVersion("v1")
	lookAlike.SetKind("Service")
	lookAlike.SetNamespace("team-a")
	lookAlike.SetName(name)
	_, err := c.fake.Resource(kindGVR("Service")).Namespace("team-a").Create(t.Context(), lookAlike, metav1.CreateOptions{})
	require.NoError(t, err)

	deleted := false
	c.refuse = func(verb string, o *unstructured.Unstructured) error {
		if verb == "update" && o.GetKind() == "Service" && o.GetName() == name && !deleted {
			deleted = true
			require.NoError(t, c.fake.Tracker().Delete(kindGVR("Service"), "team-a", name))
			return apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name)
		}
		return nil
	}
	c.run(t)
	require.True(t, deleted, "the take-over met the deletion")
	got := c.get(t, "Service", "team-a", name)
	assert.Equal(t, orig.GetLabels(), got.GetLabels(), "back with the module's labels")
	rec := record(t, c, instances[0]["uid"].(string))
	assert.Nil(t, rec.Refused, "no refusal recorded for the race")
	assert.NotEmpty(t, rec.Checksum)
	assert.Empty(t, c.run(t), "and then current")
}

// A write that keeps meeting a 409 Conflict (the object changed between the
// steps of every attempt: a busy controller, or the API server's own retries
// of a patch running out) is no refusal: nothing is recorded for the
// instances hook to announce (condition ObjectsApplied False, a Warning
// Event), the record is not rewritten (which would run the hook again at
// once, for as long as the conflicts last), and the instance stays stale,
// so the next run writes it. The other tenant is written as usual.
func TestAConflictIsRetriedNeverRecordedAsARefusal(t *testing.T) {
	instances := twoTenants(t)
	a, b := instances[0], instances[1]
	aName := a["name"].(string)
	c := newCluster(t, instances)
	c.run(t)
	bump(t, c, instances, 7200)
	target := "d8ms-sr-" + aName
	conflicts := 0
	c.refuse = func(verb string, o *unstructured.Unstructured) error {
		if verb == "update" && o.GetKind() == "StatefulSet" && o.GetNamespace() == "team-a" && o.GetName() == target {
			conflicts++
			return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, o.GetName(),
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		return nil
	}
	before := record(t, c, a["uid"].(string))
	w := c.run(t)
	require.Positive(t, conflicts, "the StatefulSet's update met the conflict")
	assert.Contains(t, w, "StatefulSet team-b/d8ms-sr-"+b["name"].(string), "the other tenant is written")
	rec := record(t, c, a["uid"].(string))
	assert.Nil(t, rec.Refused, "a conflict is not recorded as a refusal")
	assert.Equal(t, before.Checksum, rec.Checksum, "the record still names the last render applied: the instance stays stale")
	assert.NotContains(t, c.recordWrites(), "applied-"+a["uid"].(string), "A's record is not rewritten")

	c.refuse = nil
	w = c.run(t)
	assert.Contains(t, w, "StatefulSet team-a/"+target, "the next run writes the instance")
	rec = record(t, c, a["uid"].(string))
	assert.Nil(t, rec.Refused)
	assert.NotEqual(t, before.Checksum, rec.Checksum, "the new render is applied")
}
