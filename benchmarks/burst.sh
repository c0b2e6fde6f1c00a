#!/usr/bin/env bash
# A proxy's start, side by side with etcd: from one call to holding N leases. Fresh three-node
# clusters of each on this machine (Leasehold from deploy/local-cluster.sh with its defaults, etcd
# with its own), then BurstAcquire: each round claims fresh names through the SDK's acquireAll,
# through AcquireMany calls of 1,000 names on the generated gRPC stubs spread over the nodes (raw:
# the cluster's share, no SDK) and all sent to the leader (raw-leader), through N concurrent
# tryAcquire calls (up to 500 names), and through
# etcd transactions under one lease, alternating which goes first; after each Leasehold burst it
# holds the leases two TTLs and counts any that were lost. The first round is the cold one (fresh
# processes, nothing compiled).
#
#   benchmarks/burst.sh [--rounds N] [--sizes LIST] [--ttl D] [--shape session|ttl] [--out DIR]
#
#   --rounds N     rounds (default 5)
#   --sizes LIST   names per burst, comma-separated (default 500,10000)
#   --ttl D        the leases' TTL (default 2s, the shortest a namespace allows by default)
#   --shape S      session (default): the leases live with the client's session, whose TTL is
#                  --ttl, one keep-alive for all, the shape of etcd's one lease; ttl: a TTL each,
#                  renewed in Renew batches
#   --out DIR      where the clusters, logs and results.jsonl go (default ./burst-results)
#
# Installs Debian's etcd-server when `etcd` is missing (needs root). Builds the distribution and
# the benchmarks jar when their sources are newer. Prints the medians of every way and size, and
# etcd's median over each Leasehold median.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
rounds=5
sizes=500,10000
ttl=2s
shape=session
out="./burst-results"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --ttl) ttl="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2 ;;
    *) echo "burst: unknown option $1" >&2; exit 2 ;;
  esac
done
log() { echo "burst: $*" >&2; }

if ! command -v "${ETCD:-etcd}" >/dev/null 2>&1; then
  log "installing etcd-server (Debian)"
  apt-get install -y -qq etcd-server >/dev/null
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
lh_dir="$out/leasehold"
etcd_dir="$out/etcd"
lh_endpoints="127.0.0.1:7700,127.0.0.1:7710,127.0.0.1:7720"
etcd_endpoints="127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793"

stop_all() {
  local p
  for p in $(cat "$etcd_dir"/e*.pid 2>/dev/null || true); do kill "$p" 2>/dev/null || true; done
  LEASEHOLD_JAR="$jar" "$root/deploy/local-cluster.sh" down --dir "$lh_dir" >/dev/null 2>&1 || true
}
trap stop_all EXIT

rm -rf "$etcd_dir" "$lh_dir"; mkdir -p "$etcd_dir"
cluster="e1=http://127.0.0.1:23801,e2=http://127.0.0.1:23802,e3=http://127.0.0.1:23803"
for i in 1 2 3; do
  "${ETCD:-etcd}" --name "e$i" --data-dir "$etcd_dir/e$i" \
    --listen-client-urls "http://127.0.0.1:2379$i" --advertise-client-urls "http://127.0.0.1:2379$i" \
    --listen-peer-urls "http://127.0.0.1:2380$i" --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token burst \
    > "$etcd_dir/e$i.log" 2>&1 &
  echo $! > "$etcd_dir/e$i.pid"
done
deadline=$((SECONDS + 60))
until curl -fsS --max-time 2 http://127.0.0.1:23791/health 2>/dev/null | grep -q '"true"'; do
  [ $SECONDS -lt $deadline ] || { log "etcd did not become healthy; see $etcd_dir"; exit 1; }
  sleep 0.5
done
log "starting Leasehold (deploy/local-cluster.sh up) in $lh_dir"
LEASEHOLD_JAR="$jar" "$root/deploy/local-cluster.sh" up --dir "$lh_dir" --base-port 7700 >/dev/null

results="$out/results.jsonl"
"$java_bin" -cp "$bjar" io.leasehold.benchmarks.BurstAcquire --endpoints "$lh_endpoints" \
  --etcd-endpoints "$etcd_endpoints" --sizes "$sizes" --rounds "$rounds" --ttl "$ttl" --shape "$shape" \
  > "$results" 2> "$out/burst.log" || { log "a lease was lost or a run failed; see $out/burst.log"; status=1; }

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault((r["names"], r["way"]), []).append(r["ms"])
print("names  way         rounds  first(ms)  median(ms)  etcd/this")
for (n, way), ms in sorted(by.items()):
    etcd = by.get((n, "etcd"))
    ratio = statistics.median(etcd) / statistics.median(ms) if etcd else float("nan")
    print(f"{n:5d}  {way:10s}  {len(ms):6d}  {ms[0]:9.1f}  {statistics.median(ms):10.1f}  {ratio:9.2f}")
lost = max((r["lost"] for r in rows), default=0)
print(f"leases lost: {lost}")
PY
exit "${status:-0}"
