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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
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

// restoreEnv is the FE container's env of a restored shared-data instance
// (the FE StatefulSet template, TestRestoredInstanceRenders).
func restoreEnv(keysDir string) []string {
	return []string{
		"CLUSTER_SNAPSHOT_DIR=" + keysDir,
		"CLUSTER_SNAPSHOT_VOLUME_NAME=d8ms_sv_0b1c2d3e4f5061728394a5b6c7d8e9f0",
		"CLUSTER_SNAPSHOT_VOLUME_LOCATION=s3://team-olap/starrocks/team-a/olap/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
		"CLUSTER_SNAPSHOT_S3_ENDPOINT=https://s3.example.com",
		"CLUSTER_SNAPSHOT_S3_REGION=us-east-1",
		"CLUSTER_SNAPSHOT_S3_PATH_STYLE=true",
		"CLUSTER_SNAPSHOT_S3_ENABLE_SSL=true",
	}
}

// runStartWrapper runs fe-start.sh once with a stand-in start_fe.sh and
// returns start_fe.sh's arguments ("" when it was not run), the wrapper's
// output and its error.
func runStartWrapper(t *testing.T, feHome, run string, env []string) (args, out string, err error) {
	t.Helper()
	data, rerr := os.ReadFile(filepath.Join(controlplane.RepoRoot(), feStartScript))
	if rerr != nil {
		t.Fatal(rerr)
	}
	dir := filepath.Dir(feHome)
	argsFile := filepath.Join(dir, "args")
	_ = os.Remove(argsFile)
	for _, d := range []string{filepath.Join(feHome, "bin"), filepath.Join(feHome, "conf"), filepath.Join(feHome, "meta", "image"), run} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := "#!/bin/sh\necho \"$*\" > " + argsFile + "\n"
	if err := os.WriteFile(filepath.Join(feHome, "bin", "start_fe.sh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "fe-start.sh")
	if err := os.WriteFile(wrapper, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", wrapper)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "FE_HOME=" + feHome, "AGENT_RUN_DIR=" + run, "FE_CONF_SOURCE=" + writeConfSource(t, dir)}, env...)
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	err = cmd.Run()
	got, _ := os.ReadFile(argsFile)
	return strings.TrimSpace(string(got)), b.String(), err
}

// The first FE of a restored shared-data instance starts with
// --cluster_snapshot and StarRocks' conf/cluster_snapshot.yaml rendered from
// the mounted keys; later starts (meta present) never restore again, and
// the keys are never in the wrapper's output.
func TestFrontendStartWrapperRestoresAClusterSnapshot(t *testing.T) {
	const access, secret = "AKIARESTORE0000001", "s3cr3t'with\"quotes$(x)`y`"
	newDirs := func(t *testing.T) (feHome, run, keys string) {
		dir := t.TempDir()
		feHome, run, keys = filepath.Join(dir, "fe"), filepath.Join(dir, "agent-run"), filepath.Join(dir, "keys")
		if err := os.MkdirAll(keys, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{"access-key": access, "secret-key": secret} {
			if err := os.WriteFile(filepath.Join(keys, f), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		return feHome, run, keys
	}

	t.Run("the bootstrap start restores", func(t *testing.T) {
		feHome, run, keys := newDirs(t)
		if err := os.WriteFile(filepath.Join(run, "fe-bootstrap"), []byte("bootstrap\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
		if err != nil {
			t.Fatalf("wrapper: %v: %s", err, out)
		}
		if args != "--cluster_snapshot --host_type FQDN --logconsole" {
			t.Errorf("start_fe.sh %q, want --cluster_snapshot --host_type FQDN --logconsole", args)
		}
		if strings.Contains(out, access) || strings.Contains(out, "s3cr3t") {
			t.Errorf("a key in the output: %s", out)
		}
		if _, err := os.Stat(filepath.Join(feHome, "meta", agentconfig.RestoreMarkerName)); err != nil {
			t.Errorf("no restore marker in meta: %v", err)
		}
		path := filepath.Join(feHome, "conf", "cluster_snapshot.yaml")
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("cluster_snapshot.yaml mode %v, want 0600", st.Mode().Perm())
		}
		var y struct {
			ClusterSnapshot struct {
				Path   string `json:"cluster_snapshot_path"`
				Volume string `json:"storage_volume_name"`
			} `json:"cluster_snapshot"`
			Frontends      []any `json:"frontends"`
			ComputeNodes   []any `json:"compute_nodes"`
			StorageVolumes []struct {
				Name, Type, Location string
				Properties           []struct{ Key, Value string }
			} `json:"storage_volumes"`
		}
		data, _ := os.ReadFile(path)
		if err := yaml.UnmarshalStrict(data, &y); err != nil {
			t.Fatalf("cluster_snapshot.yaml: %v", err)
		}
		loc := "s3://team-olap/starrocks/team-a/olap/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
		if y.ClusterSnapshot.Path != loc+"/*/meta" || y.ClusterSnapshot.Volume != "d8ms_sv_0b1c2d3e4f5061728394a5b6c7d8e9f0" {
			t.Errorf("cluster_snapshot %+v", y.ClusterSnapshot)
		}
		if y.Frontends == nil || len(y.Frontends) != 0 || y.ComputeNodes == nil || len(y.ComputeNodes) != 0 {
			t.Errorf("frontends %v, compute_nodes %v: want both empty lists (the source's nodes dropped)", y.Frontends, y.ComputeNodes)
		}
		if len(y.StorageVolumes) != 1 || y.StorageVolumes[0].Location != loc || y.StorageVolumes[0].Type != "S3" {
			t.Fatalf("storage_volumes %+v", y.StorageVolumes)
		}
		props := map[string]string{}
		for _, p := range y.StorageVolumes[0].Properties {
			props[p.Key] = p.Value
		}
		for k, v := range map[string]string{"aws.s3.access_key": access, "aws.s3.secret_key": secret, "aws.s3.endpoint": "https://s3.example.com",
			"aws.s3.region": "us-east-1", "aws.s3.enable_path_style_access": "true", "aws.s3.enable_ssl": "true",
			"aws.s3.use_aws_sdk_default_behavior": "false", "aws.s3.use_instance_profile": "false"} {
			if props[k] != v {
				t.Errorf("property %s = %q, want %q", k, props[k], v)
			}
		}
	})

	// What a download the FE did not finish leaves: VERSION, the first key
	// S3 lists, without the image.
	unfinished := func(t *testing.T, feHome string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(feHome, "meta", "image", "starmgr"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(feHome, "meta", "image", "VERSION"), []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(feHome, "meta", "image", "starmgr", "image.7"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// VERSION alone, or with an image cut short (StarRocks opens the
	// journal only after the download): restored again, never started as
	// an empty cluster.
	for what, image := range map[string]string{"no image": "", "an image without a journal": "v2/image.42"} {
		t.Run("a download the FE did not finish is restored again: "+what, func(t *testing.T) {
			feHome, run, keys := newDirs(t)
			unfinished(t, feHome)
			if image != "" {
				_ = os.MkdirAll(filepath.Dir(filepath.Join(feHome, "meta", "image", image)), 0o755)
				_ = os.WriteFile(filepath.Join(feHome, "meta", "image", image), []byte("cut"), 0o644)
			}
			_ = os.WriteFile(filepath.Join(run, "fe-bootstrap"), []byte("bootstrap\n"), 0o644)
			args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
			if err != nil || args != "--cluster_snapshot --host_type FQDN --logconsole" {
				t.Fatalf("start_fe.sh %q, %v: %s", args, err, out)
			}
			if !strings.Contains(out, "did not finish") {
				t.Errorf("output %q: want it to say why it restores again", out)
			}
		})
	}
	t.Run("a download the FE did not finish joins the leader once the instance has one", func(t *testing.T) {
		feHome, run, keys := newDirs(t)
		unfinished(t, feHome)
		_ = os.WriteFile(filepath.Join(run, "fe-helper"), []byte("d8ms-sr-olap2-1.h.team-a.svc.cluster.local:9010"), 0o644)
		args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
		if err != nil || args != "--helper d8ms-sr-olap2-1.h.team-a.svc.cluster.local:9010 --host_type FQDN --logconsole" {
			t.Fatalf("start_fe.sh %q, %v: %s", args, err, out)
		}
	})
	t.Run("VERSION without an image on another FE or instance starts as before", func(t *testing.T) {
		for _, tc := range []struct {
			what     string
			pod      string
			restored bool
		}{
			{"a follower of a restored instance", "d8ms-sr-olap2-1", true},
			{"the first FE of an instance not restored", "d8ms-sr-olap-0", false},
		} {
			feHome, run, keys := newDirs(t)
			unfinished(t, feHome)
			_ = os.WriteFile(filepath.Join(run, "fe-bootstrap"), []byte("bootstrap\n"), 0o644)
			env := []string{"POD_NAME=" + tc.pod}
			if tc.restored {
				env = append(restoreEnv(keys), env...)
			}
			args, out, err := runStartWrapper(t, feHome, run, env)
			if err != nil || args != "--host_type FQDN --logconsole" {
				t.Errorf("%s: start_fe.sh %q, %v: %s", tc.what, args, err, out)
			}
		}
	})

	// A restored FE's meta: an image and a journal.
	complete := func(t *testing.T, feHome string) {
		t.Helper()
		_ = os.MkdirAll(filepath.Join(feHome, "meta", "image", "v2"), 0o755)
		_ = os.MkdirAll(filepath.Join(feHome, "meta", "bdb"), 0o755)
		for _, f := range []string{"image/VERSION", "image/v2/image.42", "bdb/00000000.jdb"} {
			if err := os.WriteFile(filepath.Join(feHome, "meta", f), []byte("1"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A restore the FE may not have finished (StarRocks' finishRestoring
	// runs after the journal opened): its marker in a complete meta. The
	// agent's verdict decides.
	t.Run("a restore started before the instance bootstrapped is done again", func(t *testing.T) {
		feHome, run, keys := newDirs(t)
		complete(t, feHome)
		_ = os.WriteFile(filepath.Join(feHome, "meta", agentconfig.RestoreMarkerName), []byte("restore started\n"), 0o644)
		_ = os.WriteFile(filepath.Join(run, agentconfig.BootstrapFileName), []byte("bootstrap\n"), 0o644)
		args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
		if err != nil || args != "--cluster_snapshot --host_type FQDN --logconsole" {
			t.Fatalf("start_fe.sh %q, %v: %s", args, err, out)
		}
		if !strings.Contains(out, "restoring again") {
			t.Errorf("output %q: want it to say why it restores again", out)
		}
	})
	t.Run("once the instance has bootstrapped the marker goes and the FE starts from its meta", func(t *testing.T) {
		feHome, run, keys := newDirs(t)
		complete(t, feHome)
		marker := filepath.Join(feHome, "meta", agentconfig.RestoreMarkerName)
		_ = os.WriteFile(marker, []byte("restore started\n"), 0o644)
		_ = os.WriteFile(filepath.Join(run, agentconfig.RestoredFileName), []byte("restored\n"), 0o644)
		args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
		if err != nil || args != "--host_type FQDN --logconsole" {
			t.Fatalf("start_fe.sh %q, %v: %s", args, err, out)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("the restore marker is still there: %v", err)
		}
	})

	t.Run("a start with meta never restores and leaves no keys behind", func(t *testing.T) {
		feHome, run, keys := newDirs(t)
		complete(t, feHome)
		_ = os.MkdirAll(filepath.Join(feHome, "conf"), 0o755)
		if err := os.WriteFile(filepath.Join(feHome, "conf", "cluster_snapshot.yaml"), []byte("stale"), 0o600); err != nil {
			t.Fatal(err)
		}
		args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
		if err != nil || args != "--host_type FQDN --logconsole" {
			t.Fatalf("start_fe.sh %q, %v: %s", args, err, out)
		}
		if _, err := os.Stat(filepath.Join(feHome, "conf", "cluster_snapshot.yaml")); !os.IsNotExist(err) {
			t.Errorf("cluster_snapshot.yaml left: %v", err)
		}
	})

	t.Run("a follower joins through the helper, never restores", func(t *testing.T) {
		feHome, run, keys := newDirs(t)
		_ = os.WriteFile(filepath.Join(run, "fe-bootstrap"), []byte("bootstrap\n"), 0o644)
		_ = os.WriteFile(filepath.Join(run, "fe-helper"), []byte("d8ms-sr-olap2-0.h.team-a.svc.cluster.local:9010"), 0o644)
		args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-1"))
		if err != nil || args != "--helper d8ms-sr-olap2-0.h.team-a.svc.cluster.local:9010 --host_type FQDN --logconsole" {
			t.Fatalf("start_fe.sh %q, %v: %s", args, err, out)
		}
	})

	for name, keyFiles := range map[string]map[string]string{
		"a missing key":         {"access-key": access},
		"a key with a newline":  {"access-key": access, "secret-key": "abc\ndef"},
		"an empty key":          {"access-key": "", "secret-key": secret},
		"a key with a tab char": {"access-key": "AK\tIA", "secret-key": secret},
	} {
		t.Run(name+" stops the restore, naming no key", func(t *testing.T) {
			feHome, run, keys := newDirs(t)
			_ = os.Remove(filepath.Join(keys, "secret-key"))
			for f, v := range keyFiles {
				if err := os.WriteFile(filepath.Join(keys, f), []byte(v), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_ = os.WriteFile(filepath.Join(run, "fe-bootstrap"), []byte("bootstrap\n"), 0o644)
			args, out, err := runStartWrapper(t, feHome, run, append(restoreEnv(keys), "POD_NAME=d8ms-sr-olap2-0"))
			if err == nil || args != "" {
				t.Fatalf("start_fe.sh ran with %q (err %v): %s", args, err, out)
			}
			if !strings.Contains(out, "cluster snapshot") || strings.Contains(out, "abc") || strings.Contains(out, access) {
				t.Errorf("output %q: want a message about the cluster snapshot's keys without them", out)
			}
			if _, err := os.Stat(filepath.Join(feHome, "conf", "cluster_snapshot.yaml")); !os.IsNotExist(err) {
				t.Errorf("cluster_snapshot.yaml written: %v", err)
			}
		})
	}
}

// restoringWrapper starts fe-start.sh for the first FE of a restored
// instance that has never bootstrapped, with a start_fe.sh that records its
// arguments, whether fe.conf turns authentication off, and its pid, then
// runs like an FE until it is stopped (the exec keeps the pid, as
// start_fe.sh's exec of the JVM does).
type restoringWrapper struct {
	feHome, run, starts, pids, log string
	cmd                            *exec.Cmd
	exited                         chan error
}

func startRestoringWrapper(t *testing.T, runFiles ...string) *restoringWrapper {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), feStartScript))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w := &restoringWrapper{feHome: filepath.Join(dir, "fe"), run: filepath.Join(dir, "agent-run"),
		starts: filepath.Join(dir, "starts"), pids: filepath.Join(dir, "pids"), log: filepath.Join(dir, "log"), exited: make(chan error, 1)}
	keys := filepath.Join(dir, "keys")
	for _, d := range []string{filepath.Join(w.feHome, "bin"), filepath.Join(w.feHome, "conf"), filepath.Join(w.feHome, "meta"), w.run, keys} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, v := range map[string]string{"access-key": "AKIARESET000001", "secret-key": "resetsecret"} {
		if err := os.WriteFile(filepath.Join(keys, f), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fake := "#!/bin/sh\n" +
		"echo \"$* auth_off=$(grep -c '^enable_auth_check = false$' \"$FE_HOME/conf/fe.conf\")\" >> " + w.starts + "\n" +
		"echo $$ >> " + w.pids + "\n" +
		"exec sleep 600\n"
	if err := os.WriteFile(filepath.Join(w.feHome, "bin", "start_fe.sh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "fe-start.sh")
	if err := os.WriteFile(script, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{agentconfig.BootstrapFileName}, runFiles...) {
		w.write(t, f)
	}
	w.cmd = exec.Command("/bin/sh", script)
	w.cmd.Env = append([]string{"PATH=/usr/bin:/bin", "FE_HOME=" + w.feHome, "AGENT_RUN_DIR=" + w.run,
		"FE_CONF_SOURCE=" + writeConfSource(t, dir), "POD_NAME=d8ms-sr-olap2-0"}, restoreEnv(keys)...)
	log, err := os.Create(w.log)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	w.cmd.Stdout, w.cmd.Stderr = log, log
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.exited <- w.cmd.Wait() }()
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		for i := range lines(w.pids) {
			_ = syscall.Kill(w.pid(i), syscall.SIGKILL)
		}
	})
	return w
}

// output is what the wrapper and its FEs printed so far.
func (w *restoringWrapper) output() string {
	data, _ := os.ReadFile(w.log)
	return string(data)
}

// write writes a file of the agent's run directory.
func (w *restoringWrapper) write(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.run, name), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitStarts waits for the n-th start of start_fe.sh and returns them all.
func (w *restoringWrapper) waitStarts(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(lines(w.starts)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d starts, want %d: %v\n%s", len(lines(w.starts)), n, lines(w.starts), w.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return lines(w.starts)
}

func (w *restoringWrapper) pid(i int) int {
	pid, _ := strconv.Atoi(lines(w.pids)[i])
	return pid
}

func (w *restoringWrapper) running(i int) bool { return syscall.Kill(w.pid(i), 0) == nil }

// stop sends the kubelet's SIGTERM and returns the wrapper's exit.
func (w *restoringWrapper) stop(t *testing.T) error {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.exited:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the wrapper did not stop on SIGTERM")
		return nil
	}
}

// Root's password reset on a restored FE: the wrapper stays the parent of
// the FE it restores. When the agent asks (root accepts no password it
// has) it stops the FE and restores again with enable_auth_check = false;
// when the agent says root has its password it stops the FE, removes the
// restore's marker and starts from the meta with authentication on.
func TestFrontendStartWrapperRestartsARestoreToResetRoot(t *testing.T) {
	w := startRestoringWrapper(t)
	got := w.waitStarts(t, 1)
	if got[0] != "--cluster_snapshot --host_type FQDN --logconsole auth_off=0" {
		t.Fatalf("first start %q, want a restore with authentication on", got[0])
	}
	w.write(t, agentconfig.RootResetFileName)
	got = w.waitStarts(t, 2)
	if got[1] != "--cluster_snapshot --host_type FQDN --logconsole auth_off=1" {
		t.Fatalf("second start %q, want a restore with authentication off", got[1])
	}
	if w.running(0) {
		t.Error("the first FE still runs beside the second")
	}
	w.write(t, agentconfig.RootResetDoneFileName)
	got = w.waitStarts(t, 3)
	if got[2] != "--host_type FQDN --logconsole auth_off=0" {
		t.Fatalf("third start %q, want a start from the meta with authentication on", got[2])
	}
	if w.running(1) {
		t.Error("the FE with authentication off still runs")
	}
	for _, f := range []string{filepath.Join(w.feHome, "meta", agentconfig.RestoreMarkerName), filepath.Join(w.run, agentconfig.RootResetFileName),
		filepath.Join(w.run, agentconfig.RootResetDoneFileName), filepath.Join(w.feHome, "conf", "cluster_snapshot.yaml")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", f, err)
		}
	}
	if strings.Contains(w.output(), "resetsecret") {
		t.Errorf("a key in the output: %s", w.output())
	}
	// The last start is the wrapper's exec: SIGTERM reaches the FE itself.
	_ = w.stop(t)
	if w.running(2) {
		t.Error("the FE still runs after SIGTERM")
	}
}

// A container that restarts after the agent said root has its password
// but before the wrapper acted on it restores again with authentication
// off: the done file was of the FE before, and this restore has not
// finished (starting from its meta would start from a cut download).
func TestFrontendStartWrapperIgnoresTheDoneFileOfAnEarlierFE(t *testing.T) {
	w := startRestoringWrapper(t, agentconfig.RootResetFileName, agentconfig.RootResetDoneFileName)
	got := w.waitStarts(t, 1)
	if got[0] != "--cluster_snapshot --host_type FQDN --logconsole auth_off=1" {
		t.Fatalf("first start %q, want a restore with authentication off", got[0])
	}
	time.Sleep(2500 * time.Millisecond) // the wrapper looks every second
	if got := lines(w.starts); len(got) != 1 {
		t.Fatalf("starts %v: the done file of the FE before restarted this one", got)
	}
	if _, err := os.Stat(filepath.Join(w.run, agentconfig.RootResetDoneFileName)); !os.IsNotExist(err) {
		t.Errorf("the earlier FE's done file is still there: %v", err)
	}
	_ = w.stop(t)
}

// The wrapper passes the kubelet's SIGTERM on to an FE it restores and
// exits with the FE's status.
func TestFrontendStartWrapperStopsTheFEItRestores(t *testing.T) {
	w := startRestoringWrapper(t)
	w.waitStarts(t, 1)
	if err := w.stop(t); err == nil {
		t.Error("the wrapper exited 0 after SIGTERM stopped its FE: want the FE's status")
	}
	if w.running(0) {
		t.Error("the FE still runs after the wrapper stopped")
	}
}

// lines is a file's non-empty lines (none when it does not exist).
func lines(path string) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
