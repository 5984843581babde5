#include "as_idempotent.h"

#include <stdlib.h>
#include <string.h>

#include "as_idem.h"
#include "as_json_value.h"
#include "as_store.h"

/* Answers from the record of a key claimed before: the first answer again
 * (same body), 422 (another body) or 409 (still in flight: a claim an older
 * version committed on its own, whose lease has not run out). */
static as_shop_rc idem_answer(as_shop *shop, const as_idem *ex, const char *hash, as_answer *answer,
                              as_problem *why)
{
    if (strcmp(ex->request_hash, hash) != 0) {
        *why = (as_problem){422, "IDEMPOTENCY_KEY_REUSED", "Idempotency-Key",
                            "This Idempotency-Key was used for a different request body; use a "
                            "new key for a new request."};
        return AS_SHOP_REFUSED;
    }
    if (ex->state == AS_IDEM_DONE) {
        json_t *first = as_json_parse_or(ex->response, NULL);
        if (!first) return AS_SHOP_FAILED;
        *answer = (as_answer){.status = ex->status, .body = first, .replayed = true};
        return AS_SHOP_DONE;
    }
    *why = (as_problem){409, "IDEMPOTENCY_KEY_IN_USE", "Idempotency-Key",
                        "A request with this Idempotency-Key is still being processed; retry "
                        "after a moment to get its response."};
    int64_t wait = ex->lease_until - shop->now;
    answer->retry_after = wait < 1 ? 1 : (int)wait;
    return AS_SHOP_REFUSED;
}

/* Inside the transaction: claims (user_id, scope, key) for a request whose
 * body hashes to `hash`, forgetting or taking over the record it finds when
 * the rules say so (as_idem_on_record). AS_OK: claimed; AS_ECONFLICT with the
 * record that answers in *existing; AS_EDB. */
static int claim_key(as_shop *shop, const char *user_id, const char *scope, const char *key,
                     const char *hash, as_idem *existing)
{
    const as_store *s = shop->store;
    int64_t now = shop->now, lease_until = now + AS_IDEM_LEASE;
    for (int attempt = 0; attempt < 3; attempt++) {
        int rc = as_store_idem_claim(s, shop->mem, user_id, scope, key, hash, now, lease_until,
                                     existing);
        if (rc != AS_ECONFLICT) return rc;
        switch (as_idem_on_record(existing, hash, now)) {
        case AS_IDEM_FORGET: /* then claim the key as new */
            if (as_store_idem_forget(s, user_id, scope, key, now - AS_IDEM_KEEP) != AS_OK)
                return AS_EDB;
            break;
        case AS_IDEM_TAKE_OVER:
            return as_store_idem_takeover(s, shop->mem, user_id, scope, key, hash, now, lease_until,
                                          existing);
        default:
            return AS_ECONFLICT;
        }
    }
    return AS_EDB;
}

/* A request that fails or dies leaves no claim behind, and a second request
 * with the key waits for the first (SQLite's one writer; PostgreSQL's unique
 * index) and then answers from its record. */
as_shop_rc as_idempotent_run(as_shop *shop, const char *user_id, const char *scope, const char *key,
                             const char *hash, as_idem_work work, void *job, as_answer *answer,
                             as_problem *why)
{
    const as_store *s = shop->store;
    as_idem ex;
    *answer = (as_answer){0};
    int rc = as_store_begin(s);
    if (rc == AS_OK) rc = claim_key(shop, user_id, scope, key, hash, &ex);
    if (rc == AS_ECONFLICT) {
        /* Nothing was written, but the record answered may be a commit of
         * another request not yet on disk: ending as a commit waits for the
         * sync that covers it (docs/storage.md), as the first answer did. */
        if (as_store_commit(s) != AS_OK) return AS_SHOP_FAILED;
        return idem_answer(shop, &ex, hash, answer, why);
    }
    if (rc == AS_OK) rc = work(job, answer);
    char *saved = rc == AS_OK ? json_dumps(answer->body, JSON_COMPACT) : NULL;
    if (rc == AS_OK)
        rc = saved ? as_store_idem_finish(s, user_id, scope, key, answer->status, saved) : AS_EDB;
    free(saved);
    if (rc == AS_OK) rc = as_store_commit(s);
    if (rc == AS_OK) return AS_SHOP_DONE;
    as_store_rollback(s); /* the claim goes with the rest: a retry runs again */
    json_decref(answer->body);
    answer->body = NULL;
    return AS_SHOP_FAILED;
}
