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

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// SecretStore is the agent's access to Secrets of its own namespace: the
// users' connection Secrets and the password Secrets they reference. The
// Role allows exactly these names (pkg/instanceobjects/templates/
// rbac-for-us.yaml): get on both, patch on the connection Secrets.
type SecretStore interface {
	// Get returns a Secret's data; ErrSecretNotFound when it does not exist.
	Get(ctx context.Context, name string) (map[string][]byte, error)
	// Patch sets the keys of set and removes the keys of remove.
	Patch(ctx context.Context, name string, set map[string][]byte, remove []string) error
}

// ErrSecretNotFound: the Secret does not exist.
var ErrSecretNotFound = errors.New("not found")

// KubeSecrets is the client-go SecretStore.
type KubeSecrets struct {
	Secrets   corev1client.SecretsGetter
	Namespace string
}

// Get reads the Secret. Errors name the Secret, never its data.
func (k *KubeSecrets) Get(ctx context.Context, name string) (map[string][]byte, error) {
	s, err := k.Secrets.Secrets(k.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrSecretNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get Secret %s: %w", name, err)
	}
	return s.Data, nil
}

// Patch merge-patches the data keys (a null value removes a key).
func (k *KubeSecrets) Patch(ctx context.Context, name string, set map[string][]byte, remove []string) error {
	data := map[string]any{}
	for key, v := range set {
		data[key] = v // []byte is encoded as base64, as data wants it
	}
	for _, key := range remove {
		data[key] = nil
	}
	patch, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return fmt.Errorf("encode patch of Secret %s: %w", name, err)
	}
	if _, err := k.Secrets.Secrets(k.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "starrocks-agent"}); err != nil {
		if apierrors.IsNotFound(err) {
			return ErrSecretNotFound
		}
		return fmt.Errorf("patch Secret %s: %w", name, err)
	}
	return nil
}
