/* The public catalogue endpoints, spec 4.1 to 4.4: each validates its
 * parameters, calls the shop's read (core/shop/as_reads.h) and answers. */
#include "as_api_internal.h"
#include "as_handlers.h"
#include "as_device_view.h"
#include "as_reads.h"

/* An encoded page or view, sent as it is (and as the caches keep it). */
static void respond_body(as_response *resp, const as_read_body *body)
{
    resp->status = 200;
    resp->raw = body->data;
    resp->raw_len = body->len;
    resp->content_type = "application/json";
}

/* GET /search (spec 4.1) */
void as_api_search(as_shop *shop, const as_request *req, const as_route_params *rp,
                   const as_query *q, as_response *resp)
{
    (void)req;
    (void)rp;
    as_read_search_in in;
    as_read_body body;
    as_problem p;
    if (!as_read_search_params(shop, q, &in, &p)) {
        as_respond_problem(resp, &p);
        return;
    }
    as_shop_rc rc = as_read_search(shop, &in, &body, &p);
    if (rc == AS_SHOP_DONE) {
        respond_body(resp, &body);
        return;
    }
    as_respond_outcome(resp, rc, &p);
    resp->retry_after = body.retry_after;
}

/* GET /products/{sku} (spec 4.2) */
void as_api_product(as_shop *shop, const as_request *req, const as_route_params *rp,
                    const as_query *q, as_response *resp)
{
    (void)req;
    const char *sku = rp->v[0];
    as_read_product_in in;
    as_read_body body;
    as_problem p;
    if (!as_read_product_params(shop, sku, q, &in, &p)) {
        as_respond_problem(resp, &p);
        return;
    }
    as_shop_rc rc = as_read_product(shop, &in, &body, &p);
    if (rc == AS_SHOP_DONE)
        respond_body(resp, &body);
    else
        as_respond_outcome(resp, rc, &p);
}

/* GET /devices (spec 4.3) */
void as_api_devices(as_shop *shop, const as_request *req, const as_route_params *rp,
                    const as_query *q, as_response *resp)
{
    (void)req;
    (void)rp;
    as_read_devices_in in;
    as_device_match *c;
    size_t k;
    as_problem p;
    if (!as_read_devices_params(shop, q, &in, &p)) {
        as_respond_problem(resp, &p);
        return;
    }
    as_shop_rc rc = as_read_devices(shop, &in, &c, &k);
    if (rc == AS_SHOP_DONE)
        as_respond_json(resp, 200, as_view_device_candidates(in.q, c, k, in.limit));
    else
        as_respond_outcome(resp, rc, &p);
}

/* GET /devices/{slug}/compatible (spec 4.4) */
void as_api_compatible(as_shop *shop, const as_request *req, const as_route_params *rp,
                       const as_query *q, as_response *resp)
{
    (void)req;
    const char *slug = rp->v[0];
    as_read_compatible_in in;
    json_t *view;
    as_problem p;
    if (!as_read_compatible_params(shop, slug, q, &in, &p)) {
        as_respond_problem(resp, &p);
        return;
    }
    as_shop_rc rc = as_read_compatible(shop, &in, &view, &p);
    if (rc == AS_SHOP_DONE)
        as_respond_json(resp, 200, view);
    else
        as_respond_outcome(resp, rc, &p);
}
