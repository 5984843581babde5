/* as_json_write: the bytes jansson writes for the same values (AS_JSON_DUMP_FLAGS),
 * so a product view written directly is the view the jansson tree gave; and the
 * product view itself, against jansson's reading of it and the offers search
 * shows. */
#include "unit_check.h"

#include <math.h>

#include "as_json_write.h"
#include "as_util.h"
#include "as_view.h"

/* jansson's text for v (taken), on m */
static const char *dumped(as_mem *m, json_t *v)
{
    char *s = v ? json_dumps(v, AS_JSON_DUMP_FLAGS | JSON_ENCODE_ANY) : NULL;
    json_decref(v);
    const char *out = s ? as_strdup(m, s) : "(not encodable)";
    free(s);
    return out;
}

static const char *written_round(as_mem *m, double v, int decimals)
{
    as_jw w;
    as_jw_init(&w, m);
    as_jw_round(&w, v, decimals);
    size_t n;
    const char *s = as_jw_text(&w, &n);
    return s ? s : "(not encodable)";
}

static const char *written_real(as_mem *m, double v)
{
    as_jw w;
    as_jw_init(&w, m);
    as_jw_real(&w, v);
    size_t n;
    const char *s = as_jw_text(&w, &n);
    return s ? s : "(not encodable)";
}

/* Rounded reals as as_json_round gives them: every decimal count, signs,
 * negative zero, the edges of "%.12g"'s plain form (1e-4, 12 digits). */
static void test_rounded_reals(void **state)
{
    as_mem *m = unit_mem(state);
    static const double fixed[] = {0,
                                   -0.0,
                                   0.35,
                                   15.63,
                                   100,
                                   -20,
                                   0.966,
                                   28.69,
                                   1e-4,
                                   9.9999e-5,
                                   5e-5,
                                   -5e-5,
                                   1e-6,
                                   -1e-7,
                                   0.00049,
                                   1e11,
                                   999999999999.4,
                                   999999999999.6,
                                   1e12,
                                   123456.7891,
                                   -0.0004,
                                   2.675,
                                   1.005,
                                   0.125,
                                   -12.6,
                                   4.35e15,
                                   -9e18,
                                   1e300,
                                   3.14159265358979};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(fixed); i++)
        for (int d = 0; d <= 6; d++) {
            const char *label = as_printf(m, "%.17g to %d places", fixed[i], d);
            CHECK_STR(label, written_round(m, fixed[i], d), dumped(m, as_json_round(fixed[i], d)));
        }
    /* and a spread of values of every size, as components, prices and rates take */
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double mant = (double)(x % 2000001) / 1000.0 - 1000.0;
        double v = ldexp(mant, (int)(x >> 58) - 40);
        int d = (int)((x >> 40) % 7);
        const char *got = written_round(m, v, d), *want = dumped(m, as_json_round(v, d));
        if (strcmp(got, want) != 0) CHECK_STR(as_printf(m, "%.17g to %d places", v, d), got, want);
    }
    ROWS_DONE();
}

static void test_reals_and_integers(void **state)
{
    as_mem *m = unit_mem(state);
    static const double reals[] = {0,    -0.0,   1,        0.1,   1e-5,    123456789012.0,
                                   1e12, 1.5e22, 2.5e-300, -7.25, 1.0 / 3, 6.02214076e23};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(reals); i++)
        CHECK_STR(as_printf(m, "%.17g", reals[i]), written_real(m, reals[i]),
                  dumped(m, json_real(reals[i])));
    static const int64_t ints[] = {0, 1, -1, 42, 2869, INT64_MAX, INT64_MIN, -1000000007};
    for (size_t i = 0; i < N_ROWS(ints); i++) {
        as_jw w;
        as_jw_init(&w, m);
        as_jw_int(&w, ints[i]);
        size_t n;
        CHECK_STR(as_printf(m, "%lld", (long long)ints[i]), as_jw_text(&w, &n),
                  dumped(m, json_integer(ints[i])));
    }
    ROWS_DONE();
    /* what jansson will not write, the writer refuses too */
    as_jw w;
    as_jw_init(&w, m);
    as_jw_real(&w, NAN);
    size_t n;
    assert_null(as_jw_text(&w, &n));
}

static void test_strings(void **state)
{
    as_mem *m = unit_mem(state);
    static const char *const rows[] = {
        "",
        "plain",
        "quote \" and backslash \\ and slash /",
        "controls \b\f\n\r\t and \x01\x1f and DEL \x7f",
        "\xc3\xa9t\xc3\xa9 \xe2\x82\xac 5 \xf0\x9f\x94\x8b",
        "Scheldemarkt ranks first: \xe2\x82\xac"
        "0.27 cheaper",
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_jw w;
        as_jw_init(&w, m);
        as_jw_str(&w, rows[i]);
        size_t n;
        CHECK_STR(rows[i], as_jw_text(&w, &n), dumped(m, json_string(rows[i])));
    }
    /* random strings of every length over the bytes that matter, whole
     * characters and broken ones: the same text, or refused as jansson refuses */
    static const char *const pieces[] = {"a",
                                         "Z",
                                         "0",
                                         " ",
                                         "/",
                                         "\"",
                                         "\\",
                                         "\n",
                                         "\t",
                                         "\x01",
                                         "\x1f",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe2\x82\xac",
                                         "\xf0\x9f\x94\x8b",
                                         "\x80",
                                         "\xc3",
                                         "\xed\xa0\x80"};
    unsigned long long x = 42;
    for (int i = 0; i < 50000; i++) {
        char str[128] = "";
        size_t len = 0;
        for (;;) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (x % 23 == 0) break;
            const char *piece = pieces[(x >> 24) % N_ROWS(pieces)];
            size_t k = strlen(piece);
            if (len + k >= sizeof(str)) break;
            memcpy(str + len, piece, k + 1);
            len += k;
        }
        as_jw w;
        as_jw_init(&w, m);
        as_jw_str(&w, str);
        size_t n;
        const char *got = as_jw_text(&w, &n);
        json_t *v = json_string(str);
        const char *want = v ? dumped(m, v) : NULL;
        if (!got != !want || (got && strcmp(got, want) != 0))
            CHECK_STR(as_printf(m, "random string %d", i), got ? got : "(refused)",
                      want ? want : "(refused)");
    }
    ROWS_DONE();
    /* not UTF-8 (a lone continuation byte, an overlong, a surrogate): refused,
     * as json_string refuses it */
    static const char *const bad[] = {"a\x80z", "\xc0\xaf", "\xed\xa0\x80", "\xf5\x80\x80\x80",
                                      "cut \xe2\x82"};
    for (size_t i = 0; i < N_ROWS(bad); i++) {
        assert_null(json_string(bad[i]));
        as_jw w;
        as_jw_init(&w, m);
        as_jw_str(&w, bad[i]);
        size_t n;
        assert_null(as_jw_text(&w, &n));
    }
}

/* What as_json_parse_or(text, fallback) then json_dumps give. */
static const char *stored_want(as_mem *m, const char *text, json_t *fallback)
{
    return dumped(m, as_json_parse_or(text, fallback));
}

static const char *stored_got(as_mem *m, const char *text, const char *fallback)
{
    as_jw w;
    as_jw_init(&w, m);
    as_jw_json(&w, text, fallback);
    size_t n;
    const char *s = as_jw_text(&w, &n);
    return s ? s : "(not encodable)";
}

/* Stored JSON text: copied when it is already jansson's form, decoded by
 * jansson when not, the fallback when it is not JSON. */
static void test_stored_json(void **state)
{
    as_mem *m = unit_mem(state);
    static const char *const rows[] = {
        "159",
        "-0",
        "0",
        "-12",
        "3.98",
        "3.980",
        "-0.0",
        "0.0",
        "5.000",
        "1e2",
        "1E-7",
        "2.5e+3",
        "0.00012",
        "0.000012",
        "0.0001",
        "123456789012.0",
        "123456789012.5",
        "1234567890123",
        "999999999999999999",
        "12345678901234567890",
        "01",
        "-",
        "1.",
        ".5",
        "+1",
        "1.2.3",
        "true",
        "false",
        "null",
        "truex",
        "nul",
        "",
        " ",
        "  7  ",
        "[]",
        "[ ]",
        " [ 1 , 2 ] ",
        "[1,]",
        "[1 2]",
        "[4,4,4,4,4,4,4,4,4,4,4,4,4]",
        "[[1,[2,[3]]],[]]",
        "[\"https://img.example/g/G1.jpg\"]",
        "\"plain\"",
        "\"caf\xc3\xa9\"",
        "\"a\\nb\"",
        "\"\\u00e9\\/x\"",
        "\"\\u0000\"",
        "\"tab\there\"",
        "\"\xff\"",
        "\"unterminated",
        "{\"a\":1}",
        "{\"a\":1,\"a\":2}",
        "{\"answered\":true,\"rows\":[{\"x\":1.50}]}",
        "[1.0,2.50,-0.0,3e1]",
        "[\"x\",{\"y\":null}]",
        "[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]",
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        CHECK_STR(as_printf(m, "'%s' or null", rows[i]), stored_got(m, rows[i], "null"),
                  stored_want(m, rows[i], json_null()));
        CHECK_STR(as_printf(m, "'%s' or []", rows[i]), stored_got(m, rows[i], "[]"),
                  stored_want(m, rows[i], json_array()));
    }
    CHECK_STR("NULL", stored_got(m, NULL, "[]"), stored_want(m, NULL, json_array()));
    /* and random texts over JSON's own characters */
    static const char alphabet[] = "[]{},:\"0123456789.-+eE tfn\\ua\xc3\xa9";
    unsigned long long x = 1234567ULL;
    char text[24];
    for (int i = 0; i < 100000; i++) {
        size_t len = 0;
        for (; len < sizeof(text) - 1; len++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (len && x % 9 == 0) break;
            text[len] = alphabet[(x >> 20) % (sizeof(alphabet) - 1)];
        }
        text[len] = '\0';
        const char *got = stored_got(m, text, "null"), *want = stored_want(m, text, json_null());
        if (strcmp(got, want) != 0) CHECK_STR(as_printf(m, "'%s'", text), got, want);
    }
    ROWS_DONE();
}

/* Commas and nesting, against the same values as a jansson tree. */
static void test_structure(void **state)
{
    as_mem *m = unit_mem(state);
    as_jw w;
    as_jw_init(&w, m);
    as_jw_obj(&w);
    as_jw_kstr(&w, "a", "x");
    as_jw_key(&w, "empty");
    as_jw_arr(&w);
    as_jw_arr_end(&w);
    as_jw_key(&w, "list");
    as_jw_arr(&w);
    for (int i = 0; i < 3; i++) {
        as_jw_obj(&w);
        as_jw_kint(&w, "i", i);
        as_jw_knull(&w, "n");
        as_jw_obj_end(&w);
    }
    as_jw_bool(&w, false);
    as_jw_arr_end(&w);
    as_jw_key(&w, "obj");
    as_jw_obj(&w);
    as_jw_obj_end(&w);
    as_jw_kround(&w, "r", 0.35, 6);
    as_jw_obj_end(&w);
    size_t n;
    const char *got = as_jw_text(&w, &n);
    assert_int_equal(n, strlen(got));
    json_t *list = json_array();
    for (int i = 0; i < 3; i++)
        json_array_append_new(list, json_pack("{s:i, s:n}", "i", i, "n"));
    json_array_append_new(list, json_false());
    json_t *want = json_pack("{s:s, s:[], s:o, s:{}, s:o}", "a", "x", "empty", "list", list, "obj",
                             "r", as_json_round(0.35, 6));
    assert_string_equal(got, dumped(m, want));
    /* an object left open is no JSON text */
    as_jw_init(&w, m);
    as_jw_obj(&w);
    assert_null(as_jw_text(&w, &n));
}

/* ---- the product view ---- */

static const as_merchant merchants[] = {
    {"m-a", "Alpha \"Shop\"", "NL", "Utrecht", 0.966, 0.952, NULL, 0},
    {"m-b", "Bravo", "BE", "Li\xc3\xa8ge", 0.82, 0.986, NULL, 0},
    {"m-c", "Charlie", "DE", "K\xc3\xb6ln", 0.5, 0.5, NULL, 0},
};
static as_offer offers[] = {
    {"P1-a", {0}, 2869, 3020, "Agent-only price (demo)", 4, 51},
    {"P1-b", {0}, 2896, 3048, "Agent-only price (demo)", 6, 38},
    {"P1-c", {0}, 2708, 2850, "Agent-only price (demo)", 2, 0},
};
static const as_spec_row specs[] = {
    {"lifetime_l", "Filter capacity", "performance", "l", "159", "139", 2.0},
    {"pack_count", "Cartridges per pack", "categorical", NULL, "10", "10", 0},
    {"magnesium", "Adds magnesium", "categorical", "", "true", "true", 0},
    {"colour", "Colour", "info", NULL, "\"white\"", "\"white\\/grey\"", 0},
    {"weight_g", "Weight", "performance", "g", "12.50", NULL, 5},
    {"extra", "Extra", "info", NULL, NULL, "[1,2]", 0},
    {"odd", "Odd", "categorical", NULL, "not json", "{\"a\":1}", 0},
};
static const as_question questions[] = {
    {"qa_1", "How \"much\"? \xe2\x82\xac", "{\"answered\":true,\"text\":\"139 l\",\"rows\":[]}",
     "2026-11-20T10:00:00Z"},
    {"qa_2", "Vegan?", "not json", "2026-11-21T10:00:00Z"},
};

static as_product product(void)
{
    for (size_t i = 0; i < N_ROWS(offers); i++)
        offers[i].merchant = merchants[i];
    as_product p = {.id = 7,
                    .sku = "P1",
                    .gtin = NULL,
                    .name = "Ostby Pro \xe2\x80\x94 Filter",
                    .brand = "Ostby",
                    .category = "coffee-kitchen",
                    .part_type = "jug-filter",
                    .description = "Line one\nline two\ttabbed",
                    .image_urls = "[\"https://img.example/P1.jpg\"]",
                    .source_url = "https://merchant.example/p/P1",
                    .source_notes = " [ ] ",
                    .source_checked_at = "2026-11-18T09:00:00Z",
                    .source_product_id = "M-1",
                    .availability = "in_stock",
                    .is_demo = true,
                    .verif_status = AS_VERIF_CONTRADICTED,
                    .measured_at = "2026-10-01T10:00:00Z",
                    .measured_node = NULL,
                    .sample_size = 3,
                    .has_on_time = true,
                    .on_time_rate_90d = 0.8675,
                    .return_rate = 0.011,
                    .wrong_item_rate = 0.0,
                    .agent_orders_90d = 52,
                    .orders_per_week = "[4,4,4,4,4,4,4,4,4,4,4,4,4]",
                    .guarantee = true,
                    .offers = offers,
                    .n_offers = N_ROWS(offers),
                    .specs = (as_spec_row *)specs,
                    .n_specs = N_ROWS(specs),
                    .questions = (as_question *)questions,
                    .n_questions = N_ROWS(questions)};
    return p;
}

/* The view is JSON in jansson's form (decoding and writing it again gives the
 * same bytes), and its offers are the ones search shows (as_view_offer). */
static void test_product_view(void **state)
{
    as_mem *m = unit_mem(state);
    as_product p = product();
    as_weights w;
    as_weights_default(&w);
    as_offer_filter none = {0, 0, NULL};
    as_ranking r;
    as_rank_offers(m, &p, &w, &none, 20000, &r);
    size_t n;
    const char *text = as_view_product_text(m, &p, &r, NULL, &n);
    assert_non_null(text);
    assert_int_equal(n, strlen(text));
    assert_int_equal(text[n - 1], '\n');
    json_error_t err;
    json_t *v = json_loadb(text, n, JSON_REJECT_DUPLICATES, &err);
    if (!v) fail_msg("not JSON: %s at %d: %s", err.text, err.position, text);
    char *again = json_dumps(v, AS_JSON_DUMP_FLAGS);
    assert_int_equal(strlen(again) + 1, n);
    assert_memory_equal(again, text, n - 1);
    free(again);
    json_t *offers_v = json_object_get(v, "offers");
    assert_int_equal(json_array_size(json_object_get(offers_v, "ranked")), 2);
    json_t *best = as_view_offer(m, &r.ranked[0]);
    assert_true(json_equal(json_object_get(offers_v, "best"), best));
    json_decref(best);
    json_t *second = as_view_offer(m, &r.ranked[1]);
    assert_true(json_equal(json_array_get(json_object_get(offers_v, "ranked"), 1), second));
    json_decref(second);
    json_t *weights = as_weights_json(&r.weights);
    assert_true(json_equal(json_object_get(offers_v, "weights"), weights));
    json_decref(weights);
    /* the stored texts: decoded values, and the fallbacks for what is not JSON */
    json_t *rows = json_object_get(json_object_get(v, "verification"), "rows");
    assert_int_equal(json_array_size(rows), N_ROWS(specs));
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 3), "measured")),
                        "white/grey");
    assert_true(json_is_null(json_object_get(json_array_get(rows, 6), "claimed")));
    assert_true(json_is_object(json_object_get(json_array_get(rows, 6), "measured")));
    json_t *qs = json_object_get(v, "questions");
    assert_true(json_is_object(json_object_get(json_array_get(qs, 0), "answer")));
    assert_true(json_is_null(json_object_get(json_array_get(qs, 1), "answer")));
    assert_true(json_is_null(json_object_get(v, "gtin")));
    json_decref(v);

    /* for a device: its compatibility row, fit status and guarantee */
    as_compat c = {"dev-1", "Device One", AS_FIT_DOES_NOT_FIT,
                   "[{\"label\":\"Diameter\",\"method\":\"measured\",\"part_value\":87,"
                   "\"device_value\":90,\"tolerance\":1,\"unit\":\"mm\"}]",
                   "2026-10-02T10:00:00Z"};
    p.compat = &c;
    as_device dev = {1, "dev-1", "Device One", "Acme", "jug", ""};
    text = as_view_product_text(m, &p, &r, &dev, &n);
    assert_non_null(text);
    v = json_loadb(text, n, JSON_REJECT_DUPLICATES, &err);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "fit_status")), "does_not_fit");
    assert_string_equal(json_string_value(json_object_get(v, "for_device")), "dev-1");
    assert_true(json_is_false(json_object_get(v, "right_item_guarantee")));
    assert_int_equal(json_array_size(json_object_get(v, "compatibility")), 1);
    json_decref(v);

    /* a string that is not UTF-8 cannot be encoded: no view, not a broken one */
    p.description = "bad \xff byte";
    assert_null(as_view_product_text(m, &p, &r, NULL, &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_rounded_reals), UNIT_TEST(test_reals_and_integers),
        UNIT_TEST(test_strings),       UNIT_TEST(test_stored_json),
        UNIT_TEST(test_structure),     UNIT_TEST(test_product_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
