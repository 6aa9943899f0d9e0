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
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// Every string of a Starrocks or StarrocksClass that reaches the module's
// values is hostile input until checked: a storage class name holding a
// second YAML document once made the chart render a ClusterRoleBinding. The
// CRD schema holds the same syntax (patterns and CEL), openapi/values.yaml
// holds it once more, and the templates quote everything; these checks give
// the webhook and the hooks a message that names the field and the rule, and
// catch objects stored before a CRD upgrade.

// MaxNameLength bounds metadata.name of a Starrocks: it is part of every
// derived object name and pod DNS name (the CRD declares the same).
const MaxNameLength = 40

// Limits of spec.network.allowedNamespaces (the CRD declares the same).
const (
	MaxAllowedNamespaces = 16
	MaxMatchLabels       = 16
)

// Rules, as named in violations.
const (
	ruleDNS1035Label    = "a DNS-1035 label: lowercase letters, digits and '-', starting with a letter, at most %d characters"
	ruleDNS1123Label    = "a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
	ruleDNS1123Sub      = "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most 253 characters"
	ruleLabelKey        = "a label key: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.'"
	ruleLabelValue      = "a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	ruleInstanceType    = "one of Standalone, Cluster"
	rulePriorityClass   = "a PriorityClass not named system-*: those are for the cluster's own components, admitted only in kube-system"
	maxShownValueLength = 80
)

// quoteValue shows a hostile value on one line and bounded, so a violation
// (and the status message built from it) never carries raw newlines.
func quoteValue(v string) string {
	if len(v) > maxShownValueLength {
		v = v[:maxShownValueLength] + "..."
	}
	return strconv.Quote(v)
}

func stringViolation(field, value, rule string, errs []string) Violation {
	msg := "must be " + rule
	if len(errs) > 0 {
		msg += ": " + strings.Join(errs, "; ")
	}
	return Violation{Field: field, Value: quoteValue(value), Rule: rule, Message: msg}
}

// isInstanceName says whether s may name a Starrocks (metadata.name, and
// the names of other instances a spec refers to): a DNS-1035 label of at
// most MaxNameLength characters.
func isInstanceName(s string) bool {
	return len(s) <= MaxNameLength && len(validation.IsDNS1035Label(s)) == 0
}

// CheckInstanceStrings checks the syntax of every string of a Starrocks that
// reaches values: its name and namespace, the class name, the storage class
// names and the namespace selectors of spec.network.
func CheckInstanceStrings(sr *v1alpha1.Starrocks) Violations {
	var vs Violations
	if errs := validation.IsDNS1035Label(sr.Name); len(errs) > 0 || len(sr.Name) > MaxNameLength {
		vs = append(vs, stringViolation("metadata.name", sr.Name, fmt.Sprintf(ruleDNS1035Label, MaxNameLength), errs))
	}
	if errs := validation.IsDNS1123Label(sr.Namespace); len(errs) > 0 {
		vs = append(vs, stringViolation("metadata.namespace", sr.Namespace, ruleDNS1123Label, errs))
	}
	if errs := validation.IsDNS1123Subdomain(sr.Spec.StarrocksClassName); len(errs) > 0 {
		vs = append(vs, stringViolation("spec.starrocksClassName", sr.Spec.StarrocksClassName, ruleDNS1123Sub, errs))
	}
	switch sr.Spec.Type {
	case "", v1alpha1.TypeStandalone, v1alpha1.TypeCluster:
	default:
		vs = append(vs, stringViolation("spec.type", string(sr.Spec.Type), ruleInstanceType, nil))
	}
	for _, c := range []struct {
		field, value string
	}{
		{"spec.frontend.persistentVolumeClaim.storageClassName", sr.Spec.Frontend.PersistentVolumeClaim.StorageClassName},
		{"spec.backend.persistentVolumeClaim.storageClassName", sr.Spec.Backend.PersistentVolumeClaim.StorageClassName},
	} {
		if c.value == "" {
			continue // the cluster default
		}
		if errs := validation.IsDNS1123Subdomain(c.value); len(errs) > 0 {
			vs = append(vs, stringViolation(c.field, c.value, ruleDNS1123Sub, errs))
		}
	}
	if sr.Spec.Network != nil {
		sels := sr.Spec.Network.AllowedNamespaces
		if len(sels) > MaxAllowedNamespaces {
			vs = append(vs, Violation{Field: "spec.network.allowedNamespaces", Value: fmt.Sprint(len(sels)),
				Rule:    fmt.Sprintf("at most %d selectors", MaxAllowedNamespaces),
				Message: fmt.Sprintf("spec.network.allowedNamespaces may list at most %d selectors", MaxAllowedNamespaces)})
		}
		for i, sel := range sels {
			field := fmt.Sprintf("spec.network.allowedNamespaces[%d].matchLabels", i)
			if len(sel.MatchLabels) == 0 || len(sel.MatchLabels) > MaxMatchLabels {
				vs = append(vs, Violation{Field: field, Value: fmt.Sprint(len(sel.MatchLabels)),
					Rule:    fmt.Sprintf("1 to %d labels", MaxMatchLabels),
					Message: fmt.Sprintf("a namespace selector needs 1 to %d labels (an empty one would select every namespace)", MaxMatchLabels)})
			}
			vs = append(vs, checkLabels(field, sel.MatchLabels)...)
		}
	}
	return vs
}

// checkLabels checks a label map: keys qualified names, values label values.
func checkLabels(field string, labels map[string]string) Violations {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var vs Violations
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			vs = append(vs, stringViolation(field, k, ruleLabelKey, errs))
			continue
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			vs = append(vs, stringViolation(field+"["+k+"]", labels[k], ruleLabelValue, errs))
		}
	}
	return vs
}

// checkClassStrings checks the strings of a class that reach the pods of its
// instances: zones, node selector, tolerations and node affinity. A value the
// apiserver would refuse in a pod template would fail the whole release.
func checkClassStrings(class *v1alpha1.StarrocksClass) Violations {
	var vs Violations
	for i, z := range class.Spec.Topology.AllowedZones {
		if errs := validation.IsValidLabelValue(z); len(errs) > 0 || z == "" {
			vs = append(vs, stringViolation(fmt.Sprintf("spec.topology.allowedZones[%d]", i), z, ruleLabelValue+" (not empty)", errs))
		}
	}
	vs = append(vs, checkLabels("spec.nodeSelector", class.Spec.NodeSelector)...)
	if pc := class.Spec.PriorityClassName; pc != "" {
		if errs := validation.IsDNS1123Subdomain(pc); len(errs) > 0 {
			vs = append(vs, stringViolation("spec.priorityClassName", pc, ruleDNS1123Sub, errs))
		} else if strings.HasPrefix(pc, "system-") {
			// Kubernetes' Priority admission plugin admits the system-
			// classes only in kube-system, and they outrank everything.
			vs = append(vs, stringViolation("spec.priorityClassName", pc, rulePriorityClass, nil))
		}
	}
	for i, tol := range class.Spec.Tolerations {
		field := fmt.Sprintf("spec.tolerations[%d]", i)
		if tol.Key != "" {
			if errs := validation.IsQualifiedName(tol.Key); len(errs) > 0 {
				vs = append(vs, stringViolation(field+".key", tol.Key, ruleLabelKey, errs))
			}
		}
		if errs := validation.IsValidLabelValue(tol.Value); len(errs) > 0 {
			vs = append(vs, stringViolation(field+".value", tol.Value, ruleLabelValue, errs))
		}
	}
	if na := class.Spec.NodeAffinity; na != nil {
		var terms []corev1.NodeSelectorTerm
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			terms = na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		}
		for i, t := range terms {
			vs = append(vs, checkRequirements(fmt.Sprintf("spec.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", i), t)...)
		}
		for i, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			vs = append(vs, checkRequirements(fmt.Sprintf("spec.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d].preference", i), p.Preference)...)
		}
	}
	return vs
}

func checkRequirements(field string, t corev1.NodeSelectorTerm) Violations {
	var vs Violations
	for i, r := range t.MatchExpressions {
		f := fmt.Sprintf("%s.matchExpressions[%d]", field, i)
		if errs := validation.IsQualifiedName(r.Key); len(errs) > 0 {
			vs = append(vs, stringViolation(f+".key", r.Key, ruleLabelKey, errs))
		}
		for j, v := range r.Values {
			// Gt/Lt take integers, which are label values too.
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				vs = append(vs, stringViolation(fmt.Sprintf("%s.values[%d]", f, j), v, ruleLabelValue, errs))
			}
		}
	}
	return vs
}
