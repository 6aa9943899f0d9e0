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
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func TestComputeStatusTLSReady(t *testing.T) {
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}
	entry := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 1}, Backend: desired.Backend{Replicas: 1}, TLS: desired.TLS{SecretName: "d8ms-sr-a-tls"}}
	sts := &StatefulSetState{Replicas: 1, ReadyReplicas: 1}
	for _, tt := range []struct {
		name       string
		obs        Observed
		wantOK     bool
		wantReason string
		wantMsg    string
	}{
		{"not ready without a Certificate", Observed{}, false, ReasonCertificateMissing,
			"The cert-manager Certificate of the instance does not exist yet; it is deployed with the instance and fills Secret d8ms-sr-a-tls."},
		{"not ready while cert-manager has not issued", Observed{Certificate: &CertificateState{Ready: &metav1.Condition{Status: metav1.ConditionFalse, Reason: "Issuing", Message: "Issuing certificate as Secret does not exist"}}}, false, ReasonCertificateNotReady,
			"The certificate is not issued: Ready is False (Issuing: Issuing certificate as Secret does not exist). Check the Certificate and its issuer with kubectl describe certificate."},
		{"not ready before the Certificate has conditions", Observed{Certificate: &CertificateState{}}, false, ReasonCertificateNotReady,
			"The certificate is not issued: it has no Ready condition yet. Check the Certificate and its issuer with kubectl describe certificate."},
		{"not ready while no FE pod reported", Observed{Certificate: &CertificateState{Ready: ready}}, false, ReasonAgentNotReported,
			"The certificate is issued, but no FE pod has confirmed TLS on the query port yet."},
		{"not ready while an agent has not reported", Observed{Certificate: &CertificateState{Ready: ready}, AgentTLS: map[string]*AgentTLS{"p-0": nil}}, false, ReasonAgentNotReported,
			"The certificate is issued, but the agent of pod p-0 has not confirmed TLS on the query port yet."},
		{"takes the agent's reason when it reports TLS broken", Observed{Certificate: &CertificateState{Ready: ready}, AgentTLS: map[string]*AgentTLS{"p-0": {Ready: true}, "p-1": {Reason: "TLSMisconfigured", Message: "the FE does not offer TLS"}}}, false, "TLSMisconfigured",
			"The agent of pod p-1 reports TLS not working: the FE does not offer TLS"},
		{"ready when issued and confirmed by every FE", Observed{Certificate: &CertificateState{Ready: ready}, AgentTLS: map[string]*AgentTLS{"p-0": {Ready: true}, "p-1": {Ready: true}}}, true, ReasonCertificateReady,
			"The certificate is issued and every FE pod (2) serves it on the query port."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.obs.Frontend, tt.obs.Backend = sts, sts
			res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Generation: 1}}, Entry: entry, Current: true}
			st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, tt.obs, "cluster.local", metav1.Now())
			s, r, m := condition(st, v1alpha1.ConditionTLSReady)
			assert.Equal(t, string(condStatus(tt.wantOK)), s)
			assert.Equal(t, tt.wantReason, r)
			assert.Equal(t, tt.wantMsg, m)
		})
	}
}

func TestComputeStatusPhases(t *testing.T) {
	entry := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 3}, Backend: desired.Backend{Replicas: 2}}
	for _, tt := range []struct {
		name   string
		prev   v1alpha1.Phase
		entry  *desired.Instance
		fe, be *StatefulSetState
		want   v1alpha1.Phase
	}{
		{"Invalid without an entry", "", nil, nil, nil, v1alpha1.PhaseInvalid},
		{"Pending before the StatefulSets exist", "", entry, nil, nil, v1alpha1.PhasePending},
		{"Provisioning while pods start", v1alpha1.PhasePending, entry, &StatefulSetState{ReadyReplicas: 3}, &StatefulSetState{ReadyReplicas: 1}, v1alpha1.PhaseProvisioning},
		{"Running when every pod is ready", v1alpha1.PhaseProvisioning, entry, &StatefulSetState{ReadyReplicas: 3}, &StatefulSetState{ReadyReplicas: 2}, v1alpha1.PhaseRunning},
		{"Degraded when a running instance loses a pod", v1alpha1.PhaseRunning, entry, &StatefulSetState{ReadyReplicas: 2}, &StatefulSetState{ReadyReplicas: 2}, v1alpha1.PhaseDegraded},
		{"stays Degraded until every pod is back", v1alpha1.PhaseDegraded, entry, &StatefulSetState{ReadyReplicas: 3}, &StatefulSetState{ReadyReplicas: 1}, v1alpha1.PhaseDegraded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Generation: 1}}, Entry: tt.entry, Current: true}
			if tt.entry == nil {
				res.Violations = classrules.MissingClass("x")
			}
			st := ComputeStatus(res, v1alpha1.StarrocksStatus{Phase: tt.prev}, Observed{Frontend: tt.fe, Backend: tt.be}, "cluster.local", metav1.Now())
			assert.Equal(t, tt.want, st.Phase)
		})
	}
}

func TestSetConditionKeepsTheTransitionTimeWhileTheStatusHolds(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	conds := setCondition(nil, metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "R", Message: "one"}, t0)
	conds = setCondition(conds, metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "R", Message: "two"}, t1)
	assert.Equal(t, t0, conds[0].LastTransitionTime, "same status: time kept")
	assert.Equal(t, "two", conds[0].Message)
	conds = setCondition(conds, metav1.Condition{Type: "A", Status: metav1.ConditionFalse, Reason: "R"}, t1)
	assert.Equal(t, t1, conds[0].LastTransitionTime, "status changed: time moves")
}

func TestInvalidMessageListsEveryViolationAndIsBounded(t *testing.T) {
	vs := classrules.Violations{{Field: "a", Value: "1", Rule: "r", Message: "m"}, {Field: "b", Value: "2", Rule: "s", Message: "n"}}
	assert.Equal(t, "The spec breaks 2 class rules: (1) a: m (value 1; r); (2) b: n (value 2; s).", invalidMessage(vs))
	long := truncate(strings.Repeat("x", 40000))
	assert.Len(t, long, maxConditionMessageLength)
	assert.True(t, strings.HasSuffix(long, truncatedMessageSuffix))
}

func TestMessagesAgreeInNumber(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{classValidMessage(0, 2), "The class has no validation rules and the 2 sizing policies are consistent."},
		{classValidMessage(1, 1), "The validation rule compiles and the sizing policy is consistent."},
		{classValidMessage(3, 2), "The 3 validation rules compile and the 2 sizing policies are consistent."},
		{msgOf(backendScaleIn(desired.ScaleIn{Rendered: 1})), "No BE is being removed: the BE StatefulSet runs the 1 pod of the configuration in effect."},
		{msgOf(backendScaleIn(desired.ScaleIn{Rendered: 3})), "No BE is being removed: the BE StatefulSet runs the 3 pods of the configuration in effect."},
		{msgOf(backendScaleIn(desired.ScaleIn{State: desired.ScaleInDraining, Desired: 2, Rendered: 3, Kept: []desired.KeptBackend{{Host: "be-2", Decommissioned: true, TabletNum: 1}}})),
			"spec.backend.replicas is 2, 3 BE pods are kept: StarRocks still lists be-2 (decommissioned, 1 tablet left). Each pod keeps running until StarRocks has moved its tablets to the other BEs and the agent has dropped it."},
	} {
		assert.Equal(t, tt.want, tt.got)
	}

	entry := &desired.Instance{Generation: 1, Frontend: desired.Frontend{Replicas: 1}, Backend: desired.Backend{Replicas: 1}, TLS: desired.TLS{SecretName: "s"}}
	one := &StatefulSetState{Replicas: 1, ReadyReplicas: 1}
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}
	res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Generation: 1}}, Entry: entry, Current: true}
	st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, Observed{Frontend: one, Backend: one, Certificate: &CertificateState{Ready: ready}, AgentTLS: map[string]*AgentTLS{"a-0": {Ready: true}}}, "cluster.local", metav1.Now())
	_, _, m := condition(st, v1alpha1.ConditionAvailable)
	assert.Equal(t, "1 FE pod and 1 BE pod are ready.", m)
	_, _, m = condition(st, v1alpha1.ConditionTLSReady)
	assert.Equal(t, "The certificate is issued and the FE pod serves it on the query port.", m)
}

func TestAMissingClassIsNotCalledABrokenRule(t *testing.T) {
	vs := classrules.MissingClass("gone")
	assert.Equal(t, ReasonClassNotFound, invalidReason(vs))
	assert.Equal(t, `spec.starrocksClassName: StarrocksClass "gone" does not exist; ask the platform admin which classes are available (kubectl get starrocksclasses) (value gone; the referenced StarrocksClass must exist).`, invalidMessage(vs))
}

func msgOf(_ bool, _ string, msg string) string { return msg }

func TestTheKeptStateSaysWhetherTheSpecOrTheClassChanged(t *testing.T) {
	entry := &desired.Instance{Generation: 2, Frontend: desired.Frontend{Replicas: 1}, Backend: desired.Backend{Replicas: 1}}
	broken := classrules.Violations{{Field: "spec.x", Value: "1", Rule: "r", Message: "m"}}
	for _, tt := range []struct {
		gen  int64
		want string
	}{
		{3, "Generation 3 is not valid (see ConfigurationValid); the last valid generation 2 stays in effect until the spec is fixed."},
		{2, "Generation 2 was valid when it was applied and no longer is (its class changed; see ConfigurationValid); it stays in effect as it was applied until the spec or the class is fixed."},
	} {
		res := desired.Result{Object: &v1alpha1.Starrocks{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Generation: tt.gen}}, Entry: entry, Violations: broken}
		st := ComputeStatus(res, v1alpha1.StarrocksStatus{}, Observed{}, "cluster.local", metav1.Now())
		_, r, m := condition(st, v1alpha1.ConditionLastValidConfigurationApplied)
		assert.Equal(t, ReasonLastValidKept, r)
		assert.Equal(t, tt.want, m)
	}
}
