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
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/applied"
)

// metadataDigest covers what a generation does not: the labels (selectors,
// NetworkPolicies and the module's own bindings go by them), the
// annotations (the render's among them) and the ownerReferences (garbage
// collection with the Starrocks). Written the same from a snapshot and from
// what the API server returned; empty maps and absent ones are alike.
func metadataDigest(labels, annotations map[string]string, owners []ownerRef) string {
	h := sha256.New()
	for _, m := range []map[string]string{labels, annotations} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h.Write([]byte(k))
			h.Write([]byte{0})
			h.Write([]byte(m[k]))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	for _, o := range owners {
		h.Write([]byte(strings.Join([]string{o.APIVersion, o.Kind, o.Name, o.UID, boolString(o.Controller), boolString(o.BlockOwnerDeletion)}, "\x00")))
		h.Write([]byte{1})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func boolString(b bool) string {
	if b {
		return "t"
	}
	return "f"
}

// ReasonObjectRefused is the reason of the Warning Event on a Starrocks
// whose object the API server refused.
const ReasonObjectRefused = "ObjectRefused"

// eventSource is the component the Events name (the instances hook's).
const eventSource = "managed-starrocks"

// maxEventMessage keeps a message within what events.k8s.io/v1 accepts as
// a note (1 KiB), as the instances hook does.
const maxEventMessage = 1024

// refusalEvent is the Warning Event of a refusal, named like the instances
// hook's Events (the Starrocks' name and a hash of what it says), so the
// same refusal computed twice creates nothing new. The message names the
// object and quotes the API server (kubewrite.Refusal: its status message,
// never object data).
func refusalEvent(sr starrocksRef, r *applied.Refusal, now time.Time) *unstructured.Unstructured {
	sum := sha256.Sum256([]byte(strings.Join([]string{sr.UID, ReasonObjectRefused, r.Object, r.Message}, "\x00")))
	suffix := "." + hex.EncodeToString(sum[:8])
	base := sr.Name
	if max := 253 - len(suffix); len(base) > max {
		base = strings.TrimRight(base[:max], ".-")
	}
	msg := "The API server refused the write of " + r.Object + ", so the instance's remaining objects were not written: " + r.Message
	if len(msg) > maxEventMessage {
		cut := maxEventMessage - len("...")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	t := metav1.NewTime(now)
	ev := &corev1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      base + suffix,
			Namespace: sr.Namespace,
			Labels:    map[string]string{"heritage": "deckhouse", "module": "managed-starrocks"},
		},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.StarrocksKind,
			Namespace:  sr.Namespace,
			Name:       sr.Name,
			UID:        types.UID(sr.UID),
		},
		Type:                corev1.EventTypeWarning,
		Reason:              ReasonObjectRefused,
		Message:             msg,
		Source:              corev1.EventSource{Component: eventSource},
		ReportingController: eventSource,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
	}
	obj, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(ev) // a typed Event: cannot fail
	return &unstructured.Unstructured{Object: obj}
}
