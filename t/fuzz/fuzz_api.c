/* libFuzzer harness: the whole router, as_handle, against the fake store of
 * the unit tests (t/unit/fake_shop.h), as the trading shop: the wide
 * catalogue and a shop that has been trading (fake_shop_init_trading), reset
 * for every input.
 *
 * Input: four control bytes, then text.
 *   byte 0  bits 0-2 method: GET HEAD POST PUT DELETE POST GET POST
 *           bits 3-5 Idempotency-Key: k-fresh, none, k-replay (a finished record
 *                    with the same body), k-busy (in flight), k-other (another
 *                    body), k-badjson (a corrupt record), "" (empty), "a b" (bad)
 *           bit 6    Accept: text/html
 *           bit 7    Content-Type: application/x-www-form-urlencoded (else JSON)
 *   byte 1  bits 0-1 identity: 0 a valid key and Service-Agent, 1 none,
 *                    2 both headers from the text (see below), 3 valid
 *           bits 2-3 what key_by_hash answers: the key, revoked, another hash, the key
 *           bit 4    no signing key configured
 *           bit 5    no base URL
 *           bits 6-7 clock: now, +2 hours, +40 days, -1 day
 *   byte 2  store function to fail (t/unit/fake_faults.h FAKE_OP_*; >= FAKE_OP_N:
 *           none)
 *   byte 3  bits 0-2 which call of it fails (0: every call)
 *           bits 3-4 code: AS_EDB, AS_ENOTFOUND, AS_ECONFLICT, AS_EDB (a code
 *                    the function may not return per as_store.h becomes AS_EDB)
 *           bits 5-6 whose key it is: u1; u2 (owns md_u2, q_u2, ord_u2); u3 (its
 *                    mandate expired); u4 (its only mandate is revoked)
 *   text    path '\n' query '\n' body         (identity 0, 1, 3)
 *           path '\n' query '\n' Authorization '\n' Service-Agent '\n' body  (2)
 *           An empty query line means no query string. "@TOKEN@" in the query or
 *           body becomes the valid signed token of /confirmations/<id> when the
 *           store has that confirmation, so the decision logic is reachable.
 *
 * The trading shop's Idempotency-Key records k-replay, k-busy, k-other and
 * k-badjson are kept for whoever claims them first (user and route), so one
 * input reaches each; its passkey, enrolment (token "fz-enrol-token") and
 * challenge are fake_shop.h's FAKE_SHOP_*.
 *
 * Searches go through one search index kept for the process, as the glue keeps
 * one per child (see process_index below).
 *
 * Invariants (abort() when broken), besides the sanitizers and the store's own
 * checks (transactions, schema constraints: see t/unit/fake_faults.h):
 *   - the status is 200..599; a 405 names the allowed methods;
 *   - a response that is not an HTML page has a JSON body that json_dumps can
 *     encode (the glue answers 500 "could not be encoded" otherwise); a JSON
 *     body written ready-made decodes; one core writes (the product view, the
 *     search page; not the OpenAPI document, kept as written) is what jansson
 *     writes for what it decodes to (and a newline);
 *   - a JSON body of a status >= 400 is an object with string error and message,
 *     or (/mcp) a JSON-RPC 2.0 error with an integer code and a string message;
 *   - no transaction is left open, no unit of stock is created or lost (stock
 *     plus what orders hold), a cancelled/declined/expired order holds no budget. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "as_api.h"
#include "as_crypto.h"
#include "as_mem.h"
#include "as_search.h"
#include "fake_shop.h"
#include "fuzz_check.h"

#define VALID_KEY "agentshop_sk_test_0123456789abcdefABCDEF0123456789"
#define VALID_AGENT "shopbot/1.0"

static const unsigned char signing_key[32] = "fuzz-signing-key-0123456789abcde";

/* The process's search index, as the glue keeps one per child: built by the
 * first search and kept, so that a search does not build a snapshot of its own
 * (about ten times the work of the rest of a GET /search). Every input starts
 * from the same store (catalogue version 1, rank version 0), so the index's
 * snapshot stays right for the next input unless a search saw a newer rank
 * version (an order moved stock first): then the index is replaced, as its
 * snapshot would be ahead of the next input's stock. An input that fails one of
 * the store's functions the index reads gets an index of its own, so that the
 * build's and the update's failures are still reached. */
static as_search_index *process_index;

static void process_index_destroy(void)
{
    as_search_index_destroy(process_index);
    process_index = NULL;
}

static bool reads_for_index(int op)
{
    return op == FAKE_OP_MERCHANTS || op == FAKE_OP_DEVICES || op == FAKE_OP_SEARCH_VERSION ||
           op == FAKE_OP_INDEX_ROWS || op == FAKE_OP_RANK_CHANGES;
}

static as_search_index *index_for(const fake_db *db)
{
    static bool registered;
    if (reads_for_index(db->fail_op)) return as_search_index_create(NULL, NULL, NULL);
    if (!process_index) process_index = as_search_index_create(NULL, NULL, NULL);
    if (!registered) registered = atexit(process_index_destroy) == 0;
    return process_index;
}

static void index_done(const fake_db *db, as_search_index *index)
{
    if (index != process_index)
        as_search_index_destroy(index);
    else if (db->rank_seen > 0)
        process_index_destroy();
}

static void fz_log(void *baton, int level, const char *msg)
{
    (void)baton;
    CHECK(msg != NULL && level >= 0 && level <= 7, "log: bad message or level");
}

/* A NUL-terminated malloc'd copy of [s, s+n): exact size, so ASan sees overreads. */
static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) abort();
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

typedef struct cursor {
    const char *p, *end;
    bool done; /* the last line was taken: nothing is left, not even "" */
} cursor;

/* The next line as a malloc'd string; NULL when the input ran out. */
static char *next_line(cursor *c)
{
    if (c->done) return NULL;
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    const char *stop = nl ? nl : c->end;
    char *s = dup_n(c->p, (size_t)(stop - c->p));
    if (nl)
        c->p = nl + 1;
    else
        c->done = true;
    return s;
}

/* Replaces every "@TOKEN@" in s (malloc'd, length *n) with tok. */
static char *subst_token(char *s, size_t *n, const char *tok)
{
    static const char mark[] = "@TOKEN@";
    if (!s || !tok) return s;
    const size_t ml = sizeof(mark) - 1, tl = strlen(tok);
    size_t count = 0;
    for (size_t i = 0; i + ml <= *n; i++)
        if (memcmp(s + i, mark, ml) == 0) count++, i += ml - 1;
    if (!count) return s;
    size_t out_n = *n + count * tl - count * ml, o = 0;
    char *d = malloc(out_n + 1);
    if (!d) abort();
    for (size_t i = 0; i < *n;) {
        if (i + ml <= *n && memcmp(s + i, mark, ml) == 0) {
            memcpy(d + o, tok, tl);
            o += tl;
            i += ml;
        } else {
            d[o++] = s[i++];
        }
    }
    d[o] = '\0';
    free(s);
    *n = out_n;
    return d;
}

/* The token core signs for a stored confirmation (as_buy_api.c's formula). */
static const char *token_for_path(as_mem *m, const fake_shop *shop, const char *path)
{
    static const char pre[] = "/confirmations/";
    if (!path || strncmp(path, pre, sizeof(pre) - 1) != 0) return NULL;
    const char *id = path + sizeof(pre) - 1;
    for (size_t i = 0; i < shop->t.n_confs; i++) {
        const as_confirmation *c = &shop->t.confs[i];
        if (strcmp(c->id, id) == 0) {
            const char *msg = as_printf(m, "agentshop-confirmation:v1:%s:%s:%lld", c->id,
                                        c->order_id, (long long)c->expires_at);
            return as_hmac_b64url(m, signing_key, sizeof(signing_key), msg);
        }
    }
    return NULL;
}

static void check_response(const as_response *resp, const char *method, const char *path)
{
    CHECK(resp->status >= 200 && resp->status <= 599, "status %d", resp->status);
    CHECK(resp->retry_after >= 0, "retry_after %d", resp->retry_after);
    if (resp->status == 405) CHECK(resp->allow && *resp->allow, "405 without Allow");
    if (resp->no_body) CHECK(resp->status == 202, "no body with status %d", resp->status);
    if (resp->raw)
        CHECK(resp->raw_len > 0 && resp->content_type && strlen(resp->raw) == resp->raw_len,
              "status %d: a ready-made body without length or type", resp->status);
    if (resp->raw && strcmp(resp->content_type, "application/json") == 0) {
        /* written without jansson (the product view, the search page): still JSON, and in the
         * form jansson itself writes */
        json_t *v = json_loadb(resp->raw, resp->raw_len, JSON_REJECT_DUPLICATES, NULL);
        CHECK(v != NULL, "status %d: a ready-made JSON body that is not JSON", resp->status);
        /* The OpenAPI document is docs/openapi.json as it was written (indented), not
         * written by core: only the bodies core writes must be jansson's bytes. */
        if (strncmp(path, "/openapi.json", 13) != 0) {
            char *s = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(12));
            CHECK(s && strlen(s) + 1 == resp->raw_len &&
                      memcmp(s, resp->raw, resp->raw_len - 1) == 0,
                  "status %d: a ready-made JSON body not as jansson writes it", resp->status);
            free(s);
        }
        json_decref(v);
    }
    if (!resp->html && !resp->raw && !resp->no_body) {
        CHECK(resp->body != NULL, "%s: status %d without a JSON body (the glue would answer 500)",
              method, resp->status);
        char *s = json_dumps(resp->body, JSON_COMPACT | JSON_REAL_PRECISION(12));
        CHECK(s != NULL, "status %d: the body cannot be encoded", resp->status);
        free(s);
    }
    if (resp->body && resp->status >= 400 && json_object_get(resp->body, "jsonrpc")) {
        /* /mcp answers in JSON-RPC 2.0: an error object with an integer code and a
         * message; an HTTP-level refusal may leave the id out (MCP's transport). */
        json_t *err = json_object_get(resp->body, "error");
        CHECK(json_is_object(err) && json_is_integer(json_object_get(err, "code")) &&
                  json_is_string(json_object_get(err, "message")),
              "status %d: a JSON-RPC error without code and message", resp->status);
        CHECK(json_object_get(resp->body, "result") == NULL,
              "status %d: a JSON-RPC error with a result", resp->status);
    } else if (resp->body && resp->status >= 400) {
        CHECK(json_is_object(resp->body), "status %d: the error body is not an object",
              resp->status);
        CHECK(json_is_string(json_object_get(resp->body, "error")), "status %d: no string 'error'",
              resp->status);
        CHECK(json_is_string(json_object_get(resp->body, "message")),
              "status %d: no string 'message'", resp->status);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[8] = {"GET",    "HEAD", "POST", "PUT",
                                           "DELETE", "POST", "GET",  "POST"};
    static const char *const idem_keys[8] = {"k-fresh", NULL,        "k-replay", "k-busy",
                                             "k-other", "k-badjson", "",         "a b"};
    static const int64_t clock_offsets[4] = {0, 2 * 3600, 40 * 86400, -86400};
    static const int fail_codes[4] = {AS_EDB, AS_ENOTFOUND, AS_ECONFLICT, AS_EDB};
    if (size < 4) return 0;
    const uint8_t b0 = data[0], b1 = data[1], b2 = data[2], b3 = data[3];
    cursor cur = {(const char *)data + 4, (const char *)data + size, false};

    static fake_shop shop; /* large: keep it off the stack */
    fake_shop_init_trading(&shop);
    static const char *const users[4] = {"u1", "u2", "u3", "u4"};
    shop.key_mode = (b1 >> 2) & 3;
    shop.key_user = users[(b3 >> 5) & 3];
    fake_db *db = &shop.db;
    db->fail_op = b2 < FAKE_OP_N ? b2 : FAKE_OP_NONE;
    db->fail_nth = b3 & 7;
    db->fail_rc = fail_codes[(b3 >> 3) & 3];
    as_store store = fake_shop_store(&shop);

    as_arena *arena = as_arena_create();
    as_mem mem = as_arena_mem(arena);
    as_config cfg = {0}; /* as_config_defaults leaves the signing key alone */
    as_config_defaults(&cfg);
    if (!(b1 & 0x10)) {
        cfg.signing_key = signing_key;
        cfg.signing_key_len = sizeof(signing_key);
    }
    as_search_index *index = index_for(db);
    if (!index) abort();
    const int64_t now = FAKE_SHOP_NOW + clock_offsets[b1 >> 6];
    const bool sweep = (b3 & 0x80) != 0; /* the sweep of expired confirmations first */
    as_shop env = {&mem, &store, &cfg, now, fz_log, NULL, index, sweep, NULL, NULL};

    char *path = next_line(&cur), *query = next_line(&cur);
    char *auth = NULL, *agent = NULL;
    int identity = b1 & 3;
    if (identity == 2) {
        auth = next_line(&cur);
        agent = next_line(&cur);
    }
    size_t body_len = cur.done ? 0 : (size_t)(cur.end - cur.p);
    char *body = cur.done ? NULL : dup_n(cur.p, body_len);
    if (query && !*query) {
        free(query);
        query = NULL;
    }
    const char *tok = token_for_path(&mem, &shop, path);
    size_t qn = query ? strlen(query) : 0;
    query = subst_token(query, &qn, tok);
    body = subst_token(body, &body_len, tok);

    as_request req = {
        .method = methods[b0 & 7],
        .path = path ? path : "",
        .query = query,
        .body = body,
        .body_len = body_len,
        .content_type = (b0 & 0x80) ? "application/x-www-form-urlencoded" : "application/json",
        .accept = (b0 & 0x40) ? "text/html,application/xhtml+xml" : "application/json",
        .authorization = identity == 1   ? NULL
                         : identity == 2 ? auth
                                         : "Bearer " VALID_KEY,
        .service_agent = identity == 1   ? NULL
                         : identity == 2 ? agent
                                         : VALID_AGENT,
        .idempotency_key = idem_keys[(b0 >> 3) & 7],
        .base_url = (b1 & 0x20) ? NULL : "https://shop.example/v1",
    };
    as_response resp;
    as_handle(&env, &req, &resp);
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("FUZZ_API_VERBOSE") != NULL;
    if (verbose) { /* FUZZ_API_VERBOSE=1 build/fuzz/fuzz_api FILE...: what each input got */
        char *s = resp.body ? json_dumps(resp.body, JSON_COMPACT) : NULL;
        fprintf(stderr, "%s %s?%s -> %d %.300s%s\n", req.method, req.path,
                req.query ? req.query : "", resp.status, s ? s : "(no body)",
                resp.html ? " +html" : "");
        free(s);
    }
    check_response(&resp, req.method, req.path);
    fake_shop_check_end(&shop);
    index_done(db, index);
    as_response_clear(&resp);
    CHECK(resp.body == NULL, "as_response_clear left a body");

    as_arena_destroy(arena);
    fake_shop_free(&shop);
    free(path);
    free(query);
    free(auth);
    free(agent);
    free(body);
    return 0;
}
