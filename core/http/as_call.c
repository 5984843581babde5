/* What the bindings of the agent's calls share around a shop operation:
 * identifying the agent (spec 5), JSON bodies, and Idempotency-Key records
 * around a transaction (docs/buying.md). */
#include "as_call.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "as_buying.h"
#include "as_crypto.h"
#include "as_http.h"
#include "as_idempotent.h"
#include "as_util.h"

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

bool as_call_agent(as_shop *shop, const as_request *req, as_agent *agent, as_problem *why)
{
    const char *key = as_bearer_key(req->authorization);
    const char *bad = NULL;
    if (!key)
        bad = "Send your agent key as 'Authorization: Bearer <key>'.";
    else if (!service_agent_ok(req->service_agent))
        bad = "Send 'Service-Agent: <name>/<version>' naming your agent and its version.";
    else if (!as_agent_key_shape(key, shop->cfg->key_prefix))
        bad = as_printf(shop->mem,
                        "The agent key is not valid: keys look like %s_sk_test_ "
                        "followed by 32 letters or digits.",
                        shop->cfg->key_prefix);
    if (bad) {
        as_problem_set(why, 403, "AGENT_UNIDENTIFIED", NULL, bad);
        return false;
    }
    as_shop_rc rc = as_agent_by_key(shop, key, agent, why);
    if (rc == AS_SHOP_DONE) {
        agent->name = req->service_agent;
        return true;
    }
    if (rc != AS_SHOP_REFUSED) as_shop_problem(rc, why);
    return false;
}

/* ---- bodies ---- */

#define MAX_JSON_DEPTH 16

static const char TOO_DEEP[] = "The body nests arrays or objects more than 16 levels deep.";

/* Deepest nesting of arrays and objects, strings skipped; stops past max. */
static int text_depth(const char *s, size_t n, int max)
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

/* The same for a value: how deep its text nests; stops past max. */
static int value_depth(const json_t *v, int max)
{
    if (!json_is_object(v) && !json_is_array(v)) return 0;
    int deepest = 0;
    if (max <= 0) return 1; /* deeper than asked: no need to look further */
    size_t i;
    const char *k;
    json_t *e;
    if (json_is_array(v)) {
        json_array_foreach(v, i, e)
        {
            int d = value_depth(e, max - 1);
            if (d > deepest && (deepest = d) >= max) break;
        }
    } else {
        json_object_foreach((json_t *)v, k, e)
        {
            int d = value_depth(e, max - 1);
            if (d > deepest && (deepest = d) >= max) break;
        }
    }
    return deepest + 1;
}

bool as_json_media_type(const char *ct)
{
    if (!ct) return false;
    while (*ct == ' ')
        ct++;
    size_t n = strlen("application/json");
    return strncasecmp(ct, "application/json", n) == 0 && strchr("; \t", ct[n]);
}

json_t *as_call_body(as_shop *shop, const as_request *req, as_problem *why)
{
    /* A body sent as another type (text/plain, a form) is refused before it
     * is read as JSON; none said is taken as JSON. */
    if (req->body && req->body_len && req->content_type && *req->content_type &&
        !as_json_media_type(req->content_type)) {
        as_problem_set(why, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type",
                       as_printf(shop->mem,
                                 "Send the body as JSON with 'Content-Type: application/json', "
                                 "not '%.60s'.",
                                 req->content_type));
        return NULL;
    }
    if (!req->body || req->body_len == 0) {
        as_problem_set(why, 400, "VALIDATION_ERROR", "body", "A JSON object body is required.");
        return NULL;
    }
    if (text_depth(req->body, req->body_len, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        as_problem_set(why, 400, "VALIDATION_ERROR", "body", TOO_DEEP);
        return NULL;
    }
    json_error_t e;
    json_t *v = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &e);
    if (!v)
        as_problem_set(why, 400, "VALIDATION_ERROR", "body",
                       as_printf(shop->mem, "The body is not valid JSON (line %d, column %d): %s",
                                 e.line, e.column, e.text));
    return v;
}

bool as_call_body_depth_ok(const json_t *body, as_problem *why)
{
    if (value_depth(body, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return true;
    as_problem_set(why, 400, "VALIDATION_ERROR", "body", TOO_DEEP);
    return false;
}

const char *as_call_fields(as_shop *shop, const json_t *body, const as_field_rule *rules, size_t n,
                           as_param *vals, as_problem *why)
{
    if (!as_validate_body(shop->mem, rules, n, body, as_today(shop), vals, why)) return NULL;
    char *canon = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    const char *hash = as_sha256_hex(shop->mem, canon, strlen(canon));
    free(canon);
    return hash;
}

/* ---- Idempotency-Key ---- */

bool as_idem_key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n < 1 || n > 255) return false;
    for (size_t i = 0; i < n; i++)
        if (k[i] < 0x21 || k[i] > 0x7e) return false;
    return true;
}

bool as_idem_key_valid(as_mem *m, const char *key, const char *endpoint, as_problem *why)
{
    if (!key || !*key) {
        as_problem_set(why, 400, "IDEMPOTENCY_KEY_REQUIRED", "Idempotency-Key",
                       as_printf(m,
                                 "%s needs an Idempotency-Key header: a unique value per "
                                 "request, sent again unchanged on every retry.",
                                 endpoint));
        return false;
    }
    if (!as_idem_key_ok(key)) {
        as_problem_set(why, 400, "VALIDATION_ERROR", "Idempotency-Key",
                       "Idempotency-Key must be 1 to 255 visible ASCII characters.");
        return false;
    }
    return true;
}

/* The binding's work as the shop's: what it put in resp is the answer to keep. */
typedef struct resp_job {
    int (*work)(void *job, as_response *resp);
    void *job;
    as_response *resp;
} resp_job;

static int resp_work(void *job, as_answer *answer)
{
    resp_job *j = job;
    int rc = j->work(j->job, j->resp);
    answer->status = j->resp->status;
    answer->body = json_incref(j->resp->body);
    return rc;
}

void as_idem_respond(as_shop *shop, const char *user_id, const char *scope, const char *key,
                     const char *hash, int (*work)(void *job, as_response *resp), void *job,
                     as_response *resp)
{
    resp_job j = {work, job, resp};
    as_answer answer;
    as_problem why;
    as_shop_rc rc =
        as_idempotent_run(shop, user_id, scope, key, hash, resp_work, &j, &answer, &why);
    if (rc == AS_SHOP_DONE && answer.replayed) {
        as_respond_json(resp, answer.status, answer.body);
        resp->replayed = true;
    } else if (rc == AS_SHOP_DONE) {
        json_decref(answer.body); /* resp holds it already */
    } else {
        as_respond_outcome(resp, rc, &why);
        if (rc == AS_SHOP_REFUSED) resp->retry_after = answer.retry_after;
    }
}
