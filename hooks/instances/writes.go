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
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// VolumesResized reason of a refused expansion, and the ObjectsApplied
// reasons.
const (
	// ReasonExpansionRefused: the API server refused to raise a PVC's
	// request (a ResourceQuota, a storage admission policy); its words are
	// in the message.
	ReasonExpansionRefused = "ExpansionRefused"
	// ReasonObjectsApplied: the instanceobjects hook wrote every object of
	// the instance's render.
	ReasonObjectsApplied = "ObjectsApplied"
	// ReasonObjectRefused: the API server refused one of them.
	ReasonObjectRefused = "ObjectRefused"
	// ReasonWaitingForObjects: no complete write of the render recorded yet.
	ReasonWaitingForObjects = "WaitingForObjects"
)

// tenantWrites are the Writes of a hook run, through the hook's own client.
type tenantWrites struct {
	ctx context.Context
	w   *kubewrite.Writer
}

func (t tenantWrites) ExpandVolume(v VolumeExpansion) error {
	// Only the size: a merge patch leaves the rest of the PVC alone.
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": v.Size}}}})
	if err != nil {
		return err
	}
	return t.w.Patch(t.ctx, kubewrite.Ref{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: v.Namespace, Name: v.Name}, types.MergePatchType, patch)
}

// ReleasePVC sets or removes only the bypass label (a merge patch; null
// removes a key).
func (t tenantWrites) ReleasePVC(r PVCRelease) error {
	var value any
	if r.Release {
		value = BypassDelete
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{BypassLabel: value}}})
	if err != nil {
		return err
	}
	return t.w.Patch(t.ctx, kubewrite.Ref{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: r.Namespace, Name: r.Name}, types.MergePatchType, patch)
}

func (t tenantWrites) RestartPod(p PodRestart) error {
	// The UID precondition: a pod re-created under the name since the
	// snapshot is already from the new template.
	return t.w.Delete(t.ctx, kubewrite.Ref{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, p.UID)
}

// writeStatus replaces the status of a Starrocks ("add" on an object member
// replaces it and also works when there is no status yet; fields the new
// status leaves out are dropped, which a merge patch would keep).
func writeStatus(ctx context.Context, w *kubewrite.Writer, p StatusPatch) error {
	data, err := json.Marshal(statusPatch(p.Status))
	if err != nil {
		return err
	}
	return w.Patch(ctx, kubewrite.Ref{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StarrocksKind, Namespace: p.Namespace, Name: p.Name},
		types.JSONPatchType, data, "status")
}

// writeEvent creates an Event unless one of its name exists (the same
// transition computed twice).
func writeEvent(ctx context.Context, w *kubewrite.Writer, e any) error {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
	if err != nil {
		return err
	}
	_, err = w.CreateIfNotExists(ctx, &unstructured.Unstructured{Object: obj})
	return err
}

// expandVolumes raises the PVCs' requests of one instance. A refusal makes
// the instance's VolumesResized False with ExpansionRefused and the API
// server's words in this same run (and so its Warning Event); a namespace
// being deleted is no refusal (the instance is ending).
func expandVolumes(w Writes, key string, expand []VolumeExpansion, v VolumesVerdict, plan *Plan) VolumesVerdict {
	var refused, raised []string
	for _, e := range expand {
		err := w.ExpandVolume(e)
		if err == nil {
			raised = append(raised, fmt.Sprintf("PVC %s: request raised to %s", e.Name, e.Size))
		}
		// A conflict (the PVC changed under every one of the API server's
		// tries) is no refusal: the next run raises it again.
		if err == nil || kubewrite.Gone(err) || kubewrite.Conflict(err) {
			continue
		}
		words := kubewrite.Refusal(err)
		plan.Refusals = append(plan.Refusals, Refusal{Instance: key, Object: "PersistentVolumeClaim " + desired.Key(e.Namespace, e.Name), Message: words})
		refused = append(refused, fmt.Sprintf("PVC %s to %s: %s", e.Name, e.Size, words))
	}
	if len(refused) == 0 {
		return v
	}
	msg := "The API server refused to raise the request of " + strings.Join(refused, "; ") +
		". Lift what refuses it (a ResourceQuota of the namespace, a storage admission policy); the module retries on every run."
	switch {
	case v.Reason == ReasonExpansionBlocked:
		msg += " " + v.Message
	case len(raised) > 0:
		msg += " Being expanded: " + strings.Join(raised, "; ") + "."
	}
	return VolumesVerdict{Reason: ReasonExpansionRefused, Message: msg}
}

// releasePVCs writes the PVCs' bypass labels. A refusal only delays an
// admin's clean-up: logged, and tried again on the next run.
func releasePVCs(w Writes, plan *Plan) {
	for _, r := range plan.PVCReleases {
		if err := w.ReleasePVC(r); err != nil && !kubewrite.Gone(err) {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("PersistentVolumeClaim %s/%s: setting its %s label was refused: %s", r.Namespace, r.Name, BypassLabel, kubewrite.Refusal(err)))
		}
	}
}

// restartPod deletes the pod the rollout restarts now; a refusal is said in
// RolledOut instead of "restarted" (the next run tries again).
func restartPod(w Writes, key string, p PodRestart, r desired.Rollout, plan *Plan) desired.Rollout {
	err := w.RestartPod(p)
	if err == nil || kubewrite.Gone(err) {
		return r
	}
	if kubewrite.Conflict(err) {
		// No refusal: the pod is deleted on the next run.
		r.State = desired.RolloutWaiting
		return r
	}
	words := kubewrite.Refusal(err)
	plan.Refusals = append(plan.Refusals, Refusal{Instance: key, Object: "Pod " + desired.Key(p.Namespace, p.Name), Message: words})
	r.State = desired.RolloutWaiting
	r.Message = fmt.Sprintf("The API server refused to delete pod %s to restart it from the new template: %s. %s", p.Name, words, r.Message)
	return r
}

// objectsApplied is condition ObjectsApplied from the instanceobjects hook's
// record (module namespace, keyed by the Starrocks' UID; a record naming
// another instance counts as none). An instance with no entry has nothing
// to apply: it says why, as Available does.
func objectsApplied(res desired.Result, st v1alpha1.StarrocksStatus, rec *applied.Record) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionObjectsApplied, Status: metav1.ConditionFalse, ObservedGeneration: res.Object.Generation}
	sr := res.Object
	switch {
	case res.Entry == nil:
		c.Reason, c.Message = ReasonNotRendered, "Nothing is rendered for this instance, so no object is applied."
		for _, a := range st.Conditions {
			if a.Type == v1alpha1.ConditionAvailable {
				c.Reason, c.Message = a.Reason, a.Message
			}
		}
	case rec == nil || rec.UID != string(sr.UID) || rec.Namespace != sr.Namespace || rec.Name != sr.Name:
		c.Reason, c.Message = ReasonWaitingForObjects, "The module has not written the objects of this instance yet."
	case rec.Refused != nil:
		c.Reason = ReasonObjectRefused
		c.Message = truncate(fmt.Sprintf("The API server refused %s: %s. The other objects of the instance are kept as they are; the module retries on every run.",
			rec.Refused.Object, rec.Refused.Message))
	case rec.Checksum == "":
		c.Reason, c.Message = ReasonWaitingForObjects, "The module is writing the objects of this instance."
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonObjectsApplied, "Every object of the instance is written as rendered."
	}
	return c
}
