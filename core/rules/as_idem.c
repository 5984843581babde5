/* Idempotency-Key records: the rules (as_idem.h). */
#include "as_idem.h"

#include <string.h>

int as_idem_claim(const as_store *s, as_mem *m, const char *user, const char *scope,
                  const char *key, const char *hash, int64_t now, as_idem *existing)
{
    int64_t lease_until = now + AS_IDEM_LEASE;
    for (int attempt = 0; attempt < 3; attempt++) {
        int rc = as_store_idem_claim(s, m, user, scope, key, hash, now, lease_until, existing);
        if (rc != AS_ECONFLICT) return rc;
        if (existing->created_at <= now - AS_IDEM_KEEP) {
            /* past its keeping time: forget it and treat the key as new */
            if (as_store_idem_forget(s, user, scope, key, now - AS_IDEM_KEEP) != AS_OK)
                return AS_EDB;
            continue;
        }
        if (strcmp(existing->state, "in_flight") == 0 && existing->lease_until <= now &&
            strcmp(existing->request_hash, hash) == 0)
            return as_store_idem_takeover(s, m, user, scope, key, hash, now, lease_until, existing);
        return AS_ECONFLICT;
    }
    return AS_EDB;
}
