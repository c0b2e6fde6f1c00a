#!/usr/bin/env bash
# How long a user waits: a node's start, and a CLI call against a running node, each through the
# `leasehold` launcher as the README runs it, with and without the class-data caches.
#
#   benchmarks/cli-start.sh [--runs N] [--starts N]
#
#   --runs N     CLI calls per configuration and command (default 20)
#   --starts N   node starts per configuration (default 5)
#
# Node start: `./leasehold server --standalone` on free ports with a new data dir, from launch to
# /healthz answering 200 (leader elected, SERVING); the configurations `cache` (the launcher as it
# is) and `off` (LEASEHOLD_AOT=off) alternate. CLI calls: `leasehold --version` and `leasehold lease
# get NAME` against one such node, wall time of the whole launcher, configurations alternating
# call by call:
#   cli      the launcher as it is (the CLI's flags and its cache)
#   cli-off  the CLI's flags, no cache (LEASEHOLD_AOT=off)
#   node     the nodes' default flags and no cache, which every command ran with before the CLI
#            had flags and a cache of its own
# The caches are made first if missing (deploy/jvm.sh cache and cli-cache: about a minute).
# Prints medians, 90th percentiles and minimums in milliseconds. Run it on a quiet machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=deploy/jvm.sh
. "$root/deploy/jvm.sh"
runs=20
starts=5
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --starts) starts="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cli-start: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs: a positive number, got $runs" >&2; exit 2; }
[[ "$starts" =~ ^[1-9][0-9]*$ ]] || { echo "--starts: a positive number, got $starts" >&2; exit 2; }

launcher="$root/leasehold"
"$launcher" --version >/dev/null
"$root/deploy/jvm.sh" cache >/dev/null
"$root/deploy/jvm.sh" cli-cache >/dev/null
leasehold_select_java
node_defaults="$(leasehold_default_flags)"
work="$(mktemp -d "${TMPDIR:-/tmp}/leasehold-cli-start.XXXXXX")"
node=""
stop_node() {
  if [ -n "$node" ]; then
    kill -TERM "$node" 2>/dev/null || true
    wait "$node" 2>/dev/null || true
    node=""
  fi
}
trap 'stop_node; rm -rf "$work"' EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# CONFIG -> starts a node, left running ($node, client port $port); $elapsed: ms to SERVING.
start_node() {
  local config="$1" t0 base aot=auto
  [ "$config" = off ] && aot=off
  base="$(leasehold_free_ports 3)"
  port=$base
  t0=$(now_ms)
  LEASEHOLD_AOT=$aot "$launcher" server --standalone --client-port "$base" --peer-port $((base + 1)) \
    --metrics-port $((base + 2)) --data-dir "$work/data-$RANDOM$RANDOM" > "$work/node.log" 2>&1 < /dev/null &
  node=$!
  until leasehold_healthz $((base + 2)); do
    kill -0 "$node" 2>/dev/null || { echo "the node exited: $(tail -5 "$work/node.log")" >&2; exit 1; }
    [ $(( $(now_ms) - t0 )) -lt 60000 ] || { echo "the node did not serve within 60 s" >&2; exit 1; }
    sleep 0.02
  done
  elapsed=$(( $(now_ms) - t0 ))
}

# LABEL VALUES... -> "LABEL  median  p90  min  (n)"
summary() {
  local label="$1"
  shift
  printf '%s\n' "$@" | sort -n | awk -v l="$label" '{a[NR]=$1} END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    p = a[int(NR * 0.9 + 0.999)]
    printf "%-22s %8d %8d %8d   (n=%d)\n", l, m, p, a[1], NR }'
}

echo "java: $LEASEHOLD_JAVA_BIN ($LEASEHOLD_JAVA_VERSION), $(nproc) cores"
printf '%-22s %8s %8s %8s\n' "" median p90 min
declare -A start_ms=()
for ((i = 0; i < starts; i++)); do
  for config in cache off; do
    start_node $config
    start_ms[$config]+=" $elapsed"
    stop_node
  done
done
for config in cache off; do
  # shellcheck disable=SC2086
  summary "server start, $config" ${start_ms[$config]}
done

start_node cache
"$launcher" --endpoints "127.0.0.1:$port" lease acquire bench/cli-start --ttl 1h > /dev/null
declare -A call_ms=()
# CONFIG ARGS... -> ms of one launcher call
call() {
  local config="$1" t0 rc=0
  shift
  t0=$(now_ms)
  case "$config" in
    cli) "$launcher" "$@" > /dev/null 2>&1 || rc=$? ;;
    cli-off) LEASEHOLD_AOT=off "$launcher" "$@" > /dev/null 2>&1 || rc=$? ;;
    node) LEASEHOLD_AOT=off LEASEHOLD_CLI_JAVA_OPTS="$node_defaults" "$launcher" "$@" > /dev/null 2>&1 || rc=$? ;;
  esac
  [ $rc = 0 ] || { echo "leasehold $* exited $rc ($config)" >&2; exit 1; }
  echo $(( $(now_ms) - t0 ))
}
for command in version get; do
  args=(--version)
  [ $command = get ] && args=(--endpoints "127.0.0.1:$port" lease get bench/cli-start)
  for config in cli cli-off node; do call $config "${args[@]}" > /dev/null; done  # one call each first
  for ((i = 0; i < runs; i++)); do
    for config in cli cli-off node; do
      call_ms[$command-$config]+=" $(call $config "${args[@]}")"
    done
  done
  for config in cli cli-off node; do
    label="--version"
    [ $command = get ] && label="lease get"
    # shellcheck disable=SC2086
    summary "$label, $config" ${call_ms[$command-$config]}
  done
done
