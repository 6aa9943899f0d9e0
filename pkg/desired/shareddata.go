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
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// The shared-data part of an entry: an ObjectStorage instance runs its FEs
// with run_mode = shared_data and compute nodes (CN) instead of BEs; the
// agent creates the storage volume and adds the CNs (agentconfig
// SharedData).

// ComputeNodes is the desired CN StatefulSet of an ObjectStorage instance.
type ComputeNodes struct {
	// MemLimitBytes is cn.conf mem_limit (as a BE's).
	MemLimitBytes int64 `json:"memLimitBytes"`
	// Replicas is the fixed CN count; 0 while autoscaling, so that the
	// StatefulSet is rendered without .spec.replicas and the module never
	// writes over the count the HorizontalPodAutoscaler chose.
	Replicas int32 `json:"replicas,omitempty"`
	// Autoscaling is the HorizontalPodAutoscaler of the CN StatefulSet,
	// nil for a fixed count.
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
	Resources   Resources    `json:"resources"`
	// Cache is the PVC template of each CN's cache volume.
	Cache          Storage `json:"cache"`
	ConfigChecksum string  `json:"configChecksum"`
	// TrustedCAs is the object storage's CA Secret, which the CN container
	// mounts and cn-start.sh adds to its S3 client's CA bundle, as a BE's.
	TrustedCAs []TrustedCA `json:"trustedCAs,omitempty"`
}

// Autoscaling is the CN autoscaler's range and targets (percent of the
// requests).
type Autoscaling struct {
	MinReplicas                       int32 `json:"minReplicas"`
	MaxReplicas                       int32 `json:"maxReplicas"`
	TargetCPUUtilizationPercentage    int32 `json:"targetCPUUtilizationPercentage,omitempty"`
	TargetMemoryUtilizationPercentage int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// MaxComputeReplicas bounds every CN count the module reports.
const MaxComputeReplicas int32 = 100

// CN ports (StarRocks be/src/common/config.h: a CN reads the BE's keys from
// cn.conf; the defaults of thrift_port, heartbeat_service_port, brpc_port,
// be_http_port and starlet_port).
const (
	ComputeThriftPort    = 9060
	ComputeHeartbeatPort = 9050
	ComputeBRPCPort      = 8060
	ComputeHTTPPort      = agentconfig.ComputeHTTPPort
	ComputeStarletPort   = 9070
)

// buildSharedData fills the shared-data parts of an entry built by Build.
func buildSharedData(e *Instance, sr *v1alpha1.Starrocks, r *classrules.Resolved, domain string) {
	sd := r.SharedData
	if sd == nil {
		return
	}
	e.StorageMode = string(v1alpha1.StorageObjectStorage)
	mem := BackendMemoryFor(sd.Compute.Memory.Value())
	c := &ComputeNodes{
		MemLimitBytes: mem.MemLimitBytes,
		Resources:     resources(sd.Compute),
		Cache:         Storage{Size: sd.Compute.Storage.String(), StorageClassName: sd.Compute.StorageClass},
		ConfigChecksum: checksum(map[string]string{"memLimitBytes": strconv.FormatInt(mem.MemLimitBytes, 10),
			"loadProcessMaxMemoryLimitPercent": strconv.FormatInt(e.Configuration.LoadProcessMaxMemoryLimitPercent, 10)}),
	}
	c.TrustedCAs = trustedCAs(sr)
	c.ConfigChecksum = trustedCAsChecksum(c.ConfigChecksum, c.TrustedCAs)
	if a := sd.Autoscaling; a != nil {
		c.Autoscaling = &Autoscaling{MinReplicas: a.MinReplicas, MaxReplicas: a.MaxReplicas}
		if a.TargetCPUUtilizationPercentage != nil {
			c.Autoscaling.TargetCPUUtilizationPercentage = *a.TargetCPUUtilizationPercentage
		}
		if a.TargetMemoryUtilizationPercentage != nil {
			c.Autoscaling.TargetMemoryUtilizationPercentage = *a.TargetMemoryUtilizationPercentage
		}
	} else {
		c.Replicas = sd.MinReplicas
	}
	e.Compute = c

	// No BEs: their hosts, config and replication rule do not apply.
	e.Backend = Backend{}
	e.AgentConfig.Backends = nil
	e.AgentConfig.BackendConfig = map[string]string{
		"streaming_load_max_mb": strconv.FormatInt(e.Configuration.StreamingLoadMaxMb, 10),
	}
	// StarRocks keeps one replica of a shared-data table whatever
	// default_replication_num says (fe-core server/RunMode.SharedData
	// .getDefaultReplicationNum returns 1): the object storage keeps the
	// copies.
	e.Configuration.DefaultReplicationNum = 1
	delete(e.AgentConfig.FrontendConfig, "default_replication_num")

	s := sd.Storage
	// A restored instance's FE comes up with the source's storage volume,
	// name and location (StarRocks' RestoreClusterSnapshotMgr
	// .updateStorageVolumes replaces only its properties): the agent finds
	// it under the same name and never creates a second one.
	vol := agentconfig.StorageVolume{
		Name:      agentconfig.StorageVolumeName(classrules.StorageVolumeUID(sr)),
		Location:  classrules.StorageLocation(sr),
		Endpoint:  s.Endpoint,
		Region:    s.Region,
		PathStyle: s.PathStyle,
		EnableSSL: strings.HasPrefix(s.Endpoint, "https://"),
		Credentials: agentconfig.S3Credentials{
			SecretName:         s.CredentialsSecretRef.Name,
			AccessKeyIDKey:     orDefault(s.CredentialsSecretRef.AccessKeyIDKey, "accessKeyID"),
			SecretAccessKeyKey: orDefault(s.CredentialsSecretRef.SecretAccessKeyKey, "secretAccessKey"),
		},
	}
	if ca := s.CASecretRef; ca != nil {
		vol.CA = &agentconfig.SecretKeyRef{Name: ca.Name, Key: orDefault(ca.Key, "ca.crt")}
	}
	names := e.Names
	e.AgentConfig.SharedData = &agentconfig.SharedData{
		StorageVolume: vol,
		ComputeNodes: agentconfig.ComputeNodes{
			StatefulSet:   names.ComputeStatefulSet,
			HostFormat:    fmt.Sprintf("%s-%%d.%s.%s.svc.%s", names.ComputeStatefulSet, names.ComputeHeadlessService, sr.Namespace, domain),
			HeartbeatPort: ComputeHeartbeatPort,
			Min:           sd.MinReplicas,
			Max:           sd.MaxReplicas,
		},
		// The disaster recovery of a shared-data instance: on by default.
		ClusterSnapshots: true,
	}
	if rf := sr.Spec.Storage.RestoreFrom; rf != nil {
		e.Frontend.RestoreClusterSnapshot = true
		// Root's password of the source, for the agent to take root over:
		// the team's Secret where it names one (read by name, so naming it
		// later needs no new pod), else the source's own Secret mounted,
		// which only a source of this namespace has.
		if ref := rf.RootPasswordSecretRef; ref != nil {
			e.AgentConfig.SharedData.SourceRootPassword = &agentconfig.SecretKeyRef{Name: ref.Name, Key: orDefault(ref.Key, "password")}
		}
		if rf.Namespace == sr.Namespace {
			e.Frontend.RestoreSourceCredentialsSecret = NamesFor(rf.InstanceName).AgentCredentialsSecret
		}
	}
}

// LocationConflicts finds the shared-data instances whose storage volume
// location overlaps the location of an older live one
// (classrules.LocationsOverlap): each instance's vacuum would delete the
// other's files. The older keeps its place; the newer (by creation time,
// then namespace and name) is refused naming the older. objs are the
// instances that are not ending.
func LocationConflicts(objs []*v1alpha1.Starrocks) map[string]classrules.Violations {
	type located struct {
		sr  *v1alpha1.Starrocks
		loc string
	}
	var ls []located
	for _, sr := range objs {
		if loc := classrules.StorageLocation(sr); loc != "" {
			ls = append(ls, located{sr, loc})
		}
	}
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i].sr, ls[j].sr
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return Key(a.Namespace, a.Name) < Key(b.Namespace, b.Name)
	})
	out := map[string]classrules.Violations{}
	// Two locations overlap when one, ended with "/", begins the other
	// (classrules.LocationsOverlap): the shorter is the longer cut at one
	// of its "/". So each location is looked up as it is cut at each of
	// its "/" (a kept location there, older) and whole (the oldest kept
	// location below it): linear in the locations and their "/", where
	// comparing every pair grew with the square of the shared-data
	// instances (500 ms a run at 2000 of them).
	keptAt := map[string]int{}      // a kept location, ended with "/": its index in ls
	oldestBelow := map[string]int{} // every "/"-ended head of a kept location: the oldest kept index under it
	for j, l := range ls {
		loc := strings.TrimSuffix(l.loc, "/") + "/"
		older := -1
		for k := range len(loc) {
			if loc[k] != '/' {
				continue
			}
			if i, ok := keptAt[loc[:k+1]]; ok && (older < 0 || i < older) {
				older = i
			}
		}
		if i, ok := oldestBelow[loc]; ok && (older < 0 || i < older) {
			older = i
		}
		if older >= 0 {
			o := ls[older].sr
			if rf := l.sr.Spec.Storage.RestoreFrom; rf != nil {
				out[Key(l.sr.Namespace, l.sr.Name)] = classrules.Violations{{
					Field: "spec.storage.restoreFrom", Value: strconv.Quote(rf.Namespace + "/" + rf.InstanceName + "/" + rf.InstanceUID),
					Rule: "a location no live instance's overlaps",
					Message: fmt.Sprintf("the instance would take over the files at %s while Starrocks %s still uses them: each one's vacuum would delete the other's data; delete Starrocks %s first (its files stay), then the restore starts",
						l.loc, Key(o.Namespace, o.Name), Key(o.Namespace, o.Name))}}
				continue
			}
			out[Key(l.sr.Namespace, l.sr.Name)] = classrules.Violations{{
				Field: "spec.storage.objectStorage.prefix", Value: strconv.Quote(l.sr.Spec.Storage.ObjectStorage.Prefix),
				Rule: "a location no other instance's overlaps",
				Message: fmt.Sprintf("the instance's files would be at %s, which overlaps the files of an older instance (Starrocks %s): each one's vacuum would delete the other's data; choose another prefix or bucket",
					l.loc, Key(o.Namespace, o.Name))}}
			continue
		}
		keptAt[loc] = j
		for k := range len(loc) {
			if loc[k] == '/' {
				if _, ok := oldestBelow[loc[:k+1]]; !ok {
					oldestBelow[loc[:k+1]] = j
				}
			}
		}
	}
	return out
}

// checkStorageKept refuses a spec whose storage differs from the entry in
// effect (last, nil for none): the CRD and the webhook refuse the change,
// and a Starrocks written past them (validation off, an old CRD) must not
// move the instance's tables either (classrules.CheckStorageChange says
// why). The endpoint and the location are what the entry keeps of it.
func checkStorageKept(sr *v1alpha1.Starrocks, last *Instance) classrules.Violations {
	if last == nil || last.UID != string(sr.UID) {
		return nil
	}
	wasShared := last.StorageMode == string(v1alpha1.StorageObjectStorage)
	if sr.Spec.IsSharedData() != wasShared {
		was := v1alpha1.StorageLocal
		if wasShared {
			was = v1alpha1.StorageObjectStorage
		}
		return classrules.Violations{{Field: "spec.storage.mode", Value: strconv.Quote(string(modeOf(sr))), Rule: "immutable (" + string(was) + ")",
			Message: "StarRocks cannot convert an instance between local and object storage (run_mode never changes); create a new instance and move the data"}}
	}
	if !wasShared || last.AgentConfig.SharedData == nil {
		return nil
	}
	vol := last.AgentConfig.SharedData.StorageVolume
	s := sr.Spec.Storage.ObjectStorage
	if loc := classrules.StorageLocation(sr); loc != vol.Location || s.Endpoint != vol.Endpoint || s.Region != vol.Region || s.PathStyle != vol.PathStyle {
		return classrules.Violations{{Field: "spec.storage.objectStorage", Value: strconv.Quote(s.Endpoint + " " + loc), Rule: "immutable (" + strconv.Quote(vol.Endpoint+" "+vol.Location) + ")",
			Message: "the object storage location is fixed when the instance is created: StarRocks makes the tables of a storage volume whose location changed read-only; only credentialsSecretRef and caSecretRef may change"}}
	}
	return nil
}

func modeOf(sr *v1alpha1.Starrocks) v1alpha1.StorageMode {
	if sr.Spec.IsSharedData() {
		return v1alpha1.StorageObjectStorage
	}
	return v1alpha1.StorageLocal
}
