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

// Package monitoring tests the module's Prometheus rules and Grafana
// dashboards with Prometheus's own rule-file parser, PromQL parser and
// rule evaluation (the library promtool's test runner is built on).
package monitoring

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

const rulesDir = "../../monitoring/prometheus-rules"

var promql = parser.NewParser(parser.Options{})

// knownMetrics are the metric names the rules and dashboards may use, each
// checked against its source, so a typo in a query fails here instead of
// silently matching nothing in production.
var knownMetrics = map[string]string{
	// Prometheus itself.
	"up": "Prometheus scrape health",
	// StarRocks FE (fe/fe-core .../metric/MetricRepo.java, PrometheusMetricVisitor.java;
	// docs administration/management/monitoring/alert.md).
	"node_info":                                "FE: fe/be node counts, is_master on the leader only",
	"jvm_heap_size_bytes":                      "FE: JVM heap, type=used|committed|max",
	"starrocks_fe_query_err_rate":              "FE: failed queries per second",
	"starrocks_fe_query_total":                 "FE: queries counter",
	"starrocks_fe_query_timeout":               "FE: timed-out queries counter",
	"starrocks_fe_query_latency_ms":            "FE: query latency summary, quantile label",
	"starrocks_fe_connection_total":            "FE: open connections",
	"starrocks_fe_txn_success":                 "FE: committed load transactions counter",
	"starrocks_fe_txn_failed":                  "FE: failed load transactions counter",
	"starrocks_fe_max_tablet_compaction_score": "FE: max tablet compaction score of all BEs",
	// StarRocks BE (docs alert.md, metrics.md).
	"starrocks_be_max_tablet_rowset_num": "BE: max versions of one tablet",
	"starrocks_be_process_mem_bytes":     "BE: process memory",
	"starrocks_be_disks_total_capacity":  "BE: data disk capacity",
	"starrocks_be_disks_avail_capacity":  "BE: data disk free space",
	// StarRocks CN (starrocks_be --cn: the BE's registry, prefix starrocks_be,
	// be/src/util/starrocks_metrics.cpp _s_registry_name). The data cache's
	// (be/src/cache/datacache_metrics.cpp DataCacheMetrics::install):
	// disk quota and use (with the starlet cache's when StarOS has its own
	// instance). Its hit and miss counts reached /metrics only in July 2026
	// (StarRocks/starrocks#58204), and block_cache_hit_bytes and _miss_bytes
	// count external tables' reads alone (DataCacheHitRateCounter, fed by
	// the scanners of external files): the hit ratio comes from the agent,
	// which reads the counts from each CN's /api/datacache/stat.
	"starrocks_be_datacache_disk_quota_bytes": "CN: data cache disk quota",
	"starrocks_be_datacache_disk_used_bytes":  "CN: data cache disk used",
	// bRPC variables on a CN's /metrics (http/action/metrics_action.cpp dumps
	// the exposed bvars while dump_metrics_with_bvar, default true), names
	// as exposed: LatencyRecorder("lake", "put_tablet_metadata") exposes
	// lake_put_tablet_metadata_latency_99 among others (apache/brpc
	// src/bvar/latency_recorder.cpp LatencyRecorder::expose, latency_<p3>
	// with bvar_latency_p3 = 99), in microseconds
	// (storage/lake/tablet_manager.cpp).
	"lake_publish_version_failed_tasks":   "CN: failed publish tasks (service_be/lake_service.cpp)",
	"lake_vacuum_del_file_fails":          "CN: failed deletes in the object storage (storage/lake/vacuum.cpp)",
	"lake_put_tablet_metadata_latency_99": "CN: p99 of tablet metadata writes, us (storage/lake/tablet_manager.cpp)",
	"lake_get_tablet_metadata_latency_99": "CN: p99 of tablet metadata loads, us (storage/lake/tablet_manager.cpp)",
	// kube-state-metrics of Deckhouse's monitoring-kubernetes module
	// (--resources with statefulsets and horizontalpodautoscalers,
	// --metric-labels-allowlist statefulsets=[*]).
	"kube_statefulset_replicas":                            "kube-state-metrics: spec.replicas",
	"kube_statefulset_status_replicas_ready":               "kube-state-metrics: status.readyReplicas",
	"kube_statefulset_labels":                              "kube-state-metrics: the StatefulSet's labels as label_*",
	"kube_horizontalpodautoscaler_status_desired_replicas": "kube-state-metrics: the autoscaler's desired count",
	// kubelet/cAdvisor.
	"container_cpu_usage_seconds_total": "cAdvisor",
	// The module's agent (images/agent).
	"d8_starrocks_agent_certificate_not_after_timestamp_seconds": "agent",
	"d8_starrocks_agent_certificate_ready":                       "agent",
	"d8_starrocks_agent_last_apply_success_timestamp_seconds":    "agent",
	"d8_starrocks_agent_apply_total":                             "agent",
	"d8_starrocks_agent_errors_total":                            "agent",
	"d8_starrocks_agent_compute_node_cache_hits_total":           "agent: a CN's StarCache hits (its /api/datacache/stat hit_count)",
	"d8_starrocks_agent_compute_node_cache_misses_total":         "agent: a CN's StarCache misses (its /api/datacache/stat miss_count)",
	// The module's hooks (hooks/).
	"d8_managed_starrocks_instances":                             "hooks",
	"d8_managed_starrocks_instance_configuration_valid":          "hooks",
	"d8_managed_starrocks_backups_healthy":                       "hooks",
	"d8_managed_starrocks_backup_last_success_timestamp_seconds": "hooks",
	"d8_managed_starrocks_backup_due_timestamp_seconds":          "hooks",
	"d8_managed_starrocks_backup_scheduled":                      "hooks",
	"d8_managed_starrocks_backups_failed":                        "hooks",
}

// requiredAlerts are the situations the on-call must hear about.
var requiredAlerts = []string{
	"StarrocksFrontendDown",
	"StarrocksFrontendNoLeader",
	"StarrocksBackendDown",
	"StarrocksBackendDead",
	"StarrocksQueryErrorRateHigh",
	"StarrocksCompactionScoreHigh",
	"StarrocksTooManyTabletVersions",
	"StarrocksFrontendJVMHeapHigh",
	"StarrocksLoadTransactionsFailing",
	"StarrocksAgentApplyFailing",
	"StarrocksCertificateExpiringSoon",
	"StarrocksCertificateNotReady",
	"StarrocksInstanceConfigurationInvalid",
	"StarrocksBackupFailing",
	"StarrocksBackupTooOld",
	"StarrocksComputeNodeDown",
	"StarrocksComputeNodesNotReady",
	"StarrocksComputeNodeDead",
	"StarrocksObjectStorageErrors",
}

// loadRules parses every rule file as Prometheus does. The files hold a bare
// list of groups (the Deckhouse layout: templates wrap it into a
// PrometheusRule), so each is indented under "groups:" first; that keeps
// the text, and line numbers shift by one.
func loadRules(t *testing.T) map[string]rulefmt.Rule {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rulesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no rule files in %s", rulesDir)
	}
	all := map[string]rulefmt.Rule{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wrapped strings.Builder
		wrapped.WriteString("groups:\n")
		for _, line := range strings.Split(string(b), "\n") {
			wrapped.WriteString("  " + line + "\n")
		}
		groups, errs := rulefmt.Parse([]byte(wrapped.String()), false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", f, errs)
		}
		if len(groups.Groups) == 0 {
			t.Fatalf("%s holds no rule group", f)
		}
		for _, g := range groups.Groups {
			if !strings.HasPrefix(g.Name, "d8.managed-starrocks.") {
				t.Errorf("%s: group %q is not named d8.managed-starrocks.*", f, g.Name)
			}
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				if _, dup := all[r.Alert]; dup {
					t.Errorf("alert %s is defined twice", r.Alert)
				}
				all[r.Alert] = r
			}
		}
	}
	return all
}

func TestRuleFilesFollowDeckhouseConventions(t *testing.T) {
	all := loadRules(t)
	for _, name := range requiredAlerts {
		if _, ok := all[name]; !ok {
			t.Errorf("alert %s is missing", name)
		}
	}
	for name, r := range all {
		sev, err := strconv.Atoi(r.Labels["severity_level"])
		if err != nil || sev < 1 || sev > 9 {
			t.Errorf("%s: severity_level %q is not 1..9", name, r.Labels["severity_level"])
		}
		if r.Labels["tier"] != "application" {
			t.Errorf("%s: tier %q, want application", name, r.Labels["tier"])
		}
		if r.Annotations["plk_protocol_version"] != "1" || r.Annotations["plk_markup_format"] != "markdown" {
			t.Errorf("%s: plk_protocol_version/plk_markup_format missing", name)
		}
		if r.Annotations["summary"] == "" || !strings.Contains(r.Annotations["description"], "What to do") {
			t.Errorf("%s: needs a summary and a description that says what to do", name)
		}
		for k, v := range r.Annotations {
			if group, ok := strings.CutPrefix(k, "plk_create_group_if_not_exists__"); ok {
				if r.Annotations["plk_grouped_by__"+group] != v {
					t.Errorf("%s: %s without a matching plk_grouped_by__%s", name, k, group)
				}
			}
		}
		if r.For == 0 {
			t.Errorf("%s: no `for`: a single bad scrape would page", name)
		}
		expr, err := promql.ParseExpr(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkMetrics(t, name, expr)
	}
}

func checkMetrics(t *testing.T, where string, expr parser.Expr) {
	t.Helper()
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			if _, known := knownMetrics[vs.Name]; !known {
				t.Errorf("%s: metric %q is not one of the verified metrics", where, vs.Name)
			}
		}
		return nil
	})
}

// evalAlert loads series into a real TSDB-backed test storage and evaluates
// the rule once a minute from 0 to until, as the rule manager would.
func evalAlert(t *testing.T, r rulefmt.Rule, load string, until time.Duration) []*rules.Alert {
	t.Helper()
	storage := promqltest.LoadedStorage(t, load)
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	expr, err := promql.ParseExpr(r.Expr)
	if err != nil {
		t.Fatal(err)
	}
	rule := rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), 0,
		labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, slog.New(slog.DiscardHandler))
	query := rules.EngineQueryFunc(engine, storage)
	for ts := time.Duration(0); ts <= until; ts += time.Minute {
		if _, err := rule.Eval(context.Background(), 0, time.Unix(0, 0).Add(ts), query, nil, 0); err != nil {
			t.Fatalf("eval %s at %s: %v", r.Alert, ts, err)
		}
	}
	var firing []*rules.Alert
	for _, a := range rule.ActiveAlerts() {
		if a.State == rules.StateFiring {
			firing = append(firing, a)
		}
	}
	return firing
}

const (
	fe = `namespace="team-a", instance_name="sr1", component="frontend"`
	be = `namespace="team-a", instance_name="sr1", component="backend"`
	cn = `namespace="team-a", instance_name="sr1", component="compute"`
	// kube-state-metrics' series of the CN StatefulSet of sr1 (labels as
	// the module renders them) and of a tenant's StatefulSet that is not
	// an instance's.
	cnSTS     = `namespace="team-a", statefulset="d8ms-sr-sr1-cn"`
	cnLabels  = `kube_statefulset_labels{` + cnSTS + `, label_managed_services_deckhouse_io_managed_service_type="starrocks", label_app_kubernetes_io_component="compute", label_app_kubernetes_io_instance="sr1"}`
	otherSTS  = `namespace="team-a", statefulset="d8ms-sr-fake-cn"`
	otherLbls = `kube_statefulset_labels{` + otherSTS + `, label_app_kubernetes_io_component="compute"}`
	agent     = `namespace="team-a", instance_name="sr1", component="agent", pod="d8ms-sr-sr1-0"`
)

func TestAlertsFireOnFaultsAndStaySilentWhenHealthy(t *testing.T) {
	all := loadRules(t)
	tests := []struct {
		name       string
		alert      string
		load       string
		wantFiring bool
		wantLabels map[string]string
	}{
		{
			name:  "FE down fires when an FE stops answering scrapes",
			alert: "StarrocksFrontendDown",
			load: `load 1m
  up{` + fe + `, pod="d8ms-sr-sr1-0"} 1x5 0x25
  up{` + fe + `, pod="d8ms-sr-sr1-1"} 1x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1", "pod": "d8ms-sr-sr1-0", "severity_level": "4"},
		},
		{
			name:  "FE down stays silent while every FE answers",
			alert: "StarrocksFrontendDown",
			load: `load 1m
  up{` + fe + `, pod="d8ms-sr-sr1-0"} 1x30`,
		},
		{
			name:  "FE down stays silent on a blip shorter than its for",
			alert: "StarrocksFrontendDown",
			load: `load 1m
  up{` + fe + `, pod="d8ms-sr-sr1-0"} 1x10 0 0 1x18`,
		},
		{
			name:  "no leader fires when FEs answer but none is the leader",
			alert: "StarrocksFrontendNoLeader",
			load: `load 1m
  up{` + fe + `, pod="d8ms-sr-sr1-0"} 1x30
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="fe_node_num", state="alive"} 1x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1"},
		},
		{
			name:  "no leader stays silent while one FE is the leader",
			alert: "StarrocksFrontendNoLeader",
			load: `load 1m
  up{` + fe + `, pod="d8ms-sr-sr1-0"} 1x30
  up{` + fe + `, pod="d8ms-sr-sr1-1"} 1x30
  node_info{` + fe + `, pod="d8ms-sr-sr1-1", type="is_master"} 1x30`,
		},
		{
			name:  "BE dead fires when the FE leader counts a BE without heartbeats",
			alert: "StarrocksBackendDead",
			load: `load 1m
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="be_node_num", state="total"} 3x30
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="be_node_num", state="alive"} 3x5 2x25`,
			wantFiring: true,
		},
		{
			name:  "BE dead stays silent while all BEs are alive",
			alert: "StarrocksBackendDead",
			load: `load 1m
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="be_node_num", state="total"} 3x30
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="be_node_num", state="alive"} 3x30`,
		},
		{
			name:  "JVM heap fires above 90% of max",
			alert: "StarrocksFrontendJVMHeapHigh",
			load: `load 1m
  jvm_heap_size_bytes{` + fe + `, pod="d8ms-sr-sr1-0", type="used"} 95x30
  jvm_heap_size_bytes{` + fe + `, pod="d8ms-sr-sr1-0", type="max"} 100x30`,
			wantFiring: true,
		},
		{
			name:  "JVM heap stays silent at half of max",
			alert: "StarrocksFrontendJVMHeapHigh",
			load: `load 1m
  jvm_heap_size_bytes{` + fe + `, pod="d8ms-sr-sr1-0", type="used"} 50x30
  jvm_heap_size_bytes{` + fe + `, pod="d8ms-sr-sr1-0", type="max"} 100x30`,
		},
		{
			name:  "load failures fire when a tenth of transactions abort",
			alert: "StarrocksLoadTransactionsFailing",
			load: `load 1m
  starrocks_fe_txn_success{` + fe + `, pod="d8ms-sr-sr1-0"} 0+9x30
  starrocks_fe_txn_failed{` + fe + `, pod="d8ms-sr-sr1-0"} 0+1x30`,
			wantFiring: true,
		},
		{
			name:  "load failures stay silent when transactions commit",
			alert: "StarrocksLoadTransactionsFailing",
			load: `load 1m
  starrocks_fe_txn_success{` + fe + `, pod="d8ms-sr-sr1-0"} 0+10x30
  starrocks_fe_txn_failed{` + fe + `, pod="d8ms-sr-sr1-0"} 0x30`,
		},
		{
			name:  "tablet versions fire above 700",
			alert: "StarrocksTooManyTabletVersions",
			load: `load 1m
  starrocks_be_max_tablet_rowset_num{` + be + `, pod="d8ms-sr-sr1-be-0"} 850x30`,
			wantFiring: true,
		},
		{
			name:  "compaction score stays silent below 100",
			alert: "StarrocksCompactionScoreHigh",
			load: `load 1m
  starrocks_fe_max_tablet_compaction_score{` + fe + `, pod="d8ms-sr-sr1-0"} 20x30`,
		},
		{
			name:  "certificate expiring fires 10 days before notAfter",
			alert: "StarrocksCertificateExpiringSoon",
			// time() is seconds since the epoch at each evaluation (0..30m):
			// notAfter at 10 days stays under 14 days throughout.
			load: `load 1m
  d8_starrocks_agent_certificate_not_after_timestamp_seconds{` + agent + `} 864000x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1"},
		},
		{
			name:  "certificate expiring stays silent 60 days before notAfter",
			alert: "StarrocksCertificateExpiringSoon",
			load: `load 1m
  d8_starrocks_agent_certificate_not_after_timestamp_seconds{` + agent + `} 5184000x30`,
		},
		{
			name:  "certificate not ready fires when the agent reports 0",
			alert: "StarrocksCertificateNotReady",
			load: `load 1m
  d8_starrocks_agent_certificate_ready{` + agent + `} 1x5 0x25`,
			wantFiring: true,
			wantLabels: map[string]string{"pod": "d8ms-sr-sr1-0"},
		},
		{
			name:  "certificate not ready stays silent when ready",
			alert: "StarrocksCertificateNotReady",
			load: `load 1m
  d8_starrocks_agent_certificate_ready{` + agent + `} 1x30`,
		},
		{
			name:  "agent apply failing fires when every apply fails",
			alert: "StarrocksAgentApplyFailing",
			load: `load 1m
  d8_starrocks_agent_apply_total{` + agent + `, result="failure"} 0+1x30
  d8_starrocks_agent_apply_total{` + agent + `, result="success"} 5x30`,
			wantFiring: true,
		},
		{
			name:  "agent apply failing stays silent while some applies succeed",
			alert: "StarrocksAgentApplyFailing",
			load: `load 1m
  d8_starrocks_agent_apply_total{` + agent + `, result="failure"} 0+1x30
  d8_starrocks_agent_apply_total{` + agent + `, result="success"} 0+1x30`,
		},
		{
			name:  "invalid configuration fires for the instance the hooks flag",
			alert: "StarrocksInstanceConfigurationInvalid",
			load: `load 1m
  d8_managed_starrocks_instance_configuration_valid{namespace="team-a", name="sr1", class="default"} 0x30
  d8_managed_starrocks_instance_configuration_valid{namespace="team-a", name="sr2", class="default"} 1x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "name": "sr1", "class": "default", "severity_level": "6"},
		},
		{
			name:  "backups failing fires for the instance whose BackupsHealthy is False",
			alert: "StarrocksBackupFailing",
			load: `load 1m
  d8_managed_starrocks_backups_healthy{namespace="team-a", name="sr1"} 0x60
  d8_managed_starrocks_backups_healthy{namespace="team-a", name="sr2"} 1x60`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "name": "sr1", "severity_level": "5"},
		},
		{
			name:  "backups failing stays silent on a failure shorter than its for",
			alert: "StarrocksBackupFailing",
			load: `load 1m
  d8_managed_starrocks_backups_healthy{namespace="team-a", name="sr1"} 1x10 0x10 1x40`,
		},
		{
			name:  "backup too old fires when the schedule was due more than a day ago",
			alert: "StarrocksBackupTooOld",
			load: `load 1m
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sr1"} -90000x60
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sr2"} 86400x60`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "name": "sr1", "severity_level": "5"},
		},
		{
			name:  "backup too old stays silent while the next slot of a weekly schedule is days away",
			alert: "StarrocksBackupTooOld",
			load: `load 1m
  d8_managed_starrocks_backup_last_success_timestamp_seconds{namespace="team-a", name="sr1"} -432000x60
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sr1"} 172800x60`,
		},
		{
			name:  "backup too old stays silent while the slot's backup has had less than a day",
			alert: "StarrocksBackupTooOld",
			load: `load 1m
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sr1"} -3600x60`,
		},
		{
			name:  "backups failing fires for a shared-data instance whose newest cluster snapshot failed",
			alert: "StarrocksBackupFailing",
			load: `load 1m
  d8_managed_starrocks_backups_healthy{namespace="team-a", name="sd"} 0x60
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sd"} 600x60`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "name": "sd"},
		},
		{
			name:  "backups failing stays silent while a shared-data instance has no verdict yet (no healthy series)",
			alert: "StarrocksBackupFailing",
			load: `load 1m
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sd"} 600x60
  d8_managed_starrocks_backup_scheduled{namespace="team-a", name="sd"} 1x60`,
		},
		{
			name:  "backup too old fires for a shared-data instance whose newest cluster snapshot is a day old",
			alert: "StarrocksBackupTooOld",
			// newest snapshot at -87100 s, due 600 s later.
			load: `load 1m
  d8_managed_starrocks_backup_last_success_timestamp_seconds{namespace="team-a", name="sd"} -87100x60
  d8_managed_starrocks_backup_due_timestamp_seconds{namespace="team-a", name="sd"} -86500x60
  d8_managed_starrocks_backups_healthy{namespace="team-a", name="sd"} 1x60`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "name": "sd"},
		},
		{
			name:  "CN down fires when a CN stops answering scrapes",
			alert: "StarrocksComputeNodeDown",
			load: `load 1m
  up{` + cn + `, pod="d8ms-sr-sr1-cn-1"} 1x5 0x25
  up{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 1x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1", "pod": "d8ms-sr-sr1-cn-1", "severity_level": "4"},
		},
		{
			name:  "CN down stays silent while every CN answers",
			alert: "StarrocksComputeNodeDown",
			load: `load 1m
  up{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 1x30`,
		},
		{
			name:  "CNs not ready fires when the autoscaler's count is not ready for 15 minutes",
			alert: "StarrocksComputeNodesNotReady",
			load: `load 1m
  kube_statefulset_replicas{` + cnSTS + `} 2x5 5x25
  kube_statefulset_status_replicas_ready{` + cnSTS + `} 2x5 3x25
  ` + cnLabels + ` 1x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1", "statefulset": "d8ms-sr-sr1-cn", "severity_level": "4"},
		},
		{
			name:  "CNs not ready stays silent through a scale-out that gets its pods within minutes",
			alert: "StarrocksComputeNodesNotReady",
			load: `load 1m
  kube_statefulset_replicas{` + cnSTS + `} 2x5 5x25
  kube_statefulset_status_replicas_ready{` + cnSTS + `} 2x5 3x3 5x22
  ` + cnLabels + ` 1x30`,
		},
		{
			name:  "CNs not ready stays silent for a StatefulSet that is not an instance's",
			alert: "StarrocksComputeNodesNotReady",
			load: `load 1m
  kube_statefulset_replicas{` + otherSTS + `} 3x30
  kube_statefulset_status_replicas_ready{` + otherSTS + `} 0x30
  ` + otherLbls + ` 1x30`,
		},
		{
			name:  "CN dead fires when the FE leader counts a CN without heartbeats",
			alert: "StarrocksComputeNodeDead",
			load: `load 1m
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="cn_node_num", state="total"} 3x30
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="cn_node_num", state="alive"} 3x5 2x25`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1"},
		},
		{
			name:  "CN dead stays silent while a removed CN is dropped within minutes",
			alert: "StarrocksComputeNodeDead",
			load: `load 1m
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="cn_node_num", state="total"} 3x5 3 3 2x23
  node_info{` + fe + `, pod="d8ms-sr-sr1-0", type="cn_node_num", state="alive"} 3x5 2 2 2x23`,
		},
		{
			name:  "object storage errors fire while publish tasks keep failing",
			alert: "StarrocksObjectStorageErrors",
			load: `load 1m
  lake_publish_version_failed_tasks{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 0x5 0+2x25
  lake_vacuum_del_file_fails{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 0x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1", "severity_level": "4"},
		},
		{
			name:  "object storage errors fire while deletes keep failing",
			alert: "StarrocksObjectStorageErrors",
			load: `load 1m
  lake_publish_version_failed_tasks{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 0x30
  lake_vacuum_del_file_fails{` + cn + `, pod="d8ms-sr-sr1-cn-1"} 0+5x30`,
			wantFiring: true,
			wantLabels: map[string]string{"namespace": "team-a", "instance_name": "sr1"},
		},
		{
			name:  "object storage errors stay silent after a single failure and on a CN restart",
			alert: "StarrocksObjectStorageErrors",
			load: `load 1m
  lake_publish_version_failed_tasks{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 0x5 1x10 0x15
  lake_vacuum_del_file_fails{` + cn + `, pod="d8ms-sr-sr1-cn-0"} 0x30`,
		},
		{
			name:  "invalid configuration stays silent when every instance is valid",
			alert: "StarrocksInstanceConfigurationInvalid",
			load: `load 1m
  d8_managed_starrocks_instance_configuration_valid{namespace="team-a", name="sr1", class="default"} 1x30`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := all[tt.alert]
			if !ok {
				t.Fatalf("no alert %s", tt.alert)
			}
			firing := evalAlert(t, r, tt.load, 30*time.Minute)
			if !tt.wantFiring {
				if len(firing) > 0 {
					t.Fatalf("%s fires on healthy series: %v", tt.alert, firing[0].Labels)
				}
				return
			}
			if len(firing) != 1 {
				t.Fatalf("%s: want one firing alert, got %d", tt.alert, len(firing))
			}
			a := firing[0]
			for k, v := range tt.wantLabels {
				if got := a.Labels.Get(k); got != v {
					t.Errorf("label %s = %q, want %q (labels %v)", k, got, v, a.Labels)
				}
			}
			// The rule manager expands summary/description with the alert's
			// labels and value; a broken template shows up as an error text.
			var names []string
			a.Annotations.Range(func(l labels.Label) {
				names = append(names, l.Name)
				if strings.Contains(l.Value, "error expanding") || strings.Contains(l.Value, "<no value>") {
					t.Errorf("annotation %s did not expand: %s", l.Name, l.Value)
				}
			})
			sort.Strings(names)
			if a.Annotations.Get("summary") == "" {
				t.Errorf("no summary among %v", names)
			}
		})
	}
}
