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

package instanceobjects

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/instanceobjects"
)

// neverPruned are the kinds the hook does not delete while their Starrocks
// exists, even when a new module version no longer renders them; they go
// with the Starrocks (garbage collection) or stay for a person to remove:
//   - StatefulSet: deleting one stops the instance, and with a
//     persistentVolumeClaimRetentionPolicy whenDeleted: Delete (the module
//     setting instances.persistentVolumeClaimRetention) deletes its data
//     volumes too. A version that renames a StatefulSet must migrate it
//     deliberately, not by pruning.
//   - PersistentVolumeClaim: the data itself.
//   - Secret: credentials (root, the agent's, the team's) and TLS keys; a
//     lost root password locks the module out of its own instance.
//
// The last two are not rendered by the instance templates today (claims come
// from the StatefulSets' volumeClaimTemplates, Secrets from the credentials
// hooks and cert-manager), so no record lists them: the rule holds should a
// later version render them.
var neverPruned = map[string]bool{"StatefulSet": true, "PersistentVolumeClaim": true, "Secret": true}

// pruneCandidates are the objects the instance's last record lists that the
// current render does not have (by kind and name) and that may be pruned.
// The record says what the module wrote last time, which the tenant
// namespace cannot: a tenant may label its own objects like the module's,
// and those are never in a record.
func pruneCandidates(old *applied.Record, rendered []*unstructured.Unstructured) []applied.Object {
	if old == nil {
		return nil
	}
	now := make(map[[2]string]bool, len(rendered))
	for _, o := range rendered {
		now[[2]string{o.GetKind(), o.GetName()}] = true
	}
	var out []applied.Object
	for _, o := range old.Objects {
		if now[[2]string{o.Kind, o.Name}] || neverPruned[o.Kind] {
			continue
		}
		out = append(out, o)
	}
	return out
}

// apiVersionOf is the apiVersion to find a recorded object by.
func apiVersionOf(o applied.Object) string {
	if o.APIVersion != "" {
		return o.APIVersion
	}
	if i := instanceobjects.KindOrder(o.Kind); i >= 0 {
		return instanceobjects.Kinds[i].APIVersion
	}
	return ""
}

// ownedBy: the live object is the one recorded (same UID), carries the
// module's instance labels for that instance and an ownerReference to its
// Starrocks. All three, or it is not the module's to delete.
func ownedBy(live *unstructured.Unstructured, o applied.Object, e entry) bool {
	if string(live.GetUID()) != o.UID {
		return false
	}
	l := live.GetLabels()
	if l["module"] != "managed-starrocks" || l[shared.LabelServiceType] != shared.ServiceTypeValue || l[shared.LabelServiceName] != e.name {
		return false
	}
	for _, r := range live.GetOwnerReferences() {
		if r.Kind == "Starrocks" && string(r.UID) == e.id {
			return true
		}
	}
	return false
}

// prune deletes, through the hook's own client, the candidates that are
// still the module's. It returns the candidates left (the refused one and
// those after it, to be tried again) and the refusal, if any: a refused
// delete affects only its instance, as a refused write does.
func prune(ctx context.Context, w writer, e entry, candidates []applied.Object) ([]applied.Object, kubewrite.Ref, error) {
	for i, o := range candidates {
		ref := kubewrite.Ref{APIVersion: apiVersionOf(o), Kind: o.Kind, Namespace: e.namespace, Name: o.Name}
		if ref.APIVersion == "" {
			continue // a kind no version of the module knows: nothing to find it by
		}
		live, err := w.Get(ctx, ref)
		if err != nil {
			return candidates[i:], ref, err
		}
		if live == nil || !ownedBy(live, o, e) {
			continue // gone, or not (any more) the object the module made
		}
		// With the UID as precondition: an object re-created under the name
		// since the Get is not deleted.
		if err := w.Delete(ctx, ref, o.UID); err != nil {
			return candidates[i:], ref, fmt.Errorf("prune: %w", err)
		}
	}
	return nil, kubewrite.Ref{}, nil
}
