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

package classrules

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// A storage class name that once made the chart render a second YAML
// document.
const yamlDocument = "fast\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"

func TestInstanceStrings(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1alpha1.Starrocks)
		field  string // empty: accepted
		rule   string
	}{
		{name: "accepts the usual strings", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Backend.PersistentVolumeClaim.StorageClassName = "ceph-rbd.fast"
			s.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "bi", "team": ""}}}}
		}},
		{name: "rejects a storage class name holding a YAML document", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Backend.PersistentVolumeClaim.StorageClassName = yamlDocument
		}, field: "spec.backend.persistentVolumeClaim.storageClassName", rule: "DNS-1123 subdomain"},
		{name: "rejects a frontend storage class name with ': '", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Frontend.PersistentVolumeClaim.StorageClassName = "a: b: c"
		}, field: "spec.frontend.persistentVolumeClaim.storageClassName", rule: "DNS-1123 subdomain"},
		{name: "rejects an upper-case class name", mutate: func(s *v1alpha1.Starrocks) { s.Spec.StarrocksClassName = "Default" },
			field: "spec.starrocksClassName", rule: "DNS-1123 subdomain"},
		{name: "rejects a name longer than 40", mutate: func(s *v1alpha1.Starrocks) { s.Name = strings.Repeat("a", 41) },
			field: "metadata.name", rule: "DNS-1035 label"},
		{name: "rejects a name starting with a digit", mutate: func(s *v1alpha1.Starrocks) { s.Name = "1st" },
			field: "metadata.name", rule: "DNS-1035 label"},
		{name: "rejects a namespace with a newline", mutate: func(s *v1alpha1.Starrocks) { s.Namespace = "ns\nkind: Secret" },
			field: "metadata.namespace", rule: "DNS-1123 label"},
		{name: "rejects an unknown type", mutate: func(s *v1alpha1.Starrocks) { s.Spec.Type = "Big" },
			field: "spec.type", rule: "Standalone, Cluster"},
		{name: "rejects a label key with a space", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{{MatchLabels: map[string]string{"a b": "x"}}}}
		}, field: "spec.network.allowedNamespaces[0].matchLabels", rule: "label key"},
		{name: "rejects a label value with '{{'", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{{MatchLabels: map[string]string{"team": "{{ .Values }}"}}}}
		}, field: "spec.network.allowedNamespaces[0].matchLabels[team]", rule: "label value"},
		{name: "rejects an empty selector, which would select every namespace", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Network = &v1alpha1.NetworkSpec{AllowedNamespaces: []v1alpha1.NamespaceSelector{{MatchLabels: map[string]string{}}}}
		}, field: "spec.network.allowedNamespaces[0].matchLabels", rule: "1 to 16 labels"},
		{name: "rejects more than 16 selectors", mutate: func(s *v1alpha1.Starrocks) {
			s.Spec.Network = &v1alpha1.NetworkSpec{}
			for range 17 {
				s.Spec.Network.AllowedNamespaces = append(s.Spec.Network.AllowedNamespaces, v1alpha1.NamespaceSelector{MatchLabels: map[string]string{"a": "b"}})
			}
		}, field: "spec.network.allowedNamespaces", rule: "at most 16"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sr := testInstance()
			tc.mutate(sr)
			vs := mustCompile(t, testClass()).Validate(sr)
			if tc.field == "" {
				if len(vs) != 0 {
					t.Fatalf("rejected: %v", vs)
				}
				return
			}
			for _, v := range vs {
				if v.Field == tc.field && strings.Contains(v.Rule, tc.rule) {
					if strings.ContainsAny(v.Error(), "\n\r") {
						t.Errorf("violation spans lines: %q", v.Error())
					}
					return
				}
			}
			t.Fatalf("violations %v, want one on %s naming %q", vs, tc.field, tc.rule)
		})
	}
}

func TestClassStrings(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1alpha1.StarrocksClass)
		field  string
	}{
		{"a zone with a newline", func(c *v1alpha1.StarrocksClass) { c.Spec.Topology.AllowedZones = []string{"a\n- b"} }, "spec.topology.allowedZones[0]"},
		{"an empty zone", func(c *v1alpha1.StarrocksClass) { c.Spec.Topology.AllowedZones = []string{""} }, "spec.topology.allowedZones[0]"},
		{"a node selector key with ': '", func(c *v1alpha1.StarrocksClass) { c.Spec.NodeSelector = map[string]string{"a: b": ""} }, "spec.nodeSelector"},
		{"a node selector value with a quote", func(c *v1alpha1.StarrocksClass) { c.Spec.NodeSelector = map[string]string{"a": `x"`} }, "spec.nodeSelector[a]"},
		{"a toleration key with a newline", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Tolerations = []corev1.Toleration{{Key: "a\nb", Operator: corev1.TolerationOpExists}}
		}, "spec.tolerations[0].key"},
		{"a priority class name holding a YAML document", func(c *v1alpha1.StarrocksClass) { c.Spec.PriorityClassName = yamlDocument }, "spec.priorityClassName"},
		{"a system- priority class", func(c *v1alpha1.StarrocksClass) { c.Spec.PriorityClassName = "system-cluster-critical" }, "spec.priorityClassName"},
		{"a node affinity value of 300 characters", func(c *v1alpha1.StarrocksClass) {
			c.Spec.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{strings.Repeat("\u044f", 150)}}},
			}}}}
		}, "spec.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]"},
	}
	t.Run("accepts a priority class", func(t *testing.T) {
		c := testClass()
		c.Spec.PriorityClassName = "production-medium"
		if _, vs := Compile(c); len(vs) != 0 {
			t.Fatalf("class problems %v", vs)
		}
	})
	for _, tc := range cases {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			c := testClass()
			tc.mutate(c)
			_, vs := Compile(c)
			for _, v := range vs {
				if v.Field == tc.field {
					return
				}
			}
			t.Fatalf("class problems %v, want one on %s", vs, tc.field)
		})
	}
}
