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

package classrules

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/backupplan"
)

// The backup rules: spec.backup and spec.restore against the
// class's spec.backup policy. The strings are checked once more here with
// the CRD's patterns: a Starrocks stored before a CRD upgrade (or written
// with validation off) must not bring a hostile endpoint into a
// NetworkPolicy or an agent Config.

// Patterns of the backup strings, the same as the CRD's (api/v1alpha1
// backup_types.go).
var (
	endpointRE   = regexp.MustCompile(`^(https?)://([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)(:([0-9]{1,5}))?$`)
	regionRE     = regexp.MustCompile(`^[a-z0-9][-a-z0-9]{0,62}$`)
	bucketRE     = regexp.MustCompile(`^[a-z0-9][-a-z0-9.]{1,61}[a-z0-9]$`)
	prefixRE     = regexp.MustCompile(`^[-_a-zA-Z0-9]+(/[-_.a-zA-Z0-9]+)*$`)
	secretNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	secretKeyRE  = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	backupDBRE   = regexp.MustCompile(agentconfig.DatabaseNamePattern)
	uidRE        = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timestampRE  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}(-[0-9]{3})?$`)
	// jobTimeout: spec.backup.jobTimeout of a class, whole hours 1h to
	// 168h (the CRD declares the same pattern).
	jobTimeout  = regexp.MustCompile(`^([1-9]|[1-9][0-9]|1[0-5][0-9]|16[0-8])h$`)
	allowedHost = regexp.MustCompile(`^([*][.])?[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// databaseNameRule says backupDBRE (StarRocks' FeNameFormat.DB_NAME_REGEX).
const databaseNameRule = "a StarRocks database name: a letter (or '_' and a letter or digit), then letters, digits and _ - ~ ! @ # $ % ^ & < > = +, at most 256 characters"

// MaxBackupDatabases bounds include, exclude and restore lists (the CRD
// declares the same; agentconfig.MaxBackupDatabases is the agent's bound).
const MaxBackupDatabases = 100

// Endpoint is an S3 endpoint split into what the templates need: the host
// (for nothing but documentation: a NetworkPolicy cannot select a DNS name)
// and the port the FE and BE pods need egress to.
type Endpoint struct {
	Scheme string
	Host   string
	Port   int
}

// ParseEndpoint splits an endpoint the CRD's pattern allows; the port
// defaults to 443 for https and 80 for http.
func ParseEndpoint(s string) (Endpoint, error) {
	m := endpointRE.FindStringSubmatch(s)
	if m == nil || len(s) > 512 {
		return Endpoint{}, fmt.Errorf("%s is not scheme://host[:port] (http or https, a DNS name or IPv4 address, no path, user or query), e.g. https://s3.example.com", quoteValue(s))
	}
	e := Endpoint{Scheme: m[1], Host: m[2], Port: 443}
	if e.Scheme == "http" {
		e.Port = 80
	}
	if m[7] != "" {
		p, err := strconv.Atoi(m[7])
		if err != nil || p < 1 || p > 65535 {
			return Endpoint{}, fmt.Errorf("port %s of %s is not 1 to 65535", m[7], quoteValue(s))
		}
		e.Port = p
	}
	return e, nil
}

// hostAllowed matches a host against the class's list: an exact host or
// "*.suffix" for any name below suffix (not suffix itself). An IP address
// matches only an exact entry.
func hostAllowed(host string, allowed []string) bool {
	if len(allowed) == 0 {
		return true
	}
	for _, a := range allowed {
		if a == host {
			return true
		}
		if suffix, ok := strings.CutPrefix(a, "*."); ok && net.ParseIP(host) == nil && strings.HasSuffix(host, "."+suffix) {
			return true
		}
	}
	return false
}

func (c *Compiled) backupPolicy() (*v1alpha1.ClassBackupPolicy, string) {
	p := c.class.Spec.Backup
	return p, fmt.Sprintf("class %q backup", c.class.Name)
}

// checkBackup checks spec.backup and spec.restore against the class.
func (c *Compiled) checkBackup(sr *v1alpha1.Starrocks) Violations {
	var vs Violations
	policy, rule := c.backupPolicy()
	allowed := policy != nil && policy.Allowed
	if b := sr.Spec.Backup; b != nil {
		if !allowed {
			vs = append(vs, Violation{Field: "spec.backup", Value: "<set>", Rule: rule + ".allowed",
				Message: fmt.Sprintf("the class %q does not allow backups (its spec.backup.allowed is not true); remove spec.backup or ask the platform admin", c.class.Name)})
		}
		vs = append(vs, checkStorage("spec.backup.storage", b.Storage, policy, rule)...)
		vs = append(vs, checkDatabaseList("spec.backup.databases", b.Databases)...)
		if b.Schedule != "" {
			s, err := backupplan.ParseSchedule(b.Schedule)
			switch {
			case err != nil:
				vs = append(vs, Violation{Field: "spec.backup.schedule", Value: quoteValue(b.Schedule), Rule: "a 5-field cron expression",
					Message: err.Error()})
			case policy != nil && policy.MinScheduleInterval != "":
				floor, perr := backupplan.ParseDuration(policy.MinScheduleInterval)
				if perr != nil {
					break // a class problem, reported by Compile
				}
				if got := s.MinInterval(floor); got < floor {
					vs = append(vs, Violation{Field: "spec.backup.schedule", Value: quoteValue(b.Schedule),
						Rule:    rule + ".minScheduleInterval " + policy.MinScheduleInterval,
						Message: fmt.Sprintf("the schedule starts backups %s apart, more often than the class allows (at least %s apart), e.g. \"0 3 * * *\" for daily", got, floor)})
				}
			}
		}
		vs = append(vs, checkRetention(b.Retention, policy, rule)...)
	}
	if r := sr.Spec.Restore; r != nil {
		if !allowed {
			vs = append(vs, Violation{Field: "spec.restore", Value: "<set>", Rule: rule + ".allowed",
				Message: fmt.Sprintf("the class %q does not allow backups or restores (its spec.backup.allowed is not true)", c.class.Name)})
		}
		if r.BackupName != "" && (len(r.BackupName) > 253 || !secretNameRE.MatchString(r.BackupName)) {
			vs = append(vs, stringViolation("spec.restore.backupName", r.BackupName, ruleDNS1123Sub, nil))
		}
		if r.BackupName != "" && sr.Spec.Backup == nil {
			vs = append(vs, Violation{Field: "spec.restore.backupName", Value: quoteValue(r.BackupName), Rule: "a restore by backupName needs spec.backup",
				Message: "a restore by backupName reads the backup with the endpoint and keys of this instance's spec.backup.storage: set spec.backup (the same bucket), or restore by spec.restore.source"})
		}
		if (r.BackupName == "") == (r.Source == nil) {
			vs = append(vs, Violation{Field: "spec.restore", Value: "<set>", Rule: "exactly one of backupName, source",
				Message: "restore needs exactly one of backupName (a StarrocksBackup of this namespace) or source (storage and backupId)"})
		}
		vs = append(vs, checkDatabaseNames("spec.restore.databases", r.Databases)...)
		if s := r.Source; s != nil {
			vs = append(vs, checkStorage("spec.restore.source.storage", s.Storage, policy, rule)...)
			if len(validation.IsDNS1123Label(s.Namespace)) > 0 {
				vs = append(vs, stringViolation("spec.restore.source.namespace", s.Namespace, ruleDNS1123Label, nil))
			}
			if !isInstanceName(s.InstanceName) {
				vs = append(vs, stringViolation("spec.restore.source.instanceName", s.InstanceName, fmt.Sprintf(ruleDNS1035Label, MaxNameLength), nil))
			}
			for _, f := range []struct{ field, v string }{{"spec.restore.source.instanceUID", s.InstanceUID}, {"spec.restore.source.backupId", s.BackupID}} {
				if !uidRE.MatchString(f.v) {
					vs = append(vs, stringViolation(f.field, f.v, "a UID (metadata.uid), e.g. 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", nil))
				}
			}
			if len(s.Databases) == 0 || len(s.Databases) > MaxBackupDatabases {
				vs = append(vs, Violation{Field: "spec.restore.source.databases", Value: fmt.Sprint(len(s.Databases)),
					Rule: fmt.Sprintf("1 to %d databases", MaxBackupDatabases), Message: "a restore by location names the backup's databases with their backup timestamps"})
			}
			for i, d := range s.Databases {
				field := fmt.Sprintf("spec.restore.source.databases[%d]", i)
				if !backupDBRE.MatchString(d.Name) {
					vs = append(vs, stringViolation(field+".name", d.Name, databaseNameRule, nil))
				}
				if !timestampRE.MatchString(d.BackupTimestamp) {
					vs = append(vs, stringViolation(field+".backupTimestamp", d.BackupTimestamp, "a StarRocks backup timestamp, e.g. 2026-01-01-03-00-05", nil))
				}
			}
		}
	}
	return vs
}

func checkStorage(field string, s v1alpha1.BackupStorage, policy *v1alpha1.ClassBackupPolicy, rule string) Violations {
	var allowed []string
	if policy != nil {
		allowed = policy.AllowedEndpoints
	}
	return checkStorageIn(field, s, allowed, rule)
}

// checkStorageIn checks a storage block; allowedEndpoints are the class's
// hosts (empty: any), rule names the policy they are of.
func checkStorageIn(field string, s v1alpha1.BackupStorage, allowedEndpoints []string, rule string) Violations {
	var vs Violations
	if e, err := ParseEndpoint(s.Endpoint); err != nil {
		vs = append(vs, Violation{Field: field + ".endpoint", Value: quoteValue(s.Endpoint), Rule: "scheme://host[:port]", Message: err.Error()})
	} else if !hostAllowed(e.Host, allowedEndpoints) {
		vs = append(vs, Violation{Field: field + ".endpoint", Value: quoteValue(s.Endpoint),
			Rule:    rule + ".allowedEndpoints " + stringList(allowedEndpoints),
			Message: fmt.Sprintf("the host %s is not among the endpoints the class allows", e.Host)})
	}
	if s.Region != "" && !regionRE.MatchString(s.Region) {
		vs = append(vs, stringViolation(field+".region", s.Region, "a region name: lowercase letters, digits and '-', at most 63 characters, e.g. us-east-1", nil))
	}
	if !bucketRE.MatchString(s.Bucket) {
		vs = append(vs, stringViolation(field+".bucket", s.Bucket, "a bucket name: 3 to 63 lowercase letters, digits, '-' and '.'", nil))
	}
	if s.Prefix != "" && (len(s.Prefix) > 256 || !prefixRE.MatchString(s.Prefix)) {
		vs = append(vs, stringViolation(field+".prefix", s.Prefix, "path segments of letters, digits, '-', '_' and '.' separated by '/', at most 256 characters", nil))
	}
	ref := s.CredentialsSecretRef
	vs = append(vs, checkSecretRef(field+".credentialsSecretRef", ref.Name, map[string]string{
		"accessKeyIDKey": ref.AccessKeyIDKey, "secretAccessKeyKey": ref.SecretAccessKeyKey})...)
	if ca := s.CASecretRef; ca != nil {
		vs = append(vs, checkSecretRef(field+".caSecretRef", ca.Name, map[string]string{"key": ca.Key})...)
	}
	return vs
}

func checkSecretRef(field, name string, keys map[string]string) Violations {
	var vs Violations
	if len(name) > 253 || !secretNameRE.MatchString(name) {
		vs = append(vs, stringViolation(field+".name", name, ruleDNS1123Sub, nil))
	}
	for _, k := range []string{"accessKeyIDKey", "secretAccessKeyKey", "key"} {
		v, ok := keys[k]
		if !ok || v == "" {
			continue // the CRD default
		}
		if len(v) > 253 || !secretKeyRE.MatchString(v) {
			vs = append(vs, stringViolation(field+"."+k, v, "a Secret key: letters, digits, '-', '_' and '.'", nil))
		}
	}
	return vs
}

func checkDatabaseList(field string, d *v1alpha1.BackupDatabases) Violations {
	if d == nil {
		return nil
	}
	return append(checkDatabaseNames(field+".include", d.Include), checkDatabaseNames(field+".exclude", d.Exclude)...)
}

func checkDatabaseNames(field string, names []string) Violations {
	var vs Violations
	if len(names) > MaxBackupDatabases {
		vs = append(vs, tooMany(field, len(names), MaxBackupDatabases))
	}
	for i, n := range names {
		if !backupDBRE.MatchString(n) {
			vs = append(vs, stringViolation(fmt.Sprintf("%s[%d]", field, i), n, databaseNameRule, nil))
		}
	}
	return vs
}

func checkRetention(r *v1alpha1.BackupRetention, policy *v1alpha1.ClassBackupPolicy, rule string) Violations {
	var vs Violations
	var max *v1alpha1.ClassMaxRetention
	if policy != nil {
		max = policy.MaxRetention
	}
	if r == nil {
		if max != nil && (max.KeepLast != nil || max.KeepWithin != "") {
			vs = append(vs, Violation{Field: "spec.backup.retention", Value: "<unset>", Rule: rule + ".maxRetention",
				Message: "the class limits how long backups are kept, so spec.backup.retention must say it, e.g. keepLast: 7"})
		}
		return vs
	}
	if r.KeepLast != nil && (*r.KeepLast < 1 || *r.KeepLast > 1000) {
		vs = append(vs, Violation{Field: "spec.backup.retention.keepLast", Value: fmt.Sprint(*r.KeepLast), Rule: "1 to 1000",
			Message: "keepLast must be from 1 to 1000"})
	}
	var within time.Duration
	if r.KeepWithin != "" {
		d, err := backupplan.ParseDuration(r.KeepWithin)
		if err != nil {
			vs = append(vs, Violation{Field: "spec.backup.retention.keepWithin", Value: quoteValue(r.KeepWithin), Rule: "a duration of hours, minutes and seconds",
				Message: err.Error()})
		}
		within = d
	}
	if r.KeepLast == nil && r.KeepWithin == "" {
		vs = append(vs, Violation{Field: "spec.backup.retention", Value: "{}", Rule: "keepLast or keepWithin",
			Message: "retention needs keepLast, keepWithin or both, e.g. keepLast: 7"})
	}
	if max == nil {
		return vs
	}
	if max.KeepLast != nil {
		switch {
		case r.KeepLast != nil && *r.KeepLast > *max.KeepLast:
			vs = append(vs, Violation{Field: "spec.backup.retention.keepLast", Value: fmt.Sprint(*r.KeepLast),
				Rule:    fmt.Sprintf("%s.maxRetention.keepLast %d", rule, *max.KeepLast),
				Message: fmt.Sprintf("the class keeps at most %d backups", *max.KeepLast)})
		case r.KeepLast == nil:
			vs = append(vs, Violation{Field: "spec.backup.retention.keepLast", Value: "<unset>",
				Rule:    fmt.Sprintf("%s.maxRetention.keepLast %d", rule, *max.KeepLast),
				Message: fmt.Sprintf("the class keeps at most %d backups: set keepLast (unset keeps any number within keepWithin)", *max.KeepLast)})
		}
	}
	if max.KeepWithin != "" {
		limit, err := backupplan.ParseDuration(max.KeepWithin)
		switch {
		case err != nil:
			// A class problem, reported by Compile.
		case r.KeepWithin != "" && within > limit:
			vs = append(vs, Violation{Field: "spec.backup.retention.keepWithin", Value: quoteValue(r.KeepWithin),
				Rule:    rule + ".maxRetention.keepWithin " + max.KeepWithin,
				Message: fmt.Sprintf("the class keeps backups at most %s", limit)})
		case r.KeepWithin == "" && max.KeepLast == nil:
			vs = append(vs, Violation{Field: "spec.backup.retention.keepWithin", Value: "<unset>",
				Rule:    rule + ".maxRetention.keepWithin " + max.KeepWithin,
				Message: fmt.Sprintf("the class keeps backups at most %s: set keepWithin", limit)})
		}
	}
	return vs
}

// checkClassBackup checks the class's own backup policy.
func checkClassBackup(class *v1alpha1.StarrocksClass) Violations {
	p := class.Spec.Backup
	if p == nil {
		return nil
	}
	var vs Violations
	rule := fmt.Sprintf("class %q backup", class.Name)
	for i, a := range p.AllowedEndpoints {
		if len(a) > 253 || !allowedHost.MatchString(a) {
			vs = append(vs, stringViolation(fmt.Sprintf("spec.backup.allowedEndpoints[%d]", i), a, "a host name, or *. and a domain, e.g. s3.example.com or *.storage.svc", nil))
		}
	}
	if p.JobTimeout != "" && !jobTimeout.MatchString(p.JobTimeout) {
		vs = append(vs, stringViolation("spec.backup.jobTimeout", p.JobTimeout, "whole hours from 1h to 168h, e.g. 48h", nil))
	}
	for _, f := range []struct{ field, v string }{
		{"spec.backup.minScheduleInterval", p.MinScheduleInterval},
		{"spec.backup.maxRetention.keepWithin", func() string {
			if p.MaxRetention == nil {
				return ""
			}
			return p.MaxRetention.KeepWithin
		}()},
	} {
		if f.v == "" {
			continue
		}
		if _, err := backupplan.ParseDuration(f.v); err != nil {
			vs = append(vs, Violation{Field: f.field, Value: quoteValue(f.v), Rule: rule, Message: err.Error()})
		}
	}
	return vs
}

// BackupFacts is what admission and the hooks look up in the cluster for a
// restore from a StarrocksBackup: nil Backup when it does not exist.
type BackupFacts struct {
	Backup *v1alpha1.StarrocksBackup
}

// CheckRestoreSource checks spec.restore.backupName against the
// StarrocksBackup it names (looked up by the caller in the instance's
// namespace). A backup of a Cluster is refused for a Standalone: StarRocks
// restores with replication_num = min(3, BEs) = 1 there, so every table of
// a production Cluster would silently lose its replicas on a pod meant for
// development; restore into a Cluster (a Cluster with 1 or 2 BEs is the
// team's explicit choice of fewer replicas, and allowed).
func CheckRestoreSource(sr *v1alpha1.Starrocks, f BackupFacts) Violations {
	r := sr.Spec.Restore
	if r == nil || r.BackupName == "" {
		return nil
	}
	field := "spec.restore.backupName"
	b := f.Backup
	if b == nil {
		return Violations{{Field: field, Value: quoteValue(r.BackupName), Rule: "a StarrocksBackup of the namespace",
			Message: fmt.Sprintf("there is no StarrocksBackup %q in namespace %s; for a backup whose object is gone use spec.restore.source", r.BackupName, sr.Namespace)}}
	}
	var vs Violations
	switch b.Status.Phase {
	case v1alpha1.BackupPhaseCompleted, v1alpha1.BackupPhasePartiallyFailed:
	default:
		phase := string(b.Status.Phase)
		if phase == "" {
			phase = "Pending"
		}
		vs = append(vs, Violation{Field: field, Value: quoteValue(r.BackupName), Rule: "a StarrocksBackup in phase Completed or PartiallyFailed",
			Message: fmt.Sprintf("StarrocksBackup %q is %s; only a finished backup with data can be restored", r.BackupName, phase)})
	}
	if b.Status.InstanceType == v1alpha1.TypeCluster && sr.Spec.Type != v1alpha1.TypeCluster {
		vs = append(vs, Violation{Field: "spec.type", Value: quoteValue(string(sr.Spec.Type)), Rule: "a backup of a Cluster restores into a Cluster",
			Message: fmt.Sprintf("StarrocksBackup %q is of a Cluster; a Standalone would restore it with 1 replica per tablet (replication_num = min(3, BEs)): restore into a Cluster", r.BackupName)})
	}
	if len(r.Databases) > 0 && len(b.Status.Databases) > 0 {
		have := map[string]bool{}
		for _, d := range b.Status.Databases {
			have[d.Name] = true
		}
		for i, d := range r.Databases {
			if !have[d] {
				vs = append(vs, Violation{Field: fmt.Sprintf("spec.restore.databases[%d]", i), Value: quoteValue(d), Rule: "a database of the backup",
					Message: fmt.Sprintf("StarrocksBackup %q has no database %q", r.BackupName, d)})
			}
		}
	}
	return vs
}

// CheckBackupObject checks a StarrocksBackup against its instance (nil when
// there is none in the namespace): created by hand, it must name an
// instance with spec.backup.
func CheckBackupObject(b *v1alpha1.StarrocksBackup, instance *v1alpha1.Starrocks) Violations {
	var vs Violations
	name := b.Spec.InstanceName
	if !isInstanceName(name) {
		vs = append(vs, stringViolation("spec.instanceName", name, fmt.Sprintf(ruleDNS1035Label, MaxNameLength), nil))
		return vs
	}
	vs = append(vs, checkDatabaseList("spec.databases", b.Spec.Databases)...)
	if rule, message := BackupTargetProblem(b.Namespace, name, instance); rule != "" {
		vs = append(vs, Violation{Field: "spec.instanceName", Value: quoteValue(name), Rule: rule, Message: message})
	}
	return vs
}

// BackupTargetProblem says why a StarrocksBackup naming instance (nil when
// there is none in the namespace) can never run, and the rule it breaks;
// both empty when it can. The webhook refuses such a StarrocksBackup; the
// module fails one made while the webhook was down with the same message.
func BackupTargetProblem(namespace, name string, instance *v1alpha1.Starrocks) (rule, message string) {
	switch {
	case instance == nil:
		return "a Starrocks of the namespace", fmt.Sprintf("there is no Starrocks %q in namespace %s", name, namespace)
	case instance.Spec.IsSharedData():
		// BACKUP does not support shared-data (the spec.backup rule in
		// shareddata.go), and 4.1's grammar has no cluster snapshot on
		// demand, only the automated one (fe-core StarRocks.g4: ADMIN
		// SET|ALTER|SHOW AUTOMATED CLUSTER SNAPSHOT).
		return "a shared-nothing Starrocks", fmt.Sprintf("Starrocks %q keeps its tables in object storage, which StarRocks' BACKUP does not support, "+
			"and StarRocks takes no cluster snapshot on demand; the module keeps its automated cluster snapshot on (status.backup)", name)
	case instance.Spec.Backup == nil:
		return "a Starrocks with spec.backup", fmt.Sprintf("Starrocks %q has no spec.backup, so there is no storage to back it up to", name)
	}
	return "", ""
}

// backupActivation is the `backup` variable of the class's CEL rules.
func backupActivation(sr *v1alpha1.StarrocksSpec) map[string]any {
	m := map[string]any{"enabled": false, "endpoint": "", "host": "", "schedule": "", "suspend": false,
		"keepLast": int64(0), "keepWithinSeconds": int64(0), "include": []string{}, "exclude": []string{}, "restore": sr.Restore != nil}
	b := sr.Backup
	if b == nil {
		return m
	}
	m["enabled"] = true
	m["endpoint"] = b.Storage.Endpoint
	if e, err := ParseEndpoint(b.Storage.Endpoint); err == nil {
		m["host"] = e.Host
	}
	m["schedule"] = b.Schedule
	m["suspend"] = b.Suspend
	if r := b.Retention; r != nil {
		if r.KeepLast != nil {
			m["keepLast"] = int64(*r.KeepLast)
		}
		if d, err := backupplan.ParseDuration(r.KeepWithin); err == nil {
			m["keepWithinSeconds"] = int64(d / time.Second)
		}
	}
	if d := b.Databases; d != nil {
		m["include"] = nonNil(slices.Clone(d.Include))
		m["exclude"] = nonNil(slices.Clone(d.Exclude))
	}
	return m
}

// Bounds of a class's spec.backup.maxBackups (the CRD declares the same).
const (
	// DefaultMaxBackups is the limit of a class that does not set one: as
	// many as the largest keepLast an instance may ask for, so no retention
	// accepted before the limit existed stops its schedule (an hourly
	// schedule kept for a week already needs 168).
	DefaultMaxBackups = 1000
	// MaxMaxBackups is the largest limit a class may set: the hooks read
	// every StarrocksBackup of every instance on every run.
	MaxMaxBackups = 1000
)

// MaxBackups is how many StarrocksBackup objects an instance of the class
// may have (spec.backup.maxBackups, DefaultMaxBackups when unset or without
// a class; a value the CRD would refuse is brought within its bounds). The
// webhook refuses a StarrocksBackup beyond it and the hooks run none beyond
// it, counting the same objects: every StarrocksBackup of the instance's
// namespace whose spec.instanceName names it, those being deleted included.
func MaxBackups(class *v1alpha1.StarrocksClass) int {
	if class == nil || class.Spec.Backup == nil || class.Spec.Backup.MaxBackups == nil || *class.Spec.Backup.MaxBackups < 1 {
		return DefaultMaxBackups
	}
	return min(int(*class.Spec.Backup.MaxBackups), MaxMaxBackups)
}

// CheckBackupCount refuses a new StarrocksBackup of an instance that
// already has count of them (counted as MaxBackups says) when that reaches
// its class's limit. className names the class for the message.
func CheckBackupCount(b *v1alpha1.StarrocksBackup, className string, class *v1alpha1.StarrocksClass, count int) Violations {
	limit := MaxBackups(class)
	if count < limit {
		return nil
	}
	return Violations{{Field: "spec.instanceName", Value: quoteValue(b.Spec.InstanceName),
		Rule: fmt.Sprintf("class %q backup.maxBackups %d", className, limit),
		Message: fmt.Sprintf("Starrocks %q has %d StarrocksBackups, the most its class allows; delete some or ask the platform admin to raise the limit",
			b.Spec.InstanceName, count)}}
}

// DefaultBackupJobTimeout is the job timeout of a class that sets none:
// StarRocks' own default (fe-core common/Config
// .backup_job_default_timeout_ms, a day).
const DefaultBackupJobTimeout = 24 * time.Hour

// BackupJobTimeout is how long one database's BACKUP or RESTORE job of an
// instance of the class may run (spec.backup.jobTimeout,
// DefaultBackupJobTimeout when unset, invalid or without a class): the
// agent passes it as the job's timeout property, and the hooks hold pod
// restarts for a running job no longer.
func BackupJobTimeout(class *v1alpha1.StarrocksClass) time.Duration {
	if class == nil || class.Spec.Backup == nil || !jobTimeout.MatchString(class.Spec.Backup.JobTimeout) {
		return DefaultBackupJobTimeout
	}
	h, _ := strconv.Atoi(strings.TrimSuffix(class.Spec.Backup.JobTimeout, "h"))
	return time.Duration(h) * time.Hour
}
