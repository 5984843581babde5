/* The fake store (fake_store.h). */
#include "fake_store.h"

#include <stdlib.h>
#include <string.h>

#include "as_rank.h"

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

static const as_compat *fake_compat_for(const fake_db *db, const char *sku, int64_t device_id)
{
    if (device_id <= 0) return NULL;
    for (size_t i = 0; i < db->n_compat; i++)
        if (db->compat[i].device_id == device_id && strcmp(db->compat[i].sku, sku) == 0)
            return &db->compat[i].row;
    return NULL;
}

/* A copy of p on m, so core never sees the static arrays themselves. */
static void fake_copy_product(as_mem *m, const fake_db *db, const as_product *p, int64_t device_id,
                              as_product *out)
{
    *out = *p;
    out->offers = as_alloc(m, (p->n_offers + 1) * sizeof(as_offer));
    if (p->n_offers) memcpy(out->offers, p->offers, p->n_offers * sizeof(as_offer));
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
    db->calls++;
    if (db->fail) return db->fail;
    as_merchant *r = as_alloc(m, (db->n_merchants + 1) * sizeof(*r));
    if (db->n_merchants) memcpy(r, db->merchants, db->n_merchants * sizeof(*r));
    *out = r;
    *n = db->n_merchants;
    return AS_OK;
}

static int fake_devices(void *h, as_mem *m, as_device **out, size_t *n)
{
    fake_db *db = h;
    db->calls++;
    if (db->fail) return db->fail;
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
    db->calls++;
    if (db->fail) return db->fail;
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
    db->calls++;
    if (db->fail) return db->fail;
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
    db->calls++;
    if (db->fail) return db->fail;
    as_product *r = as_alloc(m, (db->n_products + 1) * sizeof(*r));
    size_t k = 0;
    for (size_t i = 0; i < db->n_products; i++)
        if (fake_matches(db, &db->products[i], f))
            fake_copy_product(m, db, &db->products[i], f->device_id, &r[k++]);
    *out = r;
    *n = k;
    return AS_OK;
}

/* ---- The text index's sources, as sql/as_db_search.c gives them ---- */

static int fake_search_version(void *h, as_search_version *out)
{
    fake_db *db = h;
    db->calls++;
    if (db->fail) return db->fail;
    *out = db->version;
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

/* A JSON string, or null for NULL. */
static void fake_json_str(as_buf *b, const char *s)
{
    json_t *v = s ? json_string(s) : NULL;
    char *t = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    as_buf_puts(b, t ? t : "null");
    free(t);
    json_decref(v);
}

/* The spec rows as the SQL store gives them: [[label, unit, claimed, measured],
 * ...] with claimed and measured as the JSON they hold (null when NULL), or
 * NULL without rows. False when a value is not JSON (SQL fails on it too). */
static bool fake_specs_json(as_mem *m, const as_product *p, const char **out)
{
    *out = NULL;
    if (!p->n_specs) return true;
    as_buf b;
    as_buf_init(&b, m);
    as_buf_puts(&b, "[");
    for (size_t i = 0; i < p->n_specs; i++) {
        const as_spec_row *r = &p->specs[i];
        as_buf_puts(&b, i ? ",[" : "[");
        fake_json_str(&b, r->label);
        as_buf_puts(&b, ",");
        fake_json_str(&b, r->unit);
        const char *vals[2] = {r->claimed, r->measured};
        for (int k = 0; k < 2; k++) {
            json_t *v = vals[k] ? json_loads(vals[k], JSON_DECODE_ANY, NULL) : NULL;
            if (vals[k] && !v) return false;
            json_decref(v);
            as_buf_puts(&b, ",");
            as_buf_puts(&b, vals[k] ? vals[k] : "null");
        }
        as_buf_puts(&b, "]");
    }
    as_buf_puts(&b, "]");
    *out = as_buf_str(&b);
    return true;
}

/* As rank_store in sql/as_db_search.c: default weights, no filter, day 0. */
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
        if (strcmp(db->compat[i].sku, sku) == 0 &&
            strcmp(db->compat[i].row.fit_status, "fits") == 0)
            return true;
    return false;
}

/* Where a walk of the products hands its rows: the callback of the store
 * function walking (the one field its kind uses) and its baton. */
typedef struct fake_sink {
    as_index_row_fn row;
    as_index_offer_fn offer;
    as_view_row_fn view;
    void *baton;
} fake_sink;

/* One product's rows into to, on scratch memory m; AS_OK to go on. */
typedef int (*fake_product_fn)(const fake_db *db, as_mem *m, const as_product *p,
                               const fake_sink *to);

/* What the index's sources share: one call (failing as a test set), every
 * product by id on an arena freed after, stopping at the first failure. */
static int fake_walk(void *h, fake_product_fn one, const fake_sink *to)
{
    fake_db *db = h;
    db->calls++;
    if (db->fail) return db->fail;
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    const as_product **ps = fake_by_id(&m, db);
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < db->n_products; i++)
        rc = one(db, &m, ps[i], to);
    as_arena_destroy(a);
    return rc;
}

static int fake_index_row(const fake_db *db, as_mem *m, const as_product *p, const fake_sink *to)
{
    as_index_row r = {p->id,
                      p->sku,
                      p->category,
                      p->part_type,
                      p->name,
                      p->brand,
                      p->description,
                      p->verif_status && strcmp(p->verif_status, "contradicted") == 0,
                      p->verif_note,
                      fake_rank_row(m, p),
                      p->image_urls,
                      p->availability,
                      p->verif_status,
                      fake_guarantee(db, p->sku),
                      NULL};
    return fake_specs_json(m, p, &r.specs) && to->row(to->baton, &r) == 0 ? AS_OK : AS_EDB;
}

int fake_index_rows(void *h, as_index_row_fn each, void *baton)
{
    return fake_walk(h, fake_index_row, &(fake_sink){.row = each, .baton = baton});
}

static int fake_index_offer(const fake_db *db, as_mem *m, const as_product *p, const fake_sink *to)
{
    (void)db;
    const as_offer **os = fake_offers_by_id(m, p);
    for (size_t k = 0; k < p->n_offers; k++) {
        const as_offer *o = os[k];
        as_index_offer x = {p->id,
                            o->id,
                            o->merchant.id,
                            o->price_label,
                            o->price_cents,
                            o->retail_price_cents,
                            o->delivery_days,
                            o->stock > 0,
                            o->stock};
        if (to->offer(to->baton, &x) != 0) return AS_EDB;
    }
    return AS_OK;
}

static int fake_index_offers(void *h, as_index_offer_fn each, void *baton)
{
    return fake_walk(h, fake_index_offer, &(fake_sink){.offer = each, .baton = baton});
}

/* The ids of a product's offers in stock, by id, space-separated ("" for none). */
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
    return as_buf_str(&b);
}

/* Nothing here changes a rank row by itself: every product, when since is
 * behind the rank version a test set. */
static int fake_rank_changes(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    fake_db *db = h;
    db->calls++;
    if (db->fail) return db->fail;
    if (since >= db->version.rank) return AS_OK;
    as_arena *a = as_arena_create();
    as_mem m = as_arena_mem(a);
    const as_product **ps = fake_by_id(&m, db);
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < db->n_products; i++) {
        as_rank_row r = fake_rank_row(&m, ps[i]);
        r.in_stock = fake_in_stock(&m, ps[i]);
        if (each(baton, ps[i]->id, &r) != 0) rc = AS_EDB;
    }
    as_arena_destroy(a);
    return rc;
}

static const as_product *fake_product_of(const fake_db *db, const char *sku)
{
    for (size_t i = 0; i < db->n_products; i++)
        if (strcmp(db->products[i].sku, sku) == 0) return &db->products[i];
    return NULL;
}

typedef struct fake_compat_ref {
    int64_t product_id;
    const fake_compat *c;
} fake_compat_ref;

static int fake_cmp_compat(const void *a, const void *b)
{
    const fake_compat_ref *x = a, *y = b;
    if (x->product_id != y->product_id) return (x->product_id > y->product_id) ? 1 : -1;
    return (x->c->device_id > y->c->device_id) - (x->c->device_id < y->c->device_id);
}

static int fake_index_compat(void *h, as_index_compat_fn each, void *baton)
{
    fake_db *db = h;
    db->calls++;
    if (db->fail) return db->fail;
    fake_compat_ref *refs = calloc(db->n_compat + 1, sizeof(*refs));
    if (!refs) return AS_EDB;
    size_t n = 0;
    for (size_t i = 0; i < db->n_compat; i++) {
        const as_product *p = fake_product_of(db, db->compat[i].sku);
        if (p) refs[n++] = (fake_compat_ref){p->id, &db->compat[i]};
    }
    qsort(refs, n, sizeof(*refs), fake_cmp_compat);
    int rc = AS_OK;
    for (size_t i = 0; rc == AS_OK && i < n; i++) {
        const as_compat *c = &refs[i].c->row;
        as_index_compat x = {refs[i].product_id, refs[i].c->device_id,
                             strcmp(c->fit_status, "fits") == 0, c->evidence, c->checked_at};
        if (each(baton, &x) != 0) rc = AS_EDB;
    }
    free(refs);
    return rc;
}

static int fake_offers_stock(void *h, as_mem *m, const int64_t *ids, size_t n, as_offer_stock **out,
                             size_t *nout)
{
    fake_db *db = h;
    db->calls++;
    *out = NULL;
    *nout = 0;
    if (db->fail) return db->fail;
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
            r[k++] = (as_offer_stock){p->id, p->offers[o].id, p->offers[o].stock};
    }
    *out = r;
    *nout = k;
    return AS_OK;
}

static int fake_view_row(const fake_db *db, as_mem *m, const as_product *p, const fake_sink *to)
{
    as_product v;
    fake_copy_product(m, db, p, 0, &v);
    v.offers = NULL, v.n_offers = 0, v.questions = NULL, v.n_questions = 0;
    return to->view(to->baton, &v) == 0 ? AS_OK : AS_EDB;
}

/* Every product with its specs, by id (what a view keeps). */
static int fake_view_rows(void *h, as_view_row_fn each, void *baton)
{
    return fake_walk(h, fake_view_row, &(fake_sink){.view = each, .baton = baton});
}

static int fake_product_live(void *h, as_mem *m, const char *sku, int64_t product_id,
                             as_product_live *out)
{
    fake_db *db = h;
    db->calls++;
    if (db->fail) return db->fail;
    memset(out, 0, sizeof(*out));
    out->version = db->version;
    for (size_t i = 0; i < db->n_products; i++) {
        const as_product *p = &db->products[i];
        if (product_id > 0 ? p->id != product_id : strcmp(p->sku, sku) != 0) continue;
        int64_t id = out->product_id = p->id;
        out->stock = as_alloc(m, (p->n_offers + 1) * sizeof(*out->stock));
        for (size_t k = 0; k < p->n_offers; k++)
            out->stock[out->n_stock++] = (as_offer_stock){id, p->offers[k].id, p->offers[k].stock};
        out->questions = p->questions;
        out->n_questions = p->n_questions;
    }
    return AS_OK;
}

/* Catalogue reads and the search index's sources; no buying, no view
 * versions, no live sequence (a test that needs them adds its own table). */
static const as_store_catalog_ops fake_catalog = {
    .device_by_slug = fake_device_by_slug,
    .product_by_sku = fake_product_by_sku,
    .search = fake_search,
    .product_live = fake_product_live,
    .offers_stock = fake_offers_stock,
};
const as_store_feed_ops fake_feed = {
    .merchants = fake_merchants,
    .devices = fake_devices,
    .search_version = fake_search_version,
    .index_rows = fake_index_rows,
    .index_offers = fake_index_offers,
    .rank_changes = fake_rank_changes,
    .index_compat = fake_index_compat,
    .view_rows = fake_view_rows,
};
const as_store_ops fake_ops = {.catalog = &fake_catalog, .feed = &fake_feed};

as_store fake_store_make(fake_db *db)
{
    return (as_store){&fake_ops, db};
}

/* ---- The default fake catalogue ---- */

#define FAKE_MERCHANT_A                                                                            \
    {                                                                                              \
        "m-alpha", "Alpha Parts", "NL", "Utrecht", 0.95, 0.99                                      \
    }
#define FAKE_MERCHANT_B                                                                            \
    {                                                                                              \
        "m-beta", "Beta Supplies", "DE", "Köln", 0.90, 0.97                                        \
    }

/* Two Dysons (for ambiguity) and a jug. */
void fake_db_default(fake_db *db)
{
    static const as_merchant merchants[] = {FAKE_MERCHANT_A, FAKE_MERCHANT_B};
    static const as_device devices[] = {
        {1, "dyson-v11", "V11 Absolute", "Dyson", "vacuum", "v11 sv14"},
        {2, "dyson-v8", "V8 Animal", "Dyson", "vacuum", "v8 sv10"},
        {3, "brita-marella", "Marella", "Brita", "water-jug", "marella xl"},
    };
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
    static as_spec_row soap_specs[] = {
        {"volume", "Volume", "performance", "ml", "500", "502", 2},
        {"scent", "Scent", "categorical", NULL, "\"lavender\"", "\"lavender\"", 0},
    };
    static as_spec_row filt_specs[] = {
        {"filtration", "Filtration", "performance", "%", "99.97", "92.1", 1},
        {"washable", "Washable", "categorical", NULL, "true", "false", 0},
    };
    static as_question soap_questions[] = {
        {"q-1", "Is it vegan?", "{\"text\":\"Yes\"}", "2025-12-01T10:00:00Z"},
    };
    static const as_product products[] = {
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
         .verif_status = "verified",
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
         .n_offers = 2,
         .specs = soap_specs,
         .n_specs = 2,
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
         .verif_status = "contradicted",
         .verif_note = "Filtration: claimed 99.97 %, measured 92.1 %",
         .measured_at = "2026-01-06T09:00:00Z",
         .measured_node = "lab-1",
         .sample_size = 2,
         .return_rate = 0.08,
         .orders_per_week = "[]",
         .guarantee = true,
         .offers = filt_offers,
         .n_offers = 1,
         .specs = filt_specs,
         .n_specs = 2},
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
         .verif_status = "pending",
         .orders_per_week = "[]",
         .offers = jug_offers,
         .n_offers = 1},
    };
    static const fake_compat compat[] = {
        {"FILT-002",
         1,
         {"dyson-v11", "V11 Absolute", "fits",
          "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":80,"
          "\"tolerance\":0.5}]",
          "2026-01-02"}},
        {"FILT-002",
         2,
         {"dyson-v8", "V8 Animal", "does_not_fit",
          "[{\"label\":\"Diameter\",\"unit\":\"mm\",\"part_value\":80,\"device_value\":70,"
          "\"tolerance\":0.5}]",
          "2026-01-02"}},
        {"JUG-003",
         3,
         {"brita-marella", "Marella", "fits",
          "[{\"note\":\"Brand declares fit\",\"by\":\"Brita\"}]", "2026-01-02"}},
    };
    memset(db, 0, sizeof(*db));
    db->merchants = merchants;
    db->n_merchants = N_ROWS(merchants);
    db->devices = devices;
    db->n_devices = N_ROWS(devices);
    db->products = products;
    db->n_products = N_ROWS(products);
    db->compat = compat;
    db->n_compat = N_ROWS(compat);
    db->version = (as_search_version){1, 0, 0};
}
