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

package chartrender_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// feStartScript is where the FE start wrapper lives in the repository;
// werf adds it to the FE image at feStartPath.
const (
	feStartScript = "images/starrocks-fe/fe-start.sh"
	feStartPath   = "/opt/managed-starrocks/fe-start.sh"
)

// The FE StatefulSet runs the wrapper from where the image recipe puts it.
func TestFrontendStartWrapperIsInTheImage(t *testing.T) {
	sr := starrocks("team-b", "analytics", v1alpha1.TypeCluster)
	e := entries(t, sr)[0]
	sts := typed[appsv1.StatefulSet](t, mustFind(t, render(t, nil, sr), "StatefulSet", e.Namespace, e.Names.FrontendStatefulSet))
	if got := strings.Join(sts.Spec.Template.Spec.Containers[0].Command, " "); got != "/bin/sh "+feStartPath {
		t.Errorf("FE command %q, want /bin/sh %s", got, feStartPath)
	}
	recipe, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "images/starrocks-fe/werf.inc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "- add: /" + feStartScript + "\n    to: " + feStartPath + "\n"
	if !strings.Contains(string(recipe), want) {
		t.Errorf("images/starrocks-fe/werf.inc.yaml does not add %s to %s", feStartScript, feStartPath)
	}
}

// The FE start wrapper, run by a real /bin/sh against a stand-in
// start_fe.sh that records its arguments.
func TestFrontendStartWrapper(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), feStartScript))
	if err != nil {
		t.Fatal(err)
	}
	script := string(data)

	cases := []struct {
		name         string
		pod          string
		existingMeta bool
		// bootstrapFile is there from the start (the agent's first pass).
		bootstrapFile bool
		helper        string // written by the "agent" after the wrapper started
		wantArgs      string
	}{
		{"the first FE of a new instance bootstraps once the agent lets it", "d8ms-sr-analytics-0", false, true, "", "--host_type FQDN --logconsole"},
		{"ordinal 0 without meta on a bootstrapped instance waits and rejoins through the helper", "d8ms-sr-analytics-0", false, false,
			"d8ms-sr-analytics-1.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010",
			"--helper d8ms-sr-analytics-1.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010 --host_type FQDN --logconsole"},
		{"a new follower waits for the agent and joins through the helper", "d8ms-sr-analytics-1", false, false,
			"d8ms-sr-analytics-0.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010",
			"--helper d8ms-sr-analytics-0.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010 --host_type FQDN --logconsole"},
		{"a follower never bootstraps, whatever the run directory holds", "d8ms-sr-analytics-2", false, true,
			"d8ms-sr-analytics-0.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010",
			"--helper d8ms-sr-analytics-0.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010 --host_type FQDN --logconsole"},
		{"a follower with metadata restarts without a helper", "d8ms-sr-analytics-2", true, false, "", "--host_type FQDN --logconsole"},
		{"ordinal 0 with metadata restarts at once", "d8ms-sr-analytics-0", true, false, "", "--host_type FQDN --logconsole"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			feHome, run := filepath.Join(dir, "fe"), filepath.Join(dir, "agent-run")
			argsFile := filepath.Join(dir, "args")
			for _, d := range []string{filepath.Join(feHome, "bin"), filepath.Join(feHome, "conf"), filepath.Join(feHome, "meta", "image"), run} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fake := "#!/bin/sh\necho \"$*\" > " + argsFile + "\n"
			if err := os.WriteFile(filepath.Join(feHome, "bin", "start_fe.sh"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.bootstrapFile {
				if err := os.WriteFile(filepath.Join(run, "fe-bootstrap"), []byte("bootstrap\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.existingMeta {
				if err := os.WriteFile(filepath.Join(feHome, "meta", "image", "VERSION"), []byte("1"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wrapper := filepath.Join(dir, "fe-start.sh")
			if err := os.WriteFile(wrapper, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "/bin/sh", wrapper)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "POD_NAME=" + tc.pod, "FE_HOME=" + feHome, "AGENT_RUN_DIR=" + run, "FE_CONF_SOURCE=" + writeConfSource(t, dir)}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatalf("start wrapper: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if tc.helper != "" {
				select {
				case err := <-done:
					t.Fatalf("the FE started before the agent wrote the helper (err %v): %s", err, out.String())
				case <-time.After(1500 * time.Millisecond):
				}
				if err := os.WriteFile(filepath.Join(run, "fe-helper"), []byte(tc.helper), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatalf("wrapper failed: %v: %s", err, out.String())
			}
			got, err := os.ReadFile(argsFile)
			if err != nil {
				t.Fatalf("start_fe.sh was not run: %v: %s", err, out.String())
			}
			if strings.TrimSpace(string(got)) != tc.wantArgs {
				t.Errorf("start_fe.sh %q, want %q", strings.TrimSpace(string(got)), tc.wantArgs)
			}
		})
	}
}
