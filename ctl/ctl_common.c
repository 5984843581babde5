/* The helpers every command of bin/agentshopctl uses (ctl/ctl_common.h):
 * errors and JSON on the terminal, the command's options, and its database
 * opened and checked. Nothing here reads the compiled-in default paths
 * (agentshopctl.c does, compiled once for the checkout and once installed). */
#include <apr_strings.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "as_rank.h"
#include "ctl_common.h"

int die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "agentshopctl: ");
    fprintf(stderr, fmt, a ? a : "", b ? b : "");
    fputc('\n', stderr);
    return 1;
}

void log_stderr(void *baton, const char *msg)
{
    (void)baton;
    fprintf(stderr, "agentshopctl: %s\n", msg);
}

int print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    puts(s);
    free(s);
    json_decref(o);
    return 0;
}

/* ---- the command line ---- */

/* --name VALUE options after the command's words. */
const char *opt(const opts *o, int from, const char *name)
{
    for (int i = from; i + 1 < o->argc; i++)
        if (strcmp(o->argv[i], name) == 0) return o->argv[i + 1];
    return NULL;
}

/* Every argument from `from` on is one of the names given (each with a value). */
int only_opts(const opts *o, int from, const char *const *names, const char *usage_line)
{
    for (int i = from; i < o->argc; i += 2) {
        int known = 0;
        for (size_t k = 0; names[k]; k++)
            if (strcmp(o->argv[i], names[k]) == 0) known = 1;
        if (!known) return die("unknown argument '%s' (usage: %s)", o->argv[i], usage_line);
        if (i + 1 >= o->argc) return die("%s needs a value (usage: %s)", o->argv[i], usage_line);
    }
    return 0;
}

int user_ok(const char *u)
{
    size_t n = strlen(u);
    if (n < 1 || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)u[i]) && !strchr("._@-", u[i])) return 0;
    return 1;
}

/* ---- JSON ---- */

json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *mandate_json(const as_mandate *md)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:s}", "id", md->id, "user",
                     md->user_id, "status", as_mandate_state_name(md->status), "allowed_categories",
                     md->categories, "per_order_limit_cents", (json_int_t)md->per_order_cents,
                     "monthly_limit_cents", (json_int_t)md->monthly_cents, "confirm_above_cents",
                     (json_int_t)md->confirm_above_cents, "valid_until",
                     str_or_null(md->valid_until), "created_at", md->created_at);
}

/* ---- the database ---- */

/* Run by root against an SQLite file httpd uses, become the file's owner (or the
 * directory's, for a new file) so that the database, -wal and -shm stay
 * writable by the httpd user. */
static int drop_to_owner(const opts *o, apr_pool_t *p)
{
    if (geteuid() != 0 || strcmp(o->driver, "sqlite3") != 0) return 0;
    struct stat st;
    const char *path = o->params;
    if (stat(path, &st) != 0) {
        char *dir = dirname(apr_pstrdup(p, path));
        if (stat(dir, &st) != 0) return die("cannot see the database directory %s%s", dir, NULL);
    }
    if (st.st_uid == 0) return 0;
    if (setgroups(0, NULL) != 0 || setgid(st.st_gid) != 0 || setuid(st.st_uid) != 0)
        return die("cannot switch to the owner of %s: %s", path, strerror(errno));
    return 0;
}

int is_sqlite(const opts *o)
{
    return strcmp(o->driver, "sqlite3") == 0;
}

static int no_schema(const opts *o)
{
    fprintf(stderr,
            "agentshopctl: the database %s (%s) has no schema; create it with: "
            "agentshopctl --params %s init [--demo]\n",
            o->params, o->params_from, o->params);
    return 1;
}

/* Every command but init and setup works on a database that exists: never
 * let apr_dbd's sqlite3 driver create an empty file by opening it. */
static int must_exist(const opts *o)
{
    struct stat st;
    if (!is_sqlite(o)) return 0;
    if (stat(o->params, &st) == 0) return st.st_size == 0 ? no_schema(o) : 0;
    fprintf(stderr,
            "agentshopctl: there is no database %s (%s; %s).\n"
            "  Point at another with --params FILE or AGENTSHOP_DB=FILE, or create this one "
            "with: agentshopctl --params %s init [--demo]\n",
            o->params, o->params_from, strerror(errno), o->params);
    return 1;
}

/* The schema is there and of this build's version (init migrates). */
static int schema_current(const opts *o, as_db *db)
{
    const char *err = NULL;
    int v = 0;
    if (as_db_schema_version(db, &v, &err) != APR_SUCCESS) return die("%s%s", err, NULL);
    if (v == 0) return no_schema(o);
    if (v != AS_SCHEMA_VERSION) {
        fprintf(stderr,
                "agentshopctl: the database %s has schema version %d, this agentshopctl works "
                "with version %d; %s\n",
                o->params, v, AS_SCHEMA_VERSION,
                v < AS_SCHEMA_VERSION ? "agentshopctl init migrates it in place"
                                      : "use the agentshopctl that came with the mod_agentshop "
                                        "that wrote it");
        return 1;
    }
    return 0;
}

int open_db(const opts *o, apr_pool_t *p, as_db *db)
{
    const char *err = NULL;
    if (drop_to_owner(o, p)) return 1;
    struct stat st;
    const char *dir = dirname(apr_pstrdup(p, o->params));
    if (is_sqlite(o) && stat(dir, &st) != 0)
        return die("the directory of the database, %s, does not exist (%s); create it, or run "
                   "agentshopctl setup as root",
                   dir, strerror(errno));
    if (as_db_open(p, o->driver, o->params, db, &err) != APR_SUCCESS) return die("%s%s", err, NULL);
    db->log = log_stderr;
    db->rank = as_rank_best;
    return 0;
}

int prepare(as_db *db)
{
    const char *err = NULL;
    if (as_db_conn_init(db->pool, db->driver, db->handle, db->prepared, &err) != APR_SUCCESS)
        return die("%s%s", err, NULL);
    return 0;
}

int ready(const opts *o, apr_pool_t *p, as_db *db)
{
    if (must_exist(o) || open_db(o, p, db)) return 1;
    if (schema_current(o, db)) return 1;
    return prepare(db);
}
