#!/usr/bin/env bash
# What a Raft group costs a node while idle: fresh three-node clusters (deploy/local-cluster.sh up,
# the launcher's defaults) formed with --lease-groups N for each N given, alternated round by
# round; after --settle seconds each node's CPU and resident memory are read from its metrics
# endpoint over --idle seconds with no client load, and `leasehold cluster groups` says which
# node leads which group.
#
#   benchmarks/group-overhead.sh [--rounds N] [--settle S] [--idle S] [--out DIR] [GROUPS...]
#
#   GROUPS     --lease-groups values to compare (default: 1 3 6; 1 is the meta group alone, N
#              above 1 is the meta group and N lease groups)
#   --rounds   rounds (default 2)
#   --settle   seconds between SERVING and the first reading (default 20)
#   --idle     seconds between the two readings (default 30)
#   --out DIR  each run's readings and the table (default ./group-overhead-results)
#
# Prints a row a run: Raft groups a node hosts, each node's CPU (cores, over the idle window) and
# resident MiB at its end, their means, and the groups each node leads. Per-group figures are the
# differences between rows divided by the difference in groups. Ports 25000-25322.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds=2
settle=20
idle=30
out="./group-overhead-results"
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --settle) settle="$2"; shift 2 ;;
    --idle) idle="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    [0-9]*) configs+=("$1"); shift ;;
    *) echo "group-overhead: $1: expected a number of lease groups or an option" >&2; exit 2 ;;
  esac
done
[ ${#configs[@]} -gt 0 ] || configs=(1 3 6)
mkdir -p "$out"
# The distribution, built if its sources are newer (the launcher's own check).
"$root/leasehold" --version > /dev/null

# node metrics address -> "cpu_seconds rss_bytes"
reading() {
  curl -fsS "http://$1/metrics" | awk '
    /^process_cpu_seconds_total / { cpu = $2 }
    /^process_resident_memory_bytes / { rss = $2 }
    END { printf "%s %s\n", cpu, rss }'
}

table="$out/runs.tsv"
[ -f "$table" ] || printf 'round\tlease-groups\tgroups a node hosts\tn1 cores\tn2 cores\tn3 cores\tmean cores\tn1 MiB\tn2 MiB\tn3 MiB\tmean MiB\tgroups led (n1 n2 n3)\n' > "$table"
n=0
for r in $(seq 1 "$rounds"); do
  for k in "${!configs[@]}"; do
    g="${configs[$(((k + r - 1) % ${#configs[@]}))]}"
    dir="$out/r$r-g$g"
    port=$((25000 + (n % 4) * 100))
    n=$((n + 1))
    rm -rf "$dir"
    mkdir -p "$dir"
    eps="127.0.0.1:$port,127.0.0.1:$((port + 10)),127.0.0.1:$((port + 20))"
    metrics=("127.0.0.1:$((port + 2))" "127.0.0.1:$((port + 12))" "127.0.0.1:$((port + 22))")
    LEASEHOLD_BUILD=never LEASEHOLD_SERVER_OPTS="--lease-groups $g" \
      "$root/deploy/local-cluster.sh" up --dir "$dir/cluster" --base-port "$port" > "$dir/up.log" 2>&1
    sleep "$settle"
    for i in 0 1 2; do reading "${metrics[$i]}" > "$dir/before-n$((i + 1))"; done
    t0=$(date +%s.%N)
    sleep "$idle"
    for i in 0 1 2; do reading "${metrics[$i]}" > "$dir/after-n$((i + 1))"; done
    t1=$(date +%s.%N)
    LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" cluster groups -o json > "$dir/groups.json" 2> "$dir/groups.err" || true
    "$root/deploy/local-cluster.sh" down --dir "$dir/cluster" --purge > /dev/null 2>&1 || true
    python3 - "$dir" "$r" "$g" "$t0" "$t1" >> "$table" << 'EOF'
import json, sys
d, r, g, t0, t1 = sys.argv[1:]
span = float(t1) - float(t0)
cells = [r, g, str(1 + (int(g) if int(g) > 1 else 0))]
cores, mib = [], []
for i in (1, 2, 3):
    b = open(f"{d}/before-n{i}").read().split()
    a = open(f"{d}/after-n{i}").read().split()
    cores.append((float(a[0]) - float(b[0])) / span)
    mib.append(float(a[1]) / 2**20)
cells += [f"{c:.3f}" for c in cores] + [f"{sum(cores) / 3:.3f}"]
cells += [f"{m:.0f}" for m in mib] + [f"{sum(mib) / 3:.0f}"]
try:
    groups = json.load(open(f"{d}/groups.json"))
    led = {m: 0 for m in ("n1", "n2", "n3")}
    for grp in groups:
        if grp["leader"]:
            led[grp["leader"]] = led.get(grp["leader"], 0) + 1
    cells.append(" ".join(str(led[m]) for m in ("n1", "n2", "n3")))
except (OSError, ValueError, KeyError) as e:
    cells.append(f"no result: {e}")
print("\t".join(cells))
EOF
    tail -1 "$table"
  done
done
