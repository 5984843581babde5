/* Idempotency-Key records: how long one is honoured and when a claim in
 * flight is taken over. The store keeps the records (as_store.h); these
 * rules are decided here only. */
#ifndef AS_IDEM_H
#define AS_IDEM_H

#include "as_store.h"

#define AS_IDEM_LEASE 30   /* seconds a claim in flight is held */
#define AS_IDEM_KEEP 86400 /* seconds a record is kept and honoured, at least */

/* Inside the caller's transaction: claims (user, scope, key) for a request
 * with body hash `hash` at `now`. AS_OK: claimed (a new key, one past its
 * keeping time, or the same request's claim whose lease ran out: its first
 * request died with it); AS_ECONFLICT with the record that answers in
 * *existing; AS_EDB. */
int as_idem_claim(const as_store *s, as_mem *m, const char *user, const char *scope,
                  const char *key, const char *hash, int64_t now, as_idem *existing);

#endif
