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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// typed converts a rendered object into its Go type, failing on fields the
// type does not know (a misspelt or misplaced key in a template).
func typed[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	if u == nil {
		t.Fatalf("object not rendered")
	}
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &out, true); err != nil {
		t.Fatalf("%s %s/%s does not match its Go type: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return &out
}

func mustFind(t *testing.T, objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	o := chartrender.Find(objs, kind, ns, name)
	if o == nil {
		t.Fatalf("%s %s/%s not rendered", kind, ns, name)
	}
	return o
}

func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %q", name)
	return corev1.Container{}
}

// conf parses a StarRocks key = value file.
func conf(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

func TestEveryObjectCarriesTheModuleLabels(t *testing.T) {
	for _, sc := range scenarios() {
		for _, o := range render(t, sc.settings, sc.sr) {
			l := o.GetLabels()
			if l["heritage"] != "deckhouse" || l["module"] != "managed-starrocks" {
				t.Errorf("%s: %s %s/%s labels %v lack heritage/module", sc.name, o.GetKind(), o.GetNamespace(), o.GetName(), l)
			}
		}
	}
}

// Deckhouse's admission policy label-objects.deckhouse.io lets only
// Deckhouse's own service accounts create or update an object labelled
// heritage: deckhouse. The StatefulSet controller creates the pods and the
// agent patches its own pod's annotation: a labelled pod template would make
// every such write refused in a real cluster.
func TestPodTemplatesDoNotCarryTheHeritageLabel(t *testing.T) {
	var templates int
	for _, sc := range scenarios() {
		for _, o := range render(t, sc.settings, sc.sr) {
			labels, found, err := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
			if err != nil || !found {
				continue
			}
			templates++
			if _, ok := labels["heritage"]; ok {
				t.Errorf("%s: %s %s/%s: the pod template is labelled heritage: %v", sc.name, o.GetKind(), o.GetNamespace(), o.GetName(), labels)
			}
			if labels["module"] != "managed-starrocks" {
				t.Errorf("%s: %s %s/%s: the pod template lacks the module's labels: %v", sc.name, o.GetKind(), o.GetNamespace(), o.GetName(), labels)
			}
		}
	}
	if templates == 0 {
		t.Fatal("no pod template rendered")
	}
}

func TestInstanceObjects(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			e := entries(t, sc.sr)[0]
			objs := render(t, sc.settings, sc.sr)
			ns, n := e.Namespace, e.Names

			fe := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", ns, n.FrontendStatefulSet))
			be := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", ns, n.BackendStatefulSet))
			wantFE, wantBE := int32(1), int32(1)
			if sc.sr.Spec.Type == "Cluster" {
				wantFE, wantBE = 3, 3
			}
			if *fe.Spec.Replicas != wantFE || *be.Spec.Replicas != wantBE {
				t.Errorf("replicas FE %d BE %d, want %d %d", *fe.Spec.Replicas, *be.Spec.Replicas, wantFE, wantBE)
			}
			if fe.Spec.ServiceName != n.FrontendHeadlessService || be.Spec.ServiceName != n.BackendHeadlessService {
				t.Errorf("serviceName FE %q BE %q", fe.Spec.ServiceName, be.Spec.ServiceName)
			}
			wantRetention := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
			if sc.name == "Cluster" { // this scenario sets persistentVolumeClaimRetention: Delete
				wantRetention = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			}
			for _, sts := range []*appsv1.StatefulSet{fe, be} {
				p := sts.Spec.PersistentVolumeClaimRetentionPolicy
				if p == nil || p.WhenDeleted != wantRetention || p.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
					t.Errorf("%s retention policy %+v, want whenDeleted %s, whenScaled Retain", sts.Name, p, wantRetention)
				}
				if len(sts.Spec.VolumeClaimTemplates) != 1 {
					t.Fatalf("%s has %d volume claim templates, want 1", sts.Name, len(sts.Spec.VolumeClaimTemplates))
				}
				for _, v := range sts.Spec.Template.Spec.Volumes {
					if v.EmptyDir != nil && v.Name == sts.Spec.VolumeClaimTemplates[0].Name {
						t.Errorf("%s data volume is an emptyDir", sts.Name)
					}
				}
				sel := sts.Spec.Selector.MatchLabels
				for k, v := range sel {
					if sts.Spec.Template.Labels[k] != v {
						t.Errorf("%s pod template lacks selector label %s=%s", sts.Name, k, v)
					}
				}
				psc := sts.Spec.Template.Spec.SecurityContext
				if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
					t.Errorf("%s pods may run as root", sts.Name)
				}
				for _, c := range sts.Spec.Template.Spec.Containers {
					if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
						t.Errorf("%s/%s allows privilege escalation", sts.Name, c.Name)
					}
					if c.Resources.Limits.Memory().IsZero() {
						t.Errorf("%s/%s has no memory limit", sts.Name, c.Name)
					}
				}
				if sts.Spec.Template.Spec.NodeSelector["node-role.example.com/analytics"] != "" || len(sts.Spec.Template.Spec.NodeSelector) != 1 {
					t.Errorf("%s nodeSelector %v, want the class's", sts.Name, sts.Spec.Template.Spec.NodeSelector)
				}
			}
			beMain := container(t, be.Spec.Template.Spec, "starrocks")
			if strings.Join(beMain.Command, " ") != "/bin/sh /opt/managed-starrocks/be-start.sh /opt/starrocks/be/storage/spill" {
				t.Errorf("BE command %q", beMain.Command)
			}
			if got := fe.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String(); got != e.Frontend.Storage.Size {
				t.Errorf("FE PVC size %s, want %s", got, e.Frontend.Storage.Size)
			}
			if fe.Spec.Template.Annotations["checksum/config"] != e.Frontend.ConfigChecksum ||
				be.Spec.Template.Annotations["checksum/config"] != e.Backend.ConfigChecksum {
				t.Errorf("checksum annotations FE %q BE %q do not carry the configChecksum of the values",
					fe.Spec.Template.Annotations["checksum/config"], be.Spec.Template.Annotations["checksum/config"])
			}

			for _, name := range []string{n.FrontendHeadlessService, n.BackendHeadlessService} {
				svc := typed[corev1.Service](t, mustFind(t, objs, "Service", ns, name))
				if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
					t.Errorf("Service %s must be headless and publish not-ready addresses", name)
				}
			}
			client := typed[corev1.Service](t, mustFind(t, objs, "Service", ns, n.ClientService))
			// Clients use the MySQL protocol and the FE HTTP API over HTTPS;
			// plain HTTP stays for the instance itself and monitoring.
			ports := map[string]string{}
			for _, p := range client.Spec.Ports {
				ports[p.Name] = fmt.Sprintf("%d->%s", p.Port, p.TargetPort.String())
			}
			wantPorts := map[string]string{"mysql": "9030->fe-query", "http": "8030->fe-http", "https": "8443->fe-https"}
			if !reflect.DeepEqual(ports, wantPorts) || client.Spec.Selector["app.kubernetes.io/component"] != "frontend" {
				t.Errorf("client Service ports %v selector %v, want %v of the FEs", ports, client.Spec.Selector, wantPorts)
			}

			for _, kind := range []string{"PodDisruptionBudget"} {
				mustFind(t, objs, kind, ns, n.FrontendStatefulSet)
				mustFind(t, objs, kind, ns, n.BackendStatefulSet)
			}
			for _, o := range objs {
				if o.GetKind() == "PodMonitor" && o.GetNamespace() == ns {
					t.Errorf("PodMonitor %s rendered into the tenant namespace: the module's one PodMonitor covers every instance", o.GetName())
				}
			}
			// Nodes pull the module's images with the credentials Deckhouse
			// gives containerd: no registry Secret lands in a tenant namespace.
			for _, o := range objs {
				if o.GetKind() == "Secret" && o.GetNamespace() == ns {
					t.Errorf("Secret %s rendered into the tenant namespace", o.GetName())
				}
			}
			for _, sts := range []*appsv1.StatefulSet{fe, be} {
				if len(sts.Spec.Template.Spec.ImagePullSecrets) != 0 {
					t.Errorf("%s pods name imagePullSecrets %v", sts.Name, sts.Spec.Template.Spec.ImagePullSecrets)
				}
			}
			mustFind(t, objs, "ServiceAccount", ns, n.FrontendStatefulSet+"-agent")
			mustFind(t, objs, "RoleBinding", ns, n.FrontendStatefulSet+"-agent")
			role := typed[rbacv1.Role](t, mustFind(t, objs, "Role", ns, n.FrontendStatefulSet+"-agent"))
			var pods []string
			for i := 0; i < int(wantFE); i++ {
				pods = append(pods, fmt.Sprintf("%s-%d", n.FrontendStatefulSet, i))
			}
			want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "patch"}, ResourceNames: pods}}
			if !reflect.DeepEqual(role.Rules, want) {
				t.Errorf("agent Role rules %+v, want only get and patch on the FE pods %v", role.Rules, pods)
			}
		})
	}
}

func TestFrontendPod(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			e := entries(t, sc.sr)[0]
			objs := render(t, sc.settings, sc.sr)
			fe := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, e.Names.FrontendStatefulSet))
			spec := fe.Spec.Template.Spec
			if spec.ServiceAccountName != e.Names.FrontendStatefulSet+"-agent" {
				t.Errorf("serviceAccountName %q", spec.ServiceAccountName)
			}

			agent := container(t, spec, "agent")
			self := "$(POD_NAME)." + e.Names.FrontendHeadlessService + "." + e.Namespace + ".svc.cluster.local"
			wantArgs := []string{
				"--config=/etc/starrocks-agent/config/agent.json",
				"--tls-ca-file=/etc/starrocks/tls/ca.crt",
				"--credentials-dir=/etc/starrocks-agent/credentials",
				"--admin-credentials-dir=/etc/starrocks-agent/admin-credentials",
				"--pod-name=$(POD_NAME)",
				"--pod-namespace=$(POD_NAMESPACE)",
				"--self-host=" + self,
				"--listen=:8090",
				"--helper-file=/opt/starrocks/agent-run/fe-helper",
				"--meta-dir=/opt/starrocks/fe/meta",
				"--log-level=info",
			}
			if strings.Join(agent.Args, " ") != strings.Join(wantArgs, " ") {
				t.Errorf("agent args\n got %q\nwant %q", agent.Args, wantArgs)
			}
			if agent.ReadinessProbe == nil || agent.ReadinessProbe.HTTPGet.Path != "/readyz" || agent.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("agent probes %+v %+v", agent.ReadinessProbe, agent.LivenessProbe)
			}
			if !*agent.SecurityContext.ReadOnlyRootFilesystem {
				t.Errorf("agent root filesystem is writable")
			}

			sr := container(t, spec, "starrocks")
			feP := map[string]int32{}
			for _, p := range sr.Ports {
				feP[p.Name] = p.ContainerPort
			}
			if feP["fe-https"] != 8443 || feP["fe-query"] != 9030 || feP["fe-http"] != 8030 {
				t.Errorf("FE container ports %v, want fe-https 8443 beside fe-query 9030 and fe-http 8030", feP)
			}
			if strings.Join(sr.Command, " ") != "/bin/sh "+feStartPath {
				t.Errorf("FE command %q, want the start wrapper", sr.Command)
			}
			if sr.StartupProbe == nil || sr.StartupProbe.HTTPGet.Path != "/api/health" || sr.StartupProbe.HTTPGet.Port.String() != "fe-http" {
				t.Errorf("FE startup probe %+v", sr.StartupProbe)
			} else if budget := sr.StartupProbe.PeriodSeconds * sr.StartupProbe.FailureThreshold; budget < 600 {
				t.Errorf("FE startup probe gives a cold start %ds, want at least 10 minutes", budget)
			}
			var pw *corev1.EnvVar
			for i := range sr.Env {
				if sr.Env[i].Name == "STARROCKS_KEYSTORE_PASSWORD" {
					pw = &sr.Env[i]
				}
			}
			if pw == nil || pw.ValueFrom == nil || pw.ValueFrom.SecretKeyRef == nil ||
				pw.ValueFrom.SecretKeyRef.Name != e.TLS.KeystorePasswordSecretName || pw.ValueFrom.SecretKeyRef.Key != "password" {
				t.Errorf("FE keystore password env %+v, want the password key of %s", pw, e.TLS.KeystorePasswordSecretName)
			}

			mounts := func(c corev1.Container) map[string]string {
				m := map[string]string{}
				for _, vm := range c.VolumeMounts {
					m[vm.Name] = vm.MountPath
				}
				return m
			}
			am, sm := mounts(agent), mounts(sr)
			if am["credentials"] != "/etc/starrocks-agent/credentials" || am["admin-credentials"] != "/etc/starrocks-agent/admin-credentials" {
				t.Errorf("agent does not mount both credentials Secrets: %v", am)
			}
			const tokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"
			if am["kube-api-access"] != tokenDir {
				t.Errorf("agent does not mount its service-account token at %s: %v", tokenDir, am)
			}
			for _, v := range []string{"credentials", "admin-credentials", "kube-api-access"} {
				if _, ok := sm[v]; ok {
					t.Errorf("the StarRocks container mounts %s", v)
				}
			}
			if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
				t.Errorf("FE pod automounts the service-account token into every container")
			}
			if sm["meta"] != "/opt/starrocks/fe/meta" || sm["agent-run"] != "/opt/starrocks/agent-run" || am["agent-run"] != "/opt/starrocks/agent-run" {
				t.Errorf("FE mounts %v, agent mounts %v", sm, am)
			}
			secretItems := func(v corev1.Volume) string {
				var keys []string
				for _, it := range v.Secret.Items {
					keys = append(keys, it.Key)
				}
				return v.Secret.SecretName + " " + strings.Join(keys, ",")
			}
			for _, v := range spec.Volumes {
				if want := e.Names.AgentCredentialsSecret + " username,password,root-password"; v.Name == "credentials" && secretItems(v) != want {
					t.Errorf("credentials volume %q, want %q", secretItems(v), want)
				}
				if want := e.Names.CredentialsSecret + " username,password"; v.Name == "admin-credentials" && secretItems(v) != want {
					t.Errorf("admin-credentials volume %q, want %q", secretItems(v), want)
				}
				if v.Name == "kube-api-access" {
					p := v.Projected
					if p == nil || len(p.Sources) != 3 || p.Sources[0].ServiceAccountToken == nil || p.Sources[0].ServiceAccountToken.Path != "token" ||
						p.Sources[1].ConfigMap == nil || p.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
						p.Sources[2].DownwardAPI == nil || p.Sources[2].DownwardAPI.Items[0].Path != "namespace" {
						t.Errorf("kube-api-access volume %+v, want the token, kube-root-ca.crt and the namespace as the kubelet projects them", v.VolumeSource)
					}
				}
				if v.Name == "tls" && v.Secret.SecretName != e.TLS.SecretName {
					t.Errorf("tls volume from %q, want %q", v.Secret.SecretName, e.TLS.SecretName)
				}
			}
		})
	}
}

func TestConfigMap(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			e := entries(t, sc.sr)[0]
			objs := render(t, sc.settings, sc.sr)
			cm := typed[corev1.ConfigMap](t, mustFind(t, objs, "ConfigMap", e.Namespace, e.Names.ConfigMap))

			// The agent decodes agent.json into agentconfig.Config; so does the test,
			// rejecting keys the agent would not know.
			dec := json.NewDecoder(strings.NewReader(cm.Data["agent.json"]))
			dec.DisallowUnknownFields()
			var got agentconfig.Config
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("agent.json: %v", err)
			}
			if !reflect.DeepEqual(got, e.AgentConfig) {
				t.Errorf("agent.json\n got %+v\nwant %+v", got, e.AgentConfig)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("agent.json is not a valid agent config: %v", err)
			}

			fe := conf(cm.Data["fe.conf"])
			wantFE := map[string]string{
				"http_port":                   "8030",
				"rpc_port":                    "9020",
				"query_port":                  "9030",
				"edit_log_port":               "9010",
				"meta_dir":                    "/opt/starrocks/fe/meta",
				"catalog_trash_expire_second": "86400",
				"default_replication_num":     itoa(int64(e.Configuration.DefaultReplicationNum)),
				"ssl_keystore_location":       "/etc/starrocks/tls/keystore.p12",
				"ssl_keystore_password":       "${STARROCKS_KEYSTORE_PASSWORD}",
				"ssl_key_password":            "${STARROCKS_KEYSTORE_PASSWORD}",
				"ssl_force_secure_transport":  map[bool]string{true: "true", false: "false"}[e.TLS.RequireSecureTransport],
				// The FE HTTP API over HTTPS with the same keystore.
				"enable_https": "true",
				"https_port":   "8443",
			}
			for k, v := range wantFE {
				if fe[k] != v {
					t.Errorf("fe.conf %s = %q, want %q", k, fe[k], v)
				}
			}
			if !strings.Contains(fe["JAVA_OPTS"], "-Xmx"+itoa(e.Frontend.JavaHeapMb)+"m") {
				t.Errorf("fe.conf JAVA_OPTS %s lacks -Xmx%dm", fe["JAVA_OPTS"], e.Frontend.JavaHeapMb)
			}
			be := conf(cm.Data["be.conf"])
			wantBE := map[string]string{
				"be_port":                               "9060",
				"be_http_port":                          "8040",
				"heartbeat_service_port":                "9050",
				"brpc_port":                             "8060",
				"storage_root_path":                     "/opt/starrocks/be/storage",
				"mem_limit":                             itoa(e.Backend.MemLimitBytes),
				"streaming_load_max_mb":                 "10240",
				"load_process_max_memory_limit_percent": "30",
			}
			for k, v := range wantBE {
				if be[k] != v {
					t.Errorf("be.conf %s = %q, want %q", k, be[k], v)
				}
			}
			// The wrapper's default directories are where the FE pod mounts
			// the agent's run directory and the FE home.
			script, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), feStartScript))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"/opt/starrocks/agent-run}/fe-helper", "/opt/starrocks/fe}"} {
				if !strings.Contains(string(script), want) {
					t.Errorf("%s lacks %q", feStartScript, want)
				}
			}
			if _, ok := cm.Data["fe-start.sh"]; ok {
				t.Errorf("the instance ConfigMap carries fe-start.sh, which the FE image holds")
			}
			for k, v := range cm.Data {
				if strings.Contains(v, "password =") && !strings.Contains(v, "${STARROCKS_KEYSTORE_PASSWORD}") {
					t.Errorf("ConfigMap key %s holds a literal password", k)
				}
			}
		})
	}
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

func TestSchedulingFollowsTopology(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			e := entries(t, sc.sr)[0]
			objs := render(t, sc.settings, sc.sr)
			for _, name := range []string{e.Names.FrontendStatefulSet, e.Names.BackendStatefulSet} {
				sts := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, name))
				spec := sts.Spec.Template.Spec
				spread := false
				for _, c := range spec.TopologySpreadConstraints {
					if c.TopologyKey == "topology.kubernetes.io/zone" && c.WhenUnsatisfiable == corev1.DoNotSchedule && c.MaxSkew == 1 {
						spread = true
						for k, v := range sts.Spec.Selector.MatchLabels {
							if c.LabelSelector.MatchLabels[k] != v {
								t.Errorf("%s spread selector %v does not select its own pods", name, c.LabelSelector.MatchLabels)
							}
						}
					}
				}
				if spread != (e.Topology == "TransZonal") {
					t.Errorf("%s topology %s: zone spread constraint present = %v", name, e.Topology, spread)
				}
				zonal := false
				if a := spec.Affinity; a != nil && a.PodAffinity != nil {
					for _, term := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
						zonal = term.TopologyKey == "topology.kubernetes.io/zone" &&
							term.LabelSelector.MatchLabels["managed-services.deckhouse.io/managed-service-name"] == e.Name &&
							term.LabelSelector.MatchLabels["app.kubernetes.io/component"] == ""
					}
				}
				if zonal != (e.Topology == "Zonal") {
					t.Errorf("%s topology %s: every pod of the instance kept in one zone = %v", name, e.Topology, zonal)
				}
				var zones []string
				if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
					for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
						for _, ex := range term.MatchExpressions {
							if ex.Key == "topology.kubernetes.io/zone" && ex.Operator == corev1.NodeSelectorOpIn {
								zones = ex.Values
							}
						}
					}
				}
				if strings.Join(zones, ",") != strings.Join(e.Zones, ",") {
					t.Errorf("%s zone affinity %v, want %v", name, zones, e.Zones)
				}
			}
		})
	}
}

func TestCertificate(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			e := entries(t, sc.sr)[0]
			objs := render(t, sc.settings, sc.sr)
			c := mustFind(t, objs, "Certificate", e.Namespace, e.Names.FrontendStatefulSet)
			str := func(path ...string) string { s, _, _ := unstructured.NestedString(c.Object, path...); return s }
			// The instance's own CA Issuer; the admin's ClusterIssuer when set.
			ca := e.Names.FrontendStatefulSet + "-ca"
			wantKind, wantIssuer := "Issuer", ca
			if sc.name == "Cluster" {
				wantKind, wantIssuer = "ClusterIssuer", "corporate-ca"
			}
			if str("spec", "issuerRef", "name") != wantIssuer || str("spec", "issuerRef", "kind") != wantKind {
				t.Errorf("issuer %s %s, want %s %s", str("spec", "issuerRef", "kind"), str("spec", "issuerRef", "name"), wantKind, wantIssuer)
			}
			// The instance's CA exists either way, so switching the setting
			// back does not mint a new CA.
			issuer := mustFind(t, objs, "Issuer", e.Namespace, ca)
			if s, _, _ := unstructured.NestedString(issuer.Object, "spec", "ca", "secretName"); s != ca {
				t.Errorf("Issuer %s signs with Secret %q, want its own CA %s", ca, s, ca)
			}
			caCert := mustFind(t, objs, "Certificate", e.Namespace, ca)
			isCA, _, _ := unstructured.NestedBool(caCert.Object, "spec", "isCA")
			if ref, _, _ := unstructured.NestedStringMap(caCert.Object, "spec", "issuerRef"); !isCA || ref["kind"] != "ClusterIssuer" || ref["name"] != "d8-managed-starrocks-selfsigned" {
				t.Errorf("CA Certificate %s isCA %v issuer %v, want a CA from the self-signed ClusterIssuer", ca, isCA, ref)
			}
			if str("spec", "secretName") != e.TLS.SecretName {
				t.Errorf("secretName %s", str("spec", "secretName"))
			}
			dns, _, _ := unstructured.NestedStringSlice(c.Object, "spec", "dnsNames")
			if strings.Join(dns, ",") != strings.Join(e.TLS.DNSNames, ",") {
				t.Errorf("dnsNames %v, want %v", dns, e.TLS.DNSNames)
			}
			create, _, _ := unstructured.NestedBool(c.Object, "spec", "keystores", "pkcs12", "create")
			if !create || str("spec", "keystores", "pkcs12", "passwordSecretRef", "name") != e.TLS.KeystorePasswordSecretName ||
				str("spec", "keystores", "pkcs12", "passwordSecretRef", "key") != "password" ||
				str("spec", "keystores", "pkcs12", "profile") != "Modern2023" {
				t.Errorf("pkcs12 keystore %v", c.Object["spec"].(map[string]any)["keystores"])
			}
			if str("spec", "duration") != "2160h" || str("spec", "renewBefore") != "720h" {
				t.Errorf("duration %s renewBefore %s, want the setting defaults", str("spec", "duration"), str("spec", "renewBefore"))
			}
		})
	}
}

// Runtime-mutable settings reach StarRocks through the agent; only the
// restart-needing ones may change a pod template (and so roll the pods).
func TestOnlyRestartSettingsChangePodTemplates(t *testing.T) {
	podTemplates := func(t *testing.T, mutate func(*desiredConfig)) (fe, be string) {
		sr := starrocks("team-a", "solo", "Standalone")
		cfg := &desiredConfig{streaming: 10240, loadPercent: 30, trash: 86400}
		mutate(cfg)
		sr.Spec.Configuration = cfg.api()
		e := entries(t, sr)[0]
		objs := render(t, nil, sr)
		get := func(name string) string {
			o := mustFind(t, objs, "StatefulSet", e.Namespace, name)
			tpl, _, _ := unstructured.NestedMap(o.Object, "spec", "template")
			b, _ := json.Marshal(tpl)
			return string(b)
		}
		return get(e.Names.FrontendStatefulSet), get(e.Names.BackendStatefulSet)
	}
	baseFE, baseBE := podTemplates(t, func(*desiredConfig) {})
	cases := []struct {
		name             string
		mutate           func(*desiredConfig)
		feRolls, beRolls bool
	}{
		{"catalogTrashExpireSecond is applied at runtime", func(c *desiredConfig) { c.trash = 3600 }, false, false},
		{"streamingLoadMaxMb is applied at runtime", func(c *desiredConfig) { c.streaming = 20480 }, false, false},
		{"loadProcessMaxMemoryLimitPercent restarts the BEs", func(c *desiredConfig) { c.loadPercent = 50 }, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fe, be := podTemplates(t, tc.mutate)
			if (fe != baseFE) != tc.feRolls {
				t.Errorf("FE pod template changed = %v, want %v", fe != baseFE, tc.feRolls)
			}
			if (be != baseBE) != tc.beRolls {
				t.Errorf("BE pod template changed = %v, want %v", be != baseBE, tc.beRolls)
			}
		})
	}
}

type desiredConfig struct {
	streaming, trash int64
	loadPercent      int32
}

func (c *desiredConfig) api() *v1alpha1.Configuration {
	return &v1alpha1.Configuration{StreamingLoadMaxMb: &c.streaming, LoadProcessMaxMemoryLimitPercent: &c.loadPercent, CatalogTrashExpireSecond: &c.trash}
}

func TestModuleObjects(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		globalHA bool
		wantHA   bool
	}{
		{"one webhook replica by default", nil, false, false},
		{"the cluster-wide highAvailability applies when the module has none", nil, true, true},
		{"the module setting wins over the cluster-wide default", map[string]any{"highAvailability": false}, true, false},
		{"the module setting turns HA on", map[string]any{"highAvailability": true, "logLevel": "Debug", "instances": map[string]any{"maxCount": 40, "maxPerNamespace": 7}}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := chartrender.DefaultGlobals()
			g["highAvailability"] = tc.globalHA
			r, err := chartrender.Default()
			if err != nil {
				t.Fatal(err)
			}
			objs, err := r.Render(moduleValues(t, tc.settings), g)
			if err != nil {
				t.Fatal(err)
			}
			const ns = chartrender.Namespace
			mustFind(t, objs, "Namespace", "", ns)
			reg := typed[corev1.Secret](t, mustFind(t, objs, "Secret", ns, "managed-starrocks-module-registry"))
			if reg.Type != corev1.SecretTypeDockerConfigJson || !strings.Contains(string(reg.Data[".dockerconfigjson"]), "bW9kdWxlczpzZWNyZXQ=") {
				t.Errorf("registry secret %s %q, want the ModuleSource's credentials", reg.Type, reg.Data[".dockerconfigjson"])
			}
			tls := typed[corev1.Secret](t, mustFind(t, objs, "Secret", ns, "managed-starrocks-webhook-tls"))
			cert := webhookCert(t)
			if string(tls.Data["tls.crt"]) != cert["crt"] || string(tls.Data["tls.key"]) != cert["key"] || string(tls.Data["ca.crt"]) != cert["ca"] {
				t.Errorf("webhook TLS Secret does not carry internal.webhookCert")
			}
			d := typed[appsv1.Deployment](t, mustFind(t, objs, "Deployment", ns, "webhook"))
			wantReplicas := map[bool]int32{true: 2, false: 1}[tc.wantHA]
			if *d.Spec.Replicas != wantReplicas {
				t.Errorf("webhook replicas %d, want %d", *d.Spec.Replicas, wantReplicas)
			}
			pdb := typed[policyv1.PodDisruptionBudget](t, mustFind(t, objs, "PodDisruptionBudget", ns, "webhook"))
			if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
				t.Errorf("webhook PDB maxUnavailable %v, want 1 (a lone replica must stay evictable)", pdb.Spec.MaxUnavailable)
			}
			wh := container(t, d.Spec.Template.Spec, "webhook")
			wantArgs := "--listen=:9443 --tls-cert-file=/etc/webhook/certs/tls.crt --tls-key-file=/etc/webhook/certs/tls.key --health-listen=:8080"
			if strings.Join(wh.Args, " ") != wantArgs {
				t.Errorf("webhook args %q", wh.Args)
			}
			wantLevel := "info"
			if tc.settings["logLevel"] == "Debug" {
				wantLevel = "debug"
			}
			wantMax, wantPerNS := strconv.Itoa(desired.DefaultMaxInstances), "0"
			if in, ok := tc.settings["instances"].(map[string]any); ok {
				wantMax = fmt.Sprint(in["maxCount"])
				if n, ok := in["maxPerNamespace"]; ok {
					wantPerNS = fmt.Sprint(n)
				}
			}
			if len(wh.Env) != 3 || wh.Env[0].Name != "LOG_LEVEL" || wh.Env[0].Value != wantLevel ||
				wh.Env[1].Name != "MAX_INSTANCES" || wh.Env[1].Value != wantMax ||
				wh.Env[2].Name != "MAX_PER_NAMESPACE" || wh.Env[2].Value != wantPerNS {
				t.Errorf("webhook env %+v, want LOG_LEVEL=%s MAX_INSTANCES=%s (settings.instances.maxCount) MAX_PER_NAMESPACE=%s (settings.instances.maxPerNamespace)", wh.Env, wantLevel, wantMax, wantPerNS)
			}
			svc := typed[corev1.Service](t, mustFind(t, objs, "Service", ns, "managed-starrocks-webhook"))
			if svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.String() != "https" {
				t.Errorf("webhook Service ports %+v", svc.Spec.Ports)
			}
			vwc := typed[admissionregistrationv1.ValidatingWebhookConfiguration](t, mustFind(t, objs, "ValidatingWebhookConfiguration", "", "d8-managed-starrocks"))
			mwc := typed[admissionregistrationv1.MutatingWebhookConfiguration](t, mustFind(t, objs, "MutatingWebhookConfiguration", "", "d8-managed-starrocks"))
			got := map[string]admissionregistrationv1.FailurePolicyType{}
			check := func(cc admissionregistrationv1.WebhookClientConfig, fp *admissionregistrationv1.FailurePolicyType, timeout *int32, se *admissionregistrationv1.SideEffectClass) {
				got[*cc.Service.Path] = *fp
				if string(cc.CABundle) != cert["ca"] {
					t.Errorf("%s caBundle %q, want internal.webhookCert.ca", *cc.Service.Path, cc.CABundle)
				}
				if cc.Service.Name != "managed-starrocks-webhook" || cc.Service.Namespace != ns || *cc.Service.Port != 443 {
					t.Errorf("%s service %+v", *cc.Service.Path, cc.Service)
				}
				if *timeout != 5 || *se != admissionregistrationv1.SideEffectClassNone {
					t.Errorf("%s timeout %d sideEffects %s", *cc.Service.Path, *timeout, *se)
				}
			}
			for _, w := range vwc.Webhooks {
				check(w.ClientConfig, w.FailurePolicy, w.TimeoutSeconds, w.SideEffects)
			}
			for _, w := range mwc.Webhooks {
				check(w.ClientConfig, w.FailurePolicy, w.TimeoutSeconds, w.SideEffects)
			}
			want := map[string]admissionregistrationv1.FailurePolicyType{
				"/validate-starrocks": "Ignore", "/mutate-starrocks": "Ignore",
				"/validate-starrocksclass": "Ignore", "/mutate-starrocksclass": "Ignore",
				"/validate-starrocksbackup": "Ignore",
			}
			if b1, b2 := mustJSON(got), mustJSON(want); b1 != b2 {
				t.Errorf("webhook paths and failure policies %s, want %s", b1, b2)
			}
			cr := mustFind(t, objs, "ClusterRole", "", "d8:managed-starrocks:webhook")
			rules, _, _ := unstructured.NestedSlice(cr.Object, "rules")
			if mustJSON(rules) != `[{"apiGroups":["managed-services.deckhouse.io"],"resources":["starrocksclasses"],"verbs":["get","list","watch"]},{"apiGroups":["managed-services.deckhouse.io"],"resources":["starrocks"],"verbs":["list","watch","get"]},{"apiGroups":[""],"resources":["namespaces"],"verbs":["list","watch"]},{"apiGroups":["managed-services.deckhouse.io"],"resources":["starrocksbackups"],"verbs":["get","list"]}]` {
				t.Errorf("webhook ClusterRole rules %s", mustJSON(rules))
			}
		})
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// One PodMonitor in the module's namespace scrapes every instance; the
// labels the alerts and dashboards group by come from the pods.
func TestPodMonitorLabelsWhatAlertsGroupBy(t *testing.T) {
	sc := scenarios()[1]
	e := entries(t, sc.sr)[0]
	objs := render(t, sc.settings, sc.sr)
	pm := mustFind(t, objs, "PodMonitor", chartrender.Namespace, "managed-starrocks-instances")
	if anyNS, _, _ := unstructured.NestedBool(pm.Object, "spec", "namespaceSelector", "any"); !anyNS {
		t.Errorf("the PodMonitor does not look in every namespace")
	}
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	if pm.GetLabels()["prometheus"] != "main" || len(sel) == 0 {
		t.Fatalf("PodMonitor labels %v selector %v", pm.GetLabels(), sel)
	}
	// The selector picks the pods of both StatefulSets.
	for _, name := range []string{e.Names.FrontendStatefulSet, e.Names.BackendStatefulSet} {
		sts := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, name))
		for k, v := range sel {
			if sts.Spec.Template.Labels[k] != v {
				t.Errorf("pods of %s lack the PodMonitor's selector label %s=%s", name, k, v)
			}
		}
	}
	ns := mustFind(t, objs, "Namespace", "", chartrender.Namespace)
	if ns.GetLabels()["prometheus.deckhouse.io/monitor-watcher-enabled"] != "true" {
		t.Errorf("the module namespace lacks the label that lets Deckhouse's Prometheus read its monitors")
	}
	if v, ok := ns.GetLabels()["extended-monitoring.deckhouse.io/enabled"]; !ok || v != "" {
		t.Errorf("the module namespace lacks extended-monitoring.deckhouse.io/enabled: \"\" (Deckhouse's extended monitoring of the module's own workloads)")
	}
	if ns.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the module namespace lacks helm.sh/resource-policy: keep: a disable would delete the module's memory")
	}
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	got := map[string]string{}
	for _, raw := range eps {
		ep := raw.(map[string]any)
		component, instanceFrom := "", ""
		for _, r := range ep["relabelings"].([]any) {
			rl := r.(map[string]any)
			switch rl["targetLabel"] {
			case "component":
				component, _ = rl["replacement"].(string)
			case "instance_name":
				instanceFrom = mustJSON(rl["sourceLabels"])
			}
		}
		if instanceFrom != `["__meta_kubernetes_pod_label_app_kubernetes_io_instance"]` || ep["path"] != "/metrics" {
			t.Errorf("endpoint %v: instance_name from %s path %v", ep["port"], instanceFrom, ep["path"])
		}
		got[ep["port"].(string)] = component
	}
	want := map[string]string{"fe-http": "frontend", "be-http": "backend", "cn-http": "compute", "agent-http": "agent"}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("scraped ports and their component label %v, want %v", got, want)
	}
	sts := typed[appsv1.StatefulSet](t, mustFind(t, objs, "StatefulSet", e.Namespace, e.Names.FrontendStatefulSet))
	if sts.Spec.Template.Labels["app.kubernetes.io/instance"] != e.Name {
		t.Errorf("FE pods carry app.kubernetes.io/instance %q, want the instance name %q", sts.Spec.Template.Labels["app.kubernetes.io/instance"], e.Name)
	}
}

func TestWebhookPlacementFollowsModuleSettings(t *testing.T) {
	settings := map[string]any{
		"nodeSelector": map[string]any{"node-role.deckhouse.io/system": ""},
		"tolerations":  []any{map[string]any{"key": "dedicated.deckhouse.io", "operator": "Equal", "value": "system", "effect": "NoExecute"}},
	}
	objs, err := renderValues(moduleValues(t, settings))
	if err != nil {
		t.Fatal(err)
	}
	d := typed[appsv1.Deployment](t, mustFind(t, objs, "Deployment", chartrender.Namespace, "webhook"))
	spec := d.Spec.Template.Spec
	if v, ok := spec.NodeSelector["node-role.deckhouse.io/system"]; !ok || v != "" || len(spec.NodeSelector) != 1 {
		t.Errorf("webhook nodeSelector %v", spec.NodeSelector)
	}
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated.deckhouse.io" || spec.Tolerations[0].Effect != corev1.TaintEffectNoExecute {
		t.Errorf("webhook tolerations %+v", spec.Tolerations)
	}
}

// A Secret or ConfigMap volume without the "other" read bit is readable by a
// non-root process only through the pod's fsGroup.
func TestRestrictedVolumesAreReadableByTheNonRootUser(t *testing.T) {
	for _, sc := range scenarios() {
		for _, o := range render(t, sc.settings, sc.sr) {
			var spec corev1.PodSpec
			switch o.GetKind() {
			case "StatefulSet":
				spec = typed[appsv1.StatefulSet](t, o).Spec.Template.Spec
			case "Deployment":
				spec = typed[appsv1.Deployment](t, o).Spec.Template.Spec
			default:
				continue
			}
			for _, v := range spec.Volumes {
				var mode *int32
				switch {
				case v.Secret != nil:
					mode = v.Secret.DefaultMode
				case v.ConfigMap != nil:
					mode = v.ConfigMap.DefaultMode
				default:
					continue
				}
				restricted := mode != nil && *mode&0o004 == 0
				if restricted && (spec.SecurityContext == nil || spec.SecurityContext.FSGroup == nil) {
					t.Errorf("%s %s/%s: volume %s has mode %o but the pod sets no fsGroup", o.GetKind(), o.GetNamespace(), o.GetName(), v.Name, *mode)
				}
			}
		}
	}
}

// The priority of an instance's pods is its class's: a tenant's pods
// preempt other workloads only as far as the admin who published the class
// allows; a class that names none gives them the cluster's default.
func TestInstancePodsHaveTheirClassesPriority(t *testing.T) {
	sr := starrocks("team-a", "solo", v1alpha1.TypeStandalone)
	for _, pc := range []string{"", "production-medium"} {
		class := testClass()
		class.Spec.PriorityClassName = pc
		out := desired.Compute(desired.Input{Instances: []*v1alpha1.Starrocks{sr}, Classes: []*v1alpha1.StarrocksClass{class}, ClusterDomain: "cluster.local"})
		objs, err := renderValues(checkedValues(t, out.Instances, nil))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range objs {
			if o.GetKind() != "StatefulSet" || o.GetNamespace() != "team-a" {
				continue
			}
			n++
			if got := typed[appsv1.StatefulSet](t, o).Spec.Template.Spec.PriorityClassName; got != pc {
				t.Errorf("class priorityClassName %q: %s priorityClassName %q", pc, o.GetName(), got)
			}
		}
		if n == 0 {
			t.Fatalf("class priorityClassName %q: no StatefulSet rendered", pc)
		}
	}
}

// Deckhouse's conventions for the instance pods (dmt's container rules): an
// ephemeral-storage request on every container.
func TestInstancePodsRequestEphemeralStorage(t *testing.T) {
	for _, sc := range scenarios() {
		for _, o := range render(t, sc.settings, sc.sr) {
			if o.GetKind() != "StatefulSet" {
				continue
			}
			spec := typed[appsv1.StatefulSet](t, o).Spec.Template.Spec
			for _, c := range append(spec.InitContainers, spec.Containers...) {
				if _, ok := c.Resources.Requests[corev1.ResourceEphemeralStorage]; !ok {
					t.Errorf("%s/%s container %s requests no ephemeral-storage", o.GetNamespace(), o.GetName(), c.Name)
				}
			}
		}
	}
}

// The FE host names come from the cluster domain Deckhouse passes; without
// it rendering fails instead of guessing one.
func TestClusterDomainIsRequired(t *testing.T) {
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	globals := chartrender.DefaultGlobals()
	globals["discovery"] = map[string]any{}
	_, err = r.Render(moduleValues(t, nil, scenarios()[0].sr), globals)
	if err == nil || !strings.Contains(err.Error(), "without global.discovery.clusterDomain") {
		t.Errorf("render without global.discovery.clusterDomain: %v, want it required", err)
	}
}
