/* What the files of the httpd glue share: mod_agentshop.c (hooks, the
 * handler, mod_dbd's connections), mod_agentshop_config.c (directives, merges,
 * the API's bases, the checks at start), mod_agentshop_io.c (bodies,
 * brigades, the JSON error filter) and mod_agentshop_ratelimit.c (counters in
 * shared memory). Only mod_agentshop/ includes httpd's headers. */
#ifndef MOD_AGENTSHOP_PRIVATE_H
#define MOD_AGENTSHOP_PRIVATE_H

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "util_filter.h"

#include "as_api.h"
#include "as_versions.h"
#include "as_view_cache.h"

extern module AP_MODULE_DECLARE_DATA agentshop_module;

/* What the glue's files share stays inside the module: agentshop_module alone
 * is exported (make check-exports). */
#pragma GCC visibility push(hidden)

#define UNSET -1

/* Per <Location>: the directives as written (UNSET or NULL where a section
 * and those around it set nothing), merged field by field, and what a
 * request uses, resolved from them once: at start-up for the server's own
 * configurations, at each merge for a request's. */
typedef struct dir_cfg {
    const char *location; /* the section's path, e.g. "/v1" or "/v1/" */
    const char *key_prefix;
    const char *base_url;
    apr_int64_t quote_ttl, confirmation_ttl, return_window, ship_after, questions_per_day;
    apr_int64_t write_wait; /* AgentShopWriteWait, seconds */
    const char *signing_key_file;
    const unsigned char *signing_key; /* read at start-up */
    apr_size_t signing_key_len;
    apr_int64_t rate_requests, rate_seconds; /* 0 requests: no limit */
    apr_array_header_t *agent_origins;       /* AgentShopCORSAllowOrigin, normalised; NULL: unset */
    int views_from_index;                    /* AgentShopViewsFromIndex: 1, 0 or UNSET */
    int approval_link;                       /* AgentShopApproval link: 1, passkey: 0, UNSET */
    struct {
        const char *base; /* agentshop_base(location) */
        as_config core;   /* core's settings, but for the process's caches (srv_cfg) */
        apr_int64_t rate_requests, rate_seconds; /* the defaults applied */
        apr_interval_time_t write_wait;          /* 0: AS_DB_WRITE_WAIT */
    } use;
} dir_cfg;

/* Per server (virtual host, so per database): this process's cache of encoded
 * product views and its text index, made in child_init. */
typedef struct srv_cfg {
    apr_int64_t view_slots;   /* AgentShopViewCache; 0: off */
    apr_int64_t search_slots; /* AgentShopSearchCache; 0: off */
    as_view_cache *views;
    as_view_cache *search_ids, *search_pages;
    as_search_index *index;       /* the search index, built by the first search */
    const char *db_file;          /* the SQLite file (DBDParams), named in errors */
    const char *index_prefix;     /* its index files (index_dir/<hash of the database>) */
    const char *index_why;        /* without them (NULL prefix): why, for the child's log */
    apr_uint32_t sweep_sec;       /* this process's last sweep of expired confirmations */
    const char *notify_cmd;       /* AgentShopConfirmationNotify, without its '|' */
    piped_log *notify;            /* its program, opened by the parent in post_config */
    apr_int64_t versions_max_age; /* AgentShopVersionsMaxAge, ms; 0: read per request */
    const char *db_key;           /* the driver and its parameters: which database */
    as_versions_cell *versions;   /* shared by every child (and host) of that database */
} srv_cfg;

/* ---- mod_agentshop_config.c ---- */

extern const command_rec agentshop_cmds[];
void *agentshop_create_dir_cfg(apr_pool_t *p, char *dir);
void *agentshop_merge_dir_cfg(apr_pool_t *p, void *basev, void *addv);
void *agentshop_create_srv_cfg(apr_pool_t *p, server_rec *s);
void *agentshop_merge_srv_cfg(apr_pool_t *p, void *basev, void *addv);

/* pre_config: forget what the last reading of the configuration found. */
void agentshop_config_reset(void);
/* post_config: refuse a configuration that cannot sign links, warn of
 * links built from the Host, and resolve every configuration of the
 * servers and their sections. OK or HTTP_INTERNAL_SERVER_ERROR. */
int agentshop_config_check(apr_pool_t *pconf, server_rec *s);
/* post_config: the search index files' directory, made whatever the
 * configuration (or none, with a warning: each child then builds its own
 * index in memory and says why); then every database of a server that serves the API
 * checked (its file, its schema) as the children's user, OK or
 * HTTP_INTERNAL_SERVER_ERROR (logged). */
void agentshop_index_dir_setup(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s);
int agentshop_check_databases(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s);
/* The user httpd's children run as, named in run-time errors (or NULL). */
const char *agentshop_run_user(void);

/* The API's base of a <Location> path: the path without its trailing slashes
 * (so "/v1/" serves what "/v1" does, and "/" the server's root as ""), or
 * "/v1" for a section with no path. Links are the base URL and a path below
 * the base, which starts with '/'. */
const char *agentshop_base(apr_pool_t *p, const char *location);
/* What of path lies below base (from its '/' or '?', or ""), or NULL when
 * path is not under base. */
const char *agentshop_below(const char *path, const char *base);
/* The base of the locations that serve the API ("/v1" when none says) under
 * which path lies, or NULL. */
const char *agentshop_base_of(const char *path);

/* ---- mod_agentshop_io.c ---- */

/* Reads the body, at most 64 KiB (chunked bodies too). Returns OK,
 * HTTP_REQUEST_ENTITY_TOO_LARGE, or another status for a broken body. */
int agentshop_read_body(request_rec *r, const char **body, apr_size_t *len);
/* core's answer as HTTP: status, headers, the body (JSON encoded straight
 * into the brigade), or 304 when the client's copy is the answer. */
int agentshop_write_response(request_rec *r, as_response *resp);
/* Errors httpd answers with its own page before any <Location> applies: the
 * filter that replaces the page with the JSON error, and the hook that adds
 * it for a request line naming one of the API's bases. */
#define AGENTSHOP_JSON_ERROR_FILTER "AGENTSHOP_JSON_ERROR"
void agentshop_insert_error_filter(request_rec *r);
apr_status_t agentshop_json_error_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* ---- mod_agentshop_ratelimit.c ---- */

/* pre_config: the mutex registered (`Mutex ... agentshop-ratelimit`). */
apr_status_t agentshop_rate_register(apr_pool_t *pconf);
/* post_config: the counters' shared memory and its secret, before the
 * children fork. OK or HTTP_INTERNAL_SERVER_ERROR (logged). */
int agentshop_rate_create(apr_pool_t *pconf, server_rec *s);
apr_status_t agentshop_rate_child_init(apr_pool_t *p);
/* Counts the request at its location's limit; true when it is one too many:
 * resp is then the 429 that says who may make how many and when to retry. */
bool agentshop_rate_refused(request_rec *r, const dir_cfg *c, as_response *resp);

#pragma GCC visibility pop

#endif
