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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// inflatedLabels are about size bytes of labels: short keys (the
// apiserver's managedFields repeats each key), values of the most a label
// value may have.
func inflatedLabels(size int) map[string]string {
	value := strings.Repeat("v", 63)
	labels := map[string]string{}
	for i := 0; i*(6+63) < size; i++ {
		labels[fmt.Sprintf("k%05d", i)] = value
	}
	return labels
}

// TestEndToEndInflatedMetadata: a tenant's Starrocks with megabytes of
// labels (made before the webhook refused them) do not slow down every
// CREATE of the cluster, and new or grown metadata past
// classrules.MaxMetadataBytes is refused, naming the fields and the rule.
//
// A webhook that read the Starrocks on each review (a LIST, as it once did)
// made each CREATE read every tenant's labels: the test counts the
// apiserver's LIST and GET requests for Starrocks during the CREATEs, which
// must stay at none whatever the objects' size, so a few objects of the
// largest labels etcd stores show it; a timing would need tens of them (40
// took about 40 CPU-seconds of the apiserver) to tell a reading webhook
// from one that does not.
func TestEndToEndInflatedMetadata(t *testing.T) {
	const bloated = 3
	ctx, dyn, kube := limitsClusterWith(t, "--max-per-namespace=0", func(ctx context.Context, dyn dynamic.Interface) {
		labels := inflatedLabels(1200 << 10)
		for i := range bloated {
			create(ctx, t, dyn, v1alpha1.StarrocksGVR, "bloat", instance(fmt.Sprintf("big%02d", i), func(sr *v1alpha1.Starrocks) {
				sr.Namespace, sr.Labels = "bloat", labels
				if i == 0 {
					sr.Finalizers = []string{"example.com/hold"}
				}
			}))
		}
	}, "bloat", "team-a")

	readsBefore := starrocksReads(ctx, t, kube)
	var took []time.Duration
	for i := range 5 {
		start := time.Now()
		create(ctx, t, dyn, v1alpha1.StarrocksGVR, "team-a", instance(fmt.Sprintf("small%d", i), func(sr *v1alpha1.Starrocks) { sr.Namespace = "team-a" }))
		took = append(took, time.Since(start))
	}
	if reads := starrocksReads(ctx, t, kube) - readsBefore; reads != 0 {
		t.Errorf("5 CREATEs with %d Starrocks of 1.2 MB labels in the cluster made %d LIST or GET requests for Starrocks: the webhook reads them on a review", bloated, reads)
	}
	slices.Sort(took)
	t.Logf("CREATE with %d Starrocks of 1.2 MB labels in the cluster: %v", bloated, took)
	if median := took[len(took)/2]; median > time.Second {
		t.Errorf("a CREATE takes %v (median of %v) with %d inflated Starrocks in the cluster: the webhook reads them", median, took, bloated)
	}

	// New metadata past the bound, and metadata grown past it, are refused.
	big := instance("inflated", func(sr *v1alpha1.Starrocks) { sr.Namespace, sr.Labels = "team-a", inflatedLabels(300<<10) })
	_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-a").Create(ctx, toUnstructured(t, big), metav1.CreateOptions{})
	want := `Starrocks "team-a/inflated" is invalid: metadata.labels, metadata.annotations: the labels and annotations take `
	rule := `more than the 262144 a Starrocks may have; keep large data elsewhere (a ConfigMap) (value `
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), rule) ||
		!strings.HasSuffix(err.Error(), "bytes; at most 262144 bytes of keys and values together)") {
		t.Fatalf("create with 300 KiB of labels: got %.400v\nwant Forbidden: %s…", err, want)
	}
	var small v1alpha1.Starrocks
	get(ctx, t, dyn, v1alpha1.StarrocksGVR, "team-a", "small0", &small)
	small.Labels = inflatedLabels(300 << 10)
	if _, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("team-a").Update(ctx, toUnstructured(t, &small), metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "metadata.labels, metadata.annotations") {
		t.Fatalf("labels grown past the bound: got %.400v, want refused", err)
	}

	// An object from before the rule still changes and goes.
	var old v1alpha1.Starrocks
	get(ctx, t, dyn, v1alpha1.StarrocksGVR, "bloat", "big00", &old)
	old.Spec.Backend.PersistentVolumeClaim.Size = q("200Gi")
	old.Finalizers = nil
	if _, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("bloat").Update(ctx, toUnstructured(t, &old), metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update an inflated instance from before the rule: %.400v", err)
	}
	if err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace("bloat").Delete(ctx, "big00", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete an inflated instance: %v", err)
	}
}

// starrocksReads is how many LIST and GET requests for Starrocks the
// apiserver has served (its apiserver_request_total counter).
func starrocksReads(ctx context.Context, t *testing.T, kube kubernetes.Interface) int {
	t.Helper()
	body, err := kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("read the apiserver's metrics: %v", err)
	}
	resource := fmt.Sprintf(`group=%q,resource=%q,`, v1alpha1.StarrocksGVR.Group, v1alpha1.StarrocksGVR.Resource)
	total := 0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, resource) ||
			!(strings.Contains(line, `verb="LIST"`) || strings.Contains(line, `verb="GET"`)) {
			continue
		}
		n, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("apiserver metric %q: %v", line, err)
		}
		total += int(n)
	}
	return total
}
