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
	"math/big"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// StarRocks's own defaults, the bottom layer of the merged configuration
// (fe.conf / be.conf defaults of StarRocks 3.x and 4.x).
const (
	DefaultStreamingLoadMaxMb               int64 = 102400
	DefaultLoadProcessMaxMemoryLimitPercent int64 = 30
	DefaultCatalogTrashExpireSecond         int64 = 86400
)

// Resolved is an instance after class defaults and user overrides: what the
// CEL rules see and what the desired state is computed from.
type Resolved struct {
	Type     v1alpha1.InstanceType
	Topology v1alpha1.Topology
	// Zones are the class's allowed zones; empty means any.
	Zones []string
	// Configuration is the merged configuration, every key set.
	Configuration ResolvedConfiguration
	Frontend      ResolvedComponent
	Backend       ResolvedComponent
	// RequireSecureTransport is spec.tls.requireSecureTransport.
	RequireSecureTransport bool
	// Databases, Roles and Users are spec.databases, spec.roles and
	// spec.users, checked by CheckAccounts.
	Databases []v1alpha1.Database
	Roles     []v1alpha1.Role
	Users     []v1alpha1.User
	// backup is the `backup` variable of the CEL rules (backupActivation).
	backup map[string]any
	// SharedData is what an ObjectStorage (shared-data) instance runs
	// with; nil for local storage, whose BEs are Backend.
	SharedData *ResolvedSharedData
}

func (r *Resolved) backupVar() map[string]any {
	if r.backup == nil {
		return backupActivation(&v1alpha1.StarrocksSpec{})
	}
	return r.backup
}

// ResolvedConfiguration is the merged configuration.
type ResolvedConfiguration struct {
	StreamingLoadMaxMb               int64
	LoadProcessMaxMemoryLimitPercent int64
	CatalogTrashExpireSecond         int64
}

// ResolvedComponent is the effective size of one component.
type ResolvedComponent struct {
	Replicas     int32
	Cores        int32
	CoreFraction int32
	Memory       resource.Quantity
	Storage      resource.Quantity
	StorageClass string
	// PolicyIndex is the sizing policy the size falls into, -1 for none.
	PolicyIndex int
}

// Default fills what the user left out, in place: spec.type (Standalone),
// spec.cluster.topology (the class default) and each component's
// cpu.coreFraction (the largest fraction of the matching policy): choices
// fixed when the instance is made. Configuration is never written: a key the
// user leaves out follows the class default, also after the admin changes
// it (one rule whether or not the webhook was up when the instance was
// created); Resolve merges it, and status.configuration reports the
// effective values.
func (c *Compiled) Default(sr *v1alpha1.Starrocks) {
	spec := &sr.Spec
	if spec.Type == "" {
		spec.Type = v1alpha1.TypeStandalone
	}
	if spec.Cluster == nil {
		spec.Cluster = &v1alpha1.ClusterSpec{}
	}
	if spec.Cluster.Topology == "" {
		spec.Cluster.Topology = c.class.Spec.Topology.DefaultTopology
	}
	for _, cpu := range []*v1alpha1.CPUSpec{&spec.Frontend.CPU, &spec.Backend.CPU} {
		if cpu.CoreFraction != 0 {
			continue
		}
		if i, n := c.policyFor(cpu.Cores); n == 1 {
			cpu.CoreFraction = largestFraction(c.class.Spec.SizingPolicies[i])
		}
	}
	if cpu := computeCPU(spec); cpu != nil && cpu.CoreFraction == 0 {
		policies := c.class.Spec.SizingPolicies
		if p := c.class.Spec.SharedData; p != nil && len(p.ComputeSizingPolicies) > 0 {
			policies = p.ComputeSizingPolicies
		}
		if i, n := policyIn(policies, cpu.Cores); n == 1 {
			cpu.CoreFraction = largestFraction(policies[i])
		}
	}
}

func computeCPU(spec *v1alpha1.StarrocksSpec) *v1alpha1.CPUSpec {
	if spec.Compute == nil {
		return nil
	}
	return &spec.Compute.CPU
}

// policyFor returns the index of the first policy covering cores and how many
// policies cover it.
func (c *Compiled) policyFor(cores int32) (index, count int) {
	return policyIn(c.class.Spec.SizingPolicies, cores)
}

// policyIn returns the index of the first of policies covering cores and
// how many cover it.
func policyIn(policies []v1alpha1.SizingPolicy, cores int32) (index, count int) {
	index = -1
	for i, p := range policies {
		if cores >= p.Cores.Min && cores <= p.Cores.Max {
			if index < 0 {
				index = i
			}
			count++
		}
	}
	return index, count
}

// Validate checks every class rule on the instance: its strings are of the
// syntax the CRD demands (CheckInstanceStrings), the class itself is
// valid, each component's size falls into exactly one sizing policy (cores,
// memory min/max/step, coreFraction), the topology and zones are allowed,
// only overridable configuration keys are set, and the class's CEL
// validations hold over the resolved instance. It does not modify sr.
func (c *Compiled) Validate(sr *v1alpha1.Starrocks) Violations {
	_, vs := c.Resolve(sr)
	return vs
}

// Resolve merges configuration (StarRocks defaults < class configuration <
// user overrides) and sizes, and validates the result. With violations the
// Resolved is nil.
func (c *Compiled) Resolve(sr *v1alpha1.Starrocks) (*Resolved, Violations) {
	vs := CheckInstanceStrings(sr)
	vs = append(vs, CheckAccounts(sr, c.class)...)
	vs = append(vs, c.checkBackup(sr)...)
	name := c.class.Name
	if len(c.problems) > 0 {
		vs = append(vs, Violation{
			Field:   "spec.starrocksClassName",
			Value:   name,
			Rule:    fmt.Sprintf("class %q must be valid", name),
			Message: fmt.Sprintf("StarrocksClass %q is invalid, so no instance can be checked against it; the platform admin must fix: %s", name, c.problems.Error()),
		})
	}

	r := &Resolved{
		Type:                   sr.Spec.Type,
		Topology:               c.class.Spec.Topology.DefaultTopology,
		Zones:                  slices.Clone(c.class.Spec.Topology.AllowedZones),
		RequireSecureTransport: sr.Spec.TLS != nil && sr.Spec.TLS.RequireSecureTransport,
		Databases:              slices.Clone(sr.Spec.Databases),
		Roles:                  slices.Clone(sr.Spec.Roles),
		Users:                  slices.Clone(sr.Spec.Users),
		backup:                 backupActivation(&sr.Spec),
	}
	if r.Type == "" {
		r.Type = v1alpha1.TypeStandalone
	}
	if sr.Spec.Cluster != nil && sr.Spec.Cluster.Topology != "" {
		r.Topology = sr.Spec.Cluster.Topology
	}

	var fv, bv, sv Violations
	r.SharedData, sv = c.checkSharedData(sr)
	vs = append(vs, sv...)
	shared := sr.Spec.IsSharedData()
	r.Frontend, fv = c.component("spec.frontend", sr.Spec.Frontend)
	fv = append(fv, memoryFloor("spec.frontend", "FE", r.Frontend.Memory, FrontendMemoryFloor, fv)...)
	vs = append(vs, fv...)
	if !shared {
		r.Backend, bv = c.component("spec.backend", sr.Spec.Backend.ComponentSpec)
		bv = append(bv, memoryFloor("spec.backend", "BE", r.Backend.Memory, BackendMemoryFloor, bv)...)
		vs = append(vs, bv...)
		r.Backend.Replicas = 1
	}
	r.Frontend.Replicas = 1
	if r.Type == v1alpha1.TypeCluster {
		r.Frontend.Replicas = v1alpha1.ClusterFrontendReplicas
	}
	switch {
	case shared:
		// checkSharedData refuses spec.backend; the BE count rules below
		// are about BEs only.
	case r.Type == v1alpha1.TypeCluster:
		if n := sr.Spec.Backend.Replicas; n != nil && (*n < 1 || *n > 100) {
			// The CRD bounds, repeated: a count outside them must not reach
			// the desired state.
			vs = append(vs, Violation{Field: "spec.backend.replicas", Value: fmt.Sprint(*n),
				Rule: "spec.backend.replicas in [1, 100]", Message: "the BE count must be from 1 to 100"})
		} else if n != nil {
			r.Backend.Replicas = *n
		}
	case sr.Spec.Backend.Replicas != nil:
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: fmt.Sprint(*sr.Spec.Backend.Replicas),
			Rule:    "spec.type Standalone has exactly one BE",
			Message: "a Standalone has exactly one BE; only a Cluster sets the BE count"})
	}
	if !shared && r.Type == v1alpha1.TypeCluster && sr.Spec.Backend.Replicas == nil {
		vs = append(vs, Violation{Field: "spec.backend.replicas", Value: "<unset>",
			Rule:    "spec.type Cluster needs spec.backend.replicas",
			Message: "a Cluster needs the BE count (1 to 100)"})
	}

	top := c.class.Spec.Topology
	if !slices.Contains(top.AllowedTopologies, r.Topology) {
		vs = append(vs, Violation{Field: "spec.cluster.topology", Value: string(r.Topology),
			Rule:    fmt.Sprintf("class %q topology.allowedTopologies %s", name, topologyList(top.AllowedTopologies)),
			Message: fmt.Sprintf("topology %s is not allowed by the class", r.Topology)})
	}
	// The instance does not choose zones; it gets the class's allowedZones.
	// A TransZonal instance spreads over them, which needs at least two.
	if r.Topology == v1alpha1.TopologyTransZonal && len(top.AllowedZones) == 1 {
		vs = append(vs, Violation{Field: "spec.cluster.topology", Value: string(r.Topology),
			Rule:    fmt.Sprintf("class %q topology.allowedZones %s", name, stringList(top.AllowedZones)),
			Message: "topology TransZonal spreads pods over zones, but the class allows only one zone; choose Zonal or Ignored"})
	}

	r.Configuration, fv = c.configuration(sr.Spec.Configuration)
	vs = append(vs, fv...)

	// CEL rules only run over a resolved instance whose sizes are known;
	// otherwise their messages would add noise to the real problem.
	if len(vs) == 0 {
		vs = append(vs, c.evalRules(r)...)
	}
	if len(vs) > 0 {
		return nil, vs
	}
	return r, nil
}

func (c *Compiled) component(prefix string, spec v1alpha1.ComponentSpec) (ResolvedComponent, Violations) {
	return c.componentIn(prefix, spec, c.class.Spec.SizingPolicies, "sizingPolicies")
}

// componentIn sizes a component by one list of the class's sizing
// policies; policiesField names the list in the class (sizingPolicies,
// sharedData.computeSizingPolicies).
func (c *Compiled) componentIn(prefix string, spec v1alpha1.ComponentSpec, policies []v1alpha1.SizingPolicy, policiesField string) (ResolvedComponent, Violations) {
	name := c.class.Name
	rc := ResolvedComponent{
		Cores:        spec.CPU.Cores,
		CoreFraction: spec.CPU.CoreFraction,
		Memory:       spec.Memory.Size.DeepCopy(),
		Storage:      spec.PersistentVolumeClaim.Size.DeepCopy(),
		StorageClass: spec.PersistentVolumeClaim.StorageClassName,
		PolicyIndex:  -1,
	}
	var vs Violations
	if rc.Storage.Sign() <= 0 {
		vs = append(vs, Violation{Field: prefix + ".persistentVolumeClaim.size", Value: rc.Storage.String(),
			Rule: "persistentVolumeClaim.size > 0", Message: "the volume size must be greater than zero"})
	}
	if rc.Memory.Sign() <= 0 {
		vs = append(vs, Violation{Field: prefix + ".memory.size", Value: rc.Memory.String(),
			Rule: "memory.size > 0", Message: "the memory size must be greater than zero"})
	}
	i, n := policyIn(policies, rc.Cores)
	switch {
	case n == 0:
		vs = append(vs, Violation{Field: prefix + ".cpu.cores", Value: fmt.Sprint(rc.Cores),
			Rule:    fmt.Sprintf("class %q %s cores ranges %s", name, policiesField, coreRanges(policies)),
			Message: coreCount(rc.Cores) + " into no sizing policy of the class"})
		return rc, vs
	case n > 1:
		vs = append(vs, Violation{Field: prefix + ".cpu.cores", Value: fmt.Sprint(rc.Cores),
			Rule:    fmt.Sprintf("class %q %s cores ranges %s", name, policiesField, coreRanges(policies)),
			Message: coreCount(rc.Cores) + " into more than one sizing policy of the class; the class must be fixed"})
		return rc, vs
	}
	rc.PolicyIndex = i
	p := policies[i]
	rule := fmt.Sprintf("class %q %s[%d]", name, policiesField, i)
	if rc.CoreFraction == 0 {
		rc.CoreFraction = largestFraction(p)
	} else if !slices.Contains(p.CoreFractions, rc.CoreFraction) {
		vs = append(vs, Violation{Field: prefix + ".cpu.coreFraction", Value: fmt.Sprint(rc.CoreFraction),
			Rule:    fmt.Sprintf("%s.coreFractions %s", rule, int32List(p.CoreFractions)),
			Message: fmt.Sprintf("core fraction %d%% is not one the policy for %s allows", rc.CoreFraction, policyCores(p))})
	}
	if rc.Memory.Sign() > 0 {
		switch {
		case rc.Memory.Cmp(p.Memory.Min) < 0:
			vs = append(vs, Violation{Field: prefix + ".memory.size", Value: rc.Memory.String(),
				Rule:    fmt.Sprintf("%s.memory.min %s", rule, p.Memory.Min.String()),
				Message: "memory is below the minimum of the policy for " + policyCores(p)})
		case rc.Memory.Cmp(p.Memory.Max) > 0:
			vs = append(vs, Violation{Field: prefix + ".memory.size", Value: rc.Memory.String(),
				Rule:    fmt.Sprintf("%s.memory.max %s", rule, p.Memory.Max.String()),
				Message: "memory is above the maximum of the policy for " + policyCores(p)})
		}
		if p.Memory.Step != nil && p.Memory.Step.Sign() > 0 && !multipleOf(rc.Memory, *p.Memory.Step) {
			vs = append(vs, Violation{Field: prefix + ".memory.size", Value: rc.Memory.String(),
				Rule:    fmt.Sprintf("%s.memory.step %s", rule, p.Memory.Step.String()),
				Message: fmt.Sprintf("memory must be a multiple of %s", p.Memory.Step.String())})
		}
	}
	return rc, vs
}

// coreCount is "1 core falls" or "<n> cores fall".
func coreCount(n int32) string {
	if n == 1 {
		return "1 core falls"
	}
	return fmt.Sprintf("%d cores fall", n)
}

// policyCores is "1-4 cores" or, for a one-size policy, "2 cores" / "1 core".
func policyCores(p v1alpha1.SizingPolicy) string {
	switch {
	case p.Cores.Min != p.Cores.Max:
		return fmt.Sprintf("%d-%d cores", p.Cores.Min, p.Cores.Max)
	case p.Cores.Min == 1:
		return "1 core"
	default:
		return fmt.Sprintf("%d cores", p.Cores.Min)
	}
}

// largestFraction is the default core fraction of a policy; 0 for a policy
// without fractions (an invalid class, reported by Compile).
func largestFraction(p v1alpha1.SizingPolicy) int32 {
	if len(p.CoreFractions) == 0 {
		return 0
	}
	return slices.Max(p.CoreFractions)
}

// multipleOf compares exactly, also for quantities with milli parts.
func multipleOf(q, step resource.Quantity) bool {
	a, b := q.AsDec().UnscaledBig(), step.AsDec().UnscaledBig()
	sa, sb := q.AsDec().Scale(), step.AsDec().Scale()
	// Bring both to the same scale: value = unscaled * 10^-scale.
	a, b = new(big.Int).Set(a), new(big.Int).Set(b)
	ten := big.NewInt(10)
	for sa < sb {
		a.Mul(a, ten)
		sa++
	}
	for sb < sa {
		b.Mul(b, ten)
		sb++
	}
	if b.Sign() == 0 {
		return false
	}
	return new(big.Int).Rem(a, b).Sign() == 0
}

func (c *Compiled) configuration(user *v1alpha1.Configuration) (ResolvedConfiguration, Violations) {
	var out ResolvedConfiguration
	cls := &c.class.Spec.Configuration
	for _, f := range configFields {
		v := f.def
		if cv, ok := f.get(cls); ok {
			v = cv
		}
		*f.resolved(&out) = v
	}
	if user == nil {
		return out, nil
	}
	vs := configRanges("spec.configuration", user, "Starrocks spec.configuration bounds")
	allowed := c.class.Spec.OverridableConfiguration
	for _, f := range configFields {
		v, ok := f.get(user)
		switch {
		case !ok:
		case slices.Contains(allowed, f.key):
			*f.resolved(&out) = v
		default:
			vs = append(vs, Violation{Field: "spec.configuration." + string(f.key), Value: fmt.Sprint(v),
				Rule:    fmt.Sprintf("class %q overridableConfiguration %s", c.class.Name, keyList(allowed)),
				Message: fmt.Sprintf("%s is not overridable in this class; remove it to get the class value", f.key)})
		}
	}
	return out, vs
}

// Activation returns the CEL variables of a resolved instance (documented on
// v1alpha1.ValidationRule).
func (r *Resolved) Activation() map[string]any {
	comp := func(rc ResolvedComponent, withReplicas bool) map[string]any {
		m := map[string]any{
			"cpu":                   map[string]any{"cores": int64(rc.Cores), "coreFraction": int64(rc.CoreFraction)},
			"memory":                map[string]any{"size": rc.Memory.Value()},
			"persistentVolumeClaim": map[string]any{"size": rc.Storage.Value()},
		}
		if withReplicas {
			m["replicas"] = int64(rc.Replicas)
		}
		return m
	}
	return map[string]any{
		"configuration": map[string]int64{
			string(v1alpha1.KeyStreamingLoadMaxMb):               r.Configuration.StreamingLoadMaxMb,
			string(v1alpha1.KeyLoadProcessMaxMemoryLimitPercent): r.Configuration.LoadProcessMaxMemoryLimitPercent,
			string(v1alpha1.KeyCatalogTrashExpireSecond):         r.Configuration.CatalogTrashExpireSecond,
		},
		"frontend":  comp(r.Frontend, false),
		"backend":   comp(r.Backend, true),
		"type":      string(r.Type),
		"databases": r.databasesActivation(),
		"roles":     r.rolesActivation(),
		"users":     r.usersActivation(),
		"backup":    r.backupVar(),
		"storage":   string(r.storageMode()),
		"compute":   r.computeActivation(),
	}
}

func (c *Compiled) evalRules(r *Resolved) Violations {
	if len(c.rules) == 0 {
		return nil
	}
	act := r.Activation()
	var vs Violations
	var spent uint64
	for _, cr := range c.rules {
		ruleName := fmt.Sprintf("class %q validations[%d]: %s", c.class.Name, cr.index, cr.rule.Rule)
		field, value := describePaths(cr.paths, act)
		if spent >= TotalCostBudget {
			vs = append(vs, Violation{Field: field, Value: value, Rule: ruleName,
				Message: fmt.Sprintf("the class rules together exceed the CEL cost budget of one instance (%d), so this and the later rules were not evaluated and the instance cannot be accepted; the platform admin must simplify the rules", TotalCostBudget)})
			break
		}
		out, det, err := cr.program.Eval(act)
		if det != nil && det.ActualCost() != nil {
			spent += *det.ActualCost()
		}
		if err != nil {
			msg := fmt.Sprintf("the class rule could not be evaluated (%s), so the instance cannot be accepted; the platform admin must fix the rule", oneLine(err.Error()))
			vs = append(vs, Violation{Field: field, Value: value, Rule: ruleName, Message: msg})
			continue
		}
		b, ok := out.Value().(bool)
		if !ok {
			vs = append(vs, Violation{Field: field, Value: value, Rule: ruleName,
				Message: fmt.Sprintf("the class rule returned %v instead of true or false", out.Value())})
			continue
		}
		if !b {
			vs = append(vs, Violation{Field: field, Value: value, Rule: ruleName, Message: cr.rule.Message})
		}
	}
	return vs
}

// describePaths maps CEL variable paths to spec fields and their values.
func describePaths(paths []string, act map[string]any) (field, value string) {
	if len(paths) == 0 {
		return "spec", "-"
	}
	fields := make([]string, 0, len(paths))
	values := make([]string, 0, len(paths))
	for _, p := range paths {
		fields = append(fields, "spec."+p)
		values = append(values, p+"="+lookup(p, act))
	}
	return strings.Join(fields, ", "), strings.Join(values, ", ")
}

// maxShownNames bounds the names of a list variable shown in a violation.
const maxShownNames = 8

func lookup(path string, act map[string]any) string {
	var cur any = act
	for _, part := range strings.Split(path, ".") {
		switch m := cur.(type) {
		case map[string]any:
			cur = m[part]
		case map[string]int64:
			cur = m[part]
		default:
			return "?"
		}
	}
	switch l := cur.(type) {
	case nil:
		return "<unset>"
	case []string:
		if len(l) > maxShownNames {
			return stringList(append(slices.Clone(l[:maxShownNames]), fmt.Sprintf("... %d in all", len(l))))
		}
		return stringList(l)
	case []map[string]any:
		// roles, users: their names, not every field.
		names := make([]string, 0, min(len(l), maxShownNames)+1)
		for _, m := range l[:min(len(l), maxShownNames)] {
			names = append(names, fmt.Sprint(m["name"]))
		}
		if len(l) > maxShownNames {
			names = append(names, fmt.Sprintf("... %d in all", len(l)))
		}
		return stringList(names)
	}
	return fmt.Sprint(cur)
}

func coreRanges(policies []v1alpha1.SizingPolicy) string {
	ss := make([]string, len(policies))
	for i, p := range policies {
		ss[i] = fmt.Sprintf("[%d-%d]", p.Cores.Min, p.Cores.Max)
	}
	return strings.Join(ss, ", ")
}

func int32List(xs []int32) string {
	ss := make([]string, len(xs))
	for i, x := range xs {
		ss[i] = fmt.Sprint(x)
	}
	return stringList(ss)
}

// ValidateUpdate checks the rules that compare the old and the new object.
// The CRD enforces the same with CEL; the webhook gives the same message
// earlier and the hooks catch objects that bypassed both.
func ValidateUpdate(oldSR, newSR *v1alpha1.Starrocks) Violations {
	var vs Violations
	o, n := oldSR.Spec, newSR.Spec
	if o.Type == v1alpha1.TypeCluster && n.Type != v1alpha1.TypeCluster {
		vs = append(vs, Violation{Field: "spec.type", Value: string(n.Type), Rule: "spec.type Cluster -> Standalone is not allowed",
			Message: "a Cluster cannot become a Standalone: the data of the other BEs would be lost"})
	}
	if o.StarrocksClassName != n.StarrocksClassName {
		vs = append(vs, Violation{Field: "spec.starrocksClassName", Value: n.StarrocksClassName, Rule: fmt.Sprintf("immutable (was %q)", o.StarrocksClassName),
			Message: "the class of an instance cannot change; order a new instance of the other class instead"})
	}
	// The BE count rules (by one, one scale-in at a time, replication) are
	// CheckScaling's: the hooks apply them against the count in effect.
	for _, comp := range []struct {
		prefix   string
		old, new v1alpha1.PersistentVolumeClaimSpec
	}{
		{"spec.frontend.persistentVolumeClaim", o.Frontend.PersistentVolumeClaim, n.Frontend.PersistentVolumeClaim},
		{"spec.backend.persistentVolumeClaim", o.Backend.PersistentVolumeClaim, n.Backend.PersistentVolumeClaim},
	} {
		if comp.old.StorageClassName != comp.new.StorageClassName {
			vs = append(vs, Violation{Field: comp.prefix + ".storageClassName", Value: comp.new.StorageClassName,
				Rule:    fmt.Sprintf("immutable (was %q)", comp.old.StorageClassName),
				Message: "the storage class cannot change: a StatefulSet cannot move its volumes to another storage class"})
		}
		if comp.new.Size.Cmp(comp.old.Size) < 0 {
			vs = append(vs, Violation{Field: comp.prefix + ".size", Value: comp.new.Size.String(),
				Rule:    fmt.Sprintf("must not shrink (was %s)", comp.old.Size.String()),
				Message: "a volume cannot shrink"})
		}
	}
	vs = append(vs, CheckStorageChange(&n, &o)...)
	if o.Compute != nil && n.Compute != nil {
		oc, nc := o.Compute.Cache, n.Compute.Cache
		if oc.StorageClassName != nc.StorageClassName {
			vs = append(vs, Violation{Field: "spec.compute.cache.storageClassName", Value: nc.StorageClassName, Rule: fmt.Sprintf("immutable (was %q)", oc.StorageClassName),
				Message: "the storage class cannot change: a StatefulSet cannot move its volumes to another storage class"})
		}
		// Growth is the hooks' expansion of each CN's cache PVC, as for
		// the FE and BE volumes.
		if nc.Size.Cmp(oc.Size) < 0 {
			vs = append(vs, Violation{Field: "spec.compute.cache.size", Value: nc.Size.String(), Rule: fmt.Sprintf("must not shrink (was %s)", oc.Size.String()),
				Message: "a volume cannot shrink"})
		}
	}
	return vs
}

func backendCount(s v1alpha1.StarrocksSpec) int32 {
	if s.Type == v1alpha1.TypeCluster && s.Backend.Replicas != nil {
		return *s.Backend.Replicas
	}
	return 1
}

var _ error = Violations(nil)

func (r *Resolved) storageMode() v1alpha1.StorageMode {
	if r.SharedData != nil {
		return v1alpha1.StorageObjectStorage
	}
	return v1alpha1.StorageLocal
}

// computeActivation is the `compute` variable: the CN size and count range
// of a shared-data instance, zeros for local storage.
func (r *Resolved) computeActivation() map[string]any {
	sd := r.SharedData
	if sd == nil {
		sd = &ResolvedSharedData{}
	}
	return map[string]any{
		"cpu":         map[string]any{"cores": int64(sd.Compute.Cores), "coreFraction": int64(sd.Compute.CoreFraction)},
		"memory":      map[string]any{"size": sd.Compute.Memory.Value()},
		"cache":       map[string]any{"size": sd.Compute.Storage.Value()},
		"minReplicas": int64(sd.MinReplicas),
		"maxReplicas": int64(sd.MaxReplicas),
		"autoscaling": sd.Autoscaling != nil,
	}
}
