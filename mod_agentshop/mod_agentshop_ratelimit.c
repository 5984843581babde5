/* mod_agentshop's rate limits: counters shared by every child, a fixed table
 * in shared memory changed by atomic compare-and-swap, no lock (a global
 * mutex taken by every request cost a tenth of a product view in futex
 * calls). Where 64-bit atomics are not lock-free, its own global mutex guards
 * it (`Mutex ... agentshop-ratelimit`). */
#include "httpd.h"
#include "apr_global_mutex.h"
#include "apr_shm.h"
#include "apr_strings.h"
#include "http_log.h"
#include "util_mutex.h"

#include "as_crypto.h"

#include <stdatomic.h>

#include "mod_agentshop_private.h"

#define RATE_MUTEX "agentshop-ratelimit"
#define RATE_SLOTS 16384
#define RATE_PROBES 8
/* Lock-free atomics are address-free, so they work across processes. */
#define RATE_LOCK_FREE (ATOMIC_LLONG_LOCK_FREE == 2)
typedef unsigned long long rate_word; /* 64 bits at least */
typedef struct rate_slot {
    _Atomic rate_word key;    /* 0: free */
    _Atomic rate_word window; /* when the window ends (seconds) << 32 | its count */
} rate_slot;
static apr_global_mutex_t *rate_mutex;
static apr_shm_t *rate_shm;
static rate_slot *rate_table;
/* Drawn at every start, before the children fork: slots are found by a keyed
 * hash, so no client can choose keys whose slots land on another's. */
static unsigned char rate_secret[16];

apr_status_t agentshop_rate_register(apr_pool_t *pconf)
{
    rate_mutex = NULL;
    rate_shm = NULL;
    rate_table = NULL;
    return ap_mutex_register(pconf, RATE_MUTEX, NULL, APR_LOCK_DEFAULT, 0);
}

int agentshop_rate_create(apr_pool_t *pconf, server_rec *s)
{
    apr_status_t rv = ap_global_mutex_create(&rate_mutex, NULL, RATE_MUTEX, NULL, s, pconf, 0);
    if (rv == APR_SUCCESS)
        rv = apr_shm_create(&rate_shm, RATE_SLOTS * sizeof(rate_slot), NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot create its mutexes or shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rate_table = apr_shm_baseaddr_get(rate_shm);
    for (size_t i = 0; i < RATE_SLOTS; i++) {
        atomic_init(&rate_table[i].key, 0);
        atomic_init(&rate_table[i].window, 0);
    }
    rv = apr_generate_random_bytes(rate_secret, sizeof(rate_secret));
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot draw the rate limiter's secret");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

apr_status_t agentshop_rate_child_init(apr_pool_t *p)
{
    return apr_global_mutex_child_init(&rate_mutex, apr_global_mutex_lockfile(rate_mutex), p);
}

/* A counter's key: a keyed hash (SipHash-2-4 under rate_secret) of the
 * location and who, so made-up keys cannot be chosen to land in a real key's
 * probe window and evict its counter; never 0 (0 marks a free slot). */
static rate_word rate_key(apr_pool_t *p, const char *a, const char *b)
{
    const char *msg = apr_pstrcat(p, a, "\n", b, NULL);
    rate_word h = as_siphash24(rate_secret, msg, strlen(msg));
    return h ? h : 1;
}

static rate_word rate_load(_Atomic rate_word *at)
{
    return atomic_load_explicit(at, memory_order_acquire);
}

/* Whether *at still held old, and now holds now; old: what it holds. */
static bool rate_cas(_Atomic rate_word *at, rate_word *old, rate_word now)
{
    return atomic_compare_exchange_strong_explicit(at, old, now, memory_order_acq_rel,
                                                   memory_order_acquire);
}

/* Counts one request in a fixed window; 0 when allowed, else seconds to wait.
 * Every change is one compare-and-swap of a slot's key or window, so no count
 * of a key that has its slot is lost however the children's threads
 * interleave. A key without a slot takes a free or expired one, else the one
 * whose window ends soonest (only a full probe window of live keys evicts
 * one). Two requests of a new key at the same instant may each take a slot;
 * the first in probe order counts from then on, the other expires. */
static int rate_count(rate_word key, apr_int64_t now, apr_int64_t limit, apr_int64_t secs)
{
    rate_slot *use = NULL;
    for (int attempt = 0; !use && attempt < 4; attempt++) {
        rate_slot *free_slot = NULL, *oldest = NULL;
        rate_word free_key = 0, oldest_key = 0, oldest_end = 0;
        for (int i = 0; i < RATE_PROBES; i++) {
            rate_slot *sl = &rate_table[(key + (rate_word)i) % RATE_SLOTS];
            rate_word k = rate_load(&sl->key), end = rate_load(&sl->window) >> 32;
            if (k == key) {
                use = sl;
                break;
            }
            if (!free_slot && (k == 0 || end <= (rate_word)now)) {
                free_slot = sl;
                free_key = k;
            }
            if (!oldest || end < oldest_end) {
                oldest = sl;
                oldest_key = k;
                oldest_end = end;
            }
        }
        if (use) break;
        /* a new key: claim a slot, its window ended (or ending now) */
        rate_slot *take = free_slot ? free_slot : oldest;
        rate_word was = free_slot ? free_key : oldest_key;
        if (rate_cas(&take->key, &was, key)) {
            use = take;
            /* an evicted key's window, still running: the new key's starts
             * afresh (an ended one is restarted by the count below) */
            rate_word w0 = rate_load(&take->window);
            if (!free_slot && w0 >> 32 > (rate_word)now) rate_cas(&take->window, &w0, 0);
        }
    }
    if (!use) return 0; /* lost every race for a slot: let it through */
    rate_word w = rate_load(&use->window), nw;
    do {
        rate_word end = w >> 32, count = w & 0xffffffffu;
        if (end <= (rate_word)now)
            nw = (rate_word)(now + secs) << 32 | 1;
        else
            nw = end << 32 | (count < 0xffffffffu ? count + 1 : count);
    } while (!rate_cas(&use->window, &w, nw));
    return (apr_int64_t)(nw & 0xffffffffu) > limit ? (int)((apr_int64_t)(nw >> 32) - now) : 0;
}

/* Per agent key (a well-formed Bearer key) or else per client address, at the
 * location's limit; and per address for every request at ten times it, so
 * made-up keys cannot escape the address's limit. 0, or seconds to wait. */
static int rate_limited(request_rec *r, const dir_cfg *c, apr_int64_t *limit, const char **who)
{
    apr_int64_t n = c->use.rate_requests, secs = c->use.rate_seconds;
    if (n == 0 || !rate_table || !rate_mutex) return 0;
    /* the key as core reads it to identify the agent (one parser) */
    const char *key = as_bearer_key(apr_table_get(r->headers_in, "Authorization"));
    int keyed = as_agent_key_shape(key, c->use.core.key_prefix);
    const char *base = c->use.base;
    const char *ip = r->useragent_ip ? r->useragent_ip : "unknown";
    apr_int64_t now = apr_time_sec(apr_time_now());
    rate_word k1 = rate_key(r->pool, base, keyed ? key : apr_pstrcat(r->pool, "ip:", ip, NULL));
    rate_word k2 = rate_key(r->pool, base, apr_pstrcat(r->pool, "all:", ip, NULL));
    if (!RATE_LOCK_FREE) {
        apr_status_t rv = apr_global_mutex_lock(rate_mutex);
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "rate limit: cannot take its mutex");
            return 0; /* fail open: availability over throttling */
        }
    }
    int w1 = rate_count(k1, now, n, secs);
    int w2 = rate_count(k2, now, n * 10, secs);
    if (!RATE_LOCK_FREE) apr_global_mutex_unlock(rate_mutex);
    if (w1) {
        *limit = n;
        *who = keyed ? "this agent key" : "this client address";
        return w1 < 1 ? 1 : w1;
    }
    if (w2) {
        *limit = n * 10;
        *who = "this client address (all its requests)";
        return w2 < 1 ? 1 : w2;
    }
    return 0;
}

bool agentshop_rate_refused(request_rec *r, const dir_cfg *c, as_response *resp)
{
    apr_int64_t limit = 0;
    const char *who = NULL;
    int wait = rate_limited(r, c, &limit, &who);
    if (wait <= 0) return false;
    as_respond_error(resp, 429, "RATE_LIMITED", NULL,
                     apr_psprintf(r->pool,
                                  "Too many requests: %s may make %" APR_INT64_T_FMT
                                  " requests per %" APR_INT64_T_FMT
                                  " seconds. Retry after %d seconds.",
                                  who, limit, c->use.rate_seconds, wait));
    resp->retry_after = wait;
    return true;
}
