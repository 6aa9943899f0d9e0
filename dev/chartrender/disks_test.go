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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// The StarRocks pods of one instance, rendered.
func statefulSets(t *testing.T, sr *v1alpha1.Starrocks) (fe, be *appsv1.StatefulSet, feConf, beConf map[string]string) {
	t.Helper()
	e := entries(t, sr)[0]
	objs := render(t, nil, sr)
	fe = typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, e.Names.FrontendStatefulSet))
	be = typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, e.Names.BackendStatefulSet))
	cm := typed[corev1.ConfigMap](t, mustFind(t, objs, "ConfigMap", e.Namespace, e.Names.ConfigMap))
	return fe, be, conf(cm.Data["fe.conf"]), conf(cm.Data["be.conf"])
}

// TestGracefulStop: before the kubelet's SIGTERM, each StarRocks container
// runs the graceful stop the StarRocks operator runs
// (StarRocks/starrocks-kubernetes-operator pkg/k8sutils/templates/pod/spec.go
// GetPreStopCommand, for BE 3.3.19/3.4.8/3.5.6 and later), from the image's
// STARROCKS_HOME, within the operator's default grace period.
func TestGracefulStop(t *testing.T) {
	fe, be, _, _ := statefulSets(t, starrocks("team-b", "analytics", v1alpha1.TypeCluster))
	for _, tc := range []struct {
		sts  *appsv1.StatefulSet
		want []string
	}{
		{fe, []string{"/bin/bash", "-c", "/opt/starrocks/fe/bin/stop_fe.sh -g"}},
		{be, []string{"/bin/bash", "-c", "/opt/starrocks/be/bin/stop_be.sh -g"}},
	} {
		spec := tc.sts.Spec.Template.Spec
		c := container(t, spec, "starrocks")
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
			t.Errorf("%s: no preStop exec hook", tc.sts.Name)
			continue
		}
		if got := c.Lifecycle.PreStop.Exec.Command; strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("%s: preStop %q, want %q", tc.sts.Name, got, tc.want)
		}
		if g := spec.TerminationGracePeriodSeconds; g == nil || *g < 120 {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want at least the operator's 120", tc.sts.Name, g)
		}
	}
}

// TestEveryWritablePathIsBounded: nothing a StarRocks pod writes can fill the
// node's disk. Every disk-backed emptyDir has a sizeLimit, every container an
// ephemeral-storage request and a limit that covers the emptyDirs it mounts;
// logs go to the console and LOG_DIR is on a bounded emptyDir; spill files go
// to the data volume, bounded by spill_max_dir_bytes_ratio.
func TestEveryWritablePathIsBounded(t *testing.T) {
	fe, be, feConf, beConf := statefulSets(t, starrocks("team-b", "analytics", v1alpha1.TypeCluster))
	for _, sts := range []*appsv1.StatefulSet{fe, be} {
		spec := sts.Spec.Template.Spec
		sizeLimits := map[string]resource.Quantity{}
		for _, v := range spec.Volumes {
			if v.EmptyDir == nil || v.EmptyDir.Medium == corev1.StorageMediumMemory {
				continue
			}
			if v.EmptyDir.SizeLimit == nil {
				t.Errorf("%s: emptyDir %s has no sizeLimit", sts.Name, v.Name)
				continue
			}
			sizeLimits[v.Name] = *v.EmptyDir.SizeLimit
		}
		for _, c := range spec.Containers {
			req, lim := c.Resources.Requests[corev1.ResourceEphemeralStorage], c.Resources.Limits[corev1.ResourceEphemeralStorage]
			if req.IsZero() || lim.IsZero() {
				t.Errorf("%s/%s: ephemeral-storage request %s, limit %s: both must be set", sts.Name, c.Name, req.String(), lim.String())
				continue
			}
			var volumes resource.Quantity
			for _, m := range c.VolumeMounts {
				if q, ok := sizeLimits[m.Name]; ok {
					volumes.Add(q)
				}
			}
			if lim.Cmp(volumes) <= 0 {
				t.Errorf("%s/%s: ephemeral-storage limit %s does not cover its emptyDirs (%s) and its writable layer", sts.Name, c.Name, lim.String(), volumes.String())
			}
		}
	}

	// Where each component logs: the console, and LOG_DIR on a bounded volume.
	boundedDir := func(sts *appsv1.StatefulSet, path string) bool {
		spec := sts.Spec.Template.Spec
		for _, m := range container(t, spec, "starrocks").VolumeMounts {
			for _, v := range spec.Volumes {
				if v.Name == m.Name && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil && (path == m.MountPath || strings.HasPrefix(path, m.MountPath+"/")) {
					return true
				}
			}
		}
		return false
	}
	if feConf["sys_log_to_console"] != "true" {
		t.Errorf("fe.conf sys_log_to_console = %q: FE logs (audit included) would go to files", feConf["sys_log_to_console"])
	}
	if !boundedDir(fe, feConf["LOG_DIR"]) {
		t.Errorf("fe.conf LOG_DIR %q is not on a bounded emptyDir", feConf["LOG_DIR"])
	}
	for _, k := range []string{"LOG_DIR", "sys_log_dir"} {
		if !boundedDir(be, beConf[k]) {
			t.Errorf("be.conf %s %q is not on a bounded emptyDir", k, beConf[k])
		}
	}
	// The BE command is be-start.sh, which starts the BE.
	wrapper, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "images/starrocks-be/be-start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wrapper), `exec "$be_home/bin/start_be.sh" --be --logconsole`) {
		t.Errorf("the BE does not log to the console")
	}

	// Spill: on the data volume, beside (never equal to) the storage root,
	// so spill_max_dir_bytes_ratio of that volume bounds it.
	var dataMount string
	for _, m := range container(t, be.Spec.Template.Spec, "starrocks").VolumeMounts {
		if m.Name == be.Spec.VolumeClaimTemplates[0].Name {
			dataMount = m.MountPath
		}
	}
	spill := beConf["spill_local_storage_dir"]
	if dataMount == "" || !strings.HasPrefix(spill, dataMount+"/") || spill == beConf["storage_root_path"] {
		t.Errorf("be.conf spill_local_storage_dir %q is not a directory of the data volume %q beside storage_root_path %q", spill, dataMount, beConf["storage_root_path"])
	}
	// The BE refuses to start unless the spill directory exists (be
	// spill/dir_manager.cpp checks it is writable before creating it):
	// be-start.sh creates the directory it is given (TestBackendStartWrapper).
	if cmd := container(t, be.Spec.Template.Spec, "starrocks").Command; len(cmd) != 3 || cmd[1] != "/opt/managed-starrocks/be-start.sh" || cmd[2] != spill {
		t.Errorf("the BE command %q does not have be-start.sh create %s before the BE starts", cmd, spill)
	}
	if r, err := strconv.ParseFloat(beConf["spill_max_dir_bytes_ratio"], 64); err != nil || r <= 0 || r > 0.5 {
		t.Errorf("be.conf spill_max_dir_bytes_ratio %q, want a share of at most half the data volume", beConf["spill_max_dir_bytes_ratio"])
	}
}

// TestFrontendConfigIsACopy: the FE container mounts the ConfigMap where the
// start wrapper copies fe.conf from, and nothing over conf/, which the
// wrapper (and 3.x's start_fe.sh --logconsole) must be able to write.
func TestFrontendConfigIsACopy(t *testing.T) {
	fe, _, _, _ := statefulSets(t, starrocks("team-a", "solo", v1alpha1.TypeStandalone))
	script, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), feStartScript))
	if err != nil {
		t.Fatal(err)
	}
	var mounted bool
	for _, m := range container(t, fe.Spec.Template.Spec, "starrocks").VolumeMounts {
		if strings.HasPrefix(m.MountPath, "/opt/starrocks/fe/conf") {
			t.Errorf("volume %s is mounted at %s: start_fe.sh --logconsole must write conf/fe.conf", m.Name, m.MountPath)
		}
		if m.Name == "config" && m.SubPath == "" && m.ReadOnly && strings.Contains(string(script), m.MountPath+"/fe.conf") {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("the ConfigMap is not mounted read-only where %s copies fe.conf from", feStartScript)
	}
}

var xmx = regexp.MustCompile(`-Xmx(\d+)m`)

// TestBackendMemoryFitsTheContainer: for every BE size a class can allow
// (from the BE floor, in steps of the test class), mem_limit plus the heap
// of the BE's embedded JVM leave at least 512 MiB of the container's memory
// limit, and the JVM's heap is set at all.
func TestBackendMemoryFitsTheContainer(t *testing.T) {
	var sizes []int64
	largest := testClass().Spec.SizingPolicies[0].Memory.Max.Value() >> 30
	for gi := classrules.BackendMemoryFloor.Value() >> 30; gi <= largest; {
		sizes = append(sizes, gi)
		if gi < 64 {
			gi++
		} else {
			gi += 8
		}
	}
	var srs []*v1alpha1.Starrocks
	for _, gi := range sizes {
		sr := starrocks("team-m", fmt.Sprintf("be-%d", gi), v1alpha1.TypeStandalone)
		sr.Spec.Backend.Memory.Size = resource.MustParse(fmt.Sprintf("%dGi", gi))
		srs = append(srs, sr)
	}
	es := entries(t, srs...)
	objs := render(t, nil, srs...)
	for _, e := range es {
		be := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, e.Names.BackendStatefulSet))
		limit := container(t, be.Spec.Template.Spec, "starrocks").Resources.Limits[corev1.ResourceMemory]
		cm := typed[corev1.ConfigMap](t, mustFind(t, objs, "ConfigMap", e.Namespace, e.Names.ConfigMap))
		bc := conf(cm.Data["be.conf"])
		memLimit, err := strconv.ParseInt(bc["mem_limit"], 10, 64)
		if err != nil {
			t.Fatalf("%s: mem_limit %q", e.Name, bc["mem_limit"])
		}
		m := xmx.FindStringSubmatch(bc["JAVA_OPTS"])
		if m == nil {
			t.Errorf("%s: be.conf JAVA_OPTS %q sets no -Xmx: the BE's JVM would take a quarter of the container", e.Name, bc["JAVA_OPTS"])
			continue
		}
		heap, _ := strconv.ParseInt(m[1], 10, 64)
		if left := limit.Value() - memLimit - heap<<20; left < 512<<20 {
			t.Errorf("%s: memory limit %s, mem_limit %d, JVM heap %d MiB leave %d MiB", e.Name, limit.String(), memLimit, heap, left>>20)
		}
	}
}
