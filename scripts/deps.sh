#!/bin/sh
# Installs the Debian packages mod_agentshop needs that are missing: apt-get as
# root, sudo otherwise. Silent and fast when everything is present.
# It leaves the system's Apache as it found it: no service is started while
# packages install (a policy-rc.d that forbids it, for the install only), and
# a module that a package's install script enabled (mod_perl's perl.load) is
# disabled again; the modules apache2 itself enables on a first install stay.
# The test set also installs the npm packages of t/js (the OpenAPI linters,
# JSON Schema validator, TypeScript client generator and compiler, MCP SDK and
# browser driver) exactly as t/js/package-lock.json pins them.
# usage: scripts/deps.sh build|test|pg|bench|fresh|fuzz
set -eu
build="gcc make pkg-config apache2 apache2-dev libaprutil1-dbd-sqlite3 libjansson-dev libssl-dev libcbor-dev libstemmer-dev libsqlite3-dev libxxhash-dev"
test="$build libapache2-mod-perl2 libwww-perl libcmocka-dev curl sqlite3 strace nodejs npm chromium"
npm_too=0
case "${1:-build}" in
    build) want=$build ;;
    test) want=$test; npm_too=1 ;;
    pg) want="$test postgresql libaprutil1-dbd-pgsql"; npm_too=1 ;;
    bench) want="$build wrk curl sqlite3 postgresql libaprutil1-dbd-pgsql" ;;
    fresh) want="debootstrap curl" ;; # make test-fresh, on the host
    # the fuzz harnesses (t/fuzz): clang-14, and libclang-rt-14-dev carries
    # libFuzzer and the sanitizer runtimes
    fuzz) want="make clang libclang-rt-14-dev libjansson-dev libssl-dev libcbor-dev libstemmer-dev libxxhash-dev" ;;
    *) echo "deps.sh: unknown set '$1'" >&2; exit 2 ;;
esac

# npm ci when node_modules is missing or older than the lock file.
npm_deps() {
    [ "$npm_too" -eq 1 ] || return 0
    dir="$(dirname "$0")/../t/js"
    stamp="$dir/node_modules/.package-lock.json"
    if [ -f "$stamp" ] && [ ! "$dir/package-lock.json" -nt "$stamp" ]; then return 0; fi
    echo "Installing the npm packages of t/js (npm ci)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# Node.js may come from elsewhere than Debian (nodesource): a working node and
# npm are enough.
case "$missing" in *" nodejs"* | *" npm"*)
    if command -v node >/dev/null && command -v npm >/dev/null; then
        missing=$(printf '%s' "$missing" | sed -e 's/ nodejs\b//' -e 's/ npm\b//')
    fi ;;
esac
# The *.load links in mods-enabled, one a line (none before apache2 is installed).
enabled_mods() {
    ls /etc/apache2/mods-enabled 2>/dev/null | sed -n 's/\.load$//p' | sort
}

if [ -n "$missing" ]; then
    # make -j may run this twice at once (deps and fuzz-deps): one install at a
    # time, by a lock on the tree's Makefile (readable by anyone, so root and a
    # user share it).
    exec 9<"$(dirname "$0")/../Makefile"
    flock 9
    echo "Installing missing packages:$missing"
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    before=$(mktemp)
    enabled_mods >"$before"
    policy=/usr/sbin/policy-rc.d
    own_policy=""
    trap 'rm -f "$before"; [ -z "$own_policy" ] || $sudo rm -f "$policy"' EXIT
    if [ ! -e "$policy" ]; then
        # Exit status 101: "action forbidden", honoured by invoke-rc.d and
        # deb-systemd-invoke; removed again whatever happens.
        own_policy=1
        printf '#!/bin/sh\n# scripts/deps.sh of mod_agentshop: no service starts while it installs.\nexit 101\n' |
            $sudo tee "$policy" >/dev/null
        $sudo chmod 0755 "$policy"
    fi
    # Another apt (unattended-upgrades on a machine's first boot, a second
    # checkout's make) may hold apt's locks: install waits for dpkg's lock
    # (DPkg::Lock::Timeout); update does not wait for the lists' lock, so it is
    # tried again for as long.
    tries=0
    err=$(mktemp)
    until $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq 2>"$err"; do
        cat "$err" >&2
        tries=$((tries + 1))
        grep -q "Could not get lock" "$err" && [ "$tries" -lt 120 ] || { rm -f "$err"; exit 100; }
        echo "apt is busy; trying apt-get update again in 5 s" >&2
        sleep 5
    done
    cat "$err" >&2
    rm -f "$err"
    # shellcheck disable=SC2086
    $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
    [ -z "$own_policy" ] || $sudo rm -f "$policy"
    own_policy=""
    for m in $(enabled_mods | comm -13 "$before" -); do
        owner=$(dpkg-query -S "/etc/apache2/mods-available/$m.load" 2>/dev/null | cut -d: -f1)
        case "$owner" in apache2 | apache2-bin | "") continue ;; esac
        echo "Disabling the Apache module $m that installing $owner enabled (the system's Apache stays as it was)"
        $sudo a2dismod -q -f "$m" >/dev/null
    done
    rm -f "$before"
fi
npm_deps
