/* The catalogue feed's records on their own (core/rules/as_feed.c): what passes,
 * every problem of a record that does not (by field path, all of them), a
 * withdrawal's keys, and export's line form: keys in the documented order,
 * read back to the same record and written to the same line. */
#include "unit_check.h"

#include "as_feed.h"

typedef struct fx {
    as_arena *a;
    as_mem m;
    as_feed_problems probs;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    f->a = as_arena_create();
    f->m = as_arena_mem(f->a);
    f->probs = (as_feed_problems){&f->m, NULL, 0, 0};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    as_arena_destroy(f->a);
    free(f);
    return 0;
}

static bool rd(fx *f, const char *line, as_feed_rec *r)
{
    f->probs.n = 0;
    return as_feed_read(&f->m, line, strlen(line), 7, r, &f->probs);
}

/* the problem of field path, or NULL */
static const char *problem_of(fx *f, const char *path)
{
    for (size_t i = 0; i < f->probs.n; i++)
        if ((!path && !f->probs.v[i].field) ||
            (path && f->probs.v[i].field && strcmp(f->probs.v[i].field, path) == 0))
            return f->probs.v[i].reason;
    return NULL;
}

#define OFFER                                                                                      \
    "\"offer_id\":\"HS-1-a\",\"sku\":\"HS-1\",\"merchant\":\"m-a\",\"price_cents\":245,"          \
    "\"retail_price_cents\":258,\"delivery_days\":4,\"stock\":70"

static void test_valid_records(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    assert_true(rd(f, "{\"type\":\"offer\"," OFFER "}", &r));
    assert_int_equal(r.type, AS_FEED_OFFER);
    assert_string_equal(r.key, "HS-1-a");
    assert_false(r.withdrawn);
    assert_int_equal(r.line, 7);
    json_decref(r.v);
    assert_true(rd(f,
                   "{\"type\":\"compatibility\",\"sku\":\"VP-1\",\"device\":\"dyson-v11\","
                   "\"fit_status\":\"fits\",\"checked_at\":\"2026-11-01T00:00:00Z\","
                   "\"evidence\":[{\"any\":\"thing\"}]}",
                   &r));
    assert_string_equal(r.key, "VP-1");
    assert_string_equal(r.key2, "dyson-v11");
    json_decref(r.v);
    assert_true(rd(f,
                   "{\"type\":\"measurement\",\"sku\":\"AF-1\",\"lab\":\"lab-1\",\"measured_at\":"
                   "\"2026-11-01T00:00:00Z\",\"sample_size\":2,\"values\":{\"eff\":99.5,\"kind\":"
                   "\"HEPA\",\"carbon\":false,\"sizes\":[1,2]}}",
                   &r));
    json_decref(r.v);
}

static void test_every_problem(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    /* four wrong fields and one missing: all five said, by path */
    assert_false(rd(f,
                    "{\"type\":\"product\",\"sku\":\"X\",\"name\":\"n\",\"brand\":\"b\","
                    "\"category\":\"garden\",\"part_type\":\"filter\",\"description\":\"d\","
                    "\"source\":{\"url\":\"https://m.example/"
                    "p\",\"checked_at\":\"yesterday\",\"product_id\":\"1\","
                    "\"availability\":\"in_stock\"},\"specs\":[{\"spec\":\"a\",\"label\":\"A\","
                    "\"kind\":\"size\"}],\"prcie\":1}",
                    &r));
    assert_non_null(problem_of(f, "sku"));                /* 3 to 20 characters */
    assert_non_null(problem_of(f, "source.checked_at"));  /* not a time */
    assert_non_null(problem_of(f, "specs[0].kind"));      /* not a kind */
    assert_non_null(problem_of(f, "prcie"));              /* not a field */
    assert_null(problem_of(f, "category"));               /* checked after the table's checks */
    assert_int_equal(f->probs.n, 4);
    assert_null(r.v);
    /* the API's enumerations, once the fields are right */
    assert_false(
        rd(f,
           "{\"type\":\"product\",\"sku\":\"XY-1\",\"name\":\"n\",\"brand\":\"b\","
           "\"category\":\"garden\",\"part_type\":\"filter\",\"description\":\"d\","
           "\"source\":{\"url\":\"https://m.example/p\",\"checked_at\":\"2026-11-01T00:00:00Z\","
           "\"product_id\":\"1\",\"availability\":\"in_stock\"}}",
           &r));
    assert_non_null(strstr(problem_of(f, "category"), "garden"));
    /* money: whole cents, the agent price at most retail */
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"o\",\"sku\":\"HS-1\",\"merchant\":\"m\","
                       "\"price_cents\":12.5,\"retail_price_cents\":1300,\"delivery_days\":2,"
                       "\"stock\":5}",
                    &r));
    assert_non_null(problem_of(f, "price_cents"));
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"o\",\"sku\":\"HS-1\",\"merchant\":\"m\","
                       "\"price_cents\":1400,\"retail_price_cents\":1300,\"delivery_days\":2,"
                       "\"stock\":5}",
                    &r));
    assert_non_null(strstr(problem_of(f, "price_cents"), "above the retail price"));
    /* not JSON, not an object, no type, a duplicate key */
    assert_false(rd(f, "{\"type\":", &r));
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
    assert_false(rd(f, "[1]", &r));
    assert_non_null(problem_of(f, NULL));
    assert_false(rd(f, "{\"id\":\"m\"}", &r));
    assert_non_null(problem_of(f, "type"));
    assert_false(rd(f, "{\"type\":\"offer\",\"type\":\"offer\"}", &r));
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
}

/* line with "@@" in a string replaced by value (JSON text, without quotes) */
static bool rd_with(fx *f, const char *tmpl, const char *value, as_feed_rec *r)
{
    const char *at = strstr(tmpl, "@@");
    char *line = as_printf(&f->m, "%.*s%s%s", (int)(at - tmpl), tmpl, value, at + 2);
    return rd(f, line, r);
}

#define SRC "\"source\":{\"url\":\"https://m.example/p\",\"checked_at\":\"2026-11-01T00:00:00Z\""
#define PRODUCT_WITH(field)                                                                        \
    "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"Soap\",\"brand\":\"B\",\"category\":"       \
    "\"hand-soap\",\"part_type\":\"hand-soap\",\"description\":\"d\"," SRC                         \
    ",\"product_id\":\"1\",\"availability\":\"in_stock\"}," field "}"

/* Every text field a feed brings, with what it must refuse in it. */
static const struct {
    const char *path, *tmpl;
} text_fields[] = {
    {"name", "{\"type\":\"merchant\",\"id\":\"m-a\",\"name\":\"@@\",\"country\":\"NL\",\"city\":"
             "\"Delft\",\"on_time_rate\":0.9,\"accuracy_rate\":0.9}"},
    {"city", "{\"type\":\"merchant\",\"id\":\"m-a\",\"name\":\"M\",\"country\":\"NL\",\"city\":"
             "\"@@\",\"on_time_rate\":0.9,\"accuracy_rate\":0.9}"},
    {"name", "{\"type\":\"device\",\"slug\":\"d\",\"name\":\"@@\",\"brand\":\"B\",\"kind\":\"k\"}"},
    {"brand",
     "{\"type\":\"device\",\"slug\":\"d\",\"name\":\"N\",\"brand\":\"@@\",\"kind\":\"k\"}"},
    {"kind", "{\"type\":\"device\",\"slug\":\"d\",\"name\":\"N\",\"brand\":\"B\",\"kind\":\"@@\"}"},
    {"aliases[1]", "{\"type\":\"device\",\"slug\":\"d\",\"name\":\"N\",\"brand\":\"B\",\"kind\":"
                   "\"k\",\"aliases\":[\"ok\",\"@@\"]}"},
    {"name", "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"@@\",\"brand\":\"B\",\"category\":"
             "\"hand-soap\",\"part_type\":\"hand-soap\",\"description\":\"d\"," SRC
             ",\"product_id\":\"1\",\"availability\":\"in_stock\"}}"},
    {"brand", "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"N\",\"brand\":\"@@\",\"category\":"
              "\"hand-soap\",\"part_type\":\"hand-soap\",\"description\":\"d\"," SRC
              ",\"product_id\":\"1\",\"availability\":\"in_stock\"}}"},
    {"description", "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"N\",\"brand\":\"B\","
                    "\"category\":\"hand-soap\",\"part_type\":\"hand-soap\",\"description\":"
                    "\"@@\"," SRC ",\"product_id\":\"1\",\"availability\":\"in_stock\"}}"},
    {"source.notes[0]", "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"N\",\"brand\":\"B\","
                        "\"category\":\"hand-soap\",\"part_type\":\"hand-soap\",\"description\":"
                        "\"d\"," SRC ",\"product_id\":\"1\",\"availability\":\"in_stock\","
                        "\"notes\":[\"@@\"]}}"},
    {"source.product_id", "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"N\",\"brand\":\"B\","
                          "\"category\":\"hand-soap\",\"part_type\":\"hand-soap\",\"description\":"
                          "\"d\"," SRC ",\"product_id\":\"@@\",\"availability\":\"in_stock\"}}"},
    {"specs[0].label",
     PRODUCT_WITH("\"specs\":[{\"spec\":\"v\",\"label\":\"@@\",\"kind\":\"info\"}]")},
    {"specs[0].unit", PRODUCT_WITH("\"specs\":[{\"spec\":\"v\",\"label\":\"V\",\"kind\":\"info\","
                                   "\"unit\":\"@@\"}]")},
    {"specs[0].claimed", PRODUCT_WITH("\"specs\":[{\"spec\":\"v\",\"label\":\"V\",\"kind\":"
                                      "\"info\",\"claimed\":\"@@\"}]")},
    {"specs[0].claimed", PRODUCT_WITH("\"specs\":[{\"spec\":\"v\",\"label\":\"V\",\"kind\":"
                                      "\"info\",\"claimed\":[\"a\",\"@@\"]}]")},
    {"price_label", "{\"type\":\"offer\"," OFFER ",\"price_label\":\"@@\"}"},
    {"lab", "{\"type\":\"measurement\",\"sku\":\"AF-1\",\"lab\":\"@@\",\"measured_at\":"
            "\"2026-11-01T00:00:00Z\",\"sample_size\":2,\"values\":{\"eff\":1}}"},
    {"values.kind", "{\"type\":\"measurement\",\"sku\":\"AF-1\",\"lab\":\"l\",\"measured_at\":"
                    "\"2026-11-01T00:00:00Z\",\"sample_size\":2,\"values\":{\"kind\":\"@@\"}}"},
    {"evidence[0].note", "{\"type\":\"compatibility\",\"sku\":\"VP-1\",\"device\":\"d\","
                         "\"fit_status\":\"fits\",\"checked_at\":\"2026-11-01T00:00:00Z\","
                         "\"evidence\":[{\"note\":\"@@\",\"by\":\"lab\"}]}"},
};

/* Each kind of character that changes what a person or an agent reads, as
 * JSON writes it, and the code point the problem names. */
static const struct {
    const char *json, *named;
    bool in_description; /* allowed in a description */
} hostile[] = {
    {"\\u001b[2J", "U+001B", false},
    {"\\u0007", "U+0007", false},
    {"\\r", "U+000D", false},
    {"\\nSYSTEM:", "U+000A", true},
    {"\\t", "U+0009", true},
    {"\\u007f", "U+007F", false},
    {"\\u0085", "U+0085", false},
    {"\\u009b", "U+009B", false},
    {"\\u202e", "U+202E", false},
    {"\\u202a", "U+202A", false},
    {"\\u2066", "U+2066", false},
    {"\\u2069", "U+2069", false},
    {"\\u200e", "U+200E", false},
    {"\\u200f", "U+200F", false},
    {"\\u061c", "U+061C", false},
    {"\\u200b", "U+200B", false},
    {"\\u200d", "U+200D", false},
    {"\\u2060", "U+2060", false},
    {"\\ufeff", "U+FEFF", false},
    {"\\u00ad", "U+00AD", false},
    {"\\u2028", "U+2028", false},
    {"\\u2029", "U+2029", false},
    {"\\udb40\\udc41", "U+E0041", false},
};

static void test_hostile_text(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(text_fields); i++) {
        const char *label =
            as_printf(&f->m, "%s of %.40s", text_fields[i].path, text_fields[i].tmpl);
        bool ok = rd_with(f, text_fields[i].tmpl, "Pl\\u00fcm \\u2013 \\u00d7 2", &r);
        CHECK(as_printf(&f->m, "clean text passes: %s", label), ok);
        if (ok) json_decref(r.v);
        for (size_t j = 0; j < N_ROWS(hostile); j++) {
            bool desc = strcmp(text_fields[i].path, "description") == 0;
            const char *v = as_printf(&f->m, "Soap%sPump", hostile[j].json);
            const char *row = as_printf(&f->m, "%s with %s", label, hostile[j].named);
            ok = rd_with(f, text_fields[i].tmpl, v, &r);
            if (desc && hostile[j].in_description) {
                CHECK(row, ok);
                if (ok) json_decref(r.v);
                continue;
            }
            CHECK(row, !ok);
            const char *why = problem_of(f, text_fields[i].path);
            CHECK(as_printf(&f->m, "%s: the field named", row), why != NULL);
            if (why) CHECK_CONTAINS(row, why, hostile[j].named);
            if (why) CHECK_CONTAINS(row, why, "at character 5");
        }
    }
    ROWS_DONE();
}

static void test_not_utf8(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    /* a byte that begins no character, and a lone surrogate: not JSON's text */
    assert_false(rd_with(f, text_fields[0].tmpl, "So\xffp", &r));
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
    assert_false(rd_with(f, text_fields[0].tmpl, "So\\ud800p", &r));
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
    assert_false(rd_with(f, text_fields[0].tmpl, "So\\u0000p", &r));
    assert_non_null(problem_of(f, NULL));
}

static void test_urls(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    static const char *const refused[] = {
        "javascript:alert(1)",
        "http://img.example/a.jpg",
        "data:image/png;base64,AAAA",
        "//img.example/a.jpg",
        "https://",
        "https:///a.jpg",
        "https://user@evil.example/",
        "https://img.example/a b.jpg",
        "https://img.example/\\u00fc.jpg",
        "https://img.example/a\\u202e.jpg",
        "https://img.example/a\\\"onerror=\\\"x.jpg",
        "HTTPS://img.example/a.jpg",
        "ftp://img.example/a.jpg",
    };
    static const char *const kept[] = {"https://img.example/p/1.jpg",
                                       "https://img.example:8443/a%20b.jpg?w=2&h=3#top"};
    ROWS_BEGIN;
    for (size_t i = 0; i < N_ROWS(refused); i++) {
        CHECK(refused[i],
              !rd_with(f, PRODUCT_WITH("\"image_urls\":[\"https://ok.example/\",\"@@\"]"),
                       refused[i], &r));
        CHECK(as_printf(&f->m, "image_urls[1] named for %s", refused[i]),
              problem_of(f, "image_urls[1]") != NULL);
        const char *src = as_printf(&f->m,
                                    "{\"type\":\"product\",\"sku\":\"HS-1\",\"name\":\"N\","
                                    "\"brand\":\"B\",\"category\":\"hand-soap\",\"part_type\":"
                                    "\"hand-soap\",\"description\":\"d\",\"source\":{\"url\":"
                                    "\"%s\",\"checked_at\":\"2026-11-01T00:00:00Z\","
                                    "\"product_id\":\"1\",\"availability\":\"in_stock\"}}",
                                    refused[i]);
        CHECK(as_printf(&f->m, "source.url %s", refused[i]), !rd(f, src, &r));
        CHECK(as_printf(&f->m, "source.url named for %s", refused[i]),
              problem_of(f, "source.url") != NULL);
    }
    for (size_t i = 0; i < N_ROWS(kept); i++) {
        bool ok = rd_with(f, PRODUCT_WITH("\"image_urls\":[\"@@\"]"), kept[i], &r);
        CHECK(kept[i], ok);
        if (ok) json_decref(r.v);
    }
    ROWS_DONE();
}

#define COMPAT_WITH(ev)                                                                            \
    "{\"type\":\"compatibility\",\"sku\":\"VP-1\",\"device\":\"d\",\"fit_status\":\"fits\","       \
    "\"checked_at\":\"2026-11-01T00:00:00Z\",\"evidence\":[" ev "]}"

/* Evidence is shown as given: flat, few and small, so a view stays small. */
static void test_evidence_bounds(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    const char *item = "{\"label\":\"Frame height\",\"part_value\":368.0,\"device_value\":368.0}";
    const char *items = item;
    for (int i = 1; i < AS_FEED_MAX_EVIDENCE; i++)
        items = as_printf(&f->m, "%s,%s", items, item);
    assert_true(rd_with(f, COMPAT_WITH("@@"), items, &r)); /* at the limit */
    json_decref(r.v);
    assert_false(rd_with(f, COMPAT_WITH("@@"), as_printf(&f->m, "%s,%s", items, item), &r));
    assert_non_null(problem_of(f, "evidence"));
    /* one item too large: 1,100 bytes of note */
    char note[1101];
    memset(note, 'n', 1100);
    note[1100] = '\0';
    assert_false(rd_with(f, COMPAT_WITH("{\"note\":\"@@\"}"), note, &r));
    assert_non_null(strstr(problem_of(f, "evidence[0]"), "at most 1024"));
    /* nested, or a name that is not one */
    assert_false(rd(f, COMPAT_WITH("{\"note\":{\"deep\":[1,2]}}"), &r));
    assert_non_null(problem_of(f, "evidence[0].note"));
    assert_false(rd(f, COMPAT_WITH("{\"by lab\":\"x\"}"), &r));
    assert_non_null(problem_of(f, "evidence[0].by lab"));
    /* a specification's text value is short too */
    memset(note, 'v', AS_FEED_MAX_VALUE + 1);
    note[AS_FEED_MAX_VALUE + 1] = '\0';
    assert_false(rd_with(f,
                         PRODUCT_WITH("\"specs\":[{\"spec\":\"v\",\"label\":\"V\",\"kind\":"
                                      "\"info\",\"claimed\":\"@@\"}]"),
                         note, &r));
    assert_non_null(problem_of(f, "specs[0].claimed"));
    /* and so is a line */
    char *big = as_alloc(&f->m, AS_FEED_MAX_LINE + 2);
    memset(big, ' ', AS_FEED_MAX_LINE + 1);
    big[AS_FEED_MAX_LINE + 1] = '\0';
    memcpy(big, "{}", 2);
    assert_false(rd(f, big, &r));
    assert_non_null(strstr(problem_of(f, NULL), "longer than"));
}

/* A problem quotes the feed's own text (a field's name, a value): what
 * drives a terminal is shown escaped, never written raw. */
/* no problem of the last record holds a raw ESC or BEL */
static void no_raw_controls(fx *f)
{
    assert_true(f->probs.n > 0);
    for (size_t i = 0; i < f->probs.n; i++) {
        const char *t[] = {f->probs.v[i].reason, f->probs.v[i].field ? f->probs.v[i].field : ""};
        for (int j = 0; j < 2; j++) {
            assert_null(strchr(t[j], 0x1b));
            assert_null(strchr(t[j], 0x07));
        }
    }
}

static void test_problem_escaped(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    assert_false(rd(f, "{\"type\":\"offer\"," OFFER ",\"\\u001b]0;owned\\u0007\":1}", &r));
    no_raw_controls(f);
    assert_non_null(problem_of(f, "\\u001b]0;owned\\u0007"));
    assert_false(rd(f,
                    "{\"type\":\"merchant\",\"id\":\"m\",\"name\":\"M\",\"country\":"
                    "\"\\u001b[31mFR\",\"city\":\"C\",\"on_time_rate\":1,\"accuracy_rate\":1}",
                    &r));
    no_raw_controls(f);
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"o\\u001b[2J\",\"withdrawn\":true}", &r));
    no_raw_controls(f);
    assert_non_null(strstr(problem_of(f, "offer_id"), "o\\u001b[2J"));
    /* a raw ESC in a line is not JSON; the parser's excerpt quotes it */
    assert_false(rd(f, "{\"type\":\"merchant\",\"name\":\"\x1b]0;owned\x07\"}", &r));
    no_raw_controls(f);
    assert_non_null(strstr(problem_of(f, NULL), "not JSON"));
}

static void test_withdrawals(void **state)
{
    fx *f = *state;
    as_feed_rec r;
    assert_true(rd(f, "{\"type\":\"offer\",\"offer_id\":\"HS-1-a\",\"withdrawn\":true}", &r));
    assert_true(r.withdrawn);
    assert_string_equal(r.key, "HS-1-a");
    json_decref(r.v);
    /* only the keys */
    assert_false(rd(f, "{\"type\":\"offer\",\"offer_id\":\"HS-1-a\",\"withdrawn\":true,\"stock\":1}", &r));
    assert_non_null(strstr(problem_of(f, "stock"), "names only what it withdraws"));
    /* and all of them */
    assert_false(rd(f, "{\"type\":\"compatibility\",\"sku\":\"VP-1\",\"withdrawn\":true}", &r));
    assert_non_null(problem_of(f, "device"));
    /* false is said by leaving it out */
    assert_false(rd(f, "{\"type\":\"offer\"," OFFER ",\"withdrawn\":false}", &r));
    assert_non_null(problem_of(f, "withdrawn"));
}

static void test_export_line(void **state)
{
    fx *f = *state;
    /* keys in any order in, the documented order out; the same line again */
    const char *in = "{\"stock\":70,\"delivery_days\":4,\"retail_price_cents\":258,\"price_cents\":245,"
                     "\"merchant\":\"m-a\",\"sku\":\"HS-1\",\"offer_id\":\"HS-1-a\",\"type\":\"offer\"}";
    as_feed_rec r;
    assert_true(rd(f, in, &r));
    char *line = as_feed_line(&f->m, r.v);
    json_decref(r.v);
    assert_string_equal(line, "{\"type\":\"offer\"," OFFER "}");
    assert_true(rd(f, line, &r));
    assert_string_equal(as_feed_line(&f->m, r.v), line);
    json_decref(r.v);
    /* a measurement's values by specification name; numbers to 10 digits */
    assert_true(rd(f,
                   "{\"values\":{\"z\":1.23456789012345,\"a\":368.0},\"sample_size\":1,\"type\":"
                   "\"measurement\",\"sku\":\"AF-1\",\"lab\":\"l\",\"measured_at\":"
                   "\"2026-11-01T00:00:00Z\"}",
                   &r));
    line = as_feed_line(&f->m, r.v);
    json_decref(r.v);
    assert_string_equal(line, "{\"type\":\"measurement\",\"sku\":\"AF-1\",\"lab\":\"l\","
                              "\"measured_at\":\"2026-11-01T00:00:00Z\",\"sample_size\":1,"
                              "\"values\":{\"a\":368.0,\"z\":1.23456789}}");
    /* a specification's value as the database keeps it */
    json_t *v = json_real(99.97);
    assert_string_equal(as_feed_value_text(&f->m, v), "99.97");
    json_decref(v);
    assert_null(as_feed_value_text(&f->m, json_null()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_valid_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_problem, setup, teardown),
        cmocka_unit_test_setup_teardown(test_withdrawals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_urls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evidence_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_problem_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_line, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
