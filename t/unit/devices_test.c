/* as_devices_match, as_device_resolve and as_text_terms. */
#include "unit_check.h"

#include "as_devices.h"

static const as_device devs[] = {
    {1, "dyson-v11", "V11 Absolute", "Dyson", "vacuum", "v11 sv14"},
    {2, "dyson-v8", "V8 Animal", "Dyson", "vacuum", "v8 sv10"},
    {3, "brita-marella", "Marella", "Brita", "water-jug", "marella xl"},
    {4, "hp-officejet-8010", "OfficeJet Pro 8010", "HP", "printer", "8012 8014"},
    {5, "delonghi-magnifica", "Magnifica S", "De'Longhi", "coffee", "ecam22"},
};
#define NDEV N_ROWS(devs)

typedef struct match_row {
    const char *q;
    const char *first; /* slug expected first, NULL when no candidate */
    double first_conf; /* < 0: do not check */
    bool first_all_terms;
    size_t min_n, max_n;
} match_row;

static void test_match(void **state)
{
    as_mem *m = unit_mem(state);
    const match_row rows[] = {
        {"dyson-v11", "dyson-v11", 1.0, true, 1, NDEV},
        {"brita-marella", "brita-marella", 1.0, true, 1, NDEV},
        {"dyson v11", "dyson-v11", -1, true, 1, 2},
        {"DYSON V11 Absolute", "dyson-v11", 1.0, true, 1, 2},
        {"v8", "dyson-v8", -1, true, 1, 1},
        {"sv14", "dyson-v11", -1, true, 1, 1},
        {"dyson", NULL, -1, true, 2, 2},
        {"marella", "brita-marella", -1, true, 1, 1},
        {"officejet 8010", "hp-officejet-8010", -1, true, 1, 1},
        {"8012", "hp-officejet-8010", -1, true, 1, 1},
        {"magnifica", "delonghi-magnifica", -1, true, 1, 1},
        {"dyson xyz", NULL, -1, false, 2, 2},
        {"zzzz", NULL, -1, false, 0, 0},
        {"", NULL, -1, false, 0, 0},
        {"!!!", NULL, -1, false, 0, 0},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const match_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: '%s'", i, r->q);
        as_device_match *c = NULL;
        size_t n = as_devices_match(m, devs, NDEV, r->q, &c);
        CHECK(as_printf(m, "%s: %zu candidates in %zu..%zu", label, n, r->min_n, r->max_n),
              n >= r->min_n && n <= r->max_n);
        for (size_t k = 0; k < n; k++) {
            CHECK(label, c[k].device != NULL);
            CHECK(label, c[k].confidence > 0 && c[k].confidence <= 1.0);
            /* two decimals */
            CHECK_NEAR(label, c[k].confidence * 100, (double)(long)(c[k].confidence * 100 + 0.5),
                       1e-6);
            if (k > 0) CHECK(label, c[k].confidence <= c[k - 1].confidence);
        }
        if (r->first && n > 0) {
            CHECK_STR(label, c[0].device->slug, r->first);
            if (r->first_conf >= 0) CHECK_NEAR(label, c[0].confidence, r->first_conf, 1e-9);
            CHECK_INT(label, c[0].all_terms, r->first_all_terms);
        }
    }
    ROWS_DONE();
}

static void test_match_details(void **state)
{
    as_mem *m = unit_mem(state);
    as_device_match *c;
    /* q NULL: every device at 1.0 */
    size_t n = as_devices_match(m, devs, NDEV, NULL, &c);
    assert_int_equal(n, NDEV);
    for (size_t k = 0; k < n; k++) {
        assert_true(c[k].confidence == 1.0);
        assert_true(c[k].all_terms);
    }
    /* A fuller name scores higher than a partial one. */
    n = as_devices_match(m, devs, NDEV, "dyson v11", &c);
    assert_true(n >= 1);
    assert_string_equal(c[0].device->slug, "dyson-v11");
    double partial = c[0].confidence;
    assert_true(partial < 1.0);
    n = as_devices_match(m, devs, NDEV, "dyson v11 absolute", &c);
    assert_true(c[0].confidence > partial);
    /* "dyson xyz": the Dysons match one word of two, not all terms */
    n = as_devices_match(m, devs, NDEV, "dyson xyz", &c);
    assert_int_equal(n, 2);
    for (size_t k = 0; k < n; k++) {
        assert_false(c[k].all_terms);
        assert_true(c[k].confidence <= 0.5);
    }
    /* No devices at all. */
    n = as_devices_match(m, devs, 0, "dyson", &c);
    assert_int_equal(n, 0);
}

typedef struct resolve_row {
    const char *q;
    as_dev_resolution want;
    const char *slug;          /* when found */
    const char *cands_has[2];  /* fragments of the candidates text */
} resolve_row;

static void test_resolve(void **state)
{
    as_mem *m = unit_mem(state);
    const resolve_row rows[] = {
        {"dyson-v11", AS_DEV_FOUND, "dyson-v11", {NULL, NULL}},
        {"dyson-v8", AS_DEV_FOUND, "dyson-v8", {NULL, NULL}},
        {"hp-officejet-8010", AS_DEV_FOUND, "hp-officejet-8010", {NULL, NULL}},
        {"dyson v11", AS_DEV_FOUND, "dyson-v11", {NULL, NULL}},
        {"Dyson V11", AS_DEV_FOUND, "dyson-v11", {NULL, NULL}},
        {"v8 animal", AS_DEV_FOUND, "dyson-v8", {NULL, NULL}},
        {"brita marella", AS_DEV_FOUND, "brita-marella", {NULL, NULL}},
        {"officejet", AS_DEV_FOUND, "hp-officejet-8010", {NULL, NULL}},
        {"dyson", AS_DEV_AMBIGUOUS, NULL, {"dyson-v11", "dyson-v8"}},
        {"DYSON", AS_DEV_AMBIGUOUS, NULL, {"dyson-v11", "dyson-v8"}},
        {"vacuum", AS_DEV_NONE, NULL, {NULL, NULL}},
        {"zzzz", AS_DEV_NONE, NULL, {NULL, NULL}},
        {"qwerty asdf", AS_DEV_NONE, NULL, {NULL, NULL}},
        {"dyson xyz", AS_DEV_NONE, NULL, {"dyson-v11", "dyson-v8"}},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const resolve_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: '%s'", i, r->q);
        const as_device *found = (const as_device *)1;
        const char *cands = "unset";
        as_dev_resolution res = as_device_resolve(m, devs, NDEV, r->q, &found, &cands);
        CHECK_INT(label, res, r->want);
        if (res != r->want) continue;
        if (res == AS_DEV_FOUND) {
            CHECK(label, found != NULL);
            if (found) CHECK_STR(label, found->slug, r->slug);
        } else {
            CHECK(label, found == NULL);
        }
        for (int k = 0; k < 2; k++)
            if (r->cands_has[k]) CHECK_CONTAINS(label, cands, r->cands_has[k]);
        if (res == AS_DEV_AMBIGUOUS) CHECK(label, cands && *cands);
        if (res == AS_DEV_NONE && !r->cands_has[0])
            CHECK(label, cands == NULL || strstr(cands, "brita") == NULL);
    }
    ROWS_DONE();
}

/* With only one V11 known, "dyson v11" is unique; add a second V11 and it is not. */
static void test_resolve_unique_vs_ambiguous(void **state)
{
    as_mem *m = unit_mem(state);
    const as_device two_v11[] = {
        {1, "dyson-v11", "V11 Absolute", "Dyson", "vacuum", ""},
        {2, "dyson-v11-torque", "V11 Torque Drive", "Dyson", "vacuum", ""},
    };
    const as_device *found;
    const char *cands;
    assert_int_equal(as_device_resolve(m, two_v11, 1, "dyson v11", &found, &cands),
                     AS_DEV_FOUND);
    assert_string_equal(found->slug, "dyson-v11");
    assert_int_equal(as_device_resolve(m, two_v11, 2, "dyson v11", &found, &cands),
                     AS_DEV_AMBIGUOUS);
    assert_null(found);
    assert_non_null(strstr(cands, "dyson-v11 "));
    assert_non_null(strstr(cands, "dyson-v11-torque"));
    /* The exact slug still wins over free-text ambiguity. */
    assert_int_equal(as_device_resolve(m, two_v11, 2, "dyson-v11", &found, &cands),
                     AS_DEV_FOUND);
    assert_string_equal(found->slug, "dyson-v11");
    assert_int_equal(as_device_resolve(m, two_v11, 2, "torque", &found, &cands), AS_DEV_FOUND);
    assert_string_equal(found->slug, "dyson-v11-torque");
    assert_int_equal(as_device_resolve(m, two_v11, 0, "dyson", &found, &cands), AS_DEV_NONE);
}

typedef struct terms_row {
    const char *in;
    const char *want; /* terms joined by '|' */
} terms_row;

static void test_text_terms(void **state)
{
    as_mem *m = unit_mem(state);
    const terms_row rows[] = {
        {"", ""},
        {"   ", ""},
        {"!!!,,--", ""},
        {"soap", "soap"},
        {"Dyson V11", "dyson|v11"},
        {"  HEPA-filter, V11!  ", "hepa|filter|v11"},
        {"a b c d", "a|b|c|d"},
        {"a", "a"},
        {"x,y", "x|y"},
        {"De'Longhi", "de|longhi"},
        {"500ml 2x", "500ml|2x"},
        /* accents folded (SQLite's unicode61 remove_diacritics 2 rules) */
        {"caf\xC3\xA9 cr\xC3\xA8me", "cafe|creme"},
        {"K\xC3\xB6ln", "koln"},
        {"\xC3\x81LDERMOOR \xC3\x85se \xC5\xA0koda", "aldermoor|ase|skoda"},
        /* letters of their own are kept: sharp s, o with stroke, micro sign; signs and
         * punctuation separate words, as in SQLite's unicode61: times, euro, en dash */
        {"Stra\xC3\x9F" "e \xC3\xB8l 2\xC3\x97" "3", "stra\xC3\x9F" "e|\xC3\xB8l|2|3"},
        {"\xE2\x82\xAC" "12", "12"},
        {"10\xE2\x80\x93" "20 \xC2\xB5m", "10|20|\xC2\xB5m"},
        {"tab\there\nnew", "tab|here|new"},
        {"a_b", "a|b"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const char **t = NULL;
        size_t n = as_text_terms(m, rows[i].in, &t);
        as_buf b;
        as_buf_init(&b, m);
        for (size_t k = 0; k < n; k++)
            as_buf_printf(&b, "%s%s", k ? "|" : "", t[k]);
        CHECK_STR(as_printf(m, "row %zu: '%s'", i, rows[i].in), as_buf_str(&b), rows[i].want);
    }
    ROWS_DONE();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_match),
        UNIT_TEST(test_match_details),
        UNIT_TEST(test_resolve),
        UNIT_TEST(test_resolve_unique_vs_ambiguous),
        UNIT_TEST(test_text_terms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
