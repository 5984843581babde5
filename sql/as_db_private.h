/* Helpers shared by the storage files (not part of the storage interface). */
#ifndef AS_DB_PRIVATE_H
#define AS_DB_PRIVATE_H

#include "as_db.h"
#include "as_db_labels.h"
#include "as_versions.h"

/* ---- statements ---- */

typedef struct stmt_def {
    const char *label;
    const char *sqlite; /* apr_dbd syntax: %s text, %lld integer, %lf real */
    const char *pgsql;  /* NULL when the SQLite text works as it is */
} stmt_def;

#define PRODUCT_SUMMARY                                                                            \
    "p.id, p.sku, p.name, p.brand, p.category, p.part_type, p.image_urls, p.availability, "        \
    "p.verif_status, p.verif_note, p.return_rate, "                                                \
    "CASE WHEN EXISTS (SELECT 1 FROM compat g WHERE g.product_id = p.id AND g.fit_status = "       \
    "'fits') THEN 1 ELSE 0 END"
#define OFFER_COLS                                                                                 \
    "o.id, o.price_cents, o.retail_price_cents, o.price_label, o.delivery_days, o.stock, m.id, "   \
    "m.name, m.country, m.city, m.on_time_rate, m.accuracy_rate"
#define OFFER_JOIN                                                                                 \
    " LEFT JOIN offers o ON o.product_id = p.id AND o.withdrawn_at IS NULL LEFT JOIN merchants m "  \
    "ON m.id = o.merchant_id "
#define NO_COMPAT ", NULL, NULL, NULL, NULL, NULL, "
#define COMPAT_COLS ", d.slug, d.name, c.fit_status, c.evidence, c.checked_at, "

/* sql/as_db_search.c: the search index's sources, the compatible parts, the
 * search order table, and their statements. */
extern const stmt_def as_db_search_stmts[];
extern const size_t as_db_n_search_stmts;
int st_search(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n);
int st_compatible(void *h, as_mem *m, const as_search_filter *f, int64_t limit, int64_t offset,
                  size_t max_excluded, as_compat_page *out);
int st_search_version(void *h, as_search_version *out);
int st_index_rows(void *h, as_index_rows_fn each, void *baton);
int st_rank_changes(void *h, int64_t since, as_rank_row_fn each, void *baton);
int st_live_changes(void *h, int64_t since, bool asked, as_live_fn each, void *baton);
int st_offers_stock(void *h, as_mem *m, const int64_t *ids, size_t n, as_offer_stock **out,
                    size_t *nout);
/* After a write moved an offer of product pid by delta to stock: ranks the
 * product again when the offer ran out or came back, in the caller's transaction. */
int as_db_rank_stock_moved(as_db *db, int64_t pid, int64_t stock, int64_t delta);

/* Reads every product in batches of ids on a reader thread of its own
 * (as_db_search.c, the index's stream): fill reads the products lo < id <=
 * hi on db into an array of *n items allocated on pool (the batch's; db->pool
 * is pool meanwhile), false when the read failed; give takes each batch's
 * items on the caller's thread while the next batch is read. AS_OK when every
 * batch was read and taken. */
typedef bool (*as_batch_fill_fn)(as_db *db, apr_pool_t *pool, int64_t lo, int64_t hi,
                                 void **items, size_t *n, void *ctx);
typedef int (*as_batch_give_fn)(const void *items, size_t n, void *ctx);
int as_db_read_batches(as_db *db, as_batch_fill_fn fill, void *fill_ctx, as_batch_give_fn give,
                       void *give_ctx);

/* Column n of row as as_db_col reads it, but not copied: valid until the next
 * row is read (for a value parsed at once: a number, a flag, NULL or not). */
const char *as_db_col_now(as_db *db, apr_dbd_row_t *row, int n);

/* One row of a read, whichever way it was read (as_db_native.c): its columns as
 * text (on the read's memory; NULL for NULL), and as numbers and flags where
 * the store has them so (SQLite's own values, without text between). */
typedef struct cells {
    const char *(*text)(void *src, int c);
    int64_t (*i64)(void *src, int c);
    double (*dbl)(void *src, int c);
    bool (*null)(void *src, int c);
    bool (*flag)(void *src, int c); /* 1 or true */
    void *src;
} cells;
typedef void (*as_db_cells_fn)(void *baton, const cells *row);
/* Runs statement label with integer arguments (its %lld in order), giving
 * each row to each, texts on m (or, through apr_dbd, on db->pool): on
 * SQLite on the connection's own handle for the statements prepared so
 * (the views' and the index's reads), else through apr_dbd. AS_OK or
 * AS_EDB (logged). */
int as_db_each_row(as_db *db, as_mem *m, const char *label, const int64_t *args, int nargs,
                   as_db_cells_fn each, void *baton);

/* sql/as_db_view.c: the product view's read, and its statements. */
extern const stmt_def as_db_view_stmts[];
extern const size_t as_db_n_view_stmts;
/* sql/as_db_feed.c: the catalogue feed's import and export. */
extern const stmt_def as_db_feed_stmts[];
extern const size_t as_db_n_feed_stmts;

/* as_db.c, for a connection's set-up (as_db_conn.c): every labelled
 * statement prepared on h into `prepared` (on SQLite beside the schema cookie
 * they were prepared under); */
apr_status_t as_db_prepare_all(apr_pool_t *conn_pool, const apr_dbd_driver_t *d, apr_dbd_t *h,
                               apr_hash_t *prepared, int pg, const char **err);
/* what a SQLite connection's writes need, in `prepared`: the writer lock
 * file beside file (none when NULL: a database in memory) and, grouped, the
 * WAL's grouped sync (as_db_write_unlock); */
apr_status_t as_db_writes_init(apr_pool_t *pool, apr_hash_t *prepared, const char *file,
                               bool grouped, const char **err);
/* SQLite's busy handler: waits until the deadline of this thread's write
 * (as_db_begin_t), else AS_DB_WRITE_WAIT. */
int as_db_busy_wait(void *arg, int n);

/* sql/as_db_native.c: on SQLite, the view's statements and the index's reads
 * on the connection's own handle, prepared with it (as_db_conn.c) and
 * finalized before it closes (conn_pool's cleanup); nothing on PostgreSQL or
 * without SQLite's thread safety (apr_dbd's statements serve then). */
apr_status_t as_db_native_init(apr_pool_t *conn_pool, const apr_dbd_driver_t *d, apr_dbd_t *h,
                               apr_hash_t *prepared, const char **err);
/* Finalizes them now (before the connection is closed by hand, not by its pool). */
void as_db_native_close(apr_pool_t *conn_pool, apr_hash_t *prepared);
/* The connection's own statement of as_db_view_stmts[which] (connecting
 * first), or NULL: apr_dbd's serves. */
struct sqlite3_stmt *as_db_native_view(as_db *db, int which);
/* Binds sku (?1, unless NULL) and ids (?2 on) and steps st, giving each row
 * to each as cells (texts on m). AS_OK or AS_EDB (logged). */
int as_db_native_run(as_db *db, struct sqlite3_stmt *st, as_mem *m, const char *label,
                     const char *sku, const int64_t *ids, int nids, as_db_cells_fn each,
                     void *baton);
/* Each row of an apr_dbd result to each as cells (texts on db->pool), to the end. */
void as_db_dbd_each(as_db *db, apr_dbd_results_t *res, as_db_cells_fn each, void *baton);
/* A read-only connection of db's SQLite file for one thread, without
 * SQLite's per-connection mutex (SQLITE_OPEN_NOMUTEX: every call on a
 * connection of apr_dbd's takes it), with the statements of db's: *out is
 * db on it, closed with pool. false when db is not SQLite with its own
 * statements, or the file cannot be opened so: db serves then. */
bool as_db_reader_open(as_db *db, apr_pool_t *pool, as_db *out);
int st_product_by_sku(void *h, as_mem *m, const char *sku, int64_t device_id, as_product *p);
int st_product_version(void *h, as_mem *m, const char *sku, const char **out);
/* One batch of the search index's read (lo < id <= hi), on m: each product's
 * index row with its spec rows and its view (row->view), without its offers
 * and compat rows (st_index_rows reads them). */
bool as_db_index_products(as_db *db, as_mem *m, int64_t lo, int64_t hi, as_index_row **rows,
                          size_t *n);
int st_product_live(void *h, as_mem *m, const char *sku, int64_t product_id,
                    as_product_live *out);

/* sql/as_db_ops.c: the statements of the operator's daily commands. */
extern const stmt_def as_db_ops_stmts[];
extern const size_t as_db_n_ops_stmts;

/* Rows of the catalogue queries (as_db.c). */
double as_db_dbl(const char *s);
/* Texts copied onto m. */
void as_db_read_summary(as_db *db, as_mem *m, apr_dbd_row_t *row, as_product *p); /* PRODUCT_SUMMARY */
void as_db_read_offer(as_db *db, as_mem *m, apr_dbd_row_t *row, int c, as_offer *o); /* OFFER_COLS */
int as_db_read_compat(as_db *db, as_mem *m, apr_dbd_row_t *row, int c, as_compat **out);

int64_t as_db_i64(const char *s);
int as_db_bool(const char *s);
const char *as_db_i64s(as_db *db, int64_t v);
void *as_db_grow(as_mem *m, void *arr, size_t *cap, size_t n, size_t elem);

/* as_db_orders.c: the as_store functions for buying. */
int st_begin(void *h);
int st_commit(void *h);
int st_rollback(void *h);
int st_key_by_hash(void *h, as_mem *m, const char *hash, as_key_row *out);
int st_mandate_current(void *h, as_mem *m, const char *user_id, bool lock, as_mandate *out);
int st_mandate_get(void *h, as_mem *m, const char *id, bool lock, as_mandate *out);
int st_mandate_spent(void *h, const char *mandate_id, const char *month, int64_t *cents);
int st_quote_insert(void *h, const as_quote *q);
int st_quote_get(void *h, as_mem *m, const char *id, as_quote *out);
int st_order_insert(void *h, const as_order *o);
int st_order_get(void *h, as_mem *m, const char *id, as_order *out);
int st_order_move(void *h, const char *id, as_order_state from, as_order_state to, int64_t budget,
                  int64_t at);
int st_event_add(void *h, const char *order_id, as_order_state status, int64_t at,
                 const char *note);
int st_orders_expired(void *h, as_mem *m, const char *mandate_id, int64_t now, as_order **out,
                      size_t *n);
int st_stock_take(void *h, const char *offer_id, int64_t qty);
int st_stock_give(void *h, const char *offer_id, int64_t qty);
int st_offer_withdrawn(void *h, const char *offer_id, unsigned *what);
int st_confirmation_insert(void *h, const as_confirmation *c);
int st_confirmation_get(void *h, as_mem *m, const char *id, as_confirmation *out);
int st_confirmation_decide(void *h, const char *id, as_confirmation_state to, int64_t at);
int st_idem_claim(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                  const char *hash, int64_t now, int64_t lease_until, as_idem *existing);
int st_idem_forget(void *h, const char *user, const char *scope, const char *key, int64_t before);
int st_idem_takeover(void *h, as_mem *m, const char *user, const char *scope, const char *key,
                     const char *hash, int64_t now, int64_t lease_until, as_idem *existing);
int st_idem_finish(void *h, const char *user, const char *scope, const char *key, int status,
                   const char *response);

int st_return_insert(void *h, const as_return *r);
int st_return_get(void *h, as_mem *m, const char *id, as_return *out);
int st_return_by_order(void *h, as_mem *m, const char *order_id, as_return *out);
int st_question_insert(void *h, int64_t product_id, const char *id, const char *user_id,
                       const char *question, const char *answer, const char *asked_at,
                       const char *since, int64_t per_day);
int st_passkey_insert(void *h, const as_passkey *k);
int st_passkeys_of(void *h, as_mem *m, const char *user_id, as_passkey **out, size_t *n);
int st_passkey_get(void *h, as_mem *m, const char *id, as_passkey *out);
int st_passkey_count(void *h, const char *id, int64_t from, int64_t to);
int st_enrolment_insert(void *h, const as_enrolment *e);
int st_enrolment_get(void *h, as_mem *m, const char *id, as_enrolment *out);
int st_enrolment_use(void *h, const char *id, int64_t now);
int st_challenge_insert(void *h, const char *challenge, const char *purpose,
                        const char *subject_id, int64_t expires_at);
int st_challenge_live(void *h, as_mem *m, const char *purpose, const char *subject_id, int64_t now,
                      as_challenge *out);
int st_challenge_use(void *h, const char *challenge, const char *purpose, const char *subject_id,
                     int64_t now);
int st_challenges_prune(void *h, int64_t now, int limit, int *n);

/* A row's columns copied onto m, so they outlive the result. */
typedef const char **as_db_rec;
as_db_rec as_db_copy_row(as_db *db, as_mem *m, apr_dbd_results_t *res, apr_dbd_row_t *row);

/* Reading one mandate row (MANDATE_COLS order). */
void as_db_read_mandate(as_db_rec rec, as_mandate *md);

#endif
