/* Endpoint level: requests through as_handle against the fake store. */
#include "api_fixture.h"

#include "as_rank.h"
#include "as_search.h"

#define TODAY API_TODAY

#define API_TEST(f) cmocka_unit_test_setup_teardown(f, api_setup, api_teardown)

static void request(void **state, const char *method, const char *path, const char *query,
                    as_response *resp)
{
    api_fx *fx = *state;
    as_request req = {.method = method, .path = path, .query = query};
    memset(resp, 0, sizeof(*resp));
    as_handle(&fx->shop, &req, resp);
    unit_json_body(resp);
}

/* An array of objects: the one whose `sku` is sku, or NULL. */
static json_t *by_sku(json_t *arr, const char *sku)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *s = json_string_value(json_object_get(e, "sku"));
        if (s && strcmp(s, sku) == 0) return e;
    }
    return NULL;
}

/* ---- status codes and error bodies, one row per request ---- */

typedef struct status_row {
    const char *method, *path, *query;
    int status;
    const char *error; /* NULL for a success */
    const char *field; /* NULL: no field member */
    const char *allow; /* for 405 */
} status_row;

static void test_status_table(void **state)
{
    as_mem *m = unit_mem(state);
    const status_row rows[] = {
        {"GET", "/", NULL, 200, NULL, NULL, NULL},
        {"GET", "/search", NULL, 200, NULL, NULL, NULL},
        {"HEAD", "/search", NULL, 200, NULL, NULL, NULL},
        {"GET", "/search", "", 200, NULL, NULL, NULL},
        {"GET", "/search", "q=soap&limit=5", 200, NULL, NULL, NULL},
        {"GET", "/search", "verified_only=false", 200, NULL, NULL, NULL},
        {"GET", "/search", "deliver_by=2026-01-15", 200, NULL, NULL, NULL},
        {"GET", "/search", "merchant=Alpha+Parts", 200, NULL, NULL, NULL},
        {"GET", "/products/SOAP-001", NULL, 200, NULL, NULL, NULL},
        {"GET", "/products/FILT-002", "device=dyson-v8", 200, NULL, NULL, NULL},
        {"GET", "/devices", NULL, 200, NULL, NULL, NULL},
        {"GET", "/devices", "q=dyson", 200, NULL, NULL, NULL},
        {"GET", "/devices/dyson-v11/compatible", NULL, 200, NULL, NULL, NULL},
        /* unknown paths */
        {"GET", "/nope", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/search/", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "//search", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/products", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/products/SOAP-001/extra", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/a/b/c/d/e", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "search", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/Search", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"POST", "/nope", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/products/a%2Fb", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/products/%C3", NULL, 404, "NOT_FOUND", NULL, NULL},
        /* methods */
        {"POST", "/search", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        {"PUT", "/search", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        {"DELETE", "/products/SOAP-001", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        {"POST", "/", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        {"get", "/search", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        {"GE", "/search", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        {"EAD", "/search", NULL, 405, "METHOD_NOT_ALLOWED", NULL, "GET, HEAD"},
        /* products */
        {"GET", "/products/NOPE-999", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/products/ab", NULL, 400, "VALIDATION_ERROR", "sku", NULL},
        {"GET", "/products/abcdefghijklmnopqrstu", NULL, 400, "VALIDATION_ERROR", "sku", NULL},
        {"GET", "/products/SOAP%20001", NULL, 400, "VALIDATION_ERROR", "sku", NULL},
        {"GET", "/products/SOAP-001", "colour=red", 400, "VALIDATION_ERROR", "colour", NULL},
        {"GET", "/products/SOAP-001", "device=dyson", 400, "VALIDATION_ERROR", "device", NULL},
        {"GET", "/products/SOAP-001", "weights=price:2", 400, "VALIDATION_ERROR", "weights", NULL},
        /* search parameters */
        {"GET", "/search", "colour=red", 400, "VALIDATION_ERROR", "colour", NULL},
        {"GET", "/search", "q=soap&q=soap", 400, "VALIDATION_ERROR", "q", NULL},
        {"GET", "/search", "q=%00", 400, "VALIDATION_ERROR", "q", NULL},
        {"GET", "/search", "q=%C3%28", 400, "VALIDATION_ERROR", "q", NULL},
        {"GET", "/search", "q=!!!", 400, "VALIDATION_ERROR", "q", NULL},
        {"GET", "/search", "max_price=0", 400, "VALIDATION_ERROR", "max_price", NULL},
        {"GET", "/search", "max_price=1e3", 400, "VALIDATION_ERROR", "max_price", NULL},
        {"GET", "/search", "deliver_by=2026-01-14", 400, "VALIDATION_ERROR", "deliver_by", NULL},
        {"GET", "/search", "deliver_by=2026-02-29", 400, "VALIDATION_ERROR", "deliver_by", NULL},
        {"GET", "/search", "verified_only=yes", 400, "VALIDATION_ERROR", "verified_only", NULL},
        {"GET", "/search", "limit=0", 400, "VALIDATION_ERROR", "limit", NULL},
        {"GET", "/search", "limit=101", 400, "VALIDATION_ERROR", "limit", NULL},
        {"GET", "/search", "sort=best", 400, "VALIDATION_ERROR", "sort", NULL},
        {"GET", "/search", "category=toys", 400, "VALIDATION_ERROR", "category", NULL},
        {"GET", "/search", "postcode=10%2F12", 400, "VALIDATION_ERROR", "postcode", NULL},
        {"GET", "/search", "weights=price:0", 400, "VALIDATION_ERROR", "weights", NULL},
        {"GET", "/search", "device=dyson", 400, "VALIDATION_ERROR", "device", NULL},
        {"GET", "/search", "device=zzzz", 400, "VALIDATION_ERROR", "device", NULL},
        {"GET", "/search", "merchant=nobody", 400, "VALIDATION_ERROR", "merchant", NULL},
        /* the paging window: offset + limit at most 1000 */
        {"GET", "/search", "offset=900&limit=100", 200, NULL, NULL, NULL},
        {"GET", "/search", "offset=901&limit=100", 400, "VALIDATION_ERROR", "offset", NULL},
        {"GET", "/search", "offset=990", 400, "VALIDATION_ERROR", "offset", NULL},
        /* devices */
        {"GET", "/devices", "q=", 400, "VALIDATION_ERROR", "q", NULL},
        {"GET", "/devices/nope/compatible", NULL, 404, "NOT_FOUND", NULL, NULL},
        {"GET", "/devices/dyson-v11/compatible", "part_type=toy", 400, "VALIDATION_ERROR",
         "part_type", NULL},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const status_row *r = &rows[i];
        const char *label = as_printf(m, "row %zu: %s %s%s%s", i, r->method, r->path,
                                      r->query ? "?" : "", r->query ? r->query : "");
        as_response resp;
        request(state, r->method, r->path, r->query, &resp);
        CHECK_INT(label, resp.status, r->status);
        CHECK(label, json_is_object(resp.body));
        if (r->error) {
            json_t *err = json_object_get(resp.body, "error");
            json_t *msg = json_object_get(resp.body, "message");
            CHECK(label, json_is_string(err));
            CHECK(label, json_is_string(msg) && json_string_length(msg) > 0);
            CHECK_STR(label, json_string_value(err), r->error);
            json_t *field = json_object_get(resp.body, "field");
            if (r->field)
                CHECK_STR(label, json_string_value(field), r->field);
            else
                CHECK(label, field == NULL);
        } else {
            CHECK(label, json_object_get(resp.body, "error") == NULL);
        }
        if (r->allow)
            CHECK_STR(label, resp.allow, r->allow);
        else
            CHECK(label, resp.allow == NULL);
        as_response_clear(&resp);
        CHECK(label, resp.body == NULL);
    }
    ROWS_DONE();
}

/* ---- GET /search ---- */

static void test_search_fields(void **state)
{
    as_response resp;
    request(state, "GET", "/search", NULL, &resp);
    assert_int_equal(resp.status, 200);
    json_t *b = resp.body;
    assert_true(json_is_array(json_object_get(b, "results")));
    assert_true(json_is_array(json_object_get(b, "excluded")));
    assert_true(json_is_integer(json_object_get(b, "count")));
    assert_true(json_is_string(json_object_get(b, "ranking_policy")));
    assert_string_equal(json_string_value(json_object_get(b, "ranking_policy")), as_ranking_policy);
    json_t *w = json_object_get(b, "weights");
    assert_true(json_is_object(w));
    const double def[AS_W_N] = {0.35, 0.25, 0.25, 0.15};
    for (int k = 0; k < AS_W_N; k++) {
        json_t *v = json_object_get(w, as_weight_names[k]);
        assert_true(json_is_number(v));
        assert_true(json_number_value(v) > def[k] - 1e-9 && json_number_value(v) < def[k] + 1e-9);
    }
    assert_true(json_object_get(b, "postcode") != NULL);
    assert_true(json_is_null(json_object_get(b, "postcode")));
    assert_true(json_object_get(b, "device") != NULL);
    assert_true(json_is_null(json_object_get(b, "device")));
    assert_true(json_is_true(json_object_get(b, "verified_only")));
    assert_int_equal(json_integer_value(json_object_get(b, "count")),
                     json_array_size(json_object_get(b, "results")));

    /* A summary carries its best offer, ranked first. */
    json_t *soap = by_sku(json_object_get(b, "results"), "SOAP-001");
    assert_non_null(soap);
    json_t *best = json_object_get(soap, "best_offer");
    assert_true(json_is_object(best));
    assert_int_equal(json_integer_value(json_object_get(best, "rank")), 1);
    assert_int_equal(json_integer_value(json_object_get(soap, "eligible_offers")), 2);
    /* The buyable product comes before the out-of-stock one. */
    json_t *first = json_array_get(json_object_get(b, "results"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "sku")), "SOAP-001");
    as_response_clear(&resp);

    request(state, "GET", "/search", "postcode=1012+AB&weights=price:1", &resp);
    assert_int_equal(resp.status, 200);
    assert_string_equal(json_string_value(json_object_get(resp.body, "postcode")), "1012 AB");
    w = json_object_get(resp.body, "weights");
    assert_true(json_number_value(json_object_get(w, "price")) == 1);
    assert_true(json_number_value(json_object_get(w, "delivery")) == 0);
    /* price only: the cheaper soap offer (Beta, 4.20) wins */
    soap = by_sku(json_object_get(resp.body, "results"), "SOAP-001");
    assert_non_null(soap);
    best = json_object_get(soap, "best_offer");
    assert_string_equal(json_string_value(json_object_get(best, "offer_id")), "of-soap-b");
    as_response_clear(&resp);

    request(state, "GET", "/search", "weights=delivery:1", &resp);
    soap = by_sku(json_object_get(resp.body, "results"), "SOAP-001");
    assert_non_null(soap);
    best = json_object_get(soap, "best_offer");
    assert_string_equal(json_string_value(json_object_get(best, "offer_id")), "of-soap-a");
    as_response_clear(&resp);
}

static void test_search_contradicted(void **state)
{
    as_response resp;
    /* By default a contradicted product is excluded, with the reason. */
    request(state, "GET", "/search", NULL, &resp);
    assert_int_equal(resp.status, 200);
    json_t *results = json_object_get(resp.body, "results");
    json_t *excluded = json_object_get(resp.body, "excluded");
    assert_null(by_sku(results, "FILT-002"));
    json_t *x = by_sku(excluded, "FILT-002");
    assert_non_null(x);
    const char *reason = json_string_value(json_object_get(x, "reason"));
    assert_non_null(reason);
    assert_non_null(strstr(reason, "contradict"));
    assert_non_null(strstr(reason, "Filtration"));
    assert_true(json_is_string(json_object_get(x, "name")));
    assert_int_equal(json_integer_value(json_object_get(resp.body, "excluded_count")), 1);
    as_response_clear(&resp);

    /* verified_only=false keeps it among the results. */
    request(state, "GET", "/search", "verified_only=false", &resp);
    assert_int_equal(resp.status, 200);
    results = json_object_get(resp.body, "results");
    excluded = json_object_get(resp.body, "excluded");
    json_t *r = by_sku(results, "FILT-002");
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "verification_status")),
                        "contradicted");
    assert_null(by_sku(excluded, "FILT-002"));
    assert_true(json_is_false(json_object_get(resp.body, "verified_only")));
    assert_int_equal(json_integer_value(json_object_get(resp.body, "count")), 3);
    as_response_clear(&resp);

    request(state, "GET", "/search", "verified_only=0", &resp);
    assert_non_null(by_sku(json_object_get(resp.body, "results"), "FILT-002"));
    as_response_clear(&resp);

    request(state, "GET", "/search", "verified_only=true", &resp);
    assert_null(by_sku(json_object_get(resp.body, "results"), "FILT-002"));
    as_response_clear(&resp);
}

static void test_search_filters(void **state)
{
    as_response resp;
    request(state, "GET", "/search", "q=soap", &resp);
    assert_int_equal(resp.status, 200);
    json_t *results = json_object_get(resp.body, "results");
    assert_int_equal(json_array_size(results), 1);
    assert_non_null(by_sku(results, "SOAP-001"));
    as_response_clear(&resp);

    /* A device by slug: only products with a compat row for it. */
    request(state, "GET", "/search", "device=dyson-v11&verified_only=false", &resp);
    assert_int_equal(resp.status, 200);
    assert_string_equal(json_string_value(json_object_get(resp.body, "device")), "dyson-v11");
    results = json_object_get(resp.body, "results");
    assert_int_equal(json_array_size(results), 1);
    json_t *f = by_sku(results, "FILT-002");
    assert_non_null(f);
    assert_string_equal(json_string_value(json_object_get(f, "fit_status")), "fits");
    as_response_clear(&resp);

    /* Free text naming one device resolves to it. */
    request(state, "GET", "/search", "device=dyson+v11&verified_only=false", &resp);
    assert_int_equal(resp.status, 200);
    assert_string_equal(json_string_value(json_object_get(resp.body, "device")), "dyson-v11");
    as_response_clear(&resp);

    /* A part that does not fit the device is excluded, saying why. */
    request(state, "GET", "/search", "device=dyson-v8&verified_only=false", &resp);
    assert_int_equal(resp.status, 200);
    assert_int_equal(json_array_size(json_object_get(resp.body, "results")), 0);
    json_t *x = by_sku(json_object_get(resp.body, "excluded"), "FILT-002");
    assert_non_null(x);
    assert_non_null(strstr(json_string_value(json_object_get(x, "reason")), "V8 Animal"));
    as_response_clear(&resp);

    /* An ambiguous device names the candidates. */
    request(state, "GET", "/search", "device=dyson", &resp);
    assert_int_equal(resp.status, 400);
    const char *msg = json_string_value(json_object_get(resp.body, "message"));
    assert_non_null(strstr(msg, "dyson-v11"));
    assert_non_null(strstr(msg, "dyson-v8"));
    as_response_clear(&resp);

    /* Every soap offer above max_price: excluded with the cheapest price. */
    request(state, "GET", "/search", "q=soap&max_price=4", &resp);
    assert_int_equal(resp.status, 200);
    assert_int_equal(json_array_size(json_object_get(resp.body, "results")), 0);
    x = by_sku(json_object_get(resp.body, "excluded"), "SOAP-001");
    assert_non_null(x);
    assert_non_null(strstr(json_string_value(json_object_get(x, "reason")), "max_price"));
    as_response_clear(&resp);

    /* A merchant by name (any case) restricts the offers. */
    request(state, "GET", "/search", "merchant=beta+supplies&q=soap", &resp);
    assert_int_equal(resp.status, 200);
    json_t *soap = by_sku(json_object_get(resp.body, "results"), "SOAP-001");
    assert_non_null(soap);
    assert_int_equal(json_integer_value(json_object_get(soap, "eligible_offers")), 1);
    as_response_clear(&resp);

    /* limit and offset page through the results; count stays the total. */
    request(state, "GET", "/search", "verified_only=false&limit=1&offset=1", &resp);
    assert_int_equal(resp.status, 200);
    assert_int_equal(json_array_size(json_object_get(resp.body, "results")), 1);
    assert_int_equal(json_integer_value(json_object_get(resp.body, "count")), 3);
    assert_int_equal(json_integer_value(json_object_get(resp.body, "limit")), 1);
    assert_int_equal(json_integer_value(json_object_get(resp.body, "offset")), 1);
    as_response_clear(&resp);
}

static void test_search_storage_failure(void **state)
{
    api_fx *fx = *state;
    fx->db.fail = AS_EDB;
    as_response resp;
    request(state, "GET", "/search", NULL, &resp);
    assert_int_equal(resp.status, 503);
    assert_string_equal(json_string_value(json_object_get(resp.body, "error")),
                        "SERVICE_UNAVAILABLE");
    assert_true(json_is_string(json_object_get(resp.body, "message")));
    as_response_clear(&resp);
    request(state, "GET", "/products/SOAP-001", NULL, &resp);
    assert_int_equal(resp.status, 503);
    as_response_clear(&resp);
}

/* One store function failing as told (fake_faults.h): its second call with a
 * code it may return, then every call with one it may not (AS_EDB instead). */
static void test_product_one_call_fails(void **state)
{
    api_fx *fx = *state;
    fx->db.fail_op = FAKE_OP_PRODUCT_BY_SKU;
    fx->db.fail_nth = 2;
    fx->db.fail_rc = AS_ENOTFOUND;
    static const int want[] = {200, 404, 200};
    as_response resp;
    for (size_t i = 0; i < N_ROWS(want); i++) {
        request(state, "GET", "/products/SOAP-001", NULL, &resp);
        assert_int_equal(resp.status, want[i]);
        as_response_clear(&resp);
    }
    assert_int_equal(fx->db.op_calls[FAKE_OP_PRODUCT_BY_SKU], 3);
    fx->db.fail_nth = 0;
    fx->db.fail_rc = AS_ECONFLICT;
    request(state, "GET", "/products/SOAP-001", NULL, &resp);
    assert_int_equal(resp.status, 503);
    as_response_clear(&resp);
}

/* ---- GET /products/{sku} ---- */

static void test_product(void **state)
{
    as_response resp;
    request(state, "GET", "/products/SOAP-001", NULL, &resp);
    assert_int_equal(resp.status, 200);
    json_t *b = resp.body;
    assert_string_equal(json_string_value(json_object_get(b, "sku")), "SOAP-001");
    json_t *offers = json_object_get(b, "offers");
    assert_true(json_is_object(offers));
    assert_int_equal(json_array_size(json_object_get(offers, "ranked")), 2);
    assert_true(json_is_object(json_object_get(offers, "best")));
    assert_true(json_is_string(json_object_get(offers, "explanation")));
    json_t *ver = json_object_get(b, "verification");
    assert_string_equal(json_string_value(json_object_get(ver, "status")), "verified");
    assert_int_equal(json_array_size(json_object_get(ver, "rows")), 2);
    assert_true(json_is_null(json_object_get(b, "for_device")));
    as_response_clear(&resp);

    /* For a device it does not fit. */
    request(state, "GET", "/products/FILT-002", "device=dyson-v8", &resp);
    assert_int_equal(resp.status, 200);
    assert_string_equal(json_string_value(json_object_get(resp.body, "fit_status")),
                        "does_not_fit");
    assert_string_equal(json_string_value(json_object_get(resp.body, "for_device")), "dyson-v8");
    assert_true(json_is_false(json_object_get(resp.body, "right_item_guarantee")));
    as_response_clear(&resp);

    /* Unknown sku: 404 naming it. */
    request(state, "GET", "/products/NOPE-999", NULL, &resp);
    assert_int_equal(resp.status, 404);
    assert_string_equal(json_string_value(json_object_get(resp.body, "error")), "NOT_FOUND");
    assert_non_null(strstr(json_string_value(json_object_get(resp.body, "message")), "NOPE-999"));
    as_response_clear(&resp);

    /* A 2-character sku is a validation error on the path parameter. */
    request(state, "GET", "/products/ab", NULL, &resp);
    assert_int_equal(resp.status, 400);
    assert_string_equal(json_string_value(json_object_get(resp.body, "error")), "VALIDATION_ERROR");
    assert_string_equal(json_string_value(json_object_get(resp.body, "field")), "sku");
    assert_true(json_string_length(json_object_get(resp.body, "message")) > 0);
    as_response_clear(&resp);
}

static void test_method_not_allowed(void **state)
{
    as_response resp;
    request(state, "POST", "/search", NULL, &resp);
    assert_int_equal(resp.status, 405);
    assert_non_null(resp.allow);
    assert_string_equal(resp.allow, "GET, HEAD");
    assert_string_equal(json_string_value(json_object_get(resp.body, "error")),
                        "METHOD_NOT_ALLOWED");
    assert_non_null(strstr(json_string_value(json_object_get(resp.body, "message")), "POST"));
    as_response_clear(&resp);
}

static void test_http_status_errors(void **state)
{
    (void)state;
    const int statuses[] = {400, 403, 404, 405, 408, 411, 413, 414, 415,
                            429, 431, 501, 503, 500, 418, 200, 999};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(statuses); i++) {
        char label[16];
        snprintf(label, sizeof(label), "%d", statuses[i]);
        as_response resp = {0};
        as_respond_http_status(&resp, statuses[i]);
        CHECK(label, resp.status >= 400 && resp.status < 600);
        if (statuses[i] >= 400 && statuses[i] < 600) CHECK_INT(label, resp.status, statuses[i]);
        CHECK(label, json_is_string(json_object_get(resp.body, "error")));
        CHECK(label, json_string_length(json_object_get(resp.body, "message")) > 0);
        as_response_clear(&resp);
    }
    ROWS_DONE();
}

/* One reading of the Authorization header for identification and the rate
 * limiter (issue 17: "Bearer  <key>" was the agent's to one, anonymous to the
 * other). */
static void test_bearer_key(void **state)
{
    (void)state;
    const char *k = "agentshop_sk_test_abcdefghijklmnopqrstuvwxyz012345";
    assert_string_equal(as_bearer_key("Bearer agentshop_sk_test_x"), "agentshop_sk_test_x");
    assert_string_equal(as_bearer_key("Bearer   abc"), "abc");
    assert_string_equal(as_bearer_key("bEARER abc"), "abc");
    assert_null(as_bearer_key("Bearer "));
    assert_null(as_bearer_key("Bearer    "));
    assert_null(as_bearer_key("Basic abc"));
    assert_null(as_bearer_key("Bearerabc"));
    assert_null(as_bearer_key(NULL));
    assert_true(as_agent_key_shape(k, "agentshop"));
    assert_false(as_agent_key_shape("agentshop_sk_test_abc", "agentshop"));
    assert_false(as_agent_key_shape(k, "other"));
    assert_false(
        as_agent_key_shape("agentshop_sk_test_abcdefghijklmnopqrstuvwxyz01234!", "agentshop"));
    assert_false(as_agent_key_shape(NULL, "agentshop"));
}

/* ---- GET /devices/{slug}/compatible ---- */

/* The body of one request, as text (NULL for none), and its status. */
static char *body_of(void **state, const char *path, const char *query, int *status)
{
    as_response resp;
    request(state, "GET", path, query, &resp);
    *status = resp.status;
    char *t = resp.body ? json_dumps(resp.body, JSON_SORT_KEYS) : NULL;
    as_response_clear(&resp);
    return t;
}

/* A device's parts page by page: from the process's search index the same
 * bodies as from the store (parts, counts, excluded and their reasons),
 * without the store's list being read: the index's compat rows and ranks
 * make the page. (t/api/devices.t pages a larger list through httpd.) */
static void test_compatible_pages(void **state)
{
    api_fx *fx = *state;
    as_mem *m = unit_mem(state);
    fake_db_wide(&fx->db); /* the default and awkward evidence: more parts a device */
    as_search_index *si = as_search_index_create(NULL, NULL, NULL);
    static const char *const slugs[] = {"dyson-v11", "dyson-v8", "brita-marella",
                                        "dyson-v11-torque", "hp-deskjet-2720"};
    static const char *const queries[] = {NULL,
                                          "limit=1",
                                          "limit=1&offset=1",
                                          "limit=2&offset=1",
                                          "limit=100",
                                          "offset=5",
                                          "part_type=filter",
                                          "part_type=filter&limit=1&offset=1",
                                          "part_type=battery"};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(slugs); i++)
        for (size_t k = 0; k < N_ROWS(queries); k++) {
            const char *path = as_printf(m, "/devices/%s/compatible", slugs[i]);
            const char *label = as_printf(m, "%s?%s", path, queries[k] ? queries[k] : "");
            int st_store, st_index;
            fx->shop.index = NULL;
            char *a = body_of(state, path, queries[k], &st_store);
            int calls = fx->db.op_calls[FAKE_OP_COMPATIBLE];
            fx->shop.index = si;
            char *b = body_of(state, path, queries[k], &st_index);
            fx->shop.index = NULL;
            CHECK_INT(label, st_store, 200);
            CHECK_INT(label, st_index, 200);
            CHECK(label, a && b);
            if (a && b) CHECK_STR(label, b, a);
            CHECK_INT(label, fx->db.op_calls[FAKE_OP_COMPATIBLE], calls); /* not read */
            free(a);
            free(b);
        }
    ROWS_DONE();
    as_search_index_destroy(si);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bearer_key),     API_TEST(test_status_table),
        API_TEST(test_search_fields),          API_TEST(test_search_contradicted),
        API_TEST(test_search_filters),         API_TEST(test_search_storage_failure),
        API_TEST(test_product_one_call_fails), API_TEST(test_product),
        API_TEST(test_method_not_allowed),     API_TEST(test_http_status_errors),
        API_TEST(test_compatible_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
