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

/* The tag of a body hashed as it is written, in pieces of every size (the
 * glue's streaming path: jansson's pieces are a few bytes), is the tag of the
 * whole body; a changed byte anywhere changes it. */
static void test_etag_in_pieces(void **state)
{
    as_mem *m = unit_mem(state);
    char body[5000];
    for (size_t i = 0; i < sizeof(body); i++)
        body[i] = (char)('a' + (i * 7 + i / 13) % 26);
    const size_t lens[] = {0, 1, 16, 17, 128, 129, 240, 241, 1024, 1025, 4999, 5000};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        size_t n = lens[k];
        const char *whole = as_etag_of(m, body, n);
        for (size_t step = 1; step <= 300; step = step * 3 + 1) {
            as_etag_hash *h = as_etag_begin();
            assert_non_null(h);
            for (size_t at = 0; at < n; at += step)
                as_etag_add(h, body + at, n - at < step ? n - at : step);
            assert_string_equal(as_etag_end(h, m), whole);
        }
        for (size_t at = 0; at < n; at += 97) {
            body[at] ^= 1;
            assert_string_not_equal(as_etag_of(m, body, n), whole);
            body[at] ^= 1;
        }
        if (n) assert_string_not_equal(as_etag_of(m, body, n - 1), whole);
    }
    assert_null(as_etag_end(NULL, m));
    as_etag_add(NULL, body, 1); /* nothing, and no crash */
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
        UNIT_TEST(test_etag_in_pieces),
        UNIT_TEST(test_if_none_match),
        UNIT_TEST(test_preflight_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
