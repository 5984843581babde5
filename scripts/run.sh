#!/bin/sh
# make run: create the demo database when missing and serve /v1 in the foreground.
set -eu
port=$1
db=$2
top=$(pwd)
case "$db" in /*) ;; *) db="$top/$db" ;; esac
rundir="$top/build/run"
dbdir=$(dirname "$db")
made_dbdir=""
[ -d "$dbdir" ] || made_dbdir=1
mkdir -p "$rundir" "$dbdir"
user=""
if [ "$(id -u)" -eq 0 ]; then
    # httpd's children cannot run as root: they run as www-data, which must be
    # able to write the database and its directory (-wal, -shm). The directory
    # is handed over only when this script made it, or it is the project's var/:
    # never an existing directory such as /tmp.
    user="User www-data
Group www-data"
    if [ -n "$made_dbdir" ] || [ "$dbdir" = "$top/var" ]; then
        chown www-data:www-data "$dbdir"
    fi
    for f in "$db" "$db-wal" "$db-shm"; do
        [ -e "$f" ] && chown www-data:www-data "$f"
    done
    if ! runuser -u www-data -- test -w "$dbdir"; then
        echo "make run: www-data cannot write $dbdir; give it a directory of its own, e.g." >&2
        echo "  install -d -o www-data -g www-data /var/lib/agentshop && make run DB=/var/lib/agentshop/agentshop.db" >&2
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
if [ "$(id -u)" -eq 0 ]; then # files the admin tool made as root: httpd's now
    for f in "$db" "$db-wal" "$db-shm"; do
        [ -e "$f" ] && chown www-data:www-data "$f"
    done
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
