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

package instances

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// pullingObjectsYAML are an instance's objects whose BE pod waits for an
// image the kubelet cannot pull (waiting is what the kubelet writes).
func pullingObjectsYAML(waiting string) string {
	objs := grownObjectsYAML("olap", "expandable", 1)
	objs = strings.Replace(objs, "name: d8ms-sr-olap-be\n  namespace: team\n", "name: d8ms-sr-olap-be\n  namespace: team\n  uid: be-uid\n", 1)
	objs = strings.Replace(objs, "status: {readyReplicas: 1}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: storage-", "status: {readyReplicas: 0}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: storage-", 1)
	return objs + `---
apiVersion: v1
kind: Pod
metadata:
  name: d8ms-sr-olap-be-0
  namespace: team
  labels: {managed-services.deckhouse.io/managed-service-type: starrocks, app.kubernetes.io/instance: olap, app.kubernetes.io/component: backend}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: d8ms-sr-olap-be, uid: be-uid, controller: true}]
spec: {containers: [{name: be, image: registry.example.com/modules/managed-starrocks@sha256:00}]}
status:
  conditions: [{type: Ready, status: "False"}]
  containerStatuses:
    - name: be
      ready: false
      state: {waiting: ` + waiting + `}
`
}

// A pod that cannot pull its image makes Available say so, naming the pod,
// the container, the kubelet's words and where the admin looks.
func TestAvailableNamesAnImagePullFailure(t *testing.T) {
	for _, waiting := range []string{
		`{reason: ImagePullBackOff, message: "Back-off pulling image \"registry.example.com/modules/managed-starrocks@sha256:00\""}`,
		`{reason: ErrImagePull, message: "failed to pull and unpack image: 401 Unauthorized"}`,
	} {
		f := newHook(t)
		f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 1, 1024) + "---" + pullingObjectsYAML(waiting))
		f.RunHook()
		require.NoError(t, f.HookError())
		s, r, m := condition(statusOf(t, f, "olap"), v1alpha1.ConditionAvailable)
		assert.Equal(t, []string{"False", ReasonImagePullFailed}, []string{s, r}, m)
		assert.Contains(t, m, "Pod d8ms-sr-olap-be-0 cannot pull the image of container be")
		assert.Contains(t, m, "Images from a ModuleSource")
	}
}

// Any other wait is no pull failure.
func TestAvailableIgnoresOtherWaits(t *testing.T) {
	f := newHook(t)
	f.KubeStateSet(classYAML + "---" + starrocksYAML("olap", 1, 1, 1024) + "---" + pullingObjectsYAML(`{reason: ContainerCreating}`))
	f.RunHook()
	require.NoError(t, f.HookError())
	s, r, _ := condition(statusOf(t, f, "olap"), v1alpha1.ConditionAvailable)
	assert.Equal(t, []string{"False", ReasonReplicasNotReady}, []string{s, r})
}
