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

package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/dev/s3server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// fixedReplicas is the CN StatefulSet's spec.replicas as the API server
// would answer it.
type fixedReplicas struct{ n atomic.Int32 }

func (f *fixedReplicas) Replicas(context.Context, string) (int32, error) { return f.n.Load(), nil }

// The agent of a shared-data instance on a real FE in shared-data mode
// (dev/realfe, versitygw over plain HTTP in the test's network): the
// declared database waits for the storage volume, which waits for the
// team's Secret; then the volume is created and made the default as the
// agent's own account (d8_agent: db_admin holds CREATE STORAGE VOLUME),
// the CNs follow the StatefulSet's replicas (cluster_admin's NODE), the
// automated cluster snapshot is turned on, and the declared database is
// created on the volume. A second pass logs nothing new, and neither key
// is in a log line or the status.
func TestAgentOnASharedDataFrontend(t *testing.T) {
	t.Parallel() // beside the other real-FE tests (TestAgentOnARealFrontend)
	c := realfe.Start(t, realfe.Options{SharedData: true, Name: "sdagent"})
	s3 := s3server.StartWith(t, s3server.Options{Host: c.HostIP, PlainHTTP: true})
	const bucket = "team-data"
	s3.CreateBucket(t, bucket)
	fe := c.StartFE(t, 0)

	uid := "7d3c1f00-1111-4222-8333-944455556666"
	cfg := realFEAgentConfig(c)
	cfg.Grants = &agentconfig.Grants{Databases: []string{"sales"}}
	cfg.SharedData = &agentconfig.SharedData{
		StorageVolume: agentconfig.StorageVolume{
			Name:     agentconfig.StorageVolumeName(uid),
			Location: agentconfig.StorageVolumeLocation(bucket, "sr", "team-a", "sdagent", uid),
			Endpoint: s3.URL(), Region: s3server.Region, PathStyle: true,
			Credentials: agentconfig.S3Credentials{SecretName: "team-s3-keys", AccessKeyIDKey: "access", SecretAccessKeyKey: "secret"},
		},
		ComputeNodes: agentconfig.ComputeNodes{StatefulSet: "d8ms-sr-sdagent-cn",
			HostFormat: "d8ms-sr-sdagent-cn-%d.d8ms-sr-sdagent-cn.team-a.svc.cluster.local", HeartbeatPort: 9050, Min: 1, Max: 4},
		ClusterSnapshots: true,
	}
	secrets := newMemSecrets()
	sts := &fixedReplicas{}
	sts.n.Store(2)
	logs := &logBuffer{}
	a := realFEAgentIn(t, t.TempDir(), c, cfg, fe, logs, func(o *agent.Options) {
		o.Secrets, o.StatefulSets = secrets, sts
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*realfe.StartTimeout)
	defer cancel()
	root := c.DB(t, fe, "root", c.RootPassword, false)
	hasSales := func() bool {
		rows, err := sqlrows.QueryMaps(ctx, root, "SHOW DATABASES")
		require.NoError(t, err)
		for _, r := range rows {
			if r["Database"] == "sales" {
				return true
			}
		}
		return false
	}

	t.Run("without the storage keys nothing creates a database", func(t *testing.T) {
		a.Pass(ctx) // lets the FE bootstrap
		fe.WaitReady(t, realfe.StartTimeout)
		var st agentconfig.Status
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
			a.Pass(ctx)
			st = a.Status()
			if st.SharedData != nil && st.Users != nil {
				break
			}
			if time.Now().After(deadline) {
				report, _ := json.Marshal(st)
				t.Fatalf("no shared-data report: %s\nFE:\n%s", report, fe.Tail())
			}
		}
		require.False(t, st.SharedData.StorageVolume.Ready)
		require.Equal(t, agentconfig.StorageVolumeCredentialsMissing, st.SharedData.StorageVolume.Reason, st.SharedData.StorageVolume.Message)
		require.Contains(t, st.SharedData.StorageVolume.Message, "team-s3-keys")
		require.Equal(t, agent.ReasonStorageVolumePending, st.Users.Reason)
		require.Nil(t, st.SharedData.ClusterSnapshots, "no snapshot without the volume")
		require.False(t, hasSales())
	})

	// StarRocks would create the volume with keys the bucket refuses
	// (CREATE STORAGE VOLUME reaches no bucket): the agent checks first,
	// reports why, and sends nothing.
	secrets.set("team-s3-keys", map[string]string{"access": s3.AccessKey, "secret": "wrong-secret-0123456789abcdefghij"})
	t.Run("a bucket that refuses the keys: no volume, a clear reason", func(t *testing.T) {
		a.Pass(ctx)
		st := a.Status()
		sv := st.SharedData.StorageVolume
		require.False(t, sv.Ready)
		require.Equal(t, agentconfig.StorageVolumeBucketUnreachable, sv.Reason, sv.Message)
		require.Contains(t, sv.Message, "SignatureDoesNotMatch")
		require.Contains(t, sv.Message, "team-data")
		require.NotContains(t, sv.Message, "wrong-secret")
		rows, err := sqlrows.QueryMaps(ctx, root, "SHOW STORAGE VOLUMES")
		require.NoError(t, err)
		for _, r := range rows {
			require.NotEqual(t, sv.Name, r["Storage Volume"], "the volume was created")
		}
		require.False(t, hasSales())
		require.NotContains(t, logs.String(), "wrong-secret")
	})

	secrets.set("team-s3-keys", map[string]string{"access": s3.AccessKey, "secret": s3.SecretKey})
	t.Run("the volume, the CNs, the snapshot, then the database", func(t *testing.T) {
		a.Pass(ctx)
		st := a.Status()
		report, _ := json.Marshal(st)
		require.True(t, st.LastApply.Succeeded, "%s", report)
		sv := st.SharedData.StorageVolume
		require.True(t, sv.Ready, "%s", report)
		require.NotEmpty(t, sv.CreatedAt)
		cn := st.Membership.ComputeNodes
		require.NotNil(t, cn, "%s", report)
		require.Equal(t, agentconfig.ComputeNodesStatus{Replicas: 2, Desired: 2, Listed: 2, Alive: 0}, *cn)
		require.NotNil(t, st.SharedData.ClusterSnapshots, "%s", report)
		require.True(t, st.SharedData.ClusterSnapshots.Enabled, "%s", report)
		require.True(t, hasSales(), "the declared database after the volume")
		rows, err := sqlrows.QueryMaps(ctx, root, "DESC STORAGE VOLUME "+sv.Name)
		require.NoError(t, err)
		require.Equal(t, "true", rows[0]["IsDefault"])
		require.Contains(t, logs.String(), `"storage volume created"`)
	})

	t.Run("the CNs follow the StatefulSet within the bounds", func(t *testing.T) {
		sts.n.Store(9) // the tenant's hand, above max 4
		a.Pass(ctx)
		require.Equal(t, int32(4), a.Status().Membership.ComputeNodes.Listed)
		sts.n.Store(0) // below min 1: the three beyond it answer no heartbeat
		a.Pass(ctx)
		cn := a.Status().Membership.ComputeNodes
		require.Equal(t, agentconfig.ComputeNodesStatus{Replicas: 0, Desired: 1, Listed: 1}, *cn)
	})

	t.Run("a second pass sends nothing new and no key is anywhere", func(t *testing.T) {
		before := strings.Count(logs.String(), `"msg"`)
		a.Pass(ctx)
		st := a.Status()
		require.True(t, st.LastApply.Succeeded, st.LastApply.Error)
		require.Equal(t, before, strings.Count(logs.String(), `"msg"`), "new log lines on a pass at rest:\n%s", logs.String())
		report, _ := json.Marshal(st)
		for _, k := range []string{s3.AccessKey, s3.SecretKey} {
			require.NotContains(t, string(report), k)
			require.NotContains(t, logs.String(), k)
			require.NotContains(t, fe.Output(), k, "the FE's log")
		}
	})
}
