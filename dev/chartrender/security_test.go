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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// renderInstance renders one instance entry after the test changed it, held
// to openapi/values.yaml like every other render.
func renderInstance(t *testing.T, settings map[string]any, e desired.Instance) []*unstructured.Unstructured {
	t.Helper()
	vals, err := chartrender.ModuleValues([]desired.Instance{e}, settings)
	if err != nil {
		t.Fatal(err)
	}
	internal := vals["internal"].(map[string]any)
	internal["webhookCert"] = webhookCert(t)
	if err := loadSchemas(t).ValidateValues(chartrender.ReleaseValues(vals)); err != nil {
		t.Fatalf("values break openapi/: %v", err)
	}
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := desired.ValidateEntry(data); err != nil {
		t.Fatalf("the entry breaks the instance schema: %v", err)
	}
	objs, err := renderValues(vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return objs
}

// peer is a pod that may try to connect to an instance.
type peer struct {
	name        string
	namespace   string
	nsLabels    map[string]string
	podLabels   map[string]string
	ownInstance bool
}

// admits evaluates a NetworkPolicy as the Kubernetes API defines it: a
// connection is allowed when some ingress rule matches both the port (no
// ports: every port) and the peer (no from: every peer).
func admits(np *networkingv1.NetworkPolicy, policyNamespace string, p peer, port int32) bool {
	matches := func(sel *metav1.LabelSelector, l map[string]string) bool {
		s, err := metav1.LabelSelectorAsSelector(sel)
		return err == nil && s.Matches(labels.Set(l))
	}
	for _, r := range np.Spec.Ingress {
		portOK := len(r.Ports) == 0
		for _, rp := range r.Ports {
			portOK = portOK || rp.Port.IntVal == port
		}
		if !portOK {
			continue
		}
		if len(r.From) == 0 {
			return true
		}
		for _, f := range r.From {
			switch {
			case f.NamespaceSelector == nil && f.PodSelector != nil:
				if p.namespace == policyNamespace && matches(f.PodSelector, p.podLabels) {
					return true
				}
			case f.NamespaceSelector != nil:
				if matches(f.NamespaceSelector, p.nsLabels) && (f.PodSelector == nil || matches(f.PodSelector, p.podLabels)) {
					return true
				}
			}
		}
	}
	return false
}

// The port matrix of issues 12 and 25: client ports (9030, 8443) reach the
// instance's namespace and the allow list only once the accounts are ready;
// plain HTTP 8030 and the internal ports never leave the instance except the
// metrics ports to Deckhouse's monitoring.
func TestNetworkPolicyPortMatrix(t *testing.T) {
	sr := starrocks("team-n", "olap", v1alpha1.TypeCluster)
	base := entries(t, sr)[0]
	base.Network.AllowedNamespaces = []desired.NamespaceSelector{{MatchLabels: map[string]string{"team.example.com/name": "reporting"}}}
	own := map[string]string{
		"managed-services.deckhouse.io/managed-service-name": sr.Name,
		"app.kubernetes.io/name":                             "starrocks",
		"app.kubernetes.io/instance":                         sr.Name,
		"app.kubernetes.io/component":                        "backend",
	}
	nsLabels := func(name string, extra map[string]string) map[string]string {
		l := map[string]string{"kubernetes.io/metadata.name": name}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	peers := []peer{
		{name: "own pod", namespace: "team-n", nsLabels: nsLabels("team-n", nil), podLabels: own, ownInstance: true},
		{name: "pod of the namespace", namespace: "team-n", nsLabels: nsLabels("team-n", nil), podLabels: map[string]string{"app": "bi"}},
		{name: "pod of an allowed namespace", namespace: "reporting", nsLabels: nsLabels("reporting", map[string]string{"team.example.com/name": "reporting"}), podLabels: map[string]string{"app": "bi"}},
		{name: "pod of another namespace", namespace: "other", nsLabels: nsLabels("other", nil), podLabels: own},
		{name: "Deckhouse monitoring", namespace: "d8-monitoring", nsLabels: nsLabels("d8-monitoring", nil), podLabels: map[string]string{"app": "prometheus"}},
	}
	ports := []int32{9030, 8443, 8030, 9010, 9020, 9060, 8040, 8060, 9050, 8090}
	all := ports
	metrics := []int32{8030, 8040, 8090}
	// Plain HTTP (8030) carries passwords in clear: clients get the MySQL
	// protocol and HTTPS only.
	client := []int32{9030, 8443}
	want := map[bool]map[string][]int32{
		false: {"own pod": all, "Deckhouse monitoring": metrics},
		true:  {"own pod": all, "Deckhouse monitoring": metrics, "pod of the namespace": client, "pod of an allowed namespace": client},
	}
	var kinds []string
	for _, open := range []bool{false, true} {
		t.Run(fmt.Sprintf("clientPortsOpen=%v", open), func(t *testing.T) {
			e := base
			e.Network.ClientPortsOpen = open
			objs := renderInstance(t, nil, e)
			np := typed[networkingv1.NetworkPolicy](t, mustFind(t, objs, "NetworkPolicy", e.Namespace, e.Names.FrontendStatefulSet))
			for _, p := range peers {
				var got []int32
				for _, port := range ports {
					if admits(np, e.Namespace, p, port) {
						got = append(got, port)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want[open][p.name]) {
					t.Errorf("%s reaches ports %v, want %v", p.name, got, want[open][p.name])
				}
			}
			var ks []string
			for _, k := range keysOf(objs) {
				ks = append(ks, k.String())
			}
			kinds = append(kinds, fmt.Sprint(ks))
		})
	}
	if len(kinds) == 2 && kinds[0] != kinds[1] {
		t.Errorf("opening the client ports changed the set of objects:\n%s\n%s", kinds[0], kinds[1])
	}
}

// Helm must never delete an instance object (an entry that leaves the values,
// the module disabled): every object in a tenant namespace carries
// resource-policy keep and is owned by its Starrocks, which Kubernetes GC
// follows.
func TestInstanceObjectsAreKeptAndOwnedByTheirStarrocks(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			e := entries(t, sc.sr)[0]
			objs := render(t, sc.settings, sc.sr)
			n := 0
			for _, o := range objs {
				if o.GetNamespace() != e.Namespace {
					continue
				}
				n++
				if o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
					t.Errorf("%s %s lacks helm.sh/resource-policy: keep", o.GetKind(), o.GetName())
				}
				refs := o.GetOwnerReferences()
				if len(refs) != 1 || refs[0].APIVersion != "managed-services.deckhouse.io/v1alpha1" || refs[0].Kind != "Starrocks" ||
					refs[0].Name != e.Name || string(refs[0].UID) != e.UID || refs[0].Controller == nil || !*refs[0].Controller ||
					(refs[0].BlockOwnerDeletion != nil && *refs[0].BlockOwnerDeletion) {
					t.Errorf("%s %s ownerReferences %+v, want the controller reference to Starrocks %s (uid %s)", o.GetKind(), o.GetName(), refs, e.Name, e.UID)
				}
			}
			if n < 12 {
				t.Errorf("only %d objects in the instance namespace", n)
			}
		})
	}
}

// No issuer a tenant can use signs with a CA that another instance's clients
// trust: no ClusterIssuer with a ca section, and each instance's certificate
// comes from the Issuer in its own namespace.
func TestNoSharedCAIssuer(t *testing.T) {
	a := starrocks("team-a", "one", v1alpha1.TypeStandalone)
	b := starrocks("team-b", "two", v1alpha1.TypeStandalone)
	objs := render(t, nil, a, b)
	for _, o := range objs {
		if o.GetKind() != "ClusterIssuer" {
			continue
		}
		if _, found, _ := unstructured.NestedMap(o.Object, "spec", "ca"); found {
			t.Errorf("ClusterIssuer %s signs with a CA: any tenant could obtain certificates from it", o.GetName())
		}
		if _, found, _ := unstructured.NestedMap(o.Object, "spec", "selfSigned"); !found {
			t.Errorf("ClusterIssuer %s is not self-signing", o.GetName())
		}
		if o.GetNamespace() == "d8-cert-manager" {
			t.Errorf("%s rendered into cert-manager's namespace", o.GetName())
		}
	}
	if o := chartrender.Find(objs, "Certificate", "d8-cert-manager", "managed-starrocks-ca"); o != nil {
		t.Errorf("the module's shared root CA is still rendered")
	}
	var secrets []string
	for _, e := range entries(t, a, b) {
		c := mustFind(t, objs, "Certificate", e.Namespace, e.Names.FrontendStatefulSet)
		ref, _, _ := unstructured.NestedStringMap(c.Object, "spec", "issuerRef")
		if ref["kind"] != "Issuer" || ref["name"] != e.Names.FrontendStatefulSet+"-ca" {
			t.Errorf("%s/%s certificate issuer %v, want its own Issuer %s-ca", e.Namespace, c.GetName(), ref, e.Names.FrontendStatefulSet)
		}
		issuer := mustFind(t, objs, "Issuer", e.Namespace, ref["name"])
		s, _, _ := unstructured.NestedString(issuer.Object, "spec", "ca", "secretName")
		secrets = append(secrets, e.Namespace+"/"+s)
	}
	if len(slices.Compact(slices.Clone(secrets))) != 2 {
		t.Errorf("instances share a CA: %v", secrets)
	}
}

// The port table of the admin guide (both languages) is what the rendered
// NetworkPolicy does: the ports it gives to clients (a row naming
// AccountsReady, or the same as 9030) are the ports a pod of an allowed namespace
// reaches, and the ports it gives to Deckhouse's Prometheus are the ones
// d8-monitoring reaches: docs that promise clients a port the policy closes
// fail it.
func TestAdminGuidePortTableIsTheNetworkPolicy(t *testing.T) {
	sr := starrocks("team-n", "olap", v1alpha1.TypeCluster)
	e := entries(t, sr)[0]
	e.Network.AllowedNamespaces = []desired.NamespaceSelector{{MatchLabels: map[string]string{"team.example.com/name": "reporting"}}}
	e.Network.ClientPortsOpen = true
	np := typed[networkingv1.NetworkPolicy](t, mustFind(t, renderInstance(t, nil, e), "NetworkPolicy", e.Namespace, e.Names.FrontendStatefulSet))
	client := peer{namespace: "reporting", nsLabels: map[string]string{"kubernetes.io/metadata.name": "reporting", "team.example.com/name": "reporting"}, podLabels: map[string]string{"app": "bi"}}
	monitoring := peer{namespace: "d8-monitoring", nsLabels: map[string]string{"kubernetes.io/metadata.name": "d8-monitoring"}, podLabels: map[string]string{"app": "prometheus"}}

	row := regexp.MustCompile(`^\| ([0-9][0-9, ]*) \| [^|]+ \| ([^|]+) \|$`)
	// "as 9030" in either language: one word, then the port it refers to.
	sameAs9030 := regexp.MustCompile(`^\S+ 9030\b`)
	for _, page := range []string{"ADMIN_GUIDE.md", "ADMIN_GUIDE.ru.md"} {
		t.Run(page, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", page))
			if err != nil {
				t.Fatal(err)
			}
			var docClient, docMonitoring, gotClient, gotMonitoring []int32
			rows := 0
			for _, line := range strings.Split(string(data), "\n") {
				m := row.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				rows++
				for _, f := range strings.Split(m[1], ",") {
					port, err := strconv.Atoi(strings.TrimSpace(f))
					if err != nil {
						t.Fatalf("%s: %v", line, err)
					}
					p := int32(port)
					if strings.Contains(m[2], "AccountsReady") || sameAs9030.MatchString(m[2]) {
						docClient = append(docClient, p)
					}
					if strings.Contains(m[2], "d8-monitoring") {
						docMonitoring = append(docMonitoring, p)
					}
					if admits(np, e.Namespace, client, p) {
						gotClient = append(gotClient, p)
					}
					if admits(np, e.Namespace, monitoring, p) {
						gotMonitoring = append(gotMonitoring, p)
					}
				}
			}
			if rows < 5 {
				t.Fatalf("found %d rows of the port table in docs/%s", rows, page)
			}
			for _, s := range [][]int32{docClient, docMonitoring, gotClient, gotMonitoring} {
				slices.Sort(s)
			}
			if fmt.Sprint(docClient) != fmt.Sprint(gotClient) {
				t.Errorf("docs/%s gives clients ports %v, the NetworkPolicy %v", page, docClient, gotClient)
			}
			if fmt.Sprint(docMonitoring) != fmt.Sprint(gotMonitoring) {
				t.Errorf("docs/%s gives d8-monitoring ports %v, the NetworkPolicy %v", page, docMonitoring, gotMonitoring)
			}
		})
	}
}
