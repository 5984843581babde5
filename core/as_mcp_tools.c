/* MCP tools: each one is a REST operation (docs/mcp.md). A call checks the
 * arguments against the tool's input schema (core/mcp_tools.json, compiled in),
 * turns them into a REST request (path, query string or JSON body), runs it
 * through as_handle with the caller's own headers, and wraps the REST answer in
 * a CallToolResult: the REST body as text and as structuredContent. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "as_mcp.h"
#include "as_api_internal.h"
#include "as_util.h"
#include "mcp_tools_json.inc"

typedef struct mcp_tool {
    const char *name;
    const char *method;
    const char *path;     /* "{}" stands for the path argument */
    const char *path_arg; /* the argument that fills "{}", or NULL */
    bool body;            /* the other arguments are a JSON body (else the query string) */
    bool idem;            /* takes idempotency_key (Idempotency-Key) */
} mcp_tool;

static const mcp_tool tools[] = {
    {"search_products", "GET", "/search", NULL, false, false},
    {"get_product", "GET", "/products/{}", "sku", false, false},
    {"find_devices", "GET", "/devices", NULL, false, false},
    {"compatible_parts", "GET", "/devices/{}/compatible", "slug", false, false},
    {"check_compatibility", "POST", "/compatibility/check", NULL, true, false},
    {"ask_question", "POST", "/questions", NULL, true, false},
    {"get_mandate", "GET", "/mandates/current", NULL, false, false},
    {"create_quote", "POST", "/quotes", NULL, true, false},
    {"create_order", "POST", "/orders", NULL, true, true},
    {"get_order", "GET", "/orders/{}", "order_id", false, false},
    {"cancel_order", "POST", "/orders/{}/cancel", "order_id", false, false},
    {"start_return", "POST", "/returns", NULL, true, true},
};
enum { N_TOOLS = sizeof(tools) / sizeof(tools[0]) };

static const char IDEM_ARG[] = "idempotency_key";

const char *as_mcp_tool_name(size_t i)
{
    return i < N_TOOLS ? tools[i].name : NULL;
}

/* The compiled-in definitions, parsed once per process and then only read
 * (by any thread): not on every tools/list or tools/call. */
static json_t *tools_doc;
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

static void tools_parse(void)
{
    tools_doc =
        json_loadb(mcp_tools_json, sizeof(mcp_tools_json) - 1, JSON_REJECT_DUPLICATES, NULL);
}

static json_t *tools_shared(void)
{
    pthread_once(&tools_once, tools_parse);
    return tools_doc;
}

json_t *as_mcp_tools_list(void)
{
    json_t *d = tools_shared();
    return d ? json_copy(d) : NULL; /* the caller's own top object; the tools are shared */
}

/* ---- arguments against the input schema ---- */

/* A JSON Schema "type" word against a value; 2.0 is an integer, as in JSON Schema. */
static bool type_is(const char *type, const json_t *v)
{
    if (strcmp(type, "string") == 0) return json_is_string(v);
    if (strcmp(type, "number") == 0) return json_is_number(v);
    if (strcmp(type, "boolean") == 0) return json_is_boolean(v);
    if (strcmp(type, "object") == 0) return json_is_object(v);
    if (strcmp(type, "array") == 0) return json_is_array(v);
    if (strcmp(type, "null") == 0) return json_is_null(v);
    if (strcmp(type, "integer") == 0)
        return json_is_integer(v) || (json_is_real(v) && fabs(json_real_value(v)) < 9e15 &&
                                      json_real_value(v) == floor(json_real_value(v)));
    return false;
}

static bool type_ok(const json_t *prop, const json_t *v, const char **want)
{
    const json_t *t = json_object_get(prop, "type");
    *want = json_string_value(t);
    if (json_is_string(t)) return type_is(json_string_value(t), v);
    if (!json_is_array(t)) return true; /* no type word: anything */
    size_t i;
    const json_t *e;
    json_array_foreach(t, i, e)
    {
        if (json_is_string(e) && type_is(json_string_value(e), v)) return true;
    }
    *want = json_string_value(json_array_get(t, 0));
    return false;
}

static const char *article(const char *type)
{
    return strchr("aeiou", type[0]) ? "an" : "a";
}

/* The argument names a tool takes, for messages. */
static const char *arg_names(as_mem *m, const json_t *props)
{
    as_buf b;
    as_buf_init(&b, m);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)props, k, v) as_buf_printf(&b, "%s%s", b.len ? ", " : "", k);
    return b.len ? as_buf_str(&b) : "no arguments";
}

/* Checks what the REST operation cannot see for itself: unknown arguments,
 * JSON types (a query string has none), required arguments, and the path
 * argument and idempotency_key. Lengths, ranges and enums are the REST
 * operation's (the same rules, the same messages). Integral reals become
 * integers in args. */
static bool check_args(as_mem *m, const mcp_tool *t, const json_t *schema, json_t *args,
                       const as_request *http, as_problem *p)
{
    const json_t *props = json_object_get(schema, "properties");
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v)
    {
        const char *k = as_strdup(m, key);
        const json_t *prop = json_object_get(props, k);
        if (!prop) {
            const char *shown = as_utf8_len(k) > 40 ? "(a long name)" : k;
            as_problem_set(p, 400, "VALIDATION_ERROR", k,
                           as_printf(m, "unknown argument '%s'; %s takes: %s", shown, t->name,
                                     arg_names(m, props)));
            return false;
        }
        const char *want = NULL;
        if (!type_ok(prop, v, &want)) {
            want = want ? want : "value of another type";
            as_problem_set(p, 400, "VALIDATION_ERROR", k,
                           as_printf(m, "%s must be %s %s, not %s", k, article(want), want,
                                     as_json_type_name(v)));
            return false;
        }
        if (json_is_real(v) && want && strcmp(want, "integer") == 0)
            json_object_set_new(args, k, json_integer((json_int_t)json_real_value(v)));
    }
    const json_t *req = json_object_get(schema, "required");
    size_t i;
    const json_t *r;
    json_array_foreach(req, i, r)
    {
        const char *name = json_string_value(r);
        if (!name || json_object_get(args, name)) continue;
        if (t->idem && strcmp(name, IDEM_ARG) == 0) {
            if (http->idempotency_key && *http->idempotency_key) continue; /* the header's */
            as_problem_set(p, 400, "IDEMPOTENCY_KEY_REQUIRED", IDEM_ARG,
                           as_printf(m,
                                     "%s needs idempotency_key: a unique value per call, sent "
                                     "again unchanged when retrying the same call.",
                                     t->name));
            return false;
        }
        as_problem_set(p, 400, "VALIDATION_ERROR", name, as_printf(m, "%s is required", name));
        return false;
    }
    const char *idem = json_string_value(json_object_get(args, IDEM_ARG));
    if (t->idem && idem && !as_idem_key_ok(idem)) {
        as_problem_set(p, 400, "VALIDATION_ERROR", IDEM_ARG,
                       "idempotency_key must be 1 to 255 visible ASCII characters.");
        return false;
    }
    const char *pv = t->path_arg ? json_string_value(json_object_get(args, t->path_arg)) : NULL;
    if (pv && (!*pv || strchr(pv, '/'))) {
        as_problem_set(p, 400, "VALIDATION_ERROR", t->path_arg,
                       as_printf(m, "%s must be a non-empty %s without '/'", t->path_arg,
                                 strcmp(t->path_arg, "slug") == 0 ? "device slug" : "id"));
        return false;
    }
    return true;
}

/* ---- the REST request ---- */

static void pct_encode(as_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
            strchr("-._~", *c)) {
            as_buf_add(b, (const char *)c, 1);
        } else {
            char e[3] = {'%', hex[*c >> 4], hex[*c & 15]};
            as_buf_add(b, e, 3);
        }
    }
}

/* An argument as query text: numbers as a client would write them (euros with
 * two decimals when they are whole cents), objects (weights) as JSON. */
static const char *query_text(as_mem *m, const json_t *v)
{
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v)) return as_printf(m, "%lld", (long long)json_integer_value(v));
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    if (json_is_real(v)) {
        double x = json_real_value(v), cents = round(x * 100);
        if (fabs(x * 100 - cents) < 1e-6 && fabs(cents) < 9e15)
            return as_printf(m, "%s%lld.%02lld", cents < 0 ? "-" : "", (long long)fabs(cents) / 100,
                             (long long)fabs(cents) % 100);
        return as_printf(m, "%.17g", x);
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    const char *out = as_strdup(m, s ? s : "");
    free(s);
    return out;
}

/* Fills the REST request from the arguments; false when out of memory. */
static bool rest_request(as_mem *m, const mcp_tool *t, json_t *args, const as_request *http,
                         as_request *out)
{
    memset(out, 0, sizeof(*out));
    out->method = t->method;
    out->content_type = "application/json";
    out->accept = "application/json";
    out->authorization = http->authorization;
    out->service_agent = http->service_agent;
    out->base_url = http->base_url;
    const char *idem = json_string_value(json_object_get(args, IDEM_ARG));
    out->idempotency_key = t->idem ? (idem ? as_strdup(m, idem) : http->idempotency_key) : NULL;
    json_object_del(args, IDEM_ARG);

    as_buf path;
    as_buf_init(&path, m);
    const char *slot = strstr(t->path, "{}");
    if (slot && t->path_arg) {
        as_buf_add(&path, t->path, (size_t)(slot - t->path));
        pct_encode(&path, json_string_value(json_object_get(args, t->path_arg)));
        as_buf_puts(&path, slot + 2);
        json_object_del(args, t->path_arg);
    } else {
        as_buf_puts(&path, t->path);
    }
    out->path = as_buf_str(&path);

    if (t->body) {
        char *s = json_dumps(args, JSON_COMPACT);
        if (!s) return false;
        out->body = as_strdup(m, s);
        out->body_len = strlen(s);
        free(s);
        return true;
    }
    as_buf q;
    as_buf_init(&q, m);
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v)
    {
        if (q.len) as_buf_puts(&q, "&");
        pct_encode(&q, key);
        as_buf_puts(&q, "=");
        pct_encode(&q, query_text(m, v));
    }
    out->query = q.len ? as_buf_str(&q) : NULL;
    return true;
}

/* ---- the result ---- */

static json_t *text_item(const char *text)
{
    return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

/* What an agent must do with a 202: a human approves through the link. */
static const char *confirmation_note(as_mem *m, const json_t *body)
{
    const json_t *c = json_object_get(body, "confirmation");
    const char *url = json_string_value(json_object_get(c, "url"));
    const char *until = json_string_value(json_object_get(c, "expires_at"));
    const char *order = json_string_value(json_object_get(body, "order_id"));
    if (!url || !order) return NULL;
    return as_printf(m,
                     "The order %s is not placed yet: a human must approve it. Give the user "
                     "this link to approve or decline it%s%s: %s . Do not open or post to it "
                     "yourself: approving takes the person's passkey, and an agent's approval "
                     "is refused. Then follow the order with get_order.",
                     order, until ? " before " : "", until ? until : "", url);
}

/* A CallToolResult from a REST response: the body as JSON text and as
 * structuredContent; isError for 4xx and 5xx; the status in _meta. Takes the
 * body out of resp. */
static json_t *tool_result(as_ctx *ctx, as_response *resp)
{
    json_t *body = resp->body;
    resp->body = NULL;
    if (!body && resp->raw && resp->content_type &&
        strcmp(resp->content_type, "application/json") == 0) /* a view sent as encoded */
        body = json_loadb(resp->raw, resp->raw_len, 0, NULL);
    if (!json_is_object(body)) { /* no endpoint reachable from a tool answers otherwise */
        json_decref(body);
        as_response tmp = {0};
        as_respond_error(&tmp, 500, "INTERNAL_ERROR", NULL, "The operation gave no JSON result.");
        resp->status = tmp.status;
        body = tmp.body;
    }
    char *text = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_t *content = json_array();
    json_array_append_new(content, text_item(text ? text : "{}"));
    free(text);
    const char *code = json_string_value(json_object_get(body, "error"));
    const char *note = resp->status == 202 && code && strcmp(code, "CONFIRMATION_REQUIRED") == 0
                           ? confirmation_note(ctx->mem, body)
                           : NULL;
    if (note) json_array_append_new(content, text_item(note));
    json_t *meta = json_pack("{s:i}", "agentshop/status", resp->status);
    if (resp->replayed) json_object_set_new(meta, "agentshop/replayed", json_true());
    if (resp->retry_after > 0)
        json_object_set_new(meta, "agentshop/retry_after", json_integer(resp->retry_after));
    return json_pack("{s:o, s:o, s:b, s:o}", "content", content, "structuredContent", body,
                     "isError", resp->status >= 400, "_meta", meta);
}

/* The inputSchema of the named tool in the definitions, or NULL. */
static json_t *tool_schema(json_t *doc, const char *name)
{
    size_t i;
    json_t *def;
    json_array_foreach(json_object_get(doc, "tools"), i, def)
    {
        const char *n = json_string_value(json_object_get(def, "name"));
        if (n && strcmp(n, name) == 0) return json_object_get(def, "inputSchema");
    }
    return NULL;
}

json_t *as_mcp_tool_call(as_ctx *ctx, const as_request *http, const char *name, json_t *args,
                         int *rpc_code, const char **rpc_message)
{
    as_mem *m = ctx->mem;
    const mcp_tool *t = NULL;
    for (size_t i = 0; i < N_TOOLS && !t; i++)
        if (strcmp(tools[i].name, name) == 0) t = &tools[i];
    json_t *doc = t ? tools_shared() : NULL;
    json_t *schema = tool_schema(doc, name);
    if (!t || !schema) {
        *rpc_code = -32602;
        *rpc_message =
            as_printf(m, "Unknown tool: %s", as_utf8_len(name) > 60 ? "(a long name)" : name);
        return NULL;
    }
    json_t *a = args ? json_deep_copy(args) : json_object();
    as_response resp = {0};
    as_problem p;
    as_request rest;
    if (!a) {
        as_respond_error(&resp, 500, "INTERNAL_ERROR", NULL, "Out of memory.");
    } else if (!check_args(m, t, schema, a, http, &p)) {
        as_respond_problem(&resp, &p);
    } else if (!rest_request(m, t, a, http, &rest)) {
        as_respond_error(&resp, 500, "INTERNAL_ERROR", NULL, "Out of memory.");
    } else {
        as_handle(ctx, &rest, &resp);
    }
    json_decref(a);
    as_log(ctx, AS_LOG_DEBUG, "mcp: %s -> %d", t->name, resp.status);
    json_t *result = tool_result(ctx, &resp);
    as_response_clear(&resp);
    return result;
}
