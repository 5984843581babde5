/* mod_agentshop: the httpd glue of the Agent Shopping API. It turns HTTP into an
 * as_request, lends core a database connection from mod_dbd, and writes core's
 * as_response. Everything the API decides lives in core/. */
#include "httpd.h"
#include "apr_atomic.h"
#include "apr_global_mutex.h"
#include "apr_optional.h"
#include "apr_shm.h"
#include "apr_strings.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_mutex.h"
#include "unixd.h"
#include "apr_dbd.h"
#include "mod_dbd.h"

#include "as_api.h"
#include "as_crypto.h"
#include "as_db.h"
#include "as_http.h"
#include "as_versions.h"
#include "as_view_cache.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

module AP_MODULE_DECLARE_DATA agentshop_module;

#define UNSET -1

typedef struct dir_cfg {
    const char *base; /* the <Location> the handler serves, e.g. "/v1" */
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
} dir_cfg;

/* Per server (virtual host, so per database): this process's cache of encoded
 * product views and its text index, made in child_init. */
typedef struct srv_cfg {
    apr_int64_t view_slots;   /* AgentShopViewCache; 0: off */
    apr_int64_t search_slots; /* AgentShopSearchCache; 0: off */
    as_view_cache *views;
    as_view_cache *search_ids, *search_pages;
    as_search_index *index; /* the search index, built by the first search */
    const char *db_file;    /* the SQLite file (DBDParams), named in errors */
    const char *index_prefix; /* its index files (index_dir/<hash of the database>) */
    apr_uint32_t sweep_sec;   /* this process's last sweep of expired confirmations */
    const char *notify_cmd;   /* AgentShopConfirmationNotify, without its '|' */
    piped_log *notify;        /* its program, opened by the parent in post_config */
    apr_int64_t versions_max_age; /* AgentShopVersionsMaxAge, ms; 0: read per request */
    const char *db_key;           /* the driver and its parameters: which database */
    as_versions_cell *versions;   /* shared by every child (and host) of that database */
} srv_cfg;

#define DEFAULT_VIEW_SLOTS 0 /* off: views come from the search index */
#define VIEW_MAX_BYTES 24576 /* larger views are built every time */
#define DEFAULT_SEARCH_SLOTS 256
#define SEARCH_IDS_MAX_BYTES 2048   /* a page of up to 100 products, its key and version */
#define SEARCH_PAGE_MAX_BYTES 65536 /* larger pages are built every time */

#define DEFAULT_RATE_REQUESTS 600
#define DEFAULT_RATE_SECONDS 60

#define MAX_BODY 65536

static ap_dbd_t *(*dbd_acquire)(request_rec *) = NULL;
/* A connection outside any request, for the search index's background builds. */
static ap_dbd_t *(*dbd_open)(apr_pool_t *, server_rec *) = NULL;
static void (*dbd_close)(server_rec *, ap_dbd_t *) = NULL;

/* Serializes SQLite writers across threads and child processes (see as_db.h).
 * Its mechanism can be chosen with `Mutex ... agentshop-write`. */
#define WRITE_MUTEX "agentshop-write"
static apr_global_mutex_t *write_mutex;

/* Rate-limit counters shared by every child: a fixed table in shared memory,
 * changed by atomic compare-and-swap, no lock (a global mutex taken by every
 * request cost a tenth of a product view in futex calls). Where 64-bit
 * atomics are not lock-free, its own global mutex guards it (`Mutex ...
 * agentshop-ratelimit`). */
#define RATE_MUTEX "agentshop-ratelimit"
#define RATE_SLOTS 16384
#define RATE_PROBES 8
#if defined(__GCC_ATOMIC_LLONG_LOCK_FREE) && __GCC_ATOMIC_LLONG_LOCK_FREE == 2
#define RATE_LOCK_FREE 1
#else
#define RATE_LOCK_FREE 0
#endif
typedef struct rate_slot {
    apr_uint64_t key;    /* 0: free */
    apr_uint64_t window; /* when the window ends (seconds) << 32 | its count */
} rate_slot;
static apr_global_mutex_t *rate_mutex;
static apr_shm_t *rate_shm;
static apr_shm_t *versions_shm; /* the database versions' cells (make_versions) */
static rate_slot *rate_table;
/* Drawn at every start, before the children fork: slots are found by a keyed
 * hash, so no client can choose keys whose slots land on another's. */
static unsigned char rate_secret[16];

/* Locations that serve the API: every <Location> holding an AgentShop directive
 * (the sample config sets AgentShopKeyPrefix in it), else "/v1". httpd rejects
 * some paths (%2F, %00) before any <Location> applies, so errors for these
 * prefixes are pointed at the handler per request, in post_read_request. */
static apr_array_header_t *api_bases;
/* AgentShopSearchIndexDir (global), and the directory made from it at start-up */
static const char *index_dir_conf, *index_dir;
static int signing_key_seen;
static int base_url_seen; /* some location sets AgentShopBaseURL */

static void note_base(cmd_parms *cmd)
{
    if (!cmd->path || cmd->path[0] != '/') return;
    if (!api_bases) api_bases = apr_array_make(cmd->pool, 2, sizeof(const char *));
    for (int i = 0; i < api_bases->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(api_bases, i, const char *), cmd->path) == 0) return;
    APR_ARRAY_PUSH(api_bases, const char *) = apr_pstrdup(cmd->pool, cmd->path);
}

static int pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    (void)pconf;
    (void)plog;
    (void)ptemp;
    api_bases = NULL; /* rebuilt on every (re)read of the configuration */
    signing_key_seen = 0;
    base_url_seen = 0;
    write_mutex = rate_mutex = NULL;
    rate_shm = NULL;
    versions_shm = NULL;
    rate_table = NULL;
    index_dir_conf = index_dir = NULL;
    /* before mod_dbd's first connection (the first read of the configuration;
     * on a restart SQLite is already set up, as it was the first time) */
    (void)as_db_process_init();
    if (ap_mutex_register(pconf, WRITE_MUTEX, NULL, APR_LOCK_DEFAULT, 0) != APR_SUCCESS ||
        ap_mutex_register(pconf, RATE_MUTEX, NULL, APR_LOCK_DEFAULT, 0) != APR_SUCCESS)
        return HTTP_INTERNAL_SERVER_ERROR;
    return OK;
}

/* ---- configuration ---- */

static void *create_dir_cfg(apr_pool_t *p, char *dir)
{
    dir_cfg *c = apr_pcalloc(p, sizeof(*c));
    c->base = dir;
    c->quote_ttl = c->confirmation_ttl = c->return_window = c->ship_after = UNSET;
    c->questions_per_day = UNSET;
    c->write_wait = UNSET;
    c->rate_requests = c->rate_seconds = UNSET;
    c->views_from_index = UNSET;
    c->approval_link = UNSET;
    return c;
}

static void *merge_dir_cfg(apr_pool_t *p, void *basev, void *addv)
{
    dir_cfg *b = basev, *a = addv, *c = apr_pcalloc(p, sizeof(*c));
    c->base = a->base ? a->base : b->base;
    c->key_prefix = a->key_prefix ? a->key_prefix : b->key_prefix;
    c->base_url = a->base_url ? a->base_url : b->base_url;
    c->quote_ttl = a->quote_ttl != UNSET ? a->quote_ttl : b->quote_ttl;
    c->confirmation_ttl = a->confirmation_ttl != UNSET ? a->confirmation_ttl : b->confirmation_ttl;
    c->return_window = a->return_window != UNSET ? a->return_window : b->return_window;
    c->ship_after = a->ship_after != UNSET ? a->ship_after : b->ship_after;
    c->questions_per_day =
        a->questions_per_day != UNSET ? a->questions_per_day : b->questions_per_day;
    c->write_wait = a->write_wait != UNSET ? a->write_wait : b->write_wait;
    c->rate_requests = a->rate_requests != UNSET ? a->rate_requests : b->rate_requests;
    c->rate_seconds = a->rate_seconds != UNSET ? a->rate_seconds : b->rate_seconds;
    c->agent_origins = a->agent_origins ? a->agent_origins : b->agent_origins;
    c->views_from_index = a->views_from_index != UNSET ? a->views_from_index : b->views_from_index;
    c->approval_link = a->approval_link != UNSET ? a->approval_link : b->approval_link;
    if (a->signing_key) {
        c->signing_key_file = a->signing_key_file;
        c->signing_key = a->signing_key;
        c->signing_key_len = a->signing_key_len;
    } else {
        c->signing_key_file = b->signing_key_file;
        c->signing_key = b->signing_key;
        c->signing_key_len = b->signing_key_len;
    }
    return c;
}

/* A whole number within [min, max], or a start-up error naming the directive. */
static const char *set_int(cmd_parms *cmd, void *cfg, const char *arg)
{
    apr_int64_t min = 1, max = 10 * 365 * 86400;
    char *end = NULL;
    apr_int64_t v = apr_strtoi64(arg, &end, 10);
    if (!*arg || *end || v < min || v > max)
        return apr_psprintf(cmd->pool,
                            "%s: '%s' is not a whole number from %" APR_INT64_T_FMT
                            " to %" APR_INT64_T_FMT,
                            cmd->directive->directive, arg, min, max);
    *(apr_int64_t *)((char *)cfg + (size_t)cmd->info) = v;
    note_base(cmd);
    return NULL;
}

/* Who may approve an order above the confirm-above threshold: the person's
 * passkey (default), or whoever holds the signed link. */
static const char *set_approval(cmd_parms *cmd, void *cfg, const char *arg)
{
    if (strcasecmp(arg, "passkey") != 0 && strcasecmp(arg, "link") != 0)
        return apr_psprintf(cmd->pool,
                            "AgentShopApproval: '%s' must be passkey (a WebAuthn assertion of "
                            "the person, the default) or link (the signed link alone)",
                            arg);
    ((dir_cfg *)cfg)->approval_link = strcasecmp(arg, "link") == 0;
    note_base(cmd);
    return NULL;
}

static const char *set_views_from_index(cmd_parms *cmd, void *cfg, int on)
{
    ((dir_cfg *)cfg)->views_from_index = on ? 1 : 0;
    note_base(cmd);
    return NULL;
}

static const char *set_prefix(cmd_parms *cmd, void *cfg, const char *arg)
{
    dir_cfg *c = cfg;
    size_t n = strlen(arg);
    if (n < 1 || n > 32 || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789") != n)
        return apr_psprintf(cmd->pool,
                            "AgentShopKeyPrefix: '%s' must be 1 to 32 lowercase letters or "
                            "digits",
                            arg);
    c->key_prefix = arg;
    note_base(cmd);
    return NULL;
}

static const char *set_base_url(cmd_parms *cmd, void *cfg, const char *arg)
{
    dir_cfg *c = cfg;
    apr_uri_t u;
    if (apr_uri_parse(cmd->pool, arg, &u) != APR_SUCCESS || !u.scheme || !u.hostname ||
        (strcmp(u.scheme, "http") && strcmp(u.scheme, "https")) || u.query || u.fragment)
        return apr_psprintf(cmd->pool,
                            "AgentShopBaseURL: '%s' must be an absolute http(s) URL such as "
                            "https://shop.example/v1",
                            arg);
    size_t n = strlen(arg);
    c->base_url = n && arg[n - 1] == '/' ? apr_pstrndup(cmd->pool, arg, n - 1) : arg;
    base_url_seen = 1;
    if (strspn(u.hostname, "0123456789.") == strlen(u.hostname) || strchr(u.hostname, ':'))
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server,
                     "AgentShopBaseURL %s names an IP address, which no passkey can belong to "
                     "(WebAuthn needs a host name): under AgentShopApproval passkey, the "
                     "default, no order above a threshold can be approved. Use a host name "
                     "(http://localhost:PORT/v1 on one machine)",
                     arg);
    note_base(cmd);
    return NULL;
}

/* The secret that signs confirmation links: read once, at start-up. */
static const char *set_signing_key(cmd_parms *cmd, void *cfg, const char *arg)
{
    dir_cfg *c = cfg;
    const char *path = ap_server_root_relative(cmd->pool, arg);
    char *data = NULL;
    apr_file_t *f;
    apr_finfo_t fi;
    apr_status_t rv =
        path ? apr_file_open(&f, path, APR_READ | APR_BINARY, 0, cmd->temp_pool) : APR_EBADPATH;
    int opened = rv == APR_SUCCESS;
    if (rv == APR_SUCCESS) rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    if (rv == APR_SUCCESS && fi.size > 4096) rv = APR_EINVAL;
    if (rv == APR_SUCCESS) {
        apr_size_t n = (apr_size_t)fi.size;
        data = apr_palloc(cmd->pool, n + 1);
        rv = n ? apr_file_read_full(f, data, n, &n) : APR_SUCCESS;
        c->signing_key_len = n;
    }
    if (opened) apr_file_close(f);
    if (rv != APR_SUCCESS) {
        char buf[120];
        return apr_psprintf(cmd->pool, "AgentShopSigningKeyFile: cannot read '%s': %s", arg,
                            rv == APR_EINVAL ? "larger than 4096 bytes"
                                             : apr_strerror(rv, buf, sizeof(buf)));
    }
    /* trailing newlines of an editor do not count as secret */
    while (c->signing_key_len && strchr("\r\n", data[c->signing_key_len - 1]))
        c->signing_key_len--;
    if (c->signing_key_len < 32)
        return apr_psprintf(cmd->pool,
                            "AgentShopSigningKeyFile: '%s' holds %" APR_SIZE_T_FMT
                            " bytes; the secret must be at least 32 bytes (e.g. openssl rand "
                            "-hex 32 > %s)",
                            arg, c->signing_key_len, arg);
    c->signing_key = (const unsigned char *)data;
    c->signing_key_file = path;
    signing_key_seen = 1;
    note_base(cmd);
    return NULL;
}

static const char *set_rate(cmd_parms *cmd, void *cfg, const char *n, const char *secs)
{
    dir_cfg *c = cfg;
    if (!secs && strcasecmp(n, "off") == 0) {
        c->rate_requests = 0;
        c->rate_seconds = 1;
        note_base(cmd);
        return NULL;
    }
    char *e1 = NULL, *e2 = NULL;
    apr_int64_t r = apr_strtoi64(n, &e1, 10), t = secs ? apr_strtoi64(secs, &e2, 10) : 0;
    if (!secs || *e1 || *e2 || r < 1 || r > 100000000 || t < 1 || t > 86400)
        return apr_psprintf(cmd->pool,
                            "AgentShopRateLimit: '%s %s' must be <requests> <seconds> (requests "
                            "1 to 100000000, seconds 1 to 86400), or off",
                            n, secs ? secs : "");
    c->rate_requests = r;
    c->rate_seconds = t;
    note_base(cmd);
    return NULL;
}

static void *create_srv_cfg(apr_pool_t *p, server_rec *s)
{
    (void)s;
    srv_cfg *c = apr_pcalloc(p, sizeof(*c));
    c->view_slots = UNSET;
    c->search_slots = UNSET;
    c->versions_max_age = UNSET;
    return c;
}

static void *merge_srv_cfg(apr_pool_t *p, void *basev, void *addv)
{
    srv_cfg *b = basev, *a = addv, *c = apr_pcalloc(p, sizeof(*c));
    c->view_slots = a->view_slots != UNSET ? a->view_slots : b->view_slots;
    c->search_slots = a->search_slots != UNSET ? a->search_slots : b->search_slots;
    c->notify_cmd = a->notify_cmd ? a->notify_cmd : b->notify_cmd;
    c->versions_max_age =
        a->versions_max_age != UNSET ? a->versions_max_age : b->versions_max_age;
    return c;
}

/* AgentShopConfirmationNotify "|program": like a piped log, a program the
 * parent starts (through /bin/sh) and restarts when it dies, which reads one
 * JSON line per confirmation created (docs/security.md). */
static const char *set_notify(cmd_parms *cmd, void *dummy, const char *arg)
{
    (void)dummy;
    srv_cfg *c = ap_get_module_config(cmd->server->module_config, &agentshop_module);
    if (arg[0] != '|' || !arg[1 + strspn(arg + 1, " \t")])
        return "AgentShopConfirmationNotify: give a program to pipe to, as for a piped log: "
               "\"|/usr/local/bin/send-approval-link\"";
    c->notify_cmd = arg + 1;
    return NULL;
}

/* AgentShopViewCache and AgentShopSearchCache: a number of entries, or off. */
static const char *set_cache(cmd_parms *cmd, void *dummy, const char *arg)
{
    (void)dummy;
    srv_cfg *c = ap_get_module_config(cmd->server->module_config, &agentshop_module);
    bool views = strcasecmp(cmd->cmd->name, "AgentShopViewCache") == 0;
    char *end = NULL;
    apr_int64_t n = strcasecmp(arg, "off") == 0 ? 0 : apr_strtoi64(arg, &end, 10);
    if ((end && (*end || !*arg)) || n < 0 || n > 1000000)
        return apr_psprintf(cmd->pool, "%s: '%s' must be a number of %s from 0 to 1000000, or off",
                            cmd->cmd->name, arg, views ? "product views" : "search pages");
    *(views ? &c->view_slots : &c->search_slots) = n;
    return NULL;
}

/* AgentShopVersionsMaxAge: milliseconds, 0 to AS_VERSIONS_MAX_AGE_LIMIT. */
static const char *set_versions_max_age(cmd_parms *cmd, void *dummy, const char *arg)
{
    (void)dummy;
    srv_cfg *c = ap_get_module_config(cmd->server->module_config, &agentshop_module);
    char *end = NULL;
    apr_int64_t n = apr_strtoi64(arg, &end, 10);
    if (!*arg || *end || n < 0 || n > AS_VERSIONS_MAX_AGE_LIMIT)
        return apr_psprintf(cmd->pool,
                            "AgentShopVersionsMaxAge: '%s' must be a number of milliseconds "
                            "from 0 (read the versions for every request) to %d",
                            arg, AS_VERSIONS_MAX_AGE_LIMIT);
    c->versions_max_age = n;
    return NULL;
}

static const char *set_index_dir(cmd_parms *cmd, void *dummy, const char *arg)
{
    (void)dummy;
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    if (err) return err;
    index_dir_conf = ap_server_root_relative(cmd->pool, arg);
    if (!index_dir_conf) return apr_pstrcat(cmd->pool, "AgentShopSearchIndexDir: bad path ", arg, NULL);
    return NULL;
}

/* One origin per argument, scheme://host[:port]; the lines of one section add up. */
static const char *set_agent_origin(cmd_parms *cmd, void *cfg, const char *arg)
{
    dir_cfg *c = cfg;
    as_mem mem = as_db_pool_mem(cmd->pool);
    const char *o = as_origin_normalize(&mem, arg);
    if (!o)
        return apr_psprintf(cmd->pool,
                            "%s: '%s' is not an origin; write scheme://host[:port] with http or "
                            "https and no path, e.g. https://agent.example (no '*': pages that "
                            "spend with an agent's key are named one by one)",
                            cmd->cmd->name, arg);
    if (!c->agent_origins) c->agent_origins = apr_array_make(cmd->pool, 2, sizeof(const char *));
    APR_ARRAY_PUSH(c->agent_origins, const char *) = o;
    note_base(cmd);
    return NULL;
}

static const command_rec cmds[] = {
    AP_INIT_TAKE12("AgentShopRateLimit", set_rate, NULL, RSRC_CONF | ACCESS_CONF,
                   "requests allowed per agent key (or client address) in a window of seconds; "
                   "default 600 60; or off"),
    AP_INIT_TAKE1("AgentShopSigningKeyFile", set_signing_key, NULL, RSRC_CONF | ACCESS_CONF,
                  "file holding the secret (32 bytes or more) that signs confirmation links"),
    AP_INIT_ITERATE("AgentShopCORSAllowOrigin", set_agent_origin, NULL, RSRC_CONF | ACCESS_CONF,
                    "origins (scheme://host[:port]) whose pages may call the agent endpoints "
                    "and POST /mcp, besides the API's own (public reads: any origin)"),
    AP_INIT_ITERATE("AgentShopMCPAllowOrigin", set_agent_origin, NULL, RSRC_CONF | ACCESS_CONF,
                    "the former name of AgentShopCORSAllowOrigin: the same list"),
    AP_INIT_TAKE1("AgentShopConfirmationNotify", set_notify, NULL, RSRC_CONF,
                  "\"|program\": a program that reads one JSON line per confirmation created "
                  "(its link, for the person), started and restarted like a piped log"),
    AP_INIT_TAKE1("AgentShopViewCache", set_cache, NULL, RSRC_CONF,
                  "product views each child process keeps encoded, per virtual host, for views "
                  "read whole from the database (default off; a number)"),
    AP_INIT_TAKE1("AgentShopSearchCache", set_cache, NULL, RSRC_CONF,
                  "pages of searches with q each child process keeps encoded, per virtual host "
                  "(default 256; off)"),
    AP_INIT_TAKE1("AgentShopApproval", set_approval, NULL, RSRC_CONF | ACCESS_CONF,
                  "who approves an order above the confirm-above threshold: passkey (the "
                  "person's WebAuthn passkey, default) or link (whoever has the signed link)"),
    AP_INIT_FLAG("AgentShopViewsFromIndex", set_views_from_index, NULL, RSRC_CONF | ACCESS_CONF,
                 "product views from the search index, reading only offers' stock and questions "
                 "(default on); off: each view read whole from the database"),
    AP_INIT_TAKE1("AgentShopVersionsMaxAge", set_versions_max_age, NULL, RSRC_CONF,
                  "milliseconds for which the database's versions one request read serve the "
                  "server's other requests (default 100; 0: read for every request); a commit "
                  "made through the server is seen by its next request whatever this is"),
    AP_INIT_TAKE1("AgentShopSearchIndexDir", set_index_dir, NULL, RSRC_CONF,
                  "directory of the search index files, one per database, mapped by every "
                  "child (default: agentshop-index in DefaultRuntimeDir)"),
    AP_INIT_TAKE1("AgentShopKeyPrefix", set_prefix, NULL, RSRC_CONF | ACCESS_CONF,
                  "prefix of agent keys, <prefix>_sk_test_<32 characters> (default agentshop)"),
    AP_INIT_TAKE1("AgentShopBaseURL", set_base_url, NULL, RSRC_CONF | ACCESS_CONF,
                  "absolute URL of the API base, e.g. https://shop.example/v1"),
    AP_INIT_TAKE1("AgentShopQuoteTTL", set_int, (void *)APR_OFFSETOF(dir_cfg, quote_ttl),
                  RSRC_CONF | ACCESS_CONF, "seconds a quote stays valid (default 600)"),
    AP_INIT_TAKE1("AgentShopConfirmationTTL", set_int,
                  (void *)APR_OFFSETOF(dir_cfg, confirmation_ttl), RSRC_CONF | ACCESS_CONF,
                  "seconds a confirmation link stays valid (default 86400)"),
    AP_INIT_TAKE1("AgentShopReturnWindow", set_int, (void *)APR_OFFSETOF(dir_cfg, return_window),
                  RSRC_CONF | ACCESS_CONF, "days after delivery a return is accepted (default 30)"),
    AP_INIT_TAKE1("AgentShopShipAfter", set_int, (void *)APR_OFFSETOF(dir_cfg, ship_after),
                  RSRC_CONF | ACCESS_CONF,
                  "seconds after placing that a demo order ships (default 3600)"),
    AP_INIT_TAKE1("AgentShopQuestionsPerDay", set_int,
                  (void *)APR_OFFSETOF(dir_cfg, questions_per_day), RSRC_CONF | ACCESS_CONF,
                  "questions one user may ask per UTC day (default 50)"),
    AP_INIT_TAKE1("AgentShopWriteWait", set_int, (void *)APR_OFFSETOF(dir_cfg, write_wait),
                  RSRC_CONF | ACCESS_CONF,
                  "seconds a write may wait for the database (other writers, another process "
                  "holding it) before it fails with 503 (default 10)"),
    {NULL},
};

/* ---- checks at start: a database the children can use ---- */

/* The database mod_dbd will open for a server, read from the configuration
 * tree (mod_dbd's own configuration is private to it), and whether that
 * server serves the API. */
typedef struct db_use {
    const char *driver, *params;
    int api;
} db_use;

static const char *first_word(apr_pool_t *p, const char *args)
{
    return args ? ap_getword_conf(p, &args) : NULL;
}

/* One level of the tree and what it contains, but no <VirtualHost>. */
static void scan_conf(apr_pool_t *p, const ap_directive_t *d, db_use *u)
{
    for (; d; d = d->next) {
        if (strcasecmp(d->directive, "<VirtualHost") == 0) continue;
        if (strcasecmp(d->directive, "DBDriver") == 0)
            u->driver = first_word(p, d->args);
        else if (strcasecmp(d->directive, "DBDParams") == 0)
            u->params = first_word(p, d->args);
        else if (strncasecmp(d->directive, "AgentShop", 9) == 0 ||
                 (strcasecmp(d->directive, "SetHandler") == 0 &&
                  strcasecmp(first_word(p, d->args), "agentshop") == 0))
            u->api = 1;
        if (d->first_child) scan_conf(p, d->first_child, u);
    }
}

/* The user httpd's children run as: User/Group when httpd starts as root. */
typedef struct run_as {
    uid_t uid;
    gid_t gid;
    const char *name;
} run_as;

static run_as child_user(apr_pool_t *p)
{
    run_as u = {geteuid(), getegid(), NULL};
    if (u.uid == 0) {
        u.uid = ap_unixd_config.user_id;
        u.gid = ap_unixd_config.group_id;
        u.name = ap_unixd_config.user_name;
    }
    if (!u.name) {
        struct passwd *pw = getpwuid(u.uid);
        u.name = pw ? apr_pstrdup(p, pw->pw_name) : apr_psprintf(p, "uid %ld", (long)u.uid);
    }
    return u;
}

static const char *run_user; /* the children's user, named in run-time errors */

/* The SQLite file and its directory (and -wal, -shm) usable by the process:
 * what is wrong, or NULL. *empty: the file has no bytes (so no schema). */
static const char *sqlite_files(apr_pool_t *p, const db_use *u, const run_as *who, int *empty)
{
    const char *f = u->params, *fix = "agentshopctl setup (as root) prepares it";
    const char *slash = strrchr(f, '/');
    const char *dir = !slash ? "." : slash == f ? "/" : apr_pstrndup(p, f, (apr_size_t)(slash - f));
    struct stat st;
    if (stat(f, &st) != 0)
        return apr_psprintf(p,
                            "the database %s does not exist (DBDParams); create it with "
                            "agentshopctl --params %s init, or %s, and let the user %s write "
                            "it and its directory",
                            f, f, fix, who->name);
    *empty = st.st_size == 0;
    if (access(f, R_OK | W_OK) != 0)
        return apr_psprintf(p,
                            "the database %s is not writable by the user %s that httpd's "
                            "children run as (%s); fix: chown %s %s*, or %s",
                            f, who->name, strerror(errno), who->name, f, fix);
    if (access(dir, W_OK | X_OK) != 0)
        return apr_psprintf(p,
                            "the directory %s of the database %s is not writable by the user %s "
                            "that httpd's children run as (%s; SQLite keeps its -wal and -shm "
                            "files there); fix: chown %s %s, or %s",
                            dir, f, who->name, strerror(errno), who->name, dir, fix);
    for (int i = 0; i < 2; i++) {
        const char *side = apr_pstrcat(p, f, i ? "-shm" : "-wal", NULL);
        if (access(side, F_OK) == 0 && access(side, R_OK | W_OK) != 0)
            return apr_psprintf(p,
                                "%s is not writable by the user %s that httpd's children run "
                                "as; fix: chown %s %s*",
                                side, who->name, who->name, f);
    }
    return NULL;
}

/* The schema there and of this build's version: what is wrong, or NULL.
 * *warn: only that PostgreSQL cannot be reached now. */
static const char *schema_state(apr_pool_t *p, const db_use *u, const run_as *who, int *warn)
{
    as_db db;
    const char *err = NULL;
    int v = 0;
    if (as_db_open(p, u->driver, u->params, &db, &err) != APR_SUCCESS) {
        if (strcmp(u->driver, "pgsql") != 0)
            return apr_psprintf(p, "cannot open the database %s as the user %s: %s", u->params,
                                who->name, err);
        *warn = 1;
        return apr_psprintf(p,
                            "cannot reach the PostgreSQL database \"%s\" now (%s); starting "
                            "anyway, mod_dbd connects when it can",
                            u->params, err);
    }
    apr_status_t rv = as_db_schema_version(&db, &v, &err);
    as_db_close(&db);
    if (rv != APR_SUCCESS) return apr_psprintf(p, "the database %s: %s", u->params, err);
    if (v == AS_SCHEMA_VERSION) return NULL;
    return v == 0 ? apr_psprintf(p,
                                 "the database %s has no schema; create it with agentshopctl "
                                 "--driver %s --params '%s' init",
                                 u->params, u->driver, u->params)
                  : apr_psprintf(p,
                                 "the database %s has schema version %d, this mod_agentshop "
                                 "needs version %d; %s",
                                 u->params, v, AS_SCHEMA_VERSION,
                                 v < AS_SCHEMA_VERSION
                                     ? apr_psprintf(p,
                                                    "agentshopctl --driver %s --params '%s' "
                                                    "init migrates it",
                                                    u->driver, u->params)
                                     : "it was written by a newer mod_agentshop: install that "
                                       "one again");
}

/* A message with any PostgreSQL password=... of a conninfo masked. */
static const char *no_password(apr_pool_t *p, const char *msg)
{
    const char *at = strstr(msg, "password=");
    if (!at) return msg;
    const char *end = at + 9;
    if (*end == '\'') { /* a quoted value, with \' and \\ escapes */
        for (end++; *end && *end != '\''; end++)
            end += *end == '\\' && end[1];
        end += *end == '\'';
    } else
        end += strcspn(end, " \t'\")");
    return apr_pstrcat(p, apr_pstrndup(p, msg, (apr_size_t)(at - msg)), "password=***",
                       no_password(p, end), NULL);
}

/* In a child process running as the children's user: writes what is wrong to
 * fd; exits 0 (good), 1 (refuse to start) or 2 (warn: no connection to
 * PostgreSQL now, mod_dbd retries). */
static int probe_db(const db_use *u, const run_as *who, int fd)
{
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    int empty = 0, warn = 0;
    const char *msg = strcmp(u->driver, "sqlite3") == 0 ? sqlite_files(p, u, who, &empty) : NULL;
    if (!msg && empty)
        msg = apr_psprintf(p,
                           "the database %s is empty: it has no schema; create it with "
                           "agentshopctl --params '%s' init",
                           u->params, u->params);
    if (!msg) msg = schema_state(p, u, who, &warn);
    if (!msg) return 0;
    msg = no_password(p, msg);
    if (write(fd, msg, strlen(msg)) < 0) return 1;
    return warn ? 2 : 1;
}

/* Runs probe_db in a child process, as the children's user when httpd runs
 * as root (so that the check is the kernel's own, and any file SQLite makes
 * belongs to that user). */
static int check_db(apr_pool_t *p, server_rec *s, const db_use *u, const run_as *who)
{
    int fds[2];
    if (pipe(fds) != 0) return OK;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (geteuid() == 0 && (initgroups(who->name, who->gid) != 0 || setgid(who->gid) != 0 ||
                               setuid(who->uid) != 0))
            _exit(1);
        _exit(probe_db(u, who, fds[1]));
    }
    close(fds[1]);
    char buf[2048];
    size_t n = 0;
    ssize_t got;
    while (pid > 0 && n < sizeof(buf) - 1 && (got = read(fds[0], buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)got;
    buf[n] = '\0';
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, errno, s,
                     "mod_agentshop: cannot check the database %s at start", u->params);
        return OK;
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (rc == 0) return OK;
    if (rc == 2) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, "mod_agentshop: %s", buf);
        return OK;
    }
    ap_log_error(
        APLOG_MARK, APLOG_CRIT, 0, s, "mod_agentshop: refusing to start: %s",
        n ? buf
          : apr_psprintf(p, "cannot check the database %s as the user %s", u->params, who->name));
    return HTTP_INTERNAL_SERVER_ERROR;
}

/* The server a <VirtualHost> section of the tree made. */
static server_rec *server_of(server_rec *s, const ap_directive_t *d)
{
    for (server_rec *v = s->next; v; v = v->next)
        if (v->defn_name && d->filename && strcmp(v->defn_name, d->filename) == 0 &&
            v->defn_line_number == (unsigned)d->line_num)
            return v;
    return NULL;
}

static void note_file(apr_pool_t *pconf, server_rec *s, const db_use *u)
{
    srv_cfg *sc = s ? ap_get_module_config(s->module_config, &agentshop_module) : NULL;
    if (sc && u->driver) { /* a virtual host's own driver replaces the main server's */
        sc->db_file = strcmp(u->driver, "sqlite3") == 0 && u->params
                          ? apr_pstrdup(pconf, u->params)
                          : NULL;
        sc->db_key = u->params ? apr_pstrcat(pconf, u->driver, " ", u->params, NULL) : NULL;
    }
    if (sc && u->driver && u->params && index_dir) {
        /* one name per database: the driver and its parameters, hashed */
        as_mem mem = as_db_pool_mem(pconf);
        const char *id = apr_pstrcat(pconf, u->driver, " ", u->params, NULL);
        const char *hex = as_sha256_hex(&mem, id, strlen(id));
        sc->index_prefix = apr_pstrcat(pconf, index_dir, "/", apr_pstrndup(pconf, hex, 16), NULL);
    }
}

/* The search index files' directory (AgentShopSearchIndexDir), made at
 * start-up for the children's user. Its files are kept across restarts: a
 * file is named by its database and its catalogue's random number
 * (sql/as_db_search.c), so a database made again at the same path does not
 * find the old one's files, and a graceful restart's new children map the
 * file the old ones built instead of waiting for a build. Only the temporary
 * files of writers that died are removed. index_dir is NULL when it cannot be
 * used (each child then builds its own index in memory). */
static const char *index_dir_make(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    const char *dir = index_dir_conf ? index_dir_conf
                                     : ap_runtime_dir_relative(pconf, "agentshop-index");
    run_as who = child_user(ptemp);
    apr_status_t rv = apr_dir_make_recursive(dir, APR_FPROT_OS_DEFAULT, ptemp);
    struct stat st;
    if (rv == APR_SUCCESS && geteuid() == 0 && chown(dir, who.uid, who.gid) != 0) rv = errno;
    /* Readable by all (the files are the public catalogue; tools that walk a
     * tree, like Apache::Test's, must not trip on it), writable by the
     * children's user alone: nobody else may plant a file they would map. */
    if (rv == APR_SUCCESS && chmod(dir, 0755) != 0) rv = errno;
    if (rv == APR_SUCCESS && (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != who.uid ||
                              (st.st_mode & (S_IWGRP | S_IWOTH))))
        rv = APR_EACCES;
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     "mod_agentshop: the search index directory %s cannot be made, or is not "
                     "owned by %s alone: each child builds its own search index in memory "
                     "(set AgentShopSearchIndexDir to a directory only that user can write)",
                     dir, who.name);
        return NULL;
    }
    apr_dir_t *d;
    apr_finfo_t f;
    if (apr_dir_open(&d, dir, ptemp) == APR_SUCCESS) {
        while (apr_dir_read(&f, APR_FINFO_NAME, d) == APR_SUCCESS) {
            /* "<file>.idx.tmp.<pid>": a child of the generation a graceful
             * restart replaces may still be writing its own */
            static const char tmp[] = ".idx.tmp.";
            const char *t = f.name[0] != '.' ? strstr(f.name, tmp) : NULL;
            char *end;
            long pid = t ? strtol(t + sizeof(tmp) - 1, &end, 10) : 0;
            if (pid > 0 && !*end && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
                apr_file_remove(apr_pstrcat(ptemp, dir, "/", f.name, NULL), ptemp);
        }
        apr_dir_close(d);
    }
    return apr_pstrdup(pconf, dir);
}

/* Every database a server that serves the API will use, checked once. */
static int check_databases(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    db_use top = {NULL, NULL, 0};
    scan_conf(ptemp, ap_conftree, &top);
    apr_array_header_t *uses = apr_array_make(ptemp, 4, sizeof(db_use));
    APR_ARRAY_PUSH(uses, db_use) = top;
    for (server_rec *v = s; v; v = v->next)
        note_file(pconf, v, &top);
    for (const ap_directive_t *d = ap_conftree; d; d = d->next)
        if (strcasecmp(d->directive, "<VirtualHost") == 0) {
            db_use v = top;
            scan_conf(ptemp, d->first_child, &v);
            v.api |= top.api;
            APR_ARRAY_PUSH(uses, db_use) = v;
            note_file(pconf, server_of(s, d), &v);
        }
    run_as who = child_user(ptemp);
    run_user = apr_pstrdup(pconf, who.name);
    apr_hash_t *seen = apr_hash_make(ptemp);
    for (int i = 0; i < uses->nelts; i++) {
        const db_use *u = &APR_ARRAY_IDX(uses, i, db_use);
        if (!u->api || !u->driver || !u->params) continue;
        if (strcmp(u->driver, "sqlite3") != 0 && strcmp(u->driver, "pgsql") != 0) continue;
        const char *key = apr_pstrcat(ptemp, u->driver, " ", u->params, NULL);
        if (apr_hash_get(seen, key, APR_HASH_KEY_STRING)) continue;
        apr_hash_set(seen, key, APR_HASH_KEY_STRING, key);
        if (check_db(ptemp, s, u, &who) != OK) return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

/* One cell of versions (core/as_versions.h) per database, in anonymous shared
 * memory made before the children fork: the hosts of one database share it. */
static int make_versions(apr_pool_t *pconf, server_rec *s)
{
    size_t n = 0;
    for (server_rec *v = s; v; v = v->next)
        n++;
    apr_status_t rv = apr_shm_create(&versions_shm, n * sizeof(as_versions_cell), NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot create the shared memory of the database versions");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    as_versions_cell *cells = apr_shm_baseaddr_get(versions_shm);
    apr_hash_t *of = apr_hash_make(pconf);
    size_t used = 0;
    for (server_rec *v = s; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        sc->versions = sc->db_key ? apr_hash_get(of, sc->db_key, APR_HASH_KEY_STRING) : NULL;
        if (sc->versions || !sc->db_key) continue;
        sc->versions = &cells[used++];
        as_versions_init(sc->versions);
        apr_hash_set(of, sc->db_key, APR_HASH_KEY_STRING, sc->versions);
    }
    return OK;
}

/* One program per distinct AgentShopConfirmationNotify command, shared by
 * the virtual hosts that name it; children inherit its pipe. */
static int open_notify(apr_pool_t *pconf, server_rec *s)
{
    apr_hash_t *open = apr_hash_make(pconf);
    for (server_rec *v = s; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        if (!sc->notify_cmd) continue;
        sc->notify = apr_hash_get(open, sc->notify_cmd, APR_HASH_KEY_STRING);
        if (sc->notify) continue;
        sc->notify = ap_open_piped_log_ex(pconf, sc->notify_cmd, APR_SHELLCMD_ENV);
        if (!sc->notify) {
            ap_log_error(APLOG_MARK, APLOG_CRIT, 0, v,
                         "mod_agentshop: AgentShopConfirmationNotify: cannot start '%s'",
                         sc->notify_cmd);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        apr_hash_set(open, sc->notify_cmd, APR_HASH_KEY_STRING, sc->notify);
    }
    return OK;
}

/* A confirmation's line to the notify program: one write, so lines of
 * concurrent children never interleave (a pipe keeps writes of up to
 * PIPE_BUF bytes whole; longer lines are not written). A program that died
 * is restarted by the parent; lines written meanwhile wait in the pipe. */
static void notify_write(void *baton, const char *line)
{
    request_rec *r = baton;
    srv_cfg *sc = ap_get_module_config(r->server->module_config, &agentshop_module);
    size_t n = strlen(line);
    if (!sc->notify || n + 1 > PIPE_BUF) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "a confirmation's notice of %zu bytes was not sent to "
                      "AgentShopConfirmationNotify",
                      n);
        return;
    }
    char *buf = apr_pstrcat(r->pool, line, "\n", NULL);
    apr_size_t written = 0;
    apr_status_t rv = apr_file_write_full(ap_piped_log_write_fd(sc->notify), buf, n + 1, &written);
    if (rv != APR_SUCCESS)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                      "writing a confirmation's notice to AgentShopConfirmationNotify failed");
}

static int post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    (void)pconf;
    (void)plog;
    (void)ptemp;
    if (api_bases && !signing_key_seen) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "mod_agentshop: AgentShopSigningKeyFile is not set; confirmation links "
                     "cannot be signed. Create a secret (openssl rand -hex 32 > FILE) and set "
                     "AgentShopSigningKeyFile FILE");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (api_bases && !base_url_seen)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "mod_agentshop: AgentShopBaseURL is not set: signed links and MCP's own "
                     "origin are built from each virtual host's ServerName (%s here) or a "
                     "ServerAlias the request named, and the port it arrived on; never from "
                     "another Host header. Behind a proxy or TLS terminator set "
                     "AgentShopBaseURL https://HOST/v1",
                     s->server_hostname ? s->server_hostname : "(none)");
    dbd_acquire = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_acquire);
    dbd_open = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_open);
    dbd_close = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_close);
    if (!dbd_acquire || !dbd_open || !dbd_close) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "mod_agentshop needs mod_dbd: add LoadModule dbd_module");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_status_t rv = ap_global_mutex_create(&write_mutex, NULL, WRITE_MUTEX, NULL, s, pconf, 0);
    if (rv == APR_SUCCESS)
        rv = ap_global_mutex_create(&rate_mutex, NULL, RATE_MUTEX, NULL, s, pconf, 0);
    if (rv == APR_SUCCESS)
        rv = apr_shm_create(&rate_shm, RATE_SLOTS * sizeof(rate_slot), NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot create its mutexes or shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rate_table = apr_shm_baseaddr_get(rate_shm);
    memset(rate_table, 0, RATE_SLOTS * sizeof(rate_slot));
    rv = apr_generate_random_bytes(rate_secret, sizeof(rate_secret));
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "mod_agentshop: cannot draw the rate limiter's secret");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    index_dir = api_bases ? index_dir_make(pconf, ptemp, s) : NULL;
    if (open_notify(pconf, s) != OK) return HTTP_INTERNAL_SERVER_ERROR;
    int ok = check_databases(pconf, ptemp, s);
    return ok == OK ? make_versions(pconf, s) : ok;
}

static void index_log(void *baton, int level, const char *msg)
{
    ap_log_error(APLOG_MARK, level, 0, baton, "agentshop: %s", msg);
}

/* ---- the search index's own connection, for its background builds ---- */

typedef struct index_conn {
    apr_pool_t *pool; /* the build's: results, and the connection's check */
    server_rec *s;
    ap_dbd_t *conn;
    as_db db;
} index_conn;

static apr_status_t conn_attach(as_db *db, const ap_dbd_t *conn, const char **err);

static void index_db_log(void *baton, const char *msg)
{
    ap_log_error(APLOG_MARK, APLOG_ERR, 0, baton, "database (search index build): %s", msg);
}

/* A connection from mod_dbd's pool of the server (a once-only one without
 * DBDPersist), set up as a request's is, held by the build thread until
 * index_store_close. The pool is the thread's alone: no allocator shared with
 * the child's other threads. */
static int index_store_open(void *baton, as_store *st, void **out)
{
    server_rec *s = baton;
    apr_pool_t *p;
    if (apr_pool_create_unmanaged_ex(&p, NULL, NULL) != APR_SUCCESS) return AS_EDB;
    index_conn *ic = apr_pcalloc(p, sizeof(*ic));
    ic->pool = p;
    ic->s = s;
    const char *err = NULL;
    if (!(ic->conn = dbd_open(p, s))) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     "no database connection from mod_dbd for the search index build (check "
                     "DBDriver/DBDParams)");
        apr_pool_destroy(p);
        return AS_EDB;
    }
    if (conn_attach(&ic->db, ic->conn, &err) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "database set-up failed: %s", err);
        dbd_close(s, ic->conn);
        apr_pool_destroy(p);
        return AS_EDB;
    }
    ic->db.pool = p;
    ic->db.log = index_db_log;
    ic->db.log_baton = s; /* reads only: no writer lock */
    *st = as_db_store(&ic->db);
    *out = ic;
    return AS_OK;
}

static void index_store_close(void *baton, void *conn)
{
    (void)baton;
    index_conn *ic = conn;
    dbd_close(ic->s, ic->conn);
    apr_pool_destroy(ic->pool);
}

#define INDEX_WAIT_MAX_MS 60000 /* a search with no index yet waits at most this (or Timeout) */

/* The child's caches of every virtual host, freed when the child exits. */
static apr_status_t child_caches_free(void *data)
{
    for (server_rec *v = data; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        as_view_cache_destroy(sc->views);
        as_view_cache_destroy(sc->search_ids);
        as_view_cache_destroy(sc->search_pages);
        as_search_index_destroy(sc->index);
        sc->views = sc->search_ids = sc->search_pages = NULL;
        sc->index = NULL;
    }
    return APR_SUCCESS;
}

static void child_init(apr_pool_t *p, server_rec *s)
{
    if (!write_mutex) return;
    for (server_rec *v = s; v; v = v->next) {
        srv_cfg *sc = ap_get_module_config(v->module_config, &agentshop_module);
        apr_int64_t n = sc->view_slots != UNSET ? sc->view_slots : DEFAULT_VIEW_SLOTS;
        if (n > 0) sc->views = as_view_cache_create((size_t)n, VIEW_MAX_BYTES);
        n = sc->search_slots != UNSET ? sc->search_slots : DEFAULT_SEARCH_SLOTS;
        if (n > 0) {
            sc->search_ids = as_view_cache_create((size_t)n, SEARCH_IDS_MAX_BYTES);
            sc->search_pages = as_view_cache_create((size_t)n, SEARCH_PAGE_MAX_BYTES);
        }
        /* empty until the first search, which has the background thread build it */
        sc->index = as_search_index_create(sc->index_prefix, index_log, v);
        apr_int64_t wait = apr_time_as_msec(v->timeout);
        as_search_opener o = {
            index_store_open, index_store_close, v,
            (long)(wait > 0 && wait < INDEX_WAIT_MAX_MS ? wait : INDEX_WAIT_MAX_MS)};
        if (sc->index) as_search_index_background(sc->index, &o);
    }
    /* Before the child pool's subpools go, mod_dbd's connection pool among
     * them: a build under way gives its connection back first. */
    apr_pool_pre_cleanup_register(p, s, child_caches_free);
    apr_status_t rv =
        apr_global_mutex_child_init(&write_mutex, apr_global_mutex_lockfile(write_mutex), p);
    if (rv == APR_SUCCESS)
        rv = apr_global_mutex_child_init(&rate_mutex, apr_global_mutex_lockfile(rate_mutex), p);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "mod_agentshop: cannot attach its mutex");
}

/* ---- the request ---- */

typedef struct req_ctx {
    request_rec *r;
    as_db db;
} req_ctx;

static void core_log(void *baton, int level, const char *msg)
{
    request_rec *r = baton;
    ap_log_rerror(APLOG_MARK, level, 0, r, "%s", msg);
}

/* SQLite's words for a file or directory the process may not write. */
static const char *readonly_hint(request_rec *r, const char *msg)
{
    if (!strstr(msg, "readonly") && !strstr(msg, "read-only") && !strstr(msg, "unable to open"))
        return "";
    srv_cfg *sc = ap_get_module_config(r->server->module_config, &agentshop_module);
    const char *file = sc->db_file ? sc->db_file : "(DBDParams)";
    return apr_psprintf(r->pool,
                        " (the database %s or its directory is not writable by the user %s "
                        "httpd's children run as; fix: chown %s %s* and its directory, or "
                        "agentshopctl setup)",
                        file, run_user ? run_user : "?", run_user ? run_user : "USER", file);
}

static void db_log(void *baton, const char *msg)
{
    request_rec *r = baton;
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "database: %s%s", msg, readonly_hint(r, msg));
}

/* Waits for the other writers no longer than the write may wait in all
 * (db->write_deadline, AgentShopWriteWait): a writer stuck on a database that
 * another process holds fails there, and those queued behind it fail at their
 * own deadlines instead of waiting for it without end. */
static int write_lock(as_db *db)
{
    request_rec *r = db->log_baton;
    apr_interval_time_t left = db->write_deadline ? db->write_deadline - apr_time_now() : -1;
    apr_status_t rv = left < 0 ? apr_global_mutex_lock(write_mutex)
                               : apr_global_mutex_timedlock(write_mutex, left);
    if (rv == APR_ENOTIMPL) rv = apr_global_mutex_lock(write_mutex);
    if (APR_STATUS_IS_TIMEUP(rv))
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "the write waited %" APR_TIME_T_FMT " ms for other writers, as long as "
                      "AgentShopWriteWait allows; nothing was written",
                      apr_time_as_msec(db->write_wait ? db->write_wait : AS_DB_WRITE_WAIT));
    else if (rv != APR_SUCCESS)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "cannot take the write mutex");
    return rv == APR_SUCCESS ? 0 : -1;
}

static void write_unlock(as_db *db)
{
    (void)db;
    apr_global_mutex_unlock(write_mutex);
}

/* Whatever happens, a request never leaves a transaction open on a pooled
 * connection, nor the write lock held. Runs before mod_dbd takes the
 * connection back (cleanups run last registered, first). */
static apr_status_t request_done(void *data)
{
    as_db *db = data;
    if (db->trans) {
        as_db_end_t(db, db->trans, 0);
        db->trans = NULL;
        db->wrote = 0; /* rolled back: nothing to sync */
    }
    as_db_write_unlock(db);
    return APR_SUCCESS;
}

/* A mod_dbd connection ready for the store: our statements prepared on it and
 * SQLite's PRAGMAs set (once per connection), for a request (acquire) and for
 * the search index's builds (index_store_open). */
static apr_status_t conn_attach(as_db *db, const ap_dbd_t *conn, const char **err)
{
    apr_status_t rv = as_db_conn_init(conn->pool, conn->driver, conn->handle, conn->prepared, err);
    if (rv != APR_SUCCESS) return rv;
    db->driver = conn->driver;
    db->handle = conn->handle;
    db->prepared = conn->prepared;
    db->pg = strcmp(apr_dbd_name(conn->driver), "pgsql") == 0;
    return APR_SUCCESS;
}

/* Connections are taken from mod_dbd only when core first needs storage. */
static int acquire(as_db *db)
{
    request_rec *r = db->log_baton;
    ap_dbd_t *conn = dbd_acquire(r);
    if (!conn) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "no database connection from mod_dbd (check DBDriver/DBDParams)");
        return -1;
    }
    const char *err = NULL;
    if (conn_attach(db, conn, &err) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "database set-up failed: %s", err);
        return -1;
    }
    if (write_mutex) {
        db->lock = write_lock;
        db->unlock = write_unlock;
    }
    apr_pool_cleanup_register(r->pool, db, request_done, apr_pool_cleanup_null);
    return 0;
}

/* The raw (still percent-encoded) path below the handler's location. */
static const char *api_path(request_rec *r, const dir_cfg *c)
{
    const char *raw = r->unparsed_uri && r->unparsed_uri[0] == '/'
                          ? r->unparsed_uri
                          : ap_os_escape_path(r->pool, r->uri, 0);
    size_t n = strcspn(raw, "?#");
    const char *base = c->base && c->base[0] == '/' ? c->base : "/v1";
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        bl--;
    if (n < bl || strncmp(raw, base, bl) != 0 || (n > bl && raw[bl] != '/')) return NULL;
    return apr_pstrndup(r->pool, raw + bl, n - bl);
}

/* Reads the body, at most MAX_BODY bytes (chunked bodies too). Returns OK,
 * HTTP_REQUEST_ENTITY_TOO_LARGE, or another status for a broken body. */
static int read_body(request_rec *r, const char **body, apr_size_t *len)
{
    *body = NULL;
    *len = 0;
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    if (cl) {
        char *end;
        apr_int64_t n = apr_strtoi64(cl, &end, 10);
        if (*end || n < 0) return HTTP_BAD_REQUEST;
        if (n > MAX_BODY) return HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    int rc = ap_setup_client_block(r, REQUEST_CHUNKED_DECHUNK);
    if (rc != OK) return rc;
    if (!ap_should_client_block(r)) return OK;
    char *buf = apr_palloc(r->pool, MAX_BODY + 1);
    apr_size_t n = 0;
    for (;;) {
        long got = ap_get_client_block(r, buf + n, MAX_BODY + 1 - n);
        if (got < 0) return HTTP_BAD_REQUEST;
        if (got == 0) break;
        n += (apr_size_t)got;
        if (n > MAX_BODY) {
            /* drain politely? no: the connection is closed after a 413 */
            r->connection->keepalive = AP_CONN_CLOSE;
            return HTTP_REQUEST_ENTITY_TOO_LARGE;
        }
    }
    buf[n] = '\0';
    *body = buf;
    *len = n;
    return OK;
}

/* Where links point: AgentShopBaseURL, else this request's scheme, host and base. */
/* The host a link may name: the one the request asked for only when it is
 * one of the virtual host's configured names (ServerName, a ServerAlias
 * without wildcards), else its ServerName. Never whatever a client put in
 * Host: a link is read by a person, and MCP's own origin comes from it. */
static const char *vhost_name(request_rec *r)
{
    server_rec *s = r->server;
    const char *asked = r->hostname;
    if (asked && s->server_hostname && strcasecmp(asked, s->server_hostname) == 0) return asked;
    for (int i = 0; asked && s->names && i < s->names->nelts; i++)
        if (strcasecmp(asked, APR_ARRAY_IDX(s->names, i, const char *)) == 0) return asked;
    return s->server_hostname ? s->server_hostname : "localhost";
}

static const char *base_url(request_rec *r, const dir_cfg *c)
{
    if (c->base_url) return c->base_url;
    const char *base = c->base && c->base[0] == '/' ? c->base : "/v1";
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/')
        bl--;
    const char *scheme = ap_http_scheme(r);
    const char *host = vhost_name(r);
    apr_port_t port = r->connection->local_addr ? r->connection->local_addr->port : 0;
    bool usual = port == 0 || (port == 80 && strcmp(scheme, "http") == 0) ||
                 (port == 443 && strcmp(scheme, "https") == 0);
    return apr_psprintf(r->pool, "%s://%s%s%s%s%.*s", scheme, strchr(host, ':') ? "[" : "", host,
                        strchr(host, ':') ? "]" : "",
                        usual ? "" : apr_psprintf(r->pool, ":%u", (unsigned)port), (int)bl, base);
}

/* jansson's encoder writes into heap buckets of APR_BUCKET_BUFF_SIZE at the
 * brigade's tail: no intermediate string. Not apr_brigade_write: once a piece
 * does not fit what is left of its buffer it gives that piece a bucket of its
 * own size, and from then on every piece (jansson's are a few bytes) gets its
 * own bucket, thousands for a search page (docs/performance.md). */
typedef struct body_writer {
    apr_bucket_brigade *bb;
    apr_bucket *e; /* the heap bucket being filled, NULL before the first */
    char *buf;
    apr_size_t cap;
    as_sha256 *hash; /* of what is written, for the ETag; NULL: none */
} body_writer;

static int brigade_write(const char *buf, size_t n, void *ctx)
{
    body_writer *w = ctx;
    as_sha256_add(w->hash, buf, n);
    while (n > 0) {
        if (!w->e || w->e->length == w->cap) {
            apr_size_t cap = n > APR_BUCKET_BUFF_SIZE ? n : APR_BUCKET_BUFF_SIZE;
            char *b = apr_bucket_alloc(cap, w->bb->bucket_alloc);
            if (!b) return -1;
            w->e = apr_bucket_heap_create(b, cap, apr_bucket_free, w->bb->bucket_alloc);
            w->e->length = 0; /* what is written so far */
            w->buf = b;
            w->cap = cap;
            APR_BRIGADE_INSERT_TAIL(w->bb, w->e);
        }
        apr_size_t k = w->cap - w->e->length;
        if (k > n) k = n;
        memcpy(w->buf + w->e->length, buf, k);
        w->e->length += k;
        buf += k;
        n -= k;
    }
    return 0;
}

/* Sends the body in bb with its Content-Length (nothing for HEAD). A client
 * gone away is not the handler's error. */
static int send_body(request_rec *r, apr_bucket_brigade *bb)
{
    apr_off_t n = 0;
    apr_brigade_length(bb, 1, &n);
    ap_set_content_length(r, n);
    if (r->header_only)
        apr_brigade_cleanup(bb);
    else
        ap_pass_brigade(r->output_filters, bb);
    return OK;
}

/* Who may read the answer from a page of another origin (core decided). */
static void cors_headers(request_rec *r, const as_response *resp)
{
    if (resp->vary_origin || (resp->cors_origin && strcmp(resp->cors_origin, "*") != 0))
        apr_table_mergen(r->headers_out, "Vary", "Origin");
    if (!resp->cors_origin) return;
    apr_table_setn(r->headers_out, "Access-Control-Allow-Origin", resp->cors_origin);
    if (resp->cors_methods) { /* a preflight's answer */
        apr_table_setn(r->headers_out, "Access-Control-Allow-Methods", resp->cors_methods);
        apr_table_setn(r->headers_out, "Access-Control-Allow-Headers", AS_CORS_ALLOW_HEADERS);
        apr_table_setn(r->headers_out, "Access-Control-Max-Age", "600");
    } else {
        apr_table_setn(r->headers_out, "Access-Control-Expose-Headers", AS_CORS_EXPOSE_HEADERS);
    }
}

/* A public read's validator and how long a client may keep it: "no-cache"
 * (keep, but ask again with If-None-Match each time: stock is live), or
 * max-age for the documents. Compression negotiates the same answer. */
static void cache_headers(request_rec *r, const as_response *resp, const char *etag)
{
    apr_table_setn(r->headers_out, "Cache-Control",
                   resp->max_age > 0 ? apr_psprintf(r->pool, "public, max-age=%d", resp->max_age)
                                     : "no-cache");
    apr_table_setn(r->headers_out, "ETag", etag);
    apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
}

/* 304 when the client's copy is this answer: headers only. */
static bool not_modified(request_rec *r, as_response *resp, const char *etag)
{
    if (!etag) return false;
    cache_headers(r, resp, etag);
    if (!resp->not_modified &&
        !as_etag_matches(apr_table_get(r->headers_in, "If-None-Match"), etag))
        return false;
    r->status = HTTP_NOT_MODIFIED;
    as_response_clear(resp);
    return true;
}

static int write_response(request_rec *r, as_response *resp)
{
    as_mem mem = as_db_pool_mem(r->pool);
    r->status = resp->status;
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "X-Content-Type-Options", "nosniff");
    if (resp->allow) apr_table_setn(r->headers_out, "Allow", resp->allow);
    if (resp->retry_after > 0)
        apr_table_setn(r->headers_out, "Retry-After", apr_itoa(r->pool, resp->retry_after));
    if (resp->replayed) apr_table_setn(r->headers_out, "Idempotent-Replayed", "true");
    if (resp->location) apr_table_setn(r->headers_out, "Location", resp->location);
    cors_headers(r, resp);
    if (resp->not_modified) {
        not_modified(r, resp, resp->etag);
        return OK;
    }
    if (resp->no_body) {
        as_response_clear(resp);
        ap_set_content_length(r, 0);
        return OK;
    }
    if (resp->html || resp->raw) {
        const char *body = resp->raw ? resp->raw : resp->html;
        size_t hn = resp->raw ? resp->raw_len : strlen(resp->html);
        const char *type = resp->raw ? resp->content_type : "text/html; charset=utf-8";
        ap_set_content_type(r, type ? type : "application/octet-stream");
        if (strncmp(r->content_type, "text/html", 9) == 0 && !resp->cacheable) {
            /* a person's page behind a signed link: never compressed, so
             * that its length tells nothing of its secrets (BREACH) */
            apr_table_setn(r->subprocess_env, "no-gzip", "1");
            apr_table_setn(r->subprocess_env, "no-brotli", "1");
        }
        if (strncmp(r->content_type, "text/html", 9) == 0) {
            /* script-src 'self': the passkey ceremonies' webauthn.js, no inline script */
            apr_table_setn(r->headers_out, "Content-Security-Policy",
                           "default-src 'none'; script-src 'self'; connect-src 'self'; "
                           "style-src 'unsafe-inline'; form-action 'self'; "
                           "frame-ancestors 'none'");
            apr_table_setn(r->headers_out, "Referrer-Policy", "no-referrer");
        }
        if (resp->cacheable &&
            not_modified(r, resp, resp->etag ? resp->etag : as_etag_of(&mem, body, hn)))
            return OK;
        as_response_clear(resp);
        /* the body lives as long as the request (pool, or compiled in): sent in place */
        apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        APR_BRIGADE_INSERT_TAIL(bb,
                                apr_bucket_transient_create(body, hn, r->connection->bucket_alloc));
        return send_body(r, bb);
    }
    ap_set_content_type(r, "application/json");
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    body_writer w = {bb, NULL, NULL, 0, resp->cacheable ? as_sha256_begin() : NULL};
    bool failed_encoding = false;
    if (!resp->body || json_dump_callback(resp->body, brigade_write, &w, AS_JSON_DUMP_FLAGS) != 0) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "response could not be encoded");
        apr_brigade_cleanup(bb); /* what was written of it */
        w.e = NULL;
        static const char failed[] = "{\"error\":\"INTERNAL_ERROR\",\"message\":\"The response "
                                     "could not be encoded.\"}";
        brigade_write(failed, sizeof failed - 1, &w);
        r->status = HTTP_INTERNAL_SERVER_ERROR;
        failed_encoding = true;
    }
    int wrote = brigade_write("\n", 1, &w);
    unsigned char digest[32];
    bool hashed = as_sha256_end(w.hash, digest); /* and frees it */
    if (wrote != 0) {
        as_response_clear(resp);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (hashed && !failed_encoding && not_modified(r, resp, as_etag_from_digest(&mem, digest))) {
        apr_brigade_cleanup(bb);
        return OK;
    }
    as_response_clear(resp);
    return send_body(r, bb);
}

static const char *base_of(const char *path)
{
    static const char *const fallback = "/v1";
    int n = api_bases ? api_bases->nelts : 1;
    for (int i = 0; i < n; i++) {
        const char *b = api_bases ? APR_ARRAY_IDX(api_bases, i, const char *) : fallback;
        size_t bl = strlen(b);
        while (bl > 1 && b[bl - 1] == '/')
            bl--;
        if (strncmp(path, b, bl) == 0 && strchr("/?", path[bl])) return b;
    }
    return NULL;
}

/* Errors httpd raises before the handler (bad escapes, encoded slashes, body
 * limits) are redirected to the handler, which answers them as JSON. */
/* The note that keeps a request's real query string when the one httpd logs
 * was masked (mask_tokens). */
static const char *const QUERY_NOTE = "agentshop-query";
#define TOKEN_MASK "[masked]"

/* s with the value of every `token=` parameter (at the start, or after '?',
 * '&' or ';') replaced by TOKEN_MASK, up to '&', ';', '#', a space or the
 * end; NULL when s has none. */
static const char *token_masked(apr_pool_t *p, const char *s)
{
    if (!s || !strstr(s, "token=")) return NULL;
    size_t n = strlen(s);
    char *out = apr_palloc(p, n + 1 + (n / 6 + 1) * (sizeof(TOKEN_MASK) - 1));
    char *o = out;
    bool any = false;
    for (size_t i = 0; i < n;) {
        bool starts = strncmp(s + i, "token=", 6) == 0 && (i == 0 || strchr("?&;", s[i - 1]));
        if (!starts) {
            *o++ = s[i++];
            continue;
        }
        memcpy(o, "token=" TOKEN_MASK, 6 + sizeof(TOKEN_MASK) - 1);
        o += 6 + sizeof(TOKEN_MASK) - 1;
        i += 6;
        while (i < n && !strchr("&;# ", s[i]))
            i++;
        any = true;
    }
    *o = '\0';
    return any ? out : NULL;
}

/* A confirmation link's token must reach no access log, whatever its format:
 * the request line (%r), the query (%q, %{QUERY_STRING}e), the URL in a
 * Referer (the page's own POST comes from the link). The handler reads the
 * real query from a note; what httpd keeps and logs is masked. */
static void mask_tokens(request_rec *r)
{
    const char *args = token_masked(r->pool, r->args);
    if (args) {
        apr_table_setn(r->notes, QUERY_NOTE, r->args);
        r->args = (char *)args;
        r->parsed_uri.query = (char *)args;
    }
    const char *line = token_masked(r->pool, r->the_request);
    if (line) r->the_request = (char *)line;
    const char *uri = token_masked(r->pool, r->unparsed_uri);
    if (uri) r->unparsed_uri = (char *)uri;
    const char *ref = token_masked(r->pool, apr_table_get(r->headers_in, "Referer"));
    if (ref) apr_table_setn(r->headers_in, "Referer", ref);
}

/* The query string the client sent. */
static const char *api_query(request_rec *r)
{
    const char *q = apr_table_get(r->notes, QUERY_NOTE);
    return q ? q : r->args;
}

/* A request under an API base is not mapped to the file system, as mod_proxy
 * does for the locations it serves: http_core's map_to_storage (the walk of
 * <Directory> sections and .htaccess files, a stat() per path component)
 * does nothing for the handler and cost a tenth of a product view. So
 * <Directory> rules do not apply under the base; its <Location> does
 * (docs/deploy.md). And TRACE, which http_core would answer by echoing the
 * request back, the agent key in Authorization included, goes to the handler
 * too, which refuses it (405 METHOD_NOT_ALLOWED) like any method the API does
 * not serve. */
static int api_map_to_storage(request_rec *r)
{
    return r->uri && base_of(r->uri) ? OK : DECLINED;
}

static int post_read_request(request_rec *r)
{
    const char *path = r->unparsed_uri;
    if (!path || path[0] != '/') return DECLINED;
    const char *base = base_of(path);
    if (!base) return DECLINED;
    mask_tokens(r);
    const char *target =
        apr_pstrcat(r->pool, base, base[strlen(base) - 1] == '/' ? "" : "/", ".error", NULL);
    static const int codes[] = {400, 401, 403, 404, 405, 408, 411,
                                413, 414, 415, 431, 500, 501, 503};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        ap_custom_response(r, codes[i], target);
    return DECLINED;
}

/* Errors httpd sends with its own page before any <Location> applies (a request
 * line over LimitRequestLine, headers over LimitRequestFieldSize): when the
 * request line names one of our bases, the page is replaced by the JSON error. */
static const char *JSON_ERROR_FILTER = "AGENTSHOP_JSON_ERROR";

static const char *request_line_path(request_rec *r)
{
    const char *line = r->the_request;
    if (!line) return NULL;
    const char *sp = strchr(line, ' ');
    return sp && sp[1] == '/' ? sp + 1 : NULL;
}

static void insert_error_filter(request_rec *r)
{
    const char *path = request_line_path(r);
    if (r->status < 400 || !path || !base_of(path)) return;
    if (r->handler && strcmp(r->handler, "agentshop") == 0 && r->prev) return;
    ap_add_output_filter(JSON_ERROR_FILTER, NULL, r, r->connection);
}

static apr_status_t json_error_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    apr_brigade_cleanup(bb); /* httpd's HTML page */
    ap_remove_output_filter(f);
    as_response resp = {0};
    /* Before any URL mapping httpd refuses with 400 only what it read of the
     * request line and headers. */
    as_respond_http_refusal(&resp, r->status, "headers");
    char *s = json_dumps(resp.body, JSON_COMPACT);
    as_response_clear(&resp);
    if (!s) return APR_ENOMEM;
    ap_set_content_type(r, "application/json");
    apr_table_unset(r->headers_out, "Content-Length");
    char *body = apr_pstrcat(r->pool, s, "\n", NULL);
    free(s);
    ap_set_content_length(r, (apr_off_t)strlen(body));
    APR_BRIGADE_INSERT_TAIL(
        bb, apr_bucket_pool_create(body, strlen(body), r->pool, f->c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(f->c->bucket_alloc));
    return ap_pass_brigade(f->next, bb);
}

/* A counter's key: a keyed hash (SipHash-2-4 under rate_secret) of the
 * location and who, so made-up keys cannot be chosen to land in a real key's
 * probe window and evict its counter; never 0 (0 marks a free slot). */
static apr_uint64_t rate_key(apr_pool_t *p, const char *a, const char *b)
{
    const char *msg = apr_pstrcat(p, a, "\n", b, NULL);
    apr_uint64_t h = as_siphash24(rate_secret, msg, strlen(msg));
    return h ? h : 1;
}

static apr_uint64_t rate_load(const apr_uint64_t *at)
{
    return __atomic_load_n(at, __ATOMIC_ACQUIRE);
}

static int rate_cas(apr_uint64_t *at, apr_uint64_t old, apr_uint64_t now)
{
    return __atomic_compare_exchange_n(at, &old, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Counts one request in a fixed window; 0 when allowed, else seconds to wait.
 * Every change is one compare-and-swap of a slot's key or window, so no count
 * of a key that has its slot is lost however the children's threads
 * interleave. A key without a slot takes a free or expired one, else the one
 * whose window ends soonest (only a full probe window of live keys evicts
 * one). Two requests of a new key at the same instant may each take a slot;
 * the first in probe order counts from then on, the other expires. */
static int rate_count(apr_uint64_t key, apr_int64_t now, apr_int64_t limit, apr_int64_t secs)
{
    rate_slot *use = NULL;
    for (int attempt = 0; !use && attempt < 4; attempt++) {
        rate_slot *free_slot = NULL, *oldest = NULL;
        apr_uint64_t free_key = 0, oldest_key = 0, oldest_end = 0;
        for (int i = 0; i < RATE_PROBES; i++) {
            rate_slot *sl = &rate_table[(key + (apr_uint64_t)i) % RATE_SLOTS];
            apr_uint64_t k = rate_load(&sl->key), end = rate_load(&sl->window) >> 32;
            if (k == key) {
                use = sl;
                break;
            }
            if (!free_slot && (k == 0 || end <= (apr_uint64_t)now)) {
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
        apr_uint64_t was = free_slot ? free_key : oldest_key;
        if (rate_cas(&take->key, was, key)) {
            use = take;
            /* an evicted key's window, still running: the new key's starts
             * afresh (an ended one is restarted by the count below) */
            apr_uint64_t w0 = rate_load(&take->window);
            if (!free_slot && w0 >> 32 > (apr_uint64_t)now) rate_cas(&take->window, w0, 0);
        }
    }
    if (!use) return 0; /* lost every race for a slot: let it through */
    apr_uint64_t w = rate_load(&use->window), nw;
    do {
        apr_uint64_t end = w >> 32, count = w & 0xffffffffu;
        if (end <= (apr_uint64_t)now)
            nw = (apr_uint64_t)(now + secs) << 32 | 1;
        else
            nw = end << 32 | (count < 0xffffffffu ? count + 1 : count);
    } while (!__atomic_compare_exchange_n(&use->window, &w, nw, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    return (apr_int64_t)(nw & 0xffffffffu) > limit ? (int)((apr_int64_t)(nw >> 32) - now) : 0;
}

/* Per agent key (a well-formed Bearer key) or else per client address, at the
 * location's limit; and per address for every request at ten times it, so
 * made-up keys cannot escape the address's limit. 0, or seconds to wait. */
static int rate_limited(request_rec *r, const dir_cfg *c, const as_config *cfg, apr_int64_t *limit,
                        const char **who)
{
    apr_int64_t n = c->rate_requests != UNSET ? c->rate_requests : DEFAULT_RATE_REQUESTS;
    apr_int64_t secs = c->rate_seconds != UNSET ? c->rate_seconds : DEFAULT_RATE_SECONDS;
    if (n == 0 || !rate_table || !rate_mutex) return 0;
    /* the key as core reads it to identify the agent (one parser) */
    const char *key = as_bearer_key(apr_table_get(r->headers_in, "Authorization"));
    int keyed = as_agent_key_shape(key, cfg->key_prefix);
    const char *base = c->base ? c->base : "/v1";
    const char *ip = r->useragent_ip ? r->useragent_ip : "unknown";
    apr_int64_t now = apr_time_sec(apr_time_now());
    apr_uint64_t k1 = rate_key(r->pool, base, keyed ? key : apr_pstrcat(r->pool, "ip:", ip, NULL));
    apr_uint64_t k2 = rate_key(r->pool, base, apr_pstrcat(r->pool, "all:", ip, NULL));
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

/* At most once a second per process (threads of a worker MPM race for it):
 * this request first expires what ran out of time, whoever it belongs to. */
static bool sweep_due(srv_cfg *sc, apr_int64_t now)
{
    apr_uint32_t sec = (apr_uint32_t)now;
    apr_uint32_t last = apr_atomic_read32(&sc->sweep_sec);
    return last != sec && apr_atomic_cas32(&sc->sweep_sec, sec, last) == last;
}

/* The glue's own refusals of a confirmation link (the rate limit, a path or
 * body httpd would not take): a person's browser gets them as a page too;
 * core decides. from: the request as the client sent it. */
static void person_error(request_rec *from, const dir_cfg *c, as_mem *mem, as_response *resp)
{
    as_request req = {
        .method = from->method,
        .path = api_path(from, c),
        .query = api_query(from),
        .accept = apr_table_get(from->headers_in, "Accept"),
        .base_url = base_url(from, c),
    };
    as_person_error(mem, &req, resp);
}

static int agentshop_handler(request_rec *r)
{
    if (!r->handler || strcmp(r->handler, "agentshop") != 0) return DECLINED;
    dir_cfg *c = ap_get_module_config(r->per_dir_config, &agentshop_module);

    req_ctx *rc = apr_pcalloc(r->pool, sizeof(*rc)); /* outlives the handler: cleanups */
    rc->r = r;
    as_mem mem = as_db_pool_mem(r->pool);
    as_config cfg;
    as_config_defaults(&cfg);
    cfg.signing_key = c->signing_key;
    cfg.signing_key_len = c->signing_key_len;
    if (c->key_prefix) cfg.key_prefix = c->key_prefix;
    if (c->quote_ttl != UNSET) cfg.quote_ttl = c->quote_ttl;
    if (c->confirmation_ttl != UNSET) cfg.confirmation_ttl = c->confirmation_ttl;
    if (c->return_window != UNSET) cfg.return_window_days = c->return_window;
    if (c->ship_after != UNSET) cfg.ship_after = c->ship_after;
    if (c->questions_per_day != UNSET) cfg.questions_per_day = c->questions_per_day;
    if (c->views_from_index != UNSET) cfg.views_from_index = c->views_from_index != 0;
    cfg.approval_link = c->approval_link == 1;
    srv_cfg *sc = ap_get_module_config(r->server->module_config, &agentshop_module);
    cfg.product_views = sc->views;
    cfg.search_ids = sc->search_ids;
    cfg.search_pages = sc->search_pages;
    if (c->agent_origins) {
        cfg.agent_origins = (const char *const *)c->agent_origins->elts;
        cfg.n_agent_origins = (size_t)c->agent_origins->nelts;
    }

    rc->db.pool = r->pool;
    rc->db.log = db_log;
    rc->db.log_baton = r;
    rc->db.acquire = acquire;
    rc->db.write_wait = c->write_wait != UNSET ? apr_time_from_sec(c->write_wait) : 0;
    rc->db.versions = sc->versions;
    rc->db.versions_max_age =
        sc->versions_max_age != UNSET ? sc->versions_max_age : AS_VERSIONS_MAX_AGE_MS;
    as_store store = as_db_store(&rc->db);
    as_ctx ctx = {&mem,
                  &store,
                  &cfg,
                  apr_time_sec(r->request_time),
                  core_log,
                  r,
                  sc->index,
                  sweep_due(sc, apr_time_sec(r->request_time)),
                  sc->notify ? notify_write : NULL,
                  r};
    as_response resp = {0};

    /* An error httpd raised inside our location arrives here via ErrorDocument. */
    if (r->prev && apr_table_get(r->subprocess_env, "REDIRECT_STATUS")) {
        /* Inside a location httpd refuses only the path with 400: a bad escape. */
        as_respond_http_refusal(&resp, r->prev->status, "path");
        person_error(r->prev, c, &mem, &resp);
        return write_response(r, &resp);
    }
    apr_int64_t limit = 0;
    const char *who = NULL;
    int wait = rate_limited(r, c, &cfg, &limit, &who);
    if (wait > 0) {
        apr_int64_t secs = c->rate_seconds != UNSET ? c->rate_seconds : DEFAULT_RATE_SECONDS;
        as_respond_error(&resp, 429, "RATE_LIMITED", NULL,
                         apr_psprintf(r->pool,
                                      "Too many requests: %s may make %" APR_INT64_T_FMT
                                      " requests per %" APR_INT64_T_FMT
                                      " seconds. Retry after %d seconds.",
                                      who, limit, secs, wait));
        resp.retry_after = wait;
        person_error(r, c, &mem, &resp);
        return write_response(r, &resp);
    }
    const char *path = api_path(r, c);
    if (!path) {
        as_respond_http_status(&resp, HTTP_NOT_FOUND);
        return write_response(r, &resp);
    }
    as_request req = {
        .method = r->method,
        .path = path,
        .query = api_query(r),
        .content_type = apr_table_get(r->headers_in, "Content-Type"),
        .accept = apr_table_get(r->headers_in, "Accept"),
        .authorization = apr_table_get(r->headers_in, "Authorization"),
        .service_agent = apr_table_get(r->headers_in, "Service-Agent"),
        .idempotency_key = apr_table_get(r->headers_in, "Idempotency-Key"),
        .if_none_match = apr_table_get(r->headers_in, "If-None-Match"),
        .cors_method = apr_table_get(r->headers_in, "Access-Control-Request-Method"),
        .cors_headers = apr_table_get(r->headers_in, "Access-Control-Request-Headers"),
        .origin = apr_table_get(r->headers_in, "Origin"),
        .mcp_protocol_version = apr_table_get(r->headers_in, "MCP-Protocol-Version"),
        .base_url = base_url(r, c),
    };
    if (r->method_number == M_POST) {
        int rb = read_body(r, &req.body, &req.body_len);
        if (rb != OK) {
            as_respond_http_refusal(&resp, rb, "body");
            as_person_error(&mem, &req, &resp);
            return write_response(r, &resp);
        }
    }
    as_handle(&ctx, &req, &resp);
    return write_response(r, &resp);
}

static void register_hooks(apr_pool_t *p)
{
    (void)p;
    static const char *const after_dbd[] = {"mod_dbd.c", NULL};
    ap_hook_pre_config(pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(post_config, NULL, after_dbd, APR_HOOK_MIDDLE);
    ap_hook_post_read_request(post_read_request, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_map_to_storage(api_map_to_storage, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_child_init(child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_insert_error_filter(insert_error_filter, NULL, NULL, APR_HOOK_MIDDLE);
    ap_register_output_filter(JSON_ERROR_FILTER, json_error_filter, NULL, AP_FTYPE_CONTENT_SET);
    ap_hook_handler(agentshop_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(agentshop) = {STANDARD20_MODULE_STUFF,
                                create_dir_cfg,
                                merge_dir_cfg,
                                create_srv_cfg,
                                merge_srv_cfg,
                                cmds,
                                register_hooks,
#if defined(AP_MODULE_FLAG_ALWAYS_MERGE)
                                AP_MODULE_FLAG_ALWAYS_MERGE
#endif
};
