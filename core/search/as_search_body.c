/* See as_search_body.h. Members in the order the response documents them
 * (docs/api.md); t/unit/search_engine_test.c holds the text to the jansson
 * tree this replaced. */
#include "as_search_body.h"

#include <string.h>

#include "as_json_write.h"
#include "as_validate.h"
#include "as_view.h"

static const char *const match_names[] = {"exact", "prefix", "corrected", "none"};

static void jw_strings(as_jw *w, const char *key, const char *const *s, size_t n)
{
    as_jw_key(w, key);
    as_jw_arr(w);
    for (size_t i = 0; i < n; i++)
        as_jw_str(w, s[i]);
    as_jw_arr_end(w);
}

/* The response's `query`: how the text was read. */
static void jw_understood(as_jw *w, const as_search_understood *u, bool matched_all)
{
    as_jw_obj(w);
    as_jw_kstr(w, "text", u->text);
    as_jw_key(w, "words");
    as_jw_arr(w);
    for (size_t i = 0; i < u->n_words; i++) {
        const as_search_word *sw = &u->words[i];
        as_jw_obj(w);
        as_jw_kstr(w, "word", sw->word);
        as_jw_kstr(w, "match", match_names[sw->how]);
        jw_strings(w, "matched", sw->matched, sw->n_matched);
        as_jw_obj_end(w);
    }
    as_jw_arr_end(w);
    jw_strings(w, "ignored", u->ignored, u->n_ignored);
    as_jw_key(w, "corrected");
    as_jw_arr(w);
    for (size_t i = 0; i < u->n_words; i++) {
        const as_search_word *sw = &u->words[i];
        if (sw->how != AS_MATCH_CORRECTED || !sw->corrected) continue;
        as_jw_obj(w);
        as_jw_kstr(w, "from", sw->word);
        as_jw_kstr(w, "to", sw->corrected);
        as_jw_obj_end(w);
    }
    as_jw_arr_end(w);
    jw_strings(w, "dropped", u->dropped, u->n_dropped);
    as_jw_key(w, "device");
    if (u->device) {
        as_jw_obj(w);
        as_jw_kstr(w, "slug", u->device->slug);
        as_jw_kstr(w, "name", u->device->name);
        as_jw_kstr(w, "text", u->device_text);
        as_jw_obj_end(w);
    } else {
        as_jw_null(w);
    }
    as_jw_key(w, "price");
    if (u->max_price_cents) {
        as_jw_obj(w);
        as_jw_kint(w, "max_price_cents", u->max_price_cents);
        as_jw_kstr(w, "text", u->price_text);
        as_jw_obj_end(w);
    } else {
        as_jw_null(w);
    }
    as_jw_kbool(w, "matched_all_words", matched_all);
    as_jw_obj_end(w);
}

const char *as_search_body(as_mem *m, const as_search_ask *ask, const as_search_result *r,
                           const char *postcode, size_t *len)
{
    as_jw jw, *w = &jw;
    as_jw_init(w, m);
    /* a result is about 1.6 KB, an excluded entry 300 bytes */
    as_jw_expect(w, 4096 + r->n * 2048 + r->n_excluded * 384);
    as_jw_obj(w);
    as_jw_key(w, "results");
    as_jw_arr(w);
    for (size_t i = 0; i < r->n; i++) {
        as_ranking rk;
        as_rank_best_offer(m, &r->page[i], &ask->w, &r->of, ask->today, &rk);
        as_jw_obj(w);
        as_view_summary_members(w, &r->page[i], &rk, r->device);
        if (ask->q) {
            as_jw_kbool(w, "matched_all_words", r->matched_all[i]);
            as_jw_kstr(w, "match", match_names[r->match[i]]);
        }
        as_jw_obj_end(w);
    }
    as_jw_arr_end(w);
    as_jw_kint(w, "count", r->count);
    as_jw_kint(w, "limit", ask->limit);
    as_jw_kint(w, "offset", ask->offset);
    as_jw_key(w, "excluded");
    as_jw_arr(w);
    for (size_t i = 0; i < r->n_excluded; i++)
        if (r->excluded_json && r->excluded_json[i])
            as_jw_raw(w, r->excluded_json[i], r->excluded_json_len[i]);
        else
            as_view_excluded_write(w, &r->excluded[i], r->excluded_why[i]);
    as_jw_arr_end(w);
    as_jw_kint(w, "excluded_count", r->excluded_count);
    as_jw_kstr(w, "ranking_policy", as_ranking_policy);
    as_view_weights_write(w, "weights", &ask->w);
    as_jw_kstr(w, "sort", as_sort_choices[ask->sort]);
    as_jw_kbool(w, "verified_only", ask->verified_only);
    as_jw_kstr(w, "postcode", postcode);
    as_jw_kstr(w, "device", r->device ? r->device->slug : NULL);
    as_jw_key(w, "query");
    if (ask->q)
        jw_understood(w, &r->understood, !r->understood.n_dropped);
    else
        as_jw_null(w);
    as_jw_obj_end(w);
    as_buf_add(&w->b, "\n", 1);
    return as_jw_text(w, len);
}
