#include "as_verify.h"

#include <math.h>
#include <string.h>

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

static const char *with_unit(as_mem *m, const char *v, const char *unit)
{
    return unit && *unit ? as_printf(m, "%s %s", v, unit) : v;
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
    json_t *c = json_loads(row->claimed, JSON_DECODE_ANY, NULL);
    json_t *v = json_loads(row->measured, JSON_DECODE_ANY, NULL);
    const char *ctext = with_unit(m, value_text(m, c), row->unit);
    const char *mtext = with_unit(m, value_text(m, v), row->unit);
    bool perf = strcmp(row->kind, "performance") == 0, info = strcmp(row->kind, "info") == 0;

    if (json_is_number(c) && json_is_number(v)) {
        out->numeric = true;
        out->claimed_num = json_number_value(c);
        out->measured_num = json_number_value(v);
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
        out->detail =
            out->ok
                ? as_printf(m, "claimed %s, measured %s: %s", ctext, mtext,
                            out->delta_num >= 0 ? "meets the claim"
                                                : as_printf(m, "within the %s%% tolerance", tol))
                : as_printf(m,
                            "claimed %s, measured %s: short of the claim by more than the "
                            "%s%% tolerance",
                            ctext, mtext, tol);
    } else if (info) {
        if (!out->delta) out->delta = same_value(c, v) ? "matches" : "differs";
        out->detail = as_printf(m, "claimed %s, measured %s (for information only)", ctext, mtext);
    } else {
        out->ok = same_value(c, v);
        out->delta = out->ok ? "matches" : "differs";
        out->detail = out->ok ? as_printf(m, "claimed %s, measured %s", ctext, mtext)
                              : as_printf(m, "claimed %s, but measured %s", ctext, mtext);
    }
    json_decref(c);
    json_decref(v);
}

const char *as_verification_status(as_mem *m, const as_spec_row *rows, size_t n,
                                   bool product_measured, const char **note)
{
    *note = NULL;
    if (!product_measured) return "pending";
    for (size_t i = 0; i < n; i++) {
        as_row_eval e;
        as_spec_eval(m, &rows[i], true, &e);
        if (!e.ok) {
            *note = as_printf(m, "%s: %s", rows[i].label, e.detail);
            return "contradicted";
        }
    }
    return "verified";
}
