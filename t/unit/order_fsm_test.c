/* The order state machine: every (state, event) pair, the forbidden ones too. */
#include "unit_check.h"

#include "as_order_fsm.h"

#define X AS_OS_N /* forbidden */
#define R (AS_FX_RELEASE_BUDGET | AS_FX_RESTOCK | AS_FX_CLOSE_CONFIRMATION)

/* Expected table, written out again independently: to-state and effects. */
static const struct {
    int to;
    unsigned fx;
} want[AS_OS_N][AS_EV_N] = {
    /*                 approve                         decline          expire           cancel           ship             deliver             return */
    [AS_OS_AWAITING] = {{AS_OS_PLACED, AS_FX_CLOSE_CONFIRMATION}, {AS_OS_DECLINED, R}, {AS_OS_EXPIRED, R}, {AS_OS_CANCELLED, R}, {X, 0}, {X, 0}, {X, 0}},
    [AS_OS_PLACED] = {{X, 0}, {X, 0}, {X, 0}, {AS_OS_CANCELLED, AS_FX_RELEASE_BUDGET | AS_FX_RESTOCK}, {AS_OS_SHIPPED, 0}, {X, 0}, {X, 0}},
    [AS_OS_SHIPPED] = {{X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {AS_OS_DELIVERED, 0}, {AS_OS_RETURNED, 0}},
    [AS_OS_DELIVERED] = {{X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {AS_OS_RETURNED, 0}},
    [AS_OS_CANCELLED] = {{X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}},
    [AS_OS_DECLINED] = {{X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}},
    [AS_OS_EXPIRED] = {{X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}},
    [AS_OS_RETURNED] = {{X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}, {X, 0}},
};

static void test_every_pair(void **state)
{
    (void)state;
    ROWS_BEGIN;
    int allowed = 0;
    for (int s = 0; s < AS_OS_N; s++)
        for (int e = 0; e < AS_EV_N; e++) {
            char label[80];
            snprintf(label, sizeof(label), "%s + %s", as_order_state_name((as_order_state)s),
                     as_order_event_name((as_order_event)e));
            as_transition t = {X, 99};
            bool ok = as_order_transition((as_order_state)s, (as_order_event)e, &t);
            CHECK(label, ok == (want[s][e].to != X));
            if (ok) {
                allowed++;
                CHECK_INT(label, t.to, want[s][e].to);
                CHECK_INT(label, t.effects, want[s][e].fx);
            }
        }
    CHECK_INT("allowed transitions", allowed, 9);
    ROWS_DONE();
}

/* Terminal states accept nothing; released orders always give stock back. */
static void test_properties(void **state)
{
    (void)state;
    const as_order_state terminal[] = {AS_OS_CANCELLED, AS_OS_DECLINED, AS_OS_EXPIRED,
                                       AS_OS_RETURNED};
    as_transition t;
    for (size_t i = 0; i < N_ROWS(terminal); i++)
        for (int e = 0; e < AS_EV_N; e++)
            assert_false(as_order_transition(terminal[i], (as_order_event)e, &t));
    for (int s = 0; s < AS_OS_N; s++)
        for (int e = 0; e < AS_EV_N; e++)
            if (as_order_transition((as_order_state)s, (as_order_event)e, &t) &&
                (t.effects & AS_FX_RELEASE_BUDGET))
                assert_true(t.effects & AS_FX_RESTOCK);
    assert_false(as_order_transition(AS_OS_N, AS_EV_CANCEL, &t));
    assert_false(as_order_transition(AS_OS_PLACED, AS_EV_N, &t));
}

static void test_names(void **state)
{
    (void)state;
    for (int s = 0; s < AS_OS_N; s++)
        assert_int_equal(as_order_state_parse(as_order_state_name((as_order_state)s)), s);
    assert_int_equal(as_order_state_parse("lost"), AS_OS_N);
    assert_int_equal(as_order_state_parse(NULL), AS_OS_N);
    assert_string_equal(as_order_state_name(AS_OS_AWAITING), "awaiting_confirmation");
    assert_string_equal(as_order_state_name(AS_OS_N), "unknown");
}

/* What an order view calls cancellable and returnable, as the API promised
 * before the table decided it (docs/orders.md). */
static void test_allows(void **state)
{
    (void)state;
    for (int s = 0; s < AS_OS_N; s++) {
        const char *name = as_order_state_name((as_order_state)s);
        bool cancellable =
            strcmp(name, "placed") == 0 || strcmp(name, "awaiting_confirmation") == 0;
        bool returnable = strcmp(name, "shipped") == 0 || strcmp(name, "delivered") == 0;
        assert_int_equal(as_order_allows((as_order_state)s, AS_EV_CANCEL), cancellable);
        assert_int_equal(as_order_allows((as_order_state)s, AS_EV_RETURN), returnable);
    }
    assert_false(as_order_allows(AS_OS_N, AS_EV_CANCEL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_every_pair),
        UNIT_TEST(test_properties),
        UNIT_TEST(test_names),
        UNIT_TEST(test_allows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
