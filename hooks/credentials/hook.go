// Package credentials creates the Secrets of each deployed instance that hold
// generated passwords: the root credentials (keys username, password) the
// agent sets and users read, and the password of the PKCS12 keystore
// cert-manager writes for the FE (key password).
//
// A Secret is created once, with a password from crypto/rand, and never
// updated: rotating a password by accident would lock the agent and every
// client out. The snapshot holds only Secret names, never their data, so no
// password reaches values, logs or the hook's memory.
//
// Secrets are created for instances that have a last valid configuration (the
// ConfigMap the instances hook writes): a brand-new invalid instance gets no
// objects at all.
package credentials

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/deckhouse/module-sdk/pkg"
	objectpatch "github.com/deckhouse/module-sdk/pkg/object-patch"
	"github.com/deckhouse/module-sdk/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
)

// Snapshot names.
const (
	SnapInstances = "deployed_instances"
	SnapSecrets   = "password_secrets"
)

// RootUser is the StarRocks superuser the credentials are for.
const RootUser = "root"

var _ = registry.RegisterFunc(Config, Handle)

// Config watches the last-valid ConfigMaps (one per deployed instance) and
// the password Secrets.
var Config = &pkg.HookConfig{
	Queue: "main",
	Kubernetes: []pkg.KubernetesConfig{
		{
			Name:       SnapInstances,
			APIVersion: "v1",
			Kind:       "ConfigMap",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateLastValid,
			}},
			JqFilter: `{namespace: .metadata.namespace} + ((.data["` + shared.LastValidKey + `"] // "{}") | try fromjson catch {} |` +
				` {name: .name, uid: .uid, credentialsSecret: .names.credentialsSecret, keystoreSecret: .tls.keystorePasswordSecretName})`,
		},
		{
			Name:       SnapSecrets,
			APIVersion: "v1",
			Kind:       "Secret",
			LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{shared.LabelServiceType: shared.ServiceTypeValue},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: shared.LabelState, Operator: metav1.LabelSelectorOpIn, Values: []string{shared.StateCredentials, shared.StateKeystore},
				}},
			},
			JqFilter: `{namespace: .metadata.namespace, name: .metadata.name}`,
		},
	},
}

// Instance is a deployed instance as the last-valid ConfigMap names it.
type Instance struct {
	Namespace         string `json:"namespace"`
	Name              string `json:"name"`
	UID               string `json:"uid"`
	CredentialsSecret string `json:"credentialsSecret"`
	KeystoreSecret    string `json:"keystoreSecret"`
}

type secretRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Handle creates the missing Secrets.
func Handle(_ context.Context, input *pkg.HookInput) error {
	instances, err := objectpatch.UnmarshalToStruct[Instance](input.Snapshots, SnapInstances)
	if err != nil {
		return fmt.Errorf("decode snapshot %s: %w", SnapInstances, err)
	}
	secrets, err := objectpatch.UnmarshalToStruct[secretRef](input.Snapshots, SnapSecrets)
	if err != nil {
		return fmt.Errorf("decode snapshot %s: %w", SnapSecrets, err)
	}
	existing := make(map[secretRef]bool, len(secrets))
	for _, s := range secrets {
		existing[s] = true
	}
	for _, m := range Missing(instances, existing) {
		s := NewSecret(m)
		// CreateIfNotExists: a Secret made by an earlier run whose snapshot
		// has not arrived yet is left as it is.
		input.PatchCollector.CreateIfNotExists(s)
		input.Logger.Info("creating password Secret", "namespace", m.Namespace, "name", m.Name, "kind", m.State)
	}
	return nil
}

// Want is one Secret an instance needs.
type Want struct {
	Instance
	Name  string
	State string
}

// Missing lists the Secrets that do not exist yet, in input order.
func Missing(instances []Instance, existing map[secretRef]bool) []Want {
	var out []Want
	for _, in := range instances {
		if in.Name == "" || in.UID == "" {
			continue // an unreadable ConfigMap: the instances hook rewrites it
		}
		for _, w := range []Want{{in, in.CredentialsSecret, shared.StateCredentials}, {in, in.KeystoreSecret, shared.StateKeystore}} {
			if w.Name != "" && !existing[secretRef{Namespace: in.Namespace, Name: w.Name}] {
				out = append(out, w)
			}
		}
	}
	return out
}

// NewSecret builds a Secret with a fresh random password.
func NewSecret(w Want) *corev1.Secret {
	// 26 base32 characters (130 bits) from crypto/rand: no characters that
	// need quoting in SQL, shell or a Java keystore password.
	data := map[string][]byte{"password": []byte(rand.Text())}
	if w.State == shared.StateCredentials {
		data["username"] = []byte(RootUser)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            w.Name,
			Namespace:       w.Namespace,
			Labels:          shared.InstanceLabels(w.Instance.Name, w.State),
			OwnerReferences: []metav1.OwnerReference{shared.OwnerReference(w.Instance.Name, w.UID)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}
