/* The operator's daily commands (ctl/ctl_ops.h): what orders and returns came
 * in, one order or mandate in full, who the users are, and an offer's price
 * and stock. Reads print what the database holds now: an order the demo
 * store's simulated fulfilment would move on shows as stored until the API
 * reads it. */
#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "as_buy_view.h"
#include "as_db_ops.h"
#include "as_order_fsm.h"
#include "as_orders.h"
#include "as_util.h"
#include "ctl_ops.h"

/* The highest agent price offer set takes, €1,000,000: far above any part
 * the shop sells, and a quote of 10 units stays far inside int64 cents. */
#define OFFER_MAX_CENTS 100000000
#define STOCK_MAX 1000000

/* The refund statuses the schema's CHECK on returns allows. */
static const char *const refund_statuses[] = {"refunded", "pending_inspection", NULL};

/* What a list callback needs: the memory for the times' text, and whether a
 * line could not be written (a script must not take a short list as whole). */
typedef struct lines {
    as_mem *m;
    int bad;
} lines;

/* One compact JSON object per line (JSON Lines), released. */
static void print_line(lines *l, json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    } else {
        l->bad = 1;
    }
    json_decref(v);
}

/* The end of a list: 0, or why it is not whole. */
static int lines_end(const lines *l, const char *cmd, int rc)
{
    if (rc != AS_OK) return die("%s failed: reading the database failed%s", cmd, NULL);
    if (l->bad) return die("%s failed: a row could not be written as JSON%s", cmd, NULL);
    if (fflush(stdout) != 0 || ferror(stdout))
        return die("%s failed: writing to stdout failed%s", cmd, NULL);
    return 0;
}

/* "a, b or c" of the NULL-terminated names. */
static const char *one_of(apr_pool_t *p, const char *const *names)
{
    const char *s = "";
    for (size_t i = 0; names[i]; i++)
        s = apr_pstrcat(p, s, i == 0 ? "" : names[i + 1] ? ", " : " or ", names[i], NULL);
    return s;
}

/* The filters of a list: --status, one of `statuses` (NULL: any), and
 * --since, a day (from its midnight, UTC) or a UTC time (0: any). */
static int list_filters(const opts *o, apr_pool_t *p, const char *cmd, const char *const *statuses,
                        const char **status, int64_t *since)
{
    static const char *const names[] = {"--status", "--since", NULL};
    const char *usage_line = apr_pstrcat(p, cmd, " [--status S] [--since T]", NULL);
    if (only_opts(o, 2, names, usage_line)) return 1;
    *status = opt(o, 2, "--status");
    const char *s = opt(o, 2, "--since");
    int known = !*status;
    for (size_t i = 0; !known && statuses[i]; i++)
        known = strcmp(*status, statuses[i]) == 0;
    if (!known)
        return die("%s: --status must be %s", cmd,
                   apr_psprintf(p, "%s, not '%s'", one_of(p, statuses), *status));
    int64_t day;
    *since = 0;
    if (s && as_date_parse(s, &day))
        *since = day * 86400;
    else if (s && !as_time_parse(s, since))
        return die("%s: --since must be a date yyyy-mm-dd or a UTC time yyyy-mm-ddThh:mm:ssZ, "
                   "not '%s'",
                   cmd, s);
    return 0;
}

/* ---- order list | order show ---- */

static void order_line(void *baton, const as_order *o)
{
    lines *l = baton;
    print_line(l, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s, "
                            "s:s, s:s, s:s}",
                            "id", o->id, "status", as_order_state_name(o->status), "user_id",
                            o->user_id, "mandate_id", o->mandate_id, "quote_id", o->quote_id,
                            "offer_id", o->offer_id, "sku", o->sku, "name", o->product_name,
                            "merchant", o->merchant_name, "quantity", (json_int_t)o->quantity,
                            "unit_price_cents", (json_int_t)o->unit_price_cents, "total_cents",
                            (json_int_t)o->total_cents, "currency", "EUR", "created_at",
                            as_time_format(l->m, o->created_at), "updated_at",
                            as_time_format(l->m, o->updated_at), "agent", o->agent));
}

int ctl_order_list(const opts *o, apr_pool_t *p)
{
    const char *states[AS_OS_N + 1];
    for (int i = 0; i < AS_OS_N; i++)
        states[i] = as_order_state_name((as_order_state)i);
    states[AS_OS_N] = NULL;
    const char *status;
    int64_t since;
    if (list_filters(o, p, "order list", states, &status, &since)) return 1;
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_mem m = as_db_pool_mem(p);
    lines l = {&m, 0};
    int rc = as_db_ops_orders(&db, status, since, order_line, &l);
    as_db_close(&db);
    return lines_end(&l, "order list", rc);
}

static json_t *return_json(as_mem *m, const as_return *r, const char *order_status, const char *sku)
{
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:I, s:s, s:s, s:s, s:o, s:s}", "id", r->id,
        "order_id", r->order_id, "order_status", order_status, "user_id", r->user_id, "sku", sku,
        "reason_code", r->reason_code, "note", str_or_null(r->note), "refund_status",
        r->refund_status, "refund_cents", (json_int_t)r->refund_cents, "currency", "EUR", "carrier",
        r->carrier, "tracking_code", r->tracking_code, "replacement_sku",
        str_or_null(r->replacement_sku), "created_at", as_time_format(m, r->created_at));
}

/* The API's view of the order (timeline included), with what the operator
 * also needs: whose it is, the agent key that placed it, its last change and
 * its return. */
int ctl_order_show(const opts *o, apr_pool_t *p)
{
    if (o->argc != 3) return die("usage: order show ID%s%s", NULL, NULL);
    const char *id = o->argv[2];
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_mem m = as_db_pool_mem(p);
    as_store st = as_db_store(&db);
    as_order ord;
    as_return r;
    int rc = as_store_order_get(&st, &m, id, &ord);
    if (rc == AS_ENOTFOUND) return die("order show: there is no order '%s'%s", id, NULL);
    int has_return = rc == AS_OK ? as_store_return_by_order(&st, &m, id, &r) : AS_EDB;
    if (rc != AS_OK || has_return == AS_EDB) return die("order show failed%s%s", NULL, NULL);
    json_t *v = as_view_order(&m, &ord);
    int64_t shipped = as_order_event_at(&ord, AS_OS_SHIPPED),
            delivered = as_order_event_at(&ord, AS_OS_DELIVERED);
    json_object_set_new(v, "user_id", json_string(ord.user_id));
    json_object_set_new(v, "key_id", str_or_null(ord.key_id));
    json_object_set_new(v, "updated_at", json_string(as_time_format(&m, ord.updated_at)));
    json_object_set_new(v, "shipped_at",
                        shipped ? json_string(as_time_format(&m, shipped)) : json_null());
    json_object_set_new(v, "delivered_at",
                        delivered ? json_string(as_time_format(&m, delivered)) : json_null());
    json_object_set_new(v, "return",
                        has_return == AS_OK
                            ? return_json(&m, &r, as_order_state_name(ord.status), ord.sku)
                            : json_null());
    as_db_close(&db);
    return print_json(v);
}

/* ---- return list ---- */

static void return_line(void *baton, const as_return *r, const char *order_status, const char *sku)
{
    lines *l = baton;
    print_line(l, return_json(l->m, r, order_status, sku));
}

int ctl_return(const opts *o, apr_pool_t *p)
{
    if (o->argc < 2 || strcmp(o->argv[1], "list") != 0)
        return die("usage: return list [--status S] [--since T]%s%s", NULL, NULL);
    const char *status;
    int64_t since;
    if (list_filters(o, p, "return list", refund_statuses, &status, &since)) return 1;
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_mem m = as_db_pool_mem(p);
    lines l = {&m, 0};
    int rc = as_db_ops_returns(&db, status, since, return_line, &l);
    as_db_close(&db);
    return lines_end(&l, "return list", rc);
}

/* ---- offer set ---- */

static json_t *offer_json(const as_ops_offer *f)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:I, s:I, s:s, s:I, s:I}", "id", f->id, "sku",
                     f->sku, "merchant", "id", f->merchant_id, "name", f->merchant_name,
                     "price_cents", (json_int_t)f->price_cents, "retail_price_cents",
                     (json_int_t)f->retail_price_cents, "currency", "EUR", "stock",
                     (json_int_t)f->stock, "delivery_days", (json_int_t)f->delivery_days);
}

/* Why the offer cannot take the change, or NULL. A withdrawn offer (or one of
 * a withdrawn product or merchant) is sold no more. The agent price is the
 * agent-only price (its price_label), never above the store's ordinary price,
 * retail_price_cents. */
static const char *offer_refusal(as_mem *m, const as_ops_offer *f, const char *price_s,
                                 int64_t price)
{
    if (f->withdrawn && strcmp(f->withdrawn, "offer") == 0)
        return as_printf(m, "offer %s is withdrawn", f->id);
    if (f->withdrawn)
        return as_printf(m, "offer %s is withdrawn: its %s %s is withdrawn from sale", f->id,
                         f->withdrawn,
                         strcmp(f->withdrawn, "product") == 0 ? f->sku : f->merchant_id);
    if (price_s && price > f->retail_price_cents)
        return as_printf(m,
                         "--price-eur %s is above the retail price of offer %s (%s); the agent "
                         "price is an agent-only price, at most the store's ordinary price",
                         price_s, f->id, as_eur_format(m, f->retail_price_cents));
    return NULL;
}

int ctl_offer(const opts *o, apr_pool_t *p)
{
    const char *usage_line = "offer set OFFER [--price-eur X] [--stock N]";
    if (o->argc < 3 || strcmp(o->argv[1], "set") != 0 || strncmp(o->argv[2], "--", 2) == 0)
        return die("usage: %s%s", usage_line, NULL);
    static const char *const names[] = {"--price-eur", "--stock", NULL};
    if (only_opts(o, 3, names, usage_line)) return 1;
    const char *id = o->argv[2], *price_s = opt(o, 3, "--price-eur"),
               *stock_s = opt(o, 3, "--stock");
    if (!price_s && !stock_s)
        return die("offer set: give --price-eur, --stock or both (usage: %s)%s", usage_line, NULL);
    int64_t price = 0, stock = 0;
    /* exact cents from the text, as mandate create's amounts: no floating point */
    if (price_s && (!as_eur_parse_cents(price_s, OFFER_MAX_CENTS, &price) || price == 0))
        return die("offer set: --price-eur must be an amount in euros above 0 and at most "
                   "1000000, with at most two decimals (such as 12.50), not '%s'%s",
                   price_s, NULL);
    if (stock_s && !as_int_parse(stock_s, 0, STOCK_MAX, &stock))
        return die("offer set: --stock must be a whole number from 0 to 1000000, not '%s'%s",
                   stock_s, NULL);
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_mem m = as_db_pool_mem(p);
    as_ops_offer was, now;
    const char *refused = NULL;
    /* All or nothing: the offer, its product's search order row and, for a
     * price, the catalogue's number, which makes every httpd child build its
     * search index again (a quote already given keeps its price: quotes hold
     * their own). */
    if (as_db_begin_t(&db, &db.trans) != 0) {
        db.trans = NULL;
        return die("offer set: cannot start a transaction on %s%s", o->params, NULL);
    }
    int rc = as_db_ops_offer_lock(&db, id, &was);
    if (rc == AS_ENOTFOUND) refused = as_printf(&m, "there is no offer '%s'", id);
    if (rc == AS_OK) refused = offer_refusal(&m, &was, price_s, price);
    int price_changed = rc == AS_OK && price_s && price != was.price_cents;
    if (rc == AS_OK && !refused)
        rc = as_db_ops_offer_set(&db, id, price_s ? price : was.price_cents,
                                 stock_s ? stock : was.stock);
    if (rc == AS_ECONFLICT) refused = as_printf(&m, "offer %s is withdrawn", id);
    if (rc == AS_OK && !refused)
        rc = as_db_catalogue_changed(&db, &was.product_id, 1, price_changed);
    if (rc == AS_OK && !refused) rc = as_db_ops_offer_lock(&db, id, &now);
    int ok = rc == AS_OK && !refused;
    apr_dbd_transaction_t *t = db.trans;
    db.trans = NULL;
    if (as_db_end_t(&db, t, ok) != 0) ok = 0; /* the commit failed: nothing changed */
    if (refused) return die("offer set: %s%s", refused, NULL);
    if (!ok) return die("offer set: the change failed and was rolled back%s%s", NULL, NULL);
    as_db_close(&db);
    json_t *v = offer_json(&now);
    json_object_set_new(v, "before",
                        json_pack("{s:I, s:I}", "price_cents", (json_int_t)was.price_cents, "stock",
                                  (json_int_t)was.stock));
    return print_json(v);
}

/* ---- mandate show ---- */

/* The mandate as mandate list shows it, and its month as GET
 * /v1/mandates/current counts it: what the month's orders hold of the
 * monthly limit (those awaiting approval included) and what is left. */
int ctl_mandate_show(const opts *o, apr_pool_t *p)
{
    if (o->argc != 3) return die("usage: mandate show ID%s%s", NULL, NULL);
    const char *id = o->argv[2];
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_mem m = as_db_pool_mem(p);
    as_store st = as_db_store(&db);
    as_mandate md;
    int rc = as_store_mandate_get(&st, &m, id, false, &md);
    if (rc == AS_ENOTFOUND) return die("mandate show: there is no mandate '%s'%s", id, NULL);
    /* the month of today, UTC, as orders record theirs (yyyy-mm) */
    const char *month = as_strndup(&m, as_date_format(&m, (int64_t)time(NULL) / 86400), 7);
    int64_t spent = 0;
    if (rc == AS_OK) rc = as_store_mandate_spent(&st, md.id, month, &spent);
    if (rc != AS_OK) return die("mandate show failed%s%s", NULL, NULL);
    as_db_close(&db);
    int64_t remaining = md.monthly_cents > spent ? md.monthly_cents - spent : 0;
    json_t *v = mandate_json(&md);
    json_object_set_new(v, "month", json_string(month));
    json_object_set_new(v, "spent_this_month_cents", json_integer(spent));
    json_object_set_new(v, "remaining_this_month_cents", json_integer(remaining));
    return print_json(v);
}

/* ---- user list ---- */

static void user_line(void *baton, const as_ops_user *u)
{
    print_line(baton,
               json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "user_id", u->id, "active_keys",
                         (json_int_t)u->active_keys, "keys", (json_int_t)u->keys, "active_mandates",
                         (json_int_t)u->active_mandates, "mandates", (json_int_t)u->mandates,
                         "orders", (json_int_t)u->orders, "passkeys", (json_int_t)u->passkeys));
}

int ctl_user_list(const opts *o, apr_pool_t *p)
{
    if (o->argc != 2) return die("usage: user list%s%s", NULL, NULL);
    as_db db;
    if (ready(o, p, &db)) return 1;
    as_mem m = as_db_pool_mem(p);
    lines l = {&m, 0};
    int rc = as_db_ops_users(&db, user_line, &l);
    as_db_close(&db);
    return lines_end(&l, "user list", rc);
}
