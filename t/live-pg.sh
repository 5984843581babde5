#!/bin/bash
# PostgreSQL's live sequence is in commit order (schema.pgsql.sql,
# product_live_raise; docs/storage.md, "Search at scale"): a transaction that
# changed an offer first but commits last gets the larger number, so a child
# that has read every change up to a number it saw never passes over one
# committed later. Run by scripts/test-pg.sh with PG_SOCKDIR set and a
# database "live" created. Prints "live-pg: N passed, M failed".
set -u
conn="host=$PG_SOCKDIR user=agentshop dbname=live"
# (a statement that waits 10 s for a lock fails: B must not wait for A)
q() { PGOPTIONS='-c lock_timeout=10s' psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCKDIR" -U agentshop -d live "$@"; }
pass=0
fail=0
check() { # check NAME COMMAND...
    if "${@:2}"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "live-pg: FAILED: $1" >&2; fi
}
bin/agentshopctl --driver pgsql --params "$conn" init --demo >/dev/null
check "a demo database" test "$(q -c 'SELECT COUNT(*) FROM offers')" -gt 3
# three offers of three products
read -r ox px oy py oz pz < <(q -F ' ' -c "SELECT o.id, o.product_id FROM offers o
    WHERE o.id = (SELECT MIN(id) FROM offers x WHERE x.product_id = o.product_id)
    ORDER BY o.product_id LIMIT 3" | tr '\n' ' ')
seq() { q -c "SELECT seq FROM product_versions WHERE product_id = $1"; }
live() { q -c "SELECT COALESCE((SELECT value FROM meta WHERE key = 'live_seq'), '0')"; }

# A changes its offer first and commits last; B changes its offer in between
# and commits first.
before=$(live)
coproc A { psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCKDIR" -U agentshop -d live 2>&1; }
apid=$A_PID # (bash unsets A_PID once the coprocess has ended)
echo "BEGIN; UPDATE offers SET stock = stock + 1 WHERE id = '$ox'; SELECT 'changed';" >&"${A[1]}"
read -r -t 20 line <&"${A[0]}"
check "A changed its offer, not committed" test "$line" = changed
q -c "UPDATE offers SET stock = stock + 1 WHERE id = '$oy'"
check "B committed first: the next number" test "$(seq "$py")" = $((before + 1))
none_yet() { local s; s=$(seq "$px"); [ -z "$s" ] || [ "$s" -le "$before" ]; }
check "... A's product has none yet" none_yet
echo "COMMIT; SELECT 'committed';" >&"${A[1]}"
read -r -t 20 line <&"${A[0]}"
check "A committed" test "$line" = committed
echo '\q' >&"${A[1]}"
wait "$apid" 2>/dev/null
check "A, committed last, has the larger number" test "$(seq "$px")" = $((before + 2))
check "... and live_seq is at it" test "$(live)" = $((before + 2))

# One transaction, three products (two offers and a question): one number for
# all three, live_seq raised once.
q -c "BEGIN" -c "UPDATE offers SET stock = stock + 1 WHERE id IN ('$ox', '$oz')" \
    -c "INSERT INTO questions (id, product_id, user_id, question, answer, asked_at)
        VALUES ('q_live_pg', $py, NULL, 'does it fit?', 'no data', '2026-11-27T00:00:00Z')" \
    -c "COMMIT"
check "one transaction: one number for each of its products" \
    test "$(seq "$px") $(seq "$pz") $(seq "$py")" = "$((before + 3)) $((before + 3)) $((before + 3))"
check "... live_seq raised once" test "$(live)" = $((before + 3))
# A transaction that rolls back numbers nothing.
q -c "BEGIN" -c "UPDATE offers SET stock = stock + 1 WHERE id = '$oy'" -c "ROLLBACK"
check "a rollback numbers nothing" test "$(live) $(seq "$py")" = "$((before + 3)) $((before + 3))"
# the same number is not kept into the next transaction of the session
q -c "UPDATE offers SET stock = stock - 1 WHERE id = '$ox'" -c "UPDATE offers SET stock = stock - 1 WHERE id = '$oz'"
check "two transactions of one session: two numbers" \
    test "$(seq "$px") $(seq "$pz")" = "$((before + 4)) $((before + 5))"

echo "live-pg: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
