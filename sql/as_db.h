/* Storage over apr_dbd, shared by mod_agentshop and bin/agentshopctl: one table of
 * labelled prepared statements per driver (sqlite3, pgsql), connection set-up,
 * and the as_store functions core calls. Never SQL assembled from input. */
#ifndef AS_DB_H
#define AS_DB_H

#include <apr_dbd.h>
#include <apr_hash.h>
#include <apr_pools.h>

#include "as_store.h"

/* A product's search order row as core ranks it (as_rank_best,
 * core/rules/as_rank.h): storage writes product_rank with it, never ranking
 * itself; the caller gives it (as_db.rank), as it gives the log. */
typedef void (*as_db_rank_fn)(as_mem *m, const as_product *p, as_rank_row *out);

typedef struct as_db {
    apr_pool_t *pool; /* results and rows live here (request or command pool) */
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;
    apr_hash_t *prepared; /* label -> apr_dbd_prepared_t*, per connection */
    int pg;               /* 1 on PostgreSQL */
    void (*log)(void *baton, const char *msg);
    void *log_baton;
    /* Called before the first statement when handle is NULL (mod_dbd's lazy acquire). */
    int (*acquire)(struct as_db *db);
    apr_dbd_transaction_t *trans; /* the store's open transaction, if any */
    /* SQLite writers are serialized by the caller's lock (httpd: a global mutex),
     * held from BEGIN to COMMIT and around single writes. apr_dbd's sqlite3
     * driver runs every call under one per-process mutex, so a writer waiting
     * inside SQLite for the database lock would block the very thread that
     * holds it. NULL: none (the admin tool). Either way every SQLite write and
     * checkpoint also holds the lock file <database>-lock (as_db.c), which
     * orders writers of every process. Unused on PostgreSQL. */
    int (*lock)(struct as_db *db);
    void (*unlock)(struct as_db *db);
    int locked;
    /* How long a writer may wait, for the caller's lock and SQLite's lock
     * together (0: AS_DB_WRITE_WAIT): a database held by another process
     * (a backup, the sqlite3 shell) fails the write after this, instead of
     * holding the caller's lock and every writer queued behind it. */
    apr_interval_time_t write_wait;
    apr_time_t write_deadline; /* set when the writer lock is taken */
    int wrote;    /* the writer lock's holder may have committed: sync before answering */
    int t_locked; /* as_db_begin_t took the writer lock file for its transaction alone */
    /* The versions shared by the server's requests (core/store/as_versions.h):
     * st_search_version reuses them up to versions_max_age ms, and every
     * commit marks them stale. NULL: read per call (the admin tool, the
     * index's builds). */
    struct as_versions_cell *versions;
    int64_t versions_max_age;
    void *closer; /* as_db_open's connection: closed with the pool, or by as_db_close */
    /* Set by the caller before any write that changes offers or the
     * catalogue (orders, imports, init): NULL fails them (AS_EDB, logged). */
    as_db_rank_fn rank;
} as_db;

/* Every CHECKPOINT_EVERY writes, while the writer lock is still held, one
 * PASSIVE checkpoint (called by as_db_write_unlock). */
void as_db_checkpoint_maybe(as_db *db);
/* One PASSIVE checkpoint now, under the writer lock (agentshopctl
 * checkpoint): *frames in the WAL, *done of them in the database. 0, or -1
 * (not SQLite on a file, the lock not had in time, or the checkpoint failed). */
int as_db_checkpoint(as_db *db, int64_t *frames, int64_t *done);

/* Take and release the writer lock (no-ops on PostgreSQL or without a lock).
 * Releasing it after a write returns once the write is on disk (as_db.c,
 * "durable commits"): -1 when syncing failed. */
#define AS_DB_WRITE_WAIT apr_time_from_sec(10)
int as_db_write_lock(as_db *db);
int as_db_write_unlock(as_db *db);
/* The store's open transaction, if any, rolled back and the writer lock
 * released: the store's rollback, for a caller that holds no as_store
 * (httpd's request cleanup, so that no request leaves either behind). */
int as_db_rollback(as_db *db);

/* Once per process, before its first SQLite connection (httpd: pre_config;
 * later calls change nothing): SQLite's allocation statistics off. With them
 * on (SQLite's default) every allocation of every connection takes one
 * process-wide mutex, which the threads of an httpd child then queue on (a
 * third of a child's futex calls while serving product views). The module
 * reads no statistic. Returns false when SQLite was already initialized, so
 * the setting could not be changed. */
int as_db_process_init(void);

/* Once per connection: PRAGMAs on SQLite (WAL, busy timeout, foreign keys,
 * synchronous=NORMAL with the module's grouped sync after each write, see
 * as_db.c; a connection of as_db_open's keeps its FULL) and every statement
 * prepared into `prepared`. Idempotent. */
apr_status_t as_db_conn_init(apr_pool_t *conn_pool, const apr_dbd_driver_t *driver,
                             apr_dbd_t *handle, apr_hash_t *prepared, const char **err);

/* For programs without mod_dbd: load the driver, open, and init the connection.
 * On SQLite it keeps synchronous=FULL (as_db_conn_init leaves it so): SQLite
 * syncs each COMMIT, so a command's write is on disk before it reports it;
 * each of its transactions holds the writer lock file (as_db_begin_t). */
apr_status_t as_db_open(apr_pool_t *p, const char *driver, const char *params, as_db *db,
                        const char **err);
void as_db_close(as_db *db);

/* core's allocator on an APR pool (zeroed memory, freed with the pool). */
as_mem as_db_pool_mem(apr_pool_t *p);

/* Runs a schema script: statements end with ';' at the end of a line; lines
 * starting with "--" are comments. */
apr_status_t as_db_exec_script(as_db *db, const char *script, const char **err);

/* A statement of the caller's own prepared on db's connection (as_db_open's)
 * under label, which must be none of as_db_labels.h: agentshopctl's
 * generator, whose statements the server never runs, so they are not
 * prepared on its connections. pgsql NULL: the SQLite text serves both. Not
 * prepared again after a schema change. 0, or -1 (logged). */
int as_db_prepare(as_db *db, const char *label, const char *sqlite, const char *pgsql);

/* Prepared statements by label, for the loader and later writers. */
int as_db_select(as_db *db, const char *label, apr_dbd_results_t **res, int nargs,
                 const char **args);
int as_db_exec(as_db *db, const char *label, int *nrows, int nargs, const char **args);
/* On SQLite, BEGIN IMMEDIATE run by sqlite3 itself (not apr_dbd's driver,
 * which retries a busy database 15 times more): the database's write lock is
 * taken here, waiting until db->write_deadline at most, so no later statement
 * of the transaction waits for it. A caller without the writer lock
 * (as_db_write_lock) holds the lock file <database>-lock until as_db_end_t.
 * as_db_exec outside any transaction runs in one of its own. */
int as_db_begin_t(as_db *db, apr_dbd_transaction_t **t);
int as_db_end_t(as_db *db, apr_dbd_transaction_t *t, int ok); /* commit when ok, else roll back */
/* Column n of a row as a string that lives as long as db->pool; NULL for SQL NULL. */
const char *as_db_col(as_db *db, apr_dbd_row_t *row, int n);
/* The next row. *row must start NULL for each result (the pgsql driver keeps
 * its cursor in it), and every loop must run to the end (pgsql frees the
 * result then; SQLite resets the statement). */
int as_db_next(as_db *db, apr_dbd_results_t *res, apr_dbd_row_t **row);

const char *as_db_schema(int pg); /* the schema text built into the binary */

/* The search order table (product_rank) built again from the
 * catalogue, in the caller's transaction: after loading a catalogue, and by
 * agentshopctl init when it is out of step (as_db_rank_stale: 1, or -1 on error). */
apr_status_t as_db_rank_rebuild(as_db *db, const char **err);
/* After a write changed products' offers (price, stock, delivery, a new or
 * withdrawn offer) or their catalogue rows, in the caller's transaction:
 * their search order rows ranked again (search_rank moves) and, with
 * content, a new catalogue number (search_catalogue), so every httpd child
 * builds or maps its index again in the background and its pages show the
 * change (docs/catalogue.md, "When a change shows"). AS_OK or AS_EDB. */
int as_db_catalogue_changed(as_db *db, const int64_t *pids, size_t n, int content);
int as_db_rank_stale(as_db *db);
/* Each mandate's running total of a month's budget (mandate_spent) built again
 * from its orders, in the caller's transaction; by agentshopctl init when a
 * total disagrees with the orders (as_db_spent_stale: 1, or -1 on error). */
apr_status_t as_db_spent_rebuild(as_db *db);
int as_db_spent_stale(as_db *db);
/* The schema's version: sql/schema.*.sql as this build knows it, kept in the
 * one row of schema_version. A database with our tables but no schema_version
 * is version 1 (the layout before versions). Raise it with a migration step in
 * as_db.c (docs/storage.md, "Schema versions"). */
#define AS_SCHEMA_VERSION 8

/* The version of the connected database: 0 when it has none of our tables (a
 * new database), else as above. */
apr_status_t as_db_schema_version(as_db *db, int *version, const char **err);
/* agentshopctl init: creates the schema, or migrates an older one in place
 * (each step from *from up, then the schema script, then the version row, in
 * one transaction: all or nothing). *from is the version found (0: none). A
 * version newer than AS_SCHEMA_VERSION is refused with APR_EINVAL, nothing
 * changed. */
apr_status_t as_db_migrate(as_db *db, int *from, const char **err);

as_store as_db_store(as_db *db);

#endif
