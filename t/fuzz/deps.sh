#!/bin/sh
# Installs the Debian packages the fuzz harnesses need that are missing:
# apt-get as root, sudo otherwise. Silent and fast when everything is present.
# On Debian 12, clang is clang-14 and libclang-rt-14-dev carries libFuzzer and
# the sanitizer runtimes (-fsanitize=fuzzer,address,undefined).
# usage: t/fuzz/deps.sh
set -eu
want="make clang libclang-rt-14-dev libjansson-dev libssl-dev libstemmer-dev"
missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
# The lock scripts/deps.sh takes: make -j may run both at once.
exec 9<"$(dirname "$0")/../../Makefile"
flock 9
echo "Installing missing packages:$missing"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
