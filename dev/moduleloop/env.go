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

// Package moduleloop is what remains of the hand-written module loop now
// that the real addon-operator runs the module (dev/addonoperator): the
// parts addon-operator cannot do here. It prepares what a Deckhouse cluster
// has and addon-operator does not make (CRDs of other modules, Deckhouse's
// namespaces and PriorityClasses), builds the repository's binaries, runs
// the admission webhook as a local process (a pod needs a kubelet and a
// container runtime, which the local control plane has not) and filters
// objects into a binding's snapshot for hook tests that run the hooks
// binary without addon-operator (hooks/batch_test.go). Development tooling,
// never shipped.
package moduleloop

import (
	"context"
	"fmt"
	"path/filepath"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

// CRDDirs are the CRDs a Deckhouse cluster has that the module's objects
// need: the module's own, cert-manager's, prometheus-operator's and the
// Deckhouse fixtures in dev/crds.
func CRDDirs() ([]string, error) {
	certManager, err := controlplane.Tool("cert-manager-crds")
	if err != nil {
		return nil, err
	}
	prometheusOperator, err := controlplane.Tool("prometheus-operator-crds")
	if err != nil {
		return nil, err
	}
	return []string{
		controlplane.ModuleCRDDir(),
		certManager,
		prometheusOperator,
		filepath.Join(controlplane.RepoRoot(), "dev", "crds"),
	}, nil
}

// ModuleCRDs are the CRDs of CRDDirs the module itself writes or reads: its
// own, cert-manager's Certificate, Issuer and ClusterIssuer, the
// PodMonitor and PrometheusRule, and the Deckhouse fixtures. A cluster
// without a cert-manager controller (test/e2e) needs no more: no object
// of the other kinds exists there, and each CRD costs the apiserver its
// OpenAPI and handler build (cert-manager's ACME Challenge and
// prometheus-operator's Prometheus, Alertmanager and ThanosRuler are
// several hundred kilobytes of schema each: about 2 of the 6 CPU-seconds a
// control plane takes to start).
func ModuleCRDs() ([]string, error) {
	dirs, err := CRDDirs()
	if err != nil {
		return nil, err
	}
	certManager, prometheusOperator := dirs[1], dirs[2]
	return []string{
		dirs[0],
		filepath.Join(certManager, "cert-manager.io_certificates.yaml"),
		filepath.Join(certManager, "cert-manager.io_issuers.yaml"),
		filepath.Join(certManager, "cert-manager.io_clusterissuers.yaml"),
		filepath.Join(prometheusOperator, "monitoring.coreos.com_podmonitors.yaml"),
		filepath.Join(prometheusOperator, "monitoring.coreos.com_prometheusrules.yaml"),
		dirs[3],
	}, nil
}

// DeckhouseNamespaces exist in every Deckhouse cluster the module runs in:
// d8-monitoring is the Prometheus namespace the instances' NetworkPolicies
// admit to the metrics ports, d8-cert-manager is where cert-manager runs
// (the module puts nothing there any more; the render tests check that).
var DeckhouseNamespaces = []string{"d8-cert-manager", "d8-monitoring"}

// DeckhousePriorityClasses are the PriorityClasses the module's pods name,
// with the values Deckhouse's priority-class module gives them
// (deckhouse/deckhouse modules/010-priority-class/docs/CONFIGURATION.md).
// Without them the Priority admission plugin refuses the pods.
var DeckhousePriorityClasses = map[string]int32{"production-high": 9000, "cluster-medium": 7000}

// The module runs as Deckhouse runs it: its hooks (their kubeconfig and
// the module loop's own client, which plays addon-operator) as Deckhouse's
// service account, bound to cluster-admin as Deckhouse binds it
// (deckhouse/deckhouse modules/002-deckhouse/templates/rbac-for-us.yaml);
// the webhook as its own service account, which the module's release makes
// (WebhookNamespace/WebhookServiceAccount, templates/webhook/rbac-for-us.yaml).
const (
	DeckhouseNamespace      = "d8-system"
	DeckhouseServiceAccount = "deckhouse"
	WebhookNamespace        = "d8-managed-starrocks"
	WebhookServiceAccount   = "webhook"
)

// PrepareCluster creates what Deckhouse itself would provide: its
// namespaces, PriorityClasses and service account, then its platform
// admission policies (controlplane.InstallPlatformPolicies), last, since
// they forbid anyone but Deckhouse to create d8-* namespaces.
func PrepareCluster(ctx context.Context, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, name := range DeckhouseNamespaces {
		if err := kubeutil.EnsureNamespace(ctx, kube, name, map[string]string{"heritage": "deckhouse"}); err != nil {
			return err
		}
	}
	for name, value := range DeckhousePriorityClasses {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"heritage": "deckhouse"}}, Value: value}
		if _, err := kube.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PriorityClass %s: %w", name, err)
		}
	}
	if err := controlplane.EnsureServiceAccount(ctx, cfg, DeckhouseNamespace, DeckhouseServiceAccount, "cluster-admin"); err != nil {
		return err
	}
	return controlplane.InstallPlatformPolicies(ctx, cfg)
}

// Identities are the client configuration the module runs as (Deckhouse's
// service account, with a token the API server issued: PrepareCluster made
// the account) and a kubeconfig file for the webhook, as its own service
// account. The webhook's account is the release's, made by the module's
// first pass, which runs after the webhook has started; a token cannot be
// requested for an account that does not exist yet, so the webhook's
// kubeconfig impersonates its user name and groups instead: RBAC and
// admission judge it exactly as its token would be judged.
func Identities(ctx context.Context, cp *controlplane.ControlPlane) (module *rest.Config, webhookKubeconfig string, err error) {
	if module, err = cp.ServiceAccountConfig(ctx, DeckhouseNamespace, DeckhouseServiceAccount); err != nil {
		return nil, "", err
	}
	user, groups := controlplane.ServiceAccountUser(WebhookNamespace, WebhookServiceAccount)
	webhookKubeconfig, err = cp.WriteKubeconfig("webhook.kubeconfig", cp.UserConfig(user, groups...))
	return module, webhookKubeconfig, err
}
