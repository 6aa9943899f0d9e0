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

// Package desired turns Starrocks objects and their classes into the
// desired state of each instance (Instance, held to instance.schema.yaml),
// which the instances hook hands to the instanceobjects hook. It
// is pure: no Kubernetes client, no module-sdk, so the hooks, the render
// tests of the templates and benchmarks all call the same code.
//
// Entry point:
//
//	out := desired.Compute(desired.Input{
//		Instances:     starrocksObjects,
//		Classes:       classes,
//		ClusterDomain: "cluster.local",
//		LastValid:     persisted, // namespace/name -> last valid entry, may be nil
//	})
//	values := out.Instances // sorted by namespace/name
//	for _, r := range out.Results { ... } // per instance: valid?, why not, which entry is rendered
//
// An instance whose current spec breaks a class rule keeps the entry it had
// when it was last valid (the hooks persist it in the cluster and pass it in
// LastValid); one that was never valid gets no entry, so nothing is rendered.
package desired

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// Ports of StarRocks that appear in values and status.
const (
	FrontendHTTPPort = 8030
	// FrontendHTTPSPort is fe.conf https_port, StarRocks' default.
	FrontendHTTPSPort = 8443
	QueryPort         = agentconfig.QueryPort
)

// DefaultClusterDomain is used when the input has none.
const DefaultClusterDomain = "cluster.local"

// Input is everything the desired state depends on.
type Input struct {
	// Instances are the Starrocks objects (status is ignored).
	Instances []*v1alpha1.Starrocks
	// Classes are all StarrocksClass objects.
	Classes []*v1alpha1.StarrocksClass
	// ClusterDomain is global.discovery.clusterDomain.
	ClusterDomain string
	// LastValid holds the persisted last valid entry per "namespace/name".
	LastValid map[string]*Instance
	// Cache compiles each class once across runs; nil compiles every call.
	Cache *classrules.Cache
	// Backends is the observed BE state per "namespace/name", for the
	// scale-in decision (BackendReplicas); a missing entry means no
	// StatefulSet yet.
	Backends map[string]BackendObservation
	// Existing is what the existing objects of an instance fix, per
	// "namespace/name"; a missing entry means none exist yet.
	Existing map[string]Existing
	// MaxInstances is the most instances that get an entry (module setting
	// instances.maxCount); 0 means no limit. It bounds what grows with
	// every instance: the hooks' run time, the memory of their snapshots and
	// three ConfigMaps per instance in the module namespace (last-valid,
	// desired, applied). No longer the Helm release: no entry is in the
	// module's values.
	MaxInstances int
	// MaxPerNamespace is the most instances of one namespace that get an
	// entry (module setting instances.maxPerNamespace); 0 means no limit.
	// Without it one tenant could take every place under MaxInstances.
	MaxPerNamespace int
}

// DefaultMaxInstances is the default of the module setting
// instances.maxCount (openapi/config-values.yaml; test/openapi ties them).
const DefaultMaxInstances = 1000

// Existing is what the objects already in the cluster fix in the values of
// an instance, whichever entry (current or last valid) is rendered.
type Existing struct {
	// FrontendTemplateSize, BackendTemplateSize and ComputeTemplateSize
	// (the CN cache) are the volumeClaimTemplates sizes of the existing
	// StatefulSets ("" when the StatefulSet does not exist): the apiserver
	// refuses to change them.
	FrontendTemplateSize, BackendTemplateSize, ComputeTemplateSize string
	// CertificateRevision is status.revision of the instance Certificate,
	// 0 when it has none yet.
	CertificateRevision int64
	// AccountsReady is the instance's AccountsReady condition: root has its
	// password and the accounts exist, so the client ports may open.
	AccountsReady bool
	// CreateImage is the FE StatefulSet's update revision while FE pods
	// still run an older one ("" otherwise): agentConfig.createImage.
	CreateImage string
	// TabletHealth: a BE pod still runs an older revision of the BE
	// StatefulSet, so a BE restart is pending: agentConfig.tabletHealth.
	TabletHealth bool
	// BackupSets and BackupDeletes are the StarrocksBackup objects of the
	// instance the agent is to run and to delete (the hooks pick at most
	// agentconfig.MaxBackupSets and MaxBackupDeletes); BackupHold is why no
	// new job may start (a rollout or a scale-in is pending), "" when jobs
	// may start.
	BackupSets    []agentconfig.BackupSet
	BackupDeletes []agentconfig.BackupDelete
	BackupHold    string
	// Restore is the restore of spec.restore, once the hooks found its
	// source (RestoreConfig); RestorePending keeps the client ports closed
	// until the agent reports it Completed (condition Restored).
	Restore        *agentconfig.RestoreConfig
	RestorePending bool
	// ScaleInHold is why no BE decommission may start now (the leader
	// reports a backup or restore job running, whose BEs upload or
	// download files; the hooks bound the wait), "" when one may.
	ScaleInHold string
}

// backendsOf is what the cluster says about the BEs of an instance: nothing
// for a shared-data one, which has none (its storage mode never changes).
// A StatefulSet under its BE name is not the module's (a tenant can make
// one with the module's labels): counted, it would fail the BE scaling
// rules of a spec without BEs and keep "removed" BEs for a decommission.
// CNs leave through their graceful exit and the agent's DROP COMPUTE NODE.
func backendsOf(sr *v1alpha1.Starrocks, obs map[string]BackendObservation) BackendObservation {
	if sr.Spec.IsSharedData() {
		return BackendObservation{}
	}
	return obs[Key(sr.Namespace, sr.Name)]
}

// applyExisting fills the fields the existing objects decide into a copy of
// the entry to render.
func applyExisting(e Instance, ex Existing) Instance {
	e.Frontend.Storage.TemplateSize = cmp.Or(ex.FrontendTemplateSize, e.Frontend.Storage.Size)
	if e.Compute != nil {
		// No BE on a shared-data instance: a StatefulSet under its BE name
		// fixes nothing (the entry would render BEs otherwise).
		ex.BackendTemplateSize, ex.TabletHealth = "", false
	}
	e.Backend.Storage.TemplateSize = cmp.Or(ex.BackendTemplateSize, e.Backend.Storage.Size)
	if e.Compute != nil {
		// A copy: the entry's ComputeNodes may be the persisted last valid
		// entry's.
		c := *e.Compute
		c.Cache.TemplateSize = cmp.Or(ex.ComputeTemplateSize, c.Cache.Size)
		e.Compute = &c
	}
	// No revision yet is the first issuance: counting it as 1 keeps the
	// pods created with the instance from rolling when cert-manager
	// reports its first revision.
	e.TLS.CertificateRevision = max(ex.CertificateRevision, 1)
	// A restoring instance stays closed to clients: what they wrote would
	// mix with, or be replaced by, the data being restored.
	e.Network.ClientPortsOpen = ex.AccountsReady && !ex.RestorePending
	e.AgentConfig.Bootstrapped = Bootstrapped(ex)
	e.AgentConfig.CreateImage = ex.CreateImage
	e.AgentConfig.TabletHealth = ex.TabletHealth
	if e.AgentConfig.Backup != nil {
		// A copy: the entry's BackupConfig may be the persisted last valid
		// entry's.
		b := *e.AgentConfig.Backup
		b.Sets = ex.BackupSets[:min(len(ex.BackupSets), agentconfig.MaxBackupSets)]
		b.Deletes = ex.BackupDeletes[:min(len(ex.BackupDeletes), agentconfig.MaxBackupDeletes)]
		e.AgentConfig.Backup = &b
	}
	e.AgentConfig.BackupHold = ex.BackupHold
	e.AgentConfig.Restore = ex.Restore
	return e
}

// trustedCAs are the CA Secrets of the instance's object storage, from its
// spec: spec.backup's storage, the storage of spec.restore.source
// (immutable; a restore from a StarrocksBackup reads spec.backup's
// storage) and spec.storage.objectStorage. Not from the restore the agent
// is told to run, which ends with the restore: the list would shrink then,
// and the FEs restart for it.
func trustedCAs(sr *v1alpha1.Starrocks) []TrustedCA {
	var out []TrustedCA
	add := func(ca *v1alpha1.BackupSecretKeyRef, file string) {
		if ca != nil && ca.Name != "" {
			out = append(out, TrustedCA{SecretName: ca.Name, Key: orDefault(ca.Key, "ca.crt"), File: file})
		}
	}
	if b := sr.Spec.Backup; b != nil {
		add(b.Storage.CASecretRef, "backup.crt")
	}
	if r := sr.Spec.Restore; r != nil && r.Source != nil {
		add(r.Source.Storage.CASecretRef, "restore.crt")
	}
	// A shared-data FE reads and writes its tables through the same JVM
	// trust store (the agent's storage volume is the FE's S3 client).
	if s := sr.Spec.Storage; s != nil && s.ObjectStorage != nil {
		add(s.ObjectStorage.CASecretRef, "storage.crt")
	}
	return out
}

// withTrustedCAs records the instance's CA Secrets in its FE. The JVM reads
// its trust store only at start: another CA Secret restarts the FEs.
// Instances without one keep their checksum, so a module upgrade restarts
// nothing.
func withTrustedCAs(f Frontend, sr *v1alpha1.Starrocks) Frontend {
	f.TrustedCAs = trustedCAs(sr)
	f.ConfigChecksum = trustedCAsChecksum(f.ConfigChecksum, f.TrustedCAs)
	return f
}

// backendWithTrustedCAs does the same for the BEs, whose start script
// builds their S3 client's CA bundle only at start.
func backendWithTrustedCAs(b Backend, sr *v1alpha1.Starrocks) Backend {
	b.TrustedCAs = trustedCAs(sr)
	b.ConfigChecksum = trustedCAsChecksum(b.ConfigChecksum, b.TrustedCAs)
	return b
}

// trustedCAsChecksum is a component's config checksum with its CA Secrets
// (unchanged without any).
func trustedCAsChecksum(sum string, cas []TrustedCA) string {
	if len(cas) == 0 {
		return sum
	}
	refs, _ := json.Marshal(cas) // strings always encode
	return checksum(map[string]string{"config": sum, "trustedCAs": string(refs)})
}

// Output is the desired state.
type Output struct {
	// Instances are the values entries, sorted by namespace and name.
	Instances []Instance
	// Results describe every input instance, in the same order.
	Results []Result
	// ClassProblems are the violations of each invalid class, by name.
	ClassProblems map[string]classrules.Violations
}

// Result is the outcome for one Starrocks object.
type Result struct {
	// Key is "namespace/name".
	Key    string
	Object *v1alpha1.Starrocks
	// Violations of the current spec; empty means valid.
	Violations classrules.Violations
	// Entry is what is rendered: the current spec when valid, else the last
	// valid entry, else nil.
	Entry *Instance
	// Current is true when Entry was computed from the current spec (so it
	// should be persisted as the new last valid entry).
	Current bool
	// ScaleIn says whether BE pods are kept beyond the spec's count.
	ScaleIn ScaleIn
	// OverLimit, when not 0, is the limit (Input.MaxInstances) this instance
	// is beyond: MaxInstances older instances exist, so it gets no entry
	// (Entry is nil) whatever its spec and memory.
	OverLimit int
	// NamespaceOverLimit, when not 0, is the limit (Input.MaxPerNamespace)
	// this instance is beyond: that many older instances of its namespace
	// exist, so it gets no entry, as with OverLimit.
	NamespaceOverLimit int
	// Conflict, when not nil, is the older instance of its namespace whose
	// object name this one would use too: two instances would fight over
	// one object, so this one gets no entry, as with OverLimit.
	Conflict *Conflict
}

// Excluded reports whether the instance gets no entry whatever its spec and
// memory (a conflict or a limit).
func (r Result) Excluded() bool {
	return r.Conflict != nil || r.NamespaceOverLimit > 0 || r.OverLimit > 0
}

// Valid reports whether the current spec passes every class rule.
func (r Result) Valid() bool { return len(r.Violations) == 0 }

// Key of an object in LastValid and Results.
func Key(namespace, name string) string { return namespace + "/" + name }

// Compute is the desired state of every instance.
func Compute(in Input) Output {
	domain := in.ClusterDomain
	if domain == "" {
		domain = DefaultClusterDomain
	}
	cache := in.Cache
	if cache == nil {
		cache = classrules.NewCache()
	}
	classes := make(map[string]*classrules.Compiled, len(in.Classes))
	out := Output{ClassProblems: map[string]classrules.Violations{}}
	for _, cl := range in.Classes {
		c, problems := cache.Get(cl)
		classes[cl.Name] = c
		if len(problems) > 0 {
			out.ClassProblems[cl.Name] = problems
		}
	}

	objs := make([]*v1alpha1.Starrocks, len(in.Instances))
	copy(objs, in.Instances)
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].Namespace != objs[j].Namespace {
			return objs[i].Namespace < objs[j].Namespace
		}
		return objs[i].Name < objs[j].Name
	})

	excluded := exclusions(objs, in.MaxPerNamespace, in.MaxInstances)
	locations := LocationConflicts(objs)
	out.Results = make([]Result, 0, len(objs))
	out.Instances = make([]Instance, 0, len(objs))
	for _, sr := range objs {
		res := Result{Key: Key(sr.Namespace, sr.Name), Object: sr}
		c, ok := classes[sr.Spec.StarrocksClassName]
		if !ok {
			res.Violations = classrules.MissingClass(sr.Spec.StarrocksClassName)
		} else {
			resolved, vs := c.Resolve(sr)
			if len(vs) == 0 {
				vs = checkScaling(sr, in.LastValid[res.Key], backendsOf(sr, in.Backends))
			}
			if len(vs) == 0 {
				vs = locations[res.Key]
			}
			if len(vs) == 0 {
				vs = checkStorageKept(sr, in.LastValid[res.Key])
			}
			res.Violations = vs
			if len(vs) == 0 {
				entry := applyExisting(Build(sr, c.Class(), resolved, domain), in.Existing[res.Key])
				var told *Instance
				if last := in.LastValid[res.Key]; last != nil && last.UID == string(sr.UID) {
					told = last
				}
				res.ScaleIn = applyScaleIn(&entry, backendsOf(sr, in.Backends), domain, in.Existing[res.Key].ScaleInHold, told)
				res.Entry, res.Current = &entry, true
			}
		}
		if res.Entry == nil {
			// Only an entry of this very object counts: a Starrocks deleted and
			// recreated under the same name starts from scratch.
			if last := in.LastValid[res.Key]; last != nil && last.UID == string(sr.UID) {
				// A copy: the persisted entry is the caller's.
				entry := applyExisting(*last, in.Existing[res.Key])
				res.Entry = &entry
				res.ScaleIn = describeScaleIn(&entry, backendsOf(sr, in.Backends))
			}
		}
		if x, ok := excluded[res.Key]; ok {
			// Validated like any other (its owner learns whether the spec
			// would pass), but nothing is rendered, not its last valid
			// entry either.
			res.Conflict, res.NamespaceOverLimit, res.OverLimit = x.Conflict, x.NamespaceOverLimit, x.OverLimit
			res.Entry, res.Current, res.ScaleIn = nil, false, ScaleIn{}
		}
		if res.Entry != nil {
			out.Instances = append(out.Instances, *res.Entry)
		}
		out.Results = append(out.Results, res)
	}
	return out
}

// exclusions are the results (Conflict, NamespaceOverLimit, OverLimit only)
// of the instances that get no entry, by key (Exclusions).
func exclusions(objs []*v1alpha1.Starrocks, maxPerNamespace, maxInstances int) map[string]Result {
	placed := make([]Placed, len(objs))
	for i, sr := range objs {
		placed[i] = PlacedOf(sr)
	}
	return Exclusions(placed, maxPerNamespace, maxInstances)
}

// Placed is what the instance limits read of a Starrocks: where it is and
// when it was made. Nothing else decides whether it holds a place, so the
// webhook can decide from object metadata alone.
type Placed struct {
	Namespace, Name string
	Created         metav1.Time
}

// PlacedOf is the Placed of an instance.
func PlacedOf(sr *v1alpha1.Starrocks) Placed {
	return Placed{Namespace: sr.Namespace, Name: sr.Name, Created: sr.CreationTimestamp}
}

// Exclusions are the results (Conflict, NamespaceOverLimit, OverLimit only)
// of the instances that get no entry, by key: the one rule both the hooks
// (Compute) and the webhook (Admit) count by. objs are the instances that
// are not ending (being deleted, or in a namespace being deleted). Decided
// by creation time (ties by namespace and name), so the oldest keep their
// place and a newer instance never displaces one that is already managed:
// first an instance sharing an object name with an older one of its
// namespace, then, of the rest, those past the first maxPerNamespace of
// their namespace, then those past the first maxInstances of the cluster
// (0: no limit). An instance excluded by one rule takes no place under the
// next.
func Exclusions(objs []Placed, maxPerNamespace, maxInstances int) map[string]Result {
	byAge := make([]Placed, len(objs))
	copy(byAge, objs)
	sort.Slice(byAge, func(i, j int) bool {
		a, b := byAge[i], byAge[j]
		if !a.Created.Equal(&b.Created) {
			return a.Created.Before(&b.Created)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	out := map[string]Result{}
	for key, c := range conflicts(byAge) {
		out[key] = Result{Conflict: &c}
	}
	perNamespace := map[string]int{}
	managed := 0
	for _, p := range byAge {
		key := Key(p.Namespace, p.Name)
		if _, ok := out[key]; ok {
			continue
		}
		if maxPerNamespace > 0 && perNamespace[p.Namespace] >= maxPerNamespace {
			out[key] = Result{NamespaceOverLimit: maxPerNamespace}
			continue
		}
		perNamespace[p.Namespace]++
		if maxInstances > 0 && managed >= maxInstances {
			out[key] = Result{OverLimit: maxInstances}
			continue
		}
		managed++
	}
	return out
}

// Admission is the webhook's answer to a new instance under the limits
// (Admit).
type Admission struct {
	// Allowed: the new instance would hold a place, and no instance that
	// holds one now would lose it.
	Allowed bool
	// NamespaceFull: refused by the namespace's share (maxPerNamespace),
	// else, when not Allowed, by the cluster's limit (maxInstances).
	NamespaceFull bool
	// InNamespace and Managed count the instances that hold a place now:
	// of the new one's namespace, and of the cluster.
	InNamespace, Managed int
}

// Admit decides a new instance c against the instances objs that exist
// (not ending) with Exclusions, the hooks' rule: c is admitted only if it
// would get a place and take none from an instance that has one. The
// second part matters when c ties with an existing instance's creation
// second and sorts before it: the hooks would then manage c instead, and a
// burst could hold more than the limit for a moment.
func Admit(objs []Placed, c Placed, maxPerNamespace, maxInstances int) Admission {
	before := Exclusions(objs, maxPerNamespace, maxInstances)
	var a Admission
	for _, p := range objs {
		if _, out := before[Key(p.Namespace, p.Name)]; out {
			continue
		}
		a.Managed++
		if p.Namespace == c.Namespace {
			a.InNamespace++
		}
	}
	with := append(append(make([]Placed, 0, len(objs)+1), objs...), c)
	after := Exclusions(with, maxPerNamespace, maxInstances)
	a.Allowed = true
	for key, r := range after {
		if _, was := before[key]; was && key != Key(c.Namespace, c.Name) {
			continue
		}
		a.Allowed = false
		if r.NamespaceOverLimit > 0 {
			a.NamespaceFull = true
		}
	}
	return a
}

// NamesFor are the object names of an instance.
func NamesFor(name string) Names {
	base := "d8ms-sr-" + name
	return Names{
		FrontendStatefulSet:     base,
		BackendStatefulSet:      base + "-be",
		ClientService:           base,
		FrontendHeadlessService: base + "-fe-headless",
		BackendHeadlessService:  base + "-be-headless",
		ComputeStatefulSet:      base + "-cn",
		ComputeHeadlessService:  base + "-cn-headless",
		ConfigMap:               base + "-config",
		CredentialsSecret:       base + "-credentials",
		AgentCredentialsSecret:  base + "-agent-credentials",
	}
}

// TLSSecretName is the Secret cert-manager writes the instance certificate to.
func TLSSecretName(name string) string { return "d8ms-sr-" + name + "-tls" }

// KeystoreSecretName is the Secret (created by the hooks) with the PKCS12
// keystore password.
func KeystoreSecretName(name string) string { return "d8ms-sr-" + name + "-keystore" }

// UserSecretName is the connection Secret of user of instance name,
// d8ms-sr-<name>-user.<user>: '_' becomes '-' (a user name has no '-', so
// two users never share a Secret; it does not end with '_', so the name ends
// with a letter or digit). The dot keeps it apart from every other
// instance's names: instance names have no dot, so no user of instance "a"
// can name the Secret d8ms-sr-a-user-b-credentials of instance "a-user-b",
// which the agent of "a" would then be allowed to patch.
func UserSecretName(name, user string) string {
	return "d8ms-sr-" + name + "-user." + strings.ReplaceAll(user, "_", "-")
}

// ServiceFQDN is the cluster DNS name of a Service.
func ServiceFQDN(service, namespace, domain string) string {
	return fmt.Sprintf("%s.%s.svc.%s", service, namespace, domain)
}

// Endpoints of an instance, as shown in status.
func Endpoints(name, namespace, domain string) v1alpha1.Endpoints {
	host := ServiceFQDN(NamesFor(name).ClientService, namespace, domain)
	return v1alpha1.Endpoints{
		Query: fmt.Sprintf("%s:%d", host, QueryPort),
		HTTPS: fmt.Sprintf("%s:%d", host, FrontendHTTPSPort),
		HTTP:  fmt.Sprintf("%s:%d", host, FrontendHTTPPort),
	}
}

// Build computes the entry (desired state) of a valid instance.
func Build(sr *v1alpha1.Starrocks, class *v1alpha1.StarrocksClass, r *classrules.Resolved, domain string) Instance {
	names := NamesFor(sr.Name)
	if r.SharedData == nil {
		// Reserved (ObjectNames), but a local instance's entry has no use
		// for them.
		names.ComputeStatefulSet, names.ComputeHeadlessService = "", ""
	}
	ns := sr.Namespace
	feHosts := podHosts(names.FrontendStatefulSet, names.FrontendHeadlessService, ns, domain, r.Frontend.Replicas)
	beHosts := podHosts(names.BackendStatefulSet, names.BackendHeadlessService, ns, domain, r.Backend.Replicas)
	clientFQDN := ServiceFQDN(names.ClientService, ns, domain)

	cfg := Configuration{
		StreamingLoadMaxMb:               r.Configuration.StreamingLoadMaxMb,
		LoadProcessMaxMemoryLimitPercent: r.Configuration.LoadProcessMaxMemoryLimitPercent,
		CatalogTrashExpireSecond:         r.Configuration.CatalogTrashExpireSecond,
		// The module's choice: StarRocks' default is 3, which fails
		// CREATE TABLE on fewer BEs.
		DefaultReplicationNum: min(3, r.Backend.Replicas),
	}
	heap := JavaHeapMb(r.Frontend.Memory.Value())
	beMem := BackendMemoryFor(r.Backend.Memory.Value())
	memLimit := beMem.MemLimitBytes

	// The TLS certificate is served by the FE only (ports 9030 and 8443): its SANs are
	// the client Service in every form a client may dial plus each FE pod,
	// which a client may address directly (e.g. the leader).
	dnsNames := []string{
		names.ClientService,
		names.ClientService + "." + ns,
		names.ClientService + "." + ns + ".svc",
		clientFQDN,
	}
	dnsNames = append(dnsNames, feHosts...)

	e := Instance{
		Name:       sr.Name,
		Namespace:  ns,
		UID:        string(sr.UID),
		ClassName:  class.Name,
		Type:       string(r.Type),
		Generation: sr.Generation,
		Topology:   string(r.Topology),
		Zones:      r.Zones,
		Frontend: withTrustedCAs(Frontend{
			JavaHeapMb:     heap,
			Replicas:       r.Frontend.Replicas,
			Resources:      resources(r.Frontend),
			Storage:        Storage{Size: r.Frontend.Storage.String(), StorageClassName: r.Frontend.StorageClass},
			ConfigChecksum: checksum(map[string]string{"requireSecureTransport": strconv.FormatBool(r.RequireSecureTransport), "javaHeapMb": strconv.FormatInt(heap, 10)}),
			Hosts:          feHosts,
		}, sr),
		Backend: backendWithTrustedCAs(Backend{
			MemLimitBytes:  memLimit,
			JavaHeapMb:     beMem.JavaHeapMb,
			Replicas:       r.Backend.Replicas,
			Resources:      resources(r.Backend),
			Storage:        Storage{Size: r.Backend.Storage.String(), StorageClassName: r.Backend.StorageClass},
			ConfigChecksum: checksum(map[string]string{"loadProcessMaxMemoryLimitPercent": strconv.FormatInt(cfg.LoadProcessMaxMemoryLimitPercent, 10), "memLimitBytes": strconv.FormatInt(memLimit, 10), "javaHeapMb": strconv.FormatInt(beMem.JavaHeapMb, 10)}),
			Hosts:          beHosts,
		}, sr),
		Configuration: cfg,
		TLS: TLS{
			RequireSecureTransport:     r.RequireSecureTransport,
			SecretName:                 TLSSecretName(sr.Name),
			KeystorePasswordSecretName: KeystoreSecretName(sr.Name),
			DNSNames:                   dnsNames,
		},
		Scheduling: Scheduling{
			NodeSelector: class.Spec.NodeSelector,
			NodeAffinity: class.Spec.NodeAffinity,
			Tolerations:  class.Spec.Tolerations,
			// Checked by classrules (a DNS-1123 subdomain, no system-).
			PriorityClassName: class.Spec.PriorityClassName,
		},
		AgentConfig: agentconfig.Config{
			Instance:      Key(ns, sr.Name),
			QueryHost:     clientFQDN,
			QueryPort:     agentconfig.QueryPort,
			Frontends:     feHosts,
			EditLogPort:   agentconfig.EditLogPort,
			Backends:      beHosts,
			HeartbeatPort: agentconfig.HeartbeatPort,
			FrontendConfig: map[string]string{
				"catalog_trash_expire_second": strconv.FormatInt(cfg.CatalogTrashExpireSecond, 10),
				"default_replication_num":     strconv.Itoa(int(cfg.DefaultReplicationNum)),
			},
			BackendConfig: map[string]string{
				"streaming_load_max_mb": strconv.FormatInt(cfg.StreamingLoadMaxMb, 10),
			},
			Grants:                  GrantsFor(sr),
			Backup:                  backupConfig(sr),
			BackupJobTimeoutSeconds: backupJobTimeoutSeconds(class),
		},
		Network: Network{AllowedNamespaces: allowedNamespaces(sr.Spec.Network)},
		Names:   names,
	}
	buildSharedData(&e, sr, r, domain)
	return e
}

// allowedNamespaces copies spec.network.allowedNamespaces (nil when none).
func allowedNamespaces(n *v1alpha1.NetworkSpec) []NamespaceSelector {
	if n == nil || len(n.AllowedNamespaces) == 0 {
		return nil
	}
	out := make([]NamespaceSelector, len(n.AllowedNamespaces))
	for i, sel := range n.AllowedNamespaces {
		labels := make(map[string]string, len(sel.MatchLabels))
		for k, v := range sel.MatchLabels {
			labels[k] = v
		}
		out[i] = NamespaceSelector{MatchLabels: labels}
	}
	return out
}

// EffectiveConfiguration is the configuration of an entry as the API type,
// for status.configuration.
func EffectiveConfiguration(e *Instance) *v1alpha1.Configuration {
	lp := int32(e.Configuration.LoadProcessMaxMemoryLimitPercent)
	sl, ct := e.Configuration.StreamingLoadMaxMb, e.Configuration.CatalogTrashExpireSecond
	return &v1alpha1.Configuration{StreamingLoadMaxMb: &sl, LoadProcessMaxMemoryLimitPercent: &lp, CatalogTrashExpireSecond: &ct}
}

func podHosts(sts, headless, ns, domain string, replicas int32) []string {
	hosts := make([]string, replicas)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("%s-%d.%s.%s.svc.%s", sts, i, headless, ns, domain)
	}
	return hosts
}

func resources(c classrules.ResolvedComponent) Resources {
	mem := memoryString(c.Memory)
	// Request = cores * fraction / 100 in millicores; the limit is the cores.
	req := int64(c.Cores) * int64(c.CoreFraction) * 10
	return Resources{
		Requests: ResourceList{CPU: fmt.Sprintf("%dm", req), Memory: mem},
		Limits:   ResourceList{CPU: strconv.Itoa(int(c.Cores)), Memory: mem},
	}
}

// memoryString renders a quantity in the schema's form (an integer with
// Ki/Mi/Gi/Ti or plain bytes), whatever unit the user wrote (4G, 0.5Gi…).
func memoryString(q resource.Quantity) string {
	b := q.Value()
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if b%u.size == 0 && b >= u.size {
			return strconv.FormatInt(b/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

// checksum hashes restart-needing settings in a stable order (JSON encodes
// map keys sorted). It only has to change when the settings do, so the first
// 64 bits of SHA-256 are plenty; the full hash cost about 70 stored bytes per
// instance when the entries were in the Helm release, and the entry and the
// pod template each still hold it.
func checksum(settings map[string]string) string {
	data, _ := json.Marshal(settings) // a map of strings always encodes
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
