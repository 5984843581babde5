/* as_validate_value / as_validate_query for every rule type, as_validate_body, and
 * as_query_parse. */
#include "unit_check.h"

#include "as_util.h"
#include "as_validate.h"

static const char *const colours[] = {"red", "green", "blue", NULL};

static const as_param_rule r_text = {"q", AS_V_TEXT, 2, 4, NULL};
static const as_param_rule r_text0 = {"q", AS_V_TEXT, 0, 3, NULL};
static const as_param_rule r_prose = {"reason", AS_V_PROSE, 2, 40, NULL};
static const as_param_rule r_slug = {"sku", AS_V_SLUG, 3, 8, NULL};
static const as_param_rule r_enum = {"colour", AS_V_ENUM, 1, 20, colours};
static const as_param_rule r_date = {"deliver_by", AS_V_DATE, 0, 0, NULL};
static const as_param_rule r_eur = {"max_price", AS_V_EUR, 0, 100000000, NULL};
static const as_param_rule r_bool = {"verified_only", AS_V_BOOL, 0, 0, NULL};
static const as_param_rule r_int = {"limit", AS_V_INT, 1, 100, NULL};
static const as_param_rule r_intneg = {"offset", AS_V_INT, -5, 5, NULL};
static const as_param_rule r_weights = {"weights", AS_V_WEIGHTS, 0, 0, NULL};
static const as_param_rule r_post = {"postcode", AS_V_POSTCODE, 1, 8, NULL};

typedef struct value_row {
    const as_param_rule *rule;
    const char *in;
    bool ok;
    int64_t num; /* checked when ok and the type yields a number */
} value_row;

static int64_t day_of(const char *s)
{
    int64_t d = 0;
    assert_true(as_date_parse(s, &d));
    return d;
}

static void check_failure(int *failures, const char *label, const as_problem *p,
                          const char *field)
{
    int unit_failures_ = 0;
    CHECK_INT(label, p->status, 400);
    CHECK_STR(label, p->code, "VALIDATION_ERROR");
    CHECK_STR(label, p->field, field);
    CHECK(label, p->message && *p->message);
    *failures += unit_failures_;
}

static void test_validate_value(void **state)
{
    as_mem *m = unit_mem(state);
    int64_t today = day_of("2026-01-15");
    /* Dates are days since the epoch: computed here, not hard-coded. */
    const value_row rows[] = {
        /* AS_V_TEXT: lengths in code points */
        {&r_text, "ab", true, 0},
        {&r_text, "abcd", true, 0},
        {&r_text, "a", false, 0},
        {&r_text, "abcde", false, 0},
        {&r_text, "\xC3\xA9\xC3\xA9", true, 0},                 /* éé: 2 chars, 4 bytes */
        {&r_text, "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC", true, 0}, /* €€€€ */
        {&r_text, "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC", false, 0},
        {&r_text, "\xF0\x9F\x98\x80", false, 0},                 /* one emoji: 1 char */
        {&r_text, "a\xF0\x9F\x98\x80", true, 0},                 /* 2 chars */
        {&r_text, "\xC3", false, 0},                             /* invalid UTF-8 */
        {&r_text, "a\xC0\xAF", false, 0},                        /* overlong */
        {&r_text0, "", true, 0},
        {&r_text0, "abcd", false, 0},
        /* AS_V_PROSE: text for people, nothing hidden in it */
        {&r_prose, "Toner for the office", true, 0},
        {&r_prose, "caf\xC3\xA9 \xF0\x9F\x91\x8D \xE2\x82\xAC" "5", true, 0}, /* café 👍 €5 */
        {&r_prose, "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x94\xA7", true, 0}, /* ZWJ emoji */
        {&r_prose, "\xD8\xB3\xD9\x84\xD8\xA7\xD9\x85 hello", true, 0}, /* Arabic */
        {&r_prose, "a", false, 0},                                  /* length still counts */
        {&r_prose, "line one\nline two", false, 0},
        {&r_prose, "tab\there", false, 0},
        {&r_prose, "cr\rhere", false, 0},
        {&r_prose, "esc \x1b" "[2J", false, 0},
        {&r_prose, "del \x7f", false, 0},
        {&r_prose, "nel \xC2\x85 here", false, 0},                 /* U+0085, C1 */
        {&r_prose, "ok \xE2\x80\xAE" "evil", false, 0},             /* U+202E RLO */
        {&r_prose, "ok \xE2\x80\xAAx", false, 0},                /* U+202A LRE */
        {&r_prose, "ok \xE2\x81\xA6x", false, 0},                /* U+2066 LRI */
        {&r_prose, "ok \xE2\x81\xA9x", false, 0},                /* U+2069 PDI */
        {&r_prose, "ok \xE2\x80\x8Fx", false, 0},                /* U+200F RLM */
        {&r_prose, "ok \xD8\x9Cx", false, 0},                     /* U+061C ALM */
        {&r_prose, "ok \xE2\x80\xA8x", false, 0},                /* U+2028 */
        {&r_prose, "\xEF\xBB\xBF" "bom", false, 0},                 /* U+FEFF */
        /* AS_V_SLUG */
        {&r_slug, "abc", true, 0},
        {&r_slug, "A-b_c.9", true, 0},
        {&r_slug, "ab", false, 0},
        {&r_slug, "abcdefghi", false, 0},
        {&r_slug, "ab/cd", false, 0},
        {&r_slug, "ab cd", false, 0},
        {&r_slug, "ab%cd", false, 0},
        {&r_slug, "ab\xC3\xA9", false, 0},
        /* AS_V_ENUM */
        {&r_enum, "red", true, 0},
        {&r_enum, "blue", true, 0},
        {&r_enum, "Red", false, 0},
        {&r_enum, "purple", false, 0},
        {&r_enum, "", false, 0},
        {&r_enum, "re", false, 0},
        /* AS_V_DATE */
        {&r_date, "2026-01-15", true, 0},
        {&r_date, "2026-01-16", true, 0},
        {&r_date, "2028-02-29", true, 0},
        {&r_date, "2026-12-31", true, 0},
        {&r_date, "2026-02-29", false, 0},
        {&r_date, "2100-02-29", false, 0},
        {&r_date, "2026-01-14", false, 0}, /* yesterday */
        {&r_date, "2025-12-31", false, 0},
        {&r_date, "2026-13-01", false, 0},
        {&r_date, "2026-00-10", false, 0},
        {&r_date, "2026-04-31", false, 0},
        {&r_date, "2026-04-00", false, 0},
        {&r_date, "2026-1-20", false, 0},
        {&r_date, "2026/01/20", false, 0},
        {&r_date, "2026-01-20T00:00:00Z", false, 0},
        {&r_date, " 2026-01-20", false, 0},
        {&r_date, "", false, 0},
        {&r_date, "tomorrow", false, 0},
        /* AS_V_EUR */
        {&r_eur, "12", true, 1200},
        {&r_eur, "12.5", true, 1250},
        {&r_eur, "12.50", true, 1250},
        {&r_eur, "0.01", true, 1},
        {&r_eur, "1000000", true, 100000000},
        {&r_eur, "1000000.01", false, 0},
        {&r_eur, "12.505", false, 0},
        {&r_eur, "-1", false, 0},
        {&r_eur, "+1", false, 0},
        {&r_eur, "1e3", false, 0},
        {&r_eur, "", false, 0},
        {&r_eur, "0", false, 0},
        {&r_eur, "0.00", false, 0},
        {&r_eur, "12.", false, 0},
        {&r_eur, ".5", false, 0},
        {&r_eur, "12,50", false, 0},
        {&r_eur, "12.5 ", false, 0},
        {&r_eur, "\xE2\x82\xAC" "12", false, 0},
        /* AS_V_BOOL */
        {&r_bool, "true", true, 1},
        {&r_bool, "1", true, 1},
        {&r_bool, "false", true, 0},
        {&r_bool, "0", true, 0},
        {&r_bool, "TRUE", false, 0},
        {&r_bool, "yes", false, 0},
        {&r_bool, "", false, 0},
        {&r_bool, "2", false, 0},
        /* AS_V_INT */
        {&r_int, "1", true, 1},
        {&r_int, "100", true, 100},
        {&r_int, "42", true, 42},
        {&r_int, "0", false, 0},
        {&r_int, "101", false, 0},
        {&r_int, "-1", false, 0},
        {&r_int, "1.5", false, 0},
        {&r_int, "+5", false, 0},
        {&r_int, " 5", false, 0},
        {&r_int, "5 ", false, 0},
        {&r_int, "", false, 0},
        {&r_int, "-", false, 0},
        {&r_int, "99999999999999999999999", false, 0},
        {&r_intneg, "-5", true, -5},
        {&r_intneg, "5", true, 5},
        {&r_intneg, "-6", false, 0},
        /* AS_V_WEIGHTS */
        {&r_weights, "price:0.5,delivery:0.2,quality:0.2,reliability:0.1", true, 0},
        {&r_weights, "{\"price\":1}", true, 0},
        {&r_weights, "null", true, 0},
        {&r_weights, "price:2", false, 0},
        {&r_weights, "cost:1", false, 0},
        {&r_weights, "", false, 0},
        {&r_weights, "{\"price\":", false, 0},
        /* AS_V_POSTCODE */
        {&r_post, "1012 AB", true, 0},
        {&r_post, "SW1A-1AA", true, 0},
        {&r_post, "10115", true, 0},
        {&r_post, "", false, 0},
        {&r_post, "123456789", false, 0},
        {&r_post, "1012_AB", false, 0},
        {&r_post, "1012,AB", false, 0},
        {&r_post, "75\xC3\xA9", false, 0},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const value_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: %s '%s'", i, r->rule->name, r->in);
        as_param out;
        as_problem p;
        memset(&out, 0, sizeof(out));
        memset(&p, 0, sizeof(p));
        bool ok = as_validate_value(m, r->rule, r->in, today, &out, &p);
        CHECK_INT(label, ok, r->ok);
        if (ok != r->ok) continue;
        if (ok) {
            CHECK(label, out.present);
            CHECK_STR(label, out.str, r->in);
            switch (r->rule->type) {
            case AS_V_EUR:
            case AS_V_BOOL:
            case AS_V_INT:
                CHECK_INT(label, out.num, r->num);
                break;
            case AS_V_DATE:
                CHECK_INT(label, out.num, day_of(r->in));
                break;
            default:
                break;
            }
        } else {
            check_failure(&unit_failures_, label, &p, r->rule->name);
        }
    }
    ROWS_DONE();
}

/* The messages name the limits they enforce. */
static void test_validate_messages(void **state)
{
    as_mem *m = unit_mem(state);
    int64_t today = day_of("2026-01-15");
    const struct {
        const as_param_rule *rule;
        const char *in, *needle;
    } rows[] = {
        {&r_text, "abcde", "got 5"},
        {&r_text, "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC", "got 5"},
        {&r_enum, "purple", "red, green, blue"},
        {&r_date, "2026-01-14", "2026-01-15"},
        {&r_date, "2026-02-29", "yyyy-mm-dd"},
        {&r_eur, "12.505", "12.50"},
        {&r_int, "101", "from 1 to 100"},
        {&r_weights, "cost:1", "cost"},
        {&r_prose, "ok \xE2\x80\xAE" "evil", "U+202E at character 4"},
        {&r_prose, "two\nlines", "U+000A at character 4"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_param out;
        as_problem p = {0};
        const char *label = as_printf(m, "row %zu: %s", i, rows[i].in);
        CHECK(label, !as_validate_value(m, rows[i].rule, rows[i].in, today, &out, &p));
        CHECK_CONTAINS(label, p.message, rows[i].needle);
    }
    ROWS_DONE();
}

static void test_weights_value(void **state)
{
    as_mem *m = unit_mem(state);
    as_param out;
    as_problem p;
    assert_true(as_validate_value(m, &r_weights, "price:0.5,delivery:0.5", 0, &out, &p));
    assert_true(out.weights.w[AS_W_PRICE] > 0.4999 && out.weights.w[AS_W_PRICE] < 0.5001);
    assert_true(out.weights.w[AS_W_QUALITY] == 0);
}

/* ---- as_validate_query ---- */

static const as_param_rule q_rules[] = {
    {"q", AS_V_TEXT, 0, 10, NULL},
    {"limit", AS_V_INT, 1, 100, NULL},
    {"verified_only", AS_V_BOOL, 0, 0, NULL},
    {"max_price", AS_V_EUR, 0, 100000, NULL},
};

typedef struct query_row {
    const char *raw;
    bool ok;
    const char *field; /* on failure */
} query_row;

static void test_validate_query(void **state)
{
    as_mem *m = unit_mem(state);
    const query_row rows[] = {
        {"", true, NULL},
        {"q=soap", true, NULL},
        {"q=soap&limit=5&verified_only=false&max_price=12.50", true, NULL},
        {"limit=5&q=", true, NULL},
        {"colour=red", false, "colour"},
        {"q=soap&Limit=5", false, "Limit"},
        {"q=soap&q=soap", false, "q"},
        {"limit=5&limit=6", false, "limit"},
        {"limit=0", false, "limit"},
        {"q=abcdefghijk", false, "q"},
        {"max_price=0", false, "max_price"},
        {"verified_only=maybe", false, "verified_only"},
        {"q=soap&thisisaverylongparameternamethatgoesonandonforever=1", false,
         "thisisaverylongparameternamethatgoesonandonforever"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char *label = as_printf(m, "row %zu: %s", i, rows[i].raw);
        as_query q;
        const char *bad = NULL;
        if (!as_query_parse(m, rows[i].raw, &q, &bad)) {
            CHECK(label, !"query parses");
            continue;
        }
        as_param vals[N_ROWS(q_rules)];
        as_problem p = {0};
        bool ok = as_validate_query(m, q_rules, N_ROWS(q_rules), &q, 20000, vals, &p);
        CHECK_INT(label, ok, rows[i].ok);
        if (ok != rows[i].ok) continue;
        if (!ok) {
            check_failure(&unit_failures_, label, &p, rows[i].field);
        }
    }
    ROWS_DONE();
}

static void test_validate_query_values(void **state)
{
    as_mem *m = unit_mem(state);
    as_query q;
    const char *bad = NULL;
    assert_true(as_query_parse(m, "max_price=9.9&q=soap+bar", &q, &bad));
    as_param v[N_ROWS(q_rules)];
    as_problem p;
    assert_true(as_validate_query(m, q_rules, N_ROWS(q_rules), &q, 0, v, &p));
    assert_true(v[0].present);
    assert_string_equal(v[0].str, "soap bar");
    assert_false(v[1].present);
    assert_false(v[2].present);
    assert_true(v[3].present);
    assert_int_equal(v[3].num, 990);

    /* Unknown parameter: the message lists what the endpoint takes. */
    assert_true(as_query_parse(m, "sort=price", &q, &bad));
    assert_false(as_validate_query(m, q_rules, N_ROWS(q_rules), &q, 0, v, &p));
    assert_string_equal(p.field, "sort");
    assert_non_null(strstr(p.message, "q, limit, verified_only, max_price"));

    /* No rules at all: every parameter is unknown. */
    assert_false(as_validate_query(m, q_rules, 0, &q, 0, v, &p));
    assert_string_equal(p.field, "sort");
    assert_int_equal(p.status, 400);
}

/* ---- as_query_parse ---- */

typedef struct parse_row {
    const char *raw;
    bool ok;
    size_t n;
    const char *k0, *v0, *k1, *v1;
    const char *bad; /* on failure */
} parse_row;

static void test_query_parse(void **state)
{
    as_mem *m = unit_mem(state);
    const parse_row rows[] = {
        {"", true, 0, NULL, NULL, NULL, NULL, NULL},
        {"a=b", true, 1, "a", "b", NULL, NULL, NULL},
        {"a=b&c=d", true, 2, "a", "b", "c", "d", NULL},
        {"q=caf%C3%A9+cr%C3%A8me", true, 1, "q", "caf\xC3\xA9 cr\xC3\xA8me", NULL, NULL, NULL},
        {"q=%41%62%2b%2B", true, 1, "q", "Ab++", NULL, NULL, NULL},
        {"q=a%20b+c", true, 1, "q", "a b c", NULL, NULL, NULL},
        {"a+b=c", true, 1, "a b", "c", NULL, NULL, NULL},
        {"q=%e2%82%ac", true, 1, "q", "\xE2\x82\xAC", NULL, NULL, NULL},
        {"flag", true, 1, "flag", "", NULL, NULL, NULL},
        {"a=&b=", true, 2, "a", "", "b", "", NULL},
        {"&&a=1&", true, 1, "a", "1", NULL, NULL, NULL},
        {"a=b=c", true, 1, "a", "b=c", NULL, NULL, NULL},
        {"a=1&a=2", true, 2, "a", "1", "a", "2", NULL},
        {"q=%26%3D", true, 1, "q", "&=", NULL, NULL, NULL},
        {"q=%00", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=a%00b", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%C3", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%C0%AF", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%ED%A0%80", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%FF", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%4", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"q=%zz", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"ok=1&q=\xC3", false, 0, NULL, NULL, NULL, NULL, "q"},
        {"%C3=1", false, 0, NULL, NULL, NULL, NULL, "query"},
        {"%00=1", false, 0, NULL, NULL, NULL, NULL, "query"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const parse_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: %s", i, r->raw);
        as_query q;
        const char *bad = NULL;
        bool ok = as_query_parse(m, r->raw, &q, &bad);
        CHECK_INT(label, ok, r->ok);
        if (ok != r->ok) continue;
        if (!ok) {
            CHECK_STR(label, bad, r->bad);
            continue;
        }
        CHECK_INT(label, q.n, r->n);
        if (q.n != r->n) continue;
        if (r->n > 0) {
            CHECK_STR(label, q.items[0].key, r->k0);
            CHECK_STR(label, q.items[0].val, r->v0);
        }
        if (r->n > 1) {
            CHECK_STR(label, q.items[1].key, r->k1);
            CHECK_STR(label, q.items[1].val, r->v1);
        }
    }
    ROWS_DONE();
}

static void test_query_parse_null_and_get(void **state)
{
    as_mem *m = unit_mem(state);
    as_query q;
    const char *bad = NULL;
    assert_true(as_query_parse(m, NULL, &q, &bad));
    assert_int_equal(q.n, 0);
    assert_null(as_query_get(&q, "a"));
    assert_true(as_query_parse(m, "a=1&b=2&a=3", &q, &bad));
    assert_string_equal(as_query_get(&q, "a"), "1");
    assert_string_equal(as_query_get(&q, "b"), "2");
    assert_null(as_query_get(&q, "c"));
}

/* A JSON body's null: a wrong type named by its field, like any other, for
 * every field but weights ("object or null", spec 4.1: the defaults). */
static void test_validate_body_null(void **state)
{
    as_mem *m = unit_mem(state);
    static const as_field_rule rules[] = {
        {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
        {{"quantity", AS_V_INT, 1, 10, NULL}, false},
        {{"offer_id", AS_V_SLUG, 1, 60, NULL}, false},
        {{"deliver_by", AS_V_DATE, 0, 0, NULL}, false},
        {{"weights", AS_V_WEIGHTS, 0, 0, NULL}, false},
    };
    const size_t n = sizeof(rules) / sizeof(rules[0]);
    const struct {
        const char *body;
        const char *field; /* NULL: accepted */
        const char *needle;
    } rows[] = {
        {"{\"sku\":\"HS-0001\",\"quantity\":null}", "quantity", "whole number, not null"},
        {"{\"sku\":\"HS-0001\",\"offer_id\":null}", "offer_id", "string, not null"},
        {"{\"sku\":\"HS-0001\",\"deliver_by\":null}", "deliver_by", "not null"},
        {"{\"sku\":null}", "sku", "not null"},
        {"{\"sku\":\"HS-0001\",\"weights\":null}", NULL, NULL},
        {"{\"sku\":\"HS-0001\"}", NULL, NULL},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        json_t *body = json_loads(rows[i].body, 0, NULL);
        assert_non_null(body);
        as_param v[5];
        as_problem p;
        memset(&p, 0, sizeof(p));
        bool ok = as_validate_body(m, rules, n, body, day_of("2026-12-01"), v, &p);
        json_decref(body);
        CHECK_INT(rows[i].body, ok, rows[i].field == NULL);
        if (rows[i].field && !ok) {
            check_failure(&unit_failures_, rows[i].body, &p, rows[i].field);
            CHECK_CONTAINS(rows[i].body, p.message, rows[i].needle);
        }
        if (!rows[i].field && ok) CHECK_INT(rows[i].body, v[1].present, false);
    }
    ROWS_DONE();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_validate_value),
        UNIT_TEST(test_validate_messages),
        UNIT_TEST(test_weights_value),
        UNIT_TEST(test_validate_query),
        UNIT_TEST(test_validate_body_null),
        UNIT_TEST(test_validate_query_values),
        UNIT_TEST(test_query_parse),
        UNIT_TEST(test_query_parse_null_and_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
