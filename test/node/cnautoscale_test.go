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
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/deckhouse/managed-starrocks/dev/images"
	"github.com/deckhouse/managed-starrocks/dev/standin"
)

// testCNAutoscaling proves the metrics path a shared-data instance's
// HorizontalPodAutoscaler takes, on the node with metrics-server: a
// StatefulSet of CN stand-ins run as the CN image runs them (cn-start.sh,
// the cache volume at /opt/starrocks/cn/storage, upstream's probe and
// preStop), an autoscaling/v2 HPA on CPU from 1 to 2, load from the
// stand-in's burn endpoint. The HPA scales out while a CN burns CPU and back
// in after, and the CN it removes records its graceful exit on its volume.
// The module's own HPA (its template) is not used here: this is the
// platform under it. It runs on TestOnNode's node beside the instances (a
// node of its own cost a minute more of make test, one node at a time).
func (e *env) testCNAutoscaling(t *testing.T) {
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Minute)
	defer cancel()
	cs, n := e.kube, e.node
	started := time.Now()
	const ns = "cn-autoscale"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, cnStatefulSet(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, cnHPA(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cn0 := waitPodReady(ctx, t, cs, ns, "cn-0", 2*time.Minute)
	// The HPA reads the CN's CPU once metrics-server has scraped it twice.
	waitFor(ctx, t, "the HPA reads the CNs' CPU from metrics.k8s.io", 2*time.Minute, func() (bool, string) {
		hpa, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "cn", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(hpa.Status.CurrentMetrics) > 0 && hpa.Status.CurrentMetrics[0].Resource != nil, hpaState(hpa)
	})
	metricsAt := time.Now()

	// Load: CN 0 burns in 10 s slices until the HPA has scaled out, so the
	// burn ends soon after (the stand-in cannot cancel one). A tenth of a
	// thread is ten times the CPU request (10m), twenty times the target:
	// the HPA scales out as surely as under a whole thread, and make test
	// keeps nine tenths of the CPU the load would take.
	burnURL := fmt.Sprintf("http://%s:8040/standin/burn?seconds=10&threads=1&percent=10", cn0.Status.PodIP)
	scaledOut := make(chan struct{})
	burnDone := make(chan struct{})
	go func() {
		defer close(burnDone)
		for {
			if resp, err := http.Post(burnURL, "", nil); err != nil {
				t.Errorf("burn: %v", err)
				return
			} else {
				resp.Body.Close()
			}
			select {
			case <-scaledOut:
				return
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Second):
			}
		}
	}()
	waitFor(ctx, t, "the HPA scales the CNs out to 2 under load", 3*time.Minute, func() (bool, string) {
		sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "cn", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		hpa, _ := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "cn", metav1.GetOptions{})
		return sts.Spec.Replicas != nil && *sts.Spec.Replicas == 2, hpaState(hpa)
	})
	close(scaledOut)
	<-burnDone
	scaledOutAt := time.Now()
	waitPodReady(ctx, t, cs, ns, "cn-1", 2*time.Minute)
	waitFor(ctx, t, "the HPA scales the CNs back in to 1 once the load ends", 4*time.Minute, func() (bool, string) {
		sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "cn", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		hpa, _ := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "cn", metav1.GetOptions{})
		return sts.Spec.Replicas != nil && *sts.Spec.Replicas == 1, hpaState(hpa)
	})
	scaledInAt := time.Now()
	waitFor(ctx, t, "cn-1 is gone", 2*time.Minute, func() (bool, string) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "cn-1", metav1.GetOptions{})
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprint(err)
	})
	// cn-1's cache volume outlives it (the StatefulSet keeps its claims):
	// its stand-in wrote the graceful exit there.
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "cache-cn-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.HostPath == nil {
		t.Fatalf("cn-1's volume %s: %v (want a hostPath volume of the node)", pvc.Spec.VolumeName, err)
	}
	record, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, standin.StopsLog))
	if err != nil || !strings.Contains(string(record), "cn graceful exit (SIGTERM)") {
		t.Errorf("cn-1's %s: want a line \"cn graceful exit (SIGTERM)\", got %q (%v)", standin.StopsLog, record, err)
	}
	t.Logf("metrics read %s after the subtest started; scaled out %s after the load began; scaled in %s after it ended; node RSS %d MiB",
		metricsAt.Sub(started).Round(time.Second), scaledOutAt.Sub(metricsAt).Round(time.Second), scaledInAt.Sub(scaledOutAt).Round(time.Second), n.MemoryRSS()>>20)
}

// cnStatefulSet runs the CN stand-in image as the CN image runs: the
// module's cn-start.sh with the spill directory on the cache volume,
// /api/health on the webserver port for the probes, and upstream's preStop
// (docker/dockerfiles/be/cn_prestop.sh: stop_cn.sh -g) before the kubelet's
// SIGTERM. A CPU request of 10m makes the stand-in's burn many times the
// HPA's target even on a machine shared with other builds.
func cnStatefulSet() *appsv1.StatefulSet {
	labels := map[string]string{"app": "cn"}
	health := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/health", Port: intstr.FromInt32(8040)}},
		PeriodSeconds: 2, FailureThreshold: 3,
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cn"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(int32(1)),
			ServiceName:         "cn",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To(int64(15)),
					SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))},
					Containers: []corev1.Container{{
						Name:            "starrocks",
						Image:           images.Registry + ":starrocks-cn",
						ImagePullPolicy: corev1.PullNever,
						Command:         []string{"/bin/sh", images.CNStartWrapper, images.CNHome + "/storage/spill"},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("10m"),
							corev1.ResourceMemory: resource.MustParse("32Mi"),
						}},
						StartupProbe:   health,
						ReadinessProbe: health,
						Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
							Command: []string{"/bin/bash", "-c", images.CNHome + "/bin/stop_cn.sh -g"},
						}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: images.CNHome + "/storage"}},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "cache"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
				},
			}},
		},
	}
}

// cnHPA scales the CNs between 1 and 2 on CPU, with no stabilization
// window either way (the default scale-down window is 5 minutes) so the test
// sees both moves within a minute of their cause.
func cnHPA() *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "cn"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "cn"},
			MinReplicas:    ptr.To(int32(1)),
			MaxReplicas:    2,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))},
				},
			}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0))},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0))},
			},
		},
	}
}

func hpaState(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	if hpa == nil {
		return "no HPA"
	}
	var parts []string
	for _, m := range hpa.Status.CurrentMetrics {
		if m.Resource != nil && m.Resource.Current.AverageUtilization != nil {
			parts = append(parts, fmt.Sprintf("cpu %d%%", *m.Resource.Current.AverageUtilization))
		}
	}
	for _, c := range hpa.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return fmt.Sprintf("replicas %d→%d; %s", hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas, strings.Join(parts, "; "))
}

func waitPodReady(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, timeout time.Duration) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	waitFor(ctx, t, name+" Ready", timeout, func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pod = p
		return ready(p), fmt.Sprintf("%s %v", p.Status.Phase, p.Status.Conditions)
	})
	return pod
}

func waitFor(ctx context.Context, t *testing.T, what string, timeout time.Duration, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := f()
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: not so after %s (last: %s)", what, timeout, last)
		}
		time.Sleep(time.Second)
	}
}
