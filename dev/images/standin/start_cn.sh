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

# Stand-in for StarRocks' bin/start_cn.sh in the local node's CN image
# (dev/images): same path and options (--logconsole, --daemon), PID_DIR this
# directory, STARROCKS_HOME its parent. Upstream's start_cn.sh execs
# start_backend.sh --cn, which reads conf/cn.conf, writes PID_DIR/cn.pid and
# execs starrocks_be --cn; this one execs the BE stand-in (dev/cmd/fakebe)
# with --cn instead. It is not StarRocks' script.
set -eu
curdir="$(cd "$(dirname "$0")" && pwd)"
STARROCKS_HOME="$(cd "$curdir/.." && pwd)"
export STARROCKS_HOME
PID_DIR="${PID_DIR:-$curdir}"
export PID_DIR
exec "$STARROCKS_HOME/lib/starrocks-be-standin" --home "$STARROCKS_HOME" --pid-file "$PID_DIR/cn.pid" --cn "$@"
