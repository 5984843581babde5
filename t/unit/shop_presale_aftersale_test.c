/* The shop's operations after and before the sale, and of passkeys
 * (core/shop/as_aftersale.h, as_presale.h, as_passkeys.h), called as a
 * binding calls them: typed inputs, an as_shop_rc and its as_problem. Against
 * the fake store's trading shop (t/unit/fake_shop.h). */
#include "fake_shop.h"
#include "unit_check.h"

#include "as_aftersale.h"
#include "as_passkeys.h"
#include "as_presale.h"

typedef struct shop_fx {
    fake_shop g;
    as_store store;
    as_config cfg;
    as_shop shop;
} shop_fx;

static int shop_setup(void **state)
{
    shop_fx *fx = calloc(1, sizeof(*fx));
    if (!fx) return -1;
    fake_shop_init_trading(&fx->g);
    fx->store = fake_shop_store(&fx->g);
    as_config_defaults(&fx->cfg);
    fx->shop =
        (as_shop){.mem = &fx->g.mem, .store = &fx->store, .cfg = &fx->cfg, .now = FAKE_SHOP_NOW};
    *state = fx;
    return 0;
}

static int shop_teardown(void **state)
{
    shop_fx *fx = *state;
    fake_shop_check_end(&fx->g);
    fake_shop_free(&fx->g);
    free(fx);
    return 0;
}

static as_shop *shop_of(void **state)
{
    return &((shop_fx *)*state)->shop;
}

static void assert_refused(as_shop_rc rc, const as_problem *why, int status, const char *code,
                           const char *field)
{
    assert_int_equal(rc, AS_SHOP_REFUSED);
    assert_int_equal(why->status, status);
    assert_string_equal(why->code, code);
    if (field)
        assert_string_equal(why->field, field);
    else
        assert_null(why->field);
    assert_non_null(why->message);
}

static const as_agent agent_u1 = {"key_1", "u1", "shopbot/1.0"};

static void test_follow(void **state)
{
    as_order o;
    as_problem why;
    /* another user's order is answered as if it did not exist */
    assert_refused(as_order_follow(shop_of(state), "u1", "ord_u2", &o, &why), &why, 404,
                   "NOT_FOUND", NULL);
    assert_refused(as_order_follow(shop_of(state), "u1", "ord_none", &o, &why), &why, 404,
                   "NOT_FOUND", NULL);
    /* what was due is applied: placed three days ago, it has shipped and arrived */
    assert_int_equal(as_order_follow(shop_of(state), "u1", "ord_due", &o, &why), AS_SHOP_DONE);
    assert_int_equal(o.status, AS_OS_DELIVERED);
}

static void test_cancel(void **state)
{
    as_order o;
    as_problem why;
    assert_refused(as_order_cancel(shop_of(state), &agent_u1, "ord_shipped", &o, &why), &why, 409,
                   "ORDER_NOT_CANCELLABLE", NULL);
    assert_non_null(strstr(why.message, "POST /v1/returns"));
    assert_int_equal(as_order_cancel(shop_of(state), &agent_u1, "ord_placed", &o, &why),
                     AS_SHOP_DONE);
    assert_int_equal(o.status, AS_OS_CANCELLED);
    /* a second cancel sees the same */
    assert_int_equal(as_order_cancel(shop_of(state), &agent_u1, "ord_placed", &o, &why),
                     AS_SHOP_DONE);
    assert_int_equal(o.status, AS_OS_CANCELLED);
}

static void test_return(void **state)
{
    as_shop *shop = shop_of(state);
    as_return_made made;
    as_problem why;
    assert_refused(as_return_create(shop, "u1", "ord_u2", "defective", NULL, "", &made, &why), &why,
                   404, "NOT_FOUND", "order_id");
    assert_refused(as_return_create(shop, "u1", "ord_placed", "defective", NULL, "", &made, &why),
                   &why, 409, "ORDER_NOT_RETURNABLE", "order_id");
    assert_refused(as_return_create(shop, "u1", "ord_old", "defective", NULL, "", &made, &why),
                   &why, 422, "RETURN_WINDOW_CLOSED", NULL);
    /* the right-item guarantee: a part bought for the device it fits, returned as not fitting */
    assert_int_equal(as_store_begin(shop->store), AS_OK);
    assert_int_equal(as_return_create(shop, "u1", "ord_delivered", "does_not_fit", "too small",
                                      "https://shop.example/v1", &made, &why),
                     AS_SHOP_DONE);
    assert_int_equal(as_store_commit(shop->store), AS_OK);
    assert_string_equal(made.r.refund_status, "refunded");
    assert_int_equal(made.r.refund_cents, 2999);
    assert_string_equal(made.r.carrier, "bpost");
    assert_int_equal(made.o.status, AS_OS_RETURNED);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "https://shop.example/v1/returns/%s/label", made.r.id);
    assert_memory_equal(made.label_url, prefix, strlen(prefix));
}

static void test_label(void **state)
{
    as_return r;
    as_order o;
    as_problem why;
    /* no signing key: only the agent key of its user opens it */
    assert_int_equal(as_return_label_open(shop_of(state), "ret_1", NULL, "u1", &r, &o, &why),
                     AS_SHOP_DONE);
    assert_string_equal(o.id, "ord_returned");
    assert_refused(as_return_label_open(shop_of(state), "ret_1", NULL, "u2", &r, &o, &why), &why,
                   404, "NOT_FOUND", NULL);
    assert_refused(as_return_label_open(shop_of(state), "ret_1", "a-token-1", NULL, &r, &o, &why),
                   &why, 404, "NOT_FOUND", NULL);
    assert_refused(as_return_label_open(shop_of(state), "ret_lost", NULL, "u1", &r, &o, &why), &why,
                   404, "NOT_FOUND", NULL);
}

static void test_presale(void **state)
{
    as_product p;
    as_device dev;
    as_problem why;
    assert_refused(as_fit_check(shop_of(state), "FILT-002", "no-such-device", &p, &dev, &why), &why,
                   404, "NOT_FOUND", "device");
    assert_refused(as_fit_check(shop_of(state), "NOPE-1", "dyson-v11", &p, &dev, &why), &why, 404,
                   "NOT_FOUND", "sku");
    as_answered a;
    assert_refused(as_question_ask(shop_of(state), "u1", "NOPE-1", "Is it vegan?", &a, &why), &why,
                   404, "NOT_FOUND", "sku");
}

static void test_quota(void **state)
{
    shop_fx *fx = *state;
    /* the store finds the user's questions of the day at the quota */
    fx->g.db.fail_op = FAKE_OP_QUESTION_INSERT;
    fx->g.db.fail_rc = AS_ECONFLICT;
    as_answered a;
    as_problem why;
    assert_refused(as_question_ask(shop_of(state), "u1", "SOAP-001", "Is it vegan?", &a, &why),
                   &why, 429, "RATE_LIMITED", NULL);
    assert_int_equal(a.retry_after, 86400 - FAKE_SHOP_NOW % 86400);
    fx->g.db.fail_op = FAKE_OP_NONE;
    assert_int_equal(as_question_ask(shop_of(state), "u1", "SOAP-001", "Is it vegan?", &a, &why),
                     AS_SHOP_DONE);
    assert_string_equal(a.sku, "SOAP-001");
    assert_true(json_is_object(a.answer));
    json_decref(a.answer);
}

static void test_passkeys(void **state)
{
    as_shop *shop = shop_of(state);
    as_enrol_offer offer;
    as_problem why;
    assert_refused(as_enrol_offer_for(shop, "http://localhost:8080/v1", FAKE_SHOP_ENROLMENT,
                                      "wrong-token", &offer, &why),
                   &why, 404, "NOT_FOUND", NULL);
    /* an IP address names no relying party: the page says so, without options */
    assert_int_equal(as_enrol_offer_for(shop, "http://127.0.0.1/v1", FAKE_SHOP_ENROLMENT,
                                        FAKE_SHOP_ENROL_TOKEN, &offer, &why),
                     AS_SHOP_DONE);
    assert_non_null(offer.problem);
    assert_null(offer.rp_id);
    assert_int_equal(as_enrol_offer_for(shop, "http://localhost:8080/v1", FAKE_SHOP_ENROLMENT,
                                        FAKE_SHOP_ENROL_TOKEN, &offer, &why),
                     AS_SHOP_DONE);
    assert_null(offer.problem);
    assert_string_equal(offer.rp_id, "localhost");
    assert_non_null(offer.challenge.challenge);
    as_passkey key;
    assert_refused(as_passkey_enrol(shop, "http://127.0.0.1/v1", FAKE_SHOP_ENROLMENT,
                                    FAKE_SHOP_ENROL_TOKEN, "e30", "e30", &key, &why),
                   &why, 503, "SERVICE_UNAVAILABLE", NULL);

    as_confirmation c = {"conf_ok", "ord_await", "u1", AS_CS_PENDING, 0, 0, 0};
    as_assertion none = {NULL, NULL, NULL, NULL};
    assert_refused(as_approval_check(shop, "http://localhost:8080/v1", &c, &none, &why), &why, 403,
                   "PASSKEY_REQUIRED", NULL);
    as_approval_plan plan;
    assert_int_equal(as_approval_plan_for(shop, "http://localhost:8080/v1", &c, &plan),
                     AS_SHOP_DONE);
    assert_true(plan.passkey && plan.has_passkey);
    assert_null(plan.unavailable);
    assert_int_equal(plan.n_keys, 1);
    ((shop_fx *)*state)->cfg.approval_link = true; /* the link alone approves */
    assert_int_equal(as_approval_plan_for(shop, "http://localhost:8080/v1", &c, &plan),
                     AS_SHOP_DONE);
    assert_false(plan.passkey);
}

#define SHOP_TEST(f) cmocka_unit_test_setup_teardown(f, shop_setup, shop_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        SHOP_TEST(test_follow),   SHOP_TEST(test_cancel),  SHOP_TEST(test_return),
        SHOP_TEST(test_label),    SHOP_TEST(test_presale), SHOP_TEST(test_quota),
        SHOP_TEST(test_passkeys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
