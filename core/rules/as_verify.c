#include "as_verify.h"

#include <math.h>
#include <string.h>

#include "as_json_value.h"
#include "as_util.h"

const char *as_num_text(as_mem *m, double v)
{
    char t[AS_FIXED_TEXT];
    if (as_fixed_text(t, v, 2)) return as_strdup(m, t);
    double r = as_round(v, 2);
    if (r == floor(r) && fabs(r) < 1e15) return as_printf(m, "%.0f", r);
    char *s = as_printf(m, "%.2f", r);
    size_t n = strlen(s);
    while (n && s[n - 1] == '0')
        s[--n] = '\0';
    return s;
}

static const char *value_text(as_mem *m, const json_t *v)
{
    if (!v || json_is_null(v)) return "none";
    if (json_is_true(v)) return "yes";
    if (json_is_false(v)) return "no";
    if (json_is_number(v)) return as_num_text(m, json_number_value(v));
    if (json_is_string(v)) return as_strdup(m, json_string_value(v));
    if (json_is_array(v)) {
        as_buf b;
        as_buf_init(&b, m);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) as_buf_printf(&b, "%s%s", i ? ", " : "", value_text(m, e));
        return i ? as_buf_str(&b) : "none";
    }
    return "?";
}

const char *as_json_text(as_mem *m, const char *json)
{
    if (!json) return "none";
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    const char *s = value_text(m, v);
    json_decref(v);
    return s;
}

static bool array_contains(const json_t *arr, const json_t *x)
{
    size_t i;
    json_t *y;
    json_array_foreach(arr, i, y) if (json_equal(x, y)) return true;
    return false;
}

/* Categorical equality; arrays compare as sets (each side within the other). */
static bool same_value(const json_t *a, const json_t *b)
{
    if (json_is_array(a) && json_is_array(b)) {
        size_t i;
        json_t *x;
        json_array_foreach(a, i, x) if (!array_contains(b, x)) return false;
        json_array_foreach(b, i, x) if (!array_contains(a, x)) return false;
        return true;
    }
    if (json_is_number(a) && json_is_number(b))
        return fabs(json_number_value(a) - json_number_value(b)) < 1e-9;
    return json_equal(a, b);
}

/* The parts joined into one text on m (printf for "%s %s" was most of a
 * verification row's cost). */
static const char *join(as_mem *m, const char *const *parts, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(parts[i]);
    char *out = as_alloc_raw(m, total + 1), *at = out;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(parts[i]);
        memcpy(at, parts[i], len);
        at += len;
    }
    *at = '\0';
    return out;
}

#define JOIN(m, ...)                                                                               \
    join(m, (const char *const[]){__VA_ARGS__},                                                    \
         sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static const char *with_unit(as_mem *m, const char *v, const char *unit)
{
    return unit && *unit ? JOIN(m, v, " ", unit) : v;
}

/* A claimed or measured value as the verification reads it: as jansson reads
 * it (as_json_value_read), without a json_t when both values are scalars
 * (null, true, false, a number, a string); when either is an array, an
 * object or text jansson refuses, both are parsed by jansson. At 1,000,000
 * products the search index's build evaluates 3,000,000 rows, and json_loads
 * was a third of it. */
static bool scalar(const as_json_value *v)
{
    return v->kind != AS_JSON_ABSENT && v->kind != AS_JSON_OTHER;
}

static const char *scalar_text(as_mem *m, const as_json_value *v)
{
    switch (v->kind) {
    case AS_JSON_TRUE:
        return "yes";
    case AS_JSON_FALSE:
        return "no";
    case AS_JSON_NUMBER:
        return as_num_text(m, v->number);
    case AS_JSON_STRING:
        return v->text;
    default:
        return "none";
    }
}

/* same_value of two scalars (json_equal: values of two kinds differ). */
static bool same_scalar(const as_json_value *a, const as_json_value *b)
{
    if (a->kind != b->kind) return false;
    if (a->kind == AS_JSON_NUMBER) return fabs(a->number - b->number) < 1e-9;
    if (a->kind == AS_JSON_STRING) return strcmp(a->text, b->text) == 0;
    return true;
}

void as_spec_eval(as_mem *m, const as_spec_row *row, bool product_measured, as_row_eval *out)
{
    memset(out, 0, sizeof(*out));
    out->ok = true;
    out->unclaimed = row->claimed == NULL;
    if (!product_measured) {
        out->delta = out->detail = "not measured";
        return;
    }
    if (out->unclaimed) {
        out->delta = out->detail = "";
        out->measured = row->measured != NULL;
        return;
    }
    if (!row->measured) {
        out->delta = out->detail = "not measured";
        return;
    }
    out->measured = true;
    as_json_value cs = as_json_value_read(m, row->claimed),
                  ms = as_json_value_read(m, row->measured);
    json_t *c = NULL, *v = NULL;
    bool scalars = scalar(&cs) && scalar(&ms);
    if (!scalars) {
        c = json_loads(row->claimed, JSON_DECODE_ANY, NULL);
        v = json_loads(row->measured, JSON_DECODE_ANY, NULL);
    }
    const char *ctext = with_unit(m, scalars ? scalar_text(m, &cs) : value_text(m, c), row->unit);
    const char *mtext = with_unit(m, scalars ? scalar_text(m, &ms) : value_text(m, v), row->unit);
    bool perf = strcmp(row->kind, "performance") == 0, info = strcmp(row->kind, "info") == 0;
    bool same = scalars ? same_scalar(&cs, &ms) : same_value(c, v);

    if (scalars ? cs.kind == AS_JSON_NUMBER && ms.kind == AS_JSON_NUMBER
                : json_is_number(c) && json_is_number(v)) {
        out->numeric = true;
        out->claimed_num = scalars ? cs.number : json_number_value(c);
        out->measured_num = scalars ? ms.number : json_number_value(v);
        out->delta_num = out->measured_num - out->claimed_num;
        out->delta_pct =
            out->claimed_num != 0 ? as_round(100.0 * out->delta_num / out->claimed_num, 1) : 0;
        const char *sign = out->delta_num > 0 ? "+" : out->delta_num < 0 ? "-" : "";
        out->delta = as_printf(m, "%s%s (%s%.1f%%)", sign,
                               with_unit(m, as_num_text(m, fabs(out->delta_num)), row->unit),
                               out->delta_pct > 0 ? "+" : "", out->delta_pct);
    }
    if (perf && out->numeric) {
        double floor_v = out->claimed_num * (1.0 - row->tolerance_pct / 100.0);
        out->ok = out->measured_num >= floor_v - 1e-9;
        const char *tol = as_num_text(m, row->tolerance_pct);
        out->detail = out->ok
                          ? JOIN(m, "claimed ", ctext, ", measured ", mtext, ": ",
                                 out->delta_num >= 0 ? "meets the claim"
                                                     : JOIN(m, "within the ", tol, "% tolerance"))
                          : JOIN(m, "claimed ", ctext, ", measured ", mtext,
                                 ": short of the claim by more than the ", tol, "% tolerance");
    } else if (info) {
        if (!out->delta) out->delta = same ? "matches" : "differs";
        out->detail = JOIN(m, "claimed ", ctext, ", measured ", mtext, " (for information only)");
    } else {
        out->ok = same;
        out->delta = out->ok ? "matches" : "differs";
        out->detail = out->ok ? JOIN(m, "claimed ", ctext, ", measured ", mtext)
                              : JOIN(m, "claimed ", ctext, ", but measured ", mtext);
    }
    json_decref(c);
    json_decref(v);
}

as_verif as_verification_status(as_mem *m, const as_spec_row *rows, size_t n, bool product_measured,
                                const char **note)
{
    *note = NULL;
    if (!product_measured) return AS_VERIF_PENDING;
    for (size_t i = 0; i < n; i++) {
        as_row_eval e;
        as_spec_eval(m, &rows[i], true, &e);
        if (!e.ok) {
            *note = as_printf(m, "%s: %s", rows[i].label, e.detail);
            return AS_VERIF_CONTRADICTED;
        }
    }
    return AS_VERIF_VERIFIED;
}
