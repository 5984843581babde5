/* Idempotency-Key records: the rules (as_idem.h). */
#include "as_idem.h"

#include <string.h>

as_idem_verdict as_idem_on_record(const as_idem *existing, const char *hash, int64_t now)
{
    if (existing->created_at <= now - AS_IDEM_KEEP) return AS_IDEM_FORGET;
    if (existing->state == AS_IDEM_IN_FLIGHT && existing->lease_until <= now &&
        strcmp(existing->request_hash, hash) == 0)
        return AS_IDEM_TAKE_OVER;
    return AS_IDEM_ANSWER;
}
