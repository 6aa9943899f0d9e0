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

package addonoperator

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/moduleloop"
)

// WebhookConfigurationName is the name of the module's Validating- and
// MutatingWebhookConfiguration (templates/webhook/webhook-configurations.yaml).
const WebhookConfigurationName = "d8-managed-starrocks"

// WebhookEndpoint is a reachable admission webhook server.
type WebhookEndpoint = moduleloop.WebhookEndpoint

// unreachable is where a bypassed webhook points: nothing listens on port
// 1, and the module's webhooks fail open (failurePolicy: Ignore), so the
// apiserver admits everything as if the webhook were not there.
var unreachable = WebhookEndpoint{URL: "https://127.0.0.1:1"}

// Redirector keeps the module's WebhookConfigurations pointing at a local
// webhook server: the chart renders them with the module's Service, which
// nothing routes to here (the harness's copy renders a url that points
// nowhere, see renderWebhooksWithURL). It watches both configurations, so
// one Helm creates or rewrites is redirected within a moment. It watches
// rather than polls: a GET of each every 200 ms was most of what an idle
// apiserver under the module burned (0.07 CPU-s a second).
type Redirector struct {
	kube   kubernetes.Interface
	mu     sync.Mutex
	target WebhookEndpoint
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// RedirectWebhooks starts a Redirector to endpoint; nil points the
// configurations nowhere (the webhook bypassed).
func RedirectWebhooks(cfg *rest.Config, endpoint *WebhookEndpoint) (*Redirector, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Redirector{kube: kube, kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	r.Set(endpoint)
	go r.run(ctx)
	return r, nil
}

// Set changes where the configurations point; nil bypasses the webhook.
func (r *Redirector) Set(endpoint *WebhookEndpoint) {
	r.mu.Lock()
	if endpoint == nil {
		r.target = unreachable
	} else {
		r.target = *endpoint
	}
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Stop ends the redirecting.
func (r *Redirector) Stop() {
	r.cancel()
	<-r.done
}

// run redirects both configurations, then waits until either changes (or
// the target does) and does it again. Each round lists anew and watches
// from the list's resourceVersion, so no change between the two is missed.
func (r *Redirector) run(ctx context.Context) {
	defer close(r.done)
	for ctx.Err() == nil {
		r.mu.Lock()
		target := r.target
		r.mu.Unlock()
		if !r.redirectAndWait(ctx, target) {
			// An error: the apiserver is starting or going; try again soon.
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// redirectAndWait points both configurations at target and waits for a
// change of either or of the target. False when a call failed.
func (r *Redirector) redirectAndWait(ctx context.Context, target WebhookEndpoint) bool {
	admission := r.kube.AdmissionregistrationV1()
	byName := metav1.ListOptions{FieldSelector: "metadata.name=" + WebhookConfigurationName}
	validating, err := admission.ValidatingWebhookConfigurations().List(ctx, byName)
	if err != nil {
		return false
	}
	for _, v := range validating.Items {
		var clients []admissionregistrationv1.WebhookClientConfig
		for _, w := range v.Webhooks {
			clients = append(clients, w.ClientConfig)
		}
		if patch := redirectPatch(clients, target); patch != nil {
			if _, err := admission.ValidatingWebhookConfigurations().Patch(ctx, v.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return false
			}
		}
	}
	mutating, err := admission.MutatingWebhookConfigurations().List(ctx, byName)
	if err != nil {
		return false
	}
	for _, m := range mutating.Items {
		var clients []admissionregistrationv1.WebhookClientConfig
		for _, w := range m.Webhooks {
			clients = append(clients, w.ClientConfig)
		}
		if patch := redirectPatch(clients, target); patch != nil {
			if _, err := admission.MutatingWebhookConfigurations().Patch(ctx, m.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return false
			}
		}
	}

	// Our own patches come back as events: the next round finds nothing to
	// do and waits again.
	watchFrom := func(rv string) metav1.ListOptions {
		o := byName
		o.ResourceVersion = rv
		return o
	}
	vw, err := admission.ValidatingWebhookConfigurations().Watch(ctx, watchFrom(validating.ResourceVersion))
	if err != nil {
		return false
	}
	defer vw.Stop()
	mw, err := admission.MutatingWebhookConfigurations().Watch(ctx, watchFrom(mutating.ResourceVersion))
	if err != nil {
		return false
	}
	defer mw.Stop()
	var ev watch.Event
	var open bool
	select {
	case <-ctx.Done():
		return true
	case <-r.kick:
		return true
	case ev, open = <-vw.ResultChan():
	case ev, open = <-mw.ResultChan():
	}
	// A closed watch or an error event (an expired resourceVersion) is a
	// failure: list again after a pause.
	return open && ev.Type != watch.Error
}

// redirectPatch is a JSON patch that points every client config at target,
// keeping the path the chart gave it; nil when all do already.
func redirectPatch(clients []admissionregistrationv1.WebhookClientConfig, target WebhookEndpoint) []byte {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	var ops []op
	for i, c := range clients {
		path := ""
		switch {
		case c.Service != nil && c.Service.Path != nil:
			path = *c.Service.Path
		case c.URL != nil:
			// Keep the path of an earlier redirect.
			if u := *c.URL; strings.HasPrefix(u, "https://") {
				if slash := strings.Index(u[len("https://"):], "/"); slash >= 0 {
					path = u[len("https://")+slash:]
				}
			}
		}
		url := strings.TrimSuffix(target.URL, "/") + path
		if c.Service == nil && c.URL != nil && *c.URL == url && string(c.CABundle) == string(target.CABundle) {
			continue
		}
		client := map[string]any{"url": url}
		if len(target.CABundle) > 0 {
			client["caBundle"] = target.CABundle // []byte: JSON-encoded as base64, as the API wants
		}
		ops = append(ops, op{Op: "replace", Path: "/webhooks/" + strconv.Itoa(i) + "/clientConfig", Value: client})
	}
	if len(ops) == 0 {
		return nil
	}
	data, _ := json.Marshal(ops)
	return data
}
