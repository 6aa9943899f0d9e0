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

package crd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/dev/kubectlrun"
)

// getSampleDocs are the docs that quote `kubectl get starrocks` output.
var getSampleDocs = []string{"README.md", "docs/README.md", "docs/README.ru.md", "docs/USAGE.md", "docs/USAGE.ru.md"}

// getSample is one quoted output: the command's arguments after
// `kubectl -n team-a` and the text block that follows it.
type getSample struct {
	file, command, output string
}

// docGetSamples finds every `kubectl -n team-a get starrocks[ -o wide]`
// command of a shell block and the text block right after it.
func docGetSamples(t *testing.T) []getSample {
	t.Helper()
	var samples []getSample
	for _, f := range getSampleDocs {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "kubectl -n team-a get starrocks")
			if !ok || (cmd != "" && cmd != " -o wide") {
				continue
			}
			// The closing fence of the command's block, then the text block.
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
				j++
			}
			for j++; j < len(lines) && strings.TrimSpace(lines[j]) == ""; j++ {
			}
			if j >= len(lines) || strings.TrimSpace(lines[j]) != "```text" {
				t.Errorf("%s:%d: `%s` is not followed by a ```text block of its output", f, i+1, strings.TrimSpace(line))
				continue
			}
			var out []string
			for j++; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
				out = append(out, lines[j])
			}
			samples = append(samples, getSample{file: f, command: strings.TrimSpace(line), output: strings.Join(out, "\n")})
		}
	}
	return samples
}

// testGetSamples recreates the docs' instance (a running Cluster with its
// last backup three hours ago) and compares each quoted output with what
// kubectl prints for it, byte for byte but for the AGE column: the object is
// seconds old here, and the last column's value moves no other column.
func testGetSamples(t *testing.T, c *cluster) {
	const ns = "docs-get"
	c.ensureNamespace(t, ns)
	obj := parse(t, starrocksDoc("analytics", "Cluster"))
	obj.SetNamespace(ns)
	set(t, obj, "example", "spec", "starrocksClassName")
	created, err := c.create(obj)
	if err != nil {
		t.Fatal(err)
	}
	set(t, created, map[string]any{
		"phase": "Running",
		"conditions": []any{map[string]any{"type": "ConfigurationValid", "status": "True", "reason": "Valid",
			"message": "The spec passes the rules of its class.", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
		"frontend":  map[string]any{"replicas": int64(3), "readyReplicas": int64(3), "ready": "3/3"},
		"backend":   map[string]any{"replicas": int64(3), "readyReplicas": int64(3), "ready": "3/3"},
		"endpoints": map[string]any{"query": "d8ms-sr-analytics.team-a.svc.cluster.local:9030"},
		"backup":    map[string]any{"lastSuccessfulTime": time.Now().Add(-3*time.Hour - 5*time.Second).UTC().Format(time.RFC3339)},
	}, "status")
	if _, err := c.resource(created).UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}

	samples := docGetSamples(t)
	if len(samples) == 0 {
		t.Fatal("no `kubectl -n team-a get starrocks` sample in the docs: the test would prove nothing")
	}
	for _, s := range samples {
		args := append([]string{"-n", ns}, strings.Fields(strings.TrimPrefix(s.command, "kubectl -n team-a "))...)
		got := kubectlrun.Run(t, c.kubeconfig, t.TempDir(), args...)
		if got.Failed {
			t.Fatalf("kubectl %s: %s", strings.Join(args, " "), got.Err)
		}
		printed := strings.Split(strings.TrimRight(got.Out, "\n"), "\n")
		quoted := strings.Split(s.output, "\n")
		if len(printed) == len(quoted) {
			// AGE is the last column of each row: take the docs' value.
			for i := 1; i < len(printed); i++ {
				if k, q := strings.LastIndex(printed[i], " "), strings.LastIndex(quoted[i], " "); k >= 0 && q >= 0 {
					printed[i] = printed[i][:k+1] + quoted[i][q+1:]
				}
			}
		}
		if want := strings.Join(printed, "\n"); s.output != want {
			t.Errorf("%s quotes for `%s`\n%s\nkubectl prints\n%s", s.file, s.command, s.output, want)
		}
	}
}
