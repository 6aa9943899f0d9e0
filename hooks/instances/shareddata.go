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

package instances

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Shared-data instances, the status part: the storage volume and the
// automated cluster snapshot as the FE leader's agent reports them
// (agentconfig.SharedDataStatus). The report is an annotation of a pod in
// the tenant's namespace: it counts only from the one pod of this
// instance's FE StatefulSet that claims the leadership (LeaderClaims), so a
// forged report misleads the status of its own instance at most.

// ConditionStorageReady says the instance's default storage volume exists
// at its location in the bucket: StarRocks creates no table before.
const ConditionStorageReady = "StorageReady"

// Reasons of StorageReady and of BackupsHealthy of a shared-data instance
// (the agent's own reasons pass as they are).
const (
	ReasonStorageVolumeReady    = "StorageVolumeReady"
	ReasonStorageVolumeNotReady = "StorageVolumeNotReady"
	ReasonSnapshotsSucceeding   = "SnapshotsSucceeding"
	ReasonSnapshotFailed        = "SnapshotFailed"
	ReasonSnapshotsOff          = "SnapshotsOff"
	ReasonNoSnapshotYet         = "NoSnapshotYet"
	ReasonSnapshotsUnknown      = "SnapshotsNotReadable"
)

// maxAgentMessageLength bounds a message of the agent within a condition
// (the pod filter keeps 1025 bytes, cutmsg; this cut marks it).
const maxAgentMessageLength = 1024

// snapshotTimeLayout is how StarRocks prints a time without its zone
// (yyyy-MM-dd HH:mm:ss); the agent passes it on as printed.
const snapshotTimeLayout = "2006-01-02 15:04:05"

// lastSnapshotZone is the zone of LastSnapshotTime of ADMIN SHOW AUTOMATED
// CLUSTER SNAPSHOT: StarRocks formats it with TimeUtils.longToTimeString
// (lake/snapshot/ClusterSnapshotMgr.getAutomatedSnapshotRows), whose
// DATETIME_TO_STRING_FORMAT is withZone(TIME_ZONE), the fixed offset
// ZoneOffset.ofTotalSeconds(8 * 3600) (fe-core common/util/TimeUtils): +08:00
// whatever the FE's own or the session's time zone.
var lastSnapshotZone = time.FixedZone("UTC+8", 8*3600)

// snapshotTime reads LastSnapshotTime as StarRocks printed it (+08:00).
// Anything else is no time (false).
func snapshotTime(s string) (time.Time, bool) {
	t, err := time.ParseInLocation(snapshotTimeLayout, s, lastSnapshotZone)
	return t, err == nil
}

// jobTime reads CREATED_TIME or FINISHED_TIME of
// information_schema.cluster_snapshot_jobs: DATETIME columns
// (catalog/system/information/ClusterSnapshotJobsTable) the FE fills with
// Unix seconds (lake/snapshot/ClusterSnapshotJob.getInfo) and the scanning
// node prints in the session's time zone, by default the FE's system zone:
// the module's FE containers set no TZ, so it is read as UTC.
func jobTime(s string) (time.Time, bool) {
	t, err := time.ParseInLocation(snapshotTimeLayout, s, time.UTC)
	return t, err == nil
}

// leaderSharedData is the shared-data report of the single pod claiming
// the FE leadership; nil without one leader or without a report.
func leaderSharedData(o Observed) *agentconfig.SharedDataStatus {
	if len(o.LeaderClaims) != 1 {
		return nil
	}
	return o.SharedData[o.LeaderClaims[0]]
}

// tristate is a condition that may also be Unknown.
type tristate struct {
	Status          metav1.ConditionStatus
	Reason, Message string
}

func agentMessage(s string) string { return truncateBytes(oneLine(s), maxAgentMessageLength) }

// storageReady is StorageReady of a shared-data instance: Unknown before
// the leader's agent reports, True once it reports the volume ready, False
// with the agent's reason and message otherwise. Without a report (the FE
// leader restarting, a leadership change) a volume that was ready stays so:
// a volume does not go away with the pod that reported it, and the instance
// stays Available meanwhile.
func storageReady(o Observed, prev v1alpha1.StarrocksStatus) tristate {
	r := leaderSharedData(o)
	if r == nil {
		if c := meta.FindStatusCondition(prev.Conditions, ConditionStorageReady); c != nil && c.Status == metav1.ConditionTrue {
			return tristate{c.Status, c.Reason, c.Message}
		}
		return tristate{metav1.ConditionUnknown, ReasonWaitingForAgent, "The agent of the FE leader has not reported the storage volume yet; StarRocks creates no table before it exists."}
	}
	v := r.StorageVolume
	if v.Ready {
		return tristate{metav1.ConditionTrue, ReasonStorageVolumeReady, fmt.Sprintf("Storage volume %q exists at the instance's location in the bucket and is the default one.", v.Name)}
	}
	reason := v.Reason
	if reason == "" {
		reason = ReasonStorageVolumeNotReady
	}
	return tristate{metav1.ConditionFalse, reason, fmt.Sprintf("Storage volume %q is not ready, so no table can be created: %s", v.Name, agentMessage(v.Message))}
}

// snapshotsVerdict is status.backup and BackupsHealthy of a shared-data
// instance, from the automated cluster snapshot: True when it is on and the
// newest job finished (with the newest snapshot's time), False when it is
// off or the newest job failed, Unknown before the first snapshot or while
// the jobs cannot be read. Without a report (the FE leader restarting) the
// last verdict and status.backup stay as they were.
func snapshotsVerdict(o Observed, prev v1alpha1.StarrocksStatus) (*v1alpha1.InstanceBackupStatus, tristate) {
	r := leaderSharedData(o)
	if c := meta.FindStatusCondition(prev.Conditions, v1alpha1.ConditionBackupsHealthy); r == nil && c != nil {
		return prev.Backup, tristate{c.Status, c.Reason, c.Message}
	}
	if r == nil || r.ClusterSnapshots == nil {
		return nil, tristate{metav1.ConditionUnknown, ReasonWaitingForAgent, "The agent of the FE leader has not reported the automated cluster snapshot yet."}
	}
	cs := r.ClusterSnapshots
	st := &v1alpha1.InstanceBackupStatus{}
	newest, haveNewest := snapshotTime(cs.NewestSnapshotTime)
	if haveNewest {
		st.LastSuccessfulTime = &metav1.Time{Time: newest}
	}
	if j := cs.LastJob; j != nil && j.State == "ERROR" {
		reason := fmt.Sprintf("The cluster snapshot job %q failed: %s", j.SnapshotName, oneLine(j.ErrorMessage))
		at, ok := jobTime(j.FinishedTime)
		if !ok {
			at, _ = jobTime(j.CreatedTime)
		}
		st.LastFailure = &v1alpha1.BackupFailure{Time: metav1.Time{Time: at}, Reason: truncateBytes(reason, maxAgentMessageLength)}
	}
	if *st == (v1alpha1.InstanceBackupStatus{}) {
		st = nil
	}
	switch j := cs.LastJob; {
	case !cs.Enabled:
		reason := cs.Reason
		if reason == "" {
			reason = ReasonSnapshotsOff
		}
		return st, tristate{metav1.ConditionFalse, reason, "StarRocks' automated cluster snapshot of the storage volume is not on: " + agentMessage(cs.Message)}
	case j != nil && j.State == "ERROR":
		return st, tristate{metav1.ConditionFalse, ReasonSnapshotFailed, "The newest cluster snapshot failed: " + st.LastFailure.Reason}
	case cs.Reason != "":
		return st, tristate{metav1.ConditionUnknown, cs.Reason, "The state of the cluster snapshots cannot be read: " + agentMessage(cs.Message)}
	case haveNewest:
		return st, tristate{metav1.ConditionTrue, ReasonSnapshotsSucceeding, fmt.Sprintf("Automated cluster snapshots are on; the newest was taken at %s.", newest.UTC().Format(time.RFC3339))}
	}
	return st, tristate{metav1.ConditionUnknown, ReasonNoSnapshotYet, "Automated cluster snapshots are on; StarRocks has not finished the first one yet."}
}

// automatedSnapshotInterval is how often StarRocks takes the automated
// cluster snapshot: the agent turns it on without an INTERVAL (ADMIN SET
// AUTOMATED CLUSTER SNAPSHOT ON STORAGE VOLUME, images/agent/internal/
// shareddata.EnsureSnapshots), so the effective interval is fe.conf's
// automated_cluster_snapshot_interval_seconds (fe-core lake/snapshot/
// ClusterSnapshotMgr.getEffectiveAutomatedSnapshotIntervalSeconds), 600 by
// default (common/Config), which the module's fe.conf leaves alone.
const automatedSnapshotInterval = 600 * time.Second

// snapshotMetric is the backup metric of a shared-data instance, from its
// status (snapshotsVerdict): BackupsHealthy while True or False, the newest
// snapshot's time, and when the next one was due: an interval after the
// newest, or after the instance's creation before the first, so an
// instance that never got a snapshot (a storage volume never ready, the
// automated snapshot refused) is late too. The module keeps the automated
// snapshot on: it counts as scheduled.
func snapshotMetric(sr *v1alpha1.Starrocks, st v1alpha1.StarrocksStatus) BackupMetric {
	m := BackupMetric{Namespace: sr.Namespace, Name: sr.Name, Scheduled: true}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionBackupsHealthy); c != nil && c.Status != metav1.ConditionUnknown {
		m.Healthy, m.HealthKnown = c.Status == metav1.ConditionTrue, true
	}
	since := sr.CreationTimestamp.Time
	if st.Backup != nil && st.Backup.LastSuccessfulTime != nil {
		since = st.Backup.LastSuccessfulTime.Time
		m.LastSuccess = float64(since.Unix())
	}
	if !since.IsZero() {
		m.Due = float64(since.Add(automatedSnapshotInterval).Unix())
	}
	return m
}
