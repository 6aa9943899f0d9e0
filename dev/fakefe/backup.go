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

package fakefe

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// Backup and restore as StarRocks (shared-nothing, 3.4–4.1) does them,
// with real objects on a real S3 server (dev/s3server) reached with the
// keys the repository was created with:
//
//   - CREATE [READ ONLY] REPOSITORY r WITH BROKER ON LOCATION "s3://b/p"
//     PROPERTIES (...): Repository.initRepository lists
//     <location>/__starrocks_repository_<r>/__repo_info and writes it
//     ({"name","create_time"}) when it is not there; when it is, the
//     repository re-attaches what another FE wrote (fe-core
//     backup/Repository.java; BackupHandler.createRepository answers a
//     failure "Failed to create repository: " + the storage's message).
//   - BACKUP DATABASE d SNAPSHOT l TO r [ON (t, ...)] [PROPERTIES ("timeout" = s)]: BackupHandler.process
//     (one job per database: "Can only run one backup or restore job of a
//     database at same time"; the submission lock: "Another backup or
//     restore job is being submitted. Please wait and try again"),
//     BackupHandler.backup ("Repository r is read only", "Snapshot with
//     name 'l' already exist in repository"). The job then runs BackupJob's
//     states PENDING, SNAPSHOTING, UPLOAD_SNAPSHOT, UPLOADING, SAVE_META,
//     UPLOAD_INFO, FINISHED (or CANCELLED), one step per BackupStep.
//     UPLOADING writes the tables' rows under
//     __ss_<l>/__ss_content/__db_<id>/__tbl_<id>/__part_<id>/__idx_<id>/__<tablet>/,
//     UPLOAD_INFO writes __ss_<l>/__meta.<md5> and
//     __ss_<l>/__info_<yyyy-MM-dd-HH-mm-ss-SSS>.<md5> (Repository.upload
//     appends the checksum; BackupJob.TIMESTAMP_FORMAT), so a failed job
//     leaves its content without an __info file, as StarRocks does.
//   - RESTORE SNAPSHOT l FROM r DATABASE d [ON (...)] PROPERTIES
//     ("backup_timestamp" = "...", "replication_num" = "..."):
//     BackupRestoreAnalyzer ("Missing backup_timestamp property", "Unknown
//     restore job properties: [...]"), BackupHandler.restore ("Failed to get
//     info of snapshot 'l' because: ... Maybe specified wrong backup
//     timestamp"); RestoreJob's states PENDING, SNAPSHOTING, DOWNLOAD,
//     DOWNLOADING, COMMIT, COMMITTING, FINISHED (or CANCELLED); the tables
//     and rows appear at COMMITTING.
//   - SHOW BACKUP / SHOW RESTORE [FROM d]: the last job per database only
//     (BackupHandler.dbIdToBackupOrRestoreJob), columns of fe-core
//     ShowBackupStmt/ShowRestoreStmt.TITLE_NAMES, in another order here so
//     a client that reads them by position fails.
//   - SHOW SNAPSHOT ON r [WHERE SNAPSHOT = "l" [AND TIMESTAMP = "t"]]:
//     Snapshot, Timestamp, Status, a snapshot's __info_ files joined by
//     "\n" (an unfinished __info_<ts>.part as "Invalid: <file>"); with a
//     snapshot and a timestamp named also Database and Details
//     (ShowSnapshotStmt), from the objects in the bucket.
//   - SHOW TABLES FROM d (ShowTableStmt, column Tables_in_<d>), which the
//     agent asks before a BACKUP to skip an empty database.
//   - SHOW REPOSITORIES (ShowRepositoriesStmt.TITLE_NAMES), DROP REPOSITORY
//     ("Repository does not exist", "Backup or restore job is running on
//     this repository. Can not drop it"), CANCEL BACKUP|RESTORE FROM d
//     ("No backup job is currently running" / "No restore is currently
//     running", BackupHandler.cancel's own wording).
//
// Every error is ERR_COMMON_ERROR (5064, 42000; fe-core
// common/ErrorCode.java) as ErrorReport reports it unless noted. An empty database is refused at submission with an "is
// empty" message; the wording is fakefe's (the stored StarRocks source
// did not show where 4.1 words it), and the agent does not depend on it:
// it skips databases without tables before submitting.

// ErrCommon is fe-core ErrorCode.ERR_COMMON_ERROR (SQL state 42000).
const ErrCommon = 5064

// backupTimestampLayout renders BackupJob.TIMESTAMP_FORMAT
// (yyyy-MM-dd-HH-mm-ss-SSS) without the milliseconds, added by hand.
const backupTimestampLayout = "2006-01-02-15-04-05"

// Backup job states (fe-core backup/BackupJob.BackupJobState).
var backupStates = []string{"PENDING", "SNAPSHOTING", "UPLOAD_SNAPSHOT", "UPLOADING", "SAVE_META", "UPLOAD_INFO", "FINISHED"}

// Restore job states (fe-core backup/RestoreJob.RestoreJobState).
var restoreStates = []string{"PENDING", "SNAPSHOTING", "DOWNLOAD", "DOWNLOADING", "COMMIT", "COMMITTING", "FINISHED"}

type repository struct {
	id             int64
	name           string
	readOnly       bool
	location       string
	bucket, prefix string
	props          map[string]string
	created        time.Time
}

// root is the repository's directory: <prefix>/__starrocks_repository_<name>.
func (r *repository) root() string {
	return joinKey(r.prefix, "__starrocks_repository_"+r.name)
}

type backupJob struct {
	restore        bool
	id             int64
	label, db      string
	repo           *repository
	state          int
	tables         []string
	timestamp      string // restore: backup_timestamp; backup: set at UPLOAD_INFO
	replicationNum int
	created        time.Time
	stepTimes      map[string]time.Time
	status         string
	cancelled      bool
	finished       time.Time
	// timeoutSec is the job's timeout property (the Timeout column),
	// StarRocks' backup_job_default_timeout_ms (a day) when not given.
	timeoutSec int64
	// unfinished and progress are the UnfinishedTasks and Progress
	// columns (SetJobProgress): the BEs' reports of a real FE.
	unfinished, progress string
}

func (j *backupJob) stateName() string {
	if j.cancelled {
		return "CANCELLED"
	}
	if j.restore {
		return restoreStates[j.state]
	}
	return backupStates[j.state]
}

func (j *backupJob) done() bool { return j.cancelled || j.stateName() == "FINISHED" }

type backupState struct {
	repos  map[string]*repository
	jobs   map[string]*backupJob // by database: the last one
	dbIDs  map[string]int64
	nextID int64
	// busy: the next submissions fail as if another one held the lock.
	busy int
	// held: jobs do not advance (a stuck job).
	held bool
	step time.Duration
	// rootCAs the FE trusts for aws.s3.enable_ssl endpoints.
	rootCAs *x509.CertPool
	// unreachableFor is how long CREATE REPOSITORY takes to fail when the
	// endpoint does not answer (SetUnreachableS3Time).
	unreachableFor time.Duration
}

func (s *Server) backupState() *backupState {
	if s.bk == nil {
		s.bk = &backupState{repos: map[string]*repository{}, jobs: map[string]*backupJob{},
			dbIDs: map[string]int64{}, nextID: 20001, step: 20 * time.Millisecond, unreachableFor: time.Minute}
	}
	return s.bk
}

// SetS3RootCAs is the trust store the FE uses for S3 over TLS: a real FE
// trusts the JDK's CAs and, when spec.backup or the restore source names a
// caSecretRef, that CA too (images/starrocks-fe/fe-start.sh builds
// conf/trusted-cas.p12 from the trusted-cas volume). Give it the endpoint's
// CA only for an instance whose FE the module gives it (test/e2e builds the
// pool from the FE StatefulSet's trusted-cas volume). The BEs' S3 client
// gets the same CAs from be-start.sh (images/starrocks-be), which the fake
// does not model: it uploads in the FE's place.
func (s *Server) SetS3RootCAs(pool *x509.CertPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupState().rootCAs = pool
}

// SetUnreachableS3Time sets how long CREATE REPOSITORY takes to fail when
// its endpoint does not answer; default a minute, as StarRocks: the FE
// lists the location through Hadoop's S3A, which
// credential/aws/AwsCloudConfiguration.applyToConfiguration sets to retry
// (fs.s3a.retry.limit 3, fs.s3a.attempts.maximum 5; its comment: "it will
// need 30 seconds" for an unreachable endpoint), and backup/Repository
// .initRepository lists twice, the old __palo_repository_ prefix first.
func (s *Server) SetUnreachableS3Time(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupState().unreachableFor = d
}

// SetBackupStep sets how long each job state lasts (default 20ms).
func (s *Server) SetBackupStep(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupState().step = d
}

// BusySubmissions makes the next n BACKUP or RESTORE statements fail as
// BackupHandler.tryLock does when another submission holds its lock.
func (s *Server) BusySubmissions(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupState().busy = n
}

// HoldJobs stops (true) or resumes (false) every job's progress.
func (s *Server) HoldJobs(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupState().held = hold
}

// SetJobProgress sets the UnfinishedTasks and Progress columns of db's
// last job, as a real FE's do when the BEs report their upload or download
// tasks (fe-core backup/BackupJob.getInfo: "<signature>=<beId>, ...";
// "[<signature>: <finished>/<total>], ..." from BackupHandler.report).
func (s *Server) SetJobProgress(db, unfinished, progress string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.backupState().jobs[db]; j != nil {
		j.unfinished, j.progress = unfinished, progress
	}
}

// JobTimeout is the Timeout column of db's last job (seconds; 0 when none).
func (s *Server) JobTimeout(db string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.backupState().jobs[db]; j != nil {
		return j.timeoutSec
	}
	return 0
}

// Repositories lists the repository names, sorted.
func (s *Server) Repositories() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedSet(s.backupState().repos)
}

// JobState is the state of the last backup or restore job of db ("" when none).
func (s *Server) JobState(db string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.backupState().jobs[db]; j != nil {
		return j.stateName()
	}
	return ""
}

// defaultJobTimeoutSec is Config.backup_job_default_timeout_ms (a day).
const defaultJobTimeoutSec = 86400

// jobTimeout reads the timeout property as
// BackupRestoreAnalyzer.setPropTimeout does: seconds, at least 10 minutes.
func jobTimeout(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, commonErr("Invalid timeout format: %s", v)
	}
	if n*1000 < 600_000 {
		return 0, commonErr("timeout must be at least 10 min")
	}
	return n, nil
}

func commonErr(format string, args ...any) error {
	return sqlerror.NewSQLErrorf(ErrCommon, "42000", format, args...)
}

func joinKey(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.Trim(p, "/"); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

var backupVerbs = map[string]bool{"CREATE": true, "DROP": true, "SHOW": true, "BACKUP": true, "RESTORE": true, "CANCEL": true}

// execBackup runs the statements above; handled is false for others.
func (s *Server) execBackup(c *mysql.Conn, q string) (*sqltypes.Result, bool, error) {
	first, _, _ := strings.Cut(q, " ")
	if !backupVerbs[strings.ToUpper(first)] {
		return nil, false, nil
	}
	toks, err := lex(q)
	if err != nil {
		return nil, false, nil
	}
	if isRepositoryStatement(toks) {
		if err := s.needRepository(c.User); err != nil {
			return nil, true, err
		}
	}
	p := &parser{toks: toks}
	b := s.backupState()
	switch {
	case p.kw("CREATE", "REPOSITORY"):
		return s.createRepository(p, false)
	case p.kw("CREATE", "READ", "ONLY", "REPOSITORY"):
		return s.createRepository(p, true)
	case p.kw("DROP", "REPOSITORY"):
		name, ok := p.name()
		if !ok || !p.done() {
			return nil, true, syntaxErr("a repository name")
		}
		r := b.repos[name]
		if r == nil {
			return nil, true, commonErr("Repository does not exist")
		}
		if b.busy > 0 {
			b.busy--
			return nil, true, errBusy()
		}
		for _, j := range b.jobs {
			if !j.done() && j.repo == r {
				return nil, true, commonErr("Backup or restore job is running on this repository. Can not drop it")
			}
		}
		delete(b.repos, name)
		return &sqltypes.Result{}, true, nil
	case p.kw("SHOW", "REPOSITORIES"):
		// ShowRepositoriesStmt: RepoId, RepoName, CreateTime, IsReadOnly, Location, Broker, ErrMsg.
		res := &sqltypes.Result{Fields: fields("RepoName", "Location", "IsReadOnly", "RepoId", "CreateTime", "Broker", "ErrMsg")}
		for _, n := range sortedSet(b.repos) {
			r := b.repos[n]
			res.Rows = append(res.Rows, []sqltypes.Value{sqltypes.NewVarChar(r.name), sqltypes.NewVarChar(r.location),
				sqltypes.NewVarChar(boolStr(r.readOnly)), sqltypes.NewVarChar(strconv.FormatInt(r.id, 10)),
				sqltypes.NewVarChar(r.created.Format(time.DateTime)), sqltypes.NewVarChar("-"), sqltypes.NULL})
		}
		return res, true, nil
	case p.kw("SHOW", "TABLES", "FROM"):
		// fe-core ShowTableStmt: one column, "Tables_in_" + the database.
		db, ok := p.name()
		if !ok || !p.done() {
			return nil, true, syntaxErr("a database name")
		}
		if !s.grantState().databases[db] {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
		}
		res := &sqltypes.Result{Fields: fields("Tables_in_" + db)}
		for _, t := range s.tablesOf(db) {
			res.Rows = append(res.Rows, row(t))
		}
		return res, true, nil
	case p.kw("SHOW", "SNAPSHOT", "ON"):
		return s.showSnapshot(p)
	case p.kw("SHOW", "BACKUP"):
		return s.showJobs(p, false)
	case p.kw("SHOW", "RESTORE"):
		return s.showJobs(p, true)
	case p.kw("BACKUP", "DATABASE"):
		return s.submitBackup(p)
	case p.kw("RESTORE", "SNAPSHOT"):
		return s.submitRestore(p)
	case p.kw("CANCEL", "BACKUP"):
		return s.cancelJob(p, false)
	case p.kw("CANCEL", "RESTORE"):
		return s.cancelJob(p, true)
	}
	return nil, false, nil
}

// isRepositoryStatement: the statements that need the SYSTEM privilege
// REPOSITORY (docs administration/user_privs/privilege_item.md; BACKUP
// also needs EXPORT on the tables, RESTORE the data privileges): db_admin
// holds both (built_in_roles.md), and so does root.
func isRepositoryStatement(toks []tok) bool {
	words := []string{}
	for _, t := range toks {
		if t.kind != 'w' || len(words) == 4 {
			break
		}
		words = append(words, strings.ToUpper(t.text))
	}
	w := strings.Join(words, " ")
	for _, prefix := range []string{"CREATE REPOSITORY", "CREATE READ ONLY REPOSITORY", "DROP REPOSITORY", "BACKUP", "RESTORE", "CANCEL BACKUP", "CANCEL RESTORE"} {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}

func (s *Server) needRepository(user string) error {
	u := s.users[user]
	if u == nil {
		return u.denied("REPOSITORY")
	}
	roles := s.grantState().effectiveRoles(u)
	for _, r := range roles {
		if r == RoleRoot || r == RoleDBAdmin {
			return nil
		}
	}
	return u.denied("REPOSITORY")
}

func errBusy() error {
	// fe-core backup/BackupHandler.tryLock.
	return commonErr("Another backup or restore job is being submitted. Please wait and try again")
}

// properties reads PROPERTIES ("k" = "v", ...).
func (p *parser) properties() (map[string]string, error) {
	out := map[string]string{}
	if !p.kw("PROPERTIES") {
		return out, nil
	}
	if !p.punct("(") {
		return nil, syntaxErr("(")
	}
	for {
		k, ok := p.str()
		if !ok || !p.punct("=") {
			return nil, syntaxErr(`"key" = "value"`)
		}
		v, ok := p.str()
		if !ok {
			return nil, syntaxErr(`"key" = "value"`)
		}
		out[k] = v
		if p.punct(")") {
			return out, nil
		}
		if !p.punct(",") {
			return nil, syntaxErr(", or )")
		}
	}
}

func (s *Server) createRepository(p *parser, readOnly bool) (*sqltypes.Result, bool, error) {
	name, ok := p.name()
	if !ok || !p.kw("WITH", "BROKER") || !p.kw("ON", "LOCATION") {
		return nil, true, syntaxErr("CREATE REPOSITORY <name> WITH BROKER ON LOCATION")
	}
	loc, ok := p.str()
	if !ok {
		return nil, true, syntaxErr("a location string")
	}
	props, err := p.properties()
	if err != nil || !p.done() {
		return nil, true, syntaxErr("PROPERTIES (...)")
	}
	b := s.backupState()
	if b.repos[name] != nil {
		// fe-core backup/RepositoryMgr.addAndInitRepoIfNotExist, prefixed
		// by BackupHandler.createRepository.
		return nil, true, commonErr("Failed to create repository: repository with same name already exist: %s", name)
	}
	rest, ok := strings.CutPrefix(loc, "s3://")
	if !ok {
		return nil, true, commonErr("Failed to create repository: fakefe: only s3:// locations are supported, got %s", loc)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	r := &repository{id: b.nextID, name: name, readOnly: readOnly, location: loc, bucket: bucket,
		prefix: strings.Trim(prefix, "/"), props: props, created: time.Now()}
	b.nextID++
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cl, err := s.s3Client(r)
	if err != nil {
		return nil, true, commonErr("Failed to create repository: %v", err)
	}
	infoKey := joinKey(r.root(), "__repo_info")
	if err := dialEndpoint(r); err != nil {
		// The FE retries (SetUnreachableS3Time) while the client waits;
		// it holds RepositoryMgr's lock, not the whole FE: other sessions
		// go on meanwhile.
		d := b.unreachableFor
		s.mu.Unlock()
		time.Sleep(d)
		s.mu.Lock()
		return nil, true, commonErr("Failed to create repository: failed to list remote path: %s/__starrocks_repository_%s/__repo_info. msg: %v",
			strings.TrimSuffix(loc, "/"), name, err)
	}
	body, err := s3Get(ctx, cl, r.bucket, infoKey)
	switch {
	case err == nil:
		var info struct {
			Name       string `json:"name"`
			CreateTime string `json:"create_time"`
		}
		if err := json.Unmarshal(body, &info); err != nil {
			return nil, true, commonErr("Failed to create repository: failed to read repo info file: %v", err)
		}
		if t, err := time.ParseInLocation(time.DateTime, info.CreateTime, time.Local); err == nil {
			r.created = t
		}
	case isNotFound(err):
		info, _ := json.Marshal(map[string]string{"name": name, "create_time": r.created.Format(time.DateTime)})
		if err := s3Put(ctx, cl, r.bucket, infoKey, info); err != nil {
			return nil, true, commonErr("Failed to create repository: %v", err)
		}
	default:
		// As the FE words a failed listing (seen in StarRocks issues 24717
		// and 54984): the path, then the storage's message.
		return nil, true, commonErr("Failed to create repository: failed to list remote path: %s/__starrocks_repository_%s/__repo_info. msg: %v",
			strings.TrimSuffix(loc, "/"), name, err)
	}
	b.repos[name] = r
	return &sqltypes.Result{}, true, nil
}

// dialEndpoint: whether anything listens at the repository's endpoint.
func dialEndpoint(r *repository) error {
	host := r.props["aws.s3.endpoint"]
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "443"
		if strings.EqualFold(r.props["aws.s3.enable_ssl"], "false") {
			port = "80"
		}
		host = net.JoinHostPort(host, port)
	}
	c, err := net.DialTimeout("tcp", host, 2*time.Second)
	if err != nil {
		return fmt.Errorf("Unable to execute HTTP request: %w", err)
	}
	return c.Close()
}

// s3Client is the client the FE and BEs build from the repository's
// properties: aws.s3.access_key, aws.s3.secret_key, aws.s3.endpoint,
// aws.s3.region, aws.s3.enable_path_style_access, aws.s3.enable_ssl (docs
// sql-reference/sql-statements/backup_restore/CREATE_REPOSITORY.md).
func (s *Server) s3Client(r *repository) (*s3.Client, error) {
	endpoint := r.props["aws.s3.endpoint"]
	if endpoint == "" {
		return nil, errors.New("fakefe: aws.s3.endpoint is required here (no AWS)")
	}
	scheme := "https://"
	if strings.EqualFold(r.props["aws.s3.enable_ssl"], "false") {
		scheme = "http://"
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = scheme + endpoint
	}
	region := r.props["aws.s3.region"]
	if region == "" {
		region = "us-east-1"
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: s.backupState().rootCAs, MinVersion: tls.VersionTLS12}}}
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: strings.EqualFold(r.props["aws.s3.enable_path_style_access"], "true"),
		Credentials:  credentials.NewStaticCredentialsProvider(r.props["aws.s3.access_key"], r.props["aws.s3.secret_key"], ""),
		HTTPClient:   hc,
	}), nil
}

func isNotFound(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound")
}

// s3Message is the storage's answer as StarRocks passes it on: the S3 error
// code and message (e.g. InvalidAccessKeyId, SignatureDoesNotMatch,
// NoSuchBucket).
func s3Message(op, key string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s %s: %s: %s", op, key, ae.ErrorCode(), ae.ErrorMessage())
	}
	return fmt.Errorf("%s %s: %v", op, key, err)
}

func s3Get(ctx context.Context, cl *s3.Client, bucket, key string) ([]byte, error) {
	out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		if isNotFound(err) {
			return nil, err
		}
		return nil, s3Message("read", key, err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func s3Put(ctx context.Context, cl *s3.Client, bucket, key string, body []byte) error {
	_, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
	if err != nil {
		return s3Message("upload", key, err)
	}
	return nil
}

// s3List lists keys (delimiter "") or common prefixes (delimiter "/").
func s3List(ctx context.Context, cl *s3.Client, bucket, prefix, delimiter string) ([]string, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	var out []string
	pg := s3.NewListObjectsV2Paginator(cl, in)
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, s3Message("list", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
		for _, cp := range page.CommonPrefixes {
			out = append(out, aws.ToString(cp.Prefix))
		}
	}
	sort.Strings(out)
	return out, nil
}

func withChecksum(key string, body []byte) string {
	sum := md5.Sum(body)
	return key + "." + hex.EncodeToString(sum[:])
}

// snapshotTimestamps lists the __info_ files of label as
// Repository.getSnapshotInfo does: a finished file __info_<ts>.<md5> as
// <ts>, any other (an upload's __info_<ts>.part) as "Invalid: <file name>"
// (Repository.decodeFileNameWithChecksum wants 32 characters after the
// last dot).
func snapshotTimestamps(ctx context.Context, cl *s3.Client, r *repository, label string) ([]string, error) {
	dir := joinKey(r.root(), "__ss_"+label) + "/"
	keys, err := s3List(ctx, cl, r.bucket, dir+"__info_", "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		file := strings.TrimPrefix(k, dir)
		i := strings.LastIndex(file, ".")
		if i < 0 || len(file)-i-1 != 32 {
			out = append(out, "Invalid: "+file)
			continue
		}
		out = append(out, strings.TrimPrefix(file[:i], "__info_"))
	}
	return out, nil
}

// snapshotLabels lists the __ss_<label>/ directories of the repository.
func snapshotLabels(ctx context.Context, cl *s3.Client, r *repository) ([]string, error) {
	root := r.root() + "/"
	dirs, err := s3List(ctx, cl, r.bucket, root+"__ss_", "/")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		if strings.HasSuffix(d, "/") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(d, root+"__ss_"), "/"))
		}
	}
	return out, nil
}

func (s *Server) showSnapshot(p *parser) (*sqltypes.Result, bool, error) {
	name, ok := p.name()
	if !ok {
		return nil, true, syntaxErr("a repository name")
	}
	var label, ts string
	if p.kw("WHERE") {
		if !p.kw("SNAPSHOT") || !p.punct("=") {
			return nil, true, syntaxErr("SNAPSHOT =")
		}
		if label, ok = p.str(); !ok {
			return nil, true, syntaxErr("a snapshot name")
		}
		if p.kw("AND") {
			if !p.kw("TIMESTAMP") || !p.punct("=") {
				return nil, true, syntaxErr("TIMESTAMP =")
			}
			if ts, ok = p.str(); !ok {
				return nil, true, syntaxErr("a timestamp")
			}
		}
	}
	if !p.done() {
		return nil, true, syntaxErr("end of statement")
	}
	r := s.backupState().repos[name]
	if r == nil {
		// fe-core sql/analyzer/BackupRestoreAnalyzer: ERR_COMMON_ERROR
		// through reportSemanticException, so the analyzer's frame.
		return nil, true, commonErr("Getting analyzing error. Detail message: Repository [%s] does not exist.", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cl, err := s.s3Client(r)
	if err != nil {
		return nil, true, commonErr("%v", err)
	}
	labels := []string{label}
	if label == "" {
		if labels, err = snapshotLabels(ctx, cl, r); err != nil {
			return nil, true, commonErr("%v", err)
		}
	}
	// ShowSnapshotStmt.SNAPSHOT_ALL: Snapshot, Timestamp, Status, one row
	// a snapshot whose Timestamp is every __info_ file joined by "\n",
	// Status OK when there is any, even an invalid one ("ERROR: no
	// snapshot" when none: Repository.getSnapshotInfo); with a snapshot
	// and a timestamp named SNAPSHOT_DETAIL: Snapshot, Timestamp,
	// Database, Details, Status (ShowResultMetaFactory
	// .visitShowSnapshotStatement).
	res := &sqltypes.Result{Fields: fields("Timestamp", "Status", "Snapshot")}
	if label != "" && ts != "" {
		res.Fields = fields("Status", "Database", "Timestamp", "Snapshot", "Details")
	}
	for _, l := range labels {
		tss, err := snapshotTimestamps(ctx, cl, r, l)
		if err != nil {
			return nil, true, commonErr("%v", err)
		}
		if ts == "" {
			status := "OK"
			if len(tss) == 0 {
				status = "ERROR: no snapshot"
			}
			res.Rows = append(res.Rows, row(strings.Join(tss, "\n"), status, l))
			continue
		}
		for _, t := range tss {
			if t != ts {
				continue
			}
			info, err := readInfo(ctx, cl, r, l, t)
			if err != nil {
				res.Rows = append(res.Rows, row("ERROR: "+err.Error(), "", t, l, ""))
				continue
			}
			details, _ := json.Marshal(info)
			res.Rows = append(res.Rows, row("OK", info.Database, t, l, string(details)))
		}
	}
	return res, true, nil
}

// snapshotInfo is the __info_ file (BackupJobInfo, reduced).
type snapshotInfo struct {
	Name       string          `json:"name"`
	BackupTime int64           `json:"backup_time"`
	Database   string          `json:"database"`
	Tables     []snapshotTable `json:"tables"`
}

type snapshotTable struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	// File is the content object holding the rows, relative to __ss_<label>/.
	File string `json:"file"`
}

func readInfo(ctx context.Context, cl *s3.Client, r *repository, label, ts string) (*snapshotInfo, error) {
	dir := joinKey(r.root(), "__ss_"+label) + "/"
	keys, err := s3List(ctx, cl, r.bucket, dir+"__info_"+ts+".", "")
	if err != nil {
		return nil, err
	}
	if len(keys) != 1 {
		return nil, fmt.Errorf("failed to find snapshot info file %s__info_%s", dir, ts)
	}
	body, err := s3Get(ctx, cl, r.bucket, keys[0])
	if err != nil {
		return nil, err
	}
	var info snapshotInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("failed to parse %s: %w", keys[0], err)
	}
	return &info, nil
}

// tablesOf lists db's tables, sorted.
func (s *Server) tablesOf(db string) []string {
	var out []string
	for k := range s.grantState().tables {
		if d, t, _ := strings.Cut(k, "."); d == db {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

func (b *backupState) dbID(db string) int64 {
	if id, ok := b.dbIDs[db]; ok {
		return id
	}
	id := b.nextID
	b.nextID++
	b.dbIDs[db] = id
	return id
}

func (s *Server) submitBackup(p *parser) (*sqltypes.Result, bool, error) {
	db, ok := p.name()
	if !ok || !p.kw("SNAPSHOT") {
		return nil, true, syntaxErr("BACKUP DATABASE <db> SNAPSHOT <label> TO <repo>")
	}
	label, ok := p.name()
	if !ok || !p.kw("TO") {
		return nil, true, syntaxErr("TO <repo>")
	}
	repoName, ok := p.name()
	if !ok {
		return nil, true, syntaxErr("a repository name")
	}
	only, err := p.onTables()
	if err != nil {
		return nil, true, err
	}
	props, err := p.properties()
	if err != nil || !p.done() {
		return nil, true, syntaxErr("PROPERTIES (...) or end of statement")
	}
	// BackupRestoreAnalyzer.analyzeBackupProperties: timeout and type,
	// nothing else.
	timeout := int64(defaultJobTimeoutSec)
	var unknown []string
	for k, v := range props {
		switch k {
		case "timeout":
			if timeout, err = jobTimeout(v); err != nil {
				return nil, true, err
			}
		case "type":
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, true, commonErr("Unknown backup job properties: [%s]", strings.Join(unknown, ", "))
	}
	b := s.backupState()
	g := s.grantState()
	if !g.databases[db] {
		return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
	}
	r := b.repos[repoName]
	if r == nil {
		// BackupRestoreAnalyzer.analyzeLabelAndRepo.
		return nil, true, commonErr("Repository [%s] does not exist", repoName)
	}
	var tables []string
	for _, t := range s.tablesOf(db) {
		// BackupRestoreAnalyzer skips every asynchronous materialized
		// view while enable_backup_materialized_view is false (default).
		if g.tables[db+"."+t].refresh == "" {
			tables = append(tables, t)
		}
	}
	if len(only) > 0 {
		for _, t := range only {
			if g.tables[db+"."+t] == nil {
				return nil, true, sqlerror.NewSQLErrorf(ErrBadTable, sqlerror.SSUnknownTable, "Unknown table '%s'", t)
			}
		}
		tables = only
	}
	if len(tables) == 0 {
		return nil, true, commonErr("Database %s is empty", db)
	}
	if b.busy > 0 {
		b.busy--
		return nil, true, errBusy()
	}
	if j := b.jobs[db]; j != nil && !j.done() {
		return nil, true, commonErr("Can only run one backup or restore job of a database at same time")
	}
	if r.readOnly {
		return nil, true, commonErr("Repository %s is read only", r.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cl, err := s.s3Client(r)
	if err != nil {
		return nil, true, commonErr("%v", err)
	}
	labels, err := snapshotLabels(ctx, cl, r)
	if err != nil {
		return nil, true, commonErr("%v", err)
	}
	for _, l := range labels {
		if l == label {
			return nil, true, commonErr("Snapshot with name '%s' already exist in repository", label)
		}
	}
	j := &backupJob{id: b.nextID, label: label, db: db, repo: r, tables: tables, created: time.Now(),
		stepTimes: map[string]time.Time{}, status: "[OK]", timeoutSec: timeout}
	b.nextID++
	b.jobs[db] = j
	s.startJob(j)
	return &sqltypes.Result{}, true, nil
}

func (s *Server) submitRestore(p *parser) (*sqltypes.Result, bool, error) {
	label, ok := p.name()
	if !ok || !p.kw("FROM") {
		return nil, true, syntaxErr("RESTORE SNAPSHOT <label> FROM <repo>")
	}
	repoName, ok := p.name()
	if !ok || !p.kw("DATABASE") {
		return nil, true, syntaxErr("DATABASE <db>")
	}
	db, ok := p.name()
	if !ok {
		return nil, true, syntaxErr("a database name")
	}
	only, err := p.onTables()
	if err != nil {
		return nil, true, err
	}
	props, err := p.properties()
	if err != nil || !p.done() {
		return nil, true, syntaxErr("PROPERTIES (...)")
	}
	ts, ok := props["backup_timestamp"]
	if !ok {
		return nil, true, commonErr("Missing backup_timestamp property")
	}
	replicas := 3 // RunMode.defaultReplicationNum in shared-nothing
	timeout := int64(defaultJobTimeoutSec)
	var unknown []string
	for k, v := range props {
		switch k {
		case "timeout":
			if timeout, err = jobTimeout(v); err != nil {
				return nil, true, err
			}
		case "backup_timestamp", "allow_load":
		case "replication_num":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, true, commonErr("Invalid meta version format: %s", v)
			}
			replicas = n
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, true, commonErr("Unknown restore job properties: [%s]", strings.Join(unknown, ", "))
	}
	b := s.backupState()
	r := b.repos[repoName]
	if r == nil {
		return nil, true, commonErr("Repository [%s] does not exist", repoName)
	}
	if !s.grantState().databases[db] {
		return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
	}
	if b.busy > 0 {
		b.busy--
		return nil, true, errBusy()
	}
	if j := b.jobs[db]; j != nil && !j.done() {
		return nil, true, commonErr("Can only run one backup or restore job of a database at same time")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cl, err := s.s3Client(r)
	if err != nil {
		return nil, true, commonErr("%v", err)
	}
	info, err := readInfo(ctx, cl, r, label, ts)
	if err != nil {
		return nil, true, commonErr("Failed to get info of snapshot '%s' because: %v. Maybe specified wrong backup timestamp", label, err)
	}
	tables := make([]string, 0, len(info.Tables))
	for _, t := range info.Tables {
		tables = append(tables, t.Name)
	}
	if len(only) > 0 {
		for _, t := range only {
			if !contains(tables, t) {
				return nil, true, commonErr("Table %s does not exist in snapshot %s", t, label)
			}
		}
		tables = only
	}
	j := &backupJob{restore: true, id: b.nextID, label: label, db: db, repo: r, tables: tables, timestamp: ts,
		replicationNum: replicas, created: time.Now(), stepTimes: map[string]time.Time{}, status: "[OK]", timeoutSec: timeout}
	b.nextID++
	b.jobs[db] = j
	s.startJob(j)
	return &sqltypes.Result{}, true, nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Server) cancelJob(p *parser, restore bool) (*sqltypes.Result, bool, error) {
	if !p.kw("FROM") {
		return nil, true, syntaxErr("FROM <db>")
	}
	db, ok := p.name()
	if !ok || !p.done() {
		return nil, true, syntaxErr("a database name")
	}
	if !s.grantState().databases[db] {
		return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
	}
	j := s.backupState().jobs[db]
	if j == nil || j.restore != restore {
		// BackupHandler.cancel's wording, "job" on backup only.
		if restore {
			return nil, true, commonErr("No restore is currently running")
		}
		return nil, true, commonErr("No backup job is currently running")
	}
	if j.done() {
		return nil, true, commonErr("Failed to cancel job: Job with label %s can not be cancelled. state: %s", j.label, j.stateName())
	}
	j.cancel("[COMMON_ERROR, msg: user cancelled]")
	return &sqltypes.Result{}, true, nil
}

func (j *backupJob) cancel(status string) {
	j.cancelled = true
	j.status = status
	j.finished = time.Now()
}

// startJob advances j one state per step in the background until it is
// done or the server stops.
func (s *Server) startJob(j *backupJob) {
	s.jobs.Add(1)
	go func() {
		defer s.jobs.Done()
		for {
			s.mu.Lock()
			step := s.backupState().step
			s.mu.Unlock()
			select {
			case <-s.closed:
				return
			case <-time.After(step):
			}
			if !s.advance(j) {
				return
			}
		}
	}()
}

// advance moves j to its next state, doing the state's storage work; it
// reports whether the job goes on.
func (s *Server) advance(j *backupJob) bool {
	s.mu.Lock()
	if j.done() {
		s.mu.Unlock()
		return false
	}
	if s.backupState().held {
		s.mu.Unlock()
		return true
	}
	state := j.stateName()
	var err error
	switch {
	case !j.restore && state == "UPLOADING":
		err = s.uploadContent(j) // unlocks while it talks to S3
	case !j.restore && state == "UPLOAD_INFO":
		err = s.uploadInfo(j)
	case j.restore && state == "DOWNLOADING":
		err = s.downloadContent(j)
	}
	if j.done() {
		s.mu.Unlock()
		return false
	}
	if err != nil {
		j.cancel("[COMMON_ERROR, msg: " + err.Error() + "]")
		s.mu.Unlock()
		return false
	}
	j.state++
	j.stepTimes[j.stateName()] = time.Now()
	if j.stateName() == "FINISHED" {
		j.finished = time.Now()
	}
	s.mu.Unlock()
	return true
}

// content holds one table's rows in the snapshot (fakefe's stand-in for
// the BE's segment files).
type content struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// contentFile is the object of db.table under __ss_<label>/, in the
// __ss_content/__db_/__tbl_/__part_/__idx_/__<tablet>/ layout of
// Repository.getRepoTabletPathBySnapshotInfo.
func (b *backupState) contentFile(db, table string) string {
	dbID := b.dbID(db)
	tblID := b.dbID(db + "." + table)
	return fmt.Sprintf("__ss_content/__db_%d/__tbl_%d/__part_%d/__idx_%d/__%d/%d_0.dat", dbID, tblID, tblID+1, tblID+2, tblID+3, tblID+3)
}

// uploadContent is UPLOADING: each table's rows as one object. Called with
// s.mu held; releases it around the S3 calls.
func (s *Server) uploadContent(j *backupJob) error {
	b := s.backupState()
	type obj struct {
		key  string
		body []byte
	}
	var objs []obj
	for _, t := range j.tables {
		ft := s.grantState().tables[j.db+"."+t]
		if ft == nil {
			return fmt.Errorf("table %s does not exist", t)
		}
		body, _ := json.Marshal(content{Columns: ft.columns, Rows: ft.rows})
		key := joinKey(j.repo.root(), "__ss_"+j.label, b.contentFile(j.db, t))
		objs = append(objs, obj{withChecksum(key, body), body})
	}
	cl, err := s.s3Client(j.repo)
	if err != nil {
		return err
	}
	bucket := j.repo.bucket
	s.mu.Unlock()
	defer s.mu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, o := range objs {
		if err := s3Put(ctx, cl, bucket, o.key, o.body); err != nil {
			return err
		}
	}
	return nil
}

// uploadInfo is UPLOAD_INFO: __meta and __info_<timestamp>.
func (s *Server) uploadInfo(j *backupJob) error {
	b := s.backupState()
	now := time.Now()
	ts := fmt.Sprintf("%s-%03d", now.Format(backupTimestampLayout), now.Nanosecond()/int(time.Millisecond))
	info := snapshotInfo{Name: j.label, BackupTime: now.UnixMilli(), Database: j.db}
	for _, t := range j.tables {
		ft := s.grantState().tables[j.db+"."+t]
		if ft == nil {
			return fmt.Errorf("table %s does not exist", t)
		}
		info.Tables = append(info.Tables, snapshotTable{Name: t, Columns: ft.columns, File: b.contentFile(j.db, t)})
	}
	body, _ := json.Marshal(info)
	dir := joinKey(j.repo.root(), "__ss_"+j.label)
	cl, err := s.s3Client(j.repo)
	if err != nil {
		return err
	}
	bucket := j.repo.bucket
	s.mu.Unlock()
	defer s.mu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s3Put(ctx, cl, bucket, withChecksum(dir+"/__meta", body), body); err != nil {
		return err
	}
	if err := s3Put(ctx, cl, bucket, withChecksum(dir+"/__info_"+ts, body), body); err != nil {
		return err
	}
	j.timestamp = ts
	return nil
}

// downloadContent is DOWNLOADING (and, at once, COMMITTING): the rows of
// every restored table, read back from the bucket into db.
func (s *Server) downloadContent(j *backupJob) error {
	cl, err := s.s3Client(j.repo)
	if err != nil {
		return err
	}
	r := j.repo
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	restored := map[string]content{}
	info, err := readInfo(ctx, cl, r, j.label, j.timestamp)
	if err == nil {
		for _, t := range info.Tables {
			if !contains(j.tables, t.Name) {
				continue
			}
			prefix := joinKey(r.root(), "__ss_"+j.label, t.File) + "."
			var keys []string
			if keys, err = s3List(ctx, cl, r.bucket, prefix, ""); err != nil {
				break
			}
			if len(keys) != 1 {
				err = fmt.Errorf("snapshot file %s not found", prefix)
				break
			}
			var body []byte
			if body, err = s3Get(ctx, cl, r.bucket, keys[0]); err != nil {
				break
			}
			var c content
			if err = json.Unmarshal(body, &c); err != nil {
				break
			}
			restored[t.Name] = c
		}
	}
	s.mu.Lock()
	if err != nil {
		return err
	}
	g := s.grantState()
	for name, c := range restored {
		g.tables[j.db+"."+name] = &fakeTable{columns: c.Columns, rows: c.Rows}
	}
	return nil
}

func timeCell(t time.Time) sqltypes.Value {
	if t.IsZero() {
		return sqltypes.NULL
	}
	return sqltypes.NewVarChar(t.In(showTimeZone).Format(time.DateTime))
}

// showTimeZone is the zone of SHOW BACKUP's and SHOW RESTORE's times, as
// StarRocks formats them: TimeUtils.longToTimeString uses a fixed
// ZoneOffset of +08:00 (fe-core common/util/TimeUtils TIME_ZONE), whatever
// the machine's zone or the time_zone variable.
var showTimeZone = time.FixedZone("UTC+08:00", 8*3600)

func (s *Server) showJobs(p *parser, restore bool) (*sqltypes.Result, bool, error) {
	var db string
	if p.kw("FROM") {
		var ok bool
		if db, ok = p.name(); !ok {
			return nil, true, syntaxErr("a database name")
		}
		if !s.grantState().databases[db] {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERBadDb, "42000", "Unknown database '%s'", db)
		}
	}
	if !p.done() {
		return nil, true, syntaxErr("end of statement")
	}
	b := s.backupState()
	var res *sqltypes.Result
	if restore {
		// ShowRestoreStmt.TITLE_NAMES, reordered.
		res = &sqltypes.Result{Fields: fields("State", "Label", "DbName", "Timestamp", "JobId", "AllowLoad", "ReplicationNum",
			"RestoreObjs", "CreateTime", "MetaPreparedTime", "SnapshotFinishedTime", "DownloadFinishedTime", "FinishedTime",
			"UnfinishedTasks", "Progress", "TaskErrMsg", "Status", "Timeout")}
	} else {
		// ShowBackupStmt.TITLE_NAMES, reordered.
		res = &sqltypes.Result{Fields: fields("State", "SnapshotName", "DbName", "JobId", "BackupObjs", "CreateTime",
			"SnapshotFinishedTime", "UploadFinishedTime", "FinishedTime", "UnfinishedTasks", "Progress", "TaskErrMsg",
			"Status", "Timeout")}
	}
	for _, d := range sortedSet(b.jobs) {
		j := b.jobs[d]
		if (db != "" && d != db) || j.restore != restore {
			continue
		}
		objs, _ := json.Marshal(j.tables)
		v := func(str string) sqltypes.Value { return sqltypes.NewVarChar(str) }
		if restore {
			res.Rows = append(res.Rows, []sqltypes.Value{v(j.stateName()), v(j.label), v(j.db), v(j.timestamp),
				v(strconv.FormatInt(j.id, 10)), v("false"), v(strconv.Itoa(j.replicationNum)), v(string(objs)),
				timeCell(j.created), timeCell(j.stepTimes["SNAPSHOTING"]), timeCell(j.stepTimes["DOWNLOAD"]),
				timeCell(j.stepTimes["COMMIT"]), timeCell(j.finished), v(j.unfinished), v(j.progress), v("[]"), v(j.status),
				v(strconv.FormatInt(j.timeoutSec, 10))})
			continue
		}
		res.Rows = append(res.Rows, []sqltypes.Value{v(j.stateName()), v(j.label), v(j.db), v(strconv.FormatInt(j.id, 10)),
			v(string(objs)), timeCell(j.created), timeCell(j.stepTimes["UPLOAD_SNAPSHOT"]), timeCell(j.stepTimes["SAVE_META"]),
			timeCell(j.finished), v(j.unfinished), v(j.progress), v("[]"), v(j.status), v(strconv.FormatInt(j.timeoutSec, 10))})
	}
	return res, true, nil
}

// onTables reads the optional ON ([TABLE] <table>, ...) of BACKUP and
// RESTORE: the tables the job is limited to, none for the whole database.
func (p *parser) onTables() ([]string, error) {
	if !p.kw("ON") {
		return nil, nil
	}
	items, ok := p.group()
	if !ok {
		return nil, syntaxErr("ON (<table>, ...)")
	}
	var only []string
	for _, it := range items {
		if len(it) == 2 && strings.EqualFold(it[0], "TABLE") {
			it = it[1:]
		}
		if len(it) != 1 {
			return nil, syntaxErr("a table name")
		}
		only = append(only, it[0])
	}
	return only, nil
}
