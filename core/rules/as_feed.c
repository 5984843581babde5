/* The catalogue feed's records, each on its own (as_feed.h): one table of
 * fields per record type, which both checks a record and orders an exported
 * one, so the two cannot disagree. */
#include "as_feed.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "as_catalog.h"
#include "as_util.h"

typedef enum {
    F_TYPE,     /* the record's type: checked first, written first */
    F_ID,       /* [A-Za-z0-9._-], lo..hi characters */
    F_STR,      /* non-empty text of one line (as_feed_text_problem), at most hi bytes */
    F_PARA,     /* the same, with line breaks and tabs (a description) */
    F_URL,      /* an https URL with a host (as_feed_url_problem), at most hi bytes */
    F_URLS,     /* an array of them */
    F_INT,      /* a whole number, lo..hi */
    F_NUM,      /* a number, lo..hi */
    F_NUMN,     /* a number, lo..hi, or null */
    F_BOOL,     /* true (withdrawn, demo) */
    F_TIME,     /* an ISO 8601 UTC time, 2026-11-20T21:45:00Z */
    F_STRS,     /* an array of texts of one line */
    F_INTS,     /* an array of whole numbers >= 0 */
    F_STRN,     /* text or null */
    F_VALUE,    /* a specification's value: text, number, boolean, null, or an array of them */
    F_VALUES,   /* an object of specification -> value */
    F_OBJ,      /* an object with fields of its own (sub) */
    F_OBJS,     /* an array of objects with fields of their own (sub) */
    F_EVIDENCE, /* an array of flat objects, kept as given (evidence): AS_FEED_MAX_EVIDENCE */
} field_kind;

typedef struct feed_field {
    const char *name;
    field_kind kind;
    bool required; /* in a record that is not a withdrawal */
    bool key;      /* part of the record's identity: also in a withdrawal */
    double lo, hi;
    const struct feed_field *sub; /* F_OBJ, F_OBJS: their fields, up to a NULL name */
    const char *const *choices; /* F_STR: one of these */
} feed_field;

static const char *const countries[] = {"NL", "BE", "DE", NULL};
static const char *const availabilities[] = {"in_stock", "out_of_stock", NULL};
static const char *const spec_kinds[] = {"categorical", "performance", "info", NULL};
static const char *const fit_statuses[] = {"fits", "does_not_fit", NULL};

#define END {NULL, F_TYPE, false, false, 0, 0, NULL, NULL}
#define TYPE {"type", F_TYPE, true, true, 0, 0, NULL, NULL}
#define WITHDRAWN {"withdrawn", F_BOOL, false, true, 0, 0, NULL, NULL}

static const feed_field merchant_f[] = {
    TYPE,
    {"id", F_ID, true, true, 1, 64, NULL, NULL},
    {"name", F_STR, true, false, 0, 200, NULL, NULL},
    {"country", F_STR, true, false, 0, 2, NULL, countries},
    {"city", F_STR, true, false, 0, 200, NULL, NULL},
    {"on_time_rate", F_NUM, true, false, 0, 1, NULL, NULL},
    {"accuracy_rate", F_NUM, true, false, 0, 1, NULL, NULL},
    WITHDRAWN,
    END};

static const feed_field device_f[] = {TYPE,
                                 {"slug", F_ID, true, true, 1, 64, NULL, NULL},
                                 {"name", F_STR, true, false, 0, 200, NULL, NULL},
                                 {"brand", F_STR, true, false, 0, 100, NULL, NULL},
                                 {"kind", F_STR, true, false, 0, 64, NULL, NULL},
                                 {"aliases", F_STRS, false, false, 0, 100, NULL, NULL},
                                 WITHDRAWN,
                                 END};

static const feed_field source_f[] = {
    {"url", F_URL, true, false, 0, 2000, NULL, NULL},
    {"notes", F_STRS, false, false, 0, 1000, NULL, NULL},
    {"checked_at", F_TIME, true, false, 0, 0, NULL, NULL},
    {"product_id", F_STR, true, false, 0, 100, NULL, NULL},
    {"availability", F_STR, true, false, 0, 20, NULL, availabilities},
    END};

static const feed_field spec_f[] = {{"spec", F_ID, true, false, 1, 64, NULL, NULL},
                               {"label", F_STR, true, false, 0, 200, NULL, NULL},
                               {"kind", F_STR, true, false, 0, 20, NULL, spec_kinds},
                               {"unit", F_STRN, false, false, 0, 20, NULL, NULL},
                               {"claimed", F_VALUE, false, false, 0, 0, NULL, NULL},
                               {"tolerance_pct", F_NUM, false, false, 0, 100, NULL, NULL},
                               END};

static const feed_field performance_f[] = {
    {"on_time_rate_90d", F_NUMN, false, false, 0, 1, NULL, NULL},
    {"return_rate", F_NUM, false, false, 0, 1, NULL, NULL},
    {"wrong_item_rate", F_NUM, false, false, 0, 1, NULL, NULL},
    {"agent_orders_90d", F_INT, false, false, 0, 1e9, NULL, NULL},
    {"orders_per_week", F_INTS, false, false, 0, 1e9, NULL, NULL},
    END};

static const feed_field product_f[] = {
    TYPE,
    {"sku", F_ID, true, true, 3, 20, NULL, NULL},
    {"gtin", F_STR, false, false, 0, 14, NULL, NULL},
    {"name", F_STR, true, false, 0, 300, NULL, NULL},
    {"brand", F_STR, true, false, 0, 100, NULL, NULL},
    {"category", F_STR, true, false, 0, 64, NULL, NULL},
    {"part_type", F_STR, true, false, 0, 64, NULL, NULL},
    {"description", F_PARA, true, false, 0, 10000, NULL, NULL},
    {"image_urls", F_URLS, false, false, 0, 2000, NULL, NULL},
    {"source", F_OBJ, true, false, 0, 0, source_f, NULL},
    {"specs", F_OBJS, false, false, 0, 0, spec_f, NULL},
    {"performance", F_OBJ, false, false, 0, 0, performance_f, NULL},
    {"demo", F_BOOL, false, false, 0, 0, NULL, NULL},
    WITHDRAWN,
    END};

static const feed_field offer_f[] = {TYPE,
                                {"offer_id", F_ID, true, true, 1, 64, NULL, NULL},
                                {"sku", F_ID, true, false, 3, 20, NULL, NULL},
                                {"merchant", F_ID, true, false, 1, 64, NULL, NULL},
                                {"price_cents", F_INT, true, false, 1, 100000000, NULL, NULL},
                                {"retail_price_cents", F_INT, true, false, 1, 100000000, NULL, NULL},
                                {"price_label", F_STR, false, false, 0, 200, NULL, NULL},
                                {"delivery_days", F_INT, true, false, 0, 365, NULL, NULL},
                                {"stock", F_INT, true, false, 0, 1000000, NULL, NULL},
                                {"stock_as_of", F_TIME, false, false, 0, 0, NULL, NULL},
                                WITHDRAWN,
                                END};

static const feed_field measurement_f[] = {TYPE,
                                      {"sku", F_ID, true, true, 3, 20, NULL, NULL},
                                      {"lab", F_STR, true, false, 0, 100, NULL, NULL},
                                      {"measured_at", F_TIME, true, false, 0, 0, NULL, NULL},
                                      {"sample_size", F_INT, true, false, 1, 1000000, NULL, NULL},
                                      {"values", F_VALUES, true, false, 0, 0, NULL, NULL},
                                      WITHDRAWN,
                                      END};

static const feed_field compat_f[] = {TYPE,
                                      {"sku", F_ID, true, true, 3, 20, NULL, NULL},
                                      {"device", F_ID, true, true, 1, 64, NULL, NULL},
                                      {"fit_status", F_STR, true, false, 0, 20, NULL, fit_statuses},
                                      {"checked_at", F_TIME, true, false, 0, 0, NULL, NULL},
                                      {"evidence", F_EVIDENCE, false, false, 0, 0, NULL, NULL},
                                      WITHDRAWN,
                                      END};

/* Each type's fields, by as_feed_type (its name: as_feed_type_name). */
static const struct {
    const feed_field *fields;
} types[AS_FEED_N] = {
    {merchant_f}, {device_f}, {product_f}, {offer_f}, {measurement_f}, {compat_f},
};

/* ---- text ---- */

const char *as_feed_text_problem(as_mem *m, const char *s, size_t n, bool lines)
{
    size_t at = 1;
    for (size_t i = 0, k; i < n; i += k, at++) {
        uint32_t cp = 0;
        if (!(k = as_utf8_next(s + i, n - i, &cp)) && s[i]) return "is not UTF-8";
        if (!k) k = 1; /* NUL: a control character */
        if (lines && (cp == '\n' || cp == '\t')) continue;
        const char *what = as_text_hidden(cp);
        if (!what) continue;
        const char *hint = cp == '\r' || cp == '\n' ? lines ? "; a line break is \\n alone"
                                                            : "; only a description has line breaks"
                                                    : "";
        return as_printf(m,
                         "has U+%04X, %s, at character %zu: feed text holds no controls nor "
                         "invisible characters (docs/catalogue.md, \"Text\")%s",
                         (unsigned)cp, what, at, hint);
    }
    return NULL;
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == ':';
}

const char *as_feed_url_problem(const char *s)
{
    if (strncmp(s, "https://", 8) != 0) return "must be an https:// URL";
    const char *host = s + 8, *end = host + strcspn(host, "/?#");
    if (end == host || *host == ':' || *host == '.') return "must name a host after https://";
    for (const char *c = host; c < end; c++)
        if (!host_char(*c))
            return "must have a host of A-Z a-z 0-9 . - and a :port (no user@; a name in "
                   "punycode)";
    for (const unsigned char *c = (const unsigned char *)end; *c; c++)
        if (*c <= ' ' || *c >= 0x7f || strchr("\"<>\\^`{|}", *c))
            return "must be printable ASCII without spaces, quotes, <, >, \\, ^, `, {, |, } "
                   "(percent-encode the rest)";
    return NULL;
}

/* ---- checking ---- */

/* Where a field is, built into text only for a problem: checking the
 * fields of a good record allocates nothing. */
typedef struct fpath {
    const struct fpath *up;
    const char *key; /* NULL: element idx of up's array */
    size_t idx;
} fpath;

static char *path_text(as_mem *m, const fpath *p)
{
    if (!p) return NULL;
    char *up = path_text(m, p->up);
    if (!p->key) return as_printf(m, "%s[%zu]", up ? up : "", p->idx);
    return up ? as_printf(m, "%s.%s", up, p->key) : as_strdup(m, p->key);
}

typedef struct checker {
    as_mem *m;
    size_t line;
    as_feed_problems *probs;
    bool ok;
} checker;

static void bad(checker *k, const fpath *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(checker *k, const fpath *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *reason = as_vprintf(k->m, fmt, ap);
    va_end(ap);
    as_feed_problem_add(k->probs, k->line, path_text(k->m, path), reason);
    k->ok = false;
}

static bool id_chars(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

static bool scalar(json_t *v)
{
    return json_is_string(v) || json_is_number(v) || json_is_boolean(v) || json_is_null(v);
}

/* A text of one line, at most max bytes: NULL, or what is wrong with it. */
static const char *line_problem(as_mem *m, json_t *v, size_t max)
{
    size_t n = json_string_length(v);
    if (!n || n > max || strlen(json_string_value(v)) != n)
        return as_printf(m, "must be a string of 1 to %zu bytes without NUL", max);
    return as_feed_text_problem(m, json_string_value(v), n, false);
}

static bool spec_scalar(as_mem *m, json_t *v, const char **why)
{
    if (!scalar(v)) return false;
    if (json_is_string(v)) *why = line_problem(m, v, AS_FEED_MAX_VALUE);
    return !*why;
}

/* A specification's value; *why says what is wrong with a text in it. */
static bool spec_value(as_mem *m, json_t *v, const char **why)
{
    *why = NULL;
    if (!json_is_array(v)) return spec_scalar(m, v, why);
    if (json_array_size(v) > AS_FEED_MAX_ITEMS) return false;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) if (json_is_null(x) || !spec_scalar(m, x, why)) return false;
    return true;
}

static const char *kind_words(field_kind k)
{
    switch (k) {
    case F_ID:
    case F_STR:
    case F_TIME: return "a string";
    case F_STRN: return "a string or null";
    case F_INT: return "a whole number";
    case F_NUM: return "a number";
    case F_NUMN: return "a number or null";
    case F_BOOL: return "true";
    case F_STRS: return "an array of strings";
    case F_INTS: return "an array of whole numbers";
    case F_VALUE: return "a string, number, boolean, null or an array of them";
    case F_VALUES: return "an object of specification -> value";
    case F_OBJ: return "an object";
    case F_OBJS:
    case F_EVIDENCE:
        return "an array of objects";
    case F_PARA:
        return "a string";
    case F_URL:
        return "an https URL";
    case F_URLS:
        return "an array of https URLs";
    default: return "?";
    }
}

static void check_fields(checker *k, json_t *o, const feed_field *fs, const fpath *at, bool withdrawal);

#define VALUE_WORDS "must be a string, number, boolean, null or an array of them"

/* An evidence item is shown as given: flat, its texts clean, and small, so a
 * product view stays small (docs/catalogue.md, "Limits"). */
static void check_evidence(checker *k, json_t *o, const fpath *path)
{
    char *enc = json_dumps(o, JSON_COMPACT);
    size_t n = enc ? strlen(enc) : 0;
    free(enc);
    if (n > AS_FEED_MAX_EVIDENCE_BYTES) {
        bad(k, path, "is %zu bytes as JSON: an evidence item is at most %d", n,
            AS_FEED_MAX_EVIDENCE_BYTES);
        return;
    }
    const char *key;
    json_t *x;
    json_object_foreach(o, key, x)
    {
        fpath at = {path, key, 0};
        const char *why = NULL;
        if (!*key || strlen(key) > 64 || !id_chars(key))
            why = "is not a name of A-Z a-z 0-9 . _ - (1 to 64)";
        else if (!scalar(x))
            why = "must be a string, number, boolean or null";
        else if (json_is_string(x))
            why = line_problem(k->m, x, AS_FEED_MAX_EVIDENCE_BYTES);
        if (why) bad(k, &at, "%s", why);
    }
}

static void check_field(checker *k, const feed_field *f, json_t *v, const fpath *path)
{
    switch (f->kind) {
    case F_TYPE: return;
    case F_ID: {
        const char *s = json_string_value(v);
        size_t n = s ? strlen(s) : 0;
        if (!s)
            bad(k, path, "must be a string");
        else if (n < (size_t)f->lo || n > (size_t)f->hi || !id_chars(s))
            bad(k, path, "must be %.0f to %.0f characters of A-Z a-z 0-9 . _ -, not \"%s\"", f->lo,
                f->hi, n > 80 ? "(too long)" : s);
        return;
    }
    case F_STR:
    case F_STRN:
    case F_PARA:
    case F_URL: {
        if (f->kind == F_STRN && json_is_null(v)) return;
        const char *s = json_string_value(v);
        if (!s) {
            bad(k, path, "must be %s", kind_words(f->kind));
            return;
        }
        size_t n = json_string_length(v);
        if (!n || n > (size_t)f->hi || strlen(s) != n) {
            bad(k, path, "must be a string of 1 to %.0f bytes without NUL", f->hi);
            return;
        }
        const char *why = f->kind == F_URL ? as_feed_url_problem(s)
                                           : as_feed_text_problem(k->m, s, n, f->kind == F_PARA);
        if (why) {
            bad(k, path, "%s", why);
            return;
        }
        if (f->choices) {
            bool hit = false;
            for (size_t i = 0; f->choices[i] && !hit; i++)
                hit = strcmp(f->choices[i], s) == 0;
            if (!hit) {
                const char *all = "";
                for (size_t i = 0; f->choices[i]; i++)
                    all = as_printf(k->m, "%s%s%s", all, i ? ", " : "", f->choices[i]);
                bad(k, path, "must be one of %s, not \"%s\"", all, n > 80 ? "(too long)" : s);
            }
        }
        return;
    }
    case F_INT:
        if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)f->lo ||
            json_integer_value(v) > (json_int_t)f->hi)
            bad(k, path, "must be a whole number from %.0f to %.0f", f->lo, f->hi);
        return;
    case F_NUM:
    case F_NUMN:
        if (f->kind == F_NUMN && json_is_null(v)) return;
        if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
            json_number_value(v) < f->lo || json_number_value(v) > f->hi)
            bad(k, path, "must be a number from %g to %g%s", f->lo, f->hi,
                f->kind == F_NUMN ? ", or null" : "");
        return;
    case F_BOOL:
        if (!json_is_boolean(v)) bad(k, path, "must be true or false");
        return;
    case F_TIME: {
        int64_t t;
        const char *s = json_string_value(v);
        if (!s || !as_time_parse(s, &t))
            bad(k, path, "must be a UTC time such as 2026-11-20T21:45:00Z");
        return;
    }
    case F_STRS:
    case F_URLS:
    case F_INTS: {
        if (!json_is_array(v) || json_array_size(v) > AS_FEED_MAX_ITEMS) {
            bad(k, path, "must be %s (at most %d)", kind_words(f->kind), AS_FEED_MAX_ITEMS);
            return;
        }
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            fpath at = {path, NULL, i};
            if (f->kind == F_INTS) {
                if (!json_is_integer(x) || json_integer_value(x) < 0) {
                    bad(k, &at, "must be a whole number >= 0");
                    return;
                }
                continue;
            }
            const char *why = json_is_string(x) ? line_problem(k->m, x, (size_t)f->hi)
                                                : "must be a non-empty string";
            if (!why && f->kind == F_URLS) why = as_feed_url_problem(json_string_value(x));
            if (why) {
                bad(k, &at, "%s", why);
                return;
            }
        }
        return;
    }
    case F_VALUE: {
        const char *why;
        if (!spec_value(k->m, v, &why)) bad(k, path, "%s", why ? why : VALUE_WORDS);
        return;
    }
    case F_VALUES: {
        if (!json_is_object(v) || !json_object_size(v) ||
            json_object_size(v) > AS_FEED_MAX_ITEMS) {
            bad(k, path, "must be an object of 1 to %d specification -> value", AS_FEED_MAX_ITEMS);
            return;
        }
        const char *key;
        json_t *x;
        json_object_foreach(v, key, x)
        {
            fpath at = {path, key, 0}, *p = &at;
            const char *why;
            if (!*key || strlen(key) > 64 || !id_chars(key))
                bad(k, p, "is not a specification name (A-Z a-z 0-9 . _ -)");
            else if (!spec_value(k->m, x, &why))
                bad(k, p, "%s", why ? why : VALUE_WORDS);
        }
        return;
    }
    case F_OBJ:
        if (!json_is_object(v))
            bad(k, path, "must be an object");
        else
            check_fields(k, v, f->sub, path, false);
        return;
    case F_OBJS:
    case F_EVIDENCE: {
        size_t max = f->kind == F_OBJS ? AS_FEED_MAX_ITEMS : AS_FEED_MAX_EVIDENCE;
        if (!json_is_array(v) || json_array_size(v) > max) {
            bad(k, path, "must be an array of at most %zu objects", max);
            return;
        }
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            fpath at = {path, NULL, i}, *p = &at;
            if (!json_is_object(x))
                bad(k, p, "must be an object");
            else if (f->kind == F_OBJS)
                check_fields(k, x, f->sub, p, false);
            else
                check_evidence(k, x, p);
        }
        return;
    }
    }
}

static void check_fields(checker *k, json_t *o, const feed_field *fs, const fpath *at, bool withdrawal)
{
    /* every key known: a misspelt field is an error, not a silent default */
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        const feed_field *f = fs;
        while (f->name && strcmp(f->name, key) != 0)
            f++;
        fpath path = {at, key, 0};
        if (!f->name)
            bad(k, &path, "is not a field of this record");
        else if (withdrawal && !f->key)
            bad(k, &path, "a withdrawal names only what it withdraws");
        else
            check_field(k, f, v, &path);
    }
    for (const feed_field *f = fs; f->name; f++)
        if ((withdrawal ? f->key && f->kind != F_BOOL : f->required) && !json_object_get(o, f->name))
        {
            fpath missing = {at, f->name, 0};
            bad(k, &missing, "is missing");
        }
}

/* A problem with a field of the record itself. */
#define BAD_AT(k, name, ...)                                                                       \
    do {                                                                                           \
        fpath at_ = {NULL, name, 0};                                                               \
        bad(k, &at_, __VA_ARGS__);                                                                 \
    } while (0)

/* What the tables cannot say. */
static void check_more(checker *k, as_feed_type t, json_t *o)
{
    if (t == AS_FEED_PRODUCT) {
        const char *cat = json_string_value(json_object_get(o, "category"));
        const char *pt = json_string_value(json_object_get(o, "part_type"));
        if (cat && !as_category_label(cat)) BAD_AT(k, "category", "is not a category of the API: \"%s\"", cat);
        if (pt && !as_part_type_known(pt)) BAD_AT(k, "part_type", "is not a part type of the API: \"%s\"", pt);
        const char *gtin = json_string_value(json_object_get(o, "gtin"));
        if (gtin) {
            size_t n = strlen(gtin);
            bool digits = n >= 8;
            for (size_t i = 0; i < n && digits; i++)
                digits = gtin[i] >= '0' && gtin[i] <= '9';
            if (!digits) BAD_AT(k, "gtin", "must be 8 to 14 digits");
        }
        /* a specification once per product */
        json_t *specs = json_object_get(o, "specs");
        for (size_t i = 0; i < json_array_size(specs); i++)
            for (size_t j = 0; j < i; j++) {
                const char *a = json_string_value(json_object_get(json_array_get(specs, i), "spec"));
                const char *b = json_string_value(json_object_get(json_array_get(specs, j), "spec"));
                if (a && b && strcmp(a, b) == 0) {
                    fpath specs_at = {NULL, "specs", 0}, item = {&specs_at, NULL, i},
                          spec = {&item, "spec", 0};
                    bad(k, &spec, "\"%s\" is also specs[%zu]", a, j);
                }
            }
    }
    if (t == AS_FEED_OFFER) {
        json_int_t price = json_integer_value(json_object_get(o, "price_cents"));
        json_int_t retail = json_integer_value(json_object_get(o, "retail_price_cents"));
        if (price > 0 && retail > 0 && price > retail)
            BAD_AT(k, "price_cents", "the agent price (%lld) is above the retail price (%lld)",
                (long long)price, (long long)retail);
    }
}

bool as_feed_read(as_mem *m, const char *text, size_t len, size_t line, as_feed_rec *out,
                  as_feed_problems *probs)
{
    checker k = {m, line, probs, true};
    memset(out, 0, sizeof(*out));
    out->line = line;
    if (len > AS_FEED_MAX_LINE) {
        bad(&k, NULL, "the line is longer than %d bytes", AS_FEED_MAX_LINE);
        return false;
    }
    json_error_t e;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!o) {
        bad(&k, NULL, "not JSON: %s (column %d)", as_utf8_clean(m, e.text), e.column);
        return false;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        bad(&k, NULL, "must be a JSON object");
        return false;
    }
    const char *type = json_string_value(json_object_get(o, "type"));
    int t = -1;
    for (int i = 0; type && i < AS_FEED_N && t < 0; i++)
        if (strcmp(as_feed_type_name((as_feed_type)i), type) == 0) t = i;
    if (t < 0) {
        BAD_AT(&k, "type",
            "must be one of merchant, device, product, offer, measurement, compatibility%s",
            type ? "" : " (missing)");
        json_decref(o);
        return false;
    }
    json_t *w = json_object_get(o, "withdrawn");
    bool withdrawal = json_is_true(w);
    if (w && !json_is_boolean(w)) BAD_AT(&k, "withdrawn", "must be true or false");
    if (json_is_false(w)) BAD_AT(&k, "withdrawn", "false is the same as leaving it out: leave it out");
    check_fields(&k, o, types[t].fields, NULL, withdrawal);
    if (k.ok && !withdrawal) check_more(&k, (as_feed_type)t, o);
    if (!k.ok) {
        json_decref(o);
        return false;
    }
    out->type = (as_feed_type)t;
    out->withdrawn = withdrawal;
    out->v = o;
    static const char *const key_of[AS_FEED_N] = {"id", "slug", "sku", "offer_id", "sku", "sku"};
    out->key = json_string_value(json_object_get(o, key_of[t]));
    if (t == AS_FEED_COMPAT) out->key2 = json_string_value(json_object_get(o, "device"));
    return true;
}

/* ---- writing ---- */

static json_t *ordered(json_t *o, const feed_field *fs)
{
    json_t *out = json_object();
    for (const feed_field *f = fs; f->name; f++) {
        json_t *v = json_object_get(o, f->name);
        if (!v) continue;
        if (f->kind == F_OBJ) {
            json_object_set_new(out, f->name, ordered(v, f->sub));
        } else if (f->kind == F_OBJS) {
            json_t *a = json_array();
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) json_array_append_new(a, ordered(x, f->sub));
            json_object_set_new(out, f->name, a);
        } else if (f->kind == F_VALUES) {
            /* specifications in name order: a measurement's values have no order of their own */
            json_t *sorted = json_object();
            const char **keys = calloc(json_object_size(v) + 1, sizeof(char *));
            size_t n = 0;
            const char *key;
            json_t *x;
            json_object_foreach(v, key, x) if (keys) keys[n++] = key;
            for (size_t i = 1; keys && i < n; i++)
                for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
                    const char *s = keys[j];
                    keys[j] = keys[j - 1];
                    keys[j - 1] = s;
                }
            for (size_t i = 0; keys && i < n; i++)
                json_object_set(sorted, keys[i], json_object_get(v, keys[i]));
            free(keys);
            json_object_set_new(out, f->name, sorted);
        } else {
            json_object_set(out, f->name, v);
        }
    }
    return out;
}

char *as_feed_line(as_mem *m, json_t *rec)
{
    const char *type = json_string_value(json_object_get(rec, "type"));
    const feed_field *fs = NULL;
    for (int i = 0; type && i < AS_FEED_N && !fs; i++)
        if (strcmp(as_feed_type_name((as_feed_type)i), type) == 0) fs = types[i].fields;
    if (!fs) return NULL;
    json_t *o = ordered(rec, fs);
    char *s = json_dumps(o, AS_FEED_JSON_FLAGS);
    json_decref(o);
    if (!s) return NULL;
    char *r = as_strdup(m, s);
    free(s);
    return r;
}
