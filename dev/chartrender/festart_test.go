package chartrender_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// The FE start wrapper from the rendered ConfigMap, run by a real /bin/sh
// against a stand-in start_fe.sh that records its arguments.
func TestFrontendStartWrapper(t *testing.T) {
	sr := starrocks("team-b", "analytics", v1alpha1.TypeCluster)
	e := entries(t, sr)[0]
	cm := mustFind(t, render(t, nil, sr), "ConfigMap", e.Namespace, e.Names.ConfigMap)
	data, _ := cm.Object["data"].(map[string]any)
	script, _ := data["fe-start.sh"].(string)
	if script == "" {
		t.Fatal("no fe-start.sh in the ConfigMap")
	}

	cases := []struct {
		name         string
		pod          string
		existingMeta bool
		helper       string // written by the "agent" after the wrapper started
		wantArgs     string
	}{
		{"ordinal 0 bootstraps without a helper", "d8ms-sr-analytics-0", false, "", "--host_type FQDN --logconsole"},
		{"a new follower waits for the agent and joins through the helper", "d8ms-sr-analytics-1", false,
			"d8ms-sr-analytics-0.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010",
			"--helper d8ms-sr-analytics-0.d8ms-sr-analytics-fe-headless.team-b.svc.cluster.local:9010 --host_type FQDN --logconsole"},
		{"a follower with metadata restarts without a helper", "d8ms-sr-analytics-2", true, "", "--host_type FQDN --logconsole"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			feHome, run := filepath.Join(dir, "fe"), filepath.Join(dir, "agent-run")
			argsFile := filepath.Join(dir, "args")
			for _, d := range []string{filepath.Join(feHome, "bin"), filepath.Join(feHome, "meta", "image"), run} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fake := "#!/bin/sh\necho \"$*\" > " + argsFile + "\n"
			if err := os.WriteFile(filepath.Join(feHome, "bin", "start_fe.sh"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
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
			cmd.Env = []string{"PATH=/usr/bin:/bin", "POD_NAME=" + tc.pod, "FE_HOME=" + feHome, "AGENT_RUN_DIR=" + run}
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
					t.Fatalf("the follower started before the agent wrote the helper (err %v): %s", err, out.String())
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
