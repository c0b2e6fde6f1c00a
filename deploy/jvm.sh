#!/usr/bin/env bash
# Which JVM runs Leasehold, with which default flags, and its class-data cache. Sourced by the
# `leasehold` launcher, deploy/local-cluster.sh and benchmarks/cold-start.sh; run on its own it
# reports or makes what they would use:
#
#   deploy/jvm.sh                  the java chosen, its version, the caches for the jar and their state
#   deploy/jvm.sh cache [JAR]      make the nodes' cache for JAR now if it is missing or stale, and
#                                  print the JVM flags that use it (one a line; none if there is none)
#   deploy/jvm.sh cli-cache [JAR]  the same for the CLI's cache (every command but server and bench)
# JAR defaults to cli/target/leasehold.jar (or $LEASEHOLD_JAR).
#
# The java: $LEASEHOLD_JAVA (a java binary) if set; else $JAVA_HOME/bin/java if JAVA_HOME is set;
# else the newest Java 17 or later among `java` on PATH and the JDKs under $LEASEHOLD_JDK_DIRS
# (default: /usr/lib/jvm and /opt/java; each entry may be a JDK or hold JDKs). A version is read
# from the JDK's `release` file, or asked of `java -version` when there is none. On a tie the
# `java` on PATH wins. With no Java 17 or later found, `java` on PATH is used as it is.
#
# The cache: on Java 25 or later an AOT cache (-XX:AOTCache), on 17 to 24 a dynamic CDS archive
# (-XX:SharedArchiveFile), made by a training run: a three-node cluster in a temporary directory,
# under load from the CLI (`bench acquire-release`, `bench renew` with leases of their own and in
# sessions acquired in batches, watches, a registration) for about 35 s on 25 (15 s below); its node n1, whose JVM writes the cache, leads the first half of
# the load and follows in the second (`cluster transfer-leader`), so the cache holds both sides of
# replication. Then n1 is stopped with SIGTERM, when its JVM writes the cache. With the JVMs'
# starts and the cache's assembly, a training takes 40-90 s on two cores.
# The CLI has a cache of its own (named leasehold-cli-jdk...), trained in about 10 s by its
# everyday commands run in one JVM against a standalone node (io.leasehold.cli.CliTraining): the
# launcher makes it after it builds the jar and at a node's first start after a build. A cache
# lives beside the jar, named for the jar, the Java runtime version and a hash of the java's
# path and the -XX flags it runs with:
#   cli/target/leasehold-jdk25.0.3+9-LTS-1a2b3c4d.aot, cli/target/leasehold-jdk17.0.15+6-...-5e6f7a8b.jsa
# It is remade when the jar is newer. A training that fails is reported on stderr (its log stays
# beside the cache as <cache>.log) and leaves <cache>.failed: the node runs without a cache, and
# that training is not tried again until the jar changes (delete the .failed file to retry).
# LEASEHOLD_AOT=off turns the cache off (no training, no cache flags). JVM flags that name a cache
# or archive of their own (-XX:AOTCache, -XX:AOTMode, -XX:SharedArchiveFile, -Xshare:...) also
# leave it out. The cache's warnings go to stderr: the JVM's default would print them on stdout.
#
# Nothing here prints on stdout except the reports above; notes go to stderr.

# The launcher's default JVM flags (LEASEHOLD_JAVA_OPTS replaces them): G1 with a 20 ms pause goal;
# its default goal (200 ms) lets young collections of a loaded node stall every write and watch
# for 100+ ms. The young generation keeps G1's own floor (5% of the heap, 25 MiB here): a floor of
# 1% let G1 shrink it to a few MiB, and a burst of 10,000 acquisitions on a fresh cluster then
# collected 10 to 20 times a second and lost its leases (docs/performance.md, "What was tried").
# String deduplication shares the bytes of equal strings that live long (a leader's deadlines
# name every lease again). A 512 MiB heap holds a million live leases and keeps a node under
# 1 GiB resident; without a cap the JVM takes a quarter of the machine's memory
# (docs/operations.md, "Sizing"). The failover bench's LocalCluster.LAUNCHER_JVM_FLAGS and the
# deployment files carry the same flags.
LEASEHOLD_DEFAULT_JVM_FLAGS="-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+UseStringDeduplication -Xmx512m"
# glibc gives each thread that allocates natively an arena of up to 64 MiB; RocksDB's and
# Netty's threads spread a node's native memory over many half-used ones. Two are enough.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"

# A CLI command's JVM flags (every command but `server` and `bench`, which take the defaults
# above; LEASEHOLD_CLI_JAVA_OPTS replaces them). A call lives for a fraction of a second: the
# serial collector starts no GC threads, C1 alone compiles what a call runs while C2's threads
# would compete with it for the cores, and no perf-data file is mapped.
LEASEHOLD_CLI_JVM_FLAGS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData"

# The CLI's flags for the selected java (leasehold_select_java first).
leasehold_cli_flags() {
  echo "$LEASEHOLD_CLI_JVM_FLAGS"
}

# Flags every start gets, LEASEHOLD_JAVA_OPTS or not: from Java 24 on the JVM warns on stderr,
# four lines a start, when Netty (inside gRPC and Ratis) uses sun.misc.Unsafe; Netty falls back
# to slower code if denied, so the use is allowed and the warning goes.
leasehold_launch_flags() {
  if [ "${LEASEHOLD_JAVA_MAJOR:-0}" -ge 24 ]; then
    echo "--sun-misc-unsafe-memory-access=allow"
  fi
}

# ARGS... -> prints the command word of a `leasehold` call: the first argument that is neither
# a global option nor the value of one (empty when there is none).
leasehold_command_word() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --) return 0 ;;
      --endpoints|--timeout|-o|--output|--cacert|--cert|--key|--bearer-token)
        shift
        [ $# -gt 0 ] || return 0 ;;
      -*) ;;
      *) echo "$1"; return 0 ;;
    esac
    shift
  done
}

# The default flags for the selected java (leasehold_select_java first): on Java 25 and later
# also compact object headers (8 bytes an object instead of 12), a twelfth of a node's heap
# with a million leases.
leasehold_default_flags() {
  if [ "${LEASEHOLD_JAVA_MAJOR:-0}" -ge 25 ]; then
    echo "$LEASEHOLD_DEFAULT_JVM_FLAGS -XX:+UseCompactObjectHeaders"
  else
    echo "$LEASEHOLD_DEFAULT_JVM_FLAGS"
  fi
}

# java binary [its resolved path] -> sets LEASEHOLD_V_MAJOR, LEASEHOLD_V_VERSION and LEASEHOLD_V_RUNTIME (e.g. 25,
# 25.0.3, 25.0.3+9-LTS), or fails if the version cannot be told. Reads the JDK's release file
# (no process started) and asks `java -version` only when there is none.
leasehold_java_version() {
  local java="$1" real="${2:-}" home line version="" runtime="" out
  LEASEHOLD_V_MAJOR="" LEASEHOLD_V_VERSION="" LEASEHOLD_V_RUNTIME=""
  [ -n "$real" ] || real="$(readlink -f "$java" 2>/dev/null)" || real="$java"
  home="${real%/bin/*}"
  if [ "$home" != "$real" ] && [ -f "$home/release" ]; then
    while IFS= read -r line; do
      case "$line" in
        JAVA_VERSION=*) version="${line#JAVA_VERSION=}" ;;
        JAVA_RUNTIME_VERSION=*) runtime="${line#JAVA_RUNTIME_VERSION=}" ;;
      esac
    done < "$home/release"
    version="${version//\"/}" runtime="${runtime//\"/}"
  fi
  if [ -z "$version" ]; then
    [ -x "$java" ] || return 1
    out="$("$java" -version 2>&1 </dev/null)" || return 1
    # openjdk version "17.0.15" 2025-04-15 / ... (build 17.0.15+6-Debian-1deb12u1)
    [[ "$out" =~ version\ \"([^\"]*)\" ]] && version="${BASH_REMATCH[1]}"
    [[ "$out" =~ \(build\ ([^\),]*) ]] && runtime="${BASH_REMATCH[1]}"
  fi
  [ -n "$version" ] || return 1
  local major="${version#1.}"
  major="${major%%[!0-9]*}"
  [ -n "$major" ] || return 1
  LEASEHOLD_V_MAJOR="$major" LEASEHOLD_V_VERSION="$version" LEASEHOLD_V_RUNTIME="${runtime:-$version}"
}

# version ("25.0.3", "17.0.15+6", "1.8.0_392") -> a key that sorts as the versions do
leasehold_version_key() {
  leasehold_set_version_key "$1"
  echo "$LEASEHOLD_V_KEY"
}

# The same, into LEASEHOLD_V_KEY (no subshell: the launcher runs this for every JDK it finds).
leasehold_set_version_key() {
  local v="${1#1.}" a b c
  IFS='._+-' read -r a b c _ <<< "$v"
  a="${a%%[!0-9]*}" b="${b%%[!0-9]*}" c="${c%%[!0-9]*}"
  printf -v LEASEHOLD_V_KEY '%05d%05d%05d' "$((10#${a:-0}))" "$((10#${b:-0}))" "$((10#${c:-0}))"
}

# Every java found: `java` on PATH first, then the JDKs under $LEASEHOLD_JDK_DIRS, each real
# binary once. Prints "KEY<TAB>MAJOR<TAB>VERSION<TAB>RUNTIME<TAB>PATH" per java it can tell the version of.
leasehold_list_javas() {
  local candidates=() c d real seen=" "
  c="$(command -v java 2>/dev/null)" && candidates+=("$c")
  for d in ${LEASEHOLD_JDK_DIRS-/usr/lib/jvm /opt/java}; do
    [ -d "$d" ] || continue
    [ -x "$d/bin/java" ] && candidates+=("$d/bin/java")
    for c in "$d"/*/bin/java; do
      [ -x "$c" ] && candidates+=("$c")
    done
  done
  for c in ${candidates[@]+"${candidates[@]}"}; do
    real="$(readlink -f "$c" 2>/dev/null)" || real="$c"
    case "$seen" in *" $real "*) continue ;; esac
    seen="$seen$real "
    leasehold_java_version "$c" "$real" || continue
    leasehold_set_version_key "$LEASEHOLD_V_VERSION"
    printf '%s\t%s\t%s\t%s\t%s\n' "$LEASEHOLD_V_KEY" "$LEASEHOLD_V_MAJOR" \
      "$LEASEHOLD_V_VERSION" "$LEASEHOLD_V_RUNTIME" "$c"
  done
}

# Chooses the java (see the top of this file). Sets LEASEHOLD_JAVA_BIN, LEASEHOLD_JAVA_MAJOR,
# LEASEHOLD_JAVA_VERSION (the runtime version, e.g. 25.0.3+9-LTS; both empty when it cannot be
# told). Fails, saying why on stderr, only for an unusable LEASEHOLD_JAVA or JAVA_HOME.
leasehold_select_java() {
  local best="" bestkey=""
  LEASEHOLD_JAVA_BIN="" LEASEHOLD_JAVA_MAJOR="" LEASEHOLD_JAVA_VERSION=""
  if [ -n "${LEASEHOLD_JAVA:-}" ]; then
    if [ ! -x "$LEASEHOLD_JAVA" ] || [ -d "$LEASEHOLD_JAVA" ]; then
      echo "leasehold: LEASEHOLD_JAVA=$LEASEHOLD_JAVA is not an executable java binary" >&2
      return 1
    fi
    LEASEHOLD_JAVA_BIN="$LEASEHOLD_JAVA"
  elif [ -n "${JAVA_HOME:-}" ]; then
    LEASEHOLD_JAVA_BIN="$JAVA_HOME/bin/java"
    if [ ! -x "$LEASEHOLD_JAVA_BIN" ]; then
      echo "leasehold: JAVA_HOME=$JAVA_HOME has no bin/java" >&2
      return 1
    fi
  else
    local key major version runtime path
    while IFS=$'\t' read -r key major version runtime path; do
      [ "$major" -ge 17 ] 2>/dev/null || continue
      # Strictly newer only: on a tie the earlier one (java on PATH) stays.
      if [ -z "$best" ] || [[ "$key" > "$bestkey" ]]; then
        best="$path" bestkey="$key"
        LEASEHOLD_JAVA_MAJOR="$major" LEASEHOLD_JAVA_VERSION="$runtime"
      fi
    done < <(leasehold_list_javas)
    if [ -n "$best" ]; then
      LEASEHOLD_JAVA_BIN="$best"
      return 0
    fi
    LEASEHOLD_JAVA_BIN=java
    return 0
  fi
  if leasehold_java_version "$LEASEHOLD_JAVA_BIN"; then
    LEASEHOLD_JAVA_MAJOR="$LEASEHOLD_V_MAJOR" LEASEHOLD_JAVA_VERSION="$LEASEHOLD_V_RUNTIME"
  fi
  return 0
}

# JVM flags... -> succeeds if they choose a cache or archive of their own (or turn sharing off).
leasehold_flags_manage_cache() {
  local f
  for f in "$@"; do
    case "$f" in
      -XX:AOTCache=*|-XX:AOTCacheOutput=*|-XX:AOTConfiguration=*|-XX:AOTMode=*|-XX:SharedArchiveFile=*|-XX:ArchiveClassesAtExit=*|-XX:+AutoCreateSharedArchive|-Xshare:*)
        return 0 ;;
    esac
  done
  return 1
}

# JAR [JVM flags...] -> prints the cache's path for the selected java (leasehold_select_java first):
# beside the jar, keyed to the runtime version, the java's path and the -XX flags. Fails when the
# java's version is unknown or below 17.
leasehold_cache_path() {
  local jar="$1" f key real ext=jsa name version dir sum
  shift
  [ -n "${LEASEHOLD_JAVA_MAJOR:-}" ] && [ "$LEASEHOLD_JAVA_MAJOR" -ge 17 ] || return 1
  [ "$LEASEHOLD_JAVA_MAJOR" -ge 25 ] && ext=aot
  real="$(readlink -f "$(command -v "$LEASEHOLD_JAVA_BIN" 2>/dev/null || echo "$LEASEHOLD_JAVA_BIN")" 2>/dev/null)" || real="$LEASEHOLD_JAVA_BIN"
  key="$real"
  for f in "$@"; do
    case "$f" in -XX:*) key="$key $f" ;; esac
  done
  # Without a process where one is not needed: a CLI call runs this on every start.
  name="${jar##*/}"
  name="${name%.jar}"
  [ "${LEASEHOLD_CACHE_KIND:-node}" = cli ] && name="$name-cli"
  version="${LEASEHOLD_JAVA_VERSION//[!A-Za-z0-9._+-]/_}"
  case "$jar" in
    */./*|*/../*|*/.|*/..) dir="$(cd "$(dirname "$jar")" && pwd)" ;;
    /*/*) dir="${jar%/*}" ;;
    *) dir="$(cd "$(dirname "$jar")" && pwd)" ;;
  esac
  read -r sum _ < <(printf '%s' "$key" | cksum)
  printf '%s/%s-jdk%s-%08x.%s\n' "$dir" "$name" "$version" "$sum" "$ext"
}

# Whether a cache file is there and not older than the jar.
leasehold_cache_fresh() { [ -s "$2" ] && ! [ "$1" -nt "$2" ]; }

# COUNT -> prints a port P such that P..P+COUNT-1 on 127.0.0.1 have no listener now.
leasehold_free_ports() {
  local n="$1" base p ok
  for _ in $(seq 1 50); do
    base=$((20000 + (RANDOM % 3000) * 10))
    ok=1
    for ((p = base; p < base + n; p++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ok=0; break; fi
    done
    [ $ok = 1 ] && { echo "$base"; return 0; }
  done
  return 1
}

# PORT -> succeeds if http://127.0.0.1:PORT/healthz answers 200 (the node is SERVING).
leasehold_healthz() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    read -r -t 3 _ code _ <&3 || exit 1
    [ "$code" = 200 ]
  ) 2>/dev/null
}

# TRY LOG -> succeeds, saying so, when a training node that exited on start TRY (of three) could
# not bind a port, as LOG (its output) says: its caller starts again on other ports.
leasehold_port_taken() {
  [ "$1" -lt 3 ] && grep -q "Address already in use" "$2" || return 1
  echo "$(date +%T) a port was taken meanwhile; again on others"
}

# JAR WORK LOG [JVM flags...] -> starts a standalone node from JAR with the selected java and these
# flags, data under WORK, and waits until it serves: sets `node` (its pid) and `base` (its client
# port; peers on base+1, metrics on base+2) in the caller. Its output goes to stdout. Free ports
# can be taken between the check and the node's bind (by any other program on the machine): a
# node that could not bind (as LOG, where its output goes, says) is started again on others,
# twice at most.
leasehold_training_node() {
  local jar="$1" work="$2" log="$3" try deadline
  shift 3
  for try in 1 2 3; do
    base="$(leasehold_free_ports 3)" || { echo "no free ports for the training node"; return 1; }
    echo "$(date +%T) training node: $LEASEHOLD_JAVA_BIN ($LEASEHOLD_JAVA_VERSION), flags: $*, jar: $jar, ports $base-$((base + 2))"
    "$LEASEHOLD_JAVA_BIN" "$@" "-Djava.io.tmpdir=$work/tmp" -jar "$jar" server --standalone \
      --client-port "$base" --peer-port "$((base + 1))" --metrics-port "$((base + 2))" --data-dir "$work/data$try" </dev/null &
    node=$!
    deadline=$((SECONDS + 120))
    until leasehold_healthz "$((base + 2))"; do
      if ! kill -0 "$node" 2>/dev/null; then
        wait "$node" 2>/dev/null || true
        node=""
        leasehold_port_taken "$try" "$log" && continue 2
        echo "the training node exited before it served"
        return 1
      fi
      [ $SECONDS -lt $deadline ] || { echo "the training node did not serve within 120 s"; return 1; }
      sleep 0.3
    done
    return 0
  done
  return 1
}

# JAR WORK LOG DUMP [JVM flags...] -> starts a three-node cluster from JAR with the selected java
# and these flags, n1 also with the flag DUMP (which writes the cache), data under WORK, and
# waits until every node serves: sets the array `nodes` (their pids, n1 first) and `base` (n1's
# client port; node i's client port is base+10(i-1), its peer port one above, its metrics port
# two above) in the caller. As leasehold_training_node, a node that could not bind its ports
# has the cluster started again on others, twice at most.
leasehold_training_cluster() {
  local jar="$1" work="$2" log="$3" dump="$4" try deadline i peers ok p extra
  shift 4
  for try in 1 2 3; do
    base="$(leasehold_free_ports 23)" || { echo "no free ports for the training cluster"; return 1; }
    peers="n1=127.0.0.1:$((base + 1)):$base,n2=127.0.0.1:$((base + 11)):$((base + 10)),n3=127.0.0.1:$((base + 21)):$((base + 20))"
    echo "$(date +%T) training cluster: $LEASEHOLD_JAVA_BIN ($LEASEHOLD_JAVA_VERSION), flags: $*, n1 also $dump, jar: $jar, ports $base-$((base + 22))"
    nodes=()
    for i in 1 2 3; do
      extra=()
      [ $i = 1 ] && extra=("$dump")
      "$LEASEHOLD_JAVA_BIN" ${extra[@]+"${extra[@]}"} "$@" "-Djava.io.tmpdir=$work/tmp" -jar "$jar" server --id "n$i" --peers "$peers" \
        --metrics-port "$((base + 10 * (i - 1) + 2))" --data-dir "$work/data$try/n$i" </dev/null &
      nodes+=($!)
    done
    deadline=$((SECONDS + 120))
    for i in 1 2 3; do
      until leasehold_healthz "$((base + 10 * (i - 1) + 2))"; do
        ok=1
        for p in "${nodes[@]}"; do kill -0 "$p" 2>/dev/null || ok=0; done
        if [ $ok = 0 ]; then
          for p in "${nodes[@]}"; do kill -KILL "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
          nodes=()
          leasehold_port_taken "$try" "$log" && continue 3
          echo "a training node exited before the cluster served"
          return 1
        fi
        [ $SECONDS -lt $deadline ] || { echo "the training cluster did not serve within 120 s"; return 1; }
        sleep 0.3
      done
    done
    return 0
  done
  return 1
}

# JAR CACHE [JVM flags...] -> the training run that writes CACHE (see the top of this file), with
# the selected java and these flags. Its output goes to CACHE.log; fails if no cache was written.
leasehold_train_cache() {
  local jar="$1" cache="$2"
  shift 2
  (
    set -u
    java="$LEASEHOLD_JAVA_BIN"
    work="$(mktemp -d "${TMPDIR:-/tmp}/leasehold-training.XXXXXX")" || exit 1
    log="$cache.log"
    out="$cache.part$$"
    node="" helpers=() nodes=()
    # shellcheck disable=SC2317 # run by the EXIT trap
    cleanup() {
      local p
      for p in ${helpers[@]+"${helpers[@]}"} ${nodes[@]+"${nodes[@]}"} $node; do kill -KILL "$p" 2>/dev/null || true; done
      rm -rf "$work" "$out" "$out.config"
    }
    trap cleanup EXIT
    # Interrupted: clean up, then die of the same signal, so that the launcher stops too (bash
    # stops after a child that died of the SIGINT it also got, and goes on after one that exited).
    trap 'cleanup; trap - EXIT INT; kill -INT "$BASHPID"' INT
    trap 'cleanup; trap - EXIT TERM; kill -TERM "$BASHPID"' TERM
    if [ "$LEASEHOLD_JAVA_MAJOR" -ge 25 ]; then
      dump="-XX:AOTCacheOutput=$out" ar=14 rn=6
    else
      dump="-XX:ArchiveClassesAtExit=$out" ar=6 rn=3
    fi
    mkdir -p "$work/tmp"
    {
      if [ "${LEASEHOLD_CACHE_KIND:-node}" = cli ]; then
        # The CLI's cache: its everyday commands in one JVM (io.leasehold.cli.CliTraining),
        # against a node started with the nodes' defaults, which the cache does not cover.
        read -ra node_flags <<< "$(leasehold_default_flags) $(leasehold_launch_flags)"
        leasehold_training_node "$jar" "$work" "$log" "${node_flags[@]}" || exit 1
        echo "$(date +%T) the node serves; the CLI's commands"
        timeout --foreground 120 "$java" "$dump" "$@" "-Djava.io.tmpdir=$work/tmp" -cp "$jar" io.leasehold.cli.CliTraining \
          "127.0.0.1:$base" </dev/null || exit 1
        kill -TERM "$node"
        wait "$node" 2>/dev/null || true
        node=""
        [ -s "$out" ] || { echo "the JVM wrote no cache"; exit 1; }
        echo "$(date +%T) cache written: $(stat -c %s "$out") bytes"
      else
        leasehold_training_cluster "$jar" "$work" "$log" "$dump" "$@" || exit 1
        # The CLI, from the same jar and java; timeout bounds the foreground calls.
        all="127.0.0.1:$base,127.0.0.1:$((base + 10)),127.0.0.1:$((base + 20))"
        cli=("$java" "-Djava.io.tmpdir=$work/tmp" -jar "$jar" --endpoints "$all")
        echo "$(date +%T) the cluster serves; load from the CLI"
        # Watch and registry traffic beside the write load: watchers on the bench's names (one on
        # n1 alone, which serves it as leader and then as follower), and a registered instance
        # kept alive. Started as java itself, so that $! is the JVM.
        "${cli[@]}" watch bench/ -o json >/dev/null </dev/null &
        helpers+=($!)
        "$java" "-Djava.io.tmpdir=$work/tmp" -jar "$jar" --endpoints "127.0.0.1:$base" watch bench/ -o json >/dev/null </dev/null &
        helpers+=($!)
        "${cli[@]}" service register training i1 --address 127.0.0.1:1 --ttl 3s --hold </dev/null &
        helpers+=($!)
        # n1, whose JVM writes the cache, leads the first half of the load and follows in the
        # second: the cache then holds both sides of replication.
        timeout --foreground 60 "${cli[@]}" cluster transfer-leader n1 </dev/null || true
        timeout --foreground 120 "${cli[@]}" bench acquire-release --clients 16 --duration "$((ar / 2))s" --warmup 0s -o json </dev/null || exit 1
        timeout --foreground 60 "${cli[@]}" cluster transfer-leader n2 </dev/null || true
        timeout --foreground 120 "${cli[@]}" bench acquire-release --clients 16 --duration "$((ar / 2))s" --warmup 0s -o json </dev/null || exit 1
        timeout --foreground 120 "${cli[@]}" bench renew --leases 200 --clients 4 --ttl 3s --duration "${rn}s" --warmup 0s -o json </dev/null || exit 1
        # A proxy's start: names acquired in batches (AcquireMany) into clients' sessions.
        timeout --foreground 120 "${cli[@]}" bench renew --leases 3000 --clients 2 --ttl 3s --sessions --batch --duration 2s --warmup 0s -o json </dev/null || exit 1
        timeout --foreground 60 "${cli[@]}" service resolve training </dev/null || true
        timeout --foreground 60 "$java" "-Djava.io.tmpdir=$work/tmp" -jar "$jar" --endpoints "127.0.0.1:$base" lease list </dev/null || true
        timeout --foreground 60 "${cli[@]}" cluster status </dev/null || true
        for p in "${helpers[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${helpers[@]}"; do wait "$p" 2>/dev/null || true; done
        helpers=()
        echo "$(date +%T) load done; stopping the cluster"
        # SIGTERM: n1 closes and its JVM writes the cache as it exits (on 25 a second JVM
        # assembles it from the recorded configuration); then the others.
        node="${nodes[0]}"
        kill -TERM "$node"
        deadline=$((SECONDS + 300))
        while kill -0 "$node" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.3; done
        if kill -0 "$node" 2>/dev/null; then echo "the training node did not exit within 300 s of SIGTERM"; exit 1; fi
        wait "$node" 2>/dev/null || true
        node=""
        for p in "${nodes[@]:1}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${nodes[@]:1}"; do wait "$p" 2>/dev/null || true; done
        nodes=()
        [ -s "$out" ] || { echo "the JVM wrote no cache"; exit 1; }
        echo "$(date +%T) cache written: $(stat -c %s "$out") bytes"
      fi
    } >"$log" 2>&1
    mv -f "$out" "$cache"
  )
}

# JAR [JVM flags...] -> sets the array LEASEHOLD_CACHE_FLAGS to the flags that use the cache for
# the selected java (leasehold_select_java first), first making the cache if it is missing or
# older than the jar (unless LEASEHOLD_CACHE_TRAIN=no: then only a fresh cache is used). Empty when the cache is off, the flags manage one themselves, the java is
# older than 17 or of unknown version, or no cache could be made. Never fails; a training
# interrupted by SIGINT or SIGTERM exits the calling script with 130.
leasehold_cache_flags() {
  local jar="$1" cache rc=0
  shift
  LEASEHOLD_CACHE_FLAGS=()
  case "${LEASEHOLD_AOT:-auto}" in off|OFF|0|false|no) return 0 ;; esac
  leasehold_flags_manage_cache "$@" && return 0
  [ -f "$jar" ] || return 0
  cache="$(leasehold_cache_path "$jar" "$@")" || return 0
  if ! leasehold_cache_fresh "$jar" "$cache"; then
    # Only a node's start makes the cache: a CLI command uses one if it is there, and never waits.
    [ "${LEASEHOLD_CACHE_TRAIN:-yes}" = no ] && return 0
    # Not in a directory this user cannot write, and not again after a failure with this jar.
    [ -w "$(dirname "$cache")" ] || return 0
    if [ -f "$cache.failed" ] && ! [ "$jar" -nt "$cache.failed" ]; then return 0; fi
    leasehold_train_locked "$jar" "$cache" "$@" || rc=$?
    # Interrupted (Ctrl-C): the start stops too.
    [ "$rc" = 130 ] && exit 130
    leasehold_cache_fresh "$jar" "$cache" || return 0
  fi
  if [ "$LEASEHOLD_JAVA_MAJOR" -ge 25 ]; then
    LEASEHOLD_CACHE_FLAGS=("-XX:AOTCache=$cache" "-Xlog:aot*=off:stdout" "-Xlog:aot*=warning:stderr")
  else
    LEASEHOLD_CACHE_FLAGS=("-XX:SharedArchiveFile=$cache" "-Xlog:cds*=off:stdout" "-Xlog:cds*=warning:stderr")
  fi
}

# JAR CACHE [JVM flags...] -> one training at a time per cache: a second launcher that finds
# one under way goes on without the cache rather than wait.
leasehold_train_locked() {
  local jar="$1" cache="$2" kind="a class-data archive (CDS)" length="a minute or so" start took rc=0
  shift 2
  [ "$LEASEHOLD_JAVA_MAJOR" -ge 25 ] && kind="an AOT cache"
  if [ "${LEASEHOLD_CACHE_KIND:-node}" = cli ]; then
    kind="$kind for the CLI" length="about 10 s"
  fi
  (
    interrupted=""
    trap 'interrupted=1' INT TERM
    if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
      echo "leasehold: another process is making $cache; starting without it" >&2
      exit 0
    fi
    leasehold_cache_fresh "$jar" "$cache" && exit 0
    echo "leasehold: making $kind for Java $LEASEHOLD_JAVA_VERSION: a training run of $length, once per build (LEASEHOLD_AOT=off skips it)..." >&2
    start=$SECONDS
    rm -f "$cache.failed"
    leasehold_train_cache "$jar" "$cache" "$@" || rc=$?
    took=$((SECONDS - start))
    if [ -n "$interrupted" ] || [ $rc -gt 128 ]; then
      echo "leasehold: the training run was interrupted; the next start makes the cache" >&2
      exit 130
    elif [ $rc = 0 ] && [ -s "$cache" ]; then
      echo "leasehold: made $cache ($(( $(stat -c %s "$cache") / 1048576 )) MB) in ${took} s" >&2
      # Caches for an older jar are stale whatever their JDK or flags: they go, with their logs,
      # locks and failure marks.
      find "$(dirname "$cache")" -maxdepth 1 -type f \( -name "$(basename "$jar" .jar)-jdk*" -o -name "$(basename "$jar" .jar)-cli-jdk*" \) \
        ! -name "$(basename "$cache")*" \
        ! -newer "$jar" -exec rm -f {} + 2>/dev/null || true
    else
      touch "$cache.failed"
      echo "leasehold: the training run failed after ${took} s; running without a cache (not retried until the jar changes; delete $cache.failed to retry). The end of $cache.log:" >&2
      tail -n 15 "$cache.log" >&2 2>/dev/null || true
    fi
    exit 0
  ) 9>>"$cache.lock"
}

# Run as a script: report, or make the caches.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cmd="${1:-report}"
  jar="${2:-${LEASEHOLD_JAR:-$root/cli/target/leasehold.jar}}"
  leasehold_select_java || exit 1
  read -ra opts <<< "${LEASEHOLD_JAVA_OPTS:-$(leasehold_default_flags)}"
  read -ra cli_opts <<< "${LEASEHOLD_CLI_JAVA_OPTS:-$(leasehold_cli_flags)}"
  # LABEL FLAGS... -> one report line on the cache these flags would use.
  report_cache() {
    local label="$1" cache state
    shift
    if case "${LEASEHOLD_AOT:-auto}" in off|OFF|0|false|no) true ;; *) false ;; esac; then
      echo "$label: off (LEASEHOLD_AOT=${LEASEHOLD_AOT})"
    elif leasehold_flags_manage_cache "$@"; then
      echo "$label: chosen by the flags"
    elif cache="$(leasehold_cache_path "$jar" "$@")"; then
      if [ ! -f "$jar" ]; then state="no jar yet"
      elif leasehold_cache_fresh "$jar" "$cache"; then state="ready, $(( $(stat -c %s "$cache") / 1048576 )) MB"
      elif [ -f "$cache.failed" ] && ! [ "$jar" -nt "$cache.failed" ]; then state="training failed for this jar: $cache.log"
      elif [ -f "$cache" ]; then state="stale: older than the jar, remade at the next start"
      else state="missing: made at the next start"
      fi
      echo "$label: $cache ($state)"
    else
      echo "$label: none for this java"
    fi
  }
  case "$cmd" in
    report)
      echo "java: $LEASEHOLD_JAVA_BIN (${LEASEHOLD_JAVA_VERSION:-version unknown})"
      echo "flags: ${opts[*]}"
      report_cache cache ${opts[@]+"${opts[@]}"}
      echo "cli flags: ${cli_opts[*]}"
      LEASEHOLD_CACHE_KIND=cli report_cache "cli cache" ${cli_opts[@]+"${cli_opts[@]}"}
      ;;
    cache|cli-cache)
      if [ "$cmd" = cli-cache ]; then
        export LEASEHOLD_CACHE_KIND=cli
        opts=(${cli_opts[@]+"${cli_opts[@]}"})
      fi
      read -ra launch <<< "$(leasehold_launch_flags)"
      leasehold_cache_flags "$jar" ${opts[@]+"${opts[@]}"} ${launch[@]+"${launch[@]}"}
      [ ${#LEASEHOLD_CACHE_FLAGS[@]} -gt 0 ] && printf '%s\n' "${LEASEHOLD_CACHE_FLAGS[@]}"
      exit 0
      ;;
    -h|--help|help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    *) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
fi
