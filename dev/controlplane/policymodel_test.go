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

package controlplane_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// deckhouseText are the expressions of deckhouse/deckhouse's
// modules/002-deckhouse/templates/validation.yaml at 021e8fbe4c2e, by
// policy and match condition ("validation" for the first validation), as
// that file writes them. The model (policies/deckhouse.yaml) must carry
// each of them unchanged; its header lists what it may differ in, and
// exclude-restartedAt is one (tested below against Deckhouse's own cases).
var deckhouseText = map[string]map[string]string{
	"system-ns.deckhouse.io": {
		"validation": `!(request.userInfo.username != "system:serviceaccount:d8-system:deckhouse" && request.userInfo.username != "dhctl" && (object.metadata.name.startsWith("d8-") || object.metadata.name.startsWith("kube-")))`,
	},
	"label-objects.deckhouse.io": {
		"exclude-groups":                 `!(["system:nodes", "system:serviceaccounts:kube-system", "system:serviceaccounts:d8-system"].exists(e, (e in request.userInfo.groups)))`,
		"exclude-users":                  `!(["system:sudouser", "system:apiserver", "system:kube-controller-manager", "system:kube-scheduler", "system:volume-scheduler", "dhctl", "observability"].exists(e, (e == request.userInfo.username)))`,
		"exclude-kinds":                  `!(has(request.kind) && ["StorageClass", "DeckhouseRelease", "ModuleRelease"].exists(e, (e == request.kind.kind)))`,
		"exclude-restartedAt":            "", // newer than that commit: see the model's header
		"exclude-heritage-bypass-delete": `!( request.operation == "DELETE" && has(oldObject.metadata) && has(oldObject.metadata.labels) && "security.deckhouse.io/heritage-bypass" in oldObject.metadata.labels && oldObject.metadata.labels["security.deckhouse.io/heritage-bypass"] == "delete" )`,
		"validation":                     `request.userInfo.username.startsWith("system:serviceaccount:d8-") || request.userInfo.username.startsWith("system:serviceaccount:kube-")`,
	},
	"deny-set-heritage-label.deckhouse.io": {
		"exclude-groups":                 `!(["system:nodes", "system:serviceaccounts:kube-system", "system:serviceaccounts:d8-system"].exists(e, (e in request.userInfo.groups)))`,
		"exclude-users":                  `!(["system:sudouser", "system:apiserver", "system:kube-controller-manager", "system:kube-scheduler", "system:volume-scheduler", "dhctl", "observability"].exists(e, (e == request.userInfo.username)))`,
		"exclude-system-serviceaccounts": `!(request.userInfo.username.startsWith("system:serviceaccount:d8-") || request.userInfo.username.startsWith("system:serviceaccount:kube-"))`,
		"exclude-kinds":                  `!(has(request.kind) && ["StorageClass", "DeckhouseRelease", "ModuleRelease"].exists(e, (e == request.kind.kind)))`,
		"validation":                     `!( has(object.metadata) && has(object.metadata.labels) && "heritage" in object.metadata.labels && ( oldObject == null || !has(oldObject.metadata) || !has(oldObject.metadata.labels) || !("heritage" in oldObject.metadata.labels) || oldObject.metadata.labels["heritage"] != object.metadata.labels["heritage"] ) )`,
	},
	"d8ms-prefix.deckhouse.io": {
		"exclude-groups":                  `!(["system:nodes", "system:serviceaccounts:kube-system", "system:serviceaccounts:d8-system", "system:serviceaccounts:d8-cni-cilium"].exists(e, (e in request.userInfo.groups)))`,
		"exclude-users":                   `!(["system:sudouser", "system:apiserver", "system:kube-controller-manager", "system:kube-scheduler", "system:volume-scheduler", "dhctl"].exists(e, (e == request.userInfo.username)))`,
		"exclude-d8-namespaces":           `!(["system:serviceaccount:d8-"].exists(e, (request.userInfo.username.startsWith(e))))`,
		"exclude-managed-serviceaccounts": `!(request.userInfo.username.startsWith("system:serviceaccount:") && request.userInfo.username.contains(":d8ms-"))`,
		"exclude-delete-pods-operations":  `!(request.operation == "DELETE" && request.resource.resource == "pods")`,
		"validation":                      `!( (has(object.metadata) && has(object.metadata.name) && object.metadata.name.startsWith("d8ms-")) || (has(oldObject.metadata) && has(oldObject.metadata.name) && oldObject.metadata.name.startsWith("d8ms-")) )`,
	},
}

// oneLine folds the whitespace YAML's line breaks leave in an expression.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func modelPolicies(t *testing.T) map[string]*admissionv1.ValidatingAdmissionPolicy {
	t.Helper()
	policies, _, err := controlplane.PlatformPolicies()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*admissionv1.ValidatingAdmissionPolicy{}
	for _, p := range policies {
		out[p.Name] = p
	}
	return out
}

// The model is Deckhouse's text: the same policies, the same match
// conditions by name, each expression unchanged. It fails when an
// identity is added to an exclusion (as "admin" once was), a condition is
// loosened, or a name differs from the real one.
func TestPolicyModelIsDeckhousesText(t *testing.T) {
	model := modelPolicies(t)
	if len(model) != len(deckhouseText) {
		t.Errorf("the model has %d policies, Deckhouse's text %d", len(model), len(deckhouseText))
	}
	for name, want := range deckhouseText {
		p := model[name]
		if p == nil {
			t.Errorf("the model has no policy %s", name)
			continue
		}
		got := map[string]string{}
		for _, c := range p.Spec.MatchConditions {
			got[c.Name] = c.Expression
		}
		if len(p.Spec.Validations) != 1 {
			t.Errorf("%s: %d validations, Deckhouse's has 1", name, len(p.Spec.Validations))
		} else {
			got["validation"] = p.Spec.Validations[0].Expression
		}
		for cond, text := range want {
			expr, ok := got[cond]
			switch {
			case !ok:
				t.Errorf("%s: the model lacks %s", name, cond)
			case text != "" && oneLine(expr) != text:
				t.Errorf("%s %s differs from Deckhouse's text:\nmodel:     %s\ndeckhouse: %s", name, cond, oneLine(expr), text)
			}
		}
		for cond := range got {
			if _, ok := want[cond]; !ok {
				t.Errorf("%s: the model has %s, which Deckhouse's does not", name, cond)
			}
		}
		if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionv1.Fail {
			t.Errorf("%s: failurePolicy is not Fail", name)
		}
	}
}

type decision string

const (
	skipped decision = "skipped"
	allowed decision = "allowed"
	denied  decision = "denied"
)

type compiledPolicy struct {
	conditions  []string
	programs    []cel.Program
	validations []cel.Program
}

func compilePolicy(t *testing.T, p *admissionv1.ValidatingAdmissionPolicy) compiledPolicy {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType), cel.Variable("request", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	compile := func(what, expr string) cel.Program {
		ast, iss := env.Compile(expr)
		if iss != nil && iss.Err() != nil {
			t.Fatalf("%s %s: %v", p.Name, what, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		return prg
	}
	var c compiledPolicy
	for _, m := range p.Spec.MatchConditions {
		c.conditions = append(c.conditions, m.Name)
		c.programs = append(c.programs, compile(m.Name, m.Expression))
	}
	for i, v := range p.Spec.Validations {
		c.validations = append(c.validations, compile(fmt.Sprint("validation ", i), v.Expression))
	}
	return c
}

func celOf(o map[string]any) ref.Val {
	if o == nil {
		return types.NullValue
	}
	return types.DefaultTypeAdapter.NativeToValue(o)
}

// evaluate runs the policy as the API server does: a false match condition
// skips it, an error rejects (failurePolicy Fail), then the validations.
func (c compiledPolicy) evaluate(request, oldObject, object map[string]any) (decision, string) {
	act := map[string]any{"request": request, "object": celOf(object), "oldObject": celOf(oldObject)}
	for i, prg := range c.programs {
		out, _, err := prg.Eval(act)
		if err != nil {
			return denied, c.conditions[i] + " errored: " + err.Error()
		}
		if out == types.False {
			return skipped, c.conditions[i]
		}
	}
	for _, prg := range c.validations {
		out, _, err := prg.Eval(act)
		if err != nil || out != types.True {
			return denied, fmt.Sprint(out, err)
		}
	}
	return allowed, ""
}

func request(op, kind, resource, user string, groups ...string) map[string]any {
	g := []any{"system:authenticated"}
	for _, x := range groups {
		g = append(g, x)
	}
	return map[string]any{
		"operation": op,
		"kind":      map[string]any{"group": "apps", "version": "v1", "kind": kind},
		"resource":  map[string]any{"group": "apps", "version": "v1", "resource": resource},
		"userInfo":  map[string]any{"username": user, "groups": g},
	}
}

// statefulSet is a module StatefulSet as the API server hands it to
// admission; mutate changes a fresh copy.
func statefulSet(mutate func(o map[string]any)) map[string]any {
	o := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{
			"name": "d8ms-sr-olap-fe", "namespace": "team", "generation": int64(3), "resourceVersion": "100",
			"labels":      map[string]any{"heritage": "deckhouse", "module": "managed-starrocks"},
			"annotations": map[string]any{"managed-starrocks.deckhouse.io/render": "abc"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "fe"}, "annotations": map[string]any{"checksum/config": "abc"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "fe", "image": "registry.example/fe@sha256:1"}}},
			},
		},
	}
	if mutate != nil {
		mutate(o)
	}
	return o
}

// bumped is what the API server makes of an update: the fields it sets
// itself differ, the rest is the request's.
func bumped(mutate func(o map[string]any)) map[string]any {
	return statefulSet(func(o map[string]any) {
		md := o["metadata"].(map[string]any)
		md["generation"], md["resourceVersion"] = int64(4), "101"
		if mutate != nil {
			mutate(o)
		}
	})
}

func template(o map[string]any) map[string]any {
	return o["spec"].(map[string]any)["template"].(map[string]any)
}
func templateAnnotations(o map[string]any) map[string]any {
	return template(o)["metadata"].(map[string]any)["annotations"].(map[string]any)
}
func restart(o map[string]any) {
	templateAnnotations(o)["kubectl.kubernetes.io/restartedAt"] = "2026-12-05T12:00:00Z"
}
func objectLabels(o map[string]any) map[string]any {
	return o["metadata"].(map[string]any)["labels"].(map[string]any)
}

// TestLabelObjectsModel runs label-objects.deckhouse.io of the model on
// the cases of Deckhouse's own test of the policy (validation_policy_test.go
// at 7c8c731: who is excluded, a pure restart, what a restart may not
// carry, the delete bypass), with the identities of this project: the
// module's hooks, the harness's superuser as the cluster admin it plays.
func TestLabelObjectsModel(t *testing.T) {
	p := compilePolicy(t, modelPolicies(t)["label-objects.deckhouse.io"])
	admin := []string{"admin", "system:masters"}
	upd := func(user []string) map[string]any {
		return request("UPDATE", "StatefulSet", "statefulsets", user[0], user[1:]...)
	}
	for _, tt := range []struct {
		name              string
		req               map[string]any
		oldObject, object map[string]any
		want              decision
	}{
		{"the hooks (Deckhouse's service account) change a module object", upd([]string{"system:serviceaccount:d8-system:deckhouse", "system:serviceaccounts", "system:serviceaccounts:d8-system"}),
			statefulSet(nil), bumped(func(o map[string]any) { o["spec"].(map[string]any)["replicas"] = int64(5) }), skipped},
		{"a d8- module's service account changes it", upd([]string{"system:serviceaccount:d8-cert-manager:cert-manager", "system:serviceaccounts", "system:serviceaccounts:d8-cert-manager"}),
			statefulSet(nil), bumped(func(o map[string]any) { o["spec"].(map[string]any)["replicas"] = int64(5) }), allowed},
		{"the statefulset controller (kube-system) changes it", upd([]string{"system:serviceaccount:kube-system:statefulset-controller", "system:serviceaccounts", "system:serviceaccounts:kube-system"}),
			statefulSet(nil), bumped(nil), skipped},
		{"system:sudouser changes it", upd([]string{"system:sudouser"}), statefulSet(nil), bumped(nil), skipped},
		{"a cluster admin (system:masters) may not change it", upd(admin),
			statefulSet(nil), bumped(func(o map[string]any) { o["spec"].(map[string]any)["replicas"] = int64(5) }), denied},
		{"a cluster admin may restart it", upd(admin), statefulSet(nil), bumped(restart), skipped},
		{"a restart of a restarted workload", upd(admin), statefulSet(restart), bumped(func(o map[string]any) {
			templateAnnotations(o)["kubectl.kubernetes.io/restartedAt"] = "2026-12-06T00:00:00Z"
		}), skipped},
		{"an update that changes nothing beside the annotation", upd(admin), statefulSet(restart), bumped(restart), skipped},
		{"a restart may not carry an image", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			template(o)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "busybox"
		}), denied},
		{"a restart may not carry replicas", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			o["spec"].(map[string]any)["replicas"] = int64(0)
		}), denied},
		{"a restart may not carry the maintenance label", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			objectLabels(o)["maintenance.deckhouse.io/no-resource-reconciliation"] = "true"
		}), denied},
		{"a restart may not carry the bypass label", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			objectLabels(o)["security.deckhouse.io/heritage-bypass"] = "delete"
		}), denied},
		{"a restart may not carry a pod template label", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			template(o)["metadata"].(map[string]any)["labels"].(map[string]any)["app"] = "x"
		}), denied},
		{"a restart may not drop a pod template annotation", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			delete(templateAnnotations(o), "checksum/config")
		}), denied},
		{"a restart may not carry an object annotation", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			o["metadata"].(map[string]any)["annotations"].(map[string]any)["x"] = "1"
		}), denied},
		{"a restart may not carry an owner", upd(admin), statefulSet(nil), bumped(func(o map[string]any) {
			restart(o)
			o["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"kind": "ConfigMap", "name": "x"}}
		}), denied},
		{"a cluster admin may not delete it", request("DELETE", "StatefulSet", "statefulsets", "admin", "system:masters"), statefulSet(nil), nil, denied},
		{"a cluster admin deletes a released PVC (bypass label)", request("DELETE", "PersistentVolumeClaim", "persistentvolumeclaims", "admin", "system:masters"),
			statefulSet(func(o map[string]any) { objectLabels(o)["security.deckhouse.io/heritage-bypass"] = "delete" }), nil, skipped},
		{"another value of the bypass label is none", request("DELETE", "PersistentVolumeClaim", "persistentvolumeclaims", "admin", "system:masters"),
			statefulSet(func(o map[string]any) { objectLabels(o)["security.deckhouse.io/heritage-bypass"] = "update" }), nil, denied},
		{"a tenant's service account may not", upd([]string{"system:serviceaccount:team:d8ms-sr-olap-agent", "system:serviceaccounts", "system:serviceaccounts:team"}),
			statefulSet(nil), bumped(nil), denied},
		{"a cluster admin may not create one", request("CREATE", "StatefulSet", "statefulsets", "admin", "system:masters"), nil, statefulSet(restart), denied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, detail := p.evaluate(tt.req, tt.oldObject, tt.object)
			if got != tt.want {
				t.Errorf("%s (%s), want %s", got, detail, tt.want)
			}
		})
	}
}

// The module's own writes pass the model, and what the admin must be able
// to change is outside it: the default class and its marker carry no
// heritage label (the binding does not select them), a released PVC is
// deletable, the agent writes its d8ms- objects.
func TestTheModulesWritesPassTheModel(t *testing.T) {
	_, bindings, err := controlplane.PlatformPolicies()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings {
		if b.Name != "heritage-label-objects.deckhouse.io" {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.MatchResources.ObjectSelector)
		if err != nil {
			t.Fatal(err)
		}
		// hooks/defaultclass labels.
		if sel.Matches(labels.Set{"module": "managed-starrocks"}) {
			t.Error("the binding selects the default class: admins could not change it")
		}
		if !sel.Matches(labels.Set{"heritage": "deckhouse", "module": "managed-starrocks"}) {
			t.Error("the binding does not select a heritage object")
		}
	}
	p := compilePolicy(t, modelPolicies(t)["d8ms-prefix.deckhouse.io"])
	agent := request("UPDATE", "Secret", "secrets", "system:serviceaccount:team:d8ms-sr-olap-agent", "system:serviceaccounts", "system:serviceaccounts:team")
	secret := map[string]any{"metadata": map[string]any{"name": "d8ms-sr-olap-user.alice"}}
	if got, detail := p.evaluate(agent, secret, secret); got == denied {
		t.Errorf("the agent's write of its user's Secret: %s (%s)", got, detail)
	}
	tenant := request("UPDATE", "Secret", "secrets", "alice")
	if got, _ := p.evaluate(tenant, secret, secret); got != denied {
		t.Errorf("a tenant's write of a d8ms- Secret: %s, want denied", got)
	}
	del := request("DELETE", "Pod", "pods", "alice")
	if got, _ := p.evaluate(del, map[string]any{"metadata": map[string]any{"name": "d8ms-sr-olap-fe-0"}}, nil); got == denied {
		t.Error("a tenant may delete an instance's pod")
	}
}
