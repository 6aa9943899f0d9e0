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

package realfe

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// rendered is what the module renders for an instance and a real FE needs:
// the desired state the hooks compute, and the FE's fe.conf and the agent's
// configuration from the instance's ConfigMap, as the pods mount them.
type rendered struct {
	entry  desired.Instance
	feConf string
	agent  agentconfig.Config
}

// frontendMemory is the FE size the instances of these tests order: the
// module gives the JVM 1 GiB of it (desired.JavaHeapMb), so a leader and a
// follower fit beside the other tests on a small machine.
const frontendMemory = "2Gi"

// render computes an instance's desired state with the hooks' own code
// (desired.Compute, against a class that allows it) and renders its objects
// with the instance templates (instanceobjects), exactly as the
// instanceobjects hook does.
func render(namespace, name string, opts Options) (*rendered, error) {
	typ, requireSecureTransport := opts.Type, opts.RequireSecureTransport
	sr := &v1alpha1.Starrocks{
		TypeMeta:   metav1.TypeMeta{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name), Generation: 1},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "realfe",
			Type:               typ,
			Frontend:           component(frontendMemory),
			Backend:            v1alpha1.BackendSpec{ComponentSpec: component("4Gi")},
			TLS:                &v1alpha1.TLSSpec{RequireSecureTransport: requireSecureTransport},
		},
	}
	if opts.Backup != nil {
		sr.Spec.Backup = &v1alpha1.BackupSpec{Storage: *opts.Backup}
	}
	if typ == v1alpha1.TypeCluster {
		one := int32(1)
		sr.Spec.Backend.Replicas = &one
	}
	out := desired.Compute(desired.Input{
		Instances:     []*v1alpha1.Starrocks{sr},
		Classes:       []*v1alpha1.StarrocksClass{class()},
		ClusterDomain: "cluster.local",
	})
	for _, r := range out.Results {
		if !r.Valid() {
			return nil, fmt.Errorf("instance %s is invalid for the test class: %v", r.Key, r.Violations)
		}
	}
	if len(out.Instances) != 1 {
		return nil, fmt.Errorf("desired.Compute gave %d entries, want 1", len(out.Instances))
	}
	entry := out.Instances[0]
	data, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	var values map[string]any
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, err
	}
	m := instanceobjects.Module{
		// Never pulled: the test runs the FE built from source.
		ImageRepository: "dev.managed-starrocks.invalid/deckhouse/modules/managed-starrocks",
		Digests:         map[string]string{},
		ClusterDomain:   "cluster.local",
	}
	for _, img := range instanceobjects.Images {
		m.Digests[img] = "sha256:" + strings.Repeat("0", 64)
	}
	objs, err := m.Render(values)
	if err != nil {
		return nil, fmt.Errorf("render the instance's objects: %w", err)
	}
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || o.GetName() != entry.Names.ConfigMap {
			continue
		}
		data := stringData(o.Object)
		r := &rendered{entry: entry, feConf: data["fe.conf"]}
		if r.feConf == "" {
			return nil, fmt.Errorf("ConfigMap %s has no fe.conf", entry.Names.ConfigMap)
		}
		if err := json.Unmarshal([]byte(data["agent.json"]), &r.agent); err != nil {
			return nil, fmt.Errorf("ConfigMap %s agent.json: %w", entry.Names.ConfigMap, err)
		}
		return r, nil
	}
	return nil, fmt.Errorf("no ConfigMap %s among the rendered objects", entry.Names.ConfigMap)
}

// stringData is a ConfigMap's data.
func stringData(obj map[string]any) map[string]string {
	raw, _ := obj["data"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

func component(memory string) v1alpha1.ComponentSpec {
	return v1alpha1.ComponentSpec{
		CPU:                   v1alpha1.CPUSpec{Cores: 1, CoreFraction: 100},
		Memory:                v1alpha1.MemorySpec{Size: resource.MustParse(memory)},
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse("10Gi")},
	}
}

// class allows the small instances of these tests, every configuration key
// and backups to any endpoint.
func class() *v1alpha1.StarrocksClass {
	step := resource.MustParse("1Gi")
	return &v1alpha1.StarrocksClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "StarrocksClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "realfe", Generation: 1},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored},
				DefaultTopology:   v1alpha1.TopologyIgnored,
			},
			SizingPolicies: []v1alpha1.SizingPolicy{{
				Cores:         v1alpha1.CoreRange{Min: 1, Max: 16},
				Memory:        v1alpha1.MemoryRange{Min: resource.MustParse("1Gi"), Max: resource.MustParse("64Gi"), Step: &step},
				CoreFractions: []int32{50, 100},
			}},
			OverridableConfiguration: v1alpha1.AllConfigurationKeys,
			Backup:                   &v1alpha1.ClassBackupPolicy{Allowed: true},
		},
	}
}
