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

import "k8s.io/apimachinery/pkg/api/resource"

// StorageMode is where an instance keeps its tables.
// +kubebuilder:validation:Enum=Local;ObjectStorage
type StorageMode string

const (
	// StorageLocal is StarRocks' shared-nothing mode: BEs keep the tables
	// on their volumes.
	StorageLocal StorageMode = "Local"
	// StorageObjectStorage is StarRocks' shared-data mode (fe.conf
	// run_mode = shared_data): the tables live in the team's S3 bucket,
	// compute nodes (CN) run the queries with a local cache.
	StorageObjectStorage StorageMode = "ObjectStorage"
)

// StorageSpec says where the instance keeps its tables. StarRocks cannot
// convert an instance between the two modes (fe.conf run_mode must never
// change once the FE has metadata), so the mode is chosen at creation.
//
// The object storage location is immutable too: StarRocks makes the tables
// of a storage volume whose location changed unreadable (they keep the old
// paths), so only the credentials and the CA may change.
// +kubebuilder:validation:XValidation:rule="self.mode == 'ObjectStorage' ? has(self.objectStorage) : !has(self.objectStorage)",message="spec.storage.objectStorage is required when spec.storage.mode is ObjectStorage and not allowed otherwise"
// +kubebuilder:validation:XValidation:rule="self.mode == 'ObjectStorage' || !has(self.restoreFrom)",fieldPath=".restoreFrom",message="spec.storage.restoreFrom is only allowed with spec.storage.mode ObjectStorage: a local-storage instance is restored from a BACKUP (spec.restore)"
// +kubebuilder:validation:XValidation:rule="has(self.restoreFrom) == has(oldSelf.restoreFrom)",fieldPath=".restoreFrom",message="spec.storage.restoreFrom can only be set when the instance is created, and cannot be removed"
// +kubebuilder:validation:XValidation:rule="!has(self.objectStorage) || !has(self.objectStorage.prefix) || !self.objectStorage.prefix.matches('(^|/)[.]{1,2}(/|$)')",fieldPath=".objectStorage.prefix",message="spec.storage.objectStorage.prefix must not have a '.' or '..' segment: HTTP clients resolve them, so the files would land outside the prefix shown"
// +kubebuilder:validation:XValidation:rule="!has(self.objectStorage) || !has(oldSelf.objectStorage) || self.objectStorage.endpoint == oldSelf.objectStorage.endpoint",fieldPath=".objectStorage.endpoint",message="spec.storage.objectStorage.endpoint is immutable: the tables stay where they were written; only credentialsSecretRef and caSecretRef may change"
// +kubebuilder:validation:XValidation:rule="!has(self.objectStorage) || !has(oldSelf.objectStorage) || self.objectStorage.bucket == oldSelf.objectStorage.bucket",fieldPath=".objectStorage.bucket",message="spec.storage.objectStorage.bucket is immutable: StarRocks makes the tables of a storage volume whose location changed read-only; only credentialsSecretRef and caSecretRef may change"
// +kubebuilder:validation:XValidation:rule="!has(self.objectStorage) || !has(oldSelf.objectStorage) || (has(self.objectStorage.prefix) == has(oldSelf.objectStorage.prefix) && (!has(self.objectStorage.prefix) || self.objectStorage.prefix == oldSelf.objectStorage.prefix))",fieldPath=".objectStorage.prefix",message="spec.storage.objectStorage.prefix is immutable: StarRocks makes the tables of a storage volume whose location changed read-only; only credentialsSecretRef and caSecretRef may change"
// +kubebuilder:validation:XValidation:rule="!has(self.objectStorage) || !has(oldSelf.objectStorage) || (has(self.objectStorage.region) == has(oldSelf.objectStorage.region) && (!has(self.objectStorage.region) || self.objectStorage.region == oldSelf.objectStorage.region))",fieldPath=".objectStorage.region",message="spec.storage.objectStorage.region is immutable: only credentialsSecretRef and caSecretRef may change"
// +kubebuilder:validation:XValidation:rule="!has(self.objectStorage) || !has(oldSelf.objectStorage) || (has(self.objectStorage.pathStyle) && self.objectStorage.pathStyle) == (has(oldSelf.objectStorage.pathStyle) && oldSelf.objectStorage.pathStyle)",fieldPath=".objectStorage.pathStyle",message="spec.storage.objectStorage.pathStyle is immutable: only credentialsSecretRef and caSecretRef may change"
type StorageSpec struct {
	// Local (BEs with volumes, the default) or ObjectStorage (tables in
	// the team's S3 bucket, compute nodes with a cache). Chosen when the
	// instance is created; it cannot change.
	// +kubebuilder:default=Local
	Mode StorageMode `json:"mode"`

	// The bucket of an ObjectStorage instance. The instance keeps its
	// tables under <prefix>/<namespace>/<name>/<uid> in it, its own
	// location no other instance shares. Everything but
	// credentialsSecretRef and caSecretRef is immutable. The files stay
	// when the instance is deleted.
	// +optional
	ObjectStorage *BackupStorage `json:"objectStorage,omitempty"`

	// Start this new ObjectStorage instance from the newest automated
	// cluster snapshot of an earlier one in the same bucket and prefix
	// (spec.storage.objectStorage). The instance takes over the files of
	// the source: its tables stay where the source wrote them, so the
	// source must be deleted first (an instance of the source's location
	// that still exists refuses this one). Only when the instance is
	// created; the source cannot change and restoreFrom cannot be removed
	// (rootPasswordSecretRef may be set or changed later).
	// +optional
	RestoreFrom *ClusterSnapshotSource `json:"restoreFrom,omitempty"`
}

// ClusterSnapshotSource names the shared-data instance whose cluster
// snapshot a new instance starts from: its files are at
// <prefix>/<namespace>/<instanceName>/<instanceUID> of the bucket.
type ClusterSnapshotSource struct {
	// Namespace of the source instance.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.storage.restoreFrom.namespace is immutable: restore into a new instance"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// Name of the source instance.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.storage.restoreFrom.instanceName is immutable: restore into a new instance"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	InstanceName string `json:"instanceName"`
	// UID of the source instance (its metadata.uid), e.g.
	// 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.storage.restoreFrom.instanceUID is immutable: restore into a new instance"
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
	InstanceUID string `json:"instanceUID"`
	// A Secret of this instance's namespace with the source's root
	// password (key "password" unless key says otherwise). The restored
	// FE has the source's accounts, and only root may change root's
	// password: the agent logs in as root with it once and replaces it.
	// Without it the agent reads root-password of the source's Secret
	// d8ms-sr-<instanceName>-agent-credentials, which it can only where
	// the source was in this namespace. With neither, the agent resets
	// root's password through one more restore of the first FE with
	// authentication off (its client ports closed meanwhile). It may be
	// set or changed after the instance is created.
	// +optional
	RootPasswordSecretRef *PasswordSecretRef `json:"rootPasswordSecretRef,omitempty"`
}

// ComputeSpec sizes the compute nodes (CN) of an ObjectStorage instance:
// either a fixed count (replicas) or a range the autoscaler moves in.
// +kubebuilder:validation:XValidation:rule="has(self.replicas) != has(self.autoscaling)",message="spec.compute needs exactly one of replicas (a fixed CN count) or autoscaling (a range)"
type ComputeSpec struct {
	// CPU of each CN pod.
	CPU CPUSpec `json:"cpu"`
	// Memory of each CN pod.
	Memory MemorySpec `json:"memory"`

	// Fixed number of CNs. Not with autoscaling.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// The CN count follows the load between minReplicas and maxReplicas
	// (a HorizontalPodAutoscaler). Not with replicas.
	// +optional
	Autoscaling *ComputeAutoscaling `json:"autoscaling,omitempty"`

	// The local cache of each CN: a volume that holds recently read data
	// of the object storage. Losing it loses nothing but speed.
	Cache CacheVolumeSpec `json:"cache"`
}

// ComputeAutoscaling is the range and the targets of the CN autoscaler.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="spec.compute.autoscaling.minReplicas must not be greater than maxReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.targetCPUUtilizationPercentage) || has(self.targetMemoryUtilizationPercentage)",message="spec.compute.autoscaling needs targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both"
type ComputeAutoscaling struct {
	// Fewest CNs.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinReplicas int32 `json:"minReplicas"`
	// Most CNs.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxReplicas int32 `json:"maxReplicas"`
	// Average CPU use of the CNs, in percent of their request, the
	// autoscaler keeps them at, e.g. 70.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
	// Average memory use of the CNs, in percent of their request, the
	// autoscaler keeps them at, e.g. 80.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// CacheVolumeSpec is the cache volume of each CN.
// +kubebuilder:validation:XValidation:rule="has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",message="compute.cache.storageClassName is immutable: a StatefulSet cannot move its volumes to another storage class"
type CacheVolumeSpec struct {
	// Size of each CN's cache volume, e.g. 100Gi. It may grow (if the
	// storage class allows expansion: the existing volumes are expanded),
	// never shrink.
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).isGreaterThan(quantity('0'))",message="compute.cache.size must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).compareTo(quantity(oldSelf)) >= 0",message="compute.cache.size cannot shrink"
	Size resource.Quantity `json:"size"`

	// Storage class of the cache volumes (a DNS-1123 subdomain). Empty
	// means the cluster default. Cannot change.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
}

// ClassSharedData is a class's policy for ObjectStorage (shared-data)
// instances. Without it, or with allowed false, they are refused.
// +kubebuilder:validation:XValidation:rule="!has(self.cacheSize) || !has(self.cacheSize.min) || !has(self.cacheSize.max) || !isQuantity(self.cacheSize.min) || !isQuantity(self.cacheSize.max) || quantity(self.cacheSize.min).compareTo(quantity(self.cacheSize.max)) <= 0",message="spec.sharedData.cacheSize.min must not be greater than cacheSize.max"
// +kubebuilder:validation:XValidation:rule="(has(self.minReplicas) ? self.minReplicas : 1) <= (has(self.maxReplicas) ? self.maxReplicas : 10)",message="spec.sharedData.minReplicas must not be greater than maxReplicas"
type ClassSharedData struct {
	// Whether instances of the class may set spec.storage.mode
	// ObjectStorage.
	Allowed bool `json:"allowed"`
	// Endpoint hosts allowed, exactly or as `*.suffix` for any subdomain,
	// e.g. `s3.example.com`, `*.storage.svc`. Empty: any endpoint.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^([*][.])?[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +listType=set
	// +optional
	AllowedEndpoints []string `json:"allowedEndpoints,omitempty"`
	// Allowed sizes of the CNs, as spec.sizingPolicies for FE and BE.
	// Empty: the class's spec.sizingPolicies.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, a.cores.min <= b.cores.max && b.cores.min <= a.cores.max))",message="spec.sharedData.computeSizingPolicies: core ranges [cores.min, cores.max] of two policies overlap; every core count must fall into at most one policy"
	// +listType=atomic
	// +optional
	ComputeSizingPolicies []SizingPolicy `json:"computeSizingPolicies,omitempty"`
	// Fewest CNs an instance may have (compute.replicas and
	// compute.autoscaling.minReplicas). Default 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MinReplicas int32 `json:"minReplicas,omitempty"`
	// Most CNs an instance may have (compute.replicas and
	// compute.autoscaling.maxReplicas). Default 10.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxReplicas int32 `json:"maxReplicas,omitempty"`
	// Whether instances may set compute.autoscaling.
	// +optional
	AutoscalingAllowed bool `json:"autoscalingAllowed,omitempty"`
	// Range of compute.cache.size. Empty: any size.
	// +optional
	CacheSize *QuantityRange `json:"cacheSize,omitempty"`
}

// QuantityRange is an inclusive range of sizes.
type QuantityRange struct {
	// Smallest allowed size.
	// +optional
	Min *resource.Quantity `json:"min,omitempty"`
	// Largest allowed size.
	// +optional
	Max *resource.Quantity `json:"max,omitempty"`
}

// IsSharedData tells whether the spec asks for an ObjectStorage
// (shared-data) instance.
func (s *StarrocksSpec) IsSharedData() bool {
	return s.Storage != nil && s.Storage.Mode == StorageObjectStorage
}
