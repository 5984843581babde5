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
        as_order_state_name(o->status), "item", "sku", o->sku, "name", o->product_name, "quantity",
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

/* What the person's pages share: readable on a 375 px phone (long words
 * wrap) and every button and link at least 44 px high (WCAG 2.5.5). */
#define PERSON_STYLE                                                                               \
    "body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;"       \
    "line-height:1.5;overflow-wrap:anywhere}dt{font-weight:600}dd{margin:0 0 .75rem}"              \
    "button{font-size:1rem;min-height:44px;padding:.6rem 1.4rem;margin:0 1rem .75rem 0}"           \
    "a{display:inline-block;min-height:44px;padding:.6rem 0;box-sizing:border-box}"                \
    ".approve{background:#1a7f37;color:#fff;border:0}"                                             \
    ".decline{background:#fff;border:2px solid #b42318;color:#b42318}"                             \
    ".support{font-size:.9rem;color:#555}"

static void page_head(as_buf *b, const char *title)
{
    as_buf_printf(b,
                  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>%s</title>\n<style>" PERSON_STYLE "</style>\n</head>\n<body>\n<main>\n",
                  title);
}

/* A time on the page: the date and time in UTC, and how far from now. */
static void put_time(as_mem *m, as_buf *b, const char *id, int64_t t, int64_t now)
{
    as_buf_printf(b, "<time id=\"%s\" datetime=\"%s\">%s</time> (%s)", id, as_time_format(m, t),
                  as_time_human(m, t), as_time_relative(m, t, now));
}

/* When the item arrives, as the quote promised it; nothing for an order
 * that will not be delivered. */
static void put_delivery(as_mem *m, as_buf *b, const as_order *o, int64_t now)
{
    bool coming =
        o->status == AS_OS_AWAITING || o->status == AS_OS_PLACED || o->status == AS_OS_SHIPPED;
    int64_t day;
    if (!coming || !o->delivery_by || !as_date_parse(o->delivery_by, &day)) return;
    int64_t today = now >= 0 ? now / 86400 : (now - 86399) / 86400;
    as_buf_printf(b,
                  "<dt>Delivery</dt><dd>by <time id=\"delivery\" datetime=\"%s\">%s</time> (%s)"
                  "%s</dd>\n",
                  o->delivery_by, as_date_human(m, day), as_date_relative(m, day, today),
                  o->status == AS_OS_AWAITING ? ", if you approve now" : "");
}

const char *as_confirmation_page(as_mem *m, const as_confirmation *c, const as_order *o,
                                 const char *action, const char *token, const char *notice,
                                 const as_approval_ui *ui, int64_t now)
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
    page_head(&b, as_printf(m, "%s: %s", heading, E(o->product_name)));
    as_buf_printf(&b, "<h1>%s</h1>\n", heading);
    if (notice) as_buf_printf(&b, "<p role=\"status\"><strong>%s</strong></p>\n", E(notice));
    as_buf_printf(&b,
                  "<p>%s</p>\n<dl>\n<dt>Item</dt><dd id=\"item\">%s (%s) &times; %lld, from "
                  "%s</dd>\n<dt>Price</dt><dd id=\"price\">%s total, including VAT</dd>\n",
                  pending ? "An agent asks to place this order for you. It waits for your "
                            "decision."
                          : "An agent asked to place this order for you.",
                  E(o->product_name), E(o->sku), (long long)o->quantity, E(o->merchant_name),
                  E(as_eur_format(m, o->total_cents)));
    put_delivery(m, &b, o, now);
    as_buf_printf(&b,
                  "<dt>Agent</dt><dd id=\"agent\">%s</dd>\n<dt>Reason</dt><dd "
                  "id=\"reason\">%s</dd>\n<dt>Status</dt><dd id=\"status\">%s</dd>\n",
                  E(o->agent), E(o->reason), E(c->status));
    /* while it waits: how long the link lives; afterwards: when it ended */
    if (pending || strcmp(c->status, "expired") == 0 || c->decided_at <= 0) {
        as_buf_printf(&b, "<dt>%s</dt><dd>",
                      pending                             ? "Link valid until"
                      : strcmp(c->status, "expired") == 0 ? "Link expired"
                                                          : "Link was valid until");
        put_time(m, &b, "expires", c->expires_at, now);
    } else {
        as_buf_printf(&b, "<dt>%s</dt><dd>",
                      strcmp(c->status, "approved") == 0   ? "Approved"
                      : strcmp(c->status, "declined") == 0 ? "Declined"
                                                           : "Cancelled");
        put_time(m, &b, "decided", c->decided_at, now);
    }
    as_buf_puts(&b, "</dd>\n</dl>\n");
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

/* What a person reads for each error a confirmation link can answer: what
 * happened, and what they can do. Codes the link cannot answer fall back to
 * the last row. */
typedef struct person_error {
    const char *codes; /* space-separated */
    const char *heading, *what, *todo;
} person_error;

static const person_error person_errors[] = {
    {"CONFIRMATION_INVALID NOT_FOUND", "This link does not work",
     "The link is incomplete or has been changed: perhaps it was cut off when it was copied, "
     "or a character is missing. Nothing was bought and nothing was changed.",
     "Open the link again from the message it came in, in full: if it runs over two lines, "
     "copy all of it. If it still does not work, ask the agent that sent it for the link "
     "again."},
    {"CONFIRMATION_EXPIRED", "This link has expired",
     "Nobody approved the purchase in time, so it was not placed, and the money and stock set "
     "aside for it were released.",
     "If you still want the item, ask your agent to order it again: you will get a new "
     "link."},
    {"CONFIRMATION_DECIDED", "This purchase was already decided",
     "It was approved or declined through this link before, or the agent cancelled the "
     "order. A decision cannot be changed.",
     "Open the link again to see what was decided."},
    {"PASSKEY_REQUIRED", "Your passkey is needed",
     "Approving this purchase needs your passkey, and none answered. Nothing changed: the "
     "purchase still waits for you.",
     "Open the link again and approve with your passkey, or decline."},
    {"MANDATE_INVALID", "This purchase can no longer be approved",
     "Your spending limits, or the agent's access, changed since the agent asked. The order "
     "was not placed.",
     "Check the limits you set for your agents, and ask the agent to order again if you "
     "still want the item."},
    {"VALIDATION_ERROR METHOD_NOT_ALLOWED UNSUPPORTED_MEDIA_TYPE PAYLOAD_TOO_LARGE "
     "LENGTH_REQUIRED URI_TOO_LONG HEADERS_TOO_LARGE",
     "The shop could not read this request",
     "What your browser sent is not what this page expects. Nothing was bought and nothing "
     "was changed.",
     "Open the link again from the message it came in, and use its Approve or Decline "
     "button."},
    {"RATE_LIMITED", "Too many attempts",
     "Your connection opened the shop's pages too often in a short time, so the shop pauses "
     "for a moment. Nothing was changed.",
     NULL /* written with the wait */},
    {"SERVICE_UNAVAILABLE INTERNAL_ERROR NOT_IMPLEMENTED REQUEST_TIMEOUT",
     "The shop cannot answer right now",
     "A problem on the shop's side stopped this request. A decision is either saved whole or "
     "not made at all, never half.",
     "Wait a minute, then open the link again: it shows where the purchase stands, and it "
     "stays valid until it expires."},
    {"", "Something went wrong", "The shop could not complete this request.",
     "Open the link again from the message it came in. If this keeps happening, tell the "
     "shop's support the error code below."},
};

static bool names(const char *codes, const char *code)
{
    size_t n = strlen(code);
    for (const char *p = codes; (p = strstr(p, code)) != NULL; p += n)
        if ((p == codes || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return true;
    return false;
}

const char *as_person_error_page(as_mem *m, int status, const char *code, int retry_after,
                                 const char *again, const char *docs)
{
    size_t last = sizeof person_errors / sizeof person_errors[0] - 1, i = 0;
    while (i < last && !names(person_errors[i].codes, code))
        i++;
    const person_error *e = &person_errors[i];
    const char *todo = e->todo;
    if (!todo)
        todo = retry_after > 0 ? as_printf(m, "Wait %d second%s, then try again.", retry_after,
                                           retry_after == 1 ? "" : "s")
                               : "Wait a minute, then try again.";
    as_buf b;
    as_buf_init(&b, m);
    page_head(&b, e->heading);
    as_buf_printf(&b,
                  "<h1>%s</h1>\n<p id=\"what\">%s</p>\n<h2>What you can do</h2>\n<p "
                  "id=\"todo\">%s</p>\n",
                  e->heading, e->what, as_html_escape(m, todo));
    if (again)
        as_buf_printf(&b, "<p><a id=\"again\" href=\"%s\">Try again</a></p>\n",
                      as_html_escape(m, again));
    as_buf_printf(&b,
                  "<p class=\"support\" id=\"support\">For the shop's support: error "
                  "<code>%s</code>, HTTP status %d.",
                  as_html_escape(m, code), status);
    if (docs)
        as_buf_printf(&b, "<br><a id=\"docs\" href=\"%s\">What this error means</a>",
                      as_html_escape(m, docs));
    as_buf_puts(&b, "</p>\n</main>\n</body>\n</html>\n");
    return as_buf_str(&b);
}
