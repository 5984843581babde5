/* as_rank_offers on hand-built products: components, weighting, score, ranks,
 * ineligibility, tie-breaks, custom weights, explanations; as_demo_agent_price_cents. */
#include "unit_check.h"

#include <math.h>

#include "as_rank.h"
#include "../../ctl/ctl_demo_price.h" /* agentshopctl's generator */
#include "as_util.h"

#define TODAY 20468 /* 2026-01-15 */

static as_merchant merchant(const char *id, const char *name, double on_time, double accuracy)
{
    as_merchant m = {id, name, "NL", "Utrecht", on_time, accuracy, NULL, 0};
    return m;
}

static as_offer offer(const char *id, as_merchant m, int64_t price, int days, int64_t stock)
{
    as_offer o = {id, m, price, price + 100, "agent price", days, stock};
    return o;
}

static as_product product(as_offer *offers, size_t n)
{
    as_product p;
    memset(&p, 0, sizeof(p));
    p.sku = "TEST-001";
    p.name = "Test part";
    p.availability = "in_stock";
    p.verif_status = AS_VERIF_VERIFIED;
    p.offers = offers;
    p.n_offers = n;
    return p;
}

static double round_to(double v, int d)
{
    double f = pow(10, d);
    return round(v * f) / f;
}

static const as_scored *find_ranked(const as_ranking *r, const char *id)
{
    for (size_t i = 0; i < r->n_ranked; i++)
        if (strcmp(r->ranked[i].offer->id, id) == 0) return &r->ranked[i];
    return NULL;
}

static const as_ineligible *find_inel(const as_ranking *r, const char *id)
{
    for (size_t i = 0; i < r->n_inel; i++)
        if (strcmp(r->inel[i].offer->id, id) == 0) return &r->inel[i];
    return NULL;
}

/* Every ranked offer follows the documented formula, independently recomputed. */
static void check_formula(as_mem *m, const as_ranking *r, const as_weights *w, int *failures)
{
    int unit_failures_ = 0;
    int64_t cheapest = 0;
    for (size_t i = 0; i < r->n_ranked; i++)
        if (!cheapest || r->ranked[i].offer->price_cents < cheapest)
            cheapest = r->ranked[i].offer->price_cents;
    for (size_t i = 0; i < r->n_ranked; i++) {
        const as_scored *s = &r->ranked[i];
        const as_offer *o = s->offer;
        const char *label = as_printf(m, "offer %s", o->id);
        double delivery = 100 - 12.5 * (o->delivery_days - 1);
        delivery = delivery < 0 ? 0 : delivery > 100 ? 100 : delivery;
        double comp[AS_W_N] = {
            round_to(100.0 * (double)cheapest / (double)o->price_cents, 1),
            round_to(delivery, 1),
            round_to(100.0 * o->merchant.accuracy_rate, 1),
            round_to(100.0 * o->merchant.on_time_rate, 1),
        };
        double sum = 0;
        for (int k = 0; k < AS_W_N; k++) {
            CHECK_NEAR(as_printf(m, "%s comp %s", label, as_weight_names[k]), s->comp[k], comp[k],
                       1e-9);
            CHECK(label, s->comp[k] >= 0 && s->comp[k] <= 100);
            CHECK_NEAR(as_printf(m, "%s weighted %s", label, as_weight_names[k]), s->weighted[k],
                       round_to(comp[k] * w->w[k], 2), 1e-9);
            sum += s->weighted[k];
        }
        CHECK_INT(label, s->score, lround(round_to(sum, 2)));
        CHECK_INT(label, s->rank, (long long)i + 1);
        CHECK_INT(label, s->delivery_day, TODAY + o->delivery_days);
        if (i > 0) CHECK(label, s->score <= r->ranked[i - 1].score);
    }
    *failures += unit_failures_;
}

/* ---- components on hand-picked values ---- */

static void test_components(void **state)
{
    as_mem *m = unit_mem(state);
    as_offer o[] = {
        offer("o1", merchant("ma", "Alpha", 0.95, 0.99), 1000, 1, 10),
        offer("o2", merchant("mb", "Beta", 0.90, 0.97), 800, 3, 10),
        offer("o3", merchant("mc", "Gamma", 0.80, 0.60), 1600, 9, 10),
    };
    as_product p = product(o, N_ROWS(o));
    as_weights w;
    as_weights_default(&w);
    as_ranking r;
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    assert_int_equal(r.n_ranked, 3);
    assert_int_equal(r.n_inel, 0);

    /* o1: price 80, delivery 100, quality 99, reliability 95
     *     weighted 28, 25, 24.75, 14.25 = 92
     * o2: price 100, delivery 75, quality 97, reliability 90
     *     weighted 35, 18.75, 24.25, 13.5 = 91.5 -> 92
     * o3: price 50, delivery 0, quality 60, reliability 80
     *     weighted 17.5, 0, 15, 12 = 44.5 -> 45 */
    const struct {
        const char *id;
        double comp[AS_W_N], weighted[AS_W_N];
        int score;
    } rows[] = {
        {"o1", {80, 100, 99, 95}, {28, 25, 24.75, 14.25}, 92},
        {"o2", {100, 75, 97, 90}, {35, 18.75, 24.25, 13.5}, 92},
        {"o3", {50, 0, 60, 80}, {17.5, 0, 15, 12}, 45},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const as_scored *s = find_ranked(&r, rows[i].id);
        CHECK(rows[i].id, s != NULL);
        if (!s) continue;
        for (int k = 0; k < AS_W_N; k++) {
            CHECK_NEAR(rows[i].id, s->comp[k], rows[i].comp[k], 1e-9);
            CHECK_NEAR(rows[i].id, s->weighted[k], rows[i].weighted[k], 1e-9);
        }
        CHECK_INT(rows[i].id, s->score, rows[i].score);
    }
    /* Equal score 92: the cheaper o2 comes first. */
    CHECK_STR("order", r.ranked[0].offer->id, "o2");
    CHECK_STR("order", r.ranked[1].offer->id, "o1");
    CHECK_STR("order", r.ranked[2].offer->id, "o3");
    check_formula(m, &r, &w, &unit_failures_);
    ROWS_DONE();
}

static void test_rounding(void **state)
{
    as_mem *m = unit_mem(state);
    /* Uneven prices and rates: every component rounded to one decimal. */
    as_offer o[] = {
        offer("r1", merchant("ma", "Alpha", 0.9876, 0.91234), 333, 2, 1),
        offer("r2", merchant("mb", "Beta", 0.5555, 0.12345), 999, 4, 1),
        offer("r3", merchant("mc", "Gamma", 1.0, 1.0), 777, 7, 1),
        offer("r4", merchant("md", "Delta", 0.0, 0.0), 1234, 13, 1),
    };
    as_product p = product(o, N_ROWS(o));
    as_ranking r;
    ROWS_BEGIN;
    const char *ws[] = {"null", "price:0.3,delivery:0.3,quality:0.3,reliability:0.1",
                        "price:0.7,quality:0.11", "reliability:1",
                        "price:0.123,delivery:0.456,quality:0.789,reliability:0.321"};
    for (size_t i = 0; i < N_ROWS(ws); i++) {
        as_weights w;
        const char *err;
        assert_true(as_weights_parse(m, ws[i], &w, &err));
        as_rank_offers(m, &p, &w, NULL, TODAY, &r);
        CHECK_INT(ws[i], r.n_ranked, 4);
        check_formula(m, &r, &w, &unit_failures_);
    }
    /* r1 with the defaults, by hand: price 100, delivery 87.5, quality 91.2,
     * reliability 98.8 -> 35 + 21.88 + 22.8 + 14.82 = 94.5 -> 95 (rounded half up) */
    as_weights w;
    as_weights_default(&w);
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    const as_scored *s = find_ranked(&r, "r1");
    assert_non_null(s);
    CHECK_NEAR("r1", s->comp[AS_W_QUALITY], 91.2, 1e-9);
    CHECK_NEAR("r1", s->comp[AS_W_RELIABILITY], 98.8, 1e-9);
    CHECK_NEAR("r1", s->weighted[AS_W_DELIVERY], 21.88, 1e-9);
    CHECK_NEAR("r1", s->weighted[AS_W_RELIABILITY], 14.82, 1e-9);
    CHECK_INT("r1", s->score, 95);
    /* r2: price 100*333/999 = 33.3 */
    s = find_ranked(&r, "r2");
    assert_non_null(s);
    CHECK_NEAR("r2", s->comp[AS_W_PRICE], 33.3, 1e-9);
    CHECK_NEAR("r2", s->comp[AS_W_QUALITY], 12.3, 1e-9);
    CHECK_NEAR("r2", s->comp[AS_W_RELIABILITY], 55.6, 1e-9);
    s = find_ranked(&r, "r4");
    assert_non_null(s);
    CHECK_NEAR("r4", s->comp[AS_W_DELIVERY], 0, 1e-9);
    CHECK_INT("r4 last", r.ranked[3].rank, 4);
    ROWS_DONE();
}

static void test_delivery_component(void **state)
{
    (void)state;
    const struct {
        int days;
        double want;
    } rows[] = {
        {-3, 100}, {0, 100},  {1, 100}, {2, 87.5}, {3, 75},
        {5, 50},   {8, 12.5}, {9, 0},   {10, 0},   {30, 0},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        char label[32];
        snprintf(label, sizeof(label), "days %d", rows[i].days);
        CHECK_NEAR(label, as_delivery_component(rows[i].days), rows[i].want, 1e-9);
    }
    ROWS_DONE();
}

/* ---- eligibility ---- */

typedef struct inel_row {
    const char *name;
    const char *availability;
    as_offer_filter filter;
    const char *eligible;   /* ids, space separated, in rank order */
    const char *ineligible; /* id=reason-fragment pairs, ';' separated */
} inel_row;

/* The kind a row's reason fragment names: the kind must say what the text says. */
static as_inel_kind fragment_kind(const char *fragment)
{
    if (strcmp(fragment, "Out of stock") == 0) return AS_INEL_OUT_OF_STOCK;
    if (strcmp(fragment, "requested merchant") == 0) return AS_INEL_OTHER_MERCHANT;
    if (strcmp(fragment, "max_price") == 0) return AS_INEL_ABOVE_MAX_PRICE;
    if (strcmp(fragment, "deliver_by") == 0) return AS_INEL_AFTER_DELIVER_BY;
    return AS_INEL_NONE;
}

static void test_ineligible(void **state)
{
    as_mem *m = unit_mem(state);
    as_offer o[] = {
        offer("cheap-gone", merchant("ma", "Alpha", 0.95, 0.99), 500, 1, 0),
        offer("mid", merchant("mb", "Beta", 0.90, 0.97), 1000, 2, 5),
        offer("dear", merchant("mc", "Gamma", 0.99, 0.99), 2000, 1, 5),
        offer("slow", merchant("md", "Delta", 0.80, 0.90), 900, 6, 5),
        offer("neg", merchant("me", "Epsilon", 0.80, 0.90), 800, 1, -1),
    };
    const inel_row rows[] = {
        {"no filter",
         "in_stock",
         {0, 0, NULL},
         "mid dear slow",
         "cheap-gone=Out of stock;neg=Out of stock"},
        {"product out of stock",
         "out_of_stock",
         {0, 0, NULL},
         "",
         "cheap-gone=Out of stock;mid=Out of stock;dear=Out of stock;slow=Out of stock;"
         "neg=Out of stock"},
        {"max_price",
         "in_stock",
         {0, 1000, NULL},
         "mid slow",
         "cheap-gone=Out of stock;dear=max_price;neg=Out of stock"},
        {"max_price exact", "in_stock", {0, 900, NULL}, "slow", "mid=max_price;dear=max_price"},
        {"deliver_by",
         "in_stock",
         {TODAY + 2, 0, NULL},
         "mid dear",
         "slow=deliver_by;cheap-gone=Out of stock"},
        {"deliver_by today+1",
         "in_stock",
         {TODAY + 1, 0, NULL},
         "dear",
         "mid=deliver_by;slow=deliver_by"},
        {"merchant",
         "in_stock",
         {0, 0, "mb"},
         "mid",
         "dear=requested merchant;slow=requested merchant;cheap-gone=Out of stock"},
        {"merchant and max_price",
         "in_stock",
         {0, 800, "mb"},
         "",
         "mid=max_price;dear=requested merchant"},
        {"unknown merchant",
         "in_stock",
         {0, 0, "nobody"},
         "",
         "mid=requested merchant;dear=requested merchant;slow=requested merchant"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const inel_row *row = &rows[i];
        as_product p = product(o, N_ROWS(o));
        p.availability = row->availability;
        as_weights w;
        as_weights_default(&w);
        as_ranking r;
        as_rank_offers(m, &p, &w, &row->filter, TODAY, &r);
        CHECK_INT(row->name, r.n_ranked + r.n_inel, N_ROWS(o));
        /* eligible ids in order */
        const char **ids;
        size_t ne = 0;
        char *el = as_strdup(m, row->eligible);
        ids = as_alloc(m, 8 * sizeof(*ids));
        for (char *t = strtok(el, " "); t; t = strtok(NULL, " "))
            ids[ne++] = t;
        CHECK_INT(row->name, r.n_ranked, ne);
        for (size_t k = 0; k < ne && k < r.n_ranked; k++)
            CHECK_STR(row->name, r.ranked[k].offer->id, ids[k]);
        /* ineligible with reasons */
        char *in = as_strdup(m, row->ineligible), *save = NULL;
        for (char *t = strtok_r(in, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(t, '=');
            *eq = '\0';
            const as_ineligible *x = find_inel(&r, t);
            CHECK(as_printf(m, "%s: %s ineligible", row->name, t), x != NULL);
            if (x) {
                CHECK_CONTAINS(as_printf(m, "%s: %s", row->name, t), x->reason, eq + 1);
                CHECK_INT(as_printf(m, "%s: %s kind", row->name, t), x->kind,
                          fragment_kind(eq + 1));
                CHECK_INT(row->name, x->delivery_day, TODAY + x->offer->delivery_days);
            }
        }
        check_formula(m, &r, &w, &unit_failures_);
        if (r.n_ranked == 0) {
            CHECK_CONTAINS(row->name, r.explanation, "No offer is eligible");
        } else {
            CHECK(row->name, strstr(r.explanation, "No offer is eligible") == NULL);
        }
    }
    ROWS_DONE();
}

static void test_reason_texts(void **state)
{
    as_mem *m = unit_mem(state);
    as_offer o[] = {
        offer("a", merchant("ma", "Alpha Parts", 0.95, 0.99), 1250, 3, 5),
    };
    as_product p = product(o, 1);
    as_weights w;
    as_weights_default(&w);
    as_ranking r;
    as_offer_filter f = {0, 1000, NULL};
    as_rank_offers(m, &p, &w, &f, TODAY, &r);
    assert_int_equal(r.n_inel, 1);
    assert_non_null(strstr(r.inel[0].reason, "\xE2\x82\xAC"
                                             "12.50"));
    assert_non_null(strstr(r.inel[0].reason, "\xE2\x82\xAC"
                                             "10.00"));
    assert_non_null(strstr(r.explanation, "Alpha Parts"));

    as_offer_filter f2 = {TODAY + 2, 0, NULL};
    as_rank_offers(m, &p, &w, &f2, TODAY, &r);
    assert_int_equal(r.n_inel, 1);
    assert_non_null(strstr(r.inel[0].reason, "2026-01-18")); /* delivers */
    assert_non_null(strstr(r.inel[0].reason, "2026-01-17")); /* deliver_by */

    as_offer_filter f3 = {0, 0, "mz"};
    as_rank_offers(m, &p, &w, &f3, TODAY, &r);
    assert_int_equal(r.n_inel, 1);
    assert_non_null(strstr(r.inel[0].reason, "Alpha Parts"));

    /* No offers at all. */
    as_product empty = product(NULL, 0);
    as_rank_offers(m, &empty, &w, NULL, TODAY, &r);
    assert_int_equal(r.n_ranked, 0);
    assert_int_equal(r.n_inel, 0);
    assert_non_null(strstr(r.explanation, "No offer is eligible"));
}

/* The price component is relative to the cheapest *eligible* offer. */
static void test_cheapest_eligible(void **state)
{
    as_mem *m = unit_mem(state);
    as_offer o[] = {
        offer("gone", merchant("ma", "Alpha", 0.9, 0.9), 100, 1, 0),
        offer("x", merchant("mb", "Beta", 0.9, 0.9), 400, 1, 1),
        offer("y", merchant("mc", "Gamma", 0.9, 0.9), 500, 1, 1),
    };
    as_product p = product(o, N_ROWS(o));
    as_weights w;
    as_weights_default(&w);
    as_ranking r;
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    assert_int_equal(r.n_ranked, 2);
    assert_true(find_ranked(&r, "x")->comp[AS_W_PRICE] == 100);
    assert_true(find_ranked(&r, "y")->comp[AS_W_PRICE] == 80);
}

/* ---- tie-breaks ---- */

typedef struct tie_row {
    const char *name;
    const char *weights;
    const char *order; /* expected ids, space separated */
} tie_row;

static void test_tie_breaks(void **state)
{
    as_mem *m = unit_mem(state);
    /* With delivery:1 every 2-day offer scores 88 (87.5 rounded). */
    as_offer o[] = {
        offer("o-d", merchant("m1", "M1", 0.90, 0.5), 500, 2, 1),
        offer("o-c", merchant("m2", "M2", 0.95, 0.5), 500, 2, 1),
        offer("o-b", merchant("m3", "M3", 0.50, 0.5), 400, 2, 1),
        offer("o-a", merchant("m4", "M4", 0.90, 0.5), 500, 2, 1),
        offer("o-e", merchant("m5", "M5", 1.00, 1.0), 300, 3, 1),
        offer("o-f", merchant("m6", "M6", 0.90, 0.5), 500, 1, 1),
    };
    /* With price:1, offers at the same price tie; then the sooner one wins. */
    as_offer q[] = {
        offer("x1", merchant("m1", "M1", 0.90, 0.9), 500, 3, 1),
        offer("x2", merchant("m2", "M2", 0.90, 0.9), 500, 1, 1),
        offer("x3", merchant("m3", "M3", 0.99, 0.9), 500, 2, 1),
        offer("x0", merchant("m4", "M4", 0.90, 0.9), 500, 2, 1),
        offer("x4", merchant("m5", "M5", 0.90, 0.9), 500, 2, 1),
    };
    const struct {
        tie_row row;
        as_offer *offers;
        size_t n;
    } rows[] = {
        /* score, then cheaper (o-b), then more punctual (o-c), then id (o-a < o-d) */
        {{"delivery:1", "delivery:1", "o-f o-b o-c o-a o-d o-e"}, o, N_ROWS(o)},
        /* score, then sooner (x2, then the 2-day ones), punctual x3, then id x0 < x4 */
        {{"price:1", "price:1", "x2 x3 x0 x4 x1"}, q, N_ROWS(q)},
        /* everyone equal on quality only (all 0.9): price, days, on-time, id */
        {{"quality:1", "quality:1", "x2 x3 x0 x4 x1"}, q, N_ROWS(q)},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const tie_row *t = &rows[i].row;
        as_weights w;
        const char *err;
        assert_true(as_weights_parse(m, t->weights, &w, &err));
        /* Same result whatever the input order: try forwards and reversed. */
        for (int rev = 0; rev < 2; rev++) {
            as_offer *arr = as_alloc(m, rows[i].n * sizeof(as_offer));
            for (size_t k = 0; k < rows[i].n; k++)
                arr[k] = rows[i].offers[rev ? rows[i].n - 1 - k : k];
            as_product p = product(arr, rows[i].n);
            as_ranking r;
            as_rank_offers(m, &p, &w, NULL, TODAY, &r);
            check_formula(m, &r, &w, &unit_failures_);
            as_buf b;
            as_buf_init(&b, m);
            for (size_t k = 0; k < r.n_ranked; k++)
                as_buf_printf(&b, "%s%s", k ? " " : "", r.ranked[k].offer->id);
            CHECK_STR(as_printf(m, "%s%s", t->name, rev ? " (reversed)" : ""), as_buf_str(&b),
                      t->order);
        }
    }
    ROWS_DONE();
}

/* ---- custom weights change the winner ---- */

static void test_custom_weights(void **state)
{
    as_mem *m = unit_mem(state);
    as_offer o[] = {
        offer("cheap-slow", merchant("mc", "Cheapo", 0.80, 0.90), 800, 5, 3),
        offer("dear-fast", merchant("mf", "Fasto", 0.85, 0.92), 1000, 1, 3),
        offer("punctual", merchant("mp", "Punctual", 0.99, 0.80), 950, 3, 3),
        offer("careful", merchant("mq", "Careful", 0.70, 0.999), 990, 4, 3),
    };
    as_product p = product(o, N_ROWS(o));
    const struct {
        const char *weights, *winner;
    } rows[] = {
        {"price:1", "cheap-slow"},
        {"delivery:1", "dear-fast"},
        {"reliability:1", "punctual"},
        {"quality:1", "careful"},
        {"null", "dear-fast"},
        {"price:0.9,delivery:0.1", "cheap-slow"},
        {"{\"price\":0.1,\"delivery\":0.9}", "dear-fast"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_weights w;
        const char *err;
        assert_true(as_weights_parse(m, rows[i].weights, &w, &err));
        as_ranking r;
        as_rank_offers(m, &p, &w, NULL, TODAY, &r);
        CHECK_INT(rows[i].weights, r.n_ranked, N_ROWS(o));
        if (r.n_ranked == 0) continue;
        CHECK_STR(rows[i].weights, r.ranked[0].offer->id, rows[i].winner);
        CHECK_INT(rows[i].weights, r.ranked[0].rank, 1);
        for (int k = 0; k < AS_W_N; k++)
            CHECK_NEAR(rows[i].weights, r.weights.w[k], w.w[k], 0);
        check_formula(m, &r, &w, &unit_failures_);
        CHECK_CONTAINS(rows[i].weights, r.explanation, r.ranked[0].offer->merchant.name);
    }
    ROWS_DONE();
}

/* ---- the brief ranking (search summaries, the search order table) ---- */

static void test_brief_same_ranking(void **state)
{
    as_mem *m = unit_mem(state);
    as_weights w;
    as_weights_default(&w);
    as_offer a[] = {
        offer("a1", merchant("ma", "Alpha Parts", 0.95, 0.99), 1250, 1, 3),
        offer("a2", merchant("mb", "Beta Supplies", 0.90, 0.97), 1000, 4, 3),
        offer("a3", merchant("mc", "Gamma", 0.99, 0.99), 1100, 2, 0),
    };
    as_product p = product(a, 3);
    as_ranking full, brief;
    as_rank_offers(m, &p, &w, NULL, TODAY, &full);
    as_rank_offers_brief(m, &p, &w, NULL, TODAY, &brief);
    assert_non_null(full.explanation);
    assert_null(brief.explanation);
    assert_int_equal(brief.n_ranked, full.n_ranked);
    assert_int_equal(brief.n_inel, full.n_inel);
    for (size_t i = 0; i < full.n_ranked; i++) {
        assert_ptr_equal(brief.ranked[i].offer, full.ranked[i].offer);
        assert_int_equal(brief.ranked[i].score, full.ranked[i].score);
        assert_int_equal(brief.ranked[i].rank, full.ranked[i].rank);
    }
    assert_string_equal(brief.inel[0].reason, full.inel[0].reason);
}

/* as_rank_best_offer: the count and the best of as_rank_offers, on random
 * products (1 to 6 offers of four merchants, ties in price, days and
 * punctuality, stock outs) under the default and custom weights and every
 * offer filter, alone and together. */
static void test_best_offer_is_first(void **state)
{
    as_mem *m = unit_mem(state);
    const as_merchant ms[] = {merchant("ma", "Alpha", 0.95, 0.99), merchant("mb", "Beta", 0.90, 0.97),
                              merchant("mc", "Gamma", 0.95, 0.93), merchant("md", "Delta", 0.80, 0.99)};
    as_weights ws[3] = {{{0}}, {{0.1, 0.6, 0.1, 0.2}}, {{0.7, 0.1, 0.1, 0.1}}};
    as_weights_default(&ws[0]);
    const as_offer_filter fs[] = {{0, 0, NULL},       {0, 1200, NULL},         {TODAY + 2, 0, NULL},
                                  {0, 0, "mb"},       {TODAY + 3, 1100, NULL}, {TODAY + 4, 1300, "mc"},
                                  {TODAY - 1, 0, NULL}};
    uint32_t x = 2463534242u;
    size_t compared = 0, with_best = 0;
    for (int round = 0; round < 3000; round++) {
        as_offer os[6];
        size_t n = 1 + (x = x * 1664525u + 1013904223u) % 6;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            os[i] = offer(as_printf(m, "o%zu", (size_t)(x % 7)), ms[(x >> 8) % 4],
                          1000 + 50 * (int64_t)((x >> 12) % 6), 1 + (int)((x >> 16) % 5),
                          (x >> 20) % 4 ? 3 : 0);
        }
        as_product p = product(os, n);
        if (round % 10 == 0) p.availability = "out_of_stock";
        for (size_t wi = 0; wi < 3; wi++)
            for (size_t fi = 0; fi < sizeof(fs) / sizeof(fs[0]); fi++) {
                as_ranking full, best;
                as_rank_offers(m, &p, &ws[wi], &fs[fi], TODAY, &full);
                as_rank_best_offer(m, &p, &ws[wi], &fs[fi], TODAY, &best);
                assert_int_equal(best.n_ranked, full.n_ranked);
                assert_int_equal(best.n_inel, 0);
                assert_null(best.explanation);
                compared++;
                if (!full.n_ranked) continue;
                with_best++;
                assert_ptr_equal(best.ranked[0].offer, full.ranked[0].offer);
                assert_int_equal(best.ranked[0].score, full.ranked[0].score);
                assert_int_equal(best.ranked[0].rank, 1);
                assert_int_equal(best.ranked[0].delivery_day, full.ranked[0].delivery_day);
                for (int k = 0; k < AS_W_N; k++) {
                    assert_true(best.ranked[0].comp[k] == full.ranked[0].comp[k]);
                    assert_true(best.ranked[0].weighted[k] == full.ranked[0].weighted[k]);
                }
            }
    }
    assert_true(with_best > compared / 3 && with_best < compared); /* both kinds met */
}

/* ---- explanation ---- */

static void test_explanation(void **state)
{
    as_mem *m = unit_mem(state);
    as_weights w;
    as_weights_default(&w);
    as_ranking r;

    /* The winner is cheaper: its name and the difference (€2.50) appear. */
    as_offer a[] = {
        offer("a1", merchant("ma", "Alpha Parts", 0.95, 0.99), 1000, 1, 3),
        offer("a2", merchant("mb", "Beta Supplies", 0.90, 0.97), 1250, 2, 3),
    };
    as_product p = product(a, 2);
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    assert_string_equal(r.ranked[0].offer->id, "a1");
    assert_non_null(strstr(r.explanation, "Alpha Parts"));
    assert_non_null(strstr(r.explanation, "Beta Supplies"));
    assert_non_null(strstr(r.explanation, "\xE2\x82\xAC"
                                          "2.50"));
    assert_non_null(strstr(r.explanation, "cheaper"));
    assert_true(strstr(r.explanation, "Alpha Parts") < strstr(r.explanation, "Beta Supplies"));

    /* The winner is dearer but faster. */
    as_offer b[] = {
        offer("b1", merchant("ma", "Alpha Parts", 0.95, 0.99), 1000, 1, 3),
        offer("b2", merchant("mb", "Beta Supplies", 0.90, 0.97), 990, 6, 3),
    };
    p = product(b, 2);
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    assert_string_equal(r.ranked[0].offer->id, "b1");
    assert_non_null(strstr(r.explanation, "Alpha Parts"));
    assert_non_null(strstr(r.explanation, "\xE2\x82\xAC"
                                          "0.10"));
    assert_non_null(strstr(r.explanation, "dearer"));

    /* A single eligible offer. */
    p = product(a, 1);
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    assert_int_equal(r.n_ranked, 1);
    assert_non_null(strstr(r.explanation, "Alpha Parts"));
    assert_non_null(strstr(r.explanation, "only"));
    assert_non_null(strstr(r.explanation, "\xE2\x82\xAC"
                                          "10.00"));

    /* Nothing eligible: says so, and why. */
    p = product(a, 2);
    p.availability = "out_of_stock";
    as_rank_offers(m, &p, &w, NULL, TODAY, &r);
    assert_int_equal(r.n_ranked, 0);
    assert_int_equal(r.n_inel, 2);
    assert_non_null(strstr(r.explanation, "No offer is eligible"));
    assert_non_null(strstr(r.explanation, "Out of stock"));
}

static void test_policy(void **state)
{
    (void)state;
    assert_non_null(strstr(as_ranking_policy, "no paid placement"));
    assert_non_null(strstr(as_ranking_policy, "0.35"));
}

/* ---- demo agent prices ---- */

static void test_demo_agent_price(void **state)
{
    (void)state;
    const struct {
        int64_t retail, agent;
    } rows[] = {
        {1000, 950}, {499, 474}, {1999, 1899}, {1, 1},         {30, 29}, {10, 10},
        {0, 0},      {100, 95},  {2999, 2849}, {12345, 11728}, {50, 48}, {70, 67},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        char label[32];
        snprintf(label, sizeof(label), "retail %lld", (long long)rows[i].retail);
        CHECK_INT(label, as_demo_agent_price_cents(rows[i].retail), rows[i].agent);
    }
    ROWS_DONE();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_components),
        UNIT_TEST(test_rounding),
        UNIT_TEST(test_delivery_component),
        UNIT_TEST(test_ineligible),
        UNIT_TEST(test_reason_texts),
        UNIT_TEST(test_cheapest_eligible),
        UNIT_TEST(test_tie_breaks),
        UNIT_TEST(test_custom_weights),
        UNIT_TEST(test_brief_same_ranking),
        UNIT_TEST(test_best_offer_is_first),
        UNIT_TEST(test_explanation),
        UNIT_TEST(test_policy),
        UNIT_TEST(test_demo_agent_price),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
