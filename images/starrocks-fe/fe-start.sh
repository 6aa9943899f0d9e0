#!/bin/sh
# Copyright 2026 Flant JSC
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# FE start wrapper of managed-starrocks, added to the FE image by werf
# (images/starrocks-fe/werf.inc.yaml) and run by the FE StatefulSet.
#
# It is deliberately not the image's fe_entrypoint.sh: that script joins the
# cluster by logging into the leader as root without a password over
# plaintext MySQL, which breaks as soon as the agent has set the root
# password and requireSecureTransport is on. Here the agent owns membership
# (ALTER SYSTEM ADD FOLLOWER over TLS) and tells an FE without meta how to
# start, through files in the shared emptyDir (images/agent, bootstrap.go):
#   fe-helper     leader host:editLogPort: join through it with --helper;
#   fe-bootstrap  this is the first FE of an instance that has never
#                 bootstrapped: start a new cluster.
# The agent writes fe-bootstrap only for ordinal 0 and only until the
# instance has bootstrapped; afterwards an FE whose meta is empty (a lost
# volume) rejoins the existing leader instead of starting a second, empty
# cluster behind the same Service (upstream's entrypoint probes for a
# leader for the same reason: StarRocks/starrocks
# docker/dockerfiles/fe/fe_entrypoint.sh).
set -eu
# The directories can be moved for tests of this script; the pod uses the defaults.
fe_home="${FE_HOME:-/opt/starrocks/fe}"
meta="$fe_home/meta"
helper_file="${AGENT_RUN_DIR:-/opt/starrocks/agent-run}/fe-helper"
bootstrap_file="${AGENT_RUN_DIR:-/opt/starrocks/agent-run}/fe-bootstrap"
restored_file="${AGENT_RUN_DIR:-/opt/starrocks/agent-run}/cluster-snapshot-restored"
reset_file="${AGENT_RUN_DIR:-/opt/starrocks/agent-run}/root-password-reset"
reset_done_file="${AGENT_RUN_DIR:-/opt/starrocks/agent-run}/root-password-reset-done"
ordinal="${POD_NAME##*-}"
# conf/fe.conf must be a writable copy of the rendered one: 3.x's
# start_fe.sh --logconsole appended "sys_log_to_console = true" to it
# (StarRocks/starrocks bin/start_fe.sh) and, on the ConfigMap file itself
# (read-only), lost that line and logged to files; 4.1's no longer appends,
# and the rendered fe.conf sets sys_log_to_console itself. Upstream's
# entrypoint links the mounted file into conf/ and start_fe.sh then copies it (docker/dockerfiles/fe/fe_entrypoint.sh
# update_conf_from_configmap; the operator mounts the ConfigMap at
# /etc/starrocks/fe/conf); a fresh copy at every start does the same on
# every version, and a restart never piles up appended lines.
fresh_conf() { cp "${FE_CONF_SOURCE:-/etc/starrocks/fe/conf/fe.conf}" "$fe_home/conf/fe.conf"; }
fresh_conf
# The backup and restore endpoints' CA bundles (the pod's trusted-cas volume,
# rendered only when the instance names one): StarRocks reaches S3 through
# Hadoop S3A with the JVM's default trust store (fe-core
# credential/aws/AwsCloudConfiguration sets no trust material, CREATE
# REPOSITORY has no CA property), so the rendered JAVA_OPTS names
# conf/trusted-cas.p12, built here at every start from the JDK's cacerts and
# every certificate of the bundles. Built fresh, a changed or removed CA never
# lingers.
trusted_cas="${TRUSTED_CAS_DIR:-/etc/starrocks/trusted-cas}"
store="$fe_home/conf/trusted-cas.p12"
rm -f "$store"
if ls "$trusted_cas"/*.crt >/dev/null 2>&1; then
  java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
  "$java_home/bin/keytool" -importkeystore -noprompt -srckeystore "$java_home/lib/security/cacerts" \
    -srcstorepass changeit -destkeystore "$store" -deststoretype PKCS12 -deststorepass changeit >/dev/null
  split="$(mktemp -d)"
  for bundle in "$trusted_cas"/*.crt; do
    # keytool -importcert reads one certificate of a file: one file each.
    awk -v out="$split/$(basename "$bundle" .crt)" \
      '/-----BEGIN CERTIFICATE-----/ { n++; f = out "-" n ".pem" } f { print > f } /-----END CERTIFICATE-----/ { close(f); f = "" }' "$bundle"
  done
  for cert in "$split"/*.pem; do
    [ -f "$cert" ] || continue
    "$java_home/bin/keytool" -importcert -noprompt -alias "managed-starrocks-$(basename "$cert" .pem)" \
      -file "$cert" -keystore "$store" -storetype PKCS12 -storepass changeit >/dev/null
  done
  rm -rf "$split"
  echo "trusting the JDK's CAs and $(ls "$trusted_cas"/*.crt | tr '\n' ' ')for S3"
fi
# A shared-data instance created from a cluster snapshot (spec.storage.
# restoreFrom; the template sets CLUSTER_SNAPSHOT_* and mounts the team's keys
# at $snapshot_keys): its first FE starts with --cluster_snapshot, which
# makes StarRocks read conf/cluster_snapshot.yaml (fe-core StarRocksFEServer:
# RestoreClusterSnapshotMgr.init(STARROCKS_HOME/conf/cluster_snapshot.yaml);
# fe-server StarRocksFE option "cluster_snapshot"; bin/start_fe.sh passes it
# on), download the snapshot into meta/ and replace the storage volume's
# properties, frontends and compute nodes by the file's
# (lake/snapshot/RestoreClusterSnapshotMgr). The file holds the keys: written
# here, 0600, only for that start, and removed at every other one.
snapshot_keys="${CLUSTER_SNAPSHOT_DIR:-/etc/starrocks/cluster-snapshot}"
snapshot_yaml="$fe_home/conf/cluster_snapshot.yaml"
rm -f "$snapshot_yaml" "$snapshot_yaml.tmp"
# yaml_quoted prints $1 as a single-quoted YAML scalar ('' for ').
yaml_quoted() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }
# read_key prints a mounted key; it refuses (naming the file, never the
# value) a missing or empty one or one with a character a YAML scalar on one
# line cannot hold as it is.
read_key() {
  if [ ! -s "$snapshot_keys/$1" ]; then
    echo "cannot restore the cluster snapshot: the object storage key $1 is missing or empty (spec.storage.objectStorage.credentialsSecretRef)" >&2
    return 1
  fi
  key="$(cat "$snapshot_keys/$1")"
  case "$key" in
    *[![:graph:]]*)
      echo "cannot restore the cluster snapshot: the object storage key $1 has a space or a control character" >&2
      return 1 ;;
  esac
  printf '%s' "$key"
}
write_cluster_snapshot_yaml() {
  access_key="$(read_key access-key)" || return 1
  secret_key="$(read_key secret-key)" || return 1
  # The keys of fe-core ClusterSnapshotConfig (@JsonProperty). A path ending
  # in /meta makes StarRocks take the first automated_cluster_snapshot_<ms>
  # its glob lists under <path>/image/ (Hadoop's globStatus sorts, so the
  # oldest: the scheduler keeps only the newest finished one besides one
  # being written, ClusterSnapshotMgr.clearFinishedAutomatedClusterSnapshot);
  # "*" stands for the StarOS service id the source's snapshots are under
  # (ClusterSnapshotUtils.getSnapshotImagePath: <location>/<service id>/
  # meta/image/<name>), which nothing outside the source's FE knows.
  # frontends and compute_nodes empty: the source's are dropped and the
  # agent adds this instance's, as for a new one. The properties are the
  # agent's CREATE STORAGE VOLUME's (images/agent/internal/shareddata).
  # 0600 from the start: a subshell's umask, the FE's own files keep theirs.
  (
  umask 077
  {
    echo "cluster_snapshot:"
    echo "  cluster_snapshot_path: $(yaml_quoted "$CLUSTER_SNAPSHOT_VOLUME_LOCATION/*/meta")"
    echo "  storage_volume_name: $(yaml_quoted "$CLUSTER_SNAPSHOT_VOLUME_NAME")"
    echo "frontends: []"
    echo "compute_nodes: []"
    echo "storage_volumes:"
    echo "  - name: $(yaml_quoted "$CLUSTER_SNAPSHOT_VOLUME_NAME")"
    echo "    type: S3"
    echo "    location: $(yaml_quoted "$CLUSTER_SNAPSHOT_VOLUME_LOCATION")"
    echo "    properties:"
    for kv in "aws.s3.endpoint=$CLUSTER_SNAPSHOT_S3_ENDPOINT" "aws.s3.region=$CLUSTER_SNAPSHOT_S3_REGION" \
      "aws.s3.enable_path_style_access=$CLUSTER_SNAPSHOT_S3_PATH_STYLE" "aws.s3.enable_ssl=$CLUSTER_SNAPSHOT_S3_ENABLE_SSL" \
      "aws.s3.use_aws_sdk_default_behavior=false" "aws.s3.use_instance_profile=false" \
      "aws.s3.access_key=$access_key" "aws.s3.secret_key=$secret_key"; do
      echo "      - key: $(yaml_quoted "${kv%%=*}")"
      echo "        value: $(yaml_quoted "${kv#*=}")"
    done
  } >"$snapshot_yaml.tmp"
  ) || return 1
  mv "$snapshot_yaml.tmp" "$snapshot_yaml"
}
# A restore StarRocks did not finish: it deletes meta/image and meta/bdb,
# then copies the snapshot's image folder in the order S3 lists its keys,
# VERSION before v2/ (RestoreClusterSnapshotMgr.downloadSnapshot, Hadoop's
# copyToLocal), and opens the journal (meta/bdb) only after the download
# (GlobalStateMgr.initialize, after RestoreClusterSnapshotMgr.init in
# StarRocksFEServer). An FE stopped during the download leaves VERSION
# with no image or a cut one, and no journal. Started on that it would be
# an empty cluster ("image does not exist", GlobalStateMgr.loadImage) that
# the agent would give the source's storage volume and whose first
# automated snapshot would replace the source's (StarRocks keeps the
# newest), or refuse the image ("checksum mismatch", ImageLoader) at every
# start. A restored FE always has an image (a checkpoint writes the next
# before it deletes the last) and a journal, so the first FE of a restored
# instance without either waits below as if it had no meta: the agent lets
# it restore again (fe-bootstrap, only while the instance has not
# bootstrapped; StarRocks starts the download by deleting what is there)
# or join the leader (fe-helper).
# restored_first_fe: this is the first FE of an instance restored from a
# cluster snapshot, the only one that ever restores.
restored_first_fe() {
  [ -n "${CLUSTER_SNAPSHOT_VOLUME_NAME:-}" ] && [ "$ordinal" = "0" ]
}
restore_unfinished() {
  restored_first_fe && [ -f "$meta/image/VERSION" ] || return 1
  image=""
  for f in "$meta"/image/image.* "$meta"/image/v2/image.*; do
    [ -f "$f" ] && image="$f"
  done
  journal=""
  for f in "$meta"/bdb/*.jdb; do
    [ -f "$f" ] && journal="$f"
  done
  [ -z "$image" ] || [ -z "$journal" ]
}
# A restore from a cluster snapshot is finished once StarRocks has run
# RestoreClusterSnapshotMgr.finishRestoring: after the journal is open and
# the query port too (fe-core StarRocksFEServer), it drops the source's
# nodes and gives the storage volume this instance's keys. An FE stopped
# before that has an image and a journal, yet the source's frontends in
# them, and started without --cluster_snapshot it may not start at all.
# Nothing in meta says whether it ran, so the restore leaves a marker in
# meta (on the volume, which outlives the pod) before it starts, and while
# the marker is there the agent decides: the instance has bootstrapped since
# (its accounts were made on the restored FE, which is after the restore):
# cluster-snapshot-restored, the marker goes and the FE starts from its
# meta; else fe-bootstrap: restore again (StarRocks deletes image/ and bdb/
# first, RestoreClusterSnapshotMgr.downloadSnapshot). No client has used the
# instance before it bootstrapped: its client ports open only then.
restore_marker="$meta/cluster-snapshot-restore"
# Root's password on a restored FE. The snapshot brings the source's
# accounts, and only root may change root's password; when root accepts no
# password the agent has (the source's is nowhere), the agent asks
# ($reset_file) for StarRocks' own way out: enable_auth_check = false,
# read once at the start (fe-core common/Config, not mutable), with which
# authentication/AuthenticationHandler lets any existing user in with any
# password. The FE is restored again with it (a restore cut short by the
# stop is then no concern), the agent gives root and the team's admin the
# new instance's passwords, and once it writes $reset_done_file (StarRocks
# has finished the restore too) the FE starts from its meta with
# authentication on, without the marker. No client reaches the FE
# meanwhile: its client ports open only once an agent reports the
# accounts ready, which no agent does while an FE lets any password in.
# So the wrapper stays the parent of an FE it restores, to stop and start
# it when the agent asks; the kubelet's SIGTERM is passed on to it.
restore() {
  if ! write_cluster_snapshot_yaml; then
    rm -f "$snapshot_yaml" "$snapshot_yaml.tmp"
    exit 1
  fi
  echo "restore started" >"$restore_marker"
  # A done file is of an FE that ran before this restore, not of this one.
  rm -f "$reset_done_file"
  auth_off=false
  if [ -f "$reset_file" ]; then
    echo "enable_auth_check = false" >>"$fe_home/conf/fe.conf"
    auth_off=true
    echo "root accepts no password the agent has: restoring with authentication off (enable_auth_check = false) for the agent to reset it"
  fi
  echo "starting a new cluster from the cluster snapshot under $CLUSTER_SNAPSHOT_VOLUME_LOCATION"
  "$fe_home/bin/start_fe.sh" --cluster_snapshot --host_type FQDN --logconsole &
  fe_pid=$!
  trap 'kill -TERM "$fe_pid" 2>/dev/null || true' TERM INT
  while kill -0 "$fe_pid" 2>/dev/null; do
    if ! $auth_off && [ -f "$reset_file" ]; then
      stop_fe
      fresh_conf
      restore
    fi
    if $auth_off && [ -f "$reset_done_file" ]; then
      stop_fe
      fresh_conf
      rm -f "$restore_marker" "$snapshot_yaml"
      rm -f "$reset_file" "$reset_done_file"
      echo "root has the agent's password and the restore has finished: starting from the meta with authentication on"
      trap - TERM INT
      exec "$fe_home/bin/start_fe.sh" --host_type FQDN --logconsole
    fi
    sleep 1
  done
  trap - TERM INT
  wait "$fe_pid"
  exit
}
stop_fe() {
  kill -TERM "$fe_pid" 2>/dev/null || true
  wait "$fe_pid" || true
}
# An FE with metadata already knows its peers and must not be given a helper again.
if [ -f "$meta/image/VERSION" ]; then
  if restored_first_fe && [ -f "$restore_marker" ]; then
    echo "a restore from the cluster snapshot started on this meta: waiting for the agent to say whether the instance has bootstrapped since ($restored_file) or not ($bootstrap_file)"
    while :; do
      if [ -f "$restored_file" ]; then
        rm -f "$restore_marker"
        echo "the instance has bootstrapped since the restore: starting from the meta"
        break
      fi
      if [ -f "$bootstrap_file" ]; then
        echo "the instance has not bootstrapped since the restore started, which may not have finished: restoring again"
        restore
      fi
      sleep 1
    done
  fi
  if ! restore_unfinished; then
    exec "$fe_home/bin/start_fe.sh" --host_type FQDN --logconsole
  fi
  echo "meta has VERSION but no image or no journal: the download of the cluster snapshot did not finish"
fi
echo "no meta: waiting for the agent to add this FE to the cluster ($helper_file) or, for the first FE of a new instance, to let it bootstrap ($bootstrap_file)"
while [ ! -s "$helper_file" ]; do
  if [ "$ordinal" = "0" ] && [ -f "$bootstrap_file" ]; then
    if [ -n "${CLUSTER_SNAPSHOT_VOLUME_NAME:-}" ]; then
      restore
    fi
    echo "starting a new cluster"
    exec "$fe_home/bin/start_fe.sh" --host_type FQDN --logconsole
  fi
  sleep 1
done
helper="$(cat "$helper_file")"
echo "joining the cluster through helper $helper"
exec "$fe_home/bin/start_fe.sh" --helper "$helper" --host_type FQDN --logconsole
