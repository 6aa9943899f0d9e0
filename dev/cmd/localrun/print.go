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

package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
	"github.com/deckhouse/managed-starrocks/pkg/plural"
)

// waitValid waits until every Starrocks has a ConfigurationValid condition.
func waitValid(ctx context.Context, client *kubeutil.Client, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		list, err := client.Dynamic.Resource(v1alpha1.StarrocksGVR).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) > 0 && allHave(list.Items, v1alpha1.ConditionConfigurationValid) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no ConfigurationValid condition on every Starrocks after %s", timeout)
}

func allHave(items []unstructured.Unstructured, condition string) bool {
	for _, sr := range items {
		conds, _, _ := unstructured.NestedSlice(sr.Object, "status", "conditions")
		found := false
		for _, c := range conds {
			if c.(map[string]any)["type"] == condition {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// printInstances prints, per Starrocks, the objects in its namespace that
// carry its managed-service-name label (what it runs on; the module's own
// records elsewhere are not listed) and the status it reports.
func printInstances(ctx context.Context, client *kubeutil.Client, w io.Writer) error {
	list, err := client.Dynamic.Resource(v1alpha1.StarrocksGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, sr := range list.Items {
		fmt.Fprintf(w, "\nObjects of Starrocks %s/%s:\n", sr.GetNamespace(), sr.GetName())
		fmt.Fprintln(w, strings.Join(instanceObjects(ctx, client, sr), "\n"))
		status, _, _ := unstructured.NestedMap(sr.Object, "status")
		data, _ := yaml.Marshal(map[string]any{"status": status})
		fmt.Fprintf(w, "\nStatus of Starrocks %s/%s:\n%s", sr.GetNamespace(), sr.GetName(), indent(string(data)))
	}
	return nil
}

// instanceObjects lists, one "  Kind name" a line, the objects in the
// instance's namespace labelled with its managed-service-name.
func instanceObjects(ctx context.Context, client *kubeutil.Client, sr unstructured.Unstructured) []string {
	sel := labels.Set{"managed-services.deckhouse.io/managed-service-name": sr.GetName()}.String()
	var lines []string
	for _, kind := range []struct{ apiVersion, kind string }{
		{"apps/v1", "StatefulSet"}, {"v1", "Service"}, {"v1", "ConfigMap"}, {"v1", "Secret"},
		{"v1", "PersistentVolumeClaim"}, {"v1", "Pod"}, {"cert-manager.io/v1", "Certificate"},
		{"policy/v1", "PodDisruptionBudget"}, {"networking.k8s.io/v1", "NetworkPolicy"},
		{"monitoring.coreos.com/v1", "PodMonitor"}, {"v1", "ServiceAccount"}, {"rbac.authorization.k8s.io/v1", "Role"},
	} {
		probe := &unstructured.Unstructured{}
		probe.SetAPIVersion(kind.apiVersion)
		probe.SetKind(kind.kind)
		probe.SetNamespace(sr.GetNamespace())
		res, err := client.ResourceFor(probe)
		if err != nil {
			continue
		}
		objs, err := res.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			continue
		}
		for _, o := range objs.Items {
			lines = append(lines, fmt.Sprintf("  %-22s %s", kind.kind, o.GetName()))
		}
	}
	sort.Strings(lines)
	return lines
}

// printDisabled is the summary of a disable: what Helm's uninstall deleted,
// what of the release it kept (annotated helm.sh/resource-policy: keep; a
// list only when there is one), and the instances' objects, which are not in
// the release and stay, counted and listed.
func printDisabled(ctx context.Context, client *kubeutil.Client, w io.Writer, deleted, kept []string) error {
	if len(deleted) == 0 {
		fmt.Fprintln(w, "\nModule disabled: its hooks no longer run; Helm's uninstall found nothing of the release to delete.")
	} else {
		fmt.Fprintf(w, "\nModule disabled: its hooks no longer run, and Helm's uninstall deleted %s of the release (the webhook and its configurations, the module's issuer and monitoring).\n",
			plural.Count(len(deleted), "object"))
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "Kept from the release (annotated helm.sh/resource-policy: keep), %s:\n", plural.Count(len(kept), "object"))
		for _, k := range kept {
			fmt.Fprintln(w, "  "+k)
		}
	}
	list, err := client.Dynamic.Resource(v1alpha1.StarrocksGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, sr := range list.Items {
		objs := instanceObjects(ctx, client, sr)
		if len(objs) == 0 {
			fmt.Fprintf(w, "Starrocks %s/%s stays as it is, unmanaged; no object carries its label.\n", sr.GetNamespace(), sr.GetName())
			continue
		}
		fmt.Fprintf(w, "Starrocks %s/%s stays as it is, unmanaged, with its %s (not in the release):\n%s\n",
			sr.GetNamespace(), sr.GetName(), plural.Count(len(objs), "object"), strings.Join(objs, "\n"))
	}
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
