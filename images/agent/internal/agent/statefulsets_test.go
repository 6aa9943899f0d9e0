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

package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// sharedDataInstance is a shared-data instance of the class below with a
// fixed count of CNs.
func sharedDataInstance(namespace, name string) *v1alpha1.Starrocks {
	comp := v1alpha1.ComponentSpec{
		CPU:                   v1alpha1.CPUSpec{Cores: 2, CoreFraction: 100},
		Memory:                v1alpha1.MemorySpec{Size: resource.MustParse("4Gi")},
		PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: resource.MustParse("10Gi")},
	}
	three := int32(3)
	return &v1alpha1.Starrocks{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StarrocksKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name), Generation: 1},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "default",
			Type:               v1alpha1.TypeStandalone,
			Frontend:           comp,
			Storage: &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
				Endpoint: "https://s3.example.com", Bucket: "team-olap", Prefix: "starrocks",
				CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"},
			}},
			Compute: &v1alpha1.ComputeSpec{CPU: comp.CPU, Memory: comp.Memory, Replicas: &three,
				Cache: v1alpha1.CacheVolumeSpec{Size: resource.MustParse("20Gi")}},
		},
	}
}

func sharedDataClass() *v1alpha1.StarrocksClass {
	step := resource.MustParse("1Gi")
	return &v1alpha1.StarrocksClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "StarrocksClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "class-uid", Generation: 1},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored}, DefaultTopology: v1alpha1.TopologyIgnored},
			SizingPolicies: []v1alpha1.SizingPolicy{{
				Cores:         v1alpha1.CoreRange{Min: 1, Max: 8},
				Memory:        v1alpha1.MemoryRange{Min: resource.MustParse("1Gi"), Max: resource.MustParse("32Gi"), Step: &step},
				CoreFractions: []int32{50, 100},
			}},
			SharedData: &v1alpha1.ClassSharedData{Allowed: true, MinReplicas: 1, MaxReplicas: 10, AutoscalingAllowed: true},
		},
	}
}

// renderedInstances renders the instances' objects as the instanceobjects
// hook does (pkg/desired, then pkg/instanceobjects).
func renderedInstances(t *testing.T, instances ...*v1alpha1.Starrocks) []*unstructured.Unstructured {
	t.Helper()
	out := desired.Compute(desired.Input{Instances: instances, Classes: []*v1alpha1.StarrocksClass{sharedDataClass()}, ClusterDomain: "cluster.local"})
	for _, r := range out.Results {
		require.True(t, r.Valid(), "%s: %v", r.Object.Name, r.Violations)
	}
	vals, err := chartrender.ModuleValues(out.Instances, nil)
	require.NoError(t, err)
	objs, err := chartrender.RenderInstances(vals, chartrender.DefaultGlobals())
	require.NoError(t, err)
	return objs
}

func typedAs[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	require.NotNil(t, u)
	var out T
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out))
	return &out
}

// TestKubeStatefulSets runs the client-go StatefulSetReader against a real
// kube-apiserver with RBAC, as the agent's ServiceAccount bound to the Role
// the module renders for a shared-data instance: it reads the spec.replicas
// of its own instance's CN StatefulSet, following what the autoscaler
// writes through the scale subresource, and nothing of another instance,
// in its namespace or another.
func TestKubeStatefulSets(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{})
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const ns, otherNS = "team", "team-b"
	own, neighbour, namesake := sharedDataInstance(ns, "olap"), sharedDataInstance(ns, "other"), sharedDataInstance(otherNS, "olap")
	objs := renderedInstances(t, own, neighbour, namesake)
	for _, n := range []string{ns, otherNS} {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	// Every instance's CN StatefulSet as rendered (no controller runs here:
	// they stay objects), and the agent's account of olap in team.
	names := desired.NamesFor("olap")
	agentName := names.FrontendStatefulSet + "-agent"
	for _, inst := range []*v1alpha1.Starrocks{own, neighbour, namesake} {
		sts := typedAs[appsv1.StatefulSet](t, chartrender.Find(objs, "StatefulSet", inst.Namespace, desired.NamesFor(inst.Name).ComputeStatefulSet))
		sts.ResourceVersion = ""
		_, err := admin.AppsV1().StatefulSets(inst.Namespace).Create(ctx, sts, metav1.CreateOptions{})
		require.NoError(t, err, "create %s/%s", inst.Namespace, sts.Name)
	}
	sa := typedAs[corev1.ServiceAccount](t, chartrender.Find(objs, "ServiceAccount", ns, agentName))
	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
	require.NoError(t, err)
	role := typedAs[rbacv1.Role](t, chartrender.Find(objs, "Role", ns, agentName))
	_, err = admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	binding := typedAs[rbacv1.RoleBinding](t, chartrender.Find(objs, "RoleBinding", ns, agentName))
	require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: agentName, Namespace: ns}}, binding.Subjects, "the binding names the agent's account")
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)

	cfg := rest.CopyConfig(cp.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + agentName}
	asAgent, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	reader := &agent.KubeStatefulSets{StatefulSets: asAgent.AppsV1(), Namespace: ns}

	// The apiserver's RBAC authorizer learns the new Role from an informer.
	var replicas int32
	require.Eventually(t, func() bool {
		replicas, err = reader.Replicas(ctx, names.ComputeStatefulSet)
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "the agent's Role allows get on its CN StatefulSet: %v", err)
	require.Equal(t, int32(3), replicas, "spec.replicas as rendered")

	t.Run("follows the count the autoscaler writes", func(t *testing.T) {
		// An HorizontalPodAutoscaler changes spec.replicas through the scale
		// subresource.
		scale, err := admin.AppsV1().StatefulSets(ns).GetScale(ctx, names.ComputeStatefulSet, metav1.GetOptions{})
		require.NoError(t, err)
		scale.Spec.Replicas = 7
		_, err = admin.AppsV1().StatefulSets(ns).UpdateScale(ctx, names.ComputeStatefulSet, scale, metav1.UpdateOptions{})
		require.NoError(t, err)
		got, err := reader.Replicas(ctx, names.ComputeStatefulSet)
		require.NoError(t, err)
		require.Equal(t, int32(7), got)
	})

	t.Run("nothing of another instance", func(t *testing.T) {
		_, err := reader.Replicas(ctx, desired.NamesFor("other").ComputeStatefulSet)
		require.Error(t, err)
		require.True(t, apierrors.IsForbidden(err), "the CN StatefulSet of another instance of the namespace: %v", err)
		require.ErrorContains(t, err, "get StatefulSet "+desired.NamesFor("other").ComputeStatefulSet)

		// The same name in another namespace: the Role is the namespace's.
		elsewhere := &agent.KubeStatefulSets{StatefulSets: asAgent.AppsV1(), Namespace: otherNS}
		_, err = elsewhere.Replicas(ctx, names.ComputeStatefulSet)
		require.True(t, apierrors.IsForbidden(err), "olap's CN StatefulSet in %s: %v", otherNS, err)

		// Get only: the agent cannot change the count it follows, nor list.
		_, err = asAgent.AppsV1().StatefulSets(ns).UpdateScale(ctx, names.ComputeStatefulSet,
			&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: names.ComputeStatefulSet, Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 100}}, metav1.UpdateOptions{})
		require.True(t, apierrors.IsForbidden(err), "scale as the agent: %v", err)
		_, err = asAgent.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsForbidden(err), "list as the agent: %v", err)
	})

	t.Run("a StatefulSet that is gone", func(t *testing.T) {
		require.NoError(t, admin.AppsV1().StatefulSets(ns).Delete(ctx, names.ComputeStatefulSet, metav1.DeleteOptions{}))
		_, err := reader.Replicas(ctx, names.ComputeStatefulSet)
		require.True(t, apierrors.IsNotFound(err), "%v", err)
		require.ErrorContains(t, err, "get StatefulSet "+names.ComputeStatefulSet)
	})
}
