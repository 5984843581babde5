/* as_http: entity tags and their comparison with If-None-Match (RFC 9110,
 * 13.1.2: the weak comparison; the suffixes mod_deflate and mod_brotli add
 * to a compressed answer's tag), and the headers a CORS preflight may ask
 * for. */
#include "unit_check.h"

#include "as_http.h"

static void test_etag_shape(void **state)
{
    as_mem *m = unit_mem(state);
    const char *a = as_etag_of(m, "body", 4), *b = as_etag_of(m, "body!", 5);
    assert_non_null(a);
    assert_int_equal(strlen(a), 24);
    assert_true(a[0] == '"' && a[23] == '"');
    for (size_t i = 1; i < 23; i++)
        assert_non_null(
            strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", a[i]));
    assert_string_equal(a, as_etag_of(m, "body", 4)); /* the same bytes, the same tag */
    assert_string_not_equal(a, b);
}

static void test_if_none_match(void **state)
{
    as_mem *m = unit_mem(state);
    const char *t = as_etag_of(m, "x", 1);
    const char *o = as_strndup(m, t + 1, strlen(t) - 2); /* the opaque part */
    assert_true(as_etag_matches(t, t));
    assert_true(as_etag_matches("*", t));
    assert_true(as_etag_matches(as_printf(m, "W/%s", t), t));
    assert_true(as_etag_matches(as_printf(m, "\"a\", \"b\" ,W/%s", t), t));
    assert_true(as_etag_matches(as_printf(m, "\"%s-gzip\"", o), t));
    assert_true(as_etag_matches(as_printf(m, "\"%s-br\"", o), t));
    assert_false(as_etag_matches(as_printf(m, "\"%s-zstd\"", o), t));
    assert_false(as_etag_matches(as_printf(m, "\"%sA\"", o), t));
    assert_false(as_etag_matches(as_printf(m, "\"%s\"", o + 1), t)); /* a prefix is not the tag */
    assert_false(as_etag_matches("\"a\", \"b\"", t));
    assert_false(as_etag_matches(o, t));                       /* unquoted: malformed */
    assert_false(as_etag_matches(as_printf(m, "\"%s", o), t)); /* unterminated */
    assert_false(as_etag_matches(as_printf(m, "\"a\" junk, %s", t), t));
    assert_false(as_etag_matches("", t));
    assert_false(as_etag_matches(NULL, t));
}

static void test_preflight_headers(void **state)
{
    as_mem *m = unit_mem(state);
    assert_null(as_cors_unlisted_header(m, NULL));
    assert_null(as_cors_unlisted_header(m, ""));
    assert_null(as_cors_unlisted_header(
        m, "authorization,Content-Type , idempotency-key, SERVICE-AGENT, mcp-protocol-version"));
    assert_null(as_cors_unlisted_header(m, "if-none-match,,"));
    assert_string_equal(as_cors_unlisted_header(m, "authorization, x-api-key, cookie"),
                        "x-api-key");
    assert_string_equal(as_cors_unlisted_header(m, "authorizatio"), "authorizatio");
    assert_string_equal(as_cors_unlisted_header(m, "authorization-x"), "authorization-x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_etag_shape),
        UNIT_TEST(test_if_none_match),
        UNIT_TEST(test_preflight_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
