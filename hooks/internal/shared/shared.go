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

// Package shared holds the names and labels several hooks agree on: the
// objects one hook writes and another one reads.
package shared

import (
	"regexp"
	"strconv"

	"github.com/deckhouse/module-sdk/pkg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// The addon-operator queues of the module's hooks, one per purpose, named
// as Deckhouse's own modules name theirs (/modules/<module>/<purpose>:
// deckhouse/deckhouse modules/140-user-authz/hooks/internal Queue). Never
// Deckhouse's `main` queue, which every module shares and which retries a
// failed task at its head until it succeeds: a run of this module there (a
// long one, or one that fails) would hold up the whole platform's
// convergence. A queue per purpose keeps one kind of work (a thousand
// instances' objects after an upgrade, say) from delaying another (a
// tenant's new credentials, an instance's status): each queue runs its
// hook's runs one at a time, and the hooks own disjoint objects (status
// and desired state; instance objects and their records; Secrets; the
// default class), so they need not wait for each other. Hooks bound to
// Helm runs (OnBeforeHelm, OnAfterHelm) still run in `main` as part of the
// module's run, as addon-operator does for every module: they must not be
// able to fail on tenant input (hooks/internal/kubewrite) and stay short.
const (
	QueuePrefix = "/modules/managed-starrocks/"
	// QueueInstances: the instances hook (validation, desired state,
	// status, scheduled backups).
	QueueInstances = QueuePrefix + "instances"
	// QueueObjects: the instanceobjects hooks (each instance's objects).
	QueueObjects = QueuePrefix + "objects"
	// QueueCredentials: the credentials hook (each instance's Secrets).
	QueueCredentials = QueuePrefix + "credentials"
	// QueueClasses: the defaultclass hook.
	QueueClasses = QueuePrefix + "classes"
)

// Queues are all the module's queues.
var Queues = []string{QueueInstances, QueueObjects, QueueCredentials, QueueClasses}

// NoWaitForSynchronization marks every binding that runs its hook on
// Synchronization as one the module's run need not wait for, and returns
// the bindings. addon-operator's ModuleRun waits, before the module's Helm
// run, for the Synchronization task of every binding that has
// waitForSynchronization (true by default: module-sdk pkg/hook.go,
// addon-operator v1.24.4 pkg/task/tasks/module-run/task.go
// parallelSyncTasksToWait), and a Synchronization run that fails is retried
// at its queue's head for ever: one tenant's object that made a sync run
// fail would keep the module, and Deckhouse's startup converge with it,
// waiting. No Helm run reads what these hooks compute (no hook sets
// values), so nothing needs to wait. A binding that only fills a snapshot
// (executeHookOnSynchronization: false) keeps the default: its
// Synchronization runs no hook and cannot fail, and an after-Helm hook
// reading it must see it filled.
func NoWaitForSynchronization(bindings []pkg.KubernetesConfig) []pkg.KubernetesConfig {
	no := false
	for i := range bindings {
		if b := &bindings[i]; b.ExecuteHookOnSynchronization == nil || *b.ExecuteHookOnSynchronization {
			b.WaitForSynchronization = &no
		}
	}
	return bindings
}

// ModuleNamespace is the namespace of the module's own objects.
const ModuleNamespace = "d8-managed-starrocks"

// ValuesPrefix is the module's values root.
const ValuesPrefix = "managedStarrocks"

// MaxInstancesPath is the module setting instances.maxCount: the most
// instances the module manages (openapi/config-values.yaml).
const MaxInstancesPath = ValuesPrefix + ".instances.maxCount"

// MaxPerNamespacePath is the module setting instances.maxPerNamespace: the
// most instances of one namespace the module manages (0: no limit).
const MaxPerNamespacePath = ValuesPrefix + ".instances.maxPerNamespace"

// ClusterDomainPath is the global value with the cluster DNS domain.
const ClusterDomainPath = "global.discovery.clusterDomain"

// Labels the templates put on every object of an instance (see
// templates/_helpers.tpl ms.instanceLabels) and the hooks select by.
const (
	LabelServiceType  = "managed-services.deckhouse.io/managed-service-type"
	ServiceTypeValue  = "starrocks"
	LabelServiceName  = "managed-services.deckhouse.io/managed-service-name"
	LabelInstance     = "app.kubernetes.io/instance"
	LabelComponent    = "app.kubernetes.io/component"
	ComponentFrontend = "frontend"
	ComponentBackend  = "backend"
	// ComponentCompute is the CNs of a shared-data instance.
	ComponentCompute = "compute"
)

// LabelState marks objects the hooks create to hold state in the cluster;
// its value says which state.
const LabelState = "managed-starrocks.deckhouse.io/state"

// State values of LabelState.
const (
	StateLastValid        = "last-valid"
	StateDesired          = "desired"
	StateCredentials      = "credentials"
	StateAgentCredentials = "agent-credentials"
	StateKeystore         = "keystore-password"
	// StateUserCredentials: the connection Secret of a declared user
	// (spec.users, desired.UserSecretName).
	StateUserCredentials = "user-credentials"
)

// UserName is the pattern of a declared user's name: the class rules'
// (classrules.UserNamePattern, tied to the CRD's spec.users[].name).
var UserName = regexp.MustCompile(classrules.UserNamePattern)

// AnnotationInstance on a last-valid ConfigMap names its instance
// (namespace/name) for people; the hooks go by the UID in the name.
const AnnotationInstance = "managed-starrocks.deckhouse.io/instance"

// LastValidKey is the ConfigMap key holding an entry (desired.Instance JSON):
// the last valid one in last-valid-<uid>, the current one in desired-<uid>.
const LastValidKey = "instance.json"

// DesiredPrefix names the ConfigMaps d8-managed-starrocks/desired-<uid>: the
// entry (desired.Instance, key LastValidKey) the instances hook computed for
// the Starrocks of that UID, which the instanceobjects hook renders. They
// are the channel between the two hooks instead of the module's values:
// values are stored with the module's one Helm release in one Secret of at
// most 1 MiB, and an entry holds what a tenant writes (allowed namespaces,
// declared users and roles), so a thousand instances of tenant-sized
// entries would not fit it; a ConfigMap per instance holds one entry.
const DesiredPrefix = "desired-"

// DesiredConfigMapName is the desired-state ConfigMap of a Starrocks UID.
func DesiredConfigMapName(uid string) string { return DesiredPrefix + uid }

// LastValidPrefix starts the name of every last-valid ConfigMap.
const LastValidPrefix = "last-valid-"

// LastValidConfigMapName is the ConfigMap in ModuleNamespace that remembers
// the last valid entry of the Starrocks with this UID. It lives where
// no tenant can write, and is keyed by the UID so an entry is found from the
// live object, never from what the entry says about itself.
func LastValidConfigMapName(uid string) string { return LastValidPrefix + uid }

// ModuleNamespaceSelector binds a hook to objects of ModuleNamespace only:
// copies anywhere else are never in the snapshot.
var ModuleNamespaceSelector = &pkg.NamespaceSelector{NameSelector: &pkg.NameSelector{MatchNames: []string{ModuleNamespace}}}

// HeritageLabel is the label Deckhouse guards: its ValidatingAdmissionPolicy
// label-objects.deckhouse.io lets only Deckhouse's own service accounts
// create or change an object labelled `heritage: deckhouse`, and
// deny-set-heritage-label.deckhouse.io lets nobody else set it.
const (
	HeritageLabel = "heritage"
	HeritageValue = "deckhouse"
)

// ModuleObjectSelector selects the objects the module renders into tenant
// namespaces (InstanceLabels, pkg/instanceobjects ms.instanceLabels): the
// instance label and `heritage: deckhouse`. addon-operator holds every
// object a binding's selector lists in full, in a client-go informer cache
// (shell-operator's FactoryStore), whatever the jq filter keeps; the
// instance label alone is a tenant's to copy onto any number of its own
// objects, the heritage label under Deckhouse is not. Every binding of one
// kind uses this same selector, so they share one informer. A tenant's
// object still selected (without Deckhouse's policies) costs no more than
// the filters keep of it: every filter of a tenant-writable kind is
// bounded (JqTypes cut and cutmsg).
func ModuleObjectSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{LabelServiceType: ServiceTypeValue, HeritageLabel: HeritageValue}}
}

// MaxKeptBytes bounds a string a filter keeps of a tenant-writable object
// where the module's own value is short (a label or annotation key or
// value, an ownerReference's field): a longer one is kept as a marker
// naming its length (Cut in Go, cut in jq), so its object still differs
// from what the module wrote.
const MaxKeptBytes = 128

// Cut is jq's cut (JqTypes): s, or a marker of its length when it is
// longer than MaxKeptBytes.
func Cut(s string) string {
	if len(s) > MaxKeptBytes {
		return "\u2026" + strconv.Itoa(len(s)) + " bytes"
	}
	return s
}

// JqTypes are jq functions the filters of tenant-writable objects use so a
// field of the wrong type never fails the decoding of a snapshot: str and
// num coerce (a wrong type reads as empty), want and whole raise an error
// naming the field, for filters that report an unreadable item instead.
const JqTypes = `def str: if type == "string" then . else "" end;` +
	` def num: if type == "number" then . else 0 end;` +
	` def want($t; $f): if . == null or type == $t then . else error("\($f) is of type \(type), want \($t)") end;` +
	` def whole($f): want("number"; $f) | if . == null or (. == floor and . >= 0 and . < 1000000000000) then . else error("\($f) is not a whole number") end;` +
	` def cut: if utf8bytelength > ` + maxKeptBytesJq + ` then "\u2026\(utf8bytelength) bytes" else . end;` +
	// cutmsg bounds a message of the agent's report: the hooks cut every
	// such message to 1 KiB (MaxEventMessage) on its way to a status or an
	// Event, and a cut to 1025 characters (more than 1024 bytes) leaves
	// that cut the same, so a tenant's long message is never kept whole.
	` def cutmsg: if utf8bytelength > 1024 then .[:1025] else . end;` +
	// name, few and report bound what a filter keeps of an agent's report
	// where a cut would change its meaning (a host, a list of backends):
	// beyond the bound they raise an error naming the field, which the
	// filter turns into an unreadable report of that pod alone.
	` def name($f): want("string"; $f) | if . != null and utf8bytelength > ` + maxNameBytesJq + ` then error("\($f) is longer than ` + maxNameBytesJq + ` bytes") else . end;` +
	` def few($f): want("array"; $f) | if . != null and length > ` + maxReportEntriesJq + ` then error("\($f) has more than ` + maxReportEntriesJq + ` entries") else . end;` +
	` def report($f): tojson | if utf8bytelength > ` + maxReportBytesJq + ` then error("\($f) is \(utf8bytelength) bytes of JSON, more than ` + maxReportBytesJq + `") else . end; `

// maxKeptBytesJq is MaxKeptBytes in jq (TestCutIsJqsCut holds them
// equal).
const maxKeptBytesJq = "128"

// Bounds of what the filters keep of an agent's report (the agent-status
// annotation of an instance pod, which a tenant can write on a pod of its
// own with the instance's labels; the API server bounds it only by 256 KiB
// of annotations). Each is far above what the agent writes, so a real
// report never reaches one.
const (
	// MaxNameBytes bounds a name in the report: a host with its port (a
	// DNS name is at most 253 bytes), a user, a database, a checksum.
	MaxNameBytes = 320
	// MaxReportEntries bounds a list in the report: backends and their
	// drains (the CRD allows 100 BEs), users (64) and databases.
	MaxReportEntries = 128
	// MaxReportBytes bounds the backup and the restore report each, as
	// JSON text: the agent reports at most 3 sets, of which only the
	// running one lists databases, at most 100, each message cut to 512
	// bytes by the agent (about 70 KB at most).
	MaxReportBytes = 128 << 10
)

// The bounds in jq (TestTheReportBoundsAreJqs holds them equal).
const (
	maxNameBytesJq     = "320"
	maxReportEntriesJq = "128"
	maxReportBytesJq   = "131072"
)

// InstanceLabels are the labels of an object the hooks create for an
// instance, matching the templates' ms.instanceLabels so selectors and
// NetworkPolicies treat them alike.
func InstanceLabels(instance, state string) map[string]string {
	return map[string]string{
		"heritage":                     "deckhouse",
		"module":                       "managed-starrocks",
		LabelServiceType:               ServiceTypeValue,
		LabelServiceName:               instance,
		LabelInstance:                  instance,
		"app.kubernetes.io/name":       "starrocks",
		"app.kubernetes.io/managed-by": "deckhouse",
		"app.kubernetes.io/part-of":    "managed-starrocks",
		LabelState:                     state,
	}
}

// OwnerReference makes an object garbage-collected with its Starrocks.
func OwnerReference(name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: v1alpha1.SchemeGroupVersion.String(),
		Kind:       v1alpha1.StarrocksKind,
		Name:       name,
		UID:        types.UID(uid),
	}
}
