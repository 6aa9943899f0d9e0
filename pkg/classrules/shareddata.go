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
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// The shared-data rules: spec.storage, spec.compute and what a shared-data
// instance may not have, against the class's spec.sharedData policy. The
// CRD says the same where CEL can; these run in the webhook and in the
// hooks, so a Starrocks stored before a CRD upgrade or with validation off
// is refused the same way.

// Defaults of the class's sharedData.minReplicas and maxReplicas (the CRD
// declares the same).
const (
	DefaultSharedDataMinReplicas int32 = 1
	DefaultSharedDataMaxReplicas int32 = 10
	// MaxComputeReplicas is the CRD's bound of every CN count.
	MaxComputeReplicas int32 = 100
)

// ComputeMemoryFloor is the smallest memory a CN runs with: a CN is a BE
// without tablets of its own (be/src/service/starrocks_main.cpp starts the
// same process as a compute node), so the BE's floor holds.
var ComputeMemoryFloor = BackendMemoryFloor

// dotSegment finds a "." or ".." path segment: HTTP clients resolve them
// (RFC 3986 5.2.4), so the files would land outside the prefix shown.
var dotSegment = regexp.MustCompile(`(^|/)[.]{1,2}(/|$)`)

// ResolvedSharedData is what a shared-data instance runs with.
type ResolvedSharedData struct {
	// Storage is spec.storage.objectStorage, checked.
	Storage v1alpha1.BackupStorage
	// Compute is the CN size; Compute.Replicas is the fixed count, or
	// MinReplicas while autoscaling.
	Compute ResolvedComponent
	// MinReplicas and MaxReplicas bound the CN count: equal without
	// autoscaling.
	MinReplicas, MaxReplicas int32
	// Autoscaling is spec.compute.autoscaling, nil for a fixed count.
	Autoscaling *v1alpha1.ComputeAutoscaling
}

// sharedDataPolicy is the class's policy with its defaults filled.
func (c *Compiled) sharedDataPolicy() (v1alpha1.ClassSharedData, bool) {
	p := c.class.Spec.SharedData
	if p == nil {
		return v1alpha1.ClassSharedData{}, false
	}
	out := *p
	if out.MinReplicas == 0 {
		out.MinReplicas = DefaultSharedDataMinReplicas
	}
	if out.MaxReplicas == 0 {
		out.MaxReplicas = DefaultSharedDataMaxReplicas
	}
	return out, p.Allowed
}

// checkSharedData checks spec.storage and spec.compute, and for a
// shared-data instance resolves them.
func (c *Compiled) checkSharedData(sr *v1alpha1.Starrocks) (*ResolvedSharedData, Violations) {
	spec := &sr.Spec
	var vs Violations
	if st := spec.Storage; st != nil {
		switch st.Mode {
		case v1alpha1.StorageLocal, v1alpha1.StorageObjectStorage:
		default:
			vs = append(vs, stringViolation("spec.storage.mode", string(st.Mode), "Local or ObjectStorage", nil))
			return nil, vs
		}
	}
	if !spec.IsSharedData() {
		if spec.Compute != nil {
			vs = append(vs, Violation{Field: "spec.compute", Value: "<set>", Rule: "spec.compute only with spec.storage.mode ObjectStorage",
				Message: "compute nodes are for an ObjectStorage instance; a local-storage instance runs BEs (spec.backend)"})
		}
		if spec.Storage != nil && spec.Storage.ObjectStorage != nil {
			vs = append(vs, Violation{Field: "spec.storage.objectStorage", Value: "<set>", Rule: "spec.storage.objectStorage only with spec.storage.mode ObjectStorage",
				Message: "remove spec.storage.objectStorage: the instance keeps its tables on local volumes"})
		}
		if spec.Storage != nil && spec.Storage.RestoreFrom != nil {
			vs = append(vs, Violation{Field: "spec.storage.restoreFrom", Value: "<set>", Rule: "spec.storage.restoreFrom only with spec.storage.mode ObjectStorage",
				Message: "a local-storage instance is restored from a BACKUP (spec.restore), not from a cluster snapshot: remove spec.storage.restoreFrom"})
		}
		return nil, vs
	}

	name := c.class.Name
	policy, allowed := c.sharedDataPolicy()
	rule := fmt.Sprintf("class %q sharedData", name)
	if !allowed {
		vs = append(vs, Violation{Field: "spec.storage.mode", Value: string(v1alpha1.StorageObjectStorage), Rule: rule + ".allowed",
			Message: fmt.Sprintf("the class %q does not allow ObjectStorage instances (its spec.sharedData.allowed is not true); use local storage or ask the platform admin", name)})
	}
	if !equality.Semantic.DeepEqual(spec.Backend, v1alpha1.BackendSpec{}) {
		vs = append(vs, Violation{Field: "spec.backend", Value: "<set>", Rule: "no spec.backend with spec.storage.mode ObjectStorage",
			Message: "an ObjectStorage instance has no BEs: compute nodes (spec.compute) run the queries; remove spec.backend"})
	}
	if spec.Backup != nil {
		// StarRocks' BACKUP snapshots tablets of BEs; a shared-data
		// instance is protected by automated cluster snapshots (ADMIN SET
		// AUTOMATED CLUSTER SNAPSHOT ON, StarRocks 3.4.2+).
		vs = append(vs, Violation{Field: "spec.backup", Value: "<set>", Rule: "no spec.backup with spec.storage.mode ObjectStorage",
			Message: "StarRocks' BACKUP does not support shared-data; the module's automated cluster snapshots protect an ObjectStorage instance instead: remove spec.backup"})
	}
	if spec.Restore != nil {
		vs = append(vs, Violation{Field: "spec.restore", Value: "<set>", Rule: "no spec.restore with spec.storage.mode ObjectStorage",
			Message: "a shared-data instance is restored from a cluster snapshot, not from a BACKUP: remove spec.restore"})
	}

	if rf := spec.Storage.RestoreFrom; rf != nil {
		vs = append(vs, checkRestoreFrom(rf)...)
	}

	r := &ResolvedSharedData{}
	os := spec.Storage.ObjectStorage
	if os == nil {
		vs = append(vs, Violation{Field: "spec.storage.objectStorage", Value: "<unset>", Rule: "spec.storage.mode ObjectStorage needs objectStorage",
			Message: "an ObjectStorage instance needs the bucket: endpoint, bucket, credentialsSecretRef"})
	} else {
		r.Storage = *os.DeepCopy()
		vs = append(vs, checkStorageIn("spec.storage.objectStorage", *os, policy.AllowedEndpoints, rule)...)
		if os.Prefix != "" && dotSegment.MatchString(os.Prefix) {
			vs = append(vs, stringViolation("spec.storage.objectStorage.prefix", os.Prefix, "path segments other than '.' and '..' (HTTP clients resolve them, so the files would land outside the prefix shown)", nil))
		}
	}

	comp := spec.Compute
	if comp == nil {
		vs = append(vs, Violation{Field: "spec.compute", Value: "<unset>", Rule: "spec.storage.mode ObjectStorage needs spec.compute",
			Message: "an ObjectStorage instance needs compute nodes: spec.compute with cpu, memory, cache and replicas or autoscaling"})
		return nil, vs
	}
	policies, policiesField := policy.ComputeSizingPolicies, "sharedData.computeSizingPolicies"
	if len(policies) == 0 {
		policies, policiesField = c.class.Spec.SizingPolicies, "sizingPolicies"
	}
	var cv Violations
	r.Compute, cv = c.componentIn("spec.compute", v1alpha1.ComponentSpec{CPU: comp.CPU, Memory: comp.Memory,
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: comp.Cache.Size, StorageClassName: comp.Cache.StorageClassName}},
		policies, policiesField)
	for i := range cv {
		// componentIn knows the volume as persistentVolumeClaim.
		cv[i].Field = strings.Replace(cv[i].Field, "spec.compute.persistentVolumeClaim", "spec.compute.cache", 1)
	}
	cv = append(cv, memoryFloor("spec.compute", "CN", r.Compute.Memory, ComputeMemoryFloor, cv)...)
	vs = append(vs, cv...)
	if sc := comp.Cache.StorageClassName; sc != "" {
		if errs := validation.IsDNS1123Subdomain(sc); len(errs) > 0 {
			vs = append(vs, stringViolation("spec.compute.cache.storageClassName", sc, ruleDNS1123Sub, errs))
		}
	}
	if cs := policy.CacheSize; cs != nil && r.Compute.Storage.Sign() > 0 {
		if cs.Min != nil && r.Compute.Storage.Cmp(*cs.Min) < 0 {
			vs = append(vs, Violation{Field: "spec.compute.cache.size", Value: r.Compute.Storage.String(), Rule: rule + ".cacheSize.min " + cs.Min.String(),
				Message: fmt.Sprintf("the cache volume must be at least %s", cs.Min.String())})
		}
		if cs.Max != nil && r.Compute.Storage.Cmp(*cs.Max) > 0 {
			vs = append(vs, Violation{Field: "spec.compute.cache.size", Value: r.Compute.Storage.String(), Rule: rule + ".cacheSize.max " + cs.Max.String(),
				Message: fmt.Sprintf("the cache volume may be at most %s", cs.Max.String())})
		}
	}

	bounds := fmt.Sprintf("%s.minReplicas %d, maxReplicas %d", rule, policy.MinReplicas, policy.MaxReplicas)
	inBounds := func(field string, n int32) {
		if n < policy.MinReplicas || n > policy.MaxReplicas || n < 1 || n > MaxComputeReplicas {
			vs = append(vs, Violation{Field: field, Value: fmt.Sprint(n), Rule: bounds,
				Message: fmt.Sprintf("the class allows %d to %d compute nodes", policy.MinReplicas, policy.MaxReplicas)})
		}
	}
	switch a := comp.Autoscaling; {
	case (comp.Replicas == nil) == (a == nil):
		vs = append(vs, Violation{Field: "spec.compute", Value: "<set>", Rule: "exactly one of replicas, autoscaling",
			Message: "spec.compute needs exactly one of replicas (a fixed CN count) or autoscaling (a range)"})
	case comp.Replicas != nil:
		inBounds("spec.compute.replicas", *comp.Replicas)
		r.MinReplicas, r.MaxReplicas = *comp.Replicas, *comp.Replicas
	default:
		if !policy.AutoscalingAllowed {
			vs = append(vs, Violation{Field: "spec.compute.autoscaling", Value: "<set>", Rule: rule + ".autoscalingAllowed",
				Message: fmt.Sprintf("the class %q does not allow CN autoscaling; set spec.compute.replicas", name)})
		}
		inBounds("spec.compute.autoscaling.minReplicas", a.MinReplicas)
		inBounds("spec.compute.autoscaling.maxReplicas", a.MaxReplicas)
		if a.MinReplicas > a.MaxReplicas {
			vs = append(vs, Violation{Field: "spec.compute.autoscaling.minReplicas", Value: fmt.Sprint(a.MinReplicas), Rule: "minReplicas <= maxReplicas",
				Message: "minReplicas must not be greater than maxReplicas"})
		}
		if a.TargetCPUUtilizationPercentage == nil && a.TargetMemoryUtilizationPercentage == nil {
			vs = append(vs, Violation{Field: "spec.compute.autoscaling", Value: "<set>", Rule: "a CPU or memory target",
				Message: "autoscaling needs targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both"})
		}
		for _, t := range []struct {
			field string
			v     *int32
		}{{"targetCPUUtilizationPercentage", a.TargetCPUUtilizationPercentage}, {"targetMemoryUtilizationPercentage", a.TargetMemoryUtilizationPercentage}} {
			if t.v != nil && (*t.v < 1 || *t.v > 100) {
				vs = append(vs, Violation{Field: "spec.compute.autoscaling." + t.field, Value: fmt.Sprint(*t.v), Rule: "1 to 100",
					Message: "a utilization target is a percentage from 1 to 100"})
			}
		}
		r.Autoscaling = a.DeepCopy()
		r.MinReplicas, r.MaxReplicas = a.MinReplicas, a.MaxReplicas
	}
	r.Compute.Replicas = r.MinReplicas
	if len(vs) > 0 {
		return nil, vs
	}
	return r, nil
}

// CheckStorageChange refuses what StarRocks cannot follow on a running
// instance: another mode (fe.conf run_mode never changes once the FE has
// metadata, fe-core common/Config.run_mode) or another object storage
// location. StarRocks alters only the credentials of a storage volume: "If
// you changed the path-related configuration items, the databases and
// tables you created before the change become read-only" (StarRocks docs,
// sql-statements/cluster-management/storage_volume/ALTER_STORAGE_VOLUME.md).
// old is the spec in effect (nil for a new instance).
func CheckStorageChange(spec, old *v1alpha1.StarrocksSpec) Violations {
	if old == nil {
		return nil
	}
	if spec.IsSharedData() != old.IsSharedData() {
		return Violations{{Field: "spec.storage.mode", Value: string(modeOf(spec)), Rule: "spec.storage.mode is immutable (" + string(modeOf(old)) + ")",
			Message: "StarRocks cannot convert an instance between local and object storage (run_mode never changes); create a new instance and move the data"}}
	}
	if !spec.IsSharedData() || spec.Storage.ObjectStorage == nil || old.Storage.ObjectStorage == nil {
		return nil
	}
	n, o := spec.Storage.ObjectStorage, old.Storage.ObjectStorage
	var vs Violations
	if rn, ro := spec.Storage.RestoreFrom, old.Storage.RestoreFrom; !sameRestoreSource(rn, ro) {
		vs = append(vs, Violation{Field: "spec.storage.restoreFrom", Value: restoreFromValue(rn), Rule: "immutable (" + restoreFromValue(ro) + ")",
			Message: "spec.storage.restoreFrom is set only when the instance is created: the instance's tables are where the source wrote them; restore into a new instance"})
	}
	for _, f := range []struct{ field, now, was string }{
		{"endpoint", n.Endpoint, o.Endpoint},
		{"bucket", n.Bucket, o.Bucket},
		{"prefix", n.Prefix, o.Prefix},
		{"region", n.Region, o.Region},
		{"pathStyle", fmt.Sprint(n.PathStyle), fmt.Sprint(o.PathStyle)},
	} {
		if f.now != f.was {
			vs = append(vs, Violation{Field: "spec.storage.objectStorage." + f.field, Value: quoteValue(f.now), Rule: "immutable (" + quoteValue(f.was) + ")",
				Message: "the object storage location is fixed when the instance is created: StarRocks makes the tables of a storage volume whose location changed read-only; only credentialsSecretRef and caSecretRef may change"})
		}
	}
	return vs
}

func modeOf(spec *v1alpha1.StarrocksSpec) v1alpha1.StorageMode {
	if spec.IsSharedData() {
		return v1alpha1.StorageObjectStorage
	}
	return v1alpha1.StorageLocal
}

// StorageLocation is where a shared-data instance keeps its tables
// (agentconfig.StorageVolumeLocation), "" for a local-storage one.
func StorageLocation(sr *v1alpha1.Starrocks) string {
	if !sr.Spec.IsSharedData() || sr.Spec.Storage.ObjectStorage == nil {
		return ""
	}
	s := sr.Spec.Storage.ObjectStorage
	if rf := sr.Spec.Storage.RestoreFrom; rf != nil {
		// A restored instance keeps the source's storage volume, location
		// included: the snapshot's tables are there (StarRocks'
		// RestoreClusterSnapshotMgr only replaces the volume's properties).
		return agentconfig.StorageVolumeLocation(s.Bucket, s.Prefix, rf.Namespace, rf.InstanceName, rf.InstanceUID)
	}
	return agentconfig.StorageVolumeLocation(s.Bucket, s.Prefix, sr.Namespace, sr.Name, string(sr.UID))
}

// StorageVolumeUID is the UID the instance's storage volume is named after
// (agentconfig.StorageVolumeName): the source's for a restored instance,
// whose FE comes up with the source's volume, else its own.
func StorageVolumeUID(sr *v1alpha1.Starrocks) string {
	if sr.Spec.Storage != nil && sr.Spec.Storage.RestoreFrom != nil {
		return sr.Spec.Storage.RestoreFrom.InstanceUID
	}
	return string(sr.UID)
}

// sameRestoreSource tells whether two spec.storage.restoreFrom name the
// same source (or are both unset). The Secret with the source's root
// password may change: it only says where the agent reads it.
func sameRestoreSource(a, b *v1alpha1.ClusterSnapshotSource) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Namespace == b.Namespace && a.InstanceName == b.InstanceName && a.InstanceUID == b.InstanceUID
}

// checkRestoreFrom checks the strings of spec.storage.restoreFrom, which
// reach the location of the storage volume, the FE's start, and the
// agent's configuration and Role.
func checkRestoreFrom(rf *v1alpha1.ClusterSnapshotSource) Violations {
	vs := checkPasswordSecretRef("spec.storage.restoreFrom.rootPasswordSecretRef", rf.RootPasswordSecretRef)
	if len(validation.IsDNS1123Label(rf.Namespace)) > 0 {
		vs = append(vs, stringViolation("spec.storage.restoreFrom.namespace", rf.Namespace, ruleDNS1123Label, nil))
	}
	if !isInstanceName(rf.InstanceName) {
		vs = append(vs, stringViolation("spec.storage.restoreFrom.instanceName", rf.InstanceName, fmt.Sprintf(ruleDNS1035Label, MaxNameLength), nil))
	}
	if !uidRE.MatchString(rf.InstanceUID) {
		vs = append(vs, stringViolation("spec.storage.restoreFrom.instanceUID", rf.InstanceUID, "a UID (metadata.uid), e.g. 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", nil))
	}
	return vs
}

func restoreFromValue(rf *v1alpha1.ClusterSnapshotSource) string {
	if rf == nil {
		return "<unset>"
	}
	return quoteValue(rf.Namespace + "/" + rf.InstanceName + "/" + rf.InstanceUID)
}

// LocationsOverlap tells whether two storage volume locations share files:
// equal, or one inside the other. Each instance's vacuum and trash delete
// the files its metadata does not know, so two instances whose locations
// overlap delete each other's data. The prefix is the team's to choose and
// the namespace and name follow it, so a prefix can reach inside another
// instance's location (prefix "p/ns/db/<uid>" nests under the location of
// ns/db); the endpoint is left out: two spellings of one S3 server are
// one bucket.
func LocationsOverlap(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	a, b = strings.TrimSuffix(a, "/")+"/", strings.TrimSuffix(b, "/")+"/"
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// checkClassSharedData checks the class's own shared-data policy.
func checkClassSharedData(class *v1alpha1.StarrocksClass) Violations {
	p := class.Spec.SharedData
	if p == nil {
		return nil
	}
	var vs Violations
	rule := fmt.Sprintf("class %q sharedData", class.Name)
	for i, a := range p.AllowedEndpoints {
		if len(a) > 253 || !allowedHost.MatchString(a) {
			vs = append(vs, stringViolation(fmt.Sprintf("spec.sharedData.allowedEndpoints[%d]", i), a, "a host name, or *. and a domain, e.g. s3.example.com or *.storage.svc", nil))
		}
	}
	min, max := p.MinReplicas, p.MaxReplicas
	if min == 0 {
		min = DefaultSharedDataMinReplicas
	}
	if max == 0 {
		max = DefaultSharedDataMaxReplicas
	}
	if min < 1 || max > MaxComputeReplicas || min > max {
		vs = append(vs, Violation{Field: "spec.sharedData.minReplicas", Value: fmt.Sprintf("[%d, %d]", min, max), Rule: rule + " replicas 1 <= minReplicas <= maxReplicas <= 100",
			Message: "the CN count range must be 1 <= minReplicas <= maxReplicas <= 100"})
	}
	if cs := p.CacheSize; cs != nil {
		for _, q := range []struct {
			field string
			v     *resource.Quantity
		}{{"min", cs.Min}, {"max", cs.Max}} {
			if q.v != nil && q.v.Sign() <= 0 {
				vs = append(vs, Violation{Field: "spec.sharedData.cacheSize." + q.field, Value: q.v.String(), Rule: rule + ".cacheSize",
					Message: "a cache size bound must be greater than zero"})
			}
		}
		if cs.Min != nil && cs.Max != nil && cs.Min.Cmp(*cs.Max) > 0 {
			vs = append(vs, Violation{Field: "spec.sharedData.cacheSize", Value: fmt.Sprintf("[%s, %s]", cs.Min.String(), cs.Max.String()), Rule: rule + ".cacheSize",
				Message: "cacheSize.min must not be greater than cacheSize.max"})
		}
	}
	if len(p.ComputeSizingPolicies) > 0 {
		shadow := class.DeepCopy()
		shadow.Spec.SizingPolicies = p.ComputeSizingPolicies
		for _, v := range checkPolicies(shadow) {
			v.Field = strings.Replace(v.Field, "spec.sizingPolicies", "spec.sharedData.computeSizingPolicies", 1)
			v.Rule = strings.Replace(v.Rule, "sizingPolicies", "sharedData.computeSizingPolicies", -1)
			vs = append(vs, v)
		}
	}
	return vs
}
