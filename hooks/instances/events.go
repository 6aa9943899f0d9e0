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
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// EventSource is the component named in the Events the hook writes
// (`kubectl describe` shows it under "From").
const EventSource = shared.EventSource

// maxEventMessageLength keeps a message within what events.k8s.io/v1 accepts
// as a note (1 KiB), so the Event reads the same through either API.
const maxEventMessageLength = shared.MaxEventMessage

// Event is a Kubernetes Event about one Starrocks, decided by
// instanceEvents from a change of its conditions.
type Event struct {
	Object  *v1alpha1.Starrocks
	Type    string // corev1.EventTypeNormal or corev1.EventTypeWarning
	Reason  string
	Message string
}

// instanceEvents are the Events a status change is worth: a condition that
// turned into a problem the user must act on (the spec breaks its class,
// the last valid state is kept, the instance is left unmanaged, TLS stopped
// working, a volume cannot grow, an object is refused, a pod the scheduler
// cannot place) or a wait the user caused (BE scale-in), and the end of
// each; and every pod ready (Available turning True), the one Event a
// healthy new instance gets. Only transitions count: the same status computed
// again gives no Event, so a run that writes no status writes no Event.
// Progress messages (tablets left) change no reason and give none either.
func instanceEvents(sr *v1alpha1.Starrocks, prev, next v1alpha1.StarrocksStatus) []Event {
	var out []Event
	add := func(typ string, c metav1.Condition) {
		out = append(out, Event{Object: sr, Type: typ, Reason: c.Reason, Message: c.Message})
	}
	for _, n := range next.Conditions {
		p := meta.FindStatusCondition(prev.Conditions, n.Type)
		changed := p == nil || p.Status != n.Status || p.Reason != n.Reason
		wasFalse := p != nil && p.Status == metav1.ConditionFalse
		isTrue := n.Status == metav1.ConditionTrue
		switch n.Type {
		case v1alpha1.ConditionConfigurationValid:
			switch {
			// A new message while still invalid is a different violation
			// (the user changed the spec or the admin the class).
			case !isTrue && (changed || p.Message != n.Message):
				add(corev1.EventTypeWarning, n)
			case isTrue && wasFalse:
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionLastValidConfigurationApplied:
			if n.Reason == ReasonLastValidKept && changed {
				add(corev1.EventTypeWarning, n)
			}
		case v1alpha1.ConditionAvailable:
			switch {
			case (n.Reason == ReasonNotManaged || excludedReasons[n.Reason] || n.Reason == ReasonPodsUnschedulable || n.Reason == ReasonImagePullFailed || n.Reason == agentconfig.JoinReasonRejoining || n.Reason == agentconfig.JoinReasonWaitingForLeader) && changed:
				add(corev1.EventTypeWarning, n)
			// Every pod ready: the moment a new instance can be used (the
			// one Event a healthy new instance gets), and the end of an
			// outage.
			case isTrue && (p == nil || p.Status != metav1.ConditionTrue):
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionBackendScaleIn:
			switch {
			case !isTrue && changed && n.Reason == ReasonDecommissionRefused:
				add(corev1.EventTypeWarning, n)
			case !isTrue && changed:
				add(corev1.EventTypeNormal, n)
			case isTrue && wasFalse:
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionTLSReady:
			// Waiting for cert-manager, or for the agent of a pod that has
			// just (re)started, is how every instance starts and every
			// rollout goes: a problem is a certificate that stopped being
			// ready, or an agent reporting TLS broken.
			wasTrue := p != nil && p.Status == metav1.ConditionTrue
			switch {
			case !isTrue && changed && !tlsQuietReasons[n.Reason] && (wasTrue || !tlsWaitReasons[n.Reason]):
				add(corev1.EventTypeWarning, n)
			case isTrue && wasFalse && !tlsWaitReasons[p.Reason] && !tlsQuietReasons[p.Reason]:
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionRolledOut:
			// The start and the end of a rollout; its steps are progress.
			switch {
			case !isTrue && p != nil && p.Status == metav1.ConditionTrue:
				add(corev1.EventTypeNormal, n)
			case isTrue && wasFalse:
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionVolumesResized:
			if (n.Reason == ReasonExpansionBlocked || n.Reason == ReasonExpansionRefused) && changed {
				add(corev1.EventTypeWarning, n)
			}
		case v1alpha1.ConditionObjectsApplied:
			// A refused object, and another refusal (another object or
			// other words); its end. Writing the objects is how every
			// change goes: no Event.
			switch {
			case n.Reason == ReasonObjectRefused && (changed || p.Message != n.Message):
				add(corev1.EventTypeWarning, n)
			case isTrue && p != nil && p.Reason == ReasonObjectRefused:
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionBackupsHealthy:
			// A repository that stops working or a backup that fails, a
			// different failure, and the end of it. Unknown (a shared-data
			// instance before its first cluster snapshot) is no problem.
			switch {
			case n.Status == metav1.ConditionFalse && (changed || p.Message != n.Message):
				add(corev1.EventTypeWarning, n)
			case isTrue && wasFalse:
				add(corev1.EventTypeNormal, n)
			}
		case v1alpha1.ConditionRestored:
			// A failed restore and a finished one; its progress is in the
			// condition.
			switch {
			case n.Reason == ReasonRestoreFailed && changed:
				add(corev1.EventTypeWarning, n)
			case isTrue && wasFalse:
				add(corev1.EventTypeNormal, n)
			}
		case ConditionStorageReady:
			// A storage volume that cannot be created or changed (keys,
			// a refused statement, a moved location), and its end; waiting
			// for the agent (Unknown) is how every instance starts.
			switch {
			case n.Status == metav1.ConditionFalse && changed:
				add(corev1.EventTypeWarning, n)
			case isTrue && wasFalse:
				add(corev1.EventTypeNormal, n)
			}
		case ConditionUsersReady:
			// What the agent refuses (a missing password Secret, a grant
			// StarRocks rejects) and its end; waiting for the agent is how
			// every change of the users goes.
			switch {
			case !isTrue && changed && !usersQuietReasons[n.Reason]:
				add(corev1.EventTypeWarning, n)
			case isTrue && wasFalse && !usersQuietReasons[p.Reason]:
				add(corev1.EventTypeNormal, n)
			}
		}
	}
	return out
}

// tlsWaitReasons are the TLSReady reasons of an instance whose certificate
// is still on its way; a problem only once TLS had been ready.
var tlsWaitReasons = map[string]bool{
	ReasonCertificateMissing:  true,
	ReasonCertificateNotReady: true,
	ReasonNotRendered:         true,
}

// tlsQuietReasons never make a TLS Event: an agent that has not reported
// yet (every FE restart) and an unmanaged instance (it has its own Event,
// on Available).
var tlsQuietReasons = map[string]bool{
	ReasonAgentNotReported:      true,
	ReasonNotManaged:            true,
	ReasonInstanceLimitReached:  true,
	ReasonNamespaceLimitReached: true,
	ReasonNameConflict:          true,
}

// usersQuietReasons never make a UsersReady Event: the agent applying a
// change, or an instance not deployed (it has its own Event, on Available).
var usersQuietReasons = map[string]bool{
	ReasonWaitingForAgent:       true,
	ReasonNotRendered:           true,
	ReasonNotManaged:            true,
	ReasonInstanceLimitReached:  true,
	ReasonNamespaceLimitReached: true,
	ReasonNameConflict:          true,
}

// excludedReasons are those of an instance that gets no entry whatever its
// spec (excludedBecause): a Warning on Available when it starts.
var excludedReasons = map[string]bool{
	ReasonInstanceLimitReached:  true,
	ReasonNamespaceLimitReached: true,
	ReasonNameConflict:          true,
}

// eventObject is the core/v1 Event, in the Starrocks's namespace (the
// apiserver requires it) and named after the object and a hash of what it
// says: the same transition computed twice (a run whose status patch did not
// land) creates nothing new, and CreateIfNotExists leaves an existing one
// alone. The message is a condition message: field names, values and class
// rules, never a credential (the hooks never read Secret data).
func eventObject(e Event, now metav1.Time) *corev1.Event {
	sr := e.Object
	return shared.InstanceEvent(shared.InstanceRef{Namespace: sr.Namespace, Name: sr.Name, UID: string(sr.UID)}, e.Type, e.Reason, e.Message, now,
		strconv.FormatInt(sr.Generation, 10), e.Message)
}

// truncateBytes cuts s to at most n bytes on a rune boundary, marking the
// cut (condition messages and Event messages share it).
func truncateBytes(s string, n int) string { return shared.Truncate(s, n) }
