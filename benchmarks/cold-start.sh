#!/usr/bin/env bash
# A cold node as users meet it. For each configuration (JDK, JVM flags, class-data cache on or
# off): a fresh node started as the README starts one (`./leasehold server --standalone` with a
# new data dir, or with --cluster three nodes by `deploy/local-cluster.sh up`), the time until it
# is ready, then at once an acquire-release run (cold), then --load seconds of the same load, then
# a second run (warm). Configurations alternate round by round (each round starts with the next
# one); the table gives each configuration's medians.
#
#   benchmarks/cold-start.sh [--rounds N] [--duration D] [--load S] [--clients N] [--cluster]
#                            [--out DIR] [CONFIG...]
#
#   CONFIG       LABEL:JDK:CACHE[:JVM FLAGS], e.g. 25-aot:25:on or 17-c1:17:off:-XX:TieredStopAtLevel=1
#                JDK: a major version (the newest such JDK found where the launcher looks), auto
#                (the launcher's own choice), a JDK directory or a java binary. CACHE: on (the
#                launcher's class-data cache: AOT on 25+, CDS below; made before the first round
#                if missing, which is a training run of up to a minute) or off (LEASEHOLD_AOT=off).
#                JVM FLAGS: added after the launcher's default flags (LEASEHOLD_JAVA_OPTS is set
#                to both; with --cluster, -Xmx512m too, as local-cluster.sh's default has).
#                Default: 17:17:off 17-cds:17:on 25:25:off 25-aot:25:on, those whose JDK is found.
#   --rounds N   rounds (default 3)
#   --duration D each measured run, cold and warm (default 15s)
#   --load S     seconds of load between the cold and the warm run (default 60)
#   --clients N  bench workers (default 16)
#   --cluster    three nodes (deploy/local-cluster.sh up) instead of one standalone node
#   --out DIR    runs.tsv (every run) and the nodes' logs (default ./cold-start-results)
#
# Ready: from the start command to /healthz answering 200 (standalone), or to `local-cluster.sh
# up` returning (a leader elected and every node SERVING). The load comes from
# `java -jar cli/target/leasehold.jar bench acquire-release --warmup 0s` with the java on PATH
# (or $BENCH_JAVA) for every configuration, so that only the nodes differ. One standalone round
# of the four default configurations takes about 4 x (ready + 2 x duration + load): 6-7 minutes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=deploy/jvm.sh
. "$root/deploy/jvm.sh"
jar="$root/cli/target/leasehold.jar"
rounds=3
duration=15s
load=60
clients=16
cluster=0
out="./cold-start-results"
configs=()

usage() {
  sed -n '2,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --load) load="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --cluster) cluster=1; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "cold-start: unknown option $1" >&2; usage ;;
    *) configs+=("$1"); shift ;;
  esac
done
case "$rounds$load$clients" in *[!0-9]*) echo "cold-start: --rounds, --load and --clients are whole numbers" >&2; exit 2 ;; esac

bench_java="${BENCH_JAVA:-java}"

# JDK spec -> a java binary, or fails.
java_for() {
  local spec="$1" major path best=""
  case "$spec" in
    auto) (unset LEASEHOLD_JAVA; leasehold_select_java >/dev/null && echo "$LEASEHOLD_JAVA_BIN") ;;
    *[!0-9]*)
      if [ -d "$spec" ] && [ -x "$spec/bin/java" ]; then echo "$spec/bin/java"
      elif [ -x "$spec" ]; then echo "$spec"
      else return 1
      fi ;;
    *)
      while IFS=$'\t' read -r _ major _ _ path; do
        [ "$major" = "$spec" ] && best="$path"
      done < <(leasehold_list_javas | sort -s -t$'\t' -k1,1)
      [ -n "$best" ] && echo "$best" ;;
  esac
}

if [ ${#configs[@]} -eq 0 ]; then
  for c in 17:17:off 17-cds:17:on 25:25:off 25-aot:25:on; do
    IFS=: read -r _ jdk _ <<< "$c"
    if java_for "$jdk" >/dev/null; then configs+=("$c"); else echo "cold-start: no Java $jdk found; leaving out $c" >&2; fi
  done
fi
[ ${#configs[@]} -gt 0 ] || { echo "cold-start: no configuration to run" >&2; exit 2; }

declare -A cfg_java cfg_cache cfg_opts
labels=()
for c in "${configs[@]}"; do
  IFS=: read -r label jdk cache extra <<< "$c"
  case "$cache" in on|off) ;; *) echo "cold-start: $c: CACHE must be on or off" >&2; exit 2 ;; esac
  java="$(java_for "$jdk")" || { echo "cold-start: $c: no java for '$jdk'" >&2; exit 2; }
  flags="$LEASEHOLD_DEFAULT_JVM_FLAGS${extra:+ $extra}"
  [ $cluster = 1 ] && flags="$flags -Xmx512m"
  [ -n "${cfg_java[$label]:-}" ] && { echo "cold-start: label $label is given twice" >&2; exit 2; }
  labels+=("$label")
  cfg_java[$label]="$java" cfg_cache[$label]="$cache" cfg_opts[$label]="$flags"
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
runs="$out/runs.tsv"
[ -f "$runs" ] || printf 'time\tround\tconfig\tjava\tcache (off, or the file)\tflags\tready_ms\tcold_cycles_per_s\twarm_cycles_per_s\n' > "$runs"
first_row=$(($(wc -l < "$runs") + 1))

# The distribution, built if its sources are newer (the launcher's own check), then every cache
# a configuration asks for, so that no round includes a build or a training run.
LEASEHOLD_AOT=off "$root/leasehold" --version >/dev/null
for label in "${labels[@]}"; do
  [ "${cfg_cache[$label]}" = on ] || continue
  # The CLI's cache too: the launcher's `server` makes it when it is missing, which a round's
  # ready time would otherwise include.
  LEASEHOLD_JAVA="${cfg_java[$label]}" "$root/deploy/jvm.sh" cli-cache "$jar" >/dev/null
  flags="$(LEASEHOLD_JAVA="${cfg_java[$label]}" LEASEHOLD_JAVA_OPTS="${cfg_opts[$label]}" "$root/deploy/jvm.sh" cache "$jar")"
  if [ -n "$flags" ]; then
    flags="${flags%%$'\n'*}"
    cfg_cache[$label]="${flags#*=}"
  else
    echo "cold-start: $label: no class-data cache could be made; its runs have none" >&2
    cfg_cache[$label]="on, none made"
  fi
done

now_ms() { echo $(($(date +%s%N) / 1000000)); }

cycles() { # JSON file -> cycles/s, or "-"
  local v
  v="$(sed -n 's/.*"cycles_per_s":\([0-9.]*\).*/\1/p' "$1" | head -n 1)"
  echo "${v:--}"
}

bench() { # endpoints duration json-file
  "$bench_java" -jar "$jar" --endpoints "$1" bench acquire-release --clients "$clients" --duration "$2" --warmup 0s -o json \
    > "$3" 2>> "${3%.json}.err" </dev/null || true
}

node_pid=""
node_dir=""
stop_node() {
  if [ -n "$node_pid" ]; then
    kill -TERM "$node_pid" 2>/dev/null || true
    local deadline=$((SECONDS + 60))
    while kill -0 "$node_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    kill -KILL "$node_pid" 2>/dev/null || true
    node_pid=""
  fi
  if [ -n "$node_dir" ]; then
    "$root/deploy/local-cluster.sh" down --dir "$node_dir" >/dev/null 2>&1 || true
    rm -rf "$node_dir"/n[123]   # the data; the nodes' logs stay
    node_dir=""
  fi
}
trap stop_node EXIT
trap 'exit 130' INT TERM

run_one() { # round label
  local r="$1" label="$2" d base eps start ready cold warm env_cache
  d="$out/r$r-$label"
  rm -rf "$d"
  mkdir -p "$d"
  env_cache="auto"
  [ "${cfg_cache[$label]}" = off ] && env_cache=off
  start=$(now_ms)
  if [ $cluster = 1 ]; then
    base="$(leasehold_free_ports 23)"
    node_dir="$d/cluster"
    if ! LEASEHOLD_JAVA="${cfg_java[$label]}" LEASEHOLD_JAVA_OPTS="${cfg_opts[$label]}" LEASEHOLD_AOT="$env_cache" LEASEHOLD_UP_TIMEOUT=180 \
        "$root/deploy/local-cluster.sh" up --dir "$node_dir" --base-port "$base" > "$d/up.log" 2>&1; then
      echo "cold-start: $label: the cluster did not come up ($d/up.log)" >&2
      node_dir=""
      return 1
    fi
    ready=$(($(now_ms) - start))
    eps="127.0.0.1:$base,127.0.0.1:$((base + 10)),127.0.0.1:$((base + 20))"
  else
    base="$(leasehold_free_ports 3)"
    LEASEHOLD_JAVA="${cfg_java[$label]}" LEASEHOLD_JAVA_OPTS="${cfg_opts[$label]}" LEASEHOLD_AOT="$env_cache" \
      "$root/leasehold" server --standalone --client-port "$base" --peer-port "$((base + 1))" --metrics-port "$((base + 2))" \
      --data-dir "$d/n1" > "$d/node.log" 2>&1 < /dev/null &
    node_pid=$!
    until leasehold_healthz "$((base + 2))"; do
      if ! kill -0 "$node_pid" 2>/dev/null; then
        echo "cold-start: $label: the node exited ($d/node.log)" >&2
        node_pid=""
        return 1
      fi
      sleep 0.05
    done
    ready=$(($(now_ms) - start))
    eps="127.0.0.1:$base"
  fi
  bench "$eps" "$duration" "$d/cold.json"
  bench "$eps" "${load}s" "$d/load.json"
  bench "$eps" "$duration" "$d/warm.json"
  stop_node
  rm -rf "$d/n1"
  cold="$(cycles "$d/cold.json")"
  warm="$(cycles "$d/warm.json")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$r" "$label" "${cfg_java[$label]}" "${cfg_cache[$label]}" \
    "${cfg_opts[$label]}" "$ready" "$cold" "$warm" >> "$runs"
  printf 'cold-start: round %s %-12s ready %6s ms  cold %8s  warm %8s cycles/s\n' "$r" "$label" "$ready" "$cold" "$warm" >&2
}

n=${#labels[@]}
for r in $(seq 1 "$rounds"); do
  for ((k = 0; k < n; k++)); do
    label="${labels[$(((k + r - 1) % n))]}"
    run_one "$r" "$label" || true
  done
done

# Medians of this invocation's runs, per configuration, in the order given.
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '\n%-14s %6s %9s %14s %14s %10s\n' config rounds "ready ms" "cold cycles/s" "warm cycles/s" cold/warm
for label in "${labels[@]}"; do
  rows="$(tail -n +"$first_row" "$runs" | awk -F'\t' -v l="$label" '$3 == l')"
  count="$(printf '%s' "$rows" | grep -c . || true)"
  ready="$(printf '%s\n' "$rows" | awk -F'\t' 'NF && $7 != "-" {print $7}' | median)"
  cold="$(printf '%s\n' "$rows" | awk -F'\t' 'NF && $8 != "-" {print $8}' | median)"
  warm="$(printf '%s\n' "$rows" | awk -F'\t' 'NF && $9 != "-" {print $9}' | median)"
  ratio="$(awk -v c="$cold" -v w="$warm" 'BEGIN {if (c == "-" || w == "-" || w == 0) print "-"; else printf "%.2f", c / w}')"
  printf '%-14s %6s %9s %14s %14s %10s\n' "$label" "$count" "$ready" "$cold" "$warm" "$ratio"
done
echo "every run: $runs"
