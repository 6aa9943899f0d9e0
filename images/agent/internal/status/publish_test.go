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

package status_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// TestPodAnnotation publishes through a real kube-apiserver and reads the
// annotation back the way the hooks do; other annotations must survive.
func TestPodAnnotation(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{})
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const ns = "default"
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d8ms-sr-demo-0", Annotations: map[string]string{"keep": "me"}},
		Spec: corev1.PodSpec{AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "fe", Image: "starrocks/fe-ubuntu"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	p := &status.PodAnnotation{Pods: cs.CoreV1(), Namespace: ns, Name: "d8ms-sr-demo-0"}
	for _, serial := range []string{"01", "02"} {
		want := agentconfig.Status{
			TLS:       agentconfig.TLSStatus{Ready: true, Serial: serial, NotAfter: "2027-01-01T00:00:00Z"},
			LastApply: agentconfig.ApplyStatus{Succeeded: true, Applied: []string{"fe.catalog_trash_expire_second=600"}},
			UpdatedAt: "2026-12-02T00:00:00Z",
		}
		require.NoError(t, p.Publish(ctx, want))
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, "d8ms-sr-demo-0", metav1.GetOptions{})
		require.NoError(t, err)
		var got agentconfig.Status
		require.NoError(t, json.Unmarshal([]byte(pod.Annotations[agentconfig.StatusAnnotation]), &got))
		require.Equal(t, want, got)
		require.Equal(t, "me", pod.Annotations["keep"])
	}

	missing := &status.PodAnnotation{Pods: cs.CoreV1(), Namespace: ns, Name: "no-such-pod"}
	require.ErrorContains(t, missing.Publish(ctx, agentconfig.Status{}), "no-such-pod")
}
