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

// Package backup is the agent's side of backups and restores, run by the
// agent of the FE leader only: it keeps the instance's StarRocks
// repository (CREATE REPOSITORY with the team's keys), runs the requested
// backup sets one BACKUP per database and restores one RESTORE per
// database, watching SHOW BACKUP / SHOW RESTORE, and deletes the
// snapshots retention no longer keeps from the team's bucket with its own
// S3 client (StarRocks 4.1 has no DROP SNAPSHOT).
//
// Every step is a function of what StarRocks and the bucket show now and
// of the progress passed in, called once per agent pass: nothing waits on
// a job, a stuck job is cancelled and reported after a bounded time, and a
// submission refused as busy is retried a bounded number of times. The
// keys never leave this package in a message: every error text is scrubbed
// of them, and no statement text is ever returned or logged.
package backup

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// Querier is what the package needs of a connection pool (*sql.DB).
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Keys are the team's access keys, read from its Secret.
type Keys struct {
	AccessKey, SecretKey string
}

// Scrub removes the keys from a message StarRocks or the S3 server wrote:
// StarRocks may echo a statement's properties in its errors.
func (k Keys) Scrub(msg string) string {
	for _, key := range []string{k.SecretKey, k.AccessKey} {
		if key != "" {
			msg = strings.ReplaceAll(msg, key, "<redacted>")
		}
	}
	return msg
}

// Storage is where the instance's snapshots go.
type Storage struct {
	// Endpoint is https://host[:port] or http://host[:port].
	Endpoint string
	Region   string
	Bucket   string
	// Prefix is the full prefix inside the bucket (the team's prefix and
	// the module's <namespace>/<instance>-<short uid>), no leading or
	// trailing slash.
	Prefix    string
	PathStyle bool
	// CAPEM is the CA bundle the endpoint's certificate is checked with
	// (the agent's S3 client only; StarRocks uses its own trust store);
	// empty: the system roots.
	CAPEM []byte
}

// Repository is the StarRocks repository of the instance.
type Repository struct {
	Name    string
	Storage Storage
	Keys    Keys
	// ReadOnly for a restore: the instance re-attaches another one's
	// snapshots and must never write into them.
	ReadOnly bool
}

var (
	// Repository and snapshot names are identifiers in StarRocks' grammar
	// (CREATE REPOSITORY <identifier>, SNAPSHOT <identifier>); the module
	// uses a safe subset, checked again here because the agent writes them
	// into statements.
	reIdent  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	reBucket = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	rePrefix = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)
	reRegion = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
	reHost   = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$`)
	// Keys are quoted into CREATE REPOSITORY: no quote, backslash or
	// control character can ever reach the statement.
	reKey = regexp.MustCompile(`^[A-Za-z0-9+/=._-]{1,256}$`)
)

// Validate checks every string that goes into a statement; errors name the
// field, never its value when it is a key.
func (r Repository) Validate() error {
	s := r.Storage
	switch {
	case !reIdent.MatchString(r.Name):
		return fmt.Errorf("repository name %q: must match %s", r.Name, reIdent)
	case !reHost.MatchString(s.Endpoint):
		return fmt.Errorf("storage endpoint %q: must be http(s)://host[:port] (%s)", s.Endpoint, reHost)
	case s.Region != "" && !reRegion.MatchString(s.Region):
		return fmt.Errorf("storage region %q: must match %s", s.Region, reRegion)
	case !reBucket.MatchString(s.Bucket):
		return fmt.Errorf("storage bucket %q: must match %s", s.Bucket, reBucket)
	case s.Prefix != "" && (!rePrefix.MatchString(s.Prefix) || strings.Contains("/"+s.Prefix+"/", "/../") || strings.Contains("/"+s.Prefix+"/", "/./")):
		return fmt.Errorf("storage prefix %q: must be path segments of %s", s.Prefix, rePrefix)
	case !reKey.MatchString(r.Keys.AccessKey):
		return errors.New("access key: must be 1-256 characters of A-Z a-z 0-9 + / = . _ -")
	case !reKey.MatchString(r.Keys.SecretKey):
		return errors.New("secret key: must be 1-256 characters of A-Z a-z 0-9 + / = . _ -")
	}
	return nil
}

// Location is the repository's LOCATION: s3://<bucket>/<prefix>.
func (s Storage) Location() string {
	if s.Prefix == "" {
		return "s3://" + s.Bucket
	}
	return "s3://" + s.Bucket + "/" + s.Prefix
}

// createStatement is CREATE [READ ONLY] REPOSITORY with the properties of
// docs sql-reference/sql-statements/backup_restore/CREATE_REPOSITORY.md
// (aws.s3.access_key, aws.s3.secret_key, aws.s3.endpoint, aws.s3.region,
// aws.s3.enable_path_style_access, aws.s3.enable_ssl). It carries the keys:
// it is never logged and never part of an error.
func (r Repository) createStatement() string {
	s := r.Storage
	host := strings.TrimPrefix(strings.TrimPrefix(s.Endpoint, "https://"), "http://")
	ssl := strings.HasPrefix(s.Endpoint, "https://")
	region := s.Region
	if region == "" {
		region = "us-east-1"
	}
	ro := ""
	if r.ReadOnly {
		ro = "READ ONLY "
	}
	return fmt.Sprintf("CREATE %sREPOSITORY `%s` WITH BROKER ON LOCATION \"%s\" PROPERTIES ("+
		"\"aws.s3.access_key\" = \"%s\", \"aws.s3.secret_key\" = \"%s\", \"aws.s3.endpoint\" = \"%s\", "+
		"\"aws.s3.region\" = \"%s\", \"aws.s3.enable_path_style_access\" = \"%t\", \"aws.s3.enable_ssl\" = \"%t\")",
		ro, r.Name, s.Location(), r.Keys.AccessKey, r.Keys.SecretKey, host, region, s.PathStyle, ssl)
}

// Fingerprint identifies what a repository was created with (location,
// properties, keys) without holding the keys: a different fingerprint
// means DROP + CREATE. It is kept in the agent's memory only.
func (r Repository) Fingerprint() string {
	sum := sha256.Sum256([]byte(r.createStatement()))
	return hex.EncodeToString(sum[:])
}

// scrub removes the repository's keys from a message.
func (r Repository) scrub(msg string) string { return r.Keys.Scrub(msg) }

// Ensured says what EnsureRepository did.
type Ensured struct {
	// Created: the repository did not exist and the agent had not made it
	// before (first time, or after an agent restart).
	Created bool
	// Recreated: the agent had made it and it was gone (the team's admin,
	// who has db_admin, dropped it): made again, and reported.
	Recreated bool
	// Replaced: DROP + CREATE for new keys or a new location (StarRocks has
	// no ALTER REPOSITORY).
	Replaced bool
	// Waiting: a change is due but a job runs; nothing was done.
	Waiting bool
	// Fingerprint of the repository as it now is (see Fingerprint).
	Fingerprint string
}

// EnsureRepository makes the repository exist as r describes. applied is
// the fingerprint the agent created it with before ("" when it does not
// know, e.g. after a restart: then an existing repository is re-created
// once, which re-attaches its snapshots and loses nothing). Replacing it
// never happens while a backup or restore job runs.
func EnsureRepository(ctx context.Context, q Querier, r Repository, applied string) (Ensured, error) {
	if err := r.Validate(); err != nil {
		return Ensured{}, err
	}
	want := r.Fingerprint()
	repos, err := showRepositories(ctx, q)
	if err != nil {
		return Ensured{}, err
	}
	cur, exists := repos[r.Name]
	if exists && applied == want && cur.location == r.Storage.Location() {
		return Ensured{Fingerprint: want}, nil
	}
	if exists {
		busy, err := Busy(ctx, q)
		if err != nil {
			return Ensured{}, err
		}
		if busy {
			return Ensured{Waiting: true, Fingerprint: applied}, nil
		}
		// A DROP cannot be undone with the old keys (they are not kept):
		// the new settings must reach the bucket first, or a mistyped key
		// would leave the instance without a repository.
		store, err := NewStore(r)
		if err == nil {
			err = store.Check(ctx)
		}
		if err != nil {
			return Ensured{Fingerprint: applied}, fmt.Errorf("the repository keeps its current settings: the new ones do not reach the bucket: %w", err)
		}
		// The agent's S3 client is not StarRocks': the FE trusts only the
		// JDK's CAs and those its trust store had when it started, and
		// reaches S3 through Hadoop S3A. StarRocks itself must accept the
		// new settings before the working repository goes.
		if err := probe(ctx, q, r, repos); err != nil {
			return Ensured{Fingerprint: applied}, fmt.Errorf("the repository keeps its current settings: StarRocks refuses the new ones: %w", err)
		}
		// fe-core BackupHandler.dropRepository refuses while a job runs on
		// it ("Backup or restore job is running on this repository"): the
		// check above makes that the rare race, reported as an error.
		if _, err := q.ExecContext(ctx, "DROP REPOSITORY `"+r.Name+"`"); err != nil {
			return Ensured{}, fmt.Errorf("drop repository %s: %s", r.Name, r.scrub(err.Error()))
		}
	}
	if !exists {
		// StarRocks lists the location before it creates the repository
		// (backup/Repository.initRepository, twice: the old
		// __palo_repository_ prefix first) through Hadoop's S3A, which
		// credential/aws/AwsCloudConfiguration sets to retry
		// (fs.s3a.retry.limit 3, fs.s3a.attempts.maximum 5; about 30 s per
		// listing for an endpoint that does not answer). The statement
		// then outlasts the agent's read timeout: the agent would report
		// "invalid connection" instead of StarRocks' reason, the FE goes
		// on with it anyway (KILL does not stop a statement waiting on
		// S3), and every pass spends that time blocked. This agent runs in
		// the leader FE's pod, whose network the FE uses: an endpoint
		// that gives no answer here gives none to the FE either. (The
		// replacement above has checked the bucket already.)
		store, err := NewStore(r)
		if err == nil {
			err = store.Answers(ctx)
		}
		if err != nil {
			return Ensured{Fingerprint: applied}, fmt.Errorf("create repository %s at %s: not sent, the FE would retry for minutes: %w", r.Name, r.Storage.Location(), err)
		}
	}
	if !exists && r.ReadOnly {
		// A restore attaches the source's repository. CREATE READ ONLY
		// REPOSITORY writes __repo_info where there is none, READ ONLY or
		// not (fe-core backup/Repository.initRepositoryInternal; READ ONLY
		// only refuses BACKUP, BackupHandler.backup): a source of a
		// mistyped instance UID or prefix would leave a stray repository
		// directory in the team's bucket. A restore reads only what a
		// backup wrote, so nothing is created where none was.
		store, err := NewStore(r)
		if err != nil {
			return Ensured{}, err
		}
		found, err := store.HasRepoInfo(ctx)
		if err != nil {
			return Ensured{}, fmt.Errorf("look for the source repository %s at %s: %w", r.Name, r.Storage.Location(), err)
		}
		if !found {
			return Ensured{}, fmt.Errorf("no repository %s at %s: the location holds no backups of it (no %s%s/%s); check the restore source's instance UID, bucket and prefix",
				r.Name, r.Storage.Location(), repoDirPrefix, r.Name, repoInfoFile)
		}
	}
	if _, err := q.ExecContext(ctx, r.createStatement()); err != nil {
		if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) || ctx.Err() != nil {
			// The read timeout or the pass ended first; the FE may still
			// be retrying the storage, and SHOW REPOSITORIES tells next pass.
			return Ensured{}, fmt.Errorf("create repository %s at %s: StarRocks did not answer in time (%s); it may still be trying the storage, the next pass looks again", r.Name, r.Storage.Location(), r.scrub(err.Error()))
		}
		if strings.Contains(err.Error(), "repository with same name already exist") {
			// fe-core backup/RepositoryMgr.addAndInitRepoIfNotExist holds
			// its lock while it lists the storage: this CREATE waited for
			// an earlier pass's, which the agent stopped waiting for, and
			// found the repository that one made. Its settings are that
			// pass's: the next pass finds it and checks them.
			return Ensured{}, fmt.Errorf("create repository %s at %s: the CREATE of an earlier pass, which StarRocks finished after the agent stopped waiting, made it meanwhile (%s); the next pass looks again", r.Name, r.Storage.Location(), r.scrub(err.Error()))
		}
		return Ensured{}, fmt.Errorf("create repository %s at %s: %s", r.Name, r.Storage.Location(), r.scrub(err.Error()))
	}
	return Ensured{
		Created:     !exists && applied == "",
		Recreated:   !exists && applied != "",
		Replaced:    exists,
		Fingerprint: want,
	}, nil
}

// probeSuffix names the probe repository of a replacement.
const probeSuffix = "_probe"

// probe creates the replacement of r before r is dropped, as a READ ONLY
// repository of another name at the same location: CREATE REPOSITORY
// lists the location with the given settings and fails on what the FE
// cannot reach (backup/Repository.initRepository). StarRocks allows one
// repository of a name (backup/RepositoryMgr.addAndInitRepoIfNotExist: "repository with same name already exist"), and a repository's
// snapshots live under its name (__starrocks_repository_<name>/,
// Repository.assembleRepoInfoFilePath), so the replacement proper can only
// take r's name once r is gone; the probe is dropped again at once, and
// the __repo_info file StarRocks wrote for it (even READ ONLY) deleted.
func probe(ctx context.Context, q Querier, r Repository, repos map[string]repoRow) error {
	p := r
	p.Name, p.ReadOnly = r.Name+probeSuffix, true
	drop := func() error {
		if _, err := q.ExecContext(ctx, "DROP REPOSITORY `"+p.Name+"`"); err != nil {
			return fmt.Errorf("drop the probe repository %s: %s", p.Name, r.scrub(err.Error()))
		}
		return nil
	}
	// One a pass that ended early left behind.
	if _, ok := repos[p.Name]; ok {
		if err := drop(); err != nil {
			return err
		}
	}
	_, createErr := q.ExecContext(ctx, p.createStatement())
	if createErr == nil {
		if err := drop(); err != nil {
			return err
		}
	}
	store, err := NewStore(p)
	if err == nil {
		err = store.removeRepoDir(ctx)
	}
	if createErr != nil {
		return fmt.Errorf("create repository %s at %s: %s", p.Name, r.Storage.Location(), r.scrub(createErr.Error()))
	}
	return err
}

type repoRow struct {
	location string
	readOnly bool
}

// showRepositories reads SHOW REPOSITORIES by column name (fe-core
// ShowRepositoriesStmt: RepoId, RepoName, CreateTime, IsReadOnly,
// Location, Broker, ErrMsg).
func showRepositories(ctx context.Context, q Querier) (map[string]repoRow, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SHOW REPOSITORIES")
	if err != nil {
		return nil, fmt.Errorf("show repositories: %w", err)
	}
	out := map[string]repoRow{}
	for _, m := range rows {
		out[m["RepoName"]] = repoRow{location: m["Location"], readOnly: strings.EqualFold(m["IsReadOnly"], "true")}
	}
	return out, nil
}
