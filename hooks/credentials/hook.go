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

// Package credentials creates the Secrets of each deployed instance that hold
// generated passwords (the contract in pkg/agentconfig):
//
//   - d8ms-sr-<name>-credentials: the team's admin account (username admin,
//     password); status.credentialsSecretName names it.
//   - d8ms-sr-<name>-agent-credentials: the module's own accounts (username
//     d8_agent, password, root-password), mounted into the agent only.
//   - d8ms-sr-<name>-keystore: the password of the PKCS12 keystore
//     cert-manager writes for the FE (password).
//   - d8ms-sr-<name>-user.<user> (desired.UserSecretName): one per user the
//     memory declares (agentConfig.grants.users): username, and password
//     unless the team gives it (passwordSecretRef); the agent adds the
//     other connection keys. Deleted once the memory no longer declares
//     the user (users.go).
//
// A Secret is created once, with passwords from crypto/rand, and never
// updated: rotating a password by accident would lock the agent and every
// client out. The snapshots hold only Secret names and owners, never their
// data, so no password reaches values, logs or the hook's memory.
//
// The passwords are stored in the FE's metadata volume, so the Secrets live
// exactly as long as that volume: owned by the first FE's metadata PVC
// (meta-d8ms-sr-<name>-0) once it exists, and owned by nothing before
// ("held for the volume"). Deleting the instance with
// persistentVolumeClaimRetention Retain keeps the PVC and the Secrets; an
// instance re-created under the same name finds both and its agent still
// logs in. Not owned by the Starrocks object before, because then an
// instance deleted between its PVC's creation and the next run of this
// hook would lose its Secrets to the garbage collector while its volume
// stays. A held Secret whose instance is gone follows the volume if there
// is one and is deleted if there is none: no FE ever used its passwords.
//
// Secrets are created for instances that have a last valid configuration
// (the module's memory in namespace d8-managed-starrocks, written by the
// instances hook): a brand-new invalid instance gets no objects at all.
package credentials

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deckhouse/module-sdk/pkg"
	"github.com/deckhouse/module-sdk/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deckhouse/managed-starrocks/hooks/internal/kubewrite"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// Snapshot names.
const (
	SnapInstances = "deployed_instances"
	SnapSecrets   = "password_secrets"
	SnapPVCs      = "frontend_pvcs"
	// SnapUserSecrets are the users' connection Secrets (SnapSecrets the
	// others).
	SnapUserSecrets = "user_secrets"
	SnapNamespace   = "namespaces"
)

var _ = registry.RegisterFunc(Config, Handle)

// Config watches the module's memory (one ConfigMap per deployed instance,
// in the module namespace only), the password Secrets and the FE PVCs.
// Secrets and PVCs are in tenant namespaces: every field is coerced to its
// type, so no item can fail the snapshot.
var Config = &pkg.HookConfig{
	Queue: shared.QueueCredentials,
	Kubernetes: shared.NoWaitForSynchronization([]pkg.KubernetesConfig{
		{
			Name:              SnapInstances,
			APIVersion:        "v1",
			Kind:              "ConfigMap",
			NamespaceSelector: shared.ModuleNamespaceSelector,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateLastValid,
			}},
			JqFilter: shared.JqTypes + `{configMap: (.metadata.name | str)} + ((.data["` + shared.LastValidKey + `"] | str) | try fromjson catch {} | if type == "object" then . else {} end |` +
				` {namespace: (.namespace | str), name: (.name | str), uid: (.uid | str)} + ` + usersFilter + `)`,
		},
		{
			// The Secrets the module makes labelled `heritage: deckhouse`
			// (shared.ModuleObjectSelector: no tenant's look-alike is held
			// by addon-operator under Deckhouse's policies).
			Name:          SnapSecrets,
			APIVersion:    "v1",
			Kind:          "Secret",
			LabelSelector: moduleSecrets,
			JqFilter:      secretFilter,
		},
		{
			// The users' connection Secrets, which go without `heritage`
			// (secretLabels): a tenant's Secret can be labelled so too, and
			// addon-operator then holds it; the filter keeps a bounded part.
			// Those an earlier version made with `heritage` are here too, to
			// take the label off.
			Name:       SnapUserSecrets,
			APIVersion: "v1",
			Kind:       "Secret",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				shared.LabelServiceType: shared.ServiceTypeValue, shared.LabelState: shared.StateUserCredentials,
			}},
			JqFilter: secretFilter,
		},
		{
			// Every PVC of the instances, FE and BE (the instances hook's
			// selector: one informer for both), though only the FE's first
			// volume is read, by its name.
			Name:          SnapPVCs,
			APIVersion:    "v1",
			Kind:          "PersistentVolumeClaim",
			LabelSelector: shared.ModuleObjectSelector(),
			JqFilter:      shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str), uid: (.metadata.uid | str)}`,
		},
		{
			// No Secret is created in a namespace being deleted: the API
			// server refuses it, and the instance there is ending. A
			// snapshot only, never a reason to run.
			Name:                         SnapNamespace,
			APIVersion:                   "v1",
			Kind:                         "Namespace",
			ExecuteHookOnEvents:          &no,
			ExecuteHookOnSynchronization: &no,
			JqFilter:                     `{name: .metadata.name, terminating: (.metadata.deletionTimestamp != null or .status.phase == "Terminating")}`,
		},
	}),
}

var no = false

// moduleSecrets are the Secrets of an instance the module makes labelled
// `heritage: deckhouse`.
var moduleSecrets = func() *metav1.LabelSelector {
	sel := shared.ModuleObjectSelector()
	sel.MatchExpressions = []metav1.LabelSelectorRequirement{{
		Key: shared.LabelState, Operator: metav1.LabelSelectorOpIn, Values: []string{shared.StateCredentials, shared.StateAgentCredentials, shared.StateKeystore},
	}}
	return sel
}()

// secretFilter keeps names, owners, the two labels a user Secret is
// deleted by and its heritage label (taken off a user Secret): never data,
// and at most maxSecretOwners ownerReferences (the module sets one).
const secretFilter = shared.JqTypes + `{namespace: (.metadata.namespace | str), name: (.metadata.name | str),` +
	` state: (.metadata.labels["` + shared.LabelState + `"] | str | cut), instance: (.metadata.labels["` + shared.LabelInstance + `"] | str | cut),` +
	` heritage: (.metadata.labels.heritage | str | cut), uid: (.metadata.uid | str | cut),` +
	` owners: [(.metadata.ownerReferences // [])[:8][] | {kind: (.kind | str | cut), name: (.name | str | cut), uid: (.uid | str | cut)}]}`

// Instance is a deployed instance as the module's memory names it.
type Instance struct {
	ConfigMap string `json:"configMap"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// Users are the users the memory declares (agentConfig.grants.users);
	// UsersReadable is false when that part of the memory is not readable,
	// and then no user Secret of the instance is deleted.
	Users         []DeclaredUser `json:"users"`
	UsersReadable bool           `json:"usersReadable"`
}

// SecretSnap is a password Secret: its name, owners and labels, never its
// data.
type SecretSnap struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	State     string  `json:"state"`
	Instance  string  `json:"instance"`
	Heritage  string  `json:"heritage"`
	UID       string  `json:"uid"`
	Owners    []Owner `json:"owners"`
}

// Owner is an ownerReference.
type Owner struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// PVCSnap is an FE PersistentVolumeClaim.
type PVCSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// NamespaceSnap is a Namespace and whether it is being deleted.
type NamespaceSnap struct {
	Name        string `json:"name"`
	Terminating bool   `json:"terminating"`
}

// Handle creates the missing Secrets and moves their ownership to the
// FE's metadata PVC once it exists.
func Handle(ctx context.Context, input *pkg.HookInput) error {
	return handle(ctx, input, kubewrite.New(input))
}

// handle writes through w: module-sdk's test framework rebuilds its fake
// cluster on every KubeStateSet after the dependency container holds the
// first one, so its tests hand the current one in.
func handle(ctx context.Context, input *pkg.HookInput, w *kubewrite.Writer) error {
	instances := decodeEach[Instance](input, SnapInstances)
	secrets := append(decodeEach[SecretSnap](input, SnapSecrets), decodeEach[SecretSnap](input, SnapUserSecrets)...)
	pvcs := decodeEach[PVCSnap](input, SnapPVCs)
	terminating := map[string]bool{}
	for _, ns := range decodeEach[NamespaceSnap](input, SnapNamespace) {
		terminating[ns.Name] = ns.Terminating
	}
	// An instance whose namespace is being deleted is ending: the API
	// server refuses new objects there, and the namespace's deletion takes
	// the Secrets anyway (the instances hook deletes its memory).
	live := instances[:0:0]
	for _, in := range instances {
		if !terminating[in.Namespace] {
			live = append(live, in)
		}
	}
	// Nor is a Secret there re-owned or deleted: its instance is not in
	// live, and the namespace's deletion takes it.
	liveSecrets := secrets[:0:0]
	for _, s := range secrets {
		if !terminating[s.Namespace] {
			liveSecrets = append(liveSecrets, s)
		}
	}
	plan := Decide(live, liveSecrets, pvcs)
	for _, r := range plan.Refused {
		input.Logger.Warn("a user of the module's memory is refused", "problem", r)
	}
	// Every write goes into a tenant namespace, through w one at a time: a
	// write the API server refuses (a ResourceQuota, an admission policy, a
	// namespace being deleted) stays its instance's. In the patch collector
	// it would fail the whole run after the hook returned, every instance
	// and in Deckhouse the queue with it.
	gone := map[string]bool{} // instances whose namespace turned out gone or terminating
	write := func(in Instance, secret, what string, do func() error) {
		key := in.Namespace + "/" + in.Name
		if gone[key] {
			return
		}
		err := do()
		switch {
		case err == nil:
		case kubewrite.Gone(err):
			gone[key] = true
			input.Logger.Info("the namespace of an instance is being deleted: no more Secrets for it", "instance", key)
		case kubewrite.Conflict(err):
			// Changed under the write: the change is an event of this
			// hook's bindings, and that run writes again.
			input.Logger.Info("a Secret of an instance changed while being written: written again on the next run", "instance", key, "secret", secret, "write", what)
		default:
			words := kubewrite.Refusal(err)
			input.Logger.Warn("the API server refused a Secret of an instance", "instance", key, "secret", secret, "write", what, "refusal", words)
			warn(ctx, w, in, fmt.Sprintf("The API server refused to %s Secret %s: %s", what, secret, words))
		}
	}
	for _, c := range plan.Create {
		// CreateIfNotExists: a Secret made by an earlier run whose snapshot
		// has not arrived yet is left as it is.
		write(c.Instance, c.Name, "create", func() error {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(NewSecret(c))
			if err != nil {
				return err
			}
			created, err := w.CreateIfNotExists(ctx, &unstructured.Unstructured{Object: obj})
			if created {
				input.Logger.Info("created password Secret", "namespace", c.Namespace, "name", c.Name, "kind", c.State)
			}
			return err
		})
	}
	for _, d := range plan.Delete {
		write(d.Instance, d.Name, "delete", func() error {
			input.Logger.Info("deleting a Secret", "namespace", d.Namespace, "name", d.Name, "why", d.Why)
			return w.Delete(ctx, kubewrite.Ref{APIVersion: "v1", Kind: "Secret", Namespace: d.Namespace, Name: d.Name}, d.UID)
		})
	}
	for _, u := range plan.Unlabel {
		write(u.Instance, u.Name, "take the heritage label off", func() error {
			input.Logger.Info("user Secret of an earlier version loses its heritage label, so that the agent may write it", "namespace", u.Namespace, "name", u.Name)
			return w.Patch(ctx, kubewrite.Ref{APIVersion: "v1", Kind: "Secret", Namespace: u.Namespace, Name: u.Name}, types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"heritage":null}}}`))
		})
	}
	for _, r := range plan.Reown {
		write(r.Instance, r.Name, "re-own", func() error {
			// A merge patch replaces the list: the PVC becomes the only owner.
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{r.Owner}}})
			if err != nil {
				return err
			}
			input.Logger.Info("password Secret now follows the FE metadata volume", "namespace", r.Namespace, "name", r.Name, "pvc", r.Owner.Name)
			return w.Patch(ctx, kubewrite.Ref{APIVersion: "v1", Kind: "Secret", Namespace: r.Namespace, Name: r.Name}, types.MergePatchType, patch)
		})
	}
	return nil
}

// warn writes a Warning Event on the instance's Starrocks, best effort: the
// namespace that refused a Secret may refuse the Event as well (the log
// has it then). Named after what it says, so the same refusal run after
// run is one Event.
func warn(ctx context.Context, w *kubewrite.Writer, in Instance, msg string) {
	if in.UID == "" {
		return // a held Secret of an instance that is gone: no Starrocks to tell
	}
	e := shared.InstanceEvent(shared.InstanceRef{Namespace: in.Namespace, Name: in.Name, UID: in.UID}, corev1.EventTypeWarning, ReasonSecretRefused, msg,
		metav1.Now().Rfc3339Copy(), msg)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
	if err == nil {
		_, _ = w.CreateIfNotExists(ctx, &unstructured.Unstructured{Object: obj})
	}
}

// ReasonSecretRefused is the reason of the Warning Event of a refused
// Secret write.
const ReasonSecretRefused = "SecretRefused"

// decodeEach decodes a snapshot item by item: an item that does not decode
// is skipped (the filters coerce every field, so this is a last resort).
func decodeEach[T any](input *pkg.HookInput, name string) []T {
	items := input.Snapshots.Get(name)
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if err := it.UnmarshalTo(&v); err != nil {
			input.Logger.Warn("an item of a snapshot is not readable and is skipped", "snapshot", name, "error", err.Error())
			continue
		}
		out = append(out, v)
	}
	return out
}

// Want is one Secret an instance needs.
type Want struct {
	Instance
	Name  string
	State string
	Owner metav1.OwnerReference
	// User and PasswordSecret: the user of a StateUserCredentials Secret
	// and whether its password comes from the team's Secret (then the
	// agent copies it in and the hook generates none).
	User           string
	PasswordSecret bool
}

// Reown is a Secret whose owner becomes the FE's metadata PVC.
type Reown struct {
	Namespace, Name string
	Owner           metav1.OwnerReference
	// Instance is the instance the Secret belongs to.
	Instance Instance
}

// Plan is what one run writes.
type Plan struct {
	Create []Want
	Reown  []Reown
	// Delete are user Secrets whose user the memory no longer declares.
	Delete []Delete
	// Unlabel are user Secrets of the module still labelled heritage:
	// deckhouse (made by an earlier version): the label goes (secretLabels).
	Unlabel []Reown
	// Refused says which declared users got no Secret, and why.
	Refused []string
}

// Decide lists the Secrets to create, re-own and delete, in input order.
// Only memory named after the UID it holds counts (the instances hook
// writes exactly that).
func Decide(instances []Instance, secrets []SecretSnap, pvcs []PVCSnap) Plan {
	existing := make(map[string]SecretSnap, len(secrets))
	for _, s := range secrets {
		existing[desired.Key(s.Namespace, s.Name)] = s
	}
	pvcUID := make(map[string]string, len(pvcs))
	for _, p := range pvcs {
		pvcUID[desired.Key(p.Namespace, p.Name)] = p.UID
	}
	// Two memories of one namespace/name (an instance re-created before the
	// instances hook deleted its predecessor's) share the FE volume: neither
	// may delete the user Secrets the other declares.
	memories := map[string]int{}
	for _, in := range instances {
		memories[desired.Key(in.Namespace, in.Name)]++
	}
	// Held Secrets are deleted only when every memory is readable: an
	// unreadable one may be the memory of their instance.
	allMemoryReadable := true
	var plan Plan
	for _, in := range instances {
		if in.Name == "" || in.Namespace == "" || in.UID == "" || in.ConfigMap != shared.LastValidConfigMapName(in.UID) {
			allMemoryReadable = false
			continue // unreadable or not the module's: the instances hook rewrites or deletes it
		}
		owner := volumeOwner(in.Namespace, in.Name, pvcUID) // none while there is no volume: held for it
		names := desired.NamesFor(in.Name)
		wants := []Want{
			{Instance: in, Name: names.CredentialsSecret, State: shared.StateCredentials},
			{Instance: in, Name: names.AgentCredentialsSecret, State: shared.StateAgentCredentials},
			{Instance: in, Name: desired.KeystoreSecretName(in.Name), State: shared.StateKeystore},
		}
		users, deletable := userWants(in, &plan)
		wants = append(wants, users...)
		if deletable && memories[desired.Key(in.Namespace, in.Name)] == 1 {
			plan.Delete = append(plan.Delete, staleUserSecrets(in, users, secrets, owner)...)
		}
		starrocks := shared.OwnerReference(in.Name, in.UID)
		for _, w := range wants {
			s, ok := existing[desired.Key(in.Namespace, w.Name)]
			if ok && w.State == shared.StateUserCredentials && s.State == shared.StateUserCredentials && s.Heritage != "" &&
				(len(s.Owners) == 0 || ownedOnlyBy(s, owner) || ownedOnlyBy(s, starrocks)) {
				plan.Unlabel = append(plan.Unlabel, Reown{Namespace: in.Namespace, Name: w.Name, Instance: in})
			}
			switch {
			case !ok:
				w.Owner = owner
				plan.Create = append(plan.Create, w)
			case owner.UID != "" && !ownedOnlyBy(s, owner):
				plan.Reown = append(plan.Reown, Reown{Namespace: in.Namespace, Name: w.Name, Owner: owner, Instance: in})
			}
		}
	}
	if allMemoryReadable {
		heldForGoneInstances(&plan, memories, secrets, pvcUID)
	}
	return plan
}

// volumeOwner is the owner reference to an instance's first FE metadata
// PVC, or none (zero) while that PVC does not exist.
func volumeOwner(namespace, instance string, pvcUID map[string]string) metav1.OwnerReference {
	meta := MetaPVCName(instance)
	if uid := pvcUID[desired.Key(namespace, meta)]; uid != "" {
		return metav1.OwnerReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Name: meta, UID: types.UID(uid)}
	}
	return metav1.OwnerReference{}
}

// heldForGoneInstances plans the held Secrets (owned by nothing) of
// instances the memory no longer names: deleted before this hook handed
// their Secrets to the FE's metadata volume. They follow that volume if it
// exists (Retain keeps it: the Secrets stay with it), else they go (no FE
// ever started with their passwords). Only a Secret named as the module
// names that kind of Secret of that instance counts: a look-alike stays.
func heldForGoneInstances(plan *Plan, memories map[string]int, secrets []SecretSnap, pvcUID map[string]string) {
	for _, s := range secrets {
		if len(s.Owners) != 0 || s.Namespace == "" || !instanceName(s.Instance) ||
			memories[desired.Key(s.Namespace, s.Instance)] != 0 || !namedAsModuleSecret(s) {
			continue
		}
		gone := Instance{Namespace: s.Namespace, Name: s.Instance}
		if owner := volumeOwner(s.Namespace, s.Instance, pvcUID); owner.UID != "" {
			plan.Reown = append(plan.Reown, Reown{Namespace: s.Namespace, Name: s.Name, Owner: owner, Instance: gone})
			continue
		}
		plan.Delete = append(plan.Delete, Delete{Namespace: s.Namespace, Name: s.Name, UID: s.UID, Instance: gone, Why: whyInstanceGone})
	}
}

// instanceName says whether a label value can be an instance's name (the
// webhook's and the CRD's rule for metadata.name).
func instanceName(s string) bool {
	return len(s) <= classrules.MaxNameLength && len(validation.IsDNS1035Label(s)) == 0
}

// namedAsModuleSecret says whether a Secret has the name the module gives
// a Secret of its state for its instance label.
func namedAsModuleSecret(s SecretSnap) bool {
	names := desired.NamesFor(s.Instance)
	switch s.State {
	case shared.StateCredentials:
		return s.Name == names.CredentialsSecret
	case shared.StateAgentCredentials:
		return s.Name == names.AgentCredentialsSecret
	case shared.StateKeystore:
		return s.Name == desired.KeystoreSecretName(s.Instance)
	case shared.StateUserCredentials:
		return strings.HasPrefix(s.Name, desired.UserSecretName(s.Instance, ""))
	}
	return false
}

func ownedOnlyBy(s SecretSnap, o metav1.OwnerReference) bool {
	return len(s.Owners) == 1 && s.Owners[0].Kind == o.Kind && s.Owners[0].Name == o.Name && s.Owners[0].UID == string(o.UID)
}

// MetaPVCName is the first FE's metadata volume (volumeClaimTemplate "meta"
// of the FE StatefulSet, ordinal 0).
func MetaPVCName(instance string) string {
	return "meta-" + desired.NamesFor(instance).FrontendStatefulSet + "-0"
}

// password is 26 base32 characters (130 bits) from crypto/rand: no
// characters that need quoting in SQL, shell or a Java keystore password.
func password() []byte { return []byte(rand.Text()) }

// NewSecret builds a Secret with fresh random passwords.
func NewSecret(w Want) *corev1.Secret {
	var data map[string][]byte
	switch w.State {
	case shared.StateCredentials:
		data = map[string][]byte{agentconfig.UsernameKey: []byte(agentconfig.AdminUser), agentconfig.PasswordKey: password()}
	case shared.StateAgentCredentials:
		data = map[string][]byte{agentconfig.UsernameKey: []byte(agentconfig.AgentUser), agentconfig.PasswordKey: password(), agentconfig.RootPasswordKey: password()}
	case shared.StateUserCredentials:
		// The agent adds host, port, ca.crt, dsn and jdbc-url (and the
		// password of a team's Secret): the hook never updates it.
		data = map[string][]byte{agentconfig.UserSecretUsernameKey: []byte(w.User)}
		if !w.PasswordSecret {
			data[agentconfig.UserSecretPasswordKey] = password()
		}
	default:
		data = map[string][]byte{agentconfig.PasswordKey: password()}
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            w.Name,
			Namespace:       w.Namespace,
			Labels:          secretLabels(w.Instance.Name, w.State),
			OwnerReferences: ownerList(w.Owner),
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

// ownerList is the Secret's owner references: none for a held Secret.
func ownerList(o metav1.OwnerReference) []metav1.OwnerReference {
	if o.UID == "" {
		return nil
	}
	return []metav1.OwnerReference{o}
}

// secretLabels are the labels of a Secret the hook makes. A user's
// connection Secret goes without heritage: deckhouse: the agent, which runs
// as its instance's service account in the tenant namespace, writes its
// connection keys, and Deckhouse's admission policy
// label-objects.deckhouse.io lets only Deckhouse's own accounts
// (system:serviceaccount:d8-*, kube-*) create, update or delete an object
// carrying that label (deckhouse/deckhouse modules/002-deckhouse/templates/
// validation.yaml). What still guards it: its d8ms- name, which Deckhouse's
// policy d8ms-prefix.deckhouse.io lets only Deckhouse's and the managed
// services' own d8ms-* accounts write (the same file), and the agent, which
// rewrites every key that differs on each pass. The other Secrets hold the
// module's own passwords and keep the label: only the hooks write them.
// docs/ADMIN_GUIDE.md, "Security model", says who writes what.
func secretLabels(instance, state string) map[string]string {
	labels := shared.InstanceLabels(instance, state)
	if state == shared.StateUserCredentials {
		delete(labels, "heritage")
	}
	return labels
}

// String names a Want in test failures.
func (w Want) String() string {
	return fmt.Sprintf("%s %s/%s owned by %s %s", strings.ToLower(w.State), w.Namespace, w.Name, w.Owner.Kind, w.Owner.Name)
}
