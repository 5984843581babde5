#!/bin/sh
# make run: create the demo database when missing and serve /v1 in the foreground.
set -eu
port=$1
db=$2
top=$(pwd)
case "$db" in /*) ;; *) db="$top/$db" ;; esac
rundir="$top/build/run"
mkdir -p "$rundir" "$(dirname "$db")"
user=""
if [ "$(id -u)" -eq 0 ]; then
    # httpd's children cannot run as root: they run as www-data, which must own
    # the database directory (agentshopctl then creates files as that owner).
    user="User www-data
Group www-data"
    chown www-data:www-data "$(dirname "$db")"
    [ -e "$db" ] && chown www-data:www-data "$db"* 
    if ! runuser -u www-data -- test -w "$(dirname "$db")"; then
        echo "make run: www-data cannot write $(dirname "$db"); use DB=/some/dir/agentshop.db" >&2
        exit 1
    fi
fi
if [ ! -e "$db" ]; then
    echo "Creating the demo database $db"
    bin/agentshopctl --params "$db" init --demo >/dev/null
else
    bin/agentshopctl --params "$db" init >/dev/null # adds what a newer version needs
fi
# The secret that signs confirmation links: made once, kept beside the database.
keyfile="$(dirname "$db")/signing.key"
if [ ! -s "$keyfile" ]; then
    (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$keyfile")
fi
# A demo user, agent key and mandate, the first time.
if [ -z "$(bin/agentshopctl --params "$db" mandate list --user demo | grep '"id"')" ]; then
    key=$(bin/agentshopctl --params "$db" key create --user demo)
    mandate=$(bin/agentshopctl --params "$db" mandate create --user demo \
        --categories hand-soap,air-filters,vacuum-parts,coffee-kitchen,printer-ink,chargers-cables,batteries \
        --per-order-eur 250 --monthly-eur 1000 --confirm-above-eur 100)
    echo "Created the demo user 'demo'. Its agent key (shown only now, stored only as a hash):"
    echo "$key" | sed -n 's/.*"key": "\(.*\)".*/  \1/p'
    echo "and its mandate:"
    echo "$mandate" | sed 's/^/  /'
fi
sed -e "s|@RUNDIR@|$rundir|g" -e "s|@PORT@|$port|g" -e "s|@TOP@|$top|g" -e "s|@DB@|$db|g" \
    -e "s|@KEYFILE@|$keyfile|g" \
    conf/run.conf.in | awk -v user="$user" '{ if ($0 == "@USER@") print user; else print }' \
    > "$rundir/httpd.conf"
/usr/sbin/apache2 -f "$rundir/httpd.conf" -t >/dev/null 2>"$rundir/configtest.log" || {
    cat "$rundir/configtest.log" >&2; exit 1; }
echo "Serving http://127.0.0.1:$port/v1 (database $db). Press Ctrl-C to stop."
echo "Try: curl 'http://127.0.0.1:$port/v1/search?q=filter&limit=3'"
exec /usr/sbin/apache2 -f "$rundir/httpd.conf" -DFOREGROUND
