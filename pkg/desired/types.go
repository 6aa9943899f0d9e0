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

package desired

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Instance is the desired state of one instance. It mirrors
// instance.schema.yaml (definitions.instance) field for field; the contract
// test in this package validates it against that schema, so a change to one
// without the other fails.
type Instance struct {
	Name       string   `json:"name"`
	Namespace  string   `json:"namespace"`
	UID        string   `json:"uid"`
	ClassName  string   `json:"className"`
	Type       string   `json:"type"`
	Generation int64    `json:"generation"`
	Topology   string   `json:"topology"`
	Zones      []string `json:"zones,omitempty"`
	Frontend   Frontend `json:"frontend"`
	Backend    Backend  `json:"backend,omitzero"`
	// StorageMode is ObjectStorage for a shared-data instance (fe.conf
	// run_mode = shared_data, CNs instead of BEs); empty for local storage.
	StorageMode string `json:"storageMode,omitempty"`
	// Compute is the CN StatefulSet of an ObjectStorage instance.
	Compute       *ComputeNodes      `json:"compute,omitempty"`
	Configuration Configuration      `json:"configuration"`
	TLS           TLS                `json:"tls"`
	Scheduling    Scheduling         `json:"scheduling"`
	AgentConfig   agentconfig.Config `json:"agentConfig"`
	Network       Network            `json:"network"`
	Names         Names              `json:"names"`
}

// Network is who may reach the instance's pods (rendered into its
// NetworkPolicy). Internal ports are only ever open to the instance's own
// pods (and metrics ports to Deckhouse's monitoring); this decides the
// client ports (9030 MySQL protocol, 8443 FE HTTPS).
type Network struct {
	// ClientPortsOpen is false until an agent of the instance has reported
	// root's password set and the module accounts created (condition
	// AccountsReady): until then only the instance's own pods reach the
	// client ports, so nobody can log in as root with the empty password of
	// a fresh FE.
	ClientPortsOpen bool `json:"clientPortsOpen"`
	// AllowedNamespaces selects, by labels, the namespaces besides the
	// instance's own whose pods may reach the client ports
	// (spec.network.allowedNamespaces).
	AllowedNamespaces []NamespaceSelector `json:"allowedNamespaces,omitempty"`
}

// NamespaceSelector selects namespaces by their labels (every label must match).
type NamespaceSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// Frontend is the desired FE StatefulSet.
type Frontend struct {
	JavaHeapMb     int64     `json:"javaHeapMb"`
	Replicas       int32     `json:"replicas"`
	Resources      Resources `json:"resources"`
	Storage        Storage   `json:"storage"`
	ConfigChecksum string    `json:"configChecksum"`
	Hosts          []string  `json:"hosts"`
	// TrustedCAs are the CA bundles of the backup and restore
	// repositories' endpoints (spec.backup.storage.caSecretRef and the
	// restore source's), in that order: the FE container mounts them and
	// its start script adds them to the JVM's trust store, because
	// StarRocks reaches S3 with the JVM's default trust store and has no
	// repository property for a CA.
	TrustedCAs []TrustedCA `json:"trustedCAs,omitempty"`
	// RestoreClusterSnapshot: the first FE of this new shared-data instance
	// starts from the newest automated cluster snapshot of the storage
	// volume in agentConfig.sharedData.storageVolume (the source's,
	// spec.storage.restoreFrom). fe-start.sh renders StarRocks'
	// conf/cluster_snapshot.yaml from it and the mounted keys, and passes
	// --cluster_snapshot, on the bootstrap start only.
	RestoreClusterSnapshot bool `json:"restoreClusterSnapshot,omitempty"`
	// RestoreSourceCredentialsSecret is the agent's Secret of the source
	// instance (its namespace is this one's), whose root-password the
	// agent mounts (optional): the restored FE has the source's accounts,
	// and only root may change root's password. Empty for a source of
	// another namespace, whose Secret no pod here can mount.
	RestoreSourceCredentialsSecret string `json:"restoreSourceCredentialsSecret,omitempty"`
}

// TrustedCA is one CA bundle the FE trusts besides the JDK's: a key of a
// Secret of the instance's namespace, mounted as File.
type TrustedCA struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
	// File is the bundle's name in the FE's trust folder (backup.crt,
	// restore.crt).
	File string `json:"file"`
}

// Backend is the desired BE StatefulSet.
type Backend struct {
	MemLimitBytes  int64     `json:"memLimitBytes"`
	JavaHeapMb     int64     `json:"javaHeapMb"`
	Replicas       int32     `json:"replicas"`
	Resources      Resources `json:"resources"`
	Storage        Storage   `json:"storage"`
	ConfigChecksum string    `json:"configChecksum"`
	Hosts          []string  `json:"hosts"`
	// TrustedCAs are the FE's (Frontend.TrustedCAs): the BEs upload and
	// download the snapshots with their own S3 client, which reads one CA
	// bundle; the BE container mounts these and its start script builds
	// that bundle of the system's CAs and these.
	TrustedCAs []TrustedCA `json:"trustedCAs,omitempty"`
}

// Resources of a container.
type Resources struct {
	Requests ResourceList `json:"requests"`
	Limits   ResourceList `json:"limits"`
}

// ResourceList is cpu and memory as Kubernetes quantities.
type ResourceList struct {
	CPU    string `json:"cpu"`
	Memory string `json:"memory"`
}

// Storage is the PVC template of a component.
type Storage struct {
	// Size is the desired size of every PVC of the component (the spec).
	Size string `json:"size"`
	// TemplateSize goes into the StatefulSet volumeClaimTemplates: the size
	// the existing StatefulSet was created with, because the apiserver
	// refuses any change of volumeClaimTemplates; Size for a new one. Grown
	// PVCs are expanded by the hooks, not through the template.
	TemplateSize     string `json:"templateSize,omitempty"`
	StorageClassName string `json:"storageClassName,omitempty"`
}

// Configuration is the merged configuration plus derived keys.
type Configuration struct {
	StreamingLoadMaxMb               int64 `json:"streamingLoadMaxMb"`
	LoadProcessMaxMemoryLimitPercent int64 `json:"loadProcessMaxMemoryLimitPercent"`
	CatalogTrashExpireSecond         int64 `json:"catalogTrashExpireSecond"`
	DefaultReplicationNum            int32 `json:"defaultReplicationNum"`
}

// TLS of the MySQL protocol endpoint.
type TLS struct {
	RequireSecureTransport     bool     `json:"requireSecureTransport"`
	SecretName                 string   `json:"secretName"`
	KeystorePasswordSecretName string   `json:"keystorePasswordSecretName,omitempty"`
	DNSNames                   []string `json:"dnsNames"`
	// CertificateRevision is status.revision of the instance Certificate (1
	// while it has none): the FE reads its keystore only at start, so the FE
	// pod template carries it and a renewal restarts the FE pods (one at a
	// time: rollout.go).
	CertificateRevision int64 `json:"certificateRevision,omitempty"`
}

// Scheduling comes from the class.
type Scheduling struct {
	NodeSelector map[string]string    `json:"nodeSelector,omitempty"`
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`
	Tolerations  []corev1.Toleration  `json:"tolerations,omitempty"`
	// PriorityClassName of the pods; empty: the cluster's default.
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// Names of the objects of an instance. The TLS and keystore Secret names
// live in TLS, as the schema has them there.
type Names struct {
	FrontendStatefulSet     string `json:"frontendStatefulSet"`
	BackendStatefulSet      string `json:"backendStatefulSet"`
	ClientService           string `json:"clientService"`
	FrontendHeadlessService string `json:"frontendHeadlessService"`
	BackendHeadlessService  string `json:"backendHeadlessService"`
	// ComputeStatefulSet and ComputeHeadlessService are the CNs' of an
	// ObjectStorage instance (reserved for every instance).
	ComputeStatefulSet     string `json:"computeStatefulSet,omitempty"`
	ComputeHeadlessService string `json:"computeHeadlessService,omitempty"`
	ConfigMap              string `json:"configMap"`
	// CredentialsSecret holds the team's admin account (agentconfig.AdminUser).
	CredentialsSecret string `json:"credentialsSecret"`
	// AgentCredentialsSecret holds the module's own accounts: the agent's
	// (agentconfig.AgentUser) and root's password. Mounted into the agent
	// container only.
	AgentCredentialsSecret string `json:"agentCredentialsSecret"`
}
