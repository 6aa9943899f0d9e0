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

# Prints the path of a development tool, building it into the cache first if
# it is not there yet. Tools are keyed by version, so a version bump rebuilds.
#
#   dev/scripts/tools.sh kube-apiserver|kube-controller-manager|kubelet|kube-proxy|kube-scheduler|coredns|kube-router|metrics-server|etcd|controller-gen|addon-operator|cert-manager-controller|versitygw|cert-manager-crds|prometheus-operator-crds|all
#
# Cache: $MANAGED_STARROCKS_CACHE (default ~/.cache/managed-starrocks).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${MANAGED_STARROCKS_CACHE:-$HOME/.cache/managed-starrocks}"
mkdir -p "$cache/bin" "$cache/crds"

KUBE_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
CONTROLLER_TOOLS_VERSION=v0.23.0
CERT_MANAGER_VERSION=v1.21.2
PROMETHEUS_OPERATOR_VERSION=v0.95.2
VERSITYGW_VERSION=v1.8.0
# The addon-operator that runs the module locally: the version of the root go.mod.
ADDON_OPERATOR_VERSION=v1.24.4
# The node's DNS and NetworkPolicy enforcement (dev/node); versions pinned in
# their tool modules' go.mod, repeated here to key the cache.
COREDNS_VERSION=v1.15.0
KUBE_ROUTER_VERSION=v2.1.0
# The node's resource metrics API for HorizontalPodAutoscalers (dev/node
# Options.MetricsServer); pinned in its tool module's go.mod.
METRICS_SERVER_VERSION=v0.8.0

say() { echo "tools: $*" >&2; }

build() { # <module dir> <output> <package> [ldflags]
  local dir="$1" out="$2" pkg="$3" ldflags="${4:-}"
  [[ -x "$out" ]] && return
  say "building $(basename "$out") from its Go module (one time)"
  (cd "$root/$dir" && go build -o "$out.tmp" -ldflags "-s -w $ldflags" "$pkg") >&2
  mv "$out.tmp" "$out"
}

kube_apiserver() {
  local out="$cache/bin/kube-apiserver-$KUBE_VERSION"
  [[ -x "$out" ]] || say "kube-apiserver and kube-controller-manager take about 8 minutes on 2 cores, once"
  build dev/tools/kube-apiserver "$out" k8s.io/kubernetes/cmd/kube-apiserver \
    "-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
  echo "$out"
}

kube_controller_manager() {
  local out="$cache/bin/kube-controller-manager-$KUBE_VERSION"
  build dev/tools/kube-apiserver "$out" k8s.io/kubernetes/cmd/kube-controller-manager \
    "-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
  echo "$out"
}

# node_tool <name>: the kubelet, kube-proxy and kube-scheduler of the local
# node (dev/node), from the module and version that build kube-apiserver.
node_tool() {
  local out="$cache/bin/$1-$KUBE_VERSION"
  build dev/tools/kube-apiserver "$out" "k8s.io/kubernetes/cmd/$1" \
    "-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
  echo "$out"
}

coredns() {
  local out="$cache/bin/coredns-$COREDNS_VERSION"
  build dev/tools/coredns "$out" ./cmd/coredns
  echo "$out"
}

# kube-router, only its NetworkPolicy controller runs on the node; about 3
# minutes of CPU, once.
kube_router() {
  local out="$cache/bin/kube-router-$KUBE_ROUTER_VERSION"
  build dev/tools/kube-router "$out" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
  echo "$out"
}

# metrics-server reports client-go's version variable, which its Makefile
# sets with ldflags (VERSION_LDFLAGS); without it the binary says v0.0.0.
metrics_server() {
  local out="$cache/bin/metrics-server-$METRICS_SERVER_VERSION"
  build dev/tools/metrics-server "$out" sigs.k8s.io/metrics-server/cmd/metrics-server \
    "-X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION"
  echo "$out"
}

etcd() {
  local out="$cache/bin/etcd-$ETCD_VERSION"
  build dev/tools/etcd "$out" go.etcd.io/etcd/server/v3
  echo "$out"
}

controller_gen() {
  local out="$cache/bin/controller-gen-$CONTROLLER_TOOLS_VERSION"
  build dev/tools/controller-gen "$out" sigs.k8s.io/controller-tools/cmd/controller-gen
  echo "$out"
}

# cert-manager's own controllers (certificates, CA and SelfSigned issuers),
# wired by dev/tools/cert-manager: its controller binary is a module the
# proxy does not serve (see that main.go). About 9 minutes on 2 cores with an
# empty build cache, once.
cert_manager_controller() {
  local out="$cache/bin/cert-manager-controller-$CERT_MANAGER_VERSION"
  [[ -x "$out" ]] || say "cert-manager-controller takes about 9 minutes on 2 cores, once"
  build dev/tools/cert-manager "$out" .
  echo "$out"
}

# versitygw is the S3 server the backup tests start on loopback (dev/s3server).
versitygw() {
  local out="$cache/bin/versitygw-$VERSITYGW_VERSION"
  build dev/tools/versitygw "$out" github.com/versity/versitygw/cmd/versitygw
  echo "$out"
}

addon_operator() {
  local out="$cache/bin/addon-operator-$ADDON_OPERATOR_VERSION"
  [[ -x "$out" ]] || say "addon-operator takes about 14 minutes on 2 busy cores, once"
  build dev/tools/addon-operator "$out" github.com/flant/addon-operator/cmd/addon-operator
  echo "$out"
}

# module_dir <tool module dir> <module@version>: downloads the module if needed
# and prints its directory in the module cache.
module_dir() {
  (cd "$root/$1" && go mod download -json "$2") | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

cert_manager_crds() {
  local dir
  dir="$(module_dir dev/tools/controller-gen "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION")"
  [[ -d "$dir/deploy/crds" ]] || { say "cert-manager $CERT_MANAGER_VERSION has no deploy/crds"; exit 1; }
  echo "$dir/deploy/crds"
}

# prometheus-operator publishes its CRDs only in its main module, which the
# module proxy does not serve here; its API module is served, so generate
# them from the Go types with controller-gen, as upstream does.
prometheus_operator_crds() {
  local out="$cache/crds/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"
  if [[ ! -f "$out/.done" ]]; then
    local gen api
    gen="$(controller_gen)"
    # go list -m prints an empty Dir for a module not downloaded yet (fresh
    # module cache); go mod download fetches it and prints where it is.
    api="$(module_dir dev/tools/controller-gen "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring@$PROMETHEUS_OPERATOR_VERSION")"
    [[ -d "$api/v1" ]] || { say "prometheus-operator API module $PROMETHEUS_OPERATOR_VERSION not found (got '$api')"; exit 1; }
    say "generating prometheus-operator $PROMETHEUS_OPERATOR_VERSION CRDs"
    rm -rf "$out" && mkdir -p "$out"
    (cd "$api" && "$gen" crd:crdVersions=v1,allowDangerousTypes=true,maxDescLen=0 paths=./v1/... output:crd:dir="$out") >&2
    touch "$out/.done"
  fi
  echo "$out"
}

# missing prints, one a line, the tools not built yet, and builds nothing:
# make run says "first run only" only when there is something to build.
missing() {
  local name out
  for name in kube-apiserver kube-controller-manager kubelet kube-proxy kube-scheduler; do
    out="$cache/bin/$name-$KUBE_VERSION"
    [[ -x "$out" ]] || echo "$name"
  done
  [[ -x "$cache/bin/etcd-$ETCD_VERSION" ]] || echo etcd
  [[ -x "$cache/bin/coredns-$COREDNS_VERSION" ]] || echo coredns
  [[ -x "$cache/bin/kube-router-$KUBE_ROUTER_VERSION" ]] || echo kube-router
  [[ -x "$cache/bin/metrics-server-$METRICS_SERVER_VERSION" ]] || echo metrics-server
  [[ -x "$cache/bin/controller-gen-$CONTROLLER_TOOLS_VERSION" ]] || echo controller-gen
  [[ -x "$cache/bin/addon-operator-$ADDON_OPERATOR_VERSION" ]] || echo addon-operator
  [[ -x "$cache/bin/cert-manager-controller-$CERT_MANAGER_VERSION" ]] || echo cert-manager-controller
  [[ -x "$cache/bin/versitygw-$VERSITYGW_VERSION" ]] || echo versitygw
  [[ -f "$cache/crds/prometheus-operator-$PROMETHEUS_OPERATOR_VERSION/.done" ]] || echo prometheus-operator-crds
}

case "${1:-}" in
  missing) missing ;;
  kube-apiserver) kube_apiserver ;;
  kube-controller-manager) kube_controller_manager ;;
  kubelet|kube-proxy|kube-scheduler) node_tool "$1" ;;
  coredns) coredns ;;
  kube-router) kube_router ;;
  metrics-server) metrics_server ;;
  etcd) etcd ;;
  controller-gen) controller_gen ;;
  addon-operator) addon_operator ;;
  cert-manager-controller) cert_manager_controller ;;
  versitygw) versitygw ;;
  cert-manager-crds) cert_manager_crds ;;
  prometheus-operator-crds) prometheus_operator_crds ;;
  all) kube_apiserver; kube_controller_manager; node_tool kubelet; node_tool kube-proxy; node_tool kube-scheduler; coredns; kube_router; metrics_server; etcd; controller_gen; addon_operator; cert_manager_controller; versitygw; cert_manager_crds; prometheus_operator_crds ;;
  *) echo "usage: $0 kube-apiserver|kube-controller-manager|kubelet|kube-proxy|kube-scheduler|coredns|kube-router|metrics-server|etcd|controller-gen|addon-operator|cert-manager-controller|versitygw|cert-manager-crds|prometheus-operator-crds|all|missing" >&2; exit 2 ;;
esac
