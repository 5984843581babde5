#include "as_validate.h"

#include <ctype.h>
#include <string.h>

#include "as_catalog.h"

const as_enum_entry as_categories[] = {
    {"hand-soap", "Hand soap"},
    {"air-filters", "Air filters"},
    {"vacuum-parts", "Vacuum cleaner parts"},
    {"coffee-kitchen", "Coffee & kitchen"},
    {"printer-ink", "Printer ink & toner"},
    {"chargers-cables", "Chargers & cables"},
    {"batteries", "Batteries"},
};
const size_t as_n_categories = sizeof(as_categories) / sizeof(as_categories[0]);

const as_enum_entry as_part_types[] = {
    {"hand-soap", "Hand soap"},
    {"filter", "Filter"},
    {"battery", "Battery"},
    {"charger", "Charger"},
    {"cable", "Cable"},
    {"descaler", "Descaler"},
    {"toner", "Toner"},
    {"ink-cartridge", "Ink cartridge"},
    {"jug-filter", "Jug filter"},
    {"dust-bag", "Dust bag"},
    {"accessory-kit", "Accessory kit"},
    {"cell", "Cell"},
};
const size_t as_n_part_types = sizeof(as_part_types) / sizeof(as_part_types[0]);

const char *const as_category_ids[] = {"hand-soap",      "air-filters", "vacuum-parts",
                                       "coffee-kitchen", "printer-ink", "chargers-cables",
                                       "batteries",      NULL};
const char *const as_part_type_ids[] = {
    "hand-soap",     "filter",     "battery",  "charger",       "cable", "descaler", "toner",
    "ink-cartridge", "jug-filter", "dust-bag", "accessory-kit", "cell",  NULL};
const char *const as_sort_choices[] = {"score", "price", "delivery", "return_rate", NULL};

const char *as_category_label(const char *id)
{
    for (size_t i = 0; i < as_n_categories; i++)
        if (strcmp(as_categories[i].id, id) == 0) return as_categories[i].label;
    return NULL;
}

bool as_part_type_known(const char *id)
{
    for (size_t i = 0; i < as_n_part_types; i++)
        if (strcmp(as_part_types[i].id, id) == 0) return true;
    return false;
}

void as_problem_set(as_problem *p, int status, const char *code, const char *field,
                    const char *message)
{
    p->status = status;
    p->code = code;
    p->field = field;
    p->message = message;
}

static bool bad(as_mem *m, as_problem *p, const char *field, const char *fmt, const char *a,
                const char *b)
{
    as_problem_set(p, 400, "VALIDATION_ERROR", field, as_printf(m, fmt, a, b));
    return false;
}

static const char *choices_text(as_mem *m, const char *const *c)
{
    as_buf b;
    as_buf_init(&b, m);
    for (size_t i = 0; c[i]; i++)
        as_buf_printf(&b, "%s%s", i ? ", " : "", c[i]);
    return as_buf_str(&b);
}

static bool length_ok(as_mem *m, const as_param_rule *r, const char *v, as_problem *p)
{
    size_t len = as_utf8_len(v);
    if ((int64_t)len < r->min || (int64_t)len > r->max) {
        const char *range = r->min > 0 ? as_printf(m, "from %lld to %lld characters",
                                                   (long long)r->min, (long long)r->max)
                                       : as_printf(m, "at most %lld characters", (long long)r->max);
        as_problem_set(p, 400, "VALIDATION_ERROR", r->name,
                       as_printf(m, "%s must be %s long (got %zu)", r->name, range, len));
        return false;
    }
    return true;
}

/* The first character of valid UTF-8 v that text shown to people must not
 * carry (see AS_V_PROSE), as its code point and position in characters; false
 * when there is none. */
static bool hidden_char(const char *v, uint32_t *cp, size_t *at)
{
    const unsigned char *s = (const unsigned char *)v;
    for (size_t pos = 0; *s; pos++) {
        uint32_t c;
        if (s[0] < 0x80) {
            c = s[0];
            s += 1;
        } else if (s[0] < 0xe0) {
            c = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
            s += 2;
        } else if (s[0] < 0xf0) {
            c = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
            s += 3;
        } else {
            c = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
                (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
            s += 4;
        }
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
            (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 ||
            c == 0x2029 || c == 0xfeff) {
            *cp = c;
            *at = pos + 1;
            return true;
        }
    }
    return false;
}

bool as_validate_page(as_mem *m, const as_param *limit, const as_param *offset, as_page *out,
                      as_problem *p)
{
    out->limit = limit->present ? limit->num : AS_PAGE_LIMIT_DEFAULT;
    out->offset = offset->present ? offset->num : 0;
    if (out->offset + out->limit <= AS_PAGE_WINDOW) return true;
    as_problem_set(p, 400, "VALIDATION_ERROR", "offset",
                   as_printf(m,
                             "offset + limit must be at most %d (got %lld + %lld): narrow the "
                             "list with its filters instead of paging deeper",
                             AS_PAGE_WINDOW, (long long)out->offset, (long long)out->limit));
    return false;
}

bool as_validate_value(as_mem *m, const as_param_rule *r, const char *v, int64_t today,
                       as_param *out, as_problem *p)
{
    out->present = true;
    out->str = v;
    if (!as_utf8_valid(v, strlen(v)))
        return bad(m, p, r->name, "%s must be valid UTF-8 text%s", r->name, "");
    switch (r->type) {
    case AS_V_TEXT:
        return length_ok(m, r, v, p);
    case AS_V_PROSE: {
        if (!length_ok(m, r, v, p)) return false;
        uint32_t cp;
        size_t at;
        if (hidden_char(v, &cp, &at))
            return bad(m, p, r->name,
                       "%s must be plain text of one paragraph: no control characters, line "
                       "breaks or bidirectional formatting (found %s)",
                       r->name, as_printf(m, "U+%04X at character %zu", (unsigned)cp, at));
        return true;
    }
    case AS_V_SLUG:
        if (!length_ok(m, r, v, p)) return false;
        for (const char *c = v; *c; c++)
            if (!isalnum((unsigned char)*c) && !strchr("._-", *c))
                return bad(m, p, r->name, "%s may only contain letters, digits, '.', '_' and '-'%s",
                           r->name, "");
        return true;
    case AS_V_POSTCODE:
        if (!length_ok(m, r, v, p)) return false;
        for (const char *c = v; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != ' ' && *c != '-')
                return bad(m, p, r->name, "%s may only contain letters, digits, spaces and '-'%s",
                           r->name, "");
        return true;
    case AS_V_ENUM:
        if (!length_ok(m, r, v, p)) return false;
        for (size_t i = 0; r->choices[i]; i++)
            if (strcmp(r->choices[i], v) == 0) return true;
        return bad(m, p, r->name, "%s must be one of: %s", r->name, choices_text(m, r->choices));
    case AS_V_DATE:
        if (!as_date_parse(v, &out->num))
            return bad(m, p, r->name, "%s must be a date written yyyy-mm-dd%s", r->name, "");
        if (out->num < today)
            return bad(m, p, r->name, "%s must not be in the past (today is %s)", r->name,
                       as_date_format(m, today));
        return true;
    case AS_V_EUR:
        if (!as_eur_parse_cents(v, r->max, &out->num) || out->num <= 0)
            return bad(m, p, r->name,
                       "%s must be an amount in euros above 0 with at most two decimals, "
                       "for example 12.50 (maximum %s)",
                       r->name, as_eur_format(m, r->max));
        return true;
    case AS_V_BOOL:
        if (!strcmp(v, "true") || !strcmp(v, "1"))
            out->num = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0"))
            out->num = 0;
        else
            return bad(m, p, r->name, "%s must be true or false%s", r->name, "");
        return true;
    case AS_V_INT:
        if (!as_int_parse(v, r->min, r->max, &out->num))
            return bad(m, p, r->name, "%s must be a whole number %s", r->name,
                       as_printf(m, "from %lld to %lld", (long long)r->min, (long long)r->max));
        return true;
    case AS_V_WEIGHTS: {
        const char *err = NULL;
        if (!as_weights_parse(m, v, &out->weights, &err))
            return bad(m, p, r->name, "%s%s", err, "");
        return true;
    }
    }
    return bad(m, p, r->name, "%s is not understood%s", r->name, "");
}

bool as_validate_query(as_mem *m, const as_param_rule *rules, size_t n, const as_query *q,
                       int64_t today, as_param *vals, as_problem *p)
{
    memset(vals, 0, n * sizeof(*vals));
    for (size_t i = 0; i < q->n; i++) {
        const as_kv *kv = &q->items[i];
        if (!*kv->key) /* "?=x": no name to put in field */
            return bad(m, p, "query", "a query parameter has no name (\"=...\")%s%s", "", "");
        size_t r = 0;
        while (r < n && strcmp(rules[r].name, kv->key) != 0)
            r++;
        if (r == n) {
            as_buf names;
            as_buf_init(&names, m);
            for (size_t k = 0; k < n; k++)
                as_buf_printf(&names, "%s%s", k ? ", " : "", rules[k].name);
            const char *shown = as_utf8_len(kv->key) > 40 ? "(a long name)" : kv->key;
            return bad(m, p, kv->key, "unknown parameter '%s'; this endpoint takes: %s", shown,
                       n ? as_buf_str(&names) : "no parameters");
        }
        if (vals[r].present) return bad(m, p, kv->key, "%s is given more than once%s", kv->key, "");
        if (!as_validate_value(m, &rules[r], kv->val, today, &vals[r], p)) return false;
    }
    return true;
}

const char *as_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
    default:
        return "null";
    }
}

bool as_validate_body(as_mem *m, const as_field_rule *rules, size_t n, const json_t *obj,
                      int64_t today, as_param *vals, as_problem *p)
{
    memset(vals, 0, n * sizeof(*vals));
    if (!json_is_object(obj))
        return bad(m, p, "body", "the body must be a JSON object%s%s", "", "");
    const char *jkey;
    json_t *v;
    json_object_foreach((json_t *)obj, jkey, v)
    {
        /* the problem outlives the JSON (callers release it first): copy names */
        const char *key = as_strdup(m, jkey);
        size_t r = 0;
        while (r < n && strcmp(rules[r].rule.name, key) != 0)
            r++;
        if (r == n) {
            as_buf names;
            as_buf_init(&names, m);
            for (size_t k = 0; k < n; k++)
                as_buf_printf(&names, "%s%s", k ? ", " : "", rules[k].rule.name);
            const char *shown = as_utf8_len(key) > 40 ? "(a long name)" : key;
            return bad(m, p, key, "unknown field '%s'; the fields are: %s", shown,
                       as_buf_str(&names));
        }
        const as_param_rule *rule = &rules[r].rule;
        /* null is a wrong type, not an absent field: weights alone may be null (spec 4.1) */
        if (rule->type == AS_V_INT) {
            if (!json_is_integer(v))
                return bad(m, p, key, "%s must be a whole number, not %s", key,
                           as_json_type_name(v));
            json_int_t x = json_integer_value(v);
            if (x < rule->min || x > rule->max)
                return bad(
                    m, p, key, "%s must be %s", key,
                    as_printf(m, "from %lld to %lld", (long long)rule->min, (long long)rule->max));
            vals[r].present = true;
            vals[r].num = x;
        } else if (rule->type == AS_V_WEIGHTS) {
            const char *err = NULL;
            if (!as_weights_from_json(m, v, &vals[r].weights, &err))
                return bad(m, p, key, "%s%s", err, "");
            vals[r].present = true;
        } else {
            if (!json_is_string(v))
                return bad(m, p, key, "%s must be a string, not %s", key, as_json_type_name(v));
            if (strlen(json_string_value(v)) != json_string_length(v))
                return bad(m, p, key, "%s must not contain NUL characters%s", key, "");
            if (!as_validate_value(m, rule, as_strdup(m, json_string_value(v)), today, &vals[r], p))
                return false;
        }
    }
    for (size_t r = 0; r < n; r++)
        if (rules[r].required && !vals[r].present)
            return bad(m, p, rules[r].rule.name, "%s is required%s", rules[r].rule.name, "");
    return true;
}

as_weights as_param_weights(const as_param *v)
{
    as_weights w;
    if (v->present)
        w = v->weights;
    else
        as_weights_default(&w);
    return w;
}
