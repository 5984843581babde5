/* The search response written as text (core/search/as_search_body.c) against the
 * jansson tree it replaced, kept here as the reference: over every
 * combination of text, device, filters, sort, weights and page on a small
 * catalogue with awkward values (stored image lists that are not plain,
 * strings to escape, reals), the bytes are json_dumps's. */
#include "search_fixture.h"

#include "as_search.h"
#include "as_search_body.h"
#include "as_validate.h"
#include "as_view.h"

#define M_A                                                                                        \
    {                                                                                              \
        "m-a", "Alpha \"A\"", "NL", "Utrecht", 0.95, 0.1, NULL, 0                                  \
    }
#define M_B                                                                                        \
    {                                                                                              \
        "m-b", "Beta", "DE", "Köln", 0.8, 0.123456, NULL, 0                                        \
    }

static as_offer aa_offers[] = {{"aa-a", M_A, 500, 520, "agent price", 1, 10},
                               {"aa-b", M_B, 450, 470, "agent price", 4, 0}};
static as_offer aaa_offers[] = {{"aaa-a", M_A, 401, 420, "agent\tprice", 2, 5}};
static as_offer bad_offers[] = {{"bad-a", M_A, 100, 120, "agent price", 1, 5}};
static as_offer soap_offers[] = {{"soap-b", M_B, 300, 320, "agent price", 3, 9},
                                 {"soap-a", M_A, 333, 350, "agent price", 1, 9}};
static as_offer hepa_offers[] = {{"hepa-a", M_A, 1999, 2100, "agent price", 1, 3},
                                 {"hepa-b", M_B, 1800, 1900, "agent price", 6, 3}};
static as_offer gen_offers[] = {{"gen-a", M_A, 900, 950, "agent price", 2, 3}};

#define PRODUCT(i, s, n, c, pt, st, img, offs)                                                     \
    {                                                                                              \
        .id = i, .sku = s, .name = n, .brand = "Brand", .category = c, .part_type = pt,            \
        .description = "", .image_urls = img, .availability = "in_stock", .verif_status = st,      \
        .verif_note = NULL, .orders_per_week = "[]", .return_rate = 0.0333 * i, .offers = offs,    \
        .n_offers = sizeof(offs) / sizeof(offs[0])                                                 \
    }

static void catalogue(fake_db *db)
{
    static const as_merchant merchants[] = {M_A, M_B};
    static const as_device devices[] = {
        {7, "dyson-v11", "Dyson V11 \"Absolute\"", "Dyson", "vacuum-cleaner", "v11 sv14"},
        {8, "brita-marella", "Brita Marella", "Brita", "water-jug", ""},
        {9, "dyson-v8", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", "v8 sv10"}};
    static as_product products[] = {
        PRODUCT(1, "AA-1", "Varta AA Batteries 4-pack", "batteries", "battery", AS_VERIF_VERIFIED,
                "[\"https://img/aa.jpg\", \"https://img/aa2.jpg\"]", aa_offers),
        PRODUCT(2, "AAA-2", "GP AAA Batteries \"4-pack\"\n", "batteries", "battery",
                AS_VERIF_VERIFIED, " [ \"https:\\/\\/img\\/aaa.jpg\" ] ", aaa_offers),
        PRODUCT(3, "BAD-3", "Cheapo AA Batteries", "batteries", "battery", AS_VERIF_CONTRADICTED,
                "[", bad_offers),
        PRODUCT(4, "SOAP-4", "Lavender Hand Soap Refill é", "hand-soap", "hand-soap",
                AS_VERIF_VERIFIED, "[{\"url\":\"x\",\"w\":1.5}]", soap_offers),
        PRODUCT(5, "HEPA-5", "Dyson V11 HEPA Filter", "vacuum-parts", "filter", AS_VERIF_VERIFIED,
                "[1e2, 2]", hepa_offers),
        PRODUCT(6, "GEN-6", "Generic Filter for V11", "vacuum-parts", "filter", AS_VERIF_PENDING,
                NULL, gen_offers),
    };
    products[2].verif_note = "Capacity: claimed 2000 mAh, measured 900 mAh";
    fixture_catalogue(db, merchants, N_ROWS(merchants), devices, products, N_ROWS(products));
}

/* ---- the jansson tree as core/api/as_catalog_api.c built it before ---- */

static const char *const match_names[] = {"exact", "prefix", "corrected", "none"};

/* The catalogue the searches read, for what a page's product was made from:
 * a result's head was written from the index's copy of these fields, and its
 * product keeps only a few of them. */
static const fake_db *source_db;

static json_t *old_summary(as_mem *m, const as_product *page, const as_ranking *r,
                           const as_device *device)
{
    const as_product *src = NULL;
    for (size_t i = 0; source_db && i < source_db->n_products; i++)
        if (source_db->products[i].id == page->id) src = &source_db->products[i];
    assert_non_null(src);
    assert_string_equal(page->sku, src->sku);
    /* the fields as the store gave them, with the index's defaults; the
     * offers, the compat row and the guarantee as the page has them */
    as_product whole = *page;
    const as_product *p = &whole;
    whole.name = src->name ? src->name : "";
    whole.brand = src->brand ? src->brand : "";
    whole.category = src->category;
    whole.part_type = src->part_type;
    whole.image_urls = src->image_urls;
    whole.availability = src->availability ? src->availability : "out_of_stock";
    whole.verif_status = src->verif_status;
    whole.return_rate = src->return_rate;
    json_t *images = as_json_parse_or(p->image_urls, json_array());
    json_t *img = json_array_size(images) ? json_incref(json_array_get(images, 0)) : json_null();
    json_decref(images);
    const char *label = as_category_label(p->category);
    bool guarantee = device ? as_fit_of(p) == AS_FIT_FITS : p->guarantee;
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:o, s:I}",
                          "sku", p->sku, "name", p->name, "brand", p->brand, "category",
                          p->category, "category_label", label ? label : p->category, "part_type",
                          p->part_type, "verification_status", as_verif_name(p->verif_status),
                          "availability", p->availability, "image_url", img, "return_rate",
                          as_json_round(p->return_rate, 3), "right_item_guarantee", guarantee,
                          "best_offer", r->n_ranked ? as_view_offer(m, &r->ranked[0]) : json_null(),
                          "eligible_offers", (json_int_t)r->n_ranked);
    if (device) json_object_set_new(o, "fit_status", json_string(as_fit_status(p)));
    return o;
}

static json_t *old_understood(const as_search_understood *u, bool matched_all)
{
    json_t *words = json_array(), *ignored = json_array(), *dropped = json_array(),
           *corrected = json_array();
    for (size_t i = 0; i < u->n_words; i++) {
        const as_search_word *w = &u->words[i];
        json_t *matched = json_array();
        for (size_t k = 0; k < w->n_matched; k++)
            json_array_append_new(matched, json_string(w->matched[k]));
        json_array_append_new(words, json_pack("{s:s, s:s, s:o}", "word", w->word, "match",
                                               match_names[w->how], "matched", matched));
        if (w->how == AS_MATCH_CORRECTED && w->corrected)
            json_array_append_new(corrected,
                                  json_pack("{s:s, s:s}", "from", w->word, "to", w->corrected));
    }
    for (size_t i = 0; i < u->n_ignored; i++)
        json_array_append_new(ignored, json_string(u->ignored[i]));
    for (size_t i = 0; i < u->n_dropped; i++)
        json_array_append_new(dropped, json_string(u->dropped[i]));
    json_t *dev = u->device ? json_pack("{s:s, s:s, s:s?}", "slug", u->device->slug, "name",
                                        u->device->name, "text", u->device_text)
                            : json_null();
    json_t *price = u->max_price_cents
                        ? json_pack("{s:I, s:s?}", "max_price_cents",
                                    (json_int_t)u->max_price_cents, "text", u->price_text)
                        : json_null();
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "text", u->text, "words", words,
                     "ignored", ignored, "corrected", corrected, "dropped", dropped, "device", dev,
                     "price", price, "matched_all_words", matched_all);
}

static json_t *old_body(as_mem *m, const as_search_ask *ask, const as_search_result *r,
                        const char *postcode)
{
    json_t *results = json_array(), *excluded = json_array();
    for (size_t i = 0; i < r->n; i++) {
        /* each offer's merchant as the index wrote it once (the body copies
         * it): the object the fields make */
        for (size_t o = 0; o < r->page[i].n_offers; o++) {
            const as_merchant *mc = &r->page[i].offers[o].merchant;
            assert_non_null(mc->json);
            assert_int_equal(mc->json_len, strlen(mc->json));
            json_t *kept = json_loads(mc->json, 0, NULL), *made = as_view_merchant(mc);
            assert_non_null(kept);
            assert_true(json_equal(kept, made));
            json_decref(kept);
            json_decref(made);
        }
        as_ranking rk;
        as_rank_offers_brief(m, &r->page[i], &ask->w, &r->of, ask->today, &rk);
        json_t *o = old_summary(m, &r->page[i], &rk, r->device);
        if (ask->q) {
            json_object_set_new(o, "matched_all_words", json_boolean(r->matched_all[i]));
            json_object_set_new(o, "match", json_string(match_names[r->match[i]]));
        }
        json_array_append_new(results, o);
    }
    for (size_t i = 0; i < r->n_excluded; i++) {
        if (r->excluded_json && r->excluded_json[i]) {
            /* written at the index's build: the same product, a contradiction */
            json_t *x = json_loads(r->excluded_json[i], 0, NULL);
            assert_non_null(x);
            /* the length the index keeps before it, which the body copies */
            assert_int_equal(r->excluded_json_len[i], strlen(r->excluded_json[i]));
            assert_string_equal(json_string_value(json_object_get(x, "sku")), r->excluded[i].sku);
            assert_string_equal(json_string_value(json_object_get(x, "name")),
                                r->excluded[i].name);
            const char *why = json_string_value(json_object_get(x, "reason"));
            assert_non_null(why);
            assert_true(strncmp(why, "Measurements contradict the merchant's claims: ", 47) == 0);
            json_array_append_new(excluded, x);
            continue;
        }
        json_array_append_new(excluded,
                              json_pack("{s:s, s:s, s:s}", "sku", r->excluded[i].sku, "name",
                                        r->excluded[i].name, "reason", r->excluded_why[i]));
    }
    json_t *o = json_object();
    json_object_set_new(o, "results", results);
    json_object_set_new(o, "count", json_integer((json_int_t)r->count));
    json_object_set_new(o, "limit", json_integer(ask->limit));
    json_object_set_new(o, "offset", json_integer(ask->offset));
    json_object_set_new(o, "excluded", excluded);
    json_object_set_new(o, "excluded_count", json_integer((json_int_t)r->excluded_count));
    json_object_set_new(o, "ranking_policy", json_string(as_ranking_policy));
    json_object_set_new(o, "weights", as_weights_json(&ask->w));
    json_object_set_new(o, "sort", json_string(as_sort_choices[ask->sort]));
    json_object_set_new(o, "verified_only", json_boolean(ask->verified_only));
    json_object_set_new(o, "postcode", postcode ? json_string(postcode) : json_null());
    json_object_set_new(o, "device", r->device ? json_string(r->device->slug) : json_null());
    json_object_set_new(o, "query",
                        ask->q ? old_understood(&r->understood, !r->understood.n_dropped)
                               : json_null());
    return o;
}

/* ---- the comparison ---- */

static void same_body(as_mem *m, const as_store *st, const as_search_snap *s,
                      const as_search_ask *ask, const char *postcode, size_t *n_results)
{
    as_search_result r;
    fixture_search(m, st, s, ask, &r);
    *n_results += r.n;
    size_t len;
    const char *text = as_search_body(m, ask, &r, postcode, &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    json_t *old = old_body(m, ask, &r, postcode);
    char *want = json_dumps(old, AS_JSON_DUMP_FLAGS);
    json_decref(old);
    assert_non_null(want);
    if (strlen(want) + 1 != len || memcmp(want, text, len - 1) != 0 || text[len - 1] != '\n')
        fail_msg("q=%s\n got: %s\nwant: %s", ask->q ? ask->q : "(none)", text, want);
    free(want);
    /* the summaries of other lists come from the same writer */
    for (size_t i = 0; i < r.n; i++) {
        as_ranking rk;
        as_rank_offers_brief(m, &r.page[i], &ask->w, &r.of, ask->today, &rk);
        json_t *a = as_view_summary(m, &r.page[i], &rk, r.device);
        json_t *b = old_summary(m, &r.page[i], &rk, r.device);
        char *sa = json_dumps(a, AS_JSON_DUMP_FLAGS), *sb = json_dumps(b, AS_JSON_DUMP_FLAGS);
        assert_string_equal(sa, sb);
        free(sa);
        free(sb);
        json_decref(a);
        json_decref(b);
    }
}

static void test_body_is_the_tree(void **state)
{
    as_mem *m = unit_mem(state);
    fake_db db;
    catalogue(&db);
    source_db = &db;
    as_store st = fake_store_make(&db);
    as_search_snap *s = as_search_snap_build(&st);
    assert_non_null(s);
    static const char *const texts[] = {NULL,
                                        "aa batteries",
                                        "vegan refills 1 liter",
                                        "lavendr soap",
                                        "filter for my dyson v11",
                                        "filter under 10 euros",
                                        "filter for my dyson absolte",
                                        "batteries",
                                        "zzzz hepa",
                                        "the hand soap é \"x\""};
    size_t searches = 0, results = 0;
    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++)
        for (int dev = 0; dev < 2; dev++)
            for (int sort = AS_SORT_SCORE; sort <= AS_SORT_RETURN_RATE; sort++)
                for (int f = 0; f < 8; f++) {
                    as_search_ask ask = {.q = texts[t],
                                         .verified_only = !(f & 1),
                                         .limit = 20,
                                         .today = 20000,
                                         .sort = (as_sort_kind)sort};
                    as_weights_default(&ask.w);
                    if (dev) ask.device = &db.devices[0];
                    if (f & 2) ask.of.max_price_cents = 1000;
                    if (f & 4) {
                        ask.of.deliver_by = 20003;
                        ask.limit = 1;
                        ask.offset = 1;
                        ask.w.w[0] = 0.7;
                        ask.custom_weights = true;
                    }
                    same_body(m, &st, s, &ask, (f & 2) ? "1012 AB" : NULL, &results);
                    searches++;
                }
    assert_int_equal(searches, 10 * 2 * 4 * 8);
    print_message("%zu searches, %zu results\n", searches, results);
    assert_true(results > searches / 2); /* most searches list something */
    as_search_snap_release(s);
    source_db = NULL;
}

/* A stored image list's first element, as decoding then encoding gives it. */
static void test_first_image(void **state)
{
    as_mem *m = unit_mem(state);
    static const struct {
        const char *text, *want;
    } rows[] = {
        {NULL, "null"},
        {"", "null"},
        {"[]", "null"},
        {" [ ] ", "null"},
        {"[\"a\"]", "\"a\""},
        {"[\"a\", \"b\"]", "\"a\""},
        {"[\"a\\u00e9\\/\"]", "\"aé/\""},
        {"[\"a\",]", "null"},
        {"[\"a\" \"b\"]", "null"},
        {"[\"a\"] x", "null"},
        {"[1.50, 2]", "1.5"},
        {"[1e2]", "100.0"},
        {"[[1, [2]], 3]", "[1,[2]]"},
        {"[{\"u\": \"x\"}, 1]", "{\"u\":\"x\"}"},
        {"{\"a\": 1}", "null"},
        {"\"a\"", "null"},
        {"[null, true]", "null"},
        {"[true]", "true"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        as_jw w;
        as_jw_init(&w, m);
        as_jw_arr(&w);
        as_jw_int(&w, 0);
        as_jw_json_first(&w, rows[i].text);
        as_jw_arr_end(&w);
        size_t n;
        const char *got = as_jw_text(&w, &n);
        assert_non_null(got);
        assert_string_equal(got, as_printf(m, "[0,%s]", rows[i].want));
        /* and what the tree gave */
        json_t *v = as_json_parse_or(rows[i].text, json_array());
        json_t *e = json_array_size(v) ? json_incref(json_array_get(v, 0)) : json_null();
        char *s = json_dumps(e, AS_JSON_DUMP_FLAGS | JSON_ENCODE_ANY);
        assert_string_equal(s, rows[i].want);
        free(s);
        json_decref(e);
        json_decref(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_body_is_the_tree),
        UNIT_TEST(test_first_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
