/* libFuzzer harness: JSON request bodies through as_validate_body.
 *
 * Input: one control byte, then the body.
 *   byte 0  bits 0-6 (mod 6) the rule table: 0 POST /quotes, 1 POST /orders,
 *           2 POST /returns, 3 POST /compatibility/check, 4 POST /questions,
 *           5 POST /confirmations/{id} (copies of core's static tables)
 *           bit 7 also accept a non-container top-level value (JSON_DECODE_ANY)
 *   rest    parsed with json_loadb(..., JSON_REJECT_DUPLICATES, ...) as core does.
 *
 * Invariants (abort() when broken): a valid body has every required field, and
 * each value present obeys its rule and equals what the JSON said; a refusal
 * is a 400 VALIDATION_ERROR naming a field, whose message as_respond_error
 * turns into a JSON error object. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "as_mem.h"
#include "as_validate.h"
#include "fuzz_check.h"

static const as_field_rule quote_rules[] = {
    {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    {{"quantity", AS_V_INT, 1, 10, NULL}, false},
    {{"offer_id", AS_V_SLUG, 1, 60, NULL}, false},
    {{"device", AS_V_TEXT, 1, 100, NULL}, false},
    {{"postcode", AS_V_POSTCODE, 1, 12, NULL}, false},
    {{"deliver_by", AS_V_DATE, 0, 0, NULL}, false},
    {{"weights", AS_V_WEIGHTS, 0, 0, NULL}, false},
};
static const as_field_rule order_rules[] = {
    {{"quote_id", AS_V_SLUG, 3, 40, NULL}, true},
    {{"reason", AS_V_TEXT, 20, 500, NULL}, true},
    {{"mandate_id", AS_V_SLUG, 1, 40, NULL}, false},
};
static const char *const reason_codes[] = {"wrong_item",         "does_not_fit",     "defective",
                                           "damaged_in_transit", "no_longer_needed", NULL};
static const as_field_rule return_rules[] = {
    {{"order_id", AS_V_SLUG, 3, 40, NULL}, true},
    {{"reason_code", AS_V_ENUM, 1, 40, reason_codes}, true},
    {{"note", AS_V_TEXT, 0, 400, NULL}, false},
};
static const as_field_rule check_rules[] = {
    {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    {{"device", AS_V_TEXT, 1, 100, NULL}, true},
};
static const as_field_rule question_rules[] = {
    {{"sku", AS_V_SLUG, 3, 20, NULL}, true},
    {{"question", AS_V_TEXT, 5, 400, NULL}, true},
};
static const char *const decisions[] = {"approve", "decline", NULL};
static const as_field_rule decide_rules[] = {
    {{"decision", AS_V_ENUM, 1, 10, decisions}, true},
    {{"token", AS_V_TEXT, 8, 200, NULL}, false},
};

static const struct {
    const as_field_rule *rules;
    size_t n;
} tables[] = {
    {quote_rules, N(quote_rules)},       {order_rules, N(order_rules)},
    {return_rules, N(return_rules)},     {check_rules, N(check_rules)},
    {question_rules, N(question_rules)}, {decide_rules, N(decide_rules)},
};

static void check_valid(as_mem *m, const as_field_rule *rules, size_t n, json_t *obj,
                        const as_param *vals)
{
    CHECK(json_is_object(obj), "a body that is not an object was accepted");
    for (size_t i = 0; i < n; i++) {
        const as_param_rule *r = &rules[i].rule;
        json_t *v = json_object_get(obj, r->name);
        if (rules[i].required) CHECK(vals[i].present, "required %s missing", r->name);
        if (!v || (json_is_null(v) && r->type != AS_V_WEIGHTS)) {
            CHECK(!vals[i].present, "%s present without a value", r->name);
            continue;
        }
        CHECK(vals[i].present, "%s given but not present", r->name);
        if (r->type == AS_V_INT) {
            CHECK(json_is_integer(v) && json_integer_value(v) == vals[i].num, "%s: %lld", r->name,
                  (long long)vals[i].num);
            CHECK(vals[i].num >= r->min && vals[i].num <= r->max, "%s: %lld", r->name,
                  (long long)vals[i].num);
        } else if (r->type == AS_V_WEIGHTS) {
            check_weights(&vals[i].weights, r->name);
        } else {
            CHECK(json_is_string(v) && strcmp(json_string_value(v), vals[i].str) == 0,
                  "%s: value differs from the JSON", r->name);
            check_value(m, r, &vals[i]);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const as_field_rule *rules = tables[(data[0] & 0x7f) % N(tables)].rules;
    size_t n = tables[(data[0] & 0x7f) % N(tables)].n;
    size_t flags = JSON_REJECT_DUPLICATES | ((data[0] & 0x80) ? JSON_DECODE_ANY : 0);

    json_error_t err;
    json_t *obj = json_loadb((const char *)data + 1, size - 1, flags, &err);
    if (!obj) return 0;

    as_arena *arena = as_arena_create();
    as_mem m = as_arena_mem(arena);
    as_param vals[8];
    as_problem prob = {0};
    bool ok = as_validate_body(&m, rules, n, obj, TODAY, vals, &prob);
    if (ok) check_valid(&m, rules, n, obj, vals);
    json_decref(obj);
    /* checked after json_decref: the problem must outlive the JSON, as core
     * releases the body before it answers */
    if (!ok) check_problem(&prob, "as_validate_body");
    as_arena_destroy(arena);
    return 0;
}
