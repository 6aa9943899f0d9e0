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

// ReplicationStatus is how many replicas the tables of the instance keep, as
// StarRocks reported it last. The BE count can never go below
// maxReplicationNum: StarRocks does not remove a BE while a table needs
// more replicas than the BEs left.
type ReplicationStatus struct {
	// The largest replication number of any table partition, StarRocks'
	// internal statistics tables left out (StarRocks 4.1 does not count
	// them when it removes a BE): the fewest BEs the instance can shrink to.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicationNum int32 `json:"maxReplicationNum"`
	// A table (database.table) with maxReplicationNum replicas.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	MaxReplicationTable string `json:"maxReplicationTable,omitempty"`
	// The smallest replication number of any table partition. Below the
	// instance's default replication (3, or the BE count when smaller) a table
	// loses data when a BE is lost: raise it as the user guide's Scaling
	// section shows (after a Standalone became a Cluster, for example).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicationNum int32 `json:"minReplicationNum"`
	// A table (database.table) with minReplicationNum replicas.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	MinReplicationTable string `json:"minReplicationTable,omitempty"`
}

// ConditionTablesReplicated is False while a table keeps fewer replicas than
// the instance's default replication number (a Standalone that became a
// Cluster keeps its tables at 1): the message says what to run.
const ConditionTablesReplicated = "TablesReplicated"
