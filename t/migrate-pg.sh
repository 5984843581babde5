#!/bin/bash
# agentshopctl init migrating PostgreSQL databases: one of schema version 1
# (the layout before schema_version, t/fixtures/schema-v1.pgsql.sql) with orders
# in it (t/fixtures/orders-v1.sql), then refusing a newer version; one of
# version 2 (t/fixtures/make-v2.sh) keeping every row, in the layout of a new
# database, all or nothing. Run by scripts/test-pg.sh with PG_SOCKDIR set and
# a database "old" created (it creates the others). Prints
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
check "... recording the version" test "$(psql_ -c 'SELECT version FROM schema_version')" = 8
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

# ---- version 2 ----
for db in fresh v2 v2view v2part; do psql_ -c "CREATE DATABASE $db"; done
on() { # on DB psql-arguments...
    psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCKDIR" -U agentshop -d "$1" "${@:2}"
}
ctl_on() { $ctl --driver pgsql --params "host=$PG_SOCKDIR user=agentshop dbname=$1" "${@:2}"; }
# Every table, column, index and trigger, as one text.
layout() {
    on "$1" -c "SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' ||
                       is_nullable || ' ' || COALESCE(column_default, '') || ' ' || is_generated
                FROM information_schema.columns WHERE table_schema = 'public'
                ORDER BY table_name, ordinal_position" \
            -c "SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname" \
            -c "SELECT 'trigger ' || tgrelid::regclass || ' ' || tgname FROM pg_trigger
                WHERE NOT tgisinternal ORDER BY 1"
}
# Every row of every table of a new database but schema_version, as one text
# per table (its row count and an md5 of its rows as JSON), less what version
# 3 drops and 4, 5 and 7 add: the text is the same before and after a migration that
# keeps them.
tables=""
rows() {
    local t drop
    for t in $tables; do
        case $t in
        products) drop=" - 'search' - 'withdrawn_at'" ;; # withdrawn_at: version 7, NULL in older rows
        merchants | offers | devices) drop=" - 'withdrawn_at'" ;;
        product_rank) drop=" - 'sku' - 'category' - 'part_type'" ;;
        # key_id: version 4, NULL in older rows; what was bought: version 8
        orders) drop=" - 'key_id' - 'product_name' - 'category' - 'merchant_name'" ;;
        product_versions) drop=" - 'seq'" ;; # added by version 5, 0 in older rows
        *) drop="" ;;
        esac
        on "$1" -c "SELECT '$t ' || COUNT(*) || ' ' || md5(COALESCE(string_agg((to_jsonb(x)$drop)::text,
                    ',' ORDER BY (to_jsonb(x)$drop)::text), '')) FROM $t x"
    done
}
ctl_on fresh init >/dev/null
check "a new database for comparison" test $? -eq 0
# (less the tables version 4 adds: empty after a migration; the layout shows them)
tables=$(on fresh -c "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'
                      AND table_name NOT IN ('schema_version', 'passkeys', 'enrolments',
                      'webauthn_challenges') ORDER BY 1")
check "... its layout read" grep -q '^trigger orders orders_spent_row$' <<<"$(layout fresh)"
t/fixtures/make-v2.sh pgsql "host=$PG_SOCKDIR user=agentshop dbname=v2"
check "a database of schema version 2" test "$(on v2 -c 'SELECT version FROM schema_version')" = 2
check "... with its tsvector column" \
    test "$(on v2 -c "SELECT COUNT(*) FROM products WHERE search @@ to_tsquery('simple', 'dyson')")" -gt 0
before=$(rows v2)
check "... and rows in every table" \
    test "$(grep -c ' [1-9][0-9]* [0-9a-f]\{32\}$' <<<"$before")" = "$(wc -w <<<"$tables")"
err=$(ctl_on v2 mandate list 2>&1 >/dev/null)
check "a command on version 2 points at init" \
    grep -q "schema version 2, this agentshopctl works with version 8; agentshopctl init migrates" <<<"$err"
out=$(ctl_on v2 init)
check "init migrates it" test $? -eq 0
check "... from 2 to 8" grep -qz '"from": 2,.*"to": 8,.*"action": "migrated"' <<<"$out"
check "... recording version 8" test "$(on v2 -c 'SELECT version FROM schema_version')" = 8
check "... keeping every row of every table" test "$(rows v2)" = "$before"
check "... in the layout of a new database" test "$(layout v2)" = "$(layout fresh)"
check "(as the version-1 database migrated above)" test "$(layout old)" = "$(layout fresh)"
check "... without the tsvector, product_counts and product_rank's copies" \
    test "$(on v2 -c "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'public'
                      AND (table_name = 'product_counts' OR (table_name = 'products' AND column_name = 'search')
                      OR (table_name = 'product_rank' AND column_name IN ('sku', 'category', 'part_type')))")" = 0
check "... its orders as they were" \
    test "$(on v2 -c "SELECT string_agg(id || ':' || status, ' ' ORDER BY id) FROM orders")" = \
    "ord_v2_1:placed ord_v2_2:returned ord_v2_3:cancelled"
check "... with no agent key recorded (key_id NULL: not known before version 4)" \
    test "$(on v2 -c "SELECT COUNT(*) FROM orders WHERE key_id IS NOT NULL")" = 0
check "... and their month's spending" \
    test "$(on v2 -c "SELECT cents FROM mandate_spent WHERE mandate_id = 'mdt_v2' AND month = '2026-01'")" = 12602
check "... each order with what it bought, from the catalogue (version 8)" \
    test "$(on v2 -c "SELECT string_agg(o.id || ':' || (o.product_name = p.name AND o.category = p.category
                      AND o.merchant_name = m.name)::text, ' ' ORDER BY o.id) FROM orders o JOIN quotes q
                      ON q.id = o.quote_id JOIN products p ON p.id = q.product_id JOIN offers f ON
                      f.id = o.offer_id JOIN merchants m ON m.id = f.merchant_id")" = \
    "ord_v2_1:true ord_v2_2:true ord_v2_3:true"
out=$(ctl_on v2 init)
check "init again finds it current" grep -q '"action": "current"' <<<"$out"
check "... and changes no row" test "$(rows v2)" = "$before"
check "its orders move on" ctl_on v2 order ship ord_v2_1 >/dev/null
check "... ord_v2_1 shipped" test "$(on v2 -c "SELECT status FROM orders WHERE id = 'ord_v2_1'")" = shipped

# A failure halfway leaves the database as it was: a view of the user's on a
# column that version 3 drops stops the step after it dropped other things.
t/fixtures/make-v2.sh pgsql "host=$PG_SOCKDIR user=agentshop dbname=v2view"
on v2view -c 'CREATE VIEW my_skus AS SELECT sku FROM product_rank'
held_layout=$(layout v2view)
held_rows=$(rows v2view)
err=$(ctl_on v2view init 2>&1 >/dev/null)
check "a migration that fails says why" grep -qz "migrating the schema of .* failed: .*my_skus" <<<"$err"
check "... leaves version 2" test "$(on v2view -c 'SELECT version FROM schema_version')" = 2
check "... every table, column, index and trigger" test "$(layout v2view)" = "$held_layout"
check "... and every row" test "$(rows v2view)" = "$held_rows"

# Each part of the step is guarded.
t/fixtures/make-v2.sh pgsql "host=$PG_SOCKDIR user=agentshop dbname=v2part"
on v2part -c 'DROP TABLE product_counts' -c 'DROP INDEX products_search' -c 'DROP INDEX rank_hidden'
check "a version-2 database without product_counts and some indexes migrates" ctl_on v2part init >/dev/null
check "... to the layout of a new database" test "$(layout v2part)" = "$(layout fresh)"

# ---- version 7: a challenge per look at a link ----
# Several challenges of one subject may share an expiry; step 8 keeps one of
# each such group so that the unique index can be made.
psql_ -c "CREATE DATABASE v7"
ctl_on v7 init >/dev/null
on v7 -c 'DROP INDEX webauthn_challenges_slot' \
    -c "INSERT INTO webauthn_challenges (challenge, purpose, subject_id, expires_at) VALUES
        ('c1', 'approve', 'conf_a', 2000000000), ('c2', 'approve', 'conf_a', 2000000000),
        ('c3', 'approve', 'conf_a', 2000000300), ('c4', 'enrol', 'enr_a', 2000000000)" \
    -c 'UPDATE schema_version SET version = 7'
out=$(ctl_on v7 init)
check "a version-7 database with challenges of the same expiry migrates" \
    grep -qz '"from": 7,.*"to": 8,.*"action": "migrated"' <<<"$out"
check "... keeping one of each subject and expiry" \
    test "$(on v7 -c "SELECT string_agg(challenge, ' ' ORDER BY challenge) FROM webauthn_challenges")" = "c1 c3 c4"
check "... in the layout of a new database (the unique index made)" test "$(layout v7)" = "$(layout fresh)"

echo "migrate-pg: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
