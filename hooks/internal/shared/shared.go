// Package shared holds the names and labels several hooks agree on: the
// objects one hook writes and another one reads.
package shared

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// ModuleNamespace is the namespace of the module's own objects.
const ModuleNamespace = "d8-managed-starrocks"

// ValuesPrefix is the module's values root.
const ValuesPrefix = "managedStarrocks"

// InstancesValuesPath is where the desired state goes.
const InstancesValuesPath = ValuesPrefix + ".internal.instances"

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
)

// LabelState marks objects the hooks create to hold state in the cluster;
// its value says which state.
const LabelState = "managed-starrocks.deckhouse.io/state"

// State values of LabelState.
const (
	StateLastValid   = "last-valid"
	StateCredentials = "credentials"
	StateKeystore    = "keystore-password"
)

// LastValidKey is the ConfigMap key holding the last valid values entry (JSON).
const LastValidKey = "instance.json"

// LastValidConfigMapName is the ConfigMap that remembers the last valid
// values entry of an instance.
func LastValidConfigMapName(instance string) string { return "d8ms-sr-" + instance + "-last-valid" }

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
