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
cp "${FE_CONF_SOURCE:-/etc/starrocks/fe/conf/fe.conf}" "$fe_home/conf/fe.conf"
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
# An FE with metadata already knows its peers and must not be given a helper again.
if [ -f "$meta/image/VERSION" ]; then
  exec "$fe_home/bin/start_fe.sh" --host_type FQDN --logconsole
fi
echo "no meta: waiting for the agent to add this FE to the cluster ($helper_file) or, for the first FE of a new instance, to let it bootstrap ($bootstrap_file)"
while [ ! -s "$helper_file" ]; do
  if [ "$ordinal" = "0" ] && [ -f "$bootstrap_file" ]; then
    echo "starting a new cluster"
    exec "$fe_home/bin/start_fe.sh" --host_type FQDN --logconsole
  fi
  sleep 1
done
helper="$(cat "$helper_file")"
echo "joining the cluster through helper $helper"
exec "$fe_home/bin/start_fe.sh" --helper "$helper" --host_type FQDN --logconsole
