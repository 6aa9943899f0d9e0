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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func TestValidateStarrocks(t *testing.T) {
	tests := []struct {
		name string
		op   admissionv1.Operation
		edit func(sr *v1alpha1.Starrocks)
		old  func(sr *v1alpha1.Starrocks) // nil: no old object
		// want is empty for allowed, else substrings of the denial message.
		want []string
	}{
		{name: "admits an instance that fits its class", op: admissionv1.Create, edit: func(*v1alpha1.Starrocks) {}},
		{name: "rejects an instance of a class that does not exist", op: admissionv1.Create,
			edit: func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "huge" },
			want: []string{"spec.starrocksClassName", `StarrocksClass "huge" does not exist`}},
		{name: "rejects memory not a multiple of the policy step", op: admissionv1.Create,
			edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.Memory.Size = resource.MustParse("4500Mi") },
			want: []string{"spec.frontend.memory.size", "4500Mi", "sizingPolicies[0].memory.step 1Gi", "multiple of 1Gi"}},
		{name: "rejects a core fraction the policy does not list", op: admissionv1.Create,
			edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Backend.CPU.CoreFraction = 10 },
			want: []string{"spec.backend.cpu.coreFraction", "value 10", "coreFractions [25, 50, 100]"}},
		{name: "rejects a value breaking a class CEL rule after defaults", op: admissionv1.Create,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(8192))}
			},
			want: []string{"spec.configuration.streamingLoadMaxMb", "configuration.streamingLoadMaxMb <= 4096", "not offered in this class"}},
		{name: "rejects a BE scale-in by more than one", op: admissionv1.Update,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(3))
			},
			old: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(5))
			},
			want: []string{"spec.backend.replicas", "the smallest BE count allowed now is 4: BEs are removed one at a time", "at least 4 BEs now (was 5)"}},
		{name: "rejects a new Cluster of 2 BEs", op: admissionv1.Create,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(2))
			},
			want: []string{"spec.backend.replicas", "2 BEs cannot load data while one of them is down", "a Cluster has 1 or at least 3 BEs"}},
		{name: "rejects a BE count below the replication the old status reports", op: admissionv1.Update,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(3))
			},
			old: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(4))
				sr.Status.Replication = &v1alpha1.ReplicationStatus{MaxReplicationNum: 4, MaxReplicationTable: "shop.orders"}
			},
			want: []string{"spec.backend.replicas", "the smallest BE count allowed now is 4", "table shop.orders has replication_num 4"}},
		{name: "rejects a second BE scale-in while the first is pending", op: admissionv1.Update,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(3))
			},
			old: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(4))
				sr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionBackendScaleIn, Status: metav1.ConditionFalse, Reason: "DecommissionInProgress"}}
			},
			want: []string{"spec.backend.replicas", "the smallest BE count allowed now is 4: a BE is still being removed"}},
		{name: "admits a BE scale-in once the last one finished", op: admissionv1.Update,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(3))
			},
			old: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeCluster
				sr.Spec.Backend.Replicas = ptr(int32(4))
				sr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionBackendScaleIn, Status: metav1.ConditionTrue, Reason: "NoScaleInPending"}}
				sr.Status.Replication = &v1alpha1.ReplicationStatus{MaxReplicationNum: 3, MaxReplicationTable: "_statistics_.column_statistics"}
			}},
		{name: "rejects a shrinking volume", op: admissionv1.Update,
			edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Backend.PersistentVolumeClaim.Size = resource.MustParse("50Gi") },
			old:  func(*v1alpha1.Starrocks) {},
			want: []string{"spec.backend.persistentVolumeClaim.size", "cannot shrink"}},
		{name: "admits a metadata-only update of an instance its class no longer allows", op: admissionv1.Update,
			edit: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Frontend.Memory.Size = resource.MustParse("4500Mi")
				sr.Finalizers = nil
			},
			old: func(sr *v1alpha1.Starrocks) {
				sr.Spec.Frontend.Memory.Size = resource.MustParse("4500Mi")
				sr.Finalizers = []string{"managed-starrocks.deckhouse.io/cleanup"}
			}},
		{name: "admits any delete", op: admissionv1.Delete,
			edit: func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "huge" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(testClass())
			sr := testInstance()
			tt.edit(sr)
			var old *v1alpha1.Starrocks
			if tt.old != nil {
				old = testInstance()
				tt.old(old)
			}
			req := request(t, tt.op, sr, nil)
			if old != nil {
				req = request(t, tt.op, sr, old)
			}
			resp, err := h.ValidateStarrocks(context.Background(), req)
			if err != nil {
				t.Fatalf("ValidateStarrocks: %v", err)
			}
			if len(tt.want) == 0 {
				if !resp.Allowed {
					t.Fatalf("want allowed, got %s", describe(resp))
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("want denied with %q, got allowed", tt.want)
			}
			// Forbidden: kubectl prints the message of a Forbidden denial
			// whole, with the webhook's name (see forbidden).
			if resp.Result.Code != http.StatusForbidden || resp.Result.Reason != metav1.StatusReasonForbidden {
				t.Errorf("denial status %d %s, want 403 Forbidden", resp.Result.Code, resp.Result.Reason)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.Result.Message, w) {
					t.Errorf("denial message lacks %q:\n%s", w, resp.Result.Message)
				}
			}
			if len(resp.Result.Details.Causes) == 0 || resp.Result.Details.Causes[0].Field == "" {
				t.Errorf("denial has no field causes: %+v", resp.Result.Details)
			}
			// kubectl and API clients print "<field>: <cause message>".
			for _, c := range resp.Result.Details.Causes {
				if strings.Contains(c.Message, c.Field+":") {
					t.Errorf("cause message repeats its field %s: %q", c.Field, c.Message)
				}
			}
			if n := strings.Count(resp.Result.Message, tt.want[0]+":"); n != 1 {
				t.Errorf("denial message names %s %d times, want once:\n%s", tt.want[0], n, resp.Result.Message)
			}
		})
	}
}

func TestMutateStarrocksFillsClassDefaults(t *testing.T) {
	h := newHandler(testClass())
	sr := testInstance()
	sr.Spec.Backend.CPU.CoreFraction = 50
	req := request(t, admissionv1.Create, sr, nil)
	resp, err := h.MutateStarrocks(context.Background(), req)
	if err != nil {
		t.Fatalf("MutateStarrocks: %v", err)
	}
	if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("want an allowed JSON patch, got %s", describe(resp))
	}
	got := applyPatch(t, req.Object.Raw, resp.Patch)
	var out v1alpha1.Starrocks
	if err := json.Unmarshal(got, &out); err != nil {
		t.Fatalf("decode patched object: %v", err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"frontend coreFraction (largest of the policy)", out.Spec.Frontend.CPU.CoreFraction, int32(100)},
		{"backend coreFraction (user's, kept)", out.Spec.Backend.CPU.CoreFraction, int32(50)},
		{"topology (class default)", out.Spec.Cluster.Topology, v1alpha1.TopologyZonal},
		{"configuration (left out: follows the class, never written)", out.Spec.Configuration, (*v1alpha1.Configuration)(nil)},
		{"name (outside spec, untouched)", out.Name, "sales"},
	}
	for _, c := range checks {
		if !equalAny(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}

	// The defaulted object needs no further patch: defaulting is idempotent.
	again := request(t, admissionv1.Create, &out, nil)
	resp, err = h.MutateStarrocks(context.Background(), again)
	if err != nil || len(resp.Patch) != 0 {
		t.Fatalf("second defaulting: err %v, patch %s; want no patch", err, resp.Patch)
	}
}

func TestMutateStarrocksLeavesUnknownClassToValidation(t *testing.T) {
	h := newHandler(testClass())
	sr := testInstance()
	sr.Spec.StarrocksClassName = "huge"
	resp, err := h.MutateStarrocks(context.Background(), request(t, admissionv1.Create, sr, nil))
	if err != nil || !resp.Allowed || len(resp.Patch) != 0 {
		t.Fatalf("got err %v, %s; want allowed without patch", err, describe(resp))
	}
}

func TestMutateStarrocksPatchesRawObjectWithExplicitZeroes(t *testing.T) {
	// A client may send coreFraction: 0 and cluster: null; the patch must
	// still apply to exactly those bytes.
	h := newHandler(testClass())
	raw := []byte(`{"apiVersion":"managed-services.deckhouse.io/v1alpha1","kind":"Starrocks",
		"metadata":{"name":"sales","namespace":"analytics"},
		"spec":{"starrocksClassName":"small","type":"Standalone","cluster":null,
		"frontend":{"cpu":{"cores":2,"coreFraction":0},"memory":{"size":"4Gi"},"persistentVolumeClaim":{"size":"10Gi"}},
		"backend":{"cpu":{"cores":4},"memory":{"size":"8Gi"},"persistentVolumeClaim":{"size":"100Gi"}}}}`)
	req := &admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}
	resp, err := h.MutateStarrocks(context.Background(), req)
	if err != nil {
		t.Fatalf("MutateStarrocks: %v", err)
	}
	var out v1alpha1.Starrocks
	if err := json.Unmarshal(applyPatch(t, raw, resp.Patch), &out); err != nil {
		t.Fatal(err)
	}
	if out.Spec.Frontend.CPU.CoreFraction != 100 || out.Spec.Cluster == nil || out.Spec.Cluster.Topology != v1alpha1.TopologyZonal {
		t.Fatalf("patched spec %+v lacks the defaults", out.Spec)
	}
}

func TestValidateStarrocksClass(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *v1alpha1.StarrocksClass)
		want []string
	}{
		{name: "admits a consistent class", edit: func(*v1alpha1.StarrocksClass) {}},
		{name: "rejects a CEL rule that does not compile",
			edit: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "frontend.cpu.cores >", Message: "x"})
			},
			want: []string{"spec.validations[1].rule", "does not compile"}},
		{name: "rejects a CEL rule that is not boolean",
			edit: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "configuration.streamingLoadMaxMb + 1", Message: "x"})
			},
			want: []string{"spec.validations[1].rule", "must evaluate to bool"}},
		{name: "rejects overlapping sizing policies",
			edit: func(c *v1alpha1.StarrocksClass) { c.Spec.SizingPolicies[1].Cores.Min = 4 },
			want: []string{"spec.sizingPolicies", "overlap"}},
		{name: "rejects a default topology that is not allowed",
			edit: func(c *v1alpha1.StarrocksClass) { c.Spec.Topology.DefaultTopology = v1alpha1.TopologyTransZonal },
			want: []string{"spec.topology.defaultTopology", "TransZonal"}},
		{name: "rejects a backup job timeout beyond a week",
			edit: func(c *v1alpha1.StarrocksClass) {
				c.Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true, JobTimeout: "200h"}
			},
			want: []string{"spec.backup.jobTimeout", "whole hours from 1h to 168h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class := testClass()
			tt.edit(class)
			resp, err := newHandler().ValidateStarrocksClass(context.Background(), request(t, admissionv1.Create, class, nil))
			if err != nil {
				t.Fatalf("ValidateStarrocksClass: %v", err)
			}
			if len(tt.want) == 0 {
				if !resp.Allowed {
					t.Fatalf("want allowed, got %s", describe(resp))
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("want denied with %q, got allowed", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.Result.Message, w) {
					t.Errorf("denial message lacks %q:\n%s", w, resp.Result.Message)
				}
			}
		})
	}
}

func TestMutateStarrocksClassNormalises(t *testing.T) {
	class := testClass()
	class.Spec.SizingPolicies[0], class.Spec.SizingPolicies[1] = class.Spec.SizingPolicies[1], class.Spec.SizingPolicies[0]
	class.Spec.SizingPolicies[1].CoreFractions = []int32{100, 25, 50, 25}
	class.Spec.Topology = v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyZonal}}
	req := request(t, admissionv1.Create, class, nil)
	resp, err := newHandler().MutateStarrocksClass(context.Background(), req)
	if err != nil {
		t.Fatalf("MutateStarrocksClass: %v", err)
	}
	var out v1alpha1.StarrocksClass
	if err := json.Unmarshal(applyPatch(t, req.Object.Raw, resp.Patch), &out); err != nil {
		t.Fatal(err)
	}
	if out.Spec.SizingPolicies[0].Cores.Min != 1 || !equalAny(out.Spec.SizingPolicies[0].CoreFractions, []int32{25, 50, 100}) {
		t.Errorf("policies not sorted and deduplicated: %+v", out.Spec.SizingPolicies)
	}
	if out.Spec.Topology.DefaultTopology != v1alpha1.TopologyZonal {
		t.Errorf("default topology %q, want Zonal (the only one allowed)", out.Spec.Topology.DefaultTopology)
	}
}

func TestServeAnswersOverHTTP(t *testing.T) {
	h := newHandler(testClass())
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	sr := testInstance()
	sr.Spec.Frontend.CPU.Cores = 64
	resp, err := http.Post(srv.URL+PathValidateStarrocks, "application/json", bytes.NewReader(reviewBody(t, request(t, admissionv1.Create, sr, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
		t.Fatalf("decode response: %v", err)
	}
	if review.Response == nil || review.Response.UID != "req-1" || review.Response.Allowed {
		t.Fatalf("want a denial for uid req-1, got %+v", review.Response)
	}
	if !strings.Contains(review.Response.Result.Message, "64 cores fall into no sizing policy") {
		t.Errorf("message %q lacks the sizing policy problem", review.Response.Result.Message)
	}

	bad, err := http.Post(srv.URL+PathValidateStarrocks, "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage body answered %d, want 400", bad.StatusCode)
	}
}

func TestLookupErrorIsNotADenial(t *testing.T) {
	h := newHandler()
	h.Classes = failingClasses{}
	_, err := h.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, testInstance(), nil))
	if err == nil {
		t.Fatal("an unreachable apiserver turned into an answer; want an error so the failurePolicy applies")
	}
}

type failingClasses struct{}

func (failingClasses) Get(context.Context, string) (*v1alpha1.StarrocksClass, error) {
	return nil, errors.New("connection refused")
}

func applyPatch(t *testing.T, doc, patch []byte) []byte {
	t.Helper()
	if len(patch) == 0 {
		return doc
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("decode patch %s: %v", patch, err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("apply patch %s: %v", patch, err)
	}
	return out
}

func equalAny(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestValidateStarrocksClassDelete(t *testing.T) {
	tests := []struct {
		name  string
		users []string
		want  string // empty: allowed
	}{
		{name: "allows deleting a class no instance uses"},
		{name: "refuses deleting a class one instance uses", users: []string{"team-a/dev"},
			want: `StarrocksClass "small" is used by 1 Starrocks instance: team-a/dev. ` +
				`An instance cannot change its class; delete this instance first, then the class.`},
		{name: "names at most three instances and counts the rest", users: []string{"a/one", "a/two", "b/three", "b/four", "c/five"},
			want: `StarrocksClass "small" is used by 5 Starrocks instances: a/one, a/two, b/three and 2 more. ` +
				`An instance cannot change its class; delete these instances first, then the class.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(testClass())
			h.Instances = usersMap{"small": tt.users}
			req := request(t, admissionv1.Delete, testClass(), nil)
			req.OldObject, req.Object = req.Object, runtime.RawExtension{} // as the apiserver sends a DELETE
			resp, err := h.ValidateStarrocksClass(context.Background(), req)
			if err != nil {
				t.Fatalf("ValidateStarrocksClass: %v", err)
			}
			if tt.want == "" {
				if !resp.Allowed {
					t.Fatalf("want allowed, got %s", describe(resp))
				}
				return
			}
			if resp.Allowed || !strings.HasPrefix(resp.Result.Message, tt.want) {
				t.Fatalf("got %s\nwant denied with\n  %s", describe(resp), tt.want)
			}
			if resp.Result.Reason != metav1.StatusReasonForbidden {
				t.Errorf("reason %s, want Forbidden", resp.Result.Reason)
			}
		})
	}
}

func TestValidateStarrocksRefusesACreateBeyondMaxInstances(t *testing.T) {
	three := usersMap{"small": {"a/one", "a/two"}, "large": {"b/three"}}
	tests := []struct {
		name  string
		max   int
		users usersMap
		op    admissionv1.Operation
		want  string // empty: allowed
	}{
		{name: "allows a create below the limit", max: 4, users: three, op: admissionv1.Create},
		{name: "refuses a create at the limit, counting every class", max: 3, users: three, op: admissionv1.Create,
			want: `Starrocks "analytics/sales" cannot be created: the cluster already has 3 Starrocks instances, the most the module manages ` +
				`(ModuleConfig managed-starrocks settings.instances.maxCount: 3); ask your cluster admin.`},
		{name: "refuses a create beyond the limit (admitted while the webhook was down): the hooks manage 2 of the 3", max: 2, users: three, op: admissionv1.Create,
			want: `the cluster already has 2 Starrocks instances, the most the module manages (ModuleConfig managed-starrocks settings.instances.maxCount: 2)`},
		{name: "allows an update at the limit: the instance exists", max: 3, users: three, op: admissionv1.Update},
		{name: "no limit", max: 0, users: three, op: admissionv1.Create},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(testClass())
			h.Instances, h.MaxInstances = tt.users, tt.max
			var old runtime.Object
			sr := testInstance()
			if tt.op == admissionv1.Update {
				o := testInstance()
				o.Spec.Backend.PersistentVolumeClaim.Size = resource.MustParse("50Gi")
				old = o
			}
			resp, err := h.ValidateStarrocks(context.Background(), request(t, tt.op, sr, old))
			if err != nil {
				t.Fatalf("ValidateStarrocks: %v", err)
			}
			if tt.want == "" {
				if !resp.Allowed {
					t.Fatalf("want allowed, got %s", describe(resp))
				}
				return
			}
			if resp.Allowed || !strings.Contains(resp.Result.Message, tt.want) {
				t.Fatalf("got %s\nwant denied with\n  %s", describe(resp), tt.want)
			}
			if resp.Result.Code != http.StatusForbidden || resp.Result.Reason != metav1.StatusReasonForbidden {
				t.Errorf("code %d reason %s, want 403 Forbidden", resp.Result.Code, resp.Result.Reason)
			}
		})
	}
}

func TestValidateStarrocksRefusesACreateThatSharesANameOrPassesTheNamespaceShare(t *testing.T) {
	tests := []struct {
		name     string
		perNS    int
		max      int
		users    usersMap
		instance string
		op       admissionv1.Operation
		want     string // empty: allowed
	}{
		{name: "refuses the BE StatefulSet name of another instance", users: usersMap{"small": {"analytics/sales", "other/x"}}, instance: "sales-be", op: admissionv1.Create,
			want: `Starrocks "analytics/sales-be" cannot be created: Starrocks "sales" of this namespace already uses the name of StatefulSet d8ms-sr-sales-be, which this instance would use too ` +
				`(two instances of a namespace never share an object name); choose another name.`},
		{name: "refuses a name whose suffixed objects another instance has", users: usersMap{"large": {"analytics/sales-agent"}}, instance: "sales", op: admissionv1.Create,
			want: `Starrocks "sales-agent" of this namespace already uses the name of Secret d8ms-sr-sales-agent-credentials`},
		{name: "allows the same names in another namespace", users: usersMap{"small": {"other/sales"}}, instance: "sales-be", op: admissionv1.Create},
		{name: "allows a name that only starts with another", users: usersMap{"small": {"analytics/sales"}}, instance: "salesforce", op: admissionv1.Create},
		{name: "refuses a create at the namespace share", perNS: 2, users: usersMap{"small": {"analytics/a", "other/c"}, "large": {"analytics/b"}}, instance: "sales", op: admissionv1.Create,
			want: `Starrocks "analytics/sales" cannot be created: namespace "analytics" already has 2 Starrocks instances, the most the module manages in one namespace ` +
				`(ModuleConfig managed-starrocks settings.instances.maxPerNamespace: 2); ask your cluster admin.`},
		// The hooks leave a/b and a/c unmanaged (past the share of 1):
		// they take no place under maxCount.
		{name: "instances past a namespace's share take no place under maxCount", perNS: 1, max: 2,
			users: usersMap{"small": {"a/a", "a/b", "a/c"}}, instance: "sales", op: admissionv1.Create},
		{name: "refuses past maxCount counting the managed only", perNS: 1, max: 2,
			users: usersMap{"small": {"a/a", "a/b", "a/c", "b/x"}}, instance: "sales", op: admissionv1.Create,
			want: `the cluster already has 2 Starrocks instances, the most the module manages (ModuleConfig managed-starrocks settings.instances.maxCount: 2)`},
		{name: "allows a create below the namespace share", perNS: 2, users: usersMap{"small": {"analytics/a", "other/c", "other/d"}}, instance: "sales", op: admissionv1.Create},
		{name: "allows an update at the share", perNS: 1, users: usersMap{"small": {"analytics/sales"}}, instance: "sales", op: admissionv1.Update},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(testClass())
			h.Instances, h.MaxPerNamespace, h.MaxInstances = tt.users, tt.perNS, tt.max
			var old runtime.Object
			sr := testInstance()
			sr.Name = tt.instance
			if tt.op == admissionv1.Update {
				o := sr.DeepCopy()
				o.Spec.Backend.PersistentVolumeClaim.Size = resource.MustParse("50Gi")
				old = o
			}
			resp, err := h.ValidateStarrocks(context.Background(), request(t, tt.op, sr, old))
			if err != nil {
				t.Fatalf("ValidateStarrocks: %v", err)
			}
			if tt.want == "" {
				if !resp.Allowed {
					t.Fatalf("want allowed, got %s", describe(resp))
				}
				return
			}
			if resp.Allowed || !strings.Contains(resp.Result.Message, tt.want) {
				t.Fatalf("got %s\nwant denied with\n  %s", describe(resp), tt.want)
			}
			if resp.Result.Code != http.StatusForbidden {
				t.Errorf("code %d, want 403", resp.Result.Code)
			}
		})
	}
}

func TestValidateStarrocksBoundsTheMetadata(t *testing.T) {
	labels := func(n int) map[string]string {
		out := map[string]string{}
		for i := 0; i*(6+63) < n; i++ {
			out[fmt.Sprintf("k%05d", i)] = strings.Repeat("v", 63)
		}
		return out
	}
	big, small := labels(300<<10), labels(1<<10)
	tests := []struct {
		name     string
		op       admissionv1.Operation
		old, new map[string]string
		deleting bool
		refused  bool
	}{
		{name: "refuses a create past the bound", op: admissionv1.Create, new: big, refused: true},
		{name: "allows a create within it", op: admissionv1.Create, new: small},
		{name: "refuses labels grown past it (a metadata-only update)", op: admissionv1.Update, old: small, new: big, refused: true},
		{name: "allows an object from before the rule to keep its labels", op: admissionv1.Update, old: big, new: big},
		{name: "allows an object from before the rule to shrink", op: admissionv1.Update, old: big, new: labels(290 << 10)},
		{name: "allows an object being deleted", op: admissionv1.Update, old: small, new: big, deleting: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(testClass())
			sr := testInstance()
			sr.Labels = tt.new
			if tt.deleting {
				now := metav1.Now()
				sr.DeletionTimestamp = &now
			}
			var old runtime.Object
			if tt.op == admissionv1.Update {
				o := testInstance()
				o.Labels = tt.old
				old = o
			}
			resp, err := h.ValidateStarrocks(context.Background(), request(t, tt.op, sr, old))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.refused {
				if !resp.Allowed {
					t.Fatalf("want allowed, got %s", describe(resp))
				}
				return
			}
			want := `Starrocks "analytics/sales" is invalid: metadata.labels, metadata.annotations: the labels and annotations take `
			if resp.Allowed || !strings.HasPrefix(resp.Result.Message, want) || !strings.HasSuffix(resp.Result.Message, "bytes; at most 262144 bytes of keys and values together)") {
				t.Fatalf("got %s\nwant denied with %s…", describe(resp), want)
			}
		})
	}
}
