/* The question matcher: which specification a question is about, one row a
 * case, and questions that must not be answered. */
#include "unit_check.h"

#include "as_questions.h"

static as_spec_row soap_rows[] = {
    {"volume_ml", "Volume", "performance", "ml", "500", "455", 2},
    {"vegan", "Vegan", "categorical", NULL, "true", "true", 0},
    {"fragrance", "Fragrance", "categorical", NULL, "\"lavender\"", "\"lavender\"", 0},
    {"pack_count", "Bottles per pack", "categorical", NULL, "2", "2", 0},
    {"paraben_free", "Paraben-free", "categorical", NULL, "true", NULL, 0},
    {"glycerin", "Contains glycerin", "categorical", NULL, NULL, "true", 0},
};

static as_spec_row battery_rows[] = {
    {"capacity_mah", "Capacity", "performance", "mAh", "5000", "4890", 2},
    {"voltage_v", "Voltage", "categorical", "V", "18", "18", 0},
    {"chemistry", "Chemistry", "categorical", NULL, "\"Li-ion\"", "\"Li-ion\"", 0},
    {"weight_g", "Weight", "info", "g", "620", "631", 0},
};

static as_product product(as_spec_row *rows, size_t n, const char *status)
{
    as_product p;
    memset(&p, 0, sizeof(p));
    p.sku = "T-1";
    p.name = "Test";
    p.verif_status = as_verif_parse(status);
    p.measured_at = "2026-10-01T10:00:00Z";
    p.measured_node = "lab-1";
    p.sample_size = 3;
    p.specs = rows;
    p.n_specs = n;
    return p;
}

typedef struct row {
    const char *question;
    int soap; /* 1: the soap, 0: the battery */
    const char *spec; /* expected first match, NULL: nothing matches */
} row;

static const row rows[] = {
    {"How much soap is in it?", 1, "volume_ml"},
    {"What is the volume in ml?", 1, "volume_ml"},
    {"How many millilitres does the bottle hold?", 1, "volume_ml"},
    {"Is it vegan?", 1, "vegan"},
    {"Is this product tested on animals?", 1, "vegan"},
    {"What does it smell like?", 1, "fragrance"},
    {"Which scent is it?", 1, "fragrance"},
    {"How many bottles are in the pack?", 1, "pack_count"},
    {"Does it contain parabens?", 1, "paraben_free"},
    {"Is there glycerine in it?", 1, "glycerin"},
    {"What is the real capacity in mAh?", 0, "capacity_mah"},
    {"How long does the battery last?", 0, "capacity_mah"},
    {"Which voltage is it?", 0, "voltage_v"},
    {"Is it lithium?", 0, "chemistry"},
    {"How heavy is it?", 0, "weight_g"},
    /* nothing measured answers these: they must not be answered */
    {"Is it made in Italy?", 1, NULL},
    {"What is the price?", 1, NULL},
    {"Can I use it on a baby?", 0, NULL},
    {"Who is the CEO of the brand?", 0, NULL},
    {"Is this the best choice for me?", 1, NULL},
};

static void test_match_table(void **state)
{
    as_mem *m = unit_mem(state);
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const row *r = &rows[i];
        as_product p = r->soap ? product(soap_rows, N_ROWS(soap_rows), "contradicted")
                               : product(battery_rows, N_ROWS(battery_rows), "verified");
        size_t idx[3];
        size_t n = as_question_match(m, &p, r->question, idx);
        if (!r->spec) {
            CHECK_INT(r->question, n, 0);
            continue;
        }
        CHECK(r->question, n >= 1);
        if (n >= 1) CHECK_STR(r->question, p.specs[idx[0]].spec, r->spec);
    }
    ROWS_DONE();
}

static json_t *answer(void **state, as_product *p, const char *q)
{
    return as_question_answer(unit_mem(state), p, q);
}

/* A measured row: the measured value beside the claim, cited. */
static void test_answer_measured(void **state)
{
    as_product p = product(soap_rows, N_ROWS(soap_rows), "contradicted");
    json_t *a = answer(state, &p, "How much soap is in it?");
    assert_true(json_is_true(json_object_get(a, "answered")));
    assert_string_equal(json_string_value(json_object_get(a, "basis")), "measured");
    const char *text = json_string_value(json_object_get(a, "text"));
    assert_non_null(strstr(text, "measured 455 ml"));
    assert_non_null(strstr(text, "claimed 500 ml"));
    assert_non_null(strstr(text, "contradicts"));
    json_t *cited = json_array_get(json_object_get(a, "rows"), 0);
    assert_string_equal(json_string_value(json_object_get(cited, "spec")), "volume_ml");
    assert_int_equal(json_integer_value(json_object_get(cited, "measured")), 455);
    assert_string_equal(json_string_value(json_object_get(a, "node")), "lab-1");
    json_decref(a);
}

/* A claim that was never measured is not an answer. */
static void test_answer_unmeasured(void **state)
{
    as_product p = product(soap_rows, N_ROWS(soap_rows), "contradicted");
    json_t *a = answer(state, &p, "Is it paraben free?");
    assert_true(json_is_false(json_object_get(a, "answered")));
    assert_string_equal(json_string_value(json_object_get(a, "basis")), "none");
    assert_non_null(strstr(json_string_value(json_object_get(a, "text")), "not measured"));
    json_decref(a);
    as_product pending = product(battery_rows, N_ROWS(battery_rows), "pending");
    a = answer(state, &pending, "What is the capacity?");
    assert_true(json_is_false(json_object_get(a, "answered")));
    assert_non_null(strstr(json_string_value(json_object_get(a, "text")), "pending"));
    assert_null(json_object_get(a, "node"));
    json_decref(a);
}

static void test_answer_nothing(void **state)
{
    as_product p = product(battery_rows, N_ROWS(battery_rows), "verified");
    json_t *a = answer(state, &p, "Is it made in Italy?");
    assert_true(json_is_false(json_object_get(a, "answered")));
    assert_int_equal(json_array_size(json_object_get(a, "rows")), 0);
    assert_non_null(strstr(json_string_value(json_object_get(a, "text")), "only from measured"));
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_match_table),
        UNIT_TEST(test_answer_measured),
        UNIT_TEST(test_answer_unmeasured),
        UNIT_TEST(test_answer_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
