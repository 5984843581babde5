#!/bin/bash
# make test-pg: the whole Apache::Test suite with DBDriver pgsql, on a throwaway
# PostgreSQL cluster (initdb and pg_ctl into a temporary directory, a Unix
# socket only, no system service), stopped and removed afterwards.
set -u -o pipefail
top=$(pwd)
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/initdb" ] || { echo "test-pg: PostgreSQL is not installed" >&2; exit 1; }
dir=$(mktemp -d /tmp/agentshop-pg.XXXXXX)
chmod 755 "$dir"
runas=""
if [ "$(id -u)" -eq 0 ]; then # PostgreSQL refuses to run as root
    chown nobody:nogroup "$dir"
    runas="runuser -u nobody --"
fi
stop() {
    $runas "$pgbin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$dir"
}
trap stop EXIT
$runas "$pgbin/initdb" -D "$dir/data" -A trust -U agentshop -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log"; exit 1; }
# every child's mod_dbd pool may hold DBDMax connections
$runas "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-k $dir -c listen_addresses='' -c max_connections=300" start >/dev/null ||
    { cat "$dir/server.log"; exit 1; }
$runas "$pgbin/createdb" -h "$dir" -U agentshop shop || exit 1
export AGENTSHOP_TEST_DRIVER=pgsql AGENTSHOP_TEST_PARAMS="host=$dir user=agentshop dbname=shop"
scripts/apache-test.sh "$@" | sed -u 's/^apache: /pgsql: /'
