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

package agent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/shareddata"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// StatefulSetReader reads a StatefulSet's spec.replicas in the agent's
// namespace. The Role allows get on the CN StatefulSet by name
// (apiGroups apps, resources statefulsets, resourceNames the
// ComputeNodes.StatefulSet name).
type StatefulSetReader interface {
	Replicas(ctx context.Context, name string) (int32, error)
}

// KubeStatefulSets is the client-go StatefulSetReader.
type KubeStatefulSets struct {
	StatefulSets appsv1client.StatefulSetsGetter
	Namespace    string
}

// Replicas is spec.replicas (1 when unset, the API's default).
func (k *KubeStatefulSets) Replicas(ctx context.Context, name string) (int32, error) {
	s, err := k.StatefulSets.StatefulSets(k.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("get StatefulSet %s: %w", name, err)
	}
	if s.Spec.Replicas == nil {
		return 1, nil
	}
	return *s.Spec.Replicas, nil
}

// Reasons of the shared-data reports.
const (
	// ReasonStorageVolumePending: the declared databases wait for the
	// default storage volume (a database of a shared-data FE is created on
	// the default volume, fe-core StorageVolumeMgr.getDefaultStorageVolume).
	ReasonStorageVolumePending = "StorageVolumePending"
	// ReasonReplicasUnreadable: the CN StatefulSet could not be read; the
	// agent adds up to Min and drops nothing.
	ReasonReplicasUnreadable = "ReplicasUnreadable"
	// ReasonComputeNodesRefused: StarRocks refused ADD or DROP COMPUTE NODE.
	ReasonComputeNodesRefused = "ComputeNodesRefused"
)

// sharedDataRun is what the leader's agent remembers between passes.
type sharedDataRun struct {
	volumeApplied string // shareddata.Volume.Fingerprint, memory only
	createdAt     string
	alteredAt     string
	cacheReadAt   time.Time // readComputeCache
}

// runSharedData keeps the storage volume, the compute nodes and the
// cluster snapshot of a shared-data instance (leader's agent only) and
// says whether the storage volume is ready: nothing may create a database
// before. The CN report goes into mst.
func (a *Agent) runSharedData(ctx context.Context, cfg *agentconfig.Config, mst *agentconfig.MembershipStatus) (volumeReady bool, err error) {
	sd := cfg.SharedData
	st := &agentconfig.SharedDataStatus{StorageVolume: a.ensureVolume(ctx, sd.StorageVolume)}
	var errs []error
	cnSt, cns, err := a.ensureComputeNodes(ctx, sd.ComputeNodes)
	if err != nil {
		errs = append(errs, err)
	}
	a.readComputeCache(ctx, shareddata.OwnComputeNodes(sd.ComputeNodes, cns))
	mst.ComputeNodes = cnSt
	anyCNAlive := false
	for _, cn := range cns {
		mst.Nodes = append(mst.Nodes, agentconfig.NodeStatus{Host: cn.Host, Alive: cn.Alive, Version: cn.Version})
		anyCNAlive = anyCNAlive || cn.Alive
	}
	if st.StorageVolume.Ready {
		var snap agentconfig.ClusterSnapshotsStatus
		var sent bool
		err := a.self.Do(ctx, "cluster snapshot", func(ctx context.Context, db *sql.DB) error {
			snap, sent = shareddata.EnsureSnapshots(ctx, db, sd.StorageVolume.Name, sd.ClusterSnapshots, anyCNAlive)
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
		if sent {
			a.log.Info("automated cluster snapshot turned on", "storageVolume", sd.StorageVolume.Name)
		}
		if snap.Reason != "" {
			snap.Message = a.scrub(snap.Message)
		}
		st.ClusterSnapshots = &snap
	}
	a.mu.Lock()
	a.sharedSt = st
	a.mu.Unlock()
	return st.StorageVolume.Ready, errors.Join(errs...)
}

// ensureVolume reads the keys and ensures the storage volume. Its failures
// are in the report, not the pass's error: the rest of the pass goes on.
func (a *Agent) ensureVolume(ctx context.Context, c agentconfig.StorageVolume) agentconfig.StorageVolumeStatus {
	st := agentconfig.StorageVolumeStatus{Name: c.Name, CreatedAt: a.sharedRun.createdAt, AlteredAt: a.sharedRun.alteredAt}
	if a.opts.Secrets == nil {
		st.Reason, st.Message = agentconfig.StorageVolumeCredentialsMissing, "the agent has no Kubernetes access (--manage-users=false): it cannot read Secret "+c.Credentials.SecretName
		return st
	}
	keys, err := backup.ReadKeys(ctx, a.opts.Secrets, c.Credentials.SecretName, c.Credentials.AccessKeyIDKey, c.Credentials.SecretAccessKeyKey)
	if err != nil {
		st.Reason, st.Message = agentconfig.StorageVolumeCredentialsMissing, agentconfig.TruncateBackupMessage(err.Error())
		return st
	}
	a.mu.Lock()
	a.volumeKeys = []string{keys.AccessKey, keys.SecretKey}
	a.mu.Unlock()
	v := shareddata.Volume{Name: c.Name, Location: c.Location, Endpoint: c.Endpoint, Region: c.Region,
		PathStyle: c.PathStyle, EnableSSL: c.EnableSSL, Keys: keys, Check: true}
	if c.CA != nil {
		// The CA the CNs and the FE trust too (their start scripts add it
		// to their bundles): the agent's check reaches the endpoint as
		// they will.
		data, err := a.opts.Secrets.Get(ctx, c.CA.Name)
		if err != nil {
			st.Reason, st.Message = agentconfig.StorageVolumeCredentialsMissing, agentconfig.TruncateBackupMessage(fmt.Sprintf("read the storage CA from Secret %s: %v", c.CA.Name, err))
			return st
		}
		if v.CAPEM = data[c.CA.Key]; len(v.CAPEM) == 0 {
			st.Reason, st.Message = agentconfig.StorageVolumeCredentialsMissing, fmt.Sprintf("Secret %s has no key %q with the storage CA", c.CA.Name, c.CA.Key)
			return st
		}
	}
	var got shareddata.Ensured
	// On the leader's own FE, like the backups: the statements change the
	// leader's metadata, and SHOW and DESC read it there.
	err = a.self.Do(ctx, "storage volume", func(ctx context.Context, db *sql.DB) error {
		var err error
		got, err = shareddata.EnsureVolume(ctx, db, v, a.sharedRun.volumeApplied)
		return err
	})
	now := time.Now().UTC().Format(time.RFC3339)
	if got.Fingerprint != "" {
		a.sharedRun.volumeApplied = got.Fingerprint
	}
	if got.Created {
		a.sharedRun.createdAt, st.CreatedAt = now, now
		a.log.Info("storage volume created", "name", c.Name, "location", c.Location)
	}
	if got.Altered {
		a.sharedRun.alteredAt, st.AlteredAt = now, now
		a.log.Info("storage volume properties set", "name", c.Name)
	}
	if got.MadeDefault {
		a.log.Info("storage volume made the default", "name", c.Name)
	}
	var le *shareddata.LocationError
	var be *shareddata.BucketError
	switch {
	case errors.As(err, &le):
		st.Reason, st.Message = agentconfig.StorageVolumeLocationChanged, le.Error()
	case errors.As(err, &be):
		st.Reason, st.Message = agentconfig.StorageVolumeBucketUnreachable, agentconfig.TruncateBackupMessage(a.scrub(v.Scrub(be.Error())))
	case err != nil:
		st.Reason, st.Message = agentconfig.StorageVolumeRefused, agentconfig.TruncateBackupMessage(a.scrub(v.Scrub(err.Error())))
	default:
		st.Ready = true
	}
	if !st.Ready {
		a.log.Warn("storage volume not ready", "name", c.Name, "reason", st.Reason, "message", st.Message)
	}
	return st
}

// ensureComputeNodes makes SHOW COMPUTE NODES match the CN StatefulSet's
// replicas bounded by Min and Max.
func (a *Agent) ensureComputeNodes(ctx context.Context, c agentconfig.ComputeNodes) (*agentconfig.ComputeNodesStatus, []shareddata.ComputeNode, error) {
	st := &agentconfig.ComputeNodesStatus{Replicas: -1}
	if err := shareddata.Validate(c); err != nil {
		st.Reason, st.Message = ReasonComputeNodesRefused, err.Error()
		return st, nil, err
	}
	replicas, readErr := int32(0), error(nil)
	if a.opts.StatefulSets == nil {
		readErr = errors.New("the agent has no Kubernetes access")
	} else {
		replicas, readErr = a.opts.StatefulSets.Replicas(ctx, c.StatefulSet)
	}
	if readErr == nil {
		st.Replicas = replicas
		st.Desired = shareddata.DesiredCount(replicas, c)
	} else {
		// Min CNs run whatever the autoscaler does; without the count the
		// agent adds those and drops nothing.
		st.Desired = c.Min
		st.Reason, st.Message = ReasonReplicasUnreadable, fmt.Sprintf("the CN StatefulSet %s could not be read (%v): following its minimum of %d, dropping nothing", c.StatefulSet, readErr, c.Min)
	}
	want := shareddata.DesiredHosts(c, st.Desired)
	var cns []shareddata.ComputeNode
	err := a.service.Do(ctx, "compute nodes", func(ctx context.Context, db *sql.DB) error {
		var err error
		if cns, err = shareddata.ShowComputeNodes(ctx, db); err != nil {
			return err
		}
		plan := shareddata.DecideComputeNodes(want, c.HeartbeatPort, cns)
		if readErr != nil {
			plan.Drop = nil
		}
		st.Leaving = plan.Leaving
		if plan.Empty() {
			return nil
		}
		done, err := shareddata.ApplyComputeNodes(ctx, db, plan)
		for _, s := range done {
			a.log.Info("compute nodes changed", "statement", s)
		}
		if err != nil {
			st.Reason, st.Message = ReasonComputeNodesRefused, a.scrub(err.Error())
			return err
		}
		cns, err = shareddata.ShowComputeNodes(ctx, db)
		return err
	})
	for _, cn := range cns {
		st.Listed++
		if cn.Alive {
			st.Alive++
		}
	}
	return st, cns, err
}

// readComputeCache reads the block cache lookups of the CNs at hosts for
// the metrics, all at once and within a few seconds, at most once every
// Options.ComputeCacheReadEvery: a CN that does not answer has no series
// until it does.
func (a *Agent) readComputeCache(ctx context.Context, hosts []string) {
	now := time.Now()
	if now.Sub(a.sharedRun.cacheReadAt) < a.opts.ComputeCacheReadEvery {
		return
	}
	a.sharedRun.cacheReadAt = now
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]status.CacheLookups{}
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := shareddata.ReadCacheStats(ctx, a.http, h, agentconfig.ComputeHTTPPort)
			if err != nil {
				a.log.Debug("the compute node's cache statistics are not readable", "host", h, "error", err)
				return
			}
			mu.Lock()
			out[h] = status.CacheLookups{Hits: st.Hits, Misses: st.Misses}
			mu.Unlock()
		}()
	}
	wg.Wait()
	a.opts.Metrics.SetComputeCache(out)
}

// clearComputeCache ends the CN cache series of an agent that reads them
// no more (not the shared-data FE leader's); should it lead again, it
// reads at once.
func (a *Agent) clearComputeCache() {
	a.sharedRun.cacheReadAt = time.Time{}
	a.opts.Metrics.SetComputeCache(nil)
}

func (a *Agent) setSharedDataStatus(st *agentconfig.SharedDataStatus) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sharedSt = st
}
