/* Golden request files (t/unit/golden/README.md): each directory under
 * t/unit/golden is one case, a numbered sequence of requests run through
 * as_handle, each compared, as JSON, with the response it expects. Each case
 * has the fake store with its buying tables (fake_shop.h) to itself: the
 * catalogue of fake_store.h plus keys, mandates, quotes, orders,
 * confirmations, Idempotency-Key records and returns, kept in memory for the
 * length of the case.
 *
 * GOLDEN_UPDATE=1 rewrites the expected files from the responses (captured
 * values turned back into their placeholders); for writing a case, never in CI. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include "api_fixture.h"
#include "fake_shop.h"

#include "as_crypto.h"
#include "as_util.h"

/* The clock every case starts at (noon of API_TODAY, 2026-01-15), the API's
 * base URL and the signing key of the confirmation and label links. */
#define G_START ((int64_t)API_TODAY * 86400 + 12 * 3600)
#define G_BASE "https://shop.example/v1"

static const unsigned char g_signing_key[] = "golden-signing-key-0123456789abcdef";

/* ------------------------------------------------------------------ */
/* Placeholders: {{name}} captures, {{*}} matches anything             */
/* ------------------------------------------------------------------ */

#define G_CAPS 64

typedef struct g_case {
    const char *dir;
    fake_shop store;
    as_store s;
    as_config cfg;
    as_shop shop;
    struct {
        const char *name, *value;
    } caps[G_CAPS];
    size_t n_caps;
    as_buf why; /* what did not match, one line each */
} g_case;

static const char *g_cap(const g_case *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->n_caps; i++)
        if (strlen(c->caps[i].name) == len && strncmp(c->caps[i].name, name, len) == 0)
            return c->caps[i].value;
    return NULL;
}

/* Whether s matches the pattern pat; binds the names it captures (a name
 * bound before must match its value again). Backtracks on failure. */
static bool g_match_text(g_case *c, const char *pat, const char *s)
{
    const char *open = strstr(pat, "{{");
    if (!open) return strcmp(pat, s) == 0;
    size_t lit = (size_t)(open - pat);
    if (strncmp(pat, s, lit) != 0) return false;
    s += lit;
    const char *close = strstr(open, "}}");
    assert_non_null(close); /* a placeholder is closed in the same string */
    const char *name = open + 2, *rest = close + 2;
    size_t len = (size_t)(close - name);
    const char *bound = g_cap(c, name, len);
    if (bound)
        return strncmp(s, bound, strlen(bound)) == 0 && g_match_text(c, rest, s + strlen(bound));
    bool any = len == 1 && *name == '*';
    for (size_t k = 1; k <= strlen(s); k++) {
        if (any) {
            if (g_match_text(c, rest, s + k)) return true;
            continue;
        }
        assert_true(c->n_caps < G_CAPS);
        size_t n = c->n_caps++;
        c->caps[n].name = as_strndup(&c->store.mem, name, len);
        c->caps[n].value = as_strndup(&c->store.mem, s, k);
        if (g_match_text(c, rest, s + k)) return true;
        c->n_caps = n;
    }
    return false;
}

/* A copy of v with each member and element given by f (and a value that is
 * neither an object nor an array copied as it is). */
typedef json_t *(*g_leaf_fn)(g_case *c, const json_t *v, const char *file);
static json_t *g_map(g_case *c, const json_t *v, g_leaf_fn f, const char *file)
{
    json_t *out = json_is_object(v) ? json_object() : json_is_array(v) ? json_array() : NULL;
    if (!out) return json_deep_copy(v);
    const char *k;
    json_t *e;
    size_t i;
    if (json_is_object(v))
        json_object_foreach((json_t *)v, k, e) json_object_set_new(out, k, f(c, e, file));
    else
        json_array_foreach(v, i, e) json_array_append_new(out, f(c, e, file));
    return out;
}

/* A copy of v with every {{name}} in its strings replaced by its value. */
static json_t *g_substitute(g_case *c, const json_t *v, const char *file)
{
    if (json_is_string(v)) {
        as_buf b;
        as_buf_init(&b, &c->store.mem);
        const char *s = json_string_value(v), *open;
        while ((open = strstr(s, "{{")) != NULL) {
            const char *close = strstr(open, "}}");
            const char *val = close ? g_cap(c, open + 2, (size_t)(close - open - 2)) : NULL;
            if (!val) fail_msg("%s: %s has no value yet (nothing captured it)", file, open);
            as_buf_add(&b, s, (size_t)(open - s));
            as_buf_puts(&b, val);
            s = close + 2;
        }
        as_buf_puts(&b, s);
        return json_string(as_buf_str(&b));
    }
    return g_map(c, v, g_substitute, file);
}

/* Expected against actual, as JSON; each difference a line in c->why. */
static void g_compare(g_case *c, const json_t *exp, const json_t *act, const char *at)
{
    as_mem *m = &c->store.mem;
    if (json_is_string(exp) && json_is_string(act)) {
        if (!g_match_text(c, json_string_value(exp), json_string_value(act)))
            as_buf_printf(&c->why, "  %s: expected \"%s\", got \"%s\"\n", at,
                          json_string_value(exp), json_string_value(act));
        return;
    }
    if (json_is_object(exp) && json_is_object(act)) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)exp, k, e)
        {
            json_t *a = json_object_get(act, k);
            const char *sub = as_printf(m, "%s.%s", at, k);
            if (!a)
                as_buf_printf(&c->why, "  %s: missing\n", sub);
            else
                g_compare(c, e, a, sub);
        }
        json_object_foreach((json_t *)act, k, e) if (!json_object_get(exp, k))
            as_buf_printf(&c->why, "  %s.%s: not expected\n", at, k);
        return;
    }
    if (json_is_array(exp) && json_is_array(act) && json_array_size(exp) == json_array_size(act)) {
        for (size_t i = 0; i < json_array_size(exp); i++)
            g_compare(c, json_array_get(exp, i), json_array_get(act, i),
                      as_printf(m, "%s[%zu]", at, i));
        return;
    }
    if (!json_equal((json_t *)exp, (json_t *)act)) {
        char *e = json_dumps(exp, JSON_COMPACT | JSON_ENCODE_ANY),
             *a = json_dumps(act, JSON_COMPACT | JSON_ENCODE_ANY);
        as_buf_printf(&c->why, "  %s: expected %s, got %s\n", at, e ? e : "(none)",
                      a ? a : "(none)");
        free(e);
        free(a);
    }
}

/* For GOLDEN_UPDATE: the captured values in v's strings turned back into
 * their placeholders, longest value first. */
static json_t *g_placeholders(g_case *c, const json_t *v, const char *unused)
{
    (void)unused;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        for (bool again = true; again;) {
            again = false;
            size_t best = c->n_caps;
            for (size_t i = 0; i < c->n_caps; i++)
                if (strstr(s, c->caps[i].value) &&
                    (best == c->n_caps || strlen(c->caps[i].value) > strlen(c->caps[best].value)))
                    best = i;
            if (best == c->n_caps) break;
            const char *at = strstr(s, c->caps[best].value);
            s = as_printf(&c->store.mem, "%.*s{{%s}}%s", (int)(at - s), s, c->caps[best].name,
                          at + strlen(c->caps[best].value));
            again = true;
        }
        return json_string(s);
    }
    return g_map(c, v, g_placeholders, NULL);
}

/* ------------------------------------------------------------------ */
/* Steps: a request file in, its expected file out                     */
/* ------------------------------------------------------------------ */

static json_t *g_load(const char *path)
{
    json_error_t e;
    json_t *v = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!v) fail_msg("%s:%d: %s", path, e.line, e.text);
    return v;
}

static const char *g_header(const json_t *headers, const char *name)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)headers, k,
                        v) if (strcasecmp(k, name) == 0) return json_string_value(v);
    return NULL;
}

/* The request file as core's request (valid while r is); the clock moved on
 * first by its "advance" seconds. */
static void g_request(g_case *c, const json_t *r, const char *file, as_request *req)
{
    as_mem *m = &c->store.mem;
    const json_t *h = json_object_get(r, "headers");
    const char *path = json_string_value(json_object_get(r, "path"));
    if (!json_is_string(json_object_get(r, "method")) || !path)
        fail_msg("%s: a request needs a method and a path", file);
    const char *q = strchr(path, '?');
    *req = (as_request){
        .method = json_string_value(json_object_get(r, "method")),
        .path = q ? as_strndup(m, path, (size_t)(q - path)) : path,
        .query = q ? q + 1 : NULL,
        .content_type = g_header(h, "Content-Type"),
        .accept = g_header(h, "Accept"),
        .authorization = g_header(h, "Authorization"),
        .service_agent = g_header(h, "Service-Agent"),
        .idempotency_key = g_header(h, "Idempotency-Key"),
        .base_url = G_BASE,
    };
    const json_t *body = json_object_get(r, "body");
    if (json_is_string(body)) { /* sent as it is: a form, or text that is not JSON */
        req->body = json_string_value(body);
    } else if (body) {
        char *s = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        req->body = as_strdup(m, s);
        free(s);
    }
    req->body_len = req->body ? strlen(req->body) : 0;
    c->shop.now += json_integer_value(json_object_get(r, "advance"));
}

/* "in_flight": KEY leaves that Idempotency-Key's record, for this request
 * only, as a claim still in flight (a lease of 30 s from now): what the
 * first request holds while it is being processed. Returns the record to put
 * back after the request, or NULL. */
static fake_shop_idem *g_hold_in_flight(g_case *c, const json_t *r, const char *file,
                                        as_idem *saved)
{
    const char *key = json_string_value(json_object_get(r, "in_flight"));
    if (!key) return NULL;
    for (size_t i = 0; i < c->store.t.n_idem; i++) {
        fake_shop_idem *rec = &c->store.t.idem[i];
        if (strcmp(rec->key, key) != 0) continue;
        *saved = rec->rec;
        rec->rec = (as_idem){.request_hash = saved->request_hash,
                             .state = AS_IDEM_IN_FLIGHT,
                             .created_at = c->shop.now,
                             .lease_until = c->shop.now + 30};
        return rec;
    }
    fail_msg("%s: no Idempotency-Key record '%s' to hold in flight", file, key);
    return NULL;
}

/* "withdraw": OFFER withdraws that offer before the request, as the
 * catalogue feed does (stock 0, never sold again). */
static void g_withdraw(g_case *c, const json_t *r, const char *file)
{
    const char *offer = json_string_value(json_object_get(r, "withdraw"));
    if (offer && !fake_live_withdraw(&c->store.db, offer))
        fail_msg("%s: no offer '%s' to withdraw", file, offer);
}

/* The response as the expected files write it: status, the headers that
 * carry meaning (absent when not sent) and the JSON body. */
static json_t *g_response(const as_response *resp)
{
    json_t *h = json_object();
    if (resp->location) json_object_set_new(h, "Location", json_string(resp->location));
    if (resp->replayed) json_object_set_new(h, "Idempotent-Replayed", json_string("true"));
    if (resp->retry_after)
        json_object_set_new(h, "Retry-After", json_sprintf("%d", resp->retry_after));
    if (resp->allow) json_object_set_new(h, "Allow", json_string(resp->allow));
    json_t *out = json_pack("{s:i}", "status", resp->status);
    if (json_object_size(h))
        json_object_set_new(out, "headers", h);
    else
        json_decref(h);
    json_object_set_new(out, "body", resp->body ? json_incref(resp->body) : json_null());
    return out;
}

static bool g_updating(void)
{
    const char *u = getenv("GOLDEN_UPDATE");
    return u && strcmp(u, "1") == 0;
}

static void g_write(const char *path, const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(AS_JSON_PRECISION));
    FILE *f = fopen(path, "w");
    if (!f || !s || fprintf(f, "%s\n", s) < 0 || fclose(f) != 0)
        fail_msg("%s: cannot write: %s", path, strerror(errno));
    free(s);
}

/* One request file through as_handle; false when the response differs. */
static bool g_step(g_case *c, const char *name)
{
    as_mem *m = &c->store.mem;
    const char *dir = c->dir;
    size_t stem = strlen(name) - strlen(".request.json");
    const char *req_file = as_printf(m, "%s/%s", dir, name);
    const char *exp_file = as_printf(m, "%s/%.*s.expected.json", dir, (int)stem, name);
    json_t *raw = g_load(req_file);
    json_t *r = g_substitute(c, raw, req_file);
    json_decref(raw);
    as_request req;
    g_request(c, r, req_file, &req);
    as_idem saved;
    fake_shop_idem *held = g_hold_in_flight(c, r, req_file, &saved);
    g_withdraw(c, r, req_file);

    as_arena *a = as_arena_create();
    as_mem rm = as_arena_mem(a);
    c->shop.mem = &rm;
    as_response resp;
    as_handle(&c->shop, &req, &resp);
    if (held) held->rec = saved;
    /* no transaction left open, no unit of stock created or lost, a released
     * order holding no budget (abort()s naming what broke) */
    fake_shop_check_end(&c->store);
    unit_json_body(&resp);
    json_t *got = g_response(&resp);
    as_response_clear(&resp);
    as_arena_destroy(a);
    json_decref(r);

    bool ok = true;
    FILE *f = fopen(exp_file, "r");
    json_t *exp = f ? g_load(exp_file) : NULL;
    if (f) fclose(f);
    as_buf_init(&c->why, m);
    if (exp) g_compare(c, exp, got, "response");
    if (g_updating()) {
        json_t *fresh = g_placeholders(c, got, NULL);
        g_write(exp_file, fresh);
        json_decref(fresh);
    } else if (!exp) {
        print_error("%s: missing (GOLDEN_UPDATE=1 writes it)\n", exp_file);
        ok = false;
    } else if (c->why.len) {
        char *body = json_dumps(got, JSON_INDENT(2));
        print_error("%s differs:\n%sThe response was:\n%s\n", exp_file, as_buf_str(&c->why), body);
        free(body);
        ok = false;
    }
    json_decref(exp);
    json_decref(got);
    return ok;
}

static int g_is_request(const struct dirent *e)
{
    size_t n = strlen(e->d_name), k = strlen(".request.json");
    return n > k && strcmp(e->d_name + n - k, ".request.json") == 0;
}

/* case.json (optional): {"approval_link": true} turns on approval by the
 * signed link alone (AgentShopApproval link). */
static void g_case_config(g_case *c)
{
    const char *path = as_printf(&c->store.mem, "%s/case.json", c->dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    fclose(f);
    json_t *v = g_load(path);
    c->cfg.approval_link = json_is_true(json_object_get(v, "approval_link"));
    json_decref(v);
}

static void test_golden_case(void **state)
{
    g_case *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->dir = *state;
    fake_shop_init(&c->store);
    c->s = fake_shop_store(&c->store);
    as_config_defaults(&c->cfg);
    c->cfg.signing_key = g_signing_key;
    c->cfg.signing_key_len = sizeof(g_signing_key) - 1;
    g_case_config(c);
    c->shop = (as_shop){.store = &c->s, .cfg = &c->cfg, .now = G_START};
    struct dirent **steps;
    int n = scandir(c->dir, &steps, g_is_request, alphasort);
    if (n <= 0) fail_msg("%s: no request files", c->dir);
    bool ok = true;
    for (int i = 0; i < n; i++) {
        if (ok) ok = g_step(c, steps[i]->d_name);
        free(steps[i]);
    }
    free(steps);
    assert_false(c->store.in_tx); /* every request closed its transaction */
    fake_shop_free(&c->store);
    free(c);
    if (!ok) fail();
}

static const char *g_root; /* the directory of cases */

static int g_is_case(const struct dirent *e)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", g_root, e->d_name);
    return e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(void)
{
    /* the cases beside this file; make runs the tests from the top directory */
    const char *root = g_root = getenv("GOLDEN_DIR") ? getenv("GOLDEN_DIR") : "t/unit/golden";
    struct dirent **cases;
    int n = scandir(root, &cases, g_is_case, alphasort);
    if (n <= 0) {
        fprintf(stderr, "[  ERROR   ] no golden cases in %s\n", root);
        return 1;
    }
    struct CMUnitTest *tests = calloc((size_t)n, sizeof(*tests));
    assert_non_null(tests);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(root) + strlen(cases[i]->d_name) + 2;
        char *dir = malloc(len);
        assert_non_null(dir);
        snprintf(dir, len, "%s/%s", root, cases[i]->d_name);
        tests[i] = (struct CMUnitTest){cases[i]->d_name, test_golden_case, NULL, NULL, dir};
    }
    int failed = _cmocka_run_group_tests("golden", tests, (size_t)n, NULL, NULL);
    for (int i = 0; i < n; i++) {
        free(tests[i].initial_state);
        free(cases[i]);
    }
    free(tests);
    free(cases);
    return failed;
}
