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

// Helm's resource policy: an object annotated helm.sh/resource-policy: keep
// is never deleted by Helm, neither when it leaves the chart nor on
// uninstall (helm.sh/helm pkg/kube: ResourcePolicyAnno, KeepPolicy).
const (
	resourcePolicyAnnotation = "helm.sh/resource-policy"
	keepPolicy               = "keep"
)

func keptByPolicy(annotations map[string]string) bool {
	return annotations[resourcePolicyAnnotation] == keepPolicy
}

// releaseEntry is one object of the release and whether its rendered
// manifest carried the keep policy (what Helm's uninstall goes by).
type releaseEntry struct {
	objectRef
	Keep bool `json:"keep,omitempty"`
}

// loadRelease returns the objects of the release, each with its keep flag.
func (l *Loop) loadRelease(ctx context.Context) (map[objectRef]bool, error) {
	cm, err := l.kube.CoreV1().ConfigMaps(releaseNamespace).Get(ctx, releaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[objectRef]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	var entries []releaseEntry
	if err := json.Unmarshal([]byte(cm.Data["objects"]), &entries); err != nil {
		return nil, fmt.Errorf("read release %s: %w", releaseName, err)
	}
	set := map[objectRef]bool{}
	for _, e := range entries {
		set[e.objectRef] = e.Keep
	}
	return set, nil
}

func (l *Loop) saveRelease(ctx context.Context, set map[objectRef]bool) error {
	entries := make([]releaseEntry, 0, len(set))
	for r, keep := range set {
		entries = append(entries, releaseEntry{objectRef: r, Keep: keep})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].String() < entries[j].String() })
	data, err := json.Marshal(entries)
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

// deleteObject deletes an object of the release (background propagation,
// as Helm does); a missing object is not an error.
func (l *Loop) deleteObject(ctx context.Context, r objectRef) error {
	res, err := l.resourceOf(r)
	if err != nil {
		return err
	}
	policy := metav1.DeletePropagationBackground
	if err := res.Delete(ctx, r.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", r, err)
	}
	return nil
}

func (l *Loop) resourceOf(r objectRef) (dynamic.ResourceInterface, error) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(r.APIVersion)
	obj.SetKind(r.Kind)
	obj.SetNamespace(r.Namespace)
	obj.SetName(r.Name)
	return l.client.ResourceFor(obj)
}

// Uninstall is what Deckhouse does when the module is disabled: Helm
// uninstalls the release, deleting every object of its last render except
// those whose manifest carries helm.sh/resource-policy: keep (Helm's
// uninstall goes by the release's manifests, not the live objects). It
// returns the objects deleted and kept. The loop must not run meanwhile.
func (l *Loop) Uninstall(ctx context.Context) (deleted, kept []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	release, err := l.loadRelease(ctx)
	if err != nil {
		return nil, nil, err
	}
	refs := make([]objectRef, 0, len(release))
	for r := range release {
		refs = append(refs, r)
	}
	// Reverse install order, as Helm uninstalls.
	sort.SliceStable(refs, func(i, j int) bool {
		if a, b := kindRank(refs[i].Kind), kindRank(refs[j].Kind); a != b {
			return a > b
		}
		return refs[i].String() < refs[j].String()
	})
	for _, r := range refs {
		if release[r] {
			l.logger.Info("uninstall: skipping delete due to annotation "+resourcePolicyAnnotation+"="+keepPolicy, "object", r.String())
			kept = append(kept, r.String())
			continue
		}
		if r.Kind == "Namespace" {
			continue // last: it holds the release record
		}
		if err := l.deleteObject(ctx, r); err != nil {
			return deleted, kept, err
		}
		deleted = append(deleted, r.String())
	}
	if err := l.kube.CoreV1().ConfigMaps(releaseNamespace).Delete(ctx, releaseName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return deleted, kept, err
	}
	for _, r := range refs {
		if r.Kind != "Namespace" || release[r] {
			continue
		}
		if err := l.deleteObject(ctx, r); err != nil {
			return deleted, kept, err
		}
		deleted = append(deleted, r.String())
	}
	return deleted, kept, nil
}

// applyRendered server-side applies every rendered object and deletes what
// the previous render had and this one does not — except an object whose
// live annotations say helm.sh/resource-policy: keep, which Helm's upgrade
// skips (it reads the live object before deleting) and forgets: it is no
// longer part of the release.
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
		current[refOf(obj)] = keptByPolicy(obj.GetAnnotations())
		if _, err := l.client.Apply(ctx, obj, fieldManager); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		applied++
	}
	// Save the union first: a failed apply must not make the loop forget an
	// object it may have to delete later.
	union := map[objectRef]bool{}
	for r, keep := range previous {
		union[r] = keep
	}
	for r, keep := range current {
		union[r] = keep
	}
	if err := l.saveRelease(ctx, union); err != nil {
		return applied, 0, err
	}
	if len(errs) > 0 {
		return applied, 0, fmt.Errorf("apply rendered objects:\n  %s", strings.Join(errs, "\n  "))
	}
	for r := range previous {
		if _, ok := current[r]; ok {
			continue
		}
		res, err := l.resourceOf(r)
		if err != nil {
			return applied, deleted, err
		}
		live, err := res.Get(ctx, r.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return applied, deleted, fmt.Errorf("get %s: %w", r, err)
		}
		if keptByPolicy(live.GetAnnotations()) {
			l.logger.Info("skipping delete due to annotation "+resourcePolicyAnnotation+"="+keepPolicy, "object", r.String())
			continue
		}
		if err := l.deleteObject(ctx, r); err != nil {
			return applied, deleted, err
		}
		l.logger.Info("deleted an object that left the chart", "object", r.String())
		deleted++
	}
	return applied, deleted, l.saveRelease(ctx, current)
}
