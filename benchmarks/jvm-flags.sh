#!/usr/bin/env bash
# Node JVM flags side by side: for each configuration a fresh three-node cluster
# (deploy/local-cluster.sh up, the launcher's default flags plus the configuration's), then
# `leasehold bench acquire-release --clients 16` for --load seconds (its first 20 s measured on
# their own: the cold cluster, then the rest: warm), then `leasehold bench watch --rate 200
# --duration 30s` (a watcher on the leader and one on a follower); configurations alternate round
# by round (each round starts with the next one).
#
#   benchmarks/jvm-flags.sh [--rounds N] [--load S] [--out DIR] LABEL=FLAGS...
#
#   LABEL=FLAGS  e.g. base= young5=-XX:G1NewSizePercent=5 (an empty FLAGS is the defaults)
#   --rounds N   rounds (default 2)
#   --load S     seconds of 16-client load before the watch run, over 20 (default 60)
#   --out DIR    each run's JSON and the table (default ./jvm-flags-results)
#
# Prints a row a run: acquire-release cycles a second and the acquire's p50 and p99, cold and
# warm; the follower's and the leader's watcher, the time from the writer's answer to the event
# (p50, p99). Each configuration's flags get their own class-data cache, made at its
# first start (a training run of about a minute). Ports 24000-24322.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=deploy/jvm.sh
. "$root/deploy/jvm.sh"
rounds=2
load=60
out="./jvm-flags-results"
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --load) load="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *=*) configs+=("$1"); shift ;;
    *) echo "jvm-flags: $1: expected LABEL=FLAGS" >&2; exit 2 ;;
  esac
done
[ ${#configs[@]} -gt 0 ] || { echo "jvm-flags: name at least one LABEL=FLAGS" >&2; exit 2; }
mkdir -p "$out"
leasehold_select_java
base="$(leasehold_default_flags)"
# The distribution, built if its sources are newer (the launcher's own check).
"$root/leasehold" --version > /dev/null

table="$out/runs.tsv"
[ "$load" -gt 20 ] 2>/dev/null || { echo "jvm-flags: --load: more than 20 seconds, got $load" >&2; exit 2; }
[ -f "$table" ] || printf 'round\tconfig\tcold cycles/s\tcold acquire p50 ms\tcold acquire p99 ms\twarm cycles/s\twarm acquire p50 ms\twarm acquire p99 ms\tfollower p50 ms\tfollower p99 ms\tleader p50 ms\tleader p99 ms\n' > "$table"
n=0
for r in $(seq 1 "$rounds"); do
  for k in "${!configs[@]}"; do
    c="${configs[$(((k + r - 1) % ${#configs[@]}))]}"
    label="${c%%=*}" extra="${c#*=}"
    dir="$out/r$r-$label"
    port=$((24000 + (n % 4) * 100))
    n=$((n + 1))
    rm -rf "$dir"
    mkdir -p "$dir"
    eps="127.0.0.1:$port,127.0.0.1:$((port + 10)),127.0.0.1:$((port + 20))"
    LEASEHOLD_BUILD=never LEASEHOLD_JAVA_OPTS="$base $extra" \
      "$root/deploy/local-cluster.sh" up --dir "$dir/cluster" --base-port "$port" > "$dir/up.log" 2>&1
    LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" bench acquire-release --clients 16 \
      --warmup 0s --duration 20s -o json > "$dir/cold.json" 2> "$dir/cold.err" || true
    LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" bench acquire-release --clients 16 \
      --warmup 0s --duration "$((load - 20))s" -o json > "$dir/load.json" 2> "$dir/load.err" || true
    LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" bench watch --rate 200 \
      --duration 30s -o json > "$dir/watch.json" 2> "$dir/watch.err" || true
    "$root/deploy/local-cluster.sh" down --dir "$dir/cluster" --purge > /dev/null 2>&1 || true
    python3 - "$dir" "$r" "$label" >> "$table" << 'EOF'
import json, sys
d, r, label = sys.argv[1:]
cells = [r, label]
for run in ("cold", "load"):
    try:
        res = json.load(open(f"{d}/{run}.json"))["results"]
        cells += [str(res["cycles_per_s"]), str(res["acquire"]["p50_ms"]), str(res["acquire"]["p99_ms"])]
    except (OSError, ValueError, KeyError) as e:
        cells += [f"no result: {e}", "", ""]
try:
    res = json.load(open(f"{d}/watch.json"))["results"]
    f, l = res["follower_reply_to_watch"], res["leader_reply_to_watch"]
    cells += [str(f["p50_ms"]), str(f["p99_ms"]), str(l["p50_ms"]), str(l["p99_ms"])]
except (OSError, ValueError, KeyError) as e:
    cells.append(f"no result: {e}")
print("\t".join(cells))
EOF
    tail -1 "$table"
  done
done
