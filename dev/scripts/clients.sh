#!/usr/bin/env bash
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

# The database clients the connection recipes of docs/USAGE.md are tested
# with (test/clients), pinned, in the cache; the mysql client is Debian's
# mariadb-client, which .ci/run installs with apt-get.
#
#   dev/scripts/clients.sh install       # fetch what is missing (PyPI, Maven Central)
#   dev/scripts/clients.sh path java     # the Connector/J jar (whether or not it is there)
#   dev/scripts/clients.sh path python   # the PYTHONPATH folder that holds PyMySQL
#
# Cache: $MANAGED_STARROCKS_CACHE (default ~/.cache/managed-starrocks).
set -euo pipefail
cache="${MANAGED_STARROCKS_CACHE:-$HOME/.cache/managed-starrocks}"

CONNECTOR_J_VERSION=9.5.0
PYMYSQL_VERSION=1.2.4

java_dir="$cache/clients/connector-j-$CONNECTOR_J_VERSION"
java_jar="$java_dir/mysql-connector-j-$CONNECTOR_J_VERSION.jar"
python_dir="$cache/clients/pymysql-$PYMYSQL_VERSION"

install() {
  if [[ ! -f "$java_jar" ]]; then
    echo "clients: fetching MySQL Connector/J $CONNECTOR_J_VERSION with Maven" >&2
    # Maven's own plugins go to a local repository in the cache too, so a
    # second run asks Maven Central for nothing.
    # -XX:-UsePerfData: no hsperfdata folder in the machine's /tmp.
    MAVEN_OPTS="-XX:-UsePerfData" mvn -q -B -Dmaven.repo.local="$cache/clients/m2" dependency:copy \
      -Dartifact="com.mysql:mysql-connector-j:$CONNECTOR_J_VERSION" -DoutputDirectory="$java_dir" >&2
  fi
  if [[ ! -d "$python_dir/pymysql" ]]; then
    echo "clients: fetching PyMySQL $PYMYSQL_VERSION with pip" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$python_dir.tmp" "PyMySQL==$PYMYSQL_VERSION" >&2
    rm -rf "$python_dir" && mv "$python_dir.tmp" "$python_dir"
  fi
}

case "${1:-}" in
install) install ;;
path)
  case "${2:-}" in
  java) echo "$java_jar" ;;
  python) echo "$python_dir" ;;
  *) echo "usage: $0 path java|python" >&2; exit 2 ;;
  esac
  ;;
*) echo "usage: $0 install | path java|python" >&2; exit 2 ;;
esac
