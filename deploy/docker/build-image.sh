#!/usr/bin/env bash
# Builds the Leasehold node image from the built distribution (cli/target/leasehold.jar).
#   deploy/docker/build-image.sh [IMAGE]     (default: leasehold:dev; base: $BASE_IMAGE or leasehold-base:jre17)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
image="${1:-leasehold:dev}"
base="${BASE_IMAGE:-leasehold-base:jre17}"
jar="${LEASEHOLD_JAR:-$root/cli/target/leasehold.jar}"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests -pl cli -am package)
docker image inspect "$base" >/dev/null 2>&1 || "$here/build-base-image.sh" "$base"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$here/Dockerfile" "$context/"
cp "$jar" "$context/leasehold.jar"
docker build --build-arg "BASE_IMAGE=$base" -t "$image" "$context"
