package instances

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/hooks/internal/shared"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

// State is everything the hook reads from its snapshots.
type State struct {
	Instances      []*v1alpha1.Starrocks
	InstanceStatus map[string]v1alpha1.StarrocksStatus // by namespace/name
	Classes        []*v1alpha1.StarrocksClass
	ClassStatus    map[string]v1alpha1.StarrocksClassStatus // by name
	StatefulSets   []StatefulSetSnap
	Pods           []PodSnap
	Certificates   []CertificateSnap
	LastValid      []LastValidSnap
	PVCs           []PVCSnap
	StorageClasses []StorageClassSnap
	ClusterDomain  string
}

// StatefulSetSnap is the jq-filtered StatefulSet.
type StatefulSetSnap struct {
	Namespace string `json:"namespace"`
	Instance  string `json:"instance"`
	Component string `json:"component"`
	StatefulSetState
}

// PodSnap is the jq-filtered FE pod.
type PodSnap struct {
	Namespace  string          `json:"namespace"`
	Name       string          `json:"name"`
	Instance   string          `json:"instance"`
	AgentTLS   *AgentTLS       `json:"agentTLS"`
	Membership *MembershipSnap `json:"membership"`
}

// MembershipSnap is the membership of the agent status (the FE leader's
// agent reports one), or Unreadable when the annotation could not be read.
type MembershipSnap struct {
	agentconfig.MembershipStatus
	Unreadable bool `json:"unreadable,omitempty"`
}

// CertificateSnap is the jq-filtered Certificate.
type CertificateSnap struct {
	Namespace string `json:"namespace"`
	Instance  string `json:"instance"`
	CertificateState
}

// LastValidSnap is the jq-filtered last-valid ConfigMap.
type LastValidSnap struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Entry     string `json:"entry"`
}

// Plan is what one run writes.
type Plan struct {
	// Values is managedStarrocks.internal.instances.
	Values []desired.Instance
	// LastValid are the ConfigMaps to create or update.
	LastValid []*corev1.ConfigMap
	// StatusPatches are the instance statuses that changed.
	StatusPatches []StatusPatch
	// VolumeExpansions are the PVCs to grow to their desired size.
	VolumeExpansions []VolumeExpansion
	// ClassStatusPatches are the class statuses that changed.
	ClassStatusPatches []ClassStatusPatch
	// Results per instance (for metrics and logs).
	Results []desired.Result
	// Phases are the phases reported, by namespace/name.
	Phases map[string]v1alpha1.Phase
	// Warnings are problems that do not stop the run (e.g. a corrupt persisted entry).
	Warnings []string
}

// StatusPatch is a new status of a Starrocks.
type StatusPatch struct {
	Namespace, Name string
	Status          v1alpha1.StarrocksStatus
}

// ClassStatusPatch is a new status of a StarrocksClass.
type ClassStatusPatch struct {
	Name   string
	Status v1alpha1.StarrocksClassStatus
}

// Reconcile decides the whole desired state from the snapshots.
func Reconcile(s State, cache *classrules.Cache, now metav1.Time) Plan {
	plan := Plan{Phases: map[string]v1alpha1.Phase{}}
	lastValid := map[string]*desired.Instance{}
	persisted := map[string]string{}
	for _, lv := range s.LastValid {
		var e desired.Instance
		if err := json.Unmarshal([]byte(lv.Entry), &e); err != nil {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("ConfigMap %s/%s: the persisted last valid configuration is not readable and is ignored: %v", lv.Namespace, lv.Name, err))
			continue
		}
		key := desired.Key(e.Namespace, e.Name)
		lastValid[key] = &e
		persisted[key] = lv.Entry
	}

	obs := observe(s)
	backends := make(map[string]desired.BackendObservation, len(obs))
	existing := make(map[string]desired.Existing, len(obs))
	for key, o := range obs {
		b := desired.BackendObservation{Reports: o.Membership, Unreadable: o.MembershipUnreadable}
		if o.Backend != nil {
			b.Replicas = &o.Backend.Replicas
		}
		backends[key] = b
		ex := desired.Existing{}
		if o.Frontend != nil {
			ex.FrontendTemplateSize = o.Frontend.TemplateSize
		}
		if o.Backend != nil {
			ex.BackendTemplateSize = o.Backend.TemplateSize
		}
		if o.Certificate != nil {
			ex.CertificateRevision = o.Certificate.Revision
		}
		existing[key] = ex
	}
	out := desired.Compute(desired.Input{
		Instances:     s.Instances,
		Classes:       s.Classes,
		ClusterDomain: s.ClusterDomain,
		LastValid:     lastValid,
		Cache:         cache,
		Backends:      backends,
		Existing:      existing,
	})
	plan.Values = out.Instances
	expandable := make(map[string]bool, len(s.StorageClasses))
	for _, sc := range s.StorageClasses {
		expandable[sc.Name] = sc.AllowVolumeExpansion
	}
	plan.Results = out.Results
	domain := s.ClusterDomain
	if domain == "" {
		domain = desired.DefaultClusterDomain
	}

	for _, res := range out.Results {
		sr := res.Object
		if res.Current {
			data, err := json.Marshal(res.Entry)
			if err == nil && !bytes.Equal(data, []byte(persisted[res.Key])) {
				plan.LastValid = append(plan.LastValid, lastValidConfigMap(res.Entry, string(data)))
			}
		}
		o := obs[res.Key]
		if res.Entry != nil {
			var expand []VolumeExpansion
			expand, o.Volumes = planVolumes(res.Entry, o.PVCs, expandable)
			plan.VolumeExpansions = append(plan.VolumeExpansions, expand...)
		}
		prev := s.InstanceStatus[res.Key]
		st := ComputeStatus(res, prev, o, domain, now)
		plan.Phases[res.Key] = st.Phase
		if !sameJSON(st, prev) {
			plan.StatusPatches = append(plan.StatusPatches, StatusPatch{Namespace: sr.Namespace, Name: sr.Name, Status: st})
		}
	}

	for _, cl := range s.Classes {
		problems := out.ClassProblems[cl.Name]
		prev := s.ClassStatus[cl.Name]
		st := ComputeClassStatus(cl, problems, prev, now)
		if !sameJSON(st, prev) {
			plan.ClassStatusPatches = append(plan.ClassStatusPatches, ClassStatusPatch{Name: cl.Name, Status: st})
		}
	}
	cache.Retain(s.Classes)
	return plan
}

func observe(s State) map[string]Observed {
	obs := map[string]Observed{}
	get := func(ns, inst string) Observed { return obs[desired.Key(ns, inst)] }
	put := func(ns, inst string, o Observed) { obs[desired.Key(ns, inst)] = o }
	for _, st := range s.StatefulSets {
		o := get(st.Namespace, st.Instance)
		state := st.StatefulSetState
		switch st.Component {
		case shared.ComponentFrontend:
			o.Frontend = &state
		case shared.ComponentBackend:
			o.Backend = &state
		}
		put(st.Namespace, st.Instance, o)
	}
	for _, c := range s.Certificates {
		o := get(c.Namespace, c.Instance)
		state := c.CertificateState
		o.Certificate = &state
		put(c.Namespace, c.Instance, o)
	}
	for _, pvc := range s.PVCs {
		o := get(pvc.Namespace, pvc.Instance)
		o.PVCs = append(o.PVCs, pvc)
		put(pvc.Namespace, pvc.Instance, o)
	}
	for _, p := range s.Pods {
		o := get(p.Namespace, p.Instance)
		if o.AgentTLS == nil {
			o.AgentTLS = map[string]*AgentTLS{}
		}
		o.AgentTLS[p.Name] = p.AgentTLS
		switch m := p.Membership; {
		case m == nil:
		case m.Unreadable:
			o.MembershipUnreadable = true
		default:
			o.Membership = append(o.Membership, &m.MembershipStatus)
		}
		put(p.Namespace, p.Instance, o)
	}
	return obs
}

func lastValidConfigMap(e *desired.Instance, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            shared.LastValidConfigMapName(e.Name),
			Namespace:       e.Namespace,
			Labels:          shared.InstanceLabels(e.Name, shared.StateLastValid),
			OwnerReferences: []metav1.OwnerReference{shared.OwnerReference(e.Name, e.UID)},
		},
		Data: map[string]string{shared.LastValidKey: data},
	}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
