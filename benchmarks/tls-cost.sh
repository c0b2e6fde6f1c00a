#!/usr/bin/env bash
# What mutual TLS with client-certificate authentication costs: acquire-release cycles/s at 16
# clients on three local nodes in plaintext (deploy/local-cluster.sh up) and with --tls (mutual
# TLS on both transports, client certificates required, roles checked), fresh clusters
# alternated, then each pair's ratio.
#
#   benchmarks/tls-cost.sh [ROUNDS] [WARMUP]     (default 2 rounds, the bench's 10 s warm-up)
#
# Needs openssl (deploy/tls/make-certs.sh) and curl; builds the jar if it is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds="${1:-2}"
warmup="${2:-10s}"
jar="$root/cli/target/leasehold.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl cli -am)
work="$(mktemp -d "${TMPDIR:-/tmp}/tls-cost.XXXXXX")"
"$root/deploy/tls/make-certs.sh" "$work/certs" admin >/dev/null
eps=127.0.0.1:17400,127.0.0.1:17410,127.0.0.1:17420
declare -A result
for r in $(seq 1 "$rounds"); do
  for mode in plaintext tls; do
    dir="$work/$mode-$r"
    tls_up=() tls_cli=()
    if [ "$mode" = tls ]; then
      tls_up=(--tls "$work/certs")
      tls_cli=(--cacert "$work/certs/ca.pem" --cert "$work/certs/admin.pem" --key "$work/certs/admin-key.pem")
    fi
    "$root/deploy/local-cluster.sh" up --dir "$dir" --base-port 17400 --jar "$jar" "${tls_up[@]}" >/dev/null
    java -jar "$jar" bench acquire-release --clients 16 --duration 30s --warmup "$warmup" --endpoints "$eps" \
      "${tls_cli[@]}" -o json >"$work/$mode-$r.json" || true
    "$root/deploy/local-cluster.sh" down --dir "$dir" --purge >/dev/null
    result[$mode-$r]="$(python3 -c "import json; print(json.load(open('$work/$mode-$r.json'))['results']['cycles_per_s'])")"
    echo "round $r $mode: ${result[$mode-$r]} cycles/s"
  done
  python3 -c "print('round $r tls/plaintext: %.2f' % (${result[tls-$r]} / ${result[plaintext-$r]}))"
done
echo "results in $work"
