#include "as_db.h"

#include <apr_strings.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "as_db_private.h"
#include "as_mem.h"

/* ---- statements ---- */

#define RETURN_COLS                                                                                \
    "id, order_id, user_id, reason_code, note, refund_status, refund_cents, carrier, "             \
    "tracking_code, replacement_sku, created_at"
#define MANDATE_COLS                                                                               \
    "id, user_id, status, allowed_categories, per_order_limit_cents, monthly_limit_cents, "        \
    "confirm_above_cents, valid_until, created_at"

#define OFFER_WITHDRAWN                                                                            \
    "SELECT CASE WHEN f.withdrawn_at IS NULL THEN 0 ELSE 1 END + CASE WHEN p.withdrawn_at IS "     \
    "NULL THEN 0 ELSE 2 END + CASE WHEN m.withdrawn_at IS NULL THEN 0 ELSE 4 END FROM offers f "   \
    "JOIN products p ON p.id = f.product_id JOIN merchants m ON m.id = f.merchant_id WHERE f.id "  \
    "= %s"

static const stmt_def stmts[] = {
    {L_AS_MERCHANTS,
     "SELECT id, name, country, city, on_time_rate, accuracy_rate FROM merchants ORDER BY id",
     NULL},
    {L_AS_DEVICES,
     "SELECT id, slug, name, brand, kind, aliases FROM devices WHERE withdrawn_at IS NULL ORDER "
     "BY id",
     NULL},
    {L_AS_DEVICE_BY_SLUG,
     "SELECT id, slug, name, brand, kind, aliases FROM devices WHERE slug = %s AND withdrawn_at "
     "IS NULL",
     NULL},
    /* Catalogue loading (agentshopctl: the feed, the generator). */
    {L_AS_META_SET,
     "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
     "excluded.value",
     NULL},
    /* Agents and mandates. */
    {L_AS_KEY_BY_HASH,
     "SELECT id, user_id, key_hash, revoked_at FROM agent_keys WHERE key_hash = %s", NULL},
    {L_AS_MANDATE_CURRENT,
     "SELECT " MANDATE_COLS " FROM mandates WHERE user_id = %s AND status = 'active' "
     "ORDER BY created_at DESC, id DESC LIMIT 1",
     NULL},
    {L_AS_MANDATE_CURRENT_LOCK,
     "SELECT " MANDATE_COLS " FROM mandates WHERE user_id = %s AND status = 'active' "
     "ORDER BY created_at DESC, id DESC LIMIT 1",
     "SELECT " MANDATE_COLS " FROM mandates WHERE user_id = %s AND status = 'active' "
     "ORDER BY created_at DESC, id DESC LIMIT 1 FOR UPDATE"},
    {L_AS_MANDATE_GET, "SELECT " MANDATE_COLS " FROM mandates WHERE id = %s", NULL},
    {L_AS_MANDATE_LOCK, "SELECT " MANDATE_COLS " FROM mandates WHERE id = %s",
     "SELECT " MANDATE_COLS " FROM mandates WHERE id = %s FOR UPDATE"},
    /* The running total the triggers on orders keep (schema). On PostgreSQL the
     * row is also locked, before the order takes any offer's row: a cancel
     * locks the total (its trigger) before the offer it restocks. */
    {L_AS_MANDATE_SPENT, "SELECT cents FROM mandate_spent WHERE mandate_id = %s AND month = %s",
     "INSERT INTO mandate_spent (mandate_id, month, cents) VALUES (%s, %s, 0) ON CONFLICT "
     "(mandate_id, month) DO UPDATE SET cents = mandate_spent.cents RETURNING cents"},
    /* agentshopctl init: the running totals against the orders they sum. */
    {L_AS_SPENT_STALE,
     "SELECT (SELECT COUNT(*) FROM (SELECT mandate_id, month, SUM(budget_cents) AS cents FROM "
     "orders GROUP BY mandate_id, month) o LEFT JOIN mandate_spent s ON s.mandate_id = "
     "o.mandate_id AND s.month = o.month WHERE s.cents IS NULL OR s.cents <> o.cents) + (SELECT "
     "COUNT(*) FROM mandate_spent s WHERE s.cents <> 0 AND NOT EXISTS (SELECT 1 FROM orders o "
     "WHERE o.mandate_id = s.mandate_id AND o.month = s.month))",
     NULL},
    {L_AS_SPENT_CLEAR, "DELETE FROM mandate_spent", NULL},
    {L_AS_SPENT_FILL,
     "INSERT INTO mandate_spent (mandate_id, month, cents) SELECT mandate_id, month, "
     "SUM(budget_cents) FROM orders GROUP BY mandate_id, month",
     NULL},
    /* Quotes and orders. */
    {L_AS_QUOTE_INSERT,
     "INSERT INTO quotes (id, user_id, product_id, offer_id, quantity, unit_price_cents, "
     "total_cents, delivery_days, delivery_by, device_slug, fit_status, guarantee, created_at, "
     "expires_at) VALUES (%s, %s, %lld, %s, %lld, %lld, %lld, %lld, %s, %s, %s, %lld, %lld, "
     "%lld)",
     NULL},
    {L_AS_QUOTE_GET,
     "SELECT q.id, q.user_id, q.offer_id, q.product_id, q.quantity, q.unit_price_cents, "
     "q.total_cents, q.delivery_days, q.delivery_by, q.device_slug, q.fit_status, q.guarantee, "
     "q.created_at, q.expires_at, p.sku, p.name, p.category, m.id, m.name, o.id "
     "FROM quotes q JOIN products p ON p.id = q.product_id JOIN offers f ON f.id = q.offer_id "
     "JOIN merchants m ON m.id = f.merchant_id LEFT JOIN orders o ON o.quote_id = q.id "
     "WHERE q.id = %s",
     NULL},
    {L_AS_ORDER_INSERT,
     "INSERT INTO orders (id, user_id, mandate_id, quote_id, offer_id, quantity, "
     "unit_price_cents, total_cents, budget_cents, month, reason, agent, status, "
     "confirm_expires_at, created_at, updated_at, key_id, product_name, category, merchant_name) "
     "VALUES (%s, %s, %s, %s, %s, %lld, %lld, %lld, %lld, %s, %s, %s, %s, %lld, %lld, %lld, %s, "
     "%s, %s, %s) ON CONFLICT (quote_id) DO NOTHING",
     NULL},
    /* The name, category and merchant's name as the order was placed (schema
     * 8), not as the catalogue says now. */
    {L_AS_ORDER_GET,
     "SELECT o.id, o.user_id, o.mandate_id, o.quote_id, o.offer_id, o.quantity, "
     "o.unit_price_cents, o.total_cents, o.budget_cents, o.month, o.reason, o.agent, o.status, "
     "o.confirm_expires_at, o.created_at, o.updated_at, p.sku, o.product_name, o.category, "
     "o.merchant_name, "
     "q.delivery_by, q.device_slug, q.fit_status, q.guarantee, c.id, p.part_type, m.country, "
     "o.key_id, k.revoked_at "
     "FROM orders o JOIN quotes q ON q.id = o.quote_id JOIN products p ON p.id = q.product_id "
     "JOIN offers f ON f.id = o.offer_id JOIN merchants m ON m.id = f.merchant_id "
     "LEFT JOIN confirmations c ON c.order_id = o.id LEFT JOIN agent_keys k ON k.id = o.key_id "
     "WHERE o.id = %s",
     NULL},
    {L_AS_ORDER_EVENTS,
     "SELECT status, at, note FROM order_events WHERE order_id = %s ORDER BY seq", NULL},
    {L_AS_ORDER_MOVE,
     "UPDATE orders SET status = %s, budget_cents = %lld, updated_at = %lld WHERE id = %s AND "
     "status = %s",
     NULL},
    {L_AS_EVENT_ADD,
     "INSERT INTO order_events (order_id, seq, status, at, note) VALUES (%s, (SELECT "
     "COALESCE(MAX(seq), 0) + 1 FROM order_events WHERE order_id = %s), %s, %lld, %s)",
     NULL},
    {L_AS_ORDERS_EXPIRED,
     "SELECT o.id, o.offer_id, o.quantity, c.id FROM orders o LEFT JOIN confirmations c ON "
     "c.order_id = o.id WHERE o.mandate_id = %s AND o.status = 'awaiting_confirmation' AND "
     "o.confirm_expires_at <= %lld ORDER BY o.id",
     NULL},
    /* The sweep: any mandate's, oldest expiry first, a bounded batch (index
     * orders_expiry). */
    {L_AS_ORDERS_EXPIRED_ANY,
     "SELECT o.id, o.offer_id, o.quantity, c.id FROM orders o LEFT JOIN confirmations c ON "
     "c.order_id = o.id WHERE o.status = 'awaiting_confirmation' AND o.confirm_expires_at <= "
     "%lld ORDER BY o.confirm_expires_at, o.id LIMIT 100",
     NULL},
    /* Each returns the offer's product and its stock now, for the search order
     * table (as_db_rank_stock_moved): no second statement reads them. */
    {L_AS_STOCK_TAKE,
     "UPDATE offers SET stock = stock - %lld WHERE id = %s AND stock >= %lld AND withdrawn_at IS "
     "NULL RETURNING "
     "product_id, stock",
     NULL},
    {L_AS_STOCK_GIVE,
     /* a withdrawn offer keeps stock 0: an order cancelled after the withdrawal
      * gives its units back to no one */
     "UPDATE offers SET stock = CASE WHEN withdrawn_at IS NULL THEN stock + %lld ELSE stock END "
     "WHERE id = %s RETURNING product_id, stock",
     NULL},
    /* A product's or a merchant's withdrawal withdraws its offers too; all
     * three are read all the same. Locked: a withdrawal waits for the
     * approval that read it, or the approval reads the withdrawal. */
    {L_AS_OFFER_WITHDRAWN, OFFER_WITHDRAWN, OFFER_WITHDRAWN " FOR UPDATE OF f"},
    {L_AS_CONF_INSERT,
     "INSERT INTO confirmations (id, order_id, user_id, status, created_at, expires_at) VALUES "
     "(%s, %s, %s, %s, %lld, %lld)",
     NULL},
    {L_AS_CONF_GET,
     "SELECT id, order_id, user_id, status, created_at, expires_at, decided_at FROM "
     "confirmations WHERE id = %s",
     NULL},
    {L_AS_CONF_DECIDE, "UPDATE confirmations SET status = %s, decided_at = %lld WHERE id = %s",
     NULL},
    /* Idempotency-Key records. */
    {L_AS_IDEM_CLAIM,
     "INSERT INTO idempotency (user_id, scope, key, request_hash, state, created_at, "
     "lease_until) VALUES (%s, %s, %s, %s, 'in_flight', %lld, %lld) ON CONFLICT (user_id, "
     "scope, key) DO NOTHING",
     NULL},
    {L_AS_IDEM_GET,
     "SELECT request_hash, state, status, response, created_at, lease_until FROM idempotency "
     "WHERE user_id = %s AND scope = %s AND key = %s",
     NULL},
    {L_AS_IDEM_TAKEOVER,
     "UPDATE idempotency SET lease_until = %lld WHERE user_id = %s AND scope = %s AND key = %s "
     "AND state = 'in_flight' AND request_hash = %s AND lease_until <= %lld",
     NULL},
    {L_AS_IDEM_FORGET,
     "DELETE FROM idempotency WHERE user_id = %s AND scope = %s AND key = %s AND created_at <= "
     "%lld",
     NULL},
    {L_AS_IDEM_FINISH,
     "UPDATE idempotency SET state = 'done', status = %lld, response = %s WHERE user_id = %s "
     "AND scope = %s AND key = %s",
     NULL},
    /* Returns and questions. */
    {L_AS_RETURN_INSERT,
     "INSERT INTO returns (id, order_id, user_id, reason_code, note, refund_status, "
     "refund_cents, carrier, tracking_code, replacement_sku, created_at) VALUES (%s, %s, %s, %s, "
     "%s, %s, %lld, %s, %s, %s, %lld) ON CONFLICT (order_id) DO NOTHING",
     NULL},
    {L_AS_RETURN_GET, "SELECT " RETURN_COLS " FROM returns WHERE id = %s", NULL},
    {L_AS_RETURN_BY_ORDER, "SELECT " RETURN_COLS " FROM returns WHERE order_id = %s", NULL},
    /* Only while the user asked fewer than the day's limit (index questions_user).
     * The casts: parameters arrive as text, and SQLite orders any number
     * before any text. */
    {L_AS_QUESTION_INSERT,
     "INSERT INTO questions (id, product_id, user_id, question, answer, asked_at) SELECT %s, "
     "CAST(%lld AS BIGINT), %s, %s, %s, %s WHERE (SELECT COUNT(*) FROM questions WHERE user_id "
     "= %s AND asked_at >= %s) < CAST(%lld AS BIGINT)",
     NULL},
    /* Passkeys (core/api/as_passkey_api.c). */
    {L_AS_PASSKEY_INSERT,
     "INSERT INTO passkeys (id, user_id, alg, public_key, sign_count, created_at) VALUES (%s, %s, "
     "%lld, %s, %lld, %lld) ON CONFLICT (id) DO NOTHING",
     NULL},
    {L_AS_PASSKEYS_OF,
     "SELECT id, user_id, alg, public_key, sign_count, created_at FROM passkeys WHERE user_id = "
     "%s ORDER BY created_at, id",
     NULL},
    {L_AS_PASSKEY_GET,
     "SELECT id, user_id, alg, public_key, sign_count, created_at FROM passkeys WHERE id = %s",
     NULL},
    /* compare and set: two assertions with one counter cannot both pass */
    {L_AS_PASSKEY_COUNT,
     "UPDATE passkeys SET sign_count = %lld WHERE id = %s AND sign_count = %lld", NULL},
    {L_AS_ENROLMENT_INSERT,
     "INSERT INTO enrolments (id, user_id, token_hash, created_at, expires_at) VALUES (%s, %s, "
     "%s, %lld, %lld)",
     NULL},
    {L_AS_ENROLMENT_GET,
     "SELECT id, user_id, token_hash, created_at, expires_at, used_at FROM enrolments WHERE id = "
     "%s",
     NULL},
    {L_AS_ENROLMENT_USE,
     "UPDATE enrolments SET used_at = %lld WHERE id = %s AND used_at IS NULL AND expires_at > "
     "%lld",
     NULL},
    {L_AS_CHALLENGE_INSERT,
     "INSERT INTO webauthn_challenges (challenge, purpose, subject_id, expires_at) VALUES (%s, "
     "%s, %s, %lld) ON CONFLICT DO NOTHING",
     NULL},
    {L_AS_CHALLENGE_LIVE,
     "SELECT challenge, expires_at FROM webauthn_challenges WHERE purpose = %s AND subject_id = "
     "%s AND used_at IS NULL AND expires_at > %lld ORDER BY expires_at DESC LIMIT 1",
     NULL},
    {L_AS_CHALLENGES_DUE,
     "SELECT challenge FROM webauthn_challenges WHERE expires_at < %lld LIMIT 1", NULL},
    {L_AS_CHALLENGE_USE,
     "UPDATE webauthn_challenges SET used_at = %lld WHERE challenge = %s AND purpose = %s AND "
     "subject_id = %s AND used_at IS NULL AND expires_at > %lld",
     NULL},
    {L_AS_CHALLENGES_PRUNE,
     "DELETE FROM webauthn_challenges WHERE challenge IN (SELECT challenge FROM "
     "webauthn_challenges WHERE expires_at < %lld LIMIT %d)",
     NULL},
    /* Administration (bin/agentshopctl). */
    {L_AS_KEY_INSERT,
     "INSERT INTO agent_keys (id, user_id, key_hash, created_at) VALUES (%s, %s, %s, %s)", NULL},
    {L_AS_KEY_REVOKE, "UPDATE agent_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
     NULL},
    {L_AS_KEY_LIST,
     "SELECT id, user_id, created_at, revoked_at FROM agent_keys WHERE (%s IS NULL OR user_id "
     "= %s) ORDER BY created_at, id",
     NULL},
    {L_AS_KEY_GET, "SELECT id, user_id, created_at, revoked_at FROM agent_keys WHERE id = %s",
     NULL},
    {L_AS_MANDATE_INSERT,
     "INSERT INTO mandates (id, user_id, status, allowed_categories, per_order_limit_cents, "
     "monthly_limit_cents, confirm_above_cents, valid_until, created_at) VALUES (%s, %s, "
     "'active', %s, %lld, %lld, %lld, %s, %s)",
     NULL},
    {L_AS_MANDATE_REVOKE,
     "UPDATE mandates SET status = 'revoked', revoked_at = %s WHERE id = %s AND status = "
     "'active'",
     NULL},
    {L_AS_MANDATE_LIST,
     "SELECT " MANDATE_COLS " FROM mandates WHERE (%s IS NULL OR user_id = %s) ORDER BY "
     "created_at, id",
     NULL},
};
#define N_STMTS (sizeof(stmts) / sizeof(stmts[0]))

/* ---- schema text, generated from sql/schema.*.sql at build time ---- */
#include "schema_sqlite.inc"
#include "schema_pgsql.inc"

const char *as_db_schema(int pg)
{
    return pg ? schema_pgsql_sql : schema_sqlite_sql;
}

/* ---- durable commits, one fdatasync for many (the module's connections) ----
 *
 * A commit is durable when its frames of the WAL are on disk. With
 * synchronous=FULL SQLite syncs the WAL inside every COMMIT, while the writer
 * lock is held, so writers queue behind each other's fsync. The module's
 * connections run synchronous=NORMAL instead (a COMMIT writes the WAL, no
 * sync) and, after the writer lock is released and before the request can
 * answer, wait until an fdatasync of the WAL that began after their COMMIT
 * has returned. One such sync covers every commit made before it began, by
 * any thread: while one runs, the next writers commit, and the sync after it
 * covers them all (group commit). The WAL is one file written in order, so a
 * synced commit never depends on an unsynced one; a checkpoint syncs the WAL
 * before copying it and the database after. What a request acknowledges is
 * exactly as durable as under synchronous=FULL (docs/storage.md). */
typedef struct wal_sync {
    char *path;               /* the database's -wal file */
    pthread_mutex_t lock;     /* one fdatasync at a time; guards synced */
    _Atomic uint64_t written; /* commits made, counted under the writer lock */
    uint64_t synced;          /* commits known to be on disk */
    struct wal_sync *next;
} wal_sync;

static wal_sync *wal_syncs; /* one per database file, for the process's life */
static pthread_mutex_t wal_syncs_lock = PTHREAD_MUTEX_INITIALIZER;

static wal_sync *wal_sync_for(const char *db_file)
{
    pthread_mutex_lock(&wal_syncs_lock);
    size_t n = strlen(db_file);
    wal_sync *ws = wal_syncs;
    while (ws && !(strncmp(ws->path, db_file, n) == 0 && strcmp(ws->path + n, "-wal") == 0))
        ws = ws->next;
    if (!ws && (ws = calloc(1, sizeof(*ws))) && (ws->path = malloc(n + 5))) {
        memcpy(ws->path, db_file, n);
        memcpy(ws->path + n, "-wal", 5);
        pthread_mutex_init(&ws->lock, NULL);
        ws->next = wal_syncs;
        wal_syncs = ws;
    } else if (ws && !ws->path) {
        free(ws);
        ws = NULL;
    }
    pthread_mutex_unlock(&wal_syncs_lock);
    return ws;
}

/* Returns once commit number `mine` is on disk; errno on failure. */
static int wal_sync_upto(wal_sync *ws, uint64_t mine)
{
    int rc = 0;
    pthread_mutex_lock(&ws->lock);
    if (ws->synced < mine) {
        uint64_t upto = atomic_load(&ws->written); /* every commit made before this sync */
        int fd = open(ws->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            /* No WAL: the last connection checkpointed it into the database,
             * synced, and removed it. */
            if (errno != ENOENT) rc = errno;
        } else {
            if (fdatasync(fd) != 0) rc = errno;
            close(fd);
        }
        if (!rc) ws->synced = upto;
    }
    pthread_mutex_unlock(&ws->lock);
    return rc;
}

#define WAL_KEY "as_wal_sync" /* in a connection's `prepared`: its wal_sync */

/* ---- the writer lock file: one writer or checkpointer at a time ----
 *
 * SQLite before 3.51.3 (Debian 12's 3.40 among them) can corrupt a database
 * when a checkpoint runs while another connection commits (the WAL-reset
 * bug, docs/storage.md). httpd's mutex orders only its own children, of one
 * generation; agentshopctl and another httpd are outside it. So every write
 * transaction and every checkpoint of ours, in any process, also holds an
 * exclusive flock on <database>-lock, one open file per connection (flock
 * belongs to the open file, so two connections of one process exclude each
 * other too). */
typedef struct conn_writer {
    apr_pool_t *pool; /* the connection's: the file is closed with it */
    const char *path; /* <database>-lock */
    mode_t mode;      /* the database file's, which the lock file gets */
    int fd;           /* opened at the first write; -1 before */
} conn_writer;

#define WRITER_KEY "as_writer" /* in a connection's `prepared`: its conn_writer */

static apr_status_t writer_close(void *data)
{
    conn_writer *w = data;
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    return APR_SUCCESS;
}

static int writer_open(conn_writer *w)
{
    int fd = open(w->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, w->mode);
    if (fd < 0) return errno;
    struct stat st; /* as SQLite gives -wal and -shm the database's mode, past the umask */
    if (fstat(fd, &st) == 0 && (st.st_mode & 0777) != w->mode) (void)fchmod(fd, w->mode);
    w->fd = fd;
    apr_pool_cleanup_register(w->pool, w, writer_close, apr_pool_cleanup_null);
    return 0;
}

static conn_writer *writer_of(as_db *db)
{
    return db->pg || !db->prepared ? NULL
                                   : apr_hash_get(db->prepared, WRITER_KEY, APR_HASH_KEY_STRING);
}

/* The lock file taken, waiting until `until` at most (backing off from 1 to
 * 50 ms, as SQLite's busy handler below): 0, or -1 (logged). */
static int writer_take(as_db *db, apr_time_t until)
{
    conn_writer *w = writer_of(db);
    int rc = !w ? 0 : w->fd < 0 ? writer_open(w) : 0;
    for (int n = 0; w && !rc; n++) {
        if (flock(w->fd, LOCK_EX | LOCK_NB) == 0) return 0;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            rc = errno;
            break;
        }
        apr_time_t now = apr_time_now();
        if (now >= until) {
            if (db->log)
                db->log(db->log_baton,
                        apr_psprintf(db->pool,
                                     "another process (agentshopctl, another httpd) held the "
                                     "writer lock %s for longer than the write may wait: nothing "
                                     "was written",
                                     w->path));
            return -1;
        }
        apr_interval_time_t nap = n < 6 ? (apr_interval_time_t)1000 << n : 50000;
        apr_sleep(nap < until - now ? nap : until - now);
    }
    if (rc && db->log)
        db->log(db->log_baton, apr_psprintf(db->pool, "cannot take the writer lock %s: %s", w->path,
                                            strerror(rc)));
    return rc ? -1 : 0;
}

static void writer_give(as_db *db)
{
    conn_writer *w = writer_of(db);
    if (w && w->fd >= 0) flock(w->fd, LOCK_UN);
}

apr_status_t as_db_writes_init(apr_pool_t *pool, apr_hash_t *prepared, const char *file,
                               bool grouped, const char **err)
{
    wal_sync *ws = file && grouped ? wal_sync_for(file) : NULL;
    if (grouped && !ws) {
        *err = "cannot find the database file of the connection (a SQLite database in memory "
               "cannot be used)";
        return APR_EGENERAL;
    }
    if (grouped) apr_hash_set(prepared, WAL_KEY, APR_HASH_KEY_STRING, ws);
    if (!file) return APR_SUCCESS; /* in memory: no other process to exclude */
    conn_writer *w = apr_pcalloc(pool, sizeof(*w));
    struct stat st;
    w->pool = pool;
    w->path = apr_pstrcat(pool, file, "-lock", NULL);
    w->mode = stat(file, &st) == 0 ? st.st_mode & 0666 : 0644;
    w->fd = -1;
    apr_hash_set(prepared, WRITER_KEY, APR_HASH_KEY_STRING, w);
    return APR_SUCCESS;
}

/* SQLite's wait for a database another process holds: until the deadline
 * of the write under way in this thread (as_db_begin_t), else
 * AS_DB_WRITE_WAIT from the first busy answer of the statement. Backs off
 * from 1 ms to 50 ms between tries. */
static __thread apr_time_t busy_deadline;

int as_db_busy_wait(void *arg, int n)
{
    static __thread apr_time_t first;
    (void)arg;
    apr_time_t now = apr_time_now();
    if (n == 0) first = now;
    apr_time_t until = busy_deadline ? busy_deadline : first + AS_DB_WRITE_WAIT;
    if (now >= until) return 0;
    apr_interval_time_t nap = n < 6 ? (apr_interval_time_t)1000 << n : 50000;
    apr_sleep(nap < until - now ? nap : until - now);
    return 1;
}

/* SQLite's schema cookie (PRAGMA schema_version) on connection h, -1 when
 * it cannot be read. */
static int64_t schema_cookie(apr_pool_t *p, const apr_dbd_driver_t *d, apr_dbd_t *h)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    int64_t v = -1;
    if (apr_dbd_select(d, p, h, &res, "PRAGMA schema_version", 0) != 0) return -1;
    while (apr_dbd_get_row(d, p, res, &row, -1) == 0) {
        const char *e = apr_dbd_get_entry(d, row, 0);
        if (v < 0 && e) v = apr_atoi64(e);
    }
    return v;
}

#define SCHEMA_KEY "as_schema_cookie" /* in a connection's `prepared`: an int64_t */

#define LABEL_ITEM(l) l,
static const char *const all_labels[] = {AS_DB_LABELS(LABEL_ITEM)};
#undef LABEL_ITEM

/* Each named label (as_db_labels.h) has exactly one statement: a label
 * without one, or a statement defined twice, fails the start naming it,
 * instead of a "not prepared" line at the first request that runs it. */
static apr_status_t labels_check(apr_pool_t *p, apr_hash_t *prepared, const char **err)
{
    size_t n = sizeof(all_labels) / sizeof(all_labels[0]);
    for (size_t i = 0; i < n; i++)
        if (!apr_hash_get(prepared, all_labels[i], APR_HASH_KEY_STRING)) {
            *err = apr_psprintf(p, "statement %s has no definition (sql/as_db_labels.h)",
                                all_labels[i]);
            return APR_EGENERAL;
        }
    /* every named label prepared and as many definitions as names: one each */
    size_t defined = N_STMTS + as_db_n_search_stmts + as_db_n_view_stmts + as_db_n_ops_stmts +
                     as_db_n_feed_stmts;
    if (defined != n) {
        *err = apr_psprintf(p,
                            "%" APR_SIZE_T_FMT " statements defined for %" APR_SIZE_T_FMT
                            " labels: a label is defined twice, or a statement's label is not "
                            "named in sql/as_db_labels.h",
                            defined, n);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Every labelled statement, prepared on connection h into `prepared`. On
 * SQLite, apr_dbd_sqlite3 prepares with the legacy sqlite3_prepare, whose
 * statements are never prepared again by SQLite: after any change of the
 * schema (a migration, an index an administrator adds) each fails with
 * SQLITE_SCHEMA until prepared anew. So the schema cookie they were prepared
 * under is kept beside them (read first: a change in between only makes the
 * next check prepare them once more). */
apr_status_t as_db_prepare_all(apr_pool_t *conn_pool, const apr_dbd_driver_t *d, apr_dbd_t *h,
                               apr_hash_t *prepared, int pg, const char **err)
{
    if (!pg) {
        int64_t *cookie = apr_hash_get(prepared, SCHEMA_KEY, APR_HASH_KEY_STRING);
        if (!cookie) {
            cookie = apr_palloc(conn_pool, sizeof(*cookie));
            apr_hash_set(prepared, SCHEMA_KEY, APR_HASH_KEY_STRING, cookie);
        }
        *cookie = schema_cookie(conn_pool, d, h);
    }
    const stmt_def *tables[] = {stmts, as_db_search_stmts, as_db_view_stmts, as_db_ops_stmts,
                                as_db_feed_stmts};
    size_t sizes[] = {N_STMTS, as_db_n_search_stmts, as_db_n_view_stmts, as_db_n_ops_stmts,
                      as_db_n_feed_stmts};
    for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++)
        for (size_t i = 0; i < sizes[t]; i++) {
            const stmt_def *sd = &tables[t][i];
            const char *sql = pg && sd->pgsql ? sd->pgsql : sd->sqlite;
            apr_dbd_prepared_t *st = NULL;
            int rv = apr_dbd_prepare(d, conn_pool, h, sql, sd->label, &st);
            if (rv) {
                *err = apr_psprintf(conn_pool,
                                    "preparing %s failed (is the schema loaded? run "
                                    "agentshopctl init): %s",
                                    sd->label, apr_dbd_error(d, h, rv));
                return APR_EGENERAL;
            }
            apr_hash_set(prepared, sd->label, APR_HASH_KEY_STRING, st);
        }
    return labels_check(conn_pool, prepared, err);
}

int as_db_prepare(as_db *db, const char *label, const char *sqlite, const char *pgsql)
{
    apr_pool_t *cp = apr_hash_pool_get(db->prepared);
    apr_dbd_prepared_t *st = NULL;
    int rv =
        apr_dbd_prepare(db->driver, cp, db->handle, db->pg && pgsql ? pgsql : sqlite, label, &st);
    if (rv) {
        if (db->log)
            db->log(db->log_baton, apr_psprintf(db->pool, "preparing %s failed: %s", label,
                                                apr_dbd_error(db->driver, db->handle, rv)));
        return -1;
    }
    apr_hash_set(db->prepared, label, APR_HASH_KEY_STRING, st);
    return 0;
}

/* After the schema changed under this connection's statements (SQLite): all
 * prepared again, on the connection's own pool (the old ones are finalized
 * with the connection). Returns 0 when they were. */
static int reprepare(as_db *db)
{
    const char *err = NULL;
    apr_pool_t *cp = apr_hash_pool_get(db->prepared);
    if (as_db_prepare_all(cp, db->driver, db->handle, db->prepared, 0, &err) != APR_SUCCESS) {
        if (db->log)
            db->log(db->log_baton, apr_psprintf(db->pool, "after a schema change: %s", err));
        return -1;
    }
    if (db->log)
        db->log(db->log_baton, "the database schema changed: this connection's statements were "
                               "prepared again");
    return 0;
}

/* Whether the last statement on db failed because the schema changed. */
static int schema_changed(as_db *db, int rv)
{
    if (db->pg || !db->prepared || !db->handle) return 0;
    sqlite3 *conn = apr_dbd_native_handle(db->driver, db->handle);
    return rv == SQLITE_SCHEMA || (conn && sqlite3_errcode(conn) == SQLITE_SCHEMA);
}

/* Before a transaction's first statement: prepared again when the schema
 * cookie moved since they were prepared (a failed statement inside a
 * transaction would turn its commit into a rollback). */
static void schema_check(as_db *db)
{
    if (db->pg || !db->prepared || !db->handle) return;
    int64_t *cookie = apr_hash_get(db->prepared, SCHEMA_KEY, APR_HASH_KEY_STRING);
    if (!cookie) return;
    int64_t now = schema_cookie(db->pool, db->driver, db->handle);
    if (now >= 0 && now != *cookie) reprepare(db);
}

static void *pool_alloc(void *baton, size_t n)
{
    return apr_pcalloc(baton, n);
}

static void *pool_alloc_raw(void *baton, size_t n)
{
    return apr_palloc(baton, n);
}

as_mem as_db_pool_mem(apr_pool_t *p)
{
    return (as_mem){pool_alloc, p, pool_alloc_raw};
}

static void db_log(as_db *db, const char *what, int rv)
{
    if (db->log)
        db->log(db->log_baton,
                apr_psprintf(db->pool, "%s: %s", what, apr_dbd_error(db->driver, db->handle, rv)));
}

static apr_dbd_prepared_t *stmt_get(as_db *db, const char *label)
{
    if (!db->handle && (!db->acquire || db->acquire(db) != 0)) return NULL;
    apr_dbd_prepared_t *st = apr_hash_get(db->prepared, label, APR_HASH_KEY_STRING);
    if (!st && db->log)
        db->log(db->log_baton, apr_psprintf(db->pool, "statement %s is not prepared", label));
    return st;
}

int as_db_select(as_db *db, const char *label, apr_dbd_results_t **res, int nargs,
                 const char **args)
{
    apr_dbd_prepared_t *st = stmt_get(db, label);
    if (!st) return -1;
    *res = NULL;
    /* pgsql: random=1 (sequential access sleeps on empty results); sqlite: streamed */
    int rv =
        apr_dbd_pselect(db->driver, db->pool, db->handle, res, st, db->pg ? 1 : 0, nargs, args);
    /* the schema changed (SQLite): prepared again; outside a transaction the
     * read is run again, it did nothing */
    if (rv && schema_changed(db, rv) && reprepare(db) == 0 && !db->trans &&
        (st = stmt_get(db, label))) {
        *res = NULL;
        rv = apr_dbd_pselect(db->driver, db->pool, db->handle, res, st, 0, nargs, args);
    }
    if (rv) db_log(db, label, rv);
    return rv;
}

static int exec_in(as_db *db, const char *label, int *nrows, int nargs, const char **args);

/* A write outside any transaction and the writer lock (agentshopctl's
 * single statements) runs in a transaction of its own, which holds the lock
 * file (as_db_begin_t). */
int as_db_exec(as_db *db, const char *label, int *nrows, int nargs, const char **args)
{
    sqlite3 *h = db->pg || db->locked || !db->handle || !writer_of(db)
                     ? NULL
                     : apr_dbd_native_handle(db->driver, db->handle);
    if (!h || !sqlite3_get_autocommit(h)) return exec_in(db, label, nrows, nargs, args);
    apr_dbd_transaction_t *t = NULL;
    int rv = as_db_begin_t(db, &t);
    if (rv) return rv;
    rv = exec_in(db, label, nrows, nargs, args);
    int end = as_db_end_t(db, t, rv == 0);
    return rv ? rv : end;
}

static int exec_in(as_db *db, const char *label, int *nrows, int nargs, const char **args)
{
    apr_dbd_prepared_t *st = stmt_get(db, label);
    if (!st) return -1;
    int n = 0;
    int rv = apr_dbd_pquery(db->driver, db->pool, db->handle, nrows ? nrows : &n, st, nargs, args);
    if (rv && schema_changed(db, rv) && reprepare(db) == 0 && !db->trans &&
        (st = stmt_get(db, label)))
        rv = apr_dbd_pquery(db->driver, db->pool, db->handle, nrows ? nrows : &n, st, nargs, args);
    if (rv) db_log(db, label, rv);
    return rv;
}

int as_db_next(as_db *db, apr_dbd_results_t *res, apr_dbd_row_t **row)
{
    return apr_dbd_get_row(db->driver, db->pool, res, row, -1) == 0;
}

const char *as_db_col_now(as_db *db, apr_dbd_row_t *row, int n)
{
    char *v = NULL;
    return apr_dbd_datum_get(db->driver, row, n, APR_DBD_TYPE_STRING, &v) == APR_SUCCESS ? v : NULL;
}

const char *as_db_col(as_db *db, apr_dbd_row_t *row, int n)
{
    const char *v = as_db_col_now(db, row, n);
    /* pgsql frees its result when the last row has been read: keep a copy */
    return db->pg && v ? apr_pstrdup(db->pool, v) : v;
}

int as_db_write_lock(as_db *db)
{
    if (db->pg || (!db->lock && !writer_of(db)) || db->locked) return 0;
    db->write_deadline = apr_time_now() + (db->write_wait ? db->write_wait : AS_DB_WRITE_WAIT);
    if (db->lock && db->lock(db) != 0) return -1;
    if (writer_take(db, db->write_deadline) != 0) {
        if (db->lock) db->unlock(db);
        db->write_deadline = 0;
        return -1;
    }
    db->locked = 1;
    db->wrote = 1; /* until a rollback says otherwise */
    return 0;
}

int as_db_write_unlock(as_db *db)
{
    if (!db->locked) return 0;
    /* between writes, still holding both locks; after a commit only */
    if (!db->trans && db->wrote) as_db_checkpoint_maybe(db);
    wal_sync *ws =
        db->wrote && db->prepared ? apr_hash_get(db->prepared, WAL_KEY, APR_HASH_KEY_STRING) : NULL;
    uint64_t mine = ws ? atomic_fetch_add(&ws->written, 1) + 1 : 0;
    db->wrote = 0;
    db->locked = 0;
    db->write_deadline = 0;
    writer_give(db);
    if (db->lock) db->unlock(db);
    int rc = ws ? wal_sync_upto(ws, mine) : 0;
    if (rc && db->log)
        db->log(db->log_baton,
                apr_psprintf(db->pool, "syncing %s failed: %s", ws->path, strerror(rc)));
    return rc ? -1 : 0;
}

/* Every this many commits a process checkpoints the WAL, holding the writer
 * lock: no two checkpoints, nor a checkpoint and a commit, ever overlap. */
#define CHECKPOINT_EVERY 64
static unsigned commits_since_checkpoint; /* guarded by the writer lock */

/* PRAGMA wal_checkpoint(PASSIVE) on db, whose writer lock the caller holds:
 * the WAL's frames and those now in the database (-1 when unknown). */
static int checkpoint_locked(as_db *db, int64_t *frames, int64_t *done)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    *frames = *done = -1;
    int rv =
        apr_dbd_select(db->driver, db->pool, db->handle, &res, "PRAGMA wal_checkpoint(PASSIVE)", 0);
    if (rv) {
        if (db->log)
            db->log(db->log_baton, apr_psprintf(db->pool, "checkpoint failed: %s",
                                                apr_dbd_error(db->driver, db->handle, rv)));
        return -1;
    }
    while (apr_dbd_get_row(db->driver, db->pool, res, &row, -1) == 0)
        if (*frames < 0) {
            *frames = as_db_i64(apr_dbd_get_entry(db->driver, row, 1));
            *done = as_db_i64(apr_dbd_get_entry(db->driver, row, 2));
        }
    return 0;
}

void as_db_checkpoint_maybe(as_db *db)
{
    if (db->pg || !db->locked || ++commits_since_checkpoint < CHECKPOINT_EVERY) return;
    commits_since_checkpoint = 0;
    int64_t frames, done;
    (void)checkpoint_locked(db, &frames, &done);
}

int as_db_checkpoint(as_db *db, int64_t *frames, int64_t *done)
{
    if (db->pg || !writer_of(db)) return -1;
    if (as_db_write_lock(db) != 0) return -1;
    int rc = checkpoint_locked(db, frames, done);
    db->wrote = 0; /* nothing committed: no sync, no checkpoint again */
    as_db_write_unlock(db);
    return rc;
}

as_db_rec as_db_copy_row(as_db *db, as_mem *m, apr_dbd_results_t *res, apr_dbd_row_t *row)
{
    int n = apr_dbd_num_cols(db->driver, res);
    const char **v = as_alloc(m, (size_t)(n + 1) * sizeof(*v));
    for (int i = 0; i < n; i++)
        v[i] = as_strdup(m, as_db_col(db, row, i));
    return v;
}

/* What as_db_begin_t hands out for a transaction sqlite3 itself runs. */
static char native_transaction;
#define NATIVE_T ((apr_dbd_transaction_t *)(void *)&native_transaction)

static int native_exec(as_db *db, const char *sql)
{
    sqlite3 *h = apr_dbd_native_handle(db->driver, db->handle);
    char *msg = NULL;
    int rc = h ? sqlite3_exec(h, sql, NULL, NULL, &msg) : SQLITE_MISUSE;
    if (rc != SQLITE_OK && db->log) {
        bool busy = rc == SQLITE_BUSY;
        db->log(db->log_baton,
                apr_psprintf(db->pool, "%s failed: %s%s", sql, msg ? msg : sqlite3_errstr(rc),
                             busy ? " (another process held the database for longer than the "
                                    "write may wait: nothing was written)"
                                  : ""));
    }
    sqlite3_free(msg);
    return rc;
}

int as_db_begin_t(as_db *db, apr_dbd_transaction_t **t)
{
    *t = NULL;
    schema_check(db);
    if (!db->pg) {
        busy_deadline = db->write_deadline ? db->write_deadline
                                           : apr_time_now() +
                                                 (db->write_wait ? db->write_wait : AS_DB_WRITE_WAIT);
        /* a caller without the writer lock (agentshopctl) holds its file for
         * this transaction alone */
        if (!db->locked && writer_take(db, busy_deadline) != 0) {
            busy_deadline = 0;
            return SQLITE_BUSY;
        }
        db->t_locked = !db->locked;
        int rc = native_exec(db, "BEGIN IMMEDIATE");
        busy_deadline = 0;
        if (rc != SQLITE_OK) {
            if (db->t_locked) writer_give(db);
            db->t_locked = 0;
            return rc;
        }
        *t = NATIVE_T;
        return 0;
    }
    int rv = apr_dbd_transaction_start(db->driver, db->pool, db->handle, t);
    if (rv) {
        db_log(db, "begin", rv);
        return rv;
    }
    /* PostgreSQL waits for row locks (a mandate FOR UPDATE) as long as the
     * write may wait in all, then fails the statement */
    apr_interval_time_t wait = db->write_wait ? db->write_wait : AS_DB_WRITE_WAIT;
    int n = 0;
    rv = apr_dbd_query(db->driver, db->handle, &n,
                       apr_psprintf(db->pool, "SET LOCAL lock_timeout = %" APR_TIME_T_FMT,
                                    apr_time_as_msec(wait)));
    if (rv) {
        db_log(db, "SET LOCAL lock_timeout", rv);
        as_db_end_t(db, *t, 0);
        *t = NULL;
    }
    return rv;
}

int as_db_end_t(as_db *db, apr_dbd_transaction_t *t, int ok)
{
    if (t == NATIVE_T) {
        int rc = native_exec(db, ok ? "COMMIT" : "ROLLBACK");
        /* a COMMIT that failed leaves the transaction open: end it */
        if (rc != SQLITE_OK && ok) native_exec(db, "ROLLBACK");
        if (db->t_locked) writer_give(db);
        db->t_locked = 0;
        return rc;
    }
    if (!ok) apr_dbd_transaction_mode_set(db->driver, t, APR_DBD_TRANSACTION_ROLLBACK);
    int rv = apr_dbd_transaction_end(db->driver, db->pool, t);
    if (rv) db_log(db, "commit", rv);
    return rv;
}

/* Whether a line ending with ';' ends the statement so far: not inside a
 * PostgreSQL $$ body, and in an SQLite CREATE TRIGGER only its line "END;". */
static int statement_ends(const char *stmt, const char *line, size_t n, int in_dollar)
{
    if (!n || line[n - 1] != ';' || in_dollar) return 0;
    if (strncmp(stmt, "CREATE TRIGGER", 14) != 0) return 1;
    const char *t = line + strspn(line, " \t");
    return (size_t)(line + n - t) == 4 && strncmp(t, "END;", 4) == 0;
}

apr_status_t as_db_exec_script(as_db *db, const char *script, const char **err)
{
    char *copy = apr_pstrdup(db->pool, script), *save = NULL;
    struct {
        char *data;
        size_t len;
    } cur = {apr_pcalloc(db->pool, strlen(script) + 2), 0};
    int in_dollar = 0;
    for (char *line = apr_strtok(copy, "\n", &save); line; line = apr_strtok(NULL, "\n", &save)) {
        const char *t = line + strspn(line, " \t");
        if (strncmp(t, "--", 2) == 0 || !*t) continue;
        for (const char *d = strstr(line, "$$"); d; d = strstr(d + 2, "$$"))
            in_dollar = !in_dollar;
        size_t n = strlen(line);
        memcpy(cur.data + cur.len, line, n);
        cur.len += n;
        cur.data[cur.len++] = '\n';
        while (n && strchr(" \t\r", line[n - 1]))
            n--;
        cur.data[cur.len] = '\0';
        if (statement_ends(cur.data, line, n, in_dollar)) {
            while (cur.len && strchr(" \t\r\n", cur.data[cur.len - 1]))
                cur.len--;
            cur.data[cur.len] = '\0';
            int nrows = 0;
            int rv = apr_dbd_query(db->driver, db->handle, &nrows, cur.data);
            if (rv) {
                *err = apr_psprintf(db->pool, "%s\nfailed: %s", cur.data,
                                    apr_dbd_error(db->driver, db->handle, rv));
                return APR_EGENERAL;
            }
            cur.len = 0;
        }
    }
    return APR_SUCCESS;
}

/* ---- schema versions and migrations ---- */

/* The first row's first two columns of a statement run as it is (the schema
 * may not exist yet, so nothing can be prepared). */
static apr_status_t first_two(as_db *db, const char *sql, int64_t *a, int64_t *b, const char **err)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    int rv = apr_dbd_select(db->driver, db->pool, db->handle, &res, sql, 0);
    if (rv) {
        *err = apr_psprintf(db->pool, "reading the schema failed: %s",
                            apr_dbd_error(db->driver, db->handle, rv));
        return APR_EGENERAL;
    }
    int n = 0;
    while (apr_dbd_get_row(db->driver, db->pool, res, &row, -1) == 0)
        if (!n++) {
            *a = as_db_i64(apr_dbd_get_entry(db->driver, row, 0));
            if (b) *b = as_db_i64(apr_dbd_get_entry(db->driver, row, 1));
        }
    return APR_SUCCESS;
}

apr_status_t as_db_schema_version(as_db *db, int *version, const char **err)
{
    int64_t has_version = 0, has_tables = 0, v = 0;
    const char *sql = db->pg ? "SELECT CASE WHEN to_regclass('schema_version') IS NULL THEN 0 "
                               "ELSE 1 END, CASE WHEN to_regclass('products') IS NULL THEN 0 "
                               "ELSE 1 END"
                             : "SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
                               "AND name = 'schema_version'), (SELECT COUNT(*) FROM "
                               "sqlite_master WHERE type = 'table' AND name = 'products')";
    if (first_two(db, sql, &has_version, &has_tables, err) != APR_SUCCESS) return APR_EGENERAL;
    if (has_version &&
        first_two(db, "SELECT MAX(version) FROM schema_version", &v, NULL, err) != APR_SUCCESS)
        return APR_EGENERAL;
    *version = has_version && v > 0 ? (int)v : has_tables || has_version ? 1 : 0;
    return APR_SUCCESS;
}

/* Version 1 to 2: schema_version itself (the schema script creates it). A
 * database from before product_rank.version gets that column here, on SQLite;
 * PostgreSQL's script adds it (ADD COLUMN IF NOT EXISTS). */
static apr_status_t to_2(as_db *db, const char **err)
{
    int64_t old = 0;
    if (db->pg) return APR_SUCCESS;
    if (first_two(db,
                  "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = "
                  "'product_rank' AND NOT EXISTS (SELECT 1 FROM "
                  "pragma_table_info('product_rank') WHERE name = 'version')",
                  &old, NULL, err) != APR_SUCCESS)
        return APR_EGENERAL;
    if (!old) return APR_SUCCESS;
    return as_db_exec_script(
        db, "ALTER TABLE product_rank ADD COLUMN version INTEGER NOT NULL DEFAULT 0;\n", err);
}

/* Version 2 to 3: what only the SQL search used goes (issue 16: the search
 * engine in core answers GET /search): the full-text index (SQLite's FTS5 table
 * product_fts, PostgreSQL's generated tsvector products.search and its GIN
 * index), the per-shape counts (product_counts), and product_rank's copies of
 * sku, category and part type with the indexes that paged by them. No row of
 * any other table is touched; product_rank keeps its rows and versions, so a
 * running search index needs no rebuild. Each statement is guarded, so the
 * step may meet a database that lacks any of these. */
static const char *const v3_drop = "DROP INDEX IF EXISTS rank_score;\n"
                                   "DROP INDEX IF EXISTS rank_category_score;\n"
                                   "DROP INDEX IF EXISTS rank_part_type_score;\n"
                                   "DROP INDEX IF EXISTS rank_category_price;\n"
                                   "DROP INDEX IF EXISTS rank_category_delivery;\n"
                                   "DROP INDEX IF EXISTS rank_category_return;\n"
                                   "DROP INDEX IF EXISTS rank_hidden;\n"
                                   "DROP TABLE IF EXISTS product_counts;\n";
static const char *const v3_rank_columns[] = {"sku", "category", "part_type"};

static apr_status_t to_3(as_db *db, const char **err)
{
    if (as_db_exec_script(db, v3_drop, err) != APR_SUCCESS) return APR_EGENERAL;
    if (db->pg)
        return as_db_exec_script(db,
                                 "DROP INDEX IF EXISTS products_search;\n"
                                 "ALTER TABLE products DROP COLUMN IF EXISTS search;\n"
                                 "ALTER TABLE product_rank DROP COLUMN IF EXISTS sku, DROP COLUMN "
                                 "IF EXISTS category, DROP COLUMN IF EXISTS part_type;\n",
                                 err);
    if (as_db_exec_script(db, "DROP TABLE IF EXISTS product_fts;\n", err) != APR_SUCCESS)
        return APR_EGENERAL;
    /* SQLite has no DROP COLUMN IF EXISTS (and needs 3.35 for DROP COLUMN) */
    for (size_t i = 0; i < sizeof(v3_rank_columns) / sizeof(v3_rank_columns[0]); i++) {
        int64_t has = 0;
        const char *col = v3_rank_columns[i];
        if (first_two(db,
                      apr_psprintf(db->pool,
                                   "SELECT COUNT(*) FROM pragma_table_info('product_rank') WHERE "
                                   "name = '%s'",
                                   col),
                      &has, NULL, err) != APR_SUCCESS)
            return APR_EGENERAL;
        if (has &&
            as_db_exec_script(
                db, apr_psprintf(db->pool, "ALTER TABLE product_rank DROP COLUMN %s;\n", col),
                err) != APR_SUCCESS)
            return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Version 3 to 4: offers' index by product becomes offers_product_stock
 * (product_id, id, stock), made by the schema script after this step, so that
 * a search page's live stock is read from the index alone (docs/storage.md).
 * The old index would only cost writes. Orders gain key_id. */
static apr_status_t to_4(as_db *db, const char **err)
{
    if (as_db_exec_script(db, "DROP INDEX IF EXISTS offers_product;\n", err) != APR_SUCCESS)
        return APR_EGENERAL;
    /* orders.key_id: the key that placed an order, re-checked when a human
     * approves it; added here on both drivers, so that the columns later
     * steps add come after it, as in a new database */
    int64_t has = 0;
    if (db->pg) {
        if (first_two(db, "SELECT CASE WHEN to_regclass('orders') IS NULL THEN 0 ELSE 1 END", &has,
                      NULL, err) != APR_SUCCESS)
            return APR_EGENERAL;
        return !has ? APR_SUCCESS /* the script makes the table */
                    : as_db_exec_script(
                          db, "ALTER TABLE orders ADD COLUMN IF NOT EXISTS key_id TEXT;\n", err);
    }
    if (first_two(db,
                  "SELECT COUNT(*) FROM pragma_table_info('orders') WHERE name = 'key_id'", &has,
                  NULL, err) != APR_SUCCESS)
        return APR_EGENERAL;
    return has ? APR_SUCCESS
               : as_db_exec_script(db, "ALTER TABLE orders ADD COLUMN key_id TEXT;\n", err);
}

/* Version 4 to 5: product_versions.seq, the live sequence of each product's
 * last change (SQLite; PostgreSQL's script adds the column and never moves
 * it), and the triggers that raise it, made again by the schema script after
 * this step (CREATE TRIGGER IF NOT EXISTS would keep the old ones). Every
 * product keeps seq 0: a search index built after this reads each product's
 * stock as it is then. */
static apr_status_t to_5(as_db *db, const char **err)
{
    int64_t has = 0;
    if (db->pg) return APR_SUCCESS;
    if (first_two(db,
                  "SELECT COUNT(*) FROM pragma_table_info('product_versions') WHERE name = 'seq'",
                  &has, NULL, err) != APR_SUCCESS)
        return APR_EGENERAL;
    if (!has && as_db_exec_script(db,
                                  "ALTER TABLE product_versions ADD COLUMN seq INTEGER NOT NULL "
                                  "DEFAULT 0;\n",
                                  err) != APR_SUCCESS)
        return APR_EGENERAL;
    return as_db_exec_script(db,
                             "DROP TRIGGER IF EXISTS offers_version;\n"
                             "DROP TRIGGER IF EXISTS questions_version;\n",
                             err);
}

/* Version 5 to 6: PostgreSQL's live sequence (schema.pgsql.sql: the deferred
 * triggers that raise it in commit order, made by the schema script after
 * this step). Until now it never moved there, and an index file built then
 * (they outlive httpd's runs) has live sequence 0 with the stock of its
 * build: every product changed since the catalogue was loaded gets seq 1,
 * so such an index reads those products' stock live. An index built later
 * reads their stock as it is then; the first change after this step is
 * numbered 1 too, and only an index older than it (live sequence 0) reads
 * them live for it. Nothing on SQLite. */
static apr_status_t to_6(as_db *db, const char **err)
{
    int64_t has = 0;
    if (!db->pg) return APR_SUCCESS;
    if (first_two(db, "SELECT CASE WHEN to_regclass('product_versions') IS NULL THEN 0 ELSE 1 END",
                  &has, NULL, err) != APR_SUCCESS)
        return APR_EGENERAL;
    if (!has) return APR_SUCCESS; /* made by the schema script, empty */
    return as_db_exec_script(db,
                             "ALTER TABLE product_versions ADD COLUMN IF NOT EXISTS seq BIGINT NOT "
                             "NULL DEFAULT 0;\n"
                             "UPDATE product_versions SET seq = 1 WHERE seq < 1;\n",
                             err);
}

/* Version 6 to 7: withdrawals (agentshopctl catalogue import): withdrawn_at
 * on merchants, products, offers and devices, NULL for every row (all sold
 * and listed, as before). PostgreSQL's script adds them with ADD COLUMN IF
 * NOT EXISTS; SQLite has no such clause. */
static apr_status_t to_7(as_db *db, const char **err)
{
    static const char *const tables[] = {"merchants", "products", "offers", "devices"};
    if (db->pg) return APR_SUCCESS;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        int64_t has = 0;
        if (first_two(db,
                      apr_psprintf(db->pool,
                                   "SELECT COUNT(*) FROM pragma_table_info('%s') WHERE name = "
                                   "'withdrawn_at'",
                                   tables[i]),
                      &has, NULL, err) != APR_SUCCESS)
            return APR_EGENERAL;
        if (!has &&
            as_db_exec_script(
                db, apr_psprintf(db->pool, "ALTER TABLE %s ADD COLUMN withdrawn_at TEXT;\n", tables[i]),
                err) != APR_SUCCESS)
            return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Version 7 to 8: orders keep what was bought (issue 59): product_name,
 * category and merchant_name, as the order was placed, so a feed's rename
 * changes no order's view nor its approval's category check. An order from
 * before gets them from the catalogue as it is at the step (the best record
 * left: products and merchants are never deleted, only withdrawn). */
static const char *const v8_backfill =
    "UPDATE orders SET product_name = (SELECT p.name FROM quotes q JOIN products p ON p.id = "
    "q.product_id WHERE q.id = orders.quote_id), category = (SELECT p.category FROM quotes q "
    "JOIN products p ON p.id = q.product_id WHERE q.id = orders.quote_id), merchant_name = "
    "(SELECT m.name FROM offers f JOIN merchants m ON m.id = f.merchant_id WHERE f.id = "
    "orders.offer_id);\n";

static apr_status_t to_8_order_snapshot(as_db *db, const char **err)
{
    int64_t has_orders = 0, has = 0;
    const char *sql = db->pg ? "SELECT CASE WHEN to_regclass('orders') IS NULL THEN 0 ELSE 1 "
                               "END, (SELECT COUNT(*) FROM information_schema.columns WHERE "
                               "table_name = 'orders' AND column_name = 'product_name' AND "
                               "table_schema = current_schema())"
                             : "SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
                               "AND name = 'orders'), (SELECT COUNT(*) FROM "
                               "pragma_table_info('orders') WHERE name = 'product_name')";
    if (first_two(db, sql, &has_orders, &has, err) != APR_SUCCESS) return APR_EGENERAL;
    if (!has_orders || has) return APR_SUCCESS; /* the script makes the table, or done */
    if (db->pg)
        return as_db_exec_script(db,
                                 apr_pstrcat(db->pool,
                                             "ALTER TABLE orders ADD COLUMN product_name TEXT, "
                                             "ADD COLUMN category TEXT, ADD COLUMN merchant_name "
                                             "TEXT;\n",
                                             v8_backfill,
                                             "ALTER TABLE orders ALTER COLUMN product_name SET "
                                             "NOT NULL, ALTER COLUMN category SET NOT NULL, ALTER "
                                             "COLUMN merchant_name SET NOT NULL;\n",
                                             NULL),
                                 err);
    /* SQLite adds a NOT NULL column only with a default; every row gets a value */
    return as_db_exec_script(
        db,
        apr_pstrcat(db->pool,
                    "ALTER TABLE orders ADD COLUMN product_name TEXT NOT NULL DEFAULT '';\n"
                    "ALTER TABLE orders ADD COLUMN category TEXT NOT NULL DEFAULT '';\n"
                    "ALTER TABLE orders ADD COLUMN merchant_name TEXT NOT NULL DEFAULT '';\n",
                    v8_backfill, NULL),
        err);
}

/* Version 7 to 8: webauthn_challenges unique per (subject_id, purpose,
 * expires_at), the index the schema script then makes. Before, each look at a
 * confirmation link added a challenge, so a subject may have several with the
 * same second of expiry: one of each such group is kept (a page showing
 * another asks the person to reload). */
static apr_status_t to_8_challenges(as_db *db, const char **err)
{
    int64_t has = 0;
    const char *exists = db->pg ? "SELECT CASE WHEN to_regclass('webauthn_challenges') IS NULL "
                                  "THEN 0 ELSE 1 END"
                                : "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                                  "name = 'webauthn_challenges'";
    if (first_two(db, exists, &has, NULL, err) != APR_SUCCESS) return APR_EGENERAL;
    if (!has) return APR_SUCCESS;
    return as_db_exec_script(db,
                             "DELETE FROM webauthn_challenges WHERE challenge NOT IN (SELECT "
                             "MIN(challenge) FROM webauthn_challenges GROUP BY subject_id, "
                             "purpose, expires_at);\n",
                             err);
}

/* What CREATE ... IF NOT EXISTS in the schema script cannot do, in order: the
 * step to version `to` runs on a database of version to - 1, before the
 * script. */
static const struct migration {
    int to;
    apr_status_t (*run)(as_db *db, const char **err);
} migrations[] = {
    {2, to_2}, {3, to_3}, {4, to_4}, {5, to_5}, {6, to_6}, {7, to_7},
    {8, to_8_order_snapshot}, {8, to_8_challenges},
};

static apr_status_t migrate_steps(as_db *db, int from, const char **err)
{
    for (size_t i = 0; i < sizeof(migrations) / sizeof(migrations[0]); i++)
        if (from > 0 && migrations[i].to > from && migrations[i].run(db, err) != APR_SUCCESS)
            return APR_EGENERAL;
    if (as_db_exec_script(db, as_db_schema(db->pg), err) != APR_SUCCESS) return APR_EGENERAL;
    const char *set = apr_psprintf(db->pool,
                                   "DELETE FROM schema_version;\n"
                                   "INSERT INTO schema_version (version) VALUES (%d);\n",
                                   AS_SCHEMA_VERSION);
    return as_db_exec_script(db, set, err);
}

apr_status_t as_db_migrate(as_db *db, int *from, const char **err)
{
    if (as_db_schema_version(db, from, err) != APR_SUCCESS) return APR_EGENERAL;
    if (*from > AS_SCHEMA_VERSION) {
        *err = apr_psprintf(db->pool,
                            "the database's schema is version %d, newer than this build of "
                            "mod_agentshop knows (%d); use the agentshopctl that came with the "
                            "mod_agentshop that wrote it. Nothing was changed",
                            *from, AS_SCHEMA_VERSION);
        return APR_EINVAL;
    }
    apr_dbd_transaction_t *t = NULL;
    if (as_db_begin_t(db, &t) != 0) {
        *err = apr_psprintf(db->pool, "cannot begin a transaction: %s",
                            apr_dbd_error(db->driver, db->handle, 1));
        return APR_EGENERAL;
    }
    apr_status_t rv = migrate_steps(db, *from, err);
    if (as_db_end_t(db, t, rv == APR_SUCCESS) != 0 && rv == APR_SUCCESS) {
        *err = "committing the schema failed";
        rv = APR_EGENERAL;
    }
    return rv;
}

/* ---- the as_store functions ---- */

int64_t as_db_i64(const char *s)
{
    return s ? strtoll(s, NULL, 10) : 0;
}

double as_db_dbl(const char *s)
{
    return s ? strtod(s, NULL) : 0;
}

int as_db_bool(const char *s)
{
    return s && (s[0] == '1' || s[0] == 't');
}

const char *as_db_i64s(as_db *db, int64_t v)
{
    return apr_psprintf(db->pool, "%" APR_INT64_T_FMT, v);
}


/* Column n's text copied onto m (the result's own memory is db->pool's). */
static const char *text_on(as_db *db, as_mem *m, apr_dbd_row_t *row, int n)
{
    return as_strdup(m, as_db_col(db, row, n));
}

static void read_merchant(as_db *db, as_mem *m, apr_dbd_row_t *row, int c, as_merchant *out)
{
    out->id = text_on(db, m, row, c);
    out->name = text_on(db, m, row, c + 1);
    out->country = text_on(db, m, row, c + 2);
    out->city = text_on(db, m, row, c + 3);
    out->on_time_rate = as_db_dbl(as_db_col(db, row, c + 4));
    out->accuracy_rate = as_db_dbl(as_db_col(db, row, c + 5));
    out->json = NULL; /* written from the fields (only the search index keeps it) */
    out->json_len = 0;
}

void as_db_read_offer(as_db *db, as_mem *m, apr_dbd_row_t *row, int c, as_offer *o)
{
    o->id = text_on(db, m, row, c);
    o->price_cents = as_db_i64(as_db_col(db, row, c + 1));
    o->retail_price_cents = as_db_i64(as_db_col(db, row, c + 2));
    o->price_label = text_on(db, m, row, c + 3);
    o->delivery_days = (int)as_db_i64(as_db_col(db, row, c + 4));
    o->stock = as_db_i64(as_db_col(db, row, c + 5));
    read_merchant(db, m, row, c + 6, &o->merchant);
}

void *as_db_grow(as_mem *m, void *arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return arr;
    size_t nc = *cap ? *cap * 2 : 16;
    void *na = as_alloc(m, nc * elem);
    if (n) memcpy(na, arr, n * elem);
    *cap = nc;
    return na;
}

static int st_merchants(void *h, as_mem *m, as_merchant **out, size_t *n)
{
    as_db *db = h;
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_AS_MERCHANTS, &res, 0, NULL)) return AS_EDB;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    while (as_db_next(db, res, &row)) {
        *out = as_db_grow(m, *out, &cap, *n, sizeof(as_merchant));
        read_merchant(db, m, row, 0, &(*out)[(*n)++]);
    }
    return AS_OK;
}

static void read_device(as_db *db, as_mem *m, apr_dbd_row_t *row, as_device *d)
{
    d->id = as_db_i64(as_db_col(db, row, 0));
    d->slug = text_on(db, m, row, 1);
    d->name = text_on(db, m, row, 2);
    d->brand = text_on(db, m, row, 3);
    d->kind = text_on(db, m, row, 4);
    d->aliases = text_on(db, m, row, 5);
    if (!d->aliases) d->aliases = "";
}

static int st_devices(void *h, as_mem *m, as_device **out, size_t *n)
{
    as_db *db = h;
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_AS_DEVICES, &res, 0, NULL)) return AS_EDB;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    while (as_db_next(db, res, &row)) {
        *out = as_db_grow(m, *out, &cap, *n, sizeof(as_device));
        read_device(db, m, row, &(*out)[(*n)++]);
    }
    return AS_OK;
}

static int st_device_by_slug(void *h, as_mem *m, const char *slug, as_device *out)
{
    as_db *db = h;
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *args[] = {slug};
    if (as_db_select(db, L_AS_DEVICE_BY_SLUG, &res, 1, args)) return AS_EDB;
    int found = 0;
    while (as_db_next(db, res, &row))
        if (!found++) read_device(db, m, row, out);
    return found ? AS_OK : AS_ENOTFOUND;
}

/* Columns 0..11 of PRODUCT_SUMMARY. */
void as_db_read_summary(as_db *db, as_mem *m, apr_dbd_row_t *row, as_product *p)
{
    p->id = as_db_i64(as_db_col(db, row, 0));
    p->sku = text_on(db, m, row, 1);
    p->name = text_on(db, m, row, 2);
    p->brand = text_on(db, m, row, 3);
    p->category = text_on(db, m, row, 4);
    p->part_type = text_on(db, m, row, 5);
    p->image_urls = text_on(db, m, row, 6);
    p->availability = text_on(db, m, row, 7);
    p->verif_status = as_verif_parse(text_on(db, m, row, 8));
    p->verif_note = text_on(db, m, row, 9);
    p->return_rate = as_db_dbl(as_db_col(db, row, 10));
    p->guarantee = as_db_bool(as_db_col(db, row, 11));
    p->is_demo = true;
}

int as_db_read_compat(as_db *db, as_mem *m, apr_dbd_row_t *row, int c, as_compat **out)
{
    if (!as_db_col(db, row, c)) {
        *out = NULL;
        return 0;
    }
    as_compat *x = as_alloc(m, sizeof(*x));
    x->device_slug = text_on(db, m, row, c);
    x->device_name = text_on(db, m, row, c + 1);
    x->fit_status = as_fit_parse(text_on(db, m, row, c + 2));
    x->evidence = text_on(db, m, row, c + 3);
    x->checked_at = text_on(db, m, row, c + 4);
    *out = x;
    return 1;
}

/* The store over apr_dbd: every table, the same for each connection. */
static const as_store_catalog_ops db_catalog = {
    .device_by_slug = st_device_by_slug,
    .product_by_sku = st_product_by_sku,
    .search = st_search,
    .compatible = st_compatible,
    .product_live = st_product_live,
    .offers_stock = st_offers_stock,
};

static const as_store_feed_ops db_feed = {
    .merchants = st_merchants,
    .devices = st_devices,
    .search_version = st_search_version,
    .index_rows = st_index_rows,
    .rank_changes = st_rank_changes,
};

static const as_store_buy_ops db_buy = {
    .begin = st_begin,
    .commit = st_commit,
    .rollback = st_rollback,
    .key_by_hash = st_key_by_hash,
    .mandate_current = st_mandate_current,
    .mandate_get = st_mandate_get,
    .mandate_spent = st_mandate_spent,
    .quote_insert = st_quote_insert,
    .quote_get = st_quote_get,
    .order_insert = st_order_insert,
    .order_get = st_order_get,
    .order_move = st_order_move,
    .event_add = st_event_add,
    .orders_expired = st_orders_expired,
    .stock_take = st_stock_take,
    .stock_give = st_stock_give,
    .offer_withdrawn = st_offer_withdrawn,
    .confirmation_insert = st_confirmation_insert,
    .confirmation_get = st_confirmation_get,
    .confirmation_decide = st_confirmation_decide,
    .idem_claim = st_idem_claim,
    .idem_forget = st_idem_forget,
    .idem_takeover = st_idem_takeover,
    .idem_finish = st_idem_finish,
    .return_insert = st_return_insert,
    .return_get = st_return_get,
    .return_by_order = st_return_by_order,
    .question_insert = st_question_insert,
    .passkey_insert = st_passkey_insert,
    .passkeys_of = st_passkeys_of,
    .passkey_get = st_passkey_get,
    .passkey_count = st_passkey_count,
    .enrolment_insert = st_enrolment_insert,
    .enrolment_get = st_enrolment_get,
    .enrolment_use = st_enrolment_use,
    .challenge_insert = st_challenge_insert,
    .challenge_live = st_challenge_live,
    .challenge_use = st_challenge_use,
    .challenges_prune = st_challenges_prune,
};

static const as_store_version_ops db_version = {
    .product_version = st_product_version,
};

static const as_store_live_ops db_live = {
    .live_changes = st_live_changes,
};

static const as_store_ops db_ops = {
    .catalog = &db_catalog,
    .feed = &db_feed,
    .buy = &db_buy,
    .version = &db_version,
    .live = &db_live,
};

as_store as_db_store(as_db *db)
{
    return (as_store){&db_ops, db};
}
