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

// Package kubeutil has the small client-side helpers the development tools
// share: reading manifests, server-side apply and printing tables the way
// kubectl does. Never shipped.
package kubeutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/deckhouse/managed-starrocks/pkg/manifests"
)

// ReadManifests parses every object of a multi-document YAML file.
func ReadManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return manifests.Parse(data)
}

// EnsureNamespace creates a namespace unless it exists already.
func EnsureNamespace(ctx context.Context, kube kubernetes.Interface, name string, labels map[string]string) error {
	// Looked up first: admission judges a create before the API server
	// finds the name taken, and under Deckhouse's policies only the
	// platform may create a labelled or a d8- namespace.
	if _, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// Client applies and reads arbitrary objects.
type Client struct {
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	rest    rest.Interface
	cached  discovery.CachedDiscoveryInterface
}

// NewClient builds a Client whose REST mapping follows new CRDs.
func NewClient(cfg *rest.Config) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(disc)
	return &Client{
		Dynamic: dyn,
		Mapper:  restmapper.NewDeferredDiscoveryRESTMapper(cached),
		rest:    disc.RESTClient(),
		cached:  cached,
	}, nil
}

// ResourceFor returns the dynamic resource of an object.
func (c *Client) ResourceFor(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	mapping, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), nil
	}
	return c.Dynamic.Resource(mapping.Resource), nil
}

// Apply server-side applies an object as the given field manager.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	res, err := c.ResourceFor(obj)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	force := true
	out, err := res.Patch(ctx, obj.GetName(), "application/apply-patch+yaml", data,
		metav1.PatchOptions{FieldManager: manager, Force: &force})
	if err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", obj.GetKind(), Key(obj), err)
	}
	return out, nil
}

// Key is namespace/name, or name for cluster-scoped objects.
func Key(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// PrintTable writes the server-side printed table of a resource path (for
// example /apis/managed-services.deckhouse.io/v1alpha1/starrocks), the
// columns `kubectl get -o wide` shows.
func (c *Client) PrintTable(ctx context.Context, w io.Writer, title, path string) error {
	raw, err := c.rest.Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("get %s: %w", path, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	var header []string
	for _, col := range table.ColumnDefinitions {
		header = append(header, strings.ToUpper(col.Name))
	}
	fmt.Fprintln(tw, "  "+strings.Join(header, "\t"))
	for _, row := range table.Rows {
		var cells []string
		for _, cell := range row.Cells {
			if cell == nil {
				cells = append(cells, "<none>")
				continue
			}
			cells = append(cells, fmt.Sprint(cell))
		}
		fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
	}
	if len(table.Rows) == 0 {
		fmt.Fprintln(tw, "  (none)")
	}
	return tw.Flush()
}

// Mapping returns the REST mapping of a kind, refreshing discovery once when
// the kind is new (a CRD installed after the client was made).
func (c *Client) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.cached.Invalidate()
		mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	return mapping, nil
}
