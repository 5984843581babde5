/* Validation of query parameters against the limits of spec part 8, driven by
 * one table of rules per endpoint. Unknown and repeated parameters are refused:
 * a typo must not silently widen a purchase search. */
#ifndef AS_VALIDATE_H
#define AS_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "as_mem.h"
#include "as_rank.h"
#include "as_util.h"

typedef enum {
    AS_V_TEXT,     /* UTF-8 text, min..max characters */
    /* AS_V_TEXT shown to a person or another agent (an order's reason, a return's
     * note, a question): no control characters (C0, DEL, C1), no bidirectional
     * formatting (U+061C, U+200E/F, U+202A-E, U+2066-9), no line or paragraph
     * separators (U+2028/9) and no byte order mark / zero width no-break space. */
    AS_V_PROSE,
    AS_V_SLUG,     /* [A-Za-z0-9._-], min..max characters (skus, ids) */
    AS_V_ENUM,     /* one of `choices` */
    AS_V_DATE,     /* yyyy-mm-dd, a real date, not before today */
    AS_V_EUR,      /* decimal euros, up to 2 decimals, > 0 -> cents */
    AS_V_BOOL,     /* true/false/1/0 */
    AS_V_INT,      /* integer min..max */
    AS_V_WEIGHTS,  /* either weights encoding */
    AS_V_POSTCODE, /* letters, digits, space, dash; max chars */
} as_vtype;

typedef struct as_param_rule {
    const char *name;
    as_vtype type;
    int64_t min, max; /* lengths for text, values for ints */
    const char *const *choices;
} as_param_rule;

typedef struct as_param {
    bool present;
    const char *str; /* the decoded value */
    int64_t num;     /* INT, EUR (cents), DATE (day), BOOL (0/1) */
    as_weights weights;
} as_param;

typedef struct as_problem {
    int status;
    const char *code, *field, *message;
} as_problem;

/* Fills vals[i] for rules[i]; false with *p set on the first bad parameter. */
bool as_validate_query(as_mem *m, const as_param_rule *rules, size_t n, const as_query *q,
                       int64_t today, as_param *vals, as_problem *p);
/* One value against one rule (used for path parameters and body fields too). */
bool as_validate_value(as_mem *m, const as_param_rule *rule, const char *v, int64_t today,
                       as_param *out, as_problem *p);

/* JSON bodies: an object whose fields follow `rules` (strings for text rules,
 * integers for AS_V_INT, an object or null for AS_V_WEIGHTS). Unknown fields,
 * wrong JSON types and missing required fields are 400 with `field`. */
typedef struct as_field_rule {
    as_param_rule rule;
    bool required;
} as_field_rule;

bool as_validate_body(as_mem *m, const as_field_rule *rules, size_t n, const json_t *obj,
                      int64_t today, as_param *vals, as_problem *p);

/* Paging of a list (search, a device's compatible parts): limit 1 to
 * AS_PAGE_LIMIT_MAX, offset 0 up, and offset + limit at most AS_PAGE_WINDOW,
 * so that no page costs the ranking of a whole catalogue to reach
 * (docs/api.md, "Paging"). */
#define AS_PAGE_LIMIT_MAX 100
#define AS_PAGE_WINDOW 1000
#define AS_PAGE_LIMIT_DEFAULT 20

typedef struct as_page {
    int64_t limit, offset;
} as_page;

/* The page that limit and offset (validated by their rules: AS_V_INT) ask
 * for, with the defaults for those absent; false with *p set (field
 * `offset`) when offset + limit passes AS_PAGE_WINDOW. */
bool as_validate_page(as_mem *m, const as_param *limit, const as_param *offset, as_page *out,
                      as_problem *p);

/* The weights a weights parameter gave, or the defaults when it was absent. */
as_weights as_param_weights(const as_param *v);

void as_problem_set(as_problem *p, int status, const char *code, const char *field,
                    const char *message);

extern const char *const as_category_ids[];
extern const char *const as_part_type_ids[];
extern const char *const as_sort_choices[];

/* "an object", "a string", "a number with a fraction"...: for messages. */
const char *as_json_type_name(const json_t *v);

#endif
