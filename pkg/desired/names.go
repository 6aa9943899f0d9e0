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

package desired

import (
	"sort"
	"strings"
)

// ObjectName is one name the objects of an instance use in its namespace:
// one object (Exact), or a family of them.
type ObjectName struct {
	Kind string
	Name string
	// Form says which names it stands for.
	Form NameForm
}

// NameForm is how an ObjectName stands for object names.
type NameForm int

const (
	// Exact is the one name Name.
	Exact NameForm = iota
	// Ordinals are Name-0, Name-1, …: a StatefulSet's pods and the PVCs of
	// its volumeClaimTemplates, as many as its replicas are now or ever
	// will be.
	Ordinals
	// Prefixed is every name that starts with Name (the declared users'
	// Secrets, one per user).
	Prefixed
)

// String is the name as a message shows it: a family with a placeholder.
func (n ObjectName) String() string {
	switch n.Form {
	case Ordinals:
		return n.Kind + " " + n.Name + "-<ordinal>"
	case Prefixed:
		return n.Kind + " " + n.Name + "<user>"
	}
	return n.Kind + " " + n.Name
}

// ObjectNames lists every name the objects of instance name use in its
// namespace: what pkg/instanceobjects renders, the Secrets the hooks and
// cert-manager write, and the pods and PVCs of its StatefulSets (the
// render test in dev/chartrender keeps it complete). Names other
// controllers make unique themselves (ControllerRevisions, EndpointSlices,
// CertificateRequests, Events) are theirs to keep apart.
//
// Every name is a lead fixed per kind ("", or "meta-"/"storage-"/"cache-" for PVCs),
// "d8ms-sr-", the instance name, then nothing, "-" or ".": two instances
// can share a name only when one's name is the other's followed by "-" or
// "." (mayShare relies on it; TestObjectNamesLeadWithTheInstanceName
// checks it).
//
// The templates build some names from NamesFor without a field of their
// own in the entry (so the entry stays smaller): "-ca" (ms.caName)
// and "-agent" (the agent's RBAC); the FE and BE volumeClaimTemplates are
// "meta" and "storage".
func ObjectNames(name string) []ObjectName {
	n := NamesFor(name)
	ca, agent := n.FrontendStatefulSet+"-ca", n.FrontendStatefulSet+"-agent"
	return []ObjectName{
		{Kind: "StatefulSet", Name: n.FrontendStatefulSet},
		{Kind: "StatefulSet", Name: n.BackendStatefulSet},
		{Kind: "PodDisruptionBudget", Name: n.FrontendStatefulSet},
		{Kind: "PodDisruptionBudget", Name: n.BackendStatefulSet},
		{Kind: "Service", Name: n.ClientService},
		{Kind: "Service", Name: n.FrontendHeadlessService},
		{Kind: "Service", Name: n.BackendHeadlessService},
		{Kind: "ConfigMap", Name: n.ConfigMap},
		{Kind: "Secret", Name: n.CredentialsSecret},
		{Kind: "Secret", Name: n.AgentCredentialsSecret},
		{Kind: "Secret", Name: TLSSecretName(name)},
		{Kind: "Secret", Name: KeystoreSecretName(name)},
		{Kind: "Secret", Name: ca}, // cert-manager writes the CA there
		{Kind: "Secret", Name: UserSecretName(name, ""), Form: Prefixed},
		{Kind: "Certificate", Name: n.FrontendStatefulSet},
		{Kind: "Certificate", Name: ca},
		{Kind: "Issuer", Name: ca},
		{Kind: "NetworkPolicy", Name: n.FrontendStatefulSet},
		{Kind: "ServiceAccount", Name: agent},
		{Kind: "Role", Name: agent},
		{Kind: "RoleBinding", Name: agent},
		{Kind: "Pod", Name: n.FrontendStatefulSet, Form: Ordinals},
		{Kind: "Pod", Name: n.BackendStatefulSet, Form: Ordinals},
		{Kind: "PersistentVolumeClaim", Name: "meta-" + n.FrontendStatefulSet, Form: Ordinals},
		{Kind: "PersistentVolumeClaim", Name: "storage-" + n.BackendStatefulSet, Form: Ordinals},
		// The CNs of an ObjectStorage instance, reserved for every one.
		{Kind: "StatefulSet", Name: n.ComputeStatefulSet},
		{Kind: "PodDisruptionBudget", Name: n.ComputeStatefulSet},
		{Kind: "HorizontalPodAutoscaler", Name: n.ComputeStatefulSet},
		{Kind: "Service", Name: n.ComputeHeadlessService},
		{Kind: "Pod", Name: n.ComputeStatefulSet, Form: Ordinals},
		{Kind: "PersistentVolumeClaim", Name: "cache-" + n.ComputeStatefulSet, Form: Ordinals},
	}
}

// Has reports whether the object kind/name is one of names.
func Has(names []ObjectName, kind, name string) bool {
	for _, n := range names {
		if n.Kind == kind && n.matches(name) {
			return true
		}
	}
	return false
}

func (n ObjectName) matches(s string) bool {
	switch n.Form {
	case Ordinals:
		rest, ok := strings.CutPrefix(s, n.Name)
		return ok && len(rest) > 1 && rest[0] == '-' && isDigits(rest[1:])
	case Prefixed:
		return strings.HasPrefix(s, n.Name)
	}
	return s == n.Name
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Shared returns an object name both instances a and b would use, if any:
// two instances of one namespace collide when their name sets intersect.
func Shared(a, b string) (ObjectName, bool) {
	return shared(ObjectNames(a), ObjectNames(b))
}

// sameKind are the index pairs of ObjectNames whose kinds are equal: the
// list has the same kinds in the same order for every instance, so only
// these pairs can meet.
var sameKind = func() [][2]int {
	names := ObjectNames("x")
	var pairs [][2]int
	for i, x := range names {
		for j, y := range names {
			if x.Kind == y.Kind {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	return pairs
}()

// shared is Shared of two ObjectNames lists.
func shared(na, nb []ObjectName) (ObjectName, bool) {
	for _, p := range sameKind {
		if w, ok := overlap(na[p[0]], nb[p[1]]); ok {
			return w, true
		}
	}
	return ObjectName{}, false
}

// overlap returns a name of kind x.Kind that both x and y stand for.
func overlap(x, y ObjectName) (ObjectName, bool) {
	if x.Form > y.Form {
		x, y = y, x
	}
	switch {
	case x.Form == Exact:
		return x, y.matches(x.Name)
	case x.Form == Ordinals && y.Form == Ordinals:
		// Name-<digits> = Name'-<digits'> needs Name = Name': otherwise the
		// longer one continues with "-" inside the other's digits.
		return x, x.Name == y.Name
	case x.Form == Ordinals: // y Prefixed
		// x.Name + "-" + digits starts with y.Name: y.Name is a prefix of
		// x.Name + "-", or x.Name + "-" and digits are a prefix of y.Name.
		if strings.HasPrefix(x.Name, y.Name) || y.Name == x.Name+"-" {
			return x, true
		}
		if rest, ok := strings.CutPrefix(y.Name, x.Name); ok && len(rest) > 1 && rest[0] == '-' && isDigits(rest[1:]) {
			return ObjectName{Kind: x.Kind, Name: y.Name + "0"}, true
		}
		return ObjectName{}, false
	default: // both Prefixed
		if len(x.Name) < len(y.Name) {
			x, y = y, x
		}
		return x, strings.HasPrefix(x.Name, y.Name)
	}
}

// Conflict is an older instance of the same namespace one of whose object
// names an instance would use too.
type Conflict struct {
	// Other is the name of the older instance.
	Other string
	// Object is the name both would use.
	Object ObjectName
}

// mayShare reports whether instances a and b may share an object name at
// all: only when one's name is the other's followed by a separator, as every
// object name continues after the instance name with nothing, '-' or '.'
// (ObjectNames).
func mayShare(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return strings.HasPrefix(b, a) && len(b) > len(a) && (b[len(a)] == '-' || b[len(a)] == '.')
}

// ConflictWith returns the first of others (in their order) whose objects
// share a name with those of instance name: the webhook's check of a new
// instance against those of its namespace.
func ConflictWith(name string, others []string) (Conflict, bool) {
	for _, o := range others {
		if o == name || !mayShare(name, o) {
			continue
		}
		if w, ok := Shared(o, name); ok {
			return Conflict{Other: o, Object: w}, true
		}
	}
	return Conflict{}, false
}

// conflicts returns, by key, every instance that shares an object name with
// an older instance of its namespace, and the oldest such instance. byAge
// is sorted by creation time, ties by namespace and name. An instance is
// compared with every older one, managed or not, as the webhook compares a
// new one with every existing one: a newer instance never takes the names
// of an older one, so deleting the oldest never takes the entry of one
// that has it.
func conflicts(byAge []Placed) map[string]Conflict {
	type member struct {
		name string
		rank int
	}
	byNamespace := map[string][]member{}
	for i, sr := range byAge {
		byNamespace[sr.Namespace] = append(byNamespace[sr.Namespace], member{sr.Name, i})
	}
	out := map[string]Conflict{}
	names := map[string][]ObjectName{} // computed once per instance, for those that nest
	namesOf := func(name string) []ObjectName {
		n, ok := names[name]
		if !ok {
			n = ObjectNames(name)
			names[name] = n
		}
		return n
	}
	for ns, ms := range byNamespace {
		clear(names)
		// Sorted by name, the names that start with one follow it.
		sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
		oldest := map[string]int{} // name -> rank of the oldest it collides with
		for i := range ms {
			for j := i + 1; j < len(ms) && strings.HasPrefix(ms[j].name, ms[i].name); j++ {
				if !mayShare(ms[i].name, ms[j].name) {
					continue
				}
				w, ok := shared(namesOf(ms[i].name), namesOf(ms[j].name))
				if !ok {
					continue
				}
				older, newer := ms[i], ms[j]
				if newer.rank < older.rank {
					older, newer = newer, older
				}
				if r, seen := oldest[newer.name]; !seen || older.rank < r {
					oldest[newer.name] = older.rank
					out[Key(ns, newer.name)] = Conflict{Other: older.name, Object: w}
				}
			}
		}
	}
	return out
}
