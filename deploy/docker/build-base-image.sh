#!/usr/bin/env bash
# Builds the base image Leasehold's Dockerfile starts FROM, offline, from the JDK on this machine:
# a jlink'd Java runtime, the shared libraries it (and RocksDB's JNI library) links against, bash
# for the health check, and a non-root user. No image is pulled; `docker import` makes the image.
#
#   deploy/docker/build-base-image.sh [IMAGE]        (default: leasehold-base:jre17)
#
# Environment: JAVA_HOME (default: the JDK of `javac` on PATH).
set -euo pipefail

image="${1:-leasehold-base:jre17}"
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs"/{opt,tmp,data,etc,usr/bin,usr/lib}
chmod 1777 "$rootfs/tmp"
# The same /bin, /lib, /lib64 as this machine (symlinks into /usr on a merged-/usr system), so
# each library is copied once and found where the loader looks.
for d in bin sbin lib lib64; do
  if [ -L "/$d" ]; then
    ln -s "$(readlink "/$d")" "$rootfs/$d"
    mkdir -p "$rootfs/$(readlink -f "/$d" | sed 's|^/||')"
  else
    mkdir -p "$rootfs/$d"
  fi
done

# The modules the server needs: java.management for JVM metrics, jdk.httpserver for /metrics,
# jdk.unsupported for Netty and protobuf, java.naming/jgss/crypto for gRPC's transport.
"$java_home/bin/jlink" \
  --add-modules java.base,java.logging,java.management,java.naming,java.net.http,java.security.jgss,java.sql,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.management,jdk.unsupported,jdk.zipfs \
  --strip-debug --no-header-files --no-man-pages --compress=2 \
  --output "$rootfs/opt/java"

# Every shared library the runtime and bash load, plus what RocksDB's and Netty's JNI libraries
# need (they are unpacked from the jar at run time, so ldd cannot see them here).
libs() {
  find "$rootfs/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \) -print0 | xargs -0 ldd 2>/dev/null
  ldd /bin/bash
  for l in libstdc++.so.6 libgcc_s.so.1 libpthread.so.0 libdl.so.2 librt.so.1 libm.so.6 libz.so.1; do
    # awk reads to the end: leaving early would kill ldconfig with SIGPIPE, and pipefail the script.
    p="$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64|64bit/ && !found {print $NF; found = 1}')"
    [ -n "$p" ] && { echo "$l => $p"; ldd "$p"; }
  done
}
libs | awk '/=>/ {print $3} /^[ \t]*\/.*ld-linux/ {print $1}' | grep '^/' | sort -u | while read -r lib; do
  case "$lib" in "$rootfs"*) continue ;; esac     # the runtime's own libraries are there already
  [ -e "$lib" ] || continue
  # Under the directory it really is in (resolving /lib -> /usr/lib), by the name the loader asks for.
  target="$(readlink -f "$(dirname "$lib")")/$(basename "$lib")"
  mkdir -p "$rootfs$(dirname "$target")"
  [ -e "$rootfs$target" ] || cp -L "$lib" "$rootfs$target"
done
cp -L /bin/bash "$rootfs/usr/bin/bash"
ln -s bash "$rootfs/usr/bin/sh"
ln -s /opt/java/bin/java "$rootfs/usr/bin/java"
if [ ! -L "$rootfs/bin" ]; then
  ln -s /usr/bin/bash "$rootfs/bin/bash"
  ln -s /usr/bin/bash "$rootfs/bin/sh"
fi

cat > "$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/bash
leasehold:x:10001:10001:leasehold:/data:/bin/bash
PASSWD
cat > "$rootfs/etc/group" <<'GROUP'
root:x:0:
leasehold:x:10001:
GROUP
echo 'hosts: files dns' > "$rootfs/etc/nsswitch.conf"
touch "$rootfs/etc/hosts" "$rootfs/etc/resolv.conf"

# Everything owned by root, but /data by the user the node runs as (there is no chown in the image).
tar --numeric-owner --owner=0 --group=0 -C "$rootfs" --exclude=./data -cf "$work/rootfs.tar" .
chmod 700 "$rootfs/data"
tar --numeric-owner --owner=10001 --group=10001 -C "$rootfs" -rf "$work/rootfs.tar" ./data
docker import \
      --change 'ENV PATH=/opt/java/bin:/usr/bin:/bin' \
      --change 'ENV JAVA_HOME=/opt/java' \
      --change 'ENV LANG=C.UTF-8' \
      "$work/rootfs.tar" "$image" >/dev/null
echo "built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
