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

// SharedDataStatus is what the FE leader's agent reports about a
// shared-data instance (Config.SharedData): its storage volume and its
// automated cluster snapshot. The compute nodes are in
// MembershipStatus.ComputeNodes. Nothing in it holds a key.
type SharedDataStatus struct {
	StorageVolume    StorageVolumeStatus     `json:"storageVolume"`
	ClusterSnapshots *ClusterSnapshotsStatus `json:"clusterSnapshots,omitempty"`
}

// Reasons of StorageVolumeStatus.
const (
	// StorageVolumeCredentialsMissing: the Secret or a key of it is missing
	// or unreadable.
	StorageVolumeCredentialsMissing = "CredentialsMissing"
	// StorageVolumeLocationChanged: StarRocks has the volume at another
	// location than the configuration; the agent never moves it.
	StorageVolumeLocationChanged = "LocationChanged"
	// StorageVolumeRefused: StarRocks refused a statement.
	StorageVolumeRefused = "StorageVolumeRefused"
	// StorageVolumeBucketUnreachable: the bucket does not answer the keys,
	// endpoint and CA from the agent's pod (missing bucket, refused keys,
	// an endpoint that does not answer, an untrusted certificate); the
	// agent sends no CREATE or ALTER STORAGE VOLUME, which StarRocks would
	// accept without reaching the bucket.
	StorageVolumeBucketUnreachable = "BucketUnreachable"
)

// StorageVolumeStatus is the instance's default storage volume.
type StorageVolumeStatus struct {
	Name string `json:"name"`
	// Ready: the volume exists at the configured location, is the default
	// and has the configured properties (the keys as last applied).
	Ready bool `json:"ready"`
	// CreatedAt and AlteredAt are when this agent created the volume or
	// sent new properties (ALTER STORAGE VOLUME), RFC 3339.
	CreatedAt string `json:"createdAt,omitempty"`
	AlteredAt string `json:"alteredAt,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// ClusterSnapshotsStatus is StarRocks' automated cluster snapshot.
type ClusterSnapshotsStatus struct {
	// Enabled: ADMIN SHOW AUTOMATED CLUSTER SNAPSHOT says true for the
	// instance's storage volume.
	Enabled bool `json:"enabled"`
	// NewestSnapshotTime is its LastSnapshotTime as StarRocks prints it
	// (yyyy-MM-dd HH:mm:ss, no zone: always +08:00, fe-core
	// common/util/TimeUtils.DATETIME_TO_STRING_FORMAT; the instances hook
	// converts it), empty before the first.
	NewestSnapshotTime string `json:"newestSnapshotTime,omitempty"`
	// LastJob is the newest row of information_schema.cluster_snapshot_jobs;
	// nil while it cannot be read (StarRocks scans it on a compute node:
	// none is alive) or there is none.
	LastJob *ClusterSnapshotJob `json:"lastJob,omitempty"`
	Reason  string              `json:"reason,omitempty"`
	Message string              `json:"message,omitempty"`
}

// ClusterSnapshotJob is one row of information_schema.cluster_snapshot_jobs.
type ClusterSnapshotJob struct {
	SnapshotName string `json:"snapshotName"`
	CreatedTime  string `json:"createdTime,omitempty"`
	FinishedTime string `json:"finishedTime,omitempty"`
	// State is StarRocks' ClusterSnapshotJobState: INITIALIZING,
	// SNAPSHOTING, UPLOADING, FINISHED, EXPIRED, DELETED, ERROR.
	State string `json:"state"`
	// Succeeded: FINISHED, or EXPIRED/DELETED (a finished snapshot that a
	// newer one replaced). False for ERROR and while it runs.
	Succeeded    bool   `json:"succeeded"`
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// ComputeNodesStatus is the instance's CNs as the FE leader's agent sees
// them: Desired from the CN StatefulSet's spec.replicas bounded by
// ComputeNodes.Min and Max, Listed what SHOW COMPUTE NODES lists.
type ComputeNodesStatus struct {
	// Replicas is the StatefulSet's spec.replicas as read (-1 when it could
	// not be read), Desired the count the agent follows.
	Replicas int32 `json:"replicas"`
	Desired  int32 `json:"desired"`
	// Listed and Alive count the CNs StarRocks lists, and those alive.
	Listed int32 `json:"listed"`
	Alive  int32 `json:"alive"`
	// Leaving are listed CNs beyond Desired still alive: dropped once
	// their process has exited (CNs are never decommissioned).
	Leaving []string `json:"leaving,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Message string   `json:"message,omitempty"`
}
