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

package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// createAtOnce sends the CREATE of every instance at the same moment and
// returns the keys ("namespace/name") the apiserver admitted, sorted, and
// the refusals by key. Anything but an admission or a Forbidden from the
// webhook fails the test.
func createAtOnce(ctx context.Context, t *testing.T, dyn dynamic.Interface, srs []*v1alpha1.Starrocks) ([]string, map[string]string) {
	t.Helper()
	var (
		mu       sync.Mutex
		admitted []string
		refused  = map[string]string{}
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	for _, sr := range srs {
		obj := toUnstructured(t, sr)
		wg.Go(func() {
			<-start
			_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(sr.Namespace).Create(ctx, obj, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			key := sr.Namespace + "/" + sr.Name
			switch {
			case err == nil:
				admitted = append(admitted, key)
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), validateSRName):
				refused[key] = err.Error()
			default:
				t.Errorf("create %s: %v", key, err)
			}
		})
	}
	close(start)
	wg.Wait()
	sort.Strings(admitted)
	return admitted, refused
}

// TestEndToEndABurstOfCreatesTakesNoMoreThanTheLimits sends CREATEs at once
// to the real webhook through a real kube-apiserver: however many arrive
// together, no more are admitted than the namespace's share and the
// cluster's limit leave, and those refused hear why.
func TestEndToEndABurstOfCreatesTakesNoMoreThanTheLimits(t *testing.T) {
	var teams []string
	for i := range 20 {
		teams = append(teams, fmt.Sprintf("team-%02d", i))
	}
	ctx, dyn := limitsCluster(t, "--max-per-namespace=2 --max-instances=6", teams...)

	var burst []*v1alpha1.Starrocks
	for i := range 12 {
		burst = append(burst, instance(fmt.Sprintf("db%02d", i), func(sr *v1alpha1.Starrocks) { sr.Namespace = teams[0] }))
	}
	admitted, refused := createAtOnce(ctx, t, dyn, burst)
	if len(admitted) != 2 {
		t.Fatalf("12 CREATEs at once in one namespace with a share of 2: %d admitted %v, want 2", len(admitted), admitted)
	}
	for key, msg := range refused {
		if !strings.Contains(msg, `namespace "team-00" already has 2 Starrocks instances, the most the module manages in one namespace`) {
			t.Errorf("%s refused with %q, want the namespace's share named", key, msg)
		}
	}

	// 40 at once, two per namespace, with 4 places left in the cluster.
	burst = nil
	for _, team := range teams {
		for i := range 2 {
			burst = append(burst, instance(fmt.Sprintf("db%d", i), func(sr *v1alpha1.Starrocks) { sr.Namespace = team }))
		}
	}
	admitted, refused = createAtOnce(ctx, t, dyn, burst)
	if len(admitted) != 4 {
		t.Fatalf("40 CREATEs at once with 4 places left under --max-instances=6: %d admitted %v, want 4", len(admitted), admitted)
	}
	for key, msg := range refused {
		if !strings.Contains(msg, "the cluster already has 6 Starrocks instances, the most the module manages") &&
			!strings.Contains(msg, "already has 2 Starrocks instances, the most the module manages in one namespace") {
			t.Errorf("%s refused with %q, want a limit named", key, msg)
		}
	}
}

// TestEndToEndInstancesBeyondALimitTakeNoPlace: instances the hooks leave
// unmanaged because their namespace is past its share (made while the
// webhook was down) take no place under the cluster's limit, so one tenant
// cannot lock every other out.
func TestEndToEndInstancesBeyondALimitTakeNoPlace(t *testing.T) {
	ctx, dyn, _ := limitsClusterWith(t, "--max-per-namespace=1 --max-instances=3", func(ctx context.Context, dyn dynamic.Interface) {
		for _, name := range []string{"one", "two", "three"} {
			create(ctx, t, dyn, v1alpha1.StarrocksGVR, "team-a", instance(name, func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-a" }))
		}
		// Being deleted: ending, it holds no place either.
		create(ctx, t, dyn, v1alpha1.StarrocksGVR, "team-d", instance("held", func(sr *v1alpha1.Starrocks) {
			sr.Namespace, sr.Finalizers = "team-d", []string{"example.com/hold"}
		}))
		if err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-d").Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete held: %v", err)
		}
	}, "team-a", "team-b", "team-c", "team-d")

	// team-a holds one place (its oldest); b and c get theirs.
	time.Sleep(1100 * time.Millisecond) // a later creation second than team-a's
	create(ctx, t, dyn, v1alpha1.StarrocksGVR, "team-b", instance("first", func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-b" }))
	create(ctx, t, dyn, v1alpha1.StarrocksGVR, "team-c", instance("first", func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-c" }))
	_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-d").Create(ctx, toUnstructured(t, instance("first", func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-d" })), metav1.CreateOptions{})
	want := `Starrocks "team-d/first" cannot be created: the cluster already has 3 Starrocks instances, the most the module manages (ModuleConfig managed-starrocks settings.instances.maxCount: 3); ask your cluster admin.`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("fourth managed instance: got %v\nwant %s", err, want)
	}
	_, err = dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-a").Create(ctx, toUnstructured(t, instance("four", func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-a" })), metav1.CreateOptions{})
	want = `namespace "team-a" already has 1 Starrocks instance, the most the module manages in one namespace (ModuleConfig managed-starrocks settings.instances.maxPerNamespace: 1)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("team-a past its share: got %v\nwant %s", err, want)
	}

	// StarRocks' system databases are refused by the CRD already.
	sys := withAccounts("sys", func(sr *v1alpha1.Starrocks) {
		sr.Namespace = "team-b"
		sr.Spec.Databases = append(sr.Spec.Databases, v1alpha1.Database{Name: "information_schema"})
		sr.Spec.Roles[0].Privileges = append(sr.Spec.Roles[0].Privileges, v1alpha1.Privilege{Database: "sys", Object: v1alpha1.OnDatabase, Privileges: []string{"DROP"}})
	})
	_, err = dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-b").Create(ctx, toUnstructured(t, sys), metav1.CreateOptions{})
	if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.databases[1]: Invalid value: name: information_schema and sys are StarRocks system databases, reserved") ||
		!strings.Contains(err.Error(), "spec.roles[0].privileges[1]: Invalid value: database: information_schema and sys are StarRocks system databases, reserved") {
		t.Fatalf("system databases declared: got %v, want the CRD's refusal of both", err)
	}
}
