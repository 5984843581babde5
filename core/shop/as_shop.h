/* The shop as its operations see it: the store, memory, the time and the
 * operator's configuration, never a request (docs/architecture.md, "Rooms").
 * The /v1 handlers, MCP, agentshopctl and every binding hold one as_shop and
 * call the shop's operations with it. */
#ifndef AS_SHOP_H
#define AS_SHOP_H

#include <stdbool.h>
#include <stdint.h>

#include "as_log.h"
#include "as_mem.h"
#include "as_search.h"
#include "as_store.h"
#include "as_validate.h"

struct as_view_cache;

typedef struct as_config {
    const char *key_prefix;           /* AgentShopKeyPrefix */
    int64_t quote_ttl;                /* seconds */
    int64_t confirmation_ttl;         /* seconds */
    int64_t return_window_days;       /* days */
    int64_t ship_after;               /* seconds */
    int64_t questions_per_day;        /* AgentShopQuestionsPerDay, per user, UTC days */
    /* AgentShopApproval link: the signed link alone approves (for operators
     * who deliver links only to the person). Default (false): passkey. */
    bool approval_link;
    const unsigned char *signing_key; /* AgentShopSigningKeyFile, >= 32 bytes */
    size_t signing_key_len;
    /* AgentShopCORSAllowOrigin: origins (as_origin_normalize'd) whose pages
     * may call the agent endpoints and POST /mcp, besides the API's own. */
    const char *const *agent_origins;
    size_t n_agent_origins;
    /* This process's cache of encoded product views (AgentShopViewCache), or
     * NULL: every view is built from the store. */
    struct as_view_cache *product_views;
    /* This process's caches of search pages with q (AgentShopSearchCache): the
     * page's products by index version, and the encoded page by what it was
     * built from. NULL: every page is built. */
    struct as_view_cache *search_ids, *search_pages;
    /* Product views from the search index (its kept parts and a live read),
     * when the process has one (AgentShopViewsFromIndex, default on); off:
     * read whole from the store. */
    bool views_from_index;
} as_config;

void as_config_defaults(as_config *c);


typedef struct as_shop {
    as_mem *mem;
    const as_store *store;
    const as_config *cfg;
    int64_t now; /* Unix seconds: one clock reading per request */
    as_log_fn log;
    void *log_baton;
    /* The process's search index (the glue keeps one per server and child),
     * or NULL: then each search builds a snapshot of its own (tests). */
    as_search_index *index;
    /* Set by the glue at most once a second per process: before the request,
     * as_handle expires every order whose confirmation ran out (whoever asks),
     * giving back its budget and stock, and deletes WebAuthn challenges that
     * expired (as_sweep_challenges). */
    bool sweep;
    /* AgentShopConfirmationNotify: one JSON line (no newline) per confirmation
     * created, after its commit; NULL: nobody is told. */
    void (*notify)(void *baton, const char *line);
    void *notify_baton;
} as_shop;

/* What a shop operation says; its out-parameters hold the rest. Operations
 * take the as_shop and typed inputs, never a request; each binding (the /v1
 * handlers, MCP, agentshopctl) turns the outcome into its own answer.
 *   AS_SHOP_DONE        done: the result is in the out-parameters
 *   AS_SHOP_REFUSED     the shop's rules refuse it: the as_problem names why, with
 *                       the /v1 error code and status every binding maps from
 *   AS_SHOP_FAILED      the store failed; nothing was changed (the store logged it)
 *   AS_SHOP_UNREADABLE  the change was committed, only reading it back failed */
typedef enum { AS_SHOP_DONE, AS_SHOP_REFUSED, AS_SHOP_FAILED, AS_SHOP_UNREADABLE } as_shop_rc;

/* The problem of an outcome that carries none, as every binding answers it:
 * AS_SHOP_FAILED and AS_SHOP_UNREADABLE are each a 503 with its own message. */
void as_shop_problem(as_shop_rc rc, as_problem *p);

/* Whether the shop can sign and check links (AgentShopSigningKeyFile); else
 * false with a 500 INTERNAL_ERROR naming the directive (logged): the server is
 * misconfigured and no retry mends it. A binding asks before it claims an
 * Idempotency-Key, so the refusal is never remembered under one. */
bool as_shop_can_sign(as_shop *shop, as_problem *why);

void as_log(as_shop *shop, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Today, in days since 1970-01-01 (UTC). */
int64_t as_today(const as_shop *shop);

#endif
