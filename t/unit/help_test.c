/* Help pages (as_help_api.c): every error code has a docs link and a page that
 * names it; the index, checkout and errors pages; relative links; 404s. */
#include "unit_check.h"

#include "as_api.h"
#include "as_buy_view.h"
#include "as_person_pages.h"

typedef struct help_fx {
    unit_fx base; /* first: unit_mem() works on it */
    as_config cfg;
    as_shop shop;
} help_fx;

static int help_setup(void **state)
{
    help_fx *fx = calloc(1, sizeof(*fx));
    if (!fx) return -1;
    fx->base.arena = as_arena_create();
    fx->base.mem = as_arena_mem(fx->base.arena);
    as_config_defaults(&fx->cfg);
    fx->shop.mem = &fx->base.mem;
    fx->shop.cfg = &fx->cfg; /* no store: help pages never touch it */
    *state = fx;
    return 0;
}

static int help_teardown(void **state)
{
    help_fx *fx = *state;
    as_arena_destroy(fx->base.arena);
    free(fx);
    return 0;
}

#define HELP_TEST(f) cmocka_unit_test_setup_teardown(f, help_setup, help_teardown)

static void get(void **state, const char *path, as_response *resp)
{
    help_fx *fx = *state;
    as_request req = {.method = "GET", .path = path};
    as_handle(&fx->shop, &req, resp);
}

static bool is_page(const as_response *r)
{
    return r->status == 200 && r->raw && r->raw_len == strlen(r->raw) && r->content_type &&
           strncmp(r->content_type, "text/html", 9) == 0 &&
           strncmp(r->raw, "<!DOCTYPE html>", 15) == 0 && strstr(r->raw, "</html>") &&
           !strstr(r->raw, "<script") && r->max_age > 0;
}

static bool has(const as_response *r, const char *s)
{
    return r->raw && strstr(r->raw, s) != NULL;
}

static bool is_error(const as_response *r, int status, const char *code)
{
    const char *e = json_string_value(json_object_get(r->body, "error"));
    return r->status == status && !r->raw && e && strcmp(e, code) == 0;
}

/* Codes the module emits, written out here independently of as_help_api.c's table. */
static const char *const emitted[] = {
    "CONFIRMATION_REQUIRED",
    "VALIDATION_ERROR",
    "IDEMPOTENCY_KEY_REQUIRED",
    "AGENT_UNIDENTIFIED",
    "MANDATE_INVALID",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFIRMATION_INVALID",
    "METHOD_NOT_ALLOWED",
    "REQUEST_TIMEOUT",
    "OUT_OF_STOCK",
    "OFFER_NOT_ELIGIBLE",
    "QUOTE_ALREADY_USED",
    "ORDER_NOT_CANCELLABLE",
    "ORDER_NOT_RETURNABLE",
    "CONFIRMATION_DECIDED",
    "IDEMPOTENCY_KEY_IN_USE",
    "QUOTE_EXPIRED",
    "CONFIRMATION_EXPIRED",
    "LENGTH_REQUIRED",
    "PAYLOAD_TOO_LARGE",
    "URI_TOO_LONG",
    "UNSUPPORTED_MEDIA_TYPE",
    "CATEGORY_NOT_ALLOWED",
    "RETURN_WINDOW_CLOSED",
    "IDEMPOTENCY_KEY_REUSED",
    "RATE_LIMITED",
    "HEADERS_TOO_LARGE",
    "INTERNAL_ERROR",
    "NOT_IMPLEMENTED",
    "SERVICE_UNAVAILABLE",
};

/* Every code of the table: its docs link, and a page there naming it. */
static void test_every_code_has_a_page(void **state)
{
    as_mem *m = unit_mem(state);
    size_t n = 0;
    ROWS_BEGIN;
    for (const char *code; (code = as_help_error_code(n)) != NULL; n++) {
        const char *want = as_printf(m, "docs/errors/%s", code);
        CHECK(code, strcmp(as_error_docs(code), want) == 0);
        CHECK(code, as_error_docs(code) == as_error_docs(code)); /* static, not built */
        as_response r = {0};
        get(state, as_printf(m, "/%s", want), &r);
        CHECK(code, is_page(&r));
        CHECK(code, has(&r, as_printf(m, "<h1>%s</h1>", code)));
        CHECK(code, has(&r, "HTTP status "));
        CHECK(code, has(&r, "What it means") && has(&r, "What to do"));
        CHECK(code, has(&r, "Is retrying safe?"));
        as_response_clear(&r);
        for (size_t k = 0; k < n; k++) /* no code twice */
            CHECK(code, strcmp(as_help_error_code(k), code) != 0);
    }
    CHECK("table size", n >= N_ROWS(emitted));
    ROWS_DONE();
}

/* The independent list: each has its own link, not the errors index. */
static void test_emitted_codes_are_in_the_table(void **state)
{
    as_mem *m = unit_mem(state);
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(emitted); i++)
        CHECK(emitted[i],
              strcmp(as_error_docs(emitted[i]), as_printf(m, "docs/errors/%s", emitted[i])) == 0);
    CHECK("unknown", strcmp(as_error_docs("NO_SUCH_CODE"), "docs/errors") == 0);
    CHECK("NULL", strcmp(as_error_docs(NULL), "docs/errors") == 0);
    ROWS_DONE();
}

/* Errors httpd raises are answered with codes that have pages too. */
static void test_http_status_codes_have_pages(void **state)
{
    (void)state;
    const int statuses[] = {400, 403, 404, 405, 408, 411, 413, 414, 415, 429, 431, 500, 501, 503};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(statuses); i++) {
        char label[16];
        snprintf(label, sizeof(label), "%d", statuses[i]);
        as_response r = {0};
        as_respond_http_status(&r, statuses[i]);
        const char *code = json_string_value(json_object_get(r.body, "error"));
        const char *docs = json_string_value(json_object_get(r.body, "docs"));
        CHECK(label, code && docs && strcmp(docs, as_error_docs(code)) == 0);
        CHECK(label, docs && strcmp(docs, "docs/errors") != 0);
        as_response_clear(&r);
    }
    ROWS_DONE();
}

typedef struct page_row {
    const char *path;
    int status;
    const char *contains; /* for 200: text on the page; links show the way back */
} page_row;

static void test_pages(void **state)
{
    const page_row rows[] = {
        {"/docs", 200, "href=\"./docs/checkout\""},
        {"/docs/", 200, "href=\"../docs/checkout\""},
        {"/docs/checkout", 200, "Idempotency-Key"},
        {"/docs/checkout", 200, "create_order"},
        {"/docs/checkout", 200, "href=\"../docs/errors/CONFIRMATION_REQUIRED\""},
        {"/docs/errors", 200, "href=\"../docs/errors/RATE_LIMITED\""},
        {"/docs/errors/NOT_FOUND", 200, "href=\"../../docs/errors\""},
        {"/docs/errors/NOT_FOUND", 200, "HTTP status 404"},
        {"/docs/errors/CONFIRMATION_REQUIRED", 200, "HTTP status 202"},
        {"/docs/nope", 404, NULL},
        {"/docs/errors/NOPE", 404, NULL},
        {"/docs/errors/not_found", 404, NULL}, /* codes are upper case */
        {"/docs/checkout/x", 404, NULL},
        {"/docs//", 404, NULL},
        {"/docs/checkout/", 404, NULL},
        {"/search/", 404, NULL}, /* other trailing slashes stay 404 */
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_response r = {0};
        get(state, rows[i].path, &r);
        if (rows[i].status == 200) {
            CHECK(rows[i].path, is_page(&r));
            CHECK(rows[i].path, has(&r, rows[i].contains));
            CHECK(rows[i].path, !has(&r, "/v1")); /* links are relative to the base */
            CHECK(rows[i].path, !has(&r, "@/"));  /* every placeholder replaced */
        } else {
            CHECK(rows[i].path, is_error(&r, 404, "NOT_FOUND"));
        }
        as_response_clear(&r);
    }
    ROWS_DONE();
}

static void test_head_and_methods(void **state)
{
    help_fx *fx = *state;
    as_request head = {.method = "HEAD", .path = "/docs/checkout"};
    as_response r = {0};
    as_handle(&fx->shop, &head, &r);
    assert_true(is_page(&r));
    as_response_clear(&r);
    as_request post = {.method = "POST", .path = "/docs"};
    as_handle(&fx->shop, &post, &r);
    assert_true(is_error(&r, 405, "METHOD_NOT_ALLOWED"));
    as_response_clear(&r);
    as_request query = {.method = "GET", .path = "/docs", .query = "x=1"};
    as_handle(&fx->shop, &query, &r);
    assert_true(is_error(&r, 400, "VALIDATION_ERROR"));
    as_response_clear(&r);
}

/* A person's browser on a confirmation link gets a page for its error, with
 * the same status; API clients keep the error object (as_person_error). */
static void test_confirmation_errors_as_pages(void **state)
{
    help_fx *fx = *state;
    const char *browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const struct {
        const char *method, *path, *query, *accept;
        int status;
        const char *code;
        bool page;
    } rows[] = {
        /* a token cut to a few characters: refused before any storage */
        {"GET", "/confirmations/conf_x", "token=abc", browser, 404, "CONFIRMATION_INVALID", true},
        {"GET", "/confirmations/conf_x", "token=abc", "text/html", 404, "CONFIRMATION_INVALID",
         true},
        {"GET", "/confirmations/conf_x", "token=abc", "application/json", 404,
         "CONFIRMATION_INVALID", false},
        {"GET", "/confirmations/conf_x", "token=abc", "*/*", 404, "CONFIRMATION_INVALID", false},
        {"GET", "/confirmations/conf_x", "token=abc", NULL, 404, "CONFIRMATION_INVALID", false},
        /* not a link (no operation of the API): the error object */
        {"GET", "/confirmations/", NULL, browser, 404, "NOT_FOUND", false},
        {"GET", "/confirmations", NULL, browser, 404, "NOT_FOUND", false},
        {"GET", "/confirmations/conf_x/more", NULL, browser, 404, "NOT_FOUND", false},
        {"GET", "/confirmations/conf_x", "token=%zz", browser, 400, "VALIDATION_ERROR", true},
        /* no signing key: the shop cannot check a link, a misconfiguration
         * no retry mends (issue 60) */
        {"GET", "/confirmations/conf_x", "token=abcdefghijkl", browser, 500, "INTERNAL_ERROR",
         true},
        /* other paths keep their JSON, whatever the browser asks */
        {"GET", "/confirmationsx", NULL, browser, 404, "NOT_FOUND", false},
        {"PUT", "/confirmations/conf_x", "token=abc", browser, 405, "METHOD_NOT_ALLOWED", false},
        {"GET", "/orders/ord_x", NULL, browser, 403, "AGENT_UNIDENTIFIED", false},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        char label[160];
        snprintf(label, sizeof label, "%s?%s (%s)", rows[i].path,
                 rows[i].query ? rows[i].query : "", rows[i].accept ? rows[i].accept : "none");
        as_request req = {.method = rows[i].method,
                          .path = rows[i].path,
                          .query = rows[i].query,
                          .accept = rows[i].accept,
                          .base_url = "https://shop.example/v1"};
        as_response r = {0};
        as_handle(&fx->shop, &req, &r);
        const char *e = json_string_value(json_object_get(r.body, "error"));
        CHECK(label, r.status == rows[i].status);
        CHECK(label, e && strcmp(e, rows[i].code) == 0); /* the object stays for the log */
        CHECK(label, (r.html != NULL) == rows[i].page);
        if (r.html) {
            CHECK(label, strncmp(r.html, "<!DOCTYPE html>", 15) == 0 && !strstr(r.html, "<script"));
            CHECK(label, strstr(r.html, rows[i].code) != NULL);
            CHECK(label, strstr(r.html, "https://shop.example/v1/docs/errors/") != NULL);
        }
        as_response_clear(&r);
    }
    ROWS_DONE();
}

/* What the page says, escaped; a wait from Retry-After; a way to try again. */
static void test_person_error_page(void **state)
{
    as_mem *m = unit_mem(state);
    const char *p = as_person_error_page(m, 404, "CONFIRMATION_INVALID", 0, NULL, NULL);
    assert_non_null(strstr(p, "<h1>This link does not work</h1>"));
    assert_non_null(strstr(p, "HTTP status 404"));
    assert_null(strstr(p, "id=\"again\""));
    p = as_person_error_page(m, 429, "RATE_LIMITED", 42,
                             "https://s/v1/confirmations/c?token=a&b=\"<x>",
                             "https://s/v1/docs/errors/RATE_LIMITED");
    assert_non_null(strstr(p, "Wait 42 seconds, then try again."));
    assert_non_null(
        strstr(p, "href=\"https://s/v1/confirmations/c?token=a&amp;b=&quot;&lt;x&gt;\""));
    assert_null(strstr(p, "<x>"));
    p = as_person_error_page(m, 418, "<b>NEW</b>", 0, NULL, NULL);
    assert_non_null(strstr(p, "Something went wrong"));
    assert_non_null(strstr(p, "&lt;b&gt;NEW&lt;/b&gt;"));
}

/* The confirmation page's times and delivery date, as a person reads them. */
static void test_confirmation_page_times(void **state)
{
    as_mem *m = unit_mem(state);
    const int64_t now = 1795212300; /* Fri 20 Nov 2026, 22:05 UTC */
    as_confirmation c = {.id = "conf_x", .status = AS_CS_PENDING, .expires_at = now + 86340};
    as_order o = {.id = "ord_x",
                  .product_name = "Toner <b>",
                  .sku = "TN-1",
                  .quantity = 1,
                  .merchant_name = "M & Co",
                  .total_cents = 12999,
                  .agent = "bot/1",
                  .reason = "a reason",
                  .status = AS_OS_AWAITING,
                  .delivery_by = "2026-11-24"};
    const char *p =
        as_confirmation_page(m, &c, &o, "/v1/confirmations/conf_x", "tok", NULL, NULL, now);
    assert_non_null(strstr(p, "<dt>Link valid until</dt><dd><time id=\"expires\" "
                              "datetime=\"2026-11-21T22:04:00Z\">Sat 21 Nov 2026, 22:04 UTC</time> "
                              "(in 23 hours)</dd>"));
    assert_non_null(strstr(p, "<dt>Delivery</dt><dd>by <time id=\"delivery\" "
                              "datetime=\"2026-11-24\">Tue 24 Nov 2026</time> (in 4 days), if you "
                              "approve now</dd>"));
    assert_non_null(strstr(p, "Toner &lt;b&gt;"));
    c.status = AS_CS_APPROVED;
    c.decided_at = now - 120;
    o.status = AS_OS_PLACED;
    p = as_confirmation_page(m, &c, &o, "/v1/confirmations/conf_x", "tok", "Approved.", NULL, now);
    assert_non_null(strstr(p, "<dt>Approved</dt><dd><time id=\"decided\" "
                              "datetime=\"2026-11-20T22:03:00Z\">Fri 20 Nov 2026, 22:03 UTC</time> "
                              "(2 minutes ago)</dd>"));
    assert_non_null(strstr(p, "(in 4 days)</dd>"));
    assert_null(strstr(p, "<button"));
    c.status = AS_CS_DECLINED;
    o.status = AS_OS_DECLINED;
    p = as_confirmation_page(m, &c, &o, "/v1/confirmations/conf_x", "tok", NULL, NULL, now);
    assert_null(strstr(p, "id=\"delivery\"")); /* nothing will be delivered */
    c.status = AS_CS_EXPIRED;
    o.status = AS_OS_EXPIRED;
    p = as_confirmation_page(m, &c, &o, "/v1/confirmations/conf_x", "tok", NULL, NULL,
                             now + 86400 + 300);
    assert_non_null(strstr(p, "<dt>Link expired</dt>"));
    assert_non_null(strstr(p, "(6 minutes ago)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        HELP_TEST(test_every_code_has_a_page),
        HELP_TEST(test_emitted_codes_are_in_the_table),
        HELP_TEST(test_http_status_codes_have_pages),
        HELP_TEST(test_pages),
        HELP_TEST(test_head_and_methods),
        HELP_TEST(test_confirmation_errors_as_pages),
        HELP_TEST(test_person_error_page),
        HELP_TEST(test_confirmation_page_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
