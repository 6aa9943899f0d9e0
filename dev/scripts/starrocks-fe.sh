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

# Prints the folder of a real StarRocks FE (laid out as upstream's output/fe:
# bin/, conf/, lib/, webroot/), building it into the tools cache first if it
# is not there yet. The tests of dev/realfe run it. Nothing of StarRocks is in
# this repository: the FE is built from a source archive beside it, and the
# build is keyed by the archive's sha256, so a new archive builds anew.
#
#   dev/scripts/starrocks-fe.sh          # the FE folder (built once)
#   dev/scripts/starrocks-fe.sh missing  # prints "starrocks-fe" if a build is due; builds nothing
#   dev/scripts/starrocks-fe.sh source   # the archive it builds from
#
# Source: the one starrocks-fe-src-*.tar.gz in $MANAGED_STARROCKS_FE_SOURCE
# (default: ../shared/starrocks beside the repository). Without it the script
# says so and exits 3, which the tests report as a skip naming the folder.
# Needs a JDK 17, Maven, python3 and Debian's thrift compiler
# (`apt-get install openjdk-17-jdk-headless maven thrift-compiler`).
#
# Cache: $MANAGED_STARROCKS_CACHE (default ~/.cache/managed-starrocks):
#   starrocks/fe-<sha256 prefix>/  the FE (1.3 GB of jars)
#   starrocks/m2/                  Maven's local repository (1.5 GB, kept
#                                  so that a new archive downloads little)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${MANAGED_STARROCKS_CACHE:-$HOME/.cache/managed-starrocks}"
source_dir="${MANAGED_STARROCKS_FE_SOURCE:-$root/../shared/starrocks}"
settings="$root/dev/scripts/starrocks-fe-maven-settings.xml"

# What `SHOW FRONTENDS` prints in Version is "<STARROCKS_VERSION>-<commit>"
# (build-support/gen_build_version.py writes both into fe-core's Version
# class). The archive is branch-4.1 between the 4.1.0 and 4.1.1 tags, so it
# claims no patch release: "4.1-ad83983", never the module's shipped 4.1.7.
STARROCKS_VERSION=4.1

say() { echo "starrocks-fe: $*" >&2; }

archive() {
  local found=()
  if [[ -d "$source_dir" ]]; then
    shopt -s nullglob
    found=("$source_dir"/starrocks-fe-src-*.tar.gz)
    shopt -u nullglob
  fi
  if ((${#found[@]} != 1)); then
    say "no StarRocks FE source archive: expected one starrocks-fe-src-*.tar.gz in $source_dir" \
      "(found ${#found[@]}; set MANAGED_STARROCKS_FE_SOURCE to the folder that holds it)"
    exit 3
  fi
  echo "${found[0]}"
}

# out_dir <archive>: where the FE built from that archive lives.
out_dir() {
  local sum
  sum="$(sha256sum "$1" | cut -c1-16)"
  echo "$cache/starrocks/fe-$sum"
}

# subst <file> <sed expression> <text that must be there afterwards>: a
# substitution that fails loudly when the pom no longer has what it replaces.
subst() {
  sed -i "$2" "$1"
  grep -qF -- "$3" "$1" || { say "substitution '$2' did not apply to $1"; exit 1; }
}

build() {
  local src="$1" out="$2" work commit
  for tool in java mvn python3 /usr/bin/thrift; do
    command -v "$tool" >/dev/null || { say "$tool is missing (apt-get install openjdk-17-jdk-headless maven python3 thrift-compiler)"; exit 1; }
  done
  work="$cache/starrocks/build"
  rm -rf "$work" "$out.tmp" && mkdir -p "$work" "$cache/starrocks/m2"
  say "building the FE from $(basename "$src") (first time: about 1.5 GB of downloads into $cache/starrocks/m2, then minutes of compiling: 7 min in a cold .ci/run, 42 min on 2 busy cores)"
  tar -xzf "$src" -C "$work" --strip-components=1
  # The archive is a `git archive` of one commit: its short hash is in the
  # archive's name (starrocks-fe-src-<branch>-<hash>.tar.gz).
  commit="$(basename "$src" .tar.gz)" && commit="${commit##*-}"

  # Three versions fe/pom.xml asks for that Maven Central does not serve,
  # replaced by the nearest versions it does serve:
  # - the AWS SDK v2 2.42.1 -> 2.42.8 (a patch release of the same line);
  subst "$work/fe/pom.xml" 's|<aws-v2-sdk.version>2.42.1</aws-v2-sdk.version>|<aws-v2-sdk.version>2.42.8</aws-v2-sdk.version>|' \
    '<aws-v2-sdk.version>2.42.8</aws-v2-sdk.version>'
  # - StarOS 4.1-rc3 -> 4.0.0 (com.starrocks:starclient and starmanager, used
  #   only in shared-data mode: check that mode on this build before relying
  #   on it);
  subst "$work/fe/pom.xml" 's|<staros.version>4.1-rc3</staros.version>|<staros.version>4.0.0</staros.version>|' \
    '<staros.version>4.0.0</staros.version>'
  # - hadoop-azure and hadoop-azure-datalake 3.4.3 -> 3.4.2 (the rest of
  #   Hadoop stays 3.4.3): their <version> follows the artifactId line.
  subst "$work/fe/pom.xml" '/<artifactId>hadoop-azure\(-datalake\)\?<\/artifactId>/{n;s|<version>${hadoop.version}</version>|<version>3.4.2</version>|}' \
    '<version>3.4.2</version>'
  [[ "$(grep -c '<version>3.4.2</version>' "$work/fe/pom.xml")" == 2 ]] || { say "expected two hadoop-azure versions replaced in fe/pom.xml"; exit 1; }

  # fe-core's pom runs the thrift compiler named by THRIFT and the Python
  # that writes the Version class (gen_build_version.py) from PYTHON. Debian's
  # thrift 0.17 generates Java that compiles unchanged (upstream uses 0.20).
  #
  # -pl fe-server -am: the FE server and the modules it depends on, not the
  #   plugins (spark-dpp, hive-udf) upstream's build.sh adds for loads from
  #   Spark and Hive UDFs, which no test uses.
  # -Dmaven.test.skip=true: neither compile nor run the unit tests (minutes
  #   of compiling and gigabytes of test dependencies).
  # -Dcheckstyle.skip=true: style checks of upstream's code are not ours to run.
  # -T1: one module at a time; the machines have 2 cores shared by the tests,
  #   and javac already uses both for fe-core.
  # -Dmaven.repo.local: the downloads stay in the cache, beside the FE.
  # JAVA_TOOL_OPTIONS=-XX:-UsePerfData: no hsperfdata folder in the
  #   machine's /tmp, from Maven's JVM nor from those fe-core's antrun forks
  #   (java -jar jprotobuf-starrocks for the proto sources), which do not
  #   read MAVEN_OPTS; each JVM says "Picked up JAVA_TOOL_OPTIONS" once.
  (cd "$work/fe" && JAVA_TOOL_OPTIONS="-XX:-UsePerfData" THRIFT=/usr/bin/thrift PYTHON=python3 STARROCKS_VERSION="$STARROCKS_VERSION" \
    STARROCKS_COMMIT_HASH="$commit" mvn -B -q -Dstyle.color=never -T1 -s "$settings" -Dmaven.repo.local="$cache/starrocks/m2" \
    package -pl fe-server -am -Dmaven.test.skip=true -Dcheckstyle.skip=true) >&2

  # Laid out as upstream's build.sh lays out output/fe: its scripts and
  # default configuration, the server jar and its dependencies in lib/, the
  # web UI's files. (build.sh also copies the hadoop-ext jar of
  # java-extensions, built in a reactor of its own: fe-core compiles the
  # classes of it the FE uses from the same sources, and what the jar adds is
  # Hadoop's FileSystem patched for the BE's readers.)
  mkdir -p "$out.tmp/bin" "$out.tmp/conf" "$out.tmp/lib" "$out.tmp/webroot"
  cp -p "$work"/bin/*_fe.sh "$work/bin/show_fe_version.sh" "$work/bin/common.sh" "$out.tmp/bin/"
  cp -p "$work/conf/fe.conf" "$work/conf/udf_security.policy" "$work/conf/hadoop_env.sh" \
    "$work/conf/core-site.xml" "$work/conf/cluster_snapshot.yaml" "$out.tmp/conf/"
  cp -p "$work"/fe/fe-server/target/lib/* "$out.tmp/lib/"
  cp -p "$work/fe/fe-server/target/starrocks-fe.jar" "$out.tmp/lib/"
  cp -rp "$work"/webroot/. "$out.tmp/webroot/"
  cp -p "$work/LICENSE.txt" "$work/NOTICE.txt" "$out.tmp/"
  # The extracted sources and Maven's target/ folders (several GB) are not
  # needed once lib/ holds the jars.
  rm -rf "$work"
  mv "$out.tmp" "$out"
}

fe() {
  local src out
  src="$(archive)"
  out="$(out_dir "$src")"
  if [[ ! -f "$out/lib/starrocks-fe.jar" ]]; then
    # One build at a time: test packages running in parallel may all ask
    # for the FE; the others wait for the first and then find it built.
    mkdir -p "$cache/starrocks"
    exec 9>"$cache/starrocks/build.lock"
    flock 9
    if [[ ! -f "$out/lib/starrocks-fe.jar" ]]; then
      local start=$SECONDS
      build "$src" "$out"
      say "built in $((SECONDS - start)) s: $out"
    fi
    exec 9>&-
  fi
  echo "$out"
}

case "${1:-}" in
  "") fe ;;
  source) archive ;;
  missing)
    src="$(archive)"
    [[ -f "$(out_dir "$src")/lib/starrocks-fe.jar" ]] || echo starrocks-fe
    ;;
  *) echo "usage: $0 [missing|source]" >&2; exit 2 ;;
esac
