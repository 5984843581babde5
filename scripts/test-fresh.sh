#!/bin/bash
# make test-fresh: the README's two commands on a pristine Debian 12.
#
# Builds a root file system with debootstrap --variant=minbase (the host's
# mirror; only git, make, ca-certificates and sudo added: scripts/pristine-root.sh),
# copies this checkout in twice (tracked files and new ones git does not
# ignore, as they are in the work tree; no build products, no node_modules),
# once for root and once for 'builder', an ordinary user who may sudo, and runs:
#   1. builder: make run   (installs the build set through sudo), then searches
#                          and buys with curl through the key make run printed
#   2. root:    make test  (installs the test set as root), then checks that it
#                          left the system's Apache as it found it
#   3. builder: make test
#   4. root:    make run   (httpd's children as www-data), search and buy
# FRESH=run (what .ci/run uses) runs 1 and 4 only. Every check prints a line;
# the last line is `fresh: N passed, M failed`. The root, its mounts and
# anything still running inside are removed at the end, whatever happens.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
if [ "$(id -u)" -ne 0 ]; then
    echo "test-fresh: needs root (debootstrap, mount, chroot); run: sudo make test-fresh" >&2
    exit 2
fi
. scripts/pristine-root.sh
. scripts/httpd-helpers.sh
mode=${FRESH:-all}
scripts/deps.sh fresh >/dev/null # debootstrap, curl on the host

work=$(mktemp -d /tmp/agentshop-fresh.XXXXXX)
root=$work/root
logs=${FRESH_LOGS:-$top/build/fresh}
rm -rf "$logs"
mkdir -p "$logs"
cleanup() {
    pristine_destroy "$root" || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass=0
fail=0
check() { # check NAME COMMAND...: one line per check
    local name=$1
    shift
    if "$@" >/dev/null 2>&1; then
        echo "ok   $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name"
        fail=$((fail + 1))
    fi
}
finish() {
    echo "test-fresh: logs in $logs"
    echo "fresh: $pass passed, $fail failed"
    [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
    exit
}

home_of() { if [ "$1" = root ]; then echo /root; else echo "/home/$1"; fi; }

copy_checkout() { # copy_checkout USER
    local dest
    dest="$root$(home_of "$1")/agentshop"
    mkdir -p "$dest"
    git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$dest" -xf -
    if [ "$1" != root ]; then chroot "$root" chown -R "$1:$1" "$(home_of "$1")/agentshop"; fi
}

# An HTTP exchange from the host (the root shares its loopback):
# http METHOD URL [BODY [HEADER...]] prints the status on the first line, then the body.
http() {
    local method=$1 url=$2 body=${3:-}
    shift 3 2>/dev/null || shift $#
    local args=(-s -o "$work/body" -w '%{http_code}' -X "$method")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
    local h
    for h in "$@"; do args+=(-H "$h"); done
    curl "${args[@]}" "$url" >"$work/status" 2>/dev/null || echo 000 >"$work/status"
    cat "$work/status"
    echo
    cat "$work/body"
}
field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" | head -n 1; } # first string field

# make run as USER: wait until it serves, search and buy through the key it
# printed, then stop it as Ctrl-C would.
run_and_buy() {
    local who=$1 port log pid key sku quote order status i
    port=$(free_ports 8700 8999 1)
    log="$logs/run-$who.log"
    echo "== $who: make run PORT=$port"
    pristine_run "$root" "$who" "cd agentshop && exec make run PORT=$port" >"$log" 2>&1 &
    pid=$!
    # The first run installs packages and builds: give it up to 20 minutes.
    for i in $(seq 1 1200); do
        grep -q '^Serving http' "$log" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    check "$who: make run says it serves" grep -q '^Serving http' "$log"
    local B=http://127.0.0.1:$port/v1
    for i in $(seq 1 50); do
        [ "$(http GET "$B/search?q=soap" | head -n 1)" = 200 ] && break
        sleep 0.2
    done
    key=$(sed -n 's/^ *KEY=//p' "$log" | head -n 1)
    check "$who: make run printed an agent key" test -n "$key"
    local A=("Authorization: Bearer $key" "Service-Agent: test-fresh/1.0")

    http GET "$B/search?q=hand+soap&limit=3" >"$work/search"
    check "$who: search answers 200" test "$(head -n 1 "$work/search")" = 200
    sku=$(field sku <"$work/search")
    check "$who: search finds hand soap" test -n "$sku"

    http POST "$B/quotes" "{\"sku\":\"$sku\",\"quantity\":1}" "${A[@]}" >"$work/quote"
    check "$who: quote answers 201" test "$(head -n 1 "$work/quote")" = 201
    quote=$(field id <"$work/quote")

    http POST "$B/orders" "{\"quote_id\":\"$quote\",\"reason\":\"test-fresh buys the cheapest verified soap\"}" \
        "${A[@]}" "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)" >"$work/order"
    check "$who: order answers 201" test "$(head -n 1 "$work/order")" = 201
    order=$(field id <"$work/order")
    status=$(field status <"$work/order")
    check "$who: the order is placed" test "$status" = placed

    http GET "$B/orders/$order" "" "${A[@]}" >"$work/read"
    check "$who: the order reads back" grep -q "\"id\": *\"$order\"" "$work/read"

    # Ctrl-C: httpd stops, make run ends.
    kill -INT "$(cat "$root$(home_of "$who")/agentshop/build/run/$port/httpd.pid" 2>/dev/null)" 2>/dev/null
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    check "$who: make run stops on Ctrl-C" bash -c "! kill -0 $pid 2>/dev/null"
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

test_as() {
    local who=$1 log="$logs/test-$who.log"
    echo "== $who: make test"
    pristine_run "$root" "$who" "cd agentshop && make test" >"$log" 2>&1
    local rc=$?
    tail -n 3 "$log" | sed 's/^/   /'
    check "$who: make test exits 0" test "$rc" -eq 0
    check "$who: make test ran tests and none failed" \
        grep -Eq '^total: [1-9][0-9]* passed, 0 failed$' "$log"
}

# What make test must leave as it found it: no module enabled by an install
# script, no policy-rc.d of ours, no process still running in the root.
system_untouched() {
    check "the system's Apache has no module enabled by make test (perl.load)" \
        test ! -e "$root/etc/apache2/mods-enabled/perl.load"
    check "no policy-rc.d left behind" test ! -e "$root/usr/sbin/policy-rc.d"
    local d pid n=0
    d=$(readlink -f "$root")
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
        [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$d" ] && n=$((n + 1))
    done
    check "no service or process left running in the root ($n)" test "$n" -eq 0
}

echo "== a pristine Debian 12 in $root"
if ! pristine_make "$root"; then
    check "debootstrap a pristine root" false
    finish
fi
check "the root has no Apache, compiler or SQLite before make" \
    test ! -e "$root/usr/sbin/apache2" -a ! -e "$root/usr/bin/gcc" -a ! -e "$root/usr/bin/sqlite3"
copy_checkout builder
copy_checkout root

run_and_buy builder
if [ "$mode" != run ]; then
    test_as root
    system_untouched
    test_as builder
fi
run_and_buy root
[ "$mode" = run ] && system_untouched
finish
