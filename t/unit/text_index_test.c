/* core/as_text_index.c: words and prefixes as FTS5's unicode61 tokenizer finds
 * them, every term must match, category and part type filters, hidden
 * products counted and listed, the sort orders with bm25 relevance and sku as
 * tie-breaks, paging, and the per-process snapshot refreshed by version. */
#include "fake_store.h"

#include "as_devices.h"
#include "as_text_index.h"

/* A small catalogue: id, sku, category, part type, name, brand, description,
 * hidden, buyable, score, price, days, return rate. */
typedef struct row_def {
    int64_t id;
    const char *sku, *cat, *pt, *name, *brand, *desc;
    bool hidden;
    bool buyable;
    int64_t score, price, days;
    double rr;
} row_def;

static const row_def rows[] = {
    {1, "SKU-A", "air-filters", "filter", "Aldermoor Pro HEPA Filter", "Aldermoor",
     "A filter for everyday use.", false, true, 80, 2000, 2, 0.05},
    {2, "SKU-B", "air-filters", "filter", "Brightvale HEPA Filter", "Brightvale",
     "Filter filter filter, professional grade.", false, true, 80, 1500, 1, 0.02},
    {3, "SKU-C", "air-filters", "filter", "Café Filter Deluxe", "Crème", "Café×filter–set.", true,
     true, 95, 1000, 3, 0.10},
    {4, "SKU-D", "hand-soap", "soap", "Aldermoor Soap", "Aldermoor", "Soap for hands.", false, true,
     70, 500, 1, 0.01},
    {5, "SKU-E", "air-filters", "filter", "Procyon Filter", "Procyon", "Cheap filter.", false,
     false, 0, 0, 0, 0.50},
    {6, "SKU-F", "air-filters", "bag", "Filter bag", "Marlow", "Bags with a filter.", true, false,
     0, 0, 0, 0.20},
};
#define N_CATALOGUE N_ROWS(rows)

static as_index_row index_row(const row_def *r)
{
    as_index_row x = {r->id,
                      r->sku,
                      r->cat,
                      r->pt,
                      r->name,
                      r->brand,
                      r->desc,
                      r->hidden,
                      r->hidden ? "claims contradicted" : NULL,
                      {r->buyable, r->score, r->price, r->days, r->rr, NULL},
                      "[\"https://img.example/1.jpg\"]",
                      "in_stock",
                      r->hidden ? "contradicted" : "verified",
                      r->id == 1,
                      NULL};
    return x;
}

static const as_merchant test_merchants[] = {{"m-a", "Alpha", "NL", "Utrecht", 0.9, 0.95},
                                             {"m-b", "Beta", "DE", "Köln", 0.8, 0.99}};
/* two offers of product 1 (by id), one of product 4; none of the others */
static const as_index_offer test_offers[] = {
    {1, "o-1a", "m-b", "agent price", 2000, 2100, 2, true},
    {1, "o-1b", "m-a", "agent price", 2100, 2200, 3, true},
    {4, "o-4", "m-a", "sale", 500, 600, 1, true},
};

static void add_offers(as_text_builder *b)
{
    assert_true(as_text_builder_merchants(b, test_merchants, 2));
    for (size_t i = 0; i < N_ROWS(test_offers); i++)
        assert_int_equal(as_text_builder_offer(b, &test_offers[i]), 0);
}

static as_text_index *build_index(int64_t catalogue, int64_t rank)
{
    as_text_builder *b = as_text_builder_new();
    for (size_t i = 0; i < N_CATALOGUE; i++) {
        as_index_row x = index_row(&rows[i]);
        assert_int_equal(as_text_builder_add(b, &x), 0);
    }
    add_offers(b);
    as_search_version v = {catalogue, rank};
    as_text_index *ix = as_text_builder_finish(b, &v);
    assert_non_null(ix);
    return ix;
}

typedef struct search_case {
    const char *label;
    const char *q; /* space separated terms, as as_text_terms makes them */
    const char *category, *part_type;
    as_sort_kind sort;
    bool verified_only;
    int64_t limit, offset;
    const char *ids; /* the page's ids, in order, e.g. "2 1" */
    int64_t count, excluded_count;
    const char *excluded; /* skus listed as excluded */
} search_case;

static const char *page_ids(as_mem *m, const as_text_page *p)
{
    as_buf b;
    as_buf_init(&b, m);
    for (size_t i = 0; i < p->n; i++)
        as_buf_printf(&b, "%s%lld", i ? " " : "", (long long)p->ids[i]);
    return as_buf_str(&b);
}

static const char *excluded_skus(as_mem *m, const as_text_page *p)
{
    as_buf b;
    as_buf_init(&b, m);
    for (size_t i = 0; i < p->n_excluded; i++)
        as_buf_printf(&b, "%s%s", i ? " " : "", p->excluded[i].sku);
    return as_buf_str(&b);
}

static void run_case(as_mem *m, const as_text_index *ix, const search_case *c, as_text_page *out)
{
    const char **terms;
    size_t n = as_text_terms(m, c->q, &terms);
    as_search_query q = {terms,    n,        c->category, c->part_type, c->sort, c->verified_only,
                         c->limit, c->offset};
    as_text_index_search(ix, m, &q, out);
}

static void test_search_table(void **state)
{
    as_mem *m = unit_mem(state);
    as_text_index *ix = build_index(1, 0);
    /* bm25 within a tie (same buyable and score): product 2 says "filter" four
     * times in fewer words, so it is more relevant than 1 */
    static const search_case cases[] = {
        {"one word, score order, relevance breaks the tie", "filter", NULL, NULL, AS_SORT_SCORE,
         true, 20, 0, "2 1 5", 3, 2, "SKU-C SKU-F"},
        {"prefix matches several words", "pro", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "2 1 5", 3,
         0, ""},
        {"every term must match", "aldermoor filter", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "1",
         1, 0, ""},
        {"no such word", "zebra", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""},
        {"accents folded in the catalogue", "cafe", NULL, NULL, AS_SORT_SCORE, false, 20, 0, "3", 1,
         0, ""},
        {"× and – separate words", "set", NULL, NULL, AS_SORT_SCORE, false, 20, 0, "3", 1, 0, ""},
        {"accents folded in the query", "CRÈME", NULL, NULL, AS_SORT_SCORE, false, 20, 0, "3", 1, 0,
         ""},
        {"hidden shown without verified_only", "filter", NULL, NULL, AS_SORT_SCORE, false, 20, 0,
         "3 2 1 5 6", 5, 0, ""},
        {"category", "aldermoor", "hand-soap", NULL, AS_SORT_SCORE, true, 20, 0, "4", 1, 0, ""},
        {"unknown category", "aldermoor", "printer-ink", NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0,
         ""},
        {"part type", "filter", NULL, "bag", AS_SORT_SCORE, false, 20, 0, "6", 1, 0, ""},
        {"price, lowest first, unbuyable last", "filter", NULL, NULL, AS_SORT_PRICE, true, 20, 0,
         "2 1 5", 3, 2, "SKU-C SKU-F"},
        {"delivery", "filter", "air-filters", NULL, AS_SORT_DELIVERY, false, 20, 0, "2 1 3 5 6", 5,
         0, ""},
        {"return rate", "filter", NULL, NULL, AS_SORT_RETURN_RATE, false, 20, 0, "2 1 3 6 5", 5, 0,
         ""},
        {"limit", "filter", NULL, NULL, AS_SORT_SCORE, false, 2, 0, "3 2", 5, 0, ""},
        {"offset", "filter", NULL, NULL, AS_SORT_SCORE, false, 2, 2, "1 5", 5, 0, ""},
        {"offset past the end", "filter", NULL, NULL, AS_SORT_SCORE, false, 20, 10, "", 5, 0, ""},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const search_case *c = &cases[i];
        as_text_page p;
        run_case(m, ix, c, &p);
        const char *got = page_ids(m, &p);
        CHECK_STR(c->label, got, c->ids);
        CHECK_INT(c->label, p.count, c->count);
        CHECK_INT(c->label, p.excluded_count, c->excluded_count);
        CHECK_STR(c->label, excluded_skus(m, &p), c->excluded);
    }
    ROWS_DONE();
    as_text_index_release(ix);
}

static void test_excluded_view_fields(void **state)
{
    as_mem *m = unit_mem(state);
    as_text_index *ix = build_index(1, 0);
    search_case c = {"", "filter", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""};
    as_text_page p;
    run_case(m, ix, &c, &p);
    assert_int_equal(p.n_excluded, 2);
    assert_string_equal(p.excluded[0].name, "Café Filter Deluxe");
    assert_string_equal(p.excluded[0].verif_status, "contradicted");
    assert_string_equal(p.excluded[0].verif_note, "claims contradicted");
    assert_true(p.products[0].text_rank < p.products[1].text_rank); /* 2 before 1 */
    as_text_index_release(ix);
}

/* A page's products come with their summary and offers (but stock) from the index. */
static void test_page_products(void **state)
{
    as_mem *m = unit_mem(state);
    as_text_index *ix = build_index(1, 0);
    search_case c = {"", "aldermoor", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""};
    as_text_page p;
    run_case(m, ix, &c, &p);
    assert_int_equal(p.n, 2);
    const as_product *a = &p.products[0], *d = &p.products[1];
    assert_int_equal(a->id, 1);
    assert_string_equal(a->sku, "SKU-A");
    assert_string_equal(a->name, "Aldermoor Pro HEPA Filter");
    assert_string_equal(a->brand, "Aldermoor");
    assert_string_equal(a->category, "air-filters");
    assert_string_equal(a->part_type, "filter");
    assert_string_equal(a->image_urls, "[\"https://img.example/1.jpg\"]");
    assert_string_equal(a->availability, "in_stock");
    assert_string_equal(a->verif_status, "verified");
    assert_null(a->verif_note);
    assert_true(a->guarantee);
    assert_false(d->guarantee);
    assert_true(a->return_rate > 0.049 && a->return_rate < 0.051);
    assert_int_equal(a->n_offers, 2);
    assert_string_equal(a->offers[0].id, "o-1a");
    assert_string_equal(a->offers[0].merchant.name, "Beta");
    assert_string_equal(a->offers[0].merchant.city, "Köln");
    assert_int_equal(a->offers[0].price_cents, 2000);
    assert_int_equal(a->offers[0].retail_price_cents, 2100);
    assert_string_equal(a->offers[1].price_label, "agent price");
    assert_int_equal(a->offers[1].delivery_days, 3);
    assert_int_equal(a->offers[1].stock, 0);
    assert_int_equal(d->n_offers, 1);
    assert_string_equal(d->offers[0].price_label, "sale");
    as_text_index_release(ix);
}

/* A store that serves the rows above, a version, and rank changes. */
typedef struct ver_store {
    as_search_version v;
    int builds, updates;
    int64_t since;
    bool fail;
    bool empty; /* a fresh install: schema, no catalogue yet */
} ver_store;

static int vs_version(void *h, as_search_version *out)
{
    ver_store *s = h;
    if (s->fail) return AS_EDB;
    *out = s->v;
    return AS_OK;
}

static int vs_rows(void *h, as_index_row_fn each, void *baton)
{
    ver_store *s = h;
    s->builds++;
    for (size_t i = 0; i < (s->empty ? 0 : N_CATALOGUE); i++) {
        as_index_row x = index_row(&rows[i]);
        if (each(baton, &x)) return AS_EDB;
    }
    return AS_OK;
}

static int vs_merchants(void *h, as_mem *m, as_merchant **out, size_t *n)
{
    ver_store *s = h;
    *n = s->empty ? 0 : N_ROWS(test_merchants);
    *out = as_alloc(m, sizeof(test_merchants));
    memcpy(*out, test_merchants, sizeof(test_merchants));
    return AS_OK;
}

static int vs_offers(void *h, as_index_offer_fn each, void *baton)
{
    ver_store *s = h;
    for (size_t i = 0; i < (s->empty ? 0 : N_ROWS(test_offers)); i++)
        if (each(baton, &test_offers[i])) return AS_EDB;
    return AS_OK;
}

/* Since rank version 1: product 5 can be bought, at the top. */
static int vs_changes(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    ver_store *s = h;
    s->updates++;
    s->since = since;
    as_rank_row r = {true, 99, 100, 1, 0.5, ""};
    return each(baton, 5, &r) ? AS_EDB : AS_OK;
}

static as_store ver_store_of(ver_store *vs)
{
    as_store st = {.h = vs,
                   .merchants = vs_merchants,
                   .search_version = vs_version,
                   .index_rows = vs_rows,
                   .index_offers = vs_offers,
                   .rank_changes = vs_changes};
    return st;
}

static void test_snapshot_refresh(void **state)
{
    as_mem *m = unit_mem(state);
    ver_store vs = {{7, 1}, 0, 0, 0, false, false};
    as_store st = ver_store_of(&vs);
    as_search_index *si = as_search_index_create();
    search_case c = {"", "filter", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""};
    as_text_page p;

    as_text_index *ix = as_search_index_get(si, &st);
    assert_non_null(ix);
    assert_int_equal(vs.builds, 1);
    run_case(m, ix, &c, &p);
    assert_string_equal(page_ids(m, &p), "2 1 5");
    as_text_index_release(ix);

    /* the same version: the same snapshot, nothing read */
    ix = as_search_index_get(si, &st);
    assert_int_equal(vs.builds, 1);
    assert_int_equal(vs.updates, 0);
    as_text_index_release(ix);

    /* a rank change: only the changed rows are read */
    vs.v.rank = 2;
    as_text_index *old = ix;
    ix = as_search_index_get(si, &st);
    assert_ptr_not_equal(ix, old);
    assert_int_equal(vs.builds, 1);
    assert_int_equal(vs.updates, 1);
    assert_int_equal(vs.since, 1);
    run_case(m, ix, &c, &p);
    assert_string_equal(page_ids(m, &p), "5 2 1");
    assert_int_equal(as_text_index_version(ix).rank, 2);

    /* an old snapshot still held keeps answering as it was */
    as_text_index_release(ix);

    /* a new catalogue: built again */
    vs.v.catalogue = 8;
    ix = as_search_index_get(si, &st);
    assert_int_equal(vs.builds, 2);
    run_case(m, ix, &c, &p);
    assert_string_equal(page_ids(m, &p), "2 1 5");
    assert_true(as_text_index_bytes(ix) > 0);
    assert_int_equal(as_text_index_size(ix), N_CATALOGUE);
    as_text_index_release(ix);

    /* storage failing: no snapshot */
    vs.fail = true;
    assert_null(as_search_index_get(si, &st));
    as_search_index_destroy(si);
}

/* A fresh install searched before its catalogue is loaded: an index of no
 * products that finds nothing (issue 16: finishing it crashed the child), and
 * the catalogue found once it is loaded. */
static const search_case empty_cases[] = {
    {"one word", "soap", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""},
    {"two words", "hand soap", NULL, NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""},
    {"category", "soap", "hand-soap", NULL, AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""},
    {"part type", "soap", NULL, "hand-soap", AS_SORT_SCORE, true, 20, 0, "", 0, 0, ""},
    {"price, hidden shown", "soap", NULL, NULL, AS_SORT_PRICE, false, 20, 0, "", 0, 0, ""},
    {"offset", "soap", NULL, NULL, AS_SORT_DELIVERY, true, 5, 10, "", 0, 0, ""},
};

static void check_empty(as_mem *m, const as_text_index *ix)
{
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(empty_cases); i++) {
        const search_case *c = &empty_cases[i];
        as_text_page p;
        run_case(m, ix, c, &p);
        CHECK_INT(c->label, p.n, 0);
        CHECK_INT(c->label, p.count, 0);
        CHECK_INT(c->label, p.excluded_count, 0);
        CHECK_INT(c->label, p.n_excluded, 0);
    }
    ROWS_DONE();
}

static void test_empty_catalogue(void **state)
{
    as_mem *m = unit_mem(state);
    as_text_builder *b = as_text_builder_new();
    assert_non_null(b);
    assert_true(as_text_builder_merchants(b, NULL, 0));
    as_search_version v = {1, 0};
    as_text_index *ix = as_text_builder_finish(b, &v);
    assert_non_null(ix);
    assert_int_equal(as_text_index_size(ix), 0);
    assert_true(as_text_index_bytes(ix) > 0);
    check_empty(m, ix);
    as_text_index_release(ix);
}

static void test_empty_then_loaded(void **state)
{
    as_mem *m = unit_mem(state);
    ver_store vs = {{1, 0}, 0, 0, 0, false, true};
    as_store st = ver_store_of(&vs);
    as_search_index *si = as_search_index_create();
    as_text_index *ix = as_search_index_get(si, &st);
    assert_non_null(ix);
    assert_int_equal(as_text_index_size(ix), 0);
    check_empty(m, ix);
    as_text_index_release(ix);

    /* a rank change with no products: an update of nothing */
    vs.v.rank = 1;
    ix = as_search_index_get(si, &st);
    assert_non_null(ix);
    assert_int_equal(vs.updates, 1);
    check_empty(m, ix);
    as_text_index_release(ix);

    /* the catalogue loaded: built again, and found */
    vs.empty = false;
    vs.v.catalogue = 2;
    ix = as_search_index_get(si, &st);
    assert_int_equal(vs.builds, 2);
    assert_int_equal(as_text_index_size(ix), N_CATALOGUE);
    as_text_page p;
    run_case(m, ix, &empty_cases[0], &p); /* "soap": product 4 */
    assert_string_equal(page_ids(m, &p), "4");
    as_text_index_release(ix);
    as_search_index_destroy(si);
}

static void test_rows_out_of_order_fail(void **state)
{
    (void)state;
    as_text_builder *b = as_text_builder_new();
    as_index_row x = index_row(&rows[1]);
    assert_int_equal(as_text_builder_add(b, &x), 0);
    x = index_row(&rows[0]);
    assert_int_not_equal(as_text_builder_add(b, &x), 0);
    as_search_version v = {1, 0};
    assert_null(as_text_builder_finish(b, &v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_search_table),           UNIT_TEST(test_excluded_view_fields),
        UNIT_TEST(test_page_products),          UNIT_TEST(test_snapshot_refresh),
        UNIT_TEST(test_rows_out_of_order_fail), UNIT_TEST(test_empty_catalogue),
        UNIT_TEST(test_empty_then_loaded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
