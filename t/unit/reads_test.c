/* The catalogue's reads as shop operations (core/shop/as_reads.c): the shop
 * and typed parameters in, an outcome and the page, view or rows out, with no
 * request; the /v1 handlers and MCP's tools answer from these. */
#include "api_fixture.h"

#include "as_reads.h"

/* The parameters of a query string. */
static as_query query(void **state, const char *raw)
{
    as_query q;
    const char *bad = NULL;
    assert_true(as_query_parse(unit_mem(state), raw, &q, &bad));
    return q;
}

static void fail_store(void **state, int op)
{
    api_fx *fx = *state;
    fx->db.fail_op = op;
    fx->db.fail_nth = 0;
    fx->db.fail_rc = AS_EDB;
}

typedef struct device_row {
    const char *label, *text;
    as_shop_rc rc;
    const char *slug; /* DONE: the device found */
} device_row;

static void test_device(void **state)
{
    api_fx *fx = *state;
    const device_row rows[] = {
        {"a slug", "dyson-v8", AS_SHOP_DONE, "dyson-v8"},
        {"text naming one", "dyson v8 animal", AS_SHOP_DONE, "dyson-v8"},
        {"text naming several", "dyson", AS_SHOP_REFUSED, NULL},
        {"nothing", "a toaster from 1970", AS_SHOP_REFUSED, NULL},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_device d;
        as_problem p = {0};
        as_shop_rc rc = as_read_device(&fx->shop, rows[i].text, "device", &d, &p);
        CHECK_INT(rows[i].label, rc, rows[i].rc);
        if (rows[i].slug && rc == AS_SHOP_DONE) CHECK_STR(rows[i].label, d.slug, rows[i].slug);
        if (rc == AS_SHOP_REFUSED) {
            CHECK_INT(rows[i].label, p.status, 400);
            CHECK_STR(rows[i].label, p.field, "device");
        }
    }
    ROWS_DONE();
    as_device d;
    as_problem p;
    fail_store(state, FAKE_OP_DEVICES);
    assert_int_equal(as_read_device(&fx->shop, "dyson-v8", "device", &d, &p), AS_SHOP_FAILED);
}

typedef struct product_row {
    const char *label, *sku, *query;
    bool valid; /* the parameters pass */
    as_shop_rc rc;
    int status; /* of a refusal */
} product_row;

static void test_product(void **state)
{
    api_fx *fx = *state;
    const product_row rows[] = {
        {"a product", "SOAP-001", "", true, AS_SHOP_DONE, 0},
        {"with a device", "FILT-002", "device=dyson-v8", true, AS_SHOP_DONE, 0},
        {"an unknown sku", "NOPE-999", "", true, AS_SHOP_REFUSED, 404},
        {"an ambiguous device", "FILT-002", "device=dyson", true, AS_SHOP_REFUSED, 400},
        {"a sku too long", "AAAAAAAAAAAAAAAAAAAAA", "", false, AS_SHOP_REFUSED, 400},
        {"an unknown parameter", "SOAP-001", "colour=red", false, AS_SHOP_REFUSED, 400},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const product_row *r = &rows[i];
        as_query q = query(state, r->query);
        as_read_product_in in;
        as_read_body b;
        as_problem p = {0};
        bool valid = as_read_product_params(&fx->shop, r->sku, &q, &in, &p);
        CHECK(r->label, valid == r->valid);
        as_shop_rc rc = valid ? as_read_product(&fx->shop, &in, &b, &p) : AS_SHOP_REFUSED;
        CHECK_INT(r->label, rc, r->rc);
        if (rc == AS_SHOP_REFUSED) CHECK_INT(r->label, p.status, r->status);
        if (rc != AS_SHOP_DONE) continue;
        json_t *view = json_loadb(b.data, b.len, 0, NULL);
        CHECK_STR(r->label, json_string_value(json_object_get(view, "sku")), r->sku);
        json_decref(view);
    }
    ROWS_DONE();
}

static void test_product_store_fails(void **state)
{
    api_fx *fx = *state;
    as_query q = query(state, "");
    as_read_product_in in;
    as_read_body b;
    as_problem p;
    assert_true(as_read_product_params(&fx->shop, "SOAP-001", &q, &in, &p));
    fail_store(state, FAKE_OP_PRODUCT_BY_SKU);
    assert_int_equal(as_read_product(&fx->shop, &in, &b, &p), AS_SHOP_FAILED);
}

typedef struct search_row {
    const char *label, *query;
    bool valid;
    as_shop_rc rc;
    const char *field; /* of a refusal */
} search_row;

static void test_search(void **state)
{
    api_fx *fx = *state;
    const search_row rows[] = {
        {"words", "q=soap", true, AS_SHOP_DONE, NULL},
        {"no words", "", true, AS_SHOP_DONE, NULL},
        {"a device", "q=filter&device=dyson-v8", true, AS_SHOP_DONE, NULL},
        {"words without a letter", "q=!!", false, AS_SHOP_REFUSED, "q"},
        {"past the window", "offset=990&limit=20", false, AS_SHOP_REFUSED, "offset"},
        {"an ambiguous device", "device=dyson", true, AS_SHOP_REFUSED, "device"},
        {"an unknown merchant", "merchant=nobody", true, AS_SHOP_REFUSED, "merchant"},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const search_row *r = &rows[i];
        as_query q = query(state, r->query);
        as_read_search_in in;
        as_read_body b;
        as_problem p = {0};
        bool valid = as_read_search_params(&fx->shop, &q, &in, &p);
        CHECK(r->label, valid == r->valid);
        as_shop_rc rc = valid ? as_read_search(&fx->shop, &in, &b, &p) : AS_SHOP_REFUSED;
        CHECK_INT(r->label, rc, r->rc);
        if (r->field) CHECK_STR(r->label, p.field, r->field);
        if (rc != AS_SHOP_DONE) continue;
        json_t *page = json_loadb(b.data, b.len, 0, NULL);
        CHECK(r->label, json_is_array(json_object_get(page, "results")));
        json_decref(page);
    }
    ROWS_DONE();
}

static void test_devices(void **state)
{
    api_fx *fx = *state;
    as_query q = query(state, "q=dyson");
    as_read_devices_in in;
    as_device_match *c;
    size_t n = 0;
    as_problem p;
    assert_true(as_read_devices_params(&fx->shop, &q, &in, &p));
    assert_int_equal(in.limit, 10); /* with q: ten unless limit says */
    assert_int_equal(as_read_devices(&fx->shop, &in, &c, &n), AS_SHOP_DONE);
    assert_true(n >= 2);
    q = query(state, "limit=0");
    assert_false(as_read_devices_params(&fx->shop, &q, &in, &p));
    assert_string_equal(p.field, "limit");
    fail_store(state, FAKE_OP_DEVICES);
    q = query(state, "");
    assert_true(as_read_devices_params(&fx->shop, &q, &in, &p));
    assert_int_equal(as_read_devices(&fx->shop, &in, &c, &n), AS_SHOP_FAILED);
}

static void test_compatible(void **state)
{
    api_fx *fx = *state;
    as_query q = query(state, "part_type=filter");
    as_read_compatible_in in;
    json_t *view = NULL;
    as_problem p;
    assert_true(as_read_compatible_params(&fx->shop, "dyson-v8", &q, &in, &p));
    assert_int_equal(as_read_compatible(&fx->shop, &in, &view, &p), AS_SHOP_DONE);
    assert_true(json_is_object(view));
    json_decref(view);
    assert_true(as_read_compatible_params(&fx->shop, "no-such", &q, &in, &p));
    assert_int_equal(as_read_compatible(&fx->shop, &in, &view, &p), AS_SHOP_REFUSED);
    assert_int_equal(p.status, 404);
    q = query(state, "limit=1000");
    assert_false(as_read_compatible_params(&fx->shop, "dyson-v8", &q, &in, &p));
    fail_store(state, FAKE_OP_DEVICE_BY_SLUG);
    q = query(state, "");
    assert_true(as_read_compatible_params(&fx->shop, "dyson-v8", &q, &in, &p));
    assert_int_equal(as_read_compatible(&fx->shop, &in, &view, &p), AS_SHOP_FAILED);
}

/* What a binding answers for an outcome without a problem of its own. */
static void test_shop_problem(void **state)
{
    (void)state;
    as_problem p;
    as_shop_problem(AS_SHOP_FAILED, &p);
    assert_int_equal(p.status, 503);
    assert_string_equal(p.code, "SERVICE_UNAVAILABLE");
    assert_non_null(strstr(p.message, "nothing was changed"));
    as_shop_problem(AS_SHOP_UNREADABLE, &p);
    assert_int_equal(p.status, 503);
    assert_non_null(strstr(p.message, "was saved"));
}

#define READS_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        READS_TEST(test_device),
        READS_TEST(test_product),
        READS_TEST(test_product_store_fails),
        READS_TEST(test_search),
        READS_TEST(test_devices),
        READS_TEST(test_compatible),
        READS_TEST(test_shop_problem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
