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
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/images"
)

var absPath = regexp.MustCompile(`(?:^|[\s"'=])(/[A-Za-z0-9_./-]+)`)

// TestStandinImagesHoldEveryPathTheStarRocksContainersRun holds the local
// node's StarRocks stand-in images (dev/images) to the rendered
// StatefulSets: every absolute path a StarRocks container's command,
// preStop hook or working directory names exists in the image or under one
// of the container's volume mounts, so the module's commands run unchanged
// on the node.
func TestStandinImagesHoldEveryPathTheStarRocksContainersRun(t *testing.T) {
	sr := starrocks("team-b", "analytics", v1alpha1.TypeStandalone)
	objs, err := chartrender.RenderInstances(moduleValues(t, nil, sr), chartrender.DefaultGlobals())
	if err != nil {
		t.Fatal(err)
	}
	// A shared-data instance adds the CN StatefulSet.
	sharedData, rejectedBy, err := layers(t, sharedDataClassForRender(), sharedDataInstanceForRender())
	if err != nil || rejectedBy != "" {
		t.Fatalf("%v %s", err, rejectedBy)
	}
	objs = append(objs, sharedData...)
	checked := 0
	for _, o := range objs {
		if o.GetKind() != "StatefulSet" {
			continue
		}
		var pod struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &pod); err != nil {
			t.Fatal(err)
		}
		component := map[string]string{"frontend": "fe", "backend": "be", "compute": "cn"}[pod.Spec.Template.Labels["app.kubernetes.io/component"]]
		paths, err := images.StandinPaths(component)
		if err != nil {
			t.Fatalf("%s: %v", o.GetName(), err)
		}
		inImage := map[string]bool{}
		for _, p := range paths {
			inImage[p] = true
		}
		for _, c := range pod.Spec.Template.Spec.Containers {
			if c.Name != "starrocks" {
				continue
			}
			words := append(append([]string{}, c.Command...), c.Args...)
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Exec != nil {
				words = append(words, c.Lifecycle.PreStop.Exec.Command...)
			}
			if c.WorkingDir != "" {
				words = append(words, c.WorkingDir)
			}
			for _, w := range words {
				for _, m := range absPath.FindAllStringSubmatch(w, -1) {
					p := strings.TrimRight(m[1], "/")
					mounted := false
					for _, vm := range c.VolumeMounts {
						mounted = mounted || p == vm.MountPath || strings.HasPrefix(p, vm.MountPath+"/")
					}
					if !mounted && !inImage[p] {
						t.Errorf("%s container %s runs %s (in %q): not in the %s stand-in image nor under a volume mount", o.GetName(), c.Name, p, w, component)
					}
					checked++
				}
			}
		}
	}
	if checked < 6 {
		t.Fatalf("checked only %d paths: the StatefulSets were not found", checked)
	}
}
