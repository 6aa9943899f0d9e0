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

// How the pods of an instance are spread over zones: Ignored (wherever the
// scheduler likes), Zonal (all in one zone) or TransZonal (evenly over the
// allowed zones).
// +kubebuilder:validation:Enum=Ignored;Zonal;TransZonal
type Topology string

const (
	// TopologyIgnored places pods wherever the scheduler likes.
	TopologyIgnored Topology = "Ignored"
	// TopologyZonal keeps every pod of the instance in one zone.
	TopologyZonal Topology = "Zonal"
	// TopologyTransZonal spreads pods evenly over the allowed zones.
	TopologyTransZonal Topology = "TransZonal"
)

// The name of one StarRocks parameter users may set in
// `Starrocks.spec.configuration`.
// +kubebuilder:validation:Enum=streamingLoadMaxMb;loadProcessMaxMemoryLimitPercent;catalogTrashExpireSecond
type ConfigurationKey string

const (
	KeyStreamingLoadMaxMb               ConfigurationKey = "streamingLoadMaxMb"
	KeyLoadProcessMaxMemoryLimitPercent ConfigurationKey = "loadProcessMaxMemoryLimitPercent"
	KeyCatalogTrashExpireSecond         ConfigurationKey = "catalogTrashExpireSecond"
)

// AllConfigurationKeys lists every key of Configuration in a stable order.
var AllConfigurationKeys = []ConfigurationKey{
	KeyStreamingLoadMaxMb,
	KeyLoadProcessMaxMemoryLimitPercent,
	KeyCatalogTrashExpireSecond,
}

// Configuration holds the StarRocks parameters the module manages. Each field
// maps to one StarRocks setting; unset fields follow the class default (also
// when the admin changes it later), then the StarRocks default.
type Configuration struct {
	// Maximum size in MB of one Stream Load request (be.conf
	// `streaming_load_max_mb`). Applied at runtime, no restart.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10485760
	// +optional
	StreamingLoadMaxMb *int64 `json:"streamingLoadMaxMb,omitempty"`

	// Share of a BE's memory, in percent, that all load jobs together may use
	// (be.conf `load_process_max_memory_limit_percent`). Changing it restarts
	// the BE pods one by one.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	LoadProcessMaxMemoryLimitPercent *int32 `json:"loadProcessMaxMemoryLimitPercent,omitempty"`

	// How long, in seconds, dropped databases, tables and partitions stay in
	// the recycle bin and can be recovered (fe.conf
	// `catalog_trash_expire_second`). Applied at runtime with ADMIN SET
	// FRONTEND CONFIG, no restart.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	CatalogTrashExpireSecond *int64 `json:"catalogTrashExpireSecond,omitempty"`
}
