/* The reading of a spec row's claimed or measured value (core/lib/as_json_value.c,
 * as_json_value_read: the index build's words and every verification)
 * against jansson's, which it replaced: over values the store holds and
 * texts it never should, the kind, the number (to its sign: "-0" is jansson's
 * integer 0) or the string, and what is refused, are jansson's. */
#include "unit_check.h"

#include <jansson.h>

#include "as_json_value.h"
#include "as_util.h"

/* What jansson reads of text, as as_json_value_read says it. */
static as_json_value jansson_read(as_mem *m, const char *text)
{
    as_json_value x = {AS_JSON_ABSENT, 0, NULL};
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    if (!v)
        x.kind = AS_JSON_ABSENT;
    else if (json_is_null(v))
        x.kind = AS_JSON_NULL;
    else if (json_is_false(v))
        x.kind = AS_JSON_FALSE;
    else if (json_is_true(v))
        x.kind = AS_JSON_TRUE;
    else if (json_is_number(v))
        x.kind = AS_JSON_NUMBER, x.number = json_number_value(v);
    else if (json_is_string(v))
        x.kind = AS_JSON_STRING, x.text = as_strdup(m, json_string_value(v));
    else
        x.kind = AS_JSON_OTHER;
    json_decref(v);
    return x;
}

static void same_as_jansson(as_mem *m, const char *text)
{
    as_json_value w = jansson_read(m, text), g = as_json_value_read(m, text);
    if (g.kind != w.kind)
        fail_msg("%s: kind %d, jansson's %d", text ? text : "NULL", (int)g.kind, (int)w.kind);
    if (w.kind == AS_JSON_NUMBER && memcmp(&g.number, &w.number, sizeof(double)) != 0)
        fail_msg("%s: %.17g, jansson's %.17g", text, g.number, w.number);
    if (w.kind == AS_JSON_STRING) assert_string_equal(g.text, w.text);
}

static const char *const texts[] = {
    /* as the store holds them */
    "true",
    "false",
    "null",
    "1000",
    "64.5",
    "250.75",
    "-3",
    "2e3",
    "1.5E-2",
    "0.0",
    "-0",
    "\"lavender\"",
    "\"\"",
    " 65 ",
    "\n\"spaced\"\t",
    /* escapes */
    "\"A \\\"quoted\\\" \\\\ label\\/x\\n\\t\\r\\b\\f\"",
    "\"caf\\u00e9 \\u20ac \\ud83d\\ude00\"",
    "\"Caf\xc3\xa9 \xe2\x82\xac 5\"",
    /* arrays and objects: read past */
    "[1,[2,{\"k\":[3]}]]",
    "{\"a\":\"b\",\"c\":[]}",
    "[]",
    "[\"a\",\"b\"]",
    /* not read: not JSON, not one value, not UTF-8, JSON's errors */
    NULL,
    "",
    "[",
    "1 2",
    "\"a\" \"b\"",
    "[1,]",
    "{\"a\" 1}",
    "\"bad \\x escape\"",
    "\"lone \\ud83d surrogate\"",
    "\"lone \\ude00 low\"",
    "\"nul \\u0000\"",
    "\"raw\ttab\"",
    "\"bad utf-8 \xc3\x28\"",
    "tru",
    "nulls",
    ".5",
    "-",
    "01",
    "1.",
    "1 trailing",
    /* jansson's integers are 64-bit; its reals must not overflow */
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "-0.0",
    "1e308",
    "1e309",
    "-1e400",
    "1e-400",
    "0.000000000000000000000000000000000000000000000000000000000000000000000001",
};

static void test_as_jansson(void **state)
{
    as_mem *m = unit_mem(state);
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        same_as_jansson(m, texts[i]);
}

/* What the index makes words of, decoded */
static void test_values(void **state)
{
    as_mem *m = unit_mem(state);
    as_json_value v = as_json_value_read(m, "\"caf\\u00e9 \\ud83d\\ude00\"");
    assert_int_equal(v.kind, AS_JSON_STRING);
    assert_string_equal(v.text, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    v = as_json_value_read(m, "250.5");
    assert_int_equal(v.kind, AS_JSON_NUMBER);
    assert_true(v.number == 250.5);
    assert_int_equal(as_json_value_read(m, "null").kind, AS_JSON_NULL);
    /* a refused text is no value */
    assert_int_equal(as_json_value_read(m, "[1,").kind, AS_JSON_ABSENT);
    assert_int_equal(as_json_value_read(m, NULL).kind, AS_JSON_ABSENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_as_jansson),
        UNIT_TEST(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
