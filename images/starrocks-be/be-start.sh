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

# BE start wrapper of managed-starrocks, added to the BE image by werf
# (images/starrocks-be/werf.inc.yaml) and run by the BE StatefulSet:
# be-start.sh <spill directory>.
set -eu
# The directories can be moved for tests of this script; the pod uses the defaults.
be_home="${BE_HOME:-/opt/starrocks/be}"
# The spill directory, be.conf's spill_local_storage_dir given as the
# argument, must exist: the BE checks it is writable before it would create
# it and refuses to start otherwise (be spill/dir_manager.cpp
# DirManager::init).
spill="${1:?usage: be-start.sh <spill directory>}"
mkdir -p "$spill"
# The backup and restore endpoints' CA bundles (the pod's trusted-cas
# volume, rendered only when the instance names one). The BEs upload and
# download the snapshots themselves, with the AWS SDK's S3 client and no CA
# of the repository: be fs/fs_s3.cpp (S3ClientFactory::new_client) sets
# only scheme, endpoint, region and timeouts in its ClientConfiguration.
# Its HTTP client is StarRocks' Poco client (common/config.h
# enable_poco_client_for_aws_sdk, default true; fs/s3/aws_sdk_guard.cpp),
# which reads no CA setting of the SDK (fs/s3/poco_http_client.cpp) and
# opens Poco::Net::HTTPSClientSession(host, port) with Poco's default client
# context (fs/s3/poco_common.cpp makeHTTPSessionImpl): that context loads
# OpenSSL's default verify paths (Poco SSLManager loadDefaultCAFile,
# default true; Context::init calls SSL_CTX_set_default_verify_paths),
# which read the file SSL_CERT_FILE names. The SDK's curl client (the
# other setting) reads AWS_CA_BUNDLE into ClientConfiguration.caFile.
# Both get one bundle: the system's CAs and every certificate of the
# instance's bundles, built fresh at every start so a changed or removed CA
# never lingers.
trusted_cas="${TRUSTED_CAS_DIR:-/etc/starrocks/trusted-cas}"
system_cas="${SYSTEM_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
bundle="$be_home/conf/trusted-cas.pem"
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
# --be picks be.conf (the script also starts CNs); --logconsole sends glog
# to stderr so kubectl logs shows the BE log. start_be.sh execs
# starrocks_be, so the BE is PID 1 and gets the kubelet's SIGTERM itself
# (StarRocks/starrocks bin/start_backend.sh).
exec "$be_home/bin/start_be.sh" --be --logconsole
