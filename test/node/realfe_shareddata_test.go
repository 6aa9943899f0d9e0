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
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/dev/node"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const lakeNS, lakeName = "team-lake", "lake"

// lakeClass allows shared-data instances on the tests' S3 server at the
// node's bridge address, with CNs small enough for the node's two cores
// beside the Standalone of TestRealFEOnNode (a tenth of a core each).
const lakeClass = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: lakes
spec:
  topology:
    allowedTopologies: [Ignored]
    defaultTopology: Ignored
  sizingPolicies:
    - cores: {min: 1, max: 2}
      memory: {min: 2Gi, max: 8Gi, step: 1Gi}
      coreFractions: [10, 50, 100]
  sharedData:
    allowed: true
    allowedEndpoints: [%q]
    minReplicas: 1
    maxReplicas: 2
    autoscalingAllowed: true
`

// lakeInstance autoscales its CNs between 1 and 2 at half of their CPU
// request.
const lakeInstance = `apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: lake
  namespace: team-lake
spec:
  starrocksClassName: lakes
  type: Standalone
  storage:
    mode: ObjectStorage
    objectStorage:
      endpoint: %q
      bucket: lake
      prefix: starrocks
      pathStyle: true
      caSecretRef: {name: s3-ca}
      credentialsSecretRef: {name: s3-keys}
  frontend:
    cpu: {cores: 1, coreFraction: 10}
    memory: {size: 2Gi}
    persistentVolumeClaim: {size: 1Gi}
  compute:
    cpu: {cores: 1, coreFraction: 10}
    memory: {size: 4Gi}
    autoscaling: {minReplicas: 1, maxReplicas: 2, targetCPUUtilizationPercentage: 50}
    cache: {size: 1Gi}
`

// testSharedDataOnRealFE runs the module's own shared-data instance on the
// node: the real FE in run_mode shared_data, the CN stand-ins, the
// module's HorizontalPodAutoscaler, and versitygw on the host at the
// bridge's address with a private CA. The FE leader's agent creates the
// storage volume on the real FE (StorageReady), turns the automated
// cluster snapshot on, adds the CN the StatefulSet starts, and follows the
// HPA out to two CNs under load and back in to one after it (the HPA's
// default scale-down window of 5 minutes: the module sets no behavior).
// StarRocks lists the stand-in CNs not alive: they answer no heartbeat.
func (e *env) testSharedDataOnRealFE(t *testing.T) {
	ctx, cancel := context.WithTimeout(e.ctx, 15*time.Minute)
	defer cancel()
	started := time.Now()
	s3 := s3server.StartWith(t, s3server.Options{Host: net.ParseIP(node.Gateway)})
	s3.CreateBucket(t, "lake")
	if err := kubeutil.EnsureNamespace(ctx, e.kube, lakeNS, nil); err != nil {
		t.Fatal(err)
	}
	caPEM, _ := json.Marshal(string(s3.CA.CertPEM))
	for _, doc := range []string{
		fmt.Sprintf(lakeClass, node.Gateway),
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s3-keys, namespace: %s}\nstringData: {accessKeyID: %q, secretAccessKey: %q}\n", lakeNS, s3.AccessKey, s3.SecretKey),
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s3-ca, namespace: %s}\nstringData: {ca.crt: %s}\n", lakeNS, caPEM),
		fmt.Sprintf(lakeInstance, s3.URL()),
	} {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := e.client.Apply(ctx, &obj, "test"); err != nil {
			t.Fatalf("apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}

	fePod, cnSet := "d8ms-sr-"+lakeName+"-0", "d8ms-sr-"+lakeName+"-cn"
	// The FE leader's report, as the agent writes it on its pod.
	status := func() (agentconfig.Status, string) {
		var st agentconfig.Status
		p, err := e.kube.CoreV1().Pods(lakeNS).Get(ctx, fePod, metav1.GetOptions{})
		if err != nil {
			return st, err.Error()
		}
		raw := p.Annotations[agentconfig.StatusAnnotation]
		_ = json.Unmarshal([]byte(raw), &st)
		return st, raw
	}
	compute := func(listed int32) func() (bool, string) {
		return func() (bool, string) {
			st, raw := status()
			if st.Membership == nil || st.Membership.ComputeNodes == nil {
				return false, raw
			}
			c := st.Membership.ComputeNodes
			return c.Desired == listed && c.Listed == listed, fmt.Sprintf("%+v", *c)
		}
	}

	waitFor(ctx, t, "StorageReady: the agent made the storage volume on the real FE", 6*time.Minute, func() (bool, string) {
		s, msg := e.conditionOf(lakeNS, lakeName, "StorageReady")
		if s == "True" {
			return true, ""
		}
		_, raw := status()
		return false, msg + "; agent status: " + raw
	})
	storageAt := time.Now()
	if st, _ := status(); st.SharedData == nil || !st.SharedData.StorageVolume.Ready {
		t.Errorf("StorageReady is True but the agent reports %+v", st.SharedData)
	}
	waitFor(ctx, t, "the agent turns StarRocks' automated cluster snapshot on", 2*time.Minute, func() (bool, string) {
		st, raw := status()
		return st.SharedData != nil && st.SharedData.ClusterSnapshots != nil && st.SharedData.ClusterSnapshots.Enabled, raw
	})
	waitFor(ctx, t, "the agent adds the first CN", 3*time.Minute, compute(1))
	if st, _ := status(); st.Membership.ComputeNodes.Alive != 0 {
		t.Errorf("a CN stand-in is reported alive (%+v): it answers no heartbeat", *st.Membership.ComputeNodes)
	}
	joinedAt := time.Now()

	// Load: the first CN burns a tenth of a thread (its request), in its
	// own network namespace, until the HPA has scaled out.
	cn0 := waitPodReady(ctx, t, e.kube, lakeNS, cnSet+"-0", 2*time.Minute)
	inCN := podNetwork{netns: fmt.Sprintf("/proc/%d/ns/net", e.containerPID(cn0, "starrocks"))}
	burner := &http.Client{Transport: &http.Transport{DialContext: inCN.dial}}
	burnCtx, stopBurn := context.WithCancel(ctx)
	burnDone := make(chan struct{})
	go func() {
		defer close(burnDone)
		for burnCtx.Err() == nil {
			req, _ := http.NewRequestWithContext(burnCtx, http.MethodPost, "http://127.0.0.1:8040/standin/burn?seconds=10&threads=1&percent=10", nil)
			resp, err := burner.Do(req)
			if err != nil {
				if burnCtx.Err() == nil {
					t.Errorf("burn: %v", err)
				}
				return
			}
			resp.Body.Close()
			select {
			case <-burnCtx.Done():
			case <-time.After(10 * time.Second):
			}
		}
	}()
	// Also when a wait below ends the test: no burn outlives it.
	defer func() { stopBurn(); <-burnDone }()
	waitFor(ctx, t, "the module's HPA scales the CNs out to 2 and the agent adds the second", 5*time.Minute, compute(2))
	stopBurn()
	<-burnDone
	scaledOutAt := time.Now()
	// Back to one CN only by the HPA's word: the module leaves the
	// StatefulSet's replicas to it while autoscaling.
	backToOne := compute(1)
	waitFor(ctx, t, "the HPA scales back in to 1 and the agent drops the CN that left", 9*time.Minute, func() (bool, string) {
		ok, state := backToOne()
		if !ok {
			return false, state
		}
		hpa, err := e.kube.AutoscalingV2().HorizontalPodAutoscalers(lakeNS).Get(ctx, cnSet, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if hpa.Status.DesiredReplicas != 1 {
			t.Fatalf("the CNs went back to 1 while the HPA wants %d: something else set the StatefulSet's replicas (%s)", hpa.Status.DesiredReplicas, hpaState(hpa))
		}
		return true, ""
	})
	t.Logf("shared-data instance on the real FE: StorageReady %s after apply, first CN added %s later, scaled out to 2 CNs %s after that, back to 1 %s later",
		storageAt.Sub(started).Round(time.Second), joinedAt.Sub(storageAt).Round(time.Second),
		scaledOutAt.Sub(joinedAt).Round(time.Second), time.Since(scaledOutAt).Round(time.Second))
}
