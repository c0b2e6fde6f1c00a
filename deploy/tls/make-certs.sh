#!/usr/bin/env bash
# Test certificates for a local cluster, made with openssl.
#
#   deploy/tls/make-certs.sh DIR [NAME...]
#
# Writes into DIR (created if missing):
#   ca.pem, ca-key.pem          a test CA, valid for LEASEHOLD_CERT_DAYS (default 365) days
#   n1.pem, n1-key.pem, n2…, n3 a certificate per node (LEASEHOLD_CERT_NODES, default "n1 n2 n3"),
#                               SANs 127.0.0.1, localhost and the node's name (DNS:n1…, the host
#                               names of the compose file's nodes), plus LEASEHOLD_CERT_SANS (e.g.
#                               "DNS:node1.example,IP:10.0.0.1"), for server and client auth alike
#                               since members are both to each other
#   NAME.pem, NAME-key.pem      a client certificate per NAME given, CN = NAME
# Keys are EC P-256 in PKCS#8 PEM, the form netty and grpc-java read. An existing CA in DIR is
# reused, so more names can be added later; an existing certificate is left as it is.
# For tests and local clusters: in production, use your own CA and keep its key off the nodes.
set -euo pipefail

usage() {
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage ;; esac
dir="$1"
shift
days="${LEASEHOLD_CERT_DAYS:-365}"
nodes="${LEASEHOLD_CERT_NODES:-n1 n2 n3}"
extra_sans="${LEASEHOLD_CERT_SANS:-}"

if ! command -v openssl >/dev/null 2>&1; then
  echo "make-certs: openssl is required (Debian: apt-get install openssl)" >&2
  exit 1
fi
for name in "$@"; do
  if ! [[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]]; then
    echo "make-certs: NAME '$name' must be 1-64 letters, digits, '.', '_' or '-' starting with a letter or digit" >&2
    exit 2
  fi
done
if ! [[ "$days" =~ ^[1-9][0-9]*$ ]]; then
  echo "make-certs: LEASEHOLD_CERT_DAYS must be a positive number of days, got '$days'" >&2
  exit 2
fi

mkdir -p "$dir"
umask 077
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

key() { # file: a new EC P-256 key, PKCS#8 PEM (openssl genpkey's own output form)
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

if [ ! -f "$dir/ca.pem" ]; then
  key "$dir/ca-key.pem"
  openssl req -x509 -new -key "$dir/ca-key.pem" -sha256 -days "$days" -subj "/CN=leasehold test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$dir/ca.pem" 2>/dev/null
  echo "$dir/ca.pem (new CA)"
elif [ ! -f "$dir/ca-key.pem" ]; then
  echo "make-certs: $dir/ca.pem exists without ca-key.pem: cannot sign with it" >&2
  exit 1
fi

issue() { # name sans
  local name="$1" sans="$2"
  if [ -f "$dir/$name.pem" ]; then
    echo "$dir/$name.pem (exists, kept)"
    return
  fi
  key "$dir/$name-key.pem"
  openssl req -new -key "$dir/$name-key.pem" -subj "/CN=$name" -out "$work/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } > "$work/$name.ext"
  openssl x509 -req -in "$work/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -CAcreateserial \
    -CAserial "$work/ca.srl" -days "$days" -sha256 -extfile "$work/$name.ext" -out "$dir/$name.pem" 2>/dev/null
  echo "$dir/$name.pem"
}

for node in $nodes; do
  issue "$node" "IP:127.0.0.1,DNS:localhost,DNS:$node${extra_sans:+,$extra_sans}"
done
for name in "$@"; do
  issue "$name" ""
done
# Certificates are public; keys stay readable by their owner only (umask above).
chmod 644 "$dir"/*.pem
chmod 600 "$dir"/*-key.pem
