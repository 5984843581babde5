#!/bin/sh
# The secret that signs confirmation links (AgentShopSigningKeyFile): 32 random
# bytes as 64 hex characters, mode 0600, made when FILE is missing or empty and
# kept otherwise. The one writer for make run and the test scripts; an
# installed system's is made the same way by agentshopctl setup (make install,
# the package's postinst), which needs no checkout.
# usage: scripts/signing-key.sh FILE [OWNER[:GROUP]]
set -eu
file=$1
if [ ! -s "$file" ]; then
    (umask 077 && od -An -v -tx1 -N32 /dev/urandom | tr -d ' \n' >"$file")
fi
if [ -n "${2:-}" ]; then chown "$2" "$file"; fi
