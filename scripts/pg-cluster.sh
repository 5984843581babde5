# A throwaway PostgreSQL cluster for tests: initdb and pg_ctl into a directory,
# a Unix socket only (in that directory), no system service. Sourced, not run:
#
#   . scripts/pg-cluster.sh
#   pg_installed || { echo "PostgreSQL is not installed" >&2; exit 1; }
#   trap 'pg_stop; rm -rf "$dir"' EXIT
#   pg_start "$dir" || exit 1        # PG_SOCKDIR is now "$dir"
#   pg_createdb shop || exit 1       # then connect with "host=$PG_SOCKDIR user=agentshop dbname=shop"
#
# As root the cluster runs as nobody (PostgreSQL refuses root): pg_start hands
# the directory to nobody. The superuser is "agentshop", trust authentication.

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PG_DIR=""
PG_SOCKDIR=""
PG_RUNAS=""
[ "$(id -u)" -eq 0 ] && PG_RUNAS="runuser -u nobody --"

pg_installed() {
    [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ]
}

# pg_start DIR: a new cluster in DIR/data, its socket in DIR, logs in DIR.
pg_start() {
    PG_DIR=$1
    mkdir -p "$PG_DIR" && chmod 755 "$PG_DIR" || return 1
    [ -n "$PG_RUNAS" ] && { chown nobody:nogroup "$PG_DIR" || return 1; }
    $PG_RUNAS "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U agentshop -E UTF8 --no-sync \
        >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log"; return 1; }
    # every httpd child's mod_dbd pool may hold DBDMax connections
    $PG_RUNAS "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
        -o "-k $PG_DIR -c listen_addresses='' -c max_connections=300" start >/dev/null ||
        { cat "$PG_DIR/server.log"; return 1; }
    PG_SOCKDIR=$PG_DIR
}

# pg_createdb NAME
pg_createdb() {
    $PG_RUNAS "$PG_BIN/createdb" -h "$PG_SOCKDIR" -U agentshop "$1"
}

# pg_copy_from_sqlite SQLITE_FILE CONNINFO: the rows of every table of a
# SQLite catalogue into a PostgreSQL database that has the schema (agentshopctl
# init) and nothing else, by COPY in one transaction, foreign keys checked by
# neither side meanwhile (the rows are consistent in SQLite); generated columns
# are computed by PostgreSQL. On 20,000 products these are the rows `catalogue
# generate` writes on PostgreSQL with the same seed (each table compared), in a
# tenth of the time.
pg_copy_from_sqlite() {
    local db=$1 conn=$2 t cols copies=()
    local pq=(psql -X -q -At -v ON_ERROR_STOP=1 -d "$conn")
    for t in $(sqlite3 "$db" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'product_fts%' AND name <> 'schema_version' ORDER BY name"); do
        [ "$(sqlite3 "$db" "SELECT EXISTS (SELECT 1 FROM \"$t\")")" = 1 ] || continue
        cols=$("${pq[@]}" -c "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '$t' AND is_generated = 'NEVER'") ||
            return 1
        [ -n "$cols" ] || { echo "pg_copy_from_sqlite: PostgreSQL's schema has no table $t" >&2; return 1; }
        copies+=("$t|$cols")
    done
    {
        echo "BEGIN;"
        echo "SET session_replication_role = replica;"
        for c in "${copies[@]}"; do
            echo "DELETE FROM ${c%%|*};"
            echo "COPY ${c%%|*} (${c#*|}) FROM STDIN WITH (FORMAT csv);"
            sqlite3 -csv "$db" "SELECT ${c#*|} FROM ${c%%|*}"
            echo '\.'
        done
        echo "COMMIT;"
        echo "ANALYZE;"
    } | "${pq[@]}"
}

# pg_stop: stops the cluster pg_start started (if any); the directory stays.
pg_stop() {
    [ -n "$PG_DIR" ] || return 0
    $PG_RUNAS "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1
    PG_DIR=""
    return 0
}
