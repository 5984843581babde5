/* What the agent-key endpoints share, as /v1 answers it: identifying the
 * agent (spec 5), JSON bodies and Idempotency-Key records around a
 * transaction (docs/buying.md), each over its binding-neutral form in
 * core/http/as_call.h, its problem answered as the /v1 error. */
#include "as_api_internal.h"

/* ---- identity (spec 5) ---- */

bool as_identify(as_shop *shop, const as_request *req, as_agent *agent, as_response *resp)
{
    as_problem why;
    if (as_call_agent(shop, req, agent, &why)) return true;
    as_respond_problem(resp, &why);
    return false;
}

/* ---- bodies ---- */

json_t *as_json_body(as_shop *shop, const as_request *req, as_response *resp)
{
    as_problem why;
    json_t *v = as_call_body(shop, req, &why);
    if (!v) as_respond_problem(resp, &why);
    return v;
}

const char *as_body_params(as_shop *shop, const as_request *req, const as_field_rule *rules,
                           size_t n, as_param *vals, as_response *resp)
{
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return NULL;
    as_problem why;
    const char *hash = as_call_fields(shop, body, rules, n, vals, &why);
    json_decref(body);
    if (!hash) as_respond_problem(resp, &why);
    return hash;
}

void as_idem_run(as_shop *shop, const as_agent *agent, const char *scope, const char *key,
                 const char *hash, int (*work)(void *job, as_response *resp), void *job,
                 as_response *resp)
{
    as_idem_respond(shop, agent->user_id, scope, key, hash, work, job, resp);
}
