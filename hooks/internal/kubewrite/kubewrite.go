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

// Package kubewrite makes the hooks' writes that a tenant can get refused
// (anything in a tenant namespace, and the status of a tenant's Starrocks)
// one at a time through the hook's own Kubernetes client, and returns each
// refusal to the caller.
//
// Why not the patch collector: addon-operator executes the collected
// operations after the hook returns and fails the whole run when the API
// server refuses one — every instance's work with it, and in Deckhouse the
// queue the hook runs in, whose failed task is retried at its head until it
// succeeds. A tenant controls plenty that makes a write refused: a namespace
// being deleted, a ResourceQuota, a LimitRange, its own admission policy, an
// object it made immutable or re-created with other immutable fields, a
// Starrocks inflated close to the size etcd allows. Here such a write fails
// alone; the caller reports it for the one instance it belongs to
// (a condition and an Event naming the object and the API server's words).
//
// The module's own namespace is not a tenant's: writes there may stay in the
// patch collector.
package kubewrite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deckhouse/module-sdk/pkg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Writer writes objects through a dynamic client.
type Writer struct {
	dc     pkg.DependencyContainer
	client dynamic.Interface
}

// New returns the Writer of a hook run: in Deckhouse the hooks' in-cluster
// identity, under `make run` and the tests the KUBECONFIG the harness gives
// the hooks binary (kubeutil.HooksLauncher), and in module-sdk's test
// framework its fake cluster. The client is made at the first write: a run
// that writes nothing needs none.
func New(input *pkg.HookInput) *Writer { return &Writer{dc: input.DC} }

// NewForClient returns a Writer on a dynamic client (tests, benchmarks).
func NewForClient(c dynamic.Interface) *Writer { return &Writer{client: c} }

func (w *Writer) dynamic() (dynamic.Interface, error) {
	if w.client == nil {
		c, err := w.dc.GetK8sClient()
		if err != nil {
			return nil, fmt.Errorf("kubernetes client: %w", err)
		}
		w.client = c.Dynamic()
	}
	return w.client, nil
}

// Ref names one object.
type Ref struct {
	APIVersion, Kind, Namespace, Name string
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// RefOf names an object.
func RefOf(o *unstructured.Unstructured) Ref {
	return Ref{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
}

// resources are the kinds the hooks write, by apiVersion and kind; a kind
// missing here is a defect of the hook, reported as an error, never guessed.
var resources = map[schema.GroupVersionKind]string{
	{Version: "v1", Kind: "ConfigMap"}:                                                     "configmaps",
	{Version: "v1", Kind: "Secret"}:                                                        "secrets",
	{Version: "v1", Kind: "Service"}:                                                       "services",
	{Version: "v1", Kind: "ServiceAccount"}:                                                "serviceaccounts",
	{Version: "v1", Kind: "Pod"}:                                                           "pods",
	{Version: "v1", Kind: "PersistentVolumeClaim"}:                                         "persistentvolumeclaims",
	{Version: "v1", Kind: "Event"}:                                                         "events",
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:                                    "statefulsets",
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}:                 "horizontalpodautoscalers",
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:                          "poddisruptionbudgets",
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}:                     "networkpolicies",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}:                      "roles",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}:               "rolebindings",
	{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}:                         "certificates",
	{Group: "cert-manager.io", Version: "v1", Kind: "Issuer"}:                              "issuers",
	{Group: "managed-services.deckhouse.io", Version: "v1alpha1", Kind: "Starrocks"}:       "starrocks",
	{Group: "managed-services.deckhouse.io", Version: "v1alpha1", Kind: "StarrocksClass"}:  "starrocksclasses",
	{Group: "managed-services.deckhouse.io", Version: "v1alpha1", Kind: "StarrocksBackup"}: "starrocksbackups",
}

// Resource is the API resource of an apiVersion and kind the hooks write.
func Resource(apiVersion, kind string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	plural, ok := resources[gv.WithKind(kind)]
	if !ok {
		return schema.GroupVersionResource{}, fmt.Errorf("kubewrite has no resource for %s %s", apiVersion, kind)
	}
	return gv.WithResource(plural), nil
}

func (w *Writer) resource(r Ref) (dynamic.ResourceInterface, error) {
	gvr, err := Resource(r.APIVersion, r.Kind)
	if err != nil {
		return nil, err
	}
	client, err := w.dynamic()
	if err != nil {
		return nil, err
	}
	if r.Namespace == "" {
		return client.Resource(gvr), nil
	}
	return client.Resource(gvr).Namespace(r.Namespace), nil
}

// CreateOrUpdate creates the object, or replaces the live one of that name
// (as the patch collector's CreateOrUpdate does), and returns what the API
// server stored.
func (w *Writer) CreateOrUpdate(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := w.resource(RefOf(o))
	if err != nil {
		return nil, err
	}
	created, err := ri.Create(ctx, o, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create %s: %w", RefOf(o), err)
	}
	return w.replace(ctx, ri, o)
}

// Replace replaces the live object of that name with o (a get, then an
// update at the live resourceVersion) and returns what the API server
// stored; NotFound when there is none. For an object the caller saw live:
// CreateOrUpdate would try a create first, which the API server admits in
// full (mutation, validation, the admission policies) before it finds the
// name taken.
func (w *Writer) Replace(ctx context.Context, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := w.resource(RefOf(o))
	if err != nil {
		return nil, err
	}
	return w.replace(ctx, ri, o)
}

func (w *Writer) replace(ctx context.Context, ri dynamic.ResourceInterface, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", RefOf(o), err)
	}
	u := o.DeepCopy()
	u.SetResourceVersion(live.GetResourceVersion())
	keepScaledReplicas(u, live)
	updated, err := ri.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", RefOf(o), err)
	}
	return updated, nil
}

// CreateIfNotExists creates the object; one of that name already there is
// left alone (false, nil).
func (w *Writer) CreateIfNotExists(ctx context.Context, o *unstructured.Unstructured) (bool, error) {
	ri, err := w.resource(RefOf(o))
	if err != nil {
		return false, err
	}
	if _, err := ri.Create(ctx, o, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("create %s: %w", RefOf(o), err)
	}
	return true, nil
}

// Patch patches an object, or its subresource when one is given. An object
// that is gone is not an error: there is nothing left to patch.
func (w *Writer) Patch(ctx context.Context, r Ref, pt types.PatchType, data []byte, subresource ...string) error {
	ri, err := w.resource(r)
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, r.Name, pt, data, metav1.PatchOptions{}, subresource...); err != nil && !apierrors.IsNotFound(err) {
		what := "patch"
		if len(subresource) > 0 {
			what = "patch " + strings.Join(subresource, "/") + " of"
		}
		return fmt.Errorf("%s %s: %w", what, r, err)
	}
	return nil
}

// Get reads one object; nil, nil when it is not there.
func (w *Writer) Get(ctx context.Context, r Ref) (*unstructured.Unstructured, error) {
	ri, err := w.resource(r)
	if err != nil {
		return nil, err
	}
	o, err := ri.Get(ctx, r.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", r, err)
	}
	return o, nil
}

// Delete deletes an object in the background (its dependents are collected
// afterwards). With a uid, only the object of that UID: a look-alike
// re-created under the name in the meantime stays. An object that is gone
// is not an error.
func (w *Writer) Delete(ctx context.Context, r Ref, uid string) error {
	ri, err := w.resource(r)
	if err != nil {
		return err
	}
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	if uid != "" {
		u := types.UID(uid)
		opts.Preconditions = &metav1.Preconditions{UID: &u}
	}
	if err := ri.Delete(ctx, r.Name, opts); err != nil && !apierrors.IsNotFound(err) {
		if uid != "" && apierrors.IsConflict(err) {
			return nil // another object of that name now: not ours to delete
		}
		return fmt.Errorf("delete %s: %w", r, err)
	}
	return nil
}

// maxRefusal bounds the API server's words in a condition or an Event: an
// admission webhook of the tenant's may answer with anything.
const maxRefusal = 1024

// Refusal is what the API server said, for a person: the status message of
// an API error (the call's own context when it is not one), cut to 1 KiB.
func Refusal(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	msg = strings.ToValidUTF8(msg, "?")
	if len(msg) > maxRefusal {
		msg = strings.ToValidUTF8(msg[:maxRefusal-3], "") + "..."
	}
	return msg
}

// Conflict reports whether a write failed only because the object changed
// under it: 409 Conflict (a resourceVersion or UID precondition that no
// longer holds; the API server's own retries of a patch without one running
// out while others keep writing the object). That says nothing about what
// the write asked for: it is no refusal, never recorded or announced as
// one, and the next run writes again. AlreadyExists is a 409 too, with its
// own reason, and is not a conflict here.
func Conflict(err error) bool { return apierrors.IsConflict(err) }

// Gone reports whether a write failed because its namespace is being
// deleted or is gone: the instances there are ending, nothing is recreated.
func Gone(err error) bool {
	if apierrors.HasStatusCause(err, "NamespaceTerminating") {
		return true
	}
	if apierrors.IsNotFound(err) {
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces" {
			return true
		}
	}
	return false
}

// keepScaledReplicas carries the live spec.replicas of a StatefulSet into
// an update rendered without one: a HorizontalPodAutoscaler owns the count
// then, and an update without the field would be defaulted to 1 replica by
// the API server (apps/v1 SetDefaults_StatefulSet), scaling the
// autoscaler's pods away on every write.
func keepScaledReplicas(u, live *unstructured.Unstructured) {
	if u.GetKind() != "StatefulSet" {
		return
	}
	if _, rendered, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); rendered {
		return
	}
	if n, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); found {
		_ = unstructured.SetNestedField(u.Object, n, "spec", "replicas")
	}
}
