/* A connection's life (docs/storage.md): opening one (as_db_open, for
 * programs without mod_dbd), setting one up once (as_db_conn_init: SQLite's
 * PRAGMAs, the writer lock file and the WAL's grouped sync, every labelled
 * statement, and on SQLite the statements of its own, as_db_native.c), and
 * closing it with its statements. It calls the statement runner (as_db.c)
 * and the native plumbing (as_db_native.c); neither calls it. */
#include <apr_strings.h>
#include <sqlite3.h>
#include <string.h>
#include <strings.h>

#include "as_db_private.h"

#define INIT_MARK "as_conn_ready" /* in a connection's `prepared`: it is set up */

#define OWN_SYNC_KEY "as_own_sync" /* as_db_open's connection: SQLite syncs each COMMIT */

static int is_pg(const apr_dbd_driver_t *d)
{
    return strcmp(apr_dbd_name(d), "pgsql") == 0;
}

int as_db_process_init(void)
{
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
}

static apr_status_t sqlite_pragmas(apr_pool_t *p, const apr_dbd_driver_t *d, apr_dbd_t *h,
                                   bool grouped, const char **err)
{
    sqlite3 *native = apr_dbd_native_handle(d, h);
    if (native) sqlite3_busy_handler(native, as_db_busy_wait, NULL); /* not busy_timeout */
    /* Each returns at most a row; run as selects so the driver accepts the row. */
    const char *const pragmas[] = {
        "PRAGMA journal_mode = WAL",
        "PRAGMA foreign_keys = ON",
        /* grouped: the module syncs after the writer lock (as_db.c) */
        grouped ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL",
        /* No connection checkpoints on its own (SQLite 3.40's WAL-reset bug):
         * the module checkpoints from one place, see as_db_checkpoint. */
        "PRAGMA wal_autocheckpoint = 0",
        /* 512 KB of pages per connection, not SQLite's 2 MB: a child pools
         * up to DBDMax connections per database, and the kernel's page cache
         * behind them holds the file anyway (docs/performance.md, memory). */
        "PRAGMA cache_size = -512",
    };
    for (size_t i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++) {
        apr_dbd_results_t *res = NULL;
        apr_dbd_row_t *row = NULL;
        int rv = apr_dbd_select(d, p, h, &res, pragmas[i], 0);
        if (rv) {
            *err = apr_psprintf(p, "%s failed: %s", pragmas[i], apr_dbd_error(d, h, rv));
            return APR_EGENERAL;
        }
        const char *got = NULL;
        while (apr_dbd_get_row(d, p, res, &row, -1) == 0)
            if (!got) got = apr_pstrdup(p, apr_dbd_get_entry(d, row, 0));
        /* WAL cannot be switched on for every database (e.g. in memory): say so */
        if (strstr(pragmas[i], "journal_mode") && (!got || strcasecmp(got, "wal") != 0)) {
            *err = apr_psprintf(p, "the database refused WAL mode (journal_mode is %s)",
                                got ? got : "unknown");
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

/* The file behind connection h, NULL for a database in memory. */
static const char *conn_file(apr_pool_t *p, const apr_dbd_driver_t *d, apr_dbd_t *h)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    const char *file = NULL;
    if (apr_dbd_select(d, p, h, &res, "PRAGMA database_list", 0) == 0)
        while (apr_dbd_get_row(d, p, res, &row, -1) == 0) {
            const char *name = apr_dbd_get_entry(d, row, 1);
            const char *f = apr_dbd_get_entry(d, row, 2);
            if (!file && name && strcmp(name, "main") == 0 && f && *f) file = apr_pstrdup(p, f);
        }
    return file;
}

/* A SQLite connection's PRAGMAs and what its writes need (as_db_writes_init):
 * grouped (the module's connections: synchronous=NORMAL), the WAL's grouped
 * sync; else (as_db_open's) SQLite syncs each COMMIT itself. */
static apr_status_t sqlite_setup(apr_pool_t *pool, const apr_dbd_driver_t *d, apr_dbd_t *h,
                                 apr_hash_t *prepared, bool grouped, const char **err)
{
    if (sqlite_pragmas(pool, d, h, grouped, err) != APR_SUCCESS) return APR_EGENERAL;
    if (!grouped) apr_hash_set(prepared, OWN_SYNC_KEY, APR_HASH_KEY_STRING, OWN_SYNC_KEY);
    return as_db_writes_init(pool, prepared, conn_file(pool, d, h), grouped, err);
}

apr_status_t as_db_conn_init(apr_pool_t *conn_pool, const apr_dbd_driver_t *d, apr_dbd_t *h,
                             apr_hash_t *prepared, const char **err)
{
    if (apr_hash_get(prepared, INIT_MARK, APR_HASH_KEY_STRING)) return APR_SUCCESS;
    int pg = is_pg(d);
    /* as_db_open's connection keeps its own set-up: FULL, SQLite syncs each COMMIT */
    if (!pg && !apr_hash_get(prepared, OWN_SYNC_KEY, APR_HASH_KEY_STRING) &&
        sqlite_setup(conn_pool, d, h, prepared, true, err) != APR_SUCCESS)
        return APR_EGENERAL;
    if (as_db_prepare_all(conn_pool, d, h, prepared, pg, err) != APR_SUCCESS) return APR_EGENERAL;
    if (!pg && as_db_native_init(conn_pool, d, h, prepared, err) != APR_SUCCESS)
        return APR_EGENERAL;
    apr_hash_set(prepared, INIT_MARK, APR_HASH_KEY_STRING, (void *)INIT_MARK);
    return APR_SUCCESS;
}

/* Closing a connection opened by as_db_open belongs to its pool, so every path
 * out of a program closes it (and SQLite frees what the connection held). */
typedef struct db_closer {
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;
} db_closer;

static apr_status_t db_close_cleanup(void *data)
{
    db_closer *c = data;
    if (c->handle) apr_dbd_close(c->driver, c->handle);
    c->handle = NULL;
    return APR_SUCCESS;
}

apr_status_t as_db_open(apr_pool_t *p, const char *driver, const char *params, as_db *db,
                        const char **err)
{
    memset(db, 0, sizeof(*db));
    db->pool = p;
    apr_status_t rv = apr_dbd_init(p);
    if (rv == APR_SUCCESS) rv = apr_dbd_get_driver(p, driver, &db->driver);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p,
                            "cannot load the apr_dbd driver '%s' (install "
                            "libaprutil1-dbd-%s)",
                            driver, driver);
        return rv;
    }
    const char *dberr = NULL;
    rv = apr_dbd_open_ex(db->driver, p, params, &db->handle, &dberr);
    if (rv != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot open the database '%s': %s", params,
                            dberr ? dberr : "unknown error");
        return rv;
    }
    db_closer *c = apr_pcalloc(p, sizeof(*c));
    c->driver = db->driver;
    c->handle = db->handle;
    apr_pool_cleanup_register(p, c, db_close_cleanup, apr_pool_cleanup_null);
    db->closer = c;
    db->pg = is_pg(db->driver);
    db->prepared = apr_hash_make(p);
    if (!db->pg) return sqlite_setup(p, db->driver, db->handle, db->prepared, false, err);
    return APR_SUCCESS;
}

void as_db_close(as_db *db)
{
    /* its own statements first: SQLite does not close a connection that has any */
    if (db->closer && !db->pg && db->prepared) as_db_native_close(db->pool, db->prepared);
    if (db->closer) apr_pool_cleanup_run(db->pool, db->closer, db_close_cleanup);
    db->closer = NULL;
    db->handle = NULL;
}
