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
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// objects is the namespace's Starrocks and StarrocksBackup objects, by
// "namespace/name".
type objects struct {
	instances map[string]*v1alpha1.Starrocks
	backups   map[string]*v1alpha1.StarrocksBackup
}

func (o objects) Instance(_ context.Context, ns, name string) (*v1alpha1.Starrocks, error) {
	return o.instances[ns+"/"+name], nil
}

func (o objects) Backup(_ context.Context, ns, name string) (*v1alpha1.StarrocksBackup, error) {
	return o.backups[ns+"/"+name], nil
}

func (o objects) BackupCount(_ context.Context, ns, instance string) (int, error) {
	n := 0
	for _, b := range o.backups {
		if b.Namespace == ns && b.Spec.InstanceName == instance {
			n++
		}
	}
	return n, nil
}

func backupClass() *v1alpha1.StarrocksClass {
	cl := testClass()
	cl.Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true, AllowedEndpoints: []string{"s3.example.com"},
		MinScheduleInterval: "1h", MaxRetention: &v1alpha1.ClassMaxRetention{KeepLast: ptr(int32(30))}}
	return cl
}

func backedInstance() *v1alpha1.Starrocks {
	sr := testInstance()
	sr.Spec.Backup = &v1alpha1.BackupSpec{
		Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com", Bucket: "team-backups",
			CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys", AccessKeyIDKey: "accessKeyID", SecretAccessKeyKey: "secretAccessKey"}},
		Schedule:  "0 3 * * *",
		Retention: &v1alpha1.BackupRetention{KeepLast: ptr(int32(7))},
	}
	return sr
}

func TestValidateStarrocksBackupPolicy(t *testing.T) {
	h := newHandler(backupClass())
	done := &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: "analytics"},
		Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseCompleted, InstanceType: v1alpha1.TypeStandalone}}
	running := &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: "running", Namespace: "analytics"},
		Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseRunning}}
	ofCluster := &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: "of-cluster", Namespace: "analytics"},
		Status: v1alpha1.StarrocksBackupStatus{Phase: v1alpha1.BackupPhaseCompleted, InstanceType: v1alpha1.TypeCluster}}
	h.Objects = objects{backups: map[string]*v1alpha1.StarrocksBackup{
		"analytics/done": done, "analytics/running": running, "analytics/of-cluster": ofCluster}}

	if resp, err := h.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, backedInstance(), nil)); err != nil || !resp.Allowed {
		t.Fatalf("valid spec.backup: %v %s", err, describe(resp))
	}
	restore := func(name string) *v1alpha1.Starrocks {
		sr := backedInstance()
		sr.Spec.Restore = &v1alpha1.RestoreSpec{BackupName: name}
		return sr
	}
	if resp, err := h.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, restore("done"), nil)); err != nil || !resp.Allowed {
		t.Fatalf("restore from a Completed backup: %v %s", err, describe(resp))
	}
	cases := []struct {
		name string
		sr   *v1alpha1.Starrocks
		want string
	}{
		{"endpoint not allowed", func() *v1alpha1.Starrocks {
			sr := backedInstance()
			sr.Spec.Backup.Storage.Endpoint = "http://10.0.0.1:9000"
			return sr
		}(), "spec.backup.storage.endpoint: the host 10.0.0.1 is not among the endpoints the class allows"},
		{"invalid cron", func() *v1alpha1.Starrocks {
			sr := backedInstance()
			sr.Spec.Backup.Schedule = "0 3 * *"
			return sr
		}(), "spec.backup.schedule: schedule \"0 3 * *\" has 4 fields"},
		{"schedule too frequent", func() *v1alpha1.Starrocks {
			sr := backedInstance()
			sr.Spec.Backup.Schedule = "*/10 * * * *"
			return sr
		}(), "more often than the class allows"},
		{"retention beyond the class", func() *v1alpha1.Starrocks {
			sr := backedInstance()
			sr.Spec.Backup.Retention.KeepLast = ptr(int32(100))
			return sr
		}(), "spec.backup.retention.keepLast: the class keeps at most 30 backups"},
		{"restore from a missing backup", restore("nope"), "there is no StarrocksBackup \"nope\" in namespace analytics"},
		{"restore from a running backup", restore("running"), "StarrocksBackup \"running\" is Running"},
		{"restore of a Cluster backup into a Standalone", restore("of-cluster"), "restore into a Cluster"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := h.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, tc.sr, nil))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Allowed || !strings.Contains(resp.Result.Message, tc.want) {
				t.Fatalf("got %s, want a denial with %q", describe(resp), tc.want)
			}
			if strings.Contains(resp.Result.Message, "\n") {
				t.Fatalf("the message spans lines: %q", resp.Result.Message)
			}
		})
	}
	// A class without a policy refuses backups.
	plain := newHandler(testClass())
	plain.Objects = h.Objects
	resp, err := plain.ValidateStarrocks(context.Background(), request(t, admissionv1.Create, backedInstance(), nil))
	if err != nil || resp.Allowed || !strings.Contains(resp.Result.Message, "does not allow backups") {
		t.Fatalf("class without a backup policy: %v %s", err, describe(resp))
	}
}

func TestValidateBackup(t *testing.T) {
	h := newHandler(backupClass())
	plain := testInstance()
	plain.Name = "plain"
	shared := sharedDataInstance()
	shared.Name, shared.Namespace = "shared", "analytics"
	h.Objects = objects{instances: map[string]*v1alpha1.Starrocks{"analytics/sales": backedInstance(), "analytics/plain": plain, "analytics/shared": shared}}
	backup := func(instance string) *v1alpha1.StarrocksBackup {
		return &v1alpha1.StarrocksBackup{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.BackupKind},
			ObjectMeta: metav1.ObjectMeta{Name: "now", Namespace: "analytics"},
			Spec:       v1alpha1.StarrocksBackupSpec{InstanceName: instance},
		}
	}
	if resp, err := h.ValidateBackup(context.Background(), request(t, admissionv1.Create, backup("sales"), nil)); err != nil || !resp.Allowed {
		t.Fatalf("backup of an instance with spec.backup: %v %s", err, describe(resp))
	}
	for _, tc := range []struct{ instance, want string }{
		{"missing", "there is no Starrocks \"missing\" in namespace analytics"},
		{"plain", "Starrocks \"plain\" has no spec.backup"},
		{"shared", "Starrocks \"shared\" keeps its tables in object storage, which StarRocks' BACKUP does not support"},
		{"sales\nkind: Secret", "spec.instanceName: must be a DNS-1035 label"},
	} {
		resp, err := h.ValidateBackup(context.Background(), request(t, admissionv1.Create, backup(tc.instance), nil))
		if err != nil || resp.Allowed || !strings.Contains(resp.Result.Message, tc.want) {
			t.Errorf("StarrocksBackup of %q: %v %s, want %q", tc.instance, err, describe(resp), tc.want)
		}
	}
	// Deletion is the finalizer's business, never refused.
	if resp, _ := h.ValidateBackup(context.Background(), request(t, admissionv1.Delete, backup("missing"), nil)); !resp.Allowed {
		t.Errorf("DELETE refused: %s", describe(resp))
	}
}

// A StarrocksBackup past its instance's limit (the class's
// spec.backup.maxBackups) is refused with the limit named; one of another
// instance or namespace is not counted.
func TestValidateBackupRefusesOneBeyondTheLimit(t *testing.T) {
	class := backupClass()
	class.Spec.Backup.MaxBackups = ptr(int32(100))
	h := newHandler(class)
	backups := map[string]*v1alpha1.StarrocksBackup{}
	add := func(ns, name, instance string) {
		backups[ns+"/"+name] = &v1alpha1.StarrocksBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.StarrocksBackupSpec{InstanceName: instance}}
	}
	for i := range 99 {
		add("analytics", fmt.Sprintf("b-%d", i), "sales")
	}
	add("analytics", "other", "events")
	add("elsewhere", "c", "sales")
	h.Objects = objects{instances: map[string]*v1alpha1.Starrocks{"analytics/sales": backedInstance()}, backups: backups}
	backup := &v1alpha1.StarrocksBackup{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.BackupKind},
		ObjectMeta: metav1.ObjectMeta{Name: "now", Namespace: "analytics"},
		Spec:       v1alpha1.StarrocksBackupSpec{InstanceName: "sales"},
	}
	if resp, err := h.ValidateBackup(context.Background(), request(t, admissionv1.Create, backup, nil)); err != nil || !resp.Allowed {
		t.Fatalf("the 100th backup of sales: %v %s", err, describe(resp))
	}
	add("analytics", "b-99", "sales")
	resp, err := h.ValidateBackup(context.Background(), request(t, admissionv1.Create, backup, nil))
	if err != nil || resp.Allowed {
		t.Fatalf("the 101st backup of sales was allowed: %v %s", err, describe(resp))
	}
	for _, want := range []string{`Starrocks "sales" has 100 StarrocksBackups`, `class "small" backup.maxBackups 100`, "delete"} {
		if !strings.Contains(resp.Result.Message, want) {
			t.Errorf("the denial does not say %q: %s", want, resp.Result.Message)
		}
	}
	if strings.Contains(resp.Result.Message, "\n") {
		t.Errorf("the message spans lines: %q", resp.Result.Message)
	}

	// A lower limit of the class.
	lowClass := backupClass()
	lowClass.Spec.Backup.MaxBackups = ptr(int32(3))
	low := newHandler(lowClass)
	low.Objects = h.Objects
	resp, err = low.ValidateBackup(context.Background(), request(t, admissionv1.Create, backup, nil))
	if err != nil || resp.Allowed || !strings.Contains(resp.Result.Message, `class "small" backup.maxBackups 3`) {
		t.Fatalf("a class with maxBackups 3: %v %s", err, describe(resp))
	}
	// Another instance of the namespace has room of its own.
	other := backup.DeepCopy()
	other.Spec.InstanceName = "events"
	events := backedInstance()
	events.Name = "events"
	low.Objects = objects{instances: map[string]*v1alpha1.Starrocks{"analytics/events": events}, backups: backups}
	if resp, err := low.ValidateBackup(context.Background(), request(t, admissionv1.Create, other, nil)); err != nil || !resp.Allowed {
		t.Fatalf("the second backup of events: %v %s", err, describe(resp))
	}
}
