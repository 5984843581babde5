#!/bin/sh
# make run: prepare the demo database and serve /v1 in the foreground.
# usage: scripts/run.sh PORT [DB]
#   Each port has its own run directory, build/run/PORT (generated httpd.conf,
#   pid file, mutexes), so several `make run` work side by side. Without DB the
#   database is var/agentshop.db on port 8080 and var/agentshop-PORT.db on any
#   other: one SQLite database is served by one httpd only, because each httpd
#   serialises its own checkpoints (docs/storage.md), so a DB that another
#   `make run` serves is refused.
set -eu
port=$1
top=$(pwd)
case "$port" in '' | *[!0-9]*)
    echo "make run: PORT must be a number, not '$port'" >&2
    exit 2 ;;
esac
if [ -n "${2:-}" ]; then
    db=$2
else
    name=agentshop.db
    [ "$port" = 8080 ] || name=agentshop-$port.db
    db=var/$name
    # As root, httpd's children run as www-data, which cannot reach a checkout
    # under a closed home directory (/root): the database goes elsewhere then.
    if [ "$(id -u)" -eq 0 ] && ! runuser -u www-data -- test -x "$top"; then
        db=/var/tmp/agentshop-make-run/$name
        echo "make run: www-data cannot reach $top, so the database is $db"
    fi
fi
case "$db" in /*) ;; *) db="$top/$db" ;; esac
rundir="$top/build/run/$port"
dbdir=$(dirname "$db")

# Another make run of this checkout serving the same database?
for other in "$top"/build/run/*/; do
    [ "$other" = "$rundir/" ] && continue
    [ -f "$other/db" ] && [ "$(cat "$other/db")" = "$db" ] || continue
    pid=$(cat "$other/httpd.pid" 2>/dev/null) || continue
    if kill -0 "$pid" 2>/dev/null; then
        echo "make run: $db is already served by the make run in $other (pid $pid)." >&2
        echo "  One SQLite database, one httpd: give this one its own, e.g." >&2
        echo "  make run PORT=$port DB=var/agentshop-$port.db" >&2
        exit 1
    fi
done
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "make run: something already listens on 127.0.0.1:$port; choose another: make run PORT=8081" >&2
    exit 1
fi

made_dbdir=""
[ -d "$dbdir" ] || made_dbdir=1
mkdir -p "$rundir" "$dbdir"
user=""
ctl() { bin/agentshopctl --params "$db" "$@"; }
if [ "$(id -u)" -eq 0 ]; then
    # httpd's children cannot run as root: they run as www-data, which must be
    # able to write the database and its directory (-wal, -shm). The directory
    # is handed over only when this script made it, or it is the project's var/:
    # never an existing directory such as /tmp.
    user="User www-data
Group www-data"
    if [ -n "$made_dbdir" ] || [ "$dbdir" = "$top/var" ] || [ "$dbdir" = /var/tmp/agentshop-make-run ]; then
        chown www-data:www-data "$dbdir"
    fi
    if ! runuser -u www-data -- test -w "$dbdir"; then
        echo "make run: www-data cannot write $dbdir; give it a directory of its own, e.g." >&2
        echo "  install -d -o www-data -g www-data /var/lib/agentshop && make run DB=/var/lib/agentshop/agentshop.db" >&2
        exit 1
    fi
    for f in "$db" "$db-wal" "$db-shm"; do
        if [ -e "$f" ]; then chown www-data:www-data "$f"; fi
    done
    # www-data must reach the database through every directory above it.
    if ! runuser -u www-data -- test -x "$dbdir"; then
        echo "make run: www-data cannot reach $dbdir (a directory above it is closed to others)" >&2
        exit 1
    fi
fi
# The schema, brought up to date, and the demo catalogue whenever the
# database has none (agentshopctl keeps a catalogue that is there). Run as
# root, agentshopctl becomes the owner of the database directory, so the
# files it makes stay writable by httpd.
ctl init --demo >"$rundir/init.json" || {
    echo "make run: preparing the database $db failed" >&2
    exit 1
}
grep -q '"kept"' "$rundir/init.json" || echo "Loaded the demo catalogue into $db"
# The secret that signs confirmation links: made once, kept beside the database.
keyfile="$dbdir/signing.key"
scripts/signing-key.sh "$keyfile"
# A demo user, agent key and mandate, the first time.
if [ -z "$(ctl mandate list --user demo | grep '"id"')" ]; then
    key=$(ctl key create --user demo)
    mandate=$(ctl mandate create --user demo \
        --categories hand-soap,air-filters,vacuum-parts,coffee-kitchen,printer-ink,chargers-cables,batteries \
        --per-order-eur 250 --monthly-eur 1000 --confirm-above-eur 100)
    echo "Created the demo user 'demo'. Its agent key (shown only now, stored only as a hash):"
    echo "$key" | sed -n 's/.*"key": "\(.*\)".*/  KEY=\1/p'
    echo "and its mandate:"
    echo "$mandate" | sed 's/^/  /'
fi
if [ "$(id -u)" -eq 0 ]; then # files the admin tool made as root: httpd's now
    for f in "$db" "$db-wal" "$db-shm"; do
        if [ -e "$f" ]; then chown www-data:www-data "$f"; fi
    done
fi
echo "$db" >"$rundir/db"
sed -e "s|@RUNDIR@|$rundir|g" -e "s|@PORT@|$port|g" -e "s|@TOP@|$top|g" -e "s|@DB@|$db|g" \
    -e "s|@KEYFILE@|$keyfile|g" \
    conf/run.conf.in | awk -v user="$user" '{ if ($0 == "@USER@") print user; else print }' \
    >"$rundir/httpd.conf"
/usr/sbin/apache2 -f "$rundir/httpd.conf" -t >/dev/null 2>"$rundir/configtest.log" || {
    cat "$rundir/configtest.log" >&2
    exit 1
}
params=""
[ "$db" = "$top/var/agentshop.db" ] || params=" --params $db"
# Orders above the demo mandate's threshold (100 EUR) wait for the person's
# passkey: until demo has one, a fresh one-time link to register it.
if [ -z "$(ctl user passkeys demo | grep '"id"')" ]; then
    enrol=$(ctl user enrol demo --base-url "http://localhost:$port/v1")
    echo "Approving orders above 100 EUR takes the demo person's passkey. Open this one-time"
    echo "link in a browser on this machine to register one (never give it to an agent):"
    echo "$enrol" | sed -n 's/.*"url": "\(.*\)".*/  \1/p'
fi
cat <<EOT
Serving http://localhost:$port/v1 (database $db). Press Ctrl-C to stop.
Try:
  B=http://localhost:$port/v1
  curl "\$B/search?q=filter&limit=3"
The admin tool for this database: bin/agentshopctl$params (e.g. order ship ID)
EOT
exec /usr/sbin/apache2 -f "$rundir/httpd.conf" -DFOREGROUND
