#include "as_request.h"

#include "as_help_view.h"
#include "as_http.h"

const char *as_request_base(const as_request *req)
{
    return req->base_url ? req->base_url : "";
}

bool as_request_wants_html(const as_request *req)
{
    return as_accept_html(req->accept);
}

void as_response_clear(as_response *resp)
{
    json_decref(resp->body);
    resp->body = NULL;
}

void as_respond_json(as_response *resp, int status, json_t *body)
{
    json_decref(resp->body);
    resp->status = status;
    resp->body = body;
}

/* ---- the /v1 error object (docs/api.md, "Errors") ---- */

void as_respond_error(as_response *resp, int status, const char *code, const char *field,
                      const char *message)
{
    as_respond_json(resp, status, as_error_object(code, field, message));
}

void as_respond_problem(as_response *resp, const as_problem *p)
{
    as_respond_error(resp, p->status, p->code, p->field, p->message);
}

void as_respond_outcome(as_response *resp, as_shop_rc rc, const as_problem *why)
{
    as_problem p = {0};
    if (rc != AS_SHOP_REFUSED) as_shop_problem(rc, &p);
    as_respond_problem(resp, rc == AS_SHOP_REFUSED ? why : &p);
}

void as_respond_saved_unreadable(as_response *resp)
{
    as_respond_outcome(resp, AS_SHOP_UNREADABLE, NULL);
}

void as_respond_storage_failed(as_response *resp)
{
    as_respond_outcome(resp, AS_SHOP_FAILED, NULL);
}
