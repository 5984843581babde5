#!/bin/bash
# make test-pg: the whole Apache::Test suite with DBDriver pgsql, on a throwaway
# PostgreSQL cluster (scripts/pg-cluster.sh: initdb and pg_ctl into a temporary
# directory, a Unix socket only, no system service), stopped and removed afterwards.
set -u -o pipefail
top=$(pwd)
. "$top/scripts/pg-cluster.sh"
pg_installed || { echo "test-pg: PostgreSQL is not installed" >&2; exit 1; }
dir=$(mktemp -d /tmp/agentshop-pg.XXXXXX)
stop() {
    pg_stop
    rm -rf "$dir"
}
trap stop EXIT
pg_start "$dir" || exit 1 # as root, the cluster and $dir belong to nobody
pg_createdb shop || exit 1
pg_createdb shop_empty || exit 1 # t/api/empty.t's: no catalogue
pg_createdb shop_rebuild || exit 1 # t/api/search_rebuild.t's: its catalogue loaded while served
pg_createdb shop_v2 || exit 1 # t/api/migrated.t's: made at schema version 2, then migrated
pg_createdb shop_views || exit 1 # t/api/view_index.t's: a generated catalogue
pg_createdb shop_feed || exit 1 # t/api/catalogue.t's: the feed's round trip, from empty
export AGENTSHOP_TEST_DRIVER=pgsql AGENTSHOP_TEST_PARAMS="host=$PG_SOCKDIR user=agentshop dbname=shop"
export AGENTSHOP_TEST_EMPTY_PARAMS="host=$PG_SOCKDIR user=agentshop dbname=shop_empty"
export AGENTSHOP_TEST_REBUILD_PARAMS="host=$PG_SOCKDIR user=agentshop dbname=shop_rebuild"
export AGENTSHOP_TEST_MIGRATED_PARAMS="host=$PG_SOCKDIR user=agentshop dbname=shop_v2"
export AGENTSHOP_TEST_VIEWS_PARAMS="host=$PG_SOCKDIR user=agentshop dbname=shop_views"
export AGENTSHOP_TEST_FEED_PARAMS="host=$PG_SOCKDIR user=agentshop dbname=shop_feed"
scripts/apache-test.sh "$@" | sed -u 's/^apache: /pgsql: /'
a=${PIPESTATUS[0]}
# agentshopctl init migrating databases of older schemas, in databases of their own.
pg_createdb old && PG_SOCKDIR=$PG_SOCKDIR t/migrate-pg.sh || a=1
# The live sequence in commit order, with two sessions side by side.
pg_createdb live && PG_SOCKDIR=$PG_SOCKDIR t/live-pg.sh || a=1
exit "$a"
