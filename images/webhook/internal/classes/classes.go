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

// Package classes keeps the StarrocksClass objects of the cluster in memory
// for the admission handlers.
package classes

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// ErrNotFound says the class does not exist.
var ErrNotFound = errors.New("StarrocksClass not found")

// Source answers "which StarrocksClass is called X" from an informer cache.
type Source struct {
	client   dynamic.Interface
	informer cache.SharedIndexInformer
	factory  dynamicinformer.DynamicSharedInformerFactory
}

// New creates the informer; Start begins watching.
func New(client dynamic.Interface) *Source {
	// Resync is not needed: handlers read the store, nothing reacts to events.
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	return &Source{
		client:   client,
		factory:  factory,
		informer: factory.ForResource(v1alpha1.StarrocksClassGVR).Informer(),
	}
}

// Start runs the informer until ctx is done.
func (s *Source) Start(ctx context.Context) { s.factory.Start(ctx.Done()) }

// HasSynced reports whether the first list completed (readiness).
func (s *Source) HasSynced() bool { return s.informer.HasSynced() }

// Get returns the class called name. A miss in the cache is confirmed with a
// live GET: a class created a moment ago may not have reached the informer
// yet, and rejecting an instance for that would be a false "does not exist".
func (s *Source) Get(ctx context.Context, name string) (*v1alpha1.StarrocksClass, error) {
	// No object can have such a name (an empty one, say, before the CRD
	// schema rejects it), and client-go refuses to GET it: an error here
	// would make the apiserver apply the failurePolicy instead of showing
	// the schema's message.
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, ErrNotFound
	}
	obj, exists, err := s.informer.GetStore().GetByKey(name)
	if err != nil {
		return nil, fmt.Errorf("read StarrocksClass %q from cache: %w", name, err)
	}
	var u *unstructured.Unstructured
	if exists {
		u, _ = obj.(*unstructured.Unstructured)
	}
	if u == nil {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		u, err = s.client.Resource(v1alpha1.StarrocksClassGVR).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("get StarrocksClass %q: %w", name, err)
		}
	}
	class := &v1alpha1.StarrocksClass{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), class); err != nil {
		return nil, fmt.Errorf("decode StarrocksClass %q: %w", name, err)
	}
	return class, nil
}

// Instance reads a Starrocks live (nil when it does not exist): a
// StarrocksBackup created by hand must name an instance with spec.backup
// (RBAC: `get` on starrocks).
func (s *Source) Instance(ctx context.Context, namespace, name string) (*v1alpha1.Starrocks, error) {
	out := &v1alpha1.Starrocks{}
	found, err := s.getLive(ctx, v1alpha1.StarrocksGVR, namespace, name, out)
	if !found {
		return nil, err
	}
	return out, nil
}

// Backup reads a StarrocksBackup live (nil when it does not exist): a
// restore must name a finished backup (RBAC: `get` on starrocksbackups).
func (s *Source) Backup(ctx context.Context, namespace, name string) (*v1alpha1.StarrocksBackup, error) {
	out := &v1alpha1.StarrocksBackup{}
	found, err := s.getLive(ctx, v1alpha1.StarrocksBackupGVR, namespace, name, out)
	if !found {
		return nil, err
	}
	return out, nil
}

// BackupCount counts the StarrocksBackups of namespace whose
// spec.instanceName is instance, those being deleted included, listing page
// by page (RBAC: `list` on starrocksbackups). Asked on a CREATE only.
func (s *Source) BackupCount(ctx context.Context, namespace, instance string) (int, error) {
	if len(validation.IsDNS1123Label(namespace)) > 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	n := 0
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := s.client.Resource(v1alpha1.StarrocksBackupGVR).Namespace(namespace).List(ctx, opts)
		if err != nil {
			return 0, fmt.Errorf("list starrocksbackups of %s: %w", namespace, err)
		}
		for i := range list.Items {
			if name, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "instanceName"); name == instance {
				n++
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return n, nil
		}
	}
}

func (s *Source) getLive(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, into any) (bool, error) {
	// A name no object can have is "not found" without a request.
	if len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsDNS1123Label(namespace)) > 0 {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	u, err := s.client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s %s/%s: %w", gvr.Resource, namespace, name, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return false, fmt.Errorf("decode %s %s/%s: %w", gvr.Resource, namespace, name, err)
	}
	return true, nil
}
