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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
)

func sharedDataClassForRender() *v1alpha1.StarrocksClass {
	c := hostileClass()
	c.Spec.SharedData = &v1alpha1.ClassSharedData{Allowed: true, MinReplicas: 1, MaxReplicas: 10, AutoscalingAllowed: true}
	return c
}

func sharedDataInstanceForRender() *v1alpha1.Starrocks {
	sr := hostileInstance()
	sr.UID = types.UID("0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0")
	sr.Spec.Backend = v1alpha1.BackendSpec{}
	sr.Spec.Backup, sr.Spec.Restore = nil, nil
	sr.Spec.Storage = &v1alpha1.StorageSpec{Mode: v1alpha1.StorageObjectStorage, ObjectStorage: &v1alpha1.BackupStorage{
		Endpoint: "https://s3.example.com", Bucket: "team-olap", Prefix: "starrocks",
		CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"},
		CASecretRef:          &v1alpha1.BackupSecretKeyRef{Name: "s3-ca"},
	}}
	sr.Spec.Compute = &v1alpha1.ComputeSpec{CPU: v1alpha1.CPUSpec{Cores: 2}, Memory: v1alpha1.MemorySpec{Size: resource.MustParse("8Gi")},
		Replicas: ptrTo(int32(3)), Cache: v1alpha1.CacheVolumeSpec{Size: resource.MustParse("50Gi")}}
	return sr
}

func ptrTo[T any](v T) *T { return &v }

func kindsAndNames(objs []*unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = true
	}
	return out
}

// TestSharedDataRenders: a shared-data instance renders its FEs with
// run_mode = shared_data, a CN StatefulSet with its cn.conf, headless
// Service, PDB and the agent's rights on the CN StatefulSet and the S3
// Secrets, and no BE object.
func TestSharedDataRenders(t *testing.T) {
	sr := sharedDataInstanceForRender()
	objs, rejectedBy, err := layers(t, sharedDataClassForRender(), sr)
	if err != nil || rejectedBy != "" {
		t.Fatalf("%v %s", err, rejectedBy)
	}
	ns, base := sr.Namespace, "d8ms-sr-"+sr.Name
	have := kindsAndNames(objs)
	for _, want := range []string{"StatefulSet/" + base + "-cn", "Service/" + base + "-cn-headless", "PodDisruptionBudget/" + base + "-cn"} {
		if !have[want] {
			t.Errorf("no %s in %v", want, have)
		}
	}
	for _, unwanted := range []string{"StatefulSet/" + base + "-be", "Service/" + base + "-be-headless", "PodDisruptionBudget/" + base + "-be", "HorizontalPodAutoscaler/" + base + "-cn"} {
		if have[unwanted] {
			t.Errorf("%s rendered for a shared-data instance of a fixed CN count", unwanted)
		}
	}
	cm := chartrender.Find(objs, "ConfigMap", ns, base+"-config")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	for _, line := range []string{"run_mode = shared_data", "cloud_native_meta_port = 6090", "enable_load_volume_from_conf = false"} {
		if !strings.Contains(data["fe.conf"], line+"\n") {
			t.Errorf("fe.conf lacks %q:\n%s", line, data["fe.conf"])
		}
	}
	for _, line := range []string{"starlet_port = 9070", "storage_root_path = /opt/starrocks/cn/storage", "heartbeat_service_port = 9050"} {
		if !strings.Contains(data["cn.conf"], line+"\n") {
			t.Errorf("cn.conf lacks %q:\n%s", line, data["cn.conf"])
		}
	}
	if _, ok := data["be.conf"]; ok {
		t.Error("be.conf rendered for a shared-data instance")
	}
	if !strings.Contains(data["agent.json"], `"sharedData"`) || strings.Contains(data["agent.json"], "secretAccessKey\":\"AKIA") {
		t.Errorf("agent.json: %s", data["agent.json"])
	}
	sts := chartrender.Find(objs, "StatefulSet", ns, base+"-cn")
	if n, _, _ := unstructured.NestedFieldNoCopy(sts.Object, "spec", "replicas"); fmt.Sprint(n) != "3" {
		t.Errorf("CN replicas %v, want 3", n)
	}
	// The instances hook restarts the CNs, before any FE.
	if s, _, _ := unstructured.NestedString(sts.Object, "spec", "updateStrategy", "type"); s != "OnDelete" {
		t.Errorf("CN updateStrategy %q, want OnDelete", s)
	}
	role := chartrender.Find(objs, "Role", ns, base+"-agent")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var sawSTS, sawKeys, sawCA bool
	for _, r := range rules {
		m := r.(map[string]any)
		names, _ := m["resourceNames"].([]any)
		for _, n := range names {
			switch n {
			case base + "-cn":
				sawSTS = true
			case "s3-keys":
				sawKeys = true
			case "s3-ca":
				sawCA = true
			}
		}
		if len(names) == 0 {
			t.Errorf("a rule without resourceNames: %v", m)
		}
	}
	if !sawSTS || !sawKeys || !sawCA {
		t.Errorf("agent Role lacks the CN StatefulSet (%v), the keys (%v) or the CA (%v): %v", sawSTS, sawKeys, sawCA, rules)
	}
	// The FE's JVM and the CN's S3 client both reach the object storage:
	// both trust its CA, through their start scripts.
	if cmd, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers"); len(cmd) == 0 ||
		fmt.Sprint(cmd[0].(map[string]any)["command"]) != "[/bin/sh /opt/managed-starrocks/cn-start.sh /opt/starrocks/cn/storage/spill]" {
		t.Errorf("the CN does not start through cn-start.sh: %v", cmd)
	}
	for _, name := range []string{base, base + "-cn"} {
		pod, _, _ := unstructured.NestedMap(chartrender.Find(objs, "StatefulSet", ns, name).Object, "spec", "template", "spec")
		if text := fmt.Sprint(pod); !strings.Contains(text, "name:trusted-cas projected") || !strings.Contains(text, "name:s3-ca") ||
			!strings.Contains(text, "path:storage.crt") || !strings.Contains(text, "mountPath:/etc/starrocks/trusted-cas") {
			t.Errorf("%s does not mount the object storage's CA: %s", name, text)
		}
	}
}

// TestSharedDataAutoscalingRendersAnHPAAndNoReplicas: the CN StatefulSet
// leaves .spec.replicas to the autoscaler.
func TestSharedDataAutoscalingRendersAnHPAAndNoReplicas(t *testing.T) {
	sr := sharedDataInstanceForRender()
	sr.Spec.Compute.Replicas = nil
	sr.Spec.Compute.Autoscaling = &v1alpha1.ComputeAutoscaling{MinReplicas: 2, MaxReplicas: 6, TargetCPUUtilizationPercentage: ptrTo(int32(70)), TargetMemoryUtilizationPercentage: ptrTo(int32(80))}
	objs, rejectedBy, err := layers(t, sharedDataClassForRender(), sr)
	if err != nil || rejectedBy != "" {
		t.Fatalf("%v %s", err, rejectedBy)
	}
	ns, base := sr.Namespace, "d8ms-sr-"+sr.Name
	sts := chartrender.Find(objs, "StatefulSet", ns, base+"-cn")
	if _, found, _ := unstructured.NestedFieldNoCopy(sts.Object, "spec", "replicas"); found {
		t.Error("the CN StatefulSet sets spec.replicas while an autoscaler owns it")
	}
	hpa := chartrender.Find(objs, "HorizontalPodAutoscaler", ns, base+"-cn")
	if hpa == nil {
		t.Fatal("no HorizontalPodAutoscaler")
	}
	min, _, _ := unstructured.NestedFieldNoCopy(hpa.Object, "spec", "minReplicas")
	max, _, _ := unstructured.NestedFieldNoCopy(hpa.Object, "spec", "maxReplicas")
	target, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
	metrics, _, _ := unstructured.NestedSlice(hpa.Object, "spec", "metrics")
	if fmt.Sprint(min) != "2" || fmt.Sprint(max) != "6" || target != base+"-cn" || len(metrics) != 2 {
		t.Errorf("HPA min %v max %v target %q metrics %v", min, max, target, metrics)
	}
}

// TestSharedDataHostileStrings: tenant strings of the object storage block
// are refused before they reach a template, or rendered quoted into the
// objects a benign instance has.
func TestSharedDataHostileStrings(t *testing.T) {
	benign, _, err := layers(t, sharedDataClassForRender(), sharedDataInstanceForRender())
	if err != nil {
		t.Fatal(err)
	}
	want := kindsAndNames(benign)
	setters := map[string]func(*v1alpha1.BackupStorage, string){
		"endpoint":                  func(s *v1alpha1.BackupStorage, v string) { s.Endpoint = "https://" + v },
		"bucket":                    func(s *v1alpha1.BackupStorage, v string) { s.Bucket = v },
		"prefix":                    func(s *v1alpha1.BackupStorage, v string) { s.Prefix = v },
		"region":                    func(s *v1alpha1.BackupStorage, v string) { s.Region = v },
		"credentialsSecretRef.name": func(s *v1alpha1.BackupStorage, v string) { s.CredentialsSecretRef.Name = v },
		"credentialsSecretRef.key":  func(s *v1alpha1.BackupStorage, v string) { s.CredentialsSecretRef.AccessKeyIDKey = v },
		"caSecretRef.name":          func(s *v1alpha1.BackupStorage, v string) { s.CASecretRef.Name = v },
	}
	for field, set := range setters {
		for _, p := range hostilePayloads {
			sr := sharedDataInstanceForRender()
			set(sr.Spec.Storage.ObjectStorage, p)
			objs, rejectedBy, err := layers(t, sharedDataClassForRender(), sr)
			if err != nil {
				t.Errorf("%s = %q: render error %v", field, p, err)
				continue
			}
			if rejectedBy != "" {
				continue
			}
			got := kindsAndNames(objs)
			if len(got) != len(want) {
				t.Errorf("%s = %q rendered objects %v, want %v", field, p, got, want)
			}
		}
	}
}

// TestSharedDataCNsAreMonitored: the module's PodMonitor scrapes the CNs'
// /metrics (component compute), Deckhouse's Prometheus may reach their
// port, and the CN StatefulSet carries the labels the alert on unready CNs
// joins kube-state-metrics' series with (monitoring/prometheus-rules/
// compute.yaml).
func TestSharedDataCNsAreMonitored(t *testing.T) {
	sr := sharedDataInstanceForRender()
	objs, rejectedBy, err := layers(t, sharedDataClassForRender(), sr)
	if err != nil || rejectedBy != "" {
		t.Fatalf("%v %s", err, rejectedBy)
	}
	ns, cnName := sr.Namespace, "d8ms-sr-"+sr.Name+"-cn"
	sts := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", ns, cnName))
	for k, v := range map[string]string{"managed-services.deckhouse.io/managed-service-type": "starrocks", "app.kubernetes.io/component": "compute", "app.kubernetes.io/instance": sr.Name} {
		if sts.Labels[k] != v {
			t.Errorf("the CN StatefulSet has label %s=%q, the alert on unready CNs joins on %q", k, sts.Labels[k], v)
		}
	}
	podLabels := sts.Spec.Template.Labels
	var httpPort int32
	for _, p := range sts.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == "cn-http" {
			httpPort = p.ContainerPort
		}
	}
	if httpPort != 8040 {
		t.Fatalf("the CN container has no port cn-http 8040 (got %d)", httpPort)
	}

	pm := mustFind(t, objs, "PodMonitor", chartrender.Namespace, "managed-starrocks-instances")
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	for k, v := range sel {
		if podLabels[k] != v {
			t.Errorf("CN pods lack the PodMonitor's selector label %s=%s", k, v)
		}
	}
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	scraped := false
	for _, raw := range eps {
		ep := raw.(map[string]any)
		if ep["port"] != "cn-http" {
			continue
		}
		for _, r := range ep["relabelings"].([]any) {
			if rl := r.(map[string]any); rl["targetLabel"] == "component" && rl["replacement"] == "compute" && ep["path"] == "/metrics" {
				scraped = true
			}
		}
	}
	if !scraped {
		t.Errorf("the PodMonitor does not scrape cn-http /metrics as component compute: %v", eps)
	}

	np := typed[networkingv1.NetworkPolicy](t, mustFind(t, objs, "NetworkPolicy", ns, "d8ms-sr-"+sr.Name))
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if podLabels[k] != v {
			t.Fatalf("the NetworkPolicy does not select the CN pods (%s=%s)", k, v)
		}
	}
	monitoringMayScrape := false
	for _, rule := range np.Spec.Ingress {
		fromMonitoring := false
		for _, peer := range rule.From {
			if peer.NamespaceSelector != nil && peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == "d8-monitoring" {
				fromMonitoring = true
			}
		}
		for _, p := range rule.Ports {
			if fromMonitoring && p.Port != nil && p.Port.IntVal == httpPort {
				monitoringMayScrape = true
			}
		}
	}
	if !monitoringMayScrape {
		t.Errorf("the NetworkPolicy does not let d8-monitoring reach the CNs' port %d", httpPort)
	}
}

// TestRestoredInstanceRenders: the FE of an instance restored from a
// cluster snapshot gets the source's storage volume in its env (what
// fe-start.sh writes into StarRocks' cluster_snapshot.yaml) and the team's
// keys as a Secret volume, never in a ConfigMap; an instance that is not
// restored gets neither. Hostile restoreFrom strings never render.
func TestRestoredInstanceRenders(t *testing.T) {
	sr := sharedDataInstanceForRender()
	sr.Spec.Storage.RestoreFrom = &v1alpha1.ClusterSnapshotSource{Namespace: sr.Namespace, InstanceName: "olap", InstanceUID: "11112222-3333-4444-5555-666677778888"}
	sr.Spec.Storage.ObjectStorage.CredentialsSecretRef.AccessKeyIDKey = "ak"
	objs, rejectedBy, err := layers(t, sharedDataClassForRender(), sr)
	if err != nil || rejectedBy != "" {
		t.Fatalf("%v %s", err, rejectedBy)
	}
	ns, base := sr.Namespace, "d8ms-sr-"+sr.Name
	sts := typed[appsv1.StatefulSet](t, chartrender.Find(objs, "StatefulSet", ns, base))
	fe := sts.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range fe.Env {
		env[e.Name] = e.Value
	}
	for k, v := range map[string]string{
		"CLUSTER_SNAPSHOT_VOLUME_NAME":     "d8ms_sv_11112222333344445555666677778888",
		"CLUSTER_SNAPSHOT_VOLUME_LOCATION": "s3://team-olap/starrocks/" + ns + "/olap/11112222-3333-4444-5555-666677778888",
		"CLUSTER_SNAPSHOT_S3_ENDPOINT":     "https://s3.example.com",
		"CLUSTER_SNAPSHOT_S3_REGION":       "us-east-1",
		"CLUSTER_SNAPSHOT_S3_PATH_STYLE":   "false",
		"CLUSTER_SNAPSHOT_S3_ENABLE_SSL":   "true",
	} {
		if env[k] != v {
			t.Errorf("FE env %s = %q, want %q", k, env[k], v)
		}
	}
	var mounted bool
	for _, m := range fe.VolumeMounts {
		if m.Name == "cluster-snapshot" {
			mounted = m.MountPath == "/etc/starrocks/cluster-snapshot" && m.ReadOnly
		}
	}
	if !mounted {
		t.Errorf("no read-only cluster-snapshot mount at /etc/starrocks/cluster-snapshot: %+v", fe.VolumeMounts)
	}
	for _, c := range sts.Spec.Template.Spec.Containers[1:] {
		for _, m := range c.VolumeMounts {
			if m.Name == "cluster-snapshot" {
				t.Errorf("container %s mounts the keys", c.Name)
			}
		}
	}
	var vol *corev1.Volume
	for i := range sts.Spec.Template.Spec.Volumes {
		if v := &sts.Spec.Template.Spec.Volumes[i]; v.Name == "cluster-snapshot" {
			vol = v
		}
	}
	if vol == nil || vol.Secret == nil {
		t.Fatalf("no cluster-snapshot Secret volume")
	}
	if vol.Secret.SecretName != "s3-keys" || vol.Secret.Optional == nil || !*vol.Secret.Optional || len(vol.Secret.Items) != 2 ||
		vol.Secret.Items[0] != (corev1.KeyToPath{Key: "ak", Path: "access-key"}) || vol.Secret.Items[1] != (corev1.KeyToPath{Key: "secretAccessKey", Path: "secret-key"}) {
		t.Errorf("cluster-snapshot volume %+v", vol.Secret)
	}
	var agentC *corev1.Container
	for i := range sts.Spec.Template.Spec.Containers {
		if c := &sts.Spec.Template.Spec.Containers[i]; c.Name == "agent" {
			agentC = c
		}
	}
	if agentC == nil || !strings.Contains(strings.Join(agentC.Args, " "), "--source-credentials-dir=/etc/starrocks-agent/source-credentials") {
		t.Errorf("the agent is not given the source's credentials: %+v", agentC)
	}
	var src *corev1.Volume
	for i := range sts.Spec.Template.Spec.Volumes {
		if v := &sts.Spec.Template.Spec.Volumes[i]; v.Name == "source-credentials" {
			src = v
		}
	}
	if src == nil || src.Secret == nil || src.Secret.SecretName != "d8ms-sr-olap-agent-credentials" || src.Secret.Optional == nil || !*src.Secret.Optional ||
		len(src.Secret.Items) != 1 || src.Secret.Items[0] != (corev1.KeyToPath{Key: "root-password", Path: "root-password"}) {
		t.Errorf("source-credentials volume %+v", src)
	}
	// A source of another namespace, with the team's Secret of the root
	// password: no pod mounts it (naming it later must not need a new
	// pod), the agent may get it by name.
	named := sr.DeepCopy()
	named.Spec.Storage.RestoreFrom.Namespace = "team-z"
	named.Spec.Storage.RestoreFrom.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "olap-root", Key: "root-pw"}
	nobjs, rejectedBy, err := layers(t, sharedDataClassForRender(), named)
	if err != nil || rejectedBy != "" {
		t.Fatalf("%v %s", err, rejectedBy)
	}
	for _, v := range typed[appsv1.StatefulSet](t, chartrender.Find(nobjs, "StatefulSet", ns, base)).Spec.Template.Spec.Volumes {
		if v.Name == "source-credentials" {
			t.Errorf("a source of another namespace has its Secret mounted: %+v", v)
		}
	}
	var role rbacv1.Role
	for _, o := range nobjs {
		if o.GetKind() == "Role" {
			role = *typed[rbacv1.Role](t, o)
		}
	}
	var canGet bool
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "secrets") && slices.Contains(r.ResourceNames, "olap-root") {
			canGet = slices.Equal(r.Verbs, []string{"get"})
		}
	}
	if !canGet {
		t.Errorf("the agent's Role does not allow get on the team's Secret olap-root (only): %+v", role.Rules)
	}
	ncm := chartrender.Find(nobjs, "ConfigMap", ns, base+"-config")
	ndata, _, _ := unstructured.NestedStringMap(ncm.Object, "data")
	if !strings.Contains(ndata["agent.json"], `"sourceRootPassword":{"key":"root-pw","name":"olap-root"}`) {
		t.Errorf("agent.json does not name the team's Secret: %s", ndata["agent.json"])
	}
	agent := chartrender.Find(objs, "ConfigMap", ns, base+"-config")
	data, _, _ := unstructured.NestedStringMap(agent.Object, "data")
	if !strings.Contains(data["agent.json"], `"name":"d8ms_sv_11112222333344445555666677778888"`) {
		t.Errorf("agent.json does not name the source's storage volume: %s", data["agent.json"])
	}

	plain, _, err := layers(t, sharedDataClassForRender(), sharedDataInstanceForRender())
	if err != nil {
		t.Fatal(err)
	}
	psts := typed[appsv1.StatefulSet](t, chartrender.Find(plain, "StatefulSet", ns, base))
	for _, e := range psts.Spec.Template.Spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "CLUSTER_SNAPSHOT_") {
			t.Errorf("an instance that is not restored has %s", e.Name)
		}
	}
	for _, v := range psts.Spec.Template.Spec.Volumes {
		if v.Name == "cluster-snapshot" || v.Name == "source-credentials" {
			t.Error("an instance that is not restored mounts the keys")
		}
	}

	for _, p := range hostilePayloads {
		for field, set := range map[string]func(*v1alpha1.ClusterSnapshotSource){
			"namespace":    func(r *v1alpha1.ClusterSnapshotSource) { r.Namespace = p },
			"instanceName": func(r *v1alpha1.ClusterSnapshotSource) { r.InstanceName = p },
			"instanceUID":  func(r *v1alpha1.ClusterSnapshotSource) { r.InstanceUID = p },
			"rootPasswordSecretRef.name": func(r *v1alpha1.ClusterSnapshotSource) {
				r.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: p}
			},
			"rootPasswordSecretRef.key": func(r *v1alpha1.ClusterSnapshotSource) {
				r.RootPasswordSecretRef = &v1alpha1.PasswordSecretRef{Name: "olap-root", Key: p}
			},
		} {
			h := sr.DeepCopy()
			set(h.Spec.Storage.RestoreFrom)
			objs, rejectedBy, err := layers(t, sharedDataClassForRender(), h)
			if err != nil {
				t.Errorf("restoreFrom.%s = %q: render error %v", field, p, err)
				continue
			}
			if rejectedBy == "" && len(kindsAndNames(objs)) != len(kindsAndNames(plain)) {
				t.Errorf("restoreFrom.%s = %q rendered other objects", field, p)
			}
		}
	}
}

// TestRestoredRootPasswordValuesAreRejectedOrHarmless: the values schema
// alone refuses a hostile Secret name or key for the restore source's root
// password, or the chart renders it quoted into the objects a benign
// entry has.
func TestRestoredRootPasswordValuesAreRejectedOrHarmless(t *testing.T) {
	sr := sharedDataInstanceForRender()
	sr.Spec.Storage.RestoreFrom = &v1alpha1.ClusterSnapshotSource{Namespace: "team-z", InstanceName: "olap", InstanceUID: "11112222-3333-4444-5555-666677778888",
		RootPasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "olap-root", Key: "root-pw"}}
	base := entryOf(t, sr, sharedDataClassForRender())
	var paths []entryPath
	sd := base["agentConfig"].(map[string]any)["sharedData"].(map[string]any)
	entryStrings(sd["sourceRootPassword"], entryPath{"agentConfig", "sharedData", "sourceRootPassword"}, &paths)
	if len(paths) < 2 {
		t.Fatalf("want the name and the key in agentConfig.sharedData.sourceRootPassword, found %v", paths)
	}
	valuesRejectedOrHarmless(t, base, paths)
}
