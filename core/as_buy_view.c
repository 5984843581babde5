#include "as_buy_view.h"

#include <string.h>

#include "as_util.h"

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
        json_object_set_new(o, "fit_status", json_string(q->fit_status));
        json_object_set_new(o, "right_item_guarantee", json_boolean(q->guarantee));
    }
    return o;
}

json_t *as_view_order(as_mem *m, const as_order *o)
{
    json_t *timeline = json_array();
    for (size_t i = 0; i < o->n_events; i++) {
        const as_event *e = &o->events[i];
        json_t *it = json_pack("{s:s, s:s}", "status", e->status, "at", as_time_format(m, e->at));
        if (e->note) json_object_set_new(it, "note", json_string(e->note));
        json_array_append_new(timeline, it);
    }
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(o->id));
    json_object_set_new(v, "status", json_string(o->status));
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
        json_object_set_new(v, "fit_status", json_string(o->fit_status));
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

static const char *decision_of(const char *status)
{
    if (strcmp(status, "approved") == 0) return "approve";
    if (strcmp(status, "declined") == 0) return "decline";
    return NULL;
}

json_t *as_view_confirmation(as_mem *m, const as_confirmation *c, const as_order *o)
{
    const char *d = decision_of(c->status);
    return json_pack(
        "{s:s, s:s, s:o, s:s, s:s, s:s, s:{s:s, s:s, s:I, s:s}, s:{s:I, s:I, s:o, s:s}, s:s, "
        "s:s}",
        "id", c->id, "status", c->status, "decision", d ? json_string(d) : json_null(),
        "expires_at", as_time_format(m, c->expires_at), "order_id", o->id, "order_status",
        o->status, "item", "sku", o->sku, "name", o->product_name, "quantity",
        (json_int_t)o->quantity, "merchant", o->merchant_name, "price", "unit_price_cents",
        (json_int_t)o->unit_price_cents, "total_cents", (json_int_t)o->total_cents, "total_eur",
        eur(o->total_cents), "currency", "EUR", "agent", o->agent, "reason", o->reason);
}

const char *as_html_escape(as_mem *m, const char *s)
{
    as_buf b;
    as_buf_init(&b, m);
    for (; *s; s++) {
        switch (*s) {
        case '&':
            as_buf_puts(&b, "&amp;");
            break;
        case '<':
            as_buf_puts(&b, "&lt;");
            break;
        case '>':
            as_buf_puts(&b, "&gt;");
            break;
        case '"':
            as_buf_puts(&b, "&quot;");
            break;
        case '\'':
            as_buf_puts(&b, "&#39;");
            break;
        default:
            as_buf_add(&b, s, 1);
        }
    }
    return as_buf_str(&b);
}

const char *as_confirmation_page(as_mem *m, const as_confirmation *c, const as_order *o,
                                 const char *action, const char *token, const char *notice,
                                 const as_approval_ui *ui)
{
#define E(s) as_html_escape(m, s)
    /* After the decision the page says what happened, not that it still waits. */
    bool pending = strcmp(c->status, "pending") == 0;
    const char *heading = pending                              ? "Approve a purchase"
                          : strcmp(c->status, "approved") == 0 ? "Purchase approved"
                          : strcmp(c->status, "declined") == 0 ? "Purchase declined"
                                                               : "Purchase not placed";
    as_buf b;
    as_buf_init(&b, m);
    as_buf_printf(&b,
                  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>%s: %s</title>\n"
                  "<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem "
                  "auto;padding:0 1rem;line-height:1.5}dt{font-weight:600}dd{margin:0 0 "
                  ".75rem}button{font-size:1rem;padding:.6rem 1.4rem;margin-right:1rem}"
                  ".approve{background:#1a7f37;color:#fff;border:0}"
                  ".decline{background:#fff;border:2px solid #b42318;color:#b42318}</style>\n"
                  "</head>\n<body>\n<main>\n<h1>%s</h1>\n",
                  heading, E(o->product_name), heading);
    if (notice) as_buf_printf(&b, "<p role=\"status\"><strong>%s</strong></p>\n", E(notice));
    as_buf_printf(&b,
                  "<p>%s</p>\n<dl>\n<dt>Item</dt><dd id=\"item\">%s (%s) &times; %lld, from "
                  "%s</dd>\n<dt>Price</dt><dd id=\"price\">%s total, including VAT</dd>\n"
                  "<dt>Agent</dt><dd id=\"agent\">%s</dd>\n<dt>Reason</dt><dd "
                  "id=\"reason\">%s</dd>\n<dt>Status</dt><dd id=\"status\">%s</dd>\n"
                  "<dt>%s</dt><dd>%s</dd>\n</dl>\n",
                  pending ? "An agent asks to place this order for you. It waits for your "
                            "decision."
                          : "An agent asked to place this order for you.",
                  E(o->product_name), E(o->sku), (long long)o->quantity, E(o->merchant_name),
                  E(as_eur_format(m, o->total_cents)), E(o->agent), E(o->reason), E(c->status),
                  pending ? "Link valid until" : "Link was valid until",
                  E(as_time_format(m, c->expires_at)));
    if (pending && ui && ui->passkey) {
        /* Approving takes the person's passkey (the page's script); declining
         * is a plain form, as before. */
        bool can = ui->has_passkey && ui->options && !ui->problem;
        if (!can)
            as_buf_printf(&b, "<p role=\"alert\" id=\"no-passkey\">%s You can still decline.</p>\n",
                          E(ui->problem ? ui->problem
                                        : "Approving needs your passkey, and none is registered "
                                          "for you: ask the shop's operator for an enrolment "
                                          "link. Until then this purchase cannot be approved; it "
                                          "waits until the link expires."));
        as_buf_printf(&b,
                      "<form method=\"post\" action=\"%s\" id=\"decide\">\n<input "
                      "type=\"hidden\" name=\"token\" value=\"%s\">\n",
                      E(action), E(token));
        /* the script adds the assertion's fields when the person approves */
        if (can)
            as_buf_puts(&b, "<button class=\"approve\" type=\"button\" id=\"approve\">Approve "
                            "with your passkey</button>\n");
        as_buf_puts(&b, "<button class=\"decline\" type=\"submit\" name=\"decision\" "
                        "value=\"decline\">Decline</button>\n</form>\n<p role=\"status\" "
                        "id=\"status\"></p>\n");
        if (can)
            as_buf_printf(&b,
                          "<script type=\"application/json\" id=\"webauthn-options\">%s"
                          "</script>\n<script src=\"%s\"></script>\n",
                          ui->options, E(ui->script));
    } else if (pending) {
        as_buf_printf(&b,
                      "<form method=\"post\" action=\"%s\">\n<input type=\"hidden\" "
                      "name=\"token\" value=\"%s\">\n<button class=\"approve\" type=\"submit\" "
                      "name=\"decision\" value=\"approve\">Approve</button>\n<button "
                      "class=\"decline\" type=\"submit\" name=\"decision\" "
                      "value=\"decline\">Decline</button>\n</form>\n",
                      E(action), E(token));
    }
    as_buf_puts(&b, "</main>\n</body>\n</html>\n");
    return as_buf_str(&b);
#undef E
}
