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

package shared

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// EventSource is the component named in the Events the hooks write
// (`From: managed-starrocks` in kubectl describe).
const EventSource = "managed-starrocks"

// MaxEventMessage keeps a message within what events.k8s.io/v1 accepts as a
// note (1 KiB).
const MaxEventMessage = 1024

// TruncatedSuffix ends a message the hooks had to cut.
const TruncatedSuffix = " … (truncated)"

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(TruncatedSuffix)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + TruncatedSuffix
}

// InstanceRef names a Starrocks an Event is about, or with Kind another
// of the module's objects in the instance's namespace (a StarrocksBackup).
type InstanceRef struct {
	Namespace, Name, UID string
	// Kind is v1alpha1.StarrocksKind when empty.
	Kind string
}

// InstanceEvent is a core/v1 Event on a Starrocks, in its namespace (the
// API server requires it) and named after the object and a hash of what
// makes it this Event (identity): the same Event computed twice — a run
// whose status patch did not land, a refusal repeated run after run — is
// created once, since the hooks write Events with CreateIfNotExists. The
// message is cut to MaxEventMessage; it never carries a credential.
func InstanceEvent(sr InstanceRef, eventType, reason, message string, now metav1.Time, identity ...string) *corev1.Event {
	sum := sha256.Sum256([]byte(strings.Join(append([]string{sr.UID, eventType, reason}, identity...), "\x00")))
	suffix := "." + hex.EncodeToString(sum[:8])
	// A Starrocks name is a DNS subdomain; keep the Event's one too.
	base := sr.Name
	if max := 253 - len(suffix); len(base) > max {
		base = strings.TrimRight(base[:max], ".-")
	}
	kind := sr.Kind
	if kind == "" {
		kind = v1alpha1.StarrocksKind
	}
	return &corev1.Event{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      base + suffix,
			Namespace: sr.Namespace,
			Labels:    map[string]string{"heritage": "deckhouse", "module": "managed-starrocks"},
		},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       kind,
			Namespace:  sr.Namespace,
			Name:       sr.Name,
			UID:        types.UID(sr.UID),
		},
		Type:                eventType,
		Reason:              reason,
		Message:             Truncate(message, MaxEventMessage),
		Source:              corev1.EventSource{Component: EventSource},
		ReportingController: EventSource,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
	}
}
