/* GET /docs, /docs/{page}, /docs/errors/{code}: help pages for people and
 * agents (as_help_view.c writes them); every `docs` link the API returns
 * leads here. */
#include <string.h>

#include "as_handlers.h"
#include "as_help_view.h"

/* The relative way from a page to the API base: links must resolve from
 * where the page was reached, /docs, /docs/, /docs/x or /docs/errors/X. */
static const char *way_back(const as_request *req, const char *page, const char *code)
{
    if (code) return "../../";
    if (page) return "../";
    size_t n = req->path ? strlen(req->path) : 0;
    return n > 0 && req->path[n - 1] == '/' ? "../" : "./";
}

static void not_found(as_response *resp)
{
    as_respond_error(resp, 404, "NOT_FOUND", NULL,
                     "No such help page; GET docs for the list of help pages.");
}

/* The help page (page NULL: the index; code: docs/errors/{code}), else a 404. */
static void help(as_shop *shop, const as_request *req, const char *page, const char *code,
                 as_response *resp)
{
    const char *html = as_help_page(shop->mem, page, code, way_back(req, page, code));
    if (!html) {
        not_found(resp);
        return;
    }
    as_respond_json(resp, 200, NULL);
    resp->raw = html;
    resp->raw_len = strlen(resp->raw);
    resp->content_type = "text/html; charset=utf-8";
    resp->max_age = 3600;
}

void as_api_docs(as_shop *shop, const as_request *req, const as_route_params *rp, const as_query *q,
                 as_response *resp)
{
    (void)rp;
    (void)q;
    help(shop, req, NULL, NULL, resp);
}

void as_api_docs_page(as_shop *shop, const as_request *req, const as_route_params *rp,
                      const as_query *q, as_response *resp)
{
    (void)q;
    help(shop, req, rp->v[0], NULL, resp);
}

void as_api_docs_error(as_shop *shop, const as_request *req, const as_route_params *rp,
                       const as_query *q, as_response *resp)
{
    (void)q;
    help(shop, req, "errors", rp->v[0], resp);
}
