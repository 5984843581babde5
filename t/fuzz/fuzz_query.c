/* libFuzzer harness: query strings. The input (a NUL-terminated copy) goes
 * through as_query_parse, then as_validate_query with GET /search's rules and
 * with a table of the path parameters' rules, and through as_weights_parse
 * (both encodings: "price:0.5,delivery:0.2" and a JSON object) as a whole and
 * value by value.
 *
 * Invariants (abort() when broken): parsed keys and values are valid UTF-8
 * without NUL; a validated value obeys its rule; a refusal is a 400
 * VALIDATION_ERROR naming a field whose message as_respond_error turns into a
 * JSON error object (jansson refuses strings that are not UTF-8, and the glue
 * then answers 500); parsed weights are each 0..1 and sum to 1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "as_mem.h"
#include "as_rank.h"
#include "as_util.h"
#include "as_validate.h"
#include "fuzz_check.h"

#define MAX_PRICE_CENTS 100000000

/* GET /search (as_catalog_api.c). */
static const as_param_rule search_rules[] = {
    {"q", AS_V_TEXT, 0, 200, NULL},
    {"device", AS_V_TEXT, 1, 100, NULL},
    {"category", AS_V_ENUM, 1, 50, as_category_ids},
    {"part_type", AS_V_ENUM, 1, 50, as_part_type_ids},
    {"max_price", AS_V_EUR, 0, MAX_PRICE_CENTS, NULL},
    {"deliver_by", AS_V_DATE, 0, 0, NULL},
    {"verified_only", AS_V_BOOL, 0, 0, NULL},
    {"merchant", AS_V_TEXT, 1, 50, NULL},
    {"postcode", AS_V_POSTCODE, 1, 12, NULL},
    {"sort", AS_V_ENUM, 1, 20, as_sort_choices},
    {"weights", AS_V_WEIGHTS, 0, 0, NULL},
    {"limit", AS_V_INT, 1, 100, NULL},
    {"offset", AS_V_INT, 0, 100000, NULL},
};

/* Path parameters and the confirmation link's token. */
static const as_param_rule path_rules[] = {
    {"sku", AS_V_SLUG, 3, 20, NULL},
    {"slug", AS_V_TEXT, 1, 100, NULL},
    {"token", AS_V_TEXT, 8, 200, NULL},
};

static void validate(as_mem *m, const as_param_rule *rules, size_t n, const as_query *q)
{
    as_param vals[16];
    as_problem prob = {0};
    if (as_validate_query(m, rules, n, q, TODAY, vals, &prob)) {
        for (size_t i = 0; i < n; i++) {
            bool given = as_query_get(q, rules[i].name) != NULL;
            CHECK(vals[i].present == given, "%s: present %d, given %d", rules[i].name,
                  vals[i].present, given);
            if (vals[i].present) check_value(m, &rules[i], &vals[i]);
            if (rules[i].type == AS_V_WEIGHTS) {
                as_weights w = as_param_weights(&vals[i]);
                check_weights(&w, "as_param_weights");
            }
        }
    } else {
        check_problem(&prob, "as_validate_query");
    }
}

/* A refusal names the problem in a message that must become a JSON error. */
static void weights(as_mem *m, const char *s)
{
    as_weights w;
    const char *err = NULL;
    if (as_weights_parse(m, s, &w, &err))
        check_weights(&w, "as_weights_parse");
    else if (utf8_ok(s) && !utf8_ok(err)) /* core passes UTF-8 (query values are) */
        check_error_json("VALIDATION_ERROR", "weights", err, "as_weights_parse");
    else
        CHECK(err != NULL, "as_weights_parse: no error");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *raw = malloc(size + 1);
    if (!raw) abort();
    memcpy(raw, data, size);
    raw[size] = '\0';

    as_arena *arena = as_arena_create();
    as_mem m = as_arena_mem(arena);

    weights(&m, raw);

    as_query q;
    const char *bad = NULL;
    if (as_query_parse(&m, raw, &q, &bad)) {
        size_t amps = 1;
        for (const char *p = raw; *p; p++)
            amps += *p == '&';
        CHECK(q.n <= amps, "%zu items from %zu pieces", q.n, amps);
        for (size_t i = 0; i < q.n; i++) {
            CHECK(utf8_ok(q.items[i].key) && utf8_ok(q.items[i].val), "item %zu not UTF-8", i);
            weights(&m, q.items[i].val);
        }
        validate(&m, search_rules, N(search_rules), &q);
        validate(&m, path_rules, N(path_rules), &q);
    } else {
        CHECK(utf8_ok(bad), "as_query_parse: bad key is not valid UTF-8");
    }

    as_arena_destroy(arena);
    free(raw);
    return 0;
}
