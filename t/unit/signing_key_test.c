/* A shop without AgentShopSigningKeyFile: what needs a signed link (placing
 * an order, opening a confirmation) says the server is misconfigured (500),
 * not "storage failed, retry" (503): a retry can never help. */
#include "fake_shop.h"
#include "unit_check.h"

#define AGENT_KEY "agentshop_sk_test_abcdefghijklmnopqrstuvwxyz012345"

typedef struct key_fx {
    fake_shop store;
    as_store s;
    as_config cfg;
    as_arena *arena;
    as_mem mem;
    as_shop shop;
} key_fx;

static int key_setup(void **state)
{
    key_fx *fx = calloc(1, sizeof(*fx));
    if (!fx) return -1;
    fake_shop_init_trading(&fx->store);
    fx->s = fake_shop_store(&fx->store);
    as_config_defaults(&fx->cfg); /* no signing key */
    fx->arena = as_arena_create();
    fx->mem = as_arena_mem(fx->arena);
    fx->shop = (as_shop){.mem = &fx->mem, .store = &fx->s, .cfg = &fx->cfg, .now = 1780000000};
    *state = fx;
    return 0;
}

static int key_teardown(void **state)
{
    key_fx *fx = *state;
    fake_shop_free(&fx->store);
    as_arena_destroy(fx->arena);
    free(fx);
    return 0;
}

static void check_misconfigured(void **state, const char *method, const char *path,
                                const char *query)
{
    key_fx *fx = *state;
    as_request req = {.method = method,
                      .path = path,
                      .query = query,
                      .body = "{\"quote_id\":\"q_none\"}",
                      .body_len = 21,
                      .content_type = "application/json",
                      .accept = "application/json",
                      .authorization = "Bearer " AGENT_KEY,
                      .service_agent = "unit-test/1.0",
                      .idempotency_key = "k-signing-key-test"};
    as_response resp;
    memset(&resp, 0, sizeof(resp));
    as_handle(&fx->shop, &req, &resp);
    unit_json_body(&resp);
    assert_int_equal(resp.status, 500);
    assert_string_equal(json_string_value(json_object_get(resp.body, "error")), "INTERNAL_ERROR");
    const char *msg = json_string_value(json_object_get(resp.body, "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "AgentShopSigningKeyFile"));
    assert_null(strstr(msg, "Retry"));
    assert_false(fx->store.in_tx);
    as_response_clear(&resp);
}

static void test_order_without_key(void **state)
{
    check_misconfigured(state, "POST", "/orders", NULL);
}

static void test_confirmation_without_key(void **state)
{
    check_misconfigured(state, "GET", "/confirmations/conf_x", "token=abcdefghijkl");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_without_key, key_setup, key_teardown),
        cmocka_unit_test_setup_teardown(test_confirmation_without_key, key_setup, key_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
