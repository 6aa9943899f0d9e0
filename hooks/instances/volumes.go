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
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// PVCSnap is the jq-filtered PersistentVolumeClaim of an instance.
type PVCSnap struct {
	Namespace        string `json:"namespace"`
	Name             string `json:"name"`
	Instance         string `json:"instance"`
	Component        string `json:"component"`
	StorageClassName string `json:"storageClassName"`
	// Requested is spec.resources.requests.storage, Capacity
	// status.capacity.storage (empty while unbound).
	Requested string `json:"requested"`
	Capacity  string `json:"capacity"`
	Phase     string `json:"phase"`
	// Bypass is its BypassLabel (released.go).
	Bypass string `json:"bypass"`
	// Unreadable says why the item did not decode (it is then ignored).
	Unreadable string `json:"-"`
}

// StorageClassSnap is the jq-filtered StorageClass.
type StorageClassSnap struct {
	Name                 string `json:"name"`
	AllowVolumeExpansion bool   `json:"allowVolumeExpansion"`
}

// VolumeExpansion is a PVC whose request is raised to Size.
type VolumeExpansion struct {
	Namespace, Name, Size string
}

// VolumesVerdict is the VolumesResized condition of an instance.
type VolumesVerdict struct {
	OK              bool
	Reason, Message string
}

// planVolumes decides which PVCs of an instance to expand to the size of the
// entry in effect, and what VolumesResized says. The StatefulSet keeps the
// size it was created with in its volumeClaimTemplates (the apiserver
// refuses to change them), so the existing PVCs are grown one by one here.
// A PVC is only ever grown. The apiserver allows raising the request only
// of a Bound PVC whose StorageClass has allowVolumeExpansion: true, so a
// patch is not sent otherwise, and the condition names what blocks it.
func planVolumes(e *desired.Instance, pvcs []PVCSnap, expandable map[string]bool) ([]VolumeExpansion, VolumesVerdict) {
	var (
		patches                   []VolumeExpansion
		blocked, pending, lagging []string
	)
	sorted := make([]PVCSnap, len(pvcs))
	copy(sorted, pvcs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		var size string
		switch p.Component {
		case shared.ComponentFrontend:
			size = e.Frontend.Storage.Size
		case shared.ComponentBackend:
			size = e.Backend.Storage.Size
		case shared.ComponentCompute:
			// The CN cache volume (spec.compute.cache.size), grown like
			// the others.
			if e.Compute == nil {
				continue
			}
			size = e.Compute.Cache.Size
		default:
			continue
		}
		want, err := resource.ParseQuantity(size)
		if err != nil {
			continue
		}
		req, err := resource.ParseQuantity(p.Requested)
		if err != nil {
			continue
		}
		if req.Cmp(want) < 0 {
			switch {
			case p.Phase != "Bound":
				blocked = append(blocked, fmt.Sprintf("PVC %s requests %s and is not bound (phase %s): Kubernetes expands only a bound PVC, it is grown to %s once bound", p.Name, p.Requested, phaseOr(p.Phase), size))
			case p.StorageClassName == "" || !expandable[p.StorageClassName]:
				blocked = append(blocked, fmt.Sprintf("PVC %s requests %s, but its StorageClass %q does not allow volume expansion (allowVolumeExpansion is not true): ask the cluster administrator to allow it, the PVC is then grown to %s", p.Name, p.Requested, p.StorageClassName, size))
			default:
				patches = append(patches, VolumeExpansion{Namespace: p.Namespace, Name: p.Name, Size: size})
				pending = append(pending, fmt.Sprintf("PVC %s: request raised from %s to %s", p.Name, p.Requested, size))
			}
			continue
		}
		if p.Capacity == "" {
			continue
		}
		if c, err := resource.ParseQuantity(p.Capacity); err == nil && c.Cmp(want) < 0 {
			lagging = append(lagging, fmt.Sprintf("PVC %s requests %s, its capacity is still %s", p.Name, p.Requested, p.Capacity))
		}
	}
	switch {
	case len(blocked) > 0:
		msg := "Volumes cannot be expanded to the spec's size: " + strings.Join(blocked, "; ") + "."
		if len(pending)+len(lagging) > 0 {
			msg += " Being expanded: " + strings.Join(append(pending, lagging...), "; ") + "."
		}
		return patches, VolumesVerdict{Reason: ReasonExpansionBlocked, Message: msg}
	case len(pending)+len(lagging) > 0:
		return patches, VolumesVerdict{Reason: ReasonExpansionInProgress, Message: "Volumes are being expanded to the spec's size: " + strings.Join(append(pending, lagging...), "; ") +
			". The storage driver resizes the volume; some drivers finish the filesystem resize only when the pod restarts."}
	}
	return nil, VolumesVerdict{OK: true, Reason: ReasonVolumesAtDesiredSize, Message: "Every PVC of the instance requests the size of the spec."}
}

func phaseOr(p string) string {
	if p == "" {
		return "unknown"
	}
	return p
}
