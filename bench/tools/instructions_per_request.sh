#!/usr/bin/env bash
# Instructions per pipelined request of a server binary, counted by callgrind.
#
#   bench/tools/instructions_per_request.sh BINARY [PATH] [SECONDS] [-- SERVER ARGS...]
#
# BINARY takes `--addr HOST:PORT --workers 1` (the reference app, engine_hello) and any SERVER
# ARGS after `--` (the reference app as the benchmarks run it: `-- --no-metrics`); build it with
# `cargo build --profile profiling ...` for function names in the annotation. A peer that takes
# its address otherwise gets `{port}` in its SERVER ARGS, filled in, and no `--addr`
# (may_minihttp: `-- {port}`). PATH defaults to `/`. The load is wrk with 16 connections
# pipelining 16 requests each, after a warm-up.
# KEEP_DUMP=FILE keeps the callgrind dump, for `bench/tools/instructions_by_function.py FILE N`
# (N the request count printed here). CALLGRIND_ARGS adds options to callgrind's, for instance
# "--branch-sim=yes --cache-sim=yes" for that script's `--event Bim`, `Bcm` or `I1mr`.
# READY_TRIES (default 100, 0.2 s apart) is how long to wait for the port: a Python server
# starting under callgrind needs more (`READY_TRIES=600`).
set -euo pipefail
binary=$1
path=/
seconds=5
[ $# -ge 2 ] && [ "$2" != "--" ] && path=$2
[ $# -ge 3 ] && [ "$2" != "--" ] && [ "$3" != "--" ] && seconds=$3
server_args=()
for ((i = 2; i <= $#; i++)); do
    if [ "${!i}" = "--" ]; then
        server_args=("${@:i+1}")
        break
    fi
done
here=$(cd "$(dirname "$0")/.." && pwd)
port=$((20000 + RANDOM % 20000))
out=$(mktemp -d)
if [[ " ${server_args[*]} " == *"{port}"* ]]; then
    server_args=("${server_args[@]//\{port\}/$port}")
else
    server_args=(--addr "127.0.0.1:$port" --workers 1 "${server_args[@]}")
fi
# shellcheck disable=SC2086 # CALLGRIND_ARGS is a list of options
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" ${CALLGRIND_ARGS:-} \
    "$binary" "${server_args[@]}" >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$out"' EXIT
# Ready once the port accepts a connection (not every peer says when it listens).
for _ in $(seq 1 ${READY_TRIES:-100}); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.2
done
url="http://127.0.0.1:$port$path"
wrk -t1 -c16 -d2s -s "$here/wrk/pipeline.lua" "$url" -- 16 >/dev/null
callgrind_control --zero "$server" >/dev/null 2>&1
requests=$(wrk -t1 -c16 -d"${seconds}s" -s "$here/wrk/pipeline.lua" "$url" -- 16 \
    | awk '/requests in/ {print $1}')
callgrind_control --dump "$server" >/dev/null 2>&1
sleep 1
dump=$(ls -t "$out"/callgrind.out* | head -1)
total=$(callgrind_annotate "$dump" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "requests=$requests instructions=$total per_request=$((total / requests))"
if [ -n "${KEEP_DUMP:-}" ]; then cp "$dump" "$KEEP_DUMP"; fi
