package moduleloop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

// patcherClient is what shell-operator's ObjectPatcher needs, the subset of
// flant/kube-client's client that it uses.
type patcherClient struct {
	kubernetes.Interface
	client *kubeutil.Client
}

func (p patcherClient) Dynamic() dynamic.Interface { return p.client.Dynamic }

func (p patcherClient) GroupVersionResource(apiVersion, kind string) (schema.GroupVersionResource, error) {
	gvr, _, err := gvrOf(p.client, apiVersion, kind)
	return gvr, err
}

// objectRef identifies an object the chart rendered.
type objectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

func refOf(obj *unstructured.Unstructured) objectRef {
	return objectRef{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

func (r objectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// applyOrder puts what other objects need first, as Helm's install order does.
var applyOrder = []string{
	"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
	"ServiceAccount", "Secret", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service",
	"DaemonSet", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", "CronJob",
}

func kindRank(kind string) int {
	for i, k := range applyOrder {
		if k == kind {
			return i
		}
	}
	return len(applyOrder)
}

// release remembers which objects the last render produced, in a ConfigMap
// like Helm's release Secret, so objects that disappear from the chart are
// deleted even after the loop restarts.
const (
	releaseNamespace = "d8-managed-starrocks"
	releaseName      = "managed-starrocks-localrun-release"
)

func (l *Loop) loadRelease(ctx context.Context) (map[objectRef]bool, error) {
	cm, err := l.kube.CoreV1().ConfigMaps(releaseNamespace).Get(ctx, releaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[objectRef]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	var refs []objectRef
	if err := json.Unmarshal([]byte(cm.Data["objects"]), &refs); err != nil {
		return nil, fmt.Errorf("read release %s: %w", releaseName, err)
	}
	set := map[objectRef]bool{}
	for _, r := range refs {
		set[r] = true
	}
	return set, nil
}

func (l *Loop) saveRelease(ctx context.Context, set map[objectRef]bool) error {
	refs := make([]objectRef, 0, len(set))
	for r := range set {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	data, err := json.Marshal(refs)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: releaseName, Namespace: releaseNamespace,
			Labels: map[string]string{"heritage": "deckhouse", "module": ModuleName}},
		Data: map[string]string{"objects": string(data)},
	}
	_, err = l.kube.CoreV1().ConfigMaps(releaseNamespace).Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = l.kube.CoreV1().ConfigMaps(releaseNamespace).Create(ctx, cm, metav1.CreateOptions{})
	}
	return err
}

// applyRendered server-side applies every rendered object and deletes what
// the previous render had and this one does not.
func (l *Loop) applyRendered(ctx context.Context, objs []*unstructured.Unstructured) (applied, deleted int, err error) {
	sort.SliceStable(objs, func(i, j int) bool { return kindRank(objs[i].GetKind()) < kindRank(objs[j].GetKind()) })
	previous, err := l.loadRelease(ctx)
	if err != nil {
		return 0, 0, err
	}
	current := map[objectRef]bool{}
	var errs []string
	for _, obj := range objs {
		if !l.keep(obj) {
			continue
		}
		current[refOf(obj)] = true
		if _, err := l.client.Apply(ctx, obj, fieldManager); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		applied++
	}
	// Save the union first: a failed apply must not make the loop forget an
	// object it may have to delete later.
	union := map[objectRef]bool{}
	for r := range current {
		union[r] = true
	}
	for r := range previous {
		union[r] = true
	}
	if err := l.saveRelease(ctx, union); err != nil {
		return applied, 0, err
	}
	if len(errs) > 0 {
		return applied, 0, fmt.Errorf("apply rendered objects:\n  %s", strings.Join(errs, "\n  "))
	}
	for r := range previous {
		if current[r] {
			continue
		}
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(r.APIVersion)
		obj.SetKind(r.Kind)
		obj.SetNamespace(r.Namespace)
		obj.SetName(r.Name)
		res, err := l.client.ResourceFor(obj)
		if err != nil {
			return applied, deleted, err
		}
		policy := metav1.DeletePropagationBackground
		if err := res.Delete(ctx, r.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
			return applied, deleted, fmt.Errorf("delete %s: %w", r, err)
		}
		deleted++
	}
	return applied, deleted, l.saveRelease(ctx, current)
}
