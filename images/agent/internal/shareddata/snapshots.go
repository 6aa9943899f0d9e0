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

package shareddata

import (
	"context"
	"fmt"
	"strings"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// Reasons of ClusterSnapshotsStatus.
const (
	// ReasonOtherStorageVolume: the automated snapshot is on for another
	// storage volume (set by hand); the agent does not turn it off, which
	// would delete the snapshots taken (fe-core lake/snapshot/
	// ClusterSnapshotMgr.setAutomatedSnapshotOff).
	ReasonOtherStorageVolume = "OtherStorageVolume"
	// ReasonSnapshotRefused: StarRocks refused a statement or a read.
	ReasonSnapshotRefused = "ClusterSnapshotRefused"
	// ReasonSnapshotOff: the configuration does not ask for it and it is off.
	ReasonSnapshotOff = "Disabled"
	// ReasonJobFailed: the newest job ended in ERROR.
	ReasonJobFailed = "SnapshotJobFailed"
)

// Automated is the row of ADMIN SHOW AUTOMATED CLUSTER SNAPSHOT (fe-core
// ShowResultMetaFactory.visitAdminShowAutomatedSnapshotStatement: Enabled,
// Interval, StorageVolume, LastSnapshotTime, NextSnapshotTime; filled by
// ClusterSnapshotMgr.getAutomatedSnapshotShowResult, NULL where unknown).
// The FE answers it from its own memory, without a compute node.
type Automated struct {
	Enabled          bool
	StorageVolume    string
	LastSnapshotTime string
}

// ShowAutomated reads ADMIN SHOW AUTOMATED CLUSTER SNAPSHOT.
func ShowAutomated(ctx context.Context, q Querier) (Automated, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "ADMIN SHOW AUTOMATED CLUSTER SNAPSHOT")
	if err != nil {
		return Automated{}, fmt.Errorf("admin show automated cluster snapshot: %w", err)
	}
	if len(rows) != 1 {
		return Automated{}, fmt.Errorf("admin show automated cluster snapshot: %d rows", len(rows))
	}
	r := rows[0]
	return Automated{Enabled: isTrue(r["Enabled"]), StorageVolume: notNull(r["StorageVolume"]), LastSnapshotTime: notNull(r["LastSnapshotTime"])}, nil
}

// LastJob reads the newest row of information_schema.cluster_snapshot_jobs
// (fe-core catalog/system/information/ClusterSnapshotJobsTable: SNAPSHOT_NAME,
// JOB_ID, CREATED_TIME, FINISHED_TIME, STATE, DETAIL_INFO, ERROR_MESSAGE);
// nil when there is none. StarRocks scans it on a compute node: without a
// live one it answers ERROR 5904 "Warehouse default_warehouse is not
// available" (seen on the shared-data FE of ../shared/starrocks/README.md).
func LastJob(ctx context.Context, q Querier) (*agentconfig.ClusterSnapshotJob, error) {
	rows, err := sqlrows.QueryMaps(ctx, q, "SELECT SNAPSHOT_NAME, CREATED_TIME, FINISHED_TIME, STATE, ERROR_MESSAGE "+
		"FROM information_schema.cluster_snapshot_jobs ORDER BY JOB_ID DESC LIMIT 1")
	if err != nil {
		return nil, fmt.Errorf("read information_schema.cluster_snapshot_jobs: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	r := rows[0]
	state := strings.ToUpper(r["STATE"])
	return &agentconfig.ClusterSnapshotJob{
		SnapshotName: r["SNAPSHOT_NAME"], CreatedTime: notNull(r["CREATED_TIME"]), FinishedTime: notNull(r["FINISHED_TIME"]),
		State: state,
		// lake/snapshot/ClusterSnapshotJob.ClusterSnapshotJobState: a
		// FINISHED job becomes EXPIRED, then DELETED, once a newer one
		// replaced it (ClusterSnapshotMgr.clearFinishedAutomatedClusterSnapshot).
		Succeeded:    state == "FINISHED" || state == "EXPIRED" || state == "DELETED",
		ErrorMessage: agentconfig.TruncateBackupMessage(notNull(r["ERROR_MESSAGE"])),
	}, nil
}

// EnsureSnapshots turns the automated cluster snapshot on for the volume
// when on is set and it is off (ADMIN SET AUTOMATED CLUSTER SNAPSHOT ON
// STORAGE VOLUME <name>: StarRocks.g4 adminSetAutomatedSnapshotOnStatement,
// 3.4.2 and later; a second ON is refused, sql/analyzer/
// ClusterSnapshotAnalyzer "Automated snapshot has been turn on", so the
// state is read first) and reports it. It never turns it off. readJobs:
// a compute node is alive, so information_schema can be read.
func EnsureSnapshots(ctx context.Context, q Querier, volume string, on, readJobs bool) (st agentconfig.ClusterSnapshotsStatus, sent bool) {
	a, err := ShowAutomated(ctx, q)
	if err != nil {
		return agentconfig.ClusterSnapshotsStatus{Reason: ReasonSnapshotRefused, Message: agentconfig.TruncateBackupMessage(err.Error())}, false
	}
	if on && !a.Enabled {
		stmt := "ADMIN SET AUTOMATED CLUSTER SNAPSHOT ON STORAGE VOLUME `" + volume + "`"
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return agentconfig.ClusterSnapshotsStatus{Reason: ReasonSnapshotRefused, Message: agentconfig.TruncateBackupMessage(stmt + ": " + err.Error())}, false
		}
		sent = true
		if a, err = ShowAutomated(ctx, q); err != nil {
			return agentconfig.ClusterSnapshotsStatus{Reason: ReasonSnapshotRefused, Message: agentconfig.TruncateBackupMessage(err.Error())}, sent
		}
	}
	st = agentconfig.ClusterSnapshotsStatus{Enabled: a.Enabled && a.StorageVolume == volume, NewestSnapshotTime: a.LastSnapshotTime}
	switch {
	case a.Enabled && a.StorageVolume != volume:
		st.Reason, st.Message = ReasonOtherStorageVolume, fmt.Sprintf("the automated cluster snapshot is on for storage volume %s, not the instance's %s; the agent does not turn it off (that deletes the snapshots taken)", a.StorageVolume, volume)
	case !a.Enabled:
		st.Reason, st.Message = ReasonSnapshotOff, "the automated cluster snapshot is off"
	}
	if !readJobs {
		return st, sent
	}
	job, err := LastJob(ctx, q)
	if err != nil {
		if st.Reason == "" {
			st.Reason, st.Message = ReasonSnapshotRefused, agentconfig.TruncateBackupMessage(err.Error())
		}
		return st, sent
	}
	st.LastJob = job
	if job != nil && job.State == "ERROR" && st.Reason == "" {
		st.Reason, st.Message = ReasonJobFailed, "the last cluster snapshot job failed: "+job.ErrorMessage
	}
	return st, sent
}

func notNull(s string) string {
	if strings.EqualFold(strings.TrimSpace(s), "NULL") {
		return ""
	}
	return s
}
