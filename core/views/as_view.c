#include "as_view.h"

#include <math.h>
#include <string.h>

#include "as_json_write.h"
#include "as_util.h"
#include "as_verify.h"

json_t *as_view_merchant(const as_merchant *m)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "id", m->id, "name", m->name, "country",
                     m->country, "city", m->city, "on_time_rate", as_json_round(m->on_time_rate, 3),
                     "accuracy_rate", as_json_round(m->accuracy_rate, 3));
}

static json_t *components(const double v[AS_W_N])
{
    json_t *o = json_object();
    for (int i = 0; i < AS_W_N; i++)
        json_object_set_new(o, as_weight_names[i], as_json_round(v[i], 2));
    return o;
}

json_t *as_view_offer(as_mem *m, const as_scored *s)
{
    const as_offer *o = s->offer;
    return json_pack(
        "{s:s, s:o, s:I, s:o, s:I, s:s, s:s, s:i, s:s, s:I, s:i, s:i, s:o, s:o}", "offer_id", o->id,
        "merchant", as_view_merchant(&o->merchant), "price_cents", (json_int_t)o->price_cents,
        "price_eur", as_json_round((double)o->price_cents / 100.0, 2), "retail_price_cents",
        (json_int_t)o->retail_price_cents, "currency", "EUR", "price_label", o->price_label,
        "delivery_days", o->delivery_days, "delivery_by", as_date_format(m, s->delivery_day),
        "stock", (json_int_t)o->stock, "rank", s->rank, "score", s->score, "components",
        components(s->comp), "weighted", components(s->weighted));
}

static json_t *view_ineligible(as_mem *m, const as_ineligible *i)
{
    const as_offer *o = i->offer;
    return json_pack("{s:s, s:o, s:I, s:o, s:s, s:I, s:s}", "offer_id", o->id, "merchant",
                     as_view_merchant(&o->merchant), "price_cents", (json_int_t)o->price_cents,
                     "price_eur", as_json_round((double)o->price_cents / 100.0, 2), "delivery_by",
                     as_date_format(m, i->delivery_day), "stock", (json_int_t)o->stock, "reason",
                     i->reason);
}

json_t *as_view_offers(as_mem *m, const as_ranking *r)
{
    json_t *ranked = json_array(), *inel = json_array();
    for (size_t i = 0; i < r->n_ranked; i++)
        json_array_append_new(ranked, as_view_offer(m, &r->ranked[i]));
    for (size_t i = 0; i < r->n_inel; i++)
        json_array_append_new(inel, view_ineligible(m, &r->inel[i]));
    json_t *best = r->n_ranked ? json_incref(json_array_get(ranked, 0)) : json_null();
    return json_pack("{s:o, s:o, s:o, s:o, s:s, s:s}", "ranked", ranked, "ineligible", inel, "best",
                     best, "weights", as_weights_json(&r->weights), "explanation", r->explanation,
                     "ranking_policy", as_ranking_policy);
}

const char *as_fit_status(const as_product *p)
{
    return as_fit_name(as_fit_of(p));
}

/* The first measured item outside its tolerance, else the first declared note. */
const char *as_fit_summary(as_mem *m, const as_compat *c)
{
    json_t *ev = as_json_parse_or(c->evidence, json_array());
    const char *out = NULL, *declared = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        const char *label = json_string_value(json_object_get(e, "label"));
        const char *unit = json_string_value(json_object_get(e, "unit"));
        json_t *pv = json_object_get(e, "part_value"), *dv = json_object_get(e, "device_value");
        if (json_is_number(pv) && json_is_number(dv)) {
            double d = fabs(json_number_value(pv) - json_number_value(dv));
            double tol = json_number_value(json_object_get(e, "tolerance"));
            const char *u = unit ? unit : "";
            const char *text = as_printf(
                m, "%s: part %s %s, device %s %s", label ? label : "dimension",
                as_num_text(m, json_number_value(pv)), u, as_num_text(m, json_number_value(dv)), u);
            if (d > tol + 1e-9) {
                out = as_printf(m, "%s (tolerance %s %s)", text, as_num_text(m, tol), u);
                break;
            }
            if (!declared && c->fit_status == AS_FIT_FITS) declared = text;
        } else if (!declared) {
            const char *note = json_string_value(json_object_get(e, "note"));
            const char *by = json_string_value(json_object_get(e, "by"));
            if (note) declared = by ? as_printf(m, "%s (%s)", note, by) : as_strdup(m, note);
        }
    }
    json_decref(ev);
    if (out) return out;
    return declared ? declared : "no evidence recorded";
}

/* One evidence item in words: "Filter diameter measured 87 mm; device 87 mm". */
json_t *as_view_evidence_item(as_mem *m, const json_t *e)
{
    json_t *out = json_deep_copy(e);
    json_t *ej = (json_t *)e;
    const char *label = json_string_value(json_object_get(ej, "label"));
    const char *method = json_string_value(json_object_get(ej, "method"));
    const char *by = json_string_value(json_object_get(ej, "by"));
    const char *at = json_string_value(json_object_get(ej, "at"));
    const char *unit = json_string_value(json_object_get(ej, "unit"));
    json_t *pv = json_object_get(ej, "part_value"), *dv = json_object_get(ej, "device_value");
    const char *u = unit ? unit : "";
    const char *text;
    if (json_is_number(pv) && json_is_number(dv))
        text = as_printf(m, "%s %s %s %s; device %s %s", label ? label : "Dimension",
                         method && strcmp(method, "declared") == 0 ? "declared" : "measured",
                         as_num_text(m, json_number_value(pv)), u,
                         as_num_text(m, json_number_value(dv)), u);
    else
        text = as_printf(m, "%s: %s", label ? label : "Declaration",
                         json_string_value(json_object_get(ej, "note"))
                             ? json_string_value(json_object_get(ej, "note"))
                             : "declared");
    json_object_set_new(
        out, "text",
        json_string(as_printf(m, "%s (%s%s%s%s)", text, method ? method : "", by ? " by " : "",
                              by ? by : "", at ? as_printf(m, ", %s", at) : "")));
    return out;
}

static json_t *evidence_in_words(as_mem *m, const char *text)
{
    json_t *ev = as_json_parse_or(text, json_array()), *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) json_array_append_new(out, as_view_evidence_item(m, e));
    json_decref(ev);
    return out;
}

static bool guarantee(const as_product *p, const as_device *device)
{
    return device ? as_fit_of(p) == AS_FIT_FITS : p->guarantee;
}

/* ---- the product view, written as text (as_json_write.h) ---- */

static void jw_date(as_jw *w, const char *key, int64_t day)
{
    char d[AS_DATE_TEXT];
    as_date_text(d, day);
    as_jw_kstr(w, key, d);
}

static void jw_merchant_object(as_jw *w, const as_merchant *m)
{
    as_jw_obj(w);
    as_jw_kstr(w, "id", m->id);
    as_jw_kstr(w, "name", m->name);
    as_jw_kstr(w, "country", m->country);
    as_jw_kstr(w, "city", m->city);
    as_jw_kround(w, "on_time_rate", m->on_time_rate, 3);
    as_jw_kround(w, "accuracy_rate", m->accuracy_rate, 3);
    as_jw_obj_end(w);
}

static void jw_merchant(as_jw *w, const as_merchant *m)
{
    as_jw_key(w, "merchant");
    if (m->json)
        as_jw_raw(w, m->json, m->json_len);
    else
        jw_merchant_object(w, m);
}

const char *as_view_merchant_json(as_mem *mem, const as_merchant *m, size_t *len)
{
    as_jw w;
    as_jw_init(&w, mem);
    jw_merchant_object(&w, m);
    return as_jw_text(&w, len);
}

static void jw_components(as_jw *w, const char *key, const double v[AS_W_N], int decimals)
{
    as_jw_key(w, key);
    as_jw_obj(w);
    for (int i = 0; i < AS_W_N; i++)
        as_jw_kround(w, as_weight_names[i], v[i], decimals);
    as_jw_obj_end(w);
}

/* The members every offer entry opens with, ranked or ineligible. */
static void jw_offer_head(as_jw *w, const as_offer *o)
{
    as_jw_kstr(w, "offer_id", o->id);
    jw_merchant(w, &o->merchant);
    as_jw_kint(w, "price_cents", o->price_cents);
    as_jw_kround(w, "price_eur", (double)o->price_cents / 100.0, 2);
}

/* as_view_offer, written */
static void jw_offer(as_jw *w, const as_scored *s)
{
    const as_offer *o = s->offer;
    as_jw_obj(w);
    jw_offer_head(w, o);
    as_jw_kint(w, "retail_price_cents", o->retail_price_cents);
    as_jw_kstr(w, "currency", "EUR");
    as_jw_kstr(w, "price_label", o->price_label);
    as_jw_kint(w, "delivery_days", o->delivery_days);
    jw_date(w, "delivery_by", s->delivery_day);
    as_jw_kint(w, "stock", o->stock);
    as_jw_kint(w, "rank", s->rank);
    as_jw_kint(w, "score", s->score);
    jw_components(w, "components", s->comp, 2);
    jw_components(w, "weighted", s->weighted, 2);
    as_jw_obj_end(w);
}

static void jw_ineligible(as_jw *w, const as_ineligible *i)
{
    const as_offer *o = i->offer;
    as_jw_obj(w);
    jw_offer_head(w, o);
    jw_date(w, "delivery_by", i->delivery_day);
    as_jw_kint(w, "stock", o->stock);
    as_jw_kstr(w, "reason", i->reason);
    as_jw_obj_end(w);
}

/* as_view_offers, written */
static void jw_offers(as_jw *w, const as_ranking *r)
{
    as_jw_key(w, "offers");
    as_jw_obj(w);
    as_jw_key(w, "ranked");
    as_jw_arr(w);
    for (size_t i = 0; i < r->n_ranked; i++)
        jw_offer(w, &r->ranked[i]);
    as_jw_arr_end(w);
    as_jw_key(w, "ineligible");
    as_jw_arr(w);
    for (size_t i = 0; i < r->n_inel; i++)
        jw_ineligible(w, &r->inel[i]);
    as_jw_arr_end(w);
    as_jw_key(w, "best");
    if (r->n_ranked)
        jw_offer(w, &r->ranked[0]);
    else
        as_jw_null(w);
    jw_components(w, "weights", r->weights.w, 6);
    as_jw_kstr(w, "explanation", r->explanation);
    as_jw_kstr(w, "ranking_policy", as_ranking_policy);
    as_jw_obj_end(w);
}

static void jw_verification(as_jw *w, as_mem *m, const as_product *p)
{
    bool measured = p->verif_status != AS_VERIF_PENDING;
    as_row_eval *ev = as_alloc(m, (p->n_specs + 1) * sizeof(*ev));
    as_jw_key(w, "verification");
    as_jw_obj(w);
    as_jw_kstr(w, "status", as_verif_name(p->verif_status));
    as_jw_kstr(w, "measured_at", measured ? p->measured_at : NULL);
    as_jw_kstr(w, "node", measured ? p->measured_node : NULL);
    as_jw_kint(w, "sample_size", measured ? p->sample_size : 0);
    as_jw_key(w, "rows");
    as_jw_arr(w);
    for (size_t i = 0; i < p->n_specs; i++) {
        const as_spec_row *s = &p->specs[i];
        as_row_eval *e = &ev[i];
        as_spec_eval(m, s, measured, e);
        as_jw_obj(w);
        as_jw_kstr(w, "spec", s->spec);
        as_jw_kstr(w, "label", s->label);
        as_jw_kstr(w, "kind", s->kind);
        if (s->unit && *s->unit && strcmp(s->kind, "categorical") != 0)
            as_jw_kstr(w, "unit", s->unit);
        as_jw_kjson(w, "claimed", s->claimed, "null");
        as_jw_kjson(w, "measured", measured ? s->measured : NULL, "null");
        as_jw_kstr(w, "delta", e->delta);
        as_jw_kstr(w, "detail", e->detail);
        as_jw_kbool(w, "ok", e->ok);
        as_jw_kbool(w, "unclaimed", e->unclaimed);
        as_jw_obj_end(w);
    }
    as_jw_arr_end(w);
    as_jw_key(w, "deltas");
    as_jw_arr(w);
    for (size_t i = 0; i < p->n_specs; i++) {
        const as_spec_row *s = &p->specs[i];
        const as_row_eval *e = &ev[i];
        if (!e->measured || !e->numeric) continue;
        as_jw_obj(w);
        as_jw_kstr(w, "spec", s->spec);
        as_jw_kstr(w, "label", s->label);
        as_jw_kstr(w, "unit", s->unit);
        as_jw_kround(w, "claimed", e->claimed_num, 3);
        as_jw_kround(w, "measured", e->measured_num, 3);
        as_jw_kround(w, "delta", e->delta_num, 3);
        as_jw_kround(w, "delta_pct", e->delta_pct, 1);
        as_jw_kbool(w, "ok", e->ok);
        as_jw_obj_end(w);
    }
    as_jw_arr_end(w);
    as_jw_obj_end(w);
}

/* The members that name a product, in its view and in a summary. */
static void jw_names(as_jw *w, const as_product *p)
{
    as_jw_kstr(w, "name", p->name);
    as_jw_kstr(w, "brand", p->brand);
    as_jw_kstr(w, "category", p->category);
    const char *label = as_category_label(p->category);
    as_jw_kstr(w, "category_label", label ? label : p->category);
    as_jw_kstr(w, "part_type", p->part_type);
}

/* The members from "sku" to "verification": only a catalogue load changes them. */
static void jw_head(as_jw *w, as_mem *m, const as_product *p)
{
    as_jw_kstr(w, "sku", p->sku);
    as_jw_kstr(w, "gtin", p->gtin);
    jw_names(w, p);
    as_jw_kstr(w, "description", p->description);
    as_jw_kjson(w, "image_urls", p->image_urls, "[]");
    as_jw_key(w, "source");
    as_jw_obj(w);
    as_jw_kstr(w, "url", p->source_url);
    as_jw_kjson(w, "notes", p->source_notes, "[]");
    as_jw_kstr(w, "checked_at", p->source_checked_at);
    as_jw_kstr(w, "product_id", p->source_product_id);
    as_jw_kstr(w, "availability", p->availability);
    as_jw_obj_end(w);
    as_jw_kbool(w, "is_demo", p->is_demo);
    jw_verification(w, m, p);
}

static void jw_performance(as_jw *w, const as_product *p)
{
    as_jw_obj(w);
    as_jw_key(w, "on_time_rate_90d");
    if (p->has_on_time)
        as_jw_round(w, p->on_time_rate_90d, 3);
    else
        as_jw_null(w);
    as_jw_kround(w, "return_rate", p->return_rate, 3);
    as_jw_kround(w, "wrong_item_rate", p->wrong_item_rate, 3);
    as_jw_kint(w, "agent_orders_90d", p->agent_orders_90d);
    as_jw_kjson(w, "orders_per_week", p->orders_per_week, "[]");
    as_jw_obj_end(w);
}

bool as_view_product_kept(as_mem *m, const as_product *p, as_view_kept *out)
{
    memset(out, 0, sizeof(*out));
    as_jw jw, *w = &jw;
    as_jw_init(w, m);
    as_jw_obj(w);
    jw_head(w, m, p);
    as_jw_obj_end(w);
    size_t len;
    const char *head = as_jw_text(w, &len);
    if (!head || len < 2) return false;
    out->head = head + 1; /* the members, without the braces */
    out->head_len = len - 2;
    as_jw_init(w, m);
    jw_performance(w, p);
    return (out->perf = as_jw_text(w, &out->perf_len)) != NULL;
}

const char *as_view_evidence_text(as_mem *m, const char *evidence, size_t *len)
{
    as_jw jw, *w = &jw;
    as_jw_init(w, m);
    json_t *v = evidence_in_words(m, evidence);
    as_jw_value(w, v);
    json_decref(v);
    return as_jw_text(w, len);
}

const char *as_view_compat_rest(as_mem *m, const char *fit_status, const char *summary,
                                const char *checked_at, const char *evidence, size_t evidence_len,
                                size_t *len)
{
    if (!fit_status || !summary || !evidence) return NULL;
    as_jw jw, *w = &jw;
    as_jw_init(w, m);
    as_jw_obj(w);
    as_jw_kstr(w, "fit_status", fit_status);
    as_jw_kstr(w, "summary", summary);
    if (checked_at) as_jw_kstr(w, "checked_at", checked_at);
    as_jw_key(w, "evidence");
    as_jw_raw(w, evidence, evidence_len);
    as_jw_obj_end(w);
    const char *text = as_jw_text(w, len);
    if (!text) return NULL;
    *len -= 2; /* the members, without the braces */
    return text + 1;
}

const char *as_view_compat_with(as_mem *m, const char *device_slug, const char *device_name,
                                const char *rest, size_t rest_len, size_t *len)
{
    if (!device_slug || !device_name || !rest) return NULL;
    as_jw jw, *w = &jw;
    as_jw_init(w, m);
    as_jw_obj(w);
    as_jw_kstr(w, "device", device_slug);
    as_jw_kstr(w, "device_name", device_name);
    as_jw_raw(w, rest, rest_len);
    as_jw_obj_end(w);
    return as_jw_text(w, len);
}

const char *as_view_compat_text(as_mem *m, const as_compat *c, size_t *len)
{
    size_t elen;
    const char *ev = as_view_evidence_text(m, c->evidence, &elen);
    size_t rlen = 0;
    const char *rest = ev ? as_view_compat_rest(m, as_fit_name(c->fit_status), as_fit_summary(m, c),
                                                c->checked_at, ev, elen, &rlen)
                          : NULL;
    return as_view_compat_with(m, c->device_slug, c->device_name, rest, rlen, len);
}

const char *as_view_product_from(as_mem *m, const as_view_kept *k, const as_product *p,
                                 const as_ranking *r, const as_device *device, size_t *len)
{
    as_jw jw, *w = &jw;
    as_jw_init(w, m);
    as_jw_obj(w);
    as_jw_raw(w, k->head, k->head_len);
    as_jw_key(w, "compatibility");
    as_jw_arr(w);
    if (device && k->compat) as_jw_raw(w, k->compat, k->compat_len);
    as_jw_arr_end(w);
    as_jw_kstr(w, "fit_status", device ? as_fit_status(p) : NULL);
    as_jw_kstr(w, "for_device", device ? device->slug : NULL);
    jw_offers(w, r);
    as_jw_key(w, "performance");
    as_jw_raw(w, k->perf, k->perf_len);
    as_jw_key(w, "questions");
    as_jw_arr(w);
    for (size_t i = 0; i < p->n_questions; i++) {
        const as_question *q = &p->questions[i];
        as_jw_obj(w);
        as_jw_kstr(w, "id", q->id);
        as_jw_kstr(w, "question", q->question);
        as_jw_kjson(w, "answer", q->answer, "null");
        as_jw_kstr(w, "asked_at", q->asked_at);
        as_jw_obj_end(w);
    }
    as_jw_arr_end(w);
    as_jw_kint(w, "questions_total", p->questions_total);
    as_jw_kbool(w, "right_item_guarantee", guarantee(p, device));
    as_jw_key(w, "agent_checkout");
    as_jw_obj(w);
    as_jw_kstr(w, "mcp", "create_order");
    as_jw_kstr(w, "rest", "POST /v1/orders");
    as_jw_kstr(w, "docs", "docs/checkout");
    as_jw_obj_end(w);
    as_jw_obj_end(w);
    as_buf_add(&w->b, "\n", 1);
    return as_jw_text(w, len);
}

const char *as_view_product_text(as_mem *m, const as_product *p, const as_ranking *r,
                                 const as_device *device, size_t *len)
{
    as_view_kept k;
    if (!as_view_product_kept(m, p, &k)) return NULL;
    if (device && p->compat && !(k.compat = as_view_compat_text(m, p->compat, &k.compat_len)))
        return NULL;
    return as_view_product_from(m, &k, p, r, device, len);
}

/* A value written as text, as a jansson value: one writer for both. */
static json_t *jw_tree(as_jw *w)
{
    size_t n;
    const char *text = as_jw_text(w, &n);
    return text ? json_loadb(text, n, 0, NULL) : NULL;
}

void as_view_summary_head(as_jw *w, const as_product *p)
{
    as_jw_kstr(w, "sku", p->sku);
    jw_names(w, p);
    as_jw_kstr(w, "verification_status", as_verif_name(p->verif_status));
    as_jw_kstr(w, "availability", p->availability);
    as_jw_key(w, "image_url");
    as_jw_json_first(w, p->image_urls);
    as_jw_kround(w, "return_rate", p->return_rate, 3);
}

void as_view_summary_members(as_jw *w, const as_product *p, const as_ranking *r,
                             const as_device *device)
{
    if (p->summary_head)
        as_jw_raw(w, p->summary_head, p->summary_head_len);
    else
        as_view_summary_head(w, p);
    as_jw_kbool(w, "right_item_guarantee", guarantee(p, device));
    as_jw_key(w, "best_offer");
    if (r->n_ranked)
        jw_offer(w, &r->ranked[0]);
    else
        as_jw_null(w);
    as_jw_kint(w, "eligible_offers", (int64_t)r->n_ranked);
    if (device) as_jw_kstr(w, "fit_status", as_fit_status(p));
}

json_t *as_view_summary(as_mem *m, const as_product *p, const as_ranking *r,
                        const as_device *device)
{
    as_jw w;
    as_jw_init(&w, m);
    as_jw_obj(&w);
    as_view_summary_members(&w, p, r, device);
    as_jw_obj_end(&w);
    return jw_tree(&w);
}

void as_view_excluded_write(as_jw *w, const as_product *p, const char *reason)
{
    as_jw_obj(w);
    as_jw_kstr(w, "sku", p->sku);
    as_jw_kstr(w, "name", p->name);
    as_jw_kstr(w, "reason", reason);
    as_jw_obj_end(w);
}

json_t *as_view_excluded(as_mem *m, const as_product *p, const char *reason)
{
    as_jw w;
    as_jw_init(&w, m);
    as_view_excluded_write(&w, p, reason);
    return jw_tree(&w);
}

void as_view_weights_write(as_jw *w, const char *key, const as_weights *weights)
{
    jw_components(w, key, weights->w, 6);
}

json_t *as_view_api_index(const as_endpoint *eps, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            a, json_pack("{s:s, s:s}", "path", eps[i].path, "methods", eps[i].methods));
    return json_pack("{s:s, s:s, s:o}", "name", "Agent Shopping API", "version", "1.0.0",
                     "endpoints", a);
}
