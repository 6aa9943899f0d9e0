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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InstanceType is the shape of an instance.
// +kubebuilder:validation:Enum=Standalone;Cluster
type InstanceType string

const (
	// TypeStandalone is one FE and one BE: for development and small data.
	TypeStandalone InstanceType = "Standalone"
	// TypeCluster is three FE followers and backend.replicas BEs.
	TypeCluster InstanceType = "Cluster"
)

// ClusterFrontendReplicas is the number of FE followers of a Cluster: an odd
// number keeps a quorum when one FE is lost.
const ClusterFrontendReplicas = 3

// The maxLength of metadata.name is added to the schema by dev/crdgen
// (controller-gen has no marker for it). The text of the doc comment below
// is what `kubectl explain starrocks` shows: user docs, no internals.

// A managed StarRocks instance, sized and placed within the limits of its
// StarrocksClass.
//
// The name becomes part of Service and pod DNS names, so it must be a DNS-1035
// label (lowercase letters, digits and '-', starting with a letter) of at
// most 40 characters, short enough for the longest derived name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sr,categories=managed-services
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.spec.starrocksClassName`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="ConfigurationValid")].status`
// +kubebuilder:printcolumn:name="FE Ready",type=string,JSONPath=`.status.frontend.ready`
// +kubebuilder:printcolumn:name="BE Ready",type=string,JSONPath=`.status.backend.ready`
// +kubebuilder:printcolumn:name="CN Ready",type=string,JSONPath=`.status.compute.ready`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoints.query`,priority=1
// +kubebuilder:printcolumn:name="Last Backup",type=date,JSONPath=`.status.backup.lastSuccessfulTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must start with a lowercase letter and contain only lowercase letters, digits and '-' (a DNS-1035 label)"
type Starrocks struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// What the user orders: class, type, sizes, configuration, access.
	Spec StarrocksSpec `json:"spec"`
	// What the module reports. Written by the module only.
	// +optional
	Status StarrocksStatus `json:"status,omitempty"`
}

// StarrocksSpec is what a user orders.
// +kubebuilder:validation:XValidation:rule="self.type == 'Cluster' || !has(self.backend) || !has(self.backend.replicas)",message="spec.backend.replicas may only be set when spec.type is Cluster (a Standalone instance has exactly one BE)"
// +kubebuilder:validation:XValidation:rule="self.type != 'Cluster' || !has(self.backend) || has(self.backend.replicas)",message="spec.backend.replicas is required when spec.type is Cluster"
// +kubebuilder:validation:XValidation:rule="(has(self.storage) && self.storage.mode == 'ObjectStorage') == (has(oldSelf.storage) && oldSelf.storage.mode == 'ObjectStorage')",fieldPath=".storage.mode",message="spec.storage.mode is immutable: StarRocks cannot convert an instance between local and object storage (run_mode never changes); create a new instance"
// +kubebuilder:validation:XValidation:rule="(has(self.storage) && self.storage.mode == 'ObjectStorage') ? !has(self.backend) : has(self.backend)",fieldPath=".backend",message="spec.backend is required with local storage and not allowed with spec.storage.mode ObjectStorage (compute nodes, spec.compute, run the queries)"
// +kubebuilder:validation:XValidation:rule="(has(self.storage) && self.storage.mode == 'ObjectStorage') == has(self.compute)",fieldPath=".compute",message="spec.compute is required with spec.storage.mode ObjectStorage and not allowed with local storage"
// +kubebuilder:validation:XValidation:rule="!(has(self.storage) && self.storage.mode == 'ObjectStorage') || !has(self.backup)",fieldPath=".backup",message="spec.backup is not allowed with spec.storage.mode ObjectStorage: StarRocks' BACKUP does not support shared-data; the module's automated cluster snapshots protect the instance instead"
// +kubebuilder:validation:XValidation:rule="!(has(self.storage) && self.storage.mode == 'ObjectStorage') || !has(self.restore)",fieldPath=".restore",message="spec.restore is not allowed with spec.storage.mode ObjectStorage: a shared-data instance is restored from a cluster snapshot, not from a BACKUP"
// +kubebuilder:validation:XValidation:rule="has(self.restore) == has(oldSelf.restore)",message="spec.restore can only be set when the instance is created, and cannot be removed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.type) || oldSelf.type != 'Cluster' || self.type == 'Cluster'",message="spec.type cannot change from Cluster to Standalone: the data of the other BEs would be lost"
type StarrocksSpec struct {
	// Name of the StarrocksClass the instance is ordered from. Cannot change.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.starrocksClassName is immutable"
	StarrocksClassName string `json:"starrocksClassName"`

	// Standalone (1 FE + 1 BE) or Cluster (3 FE followers + backend.replicas
	// BEs). A Standalone may become a Cluster, never the other way round.
	// +kubebuilder:default=Standalone
	// +optional
	Type InstanceType `json:"type,omitempty"`

	// Frontend (FE): metadata, query planning, the MySQL protocol endpoint.
	Frontend ComponentSpec `json:"frontend"`

	// Where the tables live: Local (the default: BEs with volumes) or
	// ObjectStorage (the team's S3 bucket, compute nodes with a cache).
	// Chosen at creation, it cannot change.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// Backend (BE): data storage and query execution. Required with local
	// storage, not allowed with ObjectStorage.
	// +optional
	Backend BackendSpec `json:"backend,omitzero"`

	// Compute nodes (CN) of an ObjectStorage instance: query execution
	// with a local cache of the bucket. Required with ObjectStorage, not
	// allowed with local storage.
	// +optional
	Compute *ComputeSpec `json:"compute,omitempty"`

	// Placement of the instance.
	// +optional
	Cluster *ClusterSpec `json:"cluster,omitempty"`

	// StarRocks parameters. Only keys the class lists in
	// overridableConfiguration may be set; the rest come from the class.
	// +optional
	Configuration *Configuration `json:"configuration,omitempty"`

	// TLS settings of the MySQL protocol endpoint. TLS is always served; this
	// decides whether plaintext clients are still accepted.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// Who may reach the client ports (9030 MySQL protocol, 8443 FE HTTPS) of
	// the instance. By default the pods of the instance's own namespace,
	// once the module has set the root password and created the accounts.
	// +optional
	Network *NetworkSpec `json:"network,omitempty"`

	// Databases the module creates and keeps. Never dropped by the module:
	// removing one from the list stops managing it, its data stays.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Databases []Database `json:"databases,omitempty"`

	// Roles the module creates and keeps as declared: privileges added by
	// hand are revoked, a role removed from the list is dropped.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Roles []Role `json:"roles,omitempty"`

	// Users the module creates and keeps as declared, each with a Secret
	// of connection details. A user removed from the list is dropped.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Users []User `json:"users,omitempty"`

	// Scheduled backups to the team's S3-compatible bucket; the class must
	// allow them (spec.backup of the StarrocksClass).
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`

	// Restore a backup into this new instance. Only when the instance is
	// created; it cannot change or be added later. Client ports stay
	// closed until the restore finished (condition Restored).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.restore is immutable: restore into a new instance"
	// +optional
	Restore *RestoreSpec `json:"restore,omitempty"`
}

// NetworkSpec opens the client ports (9030 MySQL protocol, 8443 FE HTTPS) to
// more namespaces. Internal ports are never opened: StarRocks has no
// authentication on them.
type NetworkSpec struct {
	// Namespaces, by labels, whose pods may reach the client ports besides
	// the instance's own namespace. A namespace is allowed when it carries
	// every label of one of the selectors. To allow one namespace by name, use
	// the label `kubernetes.io/metadata.name`.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	AllowedNamespaces []NamespaceSelector `json:"allowedNamespaces,omitempty"`
}

// Selects the namespaces that carry every listed label.
type NamespaceSelector struct {
	// Labels a namespace must carry, all of them. Keys are label keys
	// (an optional DNS subdomain prefix and '/', then a name of at most 63
	// characters), values label values (at most 63 characters).
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="matchLabels keys must be label keys: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 63 && self[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",message="matchLabels values must be label values: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	MatchLabels map[string]string `json:"matchLabels"`
}

// ComponentSpec sizes one StarRocks component.
type ComponentSpec struct {
	// CPU of each pod.
	CPU CPUSpec `json:"cpu"`
	// Memory of each pod.
	Memory MemorySpec `json:"memory"`
	// Volume of each pod.
	PersistentVolumeClaim PersistentVolumeClaimSpec `json:"persistentVolumeClaim"`
}

// BackendSpec sizes the BEs.
// The scale-in rules' messages name the smallest count allowed, so a
// refused 3 -> 1 does not send the user to try 3 -> 2 and be refused again
// (2 BEs are refused by pkg/classrules, which says why at length). A
// messageExpression with the number would read better, but the apiserver
// estimates string(int) as unbounded and refuses the CRD for its cost.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.replicas) || oldSelf.replicas != 3 || !has(self.replicas) || self.replicas >= 3",fieldPath=".replicas",message="the smallest BE count allowed now is 3: BEs are removed one at a time and 2 BEs are not allowed (tables with 2 replicas cannot load while one BE is down), so 3 BEs cannot shrink; for fewer BEs create a new instance of 1 BE and move the data"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.replicas) || oldSelf.replicas == 3 || !has(self.replicas) || self.replicas >= oldSelf.replicas - 1",fieldPath=".replicas",message="the smallest BE count allowed now is the count in effect minus one: BEs are removed one at a time, each decommissioned first so its tablets move to the others"
type BackendSpec struct {
	ComponentSpec `json:",inline"`

	// Number of BEs of a Cluster. Not allowed for Standalone.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// CPUSpec is the CPU of a pod.
type CPUSpec struct {
	// Number of cores: the CPU limit of the pod.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Cores int32 `json:"cores"`
	// Guaranteed share of the cores, in percent: the CPU request is
	// cores * coreFraction / 100. Must be one of the class policy's
	// coreFractions. Empty means the largest fraction the policy allows.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	CoreFraction int32 `json:"coreFraction,omitempty"`
}

// MemorySpec is the memory of a pod. In the CRD a quantity is a string
// (dev/crdgen), so CEL rules call quantity(self), not quantity(string(self)),
// whose cost the apiserver cannot bound; they start with `!isQuantity(self)
// ||` because dev/crdgen's own rule answers a string that is no quantity. (Type comments of fields that have
// their own comment do not reach kubectl explain.)
type MemorySpec struct {
	// Memory request and limit of the pod, e.g. 8Gi; at least 2Gi for an FE
	// and 4Gi for a BE, whatever the class allows. The FE JVM heap, the BE
	// mem_limit and the heap of the BE's JVM are derived from it with headroom.
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).isGreaterThan(quantity('0'))",message="memory.size must be greater than zero"
	Size resource.Quantity `json:"size"`
}

// PersistentVolumeClaimSpec is the volume of a pod.
// +kubebuilder:validation:XValidation:rule="has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",message="persistentVolumeClaim.storageClassName is immutable: a StatefulSet cannot move its volumes to another storage class"
type PersistentVolumeClaimSpec struct {
	// Size of the volume. It may grow (if the storage class allows
	// expansion), never shrink.
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).isGreaterThan(quantity('0'))",message="persistentVolumeClaim.size must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).compareTo(quantity(oldSelf)) >= 0",message="persistentVolumeClaim.size cannot shrink"
	Size resource.Quantity `json:"size"`

	// Storage class of the volume (a DNS-1123 subdomain). Empty means the
	// cluster default. Cannot change.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
}

// ClusterSpec places the instance.
type ClusterSpec struct {
	// Topology of the pods; must be allowed by the class. Empty means the
	// class default.
	// +optional
	Topology Topology `json:"topology,omitempty"`
}

// TLSSpec configures TLS of the MySQL protocol port (9030).
type TLSSpec struct {
	// Reject plaintext clients (StarRocks `ssl_force_secure_transport`).
	// Changing it restarts the FE pods.
	// +kubebuilder:default=false
	// +optional
	RequireSecureTransport bool `json:"requireSecureTransport,omitempty"`
}

// Phase is the one-word state of an instance.
// +kubebuilder:validation:Enum=Pending;Provisioning;Running;Degraded;Invalid
type Phase string

const (
	// PhasePending: accepted, nothing rendered yet.
	PhasePending Phase = "Pending"
	// PhaseProvisioning: objects exist, not all pods are ready yet.
	PhaseProvisioning Phase = "Provisioning"
	// PhaseRunning: every pod is ready.
	PhaseRunning Phase = "Running"
	// PhaseDegraded: it ran, some pods are not ready now.
	PhaseDegraded Phase = "Degraded"
	// PhaseInvalid: the spec breaks a class rule and was never valid; nothing runs.
	PhaseInvalid Phase = "Invalid"
)

// Condition types of a Starrocks.
const (
	ConditionConfigurationValid            = "ConfigurationValid"
	ConditionLastValidConfigurationApplied = "LastValidConfigurationApplied"
	ConditionAvailable                     = "Available"
	ConditionTLSReady                      = "TLSReady"
	// ConditionBackendScaleIn is False while BE pods removed from the spec
	// are kept because StarRocks still holds tablets on them.
	ConditionBackendScaleIn = "BackendScaleIn"
	// ConditionVolumesResized is False while PVCs of the instance request or
	// hold less than the spec's persistentVolumeClaim.size.
	ConditionVolumesResized = "VolumesResized"
	// ConditionRolledOut is False while the module restarts the pods of the
	// instance one at a time after a change of their template (an upgrade,
	// a restart-requiring setting): BEs first, then FE followers, the FE
	// leader last. Its message says what waits for what.
	ConditionRolledOut = "RolledOut"
	// ConditionObjectsApplied is False while the objects of the instance's
	// render are not all written: the API server refused one (a quota, an
	// admission policy, an object the tenant made immutable), named with the
	// API server's words, or the module has not written them yet.
	ConditionObjectsApplied = "ObjectsApplied"
)

// StarrocksStatus is what the module reports.
type StarrocksStatus struct {
	// Generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Generation of the last spec that was valid and is the one rendered.
	// +optional
	LastValidGeneration int64 `json:"lastValidGeneration,omitempty"`

	// One-word state: Pending (accepted, nothing rendered yet), Provisioning
	// (not all pods are ready yet), Running (every pod is ready), Degraded (it
	// ran, some pods are not ready now) or Invalid (no valid configuration is
	// in effect). Whether the current spec is valid is the ConfigurationValid
	// condition (column VALID): an instance keeps running its last valid
	// configuration while a newer spec breaks a rule.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// Condition types: ConfigurationValid, LastValidConfigurationApplied,
	// Available, TLSReady, AccountsReady, BackendScaleIn, VolumesResized,
	// TablesReplicated, RolledOut, UsersReady, ObjectsApplied, BackupsHealthy
	// (with spec.backup, and on a shared-data instance from its automated
	// cluster snapshot), StorageReady (shared-data: the storage volume),
	// Restored (with spec.restore).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// FE pods.
	// +optional
	Frontend ComponentStatus `json:"frontend,omitempty"`

	// BE pods.
	// +optional
	Backend ComponentStatus `json:"backend,omitempty"`

	// CN pods of an ObjectStorage instance: replicas is the count desired
	// now (the autoscaler's choice while autoscaling).
	// +optional
	Compute *ComponentStatus `json:"compute,omitempty"`

	// Where clients connect.
	// +optional
	Endpoints *Endpoints `json:"endpoints,omitempty"`

	// The configuration in effect: class defaults merged with the user's
	// overrides, from the last valid spec.
	// +optional
	Configuration *Configuration `json:"configuration,omitempty"`

	// Secret with the team's StarRocks account `admin` and its password
	// (keys `username`, `password`).
	// +optional
	CredentialsSecretName string `json:"credentialsSecretName,omitempty"`

	// The serving certificate of the instance.
	// +optional
	TLS *TLSStatus `json:"tls,omitempty"`
	// Replication numbers of the instance's tables, as the agent of the FE
	// leader last reported them.
	// +optional
	Replication *ReplicationStatus `json:"replication,omitempty"`
	// The declared users, their Secrets and whether each is applied, as
	// the agent of the FE leader last reported them.
	// +optional
	Users []UserStatus `json:"users,omitempty"`
	// The databases of the instance: declared ones and those that exist
	// but are no longer (or were never) declared.
	// +optional
	Databases []DatabaseStatus `json:"databases,omitempty"`
	// Backups of the instance: last success, last failure, next run; on a
	// shared-data instance the newest cluster snapshot (lastSuccessfulTime)
	// and the newest failed snapshot job.
	// +optional
	Backup *InstanceBackupStatus `json:"backup,omitempty"`
}

// ComponentStatus counts the pods of one component.
type ComponentStatus struct {
	// Desired pods.
	// +optional
	Replicas int32 `json:"replicas"`
	// Ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// Ready pods of the desired ones, e.g. 2/3: what kubectl get shows, as
	// for Deployments (a printer column cannot join two fields itself).
	// +kubebuilder:validation:MaxLength=7
	// +kubebuilder:validation:Pattern=`^[0-9]{1,3}/[0-9]{1,3}$`
	// +optional
	Ready string `json:"ready,omitempty"`
}

// Endpoints of an instance inside the cluster.
type Endpoints struct {
	// MySQL protocol endpoint, host:port (TLS available, required when
	// tls.requireSecureTransport is true).
	// +optional
	Query string `json:"query,omitempty"`
	// FE HTTP API over HTTPS, host:port, served with the instance's
	// certificate. Clients use this one: it is open to the namespaces the
	// instance allows. Stream Load is answered with a redirect to plain HTTP
	// inside the instance, which clients outside it cannot follow.
	// +optional
	HTTPS string `json:"https,omitempty"`
	// FE plain HTTP endpoint, host:port. Reachable only from the instance's own
	// pods and Deckhouse monitoring: plain HTTP would carry passwords in clear.
	// +optional
	HTTP string `json:"http,omitempty"`
}

// TLSStatus describes the serving certificate.
type TLSStatus struct {
	// Secret that holds the certificate, its key, the CA and the PKCS12 keystore.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// When the certificate served now expires.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
}

// StarrocksList is a list of Starrocks.
// +kubebuilder:object:root=true
type StarrocksList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Starrocks `json:"items"`
}
