#!/bin/bash
# agentshopctl init migrating a PostgreSQL database of schema version 1 (the
# layout before schema_version, t/fixtures/schema-v1.pgsql.sql) with orders in
# it (t/fixtures/orders-v1.sql), then refusing a newer version. Run by
# scripts/test-pg.sh with PG_SOCKDIR set and a database "old" created. Prints
# "migrate-pg: N passed, M failed".
set -u
ctl=bin/agentshopctl
conn="host=$PG_SOCKDIR user=agentshop dbname=old"
psql_() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCKDIR" -U agentshop -d old "$@"; }
pass=0
fail=0
check() { # check NAME COMMAND...
    if "${@:2}"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "migrate-pg: FAILED: $1" >&2; fi
}
psql_ -f t/fixtures/schema-v1.pgsql.sql >/dev/null 2>&1
psql_ -f t/fixtures/orders-v1.sql >/dev/null
check "the old database has its orders" test "$(psql_ -c 'SELECT COUNT(*) FROM orders')" = 2
err=$($ctl --driver pgsql --params "$conn" mandate list 2>&1 >/dev/null)
check "a command on version 1 points at init" grep -q "schema version 1.*init migrates" <<<"$err"
out=$($ctl --driver pgsql --params "$conn" init)
check "init migrates it" test $? -eq 0
check "... from version 1" grep -q '"from": 1' <<<"$out"
check "... saying so" grep -q '"action": "migrated"' <<<"$out"
check "... recording the version" test "$(psql_ -c 'SELECT version FROM schema_version')" = 2
check "... keeping the orders" \
    test "$(psql_ -c "SELECT string_agg(id || ':' || status, ' ' ORDER BY id) FROM orders")" = \
    "ord_old1:placed ord_old2:delivered"
check "... and the month's spending" \
    test "$(psql_ -c "SELECT cents FROM mandate_spent WHERE mandate_id = 'mdt_old'")" = 1500
out=$($ctl --driver pgsql --params "$conn" mandate list)
check "the other commands work on it" grep -q mdt_old <<<"$out"
psql_ -c 'UPDATE schema_version SET version = 999'
err=$($ctl --driver pgsql --params "$conn" init 2>&1 >/dev/null)
check "a newer version is refused" grep -q "version 999, newer.*Nothing was changed" <<<"$err"
check "... unchanged" test "$(psql_ -c 'SELECT version FROM schema_version')" = 999
echo "migrate-pg: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
