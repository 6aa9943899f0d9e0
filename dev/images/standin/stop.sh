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

# Stand-in for StarRocks' bin/stop_fe.sh, bin/stop_be.sh and bin/stop_cn.sh
# (dev/images installs it under these names; the name says which). As upstream, it
# signals the process in PID_DIR/<fe|be>.pid and waits until it has gone,
# at most --timeout seconds when given:
#   stop_fe.sh: SIGTERM, or SIGUSR1 (the FE's graceful exit) with
#     -g/--graceful (StarRocks/starrocks bin/stop_fe.sh: SIG=15, -g sets
#     SIG=10, --timeout);
#   stop_be.sh, stop_cn.sh: SIGKILL, or SIGTERM with -g/--graceful
#     (bin/stop_be.sh and bin/stop_cn.sh: SIG=9, -g/--graceful sets SIG=15;
#     the pid in PID_DIR/be.pid or PID_DIR/cn.pid).
# Upstream also checks that the pid is a java (FE) or starrocks_be (BE, CN)
# process; the stand-in is neither, so that check is left out.
set -eu
script="$(basename "$0")"
curdir="$(cd "$(dirname "$0")" && pwd)"
PID_DIR="${PID_DIR:-$curdir}"
case "$script" in
  stop_fe.sh) component=fe name=FE sig=TERM graceful=USR1 ;;
  stop_be.sh) component=be name=BE sig=KILL graceful=TERM ;;
  stop_cn.sh) component=cn name=CN sig=KILL graceful=TERM ;;
  *) echo "$script: installed under an unknown name (stop_fe.sh, stop_be.sh or stop_cn.sh)"; exit 1 ;;
esac
timeout=-1
while [ $# -gt 0 ]; do
  case "$1" in
    -g|--graceful) sig=$graceful ;;
    --timeout) timeout="$2"; shift ;;
    --timeout=*) timeout="${1#--timeout=}" ;;
    -h|--help) echo "usage: $script [-g|--graceful] [--timeout seconds]"; exit 0 ;;
  esac
  shift
done
pidfile="$PID_DIR/$component.pid"
if [ ! -f "$pidfile" ]; then
  echo "$pidfile does not exist"
  exit 1
fi
pid="$(cat "$pidfile")"
kill -s "$sig" "$pid"
waited=0
while kill -0 "$pid" 2>/dev/null; do
  if [ "$timeout" -ge 0 ] && [ "$waited" -ge "$timeout" ]; then
    echo "$name $pid still running after ${timeout}s"
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
rm -f "$pidfile"
echo "stopped $name $pid"
