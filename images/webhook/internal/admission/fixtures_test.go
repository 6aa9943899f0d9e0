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
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/classes"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/instances"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// classMap stands in for the informer: the e2e test runs the real one.
type classMap map[string]*v1alpha1.StarrocksClass

func (m classMap) Get(_ context.Context, name string) (*v1alpha1.StarrocksClass, error) {
	if c, ok := m[name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, classes.ErrNotFound
}

// usersMap stands in for the instances cache: class -> "ns/name". Its
// instances are older than any new one, in the order of their keys, and
// none is being deleted.
type usersMap map[string][]string

func (m usersMap) Users(_ context.Context, class string) ([]string, error) { return m[class], nil }

func (m usersMap) Decide(_ context.Context, c desired.Placed, _ string, _ bool, decide func(instances.View) bool) error {
	var keys []string
	for _, users := range m {
		keys = append(keys, users...)
	}
	sort.Strings(keys)
	var v instances.View
	for i, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		if ns == c.Namespace {
			v.Names = append(v.Names, name)
		}
		v.Live = append(v.Live, desired.Placed{Namespace: ns, Name: name, Created: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC))})
	}
	sort.Strings(v.Names)
	decide(v)
	return nil
}

func newHandler(cls ...*v1alpha1.StarrocksClass) *Handler {
	m := classMap{}
	for _, c := range cls {
		m[c.Name] = c
	}
	return &Handler{Classes: m, Instances: usersMap{}, Objects: objects{}, Compile: classrules.NewCache().Get, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func ptr[T any](v T) *T { return &v }

// testClass: two policies (1-4 cores: 2-16Gi step 1Gi, fractions 25/50/100;
// 5-16 cores: 8-64Gi step 2Gi, fraction 100), Zonal default, two
// overridable keys and a streaming-load cap in CEL.
func testClass() *v1alpha1.StarrocksClass {
	return &v1alpha1.StarrocksClass{
		ObjectMeta: metav1.ObjectMeta{Name: "small", UID: types.UID("uid-small"), Generation: 1},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyZonal},
				DefaultTopology:   v1alpha1.TopologyZonal,
			},
			SizingPolicies: []v1alpha1.SizingPolicy{
				{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}, CoreFractions: []int32{25, 50, 100},
					Memory: v1alpha1.MemoryRange{Min: resource.MustParse("2Gi"), Max: resource.MustParse("16Gi"), Step: ptr(resource.MustParse("1Gi"))}},
				{Cores: v1alpha1.CoreRange{Min: 5, Max: 16}, CoreFractions: []int32{100},
					Memory: v1alpha1.MemoryRange{Min: resource.MustParse("8Gi"), Max: resource.MustParse("64Gi"), Step: ptr(resource.MustParse("2Gi"))}},
			},
			OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyCatalogTrashExpireSecond},
			Configuration: v1alpha1.Configuration{
				StreamingLoadMaxMb:               ptr(int64(1024)),
				LoadProcessMaxMemoryLimitPercent: ptr(int32(30)),
				CatalogTrashExpireSecond:         ptr(int64(3600)),
			},
			Validations: []v1alpha1.ValidationRule{
				{Rule: "configuration.streamingLoadMaxMb <= 4096", Message: "streaming loads above 4 GiB are not offered in this class"},
			},
		},
	}
}

func component(cores int32, memory, disk string) v1alpha1.ComponentSpec {
	return v1alpha1.ComponentSpec{
		CPU:                   v1alpha1.CPUSpec{Cores: cores},
		Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(memory)},
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse(disk)},
	}
}

func testInstance() *v1alpha1.Starrocks {
	return &v1alpha1.Starrocks{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StarrocksKind},
		ObjectMeta: metav1.ObjectMeta{Name: "sales", Namespace: "analytics"},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "small",
			Type:               v1alpha1.TypeStandalone,
			Frontend:           component(2, "4Gi", "10Gi"),
			Backend:            v1alpha1.BackendSpec{ComponentSpec: component(4, "8Gi", "100Gi")},
		},
	}
}

func request(t testing.TB, op admissionv1.Operation, obj, old runtime.Object) *admissionv1.AdmissionRequest {
	t.Helper()
	req := &admissionv1.AdmissionRequest{UID: types.UID("req-1"), Operation: op}
	switch o := obj.(type) {
	case *v1alpha1.Starrocks:
		req.Kind = metav1.GroupVersionKind{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Kind: v1alpha1.StarrocksKind}
		req.Name, req.Namespace = o.Name, o.Namespace
	case *v1alpha1.StarrocksClass:
		req.Kind = metav1.GroupVersionKind{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Kind: v1alpha1.StarrocksClassKind}
		req.Name = o.Name
	case *v1alpha1.StarrocksBackup:
		req.Kind = metav1.GroupVersionKind{Group: v1alpha1.GroupName, Version: v1alpha1.Version, Kind: v1alpha1.BackupKind}
		req.Name, req.Namespace = o.Name, o.Namespace
	}
	req.Object.Raw = mustJSON(t, obj)
	if old != nil {
		req.OldObject.Raw = mustJSON(t, old)
	}
	return req
}

func reviewBody(t testing.TB, req *admissionv1.AdmissionRequest) []byte {
	t.Helper()
	return mustJSON(t, &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return raw
}

func describe(resp *admissionv1.AdmissionResponse) string {
	if resp.Allowed {
		return fmt.Sprintf("allowed (patch %s)", resp.Patch)
	}
	return "denied: " + resp.Result.Message
}
