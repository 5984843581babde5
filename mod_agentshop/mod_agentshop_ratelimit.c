/* mod_agentshop's rate limits: the counters of core/lib/as_rate.c (a table of
 * client addresses and one of agent keys, lock-free, the design and what it
 * guarantees against made-up keys described there) in shared memory that
 * every child maps, and the 429 or 503 they answer. Where 64-bit atomics are
 * not lock-free, its own global mutex guards them (`Mutex ...
 * agentshop-ratelimit`). */
#include "httpd.h"
#include "apr_global_mutex.h"
#include "apr_shm.h"
#include "apr_strings.h"
#include "http_log.h"
#include "util_mutex.h"

#include "as_crypto.h"
#include "as_rate.h"

#include "mod_agentshop_private.h"

#define RATE_MUTEX "agentshop-ratelimit"
/* Two counters per address and location; one per agent key and location.
 * Addresses probe further: one without a slot is refused (503). */
#define RATE_ADDRESS_SLOTS 65536
#define RATE_ADDRESS_PROBES 32
#define RATE_KEY_SLOTS 65536
#define RATE_KEY_PROBES 8
static apr_global_mutex_t *rate_mutex;
static apr_shm_t *rate_shm;
static as_rate_tables rate_tables;
static bool rate_ready;
static _Atomic long long rate_full_logged; /* the second of the last "table full" warning */
/* Drawn at every start, before the children fork: slots are found by a keyed
 * hash, so no client can choose keys whose slots land on another's. */
static unsigned char rate_secret[16];

apr_status_t agentshop_rate_register(apr_pool_t *pconf)
{
    rate_mutex = NULL;
    rate_shm = NULL;
    rate_ready = false;
    return ap_mutex_register(pconf, RATE_MUTEX, NULL, APR_LOCK_DEFAULT, 0);
}

int agentshop_rate_create(apr_pool_t *pconf, server_rec *s)
{
    apr_status_t rv = ap_global_mutex_create(&rate_mutex, NULL, RATE_MUTEX, NULL, s, pconf, 0);
    if (rv == APR_SUCCESS)
        rv = apr_shm_create(&rate_shm, as_rate_size(RATE_ADDRESS_SLOTS + RATE_KEY_SLOTS), NULL,
                            pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot create its mutexes or shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    as_rate_slot *slots = apr_shm_baseaddr_get(rate_shm);
    as_rate_region_init(&rate_tables.addresses, slots, RATE_ADDRESS_SLOTS, RATE_ADDRESS_PROBES);
    as_rate_region_init(&rate_tables.keys, slots + RATE_ADDRESS_SLOTS, RATE_KEY_SLOTS,
                        RATE_KEY_PROBES);
    rv = apr_generate_random_bytes(rate_secret, sizeof(rate_secret));
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot draw the rate limiter's secret");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rate_ready = true;
    return OK;
}

apr_status_t agentshop_rate_child_init(apr_pool_t *p)
{
    return apr_global_mutex_child_init(&rate_mutex, apr_global_mutex_lockfile(rate_mutex), p);
}

/* A counter's key: a keyed hash (SipHash-2-4 under rate_secret) of the
 * location and who, so no client can choose keys whose probes crowd another's
 * counter; never 0 (0 marks a free slot). */
static as_rate_word rate_key(apr_pool_t *p, const char *a, const char *b)
{
    const char *msg = apr_pstrcat(p, a, "\n", b, NULL);
    as_rate_word h = as_siphash24(rate_secret, msg, strlen(msg));
    return h ? h : 1;
}

/* Counts the request: its verdict, and *wait the seconds to wait when it is
 * refused. The address's counters are per location and client address (an
 * IPv6 one by its /64), the key's per location and well-formed agent key (read as core reads it to
 * identify the agent: one parser). */
static as_rate_verdict rate_check(request_rec *r, const dir_cfg *c, int *wait)
{
    const char *key = as_bearer_key(apr_table_get(r->headers_in, "Authorization"));
    const char *base = c->use.base;
    char buf[AS_RATE_CLIENT_MAX];
    const char *ip = as_rate_client(buf, r->useragent_ip ? r->useragent_ip : "unknown");
    as_rate_ids ids = {
        .all = rate_key(r->pool, base, apr_pstrcat(r->pool, "all:", ip, NULL)),
        .address = rate_key(r->pool, base, apr_pstrcat(r->pool, "ip:", ip, NULL)),
        .key = as_agent_key_shape(key, c->use.core.key_prefix) ? rate_key(r->pool, base, key) : 0,
    };
    apr_int64_t now = apr_time_sec(apr_time_now());
    if (!AS_RATE_LOCK_FREE) {
        apr_status_t rv = apr_global_mutex_lock(rate_mutex);
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "rate limit: cannot take its mutex");
            return AS_RATE_PASS; /* fail open: availability over throttling */
        }
    }
    as_rate_verdict v =
        as_rate_check(&rate_tables, &ids, now, c->use.rate_requests, c->use.rate_seconds, wait);
    if (!AS_RATE_LOCK_FREE) apr_global_mutex_unlock(rate_mutex);
    return v;
}

bool agentshop_rate_refused(request_rec *r, const dir_cfg *c, as_response *resp)
{
    apr_int64_t n = c->use.rate_requests, secs = c->use.rate_seconds;
    if (n == 0 || !rate_ready) return false;
    int wait = 0;
    as_rate_verdict v = rate_check(r, c, &wait);
    if (v == AS_RATE_PASS) return false;
    resp->retry_after = wait;
    if (v == AS_RATE_FULL) {
        /* once a second per child: a flood of addresses must not flood the log */
        long long sec = apr_time_sec(r->request_time);
        if (atomic_exchange(&rate_full_logged, sec) != sec)
            ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                          "rate limit: no counter free for client %s (more live addresses "
                          "than the table holds): refused with 503",
                          r->useragent_ip ? r->useragent_ip : "unknown");
        as_respond_error(resp, 503, "SERVICE_UNAVAILABLE", NULL,
                         apr_psprintf(r->pool,
                                      "Too many clients are being served right now. Retry "
                                      "after %d seconds.",
                                      wait));
        return true;
    }
    const char *who = v == AS_RATE_KEY   ? "this agent key"
                      : v == AS_RATE_ALL ? "this client address (all its requests)"
                                         : "this client address";
    as_respond_error(resp, 429, "RATE_LIMITED", NULL,
                     apr_psprintf(r->pool,
                                  "Too many requests: %s may make %" APR_INT64_T_FMT
                                  " requests per %" APR_INT64_T_FMT
                                  " seconds. Retry after %d seconds.",
                                  who, v == AS_RATE_ALL ? n * 10 : n, secs, wait));
    return true;
}
