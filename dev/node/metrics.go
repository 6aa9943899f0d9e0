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

package node

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// The metrics API as a cluster registers it (metrics-server's own
// manifests, manifests/base/apiservice.yaml and service.yaml): the
// APIService v1beta1.metrics.k8s.io backed by the Service
// kube-system/metrics-server on port 443.
const (
	metricsAPIService = "v1beta1.metrics.k8s.io"
	metricsNamespace  = "kube-system"
	metricsService    = "metrics-server"
	// metricResolution is how often metrics-server scrapes the kubelet;
	// 10 s is the least it accepts (its default is 60 s, too slow for a
	// test that waits for an autoscaler), and it must exceed the kubelet
	// request timeout (default 10 s: metrics-server refuses to start).
	metricResolution      = "10s"
	kubeletRequestTimeout = "5s"
)

var apiServiceResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// startMetricsServer runs metrics-server (built from its Go module into the
// tools cache) as a process of the node, serving metrics.k8s.io on the
// bridge's address to the apiserver's aggregator, and registers it as the
// APIService; it returns once the aggregator reports it Available.
//
// It reads the kubelet's /metrics/resource with the apiserver's kubelet
// client certificate, the only client the kubelet trusts here, and skips
// the verification of the kubelet's serving certificate
// (--kubelet-insecure-tls): the kubelet serves a self-signed one from its
// cert-dir, and the connection never leaves the machine. It talks to the
// apiserver as the local admin; a cluster gives it its own account.
func (n *Node) startMetricsServer(ctx context.Context) error {
	bin, err := controlplane.Tool("metrics-server")
	if err != nil {
		return err
	}
	dir := filepath.Join(n.dir, "metrics-server")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// The aggregator verifies metrics-server's serving certificate with the
	// caBundle of the APIService: a CA of its own, for the Service's name
	// and the address the aggregator dials.
	ca, err := testpki.NewCA("managed-starrocks local metrics-server CA")
	if err != nil {
		return err
	}
	serving, err := ca.Issue(metricsService, []string{metricsService + "." + metricsNamespace + ".svc"}, []net.IP{net.ParseIP(Gateway)}, 0)
	if err != nil {
		return err
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, serving.CertPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, serving.KeyPEM, 0o600); err != nil {
		return err
	}
	portStr, err := freePort()
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(portStr)
	kubeletCert, kubeletKey := n.cp.KubeletClientCertificate()
	kubeconfig := n.cp.KubeconfigPath()
	if err := n.start("metrics-server", bin,
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--bind-address="+Gateway,
		"--secure-port="+portStr,
		"--tls-cert-file="+certFile,
		"--tls-private-key-file="+keyFile,
		"--kubelet-client-certificate="+kubeletCert,
		"--kubelet-client-key="+kubeletKey,
		"--kubelet-insecure-tls",
		// The kubelet listens on a free port, which the Node's status names.
		"--kubelet-use-node-status-port",
		"--kubelet-preferred-address-types=InternalIP",
		"--metric-resolution="+metricResolution,
		"--kubelet-request-timeout="+kubeletRequestTimeout,
		"--v=1",
	); err != nil {
		return err
	}
	if err := registerMetricsAPI(ctx, n.cp, port, ca.CertPEM); err != nil {
		return err
	}
	return n.waitMetricsAPI(ctx, 2*time.Minute)
}

// registerMetricsAPI makes the Service without a selector, its
// EndpointSlice at the bridge's address, and the APIService. The aggregator routes to the
// endpoint (--enable-aggregator-routing, dev/controlplane), which the host
// reaches; the Service's cluster IP it could not.
func registerMetricsAPI(ctx context.Context, cp *controlplane.ControlPlane, port int, caPEM []byte) error {
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsService, Namespace: metricsNamespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(int32(port)),
		}}},
	}
	if _, err := cs.CoreV1().Services(metricsNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("metrics-server Service: %w", err)
	}
	// The slice of a Service without a selector, written by its owner as
	// the EndpointSlice API asks (kubernetes.io/service-name,
	// endpointslice.kubernetes.io/managed-by naming someone other than the
	// controllers).
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: metricsService, Namespace: metricsNamespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: metricsService,
			discoveryv1.LabelManagedBy:   "dev.managed-starrocks.invalid-node",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{Gateway},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(metricsNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("metrics-server EndpointSlice: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	if err != nil {
		return err
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": metricsAPIService},
		"spec": map[string]any{
			"group":                "metrics.k8s.io",
			"version":              "v1beta1",
			"service":              map[string]any{"namespace": metricsNamespace, "name": metricsService, "port": int64(443)},
			"caBundle":             base64.StdEncoding.EncodeToString(caPEM), // []byte in the API: base64 in JSON
			"groupPriorityMinimum": int64(100),
			"versionPriority":      int64(100),
		},
	}}
	if _, err := dyn.Resource(apiServiceResource).Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("APIService %s: %w", metricsAPIService, err)
	}
	return nil
}

// waitMetricsAPI waits until the aggregator reports the APIService
// Available (it reached metrics-server and metrics-server answered its
// discovery), failing early when metrics-server exits.
func (n *Node) waitMetricsAPI(ctx context.Context, timeout time.Duration) error {
	dyn, err := dynamic.NewForConfig(n.cp.RESTConfig())
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	last := "not read yet"
	for time.Now().Before(deadline) {
		if p := n.procs[len(n.procs)-1]; p.exited() {
			return p.failure("exited")
		}
		obj, err := dyn.Resource(apiServiceResource).Get(ctx, metricsAPIService, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
		} else {
			conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			for _, c := range conditions {
				m, _ := c.(map[string]any)
				if m["type"] == "Available" {
					if m["status"] == "True" {
						return nil
					}
					last = fmt.Sprintf("%v: %v", m["reason"], m["message"])
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("APIService %s not Available in %s (%s); see %s/metrics-server.log", metricsAPIService, timeout, last, n.dir)
}
