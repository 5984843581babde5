/* Idempotency-Key records: how long one is honoured and when a claim in
 * flight is taken over. The store keeps the records (as_store.h) and the shop
 * claims them (core/shop/as_idempotent.c); these rules are decided here only. */
#ifndef AS_IDEM_H
#define AS_IDEM_H

#include <stdint.h>

#include "as_commerce.h"

#define AS_IDEM_LEASE 30   /* seconds a claim in flight is held */
#define AS_IDEM_KEEP 86400 /* seconds a record is kept and honoured, at least */

/* What a claim does with the record it found under its key. */
typedef enum {
    AS_IDEM_ANSWER,   /* the record answers: the first answer again, 422 or 409 */
    AS_IDEM_FORGET,   /* past its keeping time: forgotten, and the key is new */
    AS_IDEM_TAKE_OVER /* the same request's claim whose lease ran out: its request died */
} as_idem_verdict;

/* The verdict on `existing` for a request with body hash `hash` at `now`. */
as_idem_verdict as_idem_on_record(const as_idem *existing, const char *hash, int64_t now);

#endif
