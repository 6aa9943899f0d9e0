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

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

const sharedDataClass = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: lakes
spec:
  topology:
    allowedTopologies: [Ignored]
    defaultTopology: Ignored
  sizingPolicies:
    - cores: {min: 1, max: 8}
      memory: {min: 2Gi, max: 32Gi, step: 1Gi}
      coreFractions: [50, 100]
  sharedData:
    allowed: true
    allowedEndpoints: [s3.storage.example.com]
    minReplicas: 1
    maxReplicas: 4
    autoscalingAllowed: true
`

// The tenant's keys: the secret access key must never leave this Secret
// for a ConfigMap of the module's.
const sharedDataKeys = `
apiVersion: v1
kind: Secret
metadata:
  name: s3-keys
  namespace: team-sd
stringData:
  accessKeyID: lake-access-key-id
  secretAccessKey: lake-secret-access-key-never-in-a-configmap
`

const sharedDataInstance = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: lake
  namespace: team-sd
spec:
  starrocksClassName: lakes
  type: Standalone
  storage:
    mode: ObjectStorage
    objectStorage:
      endpoint: https://s3.storage.example.com
      bucket: team-olap
      prefix: starrocks
      credentialsSecretRef: {name: s3-keys}
  frontend:
    cpu: {cores: 1}
    memory: {size: 4Gi}
    persistentVolumeClaim: {size: 10Gi}
  compute:
    cpu: {cores: 2}
    memory: {size: 8Gi}
    autoscaling: {minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 70}
    cache: {size: 50Gi}
`

// TestSharedDataInstanceUnderAddonOperator runs a shared-data instance
// through the real addon-operator, apiserver and webhook: the hooks write
// the FE and CN StatefulSets and the CN HorizontalPodAutoscaler and no BE;
// agent.json names the storage volume at the instance's own prefix and the
// CNs the agent follows, and no ConfigMap holds the key; a count the
// autoscaler sets through the scale subresource survives the hooks
// writing the StatefulSet again; StorageReady follows the FE leader's report, and
// status.compute the CN StatefulSet. The agent's side runs on the real
// FE (images/agent/internal/agent realfe_shareddata_test.go); the pods'
// readiness is not played here (test/node runs pods).
func TestSharedDataInstanceUnderAddonOperator(t *testing.T) {
	t.Parallel()
	const ns, name = "team-sd", "lake"
	const fe, cn = "d8ms-sr-" + name, "d8ms-sr-" + name + "-cn"
	e := sharedEnv(t, withWebhook)
	e.apply(sharedDataClass)
	e.apply(sharedDataKeys)
	sr := e.apply(sharedDataInstance)
	uid := string(sr.GetUID())

	e.eventually("the FE and CN StatefulSets and the CN autoscaler", func() (bool, string) {
		for _, o := range [][2]string{{"StatefulSet", fe}, {"StatefulSet", cn}, {"HorizontalPodAutoscaler", cn}, {"ConfigMap", fe + "-config"}} {
			if _, err := e.get(o[0], ns, o[1]); err != nil {
				return false, fmt.Sprintf("%s %s: %v", o[0], o[1], err)
			}
		}
		return true, ""
	})
	if _, err := e.get("StatefulSet", ns, fe+"-be"); !apierrors.IsNotFound(err) {
		t.Errorf("a shared-data instance has a BE StatefulSet (%v)", err)
	}
	hpa, _ := e.get("HorizontalPodAutoscaler", ns, cn)
	target, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
	lo, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "minReplicas")
	hi, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "maxReplicas")
	if target != cn || lo != 1 || hi != 3 {
		t.Errorf("the autoscaler scales %q from %d to %d, want %s from 1 to 3", target, lo, hi, cn)
	}

	c := e.agentConfig(ns, name)
	if c.SharedData == nil {
		t.Fatal("agent.json has no sharedData")
	}
	wantLocation := agentconfig.StorageVolumeLocation("team-olap", "starrocks", ns, name, uid)
	if v := c.SharedData.StorageVolume; v.Location != wantLocation || v.Name != agentconfig.StorageVolumeName(uid) {
		t.Errorf("agent.json's storage volume %s at %s, want %s at %s", v.Name, v.Location, agentconfig.StorageVolumeName(uid), wantLocation)
	}
	if n := c.SharedData.ComputeNodes; n.StatefulSet != cn || n.Min != 1 || n.Max != 3 {
		t.Errorf("agent.json's compute nodes %+v, want StatefulSet %s from 1 to 3", n, cn)
	}
	cms, err := e.kube.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for k, v := range cm.Data {
			if strings.Contains(v, "lake-secret-access-key") {
				t.Errorf("ConfigMap %s/%s key %s holds the tenant's secret access key", cm.Namespace, cm.Name, k)
			}
		}
	}

	// The autoscaler scales out as the HPA controller does, through the
	// scale subresource; then a change of the CNs' size makes the hooks
	// write the CN StatefulSet again, and they keep the count.
	ctx := context.Background()
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: cn, Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if _, err := e.kube.AppsV1().StatefulSets(ns).UpdateScale(ctx, cn, scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.apply(strings.Replace(sharedDataInstance, "cpu: {cores: 2}", "cpu: {cores: 3}", 1))
	e.eventually("the hooks write the CN StatefulSet with the new size", func() (bool, string) {
		sts, err := e.get("StatefulSet", ns, cn)
		if err != nil {
			return false, err.Error()
		}
		containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			m, _ := c.(map[string]any)
			if m["name"] != "starrocks" {
				continue
			}
			cpu, _, _ := unstructured.NestedString(m, "resources", "limits", "cpu")
			return cpu == "3", "the CN container's CPU limit " + cpu
		}
		return false, "no starrocks container"
	})
	sts, _ := e.get("StatefulSet", ns, cn)
	if n, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas"); n != 3 {
		t.Errorf("after the hooks wrote the CN StatefulSet again it has %d replicas, want the autoscaler's 3", n)
	}
	e.eventually("status.compute counts the autoscaler's 3 CNs", func() (bool, string) {
		sr, _ := e.get("Starrocks", ns, name)
		got, _, _ := unstructured.NestedString(sr.Object, "status", "compute", "ready")
		return got == "0/3", "status.compute.ready " + got
	})

	// The FE leader's agent reports the storage volume.
	leader := fe + "-0"
	report := func(v agentconfig.StorageVolumeStatus) {
		e.reportAgent(ns, leader, agentconfig.Status{
			Accounts:   &agentconfig.AccountsStatus{Ready: true},
			Membership: &agentconfig.MembershipStatus{Leader: leader + "." + fe + "-fe-headless." + ns + ".svc.cluster.local"},
			SharedData: &agentconfig.SharedDataStatus{StorageVolume: v},
		})
	}
	if status, _, _ := e.condition(ns, name, "StorageReady"); status == "True" {
		t.Fatal("StorageReady before the agent reported the storage volume")
	}
	report(agentconfig.StorageVolumeStatus{Name: agentconfig.StorageVolumeName(uid), Reason: agentconfig.StorageVolumeRefused, Message: "Access Denied"})
	e.eventually("StorageReady False names StarRocks' refusal", func() (bool, string) {
		status, reason, message := e.condition(ns, name, "StorageReady")
		return status == "False" && strings.Contains(reason+message, agentconfig.StorageVolumeRefused) && strings.Contains(message, "Access Denied"),
			fmt.Sprintf("%s %s: %s", status, reason, message)
	})
	report(agentconfig.StorageVolumeStatus{Name: agentconfig.StorageVolumeName(uid), Ready: true})
	e.waitCondition(ns, name, "StorageReady", "True")
}
