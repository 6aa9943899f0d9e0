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

// Package instances keeps what the webhook's CREATE checks read of every
// Starrocks (namespace, name, creation and deletion time, class) and of
// every Namespace (whether it is being deleted), and serialises the
// decisions that count instances.
//
// A tenant writes its Starrocks' labels and annotations: listed on every
// CREATE they made each CREATE of the cluster as slow as the largest
// objects, up to the timeout after which the failure policy admits. The
// informers receive each object once per change instead, and keep nothing
// of it but the fields above (strip), so neither the time of a review nor
// the webhook's memory grows with what a tenant writes there.
package instances

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// ErrNotSynced says the caches have not been filled yet: the review is not
// answered (the failure policy applies), rather than counted short.
var ErrNotSynced = errors.New("the Starrocks and Namespace caches are not filled yet")

// PendingFor is how long an admitted CREATE counts before the cache shows
// it: the apiserver stores an admitted object within its request (at most
// the webhook's 5 s timeout after the review, and the cache sees it
// milliseconds later); one it refused after all (another webhook, a quota,
// a dry run it did not say was one) stops counting after this.
const PendingFor = 30 * time.Second

// listPage bounds the objects of one list response: the first list reads
// whole objects, whatever a tenant put in them.
const listPage = 20

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// View is what a CREATE is decided by.
type View struct {
	// Live are the Starrocks that are not ending (being deleted, or in a
	// namespace being deleted), as the hooks count them, and those this
	// webhook admitted that the cache does not show yet.
	Live []desired.Placed
	// Names are the names of the Starrocks of the candidate's namespace,
	// sorted, those being deleted included (their objects stay until
	// garbage collection removes them), and those admitted not yet shown.
	Names []string
}

// Source answers from the informers' caches.
type Source struct {
	client     dynamic.Interface
	factory    dynamicinformer.DynamicSharedInformerFactory
	starrocks  cache.SharedIndexInformer
	namespaces cache.SharedIndexInformer

	// mu serialises Decide: without it, CREATEs arriving together all see
	// the same count and are all admitted.
	mu      sync.Mutex
	pending map[string]pending // by "namespace/name"
	now     func() time.Time
}

type pending struct {
	placed desired.Placed
	class  string
	until  time.Time
}

// New creates the informers; Start begins watching.
func New(client dynamic.Interface) *Source {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		// Page the first list from etcd: served from the watch cache
		// (resourceVersion 0) it would be one response, whatever its size.
		if o.ResourceVersion == "0" {
			o.ResourceVersion = ""
		}
		o.Limit = listPage
	})
	s := &Source{client: client, factory: factory, pending: map[string]pending{}, now: time.Now}
	s.starrocks = factory.ForResource(v1alpha1.StarrocksGVR).Informer()
	s.namespaces = factory.ForResource(namespacesGVR).Informer()
	_ = s.starrocks.SetTransform(strip(true))
	_ = s.namespaces.SetTransform(strip(false))
	// Once the cache has shown an admitted instance it counts from there
	// (and stops counting when it is deleted).
	_, _ = s.starrocks.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.shown,
		UpdateFunc: func(_, obj any) { s.shown(obj) },
	})
	return s
}

// strip keeps of an object only what the checks read: namespace, name,
// UID, creation and deletion time, and a Starrocks' class.
func strip(class bool) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a tombstone: its object was stripped when stored
		}
		out := &unstructured.Unstructured{Object: map[string]any{}}
		out.SetAPIVersion(u.GetAPIVersion())
		out.SetKind(u.GetKind())
		out.SetNamespace(u.GetNamespace())
		out.SetName(u.GetName())
		out.SetUID(u.GetUID())
		out.SetResourceVersion(u.GetResourceVersion())
		out.SetCreationTimestamp(u.GetCreationTimestamp())
		out.SetDeletionTimestamp(u.GetDeletionTimestamp())
		if class {
			if name, ok, _ := unstructured.NestedString(u.Object, "spec", "starrocksClassName"); ok {
				_ = unstructured.SetNestedField(out.Object, name, "spec", "starrocksClassName")
			}
		}
		return out, nil
	}
}

func (s *Source) shown(obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s.mu.Lock()
		delete(s.pending, desired.Key(u.GetNamespace(), u.GetName()))
		s.mu.Unlock()
	}
}

// Start runs the informers until ctx is done.
func (s *Source) Start(ctx context.Context) { s.factory.Start(ctx.Done()) }

// HasSynced reports whether both first lists completed (readiness).
func (s *Source) HasSynced() bool { return s.starrocks.HasSynced() && s.namespaces.HasSynced() }

// Users returns "namespace/name" of every Starrocks of the class, sorted,
// those admitted a moment ago that the cache does not show yet included;
// instances being deleted do not count. The cache's answer is confirmed
// live (confirmed): a class is deleted right after its last instance, and
// an instance the cache still shows would refuse it.
func (s *Source) Users(ctx context.Context, class string) ([]string, error) {
	if !s.HasSynced() {
		return nil, ErrNotSynced
	}
	seen := map[string]bool{}
	var users []string
	for _, u := range s.objects() {
		key := desired.Key(u.GetNamespace(), u.GetName())
		seen[key] = true
		if u.GetDeletionTimestamp() != nil {
			continue
		}
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "starrocksClassName"); name == class {
			users = append(users, key)
		}
	}
	sort.Strings(users)
	users, err := s.confirmed(ctx, users)
	if err != nil {
		return nil, err
	}
	// Admitted, maybe not stored yet: a live GET would not find them.
	s.mu.Lock()
	now := s.now()
	for key, p := range s.pending {
		if !seen[key] && p.class == class && !now.After(p.until) {
			users = append(users, key)
		}
	}
	s.mu.Unlock()
	sort.Strings(users)
	return users, nil
}

// Decide calls decide with what the instances are now, one call at a time.
// When decide admits c and remember is true (not a dry run), c counts in
// every later View until the cache shows an object of its namespace and
// name (no other can exist while it does), or PendingFor has passed; until
// then Users counts it under class.
func (s *Source) Decide(_ context.Context, c desired.Placed, class string, remember bool, decide func(View) bool) error {
	if !s.HasSynced() {
		return ErrNotSynced
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ending := map[string]bool{}
	for _, obj := range s.namespaces.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GetDeletionTimestamp() != nil {
			ending[u.GetName()] = true
		}
	}
	// The candidate itself is left out: an object of its name (a CREATE
	// sent again) makes the apiserver refuse it anyway.
	self := desired.Key(c.Namespace, c.Name)
	var v View
	seen := map[string]bool{}
	for _, u := range s.objects() {
		key := desired.Key(u.GetNamespace(), u.GetName())
		seen[key] = true
		if key == self {
			continue
		}
		if u.GetNamespace() == c.Namespace {
			v.Names = append(v.Names, u.GetName())
		}
		if u.GetDeletionTimestamp() == nil && !ending[u.GetNamespace()] {
			v.Live = append(v.Live, desired.Placed{Namespace: u.GetNamespace(), Name: u.GetName(), Created: u.GetCreationTimestamp()})
		}
	}
	now := s.now()
	for key, p := range s.pending {
		if seen[key] || now.After(p.until) {
			delete(s.pending, key)
			continue
		}
		if key == self {
			continue
		}
		if p.placed.Namespace == c.Namespace {
			v.Names = append(v.Names, p.placed.Name)
		}
		v.Live = append(v.Live, p.placed)
	}
	sort.Strings(v.Names)
	if decide(v) && remember && !seen[self] {
		s.pending[self] = pending{placed: c, class: class, until: now.Add(PendingFor)}
	}
	return nil
}

// maxConfirmed bounds the live GETs of one Users call.
const maxConfirmed = 10

// confirmed drops from users (sorted) those a live GET finds gone or being
// deleted, until one is found still there: one is enough to refuse a class
// deletion, and the cache may still show an instance deleted a moment
// before the class. Past maxConfirmed GETs the rest stay as the cache says.
func (s *Source) confirmed(ctx context.Context, users []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for i := 0; i < len(users) && i < maxConfirmed; {
		ns, name, _ := strings.Cut(users[i], "/")
		u, err := s.client.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || err == nil && u.GetDeletionTimestamp() != nil:
			users = append(users[:i], users[i+1:]...)
		case err != nil:
			return nil, fmt.Errorf("get Starrocks %s: %w", users[i], err)
		default:
			return users, nil
		}
	}
	return users, nil
}

func (s *Source) objects() []*unstructured.Unstructured {
	items := s.starrocks.GetStore().List()
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, obj := range items {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}
