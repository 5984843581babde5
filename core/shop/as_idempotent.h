/* Idempotent execution (docs/buying.md, "Retries"): one transaction claims an
 * Idempotency-Key, runs the work and remembers its answer, so that a retry
 * with the key gets the first answer again. The answer is protocol-neutral (a
 * status and a JSON body): any binding can keep and replay its own. */
#ifndef AS_IDEMPOTENT_H
#define AS_IDEMPOTENT_H

#include <jansson.h>

#include "as_shop.h"

typedef struct as_answer {
    int status;      /* the binding's status (HTTP's for /v1) */
    json_t *body;    /* a reference the caller owns */
    bool replayed;   /* the answer of an earlier request with the key */
    int retry_after; /* with 409 IDEMPOTENCY_KEY_IN_USE: seconds to wait */
} as_answer;

/* The work, inside the transaction: AS_OK with *answer set (a success or a
 * refusal, to remember; answer->body a new reference), or AS_EDB to roll
 * back. */
typedef int (*as_idem_work)(void *job, as_answer *answer);

/* In one transaction: claims (user_id, scope, key) for a request whose body
 * hashes to `hash`, runs work and remembers its answer under the key. DONE:
 * *answer is the work's, or (replayed) the first answer given again. REFUSED:
 * 422 IDEMPOTENCY_KEY_REUSED (another body), 409 IDEMPOTENCY_KEY_IN_USE
 * (still in flight; answer->retry_after). FAILED: everything, the claim
 * included, was rolled back (a retry runs again). */
as_shop_rc as_idempotent_run(as_shop *shop, const char *user_id, const char *scope, const char *key,
                             const char *hash, as_idem_work work, void *job, as_answer *answer,
                             as_problem *why);

#endif
