/* Views of the answers before a sale (spec 4.5, 4.6; docs/api.md): a fit
 * check with its evidence and deltas, and a question's answer. */
#include "as_presale_view.h"

#include <string.h>

#include "as_util.h"
#include "as_view.h"

json_t *as_view_fit_check(as_mem *m, const as_product *p, const as_device *dev)
{
    json_t *evidence = json_array(), *deltas = json_array();
    json_t *ev = p->compat ? as_json_parse_or(p->compat->evidence, json_array()) : json_array();
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        json_array_append_new(evidence, as_view_evidence_item(m, e));
        json_t *pv = json_object_get(e, "part_value"), *dv = json_object_get(e, "device_value");
        if (!json_is_number(pv) || !json_is_number(dv)) continue;
        double d = json_number_value(pv) - json_number_value(dv);
        double tol = json_number_value(json_object_get(e, "tolerance"));
        json_array_append_new(
            deltas,
            json_pack(
                "{s:O, s:O, s:O, s:o, s:o, s:o, s:o, s:b}", "dimension",
                json_object_get(e, "dimension") ? json_object_get(e, "dimension") : json_null(),
                "label", json_object_get(e, "label") ? json_object_get(e, "label") : json_null(),
                "unit", json_object_get(e, "unit") ? json_object_get(e, "unit") : json_null(),
                "part_value", as_json_round(json_number_value(pv), 3), "device_value",
                as_json_round(json_number_value(dv), 3), "delta", as_json_round(d, 3), "tolerance",
                as_json_round(tol, 3), "ok", d <= tol + 1e-9 && -d <= tol + 1e-9));
    }
    json_decref(ev);
    const char *fit = as_fit_status(p);
    const char *summary =
        p->compat ? as_fit_summary(m, p->compat)
                  : "This part has not been checked against this device: nothing was measured "
                    "or declared.";
    return json_pack(
        "{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:o, s:o, s:o, s:b, s:s}", "sku", p->sku, "name",
        p->name, "device", "slug", dev->slug, "name", dev->name, "fit_status", fit, "summary",
        summary, "checked_at",
        p->compat && p->compat->checked_at ? json_string(p->compat->checked_at) : json_null(),
        "evidence", evidence, "deltas", deltas, "right_item_guarantee", as_fit_of(p) == AS_FIT_FITS,
        "verification_status", as_verif_name(p->verif_status));
}

json_t *as_view_question(const char *id, const char *sku, const char *question, json_t *answer,
                         const char *asked_at)
{
    return json_pack("{s:s, s:s, s:s, s:o, s:s}", "id", id, "sku", sku, "question", question,
                     "answer", answer, "asked_at", asked_at);
}
