/* The buying operations called as another binding would call them: an
 * as_shop and typed inputs, no request (core/shop/as_buying.h,
 * as_idempotent.h), against the fake store's trading shop. */
#include "unit_check.h"

#include "as_buying.h"
#include "as_buying_internal.h"
#include "as_idempotent.h"
#include "fake_shop.h"

static const char signing_key[] = "0123456789abcdef0123456789abcdef";

typedef struct shop_fx {
    fake_shop store;
    as_store s;
    as_config cfg;
    as_shop shop;
} shop_fx;

static shop_fx *shop_open(void **state)
{
    shop_fx *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    fake_shop_init_trading(&fx->store);
    fx->s = fake_shop_store(&fx->store);
    as_config_defaults(&fx->cfg);
    fx->cfg.signing_key = (const unsigned char *)signing_key;
    fx->cfg.signing_key_len = sizeof(signing_key) - 1;
    fx->shop =
        (as_shop){.mem = unit_mem(state), .store = &fx->s, .cfg = &fx->cfg, .now = FAKE_SHOP_NOW};
    return fx;
}

static void shop_close(shop_fx *fx)
{
    assert_false(fx->store.in_tx); /* every operation closed its transaction */
    fake_shop_free(&fx->store);
    free(fx);
}

static void test_agent_by_key(void **state)
{
    shop_fx *fx = shop_open(state);
    as_agent a = {0};
    as_problem why = {0};
    assert_int_equal(as_agent_by_key(&fx->shop, "any-key", &a, &why), AS_SHOP_DONE);
    assert_string_equal(a.user_id, "u1");
    fx->store.key_mode = 1; /* revoked */
    assert_int_equal(as_agent_by_key(&fx->shop, "any-key", &a, &why), AS_SHOP_REFUSED);
    assert_int_equal(why.status, 403);
    assert_string_equal(why.code, "AGENT_UNIDENTIFIED");
    shop_close(fx);
}

/* A passkey check that refuses, counting how often it was asked. */
static const char *refusing_check(void *baton, const as_confirmation *c, int *rc)
{
    (void)c;
    (void)rc;
    ++*(int *)baton;
    return "No passkey answered.";
}

static void test_decide(void **state)
{
    shop_fx *fx = shop_open(state);
    as_confirm cc;
    as_problem why = {0};
    assert_int_equal(as_confirmation_read(&fx->shop, "conf_ok", "wrong-token", &cc, &why),
                     AS_SHOP_REFUSED);
    assert_string_equal(why.code, "CONFIRMATION_INVALID");
    as_confirmation c = {
        .id = "conf_ok", .order_id = "ord_await", .expires_at = FAKE_SHOP_NOW + 3600};
    const char *token = as_confirmation_token(&fx->shop, &c);
    assert_int_equal(as_confirmation_read(&fx->shop, "conf_ok", token, &cc, &why), AS_SHOP_DONE);
    assert_int_equal(cc.conf.status, AS_CS_PENDING);

    int asked = 0;
    as_decision approve = {true, refusing_check, &asked};
    as_decided out;
    assert_int_equal(as_confirmation_decide(&fx->shop, "conf_ok", token, &approve, &out, &why),
                     AS_SHOP_REFUSED);
    assert_int_equal(asked, 1);
    assert_int_equal(out.outcome, AS_DECISION_UNVERIFIED);
    assert_string_equal(why.code, "PASSKEY_REQUIRED");
    assert_int_equal(out.now.conf.status, AS_CS_PENDING); /* nothing changed */

    as_decision decline = {false, NULL, NULL};
    assert_int_equal(as_confirmation_decide(&fx->shop, "conf_ok", token, &decline, &out, &why),
                     AS_SHOP_DONE);
    assert_int_equal(out.outcome, AS_DECISION_TAKEN);
    assert_int_equal(out.now.conf.status, AS_CS_DECLINED);
    assert_int_equal(out.now.order.status, AS_OS_DECLINED);
    assert_int_equal(as_confirmation_decide(&fx->shop, "conf_ok", token, &approve, &out, &why),
                     AS_SHOP_REFUSED);
    assert_int_equal(out.outcome, AS_DECISION_CONFLICT);
    assert_int_equal(why.status, 409);
    assert_int_equal(asked, 1); /* a decided confirmation asks for no passkey */
    shop_close(fx);
}

static int counting_work(void *job, as_answer *answer)
{
    ++*(int *)job;
    answer->status = 201;
    answer->body = json_pack("{s:s}", "id", "ord_x");
    return AS_OK;
}

static void test_idempotent_replay(void **state)
{
    shop_fx *fx = shop_open(state);
    int runs = 0;
    as_answer first, again;
    as_problem why = {0};
    assert_int_equal(as_idempotent_run(&fx->shop, "u1", "orders", "k-unit-1", "h1", counting_work,
                                       &runs, &first, &why),
                     AS_SHOP_DONE);
    assert_false(first.replayed);
    assert_int_equal(as_idempotent_run(&fx->shop, "u1", "orders", "k-unit-1", "h1", counting_work,
                                       &runs, &again, &why),
                     AS_SHOP_DONE);
    assert_int_equal(runs, 1); /* the second answer is the first, kept */
    assert_true(again.replayed);
    assert_int_equal(again.status, 201);
    assert_true(json_equal(first.body, again.body));
    json_decref(first.body);
    json_decref(again.body);
    assert_int_equal(as_idempotent_run(&fx->shop, "u1", "orders", "k-unit-1", "h2", counting_work,
                                       &runs, &again, &why),
                     AS_SHOP_REFUSED);
    assert_int_equal(why.status, 422);
    assert_int_equal(runs, 1);
    shop_close(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_agent_by_key),
        UNIT_TEST(test_decide),
        UNIT_TEST(test_idempotent_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
