/* What every unit test shares: a per-test arena fixture, a JSON body as a
 * client reads it, and table-row checks that report every failing row before
 * failing the test. This header includes cmocka itself. */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>

#include "as_api.h"
#include "as_help_view.h" /* what the tests use beyond the router */
#include "as_http.h"
#include "as_mem.h"

/* One arena per test: setup creates it, teardown frees everything at once. */
typedef struct unit_fx {
    as_arena *arena;
    as_mem mem;
    struct {
        void (*fn)(void *);
        void *arg;
    } release[16]; /* run at teardown, before the arena goes */
    size_t n_release;
} unit_fx;

static inline int unit_setup(void **state)
{
    unit_fx *fx = calloc(1, sizeof(*fx));
    if (!fx) return -1;
    fx->arena = as_arena_create();
    fx->mem = as_arena_mem(fx->arena);
    *state = fx;
    return 0;
}

static inline int unit_teardown(void **state)
{
    unit_fx *fx = *state;
    if (fx) {
        while (fx->n_release) {
            fx->n_release--;
            fx->release[fx->n_release].fn(fx->release[fx->n_release].arg);
        }
        as_arena_destroy(fx->arena);
        free(fx);
    }
    *state = NULL;
    return 0;
}

static inline as_mem *unit_mem(void **state)
{
    return &((unit_fx *)*state)->mem;
}

/* Something the test's results point into (a search snapshot), released at
 * teardown, last registered first. */
static inline void unit_release_at_teardown(void **state, void (*fn)(void *), void *arg)
{
    unit_fx *fx = *state;
    assert_true(fx->n_release < sizeof(fx->release) / sizeof(fx->release[0]));
    fx->release[fx->n_release].fn = fn;
    fx->release[fx->n_release].arg = arg;
    fx->n_release++;
}

#define UNIT_TEST(f) cmocka_unit_test_setup_teardown(f, unit_setup, unit_teardown)

/* A JSON body sent ready-made (raw, as the product view is) decoded into
 * body, as a client reads it; bodies built as jansson values stay as they are. */
static inline void unit_json_body(as_response *resp)
{
    if (resp->body || !resp->raw || !resp->content_type ||
        strcmp(resp->content_type, "application/json") != 0)
        return;
    resp->body = json_loadb(resp->raw, resp->raw_len, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(resp->body);
}

/* Table rows: CHECK records a failure with the row's label and carries on, so
 * one run shows every bad row; ROWS_DONE fails the test if any row failed. */
static inline const char *unit_label(const char *label)
{
    return label ? label : "(null)";
}

#define ROWS_BEGIN int unit_failures_ = 0
#define CHECK(label, cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            print_error("%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__, unit_label(label),   \
                        #cond);                                                                    \
            unit_failures_++;                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK_STR(label, got, want)                                                                \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (!g_ || !w_ || strcmp(g_, w_) != 0) {                                                   \
            print_error("%s:%d: [%s] %s: got \"%s\", want \"%s\"\n", __FILE__, __LINE__,           \
                        unit_label(label), #got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");          \
            unit_failures_++;                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK_INT(label, got, want)                                                                \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (g_ != w_) {                                                                            \
            print_error("%s:%d: [%s] %s: got %lld, want %lld\n", __FILE__, __LINE__,               \
                        unit_label(label), #got, g_, w_);                                          \
            unit_failures_++;                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK_NEAR(label, got, want, eps)                                                          \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(g_ - w_ <= (eps) && w_ - g_ <= (eps))) {                                             \
            print_error("%s:%d: [%s] %s: got %.10g, want %.10g\n", __FILE__, __LINE__,             \
                        unit_label(label), #got, g_, w_);                                          \
            unit_failures_++;                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK_CONTAINS(label, hay, needle)                                                         \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (!h_ || !strstr(h_, n_)) {                                                              \
            print_error("%s:%d: [%s] %s: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,    \
                        unit_label(label), #hay, h_ ? h_ : "(null)", n_);                          \
            unit_failures_++;                                                                      \
        }                                                                                          \
    } while (0)
#define ROWS_DONE() assert_int_equal(unit_failures_, 0)

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

#endif
