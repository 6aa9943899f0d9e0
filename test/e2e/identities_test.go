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

package e2e_test

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

// The identities a test acts as besides the control plane's admin, which
// plays what a cluster runs outside the module (kubelet, cert-manager):
// the agent of an instance as its service account, and a tenant as a user
// with the usual rights in its namespace. Deckhouse's platform policies
// (dev/controlplane/policies) judge both as in a Deckhouse cluster.

// tenantUser is the tenant of the tests that check what a tenant can do.
const tenantUser = "e2e-user"

// tenantEditRoles are what a namespace's team has in a Deckhouse cluster:
// Kubernetes' edit role and the module's "use" capability (Starrocks
// objects, templates/rbacv2/use/edit.yaml as a cluster of
// chartrender.DefaultGlobals' Deckhouse version renders it).
var tenantEditRoles = []string{"edit", "d8:namespace-capability:managed-starrocks:edit"}

// tenant returns clients acting as tenantUser, bound to tenantEditRoles in
// namespace (made if missing).
func (e *env) tenant(namespace string) (kubernetes.Interface, dynamic.Interface) {
	e.t.Helper()
	ctx := context.Background()
	if err := kubeutil.EnsureNamespace(ctx, e.kube, namespace, nil); err != nil {
		e.t.Fatal(err)
	}
	for _, role := range tenantEditRoles {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: tenantUser + ":" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: tenantUser}},
		}
		if _, err := e.kube.RbacV1().RoleBindings(namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			e.t.Fatal(err)
		}
	}
	// The API server's authorizer learns new bindings from its informers: a
	// request right after them can still be refused (seen under load).
	// Wait until it allows what each role gives.
	e.eventually("the tenant's roles in effect in "+namespace, func() (bool, string) {
		for _, a := range []authorizationv1.ResourceAttributes{
			{Namespace: namespace, Verb: "create", Resource: "configmaps"},
			{Namespace: namespace, Verb: "create", Group: "managed-services.deckhouse.io", Resource: "starrocks"},
		} {
			review, err := e.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: tenantUser, Groups: []string{"system:authenticated"}, ResourceAttributes: &a},
			}, metav1.CreateOptions{})
			if err != nil || !review.Status.Allowed {
				return false, fmt.Sprintf("%s %s/%s: %v %+v", a.Verb, a.Group, a.Resource, err, review)
			}
		}
		return true, ""
	})
	cfg := e.cp.UserConfig(tenantUser)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return kube, dyn
}

// agentAccount is the service account the agent of a pod runs as (the
// pod's spec.serviceAccountName, which the templates give the FE pods).
func (e *env) agentAccount(namespace, pod string) string {
	e.t.Helper()
	// The StatefulSet controller makes the pod after the hooks wrote its
	// StatefulSet, which is all a test waits for before it reports.
	var p *corev1.Pod
	e.eventually("pod "+namespace+"/"+pod, func() (bool, string) {
		var err error
		p, err = e.kube.CoreV1().Pods(namespace).Get(context.Background(), pod, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	if p.Spec.ServiceAccountName == "" || p.Spec.ServiceAccountName == "default" {
		e.t.Fatalf("pod %s/%s has no service account of its own: no agent runs there", namespace, pod)
	}
	return p.Spec.ServiceAccountName
}

// agentClientConfig is a client configuration of the agent of pod: a token of
// its service account.
func (e *env) agentClientConfig(namespace, pod string) *rest.Config {
	e.t.Helper()
	account := e.agentAccount(namespace, pod)
	var cfg *rest.Config
	e.eventually("a token of service account "+namespace+"/"+account, func() (bool, string) {
		var err error
		cfg, err = e.cp.ServiceAccountConfig(context.Background(), namespace, account)
		return err == nil, fmt.Sprint(err)
	})
	return cfg
}

// agentKubeconfig is a kubeconfig file for the agent binary of pod.
func (e *env) agentKubeconfig(namespace, pod string) string {
	e.t.Helper()
	path, err := e.cp.WriteKubeconfig("agent-"+namespace+"-"+pod+".kubeconfig", e.agentClientConfig(namespace, pod))
	if err != nil {
		e.t.Fatal(err)
	}
	return path
}

// patchPodAsAgent writes a merge patch of pod's metadata as the agent of
// that pod writes its status annotation: with its service account, so its
// Role (rbac-for-us.yaml) and the platform policies apply. It retries
// while the Role catches up with a new pod.
func (e *env) patchPodAsAgent(namespace, pod string, patch []byte) {
	e.t.Helper()
	agent, err := kubernetes.NewForConfig(e.agentClientConfig(namespace, pod))
	if err != nil {
		e.t.Fatal(err)
	}
	e.eventually("the agent's report on pod "+pod, func() (bool, string) {
		_, err := agent.CoreV1().Pods(namespace).Patch(context.Background(), pod, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "starrocks-agent"})
		return err == nil, fmt.Sprint(err)
	})
}
