/* Rate limits' counters: fixed windows in tables of slots that every httpd
 * child shares (the glue puts them in shared memory), each change one
 * compare-and-swap, no lock. The design, and why, is in as_rate.c. */
#ifndef AS_RATE_H
#define AS_RATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef unsigned long long as_rate_word; /* 64 bits at least */

/* Lock-free atomics are address-free, so they work across processes; where
 * they are not, the caller serialises as_rate_check with a lock. */
#define AS_RATE_LOCK_FREE (ATOMIC_LLONG_LOCK_FREE == 2)

typedef struct as_rate_slot {
    _Atomic as_rate_word key;    /* 0: free */
    _Atomic as_rate_word window; /* when the window ends (seconds) << 32 | its count */
} as_rate_slot;

/* A table: n slots, a counter found among `probes` of them from its key. */
typedef struct as_rate_region {
    as_rate_slot *slots;
    size_t n;
    unsigned probes;
} as_rate_region;

/* Per-address counters apart from per-key ones: no mix of keys from one
 * address can take the slots its address's counters need. */
typedef struct as_rate_tables {
    as_rate_region addresses, keys;
} as_rate_tables;

/* A request's counters, as keyed hashes (never 0) of the location and who:
 * all (every request of the address), address (the address's own, for
 * requests without an agent key), key (the agent key's; 0: none). */
typedef struct as_rate_ids {
    as_rate_word all, address, key;
} as_rate_ids;

typedef enum as_rate_verdict {
    AS_RATE_PASS,    /* counted, within every limit */
    AS_RATE_KEY,     /* over the limit of its agent key */
    AS_RATE_ADDRESS, /* over the limit of its address (no key, or no slot for it) */
    AS_RATE_ALL,     /* over ten times the limit, every request of its address */
    AS_RATE_FULL     /* not counted: the address table has no slot for it */
} as_rate_verdict;

/* The client as the address counters count it: an IPv6 address by its /64
 * (the block one subscriber is given, so one client's 2^64 addresses are one
 * address), an IPv4 address, or one mapped into IPv6, as itself; text that is
 * no address as it is. Written into out when rewritten. */
#define AS_RATE_CLIENT_MAX 64
const char *as_rate_client(char out[AS_RATE_CLIENT_MAX], const char *ip);

/* The slots' bytes for n of them; a region over them, every slot free. */
size_t as_rate_size(size_t n);
void as_rate_region_init(as_rate_region *r, void *mem, size_t n, unsigned probes);

/* Counts one request at `limit` per `secs` (its address's requests at ten
 * times that). Not PASS: *wait is the seconds to wait, at least 1. */
as_rate_verdict as_rate_check(const as_rate_tables *t, const as_rate_ids *ids, long long now,
                              long long limit, long long secs, int *wait);

#endif
