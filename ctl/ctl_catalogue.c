/* agentshopctl catalogue import | export: the catalogue feed (docs/catalogue.md). */
#include "ctl_catalogue.h"

#include <apr_strings.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "as_db_feed.h"
#include "as_feed.h"
#include "as_util.h"
#include "as_verify.h"

/* Core's rules of the feed, which storage applies as it reads and writes. */
static const as_feed_rules feed_rules = {as_feed_read, as_feed_line, as_verification_status};

/* Every problem, one line each on stderr, then how many: a file is fixed
 * in one pass, not one error at a time. */
static int report(const char *name, const as_feed_problems *probs)
{
    for (size_t i = 0; i < probs->n; i++) {
        const as_feed_problem *x = &probs->v[i];
        fprintf(stderr, "agentshopctl: %s:%zu: %s%s%s\n", name, x->line, x->field ? x->field : "",
                x->field ? ": " : "", x->reason);
    }
    fprintf(stderr,
            "agentshopctl: catalogue import: %zu problem%s in %s; nothing was written\n",
            probs->n, probs->n == 1 ? "" : "s", name);
    return 1;
}

static int import(const opts *o, apr_pool_t *p)
{
    const char *usage_line = "catalogue import FILE|- [--dry-run]";
    const char *file = NULL;
    int dry = 0;
    for (int i = 2; i < o->argc; i++) {
        if (strcmp(o->argv[i], "--dry-run") == 0)
            dry = 1;
        else if (!file && (o->argv[i][0] != '-' || strcmp(o->argv[i], "-") == 0))
            file = o->argv[i];
        else
            return die("catalogue import: unexpected argument '%s' (usage: %s)", o->argv[i],
                       usage_line);
    }
    if (!file) return die("usage: %s%s", usage_line, NULL);
    /* the file is opened before the database: run by root, opening the
     * database becomes its owner, who may not read the file */
    FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
    if (!in) return die("catalogue import: cannot read %s: %s", file, strerror(errno));
    const char *name = strcmp(file, "-") == 0 ? "(stdin)" : file;
    as_db db;
    if (ready(o, p, &db)) {
        if (in != stdin) fclose(in);
        return 1;
    }
    as_mem m = as_db_pool_mem(p);
    as_feed_problems probs = {&m, NULL, 0, 0};
    json_t *summary = NULL;
    const char *err = NULL;
    apr_status_t rv = as_feed_import(&db, &feed_rules, in, name, dry, 0, &probs, &summary, &err);
    if (in != stdin) fclose(in);
    as_db_close(&db);
    if (rv == APR_EINVAL) return report(name, &probs);
    /* a database's message may quote a value of the file */
    if (rv != APR_SUCCESS)
        return die("catalogue import: %s; nothing was written%s", as_text_escape(&m, err), NULL);
    return print_json(summary);
}

static int export(const opts *o, apr_pool_t *p)
{
    const char *usage_line = "catalogue export [FILE|-]";
    if (o->argc > 3) return die("usage: %s%s", usage_line, NULL);
    const char *file = o->argc == 3 ? o->argv[2] : "-";
    if (file[0] == '-' && file[1])
        return die("catalogue export: unexpected argument '%s' (usage: %s)", file, usage_line);
    /* into a file beside the target, renamed over it once complete: a
     * failed export never leaves half a catalogue under the name. Opened
     * before the database: run by root, opening it becomes the database's
     * owner, who may not write where root asked for the file, nor rename
     * there; so root writes the file itself and empties it on a failure. */
    FILE *out = stdout;
    const char *tmp = NULL;
    int direct = geteuid() == 0;
    if (strcmp(file, "-") != 0) {
        tmp = direct ? file : apr_psprintf(p, "%s.tmp", file);
        out = fopen(tmp, "w");
        if (!out) return die("catalogue export: cannot write %s: %s", tmp, strerror(errno));
    }
    as_db db;
    if (ready(o, p, &db)) {
        if (tmp) {
            fclose(out);
            if (!direct) remove(tmp);
        }
        return 1;
    }
    json_t *summary = NULL;
    const char *err = NULL;
    apr_status_t rv = as_feed_export(&db, &feed_rules, out, &summary, &err);
    as_db_close(&db);
    if (tmp) {
        if (direct && rv != APR_SUCCESS && ftruncate(fileno(out), 0) != 0) rv = APR_EGENERAL;
        int bad = fclose(out) != 0 || rv != APR_SUCCESS;
        if (bad) {
            if (!direct) remove(tmp);
            json_decref(summary);
            return die("catalogue export: %s%s", rv != APR_SUCCESS ? err : "cannot write the file",
                       NULL);
        }
        if (!direct && rename(tmp, file) != 0) {
            json_decref(summary);
            return die("catalogue export: the catalogue is in %s, but it cannot be renamed to "
                       "its name: %s",
                       tmp, strerror(errno));
        }
    }
    if (rv != APR_SUCCESS) return die("catalogue export: %s%s", err, NULL);
    /* the summary on stderr when the records go to stdout */
    char *s = json_dumps(summary, JSON_COMPACT);
    fprintf(tmp ? stdout : stderr, "%s\n", s ? s : "{}");
    free(s);
    json_decref(summary);
    return 0;
}

int ctl_catalogue_feed(const opts *o, apr_pool_t *p)
{
    return strcmp(o->argv[1], "import") == 0 ? import(o, p) : export(o, p);
}

int ctl_demo_load(const opts *o, as_db *db, FILE *in, json_t **summary)
{
    as_mem m = as_db_pool_mem(db->pool);
    as_feed_problems probs = {&m, NULL, 0, 0};
    const char *err = NULL;
    const char *name = apr_psprintf(db->pool, "%s/catalogue.jsonl", o->data);
    apr_status_t rv = as_feed_import(db, &feed_rules, in, name, 0, 1, &probs, summary, &err);
    if (rv == APR_EINVAL) return report(name, &probs);
    if (rv != APR_SUCCESS)
        return die("loading the demo catalogue from %s failed: %s", name, as_text_escape(&m, err));
    return 0;
}
