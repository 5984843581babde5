#!/bin/sh
# Builds the Debian package from a clean copy of the tracked tree (git ls-files,
# with the work tree's content) and leaves
# build/libapache2-mod-agentshop_<version>_<arch>.deb, checked by lintian: an
# error fails the build. Installs what is missing to build it (the tools, then
# debian/control's Build-Depends): apt-get as root, sudo otherwise.
# usage: scripts/deb.sh   (from make deb)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
apt_install() {
    echo "Installing missing packages: $*"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=""
for p in dpkg-dev debhelper lintian git; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# shellcheck disable=SC2086
[ -z "$missing" ] || apt_install $missing

pkg=$(dpkg-parsechangelog -S Source)
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb=${pkg}_${version}_${arch}.deb
src=build/deb/$pkg-$version

rm -rf build/deb
mkdir -p "$src"
# Tracked files as they are in the work tree; deleted ones are left out.
git ls-files -z | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf - | tar -xf - -C "$src"

if ! (cd "$src" && dpkg-checkbuilddeps >/dev/null 2>&1); then
    echo "Installing the Build-Depends of debian/control"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get build-dep -y -qq --no-install-recommends "./$src" >/dev/null
fi

echo "dpkg-buildpackage -us -uc -b in $src (log: build/deb/build.log)"
(cd "$src" && dpkg-buildpackage -us -uc -b) >build/deb/build.log 2>&1 || {
    tail -n 40 build/deb/build.log >&2
    exit 1
}
mv "build/deb/$deb" "build/$deb"

echo "lintian build/$deb"
lintian --fail-on error --display-info "build/$deb"
echo "built $top/build/$deb"
