#include "as_request.h"

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
