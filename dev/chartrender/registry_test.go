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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/dev/chartrender"
)

// images are the images of every container the module makes (the webhook's
// and the instances'), by container name.
func images(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		var spec corev1.PodSpec
		switch o.GetKind() {
		case "Deployment":
			spec = typed[appsv1.Deployment](t, o).Spec.Template.Spec
		case "StatefulSet":
			spec = typed[appsv1.StatefulSet](t, o).Spec.Template.Spec
		default:
			continue
		}
		for _, c := range append(spec.InitContainers, spec.Containers...) {
			out[o.GetName()+"/"+c.Name] = c.Image
		}
	}
	return out
}

// The module's images come from where Deckhouse puts an external module's:
// <managedStarrocks.registry.base>/managed-starrocks@<digest>, as lib-helm's
// helm_lib_module_image computes it (surrounding slashes of the base trimmed),
// never from the platform's registry global.modulesImages.registry.base, for
// the webhook (chart) and the instance pods (hooks) alike. The pull Secret is
// managed-starrocks-module-registry with the ModuleSource's credentials, and
// the webhook's pods use it. Without an external registry (an embedded
// module), the platform's registry and credentials.
func TestImagesComeFromTheModulesRegistry(t *testing.T) {
	const ns = chartrender.Namespace
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	digest := func(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }
	for _, tc := range []struct {
		name      string
		registry  map[string]any
		wantRepo  string
		wantCreds string // the docker config the pull Secret holds
	}{
		{"an external module pulls from its ModuleSource's registry", chartrender.DefaultRegistry(),
			"registry.example.com/modules-source/managed-starrocks", `{"auths":{"registry.example.com":{"auth":"bW9kdWxlczpzZWNyZXQ="}}}`},
		{"without one, from the platform's", nil,
			"registry.example.com/deckhouse/ce", `{"auths":{"registry.example.com":{"auth":"cGxhdGZvcm06c2VjcmV0"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings := map[string]any{"registry": nil} // an embedded module has none
			if tc.registry != nil {
				settings["registry"] = tc.registry
			}
			vals := moduleValues(t, settings, starrocks("team-a", "olap", "Cluster"))
			objs, err := r.Render(vals, chartrender.DefaultGlobals())
			if err != nil {
				t.Fatal(err)
			}
			instances, err := chartrender.RenderInstances(vals, chartrender.DefaultGlobals())
			if err != nil {
				t.Fatal(err)
			}
			got := images(t, append(objs, instances...))
			want := map[string]byte{"webhook": 'b', "starrocks": 0, "agent": 'a'}
			if len(got) < 3 {
				t.Fatalf("images %v: want the webhook's and both StatefulSets'", got)
			}
			for name, image := range got {
				repo, d, _ := strings.Cut(image, "@")
				if repo != tc.wantRepo {
					t.Errorf("%s: image %s, want repository %s", name, image, tc.wantRepo)
				}
				if c := want[name[strings.LastIndex(name, "/")+1:]]; c != 0 && d != digest(c) {
					t.Errorf("%s: image %s, want digest %s", name, image, digest(c))
				}
			}

			reg := typed[corev1.Secret](t, mustFind(t, objs, "Secret", ns, "managed-starrocks-module-registry"))
			if reg.Type != corev1.SecretTypeDockerConfigJson {
				t.Errorf("pull Secret type %s", reg.Type)
			}
			if got := string(reg.Data[".dockerconfigjson"]); got != tc.wantCreds {
				t.Errorf("pull Secret holds %q, want %q", got, tc.wantCreds)
			}
			d := typed[appsv1.Deployment](t, mustFind(t, objs, "Deployment", ns, "webhook"))
			if ps := d.Spec.Template.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != "managed-starrocks-module-registry" {
				t.Errorf("webhook imagePullSecrets %v", ps)
			}
			// Tenant namespaces get no copy of the credentials.
			for _, o := range instances {
				if o.GetKind() == "Secret" {
					t.Errorf("Secret %s/%s rendered for an instance", o.GetNamespace(), o.GetName())
				}
			}
		})
	}
}
