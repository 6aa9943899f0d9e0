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

# Builds every Go binary of the module's images into bin/ (or $OUT_DIR) with
# the flags the werf images use (.werf/consts.yaml): static (CGO_ENABLED=0),
# -trimpath, -ldflags "-s -w". Built for the host platform so the binaries
# can be run here; the images build linux/amd64.
#
#   dev/scripts/build.sh            build all
#   dev/scripts/build.sh go-hooks   build the named binaries only
#   dev/scripts/build.sh --list     print "<binary> <main package>" lines
#
# The list below must match the packages werf builds; dev/werfrender's test
# renders werf.yaml and fails when they drift apart.
set -euo pipefail
cd "$(dirname "$0")/../.."

BINARIES=(
  "agent ./images/agent"
  "webhook ./images/webhook"
  "go-hooks ./hooks"
)

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${BINARIES[@]}"
  exit 0
fi

out="${OUT_DIR:-bin}"
mkdir -p "$out"

declare -A wanted=()
for name in "$@"; do wanted[$name]=1; done

built=0
for entry in "${BINARIES[@]}"; do
  read -r name pkg <<<"$entry"
  if (( $# > 0 )) && [[ -z "${wanted[$name]:-}" ]]; then
    continue
  fi
  unset "wanted[$name]"
  # A missing or non-main package is a broken build, not something to skip.
  if [[ ! -d "$pkg" ]]; then
    echo "build.sh: $name: main package $pkg does not exist" >&2
    exit 1
  fi
  kind="$(go list -f '{{.Name}}' "$pkg")" || { echo "build.sh: $name: go list $pkg failed" >&2; exit 1; }
  if [[ "$kind" != "main" ]]; then
    echo "build.sh: $name: $pkg is package $kind, not main" >&2
    exit 1
  fi
  echo "build.sh: $name <- $pkg" >&2
  CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$out/$name" "$pkg"
  built=$((built + 1))
done

if (( ${#wanted[@]} > 0 )); then
  echo "build.sh: unknown binaries: ${!wanted[*]} (see --list)" >&2
  exit 1
fi
echo "build.sh: $built binaries in $out/" >&2
