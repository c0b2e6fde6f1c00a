#!/usr/bin/env bash
# Lease groups on every node against lease groups on subsets of them, on the same number of node
# processes: fresh clusters of --nodes nodes, each started as the README starts a node
# (./leasehold server --id --peers --data-dir, every other option the default) with
# --lease-groups G, and with --lease-group-size R or without, alternated round by round. Once
# every group has a leader, `leasehold bench acquire-release` runs --clients workers over
# --namespaces namespaces (placed on the groups by their first writes) through every node's
# endpoint.
#
#   benchmarks/subset-writes.sh [--rounds N] [--nodes N] [--groups G] [--size R] [--clients N]
#                               [--namespaces N] [--warmup S] [--duration S] [--out DIR]
#
#   --rounds      rounds (default 3)
#   --nodes       node processes (default 9)
#   --groups      --lease-groups (default 3)
#   --size        --lease-group-size of the subset runs (default 3)
#   --clients     bench workers (default 16)
#   --namespaces  namespaces the names spread over (default 3)
#   --warmup      seconds of load before measuring (default 30)
#   --duration    seconds measured (default 30)
#   --out DIR     each run's report and the table (default ./subset-writes-results)
#
# Prints a row a run: cycles (acquire + release) a second, acquire p50 and p99, the nodes' CPU
# (cores) summed, the CPU a cycle costs them together, each node's CPU and the groups it leads,
# and the namespaces each group holds. Ports 27000-27399.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds=3
nodes=9
groups=3
size=3
clients=16
namespaces=3
warmup=30
duration=30
out="./subset-writes-results"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --groups) groups="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --namespaces) namespaces="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *) echo "subset-writes: $1: unknown option" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
"$root/leasehold" --version > /dev/null
# The nodes' and the CLI's class-data caches, made now as local-cluster.sh makes them before its
# nodes start: otherwise one node of the first run trains it while the others serve.
"$root/deploy/jvm.sh" cache > /dev/null
"$root/deploy/jvm.sh" cli-cache > /dev/null

pids=()
stop_nodes() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  pids=()
}
trap stop_nodes EXIT

table="$out/runs.tsv"
[ -f "$table" ] || printf 'round\tgroup size\tcycles/s\tacquire p50 ms\tacquire p99 ms\tsum cores\tCPU ms a cycle\tcores by node\tgroups led by node\tnamespaces by group\n' > "$table"
n=0
for r in $(seq 1 "$rounds"); do
  for k in 0 1; do
    # Alternate which configuration goes first, round by round.
    if [ $(((k + r) % 2)) -eq 0 ]; then s=0; else s="$size"; fi
    dir="$out/r$r-size$s"
    base=$((27000 + (n % 4) * 100))
    n=$((n + 1))
    rm -rf "$dir"
    mkdir -p "$dir"
    peers=""
    eps=""
    for i in $(seq 1 "$nodes"); do
      port=$((base + (i - 1) * 10))
      peers="${peers:+$peers,}n$i=127.0.0.1:$((port + 1)):$port"
      eps="${eps:+$eps,}127.0.0.1:$port"
    done
    opts=(--lease-groups "$groups")
    [ "$s" = 0 ] || opts+=(--lease-group-size "$s")
    for i in $(seq 1 "$nodes"); do
      LEASEHOLD_BUILD=never "$root/leasehold" server --id "n$i" --peers "$peers" \
        --data-dir "$dir/n$i" "${opts[@]}" > "$dir/n$i.log" 2>&1 &
      pids+=($!)
    done
    # Every group led (the meta group and each lease group) and holding the global state, which it
    # takes once the meta group applies log format 6: from then on the first writes place their
    # namespaces on lease groups.
    led=no
    for _ in $(seq 1 240); do
      if LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" cluster groups -o json 2> /dev/null \
        | python3 -c 'import json,sys; gs=json.load(sys.stdin); sys.exit(0 if len(gs) == int(sys.argv[1]) + 1 and all(x["leader"] and (x["number"] == 0 or any((m.get("globalVersion") or 0) > 0 for m in x["members"])) for x in gs) else 1)' "$groups" 2> /dev/null; then
        led=yes
        break
      fi
      sleep 0.5
    done
    if [ "$led" = yes ]; then
      LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" bench acquire-release \
        --clients "$clients" --namespaces "$namespaces" --warmup "${warmup}s" --duration "${duration}s" \
        -o json > "$dir/bench.json" 2> "$dir/bench.err" || true
      LEASEHOLD_BUILD=never "$root/leasehold" --endpoints "$eps" cluster groups -o json > "$dir/groups.json" 2> /dev/null || true
    else
      echo "not every group had a leader after 120 s" > "$dir/bench.err"
    fi
    stop_nodes
    python3 - "$dir" "$r" "$s" "$nodes" >> "$table" << 'PY'
import json, sys
d, r, s, nodes = sys.argv[1:]
nodes = int(nodes)
try:
    b = json.load(open(d + "/bench.json"))
except Exception as e:
    print("\t".join([r, s, "failed: " + open(d + "/bench.err").read().strip()[-200:].replace("\n", " ")]))
    sys.exit(0)
res = b["results"]
cores = [n.get("cores") or 0.0 for n in b.get("nodes", [])]
cycles = res["cycles_per_s"]
led = {}
placed = "?"
try:
    groups = json.load(open(d + "/groups.json"))
    for g in groups:
        if g.get("leader"):
            led[g["leader"]] = led.get(g["leader"], 0) + 1
    placed = " ".join("%d:%s" % (x["number"], ",".join(x.get("namespaces", [])) or "-") for x in groups)
except Exception:
    pass
cells = [r, s if s != "0" else "all", "%.0f" % cycles, str(res["acquire"]["p50_ms"]), str(res["acquire"]["p99_ms"])]
cells += ["%.2f" % sum(cores), "%.3f" % (1000 * sum(cores) / cycles if cycles else 0)]
cells += [" ".join("%.2f" % c for c in cores), " ".join(str(led.get("n%d" % i, 0)) for i in range(1, nodes + 1)), placed]
print("\t".join(cells))
PY
    tail -1 "$table"
  done
done
column -t -s $'\t' "$table"
