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
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// CostLimit bounds the work one class validation rule may do on one
// instance: Kubernetes' limit of one CEL expression (k8s.io/apiserver
// pkg/apis/cel PerCallLimit). A rule walking every privilege of the largest
// spec the CRD allows (64 roles of 64 entries of 7 privileges) costs about
// 450,000 (TestAccountsCELCostOfTheLargestSpec); a rule that exceeds the
// limit is reported as a violation, it never blocks the hook or the
// webhook.
const CostLimit = 1_000_000

// TotalCostBudget bounds the work of all the rules of a class on one
// instance (Kubernetes' budget of the CEL rules of one object,
// k8s.io/apiserver pkg/apis/cel RuntimeCELCostBudget): 64 rules at
// CostLimit would keep the webhook past its 5-second timeout.
const TotalCostBudget = 10_000_000

// ZoneLabel is the node label zones are read from.
const ZoneLabel = "topology.kubernetes.io/zone"

// celEnv is shared: a cel.Env is safe for concurrent use and expensive to build.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		// Names and shapes are documented on v1alpha1.ValidationRule; keep both in sync.
		cel.Variable("configuration", cel.MapType(cel.StringType, cel.IntType)),
		cel.Variable("frontend", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("backend", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("type", cel.StringType),
		cel.Variable("databases", cel.ListType(cel.StringType)),
		cel.Variable("roles", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("users", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("backup", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("storage", cel.StringType),
		cel.Variable("compute", cel.MapType(cel.StringType, cel.DynType)),
		cel.OptionalTypes(),
	)
})

// Compiled is a class with its CEL rules compiled once. It is immutable and
// safe for concurrent use.
type Compiled struct {
	class    *v1alpha1.StarrocksClass
	rules    []compiledRule
	problems Violations
}

type compiledRule struct {
	index   int
	rule    v1alpha1.ValidationRule
	program cel.Program
	// paths are the variable paths the rule reads (e.g. frontend.memory.size),
	// so a failure can name the fields and their values.
	paths []string
}

// Class is the class the rules were compiled from. Do not modify it.
func (c *Compiled) Class() *v1alpha1.StarrocksClass { return c.class }

// Problems are the class's own violations (as returned by Compile).
func (c *Compiled) Problems() Violations { return c.problems }

// Compile checks a class and compiles its CEL rules. The returned Compiled is
// never nil: with class problems it still defaults instances, but Validate
// rejects every instance of the class and names the problems, so a broken
// class never lets an unchecked instance through.
func Compile(class *v1alpha1.StarrocksClass) (*Compiled, Violations) {
	c := &Compiled{class: class.DeepCopy()}
	name := class.Name
	var vs Violations

	env, err := celEnv()
	if err != nil {
		// The environment is static; failing here is a programming error,
		// but it must not crash the caller.
		vs = append(vs, Violation{Field: "spec.validations", Value: "-", Rule: "CEL environment",
			Message: fmt.Sprintf("the CEL environment could not be built: %v", err)})
	}
	for i, r := range class.Spec.Validations {
		field := fmt.Sprintf("spec.validations[%d].rule", i)
		if env == nil {
			break
		}
		checked, iss := env.Compile(r.Rule)
		if iss != nil && iss.Err() != nil {
			vs = append(vs, Violation{Field: field, Value: r.Rule, Rule: fmt.Sprintf("class %q validations[%d]", name, i),
				Message: fmt.Sprintf("the CEL rule does not compile: %s", oneLine(iss.Err().Error()))})
			continue
		}
		// dyn passes: a rule reading a field of frontend/backend (maps of
		// dyn) is only known to be bool at evaluation, which checks it.
		if out := checked.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
			vs = append(vs, Violation{Field: field, Value: r.Rule, Rule: fmt.Sprintf("class %q validations[%d]", name, i),
				Message: fmt.Sprintf("the CEL rule must evaluate to bool, not %s", checked.OutputType())})
			continue
		}
		prg, err := env.Program(checked, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost))
		if err != nil {
			vs = append(vs, Violation{Field: field, Value: r.Rule, Rule: fmt.Sprintf("class %q validations[%d]", name, i),
				Message: fmt.Sprintf("the CEL rule cannot be prepared for evaluation: %s", oneLine(err.Error()))})
			continue
		}
		c.rules = append(c.rules, compiledRule{index: i, rule: r, program: prg, paths: referencedPaths(checked)})
	}

	vs = append(vs, checkPolicies(class)...)
	vs = append(vs, checkFloors(class)...)
	vs = append(vs, checkTopology(class)...)
	vs = append(vs, checkConfiguration(class)...)
	vs = append(vs, checkClassStrings(class)...)
	vs = append(vs, checkClassAccounts(class)...)
	vs = append(vs, checkClassBackup(class)...)
	vs = append(vs, checkClassSharedData(class)...)
	c.problems = vs
	if len(vs) == 0 {
		return c, nil
	}
	return c, vs
}

// checkPolicies repeats the CRD's checks of sizing policies: the apiserver
// enforces them on create, but a class stored before a CRD upgrade or
// written with validation off must not produce ambiguous sizes.
func checkPolicies(class *v1alpha1.StarrocksClass) Violations {
	var vs Violations
	name := class.Name
	ps := class.Spec.SizingPolicies
	if len(ps) == 0 {
		vs = append(vs, Violation{Field: "spec.sizingPolicies", Value: "[]", Rule: fmt.Sprintf("class %q sizingPolicies", name),
			Message: "the class has no sizing policies, so no instance size can be valid"})
	}
	for i, p := range ps {
		f := fmt.Sprintf("spec.sizingPolicies[%d]", i)
		rule := fmt.Sprintf("class %q sizingPolicies[%d]", name, i)
		if p.Cores.Min > p.Cores.Max {
			vs = append(vs, Violation{Field: f + ".cores", Value: fmt.Sprintf("[%d, %d]", p.Cores.Min, p.Cores.Max), Rule: rule + ".cores",
				Message: "cores.min must not be greater than cores.max"})
		}
		if p.Memory.Min.Cmp(p.Memory.Max) > 0 {
			vs = append(vs, Violation{Field: f + ".memory", Value: fmt.Sprintf("[%s, %s]", p.Memory.Min.String(), p.Memory.Max.String()), Rule: rule + ".memory",
				Message: "memory.min must not be greater than memory.max"})
		}
		if p.Memory.Step != nil && p.Memory.Step.Sign() <= 0 {
			vs = append(vs, Violation{Field: f + ".memory.step", Value: p.Memory.Step.String(), Rule: rule + ".memory.step",
				Message: "the memory step must be greater than zero"})
		}
		if len(p.CoreFractions) == 0 {
			vs = append(vs, Violation{Field: f + ".coreFractions", Value: "[]", Rule: rule + ".coreFractions",
				Message: "the policy must list at least one core fraction"})
		}
		for _, fr := range p.CoreFractions {
			if fr < 1 || fr > 100 {
				vs = append(vs, Violation{Field: f + ".coreFractions", Value: fmt.Sprint(fr), Rule: rule + ".coreFractions",
					Message: "every core fraction must be a percentage from 1 to 100"})
			}
		}
		for j := i + 1; j < len(ps); j++ {
			q := ps[j]
			if p.Cores.Min <= q.Cores.Max && q.Cores.Min <= p.Cores.Max {
				vs = append(vs, Violation{Field: "spec.sizingPolicies", Value: fmt.Sprintf("[%d, %d] and [%d, %d]", p.Cores.Min, p.Cores.Max, q.Cores.Min, q.Cores.Max),
					Rule:    fmt.Sprintf("class %q sizingPolicies[%d] and sizingPolicies[%d]", name, i, j),
					Message: "the core ranges of two sizing policies overlap, so a size would fall into both"})
			}
		}
	}
	return vs
}

func checkTopology(class *v1alpha1.StarrocksClass) Violations {
	var vs Violations
	t := class.Spec.Topology
	if !slices.Contains(t.AllowedTopologies, t.DefaultTopology) {
		vs = append(vs, Violation{Field: "spec.topology.defaultTopology", Value: string(t.DefaultTopology),
			Rule:    fmt.Sprintf("class %q topology.allowedTopologies %s", class.Name, topologyList(t.AllowedTopologies)),
			Message: "the default topology must be one of the allowed topologies"})
	}
	if z, ok := class.Spec.NodeSelector[ZoneLabel]; ok && len(t.AllowedZones) > 0 && !slices.Contains(t.AllowedZones, z) {
		vs = append(vs, Violation{Field: "spec.nodeSelector." + ZoneLabel, Value: z,
			Rule:    fmt.Sprintf("class %q topology.allowedZones %s", class.Name, stringList(t.AllowedZones)),
			Message: "the node selector pins a zone that is not allowed, so no pod could be scheduled"})
	}
	return vs
}

func checkConfiguration(class *v1alpha1.StarrocksClass) Violations {
	var vs Violations
	for i, k := range class.Spec.OverridableConfiguration {
		if !slices.Contains(v1alpha1.AllConfigurationKeys, k) {
			vs = append(vs, Violation{Field: fmt.Sprintf("spec.overridableConfiguration[%d]", i), Value: string(k),
				Rule:    fmt.Sprintf("known configuration keys %s", keyList(v1alpha1.AllConfigurationKeys)),
				Message: "the key is not a configuration key the module knows"})
		}
	}
	vs = append(vs, configRanges("spec.configuration", &class.Spec.Configuration, fmt.Sprintf("class %q configuration", class.Name))...)
	return vs
}

// configRanges repeats the CRD bounds of Configuration (see its markers).
func configRanges(prefix string, cfg *v1alpha1.Configuration, rule string) Violations {
	if cfg == nil {
		return nil
	}
	var vs Violations
	for _, f := range configFields {
		if v, ok := f.get(cfg); ok && (v < f.min || v > f.max) {
			vs = append(vs, Violation{Field: prefix + "." + string(f.key), Value: fmt.Sprint(v), Rule: fmt.Sprintf("%s: %s in [%d, %d]", rule, f.key, f.min, f.max),
				Message: fmt.Sprintf("%s must be from %d to %d", f.key, f.min, f.max)})
		}
	}
	return vs
}

// referencedPaths lists the variable paths a rule reads, longest select
// chains first seen, e.g. ["configuration.streamingLoadMaxMb", "type"].
func referencedPaths(checked *cel.Ast) []string {
	seen := map[string]bool{}
	var out []string
	inner := map[celast.Expr]bool{}
	celast.PreOrderVisit(checked.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if inner[e] {
			return
		}
		path, ok := selectPath(e, inner)
		if !ok {
			return
		}
		if !seen[path] {
			seen[path] = true
			out = append(out, path)
		}
	}))
	sort.Strings(out)
	return out
}

// selectPath renders a chain of field selections rooted at a variable and
// marks the inner expressions so they are not reported on their own.
func selectPath(e celast.Expr, inner map[celast.Expr]bool) (string, bool) {
	switch e.Kind() {
	case celast.IdentKind:
		switch n := e.AsIdent(); n {
		case "configuration", "frontend", "backend", "type", "databases", "roles", "users":
			return n, true
		}
	case celast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return "", false
		}
		base, ok := selectPath(s.Operand(), inner)
		if !ok {
			return "", false
		}
		inner[s.Operand()] = true
		return base + "." + s.FieldName(), true
	}
	return "", false
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func topologyList(ts []v1alpha1.Topology) string {
	ss := make([]string, len(ts))
	for i, t := range ts {
		ss[i] = string(t)
	}
	return stringList(ss)
}

func keyList(ks []v1alpha1.ConfigurationKey) string {
	ss := make([]string, len(ks))
	for i, k := range ks {
		ss[i] = string(k)
	}
	return stringList(ss)
}

func stringList(ss []string) string { return "[" + strings.Join(ss, ", ") + "]" }

// Cache keeps one Compiled per class, recompiling only when the class
// changes. It is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	version  string
	compiled *Compiled
	problems Violations
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{entries: map[string]cacheEntry{}} }

// Get returns the compiled class, compiling it when this generation was not
// seen. Entries are keyed by UID and generation; objects without a UID (tests,
// dry runs) fall back to name and resourceVersion. An older generation of the
// same class is evicted when a newer one is compiled.
func (c *Cache) Get(class *v1alpha1.StarrocksClass) (*Compiled, Violations) {
	id, version := cacheKey(class)
	c.mu.Lock()
	if e, ok := c.entries[id]; ok && e.version == version && version != "" {
		c.mu.Unlock()
		return e.compiled, e.problems
	}
	c.mu.Unlock()

	// Compile outside the lock: another goroutine compiling the same class
	// wastes a little work but never blocks the others.
	compiled, problems := Compile(class)
	if version == "" {
		return compiled, problems
	}
	c.mu.Lock()
	c.entries[id] = cacheEntry{version: version, compiled: compiled, problems: problems}
	c.mu.Unlock()
	return compiled, problems
}

// Retain drops the entries of classes not in live (deleted classes).
func (c *Cache) Retain(live []*v1alpha1.StarrocksClass) {
	keep := make(map[string]bool, len(live))
	for _, cl := range live {
		id, _ := cacheKey(cl)
		keep[id] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.entries {
		if !keep[id] {
			delete(c.entries, id)
		}
	}
}

// Len is the number of cached classes.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func cacheKey(class *v1alpha1.StarrocksClass) (id, version string) {
	if class.UID != types.UID("") && class.Generation != 0 {
		return "uid/" + string(class.UID), fmt.Sprint(class.Generation)
	}
	if class.ResourceVersion != "" {
		return "name/" + class.Name, class.ResourceVersion
	}
	return "name/" + class.Name, ""
}
