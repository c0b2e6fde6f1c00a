#!/usr/bin/env bash
# Writes on one Raft group against writes spread over lease groups, on the same three node
# processes: fresh clusters (deploy/local-cluster.sh up, the launcher's defaults) formed with
# --lease-groups N for each N given, alternated round by round. Once every lease group has a
# leader, `leasehold bench acquire-release` runs --clients workers over --namespaces namespaces
# (each namespace is placed on a lease group of its own while groups last; with one group all
# stay in the meta group), through every node's endpoint.
#
#   benchmarks/group-writes.sh [--rounds N] [--clients N] [--namespaces N] [--warmup S]
#                              [--duration S] [--out DIR] [GROUPS...]
#
#   GROUPS        --lease-groups values to compare (default: 1 3)
#   --rounds      rounds (default 3)
#   --clients     bench workers (default 16)
#   --namespaces  namespaces the names spread over (default 3)
#   --warmup      seconds of load before measuring (default 30)
#   --duration    seconds measured (default 30)
#   --out DIR     each run's report and the table (default ./group-writes-results)
#
# Prints a row a run: cycles (acquire + release) a second, acquire p50 and p99, each node's CPU
# (cores) and their sum, and the CPU a cycle costs the three nodes together. Ports 26000-26322.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds=3
clients=16
namespaces=3
warmup=30
duration=30
out="./group-writes-results"
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --namespaces) namespaces="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    [0-9]*) configs+=("$1"); shift ;;
    *) echo "group-writes: $1: expected a number of lease groups or an option" >&2; exit 2 ;;
  esac
done
[ ${#configs[@]} -gt 0 ] || configs=(1 3)
mkdir -p "$out"
"$root/leasehold" --version > /dev/null

table="$out/runs.tsv"
[ -f "$table" ] || printf 'round\tlease-groups\tcycles/s\tacquire p50 ms\tacquire p99 ms\tn1 cores\tn2 cores\tn3 cores\tsum cores\tCPU ms a cycle\tnamespaces by group\n' > "$table"
n=0
for r in $(seq 1 "$rounds"); do
  for k in "${!configs[@]}"; do
    g="${configs[$(((k + r - 1) % ${#configs[@]}))]}"
    dir="$out/r$r-g$g"
    port=$((26000 + (n % 4) * 100))
    n=$((n + 1))
    rm -rf "$dir"
    mkdir -p "$dir"
    eps="127.0.0.1:$port,127.0.0.1:$((port + 10)),127.0.0.1:$((port + 20))"
    LEASEHOLD_BUILD=never LEASEHOLD_SERVER_OPTS="--lease-groups $g" \
      "$root/deploy/local-cluster.sh" up --dir "$dir/cluster" --base-port "$port" > "$dir/up.log" 2>&1
    # Every lease group led (and the meta group), so the first writes place their namespaces.
    for _ in $(seq 1 120); do
      if LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" cluster groups -o json 2> /dev/null \
        | python3 -c 'import json,sys; gs=json.load(sys.stdin); sys.exit(0 if gs and all(x["leader"] for x in gs) else 1)'; then
        break
      fi
      sleep 0.5
    done
    LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" bench acquire-release \
      --clients "$clients" --namespaces "$namespaces" --warmup "${warmup}s" --duration "${duration}s" \
      -o json > "$dir/bench.json" 2> "$dir/bench.err" || true
    LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" cluster groups -o json > "$dir/groups.json" 2> /dev/null || true
    "$root/deploy/local-cluster.sh" down --dir "$dir/cluster" --purge > /dev/null 2>&1 || true
    python3 - "$dir" "$r" "$g" >> "$table" << 'PY'
import json, sys
d, r, g = sys.argv[1:]
try:
    b = json.load(open(d + "/bench.json"))
except Exception as e:
    print("\t".join([r, g, "failed: " + str(e)]))
    sys.exit(0)
res = b["results"]
cores = [n.get("cores") or 0.0 for n in b.get("nodes", [])]
cycles = res["cycles_per_s"]
try:
    groups = json.load(open(d + "/groups.json"))
    placed = " ".join("%d:%s" % (x["number"], ",".join(x.get("namespaces", [])) or "-") for x in groups)
except Exception:
    placed = "?"
cells = [r, g, "%.0f" % cycles, str(res["acquire"]["p50_ms"]), str(res["acquire"]["p99_ms"])]
cells += ["%.2f" % c for c in (cores + [0.0] * 3)[:3]]
cells += ["%.2f" % sum(cores), "%.3f" % (1000 * sum(cores) / cycles if cycles else 0), placed]
print("\t".join(cells))
PY
    tail -1 "$table"
  done
done
column -t -s $'\t' "$table"
