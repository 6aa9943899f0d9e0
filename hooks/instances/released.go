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

package instances

import (
	"sort"
	"strconv"
	"strings"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// A PVC of the volume claim templates keeps the templates' labels,
// `heritage: deckhouse` among them, and the API server refuses any change
// of a StatefulSet's volumeClaimTemplates. Deckhouse's
// label-objects.deckhouse.io then refuses its delete to everyone but the
// platform, cluster admins included, except for an object labelled
// BypassLabel: BypassDelete (its match condition
// exclude-heritage-bypass-delete: a DELETE of an object whose old labels
// say so is not checked; modules/002-deckhouse/templates/validation.yaml,
// deckhouse PR 16749). The label itself is still the platform's alone to
// set: the same policy refuses a tenant's or an admin's update of the PVC.
//
// The label stays on the PVCs (it also keeps tenants' look-alike PVCs out
// of the hook's informer, shared.ModuleObjectSelector), and the hook gives
// a PVC the bypass once no StatefulSet of a live instance can mount it
// again: its Starrocks is gone (persistentVolumeClaimRetention: Retain), or
// its ordinal is at or above its StatefulSet's replicas (a BE scale-in with
// whenScaled: Retain). The hook takes it off again when the claim is back
// in use (the same name created again, the StatefulSet scaled out), so a
// PVC a live pod can mount is protected again.
const (
	BypassLabel  = "security.deckhouse.io/heritage-bypass"
	BypassDelete = "delete"
)

// PVCRelease sets (Release) or removes the bypass label of a PVC.
type PVCRelease struct {
	Namespace, Name string
	Release         bool
}

// planReleases lists the PVCs whose bypass label is not what it should be.
// live are the keys of every Starrocks that exists (ending ones included:
// their PVCs are released once the object is gone). With an unreadable
// Starrocks, which may be the owner of any PVC, no PVC of a missing
// instance is released in this run.
func planReleases(obs map[string]Observed, live map[string]bool, anyUnreadable bool) []PVCRelease {
	var out []PVCRelease
	for key, o := range obs {
		for _, p := range o.PVCs {
			released, known := pvcReleased(p, o, live[key], anyUnreadable)
			if !known {
				continue
			}
			if has := p.Bypass == BypassDelete; has != released {
				out = append(out, PVCRelease{Namespace: p.Namespace, Name: p.Name, Release: released})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return desired.Key(out[i].Namespace, out[i].Name) < desired.Key(out[j].Namespace, out[j].Name)
	})
	return out
}

// pvcReleased says whether no StatefulSet of a live instance mounts p any
// more; known is false when that cannot be told from the snapshots.
func pvcReleased(p PVCSnap, o Observed, live, anyUnreadable bool) (released, known bool) {
	if !live {
		return true, !anyUnreadable
	}
	sts := o.Frontend
	switch p.Component {
	case shared.ComponentBackend:
		sts = o.Backend
	case shared.ComponentCompute:
		sts = o.Compute
	}
	if sts == nil {
		return false, false // not created yet, or being created again
	}
	i := strings.LastIndexByte(p.Name, '-')
	ordinal, err := strconv.Atoi(p.Name[i+1:])
	if err != nil {
		return false, false
	}
	return int32(ordinal) >= sts.Replicas, true
}
