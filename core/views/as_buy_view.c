#include "as_buy_view.h"

#include <stdlib.h>
#include <string.h>

#include "as_commerce.h"
#include "as_help_view.h"
#include "as_util.h"
#include "as_view.h"

static json_t *eur(int64_t cents)
{
    return as_json_round((double)cents / 100.0, 2);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *as_view_quote(as_mem *m, const as_quote *q)
{
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:s, s:i, s:s, s:s, s:s}", "id",
                  q->id, "sku", q->sku, "name", q->product_name, "offer_id", q->offer_id,
                  "merchant", q->merchant_name, "quantity", (json_int_t)q->quantity,
                  "unit_price_cents", (json_int_t)q->unit_price_cents, "total_cents",
                  (json_int_t)q->total_cents, "total_eur", eur(q->total_cents), "currency", "EUR",
                  "delivery_days", q->delivery_days, "delivery_by", q->delivery_by, "created_at",
                  as_time_format(m, q->created_at), "expires_at", as_time_format(m, q->expires_at));
    if (q->device_slug) {
        json_object_set_new(o, "device", json_string(q->device_slug));
        json_object_set_new(o, "fit_status", json_string(as_fit_name(q->fit_status)));
        json_object_set_new(o, "right_item_guarantee", json_boolean(q->guarantee));
    }
    return o;
}

json_t *as_view_order(as_mem *m, const as_order *o)
{
    json_t *timeline = json_array();
    for (size_t i = 0; i < o->n_events; i++) {
        const as_event *e = &o->events[i];
        json_t *it = json_pack("{s:s, s:s}", "status", as_order_state_name(e->status), "at",
                               as_time_format(m, e->at));
        if (e->note) json_object_set_new(it, "note", json_string(e->note));
        json_array_append_new(timeline, it);
    }
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(o->id));
    json_object_set_new(v, "status", json_string(as_order_state_name(o->status)));
    json_object_set_new(v, "quote_id", json_string(o->quote_id));
    json_object_set_new(v, "mandate_id", json_string(o->mandate_id));
    json_object_set_new(v, "sku", json_string(o->sku));
    json_object_set_new(v, "name", json_string(o->product_name));
    json_object_set_new(v, "offer_id", json_string(o->offer_id));
    json_object_set_new(v, "merchant", json_string(o->merchant_name));
    json_object_set_new(v, "quantity", json_integer(o->quantity));
    json_object_set_new(v, "unit_price_cents", json_integer(o->unit_price_cents));
    json_object_set_new(v, "total_cents", json_integer(o->total_cents));
    json_object_set_new(v, "total_eur", eur(o->total_cents));
    json_object_set_new(v, "currency", json_string("EUR"));
    json_object_set_new(v, "delivery_by", json_string(o->delivery_by));
    json_object_set_new(v, "reason", json_string(o->reason));
    json_object_set_new(v, "agent", json_string(o->agent));
    json_object_set_new(v, "created_at", json_string(as_time_format(m, o->created_at)));
    if (o->device_slug) {
        json_object_set_new(v, "device", json_string(o->device_slug));
        json_object_set_new(v, "fit_status", json_string(as_fit_name(o->fit_status)));
        json_object_set_new(v, "right_item_guarantee", json_boolean(o->guarantee));
    }
    json_object_set_new(v, "confirmation_id", str_or_null(o->confirmation_id));
    json_object_set_new(v, "timeline", timeline);
    /* What the user sees on the receipt: the item, the money and the agent's reason. */
    json_object_set_new(v, "receipt",
                        json_pack("{s:s, s:s, s:I, s:o, s:s, s:s, s:s}", "order_id", o->id, "item",
                                  o->product_name, "quantity", (json_int_t)o->quantity, "total_eur",
                                  eur(o->total_cents), "merchant", o->merchant_name, "agent",
                                  o->agent, "reason", o->reason));
    return v;
}

static json_t *categories(const char *csv)
{
    json_t *a = json_array();
    const char *p = csv;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p = end ? end + 1 : NULL;
    }
    return a;
}

json_t *as_view_mandate(as_mem *m, const as_mandate *md, const char *status, const char *month,
                        int64_t spent)
{
    (void)m;
    int64_t remaining = md->monthly_cents - spent;
    if (remaining < 0) remaining = 0;
    return json_pack("{s:s, s:s, s:s, s:o, s:I, s:o, s:I, s:o, s:I, s:o, s:I, s:I, s:o, s:s, "
                     "s:o, s:s}",
                     "id", md->id, "status", status, "user", md->user_id, "allowed_categories",
                     categories(md->categories), "per_order_limit_cents",
                     (json_int_t)md->per_order_cents, "per_order_limit_eur",
                     eur(md->per_order_cents), "monthly_limit_cents", (json_int_t)md->monthly_cents,
                     "monthly_limit_eur", eur(md->monthly_cents), "confirm_above_cents",
                     (json_int_t)md->confirm_above_cents, "confirm_above_eur",
                     eur(md->confirm_above_cents), "spent_this_month_cents", (json_int_t)spent,
                     "remaining_this_month_cents", (json_int_t)remaining,
                     "remaining_this_month_eur", eur(remaining), "month", month, "valid_until",
                     str_or_null(md->valid_until), "currency", "EUR");
}

static const char *decision_of(as_confirmation_state status)
{
    if (status == AS_CS_APPROVED) return "approve";
    if (status == AS_CS_DECLINED) return "decline";
    return NULL;
}

json_t *as_view_confirmation(as_mem *m, const as_confirmation *c, const as_order *o)
{
    const char *d = decision_of(c->status);
    return json_pack(
        "{s:s, s:s, s:o, s:s, s:s, s:s, s:{s:s, s:s, s:I, s:s}, s:{s:I, s:I, s:o, s:s}, s:s, "
        "s:s}",
        "id", c->id, "status", as_confirmation_state_name(c->status), "decision",
        d ? json_string(d) : json_null(), "expires_at", as_time_format(m, c->expires_at),
        "order_id", o->id, "order_status", as_order_state_name(o->status), "item", "sku", o->sku,
        "name", o->product_name, "quantity", (json_int_t)o->quantity, "merchant", o->merchant_name,
        "price", "unit_price_cents", (json_int_t)o->unit_price_cents, "total_cents",
        (json_int_t)o->total_cents, "total_eur", eur(o->total_cents), "currency", "EUR", "agent",
        o->agent, "reason", o->reason);
}

json_t *as_view_order_followed(as_mem *m, const as_order *o, int64_t now,
                               int64_t return_window_days)
{
    json_t *v = as_view_order(m, o);
    int64_t shipped = as_order_event_at(o, AS_OS_SHIPPED),
            delivered = as_order_event_at(o, AS_OS_DELIVERED);
    json_object_set_new(v, "shipped_at",
                        shipped ? json_string(as_time_format(m, shipped)) : json_null());
    json_object_set_new(v, "delivered_at",
                        delivered ? json_string(as_time_format(m, delivered)) : json_null());
    int64_t window_end = delivered ? delivered + return_window_days * 86400 : 0;
    bool returnable =
        as_order_allows(o->status, AS_EV_RETURN) && (!window_end || now <= window_end);
    json_object_set_new(v, "returnable", json_boolean(returnable));
    json_object_set_new(v, "return_window_ends_at",
                        window_end ? json_string(as_time_format(m, window_end)) : json_null());
    json_object_set_new(v, "cancellable", json_boolean(as_order_allows(o->status, AS_EV_CANCEL)));
    return v;
}

json_t *as_view_confirmation_required(as_mem *m, const as_order *o, const as_confirmation *c,
                                      const char *url, int64_t confirm_above_cents)
{
    json_t *b = as_error_object("CONFIRMATION_REQUIRED", NULL,
                                as_printf(m,
                                          "The total %s is above the confirm-above threshold of "
                                          "%s: a human must approve the order through the link.",
                                          as_eur_format(m, o->total_cents),
                                          as_eur_format(m, confirm_above_cents)));
    json_object_set_new(b, "order_id", json_string(o->id));
    json_object_set_new(b, "confirmation",
                        json_pack("{s:s, s:s, s:s}", "id", c->id, "url", url, "expires_at",
                                  as_time_format(m, c->expires_at)));
    json_object_set_new(b, "order", as_view_order(m, o));
    return b;
}

const char *as_view_confirmation_notice(as_mem *m, const as_order *o, const as_confirmation *c,
                                        const char *url)
{
    json_t *n =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:I}, s:I, s:s, s:s, s:s, s:s}", "event",
                  "confirmation_created", "confirmation_id", c->id, "order_id", o->id, "user",
                  o->user_id, "agent", o->agent, "item", "sku", o->sku, "name", o->product_name,
                  "quantity", (json_int_t)o->quantity, "total_cents", (json_int_t)o->total_cents,
                  "total", as_eur_format(m, o->total_cents), "reason", o->reason, "url", url,
                  "expires_at", as_time_format(m, c->expires_at));
    char *line = json_dumps(n, JSON_COMPACT | JSON_ENSURE_ASCII);
    const char *out = line ? as_strdup(m, line) : NULL;
    free(line);
    json_decref(n);
    return out;
}

json_t *as_view_return(as_mem *m, const as_return *r, const as_order *o, const char *label_url,
                       const as_product *replacement, const as_ranking *rr, const as_device *dev)
{
    return json_pack(
        "{s:s, s:s, s:s, s:o, s:s, s:I, s:o, s:s, s:{s:s, s:s, s:s}, s:o, s:s, s:s}", "id", r->id,
        "order_id", r->order_id, "reason_code", r->reason_code, "note", str_or_null(r->note),
        "refund_status", r->refund_status, "refund_cents", (json_int_t)r->refund_cents,
        "refund_eur", eur(r->refund_cents), "currency", "EUR", "label", "carrier", r->carrier,
        "tracking_code", r->tracking_code, "url", label_url, "suggested_replacement",
        replacement ? as_view_summary(m, replacement, rr, dev) : json_null(), "order_status",
        as_order_state_name(o->status), "created_at", as_time_format(m, r->created_at));
}
