/* Content negotiation (core/http/as_accept.c): the one reader of Accept
 * headers, as_accept_q, and its two callers' decisions: a page or JSON for a
 * person's browser (as_accept_html), JSON, an event stream or 406 for MCP. */
#include "api_fixture.h"

#include "as_http.h"

/* A browser gets the page, an API client (or curl) the JSON. */
static void test_accept_html(void **state)
{
    (void)state;
    const struct {
        const char *accept;
        bool html;
    } rows[] = {
        {"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
         "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
         true},                                                                    /* Chromium */
        {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true}, /* Firefox */
        {"text/html", true},
        {"TEXT/HTML", true},
        {"text/*", true},
        {"application/json, text/html", true}, /* as before: named alike, the page */
        {" text/html ; charset=utf-8 ; q=1", true},
        {NULL, false},
        {"", false},
        {"*/*", false},
        {"application/json", false},
        {"application/json, text/event-stream", false},
        {"application/json, text/html;q=0.9", false},
        {"text/html;q=0", false},
        {"text/html;q=0.5, */*", false},
        {"text/htmlx", false},
        {"application/*, text/html;q=0.1", false},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++)
        CHECK(rows[i].accept ? rows[i].accept : "(none)",
              as_accept_html(rows[i].accept) == rows[i].html);
    ROWS_DONE();
}

/* The weight of a type's most specific range; among ranges as specific, the
 * greatest; a weight that is no qvalue is 0. */
static void test_accept_q(void **state)
{
    (void)state;
    const struct {
        const char *accept, *type;
        int q;
        as_accept_match how;
    } rows[] = {
        {NULL, "text/html", -1, AS_ACCEPT_NONE},
        {"", "text/html", -1, AS_ACCEPT_NONE},
        {"image/png", "text/html", -1, AS_ACCEPT_NONE},
        {"text/html", "text/html", 1000, AS_ACCEPT_EXACT},
        {"TEXT/Html;charset=utf-8", "text/html", 1000, AS_ACCEPT_EXACT},
        {"text/*;q=0.5", "text/html", 500, AS_ACCEPT_MAJOR},
        {"*/*;q=0.1", "text/html", 100, AS_ACCEPT_ANY},
        {"*/*, text/*;q=0.2, text/html;q=0", "text/html", 0, AS_ACCEPT_EXACT},
        {"text/html;q=0.3, text/html;q=0.7", "text/html", 700, AS_ACCEPT_EXACT},
        {"text/html; Q=0.25", "text/html", 250, AS_ACCEPT_EXACT},
        {"text/html;q=1.000;level=1", "text/html", 1000, AS_ACCEPT_EXACT},
        {"\ttext/html\t;\tq=0.4\t,", "text/html", 400, AS_ACCEPT_EXACT},
        {"text/html;q=0.001", "text/html", 1, AS_ACCEPT_EXACT},
        {"text/html;q=0.0001", "text/html", 0, AS_ACCEPT_EXACT},
        {"text/html;q=1.5", "text/html", 0, AS_ACCEPT_EXACT},
        {"text/html;q=-1", "text/html", 0, AS_ACCEPT_EXACT},
        {"text/html;q=nan", "text/html", 0, AS_ACCEPT_EXACT},
        {"text/html;q=", "text/html", 0, AS_ACCEPT_EXACT},
        {"text/htmlx;q=1, text;q=1", "text/html", -1, AS_ACCEPT_NONE},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        as_accept_match how;
        CHECK_INT(rows[i].accept, as_accept_q(rows[i].accept, rows[i].type, &how), rows[i].q);
        CHECK_INT(rows[i].accept, how, rows[i].how);
    }
    ROWS_DONE();
}

typedef enum { MCP_JSON, MCP_SSE, MCP_406 } mcp_answer;

/* What POST /mcp answers a ping sent with this Accept header. */
static mcp_answer mcp_ping(void **state, const char *accept)
{
    api_fx *fx = *state;
    as_request req = {
        .method = "POST",
        .path = "/mcp",
        .body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        .content_type = "application/json",
        .accept = accept,
        .base_url = "http://shop.example/v1",
    };
    req.body_len = strlen(req.body);
    as_response resp;
    as_handle(&fx->shop, &req, &resp);
    mcp_answer a = resp.status == 406 ? MCP_406
                   : resp.content_type && strcmp(resp.content_type, "text/event-stream") == 0
                       ? MCP_SSE
                       : MCP_JSON;
    assert_int_equal(resp.status, a == MCP_406 ? 406 : 200);
    as_response_clear(&resp);
    return a;
}

/* The answers of the two readers as_accept_q replaced (as_util.c's for the
 * pages, as_mcp.c's for MCP), recorded from them: the one reader gives both. */
static void test_accept_two_callers(void **state)
{
    const struct {
        const char *accept;
        bool html;
        mcp_answer mcp;
    } rows[] = {
        {"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
         "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
         true, MCP_JSON},
        {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true, MCP_JSON},
        {"text/html,application/xhtml+xml", true, MCP_406},
        {"text/html", true, MCP_406},
        {"TEXT/HTML", true, MCP_406},
        {"Text/Html; Q=0.5", true, MCP_406},
        {"text/*", true, MCP_SSE},
        {"text/*;q=0", false, MCP_406},
        {"*/*", false, MCP_JSON},
        {"*/*;q=0", false, MCP_406},
        {"", false, MCP_JSON},
        {"application/json", false, MCP_JSON},
        {"APPLICATION/JSON", false, MCP_JSON},
        {"application/json;q=0", false, MCP_406},
        {"application/json;q=0.001", false, MCP_JSON},
        {"application/json; charset=utf-8", false, MCP_JSON},
        {"application/json;q=1.000;x=y", false, MCP_JSON},
        {"application/*", false, MCP_JSON},
        {"application/*;q=0, text/event-stream", false, MCP_SSE},
        {"application/json, text/event-stream", false, MCP_JSON},
        {"text/event-stream", false, MCP_SSE},
        {"TEXT/EVENT-STREAM;q=0.5", false, MCP_SSE},
        {"text/event-stream;q=0", false, MCP_406},
        {"text/*, application/json;q=0", true, MCP_SSE},
        {"application/json, text/html", true, MCP_JSON},
        {"application/json, text/html;q=0.9", false, MCP_JSON},
        {"application/json;q=0.5, text/html", true, MCP_JSON},
        {"text/html;q=0", false, MCP_406},
        {"text/html;q=0, */*", false, MCP_JSON},
        {"text/html;q=0.5, */*", false, MCP_JSON},
        {"text/htmlx", false, MCP_406},
        {"text/html-x, application/jsonx", false, MCP_406},
        {"application/*, text/html;q=0.1", false, MCP_JSON},
        {" text/html ; charset=utf-8 ; q=1", true, MCP_406},
        {"text/html;level=1;q=0.4, application/json;q=0.3", true, MCP_JSON},
        {"*/*;q=0.1, text/event-stream;q=0", false, MCP_JSON},
        {"*/*, application/json;q=0", false, MCP_SSE},
        {"image/png", false, MCP_406},
        {"text/event-stream, text/html", true, MCP_SSE},
        {"application/json;q=0.8, text/*;q=0.9", true, MCP_JSON},
    };
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        CHECK(rows[i].accept, as_accept_html(rows[i].accept) == rows[i].html);
        CHECK_INT(rows[i].accept, mcp_ping(state, rows[i].accept), rows[i].mcp);
    }
    ROWS_DONE();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_accept_html),
        UNIT_TEST(test_accept_q),
        cmocka_unit_test_setup_teardown(test_accept_two_callers, api_setup, api_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
