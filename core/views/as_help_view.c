/* The help pages (GET /docs, /docs/{page}, /docs/errors/{code}) and the error
 * object whose `docs` link leads to them. The pages are data in this file:
 * small HTML5 documents without scripts (the glue sends a CSP that allows
 * none), their text taken from docs/api.md, buying.md and orders.md. Links
 * inside a page are relative, so the pages work under any API base. */
#include "as_help_view.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "as_util.h"

/* One error code: what it means, what to do, and whether a retry is safe.
 * Fragments are HTML; "@/" in them stands for the way back to the API base. */
typedef struct help_error {
    const char *code;
    const char *docs; /* "docs/errors/CODE": the `docs` link of the error object */
    int status;
    const char *summary; /* one line, for the list of errors */
    const char *meaning, *todo, *retry;
} help_error;

#define ERR(code, status, summary, meaning, todo, retry)                                           \
    {                                                                                              \
        code, "docs/errors/" code, status, summary, meaning, todo, retry                           \
    }

static const help_error errors[] = {
    ERR("CONFIRMATION_REQUIRED", 202, "The order waits for a human to approve it.",
        "<p>Not an error: <code>POST /orders</code> accepted the order, but its total is above "
        "the mandate&rsquo;s confirm-above threshold, so a person must approve it. The body "
        "carries <code>order_id</code>, <code>order</code> (status "
        "<code>awaiting_confirmation</code>) and <code>confirmation</code>: <code>id</code>, "
        "<code>url</code> (the signed link) and <code>expires_at</code>. Stock and budget are "
        "held while the person decides.</p>",
        "<p>Give <code>confirmation.url</code> to the person you act for; they open it in a "
        "browser and approve with their passkey, or decline. Do not decide for them: an "
        "agent's approval is refused (<code>PASSKEY_REQUIRED</code>). Poll <code>GET "
        "/orders/{id}</code> until the status is <code>placed</code>, <code>declined</code> or "
        "<code>expired</code> (the link lives <code>AgentShopConfirmationTTL</code> seconds, a "
        "day by default). See <a href=\"@/docs/checkout\">checkout</a>.</p>",
        "<p>Sending the same request again with the same <code>Idempotency-Key</code> is safe: "
        "it answers this 202 again and creates nothing. A new key would place a second order "
        "that also waits for approval.</p>"),
    ERR("VALIDATION_ERROR", 400, "A parameter, header or body field breaks the rules.",
        "<p>A query parameter, header or body field is outside the rules: unknown or repeated "
        "parameter, wrong type, a value outside the limits, bad percent-encoding or UTF-8, a "
        "body that is not a JSON object or has an unknown field, or device text that names no "
        "device or several. <code>field</code> names the offending parameter or field.</p>",
        "<p>Read <code>message</code> and <code>field</code>, correct the request and send it "
        "again.</p>",
        "<p>Not unchanged: the same request fails the same way. Nothing was changed, and a 400 "
        "is not remembered against an <code>Idempotency-Key</code>, so the corrected request "
        "may use the same key.</p>"),
    ERR("IDEMPOTENCY_KEY_REQUIRED", 400, "POST /orders or POST /returns without Idempotency-Key.",
        "<p><code>POST /orders</code> and <code>POST /returns</code> need the header "
        "<code>Idempotency-Key</code>: one value per intended order or return, so that a retry "
        "can never buy or return twice.</p>",
        "<p>Make a unique key (a UUID, for example) for this order or return, send it in the "
        "<code>Idempotency-Key</code> header, and send it again unchanged on every retry of the "
        "same request.</p>",
        "<p>Safe once the header is there: nothing was done.</p>"),
    ERR("AGENT_UNIDENTIFIED", 403,
        "The agent key or the Service-Agent header is missing or "
        "not accepted.",
        "<p>An endpoint that needs an agent was called without <code>Authorization: Bearer "
        "&lt;key&gt;</code> or without <code>Service-Agent: &lt;name&gt;/&lt;version&gt;</code>, "
        "or with a key that is malformed (not <code>&lt;prefix&gt;_sk_test_&lt;32 "
        "characters&gt;</code>), unknown or revoked. Keys never appear in the message.</p>",
        "<p>Send both headers on every request, for example <code>Service-Agent: "
        "shopping-bot/2.1</code>. If the key was revoked, ask the person you act for, or the "
        "shop&rsquo;s operator, for a new one (<code>agentshopctl key create</code>).</p>",
        "<p>Not unchanged: the same request is refused the same way. Nothing was done.</p>"),
    ERR("MANDATE_INVALID", 403, "No usable mandate, or the order is over its limits.",
        "<p>The mandate is what the person allows their agents to spend. This answer means "
        "there is no active mandate (none, revoked, or past <code>valid_until</code>), the "
        "<code>mandate_id</code> given is not the caller&rsquo;s, or the order&rsquo;s total is "
        "above the per-order limit or above what is left of the month; the message then names "
        "the limit and the remaining budget. Orders awaiting confirmation reserve budget "
        "too. A person approving an order that waited gets it when the mandate or the agent "
        "key changed meanwhile (revoked, past its last day, limits no longer holding): the "
        "order is then declined and its budget and stock released.</p>",
        "<p>Read <code>GET /mandates/current</code> for the limits and "
        "<code>remaining_this_month_cents</code>. Choose a cheaper offer or a smaller quantity "
        "(a new quote), or ask the person for a new mandate.</p>",
        "<p>The same request with the same <code>Idempotency-Key</code> is safe but answers "
        "this refusal again: it is remembered. After changing the order (a new quote), use a "
        "new key.</p>"),
    ERR("PASSKEY_REQUIRED", 403,
        "Approving this purchase needs the person's passkey, and none answered.",
        "<p>Under the shop's passkey policy (<code>AgentShopApproval passkey</code>, the "
        "default), an order above the mandate's confirm-above threshold is approved only with "
        "a WebAuthn assertion from one of the person's passkeys, over a single-use challenge "
        "issued for this confirmation. The approval carried none, or one that is another "
        "person's, answers a challenge not issued for this confirmation (or used already, or "
        "expired), or does not verify. Nothing changed: the order still waits for the person "
        "until the link expires. The message says which.</p>",
        "<p>An agent cannot approve: tell the person the purchase waits for them and let them "
        "open the link in their browser. A person without a passkey asks the shop's operator "
        "for an enrolment link (<code>agentshopctl user enrol</code>). Declining needs no "
        "passkey.</p>",
        "<p>The same request is refused the same way. A person's new attempt on the page gets "
        "a fresh challenge.</p>"),
    ERR("FORBIDDEN", 403, "httpd refused access before the API ran.",
        "<p>The web server&rsquo;s own access rules refused the request before it reached the "
        "shop (for example a <code>Require</code> rule of the site&rsquo;s configuration).</p>",
        "<p>Ask the shop&rsquo;s operator for access; the API cannot change this.</p>",
        "<p>Not unchanged: the same request is refused the same way. Nothing was done.</p>"),
    ERR("NOT_FOUND", 404, "No such endpoint, product, device, quote, order, return or page.",
        "<p>The path is not an endpoint of the API, or the sku, device, offer, quote, order, "
        "return or help page does not exist. Another user&rsquo;s quote, order, return or "
        "confirmation is answered the same way, exactly as if it did not exist.</p>",
        "<p>Check the identifier and its spelling. <a href=\"@/\">The API base</a> lists every "
        "endpoint; <code>GET /search</code> and <code>GET /devices</code> list skus and device "
        "slugs.</p>",
        "<p>Not unchanged: the same request gets the same answer. A refused order or return is "
        "remembered against its <code>Idempotency-Key</code>, so a corrected one needs a new "
        "key.</p>"),
    ERR("CONFIRMATION_INVALID", 404, "The confirmation link's id or token is wrong.",
        "<p>The confirmation id is unknown, or the link&rsquo;s <code>token</code> is missing, "
        "malformed, truncated or belongs to another link. A wrong token is answered exactly "
        "like an unknown id.</p>",
        "<p>Open the complete <code>confirmation.url</code> from the 202 answer, unchanged; a "
        "decision posted as JSON needs the same <code>token</code>.</p>",
        "<p>Not unchanged: the same link is refused the same way. Nothing was done.</p>"),
    ERR("METHOD_NOT_ALLOWED", 405, "The path exists, but not with this method.",
        "<p>The path is an endpoint of the API, but it does not take this method. The "
        "<code>Allow</code> header lists the methods it takes.</p>",
        "<p>Use one of the methods in <code>Allow</code>; <a href=\"@/\">the API base</a> "
        "lists every endpoint with its methods.</p>",
        "<p>Not unchanged. Nothing was done.</p>"),
    ERR("REQUEST_TIMEOUT", 408, "The request did not arrive in time.",
        "<p>httpd did not receive the whole request in time (its <code>RequestReadTimeout"
        "</code>); the request was not handled.</p>",
        "<p>Send the request again, in full.</p>",
        "<p>Safe: the request never reached the shop. Orders and returns are sent again with "
        "the same <code>Idempotency-Key</code>.</p>"),
    ERR("OUT_OF_STOCK", 409, "The product or the offer lacks the quantity.",
        "<p>The product, or the offer asked for, does not have the quantity in stock: when the "
        "quote is made, or when the order is made (units are taken then, not when "
        "quoting). Approving an order that waits for a person is refused the same way when "
        "its offer, product or merchant was withdrawn from sale meanwhile: the order is "
        "declined, its budget and units released.</p>",
        "<p>Ask for fewer units, another offer (omit <code>offer_id</code> to get the "
        "best-ranked offer that has the quantity) or another product, and take a new "
        "quote.</p>",
        "<p>Not unchanged: the same <code>Idempotency-Key</code> answers this refusal again. A "
        "new quote and a new key are a new attempt.</p>"),
    ERR("OFFER_NOT_ELIGIBLE", 409, "The offer cannot be quoted, e.g. it misses deliver_by.",
        "<p>The offer asked for, or every offer of the product, cannot be bought under the "
        "request&rsquo;s conditions, for example it cannot arrive by <code>deliver_by</code>; "
        "the message says when it would arrive.</p>",
        "<p>Relax <code>deliver_by</code>, or choose another offer or product.</p>",
        "<p>Not unchanged: the same request is refused the same way. Nothing was done.</p>"),
    ERR("QUOTE_ALREADY_USED", 409, "The quote was already turned into an order.",
        "<p>A quote becomes at most one order. This one already did, through another request "
        "with another <code>Idempotency-Key</code>.</p>",
        "<p>If you meant to retry the earlier order, send it with its original "
        "<code>Idempotency-Key</code>: you get its first answer. To buy again, take a new "
        "quote.</p>",
        "<p>Retrying with the original key is safe. A new key with the same quote is always "
        "refused, so nothing can be bought twice.</p>"),
    ERR("ORDER_NOT_CANCELLABLE", 409, "The order can no longer be cancelled.",
        "<p>Cancelling works from <code>awaiting_confirmation</code> and <code>placed</code>. "
        "This order has shipped or been delivered (the message points to returns), or it was "
        "declined, expired or returned. A cancel of an order already cancelled answers 200.</p>",
        "<p>Read <code>GET /orders/{id}</code>. A shipped or delivered order can be returned "
        "with <code>POST /returns</code>.</p>",
        "<p>Not unchanged: the order&rsquo;s state will not move back. Nothing was done.</p>"),
    ERR("ORDER_NOT_RETURNABLE", 409, "The order is not shipped or delivered, or was returned.",
        "<p>An order can be returned once, when it is <code>shipped</code> or "
        "<code>delivered</code>. This one is not there yet (cancel it instead) or was already "
        "returned.</p>",
        "<p>Read <code>GET /orders/{id}</code>; an order that is <code>placed</code> or "
        "<code>awaiting_confirmation</code> is cancelled with <code>POST "
        "/orders/{id}/cancel</code>.</p>",
        "<p>The same <code>Idempotency-Key</code> answers this refusal again. Once the order "
        "has shipped, a return with a new key can succeed.</p>"),
    ERR("CONFIRMATION_DECIDED", 409, "The confirmation was already decided otherwise.",
        "<p>The confirmation was already approved, declined or closed by a cancel, and this "
        "request asks for another decision. Sending the same decision again answers 200 with "
        "the state as it is.</p>",
        "<p>Read the link (<code>GET /confirmations/{id}?token=...</code>) or "
        "<code>GET /orders/{id}</code> to see what was decided.</p>",
        "<p>Not unchanged: a decision is final. Nothing was changed.</p>"),
    ERR("IDEMPOTENCY_KEY_IN_USE", 409, "A claim on this key is still in flight.",
        "<p>An earlier version of the service left a claim on this "
        "<code>Idempotency-Key</code> in flight (today a key is claimed in the same "
        "transaction as the order, and a retry waits for the first request instead). "
        "<code>Retry-After</code> says how many seconds to wait. Such a claim is a lease of 30 "
        "seconds: if the process handling it died, the next retry after the lease takes it "
        "over.</p>",
        "<p>Wait <code>Retry-After</code> seconds, then send the same request with the same key "
        "and body: you get the first request&rsquo;s answer.</p>",
        "<p>Safe, with the same key and body: it never creates a second order or return.</p>"),
    ERR("QUOTE_EXPIRED", 410, "The quote is older than its validity.",
        "<p>A quote is valid <code>AgentShopQuoteTTL</code> seconds (10 minutes by default). "
        "This one had expired when the order was made; nothing was bought.</p>",
        "<p>Take a new quote (the price or the delivery date may have changed) and order it "
        "with a new <code>Idempotency-Key</code>.</p>",
        "<p>The same key answers this refusal again; the expired quote can never be "
        "ordered.</p>"),
    ERR("CONFIRMATION_EXPIRED", 410, "The confirmation link expired before a decision.",
        "<p>Nobody decided within <code>AgentShopConfirmationTTL</code> seconds (a day by "
        "default). The order became <code>expired</code> and gave back its budget and "
        "stock.</p>",
        "<p>If the person still wants the item, the agent places a new order (a new quote and "
        "a new key), which comes with a new link.</p>",
        "<p>Not unchanged: the link stays expired. Nothing was bought.</p>"),
    ERR("LENGTH_REQUIRED", 411, "A body without Content-Length or chunked encoding.",
        "<p>The request has a body but neither a <code>Content-Length</code> header nor chunked "
        "transfer encoding.</p>",
        "<p>Send a <code>Content-Length</code> with the body.</p>",
        "<p>Safe once corrected: the request was not handled.</p>"),
    ERR("PAYLOAD_TOO_LARGE", 413, "The body is larger than 64 KiB.",
        "<p>Request bodies are limited to 64 KiB, chunked bodies too; the body was refused "
        "before it was read in full.</p>",
        "<p>Send a smaller body: no endpoint needs more.</p>",
        "<p>Not unchanged. Nothing was done.</p>"),
    ERR("URI_TOO_LONG", 414, "The request line is too long.",
        "<p>The request line is longer than httpd&rsquo;s <code>LimitRequestLine</code>.</p>",
        "<p>Shorten the query string: every parameter has a length limit far below it.</p>",
        "<p>Not unchanged. Nothing was done.</p>"),
    ERR("UNSUPPORTED_MEDIA_TYPE", 415, "The body is not in a media type the API takes.",
        "<p>The body&rsquo;s <code>Content-Type</code> is one the API does not take.</p>",
        "<p>Send bodies as <code>application/json</code> (the confirmation page&rsquo;s form "
        "also posts <code>application/x-www-form-urlencoded</code>).</p>",
        "<p>Not unchanged. Nothing was done.</p>"),
    ERR("CATEGORY_NOT_ALLOWED", 422, "The mandate does not allow the product's category.",
        "<p>The product&rsquo;s category is not among the mandate&rsquo;s "
        "<code>allowed_categories</code>; nothing was bought.</p>",
        "<p>Read <code>GET /mandates/current</code>, choose a product of an allowed category, "
        "or ask the person you act for to widen the mandate.</p>",
        "<p>The same <code>Idempotency-Key</code> answers this refusal again. Another product "
        "is a new quote and a new key.</p>"),
    ERR("RETURN_WINDOW_CLOSED", 422, "The return comes after the return window.",
        "<p>Returns are accepted until <code>AgentShopReturnWindow</code> days (30 by default) "
        "after delivery; <code>GET /orders/{id}</code> shows "
        "<code>return_window_ends_at</code>. This one is later.</p>",
        "<p>The API cannot return this order; the person may contact the merchant.</p>",
        "<p>Not unchanged: the window will not open again. Nothing was done.</p>"),
    ERR("IDEMPOTENCY_KEY_REUSED", 422, "The Idempotency-Key was used with another body.",
        "<p>This <code>Idempotency-Key</code> was already used with a different body (bodies "
        "are compared as JSON, so key order and spacing do not matter). A key stands for one "
        "intended order or return.</p>",
        "<p>To retry the earlier request, send its original body. For a new order or return, "
        "make a new key.</p>",
        "<p>Not with this body: the key stays bound to the first one. Nothing was done.</p>"),
    ERR("RATE_LIMITED", 429, "Too many requests; wait Retry-After seconds.",
        "<p>The caller is over <code>AgentShopRateLimit</code> (600 requests per 60 seconds by "
        "default), counted per agent key, or per client address without a key. "
        "<code>Retry-After</code> says how many seconds until the window ends.</p>",
        "<p>Wait <code>Retry-After</code> seconds and slow down; read a product view once "
        "rather than in a loop.</p>",
        "<p>Safe after <code>Retry-After</code>: the request was not handled. Orders and returns "
        "are sent again with the same <code>Idempotency-Key</code>.</p>"),
    ERR("HEADERS_TOO_LARGE", 431, "The request headers are too large.",
        "<p>The request&rsquo;s headers are larger than httpd accepts.</p>",
        "<p>Send fewer or shorter headers.</p>", "<p>Not unchanged. Nothing was done.</p>"),
    ERR("INTERNAL_ERROR", 500, "The server could not complete the request.",
        "<p>Something unexpected failed inside the server.</p>",
        "<p>Retry once after a pause; if it persists, tell the shop&rsquo;s operator the time "
        "and the endpoint.</p>",
        "<p>Safe for reads. Orders and returns are sent again with the same "
        "<code>Idempotency-Key</code>, which never creates a second one.</p>"),
    ERR("NOT_IMPLEMENTED", 501, "The method or feature is not implemented.",
        "<p>The server does not implement this method, or this feature is not available "
        "yet.</p>",
        "<p>Use the methods listed by <a href=\"@/\">the API base</a>.</p>",
        "<p>Not unchanged. Nothing was done.</p>"),
    ERR("SERVICE_UNAVAILABLE", 503, "The shop cannot complete this right now; retry shortly.",
        "<p>The database cannot be reached or failed. Usually nothing was changed; when the "
        "message says the change was saved, only reading its result back failed.</p>",
        "<p>Retry shortly.</p>",
        "<p>Safe. A 503 is not remembered against an <code>Idempotency-Key</code>: send orders "
        "and returns again with the same key, which either runs them or, if the change was "
        "saved, answers its first result. It never buys twice.</p>"),
};

enum { N_ERRORS = sizeof(errors) / sizeof(errors[0]) };

static const help_error *error_by_code(const char *code)
{
    for (size_t i = 0; code && i < N_ERRORS; i++)
        if (strcmp(errors[i].code, code) == 0) return &errors[i];
    return NULL;
}

const char *as_error_docs(const char *code)
{
    const help_error *e = error_by_code(code);
    return e ? e->docs : "docs/errors";
}

const char *as_help_error_code(size_t i)
{
    return i < N_ERRORS ? errors[i].code : NULL;
}

/* ---- the pages ---- */

static const char CHECKOUT[] =
    "<p>An agent buys for a person in two steps: a <strong>quote</strong> fixes the offer, the "
    "price and the delivery date for a short time; an <strong>order</strong> made from the "
    "quote is checked against the person&rsquo;s <strong>mandate</strong>. Above the "
    "mandate&rsquo;s confirm-above threshold a human approves or declines through a signed "
    "link.</p>\n"
    "<h2>0. Who is buying</h2>\n"
    "<p>Every request below sends two headers; without them, or with a key that is unknown or "
    "revoked, the answer is <a href=\"@/docs/errors/AGENT_UNIDENTIFIED\">403 "
    "AGENT_UNIDENTIFIED</a>.</p>\n"
    "<pre>Authorization: Bearer agentshop_sk_test_&lt;32 letters or digits&gt;\n"
    "Service-Agent: &lt;name&gt;/&lt;version&gt;</pre>\n"
    "<p><code>GET /mandates/current</code> shows the mandate: allowed categories, per-order "
    "limit, monthly limit, confirm-above threshold, and what is left this month.</p>\n"
    "<h2>1. Choose</h2>\n"
    "<p><code>GET /search</code> and <code>GET /products/{sku}</code>. Read "
    "<code>excluded</code> before choosing: products whose measurements contradict the "
    "merchant&rsquo;s claims are left out by default. Pass <code>device</code> to get the fit "
    "status and the right-item guarantee.</p>\n"
    "<h2>2. Quote</h2>\n"
    "<pre>POST /quotes\n"
    "{\"sku\": \"TN-0004\", \"quantity\": 2, \"device\": \"hp-laserjet-pro-m404dn\"}</pre>\n"
    "<p>Only <code>sku</code> is required; without <code>offer_id</code> the best-ranked "
    "eligible offer with the quantity in stock is quoted. The answer (201) has the "
    "<code>id</code>, the exact <code>total_cents</code>, <code>delivery_by</code> and "
    "<code>expires_at</code>. A quote commits nothing and is valid 10 minutes by default.</p>\n"
    "<h2>3. Order, with an Idempotency-Key</h2>\n"
    "<pre>POST /orders\n"
    "Idempotency-Key: 6f1c...   (one value per intended order)\n"
    "{\"quote_id\": \"q_...\", \"reason\": \"Why this item and offer, shown to the "
    "person\"}</pre>\n"
    "<p><code>reason</code> (20 to 500 characters) is shown to the person on the receipt and "
    "on the confirmation page. <code>mandate_id</code> is optional: the active mandate is "
    "used. In one transaction the shop checks, in this order:</p>\n"
    "<ol>\n"
    "<li>the quote is yours (<a href=\"@/docs/errors/NOT_FOUND\">404 NOT_FOUND</a>), unused (<a "
    "href=\"@/docs/errors/QUOTE_ALREADY_USED\">409 QUOTE_ALREADY_USED</a>) and not expired (<a "
    "href=\"@/docs/errors/QUOTE_EXPIRED\">410 QUOTE_EXPIRED</a>);</li>\n"
    "<li>the mandate is yours, active and not past <code>valid_until</code> (<a "
    "href=\"@/docs/errors/MANDATE_INVALID\">403 MANDATE_INVALID</a>);</li>\n"
    "<li>the product&rsquo;s category is allowed (<a "
    "href=\"@/docs/errors/CATEGORY_NOT_ALLOWED\">422 CATEGORY_NOT_ALLOWED</a>);</li>\n"
    "<li>the total is within the per-order limit and what is left of the month (<a "
    "href=\"@/docs/errors/MANDATE_INVALID\">403 MANDATE_INVALID</a>, naming the limit and the "
    "remaining budget);</li>\n"
    "<li>the offer still has the units (<a href=\"@/docs/errors/OUT_OF_STOCK\">409 "
    "OUT_OF_STOCK</a>); they are taken now.</li>\n"
    "</ol>\n";

/* The checkout page goes on: C11 promises string literals of 4095 characters only. */
static const char CHECKOUT_END[] =
    "<h2>4. Placed, or waiting for a human</h2>\n"
    "<ul>\n"
    "<li>Total at or below the confirm-above threshold: <strong>201</strong> with the order, "
    "status <code>placed</code>.</li>\n"
    "<li>Above it: <strong>202</strong> <a "
    "href=\"@/docs/errors/CONFIRMATION_REQUIRED\">CONFIRMATION_REQUIRED</a> with "
    "<code>order_id</code> and <code>confirmation.url</code>, a signed link. Give the link to "
    "the person; they see the item, the price, the agent and the reason, and click Approve or "
    "Decline. Stock and budget are held meanwhile.</li>\n"
    "</ul>\n"
    "<h2>5. Poll</h2>\n"
    "<p>The shop sends no webhooks. Read <code>GET /orders/{id}</code>: its "
    "<code>status</code> and <code>timeline</code> show <code>awaiting_confirmation</code>, "
    "then <code>placed</code>, <code>declined</code> or <code>expired</code>, and later "
    "<code>shipped</code> and <code>delivered</code>. Poll gently (every few seconds at "
    "most): requests are <a href=\"@/docs/errors/RATE_LIMITED\">rate limited</a>.</p>\n"
    "<h2>Retries</h2>\n"
    "<p>Send a failed or unanswered order again with the <em>same</em> "
    "<code>Idempotency-Key</code> and body: you get the first answer again (header "
    "<code>Idempotent-Replayed: true</code>) and nothing is bought twice. The same key with "
    "another body is <a href=\"@/docs/errors/IDEMPOTENCY_KEY_REUSED\">422 "
    "IDEMPOTENCY_KEY_REUSED</a>; a retry while the first request still runs waits for it "
    "and gets its answer (<a href=\"@/docs/errors/IDEMPOTENCY_KEY_IN_USE\">409 "
    "IDEMPOTENCY_KEY_IN_USE</a> only for a claim an earlier version left). Keys are "
    "kept at least 24 hours. Each error page says whether a retry is safe.</p>\n"
    "<h2>After the sale</h2>\n"
    "<p><code>POST /orders/{id}/cancel</code> while <code>awaiting_confirmation</code> or "
    "<code>placed</code>; <code>POST /returns</code> (with an <code>Idempotency-Key</code>) "
    "once shipped or delivered. Returned as <code>wrong_item</code> or "
    "<code>does_not_fit</code>, an order quoted with a device it was verified to fit is "
    "refunded at once.</p>\n"
    "<h2>Over MCP</h2>\n"
    "<p>Agents that speak the Model Context Protocol use the endpoint <code>POST /mcp</code> "
    "and call the tool <code>create_order</code> (the product view&rsquo;s "
    "<code>agent_checkout.mcp</code>) instead of <code>POST /orders</code>: the same "
    "quote, reason and mandate checks, and the same answers, including a confirmation link "
    "when a human must approve.</p>\n";

static const char INDEX[] =
    "<p>Help for agents and the people they buy for. The machine-readable description is <a "
    "href=\"@/openapi.json\">openapi.json</a>; <a href=\"@/\">the API base</a> lists every "
    "endpoint.</p>\n"
    "<ul>\n"
    "<li><a href=\"@/docs/checkout\">Checkout</a>: how an agent buys &mdash; quote, order with "
    "an Idempotency-Key, human confirmation, polling.</li>\n"
    "<li><a href=\"@/docs/errors\">Errors</a>: every error code the API answers, what it means, "
    "what to do, and whether a retry is safe.</li>\n"
    "</ul>\n"
    "<p>Every error object carries a <code>docs</code> link to its page, relative to the API "
    "base.</p>\n";

/* Fits a 375 px phone: long codes and paths wrap (overflow-wrap:anywhere)
 * rather than widen the page; the nav's links are 44 px targets. */
static const char STYLE[] =
    "body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;"
    "line-height:1.5;overflow-wrap:anywhere}nav{font-size:.9rem;margin-bottom:1rem}nav a{"
    "display:inline-block;min-height:44px;padding:.7rem .2rem;box-sizing:border-box}"
    "pre{background:#f4f4f4;padding:.6rem;white-space:pre-wrap}code{background:#f4f4f4;"
    "padding:0 .2rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid "
    "#ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}";

/* s with every "@/" replaced by back (the relative way to the API base). */
static void put_linked(as_buf *b, const char *s, const char *back)
{
    const char *p;
    while ((p = strstr(s, "@/")) != NULL) {
        as_buf_add(b, s, (size_t)(p - s));
        as_buf_puts(b, back);
        s = p + 2;
    }
    as_buf_puts(b, s);
}

static void page_open(as_buf *b, const char *title, bool index, const char *back)
{
    as_buf_printf(b,
                  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>%s%s</title>\n<style>%s</style>\n</head>\n<body>\n",
                  title, index ? "" : " &mdash; Agent Shopping API help", STYLE);
    put_linked(b,
               "<nav><a href=\"@/docs\">Help</a> &middot; <a href=\"@/docs/checkout\">Checkout"
               "</a> &middot; <a href=\"@/docs/errors\">Errors</a> &middot; <a href=\"@/\">API"
               "</a></nav>\n",
               back);
    as_buf_printf(b, "<main>\n<h1>%s</h1>\n", title);
}

static void page_close(as_buf *b)
{
    as_buf_puts(b, "</main>\n</body>\n</html>\n");
}

static void errors_index(as_buf *b, const char *back)
{
    as_buf_puts(b, "<p>Every error is a JSON object: <code>error</code> (the code), "
                   "<code>message</code>, <code>docs</code> (a link to its page here) and, on "
                   "validation errors, <code>field</code>.</p>\n"
                   "<table>\n<thead><tr><th>Status</th><th>Code</th><th>Meaning</th></tr>"
                   "</thead>\n<tbody>\n");
    for (size_t i = 0; i < N_ERRORS; i++)
        as_buf_printf(b,
                      "<tr><td>%d</td><td><a href=\"%s%s\"><code>%s</code></a></td><td>%s"
                      "</td></tr>\n",
                      errors[i].status, back, errors[i].docs, errors[i].code, errors[i].summary);
    as_buf_puts(b, "</tbody>\n</table>\n");
}

static void error_page(as_buf *b, const help_error *e, const char *back)
{
    as_buf_printf(b,
                  "<p><strong>HTTP status %d</strong> &middot; <code>\"error\": \"%s\"</code>"
                  "</p>\n<p>%s</p>\n<h2>What it means</h2>\n",
                  e->status, e->code, e->summary);
    put_linked(b, e->meaning, back);
    as_buf_puts(b, "\n<h2>What to do</h2>\n");
    put_linked(b, e->todo, back);
    as_buf_puts(b, "\n<h2>Is retrying safe?</h2>\n");
    put_linked(b, e->retry, back);
    as_buf_puts(b, "\n");
}

const char *as_help_page(as_mem *m, const char *page, const char *code, const char *back)
{
    const help_error *e = NULL;
    const char *title;
    if (!page)
        title = "Agent Shopping API help";
    else if (strcmp(page, "checkout") == 0 && !code)
        title = "Checkout: how an agent buys";
    else if (strcmp(page, "errors") == 0 && !code)
        title = "Errors";
    else if (strcmp(page, "errors") == 0 && (e = error_by_code(code)) != NULL)
        title = e->code;
    else
        return NULL;

    as_buf b;
    as_buf_init(&b, m);
    page_open(&b, title, !page, back);
    if (e)
        error_page(&b, e, back);
    else if (!page)
        put_linked(&b, INDEX, back);
    else if (strcmp(page, "checkout") == 0) {
        put_linked(&b, CHECKOUT, back);
        put_linked(&b, CHECKOUT_END, back);
    } else
        errors_index(&b, back);
    page_close(&b);
    return as_buf_str(&b);
}

/* ---- the error object ---- */

/* A copy of s that is valid UTF-8 (as_utf8_repair): messages can quote
 * input (jansson's parse errors quote the text, and may cut a character in
 * half); the error object must still be JSON. Caller frees. */
static char *utf8_repaired(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    if (out) as_utf8_repair(out, s, n);
    return out;
}

json_t *as_error_object(const char *code, const char *field, const char *message)
{
    char *msg = utf8_repaired(message ? message : "");
    char *fld = field ? utf8_repaired(field) : NULL;
    json_t *o = msg ? json_pack("{s:s, s:s}", "error", code, "message", msg) : NULL;
    if (o && fld) json_object_set_new(o, "field", json_string(fld));
    /* Every code has a help page (as_help_api.c), relative to the API base. */
    if (o) json_object_set_new(o, "docs", json_string(as_error_docs(code)));
    free(msg);
    free(fld);
    if (!o) /* out of memory: still an error object */
        o = json_pack("{s:s, s:s}", "error", code, "message", "The request failed.");
    return o;
}
