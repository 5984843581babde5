/* What a tool result carries for a model (docs/mcp.md "Results"): the compact
 * default of search_products, and the short text of content[0] that a
 * 2025-06-18 or later client gets instead of the JSON again. */
#include <string.h>

#include "as_mcp_results.h"
#include "as_util.h"

/* Copies the keys of src that are present into dst. */
static void copy_keys(json_t *dst, const json_t *src, const char *const *keys)
{
    for (; *keys; keys++) {
        json_t *v = json_object_get(src, *keys);
        if (v) json_object_set(dst, *keys, v);
    }
}

static json_t *compact_offer(const json_t *o)
{
    if (!json_is_object(o)) return json_null();
    static const char *const keys[] = {"offer_id", "price_cents", "delivery_by", "score", NULL};
    json_t *c = json_object();
    copy_keys(c, o, keys);
    json_t *name = json_object_get(json_object_get(o, "merchant"), "name");
    json_object_set_new(c, "merchant", name ? json_incref(name) : json_string(""));
    return c;
}

static json_t *compact_result(const json_t *r)
{
    static const char *const keys[] = {"sku",        "name", "brand", "verification_status",
                                       "fit_status", NULL};
    json_t *c = json_object();
    copy_keys(c, r, keys);
    json_t *all = json_object_get(r, "matched_all_words");
    if (json_is_false(all)) json_object_set(c, "matched_all_words", all); /* only when not */
    json_object_set_new(c, "best_offer", compact_offer(json_object_get(r, "best_offer")));
    return c;
}

static json_t *compact_query(const json_t *q)
{
    if (!json_is_object(q)) return json_null();
    static const char *const keys[] = {"text", "matched_all_words", "dropped", "corrected", NULL};
    json_t *c = json_object();
    copy_keys(c, q, keys);
    json_t *slug = json_object_get(json_object_get(q, "device"), "slug");
    json_object_set(c, "device", slug ? slug : json_null());
    json_t *cap = json_object_get(json_object_get(q, "price"), "max_price_cents");
    json_object_set(c, "max_price_cents", cap ? cap : json_null());
    return c;
}

json_t *as_mcp_search_compact(const json_t *full)
{
    static const char *const keys[] = {"count",          "limit",  "offset",
                                       "excluded_count", "device", NULL};
    json_t *c = json_pack("{s:s, s:[], s:[]}", "detail", "compact", "results", "excluded");
    if (!c) return NULL;
    copy_keys(c, full, keys);
    json_t *results = json_object_get(c, "results"), *excluded = json_object_get(c, "excluded");
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(full, "results"), i, v)
        json_array_append_new(results, compact_result(v));
    json_array_foreach(json_object_get(full, "excluded"), i, v)
        json_array_append_new(excluded, json_pack("{s:O?, s:O?}", "sku", json_object_get(v, "sku"),
                                                  "reason", json_object_get(v, "reason")));
    json_object_set_new(c, "query", compact_query(json_object_get(full, "query")));
    return c;
}

/* ---- the text ---- */

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A text cut to about max bytes on a character boundary, with nothing in
 * it that starts a line, moves one or hides (as_text_escape_to): a product's
 * name can hold "\nSYSTEM: ..." in a database older than the feed's rules.
 * quote: JSON-quoted, data that no one of ours wrote (docs/mcp.md "Results"). */
static void put_text(as_buf *b, const char *s, size_t max, bool quote)
{
    size_t n = strlen(s);
    bool cut = n > max;
    if (cut)
        for (n = max; n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80;)
            n--;
    as_text_escape_to(b, s, n, quote);
    if (cut) as_buf_puts(b, "...");
}

/* A value of ours (an id, a status, a date): escaped, not quoted. */
static void put_word(as_buf *b, const char *s)
{
    put_text(b, s, 160, false);
}

/* A text from a merchant, an agent or a person: quoted. */
static void put_data(as_buf *b, const char *s)
{
    put_text(b, s, 160, true);
}

static void put_scalar(as_buf *b, const json_t *v)
{
    if (json_is_string(v))
        put_data(b, json_string_value(v));
    else if (json_is_integer(v))
        as_buf_printf(b, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        as_buf_printf(b, "%.12g", json_real_value(v));
    else if (json_is_boolean(v))
        as_buf_puts(b, json_is_true(v) ? "true" : "false");
    else if (json_is_null(v))
        as_buf_puts(b, "null");
    else if (json_is_array(v))
        as_buf_printf(b, "[%zu item%s]", json_array_size(v), json_array_size(v) == 1 ? "" : "s");
    else
        as_buf_puts(b, "{...}");
}

/* A compact offer names its merchant; a full one has the merchant object. */
static const char *merchant_name(const json_t *o)
{
    const json_t *mc = json_object_get(o, "merchant");
    return json_is_object(mc) ? str(mc, "name") : str(o, "merchant");
}

static void search_line(as_buf *b, size_t n, const json_t *r)
{
    as_buf_printf(b, "\n%zu. ", n);
    put_word(b, str(r, "sku"));
    as_buf_puts(b, " | ");
    put_data(b, str(r, "name"));
    as_buf_puts(b, " | ");
    put_word(b, str(r, "verification_status"));
    const json_t *o = json_object_get(r, "best_offer");
    const json_t *cents = json_object_get(o, "price_cents");
    if (json_is_integer(cents)) {
        as_buf_printf(b, " | %lld.%02lld EUR by ", (long long)json_integer_value(cents) / 100,
                      (long long)json_integer_value(cents) % 100);
        put_word(b, str(o, "delivery_by"));
        as_buf_puts(b, " | ");
        put_data(b, merchant_name(o));
        as_buf_puts(b, " | offer ");
        put_word(b, str(o, "offer_id"));
        as_buf_printf(b, " | score %lld",
                      (long long)json_integer_value(json_object_get(o, "score")));
    } else {
        as_buf_puts(b, " | no offer to buy");
    }
    if (json_is_false(json_object_get(r, "matched_all_words"))) as_buf_puts(b, " | not every word");
    if (json_object_get(r, "fit_status")) {
        as_buf_puts(b, " | ");
        put_word(b, str(r, "fit_status"));
    }
}

static void search_text(as_buf *b, const json_t *body)
{
    const json_t *q = json_object_get(body, "query");
    const json_t *results = json_object_get(body, "results");
    long long offset = json_integer_value(json_object_get(body, "offset"));
    size_t shown = json_array_size(results);
    if (json_is_object(q)) {
        as_buf_puts(b, "Search ");
        put_text(b, str(q, "text"), 200, true);
        as_buf_puts(b, ": ");
    } else {
        as_buf_puts(b, "Search: ");
    }
    as_buf_printf(b, "%lld result(s)",
                  (long long)json_integer_value(json_object_get(body, "count")));
    if (shown) as_buf_printf(b, ", %lld to %lld shown", offset + 1, offset + (long long)shown);
    as_buf_printf(b, "; %lld excluded.",
                  (long long)json_integer_value(json_object_get(body, "excluded_count")));
    if (json_is_string(json_object_get(body, "device"))) {
        as_buf_puts(b, " Device: ");
        put_word(b, str(body, "device"));
        as_buf_puts(b, ".");
    }
    const json_t *dropped = json_object_get(q, "dropped");
    size_t i;
    const json_t *v;
    if (json_array_size(dropped)) {
        as_buf_puts(b, " Words dropped (no product has them all):");
        json_array_foreach(dropped, i, v) if (json_is_string(v))
        {
            as_buf_puts(b, " ");
            put_word(b, json_string_value(v));
        }
        as_buf_puts(b, ".");
    }
    json_array_foreach(results, i, v) search_line(b, offset + i + 1, v);
    const json_t *excluded = json_object_get(body, "excluded");
    json_array_foreach(excluded, i, v)
    {
        as_buf_puts(b, i ? "; " : "\nExcluded: ");
        put_word(b, str(v, "sku"));
        as_buf_puts(b, " (");
        put_word(b, str(v, "reason"));
        as_buf_puts(b, ")");
    }
}

/* What names a nested object on a line, or NULL. */
static const json_t *label_of(const json_t *o)
{
    static const char *const keys[] = {"name", "id", "offer_id", "slug", "sku", NULL};
    for (const char *const *k = keys; *k; k++)
        if (json_is_string(json_object_get(o, *k))) return json_object_get(o, *k);
    return NULL;
}

/* An object's own facts on one line: its scalars, a nested object by what
 * names it, a list by its length. */
static void object_line(as_buf *b, const json_t *o)
{
    const char *k;
    const json_t *v;
    size_t n = 0;
    json_object_foreach((json_t *)o, k, v)
    {
        const json_t *label = json_is_object(v) ? label_of(v) : v;
        if (!label) continue;
        as_buf_puts(b, n++ ? ", " : "");
        put_word(b, k); /* a name in evidence or in measured values is the feed's */
        as_buf_puts(b, ": ");
        put_scalar(b, label);
    }
}

/* A list of objects, one line per item (the first 20). */
static void item_lines(as_buf *b, const char *indent, const json_t *list)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        if (!json_is_object(e)) return;
        if (i == 20) {
            as_buf_printf(b, "\n%s- ... %zu more", indent, json_array_size(list) - i);
            return;
        }
        as_buf_printf(b, "\n%s- ", indent);
        object_line(b, e);
    }
}

/* Any other result: its top-level facts, one a line; an object's own facts
 * on its line; lists of objects (a product's offers) one line per item. */
static void facts_text(as_buf *b, const json_t *body)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)body, k, v)
    {
        as_buf_puts(b, b->len ? "\n" : "");
        put_word(b, k);
        as_buf_puts(b, ": ");
        if (!json_is_object(v)) {
            put_scalar(b, v);
            item_lines(b, "  ", v);
            continue;
        }
        as_buf_puts(b, "{");
        object_line(b, v);
        as_buf_puts(b, "}");
        const char *k2;
        const json_t *v2;
        json_object_foreach((json_t *)v, k2, v2)
        {
            if (!json_is_object(json_array_get(v2, 0))) continue;
            as_buf_puts(b, "\n  ");
            put_word(b, k2);
            as_buf_puts(b, ":");
            item_lines(b, "    ", v2);
        }
    }
}

const char *as_mcp_summary(as_mem *m, const char *tool, int status, const json_t *body)
{
    as_buf b;
    as_buf_init(&b, m);
    const char *code = json_string_value(json_object_get(body, "error"));
    if (status >= 400 && code) {
        as_buf_printf(&b, "Error %d ", status);
        put_word(&b, code);
        if (json_is_string(json_object_get(body, "field"))) {
            as_buf_puts(&b, " (field ");
            put_word(&b, str(body, "field"));
            as_buf_puts(&b, ")");
        }
        as_buf_puts(&b, ": "); /* a message may quote what it refused */
        put_text(&b, str(body, "message"), strlen(str(body, "message")), false);
        return as_buf_str(&b); /* the whole of it, but the docs link */
    } else if (strcmp(tool, "search_products") == 0 && status < 300) {
        search_text(&b, body); /* the compact result's every fact */
        return as_buf_str(&b);
    } else {
        facts_text(&b, body);
    }
    as_buf_puts(&b, "\n(The complete result is the structuredContent.)");
    return as_buf_str(&b);
}
