#!/usr/bin/env bash
# Runs one fault schedule many times in a row, each with a fresh seed, and prints a table of
# every run (seed, every checker's verdict, operations, seconds); also written to
# jepsen-style-tests/target/jepsen/repeat-<schedule>.tsv. Exits non-zero if any run found a
# violation.
#
#   jepsen-style-tests/repeat.sh [short|tls|groups|moves|subsets|spread] [RUNS] [--hog]
#
# short: the short schedule of `mvn verify` (every supported nemesis once); tls: the mutual-TLS
# one; groups: the short schedule on nodes started with --lease-groups 3, the workloads'
# namespaces placed on lease groups, watched per namespace and across every group; moves: the
# groups schedule with the election's and the partitions' namespaces moving between the lease
# groups throughout; subsets: moves on five nodes with two lease groups of three each (every
# node serves the group it is not a member of through that group's members); spread: subsets
# with three lease groups of three, so that no node is a member of every group. --hog keeps
# every core busy for the whole time (stress-ng if installed, else busy shell
# loops), because timing faults hide on a quiet machine. The build is installed first (tests
# skipped), then the runs go through Maven's failsafe like the ITs of `mvn verify`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
schedule=${1:-short}
runs=${2:-10}
hog=${3:-}
case "$schedule" in short|tls|groups|moves|subsets|spread) ;; *) echo "usage: $0 [short|tls|groups|moves|subsets|spread] [RUNS] [--hog]" >&2; exit 2 ;; esac
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "RUNS: a positive number, got $runs" >&2; exit 2; }
case "$hog" in ""|--hog) ;; *) echo "usage: $0 [short|tls|groups|moves|subsets|spread] [RUNS] [--hog]" >&2; exit 2 ;; esac

mvn -B -q -DskipTests install -pl jepsen-style-tests -am
# The runs start node processes from a copy, so a rebuild meanwhile does not change what they run.
runs_dir=$(mktemp -d -t leasehold-repeat.XXXXXX)
cp cli/target/leasehold.jar "$runs_dir/leasehold.jar"

hog_pids=()
stop_hog() {
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$runs_dir"
}
trap stop_hog EXIT
if [ "$hog" = --hog ]; then
  cores=$(nproc)
  if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --cpu "$cores" --quiet &
    hog_pids+=($!)
  else
    for _ in $(seq 1 "$cores"); do
      (while :; do :; done) &
      hog_pids+=($!)
    done
  fi
  echo "CPU hog on $cores cores: ${hog_pids[*]}"
fi

mvn -B verify -pl jepsen-style-tests -Pjepsen-repeat -Djepsen.repeat="$runs" -Djepsen.repeat.schedule="$schedule" \
  -Dleasehold.jar="$runs_dir/leasehold.jar"
