/* The search engine (core/search/) over a small in-memory catalogue: match
 * tiers, stems and spec words, a device and a price read from the text,
 * dropped words, typo correction, offer filters with their exclusion reasons,
 * and the order of results against core's own ranking formula. */
#include "search_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stddef.h>
#include <sys/stat.h>
#include <threads.h>
#include <unistd.h>

#include "as_search.h"
#include "as_search_internal.h"
#include "as_view.h"

#define M_A                                                                                        \
    {                                                                                              \
        "m-a", "Alpha", "NL", "Utrecht", 0.95, 0.99, NULL, 0                                       \
    }
#define M_B                                                                                        \
    {                                                                                              \
        "m-b", "Beta", "DE", "Köln", 0.80, 0.90, NULL, 0                                           \
    }

static as_offer aa_offers[] = {{"aa-a", M_A, 500, 520, "agent price", 1, 10},
                               {"aa-b", M_B, 450, 470, "agent price", 4, 0}};
static as_offer aaa_offers[] = {{"aaa-a", M_A, 400, 420, "agent price", 2, 5}};
static as_offer bad_offers[] = {{"bad-a", M_A, 100, 120, "agent price", 1, 5}};
static as_offer soap_offers[] = {{"soap-b", M_B, 300, 320, "agent price", 3, 9},
                                 {"soap-a", M_A, 330, 350, "agent price", 1, 9}};
static as_offer hepa_offers[] = {{"hepa-a", M_A, 2000, 2100, "agent price", 1, 3},
                                 {"hepa-b", M_B, 1800, 1900, "agent price", 6, 3}};
static as_offer gen_offers[] = {{"gen-a", M_A, 900, 950, "agent price", 2, 3}};
static as_spec_row soap_specs[] = {{"vegan", "Vegan", "categorical", NULL, "true", "true", 0},
                                   {"volume", "Volume", "info", "ml", "1000", "1000", 0}};
static as_spec_row aa_specs[] = {{"vegan", "Vegan", "categorical", NULL, "false", "false", 0}};

#define PRODUCT(i, s, n, c, pt, st, offs)                                                          \
    {                                                                                              \
        .id = i, .sku = s, .name = n, .brand = "Brand", .category = c, .part_type = pt,            \
        .description = "", .image_urls = "[]", .availability = "in_stock", .verif_status = st,     \
        .verif_note = NULL, .orders_per_week = "[]", .return_rate = 0.01 * i, .offers = offs,      \
        .n_offers = sizeof(offs) / sizeof(offs[0])                                                 \
    }

static void catalogue(fake_db *db)
{
    static const as_merchant merchants[] = {M_A, M_B};
    static const as_device devices[] = {
        {7, "dyson-v11", "Dyson V11 Absolute", "Dyson", "vacuum-cleaner", "v11 sv14"},
        {8, "brita-marella", "Brita Marella", "Brita", "water-jug", ""},
        {9, "dyson-v8", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", "v8 sv10"}};
    static as_product products[] = {
        PRODUCT(1, "AA-1", "Varta AA Batteries 4-pack", "batteries", "battery", AS_VERIF_VERIFIED,
                aa_offers),
        PRODUCT(2, "AAA-2", "GP AAA Batteries 4-pack", "batteries", "battery", AS_VERIF_VERIFIED,
                aaa_offers),
        PRODUCT(3, "BAD-3", "Cheapo AA Batteries", "batteries", "battery", AS_VERIF_CONTRADICTED,
                bad_offers),
        PRODUCT(4, "SOAP-4", "Lavender Hand Soap Refill", "hand-soap", "hand-soap",
                AS_VERIF_VERIFIED, soap_offers),
        PRODUCT(5, "HEPA-5", "Dyson V11 HEPA Filter", "vacuum-parts", "filter", AS_VERIF_VERIFIED,
                hepa_offers),
        PRODUCT(6, "GEN-6", "Generic Filter for V11", "vacuum-parts", "filter", AS_VERIF_PENDING,
                gen_offers),
    };
    products[3].specs = soap_specs;
    products[3].n_specs = 2;
    products[0].specs = aa_specs;
    products[0].n_specs = 1;
    products[2].verif_note = "Capacity: claimed 2000 mAh, measured 900 mAh";
    fixture_catalogue(db, merchants, N_ROWS(merchants), devices, products, N_ROWS(products));
}

typedef struct run {
    as_search_result r;
    const char *dev_slug; /* the device applied (the snapshot's is released) */
    as_store st;
    fake_db db;
} run;

static void snap_release(void *s)
{
    as_search_snap_release(s);
}

static void search(void **state, run *x, const char *q, void (*tweak)(as_search_ask *))
{
    as_mem *m = unit_mem(state);
    catalogue(&x->db);
    x->st = fake_store_make(&x->db);
    as_search_snap *s = as_search_snap_build(&x->st);
    assert_non_null(s);
    as_search_ask ask = {.q = q, .verified_only = true, .limit = 20, .today = 20000};
    as_weights_default(&ask.w);
    if (tweak) tweak(&ask);
    fixture_search(m, &x->st, s, &ask, &x->r);
    x->dev_slug = x->r.device ? as_strdup(m, x->r.device->slug) : NULL;
    x->r.device = NULL;
    x->r.understood.device = NULL;
    /* the page's strings point into the snapshot: it lives until teardown */
    unit_release_at_teardown(state, snap_release, s);
}

static const char *skus(as_mem *m, const as_search_result *r)
{
    as_buf b;
    as_buf_init(&b, m);
    for (size_t i = 0; i < r->n; i++)
        as_buf_printf(&b, "%s%s", i ? " " : "", r->page[i].sku);
    return as_buf_str(&b);
}

static void test_tiers_and_exclusions(void **state)
{
    run x;
    search(state, &x, "aa batteries", NULL);
    /* the AA pack exact, the AAA pack by prefix; the contradicted one left out */
    assert_string_equal(skus(unit_mem(state), &x.r), "AA-1 AAA-2");
    assert_int_equal(x.r.match[0], AS_MATCH_EXACT);
    assert_int_equal(x.r.match[1], AS_MATCH_PREFIX);
    assert_int_equal(x.r.count, 2);
    assert_int_equal(x.r.excluded_count, 1);
    assert_string_equal(x.r.excluded[0].sku, "BAD-3");
    /* its entry, written when the index was built */
    assert_non_null(x.r.excluded_json[0]);
    assert_non_null(strstr(x.r.excluded_json[0],
                           "\"reason\":\"Measurements contradict the merchant's claims: "));
    assert_non_null(strstr(x.r.excluded_json[0], "measured 900 mAh"));
    assert_int_equal(x.r.understood.n_words, 2);
    assert_string_equal(x.r.understood.words[1].word, "batteries");
}

static void test_spec_words_and_stems(void **state)
{
    run x;
    /* "vegan" is a true flag of the soap only (false on the AA pack); "liter"
     * meets the soap's 1000 ml as 1 l; "refills" is a form of "refill" */
    search(state, &x, "vegan refills 1 liter", NULL);
    assert_string_equal(skus(unit_mem(state), &x.r), "SOAP-4");
    assert_true(x.r.matched_all[0]);
    search(state, &x, "vegan batteries", NULL);
    assert_int_equal(x.r.understood.n_dropped, 1);
    assert_false(x.r.n && x.r.matched_all[0]);
}

static void test_typo(void **state)
{
    run x;
    search(state, &x, "lavendr soap", NULL);
    assert_string_equal(skus(unit_mem(state), &x.r), "SOAP-4");
    assert_int_equal(x.r.match[0], AS_MATCH_CORRECTED);
    assert_string_equal(x.r.understood.words[0].corrected, "lavender");
    search(state, &x, "soep", NULL); /* four letters: not corrected */
    assert_int_equal(x.r.count, 0);
}

static void test_device_and_price_in_text(void **state)
{
    run x;
    search(state, &x, "filter for my dyson v11", NULL);
    assert_non_null(x.dev_slug);
    assert_string_equal(x.dev_slug, "dyson-v11");
    assert_string_equal(skus(unit_mem(state), &x.r), "HEPA-5");
    assert_int_equal(x.r.excluded_count, 1);
    assert_string_equal(x.r.excluded[0].sku, "GEN-6");
    assert_non_null(strstr(x.r.excluded_why[0], "Does not fit Dyson V11 Absolute: Diameter"));
    assert_string_equal(as_fit_name(x.r.page[0].compat->fit_status), "fits");

    search(state, &x, "filter under 10 euros", NULL);
    assert_int_equal(x.r.understood.max_price_cents, 1000);
    assert_int_equal(x.r.of.max_price_cents, 1000);
    assert_string_equal(skus(unit_mem(state), &x.r), "GEN-6");
    assert_int_equal(x.r.excluded_count, 1);
    assert_string_equal(x.r.excluded_why[0],
                        "Every offer is above max_price €10.00 (cheapest in stock: €18.00)");
}

/* A device named with a typo is corrected as words are (one edit from 5
 * letters): "absolte" is the V11's "absolute", so "dyson absolte" names it
 * (two Dysons: "dyson" alone does not). A shorter word is never corrected. */
static void test_device_typo(void **state)
{
    as_mem *m = unit_mem(state);
    run x;
    search(state, &x, "filter for my dyson absolte", NULL);
    assert_non_null(x.dev_slug);
    assert_string_equal(x.dev_slug, "dyson-v11");
    assert_string_equal(x.r.understood.device_text, "dyson absolte");
    assert_string_equal(skus(m, &x.r), "HEPA-5");
    assert_int_equal(x.r.excluded_count, 1);
    assert_string_equal(x.r.excluded[0].sku, "GEN-6");
    assert_int_equal(x.r.understood.n_dropped, 0);

    search(state, &x, "filter for my dyson absl", NULL); /* four letters */
    assert_null(x.dev_slug);
    assert_int_equal(x.r.understood.n_dropped, 1); /* "absl" is in no product either */
    assert_string_equal(x.r.understood.dropped[0], "absl");
    assert_string_equal(skus(m, &x.r), "HEPA-5"); /* "filter" and "dyson", no device filter */
    assert_int_equal(x.r.excluded_count, 0);

    /* by brand and kind: one Brita, and a jug is what it is */
    search(state, &x, "filter for my brita jug", NULL);
    assert_non_null(x.dev_slug);
    assert_string_equal(x.dev_slug, "brita-marella");
    assert_string_equal(x.r.understood.device_text, "brita jug");
    search(state, &x, "filter for my dyson vacuum", NULL); /* two Dyson vacuums */
    assert_null(x.dev_slug);
}

static void by_price(as_search_ask *a)
{
    a->sort = AS_SORT_PRICE;
}

static void merchant_b(as_search_ask *a)
{
    a->of.merchant = "m-b";
}

static void price_only(as_search_ask *a)
{
    a->w = (as_weights){{1, 0, 0, 0}};
}

static void test_filters_without_text(void **state)
{
    run x;
    search(state, &x, NULL, by_price);
    /* every product but the contradicted one, cheapest best offer first */
    assert_string_equal(skus(unit_mem(state), &x.r), "SOAP-4 AAA-2 AA-1 GEN-6 HEPA-5");
    assert_int_equal(x.r.count, 5);
    search(state, &x, NULL, merchant_b);
    /* Beta sells the AA pack (out of stock there), the soap and the HEPA filter */
    assert_string_equal(skus(unit_mem(state), &x.r), "SOAP-4 HEPA-5");
    assert_int_equal(x.r.excluded_count, 1);
    assert_string_equal(x.r.excluded_why[0], "Out of stock at the requested merchant");
}

static const as_device dyson_v11 = {7, "dyson-v11", "Dyson V11 Absolute", "Dyson",
                                    "vacuum-cleaner", "v11 sv14"};
static void v11(as_search_ask *a)
{
    a->device = &dyson_v11;
}
static void v11_vacuum_parts(as_search_ask *a)
{
    a->device = &dyson_v11;
    a->category = "vacuum-parts";
}
static void v11_batteries(as_search_ask *a)
{
    a->device = &dyson_v11;
    a->category = "batteries";
}

/* device= without text: the device's compatibility rows are the candidates
 * (not the category's products): the filter that fits is a result, the one
 * that does not is excluded with its reason, a category the device has no
 * row in gives nothing. */
static void test_device_without_text(void **state)
{
    run x;
    search(state, &x, NULL, v11);
    assert_string_equal(x.dev_slug, "dyson-v11");
    assert_string_equal(skus(unit_mem(state), &x.r), "HEPA-5");
    assert_int_equal(x.r.count, 1);
    assert_int_equal(x.r.excluded_count, 1);
    assert_string_equal(x.r.excluded[0].sku, "GEN-6");
    assert_non_null(strstr(x.r.excluded_why[0], "Does not fit Dyson V11 Absolute: Diameter"));
    search(state, &x, NULL, v11_vacuum_parts);
    assert_string_equal(skus(unit_mem(state), &x.r), "HEPA-5");
    assert_int_equal(x.r.excluded_count, 1);
    search(state, &x, NULL, v11_batteries);
    assert_int_equal(x.r.count, 0);
    assert_int_equal(x.r.excluded_count, 0);
}

/* Within a tier and buyable group, results follow core's own score of the
 * page as shown (as_rank_offers_brief over the live stock). */
static void test_order_is_the_formula(void **state)
{
    as_mem *m = unit_mem(state);
    void (*tweaks[])(as_search_ask *) = {NULL, price_only};
    for (size_t t = 0; t < 2; t++) {
        run x;
        search(state, &x, NULL, tweaks[t]);
        as_weights w;
        as_weights_default(&w);
        if (tweaks[t]) {
            as_search_ask a = {0};
            tweaks[t](&a);
            w = a.w;
        }
        int prev = 1000;
        for (size_t i = 0; i < x.r.n; i++) {
            as_ranking rk;
            as_rank_offers_brief(m, &x.r.page[i], &w, &x.r.of, 20000, &rk);
            assert_true(rk.n_ranked > 0);
            assert_true(rk.ranked[0].score <= prev);
            prev = rk.ranked[0].score;
        }
    }
}

/* Under the default weights with offer filters, a product's best offer comes
 * from the snapshot's default one when the filters keep it and the cheapest
 * price (sx_rank_best_default_filtered): the same score, price and days as
 * ranking every offer, over a random catalogue with ties in price and days,
 * offers out of stock, and every kind of filter. */
static uint32_t rnd_next(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static void test_filtered_best_is_ranked_best(void **state)
{
    as_mem *m = unit_mem(state);
    enum { N = 400 };
    static const as_merchant merchants[] = {M_A, M_B};
    static const as_device devices[] = {
        {7, "dyson-v11", "Dyson V11 Absolute", "Dyson", "vacuum-cleaner", "v11"},
        {8, "brita-marella", "Brita Marella", "Brita", "water-jug", ""},
        {9, "dyson-v8", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", "v8"}};
    as_product *ps = as_alloc(m, N * sizeof(*ps));
    uint32_t x = 2463534242u;
    for (int i = 0; i < N; i++) {
        size_t n = 1 + rnd_next(&x) % 6;
        as_offer *os = as_alloc(m, n * sizeof(*os));
        for (size_t k = 0; k < n; k++) {
            int64_t price = 100 * (1 + (int64_t)(rnd_next(&x) % 8)); /* ties on purpose */
            os[k] = (as_offer){as_printf(m, "o-%03d-%zu", i, k), merchants[rnd_next(&x) % 2], price,
                               price + 50, "agent price", 1 + (int)(rnd_next(&x) % 5),
                               rnd_next(&x) % 4 ? 5 : 0};
        }
        ps[i] = (as_product){.id = i + 1,
                             .sku = as_printf(m, "R-%03d", i),
                             .name = "Thing",
                             .brand = "Brand",
                             .category = "batteries",
                             .part_type = "battery",
                             .description = "",
                             .image_urls = "[]",
                             .availability = "in_stock",
                             .verif_status = AS_VERIF_VERIFIED,
                             .orders_per_week = "[]",
                             .return_rate = 0.01,
                             .offers = os,
                             .n_offers = n};
    }
    fake_db db;
    fixture_catalogue(&db, merchants, N_ROWS(merchants), devices, ps, N);
    as_store st = fake_store_make(&db);
    as_search_snap *s = as_search_snap_build(&st);
    assert_non_null(s);
    const int64_t today = 20000;
    const as_offer_filter filters[] = {
        {0, 300, NULL}, {0, 500, NULL}, {0, 100, NULL},     {today + 2, 0, NULL},
        {today + 4, 0, NULL}, {today + 3, 600, NULL}, {0, 0, "m-a"}, {0, 400, "m-b"},
    };
    const int merchant_of[] = {-1, -1, -1, -1, -1, -1, 0, 1};
    as_weights w;
    as_weights_default(&w);
    size_t kept_default = 0, ranked = 0;
    for (size_t fi = 0; fi < N_ROWS(filters); fi++)
        for (uint32_t d = 0; d < s->c->n; d++) {
            sx_best full, fast;
            sx_rank_best(s, d, &w, NULL, &filters[fi], merchant_of[fi], today, &full);
            sx_rank_best_default_filtered(s, d, &filters[fi], merchant_of[fi], today, true, &fast);
            assert_int_equal(fast.n_eligible > 0, full.n_eligible > 0);
            if (!full.n_eligible) continue;
            assert_int_equal(fast.score, full.score);
            assert_int_equal(fast.price_cents, full.price_cents);
            assert_int_equal(fast.days, full.days);
            /* the fast way says one eligible offer; ranking counts them all */
            if (full.n_eligible > 1 && fast.n_eligible == 1) kept_default++;
            if (fast.n_eligible > 1) ranked++;
        }
    /* both ways were taken with several offers eligible, many times */
    assert_true(kept_default > 100);
    assert_true(ranked > 50);
    /* custom weights: the integer table scores every offer as the float
     * formula does (sx_weights_tab), over weights in tenths and odd ones */
    unsigned seed = 7;
    size_t compared = 0;
    for (int k = 0; k < 60; k++) {
        as_weights cw;
        for (int i = 0; i < AS_W_N; i++) {
            seed = seed * 1103515245u + 12345u;
            cw.w[i] = k < 30 ? (double)((seed >> 16 & 1023u) % 11) / 10.0
                             : (double)(seed >> 16 & 1023u) / 1023.0;
        }
        sx_weights_tab tab;
        assert_true(sx_weights_tab_make(s->c, m, &cw, &tab));
        for (size_t fi = 0; fi < N_ROWS(filters); fi++)
            for (uint32_t d = 0; d < s->c->n; d++) {
                sx_best slow, fast;
                sx_rank_best(s, d, &cw, NULL, &filters[fi], merchant_of[fi], today, &slow);
                sx_rank_best(s, d, &cw, &tab, &filters[fi], merchant_of[fi], today, &fast);
                assert_int_equal(fast.n_eligible, slow.n_eligible);
                assert_int_equal(fast.score, slow.score);
                assert_int_equal(fast.price_cents, slow.price_cents);
                assert_int_equal(fast.days, slow.days);
                compared += slow.n_eligible > 0;
            }
    }
    assert_true(compared > 1000);
    as_weights neg = w;
    neg.w[1] = -0.5;
    sx_weights_tab none;
    assert_false(sx_weights_tab_make(s->c, m, &neg, &none));
    as_search_snap_release(s);
}

/* The prices and delivery days of a random catalogue: prices are 25 *
 * (price_base + a number below price_span) cents, delivery 1 to `days` days.
 * A narrow span with many days makes a dearer, sooner offer the best one
 * often. */
typedef struct snap_shape {
    int price_base, price_span, days;
} snap_shape;
static const snap_shape wide_prices = {4, 30, 4};
static const snap_shape near_prices = {20, 6, 9};
/* more prices than the index has price steps: a cap between two steps */
static const snap_shape many_prices = {4, 400, 6};

/* random_catalogue's brands, product id i + 1's the (i % 3)-th: the index
 * orders its products by brand within a part type, so its docs are not in
 * the ids' order */
static const char *const random_brands[] = {"Brand", "Marque", "Marke"};

/* A random catalogue of n products for the engine's tests (seeded), in db:
 * 1 to 4 offers each from three merchants (m's memory: a test may change their
 * stock), prices with ties and spread, a quarter of the offers out of stock,
 * return rates with ties, one product in ten contradicted, skus out of the
 * ids' order (so sku order is the catalogue's own), and names that "thing"
 * matches exactly ("Thing", "Things": the same stem) or by prefix
 * ("Thingamajig"): *tier_of[i] is the match tier of product id i + 1 for
 * "thing". */
static as_product *random_catalogue(as_mem *m, int n, uint32_t seed, const snap_shape *shape,
                                    int **tier_of, fake_db *db)
{
    /* Gamma: more punctual than Alpha, less accurate than either: neither
     * Alpha nor Gamma is the better merchant under every weighting */
    static const as_merchant merchants[] = {M_A, M_B, {"m-c", "Gamma", "BE", "Gent", 0.99, 0.82, NULL, 0}};
    static const as_device devices[] = {
        {7, "dyson-v11", "Dyson V11 Absolute", "Dyson", "vacuum-cleaner", "v11"},
        {8, "brita-marella", "Brita Marella", "Brita", "water-jug", ""},
        {9, "dyson-v8", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", "v8"}};
    static const double rates[] = {0.0, 0.01, 0.02, 0.05, 0.125};
    static const char *const names[] = {"Thing", "Things", "Thingamajig"};
    as_product *ps = as_alloc(m, (size_t)n * sizeof(*ps));
    *tier_of = as_alloc(m, (size_t)n * sizeof(int));
    uint32_t x = seed;
    for (int i = 0; i < n; i++) {
        size_t k_n = 1 + rnd_next(&x) % 4;
        as_offer *os = as_alloc(m, k_n * sizeof(*os));
        for (size_t k = 0; k < k_n; k++) {
            int64_t price = 25 * (shape->price_base +
                                  (int64_t)(rnd_next(&x) % (uint32_t)shape->price_span));
            os[k] = (as_offer){as_printf(m, "r-%03d-%zu", i, k), merchants[rnd_next(&x) % 3], price,
                               price + 50, "agent price",
                               1 + (int)(rnd_next(&x) % (uint32_t)shape->days),
                               rnd_next(&x) % 4 ? 3 : 0};
        }
        int nm = (int)(rnd_next(&x) % 3);
        (*tier_of)[i] = nm == 2 ? 1 : 0;
        ps[i] = (as_product){.id = i + 1,
                             .sku = as_printf(m, "R-%03d", (i * 7919) % n),
                             .name = names[nm],
                             .brand = random_brands[i % 3],
                             .category = "batteries",
                             .part_type = "battery",
                             .description = "",
                             .image_urls = "[]",
                             .availability = "in_stock",
                             .verif_status =
                                 rnd_next(&x) % 10 ? AS_VERIF_VERIFIED : AS_VERIF_CONTRADICTED,
                             .orders_per_week = "[]",
                             .return_rate = rates[rnd_next(&x) % 5],
                             .offers = os,
                             .n_offers = k_n};
    }
    fixture_catalogue(db, merchants, N_ROWS(merchants), devices, ps, (size_t)n);
    return ps;
}

/* The index snapshot of random_catalogue's catalogue. */
static as_search_snap *random_snap(as_mem *m, int n, uint32_t seed, const snap_shape *shape,
                                   int **tier_of)
{
    fake_db *db = as_alloc(m, sizeof(*db));
    random_catalogue(m, n, seed, shape, tier_of, db);
    as_store st = fake_store_make(db);
    as_search_snap *s = as_search_snap_build(&st);
    assert_non_null(s);
    return s;
}

/* sx_sort_order: the orders of sort=price, delivery and return_rate under the
 * default weights are those of hit_cmp (as_search_page.c) over every
 * product: buyable first, then the sort's key, then the score (highest
 * first), then sku; on a catalogue with ties in every key and stock outs. */
static const as_search_snap *order_snap;
static as_sort_kind order_kind;

static int by_sort(const void *a, const void *b)
{
    const as_search_snap *s = order_snap;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    sx_best bx, by;
    sx_rank_best_default(s, x, true, &bx);
    sx_rank_best_default(s, y, true, &by);
    if ((bx.n_eligible > 0) != (by.n_eligible > 0)) return bx.n_eligible > 0 ? -1 : 1;
    double kx = 0, ky = 0;
    if (order_kind == AS_SORT_RETURN_RATE) {
        kx = s->c->return_rate[x];
        ky = s->c->return_rate[y];
    } else if (bx.n_eligible) {
        kx = order_kind == AS_SORT_PRICE ? (double)bx.price_cents : bx.days;
        ky = order_kind == AS_SORT_PRICE ? (double)by.price_cents : by.days;
    }
    if (kx != ky) return kx < ky ? -1 : 1;
    if (bx.score != by.score) return bx.score > by.score ? -1 : 1;
    return strcmp(sx_str(s->c, s->c->sku_at[x]), sx_str(s->c, s->c->sku_at[y]));
}

static void test_sort_orders(void **state)
{
    as_mem *m = unit_mem(state);
    enum { N = 500 };
    int *tier_of;
    as_search_snap *s = random_snap(m, N, 88172645u, &wide_prices, &tier_of);
    const as_sort_kind kinds[] = {AS_SORT_PRICE, AS_SORT_DELIVERY, AS_SORT_RETURN_RATE};
    size_t unbuyable = 0;
    for (uint32_t d = 0; d < s->c->n; d++)
        unbuyable += s->prod[d].def_off == UINT32_MAX;
    assert_true(unbuyable > 5 && unbuyable < N / 2); /* both kinds, to order */
    uint32_t *want = as_alloc(m, N * sizeof(*want));
    for (size_t k = 0; k < N_ROWS(kinds); k++) {
        assert_null(sx_sort_order(s, AS_SORT_SCORE)); /* rank_order's */
        const uint32_t *got = sx_sort_order(s, kinds[k]);
        assert_non_null(got);
        assert_ptr_equal(sx_sort_order(s, kinds[k]), got); /* made once */
        for (uint32_t d = 0; d < N; d++)
            want[d] = d;
        order_snap = s;
        order_kind = kinds[k];
        qsort(want, N, sizeof(*want), by_sort);
        for (size_t i = 0; i < N; i++)
            assert_int_equal(got[i], want[i]);
    }
    as_search_snap_release(s);
}

/* The engine's pages against brute force: every product ranked by
 * sx_rank_best (every offer scored, no shortcut), filtered, sorted by
 * hit_cmp's order (tier, buyable, the sort's key, score, sku) and paged; over
 * a random catalogue with ties, stock outs, contradicted products and three
 * match tiers, for every sort, offer filters, weights and pages. The
 * shortcuts (bitsets and sort orders, the kept default offer, the bounds
 * that skip ranking) must give the same counts and pages. */
typedef struct brute_hit {
    uint32_t d;
    int tier, unbuyable, score;
    double key;
    const char *sku;
} brute_hit;

static int brute_cmp(const void *a, const void *b)
{
    const brute_hit *x = a, *y = b;
    if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
    if (x->unbuyable != y->unbuyable) return x->unbuyable < y->unbuyable ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return strcmp(x->sku, y->sku);
}

/* Every page of 6,720 searches (half with verified_only, half without) on one random catalogue
 * against brute force; caps: three price caps within its prices. */
static void brute_pages(as_mem *m, const snap_shape *shape, uint32_t seed, const int64_t caps[3])
{
    enum { N = 300 };
    int *tier_of;
    as_search_snap *s = random_snap(m, N, seed, shape, &tier_of);
    const int64_t today = 20000;
    /* a cap at some product's cheapest price in stock that is no price step */
    int64_t between = caps[0];
    for (uint32_t d = 0; d < s->c->n && between == caps[0]; d++) {
        bool step = false;
        for (size_t j = 0; j < s->c->nprice_steps; j++)
            step = step || s->c->price_step[j] == s->prod[d].min_price;
        if (s->prod[d].def_off != UINT32_MAX && !step) between = s->prod[d].min_price;
    }
    /* two filters with a cap between price steps: a cheapest price in stock
     * that is no step, of an offer that delivers within 3 days (for a
     * date), and a price of merchant m-b's offer in stock that is no step
     * (for that merchant), so that the product is kept by that offer alone */
    int64_t soon_between = caps[0], mb_between = caps[0];
    for (uint32_t d = 0; d < s->c->n; d++) {
        for (uint32_t o = s->c->off_at[d]; o < s->c->off_at[d + 1]; o++) {
            const sx_offer *x = &s->c->offers[o];
            bool step = false;
            for (size_t j = 0; j < s->c->nprice_steps; j++)
                step = step || s->c->price_step[j] == x->price_cents;
            if (step || !s->in_stock[o] || !s->c->avail[d]) continue;
            if (soon_between == caps[0] && x->days <= 3 && x->price_cents == s->prod[d].min_price)
                soon_between = x->price_cents;
            if (mb_between == caps[0] && x->merchant == 1) mb_between = x->price_cents;
        }
    }
    /* each offer filter alone (a cap at a price step of the index's, and
     * above every price; a date already past, and beyond the date steps;
     * each merchant) and some together */
    const as_offer_filter filters[] = {{0, 0, NULL},
                                       {0, caps[0], NULL},
                                       {today + 2, 0, NULL},
                                       {today + 3, caps[1], NULL},
                                       {0, 0, "m-a"},
                                       {0, caps[2], "m-b"},
                                       {0, s->c->price_step[s->c->nprice_steps / 2], NULL},
                                       {0, between, NULL},
                                       {0, 1000000, NULL},
                                       {today - 1, 0, NULL},
                                       {today + SX_SOON_DAYS + 4, 0, NULL},
                                       {0, 0, "m-b"},
                                       {today + 2, 0, "m-c"},
                                       {today + 3, caps[1], "m-a"},
                                       /* two filters, the cap between two
                                        * price steps (pair_may: the step
                                        * above it) */
                                       {today + 3, soon_between, NULL},
                                       {0, mb_between, "m-b"}};
    const int merchant_of[] = {-1, -1, -1, -1, 0, 1, -1, -1, -1, -1, -1, 1, 2, 0, -1, 1};
    /* the default weights, and two others as the API gives them (summing to 1) */
    as_weights weights[3] = {{{0}}, {{0.5, 0.2, 0.2, 0.1}}, {{0.1, 0.6, 0.1, 0.2}}};
    as_weights_default(&weights[0]);
    static const int64_t pages[][2] = {{20, 0}, {5, 3}, {1, 0}, {100, 0}, {7, 250}};
    /* "marke": a brand's products, one run of the index's order (a search's
     * span narrower than the catalogue's, docs/search.md "The index") */
    static const char *const texts[] = {NULL, "thing", "marke thing", "marke"};
    brute_hit *all = as_alloc(m, N * sizeof(*all));
    size_t compared = 0, ranked_pages = 0, dropped = 0;
    for (size_t t = 0; t < 2 * N_ROWS(texts); t++)
        for (int sort = AS_SORT_SCORE; sort <= AS_SORT_RETURN_RATE; sort++)
            for (size_t fi = 0; fi < N_ROWS(filters); fi++)
                for (size_t wi = 0; wi < N_ROWS(weights); wi++)
                    for (size_t pi = 0; pi < N_ROWS(pages); pi++) {
                        /* every text with verified_only, then without */
                        bool vo = t < N_ROWS(texts);
                        const char *text = texts[t % N_ROWS(texts)];
                        as_search_ask ask = {.q = text, .of = filters[fi],
                                             .w = weights[wi], .custom_weights = wi > 0,
                                             .verified_only = vo, .sort = (as_sort_kind)sort,
                                             .limit = pages[pi][0], .offset = pages[pi][1],
                                             .today = today};
                        bool offer_filters = filters[fi].max_price_cents ||
                                             filters[fi].deliver_by || filters[fi].merchant;
                        size_t n = 0, excluded = 0;
                        for (uint32_t d = 0; d < s->c->n; d++) {
                            int i = (int)s->c->ids[d] - 1;
                            if (text && strstr(text, "marke") &&
                                strcmp(random_brands[i % 3], "Marke") != 0)
                                continue; /* not the brand's */
                            /* a merchant: only the products with an offer
                             * there (in stock or not) are considered */
                            bool has = merchant_of[fi] < 0;
                            for (uint32_t o = s->c->off_at[d]; o < s->c->off_at[d + 1] && !has; o++)
                                has = s->c->offers[o].merchant == merchant_of[fi];
                            if (!has) continue;
                            sx_best b;
                            sx_rank_best(s, d, &ask.w, NULL, &ask.of, merchant_of[fi], today, &b);
                            if ((vo && s->c->hidden[d]) || (offer_filters && !b.n_eligible)) {
                                excluded++;
                                continue;
                            }
                            double key = 0;
                            if (sort == AS_SORT_PRICE && b.n_eligible) key = (double)b.price_cents;
                            if (sort == AS_SORT_DELIVERY && b.n_eligible) key = b.days;
                            if (sort == AS_SORT_RETURN_RATE) key = s->c->return_rate[d];
                            all[n++] = (brute_hit){d,
                                                   text && strstr(text, "thing") ? tier_of[i] : 0,
                                                   b.n_eligible ? 0 : 1,
                                                   b.score,
                                                   key,
                                                   sx_str(s->c, s->c->sku_at[d])};
                        }
                        qsort(all, n, sizeof(*all), brute_cmp);
                        if (!n && text && strchr(text, ' ')) {
                            /* no result has both words: the engine drops
                             * one (test_spec_words_and_stems), which brute
                             * force does not */
                            dropped++;
                            continue;
                        }
                        as_search_result r;
                        as_search_run(s, m, &ask, &r);
                        if ((size_t)r.count != n || (size_t)r.excluded_count != excluded)
                            print_message("text %zu sort %d filter %zu weights %zu page %zu: "
                                          "count %zu/%zu excluded %zu/%zu\n", t, sort, fi, wi,
                                          pi, (size_t)r.count, n, (size_t)r.excluded_count,
                                          excluded);
                        assert_int_equal(r.count, n);
                        assert_int_equal(r.excluded_count, excluded);
                        size_t first = (size_t)ask.offset, want = 0;
                        if (first < n)
                            want = n - first < (size_t)ask.limit ? n - first : (size_t)ask.limit;
                        assert_int_equal(r.n, want);
                        for (size_t k = 0; k < want; k++) {
                            if (r.ids[k] != s->c->ids[all[first + k].d])
                                print_message("text %zu sort %d filter %zu weights %zu page %zu: "
                                              "place %zu\n", t, sort, fi, wi, pi, k);
                            assert_int_equal(r.ids[k], s->c->ids[all[first + k].d]);
                            assert_int_equal(r.match[k], all[first + k].tier);
                        }
                        compared++;
                        ranked_pages += want > 0;
                    }
    assert_int_equal(compared + dropped, 2 * N_ROWS(texts) * 4 * N_ROWS(filters) * 3 * 5);
    assert_true(dropped < compared / 10);
    assert_true(ranked_pages > compared / 2);
    as_search_snap_release(s);
}

static void test_pages_are_brute_force(void **state)
{
    static const int64_t wide_caps[3] = {300, 400, 500}, near_caps[3] = {550, 575, 600};
    brute_pages(unit_mem(state), &wide_prices, 1234567u, wide_caps);
    /* prices close together and deliveries far apart: the best offer is
     * often not the cheapest, and a cap or a date often leaves it out */
    brute_pages(unit_mem(state), &near_prices, 7654321u, near_caps);
    /* prices in 400 steps of 25 cents: most products' cheapest price lies
     * between two of the index's price steps, and so do the caps */
    static const int64_t many_caps[3] = {2500, 5000, 7500};
    brute_pages(unit_mem(state), &many_prices, 1029384u, many_caps);
}

/* The index orders its products by category, part type and brand, each
 * group by id (order_docs): the random catalogue's three brands in turn come
 * out as three runs, each in id order; every product keeps its own id, sku,
 * offers and words, and id_docs and id_rk lead from ids to docs and back. */
static void test_docs_order(void **state)
{
    as_mem *m = unit_mem(state);
    int *tier_of;
    as_search_snap *s = random_snap(m, 300, 2718u, &wide_prices, &tier_of);
    const sx_catalog *c = s->c;
    assert_int_equal(c->n, 300);
    assert_non_null(c->id_docs);
    size_t runs = 1, moved = 0;
    for (uint32_t d = 0; d < c->n; d++) {
        int64_t id = c->ids[d];
        moved += id != (int64_t)d + 1;
        if (d && strcmp(sx_str(c, c->brand_at[d]), sx_str(c, c->brand_at[d - 1])) != 0)
            runs++;
        else if (d)
            assert_true(c->ids[d - 1] < id); /* by id within a run */
        assert_int_equal(sx_doc_of(c, id), d);
        assert_int_equal(c->id_docs[c->id_rk[d]], d);
        assert_int_equal(c->ids[c->id_docs[id - 1]], id); /* ids 1 to 300: place id - 1 */
        assert_string_equal(sx_str(c, c->brand_at[d]), random_brands[(id - 1) % 3]);
        assert_string_equal(sx_str(c, c->sku_at[d]),
                            as_printf(m, "R-%03d", (int)((id - 1) * 7919 % 300)));
        for (uint32_t o = c->off_at[d]; o < c->off_at[d + 1]; o++)
            assert_true(strncmp(sx_str(c, c->offers[o].id_at),
                                as_printf(m, "r-%03d-", (int)(id - 1)), 6) == 0);
        /* its match tier for "thing": its name's word is among its words */
        bool thing = false, thingamajig = false;
        for (uint32_t t = 0; t < c->ntok; t++)
            for (uint32_t p = c->post_at[t]; p < c->post_at[t + 1]; p++) {
                if (p > c->post_at[t]) assert_true(c->post[p - 1] < c->post[p]);
                if (c->post[p] != d) continue;
                thing |= strcmp(sx_tok(c, t), "thing") == 0 || strcmp(sx_tok(c, t), "things") == 0;
                thingamajig |= strcmp(sx_tok(c, t), "thingamajig") == 0;
            }
        assert_true(tier_of[id - 1] == 1 ? thingamajig && !thing : thing && !thingamajig);
    }
    assert_int_equal(runs, 3);
    assert_true(moved > 250);
    assert_int_equal(sx_doc_of(c, 301), UINT32_MAX);
    assert_int_equal(sx_doc_of(c, 0), UINT32_MAX);
    as_search_snap_release(s);
}

/* A product's steps by delivery date and by price (sx_front) give, under
 * the default weights and a date or a price cap alone, the best offer that
 * ranking all its offers gives: every product, every date from the day
 * before the soonest to after the latest, every cap from 475 to 720 cents;
 * and so do its slots and bits for each merchant alone. The number of
 * products whose best offer is not their cheapest. */
static size_t check_steps(const as_search_snap *s, as_mem *m)
{
    const int64_t today = 20000;
    as_weights w;
    as_weights_default(&w);
    size_t dearer_best = 0, compared = 0;
    for (uint32_t d = 0; d < s->c->n; d++) {
        dearer_best +=
            s->prod[d].def_off != UINT32_MAX && s->prod[d].def_price != s->prod[d].min_price;
        for (int64_t k = -1; k <= 60; k++) {
            as_offer_filter f = {0};
            if (k <= 10)
                f.deliver_by = today + k;
            else
                f.max_price_cents = 25 * 19 + (k - 11) * 5;
            sx_best steps, offers;
            sx_rank_best_default_filtered(s, d, &f, -1, today, false, &steps);
            sx_rank_best(s, d, &w, NULL, &f, -1, today, &offers);
            assert_int_equal(steps.n_eligible > 0, offers.n_eligible > 0);
            if (offers.n_eligible) assert_int_equal(steps.score, offers.score);
            /* the offer filters' bitsets (cheap_bits, soon_bits): never
             * without a product an offer in stock meets the filter of;
             * exactly those under a date (a day per bitset) */
            sx_filter flt = {.merchant = -1,
                             .of = f,
                             .offer_filters = true,
                             .today = today,
                             .span = {0, s->c->words}};
            sx_filter_bitsets(s, m, &flt);
            if (offers.n_eligible) assert_false(sx_filter_unmet(&flt, d));
            if (f.deliver_by) {
                assert_non_null(flt.offer_mask);
                assert_int_equal(!sx_filter_unmet(&flt, d), offers.n_eligible > 0);
            }
            assert_int_equal(sx_filter_viable(s, &flt, d, NULL), offers.n_eligible > 0);
            compared++;
        }
        for (int mc = 0; mc < (int)s->c->nmerchants; mc++) {
            as_offer_filter f = {.merchant = sx_str(s->c, s->c->merchants[mc].id_at)};
            sx_best steps, offers;
            sx_rank_best_default_filtered(s, d, &f, mc, today, false, &steps);
            sx_rank_best(s, d, &w, NULL, &f, mc, today, &offers);
            assert_int_equal(steps.n_eligible > 0, offers.n_eligible > 0);
            if (offers.n_eligible) assert_int_equal(steps.score, offers.score);
            sx_filter flt = {.merchant = mc, .of = f, .offer_filters = true, .today = today};
            assert_int_equal(sx_filter_viable(s, &flt, d, NULL), offers.n_eligible > 0);
            compared++;
        }
    }
    assert_int_equal(compared, s->c->n * (62 + s->c->nmerchants));
    return dearer_best;
}

/* The summary heads: each product's is the bytes as_view_summary_head writes
 * of its fields, whether its half had room enough in strs (as a build
 * sizes it), too little (heads past it spill over into a buffer, appended
 * after both halves) or none (every head spilt). */
static void test_heads_spill(void **state)
{
    as_mem *m = unit_mem(state);
    static const double rooms[] = {1.03, 0.5, 0.0};
    double kept = sx_heads_room;
    for (size_t k = 0; k < sizeof(rooms) / sizeof(rooms[0]); k++) {
        sx_heads_room = rooms[k];
        int *tier_of;
        as_search_snap *s = random_snap(m, 300, 2718u, &wide_prices, &tier_of);
        const sx_catalog *c = s->c;
        size_t backwards = 0;
        for (uint32_t d = 0; d < c->n; d++) {
            as_product p = {0};
            sx_summary_fields(c, d, &p);
            as_jw w;
            as_jw_init(&w, m);
            as_view_summary_head(&w, &p);
            size_t want_len;
            const char *want = as_jw_text(&w, &want_len);
            assert_non_null(want);
            assert_int_not_equal(c->head_at[d], AS_NO_STR);
            assert_true(c->head_at[d] < c->nstrs);
            assert_int_equal(sx_str_len(c, c->head_at[d]), want_len);
            assert_memory_equal(sx_str(c, c->head_at[d]), want, want_len + 1);
            backwards += d && c->head_at[d] < c->head_at[d - 1];
        }
        /* in the docs' order unless the first half spilt while the second
         * had room for some */
        if (rooms[k] == 0.5)
            assert_true(backwards > 0);
        else
            assert_int_equal(backwards, 0);
        as_search_snap_release(s);
    }
    sx_heads_room = kept;
}

/* On a catalogue whose prices are close and deliveries far apart, so that
 * the best offer is often not the cheapest. */
static void test_steps_are_best_offer(void **state)
{
    as_mem *m = unit_mem(state);
    int *tier_of;
    as_search_snap *s = random_snap(m, 300, 99991u, &near_prices, &tier_of);
    assert_true(check_steps(s, m) > 30); /* the steps decided something */
    as_search_snap_release(s);
}

/* The steps and bits after stock changes, as a process's snapshot takes
 * them (the rows changed since, applied to a copy of its state): offers
 * sold out and offers back in stock. */
static void test_steps_follow_stock(void **state)
{
    as_mem *m = unit_mem(state);
    int *tier_of;
    fake_db db;
    as_product *ps = random_catalogue(m, 300, 31337u, &near_prices, &tier_of, &db);
    as_store st = fake_store_make(&db);
    as_search_index *si = as_search_index_create(NULL, NULL, NULL);
    as_search_snap *before = as_search_index_get(si, &st);
    assert_non_null(before);
    check_steps(before, m);
    size_t changed = 0;
    for (size_t i = 0; i < db.n_products; i++)
        for (size_t k = 0; k < ps[i].n_offers; k++)
            if ((i + k) % 3 == 0) { /* a third of the offers: out of stock, or back */
                ps[i].offers[k].stock = ps[i].offers[k].stock ? 0 : 7;
                changed++;
            }
    db.version.rank++;
    as_search_snap *after = as_search_index_get(si, &st);
    assert_non_null(after);
    assert_ptr_not_equal(after, before);
    assert_true(changed > 100);
    assert_true(check_steps(after, m) > 30);
    as_search_snap_release(before);
    as_search_snap_release(after);
    as_search_index_destroy(si);
}

/* A product's bound under any weights (sx_rank_bound) is at least its best
 * offer's score, for every product of a catalogue of several merchants per
 * product; under quality and reliability alone it is that score (the best
 * merchant's parts together), where the best quality of one merchant and
 * the best reliability of another would be above it for some. The gate's
 * masks (sx_bound_cmp) place it against a score as it does. */
static void test_bound_is_a_bound(void **state)
{
    as_mem *m = unit_mem(state);
    int *tier_of;
    as_search_snap *s = random_snap(m, 300, 4242u, &near_prices, &tier_of);
    const as_weights ws[] = {{{0.35, 0.25, 0.25, 0.15}}, {{0, 0, 0.4, 0.6}}, {{1, 0, 0, 0}},
                             {{0.2, 0.5, 0, 0.2}}, {{0, 0, 1, 0.1}}};
    as_offer_filter none = {0};
    size_t ranked = 0, tighter = 0, compared[3] = {0};
    for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
        sx_weights_tab t;
        assert_true(sx_weights_tab_make(s->c, m, &ws[i], &t));
        bool merchant_only = ws[i].w[0] == 0 && ws[i].w[1] == 0;
        for (uint32_t d = 0; d < s->c->n; d++) {
            sx_best b;
            sx_rank_best(s, d, &ws[i], &t, &none, -1, 20000, &b);
            int bound = sx_rank_bound(s, d, &t, &ws[i]);
            if (!b.n_eligible) {
                assert_int_equal(bound, 0);
                continue;
            }
            ranked++;
            assert_true(bound >= b.score);
            if (merchant_only) assert_int_equal(bound, b.score);
            int64_t apart = t.price[SX_TAB_MAX] + t.delivery[s->max_del10[d]] +
                            t.quality[s->best_q[d]] + t.reliability[s->best_r[d]];
            tighter += bound < (int)((apart + 50) / 100);
        }
        /* sx_bound_cmp tells the same, at scores around each bound and at
         * every score, one gate over all of them (its masks refilled as
         * the score changes, and kept while it does not) */
        sx_bound_gate g;
        sx_bound_gate_init(s->c, m, &t, &ws[i], &g);
        assert_true(g.masks);
        for (int score = 0; score <= 110; score += score < 40 ? 13 : 1)
            for (uint32_t d = 0; d < s->c->n; d++) {
                if (s->prod[d].def_off == UINT32_MAX) continue;
                int bound = sx_rank_bound(s, d, &t, &ws[i]);
                const int at[] = {score, bound - 1, bound, bound + 1, score};
                for (size_t k = 0; k < N_ROWS(at); k++) {
                    if (at[k] < 0) continue;
                    int want = bound < at[k] ? -1 : bound > at[k];
                    assert_int_equal(sx_bound_cmp(s, &g, d, at[k]), want);
                    compared[want + 1]++;
                }
            }
    }
    assert_true(ranked > 1000);
    assert_true(tighter > 0);
    for (size_t k = 0; k < 3; k++)
        assert_true(compared[k] > 1000);
    as_search_snap_release(s);
}

/* ---- the index file: what one process builds, another maps, with the same answers ---- */

static const char *last_log;
static void keep_log(void *baton, int level, const char *msg)
{
    (void)level;
    last_log = as_strdup(baton, msg);
}

static void cap_price(as_search_ask *a)
{
    a->of.max_price_cents = 1000;
}
static void by_price_weights(as_search_ask *a)
{
    a->w = (as_weights){{1, 0, 0, 0}};
    a->sort = AS_SORT_PRICE;
}
static void batteries_unverified(as_search_ask *a)
{
    a->category = "batteries";
    a->verified_only = false;
}

static const char *answer(as_mem *m, const as_search_snap *s, const char *q,
                          void (*tweak)(as_search_ask *))
{
    as_search_ask ask = {.q = q, .verified_only = true, .limit = 20, .today = 20000};
    as_weights_default(&ask.w);
    if (tweak) tweak(&ask);
    as_search_result r;
    as_search_run(s, m, &ask, &r);
    as_buf b;
    as_buf_init(&b, m);
    as_buf_printf(&b, "count %lld [%s] excluded %lld:", (long long)r.count, skus(m, &r),
                  (long long)r.excluded_count);
    for (size_t i = 0; i < r.n_excluded; i++)
        as_buf_printf(&b, " %s (%s)", r.excluded[i].sku, r.excluded_why[i]);
    as_buf_printf(&b, " words %zu dropped %zu device %s", r.understood.n_words,
                  r.understood.n_dropped, r.device ? r.device->slug : "-");
    return as_buf_str(&b);
}

/* answer's, with each result's match and what was understood of each word */
static const char *answer_kinds(as_mem *m, const as_search_snap *s, const char *q)
{
    as_search_ask ask = {.q = q, .verified_only = true, .limit = 20, .today = 20000};
    as_weights_default(&ask.w);
    as_search_result r;
    as_search_run(s, m, &ask, &r);
    as_buf b;
    as_buf_init(&b, m);
    as_buf_puts(&b, answer(m, s, q, NULL));
    for (size_t i = 0; i < r.n; i++)
        as_buf_printf(&b, " %s:%d%s", r.page[i].sku, (int)r.match[i], r.matched_all[i] ? "" : "~");
    for (size_t i = 0; i < r.understood.n_words; i++)
        as_buf_printf(&b, " [%s %s]", r.understood.words[i].word,
                      r.understood.words[i].corrected ? r.understood.words[i].corrected : "-");
    return as_buf_str(&b);
}

/* Words joined from neighbours ("Hand Soap" → "handsoap") are words of the
 * index, marked with the length of their first word when nothing has them on
 * their own; a query word no longer than that is not expanded to them, and
 * every search of a prefix of any word of the catalogue answers exactly what
 * it answers with every word's expansion. */
/* The words of the product with that sku in s's index, space-separated in
 * the index's order of words. */
static const char *product_words(as_mem *m, const as_search_snap *s, const char *sku)
{
    const sx_catalog *c = s->c;
    uint32_t d = 0;
    while (d < c->n && strcmp(sx_str(c, c->sku_at[d]), sku) != 0)
        d++;
    assert_true(d < c->n);
    as_buf b;
    as_buf_init(&b, m);
    for (uint32_t i = 0; i < c->ntok; i++)
        for (uint32_t p = c->post_at[i]; p < c->post_at[i + 1]; p++)
            if (c->post[p] == d) as_buf_printf(&b, "%s ", sx_tok(c, i));
    return as_buf_str(&b);
}

/* Texts that products repeat (brands, descriptions, spec labels and values)
 * are read into words once and their words kept for the next product with
 * the same text (text_memo): every product has the words it has when it is
 * the catalogue's only product, and a word of a shared text finds every
 * product that has it. */
static void test_repeated_texts(void **state)
{
    as_mem *m = unit_mem(state);
    static const as_merchant merchants[] = {M_A, M_B};
    static const as_device devices[] = {
        {7, "dyson-v11", "Dyson V11 Absolute", "Dyson", "vacuum-cleaner", "v11 sv14"},
        {8, "brita-marella", "Brita Marella", "Brita", "water-jug", ""},
        {9, "dyson-v8", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", "v8 sv10"}};
    static const char *const descriptions[] = {"Gentle foaming soap for daily use",
                                               "Replacement HEPA filter, washable",
                                               "Gentle filter for sensitive skin"};
    static const char *const brands[] = {"Lavera", "Dyson", "Brita", "Lavera Pro"};
    static as_spec_row specs[][2] = {
        {{"vegan", "Vegan", "categorical", NULL, "true", "true", 0},
         {"volume", "Volume", "info", "ml", "1000", "1000", 0}},
        {{"volume", "Volume", "info", "ml", "500", "500", 0},
         {"colour", "Colour", "info", NULL, "\"sea blue\"", "\"sea blue\"", 0}},
        {{"vegan", "Vegan", "categorical", NULL, "true", "false", 0},
         {"volume", "Volume", "info", "ml", "1000", "1000", 0}}};
    enum { N = 24 };
    static as_product products[N];
    static char sku[N][16], name[N][40];
    for (int i = 0; i < N; i++) {
        snprintf(sku[i], sizeof(sku[i]), "REP-%d", i + 1);
        snprintf(name[i], sizeof(name[i]), "Item %d of the %s range", i + 1, brands[i % 4]);
        products[i] = (as_product)PRODUCT(i + 1, sku[i], name[i], "hand-soap", "hand-soap",
                                          AS_VERIF_VERIFIED, soap_offers);
        products[i].brand = brands[i % 4];
        products[i].description = descriptions[i % 3];
        products[i].specs = specs[i % 3];
        products[i].n_specs = 2;
    }
    fake_db all;
    fixture_catalogue(&all, merchants, N_ROWS(merchants), devices, products, N);
    all.n_compat = 0;
    as_store st = fake_store_make(&all);
    as_search_snap *s = as_search_snap_build(&st);
    assert_non_null(s);
    unit_release_at_teardown(state, snap_release, s);
    for (int i = 0; i < N; i++) {
        fake_db one;
        fixture_catalogue(&one, merchants, N_ROWS(merchants), devices, &products[i], 1);
        one.n_compat = 0;
        as_store st1 = fake_store_make(&one);
        as_search_snap *s1 = as_search_snap_build(&st1);
        assert_non_null(s1);
        /* the same words, each once, in byte order in both indexes */
        const char *alone = product_words(m, s1, sku[i]), *among = product_words(m, s, sku[i]);
        as_search_snap_release(s1);
        assert_string_equal(among, alone);
    }
    /* a word of the second description and of the second spec rows' text */
    run x;
    x.st = st;
    as_search_ask ask = {.q = "washable", .verified_only = true, .limit = 20, .today = 20000};
    as_weights_default(&ask.w);
    fixture_search(m, &st, s, &ask, &x.r);
    assert_int_equal(x.r.count, N / 3);
    ask.q = "sea blue";
    fixture_search(m, &st, s, &ask, &x.r);
    assert_int_equal(x.r.count, N / 3);
}

static void test_joined_words(void **state)
{
    as_mem *m = unit_mem(state);
    run x;
    search(state, &x, "handsoap", NULL);
    assert_string_equal(skus(m, &x.r), "SOAP-4");
    assert_int_equal(x.r.match[0], AS_MATCH_EXACT);
    search(state, &x, "lavenderhand", NULL);
    assert_string_equal(skus(m, &x.r), "SOAP-4");

    catalogue(&x.db);
    x.st = fake_store_make(&x.db);
    as_search_snap *s = as_search_snap_build(&x.st);
    assert_non_null(s);
    sx_catalog *c = (sx_catalog *)s->c;
    size_t joined = 0, plain = 0;
    for (uint32_t i = 0; i < c->ntok; i++) {
        const char *t = sx_tok(c, i);
        if (!c->tok_join[i]) {
            plain++;
            continue;
        }
        joined++;
        /* every product with it has a word of at least that length that
         * begins it */
        assert_true(c->tok_join[i] < strlen(t));
        for (uint32_t p = c->post_at[i]; p < c->post_at[i + 1]; p++) {
            uint32_t d = c->post[p];
            bool first = false;
            for (uint32_t j = 0; j < c->ntok && !first; j++) {
                const char *w = sx_tok(c, j);
                size_t lw = strlen(w);
                if (lw < c->tok_join[i] || lw >= strlen(t) || strncmp(w, t, lw) != 0) continue;
                for (uint32_t q = c->post_at[j]; q < c->post_at[j + 1] && !first; q++)
                    first = c->post[q] == d; /* the product has w */
            }
            assert_true(first);
        }
    }
    assert_true(joined > 0);
    assert_true(plain > 0);
    uint32_t hs = 0;
    while (hs < c->ntok && strcmp(sx_tok(c, hs), "handsoap") != 0)
        hs++;
    assert_true(hs < c->ntok);
    assert_int_equal(c->tok_join[hs], 4);

    /* every prefix of every word, from two letters: the same answer without
     * the marks */
    uint8_t *marks = c->tok_join, *none = as_alloc(m, c->ntok ? c->ntok : 1);
    size_t compared = 0;
    for (uint32_t i = 0; i < c->ntok; i++) {
        const char *t = sx_tok(c, i);
        for (size_t len = 2; len <= strlen(t); len++) {
            const char *q = as_strndup(m, t, len);
            c->tok_join = marks;
            const char *with = answer_kinds(m, s, q);
            c->tok_join = none;
            const char *without = answer_kinds(m, s, q);
            c->tok_join = marks;
            assert_string_equal(with, without);
            compared++;
        }
    }
    assert_true(compared > 100);
    as_search_snap_release(s);
}

/* The catalogue's index three ways: built in memory, built by one process
 * (which writes the file) and mapped from that file by another; the file in
 * a directory of its own. */
typedef struct index_pair {
    char dir[sizeof("/tmp/as-index-test-XXXXXX")];
    const char *prefix; /* of the index's files: dir/db */
    fake_db db;
    as_store st;
    as_search_index *one, *two; /* the processes */
    as_search_snap *mem, *built, *mapped;
} index_pair;

static void index_pair_open(as_mem *m, index_pair *x)
{
    memcpy(x->dir, "/tmp/as-index-test-XXXXXX", sizeof(x->dir));
    assert_non_null(mkdtemp(x->dir));
    x->prefix = as_printf(m, "%s/db", x->dir);
    catalogue(&x->db);
    x->db.version.live = 40; /* the store's live sequence (test_live_stock) */
    x->st = fake_store_make(&x->db);
    x->one = as_search_index_create(x->prefix, keep_log, m);
    x->two = as_search_index_create(x->prefix, keep_log, m);
    x->built = as_search_index_get(x->one, &x->st);
    assert_non_null(x->built);
    assert_non_null(strstr(last_log, "built in"));
    x->mapped = as_search_index_get(x->two, &x->st);
    assert_non_null(x->mapped);
    assert_non_null(strstr(last_log, "mapped"));
    x->mem = as_search_snap_build(&x->st);
    assert_non_null(x->mem);
}

/* Removes the files the index of catalogue 1 leaves, then the directory:
 * nothing else may be left in it. */
static void index_pair_remove_files(as_mem *m, const index_pair *x)
{
    unlink(as_printf(m, "%s-1.idx", x->prefix));
    unlink(as_printf(m, "%s.lock", x->prefix));
    assert_int_equal(rmdir(x->dir), 0);
}

/* Lets go of the three snapshots and both processes' indexes, then removes
 * the files. */
static void index_pair_close(as_mem *m, index_pair *x)
{
    as_search_snap_release(x->mem);
    as_search_snap_release(x->built);
    as_search_snap_release(x->mapped);
    as_search_index_destroy(x->one);
    as_search_index_destroy(x->two);
    index_pair_remove_files(m, x);
}

/* The bytes of the file at path, on m. */
static const char *read_all(as_mem *m, const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct stat sb;
    assert_int_equal(fstat(fileno(f), &sb), 0);
    char *b = as_alloc(m, (size_t)sb.st_size + 1);
    *n = fread(b, 1, (size_t)sb.st_size, f);
    assert_int_equal(*n, (size_t)sb.st_size);
    fclose(f);
    return b;
}

/* A new process does not map the file of x's catalogue (damaged): it builds
 * the index again, and answers as a build in memory does. */
static void built_again(as_mem *m, const index_pair *x)
{
    as_search_index *si = as_search_index_create(x->prefix, keep_log, m);
    as_search_snap *s = as_search_index_get(si, &x->st);
    assert_non_null(s);
    assert_non_null(strstr(last_log, "built in"));
    assert_string_equal(answer(m, s, "aa batteries", NULL),
                        answer(m, x->mem, "aa batteries", NULL));
    as_search_snap_release(s);
    as_search_index_destroy(si);
}

static void test_index_file(void **state)
{
    as_mem *m = unit_mem(state);
    index_pair x;
    index_pair_open(m, &x);
    assert_int_equal(as_search_snap_products(x.mapped), as_search_snap_products(x.mem));
    /* the stock state is the build's, copied from the file, not made again:
     * byte for byte a build's in memory (before any search makes an order) */
    assert_int_equal(x.mapped->state_bytes, x.mem->state_bytes);
    assert_memory_equal(x.mapped->state, x.mem->state, x.mem->state_bytes);

    struct {
        const char *q;
        void (*tweak)(as_search_ask *);
    } asks[] = {{"aa batteries", NULL},
                {"hepa filter", cap_price},
                {"", batteries_unverified},
                {"vegan soap 1 liter", NULL},
                {"batteries", by_price_weights},
                {"filters for my dyson v11", NULL},
                {"batteris", NULL},
                {"zzzz hepa", NULL}};
    for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
        const char *want = answer(m, x.mem, asks[i].q, asks[i].tweak);
        assert_string_equal(answer(m, x.mapped, asks[i].q, asks[i].tweak), want);
        assert_string_equal(answer(m, x.built, asks[i].q, asks[i].tweak), want);
    }
    as_search_snap_release(x.mapped);
    as_search_snap_release(x.built);
    as_search_index_destroy(x.two);

    /* the file a build wrote its views' text into as it went is the file of a
     * build in memory, written whole */
    const char *file = as_printf(m, "%s-1.idx", x.prefix);
    const char *whole = as_printf(m, "%s/whole.idx", x.dir);
    assert_true(sx_file_write(x.mem, whole));
    size_t n_file, n_whole;
    const char *bytes = read_all(m, file, &n_file), *want = read_all(m, whole, &n_whole);
    assert_true(n_file > SX_VTEXT_OFF);
    assert_int_equal(n_file, n_whole);
    assert_memory_equal(bytes, want, n_file);
    unlink(whole);

    /* a file whose stock state names an offer of another product as a
     * product's best is damaged: not mapped, built again */
    struct stat sb;
    size_t image = 0; /* where the file holds the state */
    while (image + x.mem->state_bytes <= n_file &&
           memcmp(bytes + image, x.mem->state, x.mem->state_bytes) != 0)
        image += 8; /* sections are 8-byte aligned */
    assert_true(image + x.mem->state_bytes <= n_file);
    size_t at =
        image + (size_t)((const char *)&x.mem->prod[0].def_off - (const char *)x.mem->state);
    uint32_t other = x.mem->c->off_at[x.mem->c->n]; /* past the last product's offers */
    FILE *f = fopen(file, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    assert_int_equal(fwrite(&other, sizeof(other), 1, f), 1);
    assert_int_equal(fclose(f), 0);
    built_again(m, &x);

    /* a damaged file is not mapped: the next process builds it again */
    assert_int_equal(stat(file, &sb), 0);
    assert_int_equal(truncate(file, sb.st_size / 2), 0);
    built_again(m, &x);
    as_search_snap_release(x.mem);
    as_search_index_destroy(x.one);
    index_pair_remove_files(m, &x);
}

/* A process that read the catalogue's version just before an import and
 * asks for its index after another process wrote the newer one (removing the
 * older file) maps the newer file: it does not build the catalogue again
 * (search_index.t saw one file built twice under ASan while imports ran). */
static void test_stale_read_maps_newer_file(void **state)
{
    as_mem *m = unit_mem(state);
    index_pair x;
    index_pair_open(m, &x);
    as_search_version old = x.db.version;
    x.db.version.catalogue = 2; /* an import */
    as_search_index *three = as_search_index_create(x.prefix, keep_log, m);
    as_search_snap *newer = as_search_index_get(three, &x.st);
    assert_non_null(newer);
    assert_non_null(strstr(last_log, "built in"));
    assert_int_equal(access(as_printf(m, "%s-1.idx", x.prefix), F_OK), -1);

    as_search_index *four = as_search_index_create(x.prefix, keep_log, m);
    as_search_snap *s = as_search_index_at(four, &x.st, &old);
    assert_non_null(s);
    assert_non_null(strstr(last_log, "mapped"));
    assert_int_equal(as_search_snap_version(s).catalogue, 2);
    as_search_snap_release(s);
    as_search_snap_release(newer);
    as_search_index_destroy(four);
    as_search_index_destroy(three);
    unlink(as_printf(m, "%s-2.idx", x.prefix));
    index_pair_close(m, &x);
}

/* ---- builds in the background: a store whose index_rows waits at a gate ---- */

typedef struct gate {
    mtx_t m;
    cnd_t c;
    bool open;         /* index_rows may read */
    int entered;       /* builds that reached index_rows */
    int opens, closes; /* of the opener */
    bool fail_open;    /* the opener fails (a database that is down) */
    int built, failed; /* log lines: a build done, a build failed */
    fake_db db;        /* the background's own database (the test's is another) */
} gate;

static int gated_rows(void *h, as_index_rows_fn each, void *baton)
{
    gate *g = (gate *)((char *)h - offsetof(gate, db));
    mtx_lock(&g->m);
    g->entered++;
    cnd_broadcast(&g->c);
    while (!g->open)
        cnd_wait(&g->c, &g->m);
    mtx_unlock(&g->m);
    return fake_index_rows(h, each, baton);
}

static int gate_open(void *baton, as_store *st, void **conn)
{
    gate *g = baton;
    mtx_lock(&g->m);
    g->opens++;
    bool fail = g->fail_open;
    cnd_broadcast(&g->c);
    mtx_unlock(&g->m);
    if (fail) return AS_EDB;
    /* the fake store, its index_rows gated */
    static as_store_feed_ops feed;
    static as_store_ops ops;
    feed = fake_feed;
    feed.index_rows = gated_rows;
    ops = fake_ops;
    ops.feed = &feed;
    *st = (as_store){&ops, &g->db};
    *conn = g;
    return AS_OK;
}

static void gate_close(void *baton, void *conn)
{
    gate *g = baton;
    assert_ptr_equal(conn, g);
    mtx_lock(&g->m);
    g->closes++;
    cnd_broadcast(&g->c);
    mtx_unlock(&g->m);
}

static void gate_log(void *baton, int level, const char *msg)
{
    (void)level;
    gate *g = baton;
    mtx_lock(&g->m);
    g->built += strstr(msg, "built in") && strstr(msg, "in the background");
    g->failed += strstr(msg, "background build failed") != NULL;
    cnd_broadcast(&g->c);
    mtx_unlock(&g->m);
}

/* Waits until *counter (guarded by g->m) reaches n; fails after 30 s. */
static void gate_wait(gate *g, const int *counter, int n)
{
    struct timespec until;
    timespec_get(&until, TIME_UTC);
    until.tv_sec += 30;
    mtx_lock(&g->m);
    int r = thrd_success;
    while (*counter < n && r == thrd_success)
        r = cnd_timedwait(&g->c, &g->m, &until);
    int got = *counter;
    mtx_unlock(&g->m);
    assert_int_equal(got, n);
}

static void gate_set(gate *g, bool open, as_search_version v, size_t products, bool fail)
{
    mtx_lock(&g->m);
    g->open = open;
    g->db.version = v;
    g->db.n_products = products;
    g->fail_open = fail;
    cnd_broadcast(&g->c);
    mtx_unlock(&g->m);
}

static gate *gate_new(void)
{
    gate *g = calloc(1, sizeof(*g));
    assert_non_null(g);
    assert_int_equal(mtx_init(&g->m, mtx_plain), thrd_success);
    assert_int_equal(cnd_init(&g->c), thrd_success);
    catalogue(&g->db);
    g->open = true;
    return g;
}

static void gate_free(gate *g)
{
    cnd_destroy(&g->c);
    mtx_destroy(&g->m);
    free(g);
}

static int64_t catalogue_of(as_search_snap *s)
{
    return as_search_snap_version(s).catalogue;
}

/* Catalogue v in both databases: the searches' (db) and the background's,
 * whose build of it waits at the gate unless open, and fails when fail. */
static void gate_catalogue(gate *g, fake_db *db, int64_t v, bool open, size_t products, bool fail)
{
    gate_set(g, open, (as_search_version){v, 0, 0}, products, fail);
    db->version = (as_search_version){v, 0, 0};
}

/* The catalogue of the snapshot a search gets now. */
static int64_t catalogue_now(as_search_index *si, as_store *st)
{
    as_search_snap *s = as_search_index_get(si, st);
    assert_non_null(s);
    int64_t v = catalogue_of(s);
    as_search_snap_release(s);
    return v;
}

/* A search that sees a new catalogue gets the old snapshot at once while the
 * background build runs (held at the gate), then the new one; a build that
 * fails is not asked again at once. */
static void test_background_build(void **state)
{
    as_mem *m = unit_mem(state);
    char dir[] = "/tmp/as-index-bg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    gate *g = gate_new();
    fake_db db; /* what the searches read: the versions */
    catalogue(&db);
    as_store st = fake_store_make(&db);
    as_search_index *si = as_search_index_create(as_printf(m, "%s/db", dir), gate_log, g);
    as_search_index_background(si, &(as_search_opener){gate_open, gate_close, g, 30000});

    /* the first search waits for the first build */
    as_search_snap *s = as_search_index_get(si, &st);
    assert_non_null(s);
    assert_int_equal(as_search_snap_products(s), 6);
    assert_int_equal(g->built, 1);
    /* with the product views' parts (a build in the background once read
     * every stream but the views': every view then came whole from the store) */
    as_search_view v;
    assert_true(as_search_view_find(s, m, "SOAP-4", NULL, &v));
    assert_true(v.kept.head_len > 0);
    as_search_snap_release(s);

    /* catalogue 2 (one product fewer), its build held at the gate */
    gate_catalogue(g, &db, 2, false, 5, false);
    assert_int_equal(catalogue_now(si, &st), 1); /* at once, the old one */
    gate_wait(g, &g->entered, 2);                /* the build is under way */
    s = as_search_index_get(si, &st);
    assert_int_equal(catalogue_of(s), 1);
    assert_int_equal(as_search_snap_products(s), 6);
    as_search_snap_release(s);
    gate_set(g, true, (as_search_version){2, 0, 0}, 5, false);
    gate_wait(g, &g->closes, 2); /* built, installed, its store closed */
    s = as_search_index_get(si, &st);
    assert_int_equal(catalogue_of(s), 2);
    assert_int_equal(as_search_snap_products(s), 5);
    as_search_snap_release(s);
    assert_int_equal(g->opens, 2); /* one build per catalogue */

    /* catalogue 3 with the database down: the old one serves, the failure is
     * logged, and the next search does not ask again at once (back-off) */
    gate_catalogue(g, &db, 3, true, 6, true);
    assert_int_equal(catalogue_now(si, &st), 2);
    gate_wait(g, &g->failed, 1);
    assert_int_equal(catalogue_now(si, &st), 2);
    assert_int_equal(g->opens, 3);
    as_search_index_destroy(si);

    /* a new process (the file of catalogue 2 is there): its first search maps it */
    gate_catalogue(g, &db, 2, true, 5, false);
    si = as_search_index_create(as_printf(m, "%s/db", dir), gate_log, g);
    as_search_index_background(si, &(as_search_opener){gate_open, gate_close, g, 30000});
    s = as_search_index_get(si, &st);
    assert_non_null(s);
    assert_int_equal(catalogue_of(s), 2);
    assert_int_equal(as_search_snap_products(s), 5);
    as_search_snap_release(s);

    /* the index destroyed while a build is under way: the build gives up (or
     * ends) and its thread is joined; no file is left half-written */
    gate_catalogue(g, &db, 4, false, 6, false);
    assert_int_equal(catalogue_now(si, &st), 2);
    gate_wait(g, &g->entered, 3);
    gate_set(g, true, (as_search_version){4, 0, 0}, 6, false);
    as_search_index_destroy(si);
    assert_int_equal(g->opens, g->closes + 1); /* every store opened was closed (one failed) */
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        assert_null(strstr(e->d_name, ".tmp"));
        if (e->d_name[0] != '.') unlink(as_printf(m, "%s/%s", dir, e->d_name));
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
    gate_free(g);
}

static void touch(as_mem *m, const char *dir, const char *name)
{
    int fd = open(as_printf(m, "%s/%s", dir, name), O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
}

static bool there(as_mem *m, const char *dir, const char *name)
{
    return access(as_printf(m, "%s/%s", dir, name), F_OK) == 0;
}

/* The sweep at start-up: the temporary files of a database whose lock some
 * process holds are a live writer's and stay; those of a database whose lock
 * nobody holds, or that has no lock file, are dead writers' and go; nothing
 * else is touched. */
static void test_sweep_dead_writers(void **state)
{
    as_mem *m = unit_mem(state);
    char dir[] = "/tmp/as-index-sweep-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *names[] = {"aaaa-1.idx.tmp.123", "aaaa.lock",  "bbbb-2.idx.tmp.456", "bbbb.lock",
                           "cccc-3.idx.tmp.789", "aaaa-1.idx", "dddd-4.idx.tmp.x"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        touch(m, dir, names[i]);
    int held = open(as_printf(m, "%s/aaaa.lock", dir), O_RDWR); /* a writer of aaaa */
    assert_true(held >= 0);
    assert_int_equal(flock(held, LOCK_EX), 0);
    assert_int_equal(as_search_files_sweep(dir), 2);
    assert_true(there(m, dir, "aaaa-1.idx.tmp.123"));
    assert_false(there(m, dir, "bbbb-2.idx.tmp.456"));
    assert_false(there(m, dir, "cccc-3.idx.tmp.789"));
    assert_true(there(m, dir, "aaaa-1.idx"));
    assert_true(there(m, dir, "dddd-4.idx.tmp.x"));
    assert_true(there(m, dir, "bbbb.lock"));
    close(held); /* the writer died: its file goes at the next sweep */
    assert_int_equal(as_search_files_sweep(dir), 1);
    assert_false(there(m, dir, "aaaa-1.idx.tmp.123"));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        unlink(as_printf(m, "%s/%s", dir, names[i]));
    assert_int_equal(rmdir(dir), 0);
}

/* A process with no snapshot whose first build takes longer than wait_ms:
 * NULL, with a Retry-After; once built, the search has it. In memory (no
 * index file). */
static void test_first_build_bound(void **state)
{
    (void)state;
    gate *g = gate_new();
    gate_set(g, false, (as_search_version){1, 0, 0}, 6, false);
    fake_db db;
    catalogue(&db);
    as_store st = fake_store_make(&db);
    as_search_index *si = as_search_index_create(NULL, gate_log, g);
    as_search_index_background(si, &(as_search_opener){gate_open, gate_close, g, 50});
    assert_null(as_search_index_get(si, &st));
    assert_true(as_search_index_retry_after(si) >= 1);
    gate_set(g, true, (as_search_version){1, 0, 0}, 6, false);
    gate_wait(g, &g->closes, 1);
    as_search_snap *s = as_search_index_get(si, &st);
    assert_non_null(s);
    assert_int_equal(as_search_snap_products(s), 6);
    assert_int_equal(as_search_index_retry_after(si), 0);
    as_search_snap_release(s);
    as_search_index_destroy(si);

    /* the first build fails: the search does not wait out the bound */
    gate_set(g, true, (as_search_version){1, 0, 0}, 6, true);
    si = as_search_index_create(NULL, gate_log, g);
    as_search_index_background(si, &(as_search_opener){gate_open, gate_close, g, 30000});
    assert_null(as_search_index_get(si, &st));
    assert_int_equal(g->failed, 1);
    assert_true(as_search_index_retry_after(si) >= 1);
    as_search_index_destroy(si);
    gate_free(g);
}

static int by_offer_id(const void *a, const void *b)
{
    return strcmp(((const as_offer *)a)->id, ((const as_offer *)b)->id);
}

/* Product sku's view (for device, when not NULL) from snapshot s, and read
 * whole as the store's product_by_sku gives it (offers by id, as the SQL
 * store orders them); both NULL-safe strings. */
static void views_both(as_mem *m, as_store *st, fake_db *db, const as_search_snap *s,
                       const char *sku, const as_device *dev, const char **from_index,
                       const char **whole)
{
    as_weights w;
    as_weights_default(&w);
    as_offer_filter of = {0, 0, NULL};
    size_t n;
    as_search_view v;
    as_product_live live;
    *from_index = "none";
    if (as_search_view_find(s, m, sku, dev, &v)) {
        as_product_live by_sku;
        assert_int_equal(as_store_product_live(st, m, sku, 0, &by_sku), AS_OK);
        assert_int_equal(by_sku.product_id, v.p.id);
        assert_int_equal(as_store_product_live(st, m, NULL, v.p.id, &live), AS_OK);
        assert_int_equal(live.product_id, v.p.id);
        assert_true(as_search_view_live(&v, &live));
        as_ranking r;
        as_rank_offers(m, &v.p, &w, &of, 20000, &r);
        *from_index = as_view_product_from(m, &v.kept, &v.p, &r, dev, &n);
    }
    as_product p;
    *whole = "none";
    if (as_store_product_by_sku(st, m, sku, dev ? dev->id : 0, &p) == AS_OK) {
        qsort(p.offers, p.n_offers, sizeof(as_offer), by_offer_id);
        p.guarantee = fake_guarantee(db, sku);
        as_ranking r;
        as_rank_offers(m, &p, &w, &of, 20000, &r);
        *whole = as_view_product_text(m, &p, &r, dev, &n);
    }
}

/* Product views from the index, built in memory and mapped from its file,
 * are the bytes of the view read whole: every product, for each device, and
 * an unknown sku (not in the index). */
static void test_product_views(void **state)
{
    as_mem *m = unit_mem(state);
    index_pair x;
    index_pair_open(m, &x);
    const as_search_snap *snaps[] = {x.mem, x.built, x.mapped};
    size_t compared = 0;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < x.db.n_products; i++)
            for (size_t d = 0; d <= x.db.n_devices; d++) {
                const as_device *dev = d ? &x.db.devices[d - 1] : NULL;
                const char *a, *b;
                views_both(m, &x.st, &x.db, snaps[k], x.db.products[i].sku, dev, &a, &b);
                assert_string_equal(a, b);
                compared++;
            }
    assert_int_equal(compared, 3 * x.db.n_products * (x.db.n_devices + 1));
    as_search_view v;
    assert_false(as_search_view_find(x.mapped, m, "NO-SUCH-1", NULL, &v));
    index_pair_close(m, &x);
}

/* A store's live sequence (as_store_live_ops), as the test sets it: the
 * products changed at each number, and those with a question. */
static struct {
    int64_t id[4], seq[4];
    size_t n;
    int64_t asked;
    int calls;
} live;

static int live_changes(void *h, int64_t since, bool asked, as_live_fn each, void *baton)
{
    (void)h;
    live.calls++;
    if (asked && live.asked) each(baton, live.asked);
    for (size_t i = 0; i < live.n; i++)
        if (live.seq[i] > since) each(baton, live.id[i]);
    return AS_OK;
}

/* The stock as_search_offers_stock gives of offer id, -1 when absent. */
static int64_t stock_given(const as_offer_stock *st, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(st[i].offer_id, id) == 0) return st[i].stock;
    return -1;
}

/* A page's stock and a view's live part come from the index for the products
 * the store's live sequence names no change of, from the store for the others,
 * in each of the three snapshots (in memory, built into a file, mapped). */
static void test_live_stock(void **state)
{
    as_mem *m = unit_mem(state);
    index_pair x;
    index_pair_open(m, &x);
    as_search_snap *snaps[] = {x.mem, x.built, x.mapped};
    const int64_t ids[] = {1, 2, 4, 5};
    for (size_t k = 0; k < 3; k++) {
        const as_search_snap *s = snaps[k];
        memset(&live, 0, sizeof(live));
        live.asked = 4; /* SOAP-4 has a question: its view is read whole */
        static const as_store_live_ops live_ops = {live_changes};
        as_store_ops ops = *x.st.ops;
        ops.live = &live_ops;
        as_store st = {&ops, x.st.h};
        as_search_version read = as_search_snap_version(s);
        assert_int_equal(read.live, 40); /* the build's, kept in the file */
        as_offer_stock *got;
        size_t n;
        int calls = x.db.calls;
        /* a number below the build's (a database put back from a copy): the store */
        read.live = 39;
        assert_int_equal(as_search_offers_stock(s, &st, &read, m, ids + 1, 1, &got, &n), AS_OK);
        assert_int_equal(x.db.calls, calls + 1);
        assert_int_equal(live.calls, 0);
        read.live = 40;
        calls = x.db.calls;
        assert_int_equal(as_search_offers_stock(s, &st, &read, m, ids, 4, &got, &n), AS_OK);
        assert_int_equal(n, 7); /* 2 + 1 + 2 + 2 offers */
        assert_int_equal(x.db.calls, calls + 1); /* for SOAP-4 alone */
        assert_int_equal(live.calls, 1);
        assert_int_equal(stock_given(got, n, "aa-a"), 10);
        assert_int_equal(stock_given(got, n, "aa-b"), 0);
        assert_int_equal(stock_given(got, n, "soap-b"), 9);
        assert_int_equal(stock_given(got, n, "hepa-b"), 3);
        as_search_view v;
        as_product_live pl;
        assert_true(as_search_view_find(s, m, "AAA-2", NULL, &v));
        assert_true(as_search_view_live_kept(s, &st, &read, &v, m, &pl));
        assert_int_equal(pl.product_id, 2);
        assert_int_equal(pl.n_stock, 1);
        assert_int_equal(pl.stock[0].stock, 5);
        assert_int_equal(pl.n_questions, 0);
        assert_true(as_search_view_find(s, m, "SOAP-4", NULL, &v));
        assert_false(as_search_view_live_kept(s, &st, &read, &v, m, &pl));
        /* a sale the store numbers: read from the store from then on */
        aa_offers[0].stock = 7;
        assert_int_equal(as_search_offers_stock(s, &st, &read, m, ids, 4, &got, &n), AS_OK);
        assert_int_equal(stock_given(got, n, "aa-a"), 10); /* not numbered yet: as built */
        live.id[live.n] = 1;
        live.seq[live.n++] = read.live + 3;
        read.live += 3;
        calls = x.db.calls;
        assert_int_equal(as_search_offers_stock(s, &st, &read, m, ids, 4, &got, &n), AS_OK);
        assert_int_equal(stock_given(got, n, "aa-a"), 7);
        assert_int_equal(stock_given(got, n, "aa-b"), 0);
        assert_int_equal(stock_given(got, n, "aaa-a"), 5);
        assert_int_equal(n, 7);
        assert_int_equal(x.db.calls, calls + 1);
        assert_int_equal(live.calls, 2);
        assert_true(as_search_view_find(s, m, "AA-1", NULL, &v));
        assert_false(as_search_view_live_kept(s, &st, &read, &v, m, &pl));
        /* an older number read by a slower request: nothing read again */
        as_search_version older = read;
        older.live -= 1;
        assert_int_equal(as_search_offers_stock(s, &st, &older, m, ids, 1, &got, &n), AS_OK);
        assert_int_equal(stock_given(got, n, "aa-a"), 7);
        assert_int_equal(live.calls, 2);
        aa_offers[0].stock = 10;
        /* another catalogue, or a store that does not number: all from the store */
        as_search_version other = read;
        other.catalogue++;
        calls = x.db.calls;
        assert_int_equal(as_search_offers_stock(s, &st, &other, m, ids + 1, 1, &got, &n), AS_OK);
        assert_int_equal(x.db.calls, calls + 1);
        assert_true(as_search_view_find(s, m, "AAA-2", NULL, &v));
        assert_false(as_search_view_live_kept(s, &st, &other, &v, m, &pl));
        assert_int_equal(as_search_offers_stock(s, &x.st, &read, m, ids + 1, 1, &got, &n), AS_OK);
        assert_int_equal(x.db.calls, calls + 2);
        assert_false(as_search_view_live_kept(s, &x.st, &read, &v, m, &pl));
    }
    index_pair_close(m, &x);
}

/* The rank rows changed since a version, as a store that numbers each
 * product's row reports them: only the products whose row_rank (by id) is
 * above it (the fake reports every product once the version moved). */
static int64_t row_rank[301];
static const as_store_feed_ops *every_row;
typedef struct {
    as_rank_row_fn each;
    void *baton;
    int64_t since;
} rows_since;

static int row_if_changed(void *baton, int64_t id, const as_rank_row *r)
{
    rows_since *w = baton;
    assert_true(id >= 1 && id <= 300);
    return row_rank[id] > w->since ? w->each(w->baton, id, r) : 0;
}

static int changed_rows(void *h, int64_t since, as_rank_row_fn each, void *baton)
{
    rows_since w = {each, baton, since};
    return every_row->rank_changes(h, -1, row_if_changed, &w);
}

/* A process's snapshots after stock changes start from the index file's
 * state, mapped copy-on-write, with the products changed since the build
 * applied (a change costs the pages it writes, not a copy of the whole
 * state); once those are many, the state of that moment becomes the base
 * (a memory file) and the next changes apply to it. Every snapshot's state
 * is byte for byte a build's from the store at that stock, and answers as
 * it does. */
static void test_state_from_base(void **state)
{
    as_mem *m = unit_mem(state);
    char dir[] = "/tmp/as-base-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *prefix = as_printf(m, "%s/db", dir);
    int *tier_of;
    fake_db db;
    as_product *ps = random_catalogue(m, 300, 4242u, &near_prices, &tier_of, &db);
    as_store plain = fake_store_make(&db);
    every_row = plain.ops->feed;
    as_store_feed_ops feed = *plain.ops->feed;
    feed.rank_changes = changed_rows;
    as_store_ops ops = *plain.ops;
    ops.feed = &feed;
    as_store st = {&ops, plain.h};
    memset(row_rank, 0, sizeof(row_rank));

    as_search_index *si = as_search_index_create(prefix, NULL, NULL);
    as_search_snap *s = as_search_index_get(si, &st);
    assert_non_null(s);
    sx_catalog *c = s->c;
    assert_true(c->base_fd >= 0); /* mapped from the file it wrote */
    assert_int_equal(c->base_rank, db.version.rank);
    size_t max = s->state_bytes / (256 * 1024) + 16;
    /* products changed per round: a few, then more than the limit (the
     * state becomes the base), then a few again, on the new base */
    const size_t per_round[] = {2, 3, 1, max + 5, 2, 4};
    size_t since_base = 0, next = 0;
    for (size_t round = 0; round < sizeof(per_round) / sizeof(per_round[0]); round++) {
        db.version.rank++;
        for (size_t k = 0; k < per_round[round]; k++, next = (next + 37) % 300) {
            as_offer *o = &ps[next].offers[0];
            o->stock = o->stock ? 0 : 4; /* sold out, or back */
            row_rank[ps[next].id] = db.version.rank;
        }
        since_base += per_round[round];
        as_search_snap *nx = as_search_index_get(si, &st);
        assert_non_null(nx);
        assert_ptr_not_equal(nx, s);
        assert_ptr_equal(nx->c, c);
        if (since_base > max) { /* this state is the base from now on */
            assert_int_equal(nx->base_changes, 0);
            assert_int_equal(c->base_rank, db.version.rank);
            since_base = 0;
        } else { /* at most the products changed since the base (a product
                    may change twice) */
            assert_true(nx->base_changes > 0 && nx->base_changes <= since_base);
        }
        as_search_snap *want = as_search_snap_build(&plain);
        assert_non_null(want);
        assert_int_equal(nx->state_bytes, want->state_bytes);
        assert_memory_equal(nx->state, want->state, want->state_bytes);
        assert_string_equal(answer(m, nx, "thing", cap_price), answer(m, want, "thing", cap_price));
        assert_string_equal(answer(m, nx, "", NULL), answer(m, want, "", NULL));
        as_search_snap_release(want);
        as_search_snap_release(s);
        s = nx;
    }
    assert_true(c->base_rank > 1); /* rebased once */
    as_search_snap_release(s);
    as_search_index_destroy(si);
    unlink(as_printf(m, "%s-1.idx", prefix));
    unlink(as_printf(m, "%s.lock", prefix));
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_tiers_and_exclusions),
        UNIT_TEST(test_spec_words_and_stems),
        UNIT_TEST(test_typo),
        UNIT_TEST(test_device_and_price_in_text),
        UNIT_TEST(test_filters_without_text),
        UNIT_TEST(test_device_without_text),
        UNIT_TEST(test_order_is_the_formula),
        UNIT_TEST(test_filtered_best_is_ranked_best),
        UNIT_TEST(test_sort_orders),
        UNIT_TEST(test_pages_are_brute_force),
        UNIT_TEST(test_docs_order),
        UNIT_TEST(test_heads_spill),
        UNIT_TEST(test_joined_words),
        UNIT_TEST(test_repeated_texts),
        UNIT_TEST(test_steps_are_best_offer),
        UNIT_TEST(test_steps_follow_stock),
        UNIT_TEST(test_bound_is_a_bound),
        UNIT_TEST(test_device_typo),
        UNIT_TEST(test_index_file),
        UNIT_TEST(test_stale_read_maps_newer_file),
        UNIT_TEST(test_background_build),
        UNIT_TEST(test_sweep_dead_writers),
        UNIT_TEST(test_first_build_bound),
        UNIT_TEST(test_product_views),
        UNIT_TEST(test_live_stock),
        UNIT_TEST(test_state_from_base),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
