#!/usr/bin/env bash
# Regenerates deepcopy functions and crds/ from api/v1alpha1.
set -euo pipefail
cd "$(dirname "$0")/../.."
controller_gen="$(dev/scripts/tools.sh controller-gen)"
"$controller_gen" object paths=./api/...
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$controller_gen" crd:crdVersions=v1 paths=./api/... output:crd:dir="$out"
go run ./dev/cmd/gencrds "$out" crds
