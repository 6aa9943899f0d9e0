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
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func sharedDataClass() *v1alpha1.StarrocksClass {
	c := testClass()
	c.Spec.SharedData = &v1alpha1.ClassSharedData{Allowed: true, AllowedEndpoints: []string{"s3.example.com"}, MinReplicas: 1, MaxReplicas: 6}
	return c
}

func sharedDataInstance() *v1alpha1.Starrocks {
	sr := testInstance()
	sr.UID = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
	sr.Spec.Backend = v1alpha1.BackendSpec{}
	sr.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
		Endpoint: "https://s3.example.com", Bucket: "team-olap", Prefix: "starrocks",
		CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"},
	}}
	sr.Spec.Compute = &v1alpha1.ComputeSpec{CPU: v1alpha1.CPUSpec{Cores: 4}, Memory: v1alpha1.MemorySpec{Size: resource.MustParse("8Gi")},
		Replicas: ptr(int32(2)), Cache: v1alpha1.CacheVolumeSpec{Size: resource.MustParse("50Gi")}}
	return sr
}

func snapshotSource() *v1alpha1.ClusterSnapshotSource {
	return &v1alpha1.ClusterSnapshotSource{Namespace: "team-a", InstanceName: "olap", InstanceUID: "11112222-3333-4444-5555-666677778888"}
}

func TestValidateSharedData(t *testing.T) {
	tests := []struct {
		name string
		edit func(*v1alpha1.Starrocks)
		old  func(*v1alpha1.Starrocks) // nil: a create; the old object starts as sharedDataInstance
		want []string                  // empty: allowed
	}{
		{name: "admits a shared-data instance", edit: func(*v1alpha1.Starrocks) {}},
		{name: "refuses CNs beyond the class", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Replicas = ptr(int32(7)) },
			want: []string{"spec.compute.replicas", "the class allows 1 to 6 compute nodes"}},
		{name: "refuses a backup schedule", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Backup = &v1alpha1.BackupSpec{Schedule: "0 3 * * *"} },
			want: []string{"spec.backup", "cluster snapshots protect"}},
		{name: "refuses an endpoint the class does not allow", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Endpoint = "http://10.0.0.1:9000" },
			want: []string{"spec.storage.objectStorage.endpoint", "not among the endpoints"}},
		{name: "refuses another prefix", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Prefix = "elsewhere" },
			old: func(*v1alpha1.Starrocks) {}, want: []string{"spec.storage.objectStorage.prefix", "read-only"}},
		{name: "refuses another bucket", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.ObjectStorage.Bucket = "other-bucket" },
			old: func(*v1alpha1.Starrocks) {}, want: []string{"spec.storage.objectStorage.bucket", "read-only"}},
		{name: "refuses local storage for a shared-data instance", edit: func(sr *v1alpha1.Starrocks) {
			*sr = *testInstance()
		}, old: func(*v1alpha1.Starrocks) {}, want: []string{"spec.storage.mode", "cannot convert"}},
		{name: "admits new credentials", edit: func(sr *v1alpha1.Starrocks) {
			sr.Spec.Storage.ObjectStorage.CredentialsSecretRef.Name = "s3-keys-rotated"
		}, old: func(*v1alpha1.Starrocks) {}},
		{name: "admits another CN count", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Compute.Replicas = ptr(int32(4)) }, old: func(*v1alpha1.Starrocks) {}},
		{name: "admits a restore from a cluster snapshot", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.RestoreFrom = snapshotSource() }},
		{name: "refuses a hostile restore source", edit: func(sr *v1alpha1.Starrocks) {
			sr.Spec.Storage.RestoreFrom = snapshotSource()
			sr.Spec.Storage.RestoreFrom.InstanceUID = "*/meta"
		}, want: []string{"spec.storage.restoreFrom.instanceUID", "a UID"}},
		{name: "refuses a restore source for a local instance", edit: func(sr *v1alpha1.Starrocks) {
			*sr = *testInstance()
			sr.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageLocal, RestoreFrom: snapshotSource()}
		}, want: []string{"spec.storage.restoreFrom", "restored from a BACKUP"}},
		{name: "refuses a restore source added later", edit: func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.RestoreFrom = snapshotSource() },
			old: func(*v1alpha1.Starrocks) {}, want: []string{"spec.storage.restoreFrom", "only when the instance is created"}},
		{name: "refuses a restore source removed", edit: func(*v1alpha1.Starrocks) {},
			old: func(sr *v1alpha1.Starrocks) { sr.Spec.Storage.RestoreFrom = snapshotSource() }, want: []string{"spec.storage.restoreFrom", "only when the instance is created"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(sharedDataClass())
			sr := sharedDataInstance()
			tt.edit(sr)
			op, req := admissionv1.Create, (*admissionv1.AdmissionRequest)(nil)
			if tt.old != nil {
				old := sharedDataInstance()
				tt.old(old)
				op = admissionv1.Update
				req = request(t, op, sr, old)
			} else {
				req = request(t, op, sr, nil)
			}
			resp, err := h.ValidateStarrocks(context.Background(), req)
			if err != nil {
				t.Fatal(err)
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

// TestMutateSharedDataDefaultsTheCNCoreFraction: the CN core fraction is
// written like the FE's and BE's, and no empty backend appears.
func TestMutateSharedDataDefaultsTheCNCoreFraction(t *testing.T) {
	h := newHandler(sharedDataClass())
	sr := sharedDataInstance()
	resp, err := h.MutateStarrocks(context.Background(), request(t, admissionv1.Create, sr, nil))
	if err != nil || !resp.Allowed {
		t.Fatalf("%v %s", err, describe(resp))
	}
	var ops []PatchOp
	if err := json.Unmarshal(resp.Patch, &ops); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, op := range ops {
		paths = append(paths, op.Path)
		if strings.HasPrefix(op.Path, "/spec/backend") {
			t.Errorf("patch touches the backend of a shared-data instance: %+v", op)
		}
	}
	if !strings.Contains(strings.Join(paths, " "), "/spec/compute/cpu/coreFraction") {
		t.Errorf("patch %s lacks the CN core fraction", resp.Patch)
	}
}
