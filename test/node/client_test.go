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

package node_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/images"
)

// testUSAGEClient runs docs/USAGE.md's client pod ("Connect over TLS with
// the mysql client") as written, image mysql:8.4 included, with the
// recipe's mysql command: the server certificate verified against the CA
// and the host name, the admin account from the credentials Secret.
func (e *env) testUSAGEClient(t *testing.T) {
	var endpoint, creds, tlsSecret string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sr, err := e.client.Dynamic.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Get(e.ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		endpoint, _, _ = unstructured.NestedString(sr.Object, "status", "endpoints", "query")
		creds, _, _ = unstructured.NestedString(sr.Object, "status", "credentialsSecretName")
		tlsSecret, _, _ = unstructured.NestedString(sr.Object, "status", "tls", "secretName")
		accounts := ""
		conds, _, _ := unstructured.NestedSlice(sr.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "AccountsReady" {
				accounts, _ = m["status"].(string)
			}
		}
		if accounts == "True" && endpoint != "" && creds != "" && tlsSecret != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("AccountsReady %q, endpoint %q, Secrets %q %q", accounts, endpoint, creds, tlsSecret)
		}
		time.Sleep(time.Second)
	}
	host, _, _ := strings.Cut(endpoint, ":")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "mysql-client", Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "mysql", Image: "mysql:8.4",
				// The recipe's commands, run by the pod instead of kubectl
				// exec: a new pod's first connection is retried as USAGE
				// says, since the NetworkPolicy controller admits the pod's
				// address only after the pod's status reports it, and
				// the kubelet reports a new pod's address only after its
				// containers started (k8s.io/kubernetes pkg/kubelet
				// kubelet.go SyncPod sets the API status before
				// containerRuntime.SyncPod makes the sandbox); here the
				// first attempt was refused in every run
				// (kube-router v2.1.0 pkg/controllers/netpol/pod.go
				// newPodEventHandler: a pod enters the sets on the update
				// that gives it status.podIP, then a full sync;
				// utils.go isNetPolActionable), and until then the FE's
				// pod chain rejects it (pod.go syncPodFirewallChains,
				// "rule to REJECT traffic destined for POD").
				Command: []string{"sh", "-c", `HOST=` + host + `
for attempt in 1 2 3 4 5 6 7 8 9 10; do
  mysql --host "$HOST" --port 9030 --user "$SR_USER" \
    --ssl-mode=VERIFY_IDENTITY --ssl-ca=/etc/starrocks-ca/ca.crt -e 'SELECT 1' >/dev/null && break
  sleep 3
done
echo "connected at attempt $attempt"
mysql --host "$HOST" --port 9030 --user "$SR_USER" --ssl-mode=VERIFY_IDENTITY --ssl-ca=/etc/starrocks-ca/ca.crt -e 'SHOW FRONTENDS'`},
				Env: []corev1.EnvVar{
					{Name: "SR_USER", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: creds}, Key: "username"}}},
					{Name: "MYSQL_PWD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: creds}, Key: "password"}}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "ca", MountPath: "/etc/starrocks-ca", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: tlsSecret, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}}}},
		},
	}
	if _, err := e.kube.CoreV1().Pods(ns).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.kube.CoreV1().Pods(ns).Delete(e.ctx, pod.Name, metav1.DeleteOptions{}) }()
	deadline = time.Now().Add(2 * time.Minute)
	for {
		p, err := e.kube.CoreV1().Pods(ns).Get(e.ctx, pod.Name, metav1.GetOptions{})
		if err == nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			logs, _ := e.kube.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(e.ctx)
			if p.Status.Phase != corev1.PodSucceeded {
				t.Fatalf("the client pod (image %s) failed:\n%s", images.ClientRef, logs)
			}
			t.Logf("SHOW FRONTENDS over TLS, verified against the CA and %s:\n%s", host, logs)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client pod did not finish: %+v", p.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
