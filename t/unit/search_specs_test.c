/* The index build's reading of a product's specifications
 * (core/search/as_search_specs.c, sx_specs_read) against jansson's, which it
 * replaced: over texts the store writes and texts it never should, the rows,
 * their members' kinds and values, and what is refused, are jansson's. */
#include "unit_check.h"

#include <jansson.h>

#include "as_search_internal.h"

/* What jansson reads of text, as sx_specs_read says it: false when it is not
 * an array; else the rows. */
static bool jansson_read(as_mem *m, const char *text, sx_spec **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    json_t *a = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!json_is_array(a)) {
        json_decref(a);
        return false;
    }
    *n = json_array_size(a);
    *out = as_alloc(m, (*n ? *n : 1) * sizeof(sx_spec));
    for (size_t i = 0; i < *n; i++) {
        json_t *row = json_array_get(a, i);
        sx_spec *s = &(*out)[i];
        s->is_row = json_is_array(row);
        for (size_t k = 0; s->is_row && k < 4; k++) {
            json_t *v = json_array_get(row, k);
            sx_spec_value *x = &s->member[k];
            if (!v)
                x->kind = SX_SPEC_ABSENT;
            else if (json_is_null(v))
                x->kind = SX_SPEC_NULL;
            else if (json_is_false(v))
                x->kind = SX_SPEC_FALSE;
            else if (json_is_true(v))
                x->kind = SX_SPEC_TRUE;
            else if (json_is_number(v))
                x->kind = SX_SPEC_NUMBER, x->number = json_number_value(v);
            else if (json_is_string(v))
                x->kind = SX_SPEC_STRING, x->text = as_strdup(m, json_string_value(v));
            else
                x->kind = SX_SPEC_OTHER;
        }
    }
    json_decref(a);
    return true;
}

static void same_as_jansson(as_mem *m, const char *text)
{
    sx_spec *want, *got;
    size_t nw, ng;
    bool ok_w = jansson_read(m, text, &want, &nw);
    bool ok_g = sx_specs_read(m, text, &got, &ng);
    if (ok_w != ok_g)
        fail_msg("%s: jansson %s, sx_specs_read %s", text, ok_w ? "reads it" : "refuses it",
                 ok_g ? "reads it" : "refuses it");
    if (!ok_w) {
        assert_int_equal(ng, 0);
        return;
    }
    assert_int_equal(ng, nw);
    for (size_t i = 0; i < nw; i++) {
        assert_int_equal(got[i].is_row, want[i].is_row);
        for (size_t k = 0; k < 4; k++) {
            const sx_spec_value *g = &got[i].member[k], *w = &want[i].member[k];
            if (g->kind != w->kind)
                fail_msg("%s: row %zu member %zu: kind %d, jansson's %d", text, i, k, (int)g->kind,
                         (int)w->kind);
            if (w->kind == SX_SPEC_NUMBER && g->number != w->number)
                fail_msg("%s: row %zu member %zu: %.17g, jansson's %.17g", text, i, k, g->number,
                         w->number);
            if (w->kind == SX_SPEC_STRING) assert_string_equal(g->text, w->text);
        }
    }
}

static const char *const texts[] = {
    /* as the store writes them */
    "[[\"Vegan\",null,true,true]]",
    "[[\"Volume\",\"ml\",1000,1000],[\"Scent\",null,\"lavender\",null],[\"Fragrance "
    "free\",null,true,false]]",
    "[[\"Power\",\"W\",65,64.5],[\"Weight\",\"g\",250.75,null]]",
    "[]",
    "[[\"Capacity\",\"mAh\",-3,2e3],[\"x\",\"y\",1.5E-2,0.0]]",
    "[ [ \"spaced\" , \"out\" , 1 , 2 ] ]\n",
    /* escapes */
    "[[\"A \\\"quoted\\\" \\\\ label\\/x\\n\\t\\r\\b\\f\",null,\"caf\\u00e9 \\u20ac "
    "\\ud83d\\ude00\",null]]",
    "[[\"Caf\xc3\xa9\",null,\"\xe2\x82\xac 5\",null]]",
    /* other shapes */
    "[[\"Only a label\"]]",
    "[[]]",
    "[\"not a row\",1,null,{\"a\":1},[\"Row\",\"u\",1,2,3,4]]",
    "[[\"Nested\",null,[1,[2,{\"k\":[3]}]],{\"a\":\"b\",\"c\":[]}]]",
    "[[\"Label\",5,true,null]]",
    /* not read: not an array, not JSON, not UTF-8, JSON's errors */
    "{\"a\":1}",
    "\"text\"",
    "",
    "[",
    "[[\"a\",null,1,2]",
    "[[\"a\",null,1,2]]]",
    "[[\"a\" null]]",
    "[[\"a\",null,1,2],]",
    "[[\"bad \\x escape\"]]",
    "[[\"lone \\ud83d surrogate\"]]",
    "[[\"lone \\ude00 low\"]]",
    "[[\"nul \\u0000\"]]",
    "[[\"raw\ttab\"]]",
    "[[\"bad utf-8 \xc3\x28\"]]",
    "[[\"a\",null,tru,null]]",
    "[[\"a\",null,nulls,null]]",
    "[[\"a\",null,.5,null]]",
    "[[\"a\",null,-,null]]",
    "[[\"a\",null,1]] trailing",
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
    sx_spec *r;
    size_t n;
    assert_true(sx_specs_read(
        m, "[[\"Scent\",null,\"caf\\u00e9 \\ud83d\\ude00\",null],[\"Volume\",\"ml\",1000,250.5]]",
        &r, &n));
    assert_int_equal(n, 2);
    assert_string_equal(r[0].member[0].text, "Scent");
    assert_int_equal(r[0].member[1].kind, SX_SPEC_NULL);
    assert_string_equal(r[0].member[2].text, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    assert_int_equal(r[1].member[3].kind, SX_SPEC_NUMBER);
    assert_true(r[1].member[3].number == 250.5);
    /* a refused text leaves no rows */
    assert_false(sx_specs_read(m, "[[\"a\",null,1,2],", &r, &n));
    assert_int_equal(n, 0);
    assert_null(r);
    assert_false(sx_specs_read(m, NULL, &r, &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        UNIT_TEST(test_as_jansson),
        UNIT_TEST(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
