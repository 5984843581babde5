/* as_spec_eval and as_verification_status: claimed versus measured. */
#include "unit_check.h"

#include <jansson.h>

#include "as_verify.h"

typedef struct eval_row {
    const char *name;
    as_spec_row row;
    bool product_measured;
    bool ok, unclaimed;
    const char *delta_prefix; /* delta starts with this (exact when delta_exact) */
    bool delta_exact;
    const char *detail_has[3]; /* fragments the detail must contain */
} eval_row;

#define PERF(claimed, measured, tol) {"volume", "Volume", "performance", "ml", claimed, measured, tol}
#define CAT(claimed, measured) {"washable", "Washable", "categorical", NULL, claimed, measured, 0}
#define INFO(claimed, measured) {"weight", "Weight", "info", "g", claimed, measured, 0}

static void run_eval_rows(as_mem *m, const eval_row *rows, size_t n, int *failures);

static void test_spec_eval(void **state)
{
    as_mem *m = unit_mem(state);
    const eval_row rows[] = {
        /* performance: below the tolerance floor contradicts */
        {"perf 455 of 500", PERF("500", "455", 2), true, false, false, "-45 ml", false,
         {"500", "455", NULL}},
        {"perf 455 of 500 exact delta", PERF("500", "455", 2), true, false, false,
         "-45 ml (-9.0%)", true, {"tolerance", NULL, NULL}},
        {"perf 495 within", PERF("500", "495", 2), true, true, false, "-5 ml", false,
         {"500", "495", "tolerance"}},
        {"perf 490 at floor", PERF("500", "490", 2), true, true, false, "-10 ml", false,
         {NULL, NULL, NULL}},
        {"perf 489 below floor", PERF("500", "489", 2), true, false, false, "-11 ml", false,
         {"500", "489", NULL}},
        {"perf 510 above", PERF("500", "510", 2), true, true, false, "+10 ml (+2.0%)", true,
         {"500", "510", "meets"}},
        {"perf equal", PERF("500", "500", 2), true, true, false, "0 ml (0.0%)", true,
         {"meets", NULL, NULL}},
        {"perf zero tolerance", PERF("500", "499.5", 0), true, false, false, "-0.5 ml", false,
         {"499.5", NULL, NULL}},
        {"perf decimals", PERF("4.5", "4.25", 10), true, true, false, "-0.25 ml", false,
         {"4.5", "4.25", NULL}},
        /* categorical */
        {"cat true vs false", CAT("true", "false"), true, false, false, "differs", true,
         {"yes", "no", NULL}},
        {"cat true vs true", CAT("true", "true"), true, true, false, "matches", true,
         {NULL, NULL, NULL}},
        {"cat string equal", CAT("\"foam\"", "\"foam\""), true, true, false, "matches", true,
         {"foam", NULL, NULL}},
        {"cat string differs", CAT("\"foam\"", "\"gel\""), true, false, false, "differs", true,
         {"foam", "gel", NULL}},
        {"cat number equal", CAT("3", "3.0"), true, true, false, NULL, false, {NULL, NULL, NULL}},
        /* info rows never contradict */
        {"info numbers differ", INFO("250", "300"), true, true, false, "+50 g", false,
         {"information", NULL, NULL}},
        {"info strings differ", {"colour", "Colour", "info", NULL, "\"red\"", "\"blue\"", 0}, true,
         true, false, "differs", true, {"red", "blue", NULL}},
        {"info equal", INFO("250", "250"), true, true, false, NULL, false, {NULL, NULL, NULL}},
        /* unclaimed rows */
        {"unclaimed measured", PERF(NULL, "455", 2), true, true, true, "", true,
         {NULL, NULL, NULL}},
        {"unclaimed unmeasured", CAT(NULL, NULL), true, true, true, "", true,
         {NULL, NULL, NULL}},
        /* not measured */
        {"product not measured", PERF("500", "455", 2), false, true, false, "not measured",
         true, {"not measured", NULL, NULL}},
        {"product not measured cat", CAT("true", "false"), false, true, false, "not measured",
         true, {"not measured", NULL, NULL}},
        {"row not measured", PERF("500", NULL, 2), true, true, false, "not measured", true,
         {"not measured", NULL, NULL}},
    };
    ROWS_BEGIN;
    run_eval_rows(m, rows, N_ROWS(rows), &unit_failures_);
    ROWS_DONE();
}

/* Arrays (categorical lists such as materials) compare as sets. */
static void test_arrays_as_sets(void **state)
{
    as_mem *m = unit_mem(state);
    const eval_row rows[] = {
        {"cat arrays as sets", CAT("[\"a\",\"b\",\"c\"]", "[\"c\",\"a\",\"b\"]"), true, true,
         false, "matches", true, {NULL, NULL, NULL}},
        {"cat arrays differ", CAT("[\"a\",\"b\"]", "[\"a\",\"c\"]"), true, false, false,
         "differs", true, {NULL, NULL, NULL}},
        {"cat arrays subset", CAT("[\"a\",\"b\"]", "[\"a\"]"), true, false, false, "differs",
         true, {NULL, NULL, NULL}},
        {"cat arrays superset", CAT("[\"a\"]", "[\"a\",\"b\"]"), true, false, false, "differs",
         true, {NULL, NULL, NULL}},
        {"cat arrays empty", CAT("[]", "[]"), true, true, false, "matches", true,
         {NULL, NULL, NULL}},
        /* {a} is not {a, b}, whichever side holds the repeated element */
        {"cat set {a} vs {a,b}", CAT("[\"a\",\"a\"]", "[\"a\",\"b\"]"), true, false, false,
         "differs", true, {NULL, NULL, NULL}},
        {"cat set {a,b} vs {a}", CAT("[\"a\",\"b\"]", "[\"a\",\"a\"]"), true, false, false,
         "differs", true, {NULL, NULL, NULL}},
        {"cat arrays of numbers", CAT("[1,2]", "[2,1]"), true, true, false, "matches", true,
         {NULL, NULL, NULL}},
        {"cat array vs scalar", CAT("[\"a\"]", "\"a\""), true, false, false, "differs", true,
         {NULL, NULL, NULL}},
    };
    ROWS_BEGIN;
    run_eval_rows(m, rows, N_ROWS(rows), &unit_failures_);
    ROWS_DONE();
}

static void run_eval_rows(as_mem *m, const eval_row *rows, size_t n, int *failures)
{
    int unit_failures_ = 0;
    for (size_t i = 0; i < n; i++) {
        const eval_row *r = &rows[i];
        as_row_eval e;
        memset(&e, 0xA5, sizeof(e));
        as_spec_eval(m, &r->row, r->product_measured, &e);
        CHECK_INT(r->name, e.ok, r->ok);
        CHECK_INT(r->name, e.unclaimed, r->unclaimed);
        CHECK(r->name, e.delta != NULL && e.detail != NULL);
        if (!e.delta || !e.detail) continue;
        if (r->delta_prefix) {
            if (r->delta_exact)
                CHECK_STR(r->name, e.delta, r->delta_prefix);
            else
                CHECK(as_printf(m, "%s: delta '%s' starts with '%s'", r->name, e.delta,
                                r->delta_prefix),
                      strncmp(e.delta, r->delta_prefix, strlen(r->delta_prefix)) == 0);
        }
        for (int k = 0; k < 3; k++)
            if (r->detail_has[k]) CHECK_CONTAINS(r->name, e.detail, r->detail_has[k]);
        if (r->unclaimed && r->product_measured) CHECK_STR(r->name, e.detail, "");
        if (!r->product_measured) CHECK_STR(r->name, e.detail, "not measured");
    }
    *failures += unit_failures_;
}

static void test_numeric_fields(void **state)
{
    as_mem *m = unit_mem(state);
    as_spec_row row = PERF("500", "455", 2);
    as_row_eval e;
    as_spec_eval(m, &row, true, &e);
    assert_true(e.measured);
    assert_true(e.numeric);
    assert_true(e.claimed_num == 500);
    assert_true(e.measured_num == 455);
    assert_true(e.delta_num == -45);
    assert_true(e.delta_pct == -9.0);

    as_spec_row cat = CAT("true", "false");
    as_spec_eval(m, &cat, true, &e);
    assert_false(e.numeric);
    assert_true(e.measured);

    as_spec_row none = PERF("500", NULL, 2);
    as_spec_eval(m, &none, true, &e);
    assert_false(e.measured);
}

typedef struct status_row {
    const char *name;
    const as_spec_row *rows;
    size_t n;
    bool measured;
    const char *status;
    const char *note_has[2]; /* NULL note when both NULL and status != contradicted */
} status_row;

static void test_verification_status(void **state)
{
    as_mem *m = unit_mem(state);
    static const as_spec_row good[] = {
        {"volume", "Volume", "performance", "ml", "500", "502", 2},
        {"scent", "Scent", "categorical", NULL, "\"lavender\"", "\"lavender\"", 0},
        {"weight", "Weight", "info", "g", "520", "600", 0},
        {"colour", "Colour", "categorical", NULL, NULL, "\"white\"", 0},
    };
    static const as_spec_row short_volume[] = {
        {"scent", "Scent", "categorical", NULL, "\"lavender\"", "\"lavender\"", 0},
        {"volume", "Volume", "performance", "ml", "500", "455", 2},
        {"washable", "Washable", "categorical", NULL, "true", "false", 0},
    };
    static const as_spec_row not_washable[] = {
        {"volume", "Volume", "performance", "ml", "500", "495", 2},
        {"washable", "Washable", "categorical", NULL, "true", "false", 0},
    };
    static const as_spec_row unmeasured_rows[] = {
        {"volume", "Volume", "performance", "ml", "500", NULL, 2},
    };
    const status_row rows[] = {
        {"pending: nothing measured", short_volume, N_ROWS(short_volume), false, "pending",
         {NULL, NULL}},
        {"pending: no rows", NULL, 0, false, "pending", {NULL, NULL}},
        {"verified", good, N_ROWS(good), true, "verified", {NULL, NULL}},
        {"verified: rows not measured", unmeasured_rows, 1, true, "verified", {NULL, NULL}},
        {"verified: no rows", NULL, 0, true, "verified", {NULL, NULL}},
        {"contradicted: volume first", short_volume, N_ROWS(short_volume), true, "contradicted",
         {"Volume", "455"}},
        {"contradicted: washable", not_washable, N_ROWS(not_washable), true, "contradicted",
         {"Washable", NULL}},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const status_row *r = &rows[i];
        const char *note = "unset";
        const char *st =
            as_verif_name(as_verification_status(m, r->rows, r->n, r->measured, &note));
        CHECK_STR(r->name, st, r->status);
        if (strcmp(r->status, "contradicted") == 0) {
            CHECK(r->name, note != NULL);
            for (int k = 0; k < 2; k++)
                if (r->note_has[k]) CHECK_CONTAINS(r->name, note, r->note_has[k]);
        } else {
            CHECK(r->name, note == NULL);
        }
    }
    ROWS_DONE();
}

static void test_texts(void **state)
{
    as_mem *m = unit_mem(state);
    const struct {
        double v;
        const char *want;
    } nums[] = {
        {500, "500"}, {4.5, "4.5"}, {0.25, "0.25"}, {-45, "-45"}, {0, "0"},
        {1.005, "1"}, {99.97, "99.97"}, {2.1, "2.1"}, {1e6, "1000000"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(nums); i++)
        CHECK_STR(nums[i].want, as_num_text(m, nums[i].v), nums[i].want);
    const struct {
        const char *json, *want;
    } vals[] = {
        {NULL, "none"},        {"null", "none"},         {"true", "yes"},
        {"false", "no"},       {"\"foam\"", "foam"},     {"[\"a\",\"b\"]", "a, b"},
        {"[]", "none"},        {"500", "500"},           {"4.5", "4.5"},
    };
    for (size_t i = 0; i < N_ROWS(vals); i++)
        CHECK_STR(vals[i].json ? vals[i].json : "NULL", as_json_text(m, vals[i].json),
                  vals[i].want);
    ROWS_DONE();
}

/* The scalars as_spec_eval reads itself (null, true, false, numbers,
 * strings) give what jansson's reading gives. The oracle is jansson's own
 * text of each value (json_dumps, compact: "5.0" stays 5.0, "-0" becomes 0,
 * "1e3" 1000.0, an escape its character), which names the same value;
 * every pair of values, in every kind of row, evaluates alike given as
 * written and as jansson writes it, and a categorical row matches exactly
 * when jansson finds the two values equal (json_equal). */
static const char *jansson_text(as_mem *m, const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v) return text; /* refused: the same text */
    char *out = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    const char *kept = out ? as_strdup(m, out) : text;
    free(out);
    json_decref(v);
    return kept;
}

static void test_scalars_as_jansson(void **state)
{
    as_mem *m = unit_mem(state);
    static const char *const vals[] = {
        "0",
        "-0",
        "5",
        "5.0",
        "-0.0",
        "0.1",
        "12.345",
        "-3.75",
        "499.5",
        "500",
        "999999999999999",
        "1234567.8901234",
        "0.000000000000001",
        "1000000000000000",
        "0.30000000000000004",
        "\"foam\"",
        "\"\"",
        "\"a b\"",
        "\"Foam\"",
        "true",
        "false",
        "null",
        "1e3",
        "01",
        "5.",
        "-",
        "[1,2]",
        "\"caf\\u00e9\"",
        "\"x\\\"y\"",
        "\"caf\\u00e8\"",
        "\"foam \"",
        "\"foa\"",
        " 5 ",
        "9223372036854775808",
        "1e400",
        "{\"a\":1}",
    };
    static const char *const kinds[] = {"performance", "categorical", "info"};
    int numeric = 0, same = 0;
    ROWS_BEGIN;
    for (size_t k = 0; k < N_ROWS(kinds); k++)
        for (size_t i = 0; i < N_ROWS(vals); i++)
            for (size_t j = 0; j < N_ROWS(vals); j++) {
                as_spec_row fast = {"x", "X", kinds[k], k == 1 ? NULL : "ml", vals[i], vals[j], 2};
                as_spec_row slow = fast;
                slow.claimed = jansson_text(m, vals[i]);
                slow.measured = jansson_text(m, vals[j]);
                as_row_eval a, b;
                as_spec_eval(m, &fast, true, &a);
                as_spec_eval(m, &slow, true, &b);
                const char *name = as_printf(m, "%s %s vs %s", kinds[k], vals[i], vals[j]);
                json_t *cj = json_loads(vals[i], JSON_DECODE_ANY, NULL),
                       *vj = json_loads(vals[j], JSON_DECODE_ANY, NULL);
                if (k == 1 && cj && vj && !json_is_number(cj))
                    CHECK(name, a.ok == (json_equal(cj, vj) != 0));
                json_decref(cj);
                json_decref(vj);
                CHECK(name, a.ok == b.ok && a.unclaimed == b.unclaimed &&
                                a.measured == b.measured && a.numeric == b.numeric);
                CHECK(name, memcmp(&a.claimed_num, &b.claimed_num, sizeof(double)) == 0 &&
                                memcmp(&a.measured_num, &b.measured_num, sizeof(double)) == 0 &&
                                a.delta_num == b.delta_num && a.delta_pct == b.delta_pct);
                CHECK_STR(name, a.delta ? a.delta : "NULL", b.delta ? b.delta : "NULL");
                CHECK_STR(name, a.detail, b.detail);
                numeric += a.numeric;
                same += a.ok && k == 1;
            }
    CHECK("numbers were compared", numeric > 100);
    CHECK("equal categorical values were found", same > 10);
    ROWS_DONE();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_spec_eval),      UNIT_TEST(test_arrays_as_sets),
        UNIT_TEST(test_numeric_fields), UNIT_TEST(test_verification_status),
        UNIT_TEST(test_texts),          UNIT_TEST(test_scalars_as_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
