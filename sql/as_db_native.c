/* The connection's own SQLite plumbing (docs/storage.md, "Statements"): the
 * statements of the product view (as_db_view_stmts) and of the search index's
 * reads prepared on the connection's sqlite3 handle, run without apr_dbd's
 * driver (which copies every column of every row as text, under one mutex per
 * process), and their rows given as cells, as apr_dbd's rows are on
 * PostgreSQL; and a read-only connection of its own for the index's reader
 * thread. as_db_conn.c sets it up with each connection; the readers
 * (as_db_view.c, as_db_search.c) run their statements through it. */
#include <apr_strings.h>
#include <sqlite3.h>
#include <string.h>

#include "as_db_private.h"

/* ---- through apr_dbd (PostgreSQL; SQLite without thread safety) ---- */

typedef struct dbd_src {
    as_db *db;
    apr_dbd_row_t *row;
} dbd_src;

static const char *dbd_text(void *s, int c)
{
    dbd_src *d = s;
    return as_db_col(d->db, d->row, c);
}

/* what is parsed at once is read without a copy */
static const char *dbd_now(void *s, int c)
{
    dbd_src *d = s;
    return as_db_col_now(d->db, d->row, c);
}

static int64_t dbd_i64(void *s, int c)
{
    return as_db_i64(dbd_now(s, c));
}

static double dbd_dbl(void *s, int c)
{
    return as_db_dbl(dbd_now(s, c));
}

static bool dbd_null(void *s, int c)
{
    return dbd_now(s, c) == NULL;
}

static bool dbd_flag(void *s, int c)
{
    return as_db_bool(dbd_now(s, c));
}

/* ---- on the connection's sqlite3 handle ---- */

#define NATIVE_KEY "as_product_view native" /* in a connection's `prepared` */

/* The index's reads (as_db_search.c), run through as_db_each_row: millions of
 * rows each, which apr_dbd's driver would copy column by column as text; and
 * the reads of every search (the versions, the live changes). */
static const char *const native_reads[] = {L_AS_INDEX_OFFERS, L_AS_INDEX_COMPAT, L_AS_VERSION_GET,
                                           L_AS_LIVE_CHANGES, L_AS_LIVE_ASKED};
#define N_READS (sizeof(native_reads) / sizeof(native_reads[0]))

#define N_VIEWS 7 /* as_db_n_view_stmts */

typedef struct native_view {
    sqlite3_stmt *st[N_VIEWS]; /* as as_db_view_stmts */
    sqlite3_stmt *reads[N_READS];
} native_view;

static apr_status_t native_finalize(void *data)
{
    native_view *nv = data;
    for (size_t i = 0; i < sizeof(nv->st) / sizeof(nv->st[0]); i++) {
        sqlite3_finalize(nv->st[i]);
        nv->st[i] = NULL;
    }
    for (size_t i = 0; i < N_READS; i++) {
        sqlite3_finalize(nv->reads[i]);
        nv->reads[i] = NULL;
    }
    return APR_SUCCESS;
}

static const char *native_sql(apr_pool_t *p, const char *sql)
{
    /* apr_dbd's placeholders: %s is the sku (?1), each %lld the next number
     * (?2, ?3, ...: the device, or ids) */
    char *out = apr_palloc(p, strlen(sql) + 1), *o = out;
    int next = 2;
    for (const char *s = sql; *s;) {
        size_t skip = strncmp(s, "%s", 2) == 0 ? 2 : strncmp(s, "%lld", 4) == 0 ? 4 : 0;
        if (!skip) {
            *o++ = *s++;
            continue;
        }
        *o++ = '?';
        *o++ = (char)('0' + (skip == 2 ? 1 : next++)); /* at most ?9 */
        s += skip;
    }
    *o = '\0';
    return out;
}

static bool native_prepare(apr_pool_t *conn_pool, sqlite3 *conn, const stmt_def *def,
                           sqlite3_stmt **st, const char **err)
{
    const char *sql = native_sql(conn_pool, def->sqlite);
    if (sqlite3_prepare_v3(conn, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) == SQLITE_OK)
        return true;
    *err = apr_psprintf(conn_pool, "preparing %s failed: %s", def->label, sqlite3_errmsg(conn));
    return false;
}

/* The statements on conn, finalized before it closes (conn_pool's cleanup),
 * under NATIVE_KEY in prepared. */
static apr_status_t native_init(apr_pool_t *conn_pool, sqlite3 *conn, apr_hash_t *prepared,
                                const char **err)
{
    native_view *nv = apr_pcalloc(conn_pool, sizeof(*nv));
    if (as_db_n_view_stmts != N_VIEWS) {
        *err = "sql/as_db_native.c: N_VIEWS is not as_db_n_view_stmts";
        return APR_EGENERAL;
    }
    /* runs before the connection closes (registered after its cleanup) */
    apr_pool_cleanup_register(conn_pool, nv, native_finalize, apr_pool_cleanup_null);
    for (size_t i = 0; i < as_db_n_view_stmts; i++)
        if (!native_prepare(conn_pool, conn, &as_db_view_stmts[i], &nv->st[i], err))
            return APR_EGENERAL;
    for (size_t i = 0; i < N_READS; i++) {
        const stmt_def *def = NULL;
        for (size_t k = 0; !def && k < as_db_n_search_stmts; k++)
            if (strcmp(as_db_search_stmts[k].label, native_reads[i]) == 0)
                def = &as_db_search_stmts[k];
        if (!def) {
            *err = apr_psprintf(conn_pool, "no statement %s", native_reads[i]);
            return APR_EGENERAL;
        }
        if (!native_prepare(conn_pool, conn, def, &nv->reads[i], err)) return APR_EGENERAL;
    }
    apr_hash_set(prepared, NATIVE_KEY, APR_HASH_KEY_STRING, nv);
    return APR_SUCCESS;
}

apr_status_t as_db_native_init(apr_pool_t *conn_pool, const apr_dbd_driver_t *d, apr_dbd_t *h,
                               apr_hash_t *prepared, const char **err)
{
    sqlite3 *conn = apr_dbd_native_handle(d, h);
    if (!sqlite3_threadsafe() || !conn) return APR_SUCCESS; /* apr_dbd's statements then */
    return native_init(conn_pool, conn, prepared, err);
}

void as_db_native_close(apr_pool_t *conn_pool, apr_hash_t *prepared)
{
    native_view *nv = apr_hash_get(prepared, NATIVE_KEY, APR_HASH_KEY_STRING);
    if (!nv) return;
    apr_hash_set(prepared, NATIVE_KEY, APR_HASH_KEY_STRING, NULL);
    apr_pool_cleanup_run(conn_pool, nv, native_finalize);
}

typedef struct native_src {
    as_mem *m;
    sqlite3_stmt *st;
} native_src;

static const char *native_text(void *s, int c)
{
    native_src *n = s;
    const unsigned char *t = sqlite3_column_text(n->st, c);
    return t ? as_strndup(n->m, (const char *)t, (size_t)sqlite3_column_bytes(n->st, c)) : NULL;
}

static int64_t native_i64(void *s, int c)
{
    return sqlite3_column_int64(((native_src *)s)->st, c);
}

static double native_dbl(void *s, int c)
{
    return sqlite3_column_double(((native_src *)s)->st, c);
}

static bool native_null(void *s, int c)
{
    return sqlite3_column_type(((native_src *)s)->st, c) == SQLITE_NULL;
}

static bool native_flag(void *s, int c)
{
    return sqlite3_column_int64(((native_src *)s)->st, c) != 0;
}

/* The statement of this connection, or NULL when it has none (PostgreSQL,
 * SQLite without thread safety). */
static native_view *native(as_db *db)
{
    if (db->pg || (!db->handle && (!db->acquire || db->acquire(db) != 0))) return NULL;
    return apr_hash_get(db->prepared, NATIVE_KEY, APR_HASH_KEY_STRING);
}

static apr_status_t reader_close(void *conn)
{
    sqlite3_close_v2(conn);
    return APR_SUCCESS;
}

bool as_db_reader_open(as_db *db, apr_pool_t *pool, as_db *out)
{
    if (!native(db)) return false; /* PostgreSQL, or SQLite through apr_dbd alone */
    sqlite3 *shared = apr_dbd_native_handle(db->driver, db->handle);
    const char *file = shared ? sqlite3_db_filename(shared, "main") : NULL;
    sqlite3 *conn = NULL;
    if (!file || !*file) return false; /* in memory, or a temporary database */
    int rc = sqlite3_open_v2(file, &conn, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_close_v2(conn);
        return false;
    }
    apr_pool_cleanup_register(pool, conn, reader_close, apr_pool_cleanup_null);
    /* a reader of a WAL database waits only while another connection
     * recovers or restarts the log */
    sqlite3_busy_timeout(conn, (int)(AS_DB_WRITE_WAIT / 1000));
    const char *err = NULL;
    *out = *db;
    out->prepared = apr_hash_make(pool);
    out->trans = NULL;
    out->versions = NULL;
    out->acquire = NULL;
    if (native_init(pool, conn, out->prepared, &err) != APR_SUCCESS) {
        if (db->log) db->log(db->log_baton, err);
        return false;
    }
    return true;
}

/* Binds sku (?1, unless NULL) and ids (?2 on, as many as st has) and steps st,
 * giving each row to each as cells (texts on m); AS_OK or AS_EDB (logged). */
int as_db_native_run(as_db *db, struct sqlite3_stmt *st, as_mem *m, const char *label,
                     const char *sku, const int64_t *ids, int nids, as_db_cells_fn each,
                     void *baton)
{
    native_src src = {m, st};
    cells c = {native_text, native_i64, native_dbl, native_null, native_flag, &src};
    int rc = sku ? sqlite3_bind_text(st, 1, sku, -1, SQLITE_STATIC) : SQLITE_OK;
    for (int k = 0; rc == SQLITE_OK && k < nids && k + 2 <= sqlite3_bind_parameter_count(st); k++)
        rc = sqlite3_bind_int64(st, k + 2, ids[k]);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        each(baton, &c);
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE && db->log)
        db->log(db->log_baton,
                apr_psprintf(db->pool, "%s: %s", label, sqlite3_errmsg(sqlite3_db_handle(st))));
    sqlite3_reset(st); /* ends the read */
    return rc == SQLITE_DONE ? AS_OK : AS_EDB;
}

struct sqlite3_stmt *as_db_native_view(as_db *db, int which)
{
    native_view *nv = native(db);
    return nv && which >= 0 && which < N_VIEWS ? nv->st[which] : NULL;
}

void as_db_dbd_each(as_db *db, apr_dbd_results_t *res, as_db_cells_fn each, void *baton)
{
    dbd_src src = {db, NULL};
    cells c = {dbd_text, dbd_i64, dbd_dbl, dbd_null, dbd_flag, &src};
    while (as_db_next(db, res, &src.row))
        each(baton, &c);
}

int as_db_each_row(as_db *db, as_mem *m, const char *label, const int64_t *args, int nargs,
                   as_db_cells_fn each, void *baton)
{
    native_view *nv = native(db);
    sqlite3_stmt *st = NULL;
    for (size_t i = 0; nv && !st && i < N_READS; i++)
        if (strcmp(native_reads[i], label) == 0) st = nv->reads[i];
    for (size_t i = 0; nv && !st && i < as_db_n_view_stmts; i++)
        if (strcmp(as_db_view_stmts[i].label, label) == 0) st = nv->st[i];
    if (st) return as_db_native_run(db, st, m, label, NULL, args, nargs, each, baton);
    const char **a = apr_palloc(db->pool, (size_t)(nargs ? nargs : 1) * sizeof(*a));
    for (int k = 0; k < nargs; k++)
        a[k] = as_db_i64s(db, args[k]);
    apr_dbd_results_t *res;
    if (as_db_select(db, label, &res, nargs, a)) return AS_EDB;
    as_db_dbd_each(db, res, each, baton);
    return AS_OK;
}
