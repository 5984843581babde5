/* Search storage: what core's search index (core/search/, docs/search.md) is
 * built and kept current from, the compatible-parts list, and the search order
 * table (product_rank) that gives the index each product's rank.
 *
 * product_rank holds, per product, what search sorts by under the default
 * weights: whether any offer can be bought, and the best offer's score, price
 * and delivery days, computed by core's as_rank_best (the one ranking
 * formula, which the caller gives as as_db.rank), with the search_rank
 * version of its last change. It changes only when the catalogue is loaded
 * and when an offer's stock reaches zero or comes back from it; both update
 * it in the same transaction as the change, so an index that reads the rows
 * changed since its version (as_rank_changes) misses none. docs/storage.md,
 * "Search at scale", has the design. */
#include <apr_general.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <stdbool.h>
#include <string.h>

#include "as_db_private.h"

/* Offer columns start here in every row read_products reads. */
#define SEARCH_OFFER_COL 17

/* ---- statements ---- */

/* A device's compat rows of listed products (of one part type when given). */
#define COMPAT_FROM " FROM compat c JOIN products p ON p.id = c.product_id"
#define COMPAT_WHERE                                                                               \
    " WHERE c.device_id = %lld AND (%s IS NULL OR p.part_type = %s) AND p.withdrawn_at IS NULL"
/* The parts a device's list leaves out: compat_exclusion (core/api/as_catalog_api.c). */
#define COMPAT_LEFT_OUT "(p.verif_status = 'contradicted' OR c.fit_status = 'does_not_fit')"
/* A page of the parts listed: by part type, buyable first, best score, sku,
 * as the handler orders them (product_rank: the default weights' best
 * offer); texts compared as strcmp does (PostgreSQL: in collation C). */
#define COMPAT_PAGE(coll)                                                                          \
    "SELECT " PRODUCT_SUMMARY COMPAT_COLS OFFER_COLS                                               \
    " FROM (SELECT p.id AS id, c.device_id AS dev" COMPAT_FROM                                     \
    " LEFT JOIN product_rank r ON r.product_id = p.id" COMPAT_WHERE " AND NOT " COMPAT_LEFT_OUT    \
    " ORDER BY p.part_type" coll ", COALESCE(r.buyable, 0) DESC, "                                 \
    "COALESCE(r.score, 0) DESC, p.sku" coll " LIMIT %lld OFFSET %lld) pg JOIN products p ON "      \
    "p.id = pg.id JOIN compat c ON c.product_id = p.id AND c.device_id = pg.dev JOIN devices d "   \
    "ON d.id = c.device_id" OFFER_JOIN "ORDER BY p.id, o.id"

const stmt_def as_db_search_stmts[] = {
    /* A device's compatible parts (of one part type when given), with their
     * offers and their compat row for the device. */
    {L_AS_SEARCH_DEV,
     "SELECT " PRODUCT_SUMMARY COMPAT_COLS OFFER_COLS
     " FROM products p JOIN compat c ON c.product_id = p.id AND c.device_id = %lld JOIN devices d "
     "ON d.id = c.device_id" OFFER_JOIN
     "WHERE (%s IS NULL OR p.part_type = %s) AND p.withdrawn_at IS NULL ORDER BY p.id, o.id",
     NULL},

    /* GET /devices/{slug}/compatible: how many parts are listed and left
     * out, one page of the listed, the first left out (by id, without
     * offers: the column after the compat row is NULL). */
    {L_AS_COMPAT_COUNT,
     "SELECT COALESCE(SUM(CASE WHEN " COMPAT_LEFT_OUT " THEN 0 ELSE 1 END), 0), "
     "COALESCE(SUM(CASE WHEN " COMPAT_LEFT_OUT " THEN 1 ELSE 0 END), 0)" COMPAT_FROM COMPAT_WHERE,
     NULL},
    {L_AS_COMPAT_PAGE, COMPAT_PAGE(""), COMPAT_PAGE(" COLLATE \"C\"")},
    {L_AS_COMPAT_LEFT_OUT,
     "SELECT " PRODUCT_SUMMARY COMPAT_COLS "NULL" COMPAT_FROM " JOIN devices d ON d.id = "
     "c.device_id" COMPAT_WHERE " AND " COMPAT_LEFT_OUT " ORDER BY p.id LIMIT %lld",
     NULL},

    /* Keeping product_rank. */
    {L_AS_RANK_SIZES, "SELECT (SELECT COUNT(*) FROM product_rank), (SELECT COUNT(*) FROM products)",
     NULL},
    {L_AS_RANK_MAX_ID, "SELECT COALESCE(MAX(id), 0) FROM products", NULL},
    {L_AS_RANK_CLEAR, "DELETE FROM product_rank", NULL},
    /* one product's row made, or its verification and return rate taken
     * again (a catalogue import): what as_rank_seed gives every product */
    {L_AS_RANK_PRODUCT,
     "INSERT INTO product_rank (product_id, hidden, buyable, score, price_cents, days, "
     "return_rate) SELECT id, CASE WHEN verif_status = 'contradicted' THEN 1 ELSE 0 END, 0, 0, "
     "0, 0, return_rate FROM products WHERE id = %lld ON CONFLICT (product_id) DO UPDATE SET "
     "hidden = excluded.hidden, return_rate = excluded.return_rate",
     NULL},
    {L_AS_RANK_SEED,
     "INSERT INTO product_rank (product_id, hidden, buyable, score, price_cents, days, "
     "return_rate) SELECT id, CASE WHEN verif_status = 'contradicted' THEN 1 ELSE 0 END, 0, 0, "
     "0, 0, return_rate FROM products",
     NULL},
    /* in the layout of as_search_dev's rows, so read_products reads it */
    {L_AS_RANK_OFFERS,
     "SELECT " PRODUCT_SUMMARY NO_COMPAT OFFER_COLS " FROM products p JOIN offers o ON "
     "o.product_id = p.id AND o.withdrawn_at IS NULL JOIN merchants m ON m.id = o.merchant_id "
     "WHERE p.id > %lld AND p.id <= %lld ORDER BY p.id, o.id",
     NULL},
    /* A row takes the current rank version, so the text index reads only rows
     * that changed since its own (st_rank_changes). */
    {L_AS_RANK_SET,
     "UPDATE product_rank SET buyable = %lld, score = %lld, price_cents = %lld, days = %lld, "
     "version = COALESCE((SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'search_rank'), 0) "
     "WHERE product_id = %lld",
     NULL},
    /* the rows of a batch of products at once (rank_range): a JSON array of
     * {p, b, s, c, d} (product, buyable, score, cents, days) */
    {L_AS_RANK_SET_MANY,
     "UPDATE product_rank SET buyable = json_extract(j.value, '$.b'), score = "
     "json_extract(j.value, '$.s'), price_cents = json_extract(j.value, '$.c'), days = "
     "json_extract(j.value, '$.d'), version = COALESCE((SELECT CAST(value AS BIGINT) FROM meta "
     "WHERE key = 'search_rank'), 0) FROM json_each(%s) j WHERE product_rank.product_id = "
     "json_extract(j.value, '$.p')",
     "UPDATE product_rank r SET buyable = x.b, score = x.s, price_cents = x.c, days = x.d, "
     "version = COALESCE((SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'search_rank'), 0) "
     "FROM json_to_recordset(CAST(%s AS json)) AS x(p bigint, b integer, s integer, c bigint, d "
     "integer) WHERE r.product_id = x.p"},
    /* The versions of the text index's sources (as_search_version), in meta:
     * search_catalogue moves with every catalogue load, search_rank with every
     * change of a product_rank row, in the transaction of the change. */
    {L_AS_VERSION_GET,
     "SELECT (SELECT value FROM meta WHERE key = 'search_catalogue'), (SELECT value FROM meta "
     "WHERE key = 'search_rank'), (SELECT value FROM meta WHERE key = 'live_seq')",
     NULL},
    /* The products whose offers' stock or questions changed after a live
     * sequence number (SQLite's triggers on offers and questions, schema
     * version 5), and every product with a question: what a search index reads
     * live, the rest it has (st_live_changes). */
    {L_AS_LIVE_CHANGES, "SELECT product_id FROM product_versions WHERE seq > %lld", NULL},
    {L_AS_LIVE_ASKED, "SELECT DISTINCT product_id FROM questions", NULL},
    /* A catalogue load names its catalogue with a random number, not the next
     * one: index files outlive httpd's runs (AgentShopSearchIndexDir), and a
     * database made again at the same path would count 1, 2, ... again and
     * find the old database's files under its own numbers. */
    {L_AS_CATALOGUE_SET,
     "INSERT INTO meta (key, value) VALUES ('search_catalogue', %s) ON CONFLICT (key) DO UPDATE "
     "SET value = excluded.value",
     NULL},
    {L_AS_VERSION_BUMP,
     "INSERT INTO meta (key, value) VALUES (%s, '1') ON CONFLICT (key) DO UPDATE SET value = "
     "CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)",
     NULL},
    /* The text index's rows, by id ranges; their spec rows by the next
     * statement. */
    /* The rank rows changed since a version, each with the ids of its
     * product's offers in stock now, by id, space-separated ("" for none). */
    {L_AS_RANK_CHANGES,
     "SELECT r.product_id, r.buyable, r.score, r.price_cents, r.days, r.return_rate, "
     "COALESCE((SELECT group_concat(o.id, ' ') FROM (SELECT o.id FROM offers o WHERE "
     "o.product_id = r.product_id AND o.stock > 0 ORDER BY o.id) o), '') FROM product_rank r "
     "WHERE r.version > %lld",
     "SELECT r.product_id, r.buyable, r.score, r.price_cents, r.days, r.return_rate, "
     "COALESCE((SELECT string_agg(o.id, ' ' ORDER BY o.id) FROM offers o WHERE o.product_id = "
     "r.product_id AND o.stock > 0), '') FROM product_rank r WHERE r.version > %lld"},
    /* The offers of the text index; and the stock of a page's offers, by
     * product id (a JSON array on SQLite, where json_each drives: no temporary
     * table for an IN list; an array literal on PostgreSQL). */
    {L_AS_INDEX_OFFERS,
     "SELECT product_id, id, merchant_id, price_cents, retail_price_cents, price_label, "
     "delivery_days, stock FROM offers WHERE product_id > %lld "
     "AND product_id <= %lld AND withdrawn_at IS NULL ORDER BY product_id, id",
     NULL},
    /* The compat rows of the text index (device filters), by product id ranges. */
    {L_AS_INDEX_COMPAT,
     "SELECT product_id, device_id, CASE WHEN fit_status = 'fits' THEN 1 ELSE 0 END, evidence, "
     "checked_at FROM compat WHERE product_id > %lld AND product_id <= %lld ORDER BY product_id, "
     "device_id",
     NULL},
    {L_AS_OFFERS_STOCK,
     "SELECT o.product_id, o.id, o.stock FROM json_each(%s) j CROSS JOIN offers o ON "
     "o.product_id = j.value AND o.withdrawn_at IS NULL",
     "SELECT o.product_id, o.id, o.stock FROM offers o WHERE o.product_id = ANY (CAST(%s AS "
     "bigint[])) AND o.withdrawn_at IS NULL"},
};
const size_t as_db_n_search_stmts = sizeof(as_db_search_stmts) / sizeof(as_db_search_stmts[0]);

/* ---- a device's compatible parts ---- */

/* mod_dbd acquires the connection on first use: connect first. */
static int connected(as_db *db)
{
    return db->handle || (db->acquire && db->acquire(db) == 0);
}

static int64_t first_i64(as_db *db, const char *label, int na, const char **args, int64_t *b)
{
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    int64_t a = -1;
    if (as_db_select(db, label, &res, na, args)) return -1;
    while (as_db_next(db, res, &row))
        if (a < 0) {
            a = as_db_i64(as_db_col(db, row, 0));
            if (b) *b = as_db_i64(as_db_col(db, row, 1));
        }
    return a;
}

/* Rows of PRODUCT_SUMMARY, compat and OFFER_COLS, ordered by product:
 * one as_product per product, its offers in row order (read to the end, as the
 * pgsql driver requires). */
static void read_products(as_db *db, as_mem *m, apr_dbd_results_t *res, as_product **out, size_t *n)
{
    apr_dbd_row_t *row = NULL;
    as_product *ps = NULL;
    as_offer *offers = NULL;
    size_t np = 0, no = 0, pcap = 0, ocap = 0;
    size_t *first = NULL, fcap = 0; /* index of each product's first offer */
    int64_t last = -1;
    while (as_db_next(db, res, &row)) {
        int64_t pid = as_db_i64(as_db_col(db, row, 0));
        if (pid != last) {
            ps = as_db_grow(m, ps, &pcap, np, sizeof(as_product));
            first = as_db_grow(m, first, &fcap, np, sizeof(size_t));
            as_product *p = &ps[np];
            memset(p, 0, sizeof(*p));
            as_db_read_summary(db, m, row, p);
            as_db_read_compat(db, m, row, 12, &p->compat);
            first[np++] = no;
            last = pid;
        }
        if (as_db_col(db, row, SEARCH_OFFER_COL)) {
            offers = as_db_grow(m, offers, &ocap, no, sizeof(as_offer));
            as_db_read_offer(db, m, row, SEARCH_OFFER_COL, &offers[no++]);
            ps[np - 1].n_offers++;
        }
    }
    for (size_t i = 0; i < np; i++)
        ps[i].offers = ps[i].n_offers ? &offers[first[i]] : NULL;
    *out = ps;
    *n = np;
}

int st_search(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n)
{
    as_db *db = h;
    *out = NULL;
    *n = 0;
    if (!connected(db)) return AS_EDB;
    const char *args[] = {as_db_i64s(db, f->device_id), f->part_type, f->part_type};
    apr_dbd_results_t *res;
    if (as_db_select(db, L_AS_SEARCH_DEV, &res, 3, args)) return AS_EDB;
    read_products(db, m, res, out, n);
    return AS_OK;
}

/* One page of a device's compatible parts (as_store.h, as_compat_page):
 * the counts, the page and the first left out, each one indexed statement
 * that reads the device's compat rows and, for the page, sorts their keys
 * alone (keeping offset + limit of them) before any offer is read. */
int st_compatible(void *h, as_mem *m, const as_search_filter *f, int64_t limit, int64_t offset,
                  size_t max_excluded, as_compat_page *out)
{
    as_db *db = h;
    memset(out, 0, sizeof(*out));
    if (!connected(db)) return AS_EDB;
    const char *a[] = {as_db_i64s(db, f->device_id), f->part_type, f->part_type,
                       as_db_i64s(db, limit), as_db_i64s(db, offset)};
    if ((out->count = first_i64(db, L_AS_COMPAT_COUNT, 3, a, &out->excluded_count)) < 0)
        return AS_EDB;
    apr_dbd_results_t *res;
    if (offset < out->count) {
        if (as_db_select(db, L_AS_COMPAT_PAGE, &res, 5, a)) return AS_EDB;
        read_products(db, m, res, &out->parts, &out->n);
    }
    if (out->excluded_count > 0 && max_excluded > 0) {
        a[3] = as_db_i64s(db, (int64_t)max_excluded);
        if (as_db_select(db, L_AS_COMPAT_LEFT_OUT, &res, 4, a)) return AS_EDB;
        read_products(db, m, res, &out->excluded, &out->n_excluded);
    }
    return AS_OK;
}

/* ---- keeping product_rank ---- */

/* One product's row as the caller's ranking gives it (db->rank: core's,
 * default weights, no filters), as as_rank_set_many takes one. */
static void rank_row(as_db *db, as_product *p, as_buf *out)
{
    as_mem m = as_db_pool_mem(db->pool);
    as_rank_row b = {0};
    db->rank(&m, p, &b);
    as_buf_printf(out, "%s{\"p\":%lld,\"b\":%d,\"s\":%d,\"c\":%lld,\"d\":%d}",
                  out->len > 1 ? "," : "", (long long)p->id, b.buyable ? 1 : 0, (int)b.score,
                  (long long)b.price_cents, (int)b.days);
}

/* Reads the offers of products lo < id <= hi and stores each one's rank,
 * in one statement. */
static int rank_range(as_db *db, int64_t lo, int64_t hi)
{
    const char *a[] = {as_db_i64s(db, lo), as_db_i64s(db, hi)};
    apr_dbd_results_t *res;
    if (!db->rank) {
        if (db->log)
            db->log(db->log_baton, "no ranking given (as_db.rank): product_rank not written");
        return AS_EDB;
    }
    if (as_db_select(db, L_AS_RANK_OFFERS, &res, 2, a)) return AS_EDB;
    as_mem m = as_db_pool_mem(db->pool);
    as_product *ps;
    size_t np;
    read_products(db, &m, res, &ps, &np); /* all read before the first write */
    if (!np) return AS_OK;
    as_buf rows;
    as_buf_init(&rows, &m);
    as_buf_puts(&rows, "[");
    for (size_t i = 0; i < np; i++)
        rank_row(db, &ps[i], &rows);
    as_buf_puts(&rows, "]");
    const char *arg[] = {as_buf_str(&rows)};
    return as_db_exec(db, L_AS_RANK_SET_MANY, NULL, 1, arg) ? AS_EDB : AS_OK;
}

static int version_bump(as_db *db, const char *key)
{
    const char *a[] = {key};
    return as_db_exec(db, L_AS_VERSION_BUMP, NULL, 1, a) ? AS_EDB : AS_OK;
}

/* A new catalogue's number: random in [1, 2^62], never the one it replaces. */
static int catalogue_new(as_db *db)
{
    as_search_version now;
    if (st_search_version(db, &now) != AS_OK) return AS_EDB;
    uint64_t r = 0;
    do {
        unsigned char b[8];
        if (apr_generate_random_bytes(b, sizeof(b)) != APR_SUCCESS) return AS_EDB;
        r = 0;
        for (size_t i = 0; i < sizeof(b); i++) r = r << 8 | b[i];
        r = (r >> 2) + 1;
    } while ((int64_t)r == now.catalogue);
    const char *a[] = {as_db_i64s(db, (int64_t)r)};
    return as_db_exec(db, L_AS_CATALOGUE_SET, NULL, 1, a) ? AS_EDB : AS_OK;
}

int as_db_rank_stock_moved(as_db *db, int64_t pid, int64_t stock, int64_t delta)
{
    /* Only running out or coming back changes which offers can be bought. */
    if ((stock - delta > 0) == (stock > 0)) return AS_OK;
    if (version_bump(db, "search_rank") != AS_OK) return AS_EDB;
    return rank_range(db, pid - 1, pid);
}

int as_db_catalogue_changed(as_db *db, const int64_t *pids, size_t n, int content)
{
    if (n && version_bump(db, "search_rank") != AS_OK) return AS_EDB;
    for (size_t i = 0; i < n; i++) {
        /* not buyable until its offers say otherwise (a product without
         * offers left has no row in as_rank_offers) */
        const char *none[] = {"0", "0", "0", "0", as_db_i64s(db, pids[i])};
        if (as_db_exec(db, L_AS_RANK_PRODUCT, NULL, 1, none + 4) ||
            as_db_exec(db, L_AS_RANK_SET, NULL, 5, none) ||
            rank_range(db, pids[i] - 1, pids[i]) != AS_OK)
            return AS_EDB;
    }
    return content ? catalogue_new(db) : AS_OK;
}

#define RANK_BATCH 5000 /* product ids per read while rebuilding */

apr_status_t as_db_rank_rebuild(as_db *db, const char **err)
{
    int rc = catalogue_new(db) != AS_OK ||
             as_db_exec(db, L_AS_RANK_CLEAR, NULL, 0, NULL) ||
             as_db_exec(db, L_AS_RANK_SEED, NULL, 0, NULL);
    int64_t max_id = rc ? -1 : first_i64(db, L_AS_RANK_MAX_ID, 0, NULL, NULL);
    if (max_id < 0) rc = 1;
    apr_pool_t *outer = db->pool;
    for (int64_t lo = 0; !rc && lo < max_id; lo += RANK_BATCH) {
        apr_pool_t *batch;
        apr_pool_create(&batch, outer);
        db->pool = batch;
        rc = rank_range(db, lo, lo + RANK_BATCH) != AS_OK;
        db->pool = outer;
        apr_pool_destroy(batch);
    }
    /* PostgreSQL plans by statistics: give it fresh ones for the new catalogue
     * (SQLite's plans are fixed by the statements themselves). */
    const char *ignored;
    if (!rc && db->pg)
        rc = as_db_exec_script(db,
                               "ANALYZE products;\nANALYZE offers;\nANALYZE compat;\n"
                               "ANALYZE product_rank;\n",
                               &ignored) != APR_SUCCESS;
    if (rc) {
        *err = "building the search order table (product_rank) failed";
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

int as_db_rank_stale(as_db *db)
{
    int64_t products = 0;
    int64_t rows = first_i64(db, L_AS_RANK_SIZES, 0, NULL, &products);
    return rows < 0 ? -1 : rows != products;
}

/* ---- the text index's sources (core/search/as_search_index.c) ---- */

typedef struct version_read {
    as_search_version *out;
    bool found;
} version_read;

static void version_row(void *baton, const cells *row)
{
    version_read *r = baton;
    if (r->found) return;
    r->found = true;
    /* meta's values are text; a number's text reads as the number */
    r->out->catalogue = row->i64(row->src, 0);
    r->out->rank = row->i64(row->src, 1);
    r->out->live = row->i64(row->src, 2);
}

int st_search_version(void *h, as_search_version *out)
{
    as_db *db = h;
    /* a read begun less than versions_max_age ago, with no commit of this
     * server's since: no connection, no statement (core/store/as_versions.h) */
    int64_t now = db->versions ? as_versions_now_ms() : 0;
    if (as_versions_get(db->versions, now, db->versions_max_age, out)) return AS_OK;
    uint64_t gen = as_versions_gen(db->versions);
    version_read r = {out, false};
    if (!connected(h) || as_db_each_row(h, NULL, L_AS_VERSION_GET, NULL, 0, version_row, &r))
        return AS_EDB;
    if (!r.found) return AS_EDB;
    if (db->versions_max_age > 0) as_versions_put(db->versions, gen, now, out);
    return AS_OK;
}

/* The rank columns from c on; in_stock as given (rank_changes only). */
static as_rank_row read_rank(as_db *db, apr_dbd_row_t *row, int c, const char *in_stock)
{
    as_rank_row r = {as_db_bool(as_db_col(db, row, c)),    as_db_i64(as_db_col(db, row, c + 1)),
                     as_db_i64(as_db_col(db, row, c + 2)),    as_db_i64(as_db_col(db, row, c + 3)),
                     as_db_dbl(as_db_col(db, row, c + 4)), in_stock};
    return r;
}

#define INDEX_BATCH 5000 /* product ids per read: what a read holds stays small */

/* The index's read (st_index_rows, through as_db_read_batches) goes through
 * the catalogue in batches of product ids, on two threads: a reader that runs
 * each batch's statements (on SQLite on the connection's own handle,
 * as_db_each_row: the offers' read 3.1-3.9 s -> 1.9-2.4 s at 1,000,000
 * products) and decodes their rows into items (in the batch's own pool), and
 * the caller, which gives the items of the batch before to core while the
 * next is read, so the database's work and the builder's overlap on two cores
 * (1,000,000 products on SQLite: the reads of the products 16.0 s -> 9.3 s).
 * The caller's thread never touches the connection; the reader never calls
 * core. */
typedef struct batch {
    apr_pool_t *pool; /* unmanaged; cleared by the caller and given back to the reader */
    char *items;
    size_t n;
    struct batch *next;
} batch;

#define BATCHES_AHEAD 2 /* batches read and not yet given: memory stays bounded */

typedef struct batch_pipe {
    as_db *db;
    as_db *rdb; /* what the reader reads the batches on: db, or a connection of its own */
    as_batch_fill_fn fill; /* how a batch is read */
    void *fill_ctx;
    apr_thread_mutex_t *mu;
    apr_thread_cond_t *cv;
    batch *head, *tail; /* read, not yet given */
    size_t queued;
    bool done;   /* the reader has ended */
    bool stop;   /* the caller wants no more */
    int rc;      /* the reader's: AS_OK, or AS_EDB when a read failed */
    /* pools given back, cleared: their memory serves the next batches (a
     * pool made for each batch faults megabytes of fresh pages in each time) */
    apr_pool_t *spare[BATCHES_AHEAD + 1];
    size_t nspare;
} batch_pipe;

/* One batch, read and decoded on its own pool; NULL when the read failed. */
static batch *read_batch(batch_pipe *bp, int64_t lo)
{
    as_db *db = bp->rdb;
    apr_pool_t *pool = NULL;
    apr_thread_mutex_lock(bp->mu);
    if (bp->nspare) pool = bp->spare[--bp->nspare];
    apr_thread_mutex_unlock(bp->mu);
    if (!pool && apr_pool_create_unmanaged_ex(&pool, NULL, NULL) != APR_SUCCESS) return NULL;
    apr_pool_t *outer = db->pool;
    db->pool = pool;
    batch *b = apr_pcalloc(pool, sizeof(*b));
    b->pool = pool;
    void *items = NULL;
    bool filled = bp->fill(db, pool, lo, lo + INDEX_BATCH, &items, &b->n, bp->fill_ctx);
    b->items = items;
    db->pool = outer;
    if (!filled) {
        apr_pool_destroy(pool);
        return NULL;
    }
    return b;
}

static void *APR_THREAD_FUNC reader_main(apr_thread_t *t, void *arg)
{
    (void)t;
    batch_pipe *bp = arg;
    int64_t max_id = first_i64(bp->db, L_AS_RANK_MAX_ID, 0, NULL, NULL);
    int rc = max_id < 0 ? AS_EDB : AS_OK;
    for (int64_t lo = 0; rc == AS_OK && lo < max_id; lo += INDEX_BATCH) {
        apr_thread_mutex_lock(bp->mu);
        while (bp->queued >= BATCHES_AHEAD && !bp->stop)
            apr_thread_cond_wait(bp->cv, bp->mu);
        bool stop = bp->stop;
        apr_thread_mutex_unlock(bp->mu);
        if (stop) break;
        batch *b = read_batch(bp, lo);
        if (!b) rc = AS_EDB;
        apr_thread_mutex_lock(bp->mu);
        if (b) {
            if (bp->tail)
                bp->tail->next = b;
            else
                bp->head = b;
            bp->tail = b;
            bp->queued++;
        }
        apr_thread_cond_broadcast(bp->cv);
        apr_thread_mutex_unlock(bp->mu);
    }
    apr_thread_mutex_lock(bp->mu);
    bp->rc = rc;
    bp->done = true;
    apr_thread_cond_broadcast(bp->cv);
    apr_thread_mutex_unlock(bp->mu);
    return NULL;
}

/* Every batch of bp read on a reader thread and each item given to give on
 * this one; stops at the first item give refuses. AS_OK when every batch was
 * read and every item taken. */
static int pipe_batches(batch_pipe bp, as_batch_give_fn give, void *ctx)
{
    as_db *db = bp.db;
    if (!connected(db)) return AS_EDB;
    apr_thread_t *reader;
    /* on SQLite, the reader's own connection: every column of millions of
     * rows read on the shared one took its mutex twice (4% of a
     * 1,000,000-product build's CPU) */
    apr_pool_t *rpool = NULL;
    as_db rdb;
    bp.rdb = db;
    if (!db->pg && apr_pool_create(&rpool, db->pool) == APR_SUCCESS &&
        as_db_reader_open(db, rpool, &rdb))
        bp.rdb = &rdb;
    if (apr_thread_mutex_create(&bp.mu, APR_THREAD_MUTEX_DEFAULT, db->pool) != APR_SUCCESS ||
        apr_thread_cond_create(&bp.cv, db->pool) != APR_SUCCESS ||
        apr_thread_create(&reader, NULL, reader_main, &bp, db->pool) != APR_SUCCESS) {
        if (rpool) apr_pool_destroy(rpool);
        return AS_EDB;
    }
    int rc = AS_OK;
    for (;;) {
        apr_thread_mutex_lock(bp.mu);
        while (!bp.head && !bp.done)
            apr_thread_cond_wait(bp.cv, bp.mu);
        batch *b = bp.head;
        if (b) {
            bp.head = b->next;
            if (!bp.head) bp.tail = NULL;
            bp.queued--;
            apr_thread_cond_broadcast(bp.cv);
        }
        apr_thread_mutex_unlock(bp.mu);
        if (!b) break; /* the reader has ended and everything read is given */
        if (rc == AS_OK && b->n && give(b->items, b->n, ctx) != 0) rc = AS_EDB;
        apr_pool_t *pool = b->pool;
        apr_pool_clear(pool);
        apr_thread_mutex_lock(bp.mu);
        if (bp.nspare < BATCHES_AHEAD + 1)
            bp.spare[bp.nspare++] = pool;
        else
            apr_pool_destroy(pool);
        if (rc != AS_OK) bp.stop = true;
        apr_thread_cond_broadcast(bp.cv);
        apr_thread_mutex_unlock(bp.mu);
    }
    apr_status_t ignored;
    apr_thread_join(&ignored, reader);
    while (bp.head) { /* read after a refusal: let go */
        batch *b = bp.head;
        bp.head = b->next;
        apr_pool_destroy(b->pool);
    }
    while (bp.nspare)
        apr_pool_destroy(bp.spare[--bp.nspare]);
    apr_thread_cond_destroy(bp.cv);
    apr_thread_mutex_destroy(bp.mu);
    if (rpool) apr_pool_destroy(rpool);
    return rc == AS_OK ? bp.rc : rc;
}

int as_db_read_batches(as_db *db, as_batch_fill_fn fill, void *fill_ctx, as_batch_give_fn give,
                       void *give_ctx)
{
    return pipe_batches((batch_pipe){.db = db, .fill = fill, .fill_ctx = fill_ctx}, give, give_ctx);
}

#define T(c) x->text(x->src, c)
#define I(c) x->i64(x->src, c)
#define F(c) x->flag(x->src, c)

/* A batch's offers and compat rows, each with its product's id, as they are
 * read. */
typedef struct rows_fill {
    as_mem *m;
    as_index_offer *offers;
    size_t noffers, cap_offers;
    as_index_compat *compat;
    size_t ncompat, cap_compat;
} rows_fill;

static void fill_offer(void *baton, const cells *x)
{
    rows_fill *f = baton;
    f->offers = as_db_grow(f->m, f->offers, &f->cap_offers, f->noffers, sizeof(*f->offers));
    f->offers[f->noffers++] =
        (as_index_offer){I(0), T(1), T(2), T(5), I(3), I(4), I(6), I(7) > 0, I(7)};
}

static void fill_compat(void *baton, const cells *x)
{
    rows_fill *f = baton;
    f->compat = as_db_grow(f->m, f->compat, &f->cap_compat, f->ncompat, sizeof(*f->compat));
    f->compat[f->ncompat++] = (as_index_compat){I(0), I(1), F(2), T(3), T(4)};
}

#undef T
#undef I
#undef F

/* The run of items k, k + 1, ... (n in all, ascending by their product's id,
 * ID_AT: that id of item k) that are product id's: its first item into from
 * and its length into len, k past it; items of products the rows left out
 * are passed over. */
#define RUN_OF(id, n, k, ID_AT, from, len)                                                         \
    do {                                                                                           \
        while ((k) < (n) && (ID_AT) < (id))                                                        \
            (k)++;                                                                                 \
        (from) = (k);                                                                              \
        while ((k) < (n) && (ID_AT) == (id))                                                       \
            (k)++;                                                                                 \
        (len) = (k) - (from);                                                                      \
    } while (0)

/* One batch of index rows (lo < id <= hi) with their spec rows and views
 * (as_db_index_products), offers and compat rows, each read by product id in
 * its table's key order and matched here, on pool: on the reader thread of
 * as_db_read_batches. */
static bool rows_batch(as_db *db, apr_pool_t *pool, int64_t lo, int64_t hi, void **items, size_t *n,
                       void *ctx)
{
    (void)ctx;
    as_mem m = as_db_pool_mem(pool);
    rows_fill f = {.m = &m};
    as_index_row *rows;
    size_t nrows;
    const int64_t ids[] = {lo, hi};
    if (!as_db_index_products(db, &m, lo, hi, &rows, &nrows) ||
        as_db_each_row(db, &m, L_AS_INDEX_OFFERS, ids, 2, fill_offer, &f) != AS_OK ||
        as_db_each_row(db, &m, L_AS_INDEX_COMPAT, ids, 2, fill_compat, &f) != AS_OK)
        return false;
    size_t ko = 0, kc = 0, from;
    for (size_t i = 0; i < nrows; i++) {
        as_index_row *r = &rows[i];
        RUN_OF(r->id, f.noffers, ko, f.offers[ko].product_id, from, r->n_offers);
        r->offers = f.offers + from;
        RUN_OF(r->id, f.ncompat, kc, f.compat[kc].product_id, from, r->n_compat);
        r->compat = f.compat + from;
    }
    *items = rows;
    *n = nrows;
    return true;
}

typedef struct give_ctx {
    as_index_rows_fn rows;
    void *baton;
} give_ctx;

static int give_rows(const void *items, size_t n, void *ctx)
{
    const give_ctx *g = ctx;
    return g->rows(g->baton, items, n);
}

int st_index_rows(void *h, as_index_rows_fn each, void *baton)
{
    give_ctx g = {.rows = each, .baton = baton};
    return as_db_read_batches(h, rows_batch, NULL, give_rows, &g);
}

int st_rank_changes(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    as_db *db = h;
    const char *a[] = {as_db_i64s(db, since)};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_AS_RANK_CHANGES, &res, 1, a)) return AS_EDB;
    int rc = AS_OK;
    while (as_db_next(db, res, &row)) {
        const char *in_stock = as_db_col(db, row, 6);
        as_rank_row r = read_rank(db, row, 1, in_stock ? in_stock : "");
        if (rc == AS_OK && each(baton, as_db_i64(as_db_col(db, row, 0)), &r) != 0) rc = AS_EDB;
    }
    return rc;
}

typedef struct live_read {
    as_live_fn each;
    void *baton;
    bool stop;
} live_read;

static void live_row(void *baton, const cells *row)
{
    live_read *r = baton;
    if (!r->stop && r->each(r->baton, row->i64(row->src, 0)) != 0) r->stop = true;
}

int st_live_changes(void *h, int64_t since, bool asked, as_live_fn each, void *baton)
{
    as_db *db = h;
    if (!connected(db)) return AS_EDB;
    live_read r = {each, baton, false};
    if (asked && (as_db_each_row(db, NULL, L_AS_LIVE_ASKED, NULL, 0, live_row, &r) != AS_OK ||
                  r.stop))
        return AS_EDB;
    if (as_db_each_row(db, NULL, L_AS_LIVE_CHANGES, &since, 1, live_row, &r) != AS_OK || r.stop)
        return AS_EDB;
    return AS_OK;
}

int st_offers_stock(void *h, as_mem *m, const int64_t *ids, size_t n, as_offer_stock **out,
                    size_t *nout)
{
    as_db *db = h;
    *out = NULL;
    *nout = 0;
    if (!connected(db)) return AS_EDB;
    /* [1,2,3] for SQLite's json_each, {1,2,3} for a PostgreSQL array */
    char *list = apr_palloc(db->pool, n * 21 + 3), *w = list;
    *w++ = db->pg ? '{' : '[';
    for (size_t i = 0; i < n; i++)
        w += apr_snprintf(w, 22, "%s%" APR_INT64_T_FMT, i ? "," : "", ids[i]);
    *w++ = db->pg ? '}' : ']';
    *w = '\0';
    const char *a[] = {list};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_AS_OFFERS_STOCK, &res, 1, a)) return AS_EDB;
    size_t cap = 0;
    while (as_db_next(db, res, &row)) {
        *out = as_db_grow(m, *out, &cap, *nout, sizeof(as_offer_stock));
        as_offer_stock *s = &(*out)[(*nout)++];
        s->product_id = as_db_i64(as_db_col(db, row, 0));
        s->offer_id = as_strdup(m, as_db_col(db, row, 1));
        s->stock = as_db_i64(as_db_col(db, row, 2));
    }
    return AS_OK;
}
