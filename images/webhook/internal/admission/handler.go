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

// Package admission answers the AdmissionReviews of Starrocks and
// StarrocksClass objects. Every rule comes from pkg/classrules; this package
// only decodes requests, picks the class, and turns violations into answers a
// user can act on.
package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/classes"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/instances"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
	"github.com/deckhouse/managed-starrocks/pkg/plural"
)

// Paths the webhook serves; the WebhookConfigurations in templates/webhook
// point at them.
const (
	PathValidateStarrocks      = "/validate-starrocks"
	PathMutateStarrocks        = "/mutate-starrocks"
	PathValidateStarrocksClass = "/validate-starrocksclass"
	PathMutateStarrocksClass   = "/mutate-starrocksclass"
	PathValidateBackup         = "/validate-starrocksbackup"
)

// maxBody bounds a review: objects are a few KiB, etcd caps them at 1.5 MiB.
const maxBody = 3 << 20

// ClassGetter finds a StarrocksClass by name; classes.ErrNotFound when it
// does not exist.
type ClassGetter interface {
	Get(ctx context.Context, name string) (*v1alpha1.StarrocksClass, error)
}

// InstanceLister finds the Starrocks of a class ("namespace/name", sorted;
// instances being deleted do not count), and decides a new instance with
// what exists (instances.View), one decision at a time: Decide remembers
// an instance decide admitted (unless remember is false: a dry run) until
// the list shows it, so CREATEs arriving together do not all see the same
// count.
type InstanceLister interface {
	Users(ctx context.Context, class string) ([]string, error)
	Decide(ctx context.Context, c desired.Placed, class string, remember bool, decide func(instances.View) bool) error
}

// ObjectGetter reads a Starrocks or a StarrocksBackup of a namespace live;
// nil and no error when it does not exist. BackupCount counts the
// StarrocksBackups of a namespace whose spec.instanceName is instance, those
// being deleted included (classrules.MaxBackups).
type ObjectGetter interface {
	Instance(ctx context.Context, namespace, name string) (*v1alpha1.Starrocks, error)
	Backup(ctx context.Context, namespace, name string) (*v1alpha1.StarrocksBackup, error)
	BackupCount(ctx context.Context, namespace, instance string) (int, error)
}

// CompileFunc compiles a class: (*classrules.Cache).Get in production,
// classrules.Compile in the benchmark's baseline.
type CompileFunc func(*v1alpha1.StarrocksClass) (*classrules.Compiled, classrules.Violations)

// Handler serves the four admission paths.
type Handler struct {
	Classes   ClassGetter
	Instances InstanceLister
	Objects   ObjectGetter
	Compile   CompileFunc
	Log       *slog.Logger
	Metrics   *Metrics // optional
	// MaxInstances is the module setting instances.maxCount: a CREATE is
	// refused once the cluster has that many Starrocks. 0 means no limit.
	MaxInstances int
	// MaxPerNamespace is the module setting instances.maxPerNamespace: a
	// CREATE is refused once its namespace has that many. 0 means no limit.
	MaxPerNamespace int
}

// reviewFunc answers one request. An error means "could not decide" (the
// apiserver then applies the failurePolicy); a denial is a response.
type reviewFunc func(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error)

// Register adds the five paths to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle(PathValidateStarrocks, h.serve("validate-starrocks", h.ValidateStarrocks))
	mux.Handle(PathMutateStarrocks, h.serve("mutate-starrocks", h.MutateStarrocks))
	mux.Handle(PathValidateStarrocksClass, h.serve("validate-starrocksclass", h.ValidateStarrocksClass))
	mux.Handle(PathMutateStarrocksClass, h.serve("mutate-starrocksclass", h.MutateStarrocksClass))
	mux.Handle(PathValidateBackup, h.serve("validate-starrocksbackup", h.ValidateBackup))
}

func (h *Handler) serve(name string, review reviewFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.Method != http.MethodPost {
			http.Error(w, "admission reviews are POSTed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			http.Error(w, "request body unreadable or larger than 3 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		out, err := h.Answer(r.Context(), review, body)
		log := h.Log.With("webhook", name)
		if out != nil && out.Request != nil {
			req := out.Request
			log = log.With("uid", string(req.UID), "operation", string(req.Operation),
				"kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "user", req.UserInfo.Username)
		}
		op := ""
		if out != nil && out.Request != nil {
			op = string(out.Request.Operation)
		}
		elapsed := time.Since(start)
		if err != nil {
			// Not a denial: the apiserver applies the failurePolicy, and
			// the hooks still validate whatever gets through.
			var bad badRequestError
			status := http.StatusInternalServerError
			if errors.As(err, &bad) {
				status = http.StatusBadRequest
			}
			log.Error("admission review not answered", "error", err, "duration", elapsed)
			h.Metrics.observe(name, op, "error", elapsed.Seconds())
			http.Error(w, err.Error(), status)
			return
		}
		resp := out.Response
		result := "allowed"
		if !resp.Allowed {
			result = "denied"
			// Messages name fields, values and class rules; Starrocks and
			// StarrocksClass specs hold no secrets, and the object itself is
			// never logged.
			log.Info("admission denied", "message", resp.Result.Message, "duration", elapsed)
		} else {
			log.Debug("admission allowed", "patched", len(resp.Patch) > 0, "duration", elapsed)
		}
		h.Metrics.observe(name, op, result, elapsed.Seconds())
		// The request is not echoed back: the apiserver needs only the response.
		out.Request = nil
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(out); err != nil {
			log.Warn("write admission response", "error", err)
		}
	})
}

// badRequestError is a review the webhook cannot read at all.
type badRequestError struct{ err error }

func (e badRequestError) Error() string { return e.err.Error() }
func (e badRequestError) Unwrap() error { return e.err }

// Answer decodes an AdmissionReview and answers it with review. The returned
// review still carries the request (for logging); its Response.UID matches
// the request. An error means no answer: the body is not a review, or the
// decision needs something unavailable (the apiserver).
func (h *Handler) Answer(ctx context.Context, review reviewFunc, body []byte) (*admissionv1.AdmissionReview, error) {
	in := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, in); err != nil {
		return nil, badRequestError{fmt.Errorf("decode AdmissionReview: %w", err)}
	}
	if in.Request == nil {
		return nil, badRequestError{errors.New("decode AdmissionReview: no request")}
	}
	resp, err := review(ctx, in.Request)
	if err != nil {
		return in, err
	}
	resp.UID = in.Request.UID
	out := &admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Request: in.Request, Response: resp}
	if out.APIVersion == "" {
		out.APIVersion, out.Kind = admissionv1.SchemeGroupVersion.String(), "AdmissionReview"
	}
	return out, nil
}

// ValidateStarrocks applies every class rule to a created or updated
// instance, with the class defaults applied first (as the mutating webhook
// would have), and on update the rules that compare with the old object.
func (h *Handler) ValidateStarrocks(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(), nil
	}
	sr, old, err := decodeStarrocks(req)
	if err != nil {
		return denied(req, classrules.Violations{{Field: "", Value: "-", Rule: "object must decode as Starrocks", Message: err.Error()}}), nil
	}
	// Before skipUnchanged: growing the labels is a metadata-only update.
	var oldMeta *metav1.ObjectMeta
	if old != nil {
		oldMeta = &old.ObjectMeta
	}
	if vs := classrules.CheckMetadataSize(&sr.ObjectMeta, oldMeta); len(vs) > 0 && sr.DeletionTimestamp == nil {
		return denied(req, vs), nil
	}
	if skipUnchanged(sr, old) {
		return allowed(), nil
	}

	class, err := h.Classes.Get(ctx, sr.Spec.StarrocksClassName)
	if errors.Is(err, classes.ErrNotFound) {
		return denied(req, classrules.MissingClass(sr.Spec.StarrocksClassName)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("validate Starrocks %s/%s: %w", req.Namespace, req.Name, err)
	}
	compiled, _ := h.Compile(class) // Validate reports the class's own problems
	defaulted := sr.DeepCopy()
	compiled.Default(defaulted)
	vs := compiled.Validate(defaulted)
	if old != nil {
		vs = append(vs, classrules.ValidateUpdate(old, sr)...)
	}
	// The BE count against the running instance: the old object's status
	// says whether a scale-in is pending and how many replicas tables need.
	vs = append(vs, classrules.CheckScaling(defaulted.Spec, classrules.ScalingFactsOf(old))...)
	// A restore names a StarrocksBackup of the namespace: it must exist
	// and be finished when the instance is created (spec.restore cannot
	// change afterwards; the hooks check it again before they restore).
	if req.Operation == admissionv1.Create && sr.Spec.Restore != nil && sr.Spec.Restore.BackupName != "" && len(vs) == 0 {
		b, err := h.Objects.Backup(ctx, req.Namespace, sr.Spec.Restore.BackupName)
		if err != nil {
			return nil, fmt.Errorf("validate Starrocks %s/%s: %w", req.Namespace, req.Name, err)
		}
		vs = append(vs, classrules.CheckRestoreSource(defaulted, classrules.BackupFacts{Backup: b})...)
	}
	if len(vs) > 0 {
		return denied(req, vs), nil
	}
	if req.Operation == admissionv1.Create {
		return h.validatePlace(ctx, req, sr)
	}
	return allowed(), nil
}

// ValidateBackup checks a created StarrocksBackup: it names an instance of
// the namespace that has spec.backup. Its spec cannot change (the CRD says
// so); deletion is always allowed (the finalizer decides when it is gone).
func (h *Handler) ValidateBackup(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Operation != admissionv1.Create {
		return allowed(), nil
	}
	b := &v1alpha1.StarrocksBackup{}
	if err := json.Unmarshal(req.Object.Raw, b); err != nil {
		return denied(req, classrules.Violations{{Field: "", Value: "-", Rule: "object must decode as StarrocksBackup", Message: err.Error()}}), nil
	}
	if b.Namespace == "" {
		b.Namespace = req.Namespace
	}
	// A name no instance can have is not looked up (Instance answers nil).
	sr, err := h.Objects.Instance(ctx, req.Namespace, b.Spec.InstanceName)
	if err != nil {
		return nil, fmt.Errorf("validate StarrocksBackup %s/%s: %w", req.Namespace, req.Name, err)
	}
	if vs := classrules.CheckBackupObject(b, sr); len(vs) > 0 {
		return denied(req, vs), nil
	}
	return h.validateBackupCount(ctx, req, b, sr)
}

// validateBackupCount refuses a StarrocksBackup beyond its instance's limit
// (classrules.MaxBackups): the hooks read every StarrocksBackup on every run
// and write to each. Counted live, the module's own scheduled backups too;
// two CREATEs at once may both pass, and the hooks then run neither beyond
// the limit (its phase says Refused).
func (h *Handler) validateBackupCount(ctx context.Context, req *admissionv1.AdmissionRequest, b *v1alpha1.StarrocksBackup, sr *v1alpha1.Starrocks) (*admissionv1.AdmissionResponse, error) {
	// A missing class is the default limit; the instance says what is wrong with it.
	class, err := h.Classes.Get(ctx, sr.Spec.StarrocksClassName)
	if err != nil && !errors.Is(err, classes.ErrNotFound) {
		return nil, fmt.Errorf("validate StarrocksBackup %s/%s: %w", req.Namespace, req.Name, err)
	}
	n, err := h.Objects.BackupCount(ctx, req.Namespace, b.Spec.InstanceName)
	if err != nil {
		return nil, fmt.Errorf("validate StarrocksBackup %s/%s: %w", req.Namespace, req.Name, err)
	}
	if vs := classrules.CheckBackupCount(b, sr.Spec.StarrocksClassName, class, n); len(vs) > 0 {
		return denied(req, vs), nil
	}
	return allowed(), nil
}

// validatePlace decides a new instance by the rules the hooks apply to
// every instance (desired.Exclusions), so that the webhook's answer is the
// hooks' one, only earlier: refused when it would use an object name of an
// instance already in its namespace (desired.ObjectNames: the two would
// fight over the object; those being deleted count, their objects stay
// until garbage collection), or when it would get no place under the
// namespace's share (MaxPerNamespace, so that one tenant cannot take every
// place under MaxInstances) or the cluster's limit (MaxInstances: the
// hooks' run time, the memory of their snapshots and the module's
// ConfigMaps grow with every instance managed), or take one from an
// instance that has it. Instances the hooks leave unmanaged take no place.
// Checked last, so an invalid spec hears about its spec first.
//
// The decisions are serialised and each admitted instance counts until the
// cache shows it (instances.Source.Decide): CREATEs sent together cannot
// all pass. With more than one webhook replica each serialises its own;
// the hooks manage only the instances the rule gives a place either way.
func (h *Handler) validatePlace(ctx context.Context, req *admissionv1.AdmissionRequest, sr *v1alpha1.Starrocks) (*admissionv1.AdmissionResponse, error) {
	c := desired.PlacedOf(sr)
	c.Namespace, c.Name = req.Namespace, req.Name
	if c.Created.IsZero() {
		// The apiserver sets it before validating admission; a review
		// without it is of an object made now.
		c.Created = metav1.Now()
	}
	var resp *admissionv1.AdmissionResponse
	err := h.Instances.Decide(ctx, c, sr.Spec.StarrocksClassName, req.DryRun == nil || !*req.DryRun, func(v instances.View) bool {
		resp = h.place(req, c, v)
		return resp.Allowed
	})
	if err != nil {
		return nil, fmt.Errorf("create Starrocks %s/%s: %w", req.Namespace, req.Name, err)
	}
	return resp, nil
}

func (h *Handler) place(req *admissionv1.AdmissionRequest, c desired.Placed, v instances.View) *admissionv1.AdmissionResponse {
	key := req.Namespace + "/" + req.Name
	if other, ok := desired.ConflictWith(req.Name, v.Names); ok {
		msg := fmt.Sprintf("Starrocks %q cannot be created: Starrocks %q of this namespace already uses the name of %s, which this instance would use too "+
			"(two instances of a namespace never share an object name); choose another name.",
			key, other.Other, other.Object)
		return forbidden(req, msg, []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueDuplicate, Field: "metadata.name", Message: msg}})
	}
	if h.MaxPerNamespace <= 0 && h.MaxInstances <= 0 {
		return allowed()
	}
	a := desired.Admit(v.Live, c, h.MaxPerNamespace, h.MaxInstances)
	switch {
	case a.Allowed:
		return allowed()
	case a.NamespaceFull:
		return forbidden(req, fmt.Sprintf("Starrocks %q cannot be created: namespace %q already has %s, the most the module manages in one namespace "+
			"(ModuleConfig managed-starrocks settings.instances.maxPerNamespace: %d); ask your cluster admin.",
			key, req.Namespace, plural.Count(a.InNamespace, "Starrocks instance"), h.MaxPerNamespace), nil)
	}
	return forbidden(req, fmt.Sprintf("Starrocks %q cannot be created: the cluster already has %d Starrocks instances, the most the module manages "+
		"(ModuleConfig managed-starrocks settings.instances.maxCount: %d); ask your cluster admin.",
		key, a.Managed, h.MaxInstances), nil)
}

// MutateStarrocks writes the class defaults the user left out into the spec,
// so `kubectl get -o yaml` shows what will run. It never denies: a request
// it cannot default is left to the validating webhook.
func (h *Handler) MutateStarrocks(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(), nil
	}
	sr, old, err := decodeStarrocks(req)
	if err != nil || skipUnchanged(sr, old) {
		return allowed(), nil
	}
	class, err := h.Classes.Get(ctx, sr.Spec.StarrocksClassName)
	if errors.Is(err, classes.ErrNotFound) {
		return allowed(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("default Starrocks %s/%s: %w", req.Namespace, req.Name, err)
	}
	compiled, _ := h.Compile(class)
	defaulted := sr.DeepCopy()
	compiled.Default(defaulted)
	return patched("/spec", sr.Spec, defaulted.Spec)
}

// ValidateStarrocksClass rejects a class whose CEL rules do not compile or
// whose policies are inconsistent, and the deletion of a class instances
// still use. Instances of a class are not re-checked on an edit: the hooks
// report them as ConfigurationValid=False, which tells their owners, while a
// rejected class edit would tell only the admin.
func (h *Handler) ValidateStarrocksClass(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Operation == admissionv1.Delete {
		return h.validateClassDelete(ctx, req)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(), nil
	}
	class := &v1alpha1.StarrocksClass{}
	if err := json.Unmarshal(req.Object.Raw, class); err != nil {
		return denied(req, classrules.Violations{{Field: "", Value: "-", Rule: "object must decode as StarrocksClass", Message: err.Error()}}), nil
	}
	if class.DeletionTimestamp != nil {
		return allowed(), nil
	}
	// Compiled fresh, not from the cache: the object is not stored yet, so
	// its generation does not identify it.
	if _, vs := classrules.Compile(class); len(vs) > 0 {
		return denied(req, vs), nil
	}
	return allowed(), nil
}

// maxNamedUsers bounds the instances a refused class deletion names.
const maxNamedUsers = 3

// validateClassDelete refuses to delete a class that instances use: an
// instance cannot move to another class (spec.starrocksClassName is
// immutable), so without its class it could never be changed or repaired.
func (h *Handler) validateClassDelete(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	users, err := h.Instances.Users(ctx, req.Name)
	if err != nil {
		return nil, fmt.Errorf("delete StarrocksClass %s: %w", req.Name, err)
	}
	if len(users) == 0 {
		return allowed(), nil
	}
	named := strings.Join(users[:min(len(users), maxNamedUsers)], ", ")
	if more := len(users) - maxNamedUsers; more > 0 {
		named += fmt.Sprintf(" and %d more", more)
	}
	these := "these instances"
	if len(users) == 1 {
		these = "this instance"
	}
	msg := fmt.Sprintf("StarrocksClass %q is used by %s: %s. "+
		"An instance cannot change its class; delete %s first, then the class.",
		req.Name, plural.Count(len(users), "Starrocks instance"), named, these)
	return forbidden(req, msg, nil), nil
}

// MutateStarrocksClass normalises a class (sorted policies and lists,
// duplicates dropped, a default topology when only one is allowed), so what
// is stored reads the same however the admin wrote it.
func (h *Handler) MutateStarrocksClass(_ context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed(), nil
	}
	class := &v1alpha1.StarrocksClass{}
	if err := json.Unmarshal(req.Object.Raw, class); err != nil || class.DeletionTimestamp != nil {
		return allowed(), nil
	}
	normal := class.DeepCopy()
	classrules.Normalize(normal)
	return patched("/spec", class.Spec, normal.Spec)
}

func decodeStarrocks(req *admissionv1.AdmissionRequest) (sr, old *v1alpha1.Starrocks, err error) {
	sr = &v1alpha1.Starrocks{}
	if err := json.Unmarshal(req.Object.Raw, sr); err != nil {
		return nil, nil, fmt.Errorf("the object is not a valid Starrocks: %w", err)
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old = &v1alpha1.Starrocks{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return nil, nil, fmt.Errorf("the old object is not a valid Starrocks: %w", err)
		}
	}
	return sr, old, nil
}

// skipUnchanged lets through updates that do not touch the spec (labels,
// annotations, finalizers) and updates of an object being deleted. A class
// edit may have made a running instance invalid; blocking its metadata would
// block the module's own finalizer removal and so the instance's deletion.
func skipUnchanged(sr, old *v1alpha1.Starrocks) bool {
	if old == nil {
		return false
	}
	return sr.DeletionTimestamp != nil || equality.Semantic.DeepEqual(sr.Spec, old.Spec)
}

func allowed() *admissionv1.AdmissionResponse { return &admissionv1.AdmissionResponse{Allowed: true} }

// denied answers with every broken rule in the message, one per violation:
// `<Kind> "<namespace>/<name>" is invalid: <field>: <message> (value <v>; <rule>)`.
func denied(req *admissionv1.AdmissionRequest, vs classrules.Violations) *admissionv1.AdmissionResponse {
	causes := make([]metav1.StatusCause, 0, len(vs))
	for _, v := range vs {
		// The cause carries the field apart, so its message must not repeat it.
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: v.Field, Message: v.Detail()})
	}
	what := req.Kind.Kind
	if what == "" {
		what = "object"
	}
	name := req.Name
	if req.Namespace != "" {
		name = req.Namespace + "/" + name
	}
	return forbidden(req, fmt.Sprintf("%s %q is invalid: %s", what, name, vs.Error()), causes)
}

// forbidden is a denial as kubectl shows it in full:
//
//	Error from server (Forbidden): admission webhook "<webhook>" denied the request: <message>
//
// Forbidden, not Invalid: for a 422 Invalid with details kubectl prints only
// `The <Kind> "<name>" is invalid:` and `<field>: <cause message>`, dropping
// the message and so the webhook's name, and the user cannot tell the
// module's class rules from the CRD schema. The causes still name each field
// for API clients.
func forbidden(req *admissionv1.AdmissionRequest, msg string, causes []metav1.StatusCause) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{
		Allowed: false,
		Result: &metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusForbidden,
			Reason:  metav1.StatusReasonForbidden,
			Message: msg,
			Details: &metav1.StatusDetails{Name: req.Name, Group: req.Kind.Group, Kind: req.Kind.Kind, Causes: causes},
		},
	}
}

func patched(prefix string, before, after any) (*admissionv1.AdmissionResponse, error) {
	ops, err := diffPatch(prefix, before, after)
	if err != nil {
		return nil, fmt.Errorf("compute defaults patch: %w", err)
	}
	resp := allowed()
	if len(ops) == 0 {
		return resp, nil
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("marshal defaults patch: %w", err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = raw, &pt
	return resp, nil
}
