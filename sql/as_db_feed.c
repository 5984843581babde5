/* The catalogue feed into and out of the database (as_db_feed.h,
 * docs/catalogue.md). An import reads the whole file first and checks every
 * record (core's reader, as_feed_rules.read), then what the records say about each other and
 * the database; only a file without a problem is written, in one
 * transaction, each record as an upsert that writes nothing when the row
 * already says the same (so importing a file again changes nothing and moves
 * no version). What changed is then derived as the loader always did:
 * verification by core's one rule (as_feed_rules.verification), the search
 * order rows, the catalogue's number that makes every httpd child build its
 * search index again. */
#include "as_db_feed.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "as_db_ops.h"
#include "as_db_private.h"
#include "as_util.h"

/* ---- statements ---- */

/* an upsert writes only what differs: SQLite's row values compare with IS
 * NOT, PostgreSQL's with IS DISTINCT FROM */
#define SQLITE_DIFF " IS NOT "
#define PG_DIFF " IS DISTINCT FROM "
#define RELEASED "('cancelled', 'declined', 'expired')"
#define BOOL_COL(x) "CASE WHEN " x " IS NULL THEN 0 ELSE 1 END"

// clang-format off
#define MERCHANT_UPSERT(DIFF)                                                                      \
    "INSERT INTO merchants (id, name, country, city, on_time_rate, accuracy_rate) VALUES (%s, %s, " \
    "%s, %s, %lf, %lf) ON CONFLICT (id) DO UPDATE SET name = excluded.name, country = "            \
    "excluded.country, city = excluded.city, on_time_rate = excluded.on_time_rate, accuracy_rate " \
    "= excluded.accuracy_rate, withdrawn_at = NULL WHERE (merchants.name, merchants.country, "      \
    "merchants.city, merchants.on_time_rate, merchants.accuracy_rate, merchants.withdrawn_at)"     \
    DIFF "(excluded.name, excluded.country, excluded.city, excluded.on_time_rate, "                \
    "excluded.accuracy_rate, NULL)"
#define DEVICE_UPSERT(DIFF)                                                                        \
    "INSERT INTO devices (id, slug, name, brand, kind, aliases) VALUES (%lld, %s, %s, %s, %s, %s) "\
    "ON CONFLICT (slug) DO UPDATE SET name = excluded.name, brand = excluded.brand, kind = "       \
    "excluded.kind, aliases = excluded.aliases, withdrawn_at = NULL WHERE (devices.name, "         \
    "devices.brand, devices.kind, devices.aliases, devices.withdrawn_at)" DIFF "(excluded.name, "  \
    "excluded.brand, excluded.kind, excluded.aliases, NULL)"
#define PRODUCT_SET(x)                                                                             \
    x "gtin, " x "name, " x "brand, " x "category, " x "part_type, " x "description, "             \
    x "image_urls, " x "source_url, " x "source_notes, " x "source_checked_at, "                   \
    x "source_product_id, " x "availability, " x "is_demo, " x "on_time_rate_90d, "                \
    x "return_rate, " x "wrong_item_rate, " x "agent_orders_90d, " x "orders_per_week"
/* The batch statements read their rows from one parameter, a JSON array of
 * objects (as_db_feed.c, "batches"): SQLite by json_each, PostgreSQL by
 * json_to_recordset; one statement and one round trip per batch of rows. */
#define SQ(k) "json_extract(j.value, '$." k "')"
#define SQ_FROM " FROM json_each(%s) j WHERE true "
#define PG_FROM(cols) " FROM json_to_recordset(CAST(%s AS json)) AS x(" cols ") "
#define PRODUCT_COLS                                                                               \
    "id, sku, gtin, name, brand, category, part_type, description, image_urls, source_url, "       \
    "source_notes, source_checked_at, source_product_id, availability, is_demo, verif_status, "    \
    "sample_size, on_time_rate_90d, return_rate, wrong_item_rate, agent_orders_90d, "              \
    "orders_per_week"
#define PRODUCT_SQ                                                                                 \
    SQ("id") ", " SQ("sku") ", " SQ("gtin") ", " SQ("name") ", " SQ("brand") ", " SQ("category")   \
    ", " SQ("part_type") ", " SQ("description") ", " SQ("image_urls") ", " SQ("source_url") ", "   \
    SQ("source_notes") ", " SQ("source_checked_at") ", " SQ("source_product_id") ", "              \
    SQ("availability") ", " SQ("is_demo") ", 'pending', 0, " SQ("on_time_rate_90d") ", "           \
    SQ("return_rate") ", " SQ("wrong_item_rate") ", " SQ("agent_orders_90d") ", "                  \
    SQ("orders_per_week")
#define PRODUCT_PG                                                                                 \
    "x.id, x.sku, x.gtin, x.name, x.brand, x.category, x.part_type, x.description, x.image_urls, " \
    "x.source_url, x.source_notes, x.source_checked_at, x.source_product_id, x.availability, "     \
    "x.is_demo, 'pending', 0, x.on_time_rate_90d, x.return_rate, x.wrong_item_rate, "              \
    "x.agent_orders_90d, x.orders_per_week"
#define PRODUCT_REC                                                                                \
    "id bigint, sku text, gtin text, name text, brand text, category text, part_type text, "       \
    "description text, image_urls text, source_url text, source_notes text, source_checked_at "    \
    "text, source_product_id text, availability text, is_demo integer, on_time_rate_90d float8, "  \
    "return_rate float8, wrong_item_rate float8, agent_orders_90d integer, orders_per_week text"
#define PRODUCT_CONFLICT(DIFF)                                                                     \
    "ON CONFLICT (sku) DO UPDATE SET "                                                             \
    "gtin = excluded.gtin, name = excluded.name, brand = excluded.brand, category = "              \
    "excluded.category, part_type = excluded.part_type, description = excluded.description, "      \
    "image_urls = excluded.image_urls, source_url = excluded.source_url, source_notes = "          \
    "excluded.source_notes, source_checked_at = excluded.source_checked_at, source_product_id = "  \
    "excluded.source_product_id, availability = excluded.availability, is_demo = "                 \
    "excluded.is_demo, on_time_rate_90d = excluded.on_time_rate_90d, return_rate = "               \
    "excluded.return_rate, wrong_item_rate = excluded.wrong_item_rate, agent_orders_90d = "        \
    "excluded.agent_orders_90d, orders_per_week = excluded.orders_per_week, withdrawn_at = NULL "  \
    "WHERE (" PRODUCT_SET("products.") ", products.withdrawn_at)" DIFF "(" PRODUCT_SET("excluded.")\
    ", NULL) RETURNING id"
#define FEED_OFFER_COLS                                                                                 \
    "id, product_id, merchant_id, price_cents, retail_price_cents, price_label, delivery_days, "   \
    "stock"
#define OFFER_SQ                                                                                   \
    SQ("id") ", " SQ("pid") ", " SQ("merchant") ", " SQ("price") ", " SQ("retail") ", "            \
    SQ("label") ", " SQ("days") ", " SQ("stock")
#define OFFER_REC                                                                                  \
    "id text, pid bigint, merchant text, price bigint, retail bigint, label text, days integer, "  \
    "stock bigint"
#define OFFER_CONFLICT(DIFF)                                                                       \
    "ON CONFLICT (id) DO UPDATE SET merchant_id = excluded.merchant_id, price_cents = "            \
    "excluded.price_cents, retail_price_cents = excluded.retail_price_cents, price_label = "       \
    "excluded.price_label, delivery_days = excluded.delivery_days, stock = excluded.stock, "       \
    "withdrawn_at = NULL WHERE (offers.merchant_id, offers.price_cents, offers.retail_price_cents, "\
    "offers.price_label, offers.delivery_days, offers.stock, offers.withdrawn_at)" DIFF            \
    "(excluded.merchant_id, excluded.price_cents, excluded.retail_price_cents, "                   \
    "excluded.price_label, excluded.delivery_days, excluded.stock, NULL) RETURNING product_id"
#define COMPAT_SQ SQ("dev") ", " SQ("pid") ", " SQ("fit") ", " SQ("evidence") ", " SQ("at")
#define COMPAT_REC "dev bigint, pid bigint, fit text, evidence text, at text"
#define COMPAT_CONFLICT(DIFF)                                                                      \
    "ON CONFLICT (device_id, product_id) DO UPDATE SET fit_status = "                              \
    "excluded.fit_status, evidence = excluded.evidence, checked_at = excluded.checked_at WHERE "   \
    "(compat.fit_status, compat.evidence, compat.checked_at)" DIFF "(excluded.fit_status, "        \
    "excluded.evidence, excluded.checked_at) RETURNING product_id"
#define SPEC_SQ                                                                                    \
    SQ("pid") ", " SQ("pos") ", " SQ("spec") ", " SQ("label") ", " SQ("kind") ", " SQ("unit")      \
    ", " SQ("claimed") ", " SQ("measured") ", " SQ("tol")
#define SPEC_REC                                                                                   \
    "pid bigint, pos integer, spec text, label text, kind text, unit text, claimed text, "         \
    "measured text, tol float8"
/* the products of a batch: a JSON array of ids */
#define IDS_SQ "IN (SELECT value FROM json_each(%s))"
#define IDS_PG "= ANY (CAST(%s AS bigint[]))" /* an array literal: the index is used */
// clang-format on

const stmt_def as_db_feed_stmts[] = {
    /* what the database has, read once per import */
    {L_FEED_MERCHANTS, "SELECT id, " BOOL_COL("withdrawn_at") " FROM merchants", NULL},
    {L_FEED_DEVICES, "SELECT id, slug, " BOOL_COL("withdrawn_at") " FROM devices", NULL},
    {L_FEED_PRODUCTS, "SELECT id, sku, " BOOL_COL("withdrawn_at") " FROM products", NULL},
    {L_FEED_OFFERS, "SELECT id, product_id, " BOOL_COL("withdrawn_at") " FROM offers", NULL},
    /* one import at a time: a second waits for the first's commit before it
     * reads what the database has (new products take ids from the largest);
     * a lock of the transaction's own, which nothing else takes (PostgreSQL;
     * SQLite's import holds the database's one write lock) */
    {L_FEED_LOCK, "SELECT 1", "SELECT pg_advisory_xact_lock(7370616365)"},
    {L_FEED_MAX_DEVICE, "SELECT COALESCE(MAX(id), 0) FROM devices", NULL},
    {L_FEED_MAX_PRODUCT, "SELECT COALESCE(MAX(id), 0) FROM products", NULL},
    /* the upserts */
    {L_FEED_MERCHANT, MERCHANT_UPSERT(SQLITE_DIFF), MERCHANT_UPSERT(PG_DIFF)},
    {L_FEED_DEVICE, DEVICE_UPSERT(SQLITE_DIFF), DEVICE_UPSERT(PG_DIFF)},
    {L_FEED_PRODUCTS_PUT,
     "INSERT INTO products (" PRODUCT_COLS ") SELECT " PRODUCT_SQ SQ_FROM
         PRODUCT_CONFLICT(SQLITE_DIFF),
     "INSERT INTO products (" PRODUCT_COLS ") SELECT " PRODUCT_PG PG_FROM(PRODUCT_REC)
         PRODUCT_CONFLICT(PG_DIFF)},
    {L_FEED_OFFERS_PUT,
     "INSERT INTO offers (" FEED_OFFER_COLS ") SELECT " OFFER_SQ SQ_FROM OFFER_CONFLICT(SQLITE_DIFF),
     "INSERT INTO offers (" FEED_OFFER_COLS ") SELECT x.id, x.pid, x.merchant, x.price, x.retail, "
     "x.label, x.days, x.stock" PG_FROM(OFFER_REC) OFFER_CONFLICT(PG_DIFF)},
    {L_FEED_COMPAT_PUT,
     "INSERT INTO compat (device_id, product_id, fit_status, evidence, checked_at) SELECT "
     COMPAT_SQ SQ_FROM COMPAT_CONFLICT(SQLITE_DIFF),
     "INSERT INTO compat (device_id, product_id, fit_status, evidence, checked_at) SELECT x.dev, "
     "x.pid, x.fit, x.evidence, x.at" PG_FROM(COMPAT_REC) COMPAT_CONFLICT(PG_DIFF)},
    /* a batch of products' specifications: read, cleared, written */
    {L_FEED_SPECS_IN,
     "SELECT product_id, spec, label, kind, unit, claimed, measured, tolerance_pct FROM "
     "product_specs WHERE product_id " IDS_SQ " ORDER BY product_id, pos",
     "SELECT product_id, spec, label, kind, unit, claimed, measured, tolerance_pct FROM "
     "product_specs WHERE product_id " IDS_PG " ORDER BY product_id, pos"},
    {L_FEED_SPECS_CLEAR_IN, "DELETE FROM product_specs WHERE product_id " IDS_SQ,
     "DELETE FROM product_specs WHERE product_id " IDS_PG},
    {L_FEED_SPECS_PUT,
     "INSERT INTO product_specs (product_id, pos, spec, label, kind, unit, claimed, measured, "
     "tolerance_pct) SELECT " SPEC_SQ SQ_FROM,
     "INSERT INTO product_specs (product_id, pos, spec, label, kind, unit, claimed, measured, "
     "tolerance_pct) SELECT x.pid, x.pos, x.spec, x.label, x.kind, x.unit, x.claimed, x.measured, "
     "x.tol" PG_FROM(SPEC_REC)},
    /* a batch of products' measurement and verification: read, written */
    {L_FEED_STATE_IN,
     "SELECT id, measured_at, measured_node, sample_size, verif_status, verif_note FROM products "
     "WHERE id " IDS_SQ,
     "SELECT id, measured_at, measured_node, sample_size, verif_status, verif_note FROM products "
     "WHERE id " IDS_PG},
    {L_FEED_MEASURED_PUT,
     "UPDATE products SET measured_at = " SQ("at") ", measured_node = " SQ("lab") ", sample_size = "
     SQ("n") " FROM json_each(%s) j WHERE products.id = " SQ("pid"),
     "UPDATE products p SET measured_at = x.at, measured_node = x.lab, sample_size = x.n"
     PG_FROM("pid bigint, at text, lab text, n integer") "WHERE p.id = x.pid"},
    {L_FEED_SPEC_MEASURED_PUT,
     "UPDATE product_specs SET measured = " SQ("m") " FROM json_each(%s) j WHERE "
     "product_specs.product_id = " SQ("pid") " AND product_specs.spec = " SQ("spec"),
     "UPDATE product_specs s SET measured = x.m" PG_FROM("pid bigint, spec text, m text")
     "WHERE s.product_id = x.pid AND s.spec = x.spec"},
    {L_FEED_VERIFICATION_PUT,
     "UPDATE products SET verif_status = " SQ("status") ", verif_note = " SQ("note")
     " FROM json_each(%s) j WHERE products.id = " SQ("pid"),
     "UPDATE products p SET verif_status = x.status, verif_note = x.note"
     PG_FROM("pid bigint, status text, note text") "WHERE p.id = x.pid"},
    /* the units an offer's orders took after a merchant's count and gave back
     * after it (docs/catalogue.md, "Stock") */
    {L_FEED_STOCK_SINCE,
     "SELECT COALESCE(SUM(CASE WHEN created_at > %lld AND status NOT IN " RELEASED
     " THEN quantity ELSE 0 END), 0), COALESCE(SUM(CASE WHEN created_at <= %lld AND status IN "
     RELEASED " AND updated_at > %lld THEN quantity ELSE 0 END), 0) FROM orders WHERE offer_id "
     "= %s",
     NULL},
    /* withdrawals */
    {L_FEED_WITHDRAW_MERCHANT,
     "UPDATE merchants SET withdrawn_at = %s WHERE id = %s AND withdrawn_at IS NULL", NULL},
    {L_FEED_WITHDRAW_DEVICE,
     "UPDATE devices SET withdrawn_at = %s WHERE slug = %s AND withdrawn_at IS NULL", NULL},
    {L_FEED_WITHDRAW_PRODUCT,
     "UPDATE products SET withdrawn_at = %s WHERE id = %lld AND withdrawn_at IS NULL", NULL},
    {L_FEED_WITHDRAW_OFFER,
     "UPDATE offers SET withdrawn_at = %s, stock = 0 WHERE id = %s AND withdrawn_at IS NULL", NULL},
    {L_FEED_WITHDRAW_OFFERS_OF,
     "UPDATE offers SET withdrawn_at = %s, stock = 0 WHERE product_id = %lld AND withdrawn_at IS "
     "NULL",
     NULL},
    {L_FEED_WITHDRAW_OFFERS_OF_MERCHANT,
     "UPDATE offers SET withdrawn_at = %s, stock = 0 WHERE merchant_id = %s AND withdrawn_at IS "
     "NULL",
     NULL},
    {L_FEED_OFFERS_OF_MERCHANT,
     "SELECT id, product_id FROM offers WHERE merchant_id = %s AND withdrawn_at IS NULL", NULL},
    {L_FEED_WITHDRAW_COMPAT, "DELETE FROM compat WHERE device_id = %lld AND product_id = %lld",
     NULL},
    /* export */
    {L_FEED_X_MERCHANTS,
     "SELECT id, name, country, city, on_time_rate, accuracy_rate FROM merchants WHERE "
     "withdrawn_at IS NULL ORDER BY id",
     NULL},
    {L_FEED_X_DEVICES,
     "SELECT slug, name, brand, kind, aliases FROM devices WHERE withdrawn_at IS NULL ORDER BY id",
     NULL},
    {L_FEED_X_PRODUCTS,
     "SELECT id, sku, gtin, name, brand, category, part_type, description, image_urls, "
     "source_url, source_notes, source_checked_at, source_product_id, availability, is_demo, "
     "measured_at, measured_node, sample_size, on_time_rate_90d, return_rate, wrong_item_rate, "
     "agent_orders_90d, orders_per_week FROM products WHERE id > %lld AND id <= %lld AND "
     "withdrawn_at IS NULL ORDER BY id",
     NULL},
    {L_FEED_X_SPECS,
     "SELECT product_id, spec, label, kind, unit, claimed, measured, tolerance_pct FROM "
     "product_specs WHERE product_id > %lld AND product_id <= %lld ORDER BY product_id, pos",
     NULL},
    {L_FEED_X_OFFERS,
     "SELECT product_id, id, merchant_id, price_cents, retail_price_cents, price_label, "
     "delivery_days, stock FROM offers WHERE product_id > %lld AND product_id <= %lld AND "
     "withdrawn_at IS NULL ORDER BY product_id, id",
     NULL},
    {L_FEED_X_COMPAT,
     "SELECT c.product_id, d.slug, c.fit_status, c.checked_at, c.evidence FROM compat c JOIN "
     "devices d ON d.id = c.device_id AND d.withdrawn_at IS NULL WHERE c.product_id > %lld AND "
     "c.product_id <= %lld ORDER BY c.product_id, c.device_id",
     NULL},
};
const size_t as_db_n_feed_stmts = sizeof(as_db_feed_stmts) / sizeof(as_db_feed_stmts[0]);

/* ---- what the database has ---- */

typedef struct known {
    int64_t id;      /* products, devices: the row's id */
    int64_t product; /* offers: their product's id */
    int withdrawn;
} known;

typedef struct importer {
    as_db *db;
    const as_feed_rules *rules;
    apr_pool_t *p; /* the import's: maps, records */
    as_mem m;
    as_feed_problems *probs;
    apr_hash_t *merchants, *devices, *products, *offers; /* key -> known, the database's */
    apr_hash_t *in_file[AS_FEED_N];                      /* key -> as_feed_rec, the file's */
    as_feed_rec *recs; /* each without its object (v), which rec_load reads again */
    long *at;          /* per record: where its line is in spool */
    size_t *len;
    FILE *spool; /* the lines read, kept for the writes: a pipe cannot be read twice */
    char *buf;
    size_t bufcap;
    size_t n, cap;
    int64_t next_product, next_device;
    const char *now; /* the withdrawals' time */
    apr_hash_t *touched;  /* product id -> "content" (1) or "rank" (0): what to derive */
    apr_hash_t *verify;   /* product id: verification to decide again */
    size_t changed[AS_FEED_N], withdrawn[AS_FEED_N], unchanged;
    size_t first_pass; /* problems found reading the file */
    const char *err;
} importer;

static known *remember(importer *im, apr_hash_t *h, const char *key, int64_t id, int64_t product,
                       int withdrawn)
{
    known *k = apr_palloc(im->p, sizeof(*k));
    *k = (known){id, product, withdrawn};
    apr_hash_set(h, apr_pstrdup(im->p, key), APR_HASH_KEY_STRING, k);
    return k;
}

static known *lookup(apr_hash_t *h, const char *key)
{
    return key ? apr_hash_get(h, key, APR_HASH_KEY_STRING) : NULL;
}

static int read_known(importer *im)
{
    as_db *db = im->db;
    if (db->pg) {
        apr_dbd_results_t *res;
        apr_dbd_row_t *row = NULL;
        if (as_db_select(db, L_FEED_LOCK, &res, 0, NULL)) return -1;
        while (as_db_next(db, res, &row))
            ;
    }
    static const char *const labels[] = {L_FEED_MERCHANTS, L_FEED_DEVICES, L_FEED_PRODUCTS,
                                         L_FEED_OFFERS};
    apr_hash_t *maps[] = {im->merchants, im->devices, im->products, im->offers};
    for (size_t t = 0; t < 4; t++) {
        apr_dbd_results_t *res;
        apr_dbd_row_t *row = NULL;
        if (as_db_select(db, labels[t], &res, 0, NULL)) return -1;
        while (as_db_next(db, res, &row)) {
            const char *a = as_db_col(db, row, 0), *b = as_db_col(db, row, 1),
                       *c = as_db_col(db, row, 2);
            switch (t) {
            case 0: remember(im, maps[t], a, 0, 0, as_db_i64(b) != 0); break;
            case 1: remember(im, maps[t], b, as_db_i64(a), 0, as_db_i64(c) != 0); break;
            case 2: remember(im, maps[t], b, as_db_i64(a), 0, as_db_i64(c) != 0); break;
            default: remember(im, maps[t], a, 0, as_db_i64(b), as_db_i64(c) != 0); break;
            }
        }
    }
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    im->next_device = im->next_product = 1;
    if (as_db_select(db, L_FEED_MAX_DEVICE, &res, 0, NULL)) return -1;
    while (as_db_next(db, res, &row))
        im->next_device = as_db_i64(as_db_col(db, row, 0)) + 1;
    row = NULL;
    if (as_db_select(db, L_FEED_MAX_PRODUCT, &res, 0, NULL)) return -1;
    while (as_db_next(db, res, &row))
        im->next_product = as_db_i64(as_db_col(db, row, 0)) + 1;
    return 0;
}

/* ---- reading the file ---- */

static void problem(importer *im, size_t line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void problem(importer *im, size_t line, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *r = apr_pvsprintf(im->p, fmt, ap);
    va_end(ap);
    as_feed_problem_add(im->probs, line, field, r);
}

static const char *rec_id(importer *im, const as_feed_rec *r)
{
    return r->key2 ? apr_pstrcat(im->p, r->key, " ", r->key2, NULL) : r->key;
}

static int read_file(importer *im, FILE *in)
{
    char *line = NULL;
    size_t lcap = 0, no = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, in)) >= 0) {
        no++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        size_t i = 0;
        while (i < (size_t)len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i == (size_t)len) continue; /* a blank line */
        as_feed_rec r;
        if (!im->rules->read(&im->m, line, (size_t)len, no, &r, im->probs)) continue;
        /* the record without its object: a line's keys, and where it is */
        r.key = apr_pstrdup(im->p, r.key);
        if (r.key2) r.key2 = apr_pstrdup(im->p, r.key2);
        json_decref(r.v);
        r.v = NULL;
        const char *id = rec_id(im, &r);
        void *before = apr_hash_get(im->in_file[r.type], id, APR_HASH_KEY_STRING);
        if (before) {
            problem(im, no, NULL, "%s %s is also on line %" APR_SIZE_T_FMT ": a file says each thing once",
                    as_feed_type_name(r.type), id, im->recs[(uintptr_t)before - 1].line);
            continue;
        }
        if (im->n == im->cap) {
            size_t nc = im->cap ? im->cap * 2 : 1024;
            as_feed_rec *nv = realloc(im->recs, nc * sizeof(*nv));
            long *na = nv ? realloc(im->at, nc * sizeof(*na)) : NULL;
            if (na) im->at = na;
            size_t *nl = na ? realloc(im->len, nc * sizeof(*nl)) : NULL;
            if (nv) im->recs = nv;
            if (!nv || !na || !nl) {
                free(line);
                im->err = "out of memory";
                return -1;
            }
            im->len = nl;
            im->cap = nc;
        }
        im->at[im->n] = ftell(im->spool);
        im->len[im->n] = (size_t)len;
        if (im->at[im->n] < 0 || fwrite(line, 1, (size_t)len, im->spool) != (size_t)len) {
            free(line);
            im->err = "cannot keep the file's lines in a temporary file";
            return -1;
        }
        im->recs[im->n] = r;
        /* the hash keeps a pointer into recs: set once recs stops moving */
        apr_hash_set(im->in_file[r.type], apr_pstrdup(im->p, id), APR_HASH_KEY_STRING,
                     (void *)(uintptr_t)(im->n + 1));
        im->n++;
    }
    free(line);
    if (ferror(in)) {
        im->err = "reading the file failed";
        return -1;
    }
    /* the index stored above, as the record */
    for (int t = 0; t < AS_FEED_N; t++)
        for (apr_hash_index_t *hi = apr_hash_first(im->p, im->in_file[t]); hi;
             hi = apr_hash_next(hi)) {
            const void *key;
            void *val;
            apr_hash_this(hi, &key, NULL, &val);
            apr_hash_set(im->in_file[t], key, APR_HASH_KEY_STRING,
                         &im->recs[(uintptr_t)val - 1]);
        }
    return 0;
}

/* Record i's object, read again from the spool (the caller releases it). */
static json_t *rec_load(importer *im, size_t i)
{
    if (im->len[i] + 1 > im->bufcap) {
        char *nb = realloc(im->buf, im->len[i] + 1);
        if (!nb) return NULL;
        im->buf = nb;
        im->bufcap = im->len[i] + 1;
    }
    if (fseek(im->spool, im->at[i], SEEK_SET) != 0 ||
        fread(im->buf, 1, im->len[i], im->spool) != im->len[i])
        return NULL;
    return json_loadb(im->buf, im->len[i], 0, NULL);
}

static size_t rec_index(const importer *im, const as_feed_rec *r)
{
    return (size_t)(r - im->recs);
}

/* ---- what records say about each other and the database ---- */

static const as_feed_rec *in_file(importer *im, as_feed_type t, const char *key)
{
    return key ? apr_hash_get(im->in_file[t], key, APR_HASH_KEY_STRING) : NULL;
}

/* Sold after this file: defined by it (not withdrawn), or in the database
 * and not withdrawn (by it or before). */
static bool sold_after(importer *im, as_feed_type t, apr_hash_t *db_map, const char *key)
{
    const as_feed_rec *r = in_file(im, t, key);
    if (r) return !r->withdrawn;
    known *k = lookup(db_map, key);
    return k && !k->withdrawn;
}

#define BATCH 256 /* records a statement reads or writes at a time */

static apr_hash_t *specs_in(importer *im, const int64_t *ids, size_t n);
static void specs_free(apr_hash_t *h);

/* The database's specifications, by product id, of the products measured by
 * the records from `from` on that have no product record in the file: of the
 * next BATCH of them, in one query, on pool p. *to: the record after the
 * last of them (the records a later call starts from). NULL when the store
 * failed. */
static apr_hash_t *db_specs_ahead(importer *im, size_t from, apr_pool_t *p, size_t *to)
{
    int64_t ids[BATCH];
    size_t n = 0, i = from;
    for (; i < im->n && n < BATCH; i++) {
        const as_feed_rec *r = &im->recs[i];
        const as_feed_rec *pr = in_file(im, AS_FEED_PRODUCT, r->key);
        known *k = r->type == AS_FEED_MEASUREMENT && !r->withdrawn && !(pr && !pr->withdrawn)
                       ? lookup(im->products, r->key)
                       : NULL;
        if (k) ids[n++] = k->id;
    }
    *to = i;
    apr_pool_t *outer = im->db->pool;
    im->db->pool = p;
    apr_hash_t *h = n ? specs_in(im, ids, n) : apr_hash_make(p);
    im->db->pool = outer;
    return h;
}

/* The specifications a product will have: its record's, else those the
 * database has (in db, from db_specs_ahead). A new reference; NULL when
 * they are the database's and db is NULL (it could not be read). */
static json_t *specs_of(importer *im, const char *sku, apr_hash_t *db)
{
    const as_feed_rec *r = in_file(im, AS_FEED_PRODUCT, sku);
    if (r && !r->withdrawn) {
        json_t *o = rec_load(im, rec_index(im, r));
        json_t *a = json_object_get(o, "specs");
        a = a ? json_incref(a) : json_array();
        json_decref(o);
        return a;
    }
    if (!db) return NULL;
    known *k = lookup(im->products, sku);
    json_t *a = k ? apr_hash_get(db, &k->id, sizeof(k->id)) : NULL;
    return a ? json_incref(a) : json_array();
}

static void check_refs(importer *im)
{
    apr_pool_t *ahead;
    apr_pool_create(&ahead, im->p);
    apr_hash_t *db_specs = NULL;
    size_t fetched_to = 0; /* the records db_specs covers end here */
    for (size_t i = 0; i < im->n; i++) {
        const as_feed_rec *r = &im->recs[i];
        if (r->withdrawn) {
            /* a withdrawal of something the database or file never had */
            bool known_before =
                r->type == AS_FEED_MERCHANT      ? lookup(im->merchants, r->key) != NULL
                : r->type == AS_FEED_DEVICE      ? lookup(im->devices, r->key) != NULL
                : r->type == AS_FEED_PRODUCT     ? lookup(im->products, r->key) != NULL
                : r->type == AS_FEED_OFFER       ? lookup(im->offers, r->key) != NULL
                : r->type == AS_FEED_MEASUREMENT ? lookup(im->products, r->key) != NULL
                                                 : lookup(im->products, r->key) != NULL &&
                                                       lookup(im->devices, r->key2) != NULL;
            if (!known_before)
                problem(im, r->line, NULL, "withdraws %s %s, which the database does not have",
                        as_feed_type_name(r->type), rec_id(im, r));
            continue;
        }
        json_t *v = NULL;
        if (r->type == AS_FEED_OFFER || r->type == AS_FEED_MEASUREMENT) {
            v = rec_load(im, i);
            if (!v) {
                problem(im, r->line, NULL, "cannot be read again from the temporary file");
                continue;
            }
        }
        switch (r->type) {
        case AS_FEED_OFFER: {
            const char *sku = json_string_value(json_object_get(v, "sku"));
            const char *mid = json_string_value(json_object_get(v, "merchant"));
            if (!sold_after(im, AS_FEED_PRODUCT, im->products, sku))
                problem(im, r->line, "sku",
                        "product %s is neither in this file nor sold (unknown or withdrawn)", sku);
            if (!sold_after(im, AS_FEED_MERCHANT, im->merchants, mid))
                problem(im, r->line, "merchant",
                        "merchant %s is neither in this file nor in the database (or withdrawn)",
                        mid);
            known *o = lookup(im->offers, r->key), *p = lookup(im->products, sku);
            if (o && (!p || p->id != o->product))
                problem(im, r->line, "sku",
                        "offer %s is of another product: an offer never moves (its orders name "
                        "it); give the new one an id of its own",
                        r->key);
            break;
        }
        case AS_FEED_MEASUREMENT:
        case AS_FEED_COMPAT: {
            if (!sold_after(im, AS_FEED_PRODUCT, im->products, r->key)) {
                problem(im, r->line, "sku",
                        "product %s is neither in this file nor sold (unknown or withdrawn)",
                        r->key);
                break;
            }
            if (r->type == AS_FEED_COMPAT) {
                if (!sold_after(im, AS_FEED_DEVICE, im->devices, r->key2))
                    problem(im, r->line, "device",
                            "device %s is neither in this file nor in the database (or withdrawn)",
                            r->key2);
                break;
            }
            /* every measured specification is one the product claims or lists */
            if (i >= fetched_to) {
                specs_free(db_specs);
                apr_pool_clear(ahead);
                if (!(db_specs = db_specs_ahead(im, i, ahead, &fetched_to)))
                    problem(im, r->line, NULL, "the database's specifications cannot be read");
            }
            json_t *specs = specs_of(im, r->key, db_specs);
            if (!specs) break;
            const char *key;
            json_t *x;
            json_object_foreach(json_object_get(v, "values"), key, x)
            {
                bool has = false;
                for (size_t k = 0; k < json_array_size(specs) && !has; k++)
                    has = strcmp(json_string_value(json_object_get(json_array_get(specs, k),
                                                                   "spec")),
                                 key) == 0;
                if (!has)
                    problem(im, r->line, apr_pstrcat(im->p, "values.", key, NULL),
                            "product %s has no specification %s (list it in the product's "
                            "specs first)",
                            r->key, key);
            }
            json_decref(specs);
            break;
        }
        default: break;
        }
        json_decref(v);
    }
    specs_free(db_specs);
    apr_pool_destroy(ahead);
}

/* ---- writing ---- */

/* The writers' texts live in db->pool: a batch's own pool while apply runs
 * (freed with the batch), not the import's. */
static const char *i64s(importer *im, int64_t v)
{
    return apr_psprintf(im->db->pool, "%" APR_INT64_T_FMT, v);
}

static const char *dbl(importer *im, json_t *v)
{
    return apr_psprintf(im->db->pool, "%.10g", json_number_value(v));
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *text_of(importer *im, json_t *v, const char *dflt)
{
    as_mem m = as_db_pool_mem(im->db->pool);
    char *s = as_feed_value_text(&m, v);
    return s ? s : dflt;
}

/* runs a write: -1 on failure, else how many rows it changed */
static int run_write(importer *im, const char *label, int n, const char **args)
{
    int rows = 0;
    if (as_db_exec(im->db, label, &rows, n, args)) {
        im->err = apr_psprintf(im->p, "%s failed: %s", label,
                               apr_dbd_error(im->db->driver, im->db->handle, -1));
        return -1;
    }
    return rows;
}

static void touch(importer *im, int64_t pid, bool content, bool verify)
{
    int64_t *k = apr_palloc(im->p, sizeof(*k));
    *k = pid;
    const char *was = apr_hash_get(im->touched, k, sizeof(*k));
    if (!was || (content && *was == '0'))
        apr_hash_set(im->touched, k, sizeof(*k), content ? "1" : "0");
    if (verify) apr_hash_set(im->verify, k, sizeof(*k), "1");
}

static int count(importer *im, const as_feed_rec *r, int rows)
{
    if (rows < 0) return -1;
    if (rows > 0)
        (r->withdrawn ? im->withdrawn : im->changed)[r->type]++;
    else
        im->unchanged++;
    return rows;
}

static int put_merchant(importer *im, const as_feed_rec *r)
{
    json_t *v = r->v;
    if (r->withdrawn) {
        /* its offers go with it */
        apr_dbd_results_t *res;
        apr_dbd_row_t *row = NULL;
        const char *a[] = {r->key};
        if (as_db_select(im->db, L_FEED_OFFERS_OF_MERCHANT, &res, 1, a)) return -1;
        while (as_db_next(im->db, res, &row))
            touch(im, as_db_i64(as_db_col(im->db, row, 1)), true, false);
        const char *w[] = {im->now, r->key};
        int rows = run_write(im, L_FEED_WITHDRAW_MERCHANT, 2, w);
        if (rows > 0 && run_write(im, L_FEED_WITHDRAW_OFFERS_OF_MERCHANT, 2, w) < 0) return -1;
        return count(im, r, rows);
    }
    const char *a[] = {r->key,
                       str(v, "name"),
                       str(v, "country"),
                       str(v, "city"),
                       dbl(im, json_object_get(v, "on_time_rate")),
                       dbl(im, json_object_get(v, "accuracy_rate"))};
    return count(im, r, run_write(im, L_FEED_MERCHANT, 6, a));
}

static int put_device(importer *im, const as_feed_rec *r)
{
    json_t *v = r->v;
    if (r->withdrawn) {
        const char *w[] = {im->now, r->key};
        return count(im, r, run_write(im, L_FEED_WITHDRAW_DEVICE, 2, w));
    }
    /* aliases one per line: each may have spaces ("iPhone 13"), and the
     * search reads them as words either way */
    const char *aliases = "";
    size_t i;
    json_t *al;
    json_array_foreach(json_object_get(v, "aliases"), i, al) aliases =
        apr_pstrcat(im->p, aliases, i ? "\n" : "", json_string_value(al), NULL);
    known *k = lookup(im->devices, r->key);
    int64_t id = k ? k->id : im->next_device++;
    const char *a[] = {i64s(im, id), r->key, str(v, "name"), str(v, "brand"), str(v, "kind"),
                       aliases};
    int rows = count(im, r, run_write(im, L_FEED_DEVICE, 6, a));
    if (rows >= 0 && !k) remember(im, im->devices, r->key, id, 0, 0);
    return rows;
}

/* ---- batches ----
 * Products, offers, measurements and fits are written BATCH records at a
 * time: each batch one JSON array parameter per statement (a round trip per
 * batch, not per row: the PostgreSQL import of 100,000 products), rows that
 * change returned by the upsert itself (BATCH: above, with the checks). */

/* A batch's product ids as its statements take them: a JSON array on
 * SQLite (json_each), an array literal on PostgreSQL. */
static const char *ids_json(importer *im, const int64_t *ids, size_t n)
{
    if (im->db->pg) {
        as_mem m = as_db_pool_mem(im->db->pool);
        as_buf b;
        as_buf_init(&b, &m);
        as_buf_puts(&b, "{");
        for (size_t i = 0; i < n; i++)
            as_buf_printf(&b, "%s%lld", i ? "," : "", (long long)ids[i]);
        as_buf_puts(&b, "}");
        return as_buf_str(&b);
    }
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)ids[i]));
    char *t = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    const char *r = t ? apr_pstrdup(im->p, t) : "[]";
    free(t);
    return r;
}

static const char *rows_json(importer *im, json_t *rows)
{
    char *t = json_dumps(rows, JSON_COMPACT | JSON_REAL_PRECISION(17));
    const char *r = t ? apr_pstrdup(im->db->pool, t) : NULL;
    free(t);
    return r;
}

/* Runs a batch statement that returns the product id of each row it wrote
 * (column 0): each touched; how many. -1 on failure. */
static int put_rows(importer *im, const char *label, json_t *rows, bool verify)
{
    if (!json_array_size(rows)) return 0;
    const char *a[] = {rows_json(im, rows)};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (!a[0] || as_db_select(im->db, label, &res, 1, a)) {
        im->err = apr_psprintf(im->p, "%s failed: %s", label,
                               apr_dbd_error(im->db->driver, im->db->handle, -1));
        return -1;
    }
    int n = 0;
    while (as_db_next(im->db, res, &row)) {
        touch(im, as_db_i64(as_db_col(im->db, row, 0)), true, verify);
        n++;
    }
    return n;
}

static int run_rows(importer *im, const char *label, json_t *rows)
{
    if (!json_array_size(rows)) return 0;
    const char *a[] = {rows_json(im, rows)};
    return a[0] ? run_write(im, label, 1, a) : -1;
}

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The spec rows of products (ids, n), as the database has them: per
 * product, an array of {spec, label, kind, unit, claimed, measured, tol}. */
static apr_hash_t *specs_in(importer *im, const int64_t *ids, size_t n)
{
    apr_hash_t *h = apr_hash_make(im->db->pool);
    as_db *db = im->db;
    const char *a[] = {ids_json(im, ids, n)};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_FEED_SPECS_IN, &res, 1, a)) return NULL;
    while (as_db_next(db, res, &row)) {
        int64_t *pid = apr_palloc(db->pool, sizeof(*pid));
        *pid = as_db_i64(as_db_col(db, row, 0));
        json_t *list = apr_hash_get(h, pid, sizeof(*pid));
        if (!list) {
            list = json_array();
            apr_hash_set(h, pid, sizeof(*pid), list);
        }
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:s}", "spec", as_db_col(db, row, 1),
                            "label", as_db_col(db, row, 2), "kind", as_db_col(db, row, 3), "unit",
                            jstr_or_null(as_db_col(db, row, 4)), "claimed",
                            jstr_or_null(as_db_col(db, row, 5)), "measured",
                            jstr_or_null(as_db_col(db, row, 6)), "tol",
                            apr_psprintf(db->pool, "%.10g", as_db_dbl(as_db_col(db, row, 7)))));
    }
    return h;
}

static void specs_free(apr_hash_t *h)
{
    if (!h) return;
    for (apr_hash_index_t *hi = apr_hash_first(NULL, h); hi; hi = apr_hash_next(hi)) {
        void *v;
        apr_hash_this(hi, NULL, NULL, &v);
        json_decref(v);
    }
}

static bool same_text(json_t *a, const char *b)
{
    const char *x = json_string_value(a);
    return (!x && !b) || (x && b && strcmp(x, b) == 0);
}

/* A product record's specs as rows (pid, pos, ...), keeping the measured
 * value of each specification the database has: appended to out unless
 * they are the rows `have` says already. true when appended. */
static bool spec_rows(importer *im, int64_t pid, json_t *specs, json_t *have, json_t *out)
{
    size_t n = json_array_size(specs);
    bool same = json_array_size(have) == n;
    json_t *rows = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *sp = json_array_get(specs, i), *t = json_object_get(sp, "tolerance_pct");
        const char *kind = str(sp, "kind");
        const char *claimed = text_of(im, json_object_get(sp, "claimed"), NULL);
        const char *tol = apr_psprintf(im->db->pool, "%.10g",
                                       json_is_number(t)                  ? json_number_value(t)
                                       : strcmp(kind, "performance") == 0 ? 2.0
                                                                          : 0.0);
        const char *measured = NULL;
        for (size_t k = 0; k < json_array_size(have) && !measured; k++)
            if (strcmp(str(json_array_get(have, k), "spec"), str(sp, "spec")) == 0)
                measured = str(json_array_get(have, k), "measured");
        json_t *h = json_array_get(have, i);
        if (same)
            same = strcmp(str(h, "spec"), str(sp, "spec")) == 0 &&
                   strcmp(str(h, "label"), str(sp, "label")) == 0 &&
                   strcmp(str(h, "kind"), kind) == 0 &&
                   same_text(json_object_get(h, "unit"), str(sp, "unit")) &&
                   same_text(json_object_get(h, "claimed"), claimed) &&
                   strcmp(str(h, "tol"), tol) == 0;
        json_array_append_new(
            rows, json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:f}", "pid", (json_int_t)pid,
                            "pos", (json_int_t)i, "spec", str(sp, "spec"), "label", str(sp, "label"),
                            "kind", kind, "unit", jstr_or_null(str(sp, "unit")), "claimed",
                            jstr_or_null(claimed), "measured", jstr_or_null(measured), "tol",
                            strtod(tol, NULL)));
    }
    if (!same) json_array_extend(out, rows);
    json_decref(rows);
    return !same;
}

static int put_products(importer *im, const as_feed_rec *const *rs, size_t n)
{
    json_t *rows = json_array();
    int64_t *old = apr_palloc(im->db->pool, (n + 1) * sizeof(*old));
    int64_t *pid = apr_palloc(im->db->pool, (n + 1) * sizeof(*pid));
    size_t nold = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *v = rs[i]->v;
        known *k = lookup(im->products, rs[i]->key);
        pid[i] = k ? k->id : im->next_product++;
        if (k)
            old[nold++] = k->id;
        else
            remember(im, im->products, rs[i]->key, pid[i], 0, 0);
        json_t *src = json_object_get(v, "source"), *perf = json_object_get(v, "performance");
        json_t *ot = json_object_get(perf, "on_time_rate_90d");
        json_t *images = json_object_get(v, "image_urls"), *notes = json_object_get(src, "notes");
        json_t *weeks = json_object_get(perf, "orders_per_week");
        json_array_append_new(
            rows,
            json_pack("{s:I, s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, "
                      "s:o, s:f, s:f, s:I, s:s}",
                      "id", (json_int_t)pid[i], "sku", rs[i]->key, "gtin",
                      jstr_or_null(str(v, "gtin")), "name", str(v, "name"), "brand", str(v, "brand"),
                      "category", str(v, "category"), "part_type", str(v, "part_type"),
                      "description", str(v, "description"), "image_urls",
                      images ? text_of(im, images, "[]") : "[]", "source_url", str(src, "url"),
                      "source_notes", notes ? text_of(im, notes, "[]") : "[]", "source_checked_at",
                      str(src, "checked_at"), "source_product_id", str(src, "product_id"),
                      "availability", str(src, "availability"), "is_demo",
                      json_is_true(json_object_get(v, "demo")) ? 1 : 0, "on_time_rate_90d",
                      json_is_number(ot) ? json_real(strtod(dbl(im, ot), NULL)) : json_null(),
                      "return_rate", strtod(dbl(im, json_object_get(perf, "return_rate")), NULL),
                      "wrong_item_rate",
                      strtod(dbl(im, json_object_get(perf, "wrong_item_rate")), NULL),
                      "agent_orders_90d",
                      (json_int_t)json_integer_value(json_object_get(perf, "agent_orders_90d")),
                      "orders_per_week", weeks ? text_of(im, weeks, "[]") : "[]"));
    }
    /* the rows first (their ids are what the specs refer to), then the
     * specs of the products whose claims changed */
    apr_hash_t *before = im->touched;
    im->touched = apr_hash_make(im->p);
    int rc = put_rows(im, L_FEED_PRODUCTS_PUT, rows, true);
    apr_hash_t *changed = im->touched;
    im->touched = before;
    json_decref(rows);
    if (rc < 0) return -1;
    apr_hash_t *have = nold ? specs_in(im, old, nold) : NULL;
    if (nold && !have) return -1;
    json_t *spec_put = json_array();
    int64_t *clear = apr_palloc(im->db->pool, (n + 1) * sizeof(*clear));
    size_t nclear = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *h = have ? apr_hash_get(have, &pid[i], sizeof(pid[i])) : NULL;
        json_t *specs = json_object_get(rs[i]->v, "specs");
        json_t *none = specs ? NULL : json_array();
        bool specs_changed = spec_rows(im, pid[i], specs ? specs : none, h, spec_put);
        json_decref(none);
        if (specs_changed && h) clear[nclear++] = pid[i];
        bool row_changed = apr_hash_get(changed, &pid[i], sizeof(pid[i])) != NULL;
        if (specs_changed || row_changed) touch(im, pid[i], true, true);
        count(im, rs[i], specs_changed || row_changed);
    }
    specs_free(have);
    if (nclear) {
        const char *a[] = {ids_json(im, clear, nclear)};
        if (run_write(im, L_FEED_SPECS_CLEAR_IN, 1, a) < 0) rc = -1;
    }
    if (rc >= 0 && run_rows(im, L_FEED_SPECS_PUT, spec_put) < 0) rc = -1;
    json_decref(spec_put);
    return rc < 0 ? -1 : 0;
}

/* A batch of n records of type t written (rows released): which of them
 * changed is not returned, only their products, so they are counted. */
static int put_counted(importer *im, const char *label, json_t *rows, as_feed_type t, size_t n)
{
    int changed = put_rows(im, label, rows, false);
    json_decref(rows);
    if (changed < 0) return -1;
    im->changed[t] += (size_t)changed;
    im->unchanged += n - (size_t)changed;
    return 0;
}

/* An offer's stock as the merchant's count says (docs/catalogue.md,
 * "Stock"): the count less what its orders took after it, plus what they
 * gave back after it. */
static int counted_stock(importer *im, const char *offer, int64_t t, int64_t *stock)
{
    /* the offer's row held until the import commits, before its orders are
     * summed: an order that takes stock meanwhile waits for the import, and
     * one that took it before is in the sum (PostgreSQL; SQLite's import
     * holds the database's one write lock throughout) */
    as_ops_offer held;
    if (as_db_ops_offer_lock(im->db, offer, &held) == AS_EDB) return -1;
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    const char *a[] = {i64s(im, t), i64s(im, t), i64s(im, t), offer};
    if (as_db_select(im->db, L_FEED_STOCK_SINCE, &res, 4, a)) return -1;
    while (as_db_next(im->db, res, &row))
        *stock += -as_db_i64(as_db_col(im->db, row, 0)) + as_db_i64(as_db_col(im->db, row, 1));
    if (*stock < 0) *stock = 0;
    return 0;
}

static int put_offers(importer *im, const as_feed_rec *const *rs, size_t n)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *v = rs[i]->v;
        known *k = lookup(im->offers, rs[i]->key), *p = lookup(im->products, str(v, "sku"));
        int64_t stock = json_integer_value(json_object_get(v, "stock")), t;
        const char *as_of = str(v, "stock_as_of");
        if (as_of && k && as_time_parse(as_of, &t) && counted_stock(im, rs[i]->key, t, &stock))
            return json_decref(rows), -1;
        if (!k) remember(im, im->offers, rs[i]->key, 0, p->id, 0);
        json_array_append_new(
            rows, json_pack("{s:s, s:I, s:s, s:I, s:I, s:s, s:I, s:I}", "id", rs[i]->key, "pid",
                            (json_int_t)p->id, "merchant", str(v, "merchant"), "price",
                            json_integer_value(json_object_get(v, "price_cents")), "retail",
                            json_integer_value(json_object_get(v, "retail_price_cents")), "label",
                            str(v, "price_label") ? str(v, "price_label") : "Agent-only price",
                            "days", json_integer_value(json_object_get(v, "delivery_days")),
                            "stock", (json_int_t)stock));
    }
    return put_counted(im, L_FEED_OFFERS_PUT, rows, AS_FEED_OFFER, n);
}

static int put_fits(importer *im, const as_feed_rec *const *rs, size_t n)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *v = rs[i]->v, *ev = json_object_get(v, "evidence");
        known *p = lookup(im->products, rs[i]->key), *d = lookup(im->devices, rs[i]->key2);
        json_array_append_new(rows, json_pack("{s:I, s:I, s:s, s:s, s:s}", "dev", (json_int_t)d->id,
                                              "pid", (json_int_t)p->id, "fit", str(v, "fit_status"),
                                              "evidence", ev ? text_of(im, ev, "[]") : "[]", "at",
                                              str(v, "checked_at")));
    }
    return put_counted(im, L_FEED_COMPAT_PUT, rows, AS_FEED_COMPAT, n);
}

/* The measured fields of products (ids, n), by id: {at, lab, n, status, note}. */
static apr_hash_t *state_in(importer *im, const int64_t *ids, size_t n)
{
    as_db *db = im->db;
    apr_hash_t *h = apr_hash_make(db->pool);
    const char *a[] = {ids_json(im, ids, n)};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_FEED_STATE_IN, &res, 1, a)) return NULL;
    while (as_db_next(db, res, &row)) {
        int64_t *pid = apr_palloc(db->pool, sizeof(*pid));
        *pid = as_db_i64(as_db_col(db, row, 0));
        const char **f = apr_pcalloc(db->pool, 5 * sizeof(char *));
        for (int i = 0; i < 5; i++)
            f[i] = as_db_col(db, row, i + 1);
        apr_hash_set(h, pid, sizeof(*pid), f);
    }
    return h;
}

static int put_measurements(importer *im, const as_feed_rec *const *rs, size_t n)
{
    int64_t *ids = apr_palloc(im->db->pool, (n + 1) * sizeof(*ids));
    for (size_t i = 0; i < n; i++)
        ids[i] = lookup(im->products, rs[i]->key)->id;
    apr_hash_t *state = state_in(im, ids, n), *specs = specs_in(im, ids, n);
    if (!state || !specs) return -1;
    json_t *fields = json_array(), *values = json_array();
    for (size_t i = 0; i < n; i++) {
        const as_feed_rec *r = rs[i];
        json_t *v = r->v;
        json_t *vals = r->withdrawn ? NULL : json_object_get(v, "values");
        const char *at = r->withdrawn ? NULL : str(v, "measured_at");
        const char *lab = r->withdrawn ? NULL : str(v, "lab");
        const char *ns = r->withdrawn ? "0" : i64s(im, json_integer_value(json_object_get(v, "sample_size")));
        const char **f = apr_hash_get(state, &ids[i], sizeof(ids[i]));
        bool changed = false;
        if (!f || !((!f[0] == !at) && (!at || strcmp(f[0], at) == 0) && (!f[1] == !lab) &&
                    (!lab || strcmp(f[1], lab) == 0) && strcmp(f[2] ? f[2] : "0", ns) == 0)) {
            json_array_append_new(fields, json_pack("{s:I, s:o, s:o, s:I}", "pid", (json_int_t)ids[i],
                                                    "at", jstr_or_null(at), "lab",
                                                    jstr_or_null(lab), "n",
                                                    (json_int_t)strtoll(ns, NULL, 10)));
            changed = true;
        }
        json_t *have = apr_hash_get(specs, &ids[i], sizeof(ids[i]));
        for (size_t k = 0; k < json_array_size(have); k++) {
            json_t *h = json_array_get(have, k);
            const char *spec = str(h, "spec");
            const char *now = vals ? text_of(im, json_object_get(vals, spec), NULL) : NULL;
            if (same_text(json_object_get(h, "measured"), now)) continue;
            json_array_append_new(values, json_pack("{s:I, s:s, s:o}", "pid", (json_int_t)ids[i],
                                                    "spec", spec, "m", jstr_or_null(now)));
            changed = true;
        }
        if (changed) touch(im, ids[i], true, true);
        count(im, r, changed);
    }
    specs_free(specs);
    int rc = run_rows(im, L_FEED_MEASURED_PUT, fields) < 0 ||
             run_rows(im, L_FEED_SPEC_MEASURED_PUT, values) < 0;
    json_decref(fields);
    json_decref(values);
    return rc ? -1 : 0;
}

/* ---- withdrawals, one by one ---- */

static int withdraw_product(importer *im, const as_feed_rec *r)
{
    known *k = lookup(im->products, r->key);
    const char *w[] = {im->now, i64s(im, k->id)};
    int rows = run_write(im, L_FEED_WITHDRAW_PRODUCT, 2, w);
    if (rows > 0 && run_write(im, L_FEED_WITHDRAW_OFFERS_OF, 2, w) < 0) return -1;
    if (rows > 0) touch(im, k->id, true, false);
    return count(im, r, rows);
}

static int withdraw_offer(importer *im, const as_feed_rec *r)
{
    known *k = lookup(im->offers, r->key);
    const char *w[] = {im->now, r->key};
    int rows = run_write(im, L_FEED_WITHDRAW_OFFER, 2, w);
    if (rows > 0) touch(im, k->product, true, false);
    return count(im, r, rows);
}

static int withdraw_fit(importer *im, const as_feed_rec *r)
{
    known *p = lookup(im->products, r->key), *d = lookup(im->devices, r->key2);
    const char *w[] = {i64s(im, d->id), i64s(im, p->id)};
    int rows = run_write(im, L_FEED_WITHDRAW_COMPAT, 2, w);
    if (rows > 0) touch(im, p->id, true, false);
    return count(im, r, rows);
}

/* Verification decided again, by core's one rule, for every product whose
 * claims or measurements changed, a batch at a time. */
static int decide_batch(importer *im, const int64_t *ids, size_t n, json_t *states)
{
    apr_hash_t *state = state_in(im, ids, n), *specs = specs_in(im, ids, n);
    if (!state || !specs) return -1;
    json_t *put = json_array();
    for (size_t i = 0; i < n; i++) {
        const char **f = apr_hash_get(state, &ids[i], sizeof(ids[i]));
        json_t *have = apr_hash_get(specs, &ids[i], sizeof(ids[i]));
        size_t ns = json_array_size(have);
        as_spec_row *rows = apr_pcalloc(im->db->pool, (ns + 1) * sizeof(*rows));
        for (size_t k = 0; k < ns; k++) {
            json_t *h = json_array_get(have, k);
            rows[k] = (as_spec_row){str(h, "spec"), str(h, "label"), str(h, "kind"), str(h, "unit"),
                                    str(h, "claimed"), str(h, "measured"), strtod(str(h, "tol"), NULL)};
        }
        const char *note = NULL;
        as_mem bm = as_db_pool_mem(im->db->pool);
        const char *status = as_verif_name(im->rules->verification(&bm, rows, ns, f && f[0], &note));
        json_object_set_new(states, status,
                            json_integer(json_integer_value(json_object_get(states, status)) + 1));
        if (f && f[3] && strcmp(f[3], status) == 0 && (!note == !f[4]) &&
            (!note || strcmp(note, f[4]) == 0))
            continue;
        json_array_append_new(put, json_pack("{s:I, s:s, s:o}", "pid", (json_int_t)ids[i], "status",
                                             status, "note", jstr_or_null(note)));
        touch(im, ids[i], true, false);
    }
    specs_free(specs);
    int rc = run_rows(im, L_FEED_VERIFICATION_PUT, put);
    json_decref(put);
    return rc < 0 ? -1 : 0;
}

static int decide(importer *im, json_t *states)
{
    size_t n = apr_hash_count(im->verify), k = 0;
    int64_t *ids = apr_palloc(im->p, (n + 1) * sizeof(*ids));
    for (apr_hash_index_t *hi = apr_hash_first(im->p, im->verify); hi; hi = apr_hash_next(hi)) {
        const void *key;
        apr_hash_this(hi, &key, NULL, NULL);
        ids[k++] = *(const int64_t *)key;
    }
    apr_pool_t *outer = im->db->pool;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i += BATCH) {
        apr_pool_t *iter;
        apr_pool_create(&iter, outer);
        im->db->pool = iter;
        rc = decide_batch(im, ids + i, n - i < BATCH ? n - i : BATCH, states);
        im->db->pool = outer;
        apr_pool_destroy(iter);
    }
    return rc;
}

/* Above this many products changed, the search order table is built again
 * whole (by batches of ids) instead of product by product. */
#define RANK_EACH_MAX 2000

static int derive(importer *im)
{
    size_t n = apr_hash_count(im->touched);
    if (!n) return 0;
    if (n > RANK_EACH_MAX) {
        const char *err = NULL;
        if (as_db_rank_rebuild(im->db, &err) != APR_SUCCESS) {
            im->err = err;
            return -1;
        }
    } else {
        int64_t *pids = apr_palloc(im->p, n * sizeof(*pids));
        size_t i = 0;
        for (apr_hash_index_t *hi = apr_hash_first(im->p, im->touched); hi; hi = apr_hash_next(hi)) {
            const void *key;
            apr_hash_this(hi, &key, NULL, NULL);
            pids[i++] = *(const int64_t *)key;
        }
        if (as_db_catalogue_changed(im->db, pids, n, 1) != AS_OK) {
            im->err = "ranking the changed products again failed";
            return -1;
        }
    }
    /* cached product views are of the catalogue before */
    unsigned char b[8];
    if (apr_generate_random_bytes(b, sizeof(b)) != APR_SUCCESS) return -1;
    const char *v = apr_psprintf(im->p, "%ld-%02x%02x%02x%02x", (long)time(NULL), b[0], b[1], b[2], b[3]);
    const char *a[] = {"catalogue_version", v};
    return run_write(im, L_AS_META_SET, 2, a) < 0 ? -1 : 0;
}

typedef int (*batch_fn)(importer *im, const as_feed_rec *const *rs, size_t n);
typedef int (*one_fn)(importer *im, const as_feed_rec *r);

static int apply(importer *im, json_t *states)
{
    /* what others depend on first, withdrawals last (offers before the
     * products and merchants they belong to) */
    static const struct {
        as_feed_type type;
        bool withdrawn;
        batch_fn batch;
        one_fn one;
    } steps[] = {
        {AS_FEED_MERCHANT, false, NULL, put_merchant},
        {AS_FEED_DEVICE, false, NULL, put_device},
        {AS_FEED_PRODUCT, false, put_products, NULL},
        {AS_FEED_OFFER, false, put_offers, NULL},
        {AS_FEED_MEASUREMENT, false, put_measurements, NULL},
        {AS_FEED_COMPAT, false, put_fits, NULL},
        {AS_FEED_COMPAT, true, NULL, withdraw_fit},
        {AS_FEED_MEASUREMENT, true, put_measurements, NULL},
        {AS_FEED_OFFER, true, NULL, withdraw_offer},
        {AS_FEED_PRODUCT, true, NULL, withdraw_product},
        {AS_FEED_DEVICE, true, NULL, put_device},
        {AS_FEED_MERCHANT, true, NULL, put_merchant},
    };
    apr_pool_t *outer = im->db->pool;
    const as_feed_rec **batch = malloc(BATCH * sizeof(*batch));
    if (!batch) return -1;
    int rc = 0;
    for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]) && !rc; s++) {
        size_t nb = 0;
        for (size_t i = 0; i <= im->n && !rc; i++) {
            const as_feed_rec *r = i < im->n ? &im->recs[i] : NULL;
            if (r && (r->type != steps[s].type || r->withdrawn != steps[s].withdrawn)) continue;
            if (r) batch[nb++] = r;
            if (nb && (nb == BATCH || !r)) {
                /* the batch's objects, read again; a pool per batch: the
                 * statements' results and arguments */
                for (size_t k = 0; k < nb && !rc; k++) {
                    as_feed_rec *x = &im->recs[rec_index(im, batch[k])];
                    if (!(x->v = rec_load(im, rec_index(im, batch[k])))) {
                        im->err = "a line could not be read again from the temporary file";
                        rc = 1;
                    }
                }
                apr_pool_t *iter;
                apr_pool_create(&iter, outer);
                im->db->pool = iter;
                if (rc)
                    ;
                else if (steps[s].batch)
                    rc = steps[s].batch(im, batch, nb) < 0;
                else
                    for (size_t k = 0; k < nb && !rc; k++)
                        rc = steps[s].one(im, batch[k]) < 0;
                im->db->pool = outer;
                apr_pool_destroy(iter);
                for (size_t k = 0; k < nb; k++) {
                    as_feed_rec *x = &im->recs[rec_index(im, batch[k])];
                    json_decref(x->v);
                    x->v = NULL;
                }
                nb = 0;
            }
        }
    }
    free(batch);
    if (!rc) rc = decide(im, states);
    if (!rc) rc = derive(im);
    return rc;
}

static json_t *counts(const size_t *c)
{
    json_t *o = json_object();
    for (int t = 0; t < AS_FEED_N; t++)
        if (c[t]) json_object_set_new(o, as_feed_type_name((as_feed_type)t), json_integer((json_int_t)c[t]));
    return o;
}

apr_status_t as_feed_import(as_db *db, const as_feed_rules *rules, FILE *in, const char *name,
                            int dry_run, int empty_only, as_feed_problems *probs, json_t **summary,
                            const char **err)
{
    importer im = {.db = db, .rules = rules, .probs = probs};
    apr_pool_create(&im.p, db->pool);
    im.m = as_db_pool_mem(im.p);
    im.merchants = apr_hash_make(im.p);
    im.devices = apr_hash_make(im.p);
    im.products = apr_hash_make(im.p);
    im.offers = apr_hash_make(im.p);
    im.touched = apr_hash_make(im.p);
    im.verify = apr_hash_make(im.p);
    for (int t = 0; t < AS_FEED_N; t++)
        im.in_file[t] = apr_hash_make(im.p);
    im.now = as_time_format(&im.m, (int64_t)time(NULL));
    apr_status_t rv = APR_EGENERAL;
    apr_dbd_transaction_t *tr = NULL;
    /* the file first: a database is not held while it is read */
    if (!(im.spool = tmpfile())) {
        im.err = "cannot create a temporary file for the lines read";
        goto out;
    }
    if (read_file(&im, in)) goto out;
    /* one transaction writes every page of a large catalogue: SQLite's page
     * cache as large as that (256 MiB at most, this connection's alone), so
     * pages are not written out to the WAL and read back while it runs */
    const char *ignored;
    if (!db->pg && as_db_exec_script(db, "PRAGMA cache_size = -262144;\n", &ignored) != APR_SUCCESS)
        goto out;
    if (as_db_begin_t(db, &tr) != 0) {
        im.err = apr_psprintf(im.p, "cannot begin a transaction: %s",
                              apr_dbd_error(db->driver, db->handle, -1));
        goto out;
    }
    if (read_known(&im)) {
        im.err = "reading the catalogue's keys failed";
        goto out;
    }
    if (empty_only && apr_hash_count(im.products)) {
        *summary = json_pack("{s:b, s:b, s:I}", "loaded", 0, "kept", 1, "products",
                             (json_int_t)apr_hash_count(im.products));
        rv = APR_SUCCESS;
        goto out;
    }
    im.first_pass = probs->n;
    check_refs(&im);
    if (probs->n) {
        rv = APR_EINVAL;
        goto out;
    }
    json_t *states = json_object();
    if (apply(&im, states)) {
        json_decref(states);
        goto out;
    }
    size_t total = 0;
    for (int t = 0; t < AS_FEED_N; t++)
        total += im.changed[t] + im.withdrawn[t];
    *summary = json_pack("{s:s, s:b, s:I, s:o, s:o, s:I, s:o, s:s}", "file", name, "dry_run",
                         dry_run, "records", (json_int_t)im.n, "changed", counts(im.changed),
                         "withdrawn", counts(im.withdrawn), "unchanged", (json_int_t)im.unchanged,
                         "verification", states, "search_index",
                         !total    ? "unchanged"
                         : dry_run ? "would be built again"
                                   : "built again by every server in the background");
    if (empty_only) {
        json_object_set_new(*summary, "loaded", json_true());
        json_object_set_new(*summary, "products", json_integer((json_int_t)im.changed[AS_FEED_PRODUCT]));
    }
    rv = APR_SUCCESS;
out:
    if (tr && as_db_end_t(db, tr, rv == APR_SUCCESS && !dry_run) != 0 && rv == APR_SUCCESS &&
        !dry_run) {
        im.err = "commit failed";
        json_decref(*summary);
        *summary = NULL;
        rv = APR_EGENERAL;
    }
    for (size_t i = 0; i < im.n; i++)
        json_decref(im.recs[i].v);
    free(im.recs);
    free(im.at);
    free(im.len);
    free(im.buf);
    if (im.spool) fclose(im.spool);
    if (rv == APR_EGENERAL) *err = apr_pstrdup(db->pool, im.err ? im.err : "the import failed");
    /* by line, as a person fixes a file: the two passes' problems (each in
     * line order) merged */
    if (im.first_pass < probs->n) {
        as_feed_problem *all = as_alloc(probs->m, probs->n * sizeof(*all));
        size_t a = 0, b = im.first_pass, k = 0;
        while (a < im.first_pass || b < probs->n)
            all[k++] = b == probs->n || (a < im.first_pass && probs->v[a].line <= probs->v[b].line)
                           ? probs->v[a++]
                           : probs->v[b++];
        probs->v = all;
    }
    /* problems' texts live in probs->m, not in the import's pool */
    for (size_t i = 0; i < probs->n; i++) {
        as_feed_problem *x = &probs->v[i];
        if (x->field) x->field = as_strdup(probs->m, x->field);
        x->reason = as_strdup(probs->m, x->reason);
    }
    apr_pool_destroy(im.p);
    return rv;
}

/* ---- export ---- */

typedef struct exporter {
    as_db *db;
    const as_feed_rules *rules;
    FILE *out;
    as_mem m;
    size_t n[AS_FEED_N];
    int failed;
} exporter;

static json_t *parsed(const char *text, json_t *dflt)
{
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    if (v) {
        json_decref(dflt);
        return v;
    }
    return dflt;
}

static void emit(exporter *x, json_t *rec, as_feed_type t)
{
    char *s = x->rules->line(&x->m, rec);
    json_decref(rec);
    if (!s || fputs(s, x->out) == EOF || fputc('\n', x->out) == EOF) {
        x->failed = 1;
        return;
    }
    x->n[t]++;
}

#define COL(i) as_db_col(db, row, i)
#define X_BATCH 2000

static int export_batch(exporter *x, int64_t lo, int64_t hi)
{
    as_db *db = x->db;
    const char *a[] = {as_db_i64s(db, lo), as_db_i64s(db, hi)};
    /* each part of the range read whole, then written product by product */
    static const char *const labels[] = {L_FEED_X_SPECS, L_FEED_X_OFFERS, L_FEED_X_COMPAT};
    json_t *parts[3];
    for (size_t k = 0; k < 3; k++) {
        parts[k] = json_array();
        apr_dbd_results_t *res;
        apr_dbd_row_t *row = NULL;
        if (as_db_select(db, labels[k], &res, 2, a)) {
            for (size_t j = 0; j <= k; j++)
                json_decref(parts[j]);
            return -1;
        }
        while (as_db_next(db, res, &row)) {
            json_t *o;
            if (k == 0)
                o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:f}", "pid",
                              (json_int_t)as_db_i64(COL(0)), "spec", COL(1), "label", COL(2),
                              "kind", COL(3), "unit", COL(4) ? json_string(COL(4)) : json_null(),
                              "claimed", parsed(COL(5), json_null()), "measured",
                              parsed(COL(6), json_null()), "tolerance_pct", as_db_dbl(COL(7)));
            else if (k == 1)
                o = json_pack("{s:I, s:s, s:s, s:I, s:I, s:s, s:I, s:I}", "pid",
                              (json_int_t)as_db_i64(COL(0)), "offer_id", COL(1), "merchant",
                              COL(2), "price_cents", (json_int_t)as_db_i64(COL(3)),
                              "retail_price_cents", (json_int_t)as_db_i64(COL(4)), "price_label",
                              COL(5), "delivery_days", (json_int_t)as_db_i64(COL(6)), "stock",
                              (json_int_t)as_db_i64(COL(7)));
            else
                o = json_pack("{s:I, s:s, s:s, s:s, s:o}", "pid", (json_int_t)as_db_i64(COL(0)),
                              "device", COL(1), "fit_status", COL(2), "checked_at", COL(3),
                              "evidence", parsed(COL(4), json_array()));
            if (!o) x->failed = 1;
            else json_array_append_new(parts[k], o);
        }
    }
    size_t at[3] = {0, 0, 0};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    if (as_db_select(db, L_FEED_X_PRODUCTS, &res, 2, a)) {
        for (size_t k = 0; k < 3; k++)
            json_decref(parts[k]);
        return -1;
    }
    while (as_db_next(db, res, &row)) {
        int64_t pid = as_db_i64(COL(0));
        const char *sku = COL(1);
        /* the rows of products left out (withdrawn) are passed over */
        json_t *specs = json_array(), *values = json_object(), *offers = json_array(),
               *compat = json_array();
        json_t *lists[3] = {specs, offers, compat};
        for (size_t k = 0; k < 3; k++)
            for (; at[k] < json_array_size(parts[k]); at[k]++) {
                json_t *o = json_array_get(parts[k], at[k]);
                int64_t of = json_integer_value(json_object_get(o, "pid"));
                if (of > pid) break;
                if (of < pid) continue;
                json_object_del(o, "pid");
                if (k == 0) {
                    json_t *mv = json_object_get(o, "measured");
                    if (!json_is_null(mv))
                        json_object_set(values, str(o, "spec"), mv);
                    json_object_del(o, "measured");
                }
                json_array_append(lists[k], o);
            }
        json_t *p = json_pack("{s:s, s:s}", "type", "product", "sku", sku);
        if (COL(2)) json_object_set_new(p, "gtin", json_string(COL(2)));
        static const char *const texts[] = {"name", "brand", "category", "part_type", "description"};
        for (size_t i = 0; i < 5; i++)
            json_object_set_new(p, texts[i], json_string(COL(3 + (int)i) ? COL(3 + (int)i) : ""));
        json_object_set_new(p, "image_urls", parsed(COL(8), json_array()));
        json_object_set_new(p, "source",
                            json_pack("{s:s, s:o, s:s, s:s, s:s}", "url", COL(9), "notes",
                                      parsed(COL(10), json_array()), "checked_at", COL(11),
                                      "product_id", COL(12), "availability", COL(13)));
        json_object_set_new(p, "specs", specs);
        json_object_set_new(
            p, "performance",
            json_pack("{s:o, s:f, s:f, s:I, s:o}", "on_time_rate_90d",
                      COL(18) ? json_real(as_db_dbl(COL(18))) : json_null(), "return_rate",
                      as_db_dbl(COL(19)), "wrong_item_rate", as_db_dbl(COL(20)),
                      "agent_orders_90d", (json_int_t)as_db_i64(COL(21)), "orders_per_week",
                      parsed(COL(22), json_array())));
        if (as_db_i64(COL(14))) json_object_set_new(p, "demo", json_true());
        const char *measured_at = COL(15), *node = COL(16);
        int64_t sample = as_db_i64(COL(17));
        emit(x, p, AS_FEED_PRODUCT);
        for (size_t i = 0; i < json_array_size(offers); i++) {
            json_t *o = json_array_get(offers, i);
            json_object_set_new(o, "type", json_string("offer"));
            json_object_set_new(o, "sku", json_string(sku));
            emit(x, json_incref(o), AS_FEED_OFFER);
        }
        json_decref(offers);
        if (measured_at)
            emit(x,
                 json_pack("{s:s, s:s, s:s, s:s, s:I, s:O}", "type", "measurement", "sku", sku,
                           "lab", node ? node : "", "measured_at", measured_at, "sample_size",
                           (json_int_t)sample, "values", values),
                 AS_FEED_MEASUREMENT);
        json_decref(values);
        for (size_t i = 0; i < json_array_size(compat); i++) {
            json_t *o = json_array_get(compat, i);
            json_object_set_new(o, "type", json_string("compatibility"));
            json_object_set_new(o, "sku", json_string(sku));
            emit(x, json_incref(o), AS_FEED_COMPAT);
        }
        json_decref(compat);
    }
    for (size_t k = 0; k < 3; k++)
        json_decref(parts[k]);
    return x->failed ? -1 : 0;
}

apr_status_t as_feed_export(as_db *db, const as_feed_rules *rules, FILE *out, json_t **summary,
                            const char **err)
{
    apr_pool_t *outer = db->pool, *p;
    apr_pool_create(&p, outer);
    exporter x = {db, rules, out, as_db_pool_mem(p), {0}, 0};
    apr_dbd_results_t *res;
    apr_dbd_row_t *row = NULL;
    int rc = as_db_select(db, L_FEED_X_MERCHANTS, &res, 0, NULL);
    while (!rc && as_db_next(db, res, &row))
        emit(&x,
             json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f}", "type", "merchant", "id", COL(0),
                       "name", COL(1), "country", COL(2), "city", COL(3), "on_time_rate",
                       as_db_dbl(COL(4)), "accuracy_rate", as_db_dbl(COL(5))),
             AS_FEED_MERCHANT);
    row = NULL;
    if (!rc) rc = as_db_select(db, L_FEED_X_DEVICES, &res, 0, NULL);
    while (!rc && as_db_next(db, res, &row)) {
        json_t *al = json_array();
        const char *s = COL(4) ? COL(4) : "";
        while (*s) {
            const char *e = strchr(s, '\n');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            if (n) json_array_append_new(al, json_stringn(s, n));
            s += n + (e ? 1 : 0);
        }
        emit(&x,
             json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "type", "device", "slug", COL(0), "name",
                       COL(1), "brand", COL(2), "kind", COL(3), "aliases", al),
             AS_FEED_DEVICE);
    }
    int64_t max = 0;
    row = NULL;
    if (!rc) rc = as_db_select(db, L_FEED_MAX_PRODUCT, &res, 0, NULL);
    while (!rc && as_db_next(db, res, &row))
        max = as_db_i64(COL(0));
    for (int64_t lo = 0; !rc && !x.failed && lo < max; lo += X_BATCH) {
        apr_pool_t *batch;
        apr_pool_create(&batch, p);
        db->pool = batch;
        rc = export_batch(&x, lo, lo + X_BATCH);
        db->pool = outer;
        apr_pool_destroy(batch);
    }
    if (!rc && !x.failed && fflush(out) != 0) x.failed = 1;
    apr_status_t rv = APR_SUCCESS;
    if (rc || x.failed) {
        *err = x.failed ? "writing the records failed" : "reading the catalogue failed";
        rv = APR_EGENERAL;
    } else {
        *summary = counts(x.n);
    }
    apr_pool_destroy(p);
    return rv;
}
