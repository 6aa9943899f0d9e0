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

// Package shareddata keeps the StarRocks side of a shared-data instance
// (fe.conf run_mode = shared_data) as the agent's configuration describes
// it: the default storage volume, the compute nodes (CN) and the automated
// cluster snapshot. Each part reads StarRocks' state first and sends only
// what differs, so a pass at rest sends no statement.
package shareddata

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// Querier is what the package needs from a pool.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Volume is the instance's storage volume of type S3 with its keys.
type Volume struct {
	Name string
	// Location is s3://<bucket>/<prefix>; it never changes.
	Location  string
	Endpoint  string // http(s)://host[:port]
	Region    string
	PathStyle bool
	EnableSSL bool
	Keys      backup.Keys
	// CAPEM is the endpoint's CA bundle, nil for the system roots.
	CAPEM []byte
	// Check, when set, makes EnsureVolume check the bucket from the
	// agent's pod (CheckBucket) before any statement that gives StarRocks
	// the keys.
	Check bool
}

// BucketError: the bucket does not answer the volume's keys, endpoint and
// CA from the agent's pod; no statement was sent.
type BucketError struct{ Err error }

func (e *BucketError) Error() string {
	return "the bucket does not answer the storage settings, so no storage volume is created or changed: " + e.Err.Error()
}

func (e *BucketError) Unwrap() error { return e.Err }

// CheckBucket lists one key under the volume's location with its keys,
// endpoint and CA. StarRocks checks none of them when it creates or alters
// a storage volume: fe-core StorageVolumeMgr.validateParams only checks the
// property names, and SharedDataStorageVolumeMgr.createInternalNoLock hands
// the file store to StarOS (StarOSAgent.addFileStore) without reaching the
// bucket (seen on a real FE: a volume with keys the bucket refuses is
// created, realfe_test.go); a wrong setting shows only when the first
// table is written, or when a CN or the cluster snapshot reaches the bucket.
// Errors never hold a key.
func (v Volume) CheckBucket(ctx context.Context) error {
	rest, _ := strings.CutPrefix(v.Location, "s3://")
	bucket, prefix, _ := strings.Cut(rest, "/")
	store, err := backup.NewStore(backup.Repository{Name: v.Name, Keys: v.Keys, Storage: backup.Storage{
		Endpoint: v.Endpoint, Region: v.Region, Bucket: bucket, Prefix: prefix, PathStyle: v.PathStyle, CAPEM: v.CAPEM}})
	if err == nil {
		err = store.CheckLocation(ctx)
	}
	if err != nil {
		return &BucketError{Err: errors.New(v.Scrub(err.Error()))}
	}
	return nil
}

// Validate checks every string that goes into a statement with the
// repository's rules (the same kinds of names, endpoint and keys); errors
// name the field, never a key.
func (v Volume) Validate() error {
	rest, ok := strings.CutPrefix(v.Location, "s3://")
	if !ok {
		return fmt.Errorf("storage volume location %q: must be s3://<bucket>/<prefix>", v.Location)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	r := backup.Repository{Name: v.Name, Keys: v.Keys, Storage: backup.Storage{
		Endpoint: v.Endpoint, Region: v.Region, Bucket: bucket, Prefix: prefix, PathStyle: v.PathStyle}}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("storage volume: %s", strings.NewReplacer("repository name", "name", "storage ", "").Replace(err.Error()))
	}
	if strings.HasPrefix(v.Endpoint, "https://") != v.EnableSSL {
		return fmt.Errorf("storage volume endpoint %q: enableSSL is %t", v.Endpoint, v.EnableSSL)
	}
	return nil
}

func (v Volume) region() string {
	if v.Region == "" {
		// The repository's default too (backup.Repository): S3-compatible
		// servers take any region, and StarRocks' AWS SDK needs one.
		return "us-east-1"
	}
	return v.Region
}

// properties are the storage volume's PROPERTIES as fe-core
// connector/share/credential/CloudConfigurationConstants names them
// (StorageVolumeMgr.validateParams refuses any other key): static keys,
// never the SDK's default chain or an instance profile of the node. The
// endpoint keeps its scheme (the form a shared-data FE here accepted with
// versitygw, ../shared/starrocks/README.md), and enable_ssl says the same.
func (v Volume) properties() [][2]string {
	return [][2]string{
		{"aws.s3.endpoint", v.Endpoint},
		{"aws.s3.region", v.region()},
		{"aws.s3.enable_path_style_access", fmt.Sprint(v.PathStyle)},
		{"aws.s3.enable_ssl", fmt.Sprint(v.EnableSSL)},
		{"aws.s3.use_aws_sdk_default_behavior", "false"},
		{"aws.s3.use_instance_profile", "false"},
		{"aws.s3.access_key", v.Keys.AccessKey},
		{"aws.s3.secret_key", v.Keys.SecretKey},
	}
}

func propertyList(props [][2]string) string {
	parts := make([]string, len(props))
	for i, p := range props {
		parts[i] = fmt.Sprintf("\"%s\" = \"%s\"", p[0], p[1])
	}
	return strings.Join(parts, ", ")
}

// createStatement is CREATE STORAGE VOLUME IF NOT EXISTS <name> TYPE = S3
// LOCATIONS = ("<location>") PROPERTIES (...) (fe-grammar StarRocks.g4
// createStorageVolumeStatement: TYPE EQ identifier, LOCATIONS EQ
// stringList). It holds the keys: never logged, never in an error.
func (v Volume) createStatement() string {
	return fmt.Sprintf("CREATE STORAGE VOLUME IF NOT EXISTS `%s` TYPE = S3 LOCATIONS = (\"%s\") PROPERTIES (%s)",
		v.Name, v.Location, propertyList(v.properties()))
}

// alterStatement is ALTER STORAGE VOLUME <name> SET (...)
// (alterStorageVolumeStatement, modifyStorageVolumePropertiesClause): the
// properties only, never the location, which the grammar cannot change
// anyway. fe-core storagevolume/StorageVolume.setCloudConfiguration merges
// them into the existing ones. It holds the keys.
func (v Volume) alterStatement() string {
	return fmt.Sprintf("ALTER STORAGE VOLUME `%s` SET (%s)", v.Name, propertyList(v.properties()))
}

// Fingerprint identifies the properties the volume was given, keys
// included, without holding them; kept in the agent's memory only.
func (v Volume) Fingerprint() string {
	sum := sha256.Sum256([]byte(v.alterStatement()))
	return hex.EncodeToString(sum[:])
}

// Scrub removes the volume's keys from a message.
func (v Volume) Scrub(msg string) string { return v.Keys.Scrub(msg) }

// Described is a row of DESC STORAGE VOLUME (fe-core
// ShowResultMetaFactory.visitDescStorageVolumeStatement: Name, Type,
// IsDefault, Location, Params, Enabled, Comment; storagevolume/
// StorageVolume.getProcNodeData fills them, Params as JSON with the keys
// masked by addMaskForCredential).
type Described struct {
	Location  string
	IsDefault bool
	Enabled   bool
	Params    map[string]string
}

// Describe reads the volume; found is false when StarRocks has none of the
// name (SHOW STORAGE VOLUMES, column "Storage Volume").
func Describe(ctx context.Context, q Querier, name string) (d Described, found bool, err error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW STORAGE VOLUMES")
	if err != nil {
		return Described{}, false, fmt.Errorf("show storage volumes: %w", err)
	}
	for _, r := range rows {
		found = found || r["Storage Volume"] == name
	}
	if !found {
		return Described{}, false, nil
	}
	rows, err = sqlrows.QueryMaps(ctx, q, "DESC STORAGE VOLUME `"+name+"`")
	if err != nil {
		return Described{}, true, fmt.Errorf("desc storage volume %s: %w", name, err)
	}
	if len(rows) != 1 {
		return Described{}, true, fmt.Errorf("desc storage volume %s: %d rows", name, len(rows))
	}
	r := rows[0]
	d = Described{Location: r["Location"], IsDefault: isTrue(r["IsDefault"]), Enabled: isTrue(r["Enabled"]), Params: map[string]string{}}
	if err := json.Unmarshal([]byte(r["Params"]), &d.Params); err != nil {
		return Described{}, true, fmt.Errorf("desc storage volume %s: Params is not a JSON object", name)
	}
	return d, true, nil
}

// LocationError: StarRocks has the volume at another location. The agent
// never moves a volume: StarRocks keeps each table's files under the
// volume's location, and a volume whose path changed leaves its tables
// unreadable. A new instance gets a new volume instead.
type LocationError struct{ Name, Have, Want string }

func (e *LocationError) Error() string {
	return fmt.Sprintf("storage volume %s is at %s, not at %s: the agent never moves a storage volume (its tables' files stay where they are)", e.Name, e.Have, e.Want)
}

// Ensured says what EnsureVolume did.
type Ensured struct {
	Created, Altered, MadeDefault bool
	// Fingerprint of the properties StarRocks now has (see Fingerprint).
	Fingerprint string
}

// EnsureVolume makes the volume exist at its location with its properties
// and be the default storage volume. applied is the fingerprint this agent
// gave the volume before ("" when it does not know, e.g. after a restart:
// StarRocks masks the keys in DESC STORAGE VOLUME, so an existing volume
// is then given its properties once more, which changes nothing).
func EnsureVolume(ctx context.Context, q Querier, v Volume, applied string) (Ensured, error) {
	if err := v.Validate(); err != nil {
		return Ensured{}, err
	}
	want := v.Fingerprint()
	d, found, err := Describe(ctx, q, v.Name)
	if err != nil {
		return Ensured{}, errors.New(v.Scrub(err.Error()))
	}
	out := Ensured{Fingerprint: applied}
	send := !found || sameLocation(d.Location, v.Location) && (applied != want || !sameParams(d.Params, v))
	if send && v.Check {
		if err := v.CheckBucket(ctx); err != nil {
			return out, err
		}
	}
	switch {
	case !found:
		if _, err := q.ExecContext(ctx, v.createStatement()); err != nil {
			return out, fmt.Errorf("create storage volume %s at %s: %s", v.Name, v.Location, v.Scrub(err.Error()))
		}
		out.Created, out.Fingerprint = true, want
		if d, _, err = Describe(ctx, q, v.Name); err != nil {
			return out, errors.New(v.Scrub(err.Error()))
		}
	case !sameLocation(d.Location, v.Location):
		return out, &LocationError{Name: v.Name, Have: d.Location, Want: v.Location}
	case applied != want || !sameParams(d.Params, v):
		if _, err := q.ExecContext(ctx, v.alterStatement()); err != nil {
			return out, fmt.Errorf("alter storage volume %s: %s", v.Name, v.Scrub(err.Error()))
		}
		out.Altered, out.Fingerprint = true, want
	}
	if !d.IsDefault {
		// setDefaultStorageVolumeStatement: SET <name> AS DEFAULT STORAGE
		// VOLUME (fe-core StorageVolumeMgr.setDefaultStorageVolume wants
		// it enabled, which a new volume is).
		if _, err := q.ExecContext(ctx, "SET `"+v.Name+"` AS DEFAULT STORAGE VOLUME"); err != nil {
			return out, fmt.Errorf("set storage volume %s as default: %s", v.Name, v.Scrub(err.Error()))
		}
		out.MadeDefault = true
	}
	return out, nil
}

// sameLocation compares locations as StarRocks may print them (a trailing
// slash or not).
func sameLocation(have, want string) bool {
	return strings.TrimSuffix(strings.TrimSpace(have), "/") == strings.TrimSuffix(want, "/")
}

// sameParams compares the properties StarRocks shows unmasked with the
// configured ones; the keys are masked (StorageVolume.addMaskForCredential)
// and compared through the fingerprint instead. Keys StarRocks adds of its
// own (aws.s3.use_web_identity_token_file when it rebuilds the params from
// StarOS, StorageVolume.getParamsFromFileStoreInfo) are not the agent's,
// and aws.s3.enable_ssl is one StarRocks does not keep (the rebuilt
// params have no such key; the endpoint's scheme says it).
func sameParams(have map[string]string, v Volume) bool {
	for _, p := range v.properties() {
		switch p[0] {
		case "aws.s3.access_key", "aws.s3.secret_key", "aws.s3.enable_ssl":
			continue
		}
		if !strings.EqualFold(have[p[0]], p[1]) {
			return false
		}
	}
	return true
}

func isTrue(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }
