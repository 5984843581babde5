/* What the agent-key endpoints share: identifying the agent (spec 5), JSON
 * bodies, and Idempotency-Key records around a transaction (docs/buying.md). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "as_api_internal.h"
#include "as_crypto.h"
#include "as_idem.h"
#include "as_json_value.h"
#include "as_util.h"
#include "as_view.h"

/* ---- identity (spec 5) ---- */

static bool token_chars(const char *s, size_t n, const char *extra)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i])) return false;
    return n > 0;
}

/* "name/version": the calling agent and its version. */
static bool service_agent_ok(const char *s)
{
    if (!s) return false;
    const char *slash = strchr(s, '/');
    if (!slash) return false;
    size_t nl = (size_t)(slash - s), vl = strlen(slash + 1);
    return nl <= 64 && vl <= 32 && token_chars(s, nl, "._-") && token_chars(slash + 1, vl, "._+-");
}

bool as_agent_key_shape(const char *key, const char *prefix)
{
    size_t pl = strlen(prefix);
    if (!key || strncmp(key, prefix, pl) != 0 || strncmp(key + pl, "_sk_test_", 9) != 0)
        return false;
    const char *rest = key + pl + 9;
    return strlen(rest) == 32 && token_chars(rest, 32, "");
}

const char *as_bearer_key(const char *authorization)
{
    if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0) return NULL;
    const char *key = authorization + 7;
    while (*key == ' ')
        key++;
    return *key ? key : NULL;
}

bool as_identify(as_shop *shop, const as_request *req, as_agent *agent, as_response *resp)
{
    const char *key = as_bearer_key(req->authorization);
    const char *why = NULL;
    if (!key)
        why = "Send your agent key as 'Authorization: Bearer <key>'.";
    else if (!service_agent_ok(req->service_agent))
        why = "Send 'Service-Agent: <name>/<version>' naming your agent and its version.";
    else if (!as_agent_key_shape(key, shop->cfg->key_prefix))
        why = as_printf(shop->mem,
                        "The agent key is not valid: keys look like %s_sk_test_ "
                        "followed by 32 letters or digits.",
                        shop->cfg->key_prefix);
    if (why) {
        as_respond_error(resp, 403, "AGENT_UNIDENTIFIED", NULL, why);
        return false;
    }
    const char *hash = as_sha256_hex(shop->mem, key, strlen(key));
    as_key_row row;
    int rc = as_store_key_by_hash(shop->store, shop->mem, hash, &row);
    if (rc == AS_EDB) {
        as_respond_storage_failed(resp);
        return false;
    }
    if (rc != AS_OK || !as_secure_equal(row.key_hash, hash) || row.revoked_at) {
        as_respond_error(resp, 403, "AGENT_UNIDENTIFIED", NULL,
                         "The agent key is not accepted (unknown or revoked).");
        return false;
    }
    agent->key_id = row.id;
    agent->user_id = row.user_id;
    agent->name = req->service_agent;
    return true;
}

/* ---- bodies ---- */

#define MAX_JSON_DEPTH 16

/* Deepest nesting of arrays and objects, strings skipped; stops past max. */
static int json_depth(const char *s, size_t n, int max)
{
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest && (deepest = depth) > max) return deepest;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return deepest;
}

bool as_json_media_type(const char *ct)
{
    if (!ct) return false;
    while (*ct == ' ')
        ct++;
    size_t n = strlen("application/json");
    return strncasecmp(ct, "application/json", n) == 0 && strchr("; \t", ct[n]);
}

json_t *as_json_body(as_shop *shop, const as_request *req, as_response *resp)
{
    /* A body sent as another type (text/plain, a form) is refused before it
     * is read as JSON; none said is taken as JSON. */
    if (req->body && req->body_len && req->content_type && *req->content_type &&
        !as_json_media_type(req->content_type)) {
        as_respond_error(resp, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type",
                         as_printf(shop->mem,
                                   "Send the body as JSON with 'Content-Type: application/json', "
                                   "not '%.60s'.",
                                   req->content_type));
        return NULL;
    }
    if (!req->body || req->body_len == 0) {
        as_respond_error(resp, 400, "VALIDATION_ERROR", "body", "A JSON object body is required.");
        return NULL;
    }
    if (json_depth(req->body, req->body_len, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        as_respond_error(resp, 400, "VALIDATION_ERROR", "body",
                         "The body nests arrays or objects more than 16 levels deep.");
        return NULL;
    }
    json_error_t e;
    json_t *v = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &e);
    if (!v) {
        as_respond_error(resp, 400, "VALIDATION_ERROR", "body",
                         as_printf(shop->mem, "The body is not valid JSON (line %d, column %d): %s",
                                   e.line, e.column, e.text));
        return NULL;
    }
    return v;
}

/* Idempotency-Key: 1 to 255 visible ASCII characters. */
bool as_idem_key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n < 1 || n > 255) return false;
    for (size_t i = 0; i < n; i++)
        if (k[i] < 0x21 || k[i] > 0x7e) return false;
    return true;
}

/* Answers from the record of a key claimed before: the first response again
 * (same body), 422 (another body) or 409 (still in flight: a claim an older
 * version committed on its own, whose lease has not run out). */
static void idem_answer(as_shop *shop, const as_idem *ex, const char *hash, as_response *resp)
{
    if (strcmp(ex->request_hash, hash) != 0) {
        as_respond_error(resp, 422, "IDEMPOTENCY_KEY_REUSED", "Idempotency-Key",
                         "This Idempotency-Key was used for a different request body; use a "
                         "new key for a new request.");
    } else if (strcmp(ex->state, "done") == 0) {
        json_t *first = as_json_parse_or(ex->response, NULL);
        if (!first) {
            as_respond_storage_failed(resp);
            return;
        }
        as_respond_json(resp, ex->status, first);
        resp->replayed = true;
    } else {
        as_respond_error(resp, 409, "IDEMPOTENCY_KEY_IN_USE", "Idempotency-Key",
                         "A request with this Idempotency-Key is still being processed; retry "
                         "after a moment to get its response.");
        int64_t wait = ex->lease_until - shop->now;
        resp->retry_after = wait < 1 ? 1 : (int)wait;
    }
}

bool as_idem_key_check(const as_request *req, const char *endpoint, as_response *resp)
{
    if (!req->idempotency_key || !*req->idempotency_key) {
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "%s needs an Idempotency-Key header: a unique value per request, sent again "
                 "unchanged on every retry.",
                 endpoint);
        as_respond_error(resp, 400, "IDEMPOTENCY_KEY_REQUIRED", "Idempotency-Key", msg);
        return false;
    }
    if (!as_idem_key_ok(req->idempotency_key)) {
        as_respond_error(resp, 400, "VALIDATION_ERROR", "Idempotency-Key",
                         "Idempotency-Key must be 1 to 255 visible ASCII characters.");
        return false;
    }
    return true;
}

const char *as_body_params(as_shop *shop, const as_request *req, const as_field_rule *rules, size_t n,
                           as_param *vals, as_response *resp)
{
    json_t *body = as_json_body(shop, req, resp);
    if (!body) return NULL;
    as_problem prob;
    bool ok = as_validate_body(shop->mem, rules, n, body, as_today(shop), vals, &prob);
    char *canon = ok ? json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(body);
    if (!ok) {
        as_respond_problem(resp, &prob);
        return NULL;
    }
    const char *hash = as_sha256_hex(shop->mem, canon, strlen(canon));
    free(canon);
    return hash;
}

/* One transaction claims the key, runs the work and remembers its response:
 * a request that fails or dies leaves no claim behind, and a second request
 * with the key waits for the first (SQLite's one writer; PostgreSQL's unique
 * index) and then answers from its record. */
void as_idem_run(as_shop *shop, const as_agent *agent, const char *scope, const char *key,
                 const char *hash, int (*work)(void *job, as_response *resp), void *job,
                 as_response *resp)
{
    const as_store *s = shop->store;
    as_idem ex;
    int rc = as_store_begin(s);
    if (rc == AS_OK)
        rc = as_idem_claim(s, shop->mem, agent->user_id, scope, key, hash, shop->now, &ex);
    if (rc == AS_ECONFLICT) {
        /* Nothing was written, but the record answered may be a commit of
         * another request not yet on disk: ending as a commit waits for the
         * sync that covers it (docs/storage.md), as the first answer did. */
        if (as_store_commit(s) != AS_OK) {
            as_respond_storage_failed(resp);
            return;
        }
        idem_answer(shop, &ex, hash, resp);
        return;
    }
    if (rc == AS_OK) rc = work(job, resp);
    char *saved = rc == AS_OK ? json_dumps(resp->body, JSON_COMPACT) : NULL;
    if (rc == AS_OK)
        rc = saved ? as_store_idem_finish(s, agent->user_id, scope, key, resp->status, saved) : AS_EDB;
    free(saved);
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc != AS_OK) {
        as_store_rollback(s); /* the claim goes with the rest: a retry runs again */
        as_respond_storage_failed(resp);
    }
}
