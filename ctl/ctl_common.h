/* What the files of bin/agentshopctl share: the parsed command line and the
 * helpers every command uses, defined in ctl/ctl_common.c. */
#ifndef CTL_COMMON_H
#define CTL_COMMON_H

#include <apr_pools.h>
#include <jansson.h>

#include "as_db.h"

typedef struct opts {
    const char *driver, *params, *data, *key_prefix, *signing_key;
    const char *params_from, *data_from; /* why: "--params", "AGENTSHOP_DB", "the default" */
    int argc;
    char **argv; /* the command and its arguments */
} opts;

/* "agentshopctl: " and fmt with a and b (NULL as "") on stderr; returns 1,
 * the exit code of an error. */
int die(const char *fmt, const char *a, const char *b);
/* A storage log line on stderr (as_db's log). */
void log_stderr(void *baton, const char *msg);
/* o on stdout, indented, and released; returns 0. */
int print_json(json_t *o);
/* The value of option `name` among the arguments from `from` on, or NULL. */
const char *opt(const opts *o, int from, const char *name);
/* Every argument from `from` on is one of names, each with a value; else
 * says which is not (1). */
int only_opts(const opts *o, int from, const char *const *names, const char *usage_line);
/* Whether the database is SQLite's (a file). */
int is_sqlite(const opts *o);
/* The database opened (run by root on SQLite: as its file's owner), logging
 * on stderr; 0, or 1 (said). init and setup open one that may not exist yet. */
int open_db(const opts *o, apr_pool_t *p, as_db *db);
/* db's connection set up and its statements prepared; 0, or 1 (said). */
int prepare(as_db *db);
/* The database opened, of this build's schema, its statements prepared; an
 * error (1) for a missing database, which it never creates. */
int ready(const opts *o, apr_pool_t *p, as_db *db);
json_t *str_or_null(const char *s);
/* A user id as agentshopctl takes one: 1 to 64 letters, digits or ._@- */
int user_ok(const char *u);
/* A mandate as mandate list shows each. */
json_t *mandate_json(const as_mandate *md);

#endif
