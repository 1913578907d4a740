#!/bin/sh
# Install the interop test dependencies (node_modules) from package-lock.json.
# Runs npm ci only when node_modules is missing or older than the lock file.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: node/npm missing, installing Debian's nodejs npm" >&2
    SUDO=
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nodejs npm
fi
cd "$HERE"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    npm ci --no-audit --no-fund
    touch node_modules
fi
