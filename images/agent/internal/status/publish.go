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

package status

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Publisher stores a Status where the hooks can read it.
type Publisher interface {
	Publish(ctx context.Context, st agentconfig.Status) error
}

// PodAnnotation writes Status as JSON into the agent's own Pod annotation
// agentconfig.StatusAnnotation. It needs only get/patch on pods.
type PodAnnotation struct {
	Pods      corev1client.PodsGetter
	Namespace string
	Name      string
}

// Publish merge-patches the annotation.
func (p *PodAnnotation) Publish(ctx context.Context, st agentconfig.Status) error {
	value, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{agentconfig.StatusAnnotation: string(value)}}})
	if err != nil {
		return fmt.Errorf("encode status patch: %w", err)
	}
	if _, err := p.Pods.Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "starrocks-agent"}); err != nil {
		return fmt.Errorf("patch pod %s/%s annotation %s: %w", p.Namespace, p.Name, agentconfig.StatusAnnotation, err)
	}
	return nil
}
