/* Rate limits' counters: fixed windows in two tables of slots shared by every
 * child, each change one compare-and-swap of a slot's key or window, no lock
 * (a global mutex taken by every request cost a tenth of a product view).
 *
 * What holds, whatever keys a client sends (issue 59):
 * - Addresses and keys have tables of their own. An address has at most two
 *   counters per location in its table (all its requests; its requests
 *   without a key), so no mix of made-up keys from it can reach the slots
 *   its own counters live in. An IPv6 address counts by its /64
 *   (as_rate_client): one client's block is one address.
 * - A live counter (its window not ended) is never evicted: a slot is taken
 *   only when free or when its window has ended, so nothing counted within a
 *   window is forgotten within it (but for requests in flight at the moment
 *   a slot changes hands: at most one each, never a stream of them).
 * - No request passes uncounted. An agent key that finds no slot (its probes
 *   all hold live counters of other keys: made-up keys filled them) counts
 *   against its address's own counter, at the key's limit: made-up keys cost
 *   their address, not the limiter. An address that finds no slot (more live
 *   addresses than the table holds around it) is refused, AS_RATE_FULL.
 * - Every request counts against its address at ten times the limit first;
 *   one refused there touches no key's counter, so an address can add at most
 *   that many counters to the keys' table in a window.
 * Slots are found by linear probing from the key, a keyed hash the caller
 * draws (no client can choose keys whose probes land on another's). */
#include "as_rate.h"

#include <arpa/inet.h>
#include <limits.h>
#include <string.h>

static as_rate_word load(_Atomic as_rate_word *at)
{
    return atomic_load_explicit(at, memory_order_acquire);
}

/* Whether *at still held *old, and now holds now; *old: what it holds. */
static bool cas(_Atomic as_rate_word *at, as_rate_word *old, as_rate_word now)
{
    return atomic_compare_exchange_strong_explicit(at, old, now, memory_order_acq_rel,
                                                   memory_order_acquire);
}

const char *as_rate_client(char out[AS_RATE_CLIENT_MAX], const char *ip)
{
    unsigned char a[16];
    if (!ip || !strchr(ip, ':') || inet_pton(AF_INET6, ip, a) != 1) return ip;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a, mapped, sizeof(mapped)) == 0)
        return inet_ntop(AF_INET, a + 12, out, AS_RATE_CLIENT_MAX) ? out : ip;
    memset(a + 8, 0, 8);
    if (!inet_ntop(AF_INET6, a, out, AS_RATE_CLIENT_MAX - 3)) return ip;
    strcat(out, "/64");
    return out;
}

size_t as_rate_size(size_t n)
{
    return n * sizeof(as_rate_slot);
}

void as_rate_region_init(as_rate_region *r, void *mem, size_t n, unsigned probes)
{
    r->slots = mem;
    r->n = n;
    r->probes = probes < n ? probes : (unsigned)n;
    for (size_t i = 0; i < n; i++) {
        atomic_init(&r->slots[i].key, 0);
        atomic_init(&r->slots[i].window, 0);
    }
}

/* The slot holding key, else a free or ended one claimed for it; NULL when
 * every probed slot holds another key's live window (*soonest: when the
 * first of them ends). Two requests of a new key at once claim one slot: the
 * claim is a CAS on the first free slot, and the loser looks again. */
static as_rate_slot *slot_of(const as_rate_region *r, as_rate_word key, long long now,
                             long long *soonest)
{
    for (unsigned attempt = 0; attempt <= r->probes; attempt++) {
        as_rate_slot *free_slot = NULL;
        as_rate_word free_key = 0;
        *soonest = LLONG_MAX;
        for (unsigned i = 0; i < r->probes; i++) {
            as_rate_slot *sl = &r->slots[(key + i) % r->n];
            as_rate_word k = load(&sl->key);
            if (k == key) return sl;
            long long end = (long long)(load(&sl->window) >> 32);
            if (k == 0 || end <= now) {
                if (!free_slot) free_slot = sl, free_key = k;
            } else if (end < *soonest) {
                *soonest = end;
            }
        }
        if (!free_slot) return NULL;
        /* an ended window is restarted by count_in, not here */
        if (cas(&free_slot->key, &free_key, key)) return free_slot;
    }
    return NULL; /* lost every race for a slot: the caller does not let it through */
}

/* Counts one request in sl's window: 0 within limit, else seconds until the
 * window ends (at least 1). */
static int count_in(as_rate_slot *sl, long long now, long long limit, long long secs)
{
    as_rate_word w = load(&sl->window), nw;
    do {
        as_rate_word end = w >> 32, count = w & 0xffffffffu;
        if (end <= (as_rate_word)now)
            nw = (as_rate_word)(now + secs) << 32 | 1;
        else
            nw = end << 32 | (count < 0xffffffffu ? count + 1 : count);
    } while (!cas(&sl->window, &w, nw));
    if ((long long)(nw & 0xffffffffu) <= limit) return 0;
    long long wait = (long long)(nw >> 32) - now;
    return wait < 1 ? 1 : wait > INT_MAX ? INT_MAX : (int)wait;
}

static as_rate_verdict full(long long soonest, long long now, int *wait)
{
    long long w = soonest == LLONG_MAX ? 1 : soonest - now;
    *wait = w < 1 ? 1 : w > INT_MAX ? INT_MAX : (int)w;
    return AS_RATE_FULL;
}

as_rate_verdict as_rate_check(const as_rate_tables *t, const as_rate_ids *ids, long long now,
                              long long limit, long long secs, int *wait)
{
    long long soonest;
    *wait = 0;
    as_rate_slot *all = slot_of(&t->addresses, ids->all, now, &soonest);
    if (!all) return full(soonest, now, wait);
    if ((*wait = count_in(all, now, limit * 10, secs))) return AS_RATE_ALL;
    as_rate_slot *own = ids->key ? slot_of(&t->keys, ids->key, now, &soonest) : NULL;
    if (own) return (*wait = count_in(own, now, limit, secs)) ? AS_RATE_KEY : AS_RATE_PASS;
    /* no key, or the keys' table has no slot for it: the address's own counter */
    own = slot_of(&t->addresses, ids->address, now, &soonest);
    if (!own) return full(soonest, now, wait);
    return (*wait = count_in(own, now, limit, secs)) ? AS_RATE_ADDRESS : AS_RATE_PASS;
}
