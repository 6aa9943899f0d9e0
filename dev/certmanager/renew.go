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

package certmanager

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// Certificates are cert-manager's Certificate objects.
var Certificates = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}

// Renew asks cert-manager to re-issue a Certificate now, as `cmctl renew`
// does: the Issuing condition with reason ManuallyTriggered
// (cert-manager/cmctl pkg/renew); the trigger controller would set it
// itself at renewBefore.
func Renew(ctx context.Context, dyn dynamic.Interface, namespace, name string) error {
	// cert-manager's controllers may still write the status (its revision,
	// renewal time) after the Certificate turned Ready: read it anew on a
	// conflict (CI saw one).
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cert, err := dyn.Resource(Certificates).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
		kept := conds[:0]
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] != "Issuing" {
				kept = append(kept, c)
			}
		}
		kept = append(kept, map[string]any{"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
			"message": "renewal asked by the test", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
		if err := unstructured.SetNestedSlice(cert.Object, kept, "status", "conditions"); err != nil {
			return err
		}
		_, err = dyn.Resource(Certificates).Namespace(namespace).UpdateStatus(ctx, cert, metav1.UpdateOptions{})
		return err
	})
}
