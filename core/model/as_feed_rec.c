/* A catalogue feed's records as storage takes them (as_feed_rec.h). */
#include "as_feed_rec.h"

#include <stdlib.h>
#include <string.h>

#include "as_util.h"

const char *as_feed_type_name(as_feed_type t)
{
    static const char *const names[AS_FEED_N] = {"merchant", "device",      "product",
                                                 "offer",    "measurement", "compatibility"};
    return t < AS_FEED_N ? names[t] : "?";
}

void as_feed_problem_add(as_feed_problems *p, size_t line, const char *path, const char *reason)
{
    /* a field's name or a value quoted from the feed reaches a terminal */
    path = path ? as_text_escape(p->m, path) : NULL;
    reason = as_text_escape(p->m, reason);
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 32;
        as_feed_problem *nv = as_alloc(p->m, nc * sizeof(*nv));
        if (p->n) memcpy(nv, p->v, p->n * sizeof(*nv));
        p->v = nv;
        p->cap = nc;
    }
    p->v[p->n++] = (as_feed_problem){line, path, reason};
}

char *as_feed_value_text(as_mem *m, json_t *v)
{
    if (!v || json_is_null(v)) return NULL;
    char *s = json_dumps(v, AS_FEED_JSON_FLAGS | JSON_ENCODE_ANY);
    if (!s) return NULL;
    char *r = as_strdup(m, s);
    free(s);
    return r;
}
