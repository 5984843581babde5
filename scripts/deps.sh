#!/bin/sh
# Installs the Debian packages mod_agentshop needs that are missing: apt-get as
# root, sudo otherwise. Silent and fast when everything is present.
# usage: scripts/deps.sh build|test|bench
set -eu
build="gcc make pkg-config apache2 apache2-dev libaprutil1-dbd-sqlite3 libjansson-dev libssl-dev"
test="$build libapache2-mod-perl2 libwww-perl libcmocka-dev curl sqlite3"
case "${1:-build}" in
    build) want=$build ;;
    test) want=$test ;;
    pg) want="$test postgresql libaprutil1-dbd-pgsql" ;;
    *) echo "deps.sh: unknown set '$1'" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "Installing missing packages:$missing"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
