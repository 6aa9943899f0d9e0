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
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// FuzzValidateStarrocks drives the validation entry point (Answer with
// ValidateStarrocks, as the HTTP handler calls it) with arbitrary instances
// and classes. Properties:
//   - it never panics and never fails to answer (the class source here
//     cannot fail, so every error is a bug);
//   - a denial carries a 403 status, a non-empty message and at least one
//     cause, each with a field message;
//   - the mutating webhook's patch applies to the raw object, and the
//     patched object gets the same verdict (defaulting never changes
//     validity, because validation defaults first).
//
// Seeds live in testdata/fuzz/FuzzValidateStarrocks and in f.Add below, so
// plain `go test` runs them.
func FuzzValidateStarrocks(f *testing.F) {
	class := mustJSON(f, testClass())
	good := mustJSON(f, testInstance())
	f.Add(class, good, []byte(nil), false)
	f.Add(class, good, good, true)
	f.Add(class, []byte(`{"spec":{"starrocksClassName":"small","frontend":{"cpu":{"cores":64}}}}`), []byte(nil), false)
	f.Add(class, []byte(`{"spec":{"starrocksClassName":"small","type":"Cluster","backend":{"replicas":1,"memory":{"size":"4500Mi"}}}}`),
		[]byte(`{"spec":{"starrocksClassName":"small","type":"Cluster","backend":{"replicas":9}}}`), true)
	f.Add([]byte(`{"metadata":{"name":"small"},"spec":{"validations":[{"rule":"frontend.cpu.cores / 0 == 1","message":"m"}],"sizingPolicies":[{"cores":{"min":1,"max":4},"coreFractions":[100],"memory":{"min":"1Gi","max":"8Gi"}}]}}`),
		good, []byte(nil), false)
	f.Add([]byte(`{"metadata":{"name":"small"},"spec":{"validations":[{"rule":"configuration.nope > 1","message":""}]}}`),
		[]byte(`{"spec":{"starrocksClassName":"small","configuration":{"streamingLoadMaxMb":-1}}}`), []byte(nil), false)
	f.Add(class, []byte(`[]`), []byte(`null`), true)

	f.Fuzz(func(t *testing.T, classJSON, objJSON, oldJSON []byte, update bool) {
		// The apiserver only ever sends JSON documents; bytes that are not
		// JSON cannot even be put into an AdmissionReview.
		if !json.Valid(objJSON) || (update && !json.Valid(oldJSON)) {
			return
		}
		cls := testClass()
		if c := (&v1alpha1.StarrocksClass{}); json.Unmarshal(classJSON, c) == nil {
			c.Name = "small" // the instance must find it for the rules to run
			cls = c
		}
		h := newHandler(cls)
		// Compiled per request: fuzzed classes share a name, and the cache
		// keys by name and version.
		h.Compile = classrules.Compile

		req := &admissionv1.AdmissionRequest{UID: "fuzz", Operation: admissionv1.Create,
			Object: runtime.RawExtension{Raw: objJSON}}
		if update {
			req.Operation = admissionv1.Update
			req.OldObject = runtime.RawExtension{Raw: oldJSON}
		}
		verdict := answer(t, h, h.ValidateStarrocks, req)
		if !verdict.Allowed {
			r := verdict.Result
			if r == nil || r.Message == "" || r.Code != http.StatusForbidden {
				t.Fatalf("denial without a message or 403: %+v", r)
			}
			if r.Details == nil || len(r.Details.Causes) == 0 {
				t.Fatalf("denial without causes: %q", r.Message)
			}
			for _, c := range r.Details.Causes {
				if c.Message == "" {
					t.Fatalf("cause without a message in %q", r.Message)
				}
				if c.Field != "" && strings.HasPrefix(c.Message, c.Field) {
					t.Fatalf("cause message repeats its field %s: %q", c.Field, c.Message)
				}
			}
		}

		mut := answer(t, h, h.MutateStarrocks, req)
		if !mut.Allowed {
			t.Fatalf("the mutating webhook denied: %+v", mut.Result)
		}
		if len(mut.Patch) == 0 {
			return
		}
		p, err := jsonpatch.DecodePatch(mut.Patch)
		if err != nil {
			t.Fatalf("patch %s does not decode: %v", mut.Patch, err)
		}
		patchedObj, err := p.Apply(objJSON)
		if err != nil {
			t.Fatalf("patch %s does not apply to %s: %v", mut.Patch, objJSON, err)
		}
		again := *req
		again.Object = runtime.RawExtension{Raw: patchedObj}
		if v := answer(t, h, h.ValidateStarrocks, &again); v.Allowed != verdict.Allowed {
			t.Fatalf("verdict changed by defaulting: before allowed=%v, after allowed=%v (%+v)\nobject %s\npatched %s",
				verdict.Allowed, v.Allowed, v.Result, objJSON, patchedObj)
		}
	})
}

func answer(t *testing.T, h *Handler, review reviewFunc, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(&admissionv1.AdmissionReview{Request: req})
	if err != nil {
		t.Fatalf("marshal review: %v", err)
	}
	out, err := h.Answer(context.Background(), review, body)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if out.Response == nil || out.Response.UID != req.UID {
		t.Fatalf("response missing or for another uid: %+v", out.Response)
	}
	return out.Response
}
