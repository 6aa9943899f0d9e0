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
