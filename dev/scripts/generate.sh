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

# Regenerates deepcopy functions and crds/ from api/v1alpha1.
set -euo pipefail
cd "$(dirname "$0")/../.."
controller_gen="$(dev/scripts/tools.sh controller-gen)"
"$controller_gen" object paths=./api/...
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$controller_gen" crd:crdVersions=v1 paths=./api/... output:crd:dir="$out"
go run ./dev/cmd/gencrds "$out" crds
