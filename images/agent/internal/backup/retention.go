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

package backup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// StarRocks' repository layout (fe-core backup/Repository.java):
// <location>/__starrocks_repository_<name>/__repo_info, and one directory
// __ss_<label>/ per snapshot holding __meta, __info_<timestamp> and
// __ss_content/. StarRocks has no DROP SNAPSHOT (not in 4.1's grammar,
// fe-grammar StarRocks.g4, nor in main's of 2026-04), so
// retention deletes a snapshot's __ss_<label>/ prefix itself; __repo_info
// is never touched, and a snapshot the module did not make (its label
// lacks LabelPrefix) is never touched either.
const (
	repoDirPrefix     = "__starrocks_repository_"
	snapshotDirPrefix = "__ss_"
	infoFilePrefix    = "__info_"
	// repoInfoFile: Repository.FILE_REPO_INFO, what CREATE REPOSITORY
	// reads or writes.
	repoInfoFile = "__repo_info"
)

// Store is the agent's S3 client for the instance's location.
type Store struct {
	client *s3.Client
	repo   Repository
}

// NewStore builds the S3 client from the agent's pod: path-style or
// virtual-host, the endpoint's CA when given, TLS 1.2 at least.
func NewStore(r Repository) (*Store, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(r.Storage.CAPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(r.Storage.CAPEM) {
			return nil, errors.New("storage CA: no PEM certificate in it")
		}
		tlsCfg.RootCAs = pool
	}
	region := r.Storage.Region
	if region == "" {
		region = "us-east-1"
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}}
	return &Store{repo: r, client: s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(r.Storage.Endpoint),
		UsePathStyle: r.Storage.PathStyle,
		Credentials:  credentials.NewStaticCredentialsProvider(r.Keys.AccessKey, r.Keys.SecretKey, ""),
		HTTPClient:   hc,
	})}, nil
}

func (s *Store) repoDir() string {
	return strings.TrimPrefix(s.repo.Storage.Prefix+"/", "/") + repoDirPrefix + s.repo.Name + "/"
}

func (s *Store) err(op string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %s: %s", op, ae.ErrorCode(), s.repo.scrub(ae.ErrorMessage()))
	}
	return fmt.Errorf("%s: %s", op, s.repo.scrub(err.Error()))
}

func (s *Store) list(ctx context.Context, prefix, delimiter string) (keys, dirs []string, err error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.repo.Storage.Bucket), Prefix: aws.String(prefix)}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	p := s3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, s.err("list s3://"+s.repo.Storage.Bucket+"/"+prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		for _, cp := range page.CommonPrefixes {
			dirs = append(dirs, aws.ToString(cp.Prefix))
		}
	}
	return keys, dirs, nil
}

// Check lists the repository's directory once: the keys, endpoint, CA and
// bucket work from the agent's pod.
func (s *Store) Check(ctx context.Context) error {
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.repo.Storage.Bucket),
		Prefix: aws.String(s.repoDir()), MaxKeys: aws.Int32(1)})
	if err != nil {
		return s.err("list s3://"+s.repo.Storage.Bucket+"/"+s.repoDir(), err)
	}
	return nil
}

// CheckLocation lists one key under the storage's prefix: the bucket
// exists and the keys, endpoint and CA reach it from the agent's pod. It is
// bounded by checkTimeout, so an endpoint that does not answer holds the
// agent's pass that long at most.
func (s *Store) CheckLocation(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	prefix := strings.TrimPrefix(s.repo.Storage.Prefix+"/", "/")
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.repo.Storage.Bucket),
		Prefix: aws.String(prefix), MaxKeys: aws.Int32(1)})
	if err != nil {
		return s.err("list s3://"+s.repo.Storage.Bucket+"/"+prefix+" at "+s.repo.Storage.Endpoint, err)
	}
	return nil
}

// checkTimeout bounds CheckLocation (the SDK's retries included).
const checkTimeout = 30 * time.Second

// HasRepoInfo reports whether the repository's __repo_info is there: a
// repository StarRocks created at this location before.
func (s *Store) HasRepoInfo(ctx context.Context) (bool, error) {
	key := s.repoDir() + repoInfoFile
	keys, _, err := s.list(ctx, key, "")
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		if k == key {
			return true, nil
		}
	}
	return false, nil
}

// Answers reports an error only when the endpoint gives no HTTP answer
// at all within answerTimeout (nothing listens, no route, a TLS failure):
// refused keys or a missing bucket are answers, which StarRocks reports
// quickly and in its own words.
func (s *Store) Answers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.repo.Storage.Bucket),
		Prefix: aws.String(s.repoDir()), MaxKeys: aws.Int32(1)}, func(o *s3.Options) {
		// One attempt: the point is to learn quickly that nothing answers.
		o.RetryMaxAttempts = 1
	})
	// A failed send comes wrapped as a ResponseError too, with status 0.
	var re *smithyhttp.ResponseError
	if err == nil || errors.As(err, &re) && re.HTTPStatusCode() != 0 {
		return nil
	}
	return s.err(s.repo.Storage.Endpoint+" does not answer", err)
}

// answerTimeout bounds Answers.
const answerTimeout = 10 * time.Second

// Snapshot is one __ss_<label>/ directory of the repository.
type Snapshot struct {
	Label string
	// Timestamps of its __info_ files; none: the backup never finished
	// (a failed or cancelled job's leftovers).
	Timestamps []string
}

// Snapshots lists the module's snapshots in the bucket.
func (s *Store) Snapshots(ctx context.Context) ([]Snapshot, error) {
	root := s.repoDir()
	_, dirs, err := s.list(ctx, root+snapshotDirPrefix+LabelPrefix, "/")
	if err != nil {
		return nil, err
	}
	var out []Snapshot
	for _, d := range dirs {
		label := strings.TrimSuffix(strings.TrimPrefix(d, root+snapshotDirPrefix), "/")
		keys, _, err := s.list(ctx, d+infoFilePrefix, "")
		if err != nil {
			return nil, err
		}
		sn := Snapshot{Label: label}
		for _, k := range keys {
			// Repository.upload names a finished file <name>.<md5> and
			// an unfinished one <name>.part; only the former is a backup
			// (Repository.decodeFileNameWithChecksum: 32 characters after
			// the last dot).
			ts, sum, ok := cutLast(strings.TrimPrefix(k, d+infoFilePrefix), ".")
			if ok && len(sum) == 32 && reTimestamp.MatchString(ts) {
				sn.Timestamps = append(sn.Timestamps, ts)
			}
		}
		sort.Strings(sn.Timestamps)
		out = append(out, sn)
	}
	return out, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// Deleted is what DeleteSnapshots removed.
type Deleted struct {
	Label   string
	Objects int
}

// DeleteSnapshots deletes the __ss_<label>/ prefix of each label, only
// labels the module made (LabelPrefix, an identifier), and only while no
// backup or restore job runs (q answers SHOW BACKUP / SHOW RESTORE): a
// running job may be writing or reading any snapshot. A label with nothing
// left is reported with 0 objects, so a retry after a partial failure
// converges.
func (s *Store) DeleteSnapshots(ctx context.Context, q Querier, labels []string) ([]Deleted, error) {
	for _, l := range labels {
		if !strings.HasPrefix(l, LabelPrefix) || !reLabel.MatchString(l) {
			return nil, fmt.Errorf("snapshot %q: not made by the module (labels start with %q and match %s); never deleted", l, LabelPrefix, reLabel)
		}
	}
	busy, err := Busy(ctx, q)
	if err != nil {
		return nil, err
	}
	if busy {
		return nil, errors.New("a backup or restore job runs: snapshots are deleted once it has finished")
	}
	var out []Deleted
	for _, l := range labels {
		prefix := s.repoDir() + snapshotDirPrefix + l + "/"
		keys, _, err := s.list(ctx, prefix, "")
		if err != nil {
			return out, err
		}
		for start := 0; start < len(keys); start += 1000 {
			end := min(start+1000, len(keys))
			ids := make([]types.ObjectIdentifier, 0, end-start)
			for _, k := range keys[start:end] {
				ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
			}
			res, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(s.repo.Storage.Bucket),
				Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
			if err != nil {
				return out, s.err("delete snapshot "+l, err)
			}
			if len(res.Errors) > 0 {
				e := res.Errors[0]
				return out, fmt.Errorf("delete snapshot %s: %s: %s: %s", l, aws.ToString(e.Key), aws.ToString(e.Code), s.repo.scrub(aws.ToString(e.Message)))
			}
		}
		out = append(out, Deleted{Label: l, Objects: len(keys)})
	}
	return out, nil
}

// removeRepoDir deletes everything under the repository's directory; only
// for the probe of a replacement, which holds its __repo_info alone.
func (s *Store) removeRepoDir(ctx context.Context) error {
	keys, _, err := s.list(ctx, s.repoDir(), "")
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.repo.Storage.Bucket), Key: aws.String(k)}); err != nil {
			return s.err("delete "+k, err)
		}
	}
	return nil
}

// SetLabels are the labels in the bucket of the set with this label prefix
// (agentconfig.BackupLabelPrefix): its databases' snapshots.
func (s *Store) SetLabels(ctx context.Context, labelPrefix string) ([]string, error) {
	if !strings.HasPrefix(labelPrefix, LabelPrefix) || !reLabel.MatchString(labelPrefix) {
		return nil, fmt.Errorf("label prefix %q: not the module's", labelPrefix)
	}
	snaps, err := s.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, sn := range snaps {
		if strings.HasPrefix(sn.Label, labelPrefix+"_") {
			out = append(out, sn.Label)
		}
	}
	return out, nil
}

// Leftovers are the module's snapshot directories without an __info_
// file, except those in keep (a job that may still be writing one): what
// failed or cancelled backups left behind.
func (s *Store) Leftovers(ctx context.Context, keep map[string]bool) ([]string, error) {
	snaps, err := s.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, sn := range snaps {
		if len(sn.Timestamps) == 0 && !keep[sn.Label] {
			out = append(out, sn.Label)
		}
	}
	return out, nil
}
