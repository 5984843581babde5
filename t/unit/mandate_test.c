/* as_mandate_check: each limit at, below and above its edge, one row a case. */
#include "unit_check.h"

#include "as_mandate.h"
#include "as_util.h"

#define TODAY 20777 /* 2026-11-20 */

static const as_mandate base = {
    .id = "mdt_test",
    .user_id = "u1",
    .status = AS_MS_ACTIVE,
    .categories = "hand-soap,printer-ink",
    .per_order_cents = 10000,    /* 100.00 */
    .monthly_cents = 30000,      /* 300.00 */
    .confirm_above_cents = 5000, /* 50.00 */
    .valid_until = NULL,
};

typedef struct row {
    const char *label;
    const char *status, *valid_until, *category;
    int64_t total, spent;
    as_mandate_verdict verdict;
    bool confirm;
    int64_t remaining;
} row;

static const row rows[] = {
    /* per-order limit: below, at, above */
    {"per-order below", NULL, NULL, "hand-soap", 4999, 0, AS_MANDATE_OK, false, 30000},
    {"per-order at", NULL, NULL, "hand-soap", 10000, 0, AS_MANDATE_OK, true, 30000},
    {"per-order above", NULL, NULL, "hand-soap", 10001, 0, AS_MANDATE_PER_ORDER, false, 30000},
    /* monthly limit: below, at, above (spent + total) */
    {"monthly below", NULL, NULL, "hand-soap", 4000, 25999, AS_MANDATE_OK, false, 4001},
    {"monthly at", NULL, NULL, "hand-soap", 4000, 26000, AS_MANDATE_OK, false, 4000},
    {"monthly above", NULL, NULL, "hand-soap", 4000, 26001, AS_MANDATE_MONTHLY, false, 3999},
    {"monthly used up", NULL, NULL, "hand-soap", 1, 30000, AS_MANDATE_MONTHLY, false, 0},
    {"monthly overdrawn", NULL, NULL, "hand-soap", 1, 31000, AS_MANDATE_MONTHLY, false, 0},
    /* confirm-above threshold: below, at, above */
    {"confirm below", NULL, NULL, "printer-ink", 4999, 0, AS_MANDATE_OK, false, 30000},
    {"confirm at", NULL, NULL, "printer-ink", 5000, 0, AS_MANDATE_OK, false, 30000},
    {"confirm above", NULL, NULL, "printer-ink", 5001, 0, AS_MANDATE_OK, true, 30000},
    /* category */
    {"category allowed", NULL, NULL, "printer-ink", 100, 0, AS_MANDATE_OK, false, 30000},
    {"category refused", NULL, NULL, "batteries", 100, 0, AS_MANDATE_CATEGORY, false, 30000},
    {"category prefix only", NULL, NULL, "hand", 100, 0, AS_MANDATE_CATEGORY, false, 30000},
    {"category before per-order", NULL, NULL, "batteries", 99999, 0, AS_MANDATE_CATEGORY, false,
     30000},
    /* validity */
    {"revoked", "revoked", NULL, "hand-soap", 100, 0, AS_MANDATE_REVOKED, false, 30000},
    {"valid until today", NULL, "2026-11-20", "hand-soap", 100, 0, AS_MANDATE_OK, false, 30000},
    {"valid until yesterday", NULL, "2026-11-19", "hand-soap", 100, 0, AS_MANDATE_EXPIRED, false,
     30000},
    {"valid until tomorrow", NULL, "2026-11-21", "hand-soap", 100, 0, AS_MANDATE_OK, false,
     30000},
};

static void test_check_table(void **state)
{
    as_mem *m = unit_mem(state);
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const row *r = &rows[i];
        as_mandate md = base;
        if (r->status) md.status = as_mandate_state_parse(r->status);
        md.valid_until = r->valid_until;
        as_mandate_decision d = as_mandate_check(&md, r->category, r->total, r->spent, TODAY);
        CHECK_INT(r->label, d.verdict, r->verdict);
        CHECK(r->label, d.needs_confirmation == r->confirm);
        CHECK_INT(r->label, d.remaining_cents, r->remaining);
        const char *msg = as_mandate_message(m, &md, &d, r->category, r->total);
        if (r->verdict == AS_MANDATE_OK)
            CHECK_STR(r->label, msg, "");
        else
            CHECK(r->label, strlen(msg) > 10);
    }
    ROWS_DONE();
}

/* The refusals name the limit and what is left of the month. */
static void test_messages(void **state)
{
    as_mem *m = unit_mem(state);
    as_mandate_decision d = as_mandate_check(&base, "hand-soap", 10001, 1000, TODAY);
    const char *msg = as_mandate_message(m, &base, &d, "hand-soap", 10001);
    assert_non_null(strstr(msg, "per-order limit of \xE2\x82\xAC" "100.00"));
    assert_non_null(strstr(msg, "\xE2\x82\xAC" "290.00"));
    d = as_mandate_check(&base, "hand-soap", 5000, 26000, TODAY);
    msg = as_mandate_message(m, &base, &d, "hand-soap", 5000);
    assert_non_null(strstr(msg, "\xE2\x82\xAC" "40.00 of the monthly limit of \xE2\x82\xAC" "300.00"));
    d = as_mandate_check(&base, "batteries", 100, 0, TODAY);
    msg = as_mandate_message(m, &base, &d, "batteries", 100);
    assert_non_null(strstr(msg, "'batteries'"));
    assert_non_null(strstr(msg, "hand-soap,printer-ink"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_check_table),
        UNIT_TEST(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
