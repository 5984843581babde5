/* The product view's read (docs/storage.md, "Statements"): everything
 * GET /products/{sku} is built from, and the version that validates a kept
 * view, in one statement, so one read and one snapshot. A row per thing, its
 * kind in column 0 (PV_*), what orders the rows of a kind in columns 1-3, the
 * values from column 4 on.
 *
 * On SQLite the statement runs on the connection's own sqlite3 handle
 * (sql/as_db_native.c), not through apr_dbd: its driver copies every column
 * of every row (30 of them, mostly NULL, each two more calls that take
 * SQLite's mutex) and runs every
 * call under one mutex per process; values are read as they are stored
 * (integers and reals without text between). Each connection is still used by
 * one request at a time; SQLite itself is built thread-safe (checked: without
 * that, apr_dbd's statement and its mutex are used). SQLite gives a part's
 * rows in the order of the index it reads, so they are put in the order ORDER
 * BY would give (BINARY is strcmp) as they come, which costs less than
 * SQLite's sorter; PostgreSQL sorts them itself, in its collation. */
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

#include "as_db_private.h"

/* Columns 4 on, in each part's terms. C(x): x on SQLite, CAST(x AS TEXT) on
 * PostgreSQL, whose UNION wants one type per column. */
// clang-format off
#define N5 "NULL, NULL, NULL, NULL, NULL"
#define N10 N5 ", " N5
#define SQLITE_COL(x) x
#define PG_TEXT(x) "CAST(" x " AS TEXT)"
/* the product's columns (4-29), with GUARANTEE (as_product.guarantee) in 15,
 * and a spec row's */
#define GUARANTEE                                                                                  \
    "CASE WHEN EXISTS (SELECT 1 FROM compat g WHERE g.product_id = p.id AND g.fit_status = "       \
    "'fits') THEN '1' ELSE '0' END"
#define PRODUCT_COLS_WITH(C, GUARANTEE_COL)                                                        \
    C("p.id") ", p.sku, p.name, p.brand, p.category, p.part_type, p.image_urls, p.availability, "  \
    "p.verif_status, p.verif_note, " C("p.return_rate") ", " GUARANTEE_COL ", "                    \
    "p.gtin, p.description, p.source_url, p.source_notes, p.source_checked_at, "                   \
    "p.source_product_id, " C("p.is_demo") ", p.measured_at, p.measured_node, "                    \
    C("p.sample_size") ", " C("p.on_time_rate_90d") ", " C("p.wrong_item_rate") ", "               \
    C("p.agent_orders_90d") ", p.orders_per_week"
#define PRODUCT_COLS(C) PRODUCT_COLS_WITH(C, GUARANTEE)
#define SPEC_COLS(C)                                                                               \
    "s.spec, s.label, s.kind, s.unit, s.claimed, s.measured, " C("s.tolerance_pct") ", " N10       \
    ", " N5 ", NULL, NULL, NULL, NULL"
/* A view shows the product's latest questions (AS_VIEW_QUESTIONS, by
 * questions_product) and, on each of their rows, how many it has in all (in
 * column 1: a number where the other rows have numbers there, as text in
 * PRODUCT_LIVE, whose column 1 is otherwise NULL, which PostgreSQL's UNION
 * takes for text). */
#define LATEST_QUESTIONS(SKU)                                                                      \
    "(SELECT x.* FROM products p JOIN questions x ON x.product_id = p.id WHERE p.sku = " SKU       \
    " ORDER BY x.asked_at DESC, x.id DESC LIMIT " AS_STR(AS_VIEW_QUESTIONS) ") q"
#define QUESTIONS_TOTAL "(SELECT COUNT(*) FROM questions t WHERE t.product_id = q.product_id)"
#define PRODUCT_VIEW(C, SKU)                                                                       \
    "SELECT 0, COALESCE(v.version, 0), COALESCE((SELECT value FROM meta WHERE key = "              \
    "'catalogue_version'), ''), NULL, " PRODUCT_COLS(C) " FROM products p LEFT JOIN "              \
    "product_versions v ON v.product_id = p.id WHERE p.sku = " SKU                                 \
    " UNION ALL SELECT 1, s.pos, NULL, NULL, " SPEC_COLS(C) " "                                    \
    "FROM products p JOIN product_specs s ON s.product_id = p.id WHERE p.sku = " SKU               \
    " UNION ALL SELECT 2, NULL, o.id, NULL, o.id, " C("o.price_cents") ", "                        \
    C("o.retail_price_cents") ", o.price_label, " C("o.delivery_days") ", " C("o.stock") ", "      \
    "m.id, m.name, m.country, m.city, " C("m.on_time_rate") ", " C("m.accuracy_rate") ", " N10     \
    ", NULL, NULL, NULL, NULL FROM products p JOIN offers o ON o.product_id = p.id AND "         \
    "o.withdrawn_at IS NULL "                                                                     \
    "JOIN merchants m ON m.id = o.merchant_id WHERE p.sku = " SKU                                  \
    " UNION ALL SELECT 3, " QUESTIONS_TOTAL ", q.asked_at, q.id, q.id, q.question, q.answer, "     \
    "q.asked_at, " N10 ", " N10 ", NULL, NULL FROM " LATEST_QUESTIONS(SKU)
/* The products of the search index's read (st_index_rows, as_db_index_products)
 * by two statements for an id range (lo < id <= hi), each in the order of its
 * table's key, matched by the product's id (column 3) as they are read: the
 * products, then their spec rows, in read_row's columns (the catalogue part of
 * each view), each product's row followed by its product_rank row's columns
 * (30-35: hidden, buyable, score, price_cents, days, return_rate), which the
 * index ranks by. One read gives the index and the views what they keep of a
 * product: as two (the index's row and spec rows, then the views'), every
 * product and spec row was read twice, and PostgreSQL wrote each out as text
 * twice. As one statement (a UNION ALL ordered by product), PostgreSQL sorted
 * each batch's 20,000 rows in parallel workers: 44 of a batch's ms at
 * 1,000,000 products. The guarantee is not read ('0'): the index has it from
 * the compat rows it reads, and on PostgreSQL its EXISTS was a hashed subplan
 * that read every fitting compat row of the catalogue again for each batch of
 * products. The range is given twice (lo, hi, lo, hi), for the products and
 * for their product_rank rows: with the range on products alone PostgreSQL
 * joined product_rank by a hash of the whole table, read again for each
 * batch. */
#define INDEX_PRODUCTS(C)                                                                          \
    "SELECT 0, NULL, NULL, p.id, " PRODUCT_COLS_WITH(C, "'0'") ", r.hidden, r.buyable, r.score, "  \
    "r.price_cents, r.days, r.return_rate FROM products p JOIN product_rank r ON "               \
    "r.product_id = p.id WHERE p.id > %lld AND p.id <= %lld AND r.product_id > %lld AND "        \
    "r.product_id <= %lld AND p.withdrawn_at IS NULL ORDER BY p.id"
#define VIEW_SPECS(C)                                                                              \
    "SELECT 1, s.pos, NULL, s.product_id, " SPEC_COLS(C) " FROM product_specs s WHERE "            \
    "s.product_id > %lld AND s.product_id <= %lld ORDER BY s.product_id, s.pos"
/* The live part of a view, by sku (st_product_live): the search index's
 * versions (as as_version_get), the product's id, its offers' stock, its
 * questions (as in PRODUCT_VIEW). */
#define LIVE_VERSIONS                                                                              \
    "SELECT 6, NULL, NULL, NULL, (SELECT value FROM meta WHERE key = 'search_catalogue'), "        \
    "(SELECT value FROM meta WHERE key = 'search_rank'), (SELECT value FROM meta WHERE key = "    \
    "'live_seq'), NULL"
#define LIVE_QUESTIONS(C)                                                                          \
    " UNION ALL SELECT 3, " C(QUESTIONS_TOTAL) ", q.asked_at, q.id, q.id, q.question, q.answer, "  \
    "q.asked_at FROM "
#define PRODUCT_LIVE(C, SKU)                                                                       \
    LIVE_VERSIONS " UNION ALL SELECT 7, NULL, NULL, NULL, " C("p.id") ", NULL, NULL, NULL FROM "   \
    "products p WHERE p.sku = " SKU " UNION ALL SELECT 5, NULL, o.id, NULL, o.id, " C("o.stock")   \
    ", NULL, NULL FROM products p JOIN offers o ON o.product_id = p.id AND o.withdrawn_at IS NULL "\
    "WHERE p.sku = " SKU                                                                          \
    LIVE_QUESTIONS(C) LATEST_QUESTIONS(SKU)
/* and by the product's id, for a view that found it in the search index: no
 * lookup of the sku (three in the statement above) */
#define PRODUCT_LIVE_ID(C)                                                                         \
    LIVE_VERSIONS " UNION ALL SELECT 7, NULL, NULL, NULL, " C("p.id") ", NULL, NULL, NULL FROM "   \
    "products p WHERE p.id = %lld AND p.withdrawn_at IS NULL UNION ALL SELECT 5, NULL, o.id, NULL, "\
    "o.id, " C("o.stock") ", NULL, NULL FROM offers o WHERE o.product_id = %lld AND "              \
    "o.withdrawn_at IS NULL" LIVE_QUESTIONS(C) "(SELECT x.* FROM "   \
    "questions x WHERE x.product_id = %lld ORDER BY x.asked_at DESC, x.id DESC LIMIT "             \
    AS_STR(AS_VIEW_QUESTIONS) ") q"
/* and, for a device, its compatibility row */
#define PRODUCT_VIEW_DEVICE(C, SKU, DEV)                                                           \
    PRODUCT_VIEW(C, SKU) " UNION ALL SELECT 4, NULL, NULL, NULL, d.slug, d.name, c.fit_status, "   \
    "c.evidence, c.checked_at, " N10 ", " N10 ", NULL FROM products p JOIN compat c ON "           \
    "c.product_id = p.id JOIN devices d ON d.id = c.device_id AND d.withdrawn_at IS NULL WHERE "  \
    "p.sku = " SKU " AND "                                                                         \
    "c.device_id = " DEV
// clang-format on
/* A product sold by that sku: a withdrawn one (docs/catalogue.md) has no
 * view, while its orders keep theirs (they read it by id). */
#define SOLD_SKU "%s AND p.withdrawn_at IS NULL"
enum { PV_PRODUCT, PV_SPEC, PV_OFFER, PV_QUESTION, PV_COMPAT, PV_STOCK, PV_VERSIONS, PV_ID };

/* What a product's view is built from has changed when this has (the triggers
 * on offers and questions raise product_versions.version; a catalogue load
 * changes catalogue_version). Read alone for a view a process keeps. */
// clang-format off
#define PRODUCT_VERSION(SKU)                                                                       \
    "SELECT p.id, COALESCE(v.version, 0), COALESCE((SELECT value FROM meta WHERE key = "           \
    "'catalogue_version'), '') FROM products p LEFT JOIN product_versions v ON v.product_id = "    \
    "p.id WHERE p.sku = " SKU
// clang-format on

/* in the order of NV_* (below), by which as_db_native_view finds them */
const stmt_def as_db_view_stmts[] = {
    {L_AS_PRODUCT_VIEW, PRODUCT_VIEW(SQLITE_COL, SOLD_SKU),
     PRODUCT_VIEW(PG_TEXT, SOLD_SKU) " ORDER BY 1, 2, 3, 4"},
    {L_AS_PRODUCT_VIEW_DEVICE, PRODUCT_VIEW_DEVICE(SQLITE_COL, SOLD_SKU, "%lld"),
     PRODUCT_VIEW_DEVICE(PG_TEXT, SOLD_SKU, "%lld") " ORDER BY 1, 2, 3, 4"},
    {L_AS_PRODUCT_VERSION, PRODUCT_VERSION(SOLD_SKU), NULL},
    {L_AS_INDEX_PRODUCTS, INDEX_PRODUCTS(SQLITE_COL), INDEX_PRODUCTS(PG_TEXT)},
    {L_AS_VIEW_SPECS, VIEW_SPECS(SQLITE_COL), VIEW_SPECS(PG_TEXT)},
    {L_AS_PRODUCT_LIVE, PRODUCT_LIVE(SQLITE_COL, SOLD_SKU),
     PRODUCT_LIVE(PG_TEXT, SOLD_SKU) " ORDER BY 1, 2, 3, 4"},
    {L_AS_PRODUCT_LIVE_ID, PRODUCT_LIVE_ID(SQLITE_COL),
     PRODUCT_LIVE_ID(PG_TEXT) " ORDER BY 1, 2, 3, 4"},
};
const size_t as_db_n_view_stmts = sizeof(as_db_view_stmts) / sizeof(as_db_view_stmts[0]);

/* ---- the rows into an as_product ---- */

typedef struct view_read {
    as_mem *m;
    as_product *p;
    bool sorted;  /* the rows come in order (PostgreSQL) */
    bool found;   /* the product's row was read */
    bool index;   /* for the search index, which keeps no view's version */
    int64_t *pos; /* the spec rows' positions, while ordering them */
    size_t cap_s, cap_o, cap_q;
} view_read;

static void add_spec(view_read *r, int64_t at, const as_spec_row *sr)
{
    as_product *p = r->p;
    size_t cap = r->cap_s; /* pos grows with specs */
    p->specs = as_db_grow(r->m, p->specs, &r->cap_s, p->n_specs, sizeof(*sr));
    r->pos = as_db_grow(r->m, r->pos, &cap, p->n_specs, sizeof(int64_t));
    size_t i = p->n_specs++;
    for (; !r->sorted && i > 0 && at < r->pos[i - 1]; i--) {
        p->specs[i] = p->specs[i - 1];
        r->pos[i] = r->pos[i - 1];
    }
    p->specs[i] = *sr;
    r->pos[i] = at;
}

static void add_offer(view_read *r, const as_offer *o)
{
    as_product *p = r->p;
    p->offers = as_db_grow(r->m, p->offers, &r->cap_o, p->n_offers, sizeof(*o));
    size_t i = p->n_offers++;
    for (; !r->sorted && i > 0 && strcmp(o->id, p->offers[i - 1].id) < 0; i--)
        p->offers[i] = p->offers[i - 1];
    p->offers[i] = *o;
}

static bool asked_before(const as_question *x, const as_question *y)
{
    int c = strcmp(x->asked_at, y->asked_at);
    return c < 0 || (c == 0 && strcmp(x->id, y->id) < 0);
}

static void add_question(view_read *r, const as_question *q)
{
    as_product *p = r->p;
    p->questions = as_db_grow(r->m, p->questions, &r->cap_q, p->n_questions, sizeof(*q));
    size_t i = p->n_questions++;
    for (; !r->sorted && i > 0 && asked_before(q, &p->questions[i - 1]); i--)
        p->questions[i] = p->questions[i - 1];
    p->questions[i] = *q;
}

#define T(c) x->text(x->src, c)
#define I(c) x->i64(x->src, c)
#define D(c) x->dbl(x->src, c)

static void read_row(view_read *r, const cells *x)
{
    as_product *p = r->p;
    switch ((int)I(0)) {
    case PV_PRODUCT:
        if (r->found) break;
        r->found = true;
        p->id = I(4);
        p->sku = T(5);
        p->name = T(6);
        p->brand = T(7);
        p->category = T(8);
        p->part_type = T(9);
        p->image_urls = T(10);
        p->availability = T(11);
        p->verif_status = as_verif_parse(T(12));
        p->verif_note = T(13);
        p->return_rate = D(14);
        p->guarantee = as_db_bool(T(15));
        p->gtin = T(16);
        p->description = T(17);
        p->source_url = T(18);
        p->source_notes = T(19);
        p->source_checked_at = T(20);
        p->source_product_id = T(21);
        p->is_demo = as_db_bool(T(22));
        p->measured_at = T(23);
        p->measured_node = T(24);
        p->sample_size = I(25);
        p->has_on_time = !x->null(x->src, 26);
        p->on_time_rate_90d = D(26);
        p->wrong_item_rate = D(27);
        p->agent_orders_90d = I(28);
        p->orders_per_week = T(29);
        if (!r->index) /* a kept view's validator (as_view_cache) */
            p->version = as_printf(r->m, "%s/%lld/%lld", T(2) ? T(2) : "", (long long)p->id,
                                   (long long)I(1));
        break;
    case PV_SPEC: {
        as_spec_row s = {T(4), T(5), T(6), T(7), T(8), T(9), D(10)};
        add_spec(r, I(1), &s);
        break;
    }
    case PV_OFFER: {
        as_offer o = {.id = T(4),
                      .price_cents = I(5),
                      .retail_price_cents = I(6),
                      .price_label = T(7),
                      .delivery_days = (int)I(8),
                      .stock = I(9),
                      .merchant = {T(10), T(11), T(12), T(13), D(14), D(15)}};
        add_offer(r, &o);
        break;
    }
    case PV_QUESTION: {
        as_question q = {T(4), T(5), T(6), T(7)};
        add_question(r, &q);
        p->questions_total = I(1);
        break;
    }
    case PV_COMPAT:
        if (p->compat) break;
        p->compat = as_alloc(r->m, sizeof(*p->compat));
        *p->compat = (as_compat){T(4), T(5), as_fit_parse(T(6)), T(7), T(8)};
        break;
    }
}

#undef T
#undef I
#undef D

/* The statements of as_db_view_stmts, by index. */
enum { NV_VIEW, NV_VIEW_DEVICE, NV_VERSION, NV_INDEX_PRODUCTS, NV_VIEW_SPECS, NV_LIVE, NV_LIVE_ID };

static void view_row(void *baton, const cells *x)
{
    read_row(baton, x);
}

/* ---- the as_store functions ---- */

int st_product_by_sku(void *h, as_mem *m, const char *sku, int64_t device_id, as_product *p)
{
    as_db *db = h;
    memset(p, 0, sizeof(*p));
    view_read r = {.m = m, .p = p, .sorted = db->pg};
    int which = device_id > 0 ? NV_VIEW_DEVICE : NV_VIEW;
    const char *label = as_db_view_stmts[which].label;
    struct sqlite3_stmt *st = as_db_native_view(db, which);
    if (st) {
        if (as_db_native_run(db, st, m, label, sku, &device_id, 1, view_row, &r)) return AS_EDB;
    } else {
        apr_dbd_results_t *res;
        const char *a[] = {sku, sku, sku, sku, sku, as_db_i64s(db, device_id)};
        if (as_db_select(db, label, &res, which == NV_VIEW_DEVICE ? 6 : 4, a)) return AS_EDB;
        as_db_dbd_each(db, res, view_row, &r);
    }
    return r.found ? AS_OK : AS_ENOTFOUND;
}

typedef struct version_read {
    as_mem *m;
    const char *out;
} version_read;

/* catalogue/rank/live: the version a kept view is valid for */
static void version_row(void *baton, const cells *x)
{
    version_read *v = baton;
    const char *cat = x->text(x->src, 2);
    if (!v->out)
        v->out = as_printf(v->m, "%s/%lld/%lld", cat ? cat : "", (long long)x->i64(x->src, 0),
                           (long long)x->i64(x->src, 1));
}

int st_product_version(void *h, as_mem *m, const char *sku, const char **out)
{
    as_db *db = h;
    version_read v = {m, NULL};
    struct sqlite3_stmt *st = as_db_native_view(db, NV_VERSION);
    if (st) {
        if (as_db_native_run(db, st, m, L_AS_PRODUCT_VERSION, sku, NULL, 0, version_row, &v))
            return AS_EDB;
    } else {
        apr_dbd_results_t *res;
        apr_dbd_row_t *row = NULL;
        const char *a[] = {sku};
        if (as_db_select(db, L_AS_PRODUCT_VERSION, &res, 1, a)) return AS_EDB;
        while (as_db_next(db, res, &row))
            if (!v.out)
                v.out = as_printf(m, "%s/%s/%s", as_db_col(db, row, 2) ? as_db_col(db, row, 2) : "",
                                  as_db_col(db, row, 0), as_db_col(db, row, 1));
    }
    *out = v.out;
    return v.out ? AS_OK : AS_ENOTFOUND;
}

/* ---- the products of the search index's read ---- */

/* One batch's products (views, on m) and their index rows as they are read;
 * then their spec rows, each to the product of its id (column 3): both
 * statements in id order. */
typedef struct rows_read {
    as_mem m;
    as_product *views;
    as_index_row *rows;
    size_t n, cap, cap_rows;
    size_t at;   /* the spec rows' product, or n before the first */
    view_read r; /* that product's */
} rows_read;

static void index_product(void *baton, const cells *c)
{
    rows_read *x = baton;
    x->views = as_db_grow(&x->m, x->views, &x->cap, x->n, sizeof(as_product));
    x->rows = as_db_grow(&x->m, x->rows, &x->cap_rows, x->n, sizeof(as_index_row));
    as_product *p = &x->views[x->n];
    memset(p, 0, sizeof(*p));
    view_read r = {.m = &x->m, .p = p, .sorted = true, .index = true};
    read_row(&r, c);
    as_rank_row rank = {c->flag(c->src, 31), c->i64(c->src, 32), c->i64(c->src, 33),
                        c->i64(c->src, 34), c->dbl(c->src, 35), NULL};
    as_index_row *row = &x->rows[x->n++];
    *row = as_index_row_of(p);
    row->hidden = c->flag(c->src, 30);
    row->rank = rank;
}

static void index_spec(void *baton, const cells *c)
{
    rows_read *x = baton;
    int64_t id = c->i64(c->src, 3);
    if (x->at < x->n && x->views[x->at].id == id) {
        read_row(&x->r, c);
        return;
    }
    size_t at = x->at < x->n ? x->at : 0;
    while (at < x->n && x->views[at].id < id) /* products without spec rows */
        at++;
    if (at == x->n || x->views[at].id != id) return; /* a withdrawn product's */
    x->at = at;
    x->r =
        (view_read){.m = &x->m, .p = &x->views[at], .sorted = true, .found = true, .index = true};
    read_row(&x->r, c);
}

bool as_db_index_products(as_db *db, as_mem *m, int64_t lo, int64_t hi, as_index_row **rows,
                          size_t *n)
{
    rows_read x = {.m = *m};
    const int64_t ids[] = {lo, hi, lo, hi};
    if (as_db_each_row(db, &x.m, L_AS_INDEX_PRODUCTS, ids, 4, index_product, &x) != AS_OK)
        return false;
    x.at = x.n;
    if (as_db_each_row(db, &x.m, L_AS_VIEW_SPECS, ids, 2, index_spec, &x) != AS_OK) return false;
    for (size_t i = 0; i < x.n; i++) { /* the views have their spec rows now */
        x.rows[i].specs = x.views[i].specs;
        x.rows[i].n_specs = x.views[i].n_specs;
        x.rows[i].view = &x.views[i];
    }
    *rows = x.rows;
    *n = x.n;
    return true;
}

/* ---- the live part of a view ---- */

typedef struct live_read {
    view_read r; /* the questions, into r.p */
    as_product p;
    as_product_live *out;
    size_t cap;
} live_read;

static void live_row(live_read *l, const cells *c)
{
    as_product_live *out = l->out;
    switch ((int)c->i64(c->src, 0)) {
    case PV_VERSIONS:
        out->version = (as_search_version){c->i64(c->src, 4), c->i64(c->src, 5),
                                           c->i64(c->src, 6)};
        break;
    case PV_ID:
        out->product_id = c->i64(c->src, 4);
        break;
    case PV_STOCK: {
        out->stock = as_db_grow(l->r.m, out->stock, &l->cap, out->n_stock, sizeof(*out->stock));
        out->stock[out->n_stock++] = (as_offer_stock){0, c->text(c->src, 4), c->i64(c->src, 5)};
        break;
    }
    default:
        read_row(&l->r, c);
    }
}

static void live_cells(void *baton, const cells *c)
{
    live_row(baton, c);
}

int st_product_live(void *h, as_mem *m, const char *sku, int64_t product_id,
                    as_product_live *out)
{
    as_db *db = h;
    memset(out, 0, sizeof(*out));
    live_read l = {.out = out};
    l.r = (view_read){.m = m, .p = &l.p, .sorted = db->pg};
    bool by_id = product_id > 0;
    const char *label = by_id ? L_AS_PRODUCT_LIVE_ID : L_AS_PRODUCT_LIVE;
    int64_t ids[] = {product_id, product_id, product_id};
    struct sqlite3_stmt *st = as_db_native_view(db, by_id ? NV_LIVE_ID : NV_LIVE);
    if (st) {
        if (as_db_native_run(db, st, m, label, by_id ? NULL : sku, ids, by_id ? 3 : 0, live_cells,
                             &l))
            return AS_EDB;
    } else {
        apr_dbd_results_t *res;
        const char *id = as_db_i64s(db, product_id);
        const char *a[] = {by_id ? id : sku, by_id ? id : sku, by_id ? id : sku};
        if (as_db_select(db, label, &res, 3, a)) return AS_EDB;
        as_db_dbd_each(db, res, live_cells, &l);
    }
    for (size_t i = 0; i < out->n_stock; i++)
        out->stock[i].product_id = out->product_id;
    out->questions = l.p.questions;
    out->n_questions = l.p.n_questions;
    out->questions_total = l.p.questions_total;
    return AS_OK;
}
