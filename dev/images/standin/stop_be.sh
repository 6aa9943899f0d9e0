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

# Stand-in for StarRocks' bin/stop_be.sh (dev/images): as upstream, it
# signals the process in PID_DIR/be.pid with SIGKILL, or SIGTERM (the BE's
# graceful exit) with -g/--graceful, and waits until it has gone, at most
# --timeout seconds when given (StarRocks/starrocks bin/stop_be.sh and
# bin/stop_cn.sh: sig=9, -g/--graceful sets sig=15). Upstream also checks
# that the pid is a starrocks_be process; the stand-in is not, so that check
# is left out.
set -eu
curdir="$(cd "$(dirname "$0")" && pwd)"
PID_DIR="${PID_DIR:-$curdir}"
sig=KILL
timeout=-1
while [ $# -gt 0 ]; do
  case "$1" in
    -g|--graceful) sig=TERM ;;
    --timeout) timeout="$2"; shift ;;
    --timeout=*) timeout="${1#--timeout=}" ;;
    -h|--help) echo "usage: stop_be.sh [-g|--graceful] [--timeout seconds]"; exit 0 ;;
  esac
  shift
done
pidfile="$PID_DIR/be.pid"
if [ ! -f "$pidfile" ]; then
  echo "$pidfile does not exist"
  exit 1
fi
pid="$(cat "$pidfile")"
kill -s "$sig" "$pid"
waited=0
while kill -0 "$pid" 2>/dev/null; do
  if [ "$timeout" -ge 0 ] && [ "$waited" -ge "$timeout" ]; then
    echo "BE $pid still running after ${timeout}s"
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
rm -f "$pidfile"
echo "stopped BE $pid"
