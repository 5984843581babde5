/* The agent's calls through MCP and through /v1 in one shop (the fake
 * store's golden shop): a tool's structuredContent is the /v1 body of the
 * same call, successes and refusals alike, and an Idempotency-Key is one
 * record whichever binding uses it (core/http/as_answers.h). */
#include "unit_check.h"

#include "fake_shop.h"

#define U1 "Bearer agentshop_sk_test_GoldenUserOne0000000000000000001"
#define U2 "Bearer agentshop_sk_test_GoldenUserTwo0000000000000000002"
#define BASE "https://shop.example/v1"
#define REASON "Replacement soap for the kitchen sink"

static const unsigned char signing_key[] = "mcp-buying-signing-key-0123456789ab";

typedef struct buy_fx {
    unit_fx base; /* first: unit_mem() works on it */
    fake_shop store;
    as_store s;
    as_config cfg;
    as_shop shop;
    int notices;
} buy_fx;

static void count_notice(void *baton, const char *line)
{
    (void)line;
    ++*(int *)baton;
}

static int buy_setup(void **state)
{
    buy_fx *fx = calloc(1, sizeof(*fx));
    if (!fx) return -1;
    fx->base.arena = as_arena_create();
    fx->base.mem = as_arena_mem(fx->base.arena);
    fake_shop_init(&fx->store);
    fx->s = fake_shop_store(&fx->store);
    as_config_defaults(&fx->cfg);
    fx->cfg.signing_key = signing_key;
    fx->cfg.signing_key_len = sizeof(signing_key) - 1;
    fx->shop = (as_shop){.mem = &fx->base.mem,
                         .store = &fx->s,
                         .cfg = &fx->cfg,
                         .now = 20468LL * 86400 + 12 * 3600,
                         .notify = count_notice,
                         .notify_baton = &fx->notices};
    *state = fx;
    return 0;
}

static int buy_teardown(void **state)
{
    buy_fx *fx = *state;
    assert_false(fx->store.in_tx);
    fake_shop_free(&fx->store);
    return unit_teardown(state); /* base is first: the arena and the fixture */
}

/* A /v1 request by the agent whose Authorization is auth; its body parsed. */
static json_t *rest(void **state, const char *auth, const char *method, const char *path,
                    const char *body, const char *idem, as_response *resp)
{
    buy_fx *fx = *state;
    as_request req = {.method = method,
                      .path = path,
                      .body = body,
                      .body_len = body ? strlen(body) : 0,
                      .content_type = "application/json",
                      .accept = "application/json",
                      .authorization = auth,
                      .service_agent = "unit/1.0",
                      .idempotency_key = idem,
                      .base_url = BASE};
    as_handle(&fx->shop, &req, resp);
    unit_json_body(resp);
    return resp->body;
}

/* The same call as an MCP tool: its CallToolResult. */
static json_t *mcp(void **state, const char *auth, const char *tool, const char *args,
                   as_response *resp)
{
    as_mem *m = unit_mem(state);
    const char *body = as_printf(m,
                                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                 "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
                                 tool, args);
    rest(state, auth, "POST", "/mcp", body, NULL, resp);
    return json_object_get(resp->body, "result");
}

static int tool_status(const json_t *r)
{
    return (int)json_integer_value(
        json_object_get(json_object_get(r, "_meta"), "agentshop/status"));
}

/* The tool's result is the /v1 answer: status and body. */
static void same_answer(const char *label, const json_t *r, const as_response *v1)
{
    if (tool_status(r) != v1->status ||
        !json_equal(json_object_get(r, "structuredContent"), v1->body))
        fail_msg("%s: MCP answered %d, /v1 %d, or another body", label, tool_status(r), v1->status);
}

typedef struct call_pair {
    const char *label, *auth;
    const char *method, *path, *body; /* /v1 */
    const char *tool, *args;          /* MCP */
    int status;
} call_pair;

/* Calls whose answer does not depend on the one before: each both ways. */
static void test_same_answers(void **state)
{
    const call_pair rows[] = {
        {"the mandate", U1, "GET", "/mandates/current", NULL, "get_mandate", "{}", 200},
        {"no key", NULL, "GET", "/mandates/current", NULL, "get_mandate", "{}", 403},
        {"a fit", U1, "POST", "/compatibility/check",
         "{\"sku\":\"FILT-002\",\"device\":\"dyson-v11\"}", "check_compatibility",
         "{\"sku\":\"FILT-002\",\"device\":\"dyson-v11\"}", 200},
        {"a fit, no device", U1, "POST", "/compatibility/check",
         "{\"sku\":\"FILT-002\",\"device\":\"nope\"}", "check_compatibility",
         "{\"sku\":\"FILT-002\",\"device\":\"nope\"}", 404},
        {"a quote too large", U1, "POST", "/quotes", "{\"sku\":\"SOAP-001\",\"quantity\":11}",
         "create_quote", "{\"sku\":\"SOAP-001\",\"quantity\":11}", 400},
        {"a device named twice", U1, "POST", "/quotes",
         "{\"sku\":\"FILT-002\",\"device\":\"dyson\"}", "create_quote",
         "{\"sku\":\"FILT-002\",\"device\":\"dyson\"}", 400},
        {"a body too deep", U1, "POST", "/quotes",
         "{\"sku\":\"SOAP-001\",\"weights\":{\"a\":[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]}}",
         "create_quote",
         "{\"sku\":\"SOAP-001\",\"weights\":{\"a\":[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]}}", 400},
        {"an unknown order", U1, "GET", "/orders/ord_nope", NULL, "get_order",
         "{\"order_id\":\"ord_nope\"}", 404},
        {"a return of an unknown order", U1, "POST", "/returns",
         "{\"order_id\":\"ord_nope\",\"reason_code\":\"wrong_item\"}", "start_return",
         "{\"order_id\":\"ord_nope\",\"reason_code\":\"wrong_item\",\"idempotency_key\":\"r2\"}",
         404},
        {"a short question", U1, "POST", "/questions", "{\"sku\":\"FILT-002\",\"question\":\"hm\"}",
         "ask_question", "{\"sku\":\"FILT-002\",\"question\":\"hm\"}", 400},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const call_pair *c = &rows[i];
        as_response v1, tool;
        rest(state, c->auth, c->method, c->path, c->body, "r1", &v1);
        json_t *r = mcp(state, c->auth, c->tool, c->args, &tool);
        assert_int_equal(v1.status, c->status);
        same_answer(c->label, r, &v1);
        as_response_clear(&v1);
        as_response_clear(&tool);
    }
}

/* A quote's id, by /v1. */
static const char *quote(void **state, const char *body)
{
    as_response resp;
    json_t *b = rest(state, U1, "POST", "/quotes", body, NULL, &resp);
    assert_int_equal(resp.status, 201);
    const char *id = as_strdup(unit_mem(state), json_string_value(json_object_get(b, "id")));
    as_response_clear(&resp);
    return id;
}

/* An order placed by /v1 is the order MCP gets with the key, replayed; one
 * MCP placed awaiting its person is the /v1 replay's, and its person is told
 * once. Following and cancelling it answer alike. */
static void test_key_shared(void **state)
{
    buy_fx *fx = *state;
    as_mem *m = unit_mem(state);
    const char *q = quote(state, "{\"sku\":\"SOAP-001\",\"quantity\":1}");
    const char *body = as_printf(m, "{\"quote_id\":\"%s\",\"reason\":\"" REASON "\"}", q);
    as_response v1, tool, again, other;
    rest(state, U1, "POST", "/orders", body, "k1", &v1);
    assert_int_equal(v1.status, 201);
    json_t *r = mcp(state, U1, "create_order",
                    as_printf(m,
                              "{\"quote_id\":\"%s\",\"reason\":\"" REASON "\","
                              "\"idempotency_key\":\"k1\"}",
                              q),
                    &tool);
    same_answer("the /v1 order over MCP", r, &v1);
    assert_true(json_is_true(json_object_get(json_object_get(r, "_meta"), "agentshop/replayed")));
    const char *id = as_printf(m, "/orders/%s", json_string_value(json_object_get(v1.body, "id")));
    as_response_clear(&tool);
    r = mcp(state, U2, "create_order",
            as_printf(m,
                      "{\"quote_id\":\"%s\",\"reason\":\"" REASON "\","
                      "\"idempotency_key\":\"k1\"}",
                      q),
            &tool);
    assert_int_equal(tool_status(r), 404); /* another user's key is another record */
    as_response_clear(&tool);
    as_response_clear(&v1);

    rest(state, U1, "GET", id, NULL, NULL, &v1);
    r = mcp(state, U1, "get_order", as_printf(m, "{\"order_id\":\"%s\"}", id + 8), &tool);
    same_answer("an order followed", r, &v1);
    as_response_clear(&v1);
    as_response_clear(&tool);
    rest(state, U1, "POST", as_printf(m, "%s/cancel", id), NULL, NULL, &v1);
    r = mcp(state, U1, "cancel_order", as_printf(m, "{\"order_id\":\"%s\"}", id + 8), &tool);
    same_answer("an order cancelled, then cancelled again", r, &v1);
    as_response_clear(&v1);
    as_response_clear(&tool);

    q = quote(state, "{\"sku\":\"FILT-002\",\"quantity\":2,\"device\":\"dyson-v11\"}");
    r = mcp(state, U1, "create_order",
            as_printf(m,
                      "{\"quote_id\":\"%s\",\"reason\":\"Replacement filter for the V11, "
                      "worn\",\"idempotency_key\":\"k2\"}",
                      q),
            &tool);
    assert_int_equal(tool_status(r), 202);
    assert_int_equal(fx->notices, 1);
    rest(state, U1, "POST", "/orders",
         as_printf(m, "{\"quote_id\":\"%s\",\"reason\":\"Replacement filter for the V11, worn\"}",
                   q),
         "k2", &again);
    same_answer("the MCP order over /v1", r, &again);
    assert_true(again.replayed);
    assert_int_equal(fx->notices, 1); /* a replay tells nobody again */
    rest(state, U1, "POST", "/orders", body, "k2", &other);
    assert_int_equal(other.status, 422);
    as_response_clear(&tool);
    as_response_clear(&again);
    as_response_clear(&other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_same_answers, buy_setup, buy_teardown),
        cmocka_unit_test_setup_teardown(test_key_shared, buy_setup, buy_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
