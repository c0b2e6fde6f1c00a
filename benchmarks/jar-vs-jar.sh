#!/usr/bin/env bash
# Two builds of Leasehold side by side: acquire-release cycles/s and acquire p50 (16 clients unless told) on
# three local nodes (deploy/local-cluster.sh up, the launcher's defaults), each build's own
# nodes and its own `leasehold bench`, fresh clusters, alternating which build goes first each
# round; then each round's ratio B/A. For a change that must not move the figures: build A
# before it (copy cli/target/leasehold.jar aside), B after.
#
#   benchmarks/jar-vs-jar.sh A.jar B.jar [ROUNDS] [WARMUP] [CLIENTS]   (default 3 rounds, 10 s warm-up, 16 clients)
#
# Needs curl and python3 (for the JSON); ports 17400-17422.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 A.jar B.jar [ROUNDS] [WARMUP] [CLIENTS]" >&2; exit 2; }
declare -A jar=([A]="$(realpath "$1")" [B]="$(realpath "$2")")
rounds="${3:-3}"
warmup="${4:-10s}"
clients="${5:-16}"
work="$(mktemp -d "${TMPDIR:-/tmp}/jar-vs-jar.XXXXXX")"
eps=127.0.0.1:17400,127.0.0.1:17410,127.0.0.1:17420
declare -A cycles p50
for r in $(seq 1 "$rounds"); do
  order="A B"
  [ $((r % 2)) -eq 0 ] && order="B A"
  for which in $order; do
    dir="$work/$which-$r"
    "$root/deploy/local-cluster.sh" up --dir "$dir" --base-port 17400 --jar "${jar[$which]}" >/dev/null
    java -jar "${jar[$which]}" bench acquire-release --clients "$clients" --duration 30s --warmup "$warmup" --endpoints "$eps" \
      -o json >"$work/$which-$r.json" || true
    "$root/deploy/local-cluster.sh" down --dir "$dir" --purge >/dev/null
    read -r c p < <(python3 -c "import json; r=json.load(open('$work/$which-$r.json'))['results']; print(r['cycles_per_s'], r['acquire']['p50_ms'])")
    cycles[$which-$r]="$c" p50[$which-$r]="$p"
    echo "round $r $which: $c cycles/s, acquire p50 $p ms"
  done
  python3 -c "print('round $r B/A: cycles %.2f, acquire p50 %.2f' % (${cycles[B-$r]} / ${cycles[A-$r]}, ${p50[B-$r]} / ${p50[A-$r]}))"
done
echo "results in $work"
