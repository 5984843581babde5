/* Checks shared by fuzz_query.c and fuzz_body.c: what a validated value must
 * satisfy, and that a refusal becomes a JSON error object; FAIL and CHECK for
 * every harness's own invariants (the fake store has FAKE_ASSERT). */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "as_api.h"
#include "as_mem.h"
#include "as_rank.h"
#include "as_util.h"
#include "as_validate.h"

#define TODAY 20514 /* 2026-03-02 */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "fuzz invariant violated: ");                                              \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        abort();                                                                                   \
    } while (0)
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) FAIL(__VA_ARGS__);                                                            \
    } while (0)

#define N(a) (sizeof(a) / sizeof((a)[0]))

static inline bool utf8_ok(const char *s)
{
    return s && as_utf8_valid(s, strlen(s));
}

static inline void check_weights(const as_weights *w, const char *what)
{
    double sum = 0;
    for (int i = 0; i < AS_W_N; i++) {
        CHECK(w->w[i] >= 0 && w->w[i] <= 1, "%s: weight %d = %g", what, i, w->w[i]);
        sum += w->w[i];
    }
    CHECK(fabs(sum - 1) < 1e-9, "%s: weights sum to %.17g", what, sum);
}

/* An error message becomes the JSON error object through as_respond_error:
 * that object must exist and carry string error and message (jansson refuses
 * strings that are not UTF-8; the glue then answers 500 instead). */
static inline void check_error_json(const char *code, const char *field, const char *message,
                                    const char *what)
{
    as_response r;
    memset(&r, 0, sizeof(r));
    as_respond_error(&r, 400, code, field, message);
    CHECK(json_is_object(r.body), "%s: no JSON error object for message: %s", what, message);
    CHECK(json_is_string(json_object_get(r.body, "error")) &&
              json_is_string(json_object_get(r.body, "message")),
          "%s: error object without error/message", what);
    char *s = json_dumps(r.body, JSON_COMPACT);
    CHECK(s != NULL, "%s: error object cannot be encoded", what);
    free(s);
    as_response_clear(&r);
}

static inline void check_problem(const as_problem *p, const char *what)
{
    CHECK(p->status == 400, "%s: status %d", what, p->status);
    CHECK(p->code && strcmp(p->code, "VALIDATION_ERROR") == 0, "%s: code", what);
    CHECK(p->field && p->message, "%s: no field or message", what);
    /* UTF-8 text always packs; the rest must be repaired or refused cleanly */
    if (!utf8_ok(p->field) || !utf8_ok(p->message))
        check_error_json(p->code, p->field, p->message, what);
}

static inline void check_value(as_mem *m, const as_param_rule *r, const as_param *v)
{
    CHECK(v->str && utf8_ok(v->str), "%s: value not UTF-8", r->name);
    size_t len = as_utf8_len(v->str);
    switch (r->type) {
    case AS_V_TEXT:
    case AS_V_PROSE:
    case AS_V_SLUG:
    case AS_V_POSTCODE:
    case AS_V_ENUM:
        CHECK((int64_t)len >= r->min && (int64_t)len <= r->max, "%s: length %zu", r->name, len);
        if (r->type == AS_V_SLUG)
            CHECK(strspn(v->str,
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                      strlen(v->str),
                  "%s: slug '%s'", r->name, v->str);
        if (r->type == AS_V_ENUM) {
            bool found = false;
            for (size_t i = 0; r->choices[i]; i++)
                if (strcmp(r->choices[i], v->str) == 0) found = true;
            CHECK(found, "%s: '%s' is no choice", r->name, v->str);
        }
        break;
    case AS_V_DATE:
        CHECK(v->num >= TODAY, "%s: date %lld in the past", r->name, (long long)v->num);
        CHECK(strcmp(as_date_format(m, v->num), v->str) == 0, "%s: '%s' reads as %s", r->name,
              v->str, as_date_format(m, v->num));
        break;
    case AS_V_EUR:
        CHECK(v->num > 0 && v->num <= r->max, "%s: %lld cents", r->name, (long long)v->num);
        break;
    case AS_V_BOOL:
        CHECK(v->num == 0 || v->num == 1, "%s: bool %lld", r->name, (long long)v->num);
        break;
    case AS_V_INT:
        CHECK(v->num >= r->min && v->num <= r->max, "%s: %lld", r->name, (long long)v->num);
        break;
    case AS_V_WEIGHTS:
        check_weights(&v->weights, r->name);
        break;
    }
}

#endif
