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

package controlplane

import (
	"context"
	"fmt"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// serviceAccountTokenSeconds is how long a token from ServiceAccountConfig
// lasts: longer than any test or `make run` session.
const serviceAccountTokenSeconds = 48 * 3600

// ServiceAccountConfig is a client configuration that authenticates as the
// service account namespace/name with a token the API server issued for it
// (TokenRequest; the apiserver runs with --service-account-issuer and a
// signing key). Authentication, RBAC and admission see exactly what they
// see for a pod running under that account: the user
// system:serviceaccount:<namespace>:<name> in the groups
// system:serviceaccounts and system:serviceaccounts:<namespace>. The
// service account must exist; the token stops working when it is deleted.
func (cp *ControlPlane) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	kube, err := kubernetes.NewForConfig(cp.restConfig)
	if err != nil {
		return nil, err
	}
	seconds := int64(serviceAccountTokenSeconds)
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request a token for service account %s/%s: %w", namespace, name, err)
	}
	cfg := rest.CopyConfig(cp.restConfig)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// UserConfig is a client configuration acting as the user name in groups
// (system:authenticated added), through impersonation by the control
// plane's admin: RBAC and admission judge the impersonated user only, as
// they would a user who logged in with those names. Tenants in tests are
// such users; a service account whose object does not exist yet (one the
// module's release makes later) too, with UserConfig(ServiceAccountUser(...)).
func (cp *ControlPlane) UserConfig(name string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(cp.restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: append(append([]string(nil), groups...), "system:authenticated")}
	return cfg
}

// ServiceAccountUser is the user name and groups Kubernetes gives the
// service account namespace/name.
func ServiceAccountUser(namespace, name string) (string, []string) {
	return "system:serviceaccount:" + namespace + ":" + name, []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace}
}

// WriteKubeconfig writes a kubeconfig file for cfg into the control plane's
// directory (for a program that takes --kubeconfig) and returns its path.
func (cp *ControlPlane) WriteKubeconfig(name string, cfg *rest.Config) (string, error) {
	return writeKubeconfig(cp.dir, filepath.Base(name), cfg)
}

// EnsureServiceAccount creates the service account namespace/name (and its
// namespace) unless they exist, and binds it to clusterRole cluster-wide
// when clusterRole is not empty.
func EnsureServiceAccount(ctx context.Context, cfg *rest.Config, namespace, name, clusterRole string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Looked up first: admission judges a create before the API server
	// finds the name taken, and once Deckhouse's policies apply it refuses
	// the create of a d8- namespace to all but the platform.
	if _, err := kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", namespace, err)
		}
	} else if err != nil {
		return fmt.Errorf("read namespace %s: %w", namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := kube.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", namespace, name, err)
	}
	if clusterRole == "" {
		return nil
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + ":" + name + ":" + clusterRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: name}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bind service account %s/%s to ClusterRole %s: %w", namespace, name, clusterRole, err)
	}
	return nil
}
