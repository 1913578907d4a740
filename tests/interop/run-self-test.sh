#!/bin/sh
# Install the dependencies if needed and run the xDS server's self-test.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/install.sh"
cd "$HERE/xds-server"
exec node --test --test-timeout=60000 test/*.test.js
