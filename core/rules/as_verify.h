/* Claimed versus measured (spec 2.3): one row per specification. */
#ifndef AS_VERIFY_H
#define AS_VERIFY_H

#include <jansson.h>
#include <stdbool.h>

#include "as_catalog.h"
#include "as_mem.h"

typedef struct as_row_eval {
    bool unclaimed, measured, ok;
    const char *delta, *detail; /* texts of the view row */
    bool numeric;               /* claimed and measured are both numbers */
    double claimed_num, measured_num, delta_num, delta_pct;
} as_row_eval;

/* product_measured: the product has a measurement at all (else "not measured"). */
void as_spec_eval(as_mem *m, const as_spec_row *row, bool product_measured, as_row_eval *out);

/* Pending, verified or contradicted, with the first contradiction in words. */
as_verif as_verification_status(as_mem *m, const as_spec_row *rows, size_t n, bool product_measured,
                                const char **note);

/* A number as a person writes it: 500, 4.5, 0.25. */
const char *as_num_text(as_mem *m, double v);
/* A JSON value (text) as a person reads it: true, "foam", a, b; NULL -> "none". */
const char *as_json_text(as_mem *m, const char *json);

#endif
