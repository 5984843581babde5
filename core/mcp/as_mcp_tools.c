/* MCP tools: each one is a REST operation (docs/mcp.md). A call checks the
 * arguments against the tool's input schema (core/mcp/mcp_tools.json, compiled
 * in), calls the shop's operation with them, as the REST handler would (the
 * catalogue's reads, and the agent's calls of core/http/as_answers.h under the
 * same identity, field rules and Idempotency-Key scope), renders its answer
 * with REST's own view, and wraps it in a CallToolResult: the REST body as
 * text and as structuredContent. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "as_mcp.h"
#include "as_answers.h"
#include "as_call.h"
#include "as_device_view.h"
#include "as_http.h"
#include "as_mcp_results.h"
#include "as_reads.h"
#include "as_util.h"
#include "mcp_tools_json.inc"

/* A call's arguments as the shop's operation takes them: the path argument,
 * the others as the query string REST would read (query_text of each; null
 * is left out, as REST's default), or as REST's JSON body; and the request's
 * headers that identify the agent. */
typedef struct mcp_call {
    const as_request *http; /* the MCP request: Authorization, Service-Agent, base URL */
    const char *path;       /* the path argument's value, or NULL */
    as_query q;
    const json_t *body; /* the arguments but the path argument and idempotency_key */
    const char *key;    /* idempotency_key, else the Idempotency-Key header */
} mcp_call;

/* A tool's operation called, its answer as REST gives it (status, and the
 * body as JSON or as encoded). */
typedef void (*mcp_op)(as_shop *shop, const mcp_call *c, as_response *out);

/* the catalogue's reads */
static void op_search(as_shop *shop, const mcp_call *c, as_response *out);
static void op_product(as_shop *shop, const mcp_call *c, as_response *out);
static void op_devices(as_shop *shop, const mcp_call *c, as_response *out);
static void op_compatible(as_shop *shop, const mcp_call *c, as_response *out);
/* the agent's calls (core/http/as_answers.h) */
static void op_fit_check(as_shop *shop, const mcp_call *c, as_response *out);
static void op_question(as_shop *shop, const mcp_call *c, as_response *out);
static void op_mandate(as_shop *shop, const mcp_call *c, as_response *out);
static void op_quote(as_shop *shop, const mcp_call *c, as_response *out);
static void op_order(as_shop *shop, const mcp_call *c, as_response *out);
static void op_order_get(as_shop *shop, const mcp_call *c, as_response *out);
static void op_order_cancel(as_shop *shop, const mcp_call *c, as_response *out);
static void op_return(as_shop *shop, const mcp_call *c, as_response *out);

/* A tool: its operation, as the REST operation of the same name answers it. */
typedef struct mcp_tool {
    const char *name;
    mcp_op op;
    const char *path_arg; /* the argument REST takes in its path, or NULL */
    bool idem;            /* takes idempotency_key (Idempotency-Key) */
    bool compact;         /* takes detail: its result is compact unless detail is "full" */
} mcp_tool;

static const mcp_tool tools[] = {
    {"search_products", op_search, NULL, false, true},
    {"get_product", op_product, "sku", false, false},
    {"find_devices", op_devices, NULL, false, false},
    {"compatible_parts", op_compatible, "slug", false, false},
    {"check_compatibility", op_fit_check, NULL, false, false},
    {"ask_question", op_question, NULL, false, false},
    {"get_mandate", op_mandate, NULL, false, false},
    {"create_quote", op_quote, NULL, false, false},
    {"create_order", op_order, NULL, true, false},
    {"get_order", op_order_get, "order_id", false, false},
    {"cancel_order", op_order_cancel, "order_id", false, false},
    {"start_return", op_return, NULL, true, false},
};
enum { N_TOOLS = sizeof(tools) / sizeof(tools[0]) };

static const char IDEM_ARG[] = "idempotency_key";
static const char DETAIL_ARG[] = "detail"; /* MCP's own: not passed to REST */

const char *as_mcp_tool_name(size_t i)
{
    return i < N_TOOLS ? tools[i].name : NULL;
}

/* The compiled-in definitions, parsed once per process and then only read
 * (by any thread): not on every tools/list or tools/call. */
static json_t *tools_doc;
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

/* ---- output schemas, from the OpenAPI document ---- */

#define SCHEMAS "#/components/schemas/"

/* Rewrites each reference to a schema of the document as one to the output
 * schema's own $defs, and notes the schema's name in want. */
static void refs_to_defs(json_t *v, json_t *want)
{
    size_t i;
    json_t *e;
    if (json_is_array(v)) {
        json_array_foreach(v, i, e) refs_to_defs(e, want);
        return;
    }
    const char *k;
    json_object_foreach(v, k, e)
    {
        const char *ref = strcmp(k, "$ref") == 0 ? json_string_value(e) : NULL;
        if (!ref || strncmp(ref, SCHEMAS, sizeof(SCHEMAS) - 1) != 0) {
            refs_to_defs(e, want);
            continue;
        }
        const char *name = ref + sizeof(SCHEMAS) - 1;
        json_object_set_new(want, name, json_true());
        json_object_set_new(v, k, json_sprintf("#/$defs/%s", name)); /* same key: no rehash */
    }
}

/* The operation of the document with this operationId, or NULL. */
static json_t *operation(json_t *api, const char *id)
{
    const char *path, *method;
    json_t *item, *op;
    json_object_foreach(json_object_get(api, "paths"), path, item)
    {
        json_object_foreach(item, method, op)
        {
            const char *oid = json_string_value(json_object_get(op, "operationId"));
            if (oid && strcmp(oid, id) == 0) return op;
        }
    }
    return NULL;
}

/* A tool's outputSchema (MCP 2025-06-18 "Output Schema"): the bodies its
 * operation answers with a 2xx status (and the tool's own form, when the
 * definitions give one) or the Error object of a failed call (isError), each
 * the document's own schema; the schemas they use are copied into $defs, so
 * the result and the document cannot disagree. NULL when the operation is
 * missing or out of memory. */
static json_t *output_schema(json_t *api, const char *name, json_t *own)
{
    json_t *op = operation(api, name);
    json_t *schemas = json_object_get(json_object_get(api, "components"), "schemas");
    if (!op || !schemas) return NULL;
    json_t *any = json_array(), *want = json_object(), *defs = json_object();
    json_t *out = NULL;
    if (!any || !want || !defs) goto leave;
    if (own && json_array_append_new(any, json_deep_copy(own))) goto leave;
    const char *status;
    json_t *r;
    json_object_foreach(json_object_get(op, "responses"), status, r)
    {
        json_t *s = json_object_get(
            json_object_get(json_object_get(r, "content"), "application/json"), "schema");
        if (status[0] == '2' && s) json_array_append_new(any, json_deep_copy(s));
    }
    json_array_append_new(any, json_pack("{s:s}", "$ref", SCHEMAS "Error"));
    refs_to_defs(any, want);
    for (size_t added = 1; added;) { /* the schemas those use, until none is new */
        added = 0;
        const char *k;
        json_t *v;
        json_t *todo = json_array();
        json_object_foreach(want, k, v) if (!json_object_get(defs, k))
            json_array_append_new(todo, json_string(k));
        size_t i;
        json_array_foreach(todo, i, v)
        {
            json_t *s = json_deep_copy(json_object_get(schemas, json_string_value(v)));
            if (!s) break; /* a dangling reference: left dangling, the tests say so */
            refs_to_defs(s, want);
            json_object_set_new(defs, json_string_value(v), s);
            added++;
        }
        json_decref(todo);
    }
    out = json_pack("{s:s, s:O, s:O}", "type", "object", "anyOf", any, "$defs", defs);
leave:
    json_decref(any);
    json_decref(want);
    json_decref(defs);
    return out;
}

/* Each definition's outputSchema: derived from the operation's responses,
 * with the tool's own result form (a compact search) first. */
static bool add_output_schemas(json_t *doc)
{
    size_t len;
    const char *text = as_openapi_text(&len);
    json_t *api = json_loadb(text, len, 0, NULL);
    bool ok = api != NULL;
    size_t i;
    json_t *def;
    json_array_foreach(json_object_get(doc, "tools"), i, def)
    {
        if (!ok) break;
        json_t *own = json_object_get(def, "outputSchema");
        json_t *s = output_schema(api, json_string_value(json_object_get(def, "name")), own);
        ok = s && json_object_set_new(def, "outputSchema", s) == 0;
    }
    json_decref(api);
    return ok;
}

static void tools_parse(void)
{
    tools_doc =
        json_loadb(mcp_tools_json, sizeof(mcp_tools_json) - 1, JSON_REJECT_DUPLICATES, NULL);
    if (tools_doc && !add_output_schemas(tools_doc)) {
        json_decref(tools_doc);
        tools_doc = NULL;
    }
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
    const char *detail = json_string_value(json_object_get(args, DETAIL_ARG));
    if (t->compact && detail && strcmp(detail, "compact") != 0 && strcmp(detail, "full") != 0) {
        as_problem_set(p, 400, "VALIDATION_ERROR", DETAIL_ARG,
                       "detail must be compact (the default) or full.");
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

/* ---- the arguments as REST would read them ---- */

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

/* ---- the shop's operations ---- */

/* The arguments (checked, detail taken out) as the operation takes them;
 * the path argument and idempotency_key are taken out of args. */
static void op_args(as_mem *m, const mcp_tool *t, json_t *args, const as_request *http,
                    mcp_call *out)
{
    out->http = http;
    const char *idem = json_string_value(json_object_get(args, IDEM_ARG));
    out->key = t->idem ? (idem ? as_strdup(m, idem) : http->idempotency_key) : NULL;
    json_object_del(args, IDEM_ARG);
    const char *pv = t->path_arg ? json_string_value(json_object_get(args, t->path_arg)) : NULL;
    out->path = pv ? as_strdup(m, pv) : NULL;
    if (t->path_arg) json_object_del(args, t->path_arg);
    out->body = args;
    out->q.items = as_alloc(m, (json_object_size(args) + 1) * sizeof(*out->q.items));
    out->q.n = 0;
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v)
    {
        if (json_is_null(v)) continue;
        const char *text =
            json_is_string(v) ? as_strdup(m, json_string_value(v)) : query_text(m, v);
        out->q.items[out->q.n++] = (as_kv){as_strdup(m, key), text};
    }
}

/* A page or view as the shop encoded it. */
static void op_encoded(as_response *out, const as_read_body *b)
{
    out->status = 200;
    out->raw = b->data;
    out->raw_len = b->len;
    out->content_type = "application/json";
}

/* search_products: GET /search */
static void op_search(as_shop *shop, const mcp_call *a, as_response *out)
{
    as_read_search_in in;
    as_read_body b;
    as_problem p;
    if (!as_read_search_params(shop, &a->q, &in, &p)) {
        as_respond_problem(out, &p);
        return;
    }
    as_shop_rc rc = as_read_search(shop, &in, &b, &p);
    if (rc == AS_SHOP_DONE) {
        op_encoded(out, &b);
        return;
    }
    as_respond_outcome(out, rc, &p);
    out->retry_after = b.retry_after;
}

/* get_product: GET /products/{sku} */
static void op_product(as_shop *shop, const mcp_call *a, as_response *out)
{
    as_read_product_in in;
    as_read_body b;
    as_problem p;
    as_shop_rc rc = as_read_product_params(shop, a->path, &a->q, &in, &p)
                        ? as_read_product(shop, &in, &b, &p)
                        : AS_SHOP_REFUSED;
    if (rc == AS_SHOP_DONE)
        op_encoded(out, &b);
    else
        as_respond_outcome(out, rc, &p);
}

/* find_devices: GET /devices */
static void op_devices(as_shop *shop, const mcp_call *a, as_response *out)
{
    as_read_devices_in in;
    as_device_match *c;
    size_t k;
    as_problem p;
    as_shop_rc rc = as_read_devices_params(shop, &a->q, &in, &p)
                        ? as_read_devices(shop, &in, &c, &k)
                        : AS_SHOP_REFUSED;
    if (rc == AS_SHOP_DONE)
        as_respond_json(out, 200, as_view_device_candidates(in.q, c, k, in.limit));
    else
        as_respond_outcome(out, rc, &p);
}

/* compatible_parts: GET /devices/{slug}/compatible */
static void op_compatible(as_shop *shop, const mcp_call *a, as_response *out)
{
    as_read_compatible_in in;
    json_t *view;
    as_problem p;
    as_shop_rc rc = as_read_compatible_params(shop, a->path, &a->q, &in, &p)
                        ? as_read_compatible(shop, &in, &view, &p)
                        : AS_SHOP_REFUSED;
    if (rc == AS_SHOP_DONE)
        as_respond_json(out, 200, view);
    else
        as_respond_outcome(out, rc, &p);
}

/* ---- the agent's calls: as the /v1 handlers answer them ---- */

/* The calling agent, from the MCP request's headers; else its refusal in out. */
static bool op_agent(as_shop *shop, const mcp_call *c, as_agent *agent, as_response *out)
{
    as_problem p;
    if (as_call_agent(shop, c->http, agent, &p)) return true;
    as_respond_problem(out, &p);
    return false;
}

/* A check that said no: its refusal in out. */
static bool op_ok(bool ok, const as_problem *p, as_response *out)
{
    if (!ok) as_respond_problem(out, p);
    return ok;
}

/* The arguments as a body REST would have read: no deeper than one. */
static bool op_body_ok(const mcp_call *c, as_response *out)
{
    as_problem p;
    return op_ok(as_call_body_depth_ok(c->body, &p), &p, out);
}

/* check_compatibility: POST /compatibility/check */
static void op_fit_check(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    if (op_agent(shop, c, &agent, out) && op_body_ok(c, out))
        as_answer_fit_check(shop, c->body, out);
}

/* ask_question: POST /questions */
static void op_question(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    if (op_agent(shop, c, &agent, out) && op_body_ok(c, out))
        as_answer_question(shop, &agent, c->body, out);
}

/* get_mandate: GET /mandates/current */
static void op_mandate(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    if (op_agent(shop, c, &agent, out)) as_answer_mandate(shop, &agent, out);
}

/* create_quote: POST /quotes */
static void op_quote(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    if (op_agent(shop, c, &agent, out) && op_body_ok(c, out))
        as_answer_quote(shop, &agent, c->body, out);
}

/* create_order: POST /orders, under the same Idempotency-Key scope */
static void op_order(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    as_problem p;
    if (op_agent(shop, c, &agent, out) && op_ok(as_order_precheck(shop, c->key, &p), &p, out) &&
        op_body_ok(c, out))
        as_answer_order(shop, &agent, c->key, c->body, as_request_base(c->http), out);
}

/* get_order: GET /orders/{order_id} */
static void op_order_get(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    if (op_agent(shop, c, &agent, out)) as_answer_order_follow(shop, &agent, c->path, out);
}

/* cancel_order: POST /orders/{order_id}/cancel */
static void op_order_cancel(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    if (op_agent(shop, c, &agent, out)) as_answer_order_cancel(shop, &agent, c->path, out);
}

/* start_return: POST /returns, under the same Idempotency-Key scope */
static void op_return(as_shop *shop, const mcp_call *c, as_response *out)
{
    as_agent agent;
    as_problem p;
    if (op_agent(shop, c, &agent, out) && op_ok(as_return_precheck(shop, c->key, &p), &p, out) &&
        op_body_ok(c, out))
        as_answer_return(shop, &agent, c->key, c->body, c->http->base_url, out);
}

/* The call answered by the tool's operation. The arguments are checked,
 * detail taken out. */
static void tool_answer(as_shop *shop, const mcp_tool *t, json_t *args, const as_request *http,
                        as_response *resp)
{
    mcp_call c;
    op_args(shop->mem, t, args, http, &c);
    t->op(shop, &c, resp);
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

/* The 2025-03-26 revision has no structuredContent: its clients (and a
 * request without MCP-Protocol-Version, taken as that revision) get the JSON
 * as text. Later ones get a summary there, and the data once. */
static bool json_as_text(const char *version)
{
    return !version || strcmp(version, "2025-03-26") == 0;
}

/* A CallToolResult from a REST response: the body as structuredContent (the
 * compact form of a search unless full), and as text either the same JSON or
 * a summary (json_as_text); isError for 4xx and 5xx; the status in _meta.
 * Takes the body out of resp. */
static json_t *tool_result(as_shop *shop, const mcp_tool *t, const as_request *http,
                           as_response *resp, bool compact)
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
    json_t *small = compact && resp->status < 300 ? as_mcp_search_compact(body) : NULL;
    if (small) {
        json_decref(body);
        body = small;
    }
    char *text = json_as_text(http->mcp_protocol_version)
                     ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(12))
                     : strdup(as_mcp_summary(shop->mem, t->name, resp->status, body));
    json_t *content = json_array();
    json_array_append_new(content, text_item(text ? text : "{}"));
    free(text);
    const char *code = json_string_value(json_object_get(body, "error"));
    const char *note = resp->status == 202 && code && strcmp(code, "CONFIRMATION_REQUIRED") == 0
                           ? confirmation_note(shop->mem, body)
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

json_t *as_mcp_tool_call(as_shop *shop, const as_request *http, const char *name, json_t *args,
                         int *rpc_code, const char **rpc_message)
{
    as_mem *m = shop->mem;
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
    const char *detail = json_string_value(json_object_get(args, DETAIL_ARG));
    bool full = detail && strcmp(detail, "full") == 0;
    json_t *a = args ? json_deep_copy(args) : json_object();
    as_response resp = {0};
    as_problem p;
    if (!a) {
        as_respond_error(&resp, 500, "INTERNAL_ERROR", NULL, "Out of memory.");
    } else if (!check_args(m, t, schema, a, http, &p)) {
        as_respond_problem(&resp, &p);
    } else {
        json_object_del(a, DETAIL_ARG);
        tool_answer(shop, t, a, http, &resp);
    }
    json_decref(a);
    as_log(shop, AS_LOG_DEBUG, "mcp: %s -> %d", t->name, resp.status);
    json_t *result = tool_result(shop, t, http, &resp, t->compact && !full);
    as_response_clear(&resp);
    return result;
}
