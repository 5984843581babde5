/* The catalogue feed's records on their own (core/as_feed.c): what passes,
 * every problem of a record that does not (by field path, all of them), a
 * withdrawal's keys, and export's line form: keys in the documented order,
 * read back to the same record and written to the same line. */
#include "unit_check.h"

#include "as_feed.h"

typedef struct fx {
    as_arena *a;
    as_mem m;
    as_feed_problems probs;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    f->a = as_arena_create();
    f->m = as_arena_mem(f->a);
    f->probs = (as_feed_problems){&f->m, NULL, 0, 0};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    as_arena_destroy(f->a);
    free(f);
    return 0;
}

static bool rd(fx *f, const char *line, as_feed_rec *r)
{
    f->probs.n = 0;
    return as_feed_read(&f->m, line, strlen(line), 7, r, &f->probs);
}

/* the problem of field path, or NULL */
static const char *problem_of(fx *f, const char *path)
{
    for (size_t i = 0; i < f->probs.n; i++)
        if ((!path && !f->probs.v[i].field) ||
            (path && f->probs.v[i].field && strcmp(f->probs.v[i].field, path) == 0))
            return f->probs.v[i].reason;
    return NULL;
}

#define OFFER                                                                                      \
    "\"offer_id\":\"HS-1-a\",\"sku\":\"HS-1\",\"merchant\":\"m-a\",\"price_cents\":245,"          \
    "\"retail_price_cents\":258,\"delivery_days\":4,\"stock\":70"

static void test_valid_records(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    assert_true(rd(f, "{\"type\":\"offer\"," OFFER "}", &r));
    assert_int_equal(r.type, AS_FEED_OFFER);
    assert_string_equal(r.key, "HS-1-a");
    assert_false(r.withdrawn);
    assert_int_equal(r.line, 7);
    json_decref(r.v);
    assert_true(rd(f,
                   "{\"type\":\"compatibility\",\"sku\":\"VP-1\",\"device\":\"dyson-v11\","
                   "\"fit_status\":\"fits\",\"checked_at\":\"2026-11-01T00:00:00Z\","
                   "\"evidence\":[{\"any\":\"thing\"}]}",
                   &r));
    assert_string_equal(r.key, "VP-1");
    assert_string_equal(r.key2, "dyson-v11");
    json_decref(r.v);
    assert_true(rd(f,
                   "{\"type\":\"measurement\",\"sku\":\"AF-1\",\"lab\":\"lab-1\",\"measured_at\":"
                   "\"2026-11-01T00:00:00Z\",\"sample_size\":2,\"values\":{\"eff\":99.5,\"kind\":"
                   "\"HEPA\",\"carbon\":false,\"sizes\":[1,2]}}",
                   &r));
    json_decref(r.v);
}

static void test_every_problem(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    /* four wrong fields and one missing: all five said, by path */
    assert_false(rd(f,
                    "{\"type\":\"product\",\"sku\":\"X\",\"name\":\"n\",\"brand\":\"b\","
                    "\"category\":\"garden\",\"part_type\":\"filter\",\"description\":\"d\","
                    "\"source\":{\"url\":\"u\",\"checked_at\":\"yesterday\",\"product_id\":\"1\","
                    "\"availability\":\"in_stock\"},\"specs\":[{\"spec\":\"a\",\"label\":\"A\","
                    "\"kind\":\"size\"}],\"prcie\":1}",
                    &r));
    assert_non_null(problem_of(f, "sku"));                /* 3 to 20 characters */
    assert_non_null(problem_of(f, "source.checked_at"));  /* not a time */
    assert_non_null(problem_of(f, "specs[0].kind"));      /* not a kind */
    assert_non_null(problem_of(f, "prcie"));              /* not a field */
    assert_null(problem_of(f, "category"));               /* checked after the table's checks */
    assert_int_equal(f->probs.n, 4);
    assert_null(r.v);
    /* the API's enumerations, once the fields are right */
    assert_false(rd(f,
                    "{\"type\":\"product\",\"sku\":\"XY-1\",\"name\":\"n\",\"brand\":\"b\","
                    "\"category\":\"garden\",\"part_type\":\"filter\",\"description\":\"d\","
                    "\"source\":{\"url\":\"u\",\"checked_at\":\"2026-11-01T00:00:00Z\","
                    "\"product_id\":\"1\",\"availability\":\"in_stock\"}}",
                    &r));
    assert_non_null(strstr(problem_of(f, "category"), "garden"));
    /* money: whole cents, the agent price at most retail */
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"o\",\"sku\":\"HS-1\",\"merchant\":\"m\","
                       "\"price_cents\":12.5,\"retail_price_cents\":1300,\"delivery_days\":2,"
                       "\"stock\":5}",
                    &r));
    assert_non_null(problem_of(f, "price_cents"));
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"o\",\"sku\":\"HS-1\",\"merchant\":\"m\","
                       "\"price_cents\":1400,\"retail_price_cents\":1300,\"delivery_days\":2,"
                       "\"stock\":5}",
                    &r));
    assert_non_null(strstr(problem_of(f, "price_cents"), "above the retail price"));
    /* not JSON, not an object, no type, a duplicate key */
    assert_false(rd(f, "{\"type\":", &r));
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
    assert_false(rd(f, "[1]", &r));
    assert_non_null(problem_of(f, NULL));
    assert_false(rd(f, "{\"id\":\"m\"}", &r));
    assert_non_null(problem_of(f, "type"));
    assert_false(rd(f, "{\"type\":\"offer\",\"type\":\"offer\"}", &r));
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
}

static void test_withdrawals(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    assert_true(rd(f, "{\"type\":\"offer\",\"offer_id\":\"HS-1-a\",\"withdrawn\":true}", &r));
    assert_true(r.withdrawn);
    assert_string_equal(r.key, "HS-1-a");
    json_decref(r.v);
    /* only the keys */
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"HS-1-a\",\"withdrawn\":true,\"stock\":1}", &r));
    assert_non_null(strstr(problem_of(f, "stock"), "names only what it withdraws"));
    /* and all of them */
    assert_false(rd(f, "{\"type\":\"compatibility\",\"sku\":\"VP-1\",\"withdrawn\":true}", &r));
    assert_non_null(problem_of(f, "device"));
    /* false is said by leaving it out */
    assert_false(rd(f, "{\"type\":\"offer\"," OFFER ",\"withdrawn\":false}", &r));
    assert_non_null(problem_of(f, "withdrawn"));
}

static void test_export_line(void **state)
{
    fx *f = *state;
    /* keys in any order in, the documented order out; the same line again */
    const char *in = "{\"stock\":70,\"delivery_days\":4,\"retail_price_cents\":258,\"price_cents\":245,"
                     "\"merchant\":\"m-a\",\"sku\":\"HS-1\",\"offer_id\":\"HS-1-a\",\"type\":\"offer\"}";
    as_feed_rec r;
    assert_true(rd(f, in, &r));
    char *line = as_feed_line(&f->m, r.v);
    json_decref(r.v);
    assert_string_equal(line, "{\"type\":\"offer\"," OFFER "}");
    assert_true(rd(f, line, &r));
    assert_string_equal(as_feed_line(&f->m, r.v), line);
    json_decref(r.v);
    /* a measurement's values by specification name; numbers to 10 digits */
    assert_true(rd(f,
                   "{\"values\":{\"z\":1.23456789012345,\"a\":368.0},\"sample_size\":1,\"type\":"
                   "\"measurement\",\"sku\":\"AF-1\",\"lab\":\"l\",\"measured_at\":"
                   "\"2026-11-01T00:00:00Z\"}",
                   &r));
    line = as_feed_line(&f->m, r.v);
    json_decref(r.v);
    assert_string_equal(line, "{\"type\":\"measurement\",\"sku\":\"AF-1\",\"lab\":\"l\","
                              "\"measured_at\":\"2026-11-01T00:00:00Z\",\"sample_size\":1,"
                              "\"values\":{\"a\":368.0,\"z\":1.23456789}}");
    /* a specification's value as the database keeps it */
    json_t *v = json_real(99.97);
    assert_string_equal(as_feed_value_text(&f->m, v), "99.97");
    json_decref(v);
    assert_null(as_feed_value_text(&f->m, json_null()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_valid_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_problem, setup, teardown),
        cmocka_unit_test_setup_teardown(test_withdrawals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
