#!/usr/bin/env bash
# Leasehold against etcd on this machine, side by side: three-node clusters of each, every node
# its own OS process as deployed (Leasehold from deploy/local-cluster.sh, etcd with its defaults),
# the same workloads and load loop against both (leasehold bench; etcd through jetcd), alternated
# round by round, then a table of every round's figures and the ratio of the medians.
#
#   benchmarks/compare.sh [--rounds N] [--duration D] [--warmup D] [--jit-warmup D]
#                         [--workloads LIST] [--out DIR] [--no-cold] [--no-failover] [--quick]
#
#   --rounds N        rounds of every workload on each system, alternating which goes first (default 2)
#   --duration D      measured time of each run (default 20s); --warmup D before it (default 5s)
#   --jit-warmup D    load on each cluster before the first round, discarded (default 120s): a
#                     Leasehold node's JIT compiler takes minutes to settle on two cores
#   --workloads LIST  comma-separated among acquire-release,renew,contended-lock,watch
#                     (default: all of them)
#   --out DIR         where the clusters, logs and results.jsonl go (default ./compare-results)
#   --no-cold         skip the cold phase (below)
#   --no-failover     skip the failover runs (each starts and kills clusters of its own)
#   --quick           one round, 10 s runs, 30 s JIT warm-up: to try the script, not for figures
#
# acquire-release runs Leasehold two ways: through the Java SDK (leasehold bench, every write to
# the leader) and through the generated gRPC stubs with no SDK, the workers spread round-robin
# over the three nodes (RawBench --spread: a follower forwards each write to the leader), the way
# a service in another language calls it; etcd in its two shapes (a session lease a client, or a
# lease per name). With acquire-release among the workloads, the JIT warm-up also runs the raw
# client spread, so the followers' forwarding is compiled too.
#
# Cold phase (first, unless --no-cold; with acquire-release among the workloads): what a fresh
# cluster gives its first users, before any JIT warm-up. For each round, each system on a fresh
# cluster of its own, alone on the machine, alternating which goes first: the first 15 s of
# acquire-release at 16 clients, no warm-up, throughput reported per 5 s window (Leasehold: the
# raw client spread over the nodes; etcd: the session shape). Then the clusters of the rounds
# above are started fresh.
#
# Installs Debian's etcd-server when `etcd` is missing (needs root). Builds the Leasehold
# distribution and the benchmarks jar when their sources are newer. Both clusters run throughout
# the rounds: the one not being measured is idle (its idle CPU is measured and printed first).
# Stopping it (SIGSTOP) instead made every resumed Raft group elect a new leader, which disturbed
# the runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds=2
duration=20s
warmup=5s
jit_warmup=120s
workloads="acquire-release,renew,contended-lock,watch"
out="./compare-results"
failover=1
cold=1
# The cold phase's runs: the first 15 s of load on a fresh cluster, in 5 s windows, 16 clients.
cold_duration=15s
cold_window=5s
cold_clients=16

usage() {
  # The comment block at the top, up to the first line that is not a comment.
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --jit-warmup) jit_warmup="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-cold) cold=0; shift ;;
    --no-failover) failover=0; shift ;;
    --quick) rounds=1; duration=10s; warmup=3s; jit_warmup=30s; shift ;;
    -h|--help) usage ;;
    *) echo "compare: unknown option $1" >&2; usage ;;
  esac
done
case "$rounds" in ''|*[!0-9]*) echo "compare: --rounds must be a positive number, got '$rounds'" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "compare: --rounds must be at least 1" >&2; exit 2; }
for w in ${workloads//,/ }; do
  case "$w" in acquire-release|renew|contended-lock|watch) ;; *) echo "compare: --workloads: unknown workload '$w'" >&2; exit 2 ;; esac
done

log() { printf '[compare] %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------------
if ! command -v etcd >/dev/null 2>&1; then
  log "installing etcd-server (Debian)"
  if [ "$(id -u)" -ne 0 ]; then echo "compare: etcd is missing and installing it needs root (apt-get install etcd-server)" >&2; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null
  # Debian's package starts a default member on 2379 where an init system runs; this script runs its own.
  pkill -x etcd 2>/dev/null || true
fi
jar="$root/cli/target/leasehold.jar"
bjar="$root/benchmarks/target/benchmarks.jar"
if [ ! -f "$bjar" ] || [ -n "$(find "$root" -path "$root/.git" -prune -o \( -name pom.xml -o -path '*/src/main/*' \) -newer "$bjar" -print 2>/dev/null | head -n 1)" ]; then
  log "building the distribution and the benchmarks jar"
  (cd "$root" && mvn -B -q -DskipTests -pl cli,benchmarks -am package) >&2
fi
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
results="$out/results.jsonl"
: > "$results"

# --- clusters ----------------------------------------------------------------------------------
# The rounds' clusters; the cold phase's each have directories of their own under cold<round>/.
lh_dir="$out/leasehold"
etcd_dir="$out/etcd"
lh_base=7600
lh_endpoints="127.0.0.1:7600,127.0.0.1:7610,127.0.0.1:7620"
etcd_endpoints="127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793"

etcd_pids() { cat "$etcd_dir"/e*.pid 2>/dev/null || true; }
leasehold_pids() { cat "$lh_dir"/n*.pid 2>/dev/null || true; }

start_etcd() {
  rm -rf "$etcd_dir"; mkdir -p "$etcd_dir"
  local cluster="e1=http://127.0.0.1:23801,e2=http://127.0.0.1:23802,e3=http://127.0.0.1:23803" i
  for i in 1 2 3; do
    "${ETCD:-etcd}" --name "e$i" --data-dir "$etcd_dir/e$i" \
      --listen-client-urls "http://127.0.0.1:2379$i" --advertise-client-urls "http://127.0.0.1:2379$i" \
      --listen-peer-urls "http://127.0.0.1:2380$i" --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
      --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token compare \
      > "$etcd_dir/e$i.log" 2>&1 &
    echo $! > "$etcd_dir/e$i.pid"
  done
  local deadline=$((SECONDS + 60))
  until curl -fsS --max-time 2 http://127.0.0.1:23791/health 2>/dev/null | grep -q '"true"'; do
    [ $SECONDS -lt $deadline ] || { echo "compare: etcd did not become healthy; see $etcd_dir" >&2; exit 1; }
    sleep 0.5
  done
}

start_leasehold() {
  LEASEHOLD_JAR="$jar" "$root/deploy/local-cluster.sh" up --dir "$lh_dir" --base-port "$lh_base" >/dev/null
}

# Stops both clusters (those of the current directories) and waits for etcd's processes to end,
# so the next fresh cluster finds its ports free.
stop_all() {
  local p deadline=$((SECONDS + 30))
  for p in $(etcd_pids); do kill "$p" 2>/dev/null || true; done
  for p in $(etcd_pids); do
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
  done
  rm -f "$etcd_dir"/e*.pid
  LEASEHOLD_JAR="$jar" "$root/deploy/local-cluster.sh" down --dir "$lh_dir" >/dev/null 2>&1 || true
}
trap stop_all EXIT

# CPU seconds (user + system) of the given processes so far.
cpu_seconds() {
  local total=0 p t
  for p in "$@"; do
    t="$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)"
    total=$((total + t))
  done
  awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

lh() { "$java_bin" ${LEASEHOLD_JAVA_OPTS:-} -jar "$jar" --endpoints "$lh_endpoints" bench "$@" -o json; }
raw_bench() { "$java_bin" -cp "$bjar" io.leasehold.benchmarks.compare.RawBench --endpoints "$lh_endpoints" "$@"; }
etcd_bench() { "$java_bin" -cp "$bjar" io.leasehold.benchmarks.compare.EtcdBench --endpoints "$etcd_endpoints" "$@"; }

# One workload on one system (leasehold: the SDK; leasehold-raw: the gRPC stubs; etcd), its JSON
# appended to the results (a failed run is logged and skipped).
run() { # system workload args...
  local system="$1"; shift
  local line
  case "$system" in
    leasehold) line="$(lh "$@" 2>>"$out/leasehold-bench.log")" || true ;;
    leasehold-raw) line="$(raw_bench "$@" 2>>"$out/leasehold-raw-bench.log")" || true ;;
    *) line="$(etcd_bench "$@" 2>>"$out/etcd-bench.log")" || true ;;
  esac
  if [ -n "$line" ]; then
    printf '%s\n' "$line" >> "$results"
    log "$system $*: done"
  else
    log "$system $*: no result (see $out/$system-bench.log)"
  fi
}

with_acquire_release=0
case ",$workloads," in *,acquire-release,*) with_acquire_release=1 ;; esac

# --- cold phase: each system's first 15 s on a fresh cluster of its own, before any JIT warm-up --
if [ "$cold" -eq 1 ] && [ "$with_acquire_release" -eq 1 ]; then
  cold_common=(--clients "$cold_clients" --warmup 0s --duration "$cold_duration" --windows "$cold_window" --phase cold)
  for ((round = 1; round <= rounds; round++)); do
    if [ $((round % 2)) -eq 1 ]; then order="leasehold-raw etcd"; else order="etcd leasehold-raw"; fi
    for system in $order; do
      lh_dir="$out/cold$round/leasehold"
      etcd_dir="$out/cold$round/etcd"
      log "cold round $round: $system on a fresh cluster, the first $cold_duration of load"
      if [ "$system" = etcd ]; then
        start_etcd
        run etcd acquire-release --shape session "${cold_common[@]}"
      else
        start_leasehold
        run leasehold-raw acquire-release --spread "${cold_common[@]}"
      fi
      stop_all
    done
  done
  lh_dir="$out/leasehold"
  etcd_dir="$out/etcd"
fi

log "starting etcd (3 processes) and Leasehold (3 processes) in $out"
start_etcd
start_leasehold

# The workloads and their settings; acquire-release runs etcd in both of its shapes.
specs=()
for w in ${workloads//,/ }; do
  case "$w" in
    acquire-release) for c in 1 16 64; do specs+=("acquire-release --clients $c"); done ;;
    renew) specs+=("renew --clients 10 --leases 10000 --ttl 10s") ;;
    contended-lock) specs+=("contended-lock --clients 16 --names 2") ;;
    watch) specs+=("watch --rate 200") ;;
  esac
done

log "JIT warm-up: $jit_warmup of acquire-release at 16 clients on each system (discarded)"
lh acquire-release --clients 16 --duration "$jit_warmup" --warmup 0s >/dev/null 2>>"$out/leasehold-bench.log" || true
if [ "$with_acquire_release" -eq 1 ]; then
  log "JIT warm-up: $jit_warmup more of it through the gRPC stubs spread over the nodes (discarded)"
  raw_bench acquire-release --clients 16 --spread --duration "$jit_warmup" --warmup 0s >/dev/null 2>>"$out/leasehold-raw-bench.log" || true
fi
etcd_bench acquire-release --clients 16 --duration "$jit_warmup" --warmup 0s >/dev/null 2>>"$out/etcd-bench.log" || true

# What each idle cluster costs the other's runs.
lh_cpu0="$(cpu_seconds $(leasehold_pids))"; etcd_cpu0="$(cpu_seconds $(etcd_pids))"
sleep 20
lh_idle="$(awk -v a="$lh_cpu0" -v b="$(cpu_seconds $(leasehold_pids))" 'BEGIN { printf "%.3f", (b - a) / 20 }')"
etcd_idle="$(awk -v a="$etcd_cpu0" -v b="$(cpu_seconds $(etcd_pids))" 'BEGIN { printf "%.3f", (b - a) / 20 }')"
log "idle: Leasehold's three nodes use $lh_idle cores, etcd's $etcd_idle"
printf 'idle cores: leasehold %s, etcd %s\n' "$lh_idle" "$etcd_idle" > "$out/idle.txt"

for ((round = 1; round <= rounds; round++)); do
  for spec in "${specs[@]}"; do
    # shellcheck disable=SC2086 # spec is a list of options
    set -- $spec
    common=(--duration "$duration" --warmup "$warmup")
    if [ $((round % 2)) -eq 1 ]; then order="leasehold etcd"; else order="etcd leasehold"; fi
    for system in $order; do
      if [ "$system" = etcd ] && [ "$1" = acquire-release ]; then
        run etcd "$@" "${common[@]}" --shape session
        run etcd "$@" "${common[@]}" --shape lease
      elif [ "$1" = acquire-release ]; then
        run leasehold "$@" "${common[@]}"
        run leasehold-raw "$@" "${common[@]}" --spread
      else
        run "$system" "$@" "${common[@]}"
      fi
    done
  done
done

stop_all
trap - EXIT

if [ "$failover" -eq 1 ]; then
  log "failover: Leasehold, then etcd (each kills the leader of a cluster of its own 5 times)"
  line="$("$java_bin" -jar "$jar" bench failover -o json 2>>"$out/leasehold-bench.log")" && printf '%s\n' "$line" >> "$results" || log "leasehold failover: no result"
  line="$("$java_bin" -cp "$bjar" io.leasehold.benchmarks.compare.EtcdBench failover 2>>"$out/etcd-bench.log")" && printf '%s\n' "$line" >> "$results" || log "etcd failover: no result"
fi

echo
{
  "$java_bin" -cp "$bjar" io.leasehold.benchmarks.compare.CompareTable "$results"
  echo
  cat "$out/idle.txt" 2>/dev/null || true
} | tee "$out/table.txt"
echo
echo "runs: $results; table: $out/table.txt"
