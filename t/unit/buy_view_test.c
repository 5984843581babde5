/* The order and confirmation views: what follows from the state table and
 * the timeline, and the 202 body as an error object. */
#include "unit_check.h"

#include <string.h>

#include "as_api.h"
#include "as_util.h"

#include "as_buy_view.h"

#define DAY 86400LL

static const as_order base_order = {
    .id = "ord_x",
    .quote_id = "q_x",
    .mandate_id = "md_x",
    .offer_id = "of_x",
    .quantity = 1,
    .unit_price_cents = 12999,
    .total_cents = 12999,
    .month = "2026-11",
    .reason = "a reason",
    .agent = "bot/1",
    .sku = "TN-1",
    .product_name = "Toner",
    .merchant_name = "M & Co",
    .delivery_by = "2026-11-24",
};

static bool flag(const json_t *v, const char *key)
{
    return json_is_true(json_object_get(v, key));
}

/* Per state: cancellable and returnable as the table allows them, the
 * status by its name; a delivered order is returnable inside its window only. */
static void test_order_followed(void **state)
{
    as_mem *m = unit_mem(state);
    const int64_t now = 1795212300;
    static const struct {
        as_order_state status;
        const char *name;
        bool cancellable, returnable;
    } rows[] = {
        {AS_OS_AWAITING, "awaiting_confirmation", true, false},
        {AS_OS_PLACED, "placed", true, false},
        {AS_OS_SHIPPED, "shipped", false, true},
        {AS_OS_DELIVERED, "delivered", false, true},
        {AS_OS_CANCELLED, "cancelled", false, false},
        {AS_OS_RETURNED, "returned", false, false},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_order o = base_order;
        o.status = rows[i].status;
        json_t *v = as_view_order_followed(m, &o, now, 30);
        CHECK_STR(rows[i].name, json_string_value(json_object_get(v, "status")), rows[i].name);
        CHECK(rows[i].name, flag(v, "cancellable") == rows[i].cancellable);
        CHECK(rows[i].name, flag(v, "returnable") == rows[i].returnable);
        json_decref(v);
    }
    ROWS_DONE();

    as_event events[] = {{AS_OS_PLACED, NULL, now - 40 * DAY},
                         {AS_OS_SHIPPED, NULL, now - 39 * DAY},
                         {AS_OS_DELIVERED, NULL, now - 38 * DAY}};
    as_order o = base_order;
    o.status = AS_OS_DELIVERED;
    o.events = events;
    o.n_events = 3;
    json_t *v = as_view_order_followed(m, &o, now, 30); /* the window closed 8 days ago */
    assert_false(flag(v, "returnable"));
    assert_string_equal(json_string_value(json_object_get(v, "return_window_ends_at")),
                        as_time_format(m, now - 8 * DAY));
    json_t *timeline = json_object_get(v, "timeline");
    assert_int_equal(json_array_size(timeline), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(timeline, 1), "status")),
                        "shipped");
    json_decref(v);
    v = as_view_order_followed(m, &o, now, 60);
    assert_true(flag(v, "returnable"));
    json_decref(v);
}

/* The 202 is an error object like any other: its text valid UTF-8 even when
 * what it quotes is not, its docs link, then the order and the link. */
static void test_confirmation_required(void **state)
{
    as_mem *m = unit_mem(state);
    as_order o = base_order;
    o.status = AS_OS_AWAITING;
    as_confirmation c = {
        .id = "conf_x", .order_id = "ord_x", .status = AS_CS_PENDING, .expires_at = 1795212300};
    json_t *b = as_view_confirmation_required(m, &o, &c, "https://x/v1/confirmations/conf_x", 5000);
    char *text = json_dumps(b, JSON_COMPACT);
    assert_non_null(text);
    assert_non_null(strstr(text, "{\"error\":\"CONFIRMATION_REQUIRED\",\"message\":\"The total "));
    assert_non_null(strstr(text, "\"docs\":\"docs/errors/CONFIRMATION_REQUIRED\",\"order_id\":"
                                 "\"ord_x\",\"confirmation\":{\"id\":\"conf_x\""));
    free(text);
    json_decref(b);
    json_t *e = as_error_object("X", "f\xff", "bad \xc3 byte");
    assert_string_equal(json_string_value(json_object_get(e, "message")), "bad ? byte");
    assert_string_equal(json_string_value(json_object_get(e, "field")), "f?");
    json_decref(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_order_followed),
        UNIT_TEST(test_confirmation_required),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
