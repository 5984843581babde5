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
#      and two make run side by side on two ports, a third refused
#   2. root:    make test  (installs the test set as root), then checks that it
#                          left the system's Apache as it found it
#   3. builder: make test
#   4. root:    make install, a2enmod agentshop, apache2ctl start, search and
#               buy (the checkout moved away meanwhile), make uninstall PURGE=1
#   5. root:    make run   (httpd's children as www-data), search and buy
# FRESH=run (what .ci/run uses) runs 1 and 5 only. Every check prints a line;
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
. scripts/shop-checks.sh
mode=${FRESH:-all}
ports=${FRESH_PORTS:-8700} # the first port to try; two runs at once want two ranges
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

# make run as USER: wait until it serves, search and buy through the key it
# printed, then stop it as Ctrl-C would.
run_and_buy() {
    local who=$1 port log pid key i
    port=$(free_ports "$ports" 8999 1)
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
    shop "$who" "$B" "$key"

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
    local who=$1
    local log="$logs/test-$who.log"
    echo "== $who: make test"
    pristine_run "$root" "$who" "cd agentshop && make test" >"$log" 2>&1
    local rc=$?
    tail -n 3 "$log" | sed 's/^/   /'
    check "$who: make test exits 0" test "$rc" -eq 0
    check "$who: make test ran tests and none failed" \
        grep -Eq '^total: [1-9][0-9]* passed, 0 failed$' "$log"
}

# Two make run of one checkout side by side (a run directory and a database
# per port), and a third refused because it names a database another serves.
side_by_side() {
    local who=$1 p1 p2 p3 pid1 pid2 i
    read -r p1 p2 p3 < <(free_ports "$ports" 8999 3 | tr '\n' ' ')
    echo "== $who: make run PORT=$p1 and PORT=$p2 side by side"
    pristine_run "$root" "$who" "cd agentshop && exec make run PORT=$p1" >"$logs/side-$p1.log" 2>&1 &
    pid1=$!
    pristine_run "$root" "$who" "cd agentshop && exec make run PORT=$p2" >"$logs/side-$p2.log" 2>&1 &
    pid2=$!
    for i in $(seq 1 300); do
        grep -q '^Serving http' "$logs/side-$p1.log" && grep -q '^Serving http' "$logs/side-$p2.log" && break
        sleep 0.2
    done
    for i in $(seq 1 50); do
        [ "$(http GET "http://127.0.0.1:$p1/v1/search?q=soap" | head -n 1)" = 200 ] &&
            [ "$(http GET "http://127.0.0.1:$p2/v1/search?q=soap" | head -n 1)" = 200 ] && break
        sleep 0.2
    done
    check "$who: both serve at once" test "$(http GET "http://127.0.0.1:$p1/v1/search?q=soap" | head -n 1)$(
        http GET "http://127.0.0.1:$p2/v1/search?q=soap" | head -n 1)" = 200200
    local h=$root$(home_of "$who")/agentshop
    check "$who: each port has its run directory" test -f "$h/build/run/$p1/httpd.pid" -a -f "$h/build/run/$p2/httpd.pid"
    check "$who: each port has its database" \
        test "$(cat "$h/build/run/$p1/db" 2>/dev/null)" != "$(cat "$h/build/run/$p2/db" 2>/dev/null)"
    pristine_run "$root" "$who" "cd agentshop && make run PORT=$p3 DB=\$(cat build/run/$p1/db)" \
        >"$logs/side-$p3.log" 2>&1
    check "$who: a third make run on the first one's database is refused" \
        grep -q 'is already served by the make run' "$logs/side-$p3.log"
    kill -INT "$(cat "$h/build/run/$p1/httpd.pid")" "$(cat "$h/build/run/$p2/httpd.pid")" 2>/dev/null
    for i in $(seq 1 100); do
        kill -0 "$pid1" 2>/dev/null || kill -0 "$pid2" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid1" "$pid2" 2>/dev/null
    wait "$pid1" "$pid2" 2>/dev/null
}

# make install as root, the checkout moved away (the installed tool must not
# need it), a2enmod, Apache started by apache2ctl (no systemd here), search and
# buy; then make uninstall PURGE=1 leaves nothing behind.
install_and_remove() {
    local port log=$logs/install-root.log key
    port=$(free_ports "$ports" 8999 1)
    echo "== root: make install, a2enmod agentshop, apache2ctl start (port $port), make uninstall"
    pristine_run "$root" root "cd agentshop && make install" >"$log" 2>&1
    check "root: make install exits 0" test $? -eq 0
    local R=$root
    check "installed: the module" test -f "$R/usr/lib/apache2/modules/mod_agentshop.so"
    check "installed: agentshop.load and .conf in mods-available" \
        test -f "$R/etc/apache2/mods-available/agentshop.load" -a -f "$R/etc/apache2/mods-available/agentshop.conf"
    check "installed: /usr/local/sbin/agentshopctl" test -x "$R/usr/local/sbin/agentshopctl"
    check "installed: the demo catalogue" test -f "$R/usr/local/share/agentshop/demo/catalogue.jsonl"
    check "installed: /var/lib/agentshop owned by www-data" \
        test "$(pristine_run "$root" root 'stat -c %U /var/lib/agentshop')" = www-data
    check "installed: the signing secret, mode 600" \
        test "$(stat -c %a "$R/etc/apache2/agentshop-signing.key" 2>/dev/null)" = 600
    mv "$R/root/agentshop" "$R/root/agentshop.away"
    {
        pristine_run "$root" root "a2enmod agentshop && agentshopctl init --demo &&
            sed -i 's/^Listen 80\$/Listen 127.0.0.1:$port/' /etc/apache2/ports.conf &&
            apache2ctl start" 
        key=$(pristine_run "$root" root 'agentshopctl key create --user demo' | sed -n 's/.*"key": "\(.*\)".*/\1/p')
        pristine_run "$root" root 'agentshopctl mandate create --user demo --categories hand-soap \
            --per-order-eur 250 --monthly-eur 1000 --confirm-above-eur 100'
    } >>"$log" 2>&1
    check "a2enmod agentshop enabled dbd too" test -L "$R/etc/apache2/mods-enabled/dbd.load"
    local B=http://127.0.0.1:$port/v1 i
    for i in $(seq 1 50); do
        [ "$(http GET "$B/search?q=soap" | head -n 1)" = 200 ] && break
        sleep 0.2
    done
    shop installed "$B" "$key"
    mv "$R/root/agentshop.away" "$R/root/agentshop"
    pristine_run "$root" root "apache2ctl stop; sleep 1; cd agentshop && make uninstall PURGE=1 &&
        sed -i 's/^Listen 127.0.0.1:$port\$/Listen 80/' /etc/apache2/ports.conf" >>"$log" 2>&1
    check "root: make uninstall PURGE=1 exits 0" test $? -eq 0
    local left="" f
    for f in /usr/lib/apache2/modules/mod_agentshop.so /etc/apache2/mods-available/agentshop.load \
        /etc/apache2/mods-available/agentshop.conf /etc/apache2/mods-enabled/agentshop.load \
        /etc/apache2/mods-enabled/agentshop.conf /usr/local/sbin/agentshopctl \
        /usr/local/share/agentshop /usr/local/share/doc/agentshop /var/lib/agentshop \
        /etc/apache2/agentshop-signing.key; do
        if [ -e "$R$f" ] || [ -L "$R$f" ]; then left="$left $f"; fi
    done
    check "make uninstall PURGE=1 removed everything make install made${left:+ (left:$left)}" test -z "$left"
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
side_by_side builder
if [ "$mode" != run ]; then
    test_as root
    system_untouched
    test_as builder
    install_and_remove
fi
run_and_buy root
[ "$mode" = run ] && system_untouched
finish
