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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What users may order, published cluster-wide by the platform admin: the
// sizes, topologies and parameters of StarRocks instances, the defaults they
// get, rules every instance must satisfy and where the pods run. A class
// that instances use cannot be deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=srclass,categories=managed-services
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Default topology",type=string,JSONPath=`.spec.topology.defaultTopology`
// +kubebuilder:printcolumn:name="Policies",type=integer,JSONPath=`.status.sizingPolicyCount`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StarrocksClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// What the admin publishes: sizing policies, topologies, configuration
	// defaults and what users may override, validation rules, placement.
	Spec StarrocksClassSpec `json:"spec"`
	// What the module reports. Written by the module only.
	// +optional
	Status StarrocksClassStatus `json:"status,omitempty"`
}

// StarrocksClassSpec is what an admin publishes.
type StarrocksClassSpec struct {
	// Topologies users may choose and the one they get by default.
	Topology ClassTopology `json:"topology"`

	// Allowed sizes of the FE and BE components. The core ranges of different
	// policies must not overlap, so every size falls into at most one policy.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, a.cores.min <= b.cores.max && b.cores.min <= a.cores.max))",message="spec.sizingPolicies: core ranges [cores.min, cores.max] of two policies overlap; every core count must fall into at most one policy"
	// +listType=atomic
	SizingPolicies []SizingPolicy `json:"sizingPolicies"`

	// CEL rules over the resulting `configuration`, `frontend` and `backend`
	// of an instance (after class defaults and user overrides) and its
	// declared `databases`, `roles` and `users`. An instance that breaks a
	// rule is rejected with the rule's message.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Validations []ValidationRule `json:"validations,omitempty"`

	// Configuration keys users may set in `Starrocks.spec.configuration`. Keys
	// not listed always take the class default.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	OverridableConfiguration []ConfigurationKey `json:"overridableConfiguration,omitempty"`

	// Default configuration of every instance of the class.
	// +optional
	Configuration Configuration `json:"configuration,omitempty"`

	// Node labels the instance pods must match.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Node affinity of the instance pods.
	// +optional
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`

	// Tolerations of the instance pods.
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// PriorityClass of the instance pods: how they rank against the
	// cluster's other workloads when the scheduler preempts. Without it the
	// pods get the cluster's default priority and preempt nobody. The
	// PriorityClass must exist, or no pod of an instance is admitted; a
	// `system-` class is refused (Kubernetes admits those only in
	// kube-system).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('system-')",message="spec.priorityClassName: a system- PriorityClass is for the cluster's own components (Kubernetes admits it only in kube-system)"
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// Limits on the databases, roles and users instances declare.
	// +optional
	Accounts *ClassAccounts `json:"accounts,omitempty"`

	// Backup policy: whether instances may back up and restore, to which
	// endpoints, how often and how long. Without it, backups are refused.
	// +optional
	Backup *ClassBackupPolicy `json:"backup,omitempty"`

	// Shared-data policy: whether instances may keep their tables in
	// object storage (spec.storage.mode ObjectStorage), at which
	// endpoints, with which CN sizes, counts and cache volumes. Without
	// it, such instances are refused.
	// +optional
	SharedData *ClassSharedData `json:"sharedData,omitempty"`
}

// ClassTopology limits the topologies of instances.
// +kubebuilder:validation:XValidation:rule="self.allowedTopologies.exists(t, t == self.defaultTopology)",message="spec.topology.defaultTopology must be one of spec.topology.allowedTopologies"
type ClassTopology struct {
	// Topologies users may choose.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	AllowedTopologies []Topology `json:"allowedTopologies"`

	// Topology of instances that do not choose one.
	DefaultTopology Topology `json:"defaultTopology"`

	// Zones (`topology.kubernetes.io/zone` values) instance pods may run in.
	// Empty means any zone. Each is a label value.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	// +listType=set
	// +optional
	AllowedZones []string `json:"allowedZones,omitempty"`
}

// One allowed range of component sizes: a core range, the memory allowed
// with it and the guaranteed core fractions.
type SizingPolicy struct {
	// Range of CPU cores this policy covers.
	Cores CoreRange `json:"cores"`

	// Memory allowed with these cores.
	Memory MemoryRange `json:"memory"`

	// Allowed guaranteed shares of the cores, in percent: the CPU request is
	// cores * coreFraction / 100, the limit is cores.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100
	// +listType=set
	CoreFractions []int32 `json:"coreFractions"`
}

// CoreRange is an inclusive range of CPU cores.
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="cores.min must not be greater than cores.max"
type CoreRange struct {
	// Smallest number of cores the policy covers (inclusive).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Min int32 `json:"min"`
	// Largest number of cores the policy covers (inclusive).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Max int32 `json:"max"`
}

// MemoryRange is an inclusive range of memory sizes with a step. That min <=
// max and step > 0 is checked by the admission webhook and the hooks
// (pkg/classrules): quantity comparisons inside a list exceed the CEL cost
// budget of a CRD.
type MemoryRange struct {
	// Smallest allowed memory size.
	Min resource.Quantity `json:"min"`
	// Largest allowed memory size.
	Max resource.Quantity `json:"max"`
	// Memory sizes must be a multiple of the step. Empty means any size.
	// +optional
	Step *resource.Quantity `json:"step,omitempty"`
}

// One rule of the admin, written in CEL, and the message users see when it
// does not hold.
type ValidationRule struct {
	// A CEL expression that must evaluate to true. Variables: `configuration`
	// (streamingLoadMaxMb, loadProcessMaxMemoryLimitPercent,
	// catalogTrashExpireSecond), `frontend` and `backend` (cpu.cores,
	// cpu.coreFraction, memory.size and persistentVolumeClaim.size in bytes;
	// backend.replicas), `type`, `databases` (the names of spec.databases),
	// `roles` (name, roles and privileges: database, object, privileges),
	// `users` (name, roles and hasPasswordSecret) and `backup` (enabled,
	// endpoint, host, schedule, suspend, keepLast, keepWithinSeconds,
	// include, exclude, restore), `storage` (Local or ObjectStorage) and
	// `compute` (the CNs of an ObjectStorage instance: cpu.cores,
	// cpu.coreFraction, memory.size and cache.size in bytes, minReplicas,
	// maxReplicas, autoscaling; zeros with local storage, where `backend`
	// is zeros with ObjectStorage). Examples:
	// `configuration.streamingLoadMaxMb <= 10240`,
	// `users.all(u, u.hasPasswordSecret)`,
	// `!backup.enabled || backup.keepLast >= 3`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Rule string `json:"rule"`

	// What the user sees when the rule does not hold.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// StarrocksClassStatus is reported by the module.
type StarrocksClassStatus struct {
	// Generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Number of sizing policies, for kubectl.
	// +optional
	SizingPolicyCount int32 `json:"sizingPolicyCount,omitempty"`

	// `Valid` tells whether the class's rules compile and its policies are
	// consistent.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StarrocksClassList is a list of StarrocksClass.
// +kubebuilder:object:root=true
type StarrocksClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StarrocksClass `json:"items"`
}
