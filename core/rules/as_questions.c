#include "as_questions.h"

#include <string.h>

#include "as_devices.h"
#include "as_json_value.h"
#include "as_util.h"
#include "as_verify.h"

/* Words a question uses for a specification, beyond its own name and label.
 * Phrases ("how much") match whole words in order. */
static const struct synonyms {
    const char *spec;
    const char *words; /* '|' separated */
} synonyms[] = {
    {"volume_ml", "volume|how much|contents|content|amount|millilitres|milliliters|ml|liquid|ink"},
    {"bottle_volume_ml", "bottle|bottle size|container"},
    {"listed_volume_ml", "listed|label says|printed"},
    {"pack_count", "how many|pack|count|bottles|bags|pieces|units"},
    {"pack_contents", "contents|included|comes with|in the box|what is in"},
    {"vegan", "vegan|animal|animals|plant based"},
    {"paraben_free", "paraben|parabens|preservative|preservatives"},
    {"silicone_free", "silicone|silicones"},
    {"fragrance", "fragrance|scent|smell|smells|perfume|perfumed|fragranced"},
    {"glycerin", "glycerin|glycerine|glycerol"},
    {"aloe_vera", "aloe"},
    {"panthenol", "panthenol|vitamin b5|provitamin"},
    {"format", "format|foam|bar|refill|pump|liquid or"},
    {"packaging", "packaging|package|plastic|recycled|recyclable"},
    {"use", "use|used for|suitable|purpose"},
    {"capacity_mah", "capacity|mah|how long|battery life|runtime|charge"},
    {"voltage_v", "voltage|volt|volts"},
    {"chemistry", "chemistry|lithium|li ion|nimh"},
    {"power_w", "power|watt|watts|wattage|how fast|fast charging"},
    {"max_power_w", "power|watt|watts|wattage|how fast|fast charging"},
    {"page_yield", "pages|page yield|yield|how many pages|prints"},
    {"lifetime_l", "litres|liters|how long|lifetime|last"},
    {"lifetime_months", "months|how often|replace|change|lifetime|last"},
    {"lifetime_weeks", "weeks|how often|replace|change|last"},
    {"filter_efficiency_pct", "efficiency|filters|particles|pm2.5|hepa|allergens|dust"},
    {"filter_type", "hepa|type|kind of filter"},
    {"diameter_mm", "diameter|size|wide"},
    {"length_m", "length|long|metres|meters"},
    {"weight_g", "weight|heavy|weigh|grams"},
    {"toner_weight_g", "weight|how much toner|grams"},
    {"washable", "washable|wash|rinse|clean"},
    {"colour", "colour|color|black|cyan|magenta|yellow"},
    {"capacity_l", "capacity|litres|liters|how much dust"},
    {"runtime_min", "runtime|how long|minutes"},
    {"ph", "ph|acidic|acid"},
};

static const char *const stopwords[] = {
    "a",    "an",      "the",      "is",      "it",     "its",      "in",   "of",   "this",  "that",
    "does", "do",      "how",      "what",    "which",  "are",      "for",  "to",   "and",   "or",
    "be",   "can",     "i",        "my",      "me",     "with",     "on",   "at",   "by",    "was",
    "has",  "have",    "there",    "any",     "you",    "your",     "if",   "will", "would", "much",
    "many", "contain", "contains", "product", "really", "actually", "true", NULL,
};

static bool stopword(const char *w)
{
    for (size_t i = 0; stopwords[i]; i++)
        if (strcmp(stopwords[i], w) == 0) return true;
    return false;
}

/* " w1 w2 ... " lowercase, words only, for whole-word phrase search. */
static const char *spaced(as_mem *m, const char *text)
{
    const char **t;
    size_t n = as_text_terms(m, text, &t);
    as_buf b;
    as_buf_init(&b, m);
    as_buf_puts(&b, " ");
    for (size_t i = 0; i < n; i++)
        as_buf_printf(&b, "%s ", t[i]);
    return as_buf_str(&b);
}

static bool has_phrase(as_mem *m, const char *q_spaced, const char *phrase)
{
    return strstr(q_spaced, spaced(m, phrase)) != NULL;
}

/* A word of the question names this word of a spec (exactly, or as a stem of
 * five letters or more: "measure" ~ "measured"). */
static bool word_hits(const char *q_spaced, const char *word)
{
    size_t n = strlen(word);
    if (n < 2) return false;
    const char *p = q_spaced;
    while ((p = strstr(p, word)) != NULL) {
        bool start = p[-1] == ' ';
        const char *end = p + n;
        size_t rest = strcspn(end, " ");
        if (start && (rest == 0 || (n >= 5 && rest <= 3))) return true;
        p = end;
    }
    return false;
}

static int score_row(as_mem *m, const as_spec_row *row, const char *q)
{
    int score = 0;
    /* the label's and the machine name's own words */
    const char **t;
    size_t n = as_text_terms(m, as_printf(m, "%s %s", row->label, row->spec), &t);
    for (size_t i = 0; i < n; i++) {
        if (stopword(t[i]) || strlen(t[i]) < 3) continue;
        if (strcmp(t[i], "ml") == 0 || strcmp(t[i], "mm") == 0 || strcmp(t[i], "pct") == 0)
            continue;
        bool dup = false;
        for (size_t k = 0; k < i; k++)
            if (strcmp(t[k], t[i]) == 0) dup = true;
        if (!dup && word_hits(q, t[i])) score += 2;
    }
    for (size_t i = 0; i < sizeof(synonyms) / sizeof(synonyms[0]); i++) {
        if (strcmp(synonyms[i].spec, row->spec) != 0) continue;
        const char *p = synonyms[i].words;
        while (*p) {
            size_t len = strcspn(p, "|");
            const char *w = as_strndup(m, p, len);
            if (strchr(w, ' ') ? has_phrase(m, q, w) : word_hits(q, w)) score += 1;
            p += len + (p[len] == '|');
        }
    }
    return score;
}

size_t as_question_match(as_mem *m, const as_product *p, const char *question, size_t *rows)
{
    const char *q = spaced(m, question);
    int best = 0;
    int *scores = as_alloc(m, (p->n_specs + 1) * sizeof(int));
    for (size_t i = 0; i < p->n_specs; i++) {
        scores[i] = score_row(m, &p->specs[i], q);
        if (scores[i] > best) best = scores[i];
    }
    size_t k = 0;
    /* the rows with the best score, then those one point behind, at most 3 */
    for (int want = best; want > 0 && want >= best - 1 && k < 3; want--)
        for (size_t i = 0; i < p->n_specs && k < 3; i++)
            if (scores[i] == want) rows[k++] = i;
    return k;
}

static json_t *cite(as_mem *m, const as_spec_row *s, const as_row_eval *e, bool measured)
{
    json_t *r =
        json_pack("{s:s, s:s, s:s?, s:o, s:o, s:b, s:b, s:s}", "spec", s->spec, "label", s->label,
                  "unit", s->unit, "claimed", as_json_parse_or(s->claimed, json_null()), "measured",
                  as_json_parse_or(measured ? s->measured : NULL, json_null()), "was_measured",
                  measured && s->measured != NULL, "ok", e->ok, "detail", e->detail);
    (void)m;
    return r;
}

static const char *with_unit(as_mem *m, const char *v, const char *unit)
{
    return unit && *unit ? as_printf(m, "%s %s", v, unit) : v;
}

json_t *as_question_answer(as_mem *m, const as_product *p, const char *question)
{
    bool measured = p->verif_status != AS_VERIF_PENDING;
    size_t idx[3];
    size_t n = as_question_match(m, p, question, idx);
    json_t *rows = json_array();
    as_buf text;
    as_buf_init(&text, m);
    bool answered = false;
    if (n == 0) {
        as_buf_puts(&text, "Nothing we measured answers this question: it matches none of this "
                           "product's specifications, and we answer only from measured data.");
        as_buf t2;
        as_buf_init(&t2, m);
        for (size_t i = 0; i < p->n_specs; i++)
            as_buf_printf(&t2, "%s%s", i ? ", " : "", p->specs[i].label);
        if (p->n_specs) as_buf_printf(&text, " Specifications on record: %s.", as_buf_str(&t2));
    }
    for (size_t k = 0; k < n; k++) {
        const as_spec_row *s = &p->specs[idx[k]];
        as_row_eval e;
        as_spec_eval(m, s, measured, &e);
        json_array_append_new(rows, cite(m, s, &e, measured));
        const char *claim =
            s->claimed ? with_unit(m, as_json_text(m, s->claimed), s->unit) : "nothing";
        if (!measured || !s->measured) {
            as_buf_printf(&text,
                          "%s%s: not measured %s; the merchant claims %s, and we do not "
                          "answer from claims alone.",
                          k ? " " : "", s->label,
                          measured ? "in our test of this product" : "yet (verification pending)",
                          claim);
            continue;
        }
        answered = true;
        const char *got = with_unit(m, as_json_text(m, s->measured), s->unit);
        as_buf_printf(&text, "%s%s: measured %s", k ? " " : "", s->label, got);
        if (s->claimed)
            as_buf_printf(&text, " (claimed %s)%s", claim,
                          e.ok ? "." : ": this contradicts the claim.");
        else
            as_buf_puts(&text, " (the merchant made no claim).");
    }
    json_t *a = json_pack("{s:b, s:s, s:s, s:o}", "answered", answered, "text", as_buf_str(&text),
                          "basis", answered ? "measured" : "none", "rows", rows);
    if (answered) {
        json_object_set_new(a, "measured_at", json_string(p->measured_at ? p->measured_at : ""));
        json_object_set_new(a, "node",
                            p->measured_node ? json_string(p->measured_node) : json_null());
        json_object_set_new(a, "sample_size", json_integer(p->sample_size));
    }
    return a;
}
