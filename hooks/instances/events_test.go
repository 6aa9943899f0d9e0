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
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deckhouse/module-sdk/testing/framework"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

func cond(typ string, ok bool, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: condStatus(ok), Reason: reason, Message: msg}
}

func TestInstanceEvents(t *testing.T) {
	valid := cond(v1alpha1.ConditionConfigurationValid, true, ReasonValid, "The spec satisfies every rule.")
	broken := cond(v1alpha1.ConditionConfigurationValid, false, ReasonClassRuleViolated, "The spec breaks a class rule: spec.frontend.cpu.cores: ...")
	brokenOther := cond(v1alpha1.ConditionConfigurationValid, false, ReasonClassRuleViolated, "The spec breaks a class rule: spec.backend.memory.size: ...")
	missing := cond(v1alpha1.ConditionConfigurationValid, false, ReasonClassNotFound, `spec.starrocksClassName: StarrocksClass "gone" does not exist`)
	applied := cond(v1alpha1.ConditionLastValidConfigurationApplied, true, ReasonCurrentSpecApplied, "Generation 1 is valid.")
	kept := cond(v1alpha1.ConditionLastValidConfigurationApplied, true, ReasonLastValidKept, "Generation 2 is not valid; generation 1 stays in effect.")
	never := cond(v1alpha1.ConditionLastValidConfigurationApplied, false, ReasonNeverValid, "No generation has been valid yet.")
	notManaged := cond(v1alpha1.ConditionAvailable, false, ReasonNotManaged, "left as they are")
	notReady := cond(v1alpha1.ConditionAvailable, false, ReasonReplicasNotReady, "Ready pods: 0 of 1 FE, 0 of 1 BE.")
	noScaleIn := cond(v1alpha1.ConditionBackendScaleIn, true, ReasonNoScaleInPending, "No BE is being removed.")
	waiting := cond(v1alpha1.ConditionBackendScaleIn, false, ReasonWaitingForAgent, "waiting for the agent")
	draining := cond(v1alpha1.ConditionBackendScaleIn, false, ReasonDecommissionInProgress, "be-2 (decommissioned, 40 tablets left)")
	drainingLess := cond(v1alpha1.ConditionBackendScaleIn, false, ReasonDecommissionInProgress, "be-2 (decommissioned, 3 tablets left)")
	tlsOK := cond(v1alpha1.ConditionTLSReady, true, ReasonCertificateReady, "The certificate is issued.")
	tlsMissing := cond(v1alpha1.ConditionTLSReady, false, ReasonCertificateMissing, "no Certificate yet")
	tlsIssuing := cond(v1alpha1.ConditionTLSReady, false, ReasonCertificateNotReady, "Ready is False (Issuing)")
	tlsAgentPending := cond(v1alpha1.ConditionTLSReady, false, ReasonAgentNotReported, "the agent of pod p-0 has not confirmed TLS yet")
	tlsBroken := cond(v1alpha1.ConditionTLSReady, false, "TLSMisconfigured", "The agent of pod p-0 reports TLS not working: the FE does not offer TLS")
	volumesBlocked := cond(v1alpha1.ConditionVolumesResized, false, ReasonExpansionBlocked, "PVC meta-d8ms-sr-a-0 cannot be expanded")
	volumesGrowing := cond(v1alpha1.ConditionVolumesResized, false, ReasonExpansionInProgress, "growing")
	const beyond = "The module manages at most 2 Starrocks instances ..."
	overApplied := cond(v1alpha1.ConditionLastValidConfigurationApplied, false, ReasonInstanceLimitReached, beyond)
	overAvailable := cond(v1alpha1.ConditionAvailable, false, ReasonInstanceLimitReached, beyond)
	overTLS := cond(v1alpha1.ConditionTLSReady, false, ReasonInstanceLimitReached, beyond)
	ready := cond(v1alpha1.ConditionAvailable, true, ReasonAllReplicasReady, "1 FE pod and 1 BE pod are ready.")
	unschedulable := cond(v1alpha1.ConditionAvailable, false, ReasonPodsUnschedulable, "Ready pods: 0 of 1 FE, 0 of 1 BE. Pod d8ms-sr-a-0 cannot be scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient cpu.")
	pullFailed := cond(v1alpha1.ConditionAvailable, false, ReasonImagePullFailed, "Ready pods: 0 of 1 FE, 0 of 1 BE. Pod d8ms-sr-a-0 cannot pull its image (container fe, ImagePullBackOff).")
	unschedulableMemory := cond(v1alpha1.ConditionAvailable, false, ReasonPodsUnschedulable, "Ready pods: 0 of 1 FE, 0 of 1 BE. Pod d8ms-sr-a-0 cannot be scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient memory.")

	type ev struct{ Type, Reason string }
	for _, tt := range []struct {
		name       string
		prev, next []metav1.Condition
		want       []ev
	}{
		{"a new valid instance is no news", nil, []metav1.Condition{valid, applied, tlsMissing, noScaleIn}, nil},
		{"pods starting are no news", []metav1.Condition{valid, applied}, []metav1.Condition{valid, applied, notReady}, nil},
		{"a new instance available: the one Event of a healthy start", []metav1.Condition{valid, applied, notReady}, []metav1.Condition{valid, applied, ready}, []ev{{"Normal", ReasonAllReplicasReady}}},
		{"available again is no news", []metav1.Condition{ready}, []metav1.Condition{ready}, nil},
		{"a pod the scheduler cannot place", []metav1.Condition{valid, applied, notReady}, []metav1.Condition{valid, applied, unschedulable}, []ev{{"Warning", ReasonPodsUnschedulable}}},
		{"a pod that cannot pull its image", []metav1.Condition{valid, applied, notReady}, []metav1.Condition{valid, applied, pullFailed}, []ev{{"Warning", ReasonImagePullFailed}}},
		{"still unable to pull", []metav1.Condition{valid, applied, pullFailed}, []metav1.Condition{valid, applied, pullFailed}, nil},
		{"the scheduler's words changing is no news", []metav1.Condition{unschedulable}, []metav1.Condition{unschedulableMemory}, nil},
		{"placed, not ready yet, is no news", []metav1.Condition{unschedulable}, []metav1.Condition{notReady}, nil},
		{"placed and ready: available", []metav1.Condition{unschedulable}, []metav1.Condition{ready}, []ev{{"Normal", ReasonAllReplicasReady}}},
		{"available after an outage", []metav1.Condition{notReady}, []metav1.Condition{ready}, []ev{{"Normal", ReasonAllReplicasReady}}},
		{"a new invalid instance: the violation", nil, []metav1.Condition{broken, never}, []ev{{"Warning", ReasonClassRuleViolated}}},
		{"a new instance of a missing class: the violation", nil, []metav1.Condition{missing, never}, []ev{{"Warning", ReasonClassNotFound}}},
		{"a valid instance breaks its class: the violation and the kept state",
			[]metav1.Condition{valid, applied}, []metav1.Condition{broken, kept}, []ev{{"Warning", ReasonClassRuleViolated}, {"Warning", ReasonLastValidKept}}},
		{"the same violation again is no news", []metav1.Condition{broken, kept}, []metav1.Condition{broken, kept}, nil},
		{"another violation while invalid", []metav1.Condition{broken, kept}, []metav1.Condition{brokenOther, kept}, []ev{{"Warning", ReasonClassRuleViolated}}},
		{"fixed: valid again", []metav1.Condition{broken, kept}, []metav1.Condition{valid, applied}, []ev{{"Normal", ReasonValid}}},
		{"memory lost while invalid: not managed", []metav1.Condition{broken, kept, notReady}, []metav1.Condition{broken, never, notManaged}, []ev{{"Warning", ReasonNotManaged}}},
		{"scale-in waits for the agent, then drains, then ends",
			[]metav1.Condition{noScaleIn}, []metav1.Condition{waiting}, []ev{{"Normal", ReasonWaitingForAgent}}},
		{"scale-in drains", []metav1.Condition{waiting}, []metav1.Condition{draining}, []ev{{"Normal", ReasonDecommissionInProgress}}},
		{"fewer tablets left is progress, not news", []metav1.Condition{draining}, []metav1.Condition{drainingLess}, nil},
		{"scale-in done", []metav1.Condition{drainingLess}, []metav1.Condition{noScaleIn}, []ev{{"Normal", ReasonNoScaleInPending}}},
		{"waiting for cert-manager is how an instance starts", []metav1.Condition{tlsMissing}, []metav1.Condition{tlsIssuing}, nil},
		{"waiting for the agent is how an instance starts", []metav1.Condition{tlsIssuing}, []metav1.Condition{tlsAgentPending}, nil},
		{"the first TLS ready is no news", []metav1.Condition{tlsAgentPending}, []metav1.Condition{tlsOK}, nil},
		{"an FE restarting is no news", []metav1.Condition{tlsOK}, []metav1.Condition{tlsAgentPending}, nil},
		{"a certificate that stopped being ready", []metav1.Condition{tlsOK}, []metav1.Condition{tlsIssuing}, []ev{{"Warning", ReasonCertificateNotReady}}},
		{"an agent reporting TLS broken", []metav1.Condition{tlsAgentPending}, []metav1.Condition{tlsBroken}, []ev{{"Warning", "TLSMisconfigured"}}},
		{"TLS working again after the agent's problem", []metav1.Condition{tlsBroken}, []metav1.Condition{tlsOK}, []ev{{"Normal", ReasonCertificateReady}}},
		{"a volume that cannot grow", []metav1.Condition{volumesGrowing}, []metav1.Condition{volumesBlocked}, []ev{{"Warning", ReasonExpansionBlocked}}},
		{"a volume growing is no news", nil, []metav1.Condition{volumesGrowing}, nil},
		{"beyond the instance limit: one Warning, from Available", []metav1.Condition{valid, applied, ready, tlsOK},
			[]metav1.Condition{valid, overApplied, overAvailable, overTLS}, []ev{{"Warning", ReasonInstanceLimitReached}}},
		{"a new instance beyond the limit: the same Warning", nil,
			[]metav1.Condition{valid, overApplied, overAvailable, overTLS}, []ev{{"Warning", ReasonInstanceLimitReached}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "team", UID: "uid-a", Generation: 2}}
			got := []ev{}
			for _, e := range instanceEvents(sr, v1alpha1.StarrocksStatus{Conditions: tt.prev}, v1alpha1.StarrocksStatus{Conditions: tt.next}) {
				got = append(got, ev{e.Type, e.Reason})
				for _, c := range tt.next {
					if c.Reason == e.Reason {
						assert.Equal(t, c.Message, e.Message, "the Event says what the condition says")
					}
				}
			}
			if tt.want == nil {
				tt.want = []ev{}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEventObject(t *testing.T) {
	now := metav1.Date(2026, 12, 2, 10, 0, 0, 0, metav1.Now().Location())
	sr := &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "olap", Namespace: "team", UID: "uid-olap", Generation: 2}}
	e := Event{Object: sr, Type: corev1.EventTypeWarning, Reason: ReasonClassRuleViolated, Message: "The spec breaks a class rule: spec.frontend.cpu.cores: ..."}
	obj := eventObject(e, now)
	assert.Equal(t, "team", obj.Namespace, "in the namespace of the object, as the apiserver requires")
	assert.Equal(t, corev1.ObjectReference{APIVersion: "managed-services.deckhouse.io/v1alpha1", Kind: "Starrocks", Namespace: "team", Name: "olap", UID: "uid-olap"}, obj.InvolvedObject)
	assert.Equal(t, EventSource, obj.Source.Component)
	assert.EqualValues(t, 1, obj.Count)
	assert.True(t, strings.HasPrefix(obj.Name, "olap."), obj.Name)
	assert.Equal(t, obj.Name, eventObject(e, metav1.Now()).Name, "the same transition gets the same name at any time")

	other := e
	other.Message = "The spec breaks a class rule: spec.backend.memory.size: ..."
	assert.NotEqual(t, obj.Name, eventObject(other, now).Name, "another violation is another Event")
	next := *sr
	next.Generation = 3
	assert.NotEqual(t, obj.Name, eventObject(Event{Object: &next, Type: e.Type, Reason: e.Reason, Message: e.Message}, now).Name, "the same violation in a later generation is another Event")

	long := *sr
	long.Name = strings.Repeat("a", 240) + "-" + strings.Repeat("b", 12)
	name := eventObject(Event{Object: &long, Type: e.Type, Reason: e.Reason, Message: e.Message}, now).Name
	assert.Empty(t, validation.IsDNS1123Subdomain(name), "a valid object name: %s", name)

	huge := strings.Repeat("é", 2000)
	msg := eventObject(Event{Object: sr, Type: e.Type, Reason: e.Reason, Message: huge}, now).Message
	assert.LessOrEqual(t, len(msg), maxEventMessageLength)
	assert.True(t, utf8.ValidString(msg), "cut on a rune boundary")
	assert.True(t, strings.HasSuffix(msg, truncatedMessageSuffix))
}

func eventsIn(t *testing.T, f *framework.HookExecutionConfig, ns string) []corev1.Event {
	t.Helper()
	list, err := f.KubeClient().Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	var out []corev1.Event
	for _, u := range list.Items {
		var e corev1.Event
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e))
		out = append(out, e)
	}
	return out
}

func eventCreates(f *framework.HookExecutionConfig) int {
	return len(written(f, "create", "events"))
}

const teamNamespaceYAML = `
apiVersion: v1
kind: Namespace
metadata: {name: team}
`

func TestHookWritesAnEventOncePerTransition(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" + starrocksYAML("olap", 1, 2, 1024))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Empty(t, eventsIn(t, f, "team"), "a new valid instance is no news")

	// Generation 2 breaks the class's CEL rule.
	f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" + starrocksYAMLWithStatus(t, f, "olap", 2, 2, 4096) + "---" + lastValidYAML(t, f, "uid-olap"))
	f.RunHook()
	require.NoError(t, f.HookError())
	events := eventsIn(t, f, "team")
	require.Len(t, events, 2)
	byReason := map[string]corev1.Event{}
	for _, e := range events {
		byReason[e.Reason] = e
		assert.Equal(t, "olap", e.InvolvedObject.Name)
		assert.EqualValues(t, "uid-olap", e.InvolvedObject.UID)
		assert.Equal(t, corev1.EventTypeWarning, e.Type)
	}
	assert.Equal(t, `The spec breaks a class rule: spec.configuration.streamingLoadMaxMb: Stream Load requests may be at most 2 GiB. (value configuration.streamingLoadMaxMb=4096; class "default" validations[0]: configuration.streamingLoadMaxMb <= 2048).`, byReason[ReasonClassRuleViolated].Message)
	assert.Contains(t, byReason[ReasonLastValidKept].Message, "the last valid generation 1 stays in effect")

	// The next run over the same cluster has no transition: no Event.
	f.KubeStateSet(teamNamespaceYAML + "---" + classYAML + "---" + starrocksYAMLWithStatus(t, f, "olap", 2, 2, 4096) + "---" + lastValidYAML(t, f, "uid-olap"))
	f.RunHook()
	require.NoError(t, f.HookError())
	assert.Zero(t, eventCreates(f), "no Event without a transition")
}

func TestHookWritesNoEventWhereTheApiserverWouldRefuseIt(t *testing.T) {
	// A terminating namespace ends its instances: no status, no Event
	// (TestHookEndsTheInstancesOfANamespaceBeingDeleted).
	for _, tt := range []struct{ name, namespaces string }{
		{"a namespace not seen yet", ""},
		{"a namespace whose ResourceQuota counts Events", teamNamespaceYAML + `---
apiVersion: v1
kind: ResourceQuota
metadata: {name: events, namespace: team}
spec: {hard: {count/events: "100"}}
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newHook(t)
			state := classYAML + "---" + starrocksYAML("bad", 1, 8, 1024)
			if tt.namespaces != "" {
				state = tt.namespaces + "---" + state
			}
			f.KubeStateSet(state)
			f.RunHook()
			require.NoError(t, f.HookError())
			s, r, _ := condition(statusOf(t, f, "bad"), v1alpha1.ConditionConfigurationValid)
			assert.Equal(t, []string{"False", ReasonClassRuleViolated}, []string{s, r}, "the status still says it")
			assert.Zero(t, eventCreates(f))
		})
	}
}
