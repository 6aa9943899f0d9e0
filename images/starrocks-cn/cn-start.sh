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

# CN (compute node) start wrapper of managed-starrocks, added to the CN image
# by werf (images/starrocks-cn/werf.inc.yaml) and run by the CN StatefulSet
# of a shared-data instance: cn-start.sh <spill directory>. It does what
# images/starrocks-be/be-start.sh does for a BE, for the CN's own files:
# a CN is the BE program started with --cn (StarRocks bin/start_cn.sh execs
# start_backend.sh --cn, which reads conf/cn.conf instead of be.conf).
set -eu
# The directories can be moved for tests of this script; the pod uses the
# defaults. /opt/starrocks/cn is a link to be in upstream's image
# (docker/dockerfiles/be/be-ubuntu.Dockerfile: ln -sfT be
# $STARROCKS_ROOT/cn); the operator's CN pods use the cn path
# (starrocks-kubernetes-operator pkg/subcontrollers/cn/cn_pod.go:
# /opt/starrocks/cn/log; its charts mount the cache at
# /opt/starrocks/cn/storage).
cn_home="${CN_HOME:-/opt/starrocks/cn}"
# The spill directory (cn.conf's spill_local_storage_dir, given as the
# argument) must exist: the CN runs the BE's spill code, which checks the
# directory is writable before it would create it and refuses to start
# otherwise (be spill/dir_manager.cpp DirManager::init).
spill="${1:?usage: cn-start.sh <spill directory>}"
mkdir -p "$spill"
# The object storage's and the backup endpoints' CA bundles (the pod's
# trusted-cas volume, rendered only when the instance names one), given to
# OpenSSL's default verify paths (SSL_CERT_FILE) and the AWS SDK
# (AWS_CA_BUNDLE) exactly as be-start.sh explains for the BE's S3 client:
# the system's CAs and every certificate of the instance's bundles, built
# fresh at every start. A shared-data CN reads and writes its tablets
# through StarOS' starlet file system (be fs/fs_starlet.cpp), whose S3
# client lives in the StarOS library, not in StarRocks' source: that it
# reads the same variables is what the real image must show, not a stand-in.
trusted_cas="${TRUSTED_CAS_DIR:-/etc/starrocks/trusted-cas}"
system_cas="${SYSTEM_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
bundle="$cn_home/conf/trusted-cas.pem"
rm -f "$bundle"
if ls "$trusted_cas"/*.crt >/dev/null 2>&1; then
  : >"$bundle"
  if [ -f "$system_cas" ]; then
    cat "$system_cas" >>"$bundle"
    echo >>"$bundle"
  fi
  for ca in "$trusted_cas"/*.crt; do
    cat "$ca" >>"$bundle"
    echo >>"$bundle"
  done
  export SSL_CERT_FILE="$bundle" AWS_CA_BUNDLE="$bundle"
  echo "trusting the system's CAs and $(ls "$trusted_cas"/*.crt | tr '\n' ' ')for S3"
fi
# --logconsole sends glog to stderr so kubectl logs shows the CN log.
# start_cn.sh execs start_backend.sh --cn, which execs starrocks_be, so the
# CN is PID 1 and gets the kubelet's SIGTERM itself, its graceful exit
# (bin/stop_cn.sh -g sends the same signal).
exec "$cn_home/bin/start_cn.sh" --logconsole
