#include "as_view.h"

#include <math.h>
#include <string.h>

#include "as_util.h"
#include "as_verify.h"

json_t *as_json_parse_or(const char *text, json_t *fallback)
{
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    if (!v) return fallback;
    json_decref(fallback);
    return v;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

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
    return p->compat ? p->compat->fit_status : "unknown";
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
            if (!declared && strcmp(c->fit_status, "fits") == 0) declared = text;
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

static json_t *view_compat(as_mem *m, const as_compat *c)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s?, s:o}", "device", c->device_slug, "device_name",
                     c->device_name, "fit_status", c->fit_status, "summary", as_fit_summary(m, c),
                     "checked_at", c->checked_at, "evidence", evidence_in_words(m, c->evidence));
}

static json_t *verification(as_mem *m, const as_product *p)
{
    bool measured = strcmp(p->verif_status, "pending") != 0;
    json_t *rows = json_array(), *deltas = json_array();
    for (size_t i = 0; i < p->n_specs; i++) {
        const as_spec_row *s = &p->specs[i];
        as_row_eval e;
        as_spec_eval(m, s, measured, &e);
        json_t *row =
            json_pack("{s:s, s:s, s:s}", "spec", s->spec, "label", s->label, "kind", s->kind);
        if (s->unit && *s->unit && strcmp(s->kind, "categorical") != 0)
            json_object_set_new(row, "unit", json_string(s->unit));
        json_object_set_new(row, "claimed", as_json_parse_or(s->claimed, json_null()));
        json_object_set_new(row, "measured",
                            measured ? as_json_parse_or(s->measured, json_null()) : json_null());
        json_object_set_new(row, "delta", json_string(e.delta));
        json_object_set_new(row, "detail", json_string(e.detail));
        json_object_set_new(row, "ok", json_boolean(e.ok));
        json_object_set_new(row, "unclaimed", json_boolean(e.unclaimed));
        json_array_append_new(rows, row);
        if (e.measured && e.numeric)
            json_array_append_new(deltas,
                                  json_pack("{s:s, s:s, s:s?, s:o, s:o, s:o, s:o, s:b}", "spec",
                                            s->spec, "label", s->label, "unit", s->unit, "claimed",
                                            as_json_round(e.claimed_num, 3), "measured",
                                            as_json_round(e.measured_num, 3), "delta",
                                            as_json_round(e.delta_num, 3), "delta_pct",
                                            as_json_round(e.delta_pct, 1), "ok", e.ok));
    }
    return json_pack("{s:s, s:o, s:o, s:I, s:o, s:o}", "status", p->verif_status, "measured_at",
                     measured ? str_or_null(p->measured_at) : json_null(), "node",
                     measured ? str_or_null(p->measured_node) : json_null(), "sample_size",
                     (json_int_t)(measured ? p->sample_size : 0), "rows", rows, "deltas", deltas);
}

static json_t *performance(const as_product *p)
{
    return json_pack("{s:o, s:o, s:o, s:I, s:o}", "on_time_rate_90d",
                     p->has_on_time ? as_json_round(p->on_time_rate_90d, 3) : json_null(),
                     "return_rate", as_json_round(p->return_rate, 3), "wrong_item_rate",
                     as_json_round(p->wrong_item_rate, 3), "agent_orders_90d",
                     (json_int_t)p->agent_orders_90d, "orders_per_week",
                     as_json_parse_or(p->orders_per_week, json_array()));
}

static bool guarantee(const as_product *p, const as_device *device)
{
    return device ? strcmp(as_fit_status(p), "fits") == 0 : p->guarantee;
}

json_t *as_view_product(as_mem *m, const as_product *p, const as_ranking *r,
                        const as_device *device)
{
    json_t *questions = json_array();
    for (size_t i = 0; i < p->n_questions; i++) {
        const as_question *q = &p->questions[i];
        json_array_append_new(questions, json_pack("{s:s, s:s, s:o, s:s}", "id", q->id, "question",
                                                   q->question, "answer",
                                                   as_json_parse_or(q->answer, json_null()),
                                                   "asked_at", q->asked_at));
    }
    json_t *compat = json_array();
    if (device && p->compat) json_array_append_new(compat, view_compat(m, p->compat));

    json_t *source = json_pack("{s:s, s:o, s:s, s:s, s:s}", "url", p->source_url, "notes",
                               as_json_parse_or(p->source_notes, json_array()), "checked_at",
                               p->source_checked_at, "product_id", p->source_product_id,
                               "availability", p->availability);
    json_t *o = json_object();
    json_object_set_new(o, "sku", json_string(p->sku));
    json_object_set_new(o, "gtin", str_or_null(p->gtin));
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "brand", json_string(p->brand));
    json_object_set_new(o, "category", json_string(p->category));
    const char *label = as_category_label(p->category);
    json_object_set_new(o, "category_label", json_string(label ? label : p->category));
    json_object_set_new(o, "part_type", json_string(p->part_type));
    json_object_set_new(o, "description", json_string(p->description));
    json_object_set_new(o, "image_urls", as_json_parse_or(p->image_urls, json_array()));
    json_object_set_new(o, "source", source);
    json_object_set_new(o, "is_demo", json_boolean(p->is_demo));
    json_object_set_new(o, "verification", verification(m, p));
    json_object_set_new(o, "compatibility", compat);
    json_object_set_new(o, "fit_status", device ? json_string(as_fit_status(p)) : json_null());
    json_object_set_new(o, "for_device", device ? json_string(device->slug) : json_null());
    json_object_set_new(o, "offers", as_view_offers(m, r));
    json_object_set_new(o, "performance", performance(p));
    json_object_set_new(o, "questions", questions);
    json_object_set_new(o, "right_item_guarantee", json_boolean(guarantee(p, device)));
    json_object_set_new(o, "agent_checkout",
                        json_pack("{s:s, s:s, s:s}", "mcp", "create_order", "rest",
                                  "POST /v1/orders", "docs", "docs/checkout"));
    return o;
}

json_t *as_view_summary(as_mem *m, const as_product *p, const as_ranking *r,
                        const as_device *device)
{
    json_t *images = as_json_parse_or(p->image_urls, json_array());
    json_t *img = json_array_size(images) ? json_incref(json_array_get(images, 0)) : json_null();
    json_decref(images);
    const char *label = as_category_label(p->category);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:o, s:I}", "sku", p->sku, "name",
        p->name, "brand", p->brand, "category", p->category, "category_label",
        label ? label : p->category, "part_type", p->part_type, "verification_status",
        p->verif_status, "availability", p->availability, "image_url", img, "return_rate",
        as_json_round(p->return_rate, 3), "right_item_guarantee", guarantee(p, device),
        "best_offer", r->n_ranked ? as_view_offer(m, &r->ranked[0]) : json_null(),
        "eligible_offers", (json_int_t)r->n_ranked);
    if (device) json_object_set_new(o, "fit_status", json_string(as_fit_status(p)));
    return o;
}

json_t *as_view_excluded(const as_product *p, const char *reason)
{
    return json_pack("{s:s, s:s, s:s}", "sku", p->sku, "name", p->name, "reason", reason);
}
