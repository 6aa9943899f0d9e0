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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubectlrun"
	"github.com/deckhouse/managed-starrocks/dev/testpki"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/admission"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/app"
)

// webhookDNSNames are the names of the webhook's serving certificate in the
// cluster (the first is its common name); MustIssue adds 127.0.0.1, which the
// test dials.
var webhookDNSNames = []string{"managed-starrocks-webhook", "localhost", "managed-starrocks-webhook.d8-managed-starrocks.svc"}

// Webhook names as the apiserver prints them in a denial.
const (
	validateSRName     = "validate-starrocks.managed-services.deckhouse.io"
	mutateSRName       = "mutate-starrocks.managed-services.deckhouse.io"
	validateClassName  = "validate-starrocksclass.managed-services.deckhouse.io"
	mutateClassName    = "mutate-starrocksclass.managed-services.deckhouse.io"
	validateBackupName = "validate-starrocksbackup.managed-services.deckhouse.io"
	ns                 = "analytics"
)

// TestEndToEnd runs the real webhook server against a real kube-apiserver
// that calls it over TLS, and drives it with kubectl-equivalent client calls.
func TestEndToEnd(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{controlplane.ModuleCRDDir()}})
	cfg := cp.RESTConfig()
	dyn := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)

	// A class with a CEL rule that does not compile, stored before the
	// webhooks exist (as after an upgrade from a version without them).
	broken := smallClass("broken")
	broken.Spec.Validations = []v1alpha1.ValidationRule{{Rule: "frontend.cpu.cores >", Message: "x"}}
	create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", broken)

	ca := testpki.MustCA(t, "managed-starrocks-webhook test CA")
	first := ca.MustIssue(t, webhookDNSNames...)
	certs := testpki.NewSecretVolume(t, first.SecretData(ca))
	wh := startWebhook(ctx, t, cp.KubeconfigPath(), certs)
	webhookAddr, healthAddr := wh.webhookAddr, wh.healthAddr
	registerWebhooks(ctx, t, kube, webhookAddr, ca.CertPEM)
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	waitWebhooksActive(ctx, t, dyn)

	t.Run("class webhooks", func(t *testing.T) {
		// Normalised on the way in: policies sorted by cores, fractions
		// deduplicated, the only allowed topology made the default (the CRD
		// requires defaultTopology, so this admission needs the mutation).
		c := smallClass("small")
		c.Spec.SizingPolicies[0], c.Spec.SizingPolicies[1] = c.Spec.SizingPolicies[1], c.Spec.SizingPolicies[0]
		c.Spec.SizingPolicies[1].CoreFractions = []int32{100, 50, 25, 50}
		c.Spec.Topology.AllowedTopologies = []v1alpha1.Topology{v1alpha1.TopologyZonal}
		c.Spec.Topology.DefaultTopology = ""
		create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", c)
		var stored v1alpha1.StarrocksClass
		get(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", "small", &stored)
		if stored.Spec.SizingPolicies[0].Cores.Min != 1 || fmt.Sprint(stored.Spec.SizingPolicies[0].CoreFractions) != "[25 50 100]" {
			t.Errorf("stored policies not normalised: %+v", stored.Spec.SizingPolicies)
		}
		if stored.Spec.Topology.DefaultTopology != v1alpha1.TopologyZonal {
			t.Errorf("stored defaultTopology %q, want Zonal", stored.Spec.Topology.DefaultTopology)
		}

		wide := smallClass("wide")
		wide.Spec.Topology = v1alpha1.ClassTopology{
			AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyZonal, v1alpha1.TopologyTransZonal},
			DefaultTopology:   v1alpha1.TopologyZonal, AllowedZones: []string{"zone-a"},
		}
		create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", wide)

		create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", withClass("limited", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Accounts = &v1alpha1.ClassAccounts{MaxUsers: ptr(int32(1)), ForbiddenBuiltinRoles: []string{"db_admin"}}
		}))
	})

	type badCase struct {
		name string
		obj  runtime.Object
		want string // a substring of the webhook's message
	}
	classCases := []badCase{
		{"CEL rule that does not compile", withClass("c1", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "backend.cpu.cores >>", Message: "x"})
		}), "the CEL rule does not compile"},
		{"CEL rule that is not boolean", withClass("c2", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "backend.cpu.cores + 1", Message: "x"})
		}), "must evaluate to bool"},
		{"CEL rule naming an unknown variable", withClass("c3", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Validations = append(c.Spec.Validations, v1alpha1.ValidationRule{Rule: "disk.size > 0", Message: "x"})
		}), "undeclared reference to 'disk'"},
		{"node selector pinning a zone that is not allowed", withClass("c4", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Topology.AllowedZones = []string{"zone-a"}
			c.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "zone-b"}
		}), "pins a zone that is not allowed"},
	}
	srCases := []badCase{
		{"class that does not exist", instance("i01", func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "nope" }),
			`StarrocksClass "nope" does not exist`},
		{"class that is itself invalid", instance("i02", func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "broken" }),
			`StarrocksClass "broken" is invalid`},
		{"FE cores in no policy", instance("i03", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.CPU.Cores = 32 }),
			"spec.frontend.cpu.cores: 32 cores fall into no sizing policy"},
		{"BE cores in no policy", instance("i04", func(sr *v1alpha1.Starrocks) { sr.Spec.Backend.CPU.Cores = 17 }),
			"spec.backend.cpu.cores: 17 cores fall into no sizing policy"},
		{"FE memory below the policy minimum", instance("i05", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.Memory.Size = q("1Gi") }),
			"spec.frontend.memory.size: memory is below the minimum of the policy for 1-4 cores (value 1Gi"},
		{"FE memory above the policy maximum", instance("i06", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.Memory.Size = q("32Gi") }),
			"spec.frontend.memory.size: memory is above the maximum of the policy for 1-4 cores (value 32Gi"},
		{"BE memory above the policy maximum", instance("i07", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backend.CPU.Cores = 8
			sr.Spec.Backend.Memory.Size = q("128Gi")
		}), "spec.backend.memory.size: memory is above the maximum of the policy for 5-16 cores"},
		{"FE memory off the 1Gi step", instance("i08", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.Memory.Size = q("4500Mi") }),
			"spec.frontend.memory.size: memory must be a multiple of 1Gi (value 4500Mi"},
		{"BE memory off the 2Gi step", instance("i09", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backend.CPU.Cores = 8
			sr.Spec.Backend.Memory.Size = q("17Gi")
		}), "spec.backend.memory.size: memory must be a multiple of 2Gi (value 17Gi"},
		{"FE core fraction not in the policy", instance("i10", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.CPU.CoreFraction = 10 }),
			"spec.frontend.cpu.coreFraction: core fraction 10% is not one the policy for 1-4 cores allows"},
		{"BE core fraction not in the policy", instance("i11", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backend.CPU.Cores = 8
			sr.Spec.Backend.Memory.Size = q("16Gi")
			sr.Spec.Backend.CPU.CoreFraction = 50
		}), "spec.backend.cpu.coreFraction: core fraction 50% is not one the policy for 5-16 cores allows"},
		{"topology the class does not allow", instance("i12", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
		}), "spec.cluster.topology: topology TransZonal is not allowed by the class"},
		{"TransZonal in a class with one zone", instance("i13", func(sr *v1alpha1.Starrocks) {
			sr.Spec.StarrocksClassName = "wide"
			sr.Spec.Cluster = &v1alpha1.ClusterSpec{Topology: v1alpha1.TopologyTransZonal}
		}), "the class allows only one zone"},
		{"configuration key the class does not let users set", instance("i14", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Configuration = &v1alpha1.Configuration{LoadProcessMaxMemoryLimitPercent: ptr(int32(50))}
		}), "spec.configuration.loadProcessMaxMemoryLimitPercent: loadProcessMaxMemoryLimitPercent is not overridable in this class"},
		{"CEL: streaming load above the class cap", instance("i15", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(8192))}
		}), "streaming loads above 4 GiB are not offered in this class"},
		{"CEL: recycle bin shorter than ten minutes", instance("i16", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Configuration = &v1alpha1.Configuration{CatalogTrashExpireSecond: ptr(int64(60))}
		}), "dropped tables must stay recoverable for at least 10 minutes"},
		{"CEL: BE with less memory than FE", instance("i17", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Frontend.Memory.Size = q("12Gi")
			sr.Spec.Backend.Memory.Size = q("8Gi")
		}), "a BE needs at least as much memory as the FE"},
		{"CEL: FE with more cores than BE", instance("i18", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Frontend.CPU.Cores = 4
			sr.Spec.Backend.CPU.Cores = 2
		}), "the FE must not have more cores than a BE"},
		{"CEL: Standalone volume above 500Gi", instance("i19", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backend.PersistentVolumeClaim.Size = q("1Ti")
		}), "Standalone instances get at most 500Gi of BE storage; order a Cluster"},
		{"CEL: Cluster with more than five BEs", instance("i20", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Type = v1alpha1.TypeCluster
			sr.Spec.Backend.Replicas = ptr(int32(6))
		}), "this class offers at most 5 BEs"},
		{"CEL: guaranteed CPU share under 50% for a Cluster BE", instance("i21", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Type = v1alpha1.TypeCluster
			sr.Spec.Backend.Replicas = ptr(int32(3))
			sr.Spec.Backend.CPU.CoreFraction = 25
		}), "Cluster BEs need a guaranteed CPU share of at least 50%"},
		// Names the CRD schema lets through but the class rules reserve.
		{"user root", withAccounts("i23", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Name = "root" }),
			"spec.users[0].name: user root is reserved"},
		{"user d8_agent", withAccounts("i24", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Name = "d8_agent" }),
			"spec.users[0].name: user d8_agent is reserved"},
		{"role d8ms_managed", withAccounts("i25", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Name = "d8ms_managed" }),
			"spec.roles[0].name: role d8ms_managed is reserved"},
		{"database on", withAccounts("i26", func(sr *v1alpha1.Starrocks) { sr.Spec.Databases[0].Name = "on" }),
			"spec.databases[0].name: a database may not be called on"},
		{"user with an undeclared role", withAccounts("i27", func(sr *v1alpha1.Starrocks) { sr.Spec.Users[0].Roles = []string{"writer"} }),
			"spec.users[0].roles[0]: role writer is neither declared in spec.roles nor one of the built-in roles"},
		{"privileges on an undeclared database", withAccounts("i28", func(sr *v1alpha1.Starrocks) { sr.Spec.Roles[0].Privileges[0].Database = "other" }),
			"spec.roles[0].privileges[0].database: database other is not declared in spec.databases"},
		{"more users than the class allows", withAccounts("i29", func(sr *v1alpha1.Starrocks) {
			sr.Spec.StarrocksClassName = "limited"
			sr.Spec.Users = append(sr.Spec.Users, v1alpha1.User{Name: "etl"})
		}), `spec.users: the class allows at most 1 users, the spec declares 2 (value 2; class "limited" accounts.maxUsers 1)`},
		{"a built-in role the class forbids", withAccounts("i30", func(sr *v1alpha1.Starrocks) {
			sr.Spec.StarrocksClassName = "limited"
			sr.Spec.Users[0].Roles = []string{"db_admin"}
		}), "spec.users[0].roles[0]: the built-in role db_admin is not offered in this class"},
		{"two broken rules report both", instance("i22", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Frontend.CPU.Cores = 32
			sr.Spec.Backend.Memory.Size = q("4500Mi")
		}), "32 cores fall into no sizing policy of the class (value 32; class \"small\" sizingPolicies cores ranges [1-4], [5-16]); spec.backend.memory.size"},
	}

	rejected := map[string]bool{}
	t.Run("bad objects are rejected with the rule and its message", func(t *testing.T) {
		for _, tc := range append(classCases, srCases...) {
			t.Run(tc.name, func(t *testing.T) {
				gvr, namespace := v1alpha1.StarrocksGVR, ns
				webhook := validateSRName
				if _, ok := tc.obj.(*v1alpha1.StarrocksClass); ok {
					gvr, namespace, webhook = v1alpha1.StarrocksClassGVR, "", validateClassName
				}
				_, err := dyn.Resource(gvr).Namespace(namespace).Create(ctx, toUnstructured(t, tc.obj), metav1.CreateOptions{})
				if err == nil {
					t.Fatalf("created; want rejection with %q", tc.want)
				}
				msg := err.Error()
				prefix := fmt.Sprintf("admission webhook %q denied the request", webhook)
				if !strings.Contains(msg, prefix) || !strings.Contains(msg, tc.want) {
					t.Fatalf("rejection\n  %s\nwant it from %s containing\n  %s", msg, webhook, tc.want)
				}
				// Forbidden: kubectl prints a Forbidden denial whole (see
				// admission.forbidden); each field is named once.
				if !apierrors.IsForbidden(err) {
					t.Errorf("rejection reason %q, want Forbidden", apierrors.ReasonForError(err))
				}
				if field, _, ok := strings.Cut(tc.want, ": "); ok && strings.HasPrefix(field, "spec.") && strings.Count(msg, field+":") != 1 {
					t.Errorf("rejection names %s more than once:\n  %s", field, msg)
				}
				rejected[tc.name] = true
			})
		}
	})
	if len(rejected) < 20 {
		t.Fatalf("%d distinct bad objects rejected by the webhooks, want at least 20", len(rejected))
	}

	t.Run("valid instances are admitted and defaulted", func(t *testing.T) {
		create(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, instance("sales", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backend.CPU.CoreFraction = 50
			sr.Spec.Configuration = &v1alpha1.Configuration{StreamingLoadMaxMb: ptr(int64(2048))}
		}))
		var got v1alpha1.Starrocks
		get(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, "sales", &got)
		s := got.Spec
		checks := []struct {
			what      string
			got, want any
		}{
			{"frontend.cpu.coreFraction (largest of the policy)", s.Frontend.CPU.CoreFraction, int32(100)},
			{"backend.cpu.coreFraction (the user's)", s.Backend.CPU.CoreFraction, int32(50)},
			{"cluster.topology (class default)", topologyOf(s), v1alpha1.TopologyZonal},
			{"configuration.streamingLoadMaxMb (the user's)", deref(s.Configuration.StreamingLoadMaxMb), int64(2048)},
			{"configuration.catalogTrashExpireSecond (left out: follows the class, not written)", s.Configuration.CatalogTrashExpireSecond == nil, true},
			{"configuration.loadProcessMaxMemoryLimitPercent (not overridable: not written)", s.Configuration.LoadProcessMaxMemoryLimitPercent == nil, true},
		}
		for _, c := range checks {
			if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
				t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
			}
		}

		create(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, instance("warehouse", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Type = v1alpha1.TypeCluster
			sr.Spec.Backend.Replicas = ptr(int32(5))
			sr.Spec.Backend.CPU.Cores = 8
			sr.Spec.Backend.Memory.Size = q("32Gi")
		}))
	})

	// A StarrocksBackup names an instance of its namespace with spec.backup:
	// the webhook reads the instance live and says which rule.
	t.Run("a StarrocksBackup of a missing instance or one without spec.backup is rejected", func(t *testing.T) {
		for _, tc := range []struct{ instance, want string }{
			{"nowhere", `spec.instanceName: there is no Starrocks "nowhere" in namespace analytics`},
			{"sales", `spec.instanceName: Starrocks "sales" has no spec.backup`},
		} {
			b := &v1alpha1.StarrocksBackup{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.BackupKind},
				ObjectMeta: metav1.ObjectMeta{Name: "now-" + tc.instance, Namespace: ns}, Spec: v1alpha1.StarrocksBackupSpec{InstanceName: tc.instance}}
			_, err := dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).Create(ctx, toUnstructured(t, b), metav1.CreateOptions{})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", validateBackupName)) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("StarrocksBackup of %s: %v, want a denial with %q", tc.instance, err, tc.want)
			}
		}
	})

	// An instance has at most its class's spec.backup.maxBackups
	// StarrocksBackups: the webhook lists them live and names the limit.
	t.Run("a StarrocksBackup beyond its instance's limit is rejected", func(t *testing.T) {
		create(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", withClass("backups", func(c *v1alpha1.StarrocksClass) {
			c.Spec.Backup = &v1alpha1.ClassBackupPolicy{Allowed: true, MaxBackups: ptr(int32(2))}
		}))
		create(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, instance("backed", func(sr *v1alpha1.Starrocks) {
			sr.Spec.StarrocksClassName = "backups"
			sr.Spec.Backup = &v1alpha1.BackupSpec{Storage: v1alpha1.BackupStorage{Endpoint: "https://s3.example.com", Bucket: "team-backups",
				CredentialsSecretRef: v1alpha1.BackupCredentialsRef{Name: "s3-keys"}}}
		}))
		backup := func(name string) error {
			b := &v1alpha1.StarrocksBackup{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.BackupKind},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.StarrocksBackupSpec{InstanceName: "backed"}}
			_, err := dyn.Resource(v1alpha1.StarrocksBackupGVR).Namespace(ns).Create(ctx, toUnstructured(t, b), metav1.CreateOptions{})
			return err
		}
		for _, name := range []string{"backed-1", "backed-2"} {
			if err := backup(name); err != nil {
				t.Fatalf("StarrocksBackup %s within the limit: %v", name, err)
			}
		}
		err := backup("backed-3")
		want := `spec.instanceName: Starrocks "backed" has 2 StarrocksBackups, the most its class allows`
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", validateBackupName)) ||
			!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `class "backups" backup.maxBackups 2`) {
			t.Errorf("the third StarrocksBackup: %v, want a denial with %q and the limit", err, want)
		}
	})

	t.Run("updates", func(t *testing.T) {
		update := func(name string, edit func(sr *v1alpha1.Starrocks)) error {
			var sr v1alpha1.Starrocks
			get(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, name, &sr)
			edit(&sr)
			_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Update(ctx, toUnstructured(t, &sr), metav1.UpdateOptions{})
			return err
		}
		if err := update("warehouse", func(sr *v1alpha1.Starrocks) {
			sr.Spec.Backend.Replicas = ptr(int32(4))
			sr.Spec.Backend.PersistentVolumeClaim.Size = q("200Gi")
		}); err != nil {
			t.Errorf("scale-in by one with a growing volume rejected: %v", err)
		}
		rejectedUpdates := []struct {
			name string
			edit func(sr *v1alpha1.Starrocks)
			want string
		}{
			{"memory off the step", func(sr *v1alpha1.Starrocks) { sr.Spec.Backend.Memory.Size = q("33Gi") },
				"spec.backend.memory.size: memory must be a multiple of 2Gi"},
			{"a key the class does not let users set", func(sr *v1alpha1.Starrocks) {
				sr.Spec.Configuration = &v1alpha1.Configuration{LoadProcessMaxMemoryLimitPercent: ptr(int32(40))}
			}, "loadProcessMaxMemoryLimitPercent is not overridable"},
			// The CRD's transition rules answer these before the validating
			// webhook is called; the webhook repeats them for objects written
			// around the schema (see classrules.ValidateUpdate).
			{"BE scale-in by two", func(sr *v1alpha1.Starrocks) { sr.Spec.Backend.Replicas = ptr(int32(2)) },
				"spec.backend.replicas: Invalid value: the smallest BE count allowed now is the count in effect minus one"},
			{"shrinking volume", func(sr *v1alpha1.Starrocks) { sr.Spec.Backend.PersistentVolumeClaim.Size = q("100Gi") },
				"persistentVolumeClaim.size cannot shrink"},
			{"Cluster to Standalone", func(sr *v1alpha1.Starrocks) {
				sr.Spec.Type = v1alpha1.TypeStandalone
				sr.Spec.Backend.Replicas = nil
			}, "spec.type cannot change from Cluster to Standalone"},
		}
		for _, tc := range rejectedUpdates {
			err := update("warehouse", tc.edit)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("update %s: got %v, want rejection containing %q", tc.name, err, tc.want)
			}
		}

		// Tighten the class so "sales" (FE 4Gi) no longer fits, then change
		// only its labels: metadata changes of an instance its class no
		// longer allows must pass, or finalizers could never be removed.
		var cls v1alpha1.StarrocksClass
		get(ctx, t, dyn, v1alpha1.StarrocksClassGVR, "", "small", &cls)
		cls.Spec.Validations = append(cls.Spec.Validations, v1alpha1.ValidationRule{Rule: "frontend.memory.size >= 6 * 1024 * 1024 * 1024", Message: "FE needs 6Gi"})
		if _, err := dyn.Resource(v1alpha1.StarrocksClassGVR).Update(ctx, toUnstructured(t, &cls), metav1.UpdateOptions{}); err != nil {
			t.Fatalf("tighten class: %v", err)
		}
		if err := update("sales", func(sr *v1alpha1.Starrocks) { sr.Labels = map[string]string{"team": "bi"} }); err != nil {
			t.Errorf("label change of an instance its class no longer allows rejected: %v", err)
		}
		// A spec change is checked against the new class version (the
		// informer may lag the update by a moment).
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := update("sales", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.PersistentVolumeClaim.Size = q("20Gi") })
			if err != nil && strings.Contains(err.Error(), "FE needs 6Gi") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("spec change under the tightened class: got %v, want rejection with \"FE needs 6Gi\"", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("hostile account names get the schema's answer naming the field", func(t *testing.T) {
		// Quotes, backticks, ';', unicode and 1000 characters never reach the
		// webhook: the CRD schema refuses them (the class rules would too,
		// see internal/admission TestValidateStarrocksRefusesHostileAccountNames).
		hostile := []string{"a'b", "a\"b", "a`b", "x`; DROP USER root; --", "\u0431\u0430\u0437\u0430", strings.Repeat("a", 1000)}
		fields := []struct {
			field string
			set   func(sr *v1alpha1.Starrocks, v string)
		}{
			{"spec.databases[0].name", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Databases[0].Name = v }},
			{"spec.roles[0].name", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Roles[0].Name = v }},
			{"spec.users[0].name", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].Name = v }},
			{"spec.users[0].passwordSecretRef.name", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].PasswordSecretRef.Name = v }},
			{"spec.users[0].passwordSecretRef.key", func(sr *v1alpha1.Starrocks, v string) { sr.Spec.Users[0].PasswordSecretRef.Key = v }},
		}
		for _, f := range fields {
			for i, v := range hostile {
				sr := withAccounts(fmt.Sprintf("hostile-%d", i), func(sr *v1alpha1.Starrocks) { f.set(sr, v) })
				_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Create(ctx, toUnstructured(t, sr), metav1.CreateOptions{})
				if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), f.field) {
					t.Errorf("%s = %.20q: got %v, want the schema's Invalid naming %s", f.field, v, err, f.field)
				}
			}
		}
		// "limited": "small" has been tightened by the updates above.
		create(ctx, t, dyn, v1alpha1.StarrocksGVR, ns, withAccounts("accounts", func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "limited" }))
	})

	t.Run("an empty class name gets the schema's answer, not a webhook failure", func(t *testing.T) {
		// The mutating webhook runs before the schema is checked; an error
		// there (client-go refuses to GET an empty name) made the apiserver
		// apply the failure policy instead of naming the field.
		_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Create(ctx,
			toUnstructured(t, instance("no-class", func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "" })),
			metav1.CreateOptions{})
		if err == nil || strings.Contains(err.Error(), "failed calling webhook") || !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), "spec.starrocksClassName") {
			t.Fatalf("create with an empty class name: got %v, want the CRD schema's Invalid naming spec.starrocksClassName", err)
		}
	})

	t.Run("kubectl prints what the docs show", func(t *testing.T) {
		root, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		docs := func(names ...string) map[string]string {
			out := map[string]string{}
			for _, n := range names {
				b, err := os.ReadFile(filepath.Join(root, "docs", n))
				if err != nil {
					t.Fatal(err)
				}
				out[n] = string(b)
			}
			return out
		}
		usage := docs("USAGE.md", "USAGE.ru.md")
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dev.yaml"), []byte(yamlBlockWith(t, usage["USAGE.md"], "name: dev\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		kc := cp.KubeconfigPath()
		for _, args := range [][]string{
			{"create", "namespace", "team-a"},
			{"apply", "-f", filepath.Join(root, "docs", "examples", "starrocksclass.yaml")},
			{"apply", "-f", "dev.yaml"},
		} {
			if r := kubectlrun.Run(t, kc, dir, args...); r.Failed {
				t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r.Err)
			}
		}

		checks := []struct {
			args []string
			want string
			docs map[string]string
		}{
			{args: []string{"-n", "team-a", "patch", "starrocks", "dev", "--type", "merge", "-p", `{"spec":{"backend":{"cpu":{"coreFraction":30}}}}`},
				want: `Error from server (Forbidden): admission webhook "validate-starrocks.managed-services.deckhouse.io" denied the request: ` +
					`Starrocks "team-a/dev" is invalid: spec.backend.cpu.coreFraction: core fraction 30% is not one the policy for 1-4 cores allows ` +
					`(value 30; class "example" sizingPolicies[0].coreFractions [50, 100])`,
				docs: usage},
			{args: []string{"delete", "starrocksclass", "example"},
				want: `Error from server (Forbidden): admission webhook "validate-starrocksclass.managed-services.deckhouse.io" denied the request: ` +
					`StarrocksClass "example" is used by 1 Starrocks instance: team-a/dev. ` +
					`An instance cannot change its class; delete this instance first, then the class.`,
				docs: docs("ADMIN_GUIDE.md", "ADMIN_GUIDE.ru.md")},
		}
		for _, c := range checks {
			r := kubectlrun.Run(t, kc, dir, c.args...)
			if !r.Failed || r.Err != c.want {
				t.Errorf("kubectl %s printed\n  %s\nwant\n  %s", strings.Join(c.args, " "), r.Err, c.want)
			}
			for name, text := range c.docs {
				if !strings.Contains(text, "\n"+c.want+"\n") {
					t.Errorf("docs/%s does not show what kubectl prints:\n  %s", name, c.want)
				}
			}
		}

		// The way out the message gives: the instances first, then the class.
		for _, args := range [][]string{{"-n", "team-a", "delete", "starrocks", "dev"}, {"delete", "starrocksclass", "example"}} {
			if r := kubectlrun.Run(t, kc, dir, args...); r.Failed {
				t.Errorf("kubectl %s: %s", strings.Join(args, " "), r.Err)
			}
		}
	})

	t.Run("dry run is answered like a real request", func(t *testing.T) {
		_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Create(ctx,
			toUnstructured(t, instance("dry", func(sr *v1alpha1.Starrocks) { sr.Spec.Frontend.CPU.Cores = 99 })),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "99 cores fall into no sizing policy") {
			t.Fatalf("dry-run create: got %v, want the sizing rejection", err)
		}
	})

	t.Run("rotated serving certificate is served and trusted", func(t *testing.T) {
		second := ca.MustIssue(t, webhookDNSNames...)
		deadline := time.Now().Add(15 * time.Second)
		for servedSerial(t, webhookAddr, ca.Cert).Cmp(second.Cert.SerialNumber) != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the webhook still serves the first certificate 15s after the Secret volume swap")
			}
			certs.Update(second.SecretData(ca))
			time.Sleep(300 * time.Millisecond)
		}
		_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Create(ctx,
			toUnstructured(t, instance("after-rotation", func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "nope" })),
			metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `StarrocksClass "nope" does not exist`) {
			t.Fatalf("call after rotation: got %v, want the webhook's rejection", err)
		}
	})

	// Run last (it stops the server).
	shutdown := func(t *testing.T) {
		stopped := make(chan error, 1)
		go func() { stopped <- wh.stop() }()
		deadline := time.Now().Add(2 * time.Second)
		for readyStatus(t, healthAddr) != http.StatusServiceUnavailable {
			if time.Now().After(deadline) {
				t.Fatal("/readyz still ok after the stop signal")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Unready but still answering: the apiserver may pick this pod until
		// the endpoints drop it.
		if code := postReview(t, webhookAddr, ca.Cert); code != http.StatusOK {
			t.Errorf("review during the shutdown delay answered %d, want 200", code)
		}
		if err := <-stopped; err != nil {
			t.Fatalf("Run returned %v, want a clean shutdown", err)
		}
		if conn, err := net.DialTimeout("tcp", webhookAddr, time.Second); err == nil {
			conn.Close()
			t.Fatal("the admission port still accepts connections after shutdown")
		}
	}

	t.Run("metrics count the answers", func(t *testing.T) {
		body := httpGet(ctx, t, "http://"+healthAddr+"/metrics")
		for _, want := range []string{
			`managed_starrocks_webhook_admission_requests_total{operation="CREATE",result="denied",webhook="validate-starrocks"}`,
			`managed_starrocks_webhook_admission_requests_total{operation="CREATE",result="allowed",webhook="mutate-starrocks"}`,
			`managed_starrocks_webhook_serving_certificate_reloads_total{result="success"}`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
	t.Run("shutdown turns unready, drains, then closes", shutdown)
}

// smallClass: 1-4 cores (2-16Gi step 1Gi, fractions 25/50/100) and 5-16
// cores (8-64Gi step 2Gi, fraction 100), six CEL rules.
func smallClass(name string) *v1alpha1.StarrocksClass {
	step1, step2 := q("1Gi"), q("2Gi")
	return &v1alpha1.StarrocksClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StarrocksClassKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.StarrocksClassSpec{
			Topology: v1alpha1.ClassTopology{
				AllowedTopologies: []v1alpha1.Topology{v1alpha1.TopologyIgnored, v1alpha1.TopologyZonal},
				DefaultTopology:   v1alpha1.TopologyZonal,
			},
			SizingPolicies: []v1alpha1.SizingPolicy{
				{Cores: v1alpha1.CoreRange{Min: 1, Max: 4}, CoreFractions: []int32{25, 50, 100},
					Memory: v1alpha1.MemoryRange{Min: q("2Gi"), Max: q("16Gi"), Step: &step1}},
				{Cores: v1alpha1.CoreRange{Min: 5, Max: 16}, CoreFractions: []int32{100},
					Memory: v1alpha1.MemoryRange{Min: q("8Gi"), Max: q("64Gi"), Step: &step2}},
			},
			OverridableConfiguration: []v1alpha1.ConfigurationKey{v1alpha1.KeyStreamingLoadMaxMb, v1alpha1.KeyCatalogTrashExpireSecond},
			Configuration: v1alpha1.Configuration{
				StreamingLoadMaxMb:               ptr(int64(1024)),
				LoadProcessMaxMemoryLimitPercent: ptr(int32(30)),
				CatalogTrashExpireSecond:         ptr(int64(3600)),
			},
			Validations: []v1alpha1.ValidationRule{
				{Rule: "configuration.streamingLoadMaxMb <= 4096", Message: "streaming loads above 4 GiB are not offered in this class"},
				{Rule: "configuration.catalogTrashExpireSecond >= 600", Message: "dropped tables must stay recoverable for at least 10 minutes"},
				{Rule: "backend.memory.size >= frontend.memory.size", Message: "a BE needs at least as much memory as the FE"},
				{Rule: "frontend.cpu.cores <= backend.cpu.cores", Message: "the FE must not have more cores than a BE"},
				{Rule: "type == 'Cluster' || backend.persistentVolumeClaim.size <= 500 * 1024 * 1024 * 1024", Message: "Standalone instances get at most 500Gi of BE storage; order a Cluster"},
				{Rule: "type != 'Cluster' || backend.replicas <= 5", Message: "this class offers at most 5 BEs"},
				{Rule: "type != 'Cluster' || backend.cpu.coreFraction >= 50", Message: "Cluster BEs need a guaranteed CPU share of at least 50%"},
			},
		},
	}
}

func withClass(name string, edit func(c *v1alpha1.StarrocksClass)) *v1alpha1.StarrocksClass {
	c := smallClass(name)
	edit(c)
	return c
}

// withAccounts is instance with a database, a reader role and a user with
// its own password Secret, then edited.
func withAccounts(name string, edit func(sr *v1alpha1.Starrocks)) *v1alpha1.Starrocks {
	return instance(name, func(sr *v1alpha1.Starrocks) {
		sr.Spec.Databases = []v1alpha1.Database{{Name: "sales"}}
		sr.Spec.Roles = []v1alpha1.Role{{Name: "reader", Privileges: []v1alpha1.Privilege{{Database: "sales", Object: v1alpha1.OnAllTables, Privileges: []string{"SELECT"}}}}}
		sr.Spec.Users = []v1alpha1.User{{Name: "bi", Roles: []string{"reader"}, PasswordSecretRef: &v1alpha1.PasswordSecretRef{Name: "bi-password", Key: "password"}}}
		edit(sr)
	})
}

// instance is a valid Standalone of class "small", then edited.
func instance(name string, edit func(sr *v1alpha1.Starrocks)) *v1alpha1.Starrocks {
	comp := func(cores int32, mem, disk string) v1alpha1.ComponentSpec {
		return v1alpha1.ComponentSpec{
			CPU:                   v1alpha1.CPUSpec{Cores: cores},
			Memory:                v1alpha1.MemorySpec{Size: q(mem)},
			PersistentVolumeClaim: v1alpha1.PersistentVolumeClaimSpec{Size: q(disk)},
		}
	}
	sr := &v1alpha1.Starrocks{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.StarrocksKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.StarrocksSpec{
			StarrocksClassName: "small",
			Frontend:           comp(2, "4Gi", "10Gi"),
			Backend:            v1alpha1.BackendSpec{ComponentSpec: comp(4, "8Gi", "100Gi")},
		},
	}
	edit(sr)
	return sr
}

// runningWebhook is the server under test; stop cancels it (as SIGTERM
// does in run) and waits for Run to return.
type runningWebhook struct {
	webhookAddr, healthAddr string
	stop                    func() error
}

func startWebhook(ctx context.Context, t *testing.T, kubeconfig string, certs *testpki.SecretVolume, flags ...string) *runningWebhook {
	t.Helper()
	c, err := parseFlags(append([]string{
		"--listen=127.0.0.1:0", "--health-listen=127.0.0.1:0",
		"--tls-cert-file=" + certs.Path("tls.crt"), "--tls-key-file=" + certs.Path("tls.key"),
		"--kubeconfig=" + kubeconfig, "--log-level=Debug", "--shutdown-delay=2s",
	}, flags...))
	if err != nil {
		t.Fatalf("parse flags: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	logOut := io.Writer(io.Discard)
	if testing.Verbose() {
		logOut = os.Stderr
	}
	a, err := app.New(c.Options, cfg, slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: c.LogLevel})))
	if err != nil {
		t.Fatalf("start webhook: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = errors.New("webhook did not shut down within 30s")
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop webhook: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + a.HealthAddr() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("webhook not ready within 30s (last: %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &runningWebhook{webhookAddr: a.WebhookAddr(), healthAddr: a.HealthAddr(), stop: stop}
}

// registerWebhooks creates the configurations the module's templates
// render, with a URL instead of the Service. failurePolicy is Fail here so a
// broken TLS setup fails loudly instead of letting objects through.
func registerWebhooks(ctx context.Context, t *testing.T, kube kubernetes.Interface, addr string, caPEM []byte) {
	t.Helper()
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	rule := func(resource string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{
			Operations: append([]admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, ops...),
			Rule: admissionregistrationv1.Rule{APIGroups: []string{v1alpha1.GroupName}, APIVersions: []string{v1alpha1.Version},
				Resources: []string{resource}},
		}}
	}
	client := func(path string) admissionregistrationv1.WebhookClientConfig {
		url := "https://" + addr + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
	}
	never := admissionregistrationv1.NeverReinvocationPolicy
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "d8-managed-starrocks"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: mutateSRName, ClientConfig: client(admission.PathMutateStarrocks), Rules: rule("starrocks"),
				FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &never},
			{Name: mutateClassName, ClientConfig: client(admission.PathMutateStarrocksClass), Rules: rule("starrocksclasses"),
				FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &never},
		},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "d8-managed-starrocks"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: validateSRName, ClientConfig: client(admission.PathValidateStarrocks), Rules: rule("starrocks"),
				FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}},
			{Name: validateClassName, ClientConfig: client(admission.PathValidateStarrocksClass), Rules: rule("starrocksclasses", admissionregistrationv1.Delete),
				FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}},
			{Name: validateBackupName, ClientConfig: client(admission.PathValidateBackup), Rules: rule("starrocksbackups"),
				FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}},
		},
	}
	if _, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create MutatingWebhookConfiguration: %v", err)
	}
	if _, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ValidatingWebhookConfiguration: %v", err)
	}
}

// waitWebhooksActive waits until the apiserver has loaded the configurations:
// a dry-run of an instance of a missing class is then rejected by the webhook.
func waitWebhooksActive(ctx context.Context, t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	probe := toUnstructured(t, instance("probe", func(sr *v1alpha1.Starrocks) { sr.Spec.StarrocksClassName = "nope" }))
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), validateSRName) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the apiserver did not call the webhook within 30s (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func create(ctx context.Context, t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string, obj runtime.Object) {
	t.Helper()
	if _, err := dyn.Resource(gvr).Namespace(namespace).Create(ctx, toUnstructured(t, obj), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", gvr.Resource, err)
	}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("convert %T: %v", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	// Status is the module's to write, through the subresource.
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}

func get(ctx context.Context, t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace, name string, into any) {
	t.Helper()
	u, err := dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", gvr.Resource, name, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("decode %s %s: %v", gvr.Resource, name, err)
	}
}

func servedSerial(t *testing.T, addr string, ca *x509.Certificate) *big.Int {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

func readyStatus(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// postReview sends one AdmissionReview straight to the server over TLS.
func postReview(t *testing.T, addr string, ca *x509.Certificate) int {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"DELETE",` +
		`"kind":{"group":"managed-services.deckhouse.io","version":"v1alpha1","kind":"Starrocks"},"object":null}}`
	resp, err := client.Post("https://"+addr+admission.PathValidateStarrocks, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST review: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func httpGet(ctx context.Context, t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return string(body)
}

// yamlBlockWith returns the first ```yaml block of a Markdown text that
// contains marker.
func yamlBlockWith(t *testing.T, markdown, marker string) string {
	t.Helper()
	for _, part := range strings.Split(markdown, "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		if strings.Contains(block, marker) {
			return block
		}
	}
	t.Fatalf("no yaml block with %q", marker)
	return ""
}

func q(s string) resource.Quantity { return resource.MustParse(s) }
func ptr[T any](v T) *T            { return &v }
func deref[T any](p *T) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}
func topologyOf(s v1alpha1.StarrocksSpec) v1alpha1.Topology {
	if s.Cluster == nil {
		return ""
	}
	return s.Cluster.Topology
}
