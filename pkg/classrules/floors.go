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
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// The smallest memory the module runs a component with, whatever the class
// allows. StarRocks documents no hard minimum ("no specific requirement is
// imposed on memory"; 16 GB per FE and 64 GB per BE recommended for
// production, docs.starrocks.io/docs/deployment/plan_cluster); these are
// the sizes where the module's split of the pod memory (pkg/desired
// JavaHeapMb, BackendMemoryFor) still leaves StarRocks a working share:
//   - FE 2 GiB: a 1 GiB heap (the module's choice: upstream's fe.conf
//     defaults to an 8 GB heap, sized for production hosts, which the
//     module replaces with JavaHeapMb) plus 1 GiB for the JVM besides the
//     heap;
//   - BE 4 GiB: about 3.1 GiB mem_limit after 512 MiB headroom and the
//     embedded JVM's heap; the upstream quick start runs FE and BE together
//     in 4 GB.
var (
	FrontendMemoryFloor = resource.MustParse("2Gi")
	BackendMemoryFloor  = resource.MustParse("4Gi")
)

// memoryFloor rejects a component memory size below its floor. prior are
// the violations already found for the component: one that already says the
// memory is wrong for the class's policy is enough.
func memoryFloor(prefix, component string, mem, floor resource.Quantity, prior Violations) Violations {
	for _, v := range prior {
		if v.Field == prefix+".memory.size" {
			return nil
		}
	}
	if mem.Cmp(floor) >= 0 {
		return nil
	}
	article := "a"
	if component == "FE" {
		article = "an"
	}
	return Violations{{Field: prefix + ".memory.size", Value: mem.String(),
		Rule:    fmt.Sprintf("%s memory floor %s", component, floor.String()),
		Message: fmt.Sprintf("%s %s needs at least %s of memory, whatever the class allows", article, component, floor.String())}}
}

// checkFloors finds sizing policies no component could ever use because of
// the floors: a policy whose memory.max is below the smaller floor, and a
// class where no policy reaches a component's floor (no instance could ever
// be valid).
func checkFloors(class *v1alpha1.StarrocksClass) Violations {
	var vs Violations
	name := class.Name
	smallest := FrontendMemoryFloor
	if BackendMemoryFloor.Cmp(smallest) < 0 {
		smallest = BackendMemoryFloor
	}
	reaches := map[string]bool{}
	for i, p := range class.Spec.SizingPolicies {
		if p.Memory.Max.Cmp(smallest) < 0 {
			vs = append(vs, Violation{Field: fmt.Sprintf("spec.sizingPolicies[%d].memory.max", i), Value: p.Memory.Max.String(),
				Rule:    fmt.Sprintf("class %q sizingPolicies[%d]: FE memory floor %s, BE memory floor %s", name, i, FrontendMemoryFloor.String(), BackendMemoryFloor.String()),
				Message: fmt.Sprintf("the policy allows no memory size an FE (at least %s) or a BE (at least %s) can run with", FrontendMemoryFloor.String(), BackendMemoryFloor.String())})
		}
		reaches["an FE"] = reaches["an FE"] || p.Memory.Max.Cmp(FrontendMemoryFloor) >= 0
		reaches["a BE"] = reaches["a BE"] || p.Memory.Max.Cmp(BackendMemoryFloor) >= 0
	}
	if len(class.Spec.SizingPolicies) == 0 || len(vs) == len(class.Spec.SizingPolicies) {
		return vs // no policies, or each is reported already
	}
	var missing []string
	for _, c := range []struct {
		name  string
		floor resource.Quantity
	}{{"an FE", FrontendMemoryFloor}, {"a BE", BackendMemoryFloor}} {
		if !reaches[c.name] {
			missing = append(missing, fmt.Sprintf("%s needs at least %s", c.name, c.floor.String()))
		}
	}
	if len(missing) > 0 {
		vs = append(vs, Violation{Field: "spec.sizingPolicies", Value: "memory.max " + maxMemories(class.Spec.SizingPolicies),
			Rule:    fmt.Sprintf("class %q sizingPolicies: FE memory floor %s, BE memory floor %s", name, FrontendMemoryFloor.String(), BackendMemoryFloor.String()),
			Message: "no sizing policy allows enough memory, so no instance of the class can be valid: " + strings.Join(missing, ", ")})
	}
	return vs
}

func maxMemories(ps []v1alpha1.SizingPolicy) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Memory.Max.String()
	}
	return "[" + strings.Join(out, ", ") + "]"
}
