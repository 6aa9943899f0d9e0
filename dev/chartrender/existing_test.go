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

package chartrender_test

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// renderExisting renders one instance the way the hooks do once its objects
// exist: what they fix (template sizes, Certificate revision) goes in.
func renderExisting(t *testing.T, sr *v1alpha1.Starrocks, ex desired.Existing) (desired.Instance, []*unstructured.Unstructured) {
	t.Helper()
	out := desired.Compute(desired.Input{
		Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{testClass()}, ClusterDomain: "cluster.local",
		Existing: map[string]desired.Existing{desired.Key(sr.Namespace, sr.Name): ex},
	})
	if len(out.Instances) != 1 {
		t.Fatalf("instance not valid: %v", out.Results[0].Violations)
	}
	vals := checkedValues(t, out.Instances, nil)
	objs, err := renderValues(vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return out.Instances[0], objs
}

func claimSize(t *testing.T, objs []*unstructured.Unstructured, ns, name string) string {
	t.Helper()
	sts := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", ns, name))
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("%s has %d volumeClaimTemplates, want 1", name, len(sts.Spec.VolumeClaimTemplates))
	}
	q := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage()
	return q.String()
}

func TestGrownVolumesKeepTheTemplateSize(t *testing.T) {
	sr := starrocks("team-a", "olap", v1alpha1.TypeCluster)
	e, objs := renderExisting(t, sr, desired.Existing{})
	if got := claimSize(t, objs, "team-a", e.Names.BackendStatefulSet); got != "100Gi" {
		t.Errorf("new BE StatefulSet claim size %s, want the spec's 100Gi", got)
	}
	if got := claimSize(t, objs, "team-a", e.Names.FrontendStatefulSet); got != "10Gi" {
		t.Errorf("new FE StatefulSet claim size %s, want the spec's 10Gi", got)
	}

	grown := sr.DeepCopy()
	grown.Spec.Backend.PersistentVolumeClaim.Size = resource.MustParse("150Gi")
	grown.Spec.Frontend.PersistentVolumeClaim.Size = resource.MustParse("20Gi")
	e, objs = renderExisting(t, grown, desired.Existing{FrontendTemplateSize: "10Gi", BackendTemplateSize: "100Gi"})
	if got := claimSize(t, objs, "team-a", e.Names.BackendStatefulSet); got != "100Gi" {
		t.Errorf("grown BE: StatefulSet claim size %s, want the 100Gi it was created with (the apiserver refuses a change)", got)
	}
	if got := claimSize(t, objs, "team-a", e.Names.FrontendStatefulSet); got != "10Gi" {
		t.Errorf("grown FE: StatefulSet claim size %s, want the 10Gi it was created with", got)
	}
	if e.Backend.Storage.Size != "150Gi" {
		t.Errorf("values backend.storage.size %s, want the spec's 150Gi (the hooks expand the PVCs to it)", e.Backend.Storage.Size)
	}
}

func TestCertificateRenewalRollsOnlyTheFrontends(t *testing.T) {
	sr := starrocks("team-a", "olap", v1alpha1.TypeCluster)
	templates := func(revision int64) (fe, be string, annotations map[string]string) {
		e, objs := renderExisting(t, sr, desired.Existing{FrontendTemplateSize: "10Gi", BackendTemplateSize: "100Gi", CertificateRevision: revision})
		get := func(name string) *unstructured.Unstructured { return mustFind(t, objs, "StatefulSet", "team-a", name) }
		enc := func(u *unstructured.Unstructured) string {
			tpl, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
			b, _ := json.Marshal(tpl)
			return string(b)
		}
		sts := typed[appsv1.StatefulSet](t, get(e.Names.FrontendStatefulSet))
		return enc(get(e.Names.FrontendStatefulSet)), enc(get(e.Names.BackendStatefulSet)), sts.Spec.Template.Annotations
	}
	const ann = "managed-starrocks.deckhouse.io/certificate-revision"
	fe0, be0, a0 := templates(0)
	fe1, be1, _ := templates(1)
	fe2, be2, a2 := templates(2)
	fe3, _, a3 := templates(3)
	if fe0 != fe1 || be0 != be1 {
		t.Errorf("the first issuance (revision 1) changed a pod template: FE %v, BE %v", fe0 != fe1, be0 != be1)
	}
	if _, ok := a0[ann]; ok {
		t.Errorf("FE pod template before any renewal carries %s: a module upgrade would restart every FE", ann)
	}
	if fe2 == fe1 || a2[ann] != "2" {
		t.Errorf("revision 2: FE pod template changed = %v, annotation %q; want changed and \"2\"", fe2 != fe1, a2[ann])
	}
	if fe3 == fe2 || a3[ann] != "3" {
		t.Errorf("revision 3: FE pod template changed = %v, annotation %q", fe3 != fe2, a3[ann])
	}
	if be2 != be1 {
		t.Error("a renewal changed the BE pod template: the BE serves no TLS and must not restart")
	}
}
