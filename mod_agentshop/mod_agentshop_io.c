/* mod_agentshop's input and output: the request's body, core's answer
 * written into brigades, and the JSON error that replaces httpd's own page. */
#include "httpd.h"
#include "apr_strings.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include "as_db.h"
#include "as_http.h"

#include <stdlib.h>

#include "mod_agentshop_private.h"

#define MAX_BODY 65536 /* ours: LimitRequestBody defaults to 1 GiB */

int agentshop_read_body(request_rec *r, const char **body, apr_size_t *len)
{
    *body = NULL;
    *len = 0;
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    if (cl) {
        char *end;
        apr_int64_t n = apr_strtoi64(cl, &end, 10);
        if (*end || n < 0) return HTTP_BAD_REQUEST;
        if (n > MAX_BODY) return HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    int rc = ap_setup_client_block(r, REQUEST_CHUNKED_DECHUNK);
    if (rc != OK) return rc;
    if (!ap_should_client_block(r)) return OK;
    char *buf = apr_palloc(r->pool, MAX_BODY + 1);
    apr_size_t n = 0;
    for (;;) {
        long got = ap_get_client_block(r, buf + n, MAX_BODY + 1 - n);
        if (got < 0) return HTTP_BAD_REQUEST;
        if (got == 0) break;
        n += (apr_size_t)got;
        if (n > MAX_BODY) {
            /* drain politely? no: the connection is closed after a 413 */
            r->connection->keepalive = AP_CONN_CLOSE;
            return HTTP_REQUEST_ENTITY_TOO_LARGE;
        }
    }
    buf[n] = '\0';
    *body = buf;
    *len = n;
    return OK;
}

/* jansson's encoder writes into heap buckets of APR_BUCKET_BUFF_SIZE at the
 * brigade's tail: no intermediate string. Not apr_brigade_write: once a piece
 * does not fit what is left of its buffer it gives that piece a bucket of its
 * own size, and from then on every piece (jansson's are a few bytes) gets its
 * own bucket, thousands for a search page (docs/performance.md). */
typedef struct body_writer {
    apr_bucket_brigade *bb;
    apr_bucket *e; /* the heap bucket being filled, NULL before the first */
    char *buf;
    apr_size_t cap;
    as_etag_hash *hash; /* of what is written, for the ETag; NULL: none */
} body_writer;

static int brigade_write(const char *buf, size_t n, void *ctx)
{
    body_writer *w = ctx;
    as_etag_add(w->hash, buf, n);
    while (n > 0) {
        if (!w->e || w->e->length == w->cap) {
            apr_size_t cap = n > APR_BUCKET_BUFF_SIZE ? n : APR_BUCKET_BUFF_SIZE;
            char *b = apr_bucket_alloc(cap, w->bb->bucket_alloc);
            if (!b) return -1;
            w->e = apr_bucket_heap_create(b, cap, apr_bucket_free, w->bb->bucket_alloc);
            w->e->length = 0; /* what is written so far */
            w->buf = b;
            w->cap = cap;
            APR_BRIGADE_INSERT_TAIL(w->bb, w->e);
        }
        apr_size_t k = w->cap - w->e->length;
        if (k > n) k = n;
        memcpy(w->buf + w->e->length, buf, k);
        w->e->length += k;
        buf += k;
        n -= k;
    }
    return 0;
}

/* Sends the body in bb with its Content-Length (nothing for HEAD). A client
 * gone away is not the handler's error. */
static int send_body(request_rec *r, apr_bucket_brigade *bb)
{
    apr_off_t n = 0;
    apr_brigade_length(bb, 1, &n);
    ap_set_content_length(r, n);
    if (r->header_only)
        apr_brigade_cleanup(bb);
    else
        ap_pass_brigade(r->output_filters, bb);
    return OK;
}

/* Who may read the answer from a page of another origin (core decided). */
static void cors_headers(request_rec *r, const as_response *resp)
{
    if (resp->vary_origin || (resp->cors_origin && strcmp(resp->cors_origin, "*") != 0))
        apr_table_mergen(r->headers_out, "Vary", "Origin");
    if (!resp->cors_origin) return;
    apr_table_setn(r->headers_out, "Access-Control-Allow-Origin", resp->cors_origin);
    if (resp->cors_methods) { /* a preflight's answer */
        apr_table_setn(r->headers_out, "Access-Control-Allow-Methods", resp->cors_methods);
        apr_table_setn(r->headers_out, "Access-Control-Allow-Headers", AS_CORS_ALLOW_HEADERS);
        apr_table_setn(r->headers_out, "Access-Control-Max-Age", "600");
    } else {
        apr_table_setn(r->headers_out, "Access-Control-Expose-Headers", AS_CORS_EXPOSE_HEADERS);
    }
}

/* A public read's validator and how long a client may keep it: "no-cache"
 * (keep, but ask again with If-None-Match each time: stock is live), or
 * max-age for the documents. Compression negotiates the same answer. */
static void cache_headers(request_rec *r, const as_response *resp, const char *etag)
{
    apr_table_setn(r->headers_out, "Cache-Control",
                   resp->max_age > 0 ? apr_psprintf(r->pool, "public, max-age=%d", resp->max_age)
                                     : "no-cache");
    apr_table_setn(r->headers_out, "ETag", etag);
    apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
}

/* 304 when the client's copy is this answer: headers only. */
static bool not_modified(request_rec *r, as_response *resp, const char *etag)
{
    if (!etag) return false;
    cache_headers(r, resp, etag);
    if (!resp->not_modified &&
        !as_etag_matches(apr_table_get(r->headers_in, "If-None-Match"), etag))
        return false;
    r->status = HTTP_NOT_MODIFIED;
    as_response_clear(resp);
    return true;
}

int agentshop_write_response(request_rec *r, as_response *resp)
{
    as_mem mem = as_db_pool_mem(r->pool);
    r->status = resp->status;
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "X-Content-Type-Options", "nosniff");
    if (resp->allow) apr_table_setn(r->headers_out, "Allow", resp->allow);
    if (resp->retry_after > 0)
        apr_table_setn(r->headers_out, "Retry-After", apr_itoa(r->pool, resp->retry_after));
    if (resp->replayed) apr_table_setn(r->headers_out, "Idempotent-Replayed", "true");
    if (resp->location) apr_table_setn(r->headers_out, "Location", resp->location);
    cors_headers(r, resp);
    if (resp->not_modified) {
        not_modified(r, resp, resp->etag);
        return OK;
    }
    if (resp->no_body) {
        as_response_clear(resp);
        ap_set_content_length(r, 0);
        return OK;
    }
    if (resp->html || resp->raw) {
        const char *body = resp->raw ? resp->raw : resp->html;
        size_t hn = resp->raw ? resp->raw_len : strlen(resp->html);
        const char *type = resp->raw ? resp->content_type : "text/html; charset=utf-8";
        ap_set_content_type(r, type ? type : "application/octet-stream");
        if (strncmp(r->content_type, "text/html", 9) == 0 && !resp->cacheable) {
            /* a person's page behind a signed link: never compressed, so
             * that its length tells nothing of its secrets (BREACH) */
            apr_table_setn(r->subprocess_env, "no-gzip", "1");
            apr_table_setn(r->subprocess_env, "no-brotli", "1");
        }
        if (strncmp(r->content_type, "text/html", 9) == 0) {
            /* script-src 'self': the passkey ceremonies' webauthn.js, no inline script */
            apr_table_setn(r->headers_out, "Content-Security-Policy",
                           "default-src 'none'; script-src 'self'; connect-src 'self'; "
                           "style-src 'unsafe-inline'; form-action 'self'; "
                           "frame-ancestors 'none'");
            apr_table_setn(r->headers_out, "Referrer-Policy", "no-referrer");
        }
        if (resp->cacheable &&
            not_modified(r, resp, resp->etag ? resp->etag : as_etag_of(&mem, body, hn)))
            return OK;
        as_response_clear(resp);
        /* the body lives as long as the request (pool, or compiled in): sent in place */
        apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        APR_BRIGADE_INSERT_TAIL(bb,
                                apr_bucket_transient_create(body, hn, r->connection->bucket_alloc));
        return send_body(r, bb);
    }
    ap_set_content_type(r, "application/json");
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    body_writer w = {bb, NULL, NULL, 0, resp->cacheable ? as_etag_begin() : NULL};
    bool failed_encoding = false;
    if (!resp->body || json_dump_callback(resp->body, brigade_write, &w, AS_JSON_DUMP_FLAGS) != 0) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "response could not be encoded");
        apr_brigade_cleanup(bb); /* what was written of it */
        w.e = NULL;
        static const char failed[] = "{\"error\":\"INTERNAL_ERROR\",\"message\":\"The response "
                                     "could not be encoded.\"}";
        brigade_write(failed, sizeof failed - 1, &w);
        r->status = HTTP_INTERNAL_SERVER_ERROR;
        failed_encoding = true;
    }
    int wrote = brigade_write("\n", 1, &w);
    const char *etag = as_etag_end(w.hash, &mem); /* and frees it */
    if (wrote != 0) {
        as_response_clear(resp);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (etag && !failed_encoding && not_modified(r, resp, etag)) {
        apr_brigade_cleanup(bb);
        return OK;
    }
    as_response_clear(resp);
    return send_body(r, bb);
}

/* The path of the request line (the error filter runs for requests httpd
 * refused before it parsed the URI). */
static const char *request_line_path(request_rec *r)
{
    const char *line = r->the_request;
    if (!line) return NULL;
    const char *sp = strchr(line, ' ');
    return sp && sp[1] == '/' ? sp + 1 : NULL;
}

void agentshop_insert_error_filter(request_rec *r)
{
    const char *path = request_line_path(r);
    if (r->status < 400 || !path || !agentshop_base_of(path)) return;
    if (r->handler && strcmp(r->handler, "agentshop") == 0 && r->prev) return;
    ap_add_output_filter(AGENTSHOP_JSON_ERROR_FILTER, NULL, r, r->connection);
}

/* httpd's HTML page of such an error replaced by the API's JSON one. */
apr_status_t agentshop_json_error_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    apr_brigade_cleanup(bb); /* httpd's HTML page */
    ap_remove_output_filter(f);
    as_response resp = {0};
    /* Before any URL mapping httpd refuses with 400 only what it read of the
     * request line and headers. */
    as_respond_http_refusal(&resp, r->status, "headers");
    char *s = json_dumps(resp.body, JSON_COMPACT);
    as_response_clear(&resp);
    if (!s) return APR_ENOMEM;
    ap_set_content_type(r, "application/json");
    apr_table_unset(r->headers_out, "Content-Length");
    char *body = apr_pstrcat(r->pool, s, "\n", NULL);
    free(s);
    ap_set_content_length(r, (apr_off_t)strlen(body));
    APR_BRIGADE_INSERT_TAIL(
        bb, apr_bucket_pool_create(body, strlen(body), r->pool, f->c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
    return ap_pass_brigade(f->next, bb);
}
