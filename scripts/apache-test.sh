#!/bin/sh
# Runs the Apache::Test suite against the built module with a fresh demo
# database. Pass or fail is the harness's exit status (t/TEST.PL); as root it
# runs as nobody (Apache::Test refuses root and exits 0 having run nothing),
# and it fails when no test ran. Its last line, "apache: N passed, M failed",
# is what scripts/test.sh adds up.
set -u
top=$(pwd)
checkout=$top # where t/artifacts (the browser test's screenshots) ends up
runas=""
if [ "$(id -u)" -eq 0 ]; then
    runas="runuser -u nobody --"
    if ! runuser -u nobody -- test -r "$top/Makefile" 2>/dev/null; then
        # The checkout is not reachable by nobody (e.g. under /root): run a copy.
        stage=$(mktemp -d /tmp/agentshop-test.XXXXXX)
        chmod 755 "$stage"
        tar -C "$top" --exclude=.git -cf - . | tar -C "$stage" -xf -
        echo "apache-test: running from $stage (nobody cannot read $top)"
        top=$stage
    fi
    chown -R nobody:nogroup "$top/t"
fi
cd "$top" || exit 1
rm -rf t/var t/logs t/artifacts
mkdir -p t/var t/logs t/artifacts
[ -n "$runas" ] && chown nobody:nogroup t/var t/logs t/artifacts
export HOME="$top/t/var" APACHE_TEST_NO_STICKY_PREFERENCES=1
# SQLite by default; PostgreSQL when scripts/test-pg.sh says so.
driver=${AGENTSHOP_TEST_DRIVER:-sqlite3}
# Beside it an empty one (the schema, no catalogue: a fresh install), served
# by the virtual host of t/conf/vhost-empty.conf.in to t/api/empty.t; and one
# made at schema version 2 (t/fixtures/make-v2.sh) and migrated by init before
# httpd starts, served by t/conf/vhost-migrated.conf.in to t/api/migrated.t;
# another empty one, whose catalogue t/api/search_rebuild.t loads while
# t/conf/vhost-rebuild.conf.in serves it; and a generated catalogue of 1,500
# products, served by t/conf/vhost-views.conf.in to t/api/view_index.t; and
# one with the schema alone, served by no host, into which t/api/catalogue.t
# imports the demo feed and exports it again.
if [ "$driver" = pgsql ]; then
    params=$AGENTSHOP_TEST_PARAMS
    empty=$AGENTSHOP_TEST_EMPTY_PARAMS
    migrated=$AGENTSHOP_TEST_MIGRATED_PARAMS # an empty database
    rebuild=$AGENTSHOP_TEST_REBUILD_PARAMS
    views=$AGENTSHOP_TEST_VIEWS_PARAMS
    feed=$AGENTSHOP_TEST_FEED_PARAMS
else
    params="$top/t/var/agentshop.db"
    empty="$top/t/var/empty.db"
    migrated="$top/t/var/migrated.db"
    rebuild="$top/t/var/rebuild.db"
    views="$top/t/var/views.db"
    feed="$top/t/var/feed.db"
fi
printf 'Define AGENTSHOP_DRIVER %s\nDefine AGENTSHOP_DB "%s"\nDefine AGENTSHOP_EMPTY_DB "%s"\nDefine AGENTSHOP_MIGRATED_DB "%s"\nDefine AGENTSHOP_REBUILD_DB "%s"\nDefine AGENTSHOP_VIEWS_DB "%s"\n' \
    "$driver" "$params" "$empty" "$migrated" "$rebuild" "$views" > t/var/db.conf
if ! $runas bin/agentshopctl --driver "$driver" --params "$params" --data "$top/sql/demo" \
    init --demo >t/var/init.json ||
    ! $runas bin/agentshopctl --driver "$driver" --params "$empty" init >t/var/init-empty.json ||
    ! $runas bin/agentshopctl --driver "$driver" --params "$rebuild" init >t/var/init-rebuild.json ||
    ! $runas t/fixtures/make-v2.sh "$driver" "$migrated" ||
    ! $runas bin/agentshopctl --driver "$driver" --params "$migrated" init >t/var/init-migrated.json ||
    ! $runas bin/agentshopctl --driver "$driver" --params "$views" init >t/var/init-views.json ||
    ! $runas bin/agentshopctl --driver "$driver" --params "$feed" init >t/var/init-feed.json ||
    ! $runas bin/agentshopctl --driver "$driver" --params "$views" catalogue generate \
        --products 1500 --seed 16 >t/var/generate-views.json; then
    echo "apache-test: creating the test databases failed" >&2
    exit 1
fi
scripts/signing-key.sh t/var/signing.key ${runas:+nobody:nogroup}
log="$top/t/var/apache-test.log"
# The suite's port: AGENTSHOP_TEST_PORT, else the first free one from
# Apache::Test's 8529 up (two checkouts, or a make run, at once).
port=${AGENTSHOP_TEST_PORT:-$(bash -c '. scripts/httpd-helpers.sh && free_ports 8529 8999 1')}
if [ -z "$port" ]; then
    echo "apache-test: no free port in 8529-8999; set AGENTSHOP_TEST_PORT" >&2
    echo "apache: 0 passed, 1 failed"
    exit 1
fi
echo "apache-test: port $port"
$runas env HOME="$HOME" HARNESS_TIMER=1 perl t/TEST.PL -apxs /usr/bin/apxs -httpd_conf "$top/t/conf/base.conf" \
    -port "$port" "$@" >"$log" 2>&1
harness=$?
cat "$log"
# Test artifacts (t/api/browser.t's screenshots) go back to the checkout.
if [ "$top" != "$checkout" ]; then
    rm -rf "$checkout/t/artifacts"
    cp -R "$top/t/artifacts" "$checkout/t/artifacts"
fi
shots=""
for f in "$checkout"/t/artifacts/*.png; do [ -e "$f" ] && shots="$shots $f"; done
[ -n "$shots" ] && echo "apache-test: screenshots:$shots"

# Every response the suite received (t/var/responses.jsonl, logged by
# AgentShop::Test::api) against the OpenAPI document the server served
# (saved by t/api/openapi.t), else the source. Prints `openapi: N passed, M failed`.
validate_responses() {
    doc=t/var/openapi.json
    [ -s "$doc" ] || doc=docs/openapi.json
    if ! command -v node >/dev/null; then
        echo "apache-test: node is missing; run scripts/deps.sh test" >&2
        echo "openapi: 0 passed, 1 failed"
        return 1
    fi
    node t/js/validate-responses.mjs "$doc" t/var/responses.jsonl
}

# The counts for the summary line come from the harness's report; whether the
# run passed, from its exit status.
tests=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ "${tests:-0}" -eq 0 ]; then
    if [ "$harness" -eq 0 ]; then
        echo "apache-test: no test ran — treating that as a failure" >&2
    else
        echo "apache-test: Apache::Test failed (exit $harness) before any test ran" >&2
    fi
    echo "apache: 0 passed, 1 failed"
    exit 1
fi
validate_responses
v=$?
if [ "$harness" -ne 0 ]; then
    # "Failed 1/5 test programs. 2/753 subtests failed."; a script that died
    # or missed its plan fails with no failed subtest: it counts as one.
    subtests=$(sed -n 's/.* \([0-9]*\)\/[0-9]* subtests failed\.$/\1/p' "$log" | tail -n 1)
    failed=${subtests:-0}
    [ "$failed" -gt 0 ] || failed=1
    echo "apache: $((tests - ${subtests:-0})) passed, $failed failed"
    exit 1
fi
echo "apache: $tests passed, 0 failed"
[ "$v" -eq 0 ]
