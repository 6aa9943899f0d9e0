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
// nowhere, see renderWebhooksWithURL). It polls, so a configuration Helm creates again
// is redirected within a moment.
type Redirector struct {
	kube   kubernetes.Interface
	mu     sync.Mutex
	target WebhookEndpoint
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
	r := &Redirector{kube: kube, cancel: cancel, done: make(chan struct{})}
	r.Set(endpoint)
	go r.run(ctx)
	return r, nil
}

// Set changes where the configurations point; nil bypasses the webhook.
func (r *Redirector) Set(endpoint *WebhookEndpoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if endpoint == nil {
		r.target = unreachable
	} else {
		r.target = *endpoint
	}
}

// Stop ends the redirecting.
func (r *Redirector) Stop() {
	r.cancel()
	<-r.done
}

func (r *Redirector) run(ctx context.Context) {
	defer close(r.done)
	for {
		r.mu.Lock()
		target := r.target
		r.mu.Unlock()
		r.redirect(ctx, target)
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// redirect patches each webhook's clientConfig of the two configurations
// that does not point at target yet; errors are retried on the next tick.
func (r *Redirector) redirect(ctx context.Context, target WebhookEndpoint) {
	admission := r.kube.AdmissionregistrationV1()
	if v, err := admission.ValidatingWebhookConfigurations().Get(ctx, WebhookConfigurationName, metav1.GetOptions{}); err == nil {
		var clients []admissionregistrationv1.WebhookClientConfig
		for _, w := range v.Webhooks {
			clients = append(clients, w.ClientConfig)
		}
		if patch := redirectPatch(clients, target); patch != nil {
			_, _ = admission.ValidatingWebhookConfigurations().Patch(ctx, v.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		}
	}
	if m, err := admission.MutatingWebhookConfigurations().Get(ctx, WebhookConfigurationName, metav1.GetOptions{}); err == nil {
		var clients []admissionregistrationv1.WebhookClientConfig
		for _, w := range m.Webhooks {
			clients = append(clients, w.ClientConfig)
		}
		if patch := redirectPatch(clients, target); patch != nil {
			_, _ = admission.MutatingWebhookConfigurations().Patch(ctx, m.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		}
	}
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
