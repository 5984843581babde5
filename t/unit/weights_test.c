/* as_weights_parse (both encodings), as_weights_from_json, as_weights_json. */
#include "unit_check.h"

#include "as_rank.h"

#define EPS 1e-9

typedef struct weights_row {
    const char *in;
    bool ok;
    double w[AS_W_N];    /* normalised, when ok */
    const char *needle;  /* in the error, when not ok */
} weights_row;

static void check_rows(as_mem *m, const weights_row *rows, size_t n, int *failures)
{
    int unit_failures_ = 0;
    for (size_t i = 0; i < n; i++) {
        const weights_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: '%s'", i, r->in ? r->in : "(null)");
        as_weights w;
        memset(&w, 0, sizeof(w));
        const char *err = NULL;
        bool ok = as_weights_parse(m, r->in, &w, &err);
        CHECK_INT(label, ok, r->ok);
        if (ok != r->ok) {
            if (err) print_error("  error was: %s\n", err);
            continue;
        }
        if (ok) {
            double sum = 0;
            for (int k = 0; k < AS_W_N; k++) {
                CHECK_NEAR(as_printf(m, "%s %s", label, as_weight_names[k]), w.w[k], r->w[k],
                           EPS);
                sum += w.w[k];
            }
            CHECK_NEAR(label, sum, 1.0, EPS);
        } else {
            CHECK(label, err && *err);
            if (r->needle) CHECK_CONTAINS(label, err, r->needle);
        }
    }
    *failures += unit_failures_;
}

static void test_parse_valid(void **state)
{
    const weights_row rows[] = {
        /* pair encoding */
        {"price:0.5,delivery:0.2,quality:0.2,reliability:0.1", true, {0.5, 0.2, 0.2, 0.1}, NULL},
        {"reliability:0.1,quality:0.2,delivery:0.2,price:0.5", true, {0.5, 0.2, 0.2, 0.1}, NULL},
        {"price:1", true, {1, 0, 0, 0}, NULL},
        {"delivery:1", true, {0, 1, 0, 0}, NULL},
        {"quality:0.3", true, {0, 0, 1, 0}, NULL},
        {"price:0.5,delivery:0.5", true, {0.5, 0.5, 0, 0}, NULL},
        {"price:0.2,delivery:0.2", true, {0.5, 0.5, 0, 0}, NULL},
        {"price:1,delivery:1,quality:1,reliability:1", true, {0.25, 0.25, 0.25, 0.25}, NULL},
        {"price:0.1,delivery:0.1,quality:0.1,reliability:0.2", true, {0.2, 0.2, 0.2, 0.4}, NULL},
        {"price:0.3,reliability:0.1", true, {0.75, 0, 0, 0.25}, NULL},
        {"price:0,delivery:0.4", true, {0, 1, 0, 0}, NULL},
        {"price:1.0,delivery:1.00", true, {0.5, 0.5, 0, 0}, NULL},
        {"price:0.25,delivery:0.750", true, {0.25, 0.75, 0, 0}, NULL},
        /* numbers as JSON writes them, as in the JSON encoding */
        {"price:1e0", true, {1, 0, 0, 0}, NULL},
        {"price:2.5E-1,delivery:7.5e-1", true, {0.25, 0.75, 0, 0}, NULL},
        {"price:1e-320", true, {1, 0, 0, 0}, NULL},
        {"price:1e-320,delivery:1", true, {0, 1, 0, 0}, NULL},
        {"price:0.6,delivery:0.6,quality:0.6", true, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0}, NULL},
        /* JSON encoding */
        {"{\"price\":0.5,\"delivery\":0.2,\"quality\":0.2,\"reliability\":0.1}", true,
         {0.5, 0.2, 0.2, 0.1}, NULL},
        {"{\"price\":1}", true, {1, 0, 0, 0}, NULL},
        {"{\"price\":0.2,\"delivery\":0.2}", true, {0.5, 0.5, 0, 0}, NULL},
        {"{\"quality\":0.25,\"reliability\":0.75}", true, {0, 0, 0.25, 0.75}, NULL},
        {"{\"price\":1,\"delivery\":0}", true, {1, 0, 0, 0}, NULL},
        {"{\"price\":0,\"delivery\":0,\"quality\":0,\"reliability\":1}", true, {0, 0, 0, 1},
         NULL},
        {"{ \"price\" : 0.5 , \"delivery\" : 0.5 }", true, {0.5, 0.5, 0, 0}, NULL},
        {"{\"price\":1e-1}", true, {1, 0, 0, 0}, NULL},
        /* null = the default weights */
        {"null", true, {0.35, 0.25, 0.25, 0.15}, NULL},
    };
    ROWS_BEGIN;
    check_rows(unit_mem(state), rows, N_ROWS(rows), &unit_failures_);
    ROWS_DONE();
}

static void test_parse_invalid(void **state)
{
    const weights_row rows[] = {
        {NULL, false, {0}, "empty"},
        {"", false, {0}, "empty"},
        /* all zero */
        {"price:0", false, {0}, "above 0"},
        {"price:0,delivery:0,quality:0,reliability:0", false, {0}, "above 0"},
        {"{\"price\":0}", false, {0}, "above 0"},
        {"{\"price\":0,\"delivery\":0.0}", false, {0}, "above 0"},
        /* negative */
        {"price:-0.1", false, {0}, "price"},
        {"price:0.5,delivery:-0.5", false, {0}, "delivery"},
        {"{\"price\":-0.1,\"delivery\":1}", false, {0}, "price"},
        /* above 1 */
        {"price:1.5", false, {0}, "price"},
        {"price:0.5,quality:2", false, {0}, "quality"},
        {"price:1.0000001", false, {0}, "price"},
        {"{\"reliability\":1.01}", false, {0}, "reliability"},
        /* unknown key */
        {"cost:0.5", false, {0}, "cost"},
        {"price:0.5,speed:0.5", false, {0}, "speed"},
        {"Price:0.5", false, {0}, "Price"},
        {" price:0.5", false, {0}, NULL},
        {" {\"price\":1}", false, {0}, NULL},
        {"{\"cost\":0.5}", false, {0}, "cost"},
        {"{\"price\":0.5,\"PRICE\":0.5}", false, {0}, "PRICE"},
        /* duplicate key */
        {"price:0.5,price:0.5", false, {0}, "price"},
        {"price:0.5,delivery:0.2,price:0.1", false, {0}, "price"},
        {"{\"price\":0.5,\"price\":0.5}", false, {0}, NULL},
        {"{\"delivery\":0.1,\"price\":0.5,\"delivery\":0.2}", false, {0}, NULL},
        /* malformed numbers and pairs */
        {"price:", false, {0}, "price"},
        {"price:abc", false, {0}, "price"},
        {"price:00.25", false, {0}, "price"},
        {"price:.5", false, {0}, "price"},
        {"price:1.", false, {0}, "price"},
        {"price:1e400", false, {0}, "price"},
        {"price:\"0.5\"", false, {0}, "price"},
        {"price:true", false, {0}, "price"},
        {"price:0.5.5", false, {0}, "price"},
        {"price:.", false, {0}, "price"},
        {"price:0.5 ", false, {0}, "price"},
        {"price: 0.5", false, {0}, "price"},
        {"price:+0.5", false, {0}, "price"},
        {"price:0x1", false, {0}, "price"},
        {"price:nan", false, {0}, "price"},
        {"price:inf", false, {0}, "price"},
        {"price=0.5", false, {0}, NULL},
        {"price", false, {0}, NULL},
        {"price:0.5,", false, {0}, NULL},
        {",price:0.5", false, {0}, NULL},
        {"price:0.5,,delivery:0.5", false, {0}, NULL},
        {":0.5", false, {0}, NULL},
        {"price:0.5;delivery:0.5", false, {0}, NULL},
        /* invalid JSON */
        {"{", false, {0}, "JSON"},
        {"{\"price\":}", false, {0}, "JSON"},
        {"{\"price\":0.5,}", false, {0}, "JSON"},
        {"{'price':0.5}", false, {0}, "JSON"},
        {"{\"price\":0.5} x", false, {0}, "JSON"},
        {"{\"price\":NaN}", false, {0}, "JSON"},
        /* JSON that is not an object of numbers */
        {"{}", false, {0}, NULL},
        {"{\"price\":\"0.5\"}", false, {0}, "price"},
        {"{\"price\":true}", false, {0}, "price"},
        {"{\"price\":null}", false, {0}, "price"},
        {"{\"price\":[0.5]}", false, {0}, "price"},
        {"{\"price\":{\"v\":1}}", false, {0}, "price"},
        {"[0.5,0.2,0.2,0.1]", false, {0}, NULL},
        {"0.5", false, {0}, NULL},
        {"\"price:1\"", false, {0}, NULL},
        {"true", false, {0}, NULL},
        {"NULL", false, {0}, NULL},
        {"null ", false, {0}, NULL},
    };
    ROWS_BEGIN;
    check_rows(unit_mem(state), rows, N_ROWS(rows), &unit_failures_);
    ROWS_DONE();
}

static void test_default(void **state)
{
    (void)state;
    as_weights w;
    as_weights_default(&w);
    assert_true(w.w[AS_W_PRICE] == 0.35);
    assert_true(w.w[AS_W_DELIVERY] == 0.25);
    assert_true(w.w[AS_W_QUALITY] == 0.25);
    assert_true(w.w[AS_W_RELIABILITY] == 0.15);
    assert_string_equal(as_weight_names[AS_W_PRICE], "price");
    assert_string_equal(as_weight_names[AS_W_DELIVERY], "delivery");
    assert_string_equal(as_weight_names[AS_W_QUALITY], "quality");
    assert_string_equal(as_weight_names[AS_W_RELIABILITY], "reliability");
}

typedef struct json_row {
    const char *json; /* NULL: pass a NULL json_t */
    bool ok;
    double w[AS_W_N];
} json_row;

static void test_from_json(void **state)
{
    as_mem *m = unit_mem(state);
    const json_row rows[] = {
        {NULL, true, {0.35, 0.25, 0.25, 0.15}},
        {"null", true, {0.35, 0.25, 0.25, 0.15}},
        {"{\"price\":1}", true, {1, 0, 0, 0}},
        {"{\"price\":1,\"delivery\":1}", true, {0.5, 0.5, 0, 0}},
        {"{\"reliability\":0.5}", true, {0, 0, 0, 1}},
        {"{\"price\":0.5,\"delivery\":0.2,\"quality\":0.2,\"reliability\":0.1}", true,
         {0.5, 0.2, 0.2, 0.1}},
        {"{}", false, {0}},
        {"{\"price\":0}", false, {0}},
        {"{\"price\":2}", false, {0}},
        {"{\"price\":-1}", false, {0}},
        {"{\"cost\":1}", false, {0}},
        {"{\"price\":\"1\"}", false, {0}},
        {"[]", false, {0}},
        {"1", false, {0}},
        {"\"price:1\"", false, {0}},
        {"true", false, {0}},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const json_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: %s", i, r->json ? r->json : "(NULL)");
        json_t *v = NULL;
        if (r->json) {
            json_error_t e;
            v = json_loads(r->json, JSON_DECODE_ANY, &e);
            if (!v) {
                CHECK(label, !"test JSON parses");
                continue;
            }
        }
        as_weights w;
        memset(&w, 0, sizeof(w));
        const char *err = NULL;
        bool ok = as_weights_from_json(m, v, &w, &err);
        json_decref(v);
        CHECK_INT(label, ok, r->ok);
        if (ok != r->ok) continue;
        if (ok)
            for (int k = 0; k < AS_W_N; k++)
                CHECK_NEAR(label, w.w[k], r->w[k], EPS);
        else
            CHECK(label, err && *err);
    }
    ROWS_DONE();
}

static void test_weights_json(void **state)
{
    as_mem *m = unit_mem(state);
    as_weights w;
    const char *err = NULL;
    assert_true(as_weights_parse(m, "price:0.6,delivery:0.6,quality:0.6", &w, &err));
    json_t *o = as_weights_json(&w);
    assert_non_null(o);
    assert_int_equal(json_object_size(o), 4);
    for (int k = 0; k < AS_W_N; k++)
        assert_true(json_is_number(json_object_get(o, as_weight_names[k])));
    double p = json_number_value(json_object_get(o, "price"));
    assert_true(p > 0.333332 && p < 0.333334);
    assert_true(json_number_value(json_object_get(o, "reliability")) == 0);

    /* What as_weights_json writes, as_weights_from_json reads back. */
    as_weights back;
    assert_true(as_weights_from_json(m, o, &back, &err));
    for (int k = 0; k < AS_W_N; k++)
        assert_true(back.w[k] - w.w[k] < 1e-5 && w.w[k] - back.w[k] < 1e-5);
    json_decref(o);

    as_weights_default(&w);
    o = as_weights_json(&w);
    char *text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(15));
    assert_string_equal(text,
                        "{\"delivery\":0.25,\"price\":0.35,\"quality\":0.25,\"reliability\":0.15}");
    free(text);
    json_decref(o);
}

/* One rule for a weight in both encodings (issue 59): the same number text is
 * accepted or refused alike, to the same weights, subnormals included. */
static void test_encodings_agree(void **state)
{
    as_mem *m = unit_mem(state);
    const char *numbers[] = {"0.5",   "1",      "0",      "0.0",      "-0",     "1e0",
                             "1E-1",  "2.5e-1", "1e-320", "4.9e-324", "1e-400", "1.0000001",
                             "2",     "-0.1",   "00.25",  ".5",       "1.",     "0x1",
                             "1e400", "nan",    "+0.5",   "0.5e",     "0.75"};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(numbers); i++) {
        const char *pairs = as_printf(m, "price:%s,delivery:0.5", numbers[i]);
        const char *json = as_printf(m, "{\"price\":%s,\"delivery\":0.5}", numbers[i]);
        as_weights a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        const char *ea = NULL, *eb = NULL;
        bool oka = as_weights_parse(m, pairs, &a, &ea), okb = as_weights_parse(m, json, &b, &eb);
        CHECK_INT(
            as_printf(m, "'%s': pairs %s, JSON %s", numbers[i], oka ? "ok" : ea, okb ? "ok" : eb),
            oka, okb);
        for (int k = 0; oka && okb && k < AS_W_N; k++)
            CHECK_NEAR(numbers[i], a.w[k], b.w[k], 0);
    }
    ROWS_DONE();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_parse_valid),  UNIT_TEST(test_parse_invalid),
        UNIT_TEST(test_default),      UNIT_TEST(test_from_json),
        UNIT_TEST(test_weights_json), UNIT_TEST(test_encodings_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
