/* The API as core sees it: a request in, a response out. The glue (mod_agentshop)
 * turns HTTP into an as_request and writes the as_response; everything between
 * is decided here. */
#ifndef AS_API_H
#define AS_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "as_json_write.h"
#include "as_mem.h"
#include "as_store.h"
#include "as_search.h"
#include "as_validate.h"

typedef struct as_config {
    const char *key_prefix;           /* AgentShopKeyPrefix */
    int64_t quote_ttl;                /* seconds */
    int64_t confirmation_ttl;         /* seconds */
    int64_t return_window_days;       /* days */
    int64_t ship_after;               /* seconds */
    int64_t questions_per_day;        /* AgentShopQuestionsPerDay, per user, UTC days */
    /* AgentShopApproval link: the signed link alone approves (for operators
     * who deliver links only to the person). Default (false): passkey. */
    bool approval_link;
    const unsigned char *signing_key; /* AgentShopSigningKeyFile, >= 32 bytes */
    size_t signing_key_len;
    /* AgentShopCORSAllowOrigin: origins (as_origin_normalize'd) whose pages
     * may call the agent endpoints and POST /mcp, besides the API's own. */
    const char *const *agent_origins;
    size_t n_agent_origins;
    /* This process's cache of encoded product views (AgentShopViewCache), or
     * NULL: every view is built from the store. */
    struct as_view_cache *product_views;
    /* This process's caches of search pages with q (AgentShopSearchCache): the
     * page's products by index version, and the encoded page by what it was
     * built from. NULL: every page is built. */
    struct as_view_cache *search_ids, *search_pages;
    /* Product views from the search index (its kept parts and a live read),
     * when the process has one (AgentShopViewsFromIndex, default on); off:
     * read whole from the store. */
    bool views_from_index;
} as_config;

void as_config_defaults(as_config *c);

typedef struct as_request {
    const char *method; /* "GET", "HEAD", "POST", ... */
    const char *path;   /* below the API base, still percent-encoded, e.g. "/products/X" */
    const char *query;  /* raw query string or NULL */
    const char *body;   /* request body (at most 64 KiB, read by the glue) or NULL */
    size_t body_len;
    const char *content_type, *accept;
    const char *authorization, *service_agent, *idempotency_key; /* headers or NULL */
    const char *if_none_match; /* a conditional GET's validators, or NULL */
    /* a CORS preflight (OPTIONS): Access-Control-Request-Method and -Headers */
    const char *cors_method, *cors_headers;
    const char *base_url; /* absolute URL of the API base, e.g. "https://shop.example/v1" */
    /* MCP's Streamable HTTP transport (POST /mcp): headers or NULL. */
    const char *origin, *mcp_protocol_version;
} as_request;

enum { AS_LOG_ERR = 3, AS_LOG_WARN = 4, AS_LOG_INFO = 6, AS_LOG_DEBUG = 7 };

typedef struct as_ctx {
    as_mem *mem;
    const as_store *store;
    const as_config *cfg;
    int64_t now; /* Unix seconds: one clock reading per request */
    void (*log)(void *baton, int level, const char *msg);
    void *log_baton;
    /* The process's search index (the glue keeps one per server and child),
     * or NULL: then each search builds a snapshot of its own (tests). */
    as_search_index *index;
    /* Set by the glue at most once a second per process: before the request,
     * as_handle expires every order whose confirmation ran out (whoever asks),
     * giving back its budget and stock, and deletes WebAuthn challenges that
     * expired (as_sweep_challenges). */
    bool sweep;
    /* AgentShopConfirmationNotify: one JSON line (no newline) per confirmation
     * created, after its commit; NULL: nobody is told. */
    void (*notify)(void *baton, const char *line);
    void *notify_baton;
} as_ctx;

typedef struct as_response {
    int status;
    json_t *body;      /* owned: as_response_clear releases it */
    const char *allow; /* for 405 */
    const char *html;  /* a page for a browser instead of JSON, when set */
    /* A ready-made body instead of JSON (the OpenAPI document, help pages):
     * raw_len bytes of raw, sent as content_type. */
    const char *raw;
    size_t raw_len;
    const char *content_type;
    int max_age;     /* > 0: the body may be cached this many seconds (static documents) */
    bool no_body;    /* the status alone (202 to an MCP notification) */
    int retry_after; /* seconds for Retry-After, 0 for none */
    bool replayed;   /* Idempotent-Replayed: true */
    /* HTTP's conventions (as_handle; docs/api.md, "Caching, compression and
     * CORS"): */
    bool cacheable;       /* a public read: a 200 gets an ETag and may be kept
                           * (Cache-Control no-cache, or max_age), else no-store */
    const char *etag;     /* the ETag when known before the body; else the
                           * glue derives it from the body */
    bool not_modified;    /* 304: If-None-Match named etag; no body was built */
    const char *location; /* Location: what a 201 or 202 created */
    const char *cors_origin;  /* Access-Control-Allow-Origin: "*" or the Origin */
    bool vary_origin;         /* the answer depends on the Origin header */
    const char *cors_methods; /* a preflight's answer: the methods allowed */
} as_response;

void as_handle(as_ctx *ctx, const as_request *req, as_response *resp);
/* The error of a confirmation link as a page, when a person's browser asked
 * (docs/buying.md); as_handle calls it, the glue too for its own refusals. */
void as_person_error(as_mem *m, const as_request *req, as_response *resp);
/* Expires orders whose confirmation ran out, any user's, a batch of at most
 * 100 in one transaction; returns how many, or -1 when storage failed (logged). */
int as_sweep_expired(as_ctx *ctx);
void as_response_clear(as_response *resp);

/* Error object of spec 2.7 (+ field on validation errors), its texts made
 * valid UTF-8; as_respond_error answers with it, a view may extend it. */
json_t *as_error_object(const char *code, const char *field, const char *message);
void as_respond_problem(as_response *resp, const as_problem *p);
void as_respond_error(as_response *resp, int status, const char *code, const char *field,
                      const char *message);
void as_respond_json(as_response *resp, int status, json_t *body);
/* 503: storage failed; nothing was changed (the store logged why). */
void as_respond_storage_failed(as_response *resp);
/* 503 after a commit: the change stands, only reading it back failed. */
void as_respond_saved_unreadable(as_response *resp);
/* A device parameter: a slug, or free text naming exactly one device; else a 400
 * naming the candidates (never a silent guess). */
bool as_resolve_device(as_ctx *ctx, const char *text, const char *field, as_device *out,
                       as_response *resp);

/* The `docs` link of an error code: "docs/errors/CODE" (a static string). */
const char *as_error_docs(const char *code);
/* The i-th error code that has a help page, NULL past the last (for tests). */
const char *as_help_error_code(size_t i);

/* The JSON error for a status httpd raised itself (413 from LimitRequestBody...). */
void as_respond_http_status(as_response *resp, int status);
/* The same, naming the part of the request httpd refused ("path", "headers" or
 * "body"): a 400 then carries it as `field`, with a message about that part. */
void as_respond_http_refusal(as_response *resp, int status, const char *part);

void as_log(as_ctx *ctx, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Endpoints (as_catalog_api.c). */
void as_api_search(as_ctx *ctx, const as_query *q, as_response *resp);
void as_api_product(as_ctx *ctx, const char *sku, const as_query *q, as_response *resp);
void as_api_devices(as_ctx *ctx, const as_query *q, as_response *resp);
void as_api_compatible(as_ctx *ctx, const char *slug, const as_query *q, as_response *resp);

/* Buying (as_buy_api.c). */
void as_api_mandate_current(as_ctx *ctx, const as_request *req, as_response *resp);
void as_api_quote_create(as_ctx *ctx, const as_request *req, as_response *resp);
void as_api_order_create(as_ctx *ctx, const as_request *req, as_response *resp);
void as_api_confirmation_get(as_ctx *ctx, const as_request *req, const char *id, const as_query *q,
                             as_response *resp);
void as_api_confirmation_decide(as_ctx *ctx, const as_request *req, const char *id,
                                const as_query *q, as_response *resp);

/* After the sale (as_aftersale_api.c). */
void as_api_order_get(as_ctx *ctx, const as_request *req, const char *id, as_response *resp);
void as_api_order_cancel(as_ctx *ctx, const as_request *req, const char *id, as_response *resp);
void as_api_return_create(as_ctx *ctx, const as_request *req, as_response *resp);
void as_api_return_label(as_ctx *ctx, const as_request *req, const char *id, const as_query *q,
                         as_response *resp);
/* Passkey enrolment (as_passkeys.c). */
void as_api_enrol(as_ctx *ctx, const as_request *req, const char *id, const as_query *q,
                  as_response *resp);
/* Before the sale: fit checks and questions (as_presale_api.c). */
void as_api_compat_check(as_ctx *ctx, const as_request *req, as_response *resp);
void as_api_question(as_ctx *ctx, const as_request *req, as_response *resp);

/* Documents for clients and people (as_openapi.c, as_help.c). */
void as_api_openapi(as_ctx *ctx, const as_request *req, as_response *resp);
/* The compiled-in document as written (its server URL still @BASE_URL@). */
const char *as_openapi_text(size_t *len);
/* page: NULL for the index; code: an error code for docs/errors/{code}. */
void as_api_help(as_ctx *ctx, const as_request *req, const char *page, const char *code,
                 as_response *resp);

/* The Model Context Protocol over Streamable HTTP (as_mcp.c). */
void as_api_mcp(as_ctx *ctx, const as_request *req, as_response *resp);
/* An origin as "scheme://host[:port]": http or https, lowercase, the default
 * port dropped; NULL when s is not such an origin (a path, a user, a query...). */
const char *as_origin_normalize(as_mem *m, const char *s);
/* Whether req's Origin may call the agent endpoints and /mcp from a page: the
 * API's own origin, or one AgentShopCORSAllowOrigin lists. */
bool as_agent_origin_allowed(as_ctx *ctx, const as_request *req);

/* The key of an Authorization header "Bearer <key>" (the scheme in any case,
 * spaces after it skipped), NULL when there is none: what identifies an
 * agent, and what the rate limiter counts by. */
const char *as_bearer_key(const char *authorization);
/* Whether key has the shape of an agent key: <prefix>_sk_test_<32 letters or
 * digits>. */
bool as_agent_key_shape(const char *key, const char *prefix);
/* Whether a Content-Type is application/json (with or without parameters). */
bool as_json_media_type(const char *ct);

int64_t as_today(const as_ctx *ctx);

#endif
