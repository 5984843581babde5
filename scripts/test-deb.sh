#!/bin/bash
# The Debian package on a pristine Debian 12 (scripts/pristine-root.sh): apt
# installs it with its dependencies; the layout, the secret and the state
# directory are checked; the module is enabled and an order is placed over
# HTTP; a reinstall keeps the secret and the data; remove keeps the data and
# purge leaves nothing the package made; an install over a database of schema
# 1 migrates it and keeps its orders. One check per line; the last line is
# "deb: N passed, M failed". Needs root; run by make test-deb after make deb.
set -u
cd "$(dirname "$0")/.."
# shellcheck source=scripts/pristine-root.sh
. scripts/pristine-root.sh
. scripts/shop-checks.sh

if [ "$(id -u)" -ne 0 ]; then
    echo "test-deb: needs root (debootstrap, mount, chroot)" >&2
    exit 1
fi
deb=$(ls build/libapache2-mod-agentshop_*.deb 2>/dev/null | tail -n 1)
[ -n "$deb" ] || { echo "test-deb: no build/libapache2-mod-agentshop_*.deb (make deb)" >&2; exit 1; }
pkg=libapache2-mod-agentshop
start=$(date +%s)

tmp=$(mktemp -d /tmp/test-deb.XXXXXX)
root=$tmp/root
cleanup() {
    if [ -d "$root" ]; then
        [ -x "$root/usr/sbin/apache2ctl" ] && pristine_run "$root" root 'apache2ctl stop' >/dev/null 2>&1
        # Only once nothing is mounted inside may the directory go.
        pristine_destroy "$root" || return
    fi
    rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; }
# check DESCRIPTION CMD...: one assertion
check() {
    local d=$1
    shift
    if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# Inside the root, as root; output to stdout.
in_root() { pristine_run "$root" root "$*"; }
exists() { [ -e "$root$1" ] || [ -L "$root$1" ]; }
absent() { ! exists "$1"; }
# equal DESCRIPTION GOT WANT
equal() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi
}
apt_in_root() {
    in_root "DEBIAN_FRONTEND=noninteractive apt-get $* -o Dpkg::Options::=--force-confold" \
        >"$tmp/apt.log" 2>&1 || { tail -n 30 "$tmp/apt.log"; return 1; }
}

# httpd inside listens on the host's loopback: port 80 unless the host uses it.
port=80
if (exec 3<>/dev/tcp/127.0.0.1/80) 2>/dev/null; then
    port=18080
    while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
fi

pristine_make "$root" || { echo "test-deb: no pristine root"; exit 1; }
cp "$deb" "$root/tmp/"
debname=$(basename "$deb")
# A chroot has no init system, and invoke-rc.d then blocks every action unless
# a policy allows it: allow all, so that the maintainer scripts start and
# restart httpd as they would on a real machine.
printf '#!/bin/sh\nexit 0\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
if [ "$port" != 80 ]; then
    # Before apache2 is installed: its postinst starts httpd on this port.
    mkdir -p "$root/etc/apache2"
    printf 'Listen %s\n' "$port" >"$root/etc/apache2/ports.conf"
fi
echo "test-deb: $debname on $root, httpd on 127.0.0.1:$port (apt log: $tmp/apt.log)"

# ---- install ----
check "apt-get install ./$debname (with apache2 and the dbd drivers)" \
    apt_in_root install -y -q "/tmp/$debname"
equal "dpkg: $pkg installed" "$(in_root "dpkg-query -W -f='\${Status}' $pkg")" "install ok installed"
for f in /usr/lib/apache2/modules/mod_agentshop.so /etc/apache2/mods-available/agentshop.load \
    /etc/apache2/mods-available/agentshop.conf /usr/sbin/agentshopctl \
    /usr/share/agentshop/demo/catalogue.jsonl /usr/share/doc/$pkg/README.Debian \
    /usr/share/doc/$pkg/copyright /usr/share/man/man8/agentshopctl.8.gz /usr/sbin/apache2; do
    check "installed: $f" exists "$f"
done
conffiles=$(in_root "dpkg-query -W -f='\${Conffiles}' $pkg" | awk '{ print $1 }' | sort | tr '\n' ' ')
equal "conffiles: agentshop.conf and agentshop.load" "$conffiles" \
    "/etc/apache2/mods-available/agentshop.conf /etc/apache2/mods-available/agentshop.load "
check "not enabled on install (no mods-enabled/agentshop.load)" absent /etc/apache2/mods-enabled/agentshop.load
check "apache2's install started httpd" exists /run/apache2/apache2.pid
key=/etc/apache2/agentshop-signing.key
equal "signing secret: mode, owner, size" "$(stat -c '%a %U %G %s' "$root$key" 2>&1)" "600 root root 64"
check "signing secret: 64 hex characters" grep -Eqx '[0-9a-f]{64}' "$root$key"
equal "/var/lib/agentshop: mode and owner" "$(stat -c '%a %U %G' "$root/var/lib/agentshop" 2>&1)" \
    "750 www-data www-data"
equal "database made by setup, www-data's" \
    "$(stat -c '%U' "$root/var/lib/agentshop/agentshop.db" 2>&1)" "www-data"

# ---- enable, serve, buy ----
check "a2enmod agentshop" in_root 'a2enmod -q agentshop >/dev/null'
check "a2enmod enabled dbd too" exists /etc/apache2/mods-enabled/dbd.load
check "apache2ctl restart" in_root 'apache2ctl restart >/tmp/restart.log 2>&1 || { cat /tmp/restart.log; false; }'
check "agentshopctl init --demo" in_root 'agentshopctl init --demo >/dev/null'
apikey=$(in_root 'agentshopctl key create --user demo' | perl -MJSON::PP -0777 -ne 'print decode_json($_)->{key}')
check "agentshopctl key create --user demo" [ -n "$apikey" ]
check "agentshopctl mandate create" in_root 'agentshopctl mandate create --user demo \
    --categories hand-soap --per-order-eur 250 --monthly-eur 1000 --confirm-above-eur 100 >/dev/null'

base=http://127.0.0.1:$port/v1
auth=(-H "Authorization: Bearer $apikey" -H "Service-Agent: test/1.0" -H "Content-Type: application/json")
work=$tmp
shop package "$base" "$apikey" # search, quote, order, read back (scripts/shop-checks.sh)
order=$SHOP_ORDER

# ---- reinstall: the secret and the data stay; httpd comes back ----
before=$(cat "$root$key")
pid=$(cat "$root/run/apache2/apache2.pid" 2>/dev/null)
check "apt-get install --reinstall" apt_in_root install -y -q --reinstall "/tmp/$debname"
restarted() { [ -n "$pid" ] && [ "$(cat "$root/run/apache2/apache2.pid" 2>/dev/null)" != "$pid" ]; }
check "reinstall restarted httpd (the module is enabled)" restarted
equal "reinstall kept the signing secret" "$(cat "$root$key")" "$before"
check "reinstall kept the module enabled" exists /etc/apache2/mods-enabled/agentshop.load
code=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/orders/$order")
equal "after the reinstall, GET /v1/orders/ID: 200 (key and order kept)" "$code" 200

# ---- remove keeps the data; purge removes everything ----
check "apt-get remove" apt_in_root remove -y -q $pkg
check "remove disabled the module" absent /etc/apache2/mods-enabled/agentshop.load
check "remove removed the module" absent /usr/lib/apache2/modules/mod_agentshop.so
equal "remove kept the signing secret" "$(cat "$root$key" 2>&1)" "$before"
check "remove kept the database" exists /var/lib/agentshop/agentshop.db
check "apache2ctl configtest without the module" in_root 'apache2ctl configtest 2>/dev/null'
check "apt-get purge" apt_in_root purge -y -q $pkg
equal "dpkg: $pkg purged" "$(in_root "dpkg-query -W -f='\${Status}' $pkg 2>/dev/null")" ""
for f in /usr/lib/apache2/modules/mod_agentshop.so /etc/apache2/mods-available/agentshop.load \
    /etc/apache2/mods-available/agentshop.conf /etc/apache2/mods-enabled/agentshop.load \
    /etc/apache2/mods-enabled/agentshop.conf /usr/sbin/agentshopctl /usr/share/agentshop \
    /usr/share/doc/$pkg /usr/share/man/man8/agentshopctl.8.gz $key /var/lib/agentshop \
    /var/lib/apache2/module/enabled_by_admin/agentshop /var/lib/apache2/module/enabled_by_maint/agentshop \
    /var/lib/apache2/module/disabled_by_maint/agentshop; do
    check "purged: $f" absent "$f"
done
left=$(cd "$root" && find etc usr var -name '*agentshop*' 2>/dev/null | tr '\n' ' ')
equal "purge left no file named *agentshop*" "$left" ""

# ---- an older database (schema 1) left by remove: configure migrates it ----
check "apt-get install sqlite3 (to write a schema 1 database)" apt_in_root install -y -q sqlite3
cp t/fixtures/schema-v1.sqlite.sql t/fixtures/orders-v1.sql "$root/tmp/"
check "a schema 1 database with two orders in /var/lib/agentshop" in_root 'set -e
    install -d -o www-data -g www-data -m 0750 /var/lib/agentshop
    cat /tmp/schema-v1.sqlite.sql /tmp/orders-v1.sql | runuser -u www-data -- sqlite3 /var/lib/agentshop/agentshop.db'
check "apt-get install ./$debname over it" apt_in_root install -y -q "/tmp/$debname"
schema=$(sed -n 's/^#define AS_SCHEMA_VERSION \([0-9]*\).*/\1/p' sql/as_db.h)
equal "configure migrated it to schema $schema (sql/as_db.h)" \
    "$(in_root 'sqlite3 /var/lib/agentshop/agentshop.db "SELECT version FROM schema_version"' 2>&1)" "$schema"
equal "the migration kept its orders" \
    "$(in_root 'sqlite3 /var/lib/agentshop/agentshop.db "SELECT group_concat(id) FROM orders"' 2>&1)" \
    "ord_old1,ord_old2"
check "agentshopctl mandate list shows its mandate" in_root 'agentshopctl mandate list | grep -q mdt_old'
check "apt-get purge" apt_in_root purge -y -q $pkg
check "purged: /var/lib/agentshop" absent /var/lib/agentshop

in_root 'apache2ctl stop' >/dev/null 2>&1
echo "test-deb: $(($(date +%s) - start)) s"
echo "deb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
