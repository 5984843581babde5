/* mod_agentshop's configuration: the directives, their merges and what a
 * request uses resolved from them once, the API's bases, and the checks at
 * start that the children can use the databases the configuration names. */
#include "httpd.h"
#include "apr_strings.h"
#include "http_core.h"
#include "unixd.h"

#include "as_crypto.h"
#include "as_db.h"
#include "as_http.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mod_agentshop_private.h"

#define DEFAULT_RATE_REQUESTS 600
#define DEFAULT_RATE_SECONDS 60

/* The bases of the locations that serve the API: every <Location> holding an
 * AgentShop directive (the sample config sets AgentShopKeyPrefix in it) or
 * `SetHandler agentshop` (found in the tree at post_config), else "/v1".
 * httpd rejects some paths (%2F, %00) before any <Location> applies, so
 * errors for these prefixes are pointed at the handler per request, in
 * post_read_request. */
static apr_array_header_t *api_bases;
/* AgentShopSearchIndexDir (global), the directory made from it at start-up,
 * and why it cannot be used when it cannot (then index_dir is NULL) */
static const char *index_dir_conf, *index_dir, *index_dir_why;
static int signing_key_seen;
static int base_url_seen;    /* some location sets AgentShopBaseURL */
static const char *run_user; /* the children's user, named in run-time errors */

/* ---- the API's bases ---- */

const char *agentshop_base(apr_pool_t *p, const char *location)
{
    if (!location || location[0] != '/') return "/v1";
    size_t n = strlen(location);
    while (n && location[n - 1] == '/')
        n--;
    return location[n] ? apr_pstrndup(p, location, n) : location;
}

const char *agentshop_below(const char *path, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(path, base, n) != 0) return NULL;
    return !path[n] || path[n] == '/' || path[n] == '?' ? path + n : NULL;
}

const char *agentshop_base_of(const char *path)
{
    if (!api_bases) return agentshop_below(path, "/v1") ? "/v1" : NULL;
    for (int i = 0; i < api_bases->nelts; i++) {
        const char *b = APR_ARRAY_IDX(api_bases, i, const char *);
        if (agentshop_below(path, b)) return b;
    }
    return NULL;
}

static void add_base(apr_pool_t *pconf, const char *location)
{
    const char *base = agentshop_base(pconf, location);
    if (!api_bases) api_bases = apr_array_make(pconf, 2, sizeof(const char *));
    for (int i = 0; i < api_bases->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(api_bases, i, const char *), base) == 0) return;
    APR_ARRAY_PUSH(api_bases, const char *) = apr_pstrdup(pconf, base);
}

static void note_base(cmd_parms *cmd)
{
    if (cmd->path && cmd->path[0] == '/') add_base(cmd->pool, cmd->path);
}

void agentshop_config_reset(void)
{
    api_bases = NULL; /* rebuilt on every (re)read of the configuration */
    signing_key_seen = 0;
    base_url_seen = 0;
    index_dir_conf = index_dir = index_dir_why = NULL;
}

/* ---- configuration ---- */

void *agentshop_create_dir_cfg(apr_pool_t *p, char *dir)
{
    dir_cfg *c = apr_pcalloc(p, sizeof(*c));
    c->location = dir;
    c->quote_ttl = c->confirmation_ttl = c->return_window = c->ship_after = UNSET;
    c->questions_per_day = UNSET;
    c->write_wait = UNSET;
    c->rate_requests = c->rate_seconds = UNSET;
    c->views_from_index = UNSET;
    c->approval_link = UNSET;
    return c;
}

/* What a request uses, from the directives: core's settings (as_config)
 * and the glue's own, every default applied. */
static void resolve(apr_pool_t *p, dir_cfg *c)
{
    as_config *k = &c->use.core;
    as_config_defaults(k);
    k->signing_key = c->signing_key;
    k->signing_key_len = c->signing_key_len;
    if (c->key_prefix) k->key_prefix = c->key_prefix;
    if (c->quote_ttl != UNSET) k->quote_ttl = c->quote_ttl;
    if (c->confirmation_ttl != UNSET) k->confirmation_ttl = c->confirmation_ttl;
    if (c->return_window != UNSET) k->return_window_days = c->return_window;
    if (c->ship_after != UNSET) k->ship_after = c->ship_after;
    if (c->questions_per_day != UNSET) k->questions_per_day = c->questions_per_day;
    if (c->views_from_index != UNSET) k->views_from_index = c->views_from_index != 0;
    k->approval_link = c->approval_link == 1;
    if (c->agent_origins) {
        k->agent_origins = (const char *const *)c->agent_origins->elts;
        k->n_agent_origins = (size_t)c->agent_origins->nelts;
    }
    c->use.base = agentshop_base(p, c->location);
    c->use.rate_requests = c->rate_requests != UNSET ? c->rate_requests : DEFAULT_RATE_REQUESTS;
    c->use.rate_seconds = c->rate_seconds != UNSET ? c->rate_seconds : DEFAULT_RATE_SECONDS;
    c->use.write_wait = c->write_wait != UNSET ? apr_time_from_sec(c->write_wait) : 0;
}

void *agentshop_merge_dir_cfg(apr_pool_t *p, void *basev, void *addv)
{
    dir_cfg *b = basev, *a = addv, *c = apr_pcalloc(p, sizeof(*c));
    c->location = a->location ? a->location : b->location;
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
    resolve(p, c);
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

void *agentshop_create_srv_cfg(apr_pool_t *p, server_rec *s)
{
    (void)s;
    srv_cfg *c = apr_pcalloc(p, sizeof(*c));
    c->view_slots = UNSET;
    c->search_slots = UNSET;
    c->versions_max_age = UNSET;
    return c;
}

void *agentshop_merge_srv_cfg(apr_pool_t *p, void *basev, void *addv)
{
    srv_cfg *b = basev, *a = addv, *c = apr_pcalloc(p, sizeof(*c));
    c->view_slots = a->view_slots != UNSET ? a->view_slots : b->view_slots;
    c->search_slots = a->search_slots != UNSET ? a->search_slots : b->search_slots;
    c->notify_cmd = a->notify_cmd ? a->notify_cmd : b->notify_cmd;
    c->versions_max_age = a->versions_max_age != UNSET ? a->versions_max_age : b->versions_max_age;
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
    if (!index_dir_conf)
        return apr_pstrcat(cmd->pool, "AgentShopSearchIndexDir: bad path ", arg, NULL);
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

const command_rec agentshop_cmds[] = {
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
    static const char *const sides[] = {"-wal", "-shm", "-lock"}; /* -lock: as_db.c's writers */
    for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
        const char *side = apr_pstrcat(p, f, sides[i], NULL);
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
        sc->db_file =
            strcmp(u->driver, "sqlite3") == 0 && u->params ? apr_pstrdup(pconf, u->params) : NULL;
        sc->db_key = u->params ? apr_pstrcat(pconf, u->driver, " ", u->params, NULL) : NULL;
    }
    if (!sc) return;
    sc->index_prefix = NULL;
    sc->index_why = index_dir_why;
    if (u->driver && u->params && index_dir) {
        /* one name per database: the driver and its parameters, hashed */
        as_mem mem = as_db_pool_mem(pconf);
        const char *id = apr_pstrcat(pconf, u->driver, " ", u->params, NULL);
        const char *hex = as_sha256_hex(&mem, id, strlen(id));
        sc->index_prefix = apr_pstrcat(pconf, index_dir, "/", apr_pstrndup(pconf, hex, 16), NULL);
    } else if (index_dir) {
        sc->index_why = "the server's database is not known (no DBDriver and DBDParams)";
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
    const char *dir =
        index_dir_conf ? index_dir_conf : ap_runtime_dir_relative(pconf, "agentshop-index");
    run_as who = child_user(ptemp);
    apr_status_t rv = apr_dir_make_recursive(dir, APR_FPROT_OS_DEFAULT, ptemp);
    struct stat st;
    if (rv == APR_SUCCESS && geteuid() == 0 && chown(dir, who.uid, who.gid) != 0) rv = errno;
    /* Readable by all (the files are the public catalogue; tools that walk a
     * tree, like Apache::Test's, must not trip on it), writable by the
     * children's user alone: nobody else may plant a file they would map. */
    if (rv == APR_SUCCESS && chmod(dir, 0755) != 0) rv = errno;
    if (rv == APR_SUCCESS && (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
                              st.st_uid != who.uid || (st.st_mode & (S_IWGRP | S_IWOTH))))
        rv = APR_EACCES;
    if (rv != APR_SUCCESS) {
        char buf[120];
        index_dir_why = apr_psprintf(pconf,
                                     "the search index directory %s cannot be made, or is not "
                                     "owned by %s alone (%s)",
                                     dir, who.name, apr_strerror(rv, buf, sizeof(buf)));
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "mod_agentshop: %s: each child builds its own search index in memory "
                     "(set AgentShopSearchIndexDir to a directory only that user can write)",
                     index_dir_why);
        return NULL;
    }
    /* a child of the generation a graceful restart replaces may still be
     * writing its own: it holds its database's lock */
    int n = as_search_files_sweep(dir);
    if (n > 0)
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     "mod_agentshop: removed %d temporary search index file%s of writers that "
                     "died, from %s",
                     n, n == 1 ? "" : "s", dir);
    return apr_pstrdup(pconf, dir);
}

int agentshop_check_databases(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
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

/* Whatever the configuration looks like: the handler may run on any server,
 * from `SetHandler agentshop` alone in a <Location> with every AgentShop
 * directive at the server's level. */
void agentshop_index_dir_setup(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    index_dir = index_dir_make(pconf, ptemp, s);
}

const char *agentshop_run_user(void)
{
    return run_user;
}

/* Whether some section of the tree hands requests to the handler; a
 * <Location PATH> that does is an API base (note_base's, for a location that
 * holds no AgentShop directive: `SetHandler agentshop` alone in it). */
static int handler_in_tree(apr_pool_t *p, const ap_directive_t *d, const char *location)
{
    int found = 0;
    for (; d; d = d->next) {
        if ((strcasecmp(d->directive, "SetHandler") == 0 ||
             strcasecmp(d->directive, "AddHandler") == 0) &&
            d->args && strcasecmp(first_word(p, d->args), "agentshop") == 0) {
            found = 1;
            if (location) add_base(p, location);
        }
        const char *in = location;
        if (strcasecmp(d->directive, "<Location") == 0 && d->args) {
            const char *path = first_word(p, d->args);
            size_t n = strlen(path);
            if (n && path[n - 1] == '>') path = apr_pstrndup(p, path, n - 1);
            in = path[0] == '/' ? path : NULL; /* not a regular expression */
        }
        if (d->first_child && handler_in_tree(p, d->first_child, in)) found = 1;
    }
    return found;
}

int agentshop_config_check(apr_pool_t *pconf, server_rec *s)
{
    /* the API is served: a <Location> with our directives, or SetHandler
     * agentshop alone with them at the server's level */
    int served = handler_in_tree(pconf, ap_conftree, NULL) || api_bases;
    if (served && !signing_key_seen) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s,
                     "mod_agentshop: AgentShopSigningKeyFile is not set; confirmation links "
                     "cannot be signed. Create a secret (openssl rand -hex 32 > FILE) and set "
                     "AgentShopSigningKeyFile FILE");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (served && !base_url_seen)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "mod_agentshop: AgentShopBaseURL is not set: signed links and MCP's own "
                     "origin are built from each virtual host's ServerName (%s here) or a "
                     "ServerAlias the request named, and the port it arrived on; never from "
                     "another Host header. Behind a proxy or TLS terminator set "
                     "AgentShopBaseURL https://HOST/v1",
                     s->server_hostname ? s->server_hostname : "(none)");
    /* A request's configuration is a merge (resolved there) of its server's
     * with its sections', or the server's own when no section applies. */
    for (server_rec *v = s; v; v = v->next)
        resolve(pconf, ap_get_module_config(v->lookup_defaults, &agentshop_module));
    return OK;
}
