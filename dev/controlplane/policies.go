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
	_ "embed"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// platformPolicies are Deckhouse's admission policies as this project
// writes them (the file says where they come from and what differs).
//
//go:embed policies/deckhouse.yaml
var platformPolicies []byte

// PlatformPolicies are the ValidatingAdmissionPolicies and their bindings
// that InstallPlatformPolicies creates.
func PlatformPolicies() ([]*admissionv1.ValidatingAdmissionPolicy, []*admissionv1.ValidatingAdmissionPolicyBinding, error) {
	var policies []*admissionv1.ValidatingAdmissionPolicy
	var bindings []*admissionv1.ValidatingAdmissionPolicyBinding
	for _, doc := range strings.Split(string(platformPolicies), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, nil, fmt.Errorf("policies/deckhouse.yaml: %w", err)
		}
		switch meta.Kind {
		case "":
			continue // the leading comment
		case "ValidatingAdmissionPolicy":
			p := &admissionv1.ValidatingAdmissionPolicy{}
			if err := yaml.UnmarshalStrict([]byte(doc), p); err != nil {
				return nil, nil, fmt.Errorf("policies/deckhouse.yaml: %w", err)
			}
			policies = append(policies, p)
		case "ValidatingAdmissionPolicyBinding":
			b := &admissionv1.ValidatingAdmissionPolicyBinding{}
			if err := yaml.UnmarshalStrict([]byte(doc), b); err != nil {
				return nil, nil, fmt.Errorf("policies/deckhouse.yaml: %w", err)
			}
			bindings = append(bindings, b)
		default:
			return nil, nil, fmt.Errorf("policies/deckhouse.yaml: unexpected kind %s", meta.Kind)
		}
	}
	return policies, bindings, nil
}

// InstallPlatformPolicies creates Deckhouse's platform admission policies
// (policies/deckhouse.yaml) and returns once the API server enforces each
// of them. The harness calls it once the cluster has what Deckhouse itself
// would have made (its d8-* namespaces): from then on a d8-* namespace is
// created only by system:serviceaccount:d8-system:deckhouse, as in a
// Deckhouse cluster.
func InstallPlatformPolicies(ctx context.Context, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	policies, bindings, err := PlatformPolicies()
	if err != nil {
		return err
	}
	// The platform's identity (PlatformConfig) and the object the probe is
	// refused to delete, made before the policies apply: afterwards only
	// the platform may create a labelled object.
	if err := EnsureServiceAccount(ctx, cfg, platformNamespace, platformServiceAccount, "cluster-admin"); err != nil {
		return err
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(ctx, probeTarget().Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if _, err := kube.CoreV1().ConfigMaps("default").Create(ctx, probeTarget(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the policy probe's ConfigMap: %w", err)
		}
	}
	api := kube.AdmissionregistrationV1()
	for _, p := range policies {
		if _, err := api.ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ValidatingAdmissionPolicy %s: %w", p.Name, err)
		}
	}
	for _, b := range bindings {
		if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ValidatingAdmissionPolicyBinding %s: %w", b.Name, err)
		}
	}
	return waitPoliciesEnforced(ctx, cfg)
}

// Deckhouse's own service account, which its policies exclude.
const (
	platformNamespace      = "d8-system"
	platformServiceAccount = "deckhouse"
)

// PlatformConfig is cfg acting as Deckhouse's own service account
// system:serviceaccount:d8-system:deckhouse (InstallPlatformPolicies binds
// it to cluster-admin), by impersonation: the identity of whatever the
// harness does in place of the platform (Deckhouse, its modules, a lost
// object of the module's) once the policies apply. A cluster admin's steps
// use cfg itself, which the policies do not exclude.
func PlatformConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	user, groups := ServiceAccountUser(platformNamespace, platformServiceAccount)
	out.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	return out
}

func probeTarget() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "platform-policy-probe", Labels: map[string]string{"heritage": "deckhouse"}}}
}

// policyProbeUser is a cluster-admin none of the policies exclude: what it
// is refused shows that a policy is in force. Its writes are dry runs.
const policyProbeUser = "platform-policy-probe"

// waitPoliciesEnforced waits until the API server refuses what each policy
// forbids: it loads new policies asynchronously, so a write right after
// the create may still pass.
func waitPoliciesEnforced(ctx context.Context, cfg *rest.Config) error {
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Impersonate = rest.ImpersonationConfig{UserName: policyProbeUser, Groups: []string{"system:masters", "system:authenticated"}}
	probe, err := kubernetes.NewForConfig(probeCfg)
	if err != nil {
		return err
	}
	platform, err := kubernetes.NewForConfig(PlatformConfig(cfg))
	if err != nil {
		return err
	}
	// A labelled object for the probe to delete: a DELETE is matched by
	// label-objects.deckhouse.io alone (deny-set-heritage-label.deckhouse.io
	// matches the same creates and updates, and the API server names one
	// refusing policy only). Only the platform deletes it afterwards.
	target := probeTarget()
	defer platform.CoreV1().ConfigMaps("default").Delete(context.WithoutCancel(ctx), target.Name, metav1.DeleteOptions{})
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	checks := []struct {
		policy string
		write  func() error
	}{
		{"system-ns.deckhouse.io", func() error {
			_, err := probe.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "d8-policy-probe"}}, dry)
			return err
		}},
		{"label-objects.deckhouse.io", func() error {
			return probe.CoreV1().ConfigMaps("default").Delete(ctx, target.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		{"deny-set-heritage-label.deckhouse.io", func() error {
			// An object in maintenance (the label Deckhouse's binding of
			// label-objects.deckhouse.io leaves out) is matched by this
			// policy alone.
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Labels: map[string]string{
				"heritage": "deckhouse", "maintenance.deckhouse.io/no-resource-reconciliation": "true"}}}
			_, err := probe.CoreV1().ConfigMaps("default").Create(ctx, cm, dry)
			return err
		}},
		{"d8ms-prefix.deckhouse.io", func() error {
			_, err := probe.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d8ms-policy-probe"}}, dry)
			return err
		}},
	}
	// Seconds on an idle machine; a loaded one (tests side by side) takes
	// longer.
	deadline := time.Now().Add(90 * time.Second)
	for _, c := range checks {
		for {
			err := c.write()
			if apierrors.IsForbidden(err) && strings.Contains(err.Error(), c.policy) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("admission policy %s not enforced in 90s: a write it forbids got %v", c.policy, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
