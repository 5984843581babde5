/* The pages a person reads (docs/buying.md, docs/orders.md): the confirmation
 * page behind the signed link, the error pages of that link, the return
 * label to print, and the passkey enrolment page. */
#include "as_person_pages.h"

#include <string.h>

#include "as_util.h"

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

/* s without the characters as_text_hidden names: for a page's title, where
 * no element can isolate a name (a bidi override would reorder the tab). */
static const char *visible(as_mem *m, const char *s)
{
    as_buf b;
    as_buf_init(&b, m);
    size_t n = strlen(s);
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp;
        k = as_utf8_next(s + i, n - i, &cp);
        if (!k)
            k = 1; /* not UTF-8: left out */
        else if (!as_text_hidden(cp))
            as_buf_add(&b, s + i, k);
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
    bool pending = c->status == AS_CS_PENDING;
    const char *heading = pending                       ? "Approve a purchase"
                          : c->status == AS_CS_APPROVED ? "Purchase approved"
                          : c->status == AS_CS_DECLINED ? "Purchase declined"
                                                        : "Purchase not placed";
    as_buf b;
    as_buf_init(&b, m);
    page_head(&b, as_printf(m, "%s: %s", heading, E(visible(m, o->product_name))));
    as_buf_printf(&b, "<h1>%s</h1>\n", heading);
    if (notice) as_buf_printf(&b, "<p role=\"status\"><strong>%s</strong></p>\n", E(notice));
    /* the merchant's texts each isolated (<bdi>): a bidi override in a name,
     * even one a database held before the feed refused it, cannot reorder
     * the quantity, the merchant or the price around it */
    as_buf_printf(&b,
                  "<p>%s</p>\n<dl>\n<dt>Item</dt><dd id=\"item\"><bdi id=\"item-name\">%s</bdi> "
                  "(%s) &times; %lld, from <bdi id=\"item-merchant\">%s</bdi></dd>\n"
                  "<dt>Price</dt><dd id=\"price\">%s total, including VAT</dd>\n",
                  pending ? "An agent asks to place this order for you. It waits for your "
                            "decision."
                          : "An agent asked to place this order for you.",
                  E(o->product_name), E(o->sku), (long long)o->quantity, E(o->merchant_name),
                  E(as_eur_format(m, o->total_cents)));
    put_delivery(m, &b, o, now);
    as_buf_printf(&b,
                  "<dt>Agent</dt><dd id=\"agent\">%s</dd>\n<dt>Reason</dt><dd "
                  "id=\"reason\">%s</dd>\n<dt>Status</dt><dd id=\"status\">%s</dd>\n",
                  E(o->agent), E(o->reason), E(as_confirmation_state_name(c->status)));
    /* while it waits: how long the link lives; afterwards: when it ended */
    if (pending || c->status == AS_CS_EXPIRED || c->decided_at <= 0) {
        as_buf_printf(&b, "<dt>%s</dt><dd>",
                      pending                      ? "Link valid until"
                      : c->status == AS_CS_EXPIRED ? "Link expired"
                                                   : "Link was valid until");
        put_time(m, &b, "expires", c->expires_at, now);
    } else {
        as_buf_printf(&b, "<dt>%s</dt><dd>",
                      c->status == AS_CS_APPROVED   ? "Approved"
                      : c->status == AS_CS_DECLINED ? "Declined"
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

const char *as_return_label_page(as_mem *m, const as_return *r, const as_order *o)
{
#define E(s) as_html_escape(m, s)
    return as_printf(
        m,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Return label "
        "%s</title></head>\n<body>\n<main>\n<h1>Return label</h1>\n<dl>\n<dt>Carrier</dt><dd "
        "id=\"carrier\">%s</dd>\n<dt>Tracking code</dt><dd id=\"tracking\">%s</dd>\n"
        "<dt>Return to</dt><dd><bdi>%s</bdi></dd>\n<dt>Order</dt><dd>%s: <bdi>%s</bdi> "
        "&times; %lld</dd>\n"
        "<dt>Reason</dt><dd>%s</dd>\n</dl>\n<p>Print this page, attach it to the parcel and hand "
        "it to %s.</p>\n</main>\n</body>\n</html>\n",
        E(r->tracking_code), E(r->carrier), E(r->tracking_code), E(o->merchant_name), E(o->id),
        E(o->product_name), (long long)o->quantity, E(r->reason_code), E(r->carrier));
#undef E
}

const char *as_enrol_page(as_mem *m, const as_enrolment *e, const char *options, const char *script,
                          const char *problem)
{
#define E(x) as_html_escape(m, x)
    as_buf b;
    as_buf_init(&b, m);
    as_buf_printf(
        &b,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta "
        "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Register a "
        "passkey</title>\n<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem "
        "auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.6rem "
        "1.4rem}</style>\n</head>\n<body>\n<main>\n<h1>Register a passkey</h1>\n<p>Agents may "
        "buy for <strong id=\"user\">%s</strong> within a spending mandate. Purchases above its "
        "confirmation threshold wait for you, and only your passkey can approve them: your "
        "phone, computer or security key, unlocked by you (fingerprint, face or PIN).</p>\n"
        "<p>This link works once and until %s.</p>\n",
        E(e->user_id), E(as_time_format(m, e->expires_at)));
    if (problem) {
        as_buf_printf(&b, "<p role=\"alert\" id=\"status\">%s</p>\n", E(problem));
    } else {
        as_buf_printf(&b,
                      "<p><button id=\"enrol\" type=\"button\">Register a passkey</button></p>\n"
                      "<p role=\"status\" id=\"status\"></p>\n<script type=\"application/json\" "
                      "id=\"webauthn-options\">%s</script>\n<script src=\"%s\"></script>\n",
                      options, E(script));
    }
    as_buf_puts(&b, "</main>\n</body>\n</html>\n");
    return as_buf_str(&b);
#undef E
}
