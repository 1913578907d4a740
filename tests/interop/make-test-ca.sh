#!/bin/sh
# Make a throw-away test CA, a server certificate for localhost/127.0.0.1/::1
# and a client certificate, all signed by that CA, into DIR.
#   ca.crt ca.key  server.crt server.key  client.crt client.key
# Also other-ca.crt/other-ca.key + other-client.crt/.key: a client signed by a
# CA the server does not trust (for negative mTLS tests).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
DIR=$1
mkdir -p "$DIR"
cd "$DIR"
command -v openssl >/dev/null || { echo "openssl is required" >&2; exit 1; }
DAYS=30

mkca() { # name cn
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$DAYS" \
        -keyout "$1.key" -out "$1.crt" -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}
mkleaf() { # name cn ca extfile-content
    openssl req -new -newkey rsa:2048 -nodes -sha256 \
        -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
    printf '%s\n' "$4" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial \
        -days "$DAYS" -sha256 -out "$1.crt" -extfile "$1.ext" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}

mkca ca "xlb interop test CA"
mkleaf server localhost ca "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
mkleaf client xlb-interop-client ca "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
subjectAltName=URI:spiffe://xlb.test/client"
mkca other-ca "untrusted test CA"
mkleaf other-client untrusted-client other-ca "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
rm -f ./*.srl
chmod 600 ./*.key
echo "test CA and certificates written to $DIR"
