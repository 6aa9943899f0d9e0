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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubectlrun"
)

// testBrokenByClassCommand runs the admin guide's command that lists the
// instances a class change broke, as written in both languages (kubectl in
// process, the rest of the pipe with sh), against two instances: one that
// still runs its last valid configuration while its spec breaks the class
// (phase Running, ConfigurationValid False) and one that is fine.
func testBrokenByClassCommand(t *testing.T, c *cluster) {
	withStatus := func(name, phase, valid, message string) {
		obj, err := c.create(parse(t, starrocksDoc(name, "Standalone")))
		if err != nil {
			t.Fatal(err)
		}
		set(t, obj, phase, "status", "phase")
		set(t, obj, []any{map[string]any{"type": "ConfigurationValid", "status": valid, "reason": "R",
			"message": message, "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "status", "conditions")
		if _, err := c.resource(obj).UpdateStatus(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	withStatus("broken-by-class", "Running", "False", "The spec breaks a class rule: spec.frontend.memory.size: too big.")
	withStatus("fits-its-class", "Running", "True", "The spec is valid.")
	t.Cleanup(func() {
		for _, n := range []string{"broken-by-class", "fits-its-class"} {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("managed-services.deckhouse.io/v1alpha1")
			u.SetKind("Starrocks")
			u.SetNamespace(namespace)
			_ = c.resource(u).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	for _, page := range []string{"ADMIN_GUIDE.md", "ADMIN_GUIDE.ru.md"} {
		t.Run(page, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", page))
			if err != nil {
				t.Fatal(err)
			}
			var command string
			for _, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(line, "kubectl get starrocks -A") && strings.Contains(line, "ConfigurationValid") {
					command = line
				}
			}
			if command == "" {
				t.Fatal("no `kubectl get starrocks -A ...` command filtering on ConfigurationValid")
			}
			kubectlPart, rest, _ := strings.Cut(command, " | ")
			args := shellWords(t, strings.TrimPrefix(kubectlPart, "kubectl "))
			got := kubectlrun.Run(t, c.kubeconfig, t.TempDir(), args...)
			if got.Failed {
				t.Fatalf("%s: %s", kubectlPart, got.Err)
			}
			out := got.Out
			if rest != "" {
				cmd := exec.Command("sh", "-c", rest)
				cmd.Stdin = strings.NewReader(got.Out)
				b, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", rest, err, b)
				}
				out = string(b)
			}
			if !strings.Contains(out, namespace+"/broken-by-class") || strings.Contains(out, "fits-its-class") || !strings.Contains(out, "too big") {
				t.Errorf("%s printed\n%s\nwant the instance whose ConfigurationValid is False, with its message, and not the other", command, out)
			}
		})
	}
}

// shellWords splits a command line as sh does for the quoting the docs use:
// words separated by spaces, single-quoted parts taken literally.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			w.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// testWaitForUserCommand runs the user guide's command that waits for a
// user to be ready (its Secret's connection keys come only then), as
// written in both languages, against an instance whose status reports the
// user etl ready.
func testWaitForUserCommand(t *testing.T, c *cluster) {
	obj, err := c.create(parse(t, starrocksDoc("analytics", "Standalone")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.resource(obj).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{}) })
	set(t, obj, []any{map[string]any{"name": "etl", "secretName": "d8ms-sr-analytics-user.etl", "ready": true}}, "status", "users")
	if _, err := c.resource(obj).UpdateStatus(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"USAGE.md", "USAGE.ru.md"} {
		t.Run(page, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", page))
			if err != nil {
				t.Fatal(err)
			}
			var command string
			for _, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(line, "kubectl -n team-a wait starrocks/analytics") && strings.Contains(line, "status.users") {
					command = line
				}
			}
			if command == "" {
				t.Fatal("no `kubectl -n team-a wait starrocks/analytics ...` command on status.users")
			}
			args := shellWords(t, strings.TrimPrefix(command, "kubectl "))
			for i, a := range args {
				if strings.HasPrefix(a, "--timeout=") {
					args[i] = "--timeout=20s"
				}
			}
			if got := kubectlrun.Run(t, c.kubeconfig, t.TempDir(), args...); got.Failed || !strings.Contains(got.Out, "condition met") {
				t.Errorf("%s: %s%s", command, got.Out, got.Err)
			}
		})
	}
}
