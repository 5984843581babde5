/* The fake store (fake_store.h). */
#include "fake_store.h"

#include <stdlib.h>
#include <string.h>

#include "as_rank.h"

static const as_compat *fake_compat_for(const fake_db *db, const char *sku, int64_t device_id)
{
    if (device_id <= 0) return NULL;
    for (size_t i = 0; i < db->n_compat; i++)
        if (db->compat[i].device_id == device_id && strcmp(db->compat[i].sku, sku) == 0)
            return &db->compat[i].row;
    return NULL;
}

/* An offer's stock: as writes left it (db->live), else its own. */
static int64_t fake_stock(const fake_db *db, const as_offer *o)
{
    int64_t *live = db->live ? fake_live_stock((fake_db *)db, o->id, NULL) : NULL;
    return live ? *live : o->stock;
}

/* A copy of p on m, so core never sees the static arrays themselves, with
 * the stock as writes left it. */
static void fake_copy_product(as_mem *m, const fake_db *db, const as_product *p, int64_t device_id,
                              as_product *out)
{
    *out = *p;
    out->offers = as_alloc(m, (p->n_offers + 1) * sizeof(as_offer));
    if (p->n_offers) memcpy(out->offers, p->offers, p->n_offers * sizeof(as_offer));
    for (size_t k = 0; k < p->n_offers; k++)
        out->offers[k].stock = fake_stock(db, &p->offers[k]);
    out->specs = as_alloc(m, (p->n_specs + 1) * sizeof(as_spec_row));
    if (p->n_specs) memcpy(out->specs, p->specs, p->n_specs * sizeof(as_spec_row));
    out->questions = as_alloc(m, (p->n_questions + 1) * sizeof(as_question));
    if (p->n_questions) memcpy(out->questions, p->questions, p->n_questions * sizeof(as_question));
    const as_compat *c = fake_compat_for(db, p->sku, device_id);
    if (c) {
        as_compat *cc = as_alloc(m, sizeof(*cc));
        *cc = *c;
        out->compat = cc;
    } else {
        out->compat = NULL;
    }
}

static int fake_merchants(void *h, as_mem *m, as_merchant **out, size_t *n)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_MERCHANTS);
    as_merchant *r = as_alloc(m, (db->n_merchants + 1) * sizeof(*r));
    if (db->n_merchants) memcpy(r, db->merchants, db->n_merchants * sizeof(*r));
    *out = r;
    *n = db->n_merchants;
    return AS_OK;
}

static int fake_devices(void *h, as_mem *m, as_device **out, size_t *n)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_DEVICES);
    as_device *r = as_alloc(m, (db->n_devices + 1) * sizeof(*r));
    if (db->n_devices) memcpy(r, db->devices, db->n_devices * sizeof(*r));
    *out = r;
    *n = db->n_devices;
    return AS_OK;
}

static int fake_device_by_slug(void *h, as_mem *m, const char *slug, as_device *out)
{
    (void)m;
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_DEVICE_BY_SLUG);
    FAKE_ASSERT(slug, "device_by_slug(NULL)");
    for (size_t i = 0; i < db->n_devices; i++)
        if (strcmp(db->devices[i].slug, slug) == 0) {
            *out = db->devices[i];
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static int fake_product_by_sku(void *h, as_mem *m, const char *sku, int64_t device_id,
                               as_product *out)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_PRODUCT_BY_SKU);
    FAKE_ASSERT(sku, "product_by_sku(NULL)");
    for (size_t i = 0; i < db->n_products; i++)
        if (strcmp(db->products[i].sku, sku) == 0) {
            fake_copy_product(m, db, &db->products[i], device_id, out);
            return AS_OK;
        }
    return AS_ENOTFOUND;
}

static bool fake_matches(const fake_db *db, const as_product *p, const as_search_filter *f)
{
    if (f->part_type && strcmp(f->part_type, p->part_type) != 0) return false;
    return fake_compat_for(db, p->sku, f->device_id) != NULL;
}

static int fake_search(void *h, as_mem *m, const as_search_filter *f, as_product **out, size_t *n)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_SEARCH);
    FAKE_ASSERT(f->device_id > 0, "search: no device");
    as_product *r = as_alloc(m, (db->n_products + 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < db->n_products; i++)
        if (fake_matches(db, &db->products[i], f))
            fake_copy_product(m, db, &db->products[i], f->device_id, &r[k++]);
    *out = r;
    *n = k;
    return AS_OK;
}

/* A device's part as the compatible list orders it: product_rank's key
 * (the default weights' best offer, ranked as st_rank_range ranks it). */
typedef struct fake_compat_key {
    as_product p;
    bool buyable;
    int score;
} fake_compat_key;

static int fake_compat_cmp(const void *a, const void *b)
{
    const fake_compat_key *x = a, *y = b;
    int c = strcmp(x->p.part_type, y->p.part_type);
    if (c) return c;
    if (x->buyable != y->buyable) return x->buyable ? -1 : 1;
    if (x->score != y->score) return y->score - x->score;
    return strcmp(x->p.sku, y->p.sku);
}

/* Left out of the list: what sql/as_db_search.c's COMPAT_LEFT_OUT says. */
static bool fake_left_out(const as_product *p)
{
    return p->verif_status == AS_VERIF_CONTRADICTED || as_fit_of(p) == AS_FIT_DOES_NOT_FIT;
}

static int fake_compatible(void *h, as_mem *m, const as_search_filter *f, int64_t limit,
                           int64_t offset, size_t max_excluded, as_compat_page *out)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_COMPATIBLE);
    FAKE_ASSERT(f->device_id > 0 && limit > 0 && offset >= 0, "compatible: no device or page");
    memset(out, 0, sizeof(*out));
    fake_compat_key *keys = as_alloc(m, (db->n_products + 1) * sizeof(*keys));
    out->excluded = as_alloc(m, (max_excluded + 1) * sizeof(as_product));
    size_t k = 0;
    as_weights w;
    as_weights_default(&w);
    for (size_t i = 0; i < db->n_products; i++) { /* by id, as the products are */
        if (!fake_matches(db, &db->products[i], f)) continue;
        as_product p;
        fake_copy_product(m, db, &db->products[i], f->device_id, &p);
        if (fake_left_out(&p)) {
            if (out->n_excluded < max_excluded) out->excluded[out->n_excluded++] = p;
            out->excluded_count++;
            continue;
        }
        as_ranking r;
        as_rank_offers_brief(m, &p, &w, NULL, 0, &r);
        keys[k++] = (fake_compat_key){p, r.n_ranked > 0, r.n_ranked ? r.ranked[0].score : 0};
    }
    qsort(keys, k, sizeof(*keys), fake_compat_cmp);
    out->count = (int64_t)k;
    out->parts = as_alloc(m, ((size_t)limit + 1) * sizeof(as_product));
    for (size_t i = (size_t)offset; i < k && out->n < (size_t)limit; i++)
        out->parts[out->n++] = keys[i].p;
    return AS_OK;
}

/* ---- The text index's sources, as sql/as_db_search.c gives them ---- */

/* The index's versions: the rank version as writes raised it, and the highest
 * one answered kept in rank_seen. */
static as_search_version fake_version(fake_db *db)
{
    as_search_version v = db->version;
    if (db->live) v.rank = db->live->rank;
    if (v.rank > db->rank_seen) db->rank_seen = v.rank;
    return v;
}

static int fake_search_version(void *h, as_search_version *out)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_SEARCH_VERSION);
    *out = fake_version(db);
    return AS_OK;
}

static int fake_cmp_product(const void *a, const void *b)
{
    int64_t x = (*(const as_product *const *)a)->id, y = (*(const as_product *const *)b)->id;
    return (x > y) - (x < y);
}

/* The products by id, on m. */
static const as_product **fake_by_id(as_mem *m, const fake_db *db)
{
    const as_product **ps = as_alloc(m, (db->n_products + 1) * sizeof(*ps));
    for (size_t i = 0; i < db->n_products; i++)
        ps[i] = &db->products[i];
    qsort(ps, db->n_products, sizeof(*ps), fake_cmp_product);
    return ps;
}

static int fake_cmp_offer(const void *a, const void *b)
{
    return strcmp((*(const as_offer *const *)a)->id, (*(const as_offer *const *)b)->id);
}

/* A product's offers by id, on m. */
static const as_offer **fake_offers_by_id(as_mem *m, const as_product *p)
{
    const as_offer **os = as_alloc(m, (p->n_offers + 1) * sizeof(*os));
    for (size_t i = 0; i < p->n_offers; i++)
        os[i] = &p->offers[i];
    qsort(os, p->n_offers, sizeof(*os), fake_cmp_offer);
    return os;
}

/* As rank_store in sql/as_db_search.c: default weights, no filter, day 0; p
 * as the store has it now (fake_copy_product). */
static as_rank_row fake_rank_row(as_mem *m, const as_product *p)
{
    as_weights w;
    as_weights_default(&w);
    as_offer_filter none = {0, 0, NULL};
    as_ranking r;
    as_rank_offers_brief(m, p, &w, &none, 0, &r);
    const as_scored *best = r.n_ranked ? &r.ranked[0] : NULL;
    as_rank_row row = {best != NULL,
                       best ? best->score : 0,
                       best ? best->offer->price_cents : 0,
                       best ? best->offer->delivery_days : 0,
                       p->return_rate,
                       NULL};
    return row;
}

bool fake_guarantee(const fake_db *db, const char *sku)
{
    for (size_t i = 0; i < db->n_compat; i++)
        if (strcmp(db->compat[i].sku, sku) == 0 && db->compat[i].row.fit_status == AS_FIT_FITS)
            return true;
    return false;
}

static int fake_cmp_device(const void *a, const void *b)
{
    const as_index_compat *x = a, *y = b;
    return (x->device_id > y->device_id) - (x->device_id < y->device_id);
}

/* Product p's index row into *out, on m (p: as the store has it now,
 * fake_copy_product, on m too). */
static void fake_index_row(const fake_db *db, as_mem *m, const as_product *p, as_index_row *out)
{
    /* the guarantee comes from the compat rows (as_store.h) */
    as_index_row r = as_index_row_of(p);
    r.hidden = p->verif_status == AS_VERIF_CONTRADICTED;
    r.rank = fake_rank_row(m, p);
    for (size_t i = 0; i < p->n_specs; i++)
        FAKE_ASSERT(p->specs[i].label, "product_specs.label is NULL");
    r.specs = p->specs; /* as the SQL store gives them, in the product's order */
    r.n_specs = p->n_specs;
    /* its offers by id, and its compat rows by device, as the SQL store */
    const as_offer **os = fake_offers_by_id(m, p);
    as_index_offer *offers = as_alloc(m, (p->n_offers + 1) * sizeof(*offers));
    for (size_t k = 0; k < p->n_offers; k++) {
        const as_offer *o = os[k];
        offers[k] = (as_index_offer){p->id,
                                     o->id,
                                     o->merchant.id,
                                     o->price_label,
                                     o->price_cents,
                                     o->retail_price_cents,
                                     o->delivery_days,
                                     o->stock > 0,
                                     o->stock};
    }
    r.offers = offers;
    r.n_offers = p->n_offers;
    as_index_compat *compat = as_alloc(m, (db->n_compat + 1) * sizeof(*compat));
    size_t n = 0;
    for (size_t i = 0; i < db->n_compat; i++) {
        const as_compat *c = &db->compat[i].row;
        if (strcmp(db->compat[i].sku, p->sku) == 0)
            compat[n++] =
                (as_index_compat){p->id, db->compat[i].device_id, c->fit_status == AS_FIT_FITS,
                                  c->evidence, c->checked_at};
    }
    qsort(compat, n, sizeof(*compat), fake_cmp_device);
    r.compat = compat;
    r.n_compat = n;
    /* its view: with its specs, without offers, questions or its guarantee */
    as_product *v = as_alloc(m, sizeof(*v));
    *v = *p;
    v->offers = NULL, v->n_offers = 0, v->questions = NULL, v->n_questions = 0;
    v->guarantee = false;
    r.view = v;
    *out = r;
}

/* The products by id, on a new arena (*order, the caller's to destroy). */
static const as_product **fake_by_id_on(const fake_db *db, as_arena **order)
{
    *order = as_arena_create();
    as_mem om = as_arena_mem(*order);
    return fake_by_id(&om, db);
}

#define FAKE_BATCH 3 /* products a call of index_rows' callback gives at most */

/* Every product by id, FAKE_BATCH at a time (as the SQL store gives its
 * batches), each batch's rows on an arena freed when the callback returns
 * (so ASan catches a reader keeping them past the call); stops at the first
 * failure. */
int fake_index_rows(void *h, as_index_rows_fn each, void *baton)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_INDEX_ROWS);
    FAKE_ASSERT(each, "index_rows: no callback");
    as_arena *order;
    const as_product **ps = fake_by_id_on(db, &order);
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < db->n_products; i += FAKE_BATCH) {
        as_arena *a = as_arena_create();
        as_mem m = as_arena_mem(a);
        as_index_row rows[FAKE_BATCH];
        size_t n = 0;
        for (; n < FAKE_BATCH && i + n < db->n_products; n++) {
            as_product *p = as_alloc(&m, sizeof(*p));
            fake_copy_product(&m, db, ps[i + n], 0, p);
            fake_index_row(db, &m, p, &rows[n]);
        }
        if (each(baton, rows, n) != 0) rc = AS_EDB;
        as_arena_destroy(a);
    }
    as_arena_destroy(order);
    return rc;
}

/* The ids of a product's offers in stock, by id, space-separated ("" for
 * none, on m as well). */
static const char *fake_in_stock(as_mem *m, const as_product *p)
{
    const as_offer **os = fake_offers_by_id(m, p);
    as_buf b;
    as_buf_init(&b, m);
    for (size_t k = 0; k < p->n_offers; k++)
        if (os[k]->stock > 0) {
            if (b.len) as_buf_puts(&b, " ");
            as_buf_puts(&b, os[k]->id);
        }
    return as_strdup(m, as_buf_str(&b));
}

/* Whether product i's rank row changed after since: with live stock, when
 * a write last changed it; else every row, when since is behind the rank
 * version a test set. */
static bool fake_row_changed(const fake_db *db, const as_product *p, int64_t since)
{
    if (!db->live) return since < db->version.rank;
    return db->live->row_rank[p - db->products] > since;
}

/* The rank rows changed since `since`, by product id, each with its in-stock
 * offer ids, on an arena freed when the callback returns. */
static int fake_rank_changes(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_RANK_CHANGES);
    FAKE_ASSERT(each, "rank_changes: no callback");
    as_arena *order;
    const as_product **ps = fake_by_id_on(db, &order);
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < db->n_products; i++) {
        if (!fake_row_changed(db, ps[i], since)) continue;
        as_arena *a = as_arena_create();
        as_mem m = as_arena_mem(a);
        as_product p;
        fake_copy_product(&m, db, ps[i], 0, &p);
        as_rank_row r = fake_rank_row(&m, &p);
        r.in_stock = fake_in_stock(&m, &p);
        if (each(baton, p.id, &r) != 0) rc = AS_EDB;
        as_arena_destroy(a);
    }
    as_arena_destroy(order);
    return rc;
}

static int fake_offers_stock(void *h, as_mem *m, const int64_t *ids, size_t n, as_offer_stock **out,
                             size_t *nout)
{
    fake_db *db = h;
    *out = NULL;
    *nout = 0;
    FAKE_ENTER(db, FAKE_OP_OFFERS_STOCK);
    FAKE_ASSERT(ids || n == 0, "offers_stock: NULL ids");
    size_t total = 0;
    for (size_t i = 0; i < db->n_products; i++)
        total += db->products[i].n_offers;
    as_offer_stock *r = as_alloc(m, (total + 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < db->n_products; i++) {
        const as_product *p = &db->products[i];
        bool asked = false;
        for (size_t j = 0; j < n && !asked; j++)
            asked = ids[j] == p->id;
        for (size_t o = 0; asked && o < p->n_offers; o++)
            r[k++] = (as_offer_stock){p->id, p->offers[o].id, fake_stock(db, &p->offers[o])};
    }
    *out = r;
    *nout = k;
    return AS_OK;
}

static int fake_product_live(void *h, as_mem *m, const char *sku, int64_t product_id,
                             as_product_live *out)
{
    fake_db *db = h;
    FAKE_ENTER(db, FAKE_OP_PRODUCT_LIVE);
    FAKE_ASSERT((sku || product_id > 0) && out, "product_live(NULL)");
    memset(out, 0, sizeof(*out));
    out->version = fake_version(db);
    for (size_t i = 0; i < db->n_products; i++) {
        const as_product *p = &db->products[i];
        if (product_id > 0 ? p->id != product_id : strcmp(p->sku, sku) != 0) continue;
        int64_t id = out->product_id = p->id;
        out->stock = as_alloc(m, (p->n_offers + 1) * sizeof(*out->stock));
        for (size_t k = 0; k < p->n_offers; k++)
            out->stock[out->n_stock++] =
                (as_offer_stock){id, p->offers[k].id, fake_stock(db, &p->offers[k])};
        out->questions = p->questions;
        out->n_questions = p->n_questions;
    }
    return AS_OK;
}

/* Catalogue reads and the search index's sources; no buying, no view
 * versions, no live sequence (a test that needs them adds its own table). */
const as_store_catalog_ops fake_catalog = {
    .device_by_slug = fake_device_by_slug,
    .product_by_sku = fake_product_by_sku,
    .search = fake_search,
    .compatible = fake_compatible,
    .product_live = fake_product_live,
    .offers_stock = fake_offers_stock,
};
const as_store_feed_ops fake_feed = {
    .merchants = fake_merchants,
    .devices = fake_devices,
    .search_version = fake_search_version,
    .index_rows = fake_index_rows,
    .rank_changes = fake_rank_changes,
};
const as_store_ops fake_ops = {.catalog = &fake_catalog, .feed = &fake_feed};

as_store fake_store_make(fake_db *db)
{
    return (as_store){&fake_ops, db};
}

/* ---- Live stock and rank versions ---- */

bool fake_live_init(fake_db *db, fake_live *live)
{
    memset(live, 0, sizeof(*live));
    if (db->n_products > FAKE_MAX_PRODUCTS) return false;
    for (size_t i = 0; i < db->n_products; i++)
        for (size_t k = 0; k < db->products[i].n_offers; k++) {
            if (live->n_offers == FAKE_MAX_OFFERS) return false;
            const as_offer *o = &db->products[i].offers[k];
            live->offer[live->n_offers].offer_id = o->id;
            live->offer[live->n_offers].stock = o->stock;
            live->offer[live->n_offers++].product = i;
        }
    db->live = live;
    return true;
}

int64_t *fake_live_stock(fake_db *db, const char *offer_id, size_t *product)
{
    if (!db->live || !offer_id) return NULL;
    for (size_t i = 0; i < db->live->n_offers; i++)
        if (strcmp(db->live->offer[i].offer_id, offer_id) == 0) {
            if (product) *product = db->live->offer[i].product;
            return &db->live->offer[i].stock;
        }
    return NULL;
}

void fake_live_moved(fake_db *db, const char *offer_id, int64_t before)
{
    size_t product;
    int64_t *stock = fake_live_stock(db, offer_id, &product);
    if (!stock || (before > 0) == (*stock > 0)) return;
    db->live->rank++;
    db->live->row_rank[product] = db->live->rank;
}

/* The index of the offer in db->live, or -1. */
static long fake_live_index(const fake_db *db, const char *offer_id)
{
    if (!db->live || !offer_id) return -1;
    for (size_t i = 0; i < db->live->n_offers; i++)
        if (strcmp(db->live->offer[i].offer_id, offer_id) == 0) return (long)i;
    return -1;
}

bool fake_live_withdraw(fake_db *db, const char *offer_id)
{
    long i = fake_live_index(db, offer_id);
    if (i < 0) return false;
    int64_t before = db->live->offer[i].stock;
    db->live->offer[i].stock = 0;
    db->live->offer[i].withdrawn = true;
    fake_live_moved(db, offer_id, before);
    return true;
}

bool fake_live_withdrawn(const fake_db *db, const char *offer_id)
{
    long i = fake_live_index(db, offer_id);
    return i >= 0 && db->live->offer[i].withdrawn;
}

/* ---- The fake catalogues ---- */

/* The default catalogue is the first rows of each table below (FAKE_DEFAULT_*);
 * the wide one all of them. */
#define FAKE_MERCHANT_A                                                                            \
    {                                                                                              \
        "m-alpha", "Alpha Parts", "NL", "Utrecht", 0.95, 0.99, NULL, 0                             \
    }
#define FAKE_MERCHANT_B                                                                            \
    {                                                                                              \
        "m-beta", "Beta Supplies", "DE", "Köln", 0.90, 0.97, NULL, 0                               \
    }
/* an ampersand and angle brackets to escape, no reliability at all */
#define FAKE_MERCHANT_C                                                                            \
    {                                                                                              \
        "m-gamma", "Gamma & Co <BE>", "BE", "Gent", 0.5, 0.0, NULL, 0                              \
    }

static const as_merchant fake_merchant_rows[] = {FAKE_MERCHANT_A, FAKE_MERCHANT_B, FAKE_MERCHANT_C};
#define FAKE_DEFAULT_MERCHANTS 2

/* Two Dysons (for ambiguity) and a jug; then another V11 and a printer
 * without aliases. */
static const as_device fake_device_rows[] = {
    {1, "dyson-v11", "V11 Absolute", "Dyson", "vacuum", "v11 sv14"},
    {2, "dyson-v8", "V8 Animal", "Dyson", "vacuum", "v8 sv10"},
    {3, "brita-marella", "Marella", "Brita", "water-jug", "marella xl"},
    {4, "dyson-v11-torque", "V11 Torque Drive", "Dyson", "vacuum", "v11 sv15"},
    {5, "hp-deskjet-2720", "DeskJet 2720", "HP", "printer", ""},
};
#define FAKE_DEFAULT_DEVICES 3

static as_offer soap_offers[] = {
    {"of-soap-a", FAKE_MERCHANT_A, 450, 499, "agent price", 1, 40},
    {"of-soap-b", FAKE_MERCHANT_B, 420, 449, "agent price", 3, 12},
};
static as_offer filt_offers[] = {
    {"of-filt-a", FAKE_MERCHANT_A, 2999, 3199, "agent price", 2, 5},
};
static as_offer jug_offers[] = {
    {"of-jug-b", FAKE_MERCHANT_B, 1299, 1399, "agent price", 2, 0},
};
/* the cheapest out of stock, one that delivers today */
static as_offer batt_offers[] = {
    {"of-batt-a", FAKE_MERCHANT_A, 15999, 16999, "agent price", 1, 3},
    {"of-batt-c", FAKE_MERCHANT_C, 14999, 15999, "agent price", 9, 0},
    {"of-batt-b", FAKE_MERCHANT_B, 15499, 15999, "agent price", 0, 1},
};
static as_offer filt5_offers[] = {
    {"of-filt5-b", FAKE_MERCHANT_B, 2499, 2599, "agent price", 2, 7},
    {"of-filt5-c", FAKE_MERCHANT_C, 2399, 2599, "agent price", 4, 2},
};
static as_offer ink_offers[] = {
    {"of-ink-a", FAKE_MERCHANT_A, 1999, 2099, "agent price", 1, 100},
};

static as_spec_row soap_specs[] = {
    {"volume", "Volume", "performance", "ml", "500", "502", 2},
    {"scent", "Scent", "categorical", NULL, "\"lavender\"", "\"lavender\"", 0},
};
static as_spec_row filt_specs[] = {
    {"filtration", "Filtration", "performance", "%", "99.97", "92.1", 1},
    {"washable", "Washable", "categorical", NULL, "true", "false", 0},
};
/* every kind of value: arrays in another order, NULL claimed or measured, a
 * string measured against a number, an empty unit */
static as_spec_row batt_specs[] = {
    {"capacity_mah", "Capacity", "performance", "mAh", "3000", "2810", 5},
    {"voltage_v", "Voltage", "categorical", "V", "25.2", "25.2", 0},
    {"chemistry", "Chemistry", "categorical", NULL, "\"Li-ion\"", "\"li-ion\"", 0},
    {"weight_g", "Weight", "info", "g", "420", "433", 0},
    {"runtime_min", "Runtime", "performance", "min", "60", NULL, 10},
    {"pack_contents", "In the box", "categorical", NULL, "[\"battery\",\"screws\"]",
     "[\"screws\",\"battery\"]", 0},
    {"colour", "Colour", "categorical", NULL, NULL, "\"purple\"", 0},
    {"ph", "pH", "info", "", "7", "\"n/a\"", 0},
};
static as_spec_row filt5_specs[] = {
    {"filter_efficiency_pct", "Filter efficiency", "performance", "%", "99.5", "99.6", 1},
    {"diameter_mm", "Diameter", "categorical", "mm", "80", "80.0", 0},
    {"lifetime_months", "Lifetime", "info", "months", "12", "[12, 6]", 0},
};
/* the default catalogue has the first; the wide one also the broken answer */
static as_question soap_questions[] = {
    {"q-1", "Is it vegan?", "{\"text\":\"Yes\"}", "2025-12-01T10:00:00Z"},
    {"q-2", "Broken answer", "{not json", "2025-12-02T10:00:00Z"},
};

static const as_product fake_product_rows[] = {
    {.id = 1,
     .sku = "SOAP-001",
     .gtin = "8710000000011",
     .name = "Lavender hand soap 500 ml",
     .brand = "Savon",
     .category = "hand-soap",
     .part_type = "hand-soap",
     .description = "Gentle liquid hand soap refill",
     .image_urls = "[\"https://img.example/soap.jpg\"]",
     .source_url = "https://shop.example/soap",
     .source_notes = "[]",
     .source_checked_at = "2026-01-10T08:00:00Z",
     .source_product_id = "S1",
     .availability = "in_stock",
     .is_demo = true,
     .verif_status = AS_VERIF_VERIFIED,
     .measured_at = "2026-01-05T09:00:00Z",
     .measured_node = "lab-1",
     .sample_size = 3,
     .has_on_time = true,
     .on_time_rate_90d = 0.96,
     .return_rate = 0.01,
     .wrong_item_rate = 0.002,
     .agent_orders_90d = 120,
     .orders_per_week = "[1,2,3,4,5,6,7,8,9,10,11,12,13]",
     .offers = soap_offers,
     .n_offers = N_ROWS(soap_offers),
     .specs = soap_specs,
     .n_specs = N_ROWS(soap_specs),
     .questions = soap_questions,
     .n_questions = 1},
    {.id = 2,
     .sku = "FILT-002",
     .name = "HEPA filter for Dyson V11",
     .brand = "Filtra",
     .category = "vacuum-parts",
     .part_type = "filter",
     .description = "Washable post-motor HEPA filter",
     .image_urls = "[]",
     .source_url = "https://shop.example/filter",
     .source_notes = "[\"claims from the box\"]",
     .source_checked_at = "2026-01-10T08:00:00Z",
     .source_product_id = "F2",
     .availability = "in_stock",
     .verif_status = AS_VERIF_CONTRADICTED,
     .verif_note = "Filtration: claimed 99.97 %, measured 92.1 %",
     .measured_at = "2026-01-06T09:00:00Z",
     .measured_node = "lab-1",
     .sample_size = 2,
     .return_rate = 0.08,
     .orders_per_week = "[]",
     .guarantee = true,
     .offers = filt_offers,
     .n_offers = N_ROWS(filt_offers),
     .specs = filt_specs,
     .n_specs = N_ROWS(filt_specs)},
    {.id = 3,
     .sku = "JUG-003",
     .name = "Maxtra filter cartridge",
     .brand = "Brita",
     .category = "coffee-kitchen",
     .part_type = "jug-filter",
     .description = "Jug filter cartridge",
     .image_urls = "[]",
     .source_url = "https://shop.example/jug",
     .source_notes = "[]",
     .source_checked_at = "2026-01-10T08:00:00Z",
     .source_product_id = "J3",
     .availability = "out_of_stock",
     .verif_status = AS_VERIF_PENDING,
     .orders_per_week = "[]",
     .offers = jug_offers,
     .n_offers = N_ROWS(jug_offers)},
    /* the wide catalogue's: JSON columns that are not what they should be,
     * rates at their limits, no lab node */
    {.id = 4,
     .sku = "BATT-004",
     .gtin = "5025155000004",
     .name = "Replacement battery for Dyson V11 (3000 mAh)",
     .brand = "PowerCell",
     .category = "batteries",
     .part_type = "battery",
     .description = "Click-in battery pack, Li-ion, with screws",
     .image_urls = "not json",
     .source_url = "https://shop.example/battery",
     .source_notes = "{\"note\":\"an object, not an array\"}",
     .source_checked_at = "2026-01-11T08:00:00Z",
     .source_product_id = "B4",
     .availability = "in_stock",
     .verif_status = AS_VERIF_CONTRADICTED,
     .verif_note = "Capacity: claimed 3000 mAh, measured 2810 mAh",
     .measured_at = "2026-01-07T09:00:00Z",
     .sample_size = 5,
     .has_on_time = true,
     .on_time_rate_90d = 1.0,
     .return_rate = 0.0,
     .wrong_item_rate = 1.0,
     .agent_orders_90d = 0,
     .orders_per_week = "[0,0,0,0,0,0,0,0,0,0,0,0,1]",
     .guarantee = true,
     .offers = batt_offers,
     .n_offers = N_ROWS(batt_offers),
     .specs = batt_specs,
     .n_specs = N_ROWS(batt_specs)},
    {.id = 5,
     .sku = "FILT-005",
     .name = "Pre-motor filter for Dyson V11",
     .brand = "Filtra",
     .category = "vacuum-parts",
     .part_type = "filter",
     .description = "Washable pre-motor filter",
     .image_urls = "[\"https://img.example/f5.jpg\", 3]",
     .source_url = "https://shop.example/f5",
     .source_notes = "[]",
     .source_checked_at = "2026-01-12T08:00:00Z",
     .source_product_id = "F5",
     .availability = "in_stock",
     .verif_status = AS_VERIF_VERIFIED,
     .measured_at = "2026-01-08T09:00:00Z",
     .measured_node = "lab-2",
     .sample_size = 4,
     .return_rate = 0.02,
     .wrong_item_rate = 0.01,
     .orders_per_week = "[3]",
     .guarantee = true,
     .offers = filt5_offers,
     .n_offers = N_ROWS(filt5_offers),
     .specs = filt5_specs,
     .n_specs = N_ROWS(filt5_specs)},
    {.id = 6,
     .sku = "INK-006",
     .name = "HP 305 black ink \"XL\" <cartridge>",
     .brand = "HP",
     .category = "printer-ink",
     .part_type = "ink-cartridge",
     .description = "Black ink & more",
     .image_urls = "[]",
     .source_url = "https://shop.example/ink",
     .source_notes = "[]",
     .source_checked_at = "2026-01-12T08:00:00Z",
     .source_product_id = "I6",
     .availability = "in_stock",
     .verif_status = AS_VERIF_PENDING,
     .return_rate = 0.5,
     .orders_per_week = "[]",
     .offers = ink_offers,
     .n_offers = N_ROWS(ink_offers)},
};
#define FAKE_DEFAULT_PRODUCTS 3

static const fake_compat fake_compat_rows[] = {
    {"FILT-002",
     1,
     {"dyson-v11", "V11 Absolute", AS_FIT_FITS,
      "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":80,"
      "\"tolerance\":0.5}]",
      "2026-01-02"}},
    {"FILT-002",
     2,
     {"dyson-v8", "V8 Animal", AS_FIT_DOES_NOT_FIT,
      "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":70,"
      "\"tolerance\":0.5}]",
      "2026-01-02"}},
    {"JUG-003",
     3,
     {"brita-marella", "Marella", AS_FIT_FITS,
      "[{\"note\":\"Brand declares fit\",\"by\":\"Brita\"}]", "2026-01-02"}},
    /* the wide catalogue's: evidence of every shape, and not JSON at all */
    {"FILT-005",
     1,
     {"dyson-v11", "V11 Absolute", AS_FIT_FITS,
      "[{\"dimension\":\"d\",\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80.2,"
      "\"device_value\":80,\"tolerance\":0.5,\"method\":\"measured\",\"by\":\"lab-2\",\"at\":"
      "\"2026-01-03\"},{\"note\":\"Click fit\"},{\"part_value\":\"x\",\"device_value\":1},7]",
      "2026-01-03"}},
    {"BATT-004",
     1,
     {"dyson-v11", "V11 Absolute", AS_FIT_FITS, "{\"not\":\"an array\"}", "2026-01-04"}},
    {"BATT-004",
     4,
     {"dyson-v11-torque", "V11 Torque Drive", AS_FIT_DOES_NOT_FIT, "not json at all",
      "2026-01-04"}},
    {"FILT-005", 2, {"dyson-v8", "V8 Animal", AS_FIT_FITS, "[]", "2026-01-04"}},
};
#define FAKE_DEFAULT_COMPAT 3

static void fake_db_rows(fake_db *db, size_t merchants, size_t devices, const as_product *products,
                         size_t n_products, size_t compat)
{
    memset(db, 0, sizeof(*db));
    db->merchants = fake_merchant_rows;
    db->n_merchants = merchants;
    db->devices = fake_device_rows;
    db->n_devices = devices;
    db->products = products;
    db->n_products = n_products;
    db->compat = fake_compat_rows;
    db->n_compat = compat;
    db->version = (as_search_version){1, 0, 0};
}

void fake_db_default(fake_db *db)
{
    fake_db_rows(db, FAKE_DEFAULT_MERCHANTS, FAKE_DEFAULT_DEVICES, fake_product_rows,
                 FAKE_DEFAULT_PRODUCTS, FAKE_DEFAULT_COMPAT);
}

void fake_db_wide(fake_db *db)
{
    /* the rows above, but the soap has its broken answer too */
    static as_product products[N_ROWS(fake_product_rows)];
    memcpy(products, fake_product_rows, sizeof(products));
    products[0].n_questions = N_ROWS(soap_questions);
    fake_db_rows(db, N_ROWS(fake_merchant_rows), N_ROWS(fake_device_rows), products,
                 N_ROWS(products), N_ROWS(fake_compat_rows));
}
