#!/usr/bin/env bash
# Three Leasehold nodes on loopback, from the built distribution (cli/target/leasehold.jar).
#
#   deploy/local-cluster.sh up     [--dir DIR] [--base-port PORT] [--jar JAR] [--tls CERTS]
#   deploy/local-cluster.sh status [--dir DIR]
#   deploy/local-cluster.sh down   [--dir DIR] [--purge]
#
# Node i (1-3) gets the client port BASE+10(i-1), the peer port +1 and the metrics port +2
# (7400/7401/7402, 7410/..., 7420/... by default) and the data dir DIR/n<i>. `up` waits until a
# leader is elected and every node is SERVING, then prints the endpoints; if that takes longer
# than LEASEHOLD_UP_TIMEOUT, or a node exits, it stops the nodes it started and exits 1 (the
# logs stay). `down` stops only the processes `up` started (their pids are in DIR/n<i>.pid);
# --purge also deletes the data. With --tls CERTS (made by deploy/tls/make-certs.sh CERTS [NAME...]),
# node i uses CERTS/n<i>.pem and n<i>-key.pem with CERTS/ca.pem: mutual TLS on the client, metrics
# and Raft ports, client certificates required, and the identity "admin" (make its certificate
# with make-certs.sh CERTS admin) as the initial admin; status and the health checks then use curl
# over HTTPS with n1's certificate.
# Environment: LEASEHOLD_CLUSTER_DIR (default ./local-cluster), LEASEHOLD_JAR, LEASEHOLD_JAVA_OPTS
# (default: the launcher's flags), LEASEHOLD_SERVER_OPTS (more `leasehold server` options for
# every node, e.g. "--snapshot-threshold 10000"), LEASEHOLD_UP_TIMEOUT (seconds, default 60).
# The nodes' JVM and its class-data cache are the launcher's (deploy/jvm.sh): LEASEHOLD_JAVA, else
# JAVA_HOME, else the newest Java 17+ found; the cache is made before the nodes start if it is
# missing or older than the jar; LEASEHOLD_AOT=off runs without it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=deploy/jvm.sh
. "$here/jvm.sh"
cmd="${1:-}"
[ $# -gt 0 ] && shift
dir="${LEASEHOLD_CLUSTER_DIR:-./local-cluster}"
base=""
jar="${LEASEHOLD_JAR:-$root/cli/target/leasehold.jar}"
purge=0
tls_arg=""
tls=""
timeout="${LEASEHOLD_UP_TIMEOUT:-60}"

usage() {
  sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --base-port) base="$2"; shift 2 ;;
    --jar) jar="$2"; shift 2 ;;
    --purge) purge=1; shift ;;
    --tls) tls_arg="${2:?--tls needs the directory that make-certs.sh wrote}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "local-cluster: unknown option $1" >&2; usage ;;
  esac
done

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
state="$dir/cluster.env"

client_port() { echo $((base + 10 * ($1 - 1))); }
peer_port() { echo $((base + 10 * ($1 - 1) + 1)); }
metrics_port() { echo $((base + 10 * ($1 - 1) + 2)); }

load_state() {
  if [ -f "$state" ]; then
    # shellcheck disable=SC1090
    . "$state"
  fi
  base="${base:-${BASE_PORT:-7400}}"
  tls="${TLS_DIR:-}"
}

pid_of() {
  local f="$dir/n$1.pid"
  [ -f "$f" ] || return 1
  local pid
  pid="$(cat "$f")"
  # Ours only: the pid must still be a java process started with this node's data dir.
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--data-dir $dir/n$1 "; then
    echo "$pid"
    return 0
  fi
  return 1
}

http_get() { # host port path -> prints the body, fails unless 200
  local body
  if [ -n "$tls" ]; then
    curl -fsS --max-time 3 --cacert "$tls/ca.pem" --cert "$tls/n1.pem" --key "$tls/n1-key.pem" "https://$1:$2$3"
  elif command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 3 "http://$1:$2$3"
  else
    exec 3<>"/dev/tcp/$1/$2" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$3" "$1" >&3
    body="$(cat <&3)"
    exec 3<&-
    # The status line, without a pipe whose early reader would SIGPIPE the writer (pipefail).
    [[ "${body%%$'\n'*}" == *' 200 '* ]] || return 1
    printf '%s' "$body" | sed '1,/^\r\{0,1\}$/d'
  fi
}

serving() { http_get 127.0.0.1 "$(metrics_port "$1")" /healthz >/dev/null 2>&1; }

role() {
  local m
  m="$(http_get 127.0.0.1 "$(metrics_port "$1")" /metrics 2>/dev/null)" || { echo "unknown"; return; }
  printf '%s\n' "$m" | sed -n 's/^leasehold_raft_role{role="\([a-z]*\)"} 1\(\.0\)\{0,1\}$/\1/p' | head -n 1
}

peers() {
  local i out=""
  for i in 1 2 3; do
    out="$out${out:+,}n$i=127.0.0.1:$(peer_port $i):$(client_port $i)"
  done
  echo "$out"
}

print_endpoints() {
  local i r scheme=http
  [ -n "$tls" ] && scheme=https
  for i in 1 2 3; do
    r="$(role $i)"
    printf 'n%s  client 127.0.0.1:%s  peer 127.0.0.1:%s  metrics %s://127.0.0.1:%s/metrics  %s\n' \
      "$i" "$(client_port $i)" "$(peer_port $i)" "$scheme" "$(metrics_port $i)" "${r:-unknown}"
  done
  echo "endpoints: 127.0.0.1:$(client_port 1),127.0.0.1:$(client_port 2),127.0.0.1:$(client_port 3)"
  if [ -n "$tls" ]; then
    if [ -f "$tls/admin.pem" ]; then
      echo "tls: export LEASEHOLD_CACERT=$tls/ca.pem LEASEHOLD_CERT=$tls/admin.pem LEASEHOLD_KEY=$tls/admin-key.pem"
    else
      echo "tls: export LEASEHOLD_CACERT=$tls/ca.pem and a client certificate (deploy/tls/make-certs.sh $tls NAME makes one)"
    fi
  fi
}

# The files --tls needs, checked before any node starts.
check_tls() {
  local f
  if ! command -v curl >/dev/null 2>&1; then
    echo "local-cluster: --tls needs curl for its health checks over HTTPS" >&2
    exit 1
  fi
  for f in ca.pem n1.pem n1-key.pem n2.pem n2-key.pem n3.pem n3-key.pem; do
    if [ ! -r "$tls/$f" ]; then
      echo "local-cluster: --tls $tls has no readable $f; make the files with deploy/tls/make-certs.sh $tls" >&2
      exit 2
    fi
  done
}

tls_options() { # node index -> sets the array tls_opts to the node's TLS options, if any
  tls_opts=()
  [ -n "$tls" ] || return 0
  local c="$tls/n$1.pem" k="$tls/n$1-key.pem" ca="$tls/ca.pem"
  tls_opts=(--tls-cert-file "$c" --tls-key-file "$k" --tls-ca-file "$ca" --client-cert-auth --initial-admin admin
    --peer-tls-cert-file "$c" --peer-tls-key-file "$k" --peer-tls-ca-file "$ca")
}

up() {
  if [ -z "$base" ]; then load_state; fi
  # TLS comes from this command line only, never from an earlier run's state.
  tls=""
  if [ -n "$tls_arg" ]; then
    tls="$(cd "$tls_arg" 2>/dev/null && pwd)" || { echo "local-cluster: --tls $tls_arg is not a directory" >&2; exit 2; }
    check_tls
  fi
  for i in 1 2 3; do
    if pid_of $i >/dev/null; then
      echo "local-cluster: n$i is already running (pid $(pid_of $i)); run down first" >&2
      exit 1
    fi
  done
  if [ ! -f "$jar" ]; then
    echo "local-cluster: $jar is not built yet; building it (cd $root && mvn -B -q -DskipTests -pl cli -am package)..." >&2
    (cd "$root" && mvn -B -q -DskipTests -pl cli -am package) >&2
  fi
  # An absolute path: a class-data cache made for the jar names it as the nodes are given it.
  jar="$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")"
  leasehold_select_java || exit 1
  local jvm_opts=()
  read -ra jvm_opts <<< "${LEASEHOLD_JAVA_OPTS:-$(leasehold_default_flags)} $(leasehold_launch_flags)"
  leasehold_cache_flags "$jar" ${jvm_opts[@]+"${jvm_opts[@]}"}
  printf 'BASE_PORT=%s\nTLS_DIR=%q\n' "$base" "$tls" > "$state"
  local p started=() server_opts=()
  p="$(peers)"
  read -ra server_opts <<< "${LEASEHOLD_SERVER_OPTS:-}"
  for i in 1 2 3; do
    tls_options $i
    nohup "$LEASEHOLD_JAVA_BIN" ${LEASEHOLD_CACHE_FLAGS[@]+"${LEASEHOLD_CACHE_FLAGS[@]}"} ${jvm_opts[@]+"${jvm_opts[@]}"} -jar "$jar" server \
      --id "n$i" --peers "$p" --data-dir "$dir/n$i" --metrics-port "$(metrics_port $i)" ${tls_opts[@]+"${tls_opts[@]}"} \
      ${server_opts[@]+"${server_opts[@]}"} > "$dir/n$i.log" 2>&1 < /dev/null &
    echo $! > "$dir/n$i.pid"
    started+=($!)
  done
  local deadline=$((SECONDS + timeout))
  while :; do
    local ok=1
    for i in 1 2 3; do
      # Alive is enough here: pid_of's command-line check can miss a node for the moment between
      # fork and exec, when its command line is still this script's (seen under a loaded CI run).
      if ! kill -0 "$(cat "$dir/n$i.pid")" 2>/dev/null; then
        echo "local-cluster: n$i exited; its log ($dir/n$i.log) ends with:" >&2
        tail -n 20 "$dir/n$i.log" >&2
        echo "local-cluster: stopping the nodes this run started" >&2
        stop_pids "${started[@]}"
        exit 1
      fi
      serving $i || ok=0
    done
    [ $ok = 1 ] && break
    if [ $SECONDS -ge $deadline ]; then
      # Not left running: a half-started cluster would hold the ports and make the next `up` refuse.
      echo "local-cluster: no leader with every node SERVING after ${timeout}s; stopping the nodes this run started (logs in $dir)" >&2
      stop_pids "${started[@]}"
      exit 1
    fi
    sleep 0.5
  done
  echo "leasehold: three nodes up${tls:+ with mutual TLS}, data in $dir"
  print_endpoints
}

status() {
  load_state
  local running=0 i pid
  for i in 1 2 3; do
    if pid="$(pid_of $i)"; then
      running=$((running + 1))
      if serving $i; then h=SERVING; else h=NOT_SERVING; fi
      printf 'n%s  pid %s  client 127.0.0.1:%s  %s  %s\n' "$i" "$pid" "$(client_port $i)" "$h" "$(role $i)"
    else
      printf 'n%s  stopped\n' "$i"
    fi
  done
  [ $running = 3 ]
}

# SIGTERM to each pid, SIGKILL to any still there after 30 s; then the pid files go.
stop_pids() {
  local pid
  for pid in "$@"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  local deadline=$((SECONDS + 30))
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  done
  rm -f "$dir"/n[123].pid
}

down_nodes() {
  local i pid pids=()
  for i in 1 2 3; do
    if pid="$(pid_of $i)"; then
      pids+=("$pid")
    fi
  done
  stop_pids "${pids[@]+"${pids[@]}"}"
}

down() {
  load_state
  down_nodes
  if [ $purge = 1 ]; then
    rm -rf "$dir"/n[123] "$dir"/n[123].log "$state"
  fi
  echo "leasehold: local cluster in $dir stopped"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) usage ;;
esac
