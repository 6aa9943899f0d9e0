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

package agentconfig

import "strings"

// SharedData is the agent's part of a shared-data instance (fe.conf
// run_mode = shared_data): the FEs keep every table in the team's object
// storage and stateless compute nodes (CN) run the queries. It is nil on a
// shared-nothing instance, and an instance never changes between the two.
type SharedData struct {
	// StorageVolume is the instance's default storage volume. The agent
	// creates it with SQL (CREATE STORAGE VOLUME, SET ... AS DEFAULT STORAGE
	// VOLUME) before any database, so the keys never sit in fe.conf, a
	// ConfigMap or the module's values; a key change is ALTER STORAGE VOLUME.
	StorageVolume StorageVolume `json:"storageVolume"`
	// ComputeNodes says where the instance's CNs are.
	ComputeNodes ComputeNodes `json:"computeNodes"`
	// ClusterSnapshots turns StarRocks' automated cluster snapshot on for
	// the storage volume (ADMIN SET AUTOMATED CLUSTER SNAPSHOT ON ...): the
	// disaster recovery of a shared-data instance, which BACKUP does not
	// support.
	ClusterSnapshots bool `json:"clusterSnapshots"`
	// SourceRootPassword is the team's Secret of this namespace with the
	// root password of the instance this one was restored from
	// (spec.storage.restoreFrom.rootPasswordSecretRef). The agent reads it
	// by name on every pass, so naming it later needs no new pod. Nil
	// otherwise: a source of this namespace has its own Secret mounted
	// (Options.SourceCredentialsDir).
	SourceRootPassword *SecretKeyRef `json:"sourceRootPassword,omitempty"`
}

// StorageVolume is a storage volume of type S3 at a location of the
// instance's own.
type StorageVolume struct {
	// Name is StorageVolumeName(instance UID).
	// An instance restored from a cluster snapshot has the source's name
	// and location: its FE comes up with the source's volume.
	Name string `json:"name"`
	// Location is StorageVolumeLocation(...): s3://<bucket>/<prefix>/
	// <namespace>/<instance>/<uid>. It never changes while the instance
	// lives (StarRocks makes the tables of a volume whose path changed read
	// only), and two instances never share one (each one's vacuum would
	// delete the other's files).
	Location string `json:"location"`
	// Endpoint is the S3 endpoint as the team wrote it, http(s)://host[:port].
	Endpoint string `json:"endpoint"`
	Region   string `json:"region,omitempty"`
	// PathStyle: bucket in the path, not in the host name.
	PathStyle bool `json:"pathStyle,omitempty"`
	// EnableSSL is true for an https endpoint.
	EnableSSL bool `json:"enableSSL"`
	// Credentials name the team's Secret with the keys; the agent reads it.
	Credentials S3Credentials `json:"credentials"`
	// CA is the team's Secret key with the endpoint's CA bundle (PEM), nil
	// for the system roots.
	CA *SecretKeyRef `json:"ca,omitempty"`
}

// ComputeNodes are the CN pods of one StatefulSet. The agent reads the
// StatefulSet's spec.replicas itself, since an HorizontalPodAutoscaler
// changes it between two module runs, and bounds it by Min and Max: the
// tenant can write the field too. CN i is HostFormat with %d replaced by i.
type ComputeNodes struct {
	// StatefulSet is the CN StatefulSet's name in the instance's namespace.
	StatefulSet string `json:"statefulSet"`
	// HostFormat is the stable FQDN of a CN with one %d for its ordinal,
	// e.g. d8ms-sr-x-cn-%d.d8ms-sr-x-cn.ns.svc.cluster.local.
	HostFormat string `json:"hostFormat"`
	// HeartbeatPort is the CN heartbeat port used in ALTER SYSTEM ADD
	// COMPUTE NODE.
	HeartbeatPort int `json:"heartbeatPort"`
	// Min and Max bound the replicas the agent follows; equal when the
	// instance has a fixed count.
	Min int32 `json:"min"`
	Max int32 `json:"max"`
}

// StorageVolumeName is the instance's storage volume name: like the
// repository's, a name of the instance's UID.
func StorageVolumeName(instanceUID string) string {
	return "d8ms_sv_" + strings.ReplaceAll(strings.ToLower(instanceUID), "-", "")
}

// StorageVolumeLocation is s3://<bucket>/<prefix>/<namespace>/<instance>/<uid>:
// the whole UID, so a new instance of the same name never reaches the files
// of an earlier one.
func StorageVolumeLocation(bucket, prefix, namespace, instance, instanceUID string) string {
	p := strings.Trim(prefix, "/")
	if p != "" {
		p += "/"
	}
	return "s3://" + bucket + "/" + p + namespace + "/" + instance + "/" + strings.ToLower(instanceUID)
}
