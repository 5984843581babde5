#include "as_request.h"

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
