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

// Package rbac_test checks the module's access roles on a real kube-apiserver:
// it renders them from the chart, binds them to impersonated users the way
// Deckhouse's user-authz module binds them, and asks the apiserver what each
// user may do.
package rbac_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/dev/chartrender"
	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/pkg/manifests"
)

const (
	group     = v1alpha1.GroupName
	ownNS     = "team-a" // where namespaced grants are made
	otherNS   = "team-b"
	moduleNS  = chartrender.Namespace
	userAuthz = "user-authz.deckhouse.io/access-level"
)

// The user-authz access levels in order: a role annotated with one level is
// bound to subjects of that level and every level after it
// (deckhouse/deckhouse modules/140-user-authz/hooks/handle_custom_cluster_roles.go).
var accessLevels = []string{"User", "PrivilegedUser", "Editor", "Admin", "ClusterEditor", "ClusterAdmin"}

// roleModel is one of Deckhouse's RBACv2 role models: the version of a
// cluster that runs it, the roles the chart must render there (a renamed or
// lost role fails the test), and Deckhouse's aggregated roles of that model.
type roleModel struct {
	name, deckhouseVersion, standIns string
	wantRoles                        []string
}

var userAuthzRoleNames = []string{
	"d8:user-authz:managed-starrocks:cluster-editor",
	"d8:user-authz:managed-starrocks:editor",
	"d8:user-authz:managed-starrocks:user",
}

var (
	// Deckhouse before 1.78: "use" and "manage" capabilities.
	model177 = roleModel{
		name: "deckhouse-1.77", deckhouseVersion: "v1.77.5", standIns: "deckhouse-1.77-roles.yaml",
		wantRoles: append([]string{
			"d8:manage:permission:module:managed-starrocks:edit",
			"d8:manage:permission:module:managed-starrocks:view",
			"d8:use:capability:module:managed-starrocks:edit",
			"d8:use:capability:module:managed-starrocks:view",
		}, userAuthzRoleNames...),
	}
	// Deckhouse 1.78 and later: namespace and system capabilities.
	model178 = roleModel{
		name: "deckhouse-1.78", deckhouseVersion: "v1.78.0", standIns: "deckhouse-1.78-roles.yaml",
		wantRoles: append([]string{
			"d8:namespace-capability:managed-starrocks:edit",
			"d8:namespace-capability:managed-starrocks:view",
			"d8:system-capability:managed-starrocks:edit",
			"d8:system-capability:managed-starrocks:view",
		}, userAuthzRoleNames...),
	}
)

// renderRoles renders the chart for a cluster of the given Deckhouse
// version and returns the ClusterRoles of
// templates/user-authz-cluster-roles.yaml and templates/rbacv2/.
func renderRoles(t *testing.T, deckhouseVersion any) []*rbacv1.ClusterRole {
	t.Helper()
	r, err := chartrender.Default()
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartrender.ModuleValues(nil, map[string]any{"registry": map[string]any{"dockercfg": "eyJhdXRocyI6e319"}})
	if err != nil {
		t.Fatal(err)
	}
	globals := chartrender.DefaultGlobals()
	if deckhouseVersion == nil {
		delete(globals, "deckhouseVersion")
	} else {
		globals["deckhouseVersion"] = deckhouseVersion
	}
	files, err := r.RenderFiles(vals, globals)
	if err != nil {
		t.Fatal(err)
	}
	var roles []*rbacv1.ClusterRole
	for name, text := range files {
		rel := strings.TrimPrefix(name, r.Chart().Name()+"/")
		if rel != "templates/user-authz-cluster-roles.yaml" && !strings.HasPrefix(rel, "templates/rbacv2/") {
			continue
		}
		objs, err := manifests.Parse([]byte(text))
		if err != nil {
			t.Fatalf("parse %s: %v", rel, err)
		}
		for _, o := range objs {
			var cr rbacv1.ClusterRole
			if o.GetKind() != "ClusterRole" {
				t.Fatalf("%s renders a %s; only ClusterRoles belong there", rel, o.GetKind())
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &cr, true); err != nil {
				t.Fatalf("%s: %s does not match the ClusterRole type: %v", rel, o.GetName(), err)
			}
			roles = append(roles, &cr)
		}
	}
	return roles
}

func roleNames(roles []*rbacv1.ClusterRole) []string {
	var names []string
	for _, cr := range roles {
		names = append(names, cr.Name)
	}
	sort.Strings(names)
	return names
}

// renderModelRoles renders the roles for a cluster of the model's version
// and checks they are the model's.
func renderModelRoles(t *testing.T, m roleModel) []*rbacv1.ClusterRole {
	t.Helper()
	roles := renderRoles(t, m.deckhouseVersion)
	want := slices.Sorted(slices.Values(m.wantRoles))
	if got := roleNames(roles); !slices.Equal(got, want) {
		t.Fatalf("rendered for Deckhouse %s:\n  %v\nwant\n  %v", m.deckhouseVersion, got, want)
	}
	return roles
}

// standIns are Deckhouse's aggregated RBACv2 roles of a model (see the
// files' comments).
func standIns(t *testing.T, m roleModel) []*rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", m.standIns))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifests.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var roles []*rbacv1.ClusterRole
	for _, o := range objs {
		var cr rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &cr, true); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, &cr)
	}
	return roles
}

// check is one request a user might make.
type check struct {
	verb, resource, subresource, group, namespace, name string
}

func (c check) String() string {
	r := c.resource
	if c.subresource != "" {
		r += "/" + c.subresource
	}
	if c.group != "" {
		r += "." + c.group
	}
	if c.name != "" {
		r += "/" + c.name
	}
	if c.namespace != "" {
		return fmt.Sprintf("%s %s in %s", c.verb, r, c.namespace)
	}
	return fmt.Sprintf("%s %s", c.verb, r)
}

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}
)

func starrocks(verbs []string, namespaces ...string) []check {
	var out []check
	for _, ns := range namespaces {
		for _, v := range verbs {
			out = append(out, check{verb: v, resource: v1alpha1.StarrocksResource, group: group, namespace: ns})
		}
	}
	return out
}

func classes(verbs []string) []check {
	var out []check
	for _, v := range verbs {
		out = append(out, check{verb: v, resource: v1alpha1.ClassResource, group: group})
	}
	return out
}

func moduleConfig(verbs ...string) []check {
	var out []check
	for _, v := range verbs {
		out = append(out, check{verb: v, resource: "moduleconfigs", group: "deckhouse.io", name: "managed-starrocks"})
	}
	return out
}

// allChecks is what every user is asked: the module's resources in the
// user's namespace and another, the status subresource, the module's own
// objects and a neighbour's ModuleConfig.
func allChecks() []check {
	all := append(starrocks(append(readVerbs, writeVerbs...), ownNS, otherNS), classes(append(readVerbs, writeVerbs...))...)
	all = append(all, moduleConfig("get", "update", "delete")...)
	for _, v := range []string{"update", "patch"} {
		all = append(all, check{verb: v, resource: v1alpha1.StarrocksResource, subresource: "status", group: group, namespace: ownNS})
	}
	return append(all,
		check{verb: "get", resource: "moduleconfigs", group: "deckhouse.io", name: "user-authz"},
		check{verb: "get", resource: "secrets", namespace: moduleNS},
		check{verb: "get", resource: "secrets", namespace: ownNS},
		check{verb: "update", resource: "deployments", group: "apps", namespace: moduleNS},
		check{verb: "create", resource: "statefulsets", group: "apps", namespace: ownNS},
		check{verb: "create", resource: "rolebindings", group: "rbac.authorization.k8s.io", namespace: ownNS},
		check{verb: "update", resource: "validatingwebhookconfigurations", group: "admissionregistration.k8s.io", name: "d8-managed-starrocks"},
	)
}

// user is an impersonated subject, how it is bound and what it may do.
type user struct {
	name string
	// roles are bound with a RoleBinding in ownNS when namespaced, else with
	// a ClusterRoleBinding.
	roles      []string
	namespaced bool
	allowed    []check
}

// userAuthzRoles are the rendered roles user-authz binds to a subject of
// the given level: its own and those of the levels below it.
func userAuthzRoles(t *testing.T, rendered []*rbacv1.ClusterRole, level string) []string {
	t.Helper()
	rank := map[string]int{}
	for i, l := range accessLevels {
		rank[l] = i
	}
	var out []string
	for _, cr := range rendered {
		l, ok := cr.Annotations[userAuthz]
		if !ok {
			continue
		}
		if _, known := rank[l]; !known {
			t.Fatalf("%s has unknown access level %q", cr.Name, l)
		}
		if rank[l] <= rank[level] {
			out = append(out, cr.Name)
		}
	}
	return out
}

func concat(lists ...[]check) []check {
	var out []check
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// users is the access matrix docs/ADMIN_GUIDE.md shows, for the roles of
// the given model.
func users(t *testing.T, m roleModel, rendered []*rbacv1.ClusterRole) []user {
	t.Helper()
	tenantRead := starrocks(readVerbs, ownNS)
	tenantWrite := concat(tenantRead, starrocks(writeVerbs, ownNS))
	clusterRead := concat(starrocks(readVerbs, ownNS, otherNS), classes(readVerbs))
	clusterWrite := concat(clusterRead, starrocks(writeVerbs, ownNS, otherNS))
	manageView := concat(classes(readVerbs), moduleConfig("get"))
	manageEdit := concat(manageView, classes(writeVerbs), moduleConfig("update", "delete"))

	us := []user{{name: "nobody"}}
	// An AuthorizationRule (namespaced levels only) binds with RoleBindings in
	// its namespace, a ClusterAuthorizationRule with ClusterRoleBindings
	// (deckhouse/deckhouse modules/140-user-authz/templates/cluster-role-bindings.yaml).
	for _, l := range []string{"User", "PrivilegedUser", "Editor", "Admin"} {
		allowed := tenantRead
		if l == "Editor" || l == "Admin" {
			allowed = tenantWrite
		}
		us = append(us, user{name: "authorizationrule-" + strings.ToLower(l), roles: userAuthzRoles(t, rendered, l), namespaced: true, allowed: allowed})
	}
	for _, l := range accessLevels {
		allowed := clusterRead
		switch l {
		case "Editor", "Admin":
			allowed = clusterWrite
		case "ClusterEditor", "ClusterAdmin":
			allowed = concat(clusterWrite, classes(writeVerbs))
		}
		us = append(us, user{name: "clusterauthorizationrule-" + strings.ToLower(l), roles: userAuthzRoles(t, rendered, l), allowed: allowed})
	}
	if m.name == model177.name {
		// Before 1.78: use roles in a RoleBinding, manage roles in a
		// ClusterRoleBinding.
		for _, l := range []string{"viewer", "user", "manager", "admin"} {
			allowed := tenantRead
			if l == "manager" || l == "admin" {
				allowed = tenantWrite
			}
			us = append(us, user{name: "use-" + l, roles: []string{"d8:use:role:" + l}, namespaced: true, allowed: allowed})
		}
		for _, subsystem := range []string{"kubernetes", "all"} {
			us = append(us,
				user{name: "manage-" + subsystem + "-viewer", roles: []string{"d8:manage:" + subsystem + ":viewer"}, allowed: manageView},
				user{name: "manage-" + subsystem + "-manager", roles: []string{"d8:manage:" + subsystem + ":manager"}, allowed: manageEdit},
			)
		}
		return us
	}
	// From 1.78: namespace roles in a RoleBinding; subsystem and system
	// roles in a ClusterRoleBinding, which give the module's configuration
	// and classes and no tenant's instances.
	for _, l := range []string{"viewer", "user", "manager", "admin", "superadmin"} {
		allowed := tenantRead
		if l != "viewer" && l != "user" {
			allowed = tenantWrite
		}
		us = append(us, user{name: "namespace-" + l, roles: []string{"d8:namespace:" + l}, namespaced: true, allowed: allowed})
	}
	for _, role := range []string{"subsystem:kubernetes", "system"} {
		prefix := strings.ReplaceAll(role, ":", "-")
		us = append(us,
			user{name: prefix + "-viewer", roles: []string{"d8:" + role + ":viewer"}, allowed: manageView},
			user{name: prefix + "-manager", roles: []string{"d8:" + role + ":manager"}, allowed: manageEdit},
			user{name: prefix + "-superadmin", roles: []string{"d8:" + role + ":superadmin"}, allowed: manageEdit},
		)
	}
	// user-authz's aggregated custom roles (PR #22824) grant what the
	// annotation's cascade grants: the same matrix as the direct bindings.
	for _, u := range us {
		if level, ok := strings.CutPrefix(u.name, "clusterauthorizationrule-"); ok {
			us = append(us, user{name: "custom-" + level, roles: []string{"user-authz:" + level + ":custom"}, allowed: u.allowed})
		}
	}
	return us
}

type cluster struct {
	cfg *rest.Config
	cs  kubernetes.Interface
}

func (c *cluster) as(t *testing.T, name string) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	cfg := rest.CopyConfig(c.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, dyn
}

// can asks the apiserver, as the user, whether the request is allowed.
func can(ctx context.Context, cs kubernetes.Interface, c check) (bool, error) {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.subresource, Namespace: c.namespace, Name: c.name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	// The controller manager runs the clusterrole-aggregation-controller,
	// which builds the RBACv2 roles from the module's capabilities.
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{controlplane.ModuleCRDDir()}, ControllerManager: true})
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{cfg: cp.RESTConfig(), cs: cs}
}

func setUp(ctx context.Context, t *testing.T, c *cluster, roles []*rbacv1.ClusterRole, us []user) {
	t.Helper()
	for _, ns := range []string{ownNS, otherNS, moduleNS} {
		if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cr := range roles {
		if _, err := c.cs.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ClusterRole %s: %v", cr.Name, err)
		}
	}
	for _, u := range us {
		subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u.name}}
		for i, role := range u.roles {
			meta := metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", u.name, i)}
			ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
			var err error
			if u.namespaced {
				_, err = c.cs.RbacV1().RoleBindings(ownNS).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
			} else {
				_, err = c.cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
			}
			if err != nil {
				t.Fatalf("bind %s to %s: %v", role, u.name, err)
			}
		}
	}
}

// mismatches asks every check as every user and returns the answers that
// differ from the matrix.
func mismatches(ctx context.Context, t *testing.T, c *cluster, us []user) ([]string, error) {
	var out []string
	for _, u := range us {
		cs, _ := c.as(t, u.name)
		allowed := map[string]bool{}
		for _, a := range u.allowed {
			allowed[a.String()] = true
		}
		for _, chk := range allChecks() {
			got, err := can(ctx, cs, chk)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", u.name, chk, err)
			}
			if want := allowed[chk.String()]; got != want {
				out = append(out, fmt.Sprintf("%s: %s allowed=%v, want %v", u.name, chk, got, want))
			}
		}
	}
	return out, nil
}

// TestAccessMatrix asks a real apiserver what each user may do, once per
// Deckhouse role model: the chart rendered for a cluster of that model's
// version, with that model's aggregated roles. One control plane each: the
// two models' roles select each other's capabilities (1.78's
// d8:subsystem:kubernetes:* select any aggregate-to-kubernetes-as), so they
// never share a cluster.
func TestAccessMatrix(t *testing.T) {
	for _, m := range []roleModel{model177, model178} {
		t.Run(m.name, func(t *testing.T) { accessMatrix(t, m) })
	}
}

func accessMatrix(t *testing.T, m roleModel) {
	rendered := renderModelRoles(t, m)
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	us := users(t, m, rendered)
	setUp(ctx, t, c, append(rendered, standIns(t, m)...), us)

	// The aggregation controller fills the RBACv2 roles in shortly after they
	// appear; until then those users may do less than the matrix says.
	deadline := time.Now().Add(time.Minute)
	for {
		diff, err := mismatches(ctx, t, c, us)
		if err != nil {
			t.Fatal(err)
		}
		if len(diff) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answers differ from the access matrix:\n%s", len(diff), strings.Join(diff, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}

	t.Run("real requests", func(t *testing.T) { realRequests(ctx, t, c, m) })
}

// realRequests does what the users would do, so the answers above are also
// what the apiserver enforces on writes.
func realRequests(ctx context.Context, t *testing.T, c *cluster, m roleModel) {
	starrocksRes := func(dyn dynamic.Interface, ns string) dynamic.ResourceInterface {
		return dyn.Resource(v1alpha1.StarrocksGVR).Namespace(ns)
	}
	wantForbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v, want Forbidden", what, err)
		}
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	_, editor := c.as(t, "authorizationrule-editor")
	sr := parse(t, fmt.Sprintf(starrocksDoc, "analytics", ownNS))
	_, err := starrocksRes(editor, ownNS).Create(ctx, sr, metav1.CreateOptions{})
	must("an Editor creates a Starrocks in its namespace", err)
	_, err = starrocksRes(editor, ownNS).Patch(ctx, "analytics", types.MergePatchType, []byte(`{"spec":{"configuration":{"streamingLoadMaxMb":10240}}}`), metav1.PatchOptions{})
	must("an Editor changes it", err)
	_, err = starrocksRes(editor, ownNS).Patch(ctx, "analytics", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
	wantForbidden("an Editor writes its status", err)
	other := parse(t, fmt.Sprintf(starrocksDoc, "analytics", otherNS))
	_, err = starrocksRes(editor, otherNS).Create(ctx, other, metav1.CreateOptions{})
	wantForbidden("an Editor creates a Starrocks in another namespace", err)
	_, err = editor.Resource(v1alpha1.StarrocksClassGVR).Create(ctx, parse(t, fmt.Sprintf(classDoc, "tenant-made")), metav1.CreateOptions{})
	wantForbidden("an Editor creates a StarrocksClass", err)
	must("an Editor deletes its Starrocks", starrocksRes(editor, ownNS).Delete(ctx, "analytics", metav1.DeleteOptions{}))

	namespaceViewer, namespaceManager, platformManagers := "use-viewer", "use-manager", []string{"clusterauthorizationrule-clusteradmin", "manage-all-manager"}
	if m.name == model178.name {
		namespaceViewer, namespaceManager, platformManagers = "namespace-viewer", "namespace-manager", []string{"clusterauthorizationrule-clusteradmin", "system-manager", "subsystem-kubernetes-manager"}
	}
	_, nsManager := c.as(t, namespaceManager)
	_, err = starrocksRes(nsManager, ownNS).Create(ctx, parse(t, fmt.Sprintf(starrocksDoc, "team-made", ownNS)), metav1.CreateOptions{})
	must("a namespace manager creates a Starrocks in its namespace", err)
	must("a namespace manager deletes it", starrocksRes(nsManager, ownNS).Delete(ctx, "team-made", metav1.DeleteOptions{}))
	_, err = starrocksRes(nsManager, otherNS).Create(ctx, parse(t, fmt.Sprintf(starrocksDoc, "team-made", otherNS)), metav1.CreateOptions{})
	wantForbidden("a namespace manager creates a Starrocks in another namespace", err)

	_, viewer := c.as(t, namespaceViewer)
	_, err = starrocksRes(viewer, ownNS).List(ctx, metav1.ListOptions{})
	must("a use viewer lists Starrocks in its namespace", err)
	_, err = starrocksRes(viewer, ownNS).Create(ctx, parse(t, fmt.Sprintf(starrocksDoc, "viewer-made", ownNS)), metav1.CreateOptions{})
	wantForbidden("a use viewer creates a Starrocks", err)

	_, tenant := c.as(t, "clusterauthorizationrule-editor")
	_, err = tenant.Resource(v1alpha1.StarrocksClassGVR).List(ctx, metav1.ListOptions{})
	must("a cluster-wide Editor lists classes", err)

	for _, admin := range platformManagers {
		_, dyn := c.as(t, admin)
		classes := dyn.Resource(v1alpha1.StarrocksClassGVR)
		_, err := classes.Create(ctx, parse(t, fmt.Sprintf(classDoc, "gold")), metav1.CreateOptions{})
		must(admin+" creates a StarrocksClass", err)
		_, err = classes.Patch(ctx, "gold", types.MergePatchType, []byte(`{"spec":{"configuration":{"streamingLoadMaxMb":5120}}}`), metav1.PatchOptions{})
		must(admin+" changes it", err)
		must(admin+" deletes it", classes.Delete(ctx, "gold", metav1.DeleteOptions{}))
	}
	for _, admin := range platformManagers[1:] {
		_, manager := c.as(t, admin)
		_, err = starrocksRes(manager, ownNS).Create(ctx, parse(t, fmt.Sprintf(starrocksDoc, "admin-made", ownNS)), metav1.CreateOptions{})
		wantForbidden(admin+" creates a Starrocks in a tenant namespace", err)
	}
}

func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	objs, err := manifests.Parse([]byte(doc))
	if err != nil || len(objs) != 1 {
		t.Fatalf("parse test object: %v\n%s", err, doc)
	}
	return objs[0]
}

// Valid objects (as test/crd writes them); no webhook runs here, so the
// class need not exist.
const classDoc = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: StarrocksClass
metadata:
  name: %s
spec:
  topology:
    allowedTopologies: [Ignored]
    defaultTopology: Ignored
  sizingPolicies:
    - cores: {min: 1, max: 4}
      memory: {min: 4Gi, max: 16Gi, step: 1Gi}
      coreFractions: [50, 100]
  configuration:
    streamingLoadMaxMb: 10240
`

const starrocksDoc = `
apiVersion: managed-services.deckhouse.io/v1alpha1
kind: Starrocks
metadata:
  name: %s
  namespace: %s
spec:
  starrocksClassName: default
  type: Standalone
  frontend:
    cpu: {cores: 2, coreFraction: 50}
    memory: {size: 8Gi}
    persistentVolumeClaim: {size: 20Gi}
  backend:
    cpu: {cores: 4}
    memory: {size: 16Gi}
    persistentVolumeClaim: {size: 100Gi}
`
