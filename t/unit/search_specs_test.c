/* The index build's reading of a spec row's claimed or measured value
 * (core/search/as_search_specs.c, sx_spec_value_read) against jansson's,
 * which it replaced: over values the store holds and texts it never should,
 * the kind, the number or the string, and what is refused, are jansson's. */
#include "unit_check.h"

#include <jansson.h>

#include "as_search_internal.h"

/* What jansson reads of text, as sx_spec_value_read says it. */
static sx_spec_value jansson_read(as_mem *m, const char *text)
{
    sx_spec_value x = {SX_SPEC_ABSENT, 0, NULL};
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    if (!v)
        x.kind = SX_SPEC_ABSENT;
    else if (json_is_null(v))
        x.kind = SX_SPEC_NULL;
    else if (json_is_false(v))
        x.kind = SX_SPEC_FALSE;
    else if (json_is_true(v))
        x.kind = SX_SPEC_TRUE;
    else if (json_is_number(v))
        x.kind = SX_SPEC_NUMBER, x.number = json_number_value(v);
    else if (json_is_string(v))
        x.kind = SX_SPEC_STRING, x.text = as_strdup(m, json_string_value(v));
    else
        x.kind = SX_SPEC_OTHER;
    json_decref(v);
    return x;
}

static void same_as_jansson(as_mem *m, const char *text)
{
    sx_spec_value w = jansson_read(m, text), g = sx_spec_value_read(m, text);
    if (g.kind != w.kind)
        fail_msg("%s: kind %d, jansson's %d", text ? text : "NULL", (int)g.kind, (int)w.kind);
    if (w.kind == SX_SPEC_NUMBER && g.number != w.number)
        fail_msg("%s: %.17g, jansson's %.17g", text, g.number, w.number);
    if (w.kind == SX_SPEC_STRING) assert_string_equal(g.text, w.text);
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
    sx_spec_value v = sx_spec_value_read(m, "\"caf\\u00e9 \\ud83d\\ude00\"");
    assert_int_equal(v.kind, SX_SPEC_STRING);
    assert_string_equal(v.text, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    v = sx_spec_value_read(m, "250.5");
    assert_int_equal(v.kind, SX_SPEC_NUMBER);
    assert_true(v.number == 250.5);
    assert_int_equal(sx_spec_value_read(m, "null").kind, SX_SPEC_NULL);
    /* a refused text is no value */
    assert_int_equal(sx_spec_value_read(m, "[1,").kind, SX_SPEC_ABSENT);
    assert_int_equal(sx_spec_value_read(m, NULL).kind, SX_SPEC_ABSENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_as_jansson),
        UNIT_TEST(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
