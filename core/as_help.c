/* GET /docs, /docs/{page}, /docs/errors/{code}: help pages for people and
 * agents; every `docs` link the API returns leads here. (To be written.) */
#include "as_api.h"

void as_api_help(as_ctx *ctx, const as_request *req, const char *page, const char *code,
                 as_response *resp)
{
    (void)ctx;
    (void)req;
    (void)page;
    (void)code;
    as_respond_error(resp, 404, "NOT_FOUND", NULL, "No such help page.");
}

const char *as_error_docs(const char *code)
{
    (void)code;
    return "docs/errors";
}
